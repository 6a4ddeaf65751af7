"""pass@k / pass^k estimators against seeds, exact arithmetic, enumeration and simulation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalbayes.datasets import load
from evalbayes.frequentist import (
    mean_pass_at_k,
    mean_pass_hat_k,
    mean_pass_rate,
    pass_at_k,
    pass_at_k_plugin,
    pass_hat_k,
    pass_hat_k_plugin,
    pooled_pass_rate,
)

KS = [1, 2, 4, 8, 16, 32]


# ---------------------------------------------------------------- numbers printed in the seeds
def test_section_17_7_pass_at_k_table():
    """Seed 003 §17.7: unbiased pass@k from 64 episodes per task, printed to 3 decimals."""
    printed = {
        "RL base": [0.150, 0.279, 0.484, 0.742, 0.941, 0.998],
        "GRPO 20": [0.616, 0.791, 0.897, 0.963, 0.995, 1.000],
        "GRPO 80": [0.853, 0.900, 0.917, 0.933, 0.958, 0.988],
    }
    data = load("tinyagent")  # default experiment sec17.7
    for system, expected in printed.items():
        n = data.n.sel(system=system).values
        c = data.c.sel(system=system).values
        assert (n == 64).all()
        got = mean_pass_at_k(n, c, KS)
        np.testing.assert_array_equal(np.round(got, 3), expected)
        np.testing.assert_allclose(pass_at_k(n, c, KS).mean(axis=0), got, rtol=1e-13)


def test_section_17_2_exact_value():
    """Seed 003 §17.2 / appendix B problem 21: n=10, c=3, k=5 -> 1 - 21/252."""
    exact = 1 - Fraction(math.comb(7, 5), math.comb(10, 5))
    assert exact == Fraction(11, 12)
    assert pass_at_k(10, 3, 5) == pytest.approx(float(exact), rel=1e-15)
    assert round(pass_at_k(10, 3, 5), 6) == 0.916667


def test_section_17_2_large_n_where_float_binomials_overflow():
    """Seed 003 §17.2: n=2000, c=5, k=1000 -> 0.968906; the float ratio overflows."""
    with pytest.raises(OverflowError):
        _ = 1 - math.comb(1995, 1000) / float(math.comb(2000, 1000))
    exact = 1 - Fraction(math.comb(1995, 1000), math.comb(2000, 1000))
    got = pass_at_k(2000, 5, 1000)
    assert round(got, 6) == 0.968906
    assert got == pytest.approx(float(exact), rel=1e-14)


# ---------------------------------------------------------------- exact enumeration
def _enumerate(n: int, c: int, k: int) -> tuple[Fraction, Fraction]:
    """pass@k and pass^k by listing every k-subset of n outcomes (c successes)."""
    outcomes = [1] * c + [0] * (n - c)
    any_pass = all_pass = total = 0
    for subset in itertools.combinations(range(n), k):
        picked = [outcomes[i] for i in subset]
        any_pass += max(picked)
        all_pass += min(picked)
        total += 1
    return Fraction(any_pass, total), Fraction(all_pass, total)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 10])
def test_enumeration_over_all_subsets(n):
    for c in range(n + 1):
        ks = list(range(1, n + 1))
        at = pass_at_k(n, c, ks)
        hat = pass_hat_k(n, c, ks)
        for j, k in enumerate(ks):
            exp_at, exp_hat = _enumerate(n, c, k)
            # float of an exact rational: a product of <= n rounded factors, rel. error < 1e-14
            assert at[j] == pytest.approx(float(exp_at), rel=1e-14, abs=1e-300)
            assert hat[j] == pytest.approx(float(exp_hat), rel=1e-14, abs=1e-300)
            if exp_at == 1:
                assert at[j] == 1.0  # every subset has a success: exactly 1
            if exp_hat == 0:
                assert hat[j] == 0.0


def test_exact_rational_for_larger_n():
    rng = np.random.default_rng(1)
    for _ in range(30):
        n = int(rng.integers(20, 300))
        c = int(rng.integers(0, n + 1))
        k = int(rng.integers(1, n + 1))
        exact_at = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        exact_hat = Fraction(math.comb(c, k), math.comb(n, k))
        assert pass_at_k(n, c, k) == pytest.approx(float(exact_at), rel=1e-12, abs=1e-300)
        assert pass_hat_k(n, c, k) == pytest.approx(float(exact_hat), rel=1e-12, abs=1e-300)


def test_broadcasting_and_k_axis_last():
    n = np.array([[10, 20, 30], [40, 50, 60]])
    c = np.array([[1, 5, 30], [0, 25, 59]])
    out = pass_at_k(n, c, [1, 3, 7])
    assert out.shape == (2, 3, 3)
    for idx in np.ndindex(2, 3):
        for j, k in enumerate([1, 3, 7]):
            exact = 1 - Fraction(math.comb(n[idx] - c[idx], k), math.comb(n[idx], k))
            assert out[(*idx, j)] == pytest.approx(float(exact), rel=1e-13)
    assert pass_at_k(n, c, 2).shape == (2, 3)
    assert pass_at_k(64, np.arange(65), 4).shape == (65,)
    np.testing.assert_allclose(mean_pass_hat_k(n, c, [1, 3]), pass_hat_k(n, c, [1, 3]).mean(1))
    np.testing.assert_allclose(
        mean_pass_at_k(n, c, [1, 3], axis=0), pass_at_k(n, c, [1, 3]).mean(0)
    )


def test_k_equal_1_is_the_rate():
    n = np.array([3, 7, 64, 200])
    c = np.array([0, 3, 64, 17])
    np.testing.assert_allclose(pass_at_k(n, c, 1), c / n, rtol=1e-14)
    np.testing.assert_allclose(pass_hat_k(n, c, 1), c / n, rtol=1e-14)


def test_pooled_versus_task_average():
    """Ch. 17.1: task average and pooled differ when n varies (seed 001 uses pooled)."""
    n = np.array([2, 10])
    c = np.array([2, 1])
    assert mean_pass_rate(n, c) == pytest.approx((1.0 + 0.1) / 2)
    assert pooled_pass_rate(n, c) == pytest.approx(3 / 12)
    equal_n = [32] * 3
    assert mean_pass_rate(equal_n, [1, 2, 3]) == pytest.approx(pooled_pass_rate(equal_n, [1, 2, 3]))


# ---------------------------------------------------------------- properties
counts = st.integers(min_value=1, max_value=120).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n))
)


@settings(max_examples=200, deadline=None)
@given(counts)
def test_order_and_monotonicity(nc):
    n, c = nc
    ks = np.arange(1, n + 1)
    at = pass_at_k(n, c, ks)
    hat = pass_hat_k(n, c, ks)
    p1 = c / n
    tol = 1e-12
    assert np.all(hat >= -tol) and np.all(at <= 1 + tol)
    assert np.all(hat <= p1 + tol) and np.all(at >= p1 - tol)
    assert np.all(np.diff(at) >= -tol)  # pass@k grows with k
    assert np.all(np.diff(hat) <= tol)  # pass^k shrinks with k


@settings(max_examples=100, deadline=None)
@given(counts, st.integers(2, 50))
def test_plugin_is_never_above_unbiased(nc, k):
    """Jensen (§17.2): per cell, 1-(1-c/n)^k <= 1 - C(n-c,k)/C(n,k) and (c/n)^k >= C(c,k)/C(n,k)."""
    n, c = nc
    if k > n:
        return
    assert pass_at_k_plugin(n, c, k) <= pass_at_k(n, c, k) + 1e-12
    assert pass_hat_k_plugin(n, c, k) >= pass_hat_k(n, c, k) - 1e-12


@pytest.mark.parametrize("p", [0.05, 0.2, 0.5])
def test_unbiased_in_simulation_and_plugin_biased_low(p):
    """§17.2 check: 100,000 evaluations of n=10 at true p; pass@5 and pass^3.

    Tolerance: 4 standard errors of the simulated mean (sample sd / sqrt(reps)).
    """
    rng = np.random.default_rng(123)
    reps, n = 100_000, 10
    c = rng.binomial(n, p, size=reps)
    for k, est, plug, truth in (
        (5, pass_at_k, pass_at_k_plugin, 1 - (1 - p) ** 5),
        (3, pass_hat_k, pass_hat_k_plugin, p**3),
    ):
        values = est(n, c, k)
        se = values.std(ddof=1) / math.sqrt(reps)
        assert abs(values.mean() - truth) <= 4 * se + 1e-12
        if est is pass_at_k:
            plug_values = plug(n, c, k)
            plug_se = plug_values.std(ddof=1) / math.sqrt(reps)
            assert plug_values.mean() < truth - 4 * plug_se  # biased low (seed: by 0.04-0.08)


# ---------------------------------------------------------------- bad input, one rule each
def test_k_greater_than_n_names_the_cell():
    with pytest.raises(ValueError, match=r"k=5 exceeds n=3 at index 1"):
        pass_at_k([10, 3, 8], [1, 1, 1], [1, 5])
    with pytest.raises(ValueError, match=r"k=4 exceeds n=2 at index \(1, 0\)"):
        pass_hat_k([[5, 5], [2, 5]], [[1, 1], [1, 1]], 4)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        mean_pass_at_k([3], [1], 4)


def test_k_below_one():
    with pytest.raises(ValueError, match="k must be at least 1"):
        pass_at_k(5, 1, 0)
    with pytest.raises(ValueError, match="k must be at least 1"):
        pass_hat_k(5, 1, [1, -2])


def test_k_not_integer_or_not_1d():
    with pytest.raises(ValueError, match="not an integer"):
        pass_at_k(5, 1, 2.5)
    with pytest.raises(ValueError, match="1-D"):
        pass_at_k(5, 1, [[1, 2]])
    with pytest.raises(ValueError, match="k is empty"):
        pass_at_k(5, 1, [])


def test_n_zero_cell_refused():
    with pytest.raises(ValueError, match=r"n=0 at index 2: a cell with no trials"):
        pass_at_k([4, 4, 0], [1, 2, 0], 1)
    with pytest.raises(ValueError, match="n=0"):
        mean_pass_rate([0], [0])


def test_c_greater_than_n():
    with pytest.raises(ValueError, match=r"c=6 > n=5 at index 1"):
        pass_at_k([5, 5], [1, 6], 1)


def test_negative_counts():
    with pytest.raises(ValueError, match="c=-1 at index 0 is negative"):
        pass_hat_k([5], [-1], 1)
    with pytest.raises(ValueError, match="n=-5 at index 0 is negative"):
        pass_hat_k([-5], [0], 1)


def test_nan_and_fractional_counts():
    with pytest.raises(ValueError, match=r"c is nan at index 1"):
        pass_at_k([5.0, 5.0], [1.0, np.nan], 1)
    with pytest.raises(ValueError, match=r"n=5.5 at index 0 is not an integer"):
        pass_at_k([5.5], [1], 1)
    assert pass_at_k(5.0, 2.0, 2) == pytest.approx(pass_at_k(5, 2, 2))  # integral floats ok


def test_empty_and_mismatched_shapes():
    with pytest.raises(ValueError, match="n is empty"):
        pass_at_k([], [], 1)
    with pytest.raises(ValueError, match="do not broadcast"):
        pass_at_k([5, 5, 5], [1, 2], 1)
    with pytest.raises(ValueError, match="must be numeric"):
        pass_at_k(["a"], [1], 1)


def test_plugin_allows_k_above_n_but_checks_counts():
    assert pass_at_k_plugin(4, 2, 10) == pytest.approx(1 - 0.5**10)
    assert pass_hat_k_plugin(4, 4, 10) == 1.0
    assert pass_at_k_plugin(4, 0, 3) == 0.0
    with pytest.raises(ValueError, match="c=5 > n=4"):
        pass_at_k_plugin(4, 5, 1)
