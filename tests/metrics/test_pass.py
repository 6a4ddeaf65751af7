"""Closed forms of pass@k / pass^k under a Beta distribution, against independent references."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from evalbayes._core.names import check_k
from evalbayes.metrics._pass import (
    beta_pass_at_k,
    beta_pass_hat_k,
    prob_pass_at_k,
    prob_pass_hat_k,
)


def exact_fail_ratio(a: int, b: int, k: int) -> Fraction:
    """B(a, b + k) / B(a, b) = prod_{i<k} (b + i) / (a + b + i) for integer a, b, k."""
    out = Fraction(1)
    for i in range(k):
        out *= Fraction(b + i, a + b + i)
    return out


def exact_success_ratio(a: int, b: int, k: int) -> Fraction:
    """B(a + k, b) / B(a, b) = prod_{i<k} (a + i) / (a + b + i)."""
    return exact_fail_ratio(b, a, k)


@pytest.mark.parametrize(("a", "b"), [(1, 1), (4, 3), (2, 30), (63, 2), (1, 200)])
@pytest.mark.parametrize("k", [1, 2, 5, 32, 1000])
def test_beta_closed_forms_equal_exact_rational_arithmetic(a, b, k):
    got_at = beta_pass_at_k(a, b, k)[0]
    got_hat = beta_pass_hat_k(a, b, k)[0]
    assert got_at == pytest.approx(float(1 - exact_fail_ratio(a, b, k)), rel=1e-12, abs=1e-15)
    assert got_hat == pytest.approx(float(exact_success_ratio(a, b, k)), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize(("a", "b", "k"), [(0.4, 0.3, 2.5), (0.7, 5.0, 16.0), (12.0, 0.6, 3.0)])
def test_beta_closed_forms_equal_numerical_integration(a, b, k):
    dens = stats.beta(a, b).pdf
    at = integrate.quad(lambda p: (1 - (1 - p) ** k) * dens(p), 0, 1, limit=200)[0]
    hat = integrate.quad(lambda p: p**k * dens(p), 0, 1, limit=200)[0]
    assert beta_pass_at_k(a, b, k)[0] == pytest.approx(at, rel=1e-7)
    assert beta_pass_hat_k(a, b, k)[0] == pytest.approx(hat, rel=1e-7)


def test_closed_forms_agree_with_monte_carlo_from_explicit_p_draws():
    rng = np.random.default_rng(7)
    a, b, ks = 0.8, 1.7, np.array([1, 3, 10, 40])
    p = rng.beta(a, b, size=400_000)
    for metric_closed, metric_p in ((beta_pass_at_k, prob_pass_at_k),
                                    (beta_pass_hat_k, prob_pass_hat_k)):
        values = metric_p(p, ks)
        mc_mean = values.mean(axis=0)
        mc_se = values.std(axis=0, ddof=1) / np.sqrt(len(p))
        assert np.all(np.abs(metric_closed(a, b, ks) - mc_mean) < 4 * mc_se)


def test_shapes_broadcast_with_k_last():
    a = np.ones((3, 4))
    out = beta_pass_at_k(a, 2 * a, [1, 2, 4])
    assert out.shape == (3, 4, 3)
    assert prob_pass_hat_k(np.full(5, 0.5), 3).shape == (5, 1)


def test_k_larger_than_any_trial_count_is_fine_and_monotone():
    ks = np.array([1, 2, 4, 8, 1024, 4096])
    at = beta_pass_at_k(2.0, 5.0, ks)
    hat = beta_pass_hat_k(2.0, 5.0, ks)
    assert np.all(np.diff(at) > 0) and np.all(np.diff(hat) < 0)
    assert np.all((0 <= hat) & (hat <= at) & (at <= 1))


def test_probability_forms():
    assert prob_pass_at_k(0.5, 5)[0] == pytest.approx(1 - 0.5**5)  # 004 S5.7: 0.969
    assert prob_pass_hat_k(0.5, 5)[0] == pytest.approx(0.5**5)  # 004 S5.7: 0.031
    assert prob_pass_at_k(1.0, 3)[0] == 1.0 and prob_pass_at_k(0.0, 3)[0] == 0.0


@pytest.mark.parametrize("bad", [0, -1, [1, 0], np.nan, [], [[1, 2]]])
def test_bad_k(bad):
    with pytest.raises(ValueError, match="k must be"):
        check_k(bad)


def test_bad_parameters():
    with pytest.raises(ValueError, match="must be positive"):
        beta_pass_at_k(0.0, 1.0, 1)
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        prob_pass_at_k(1.2, 1)
