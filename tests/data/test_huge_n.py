"""Reliability issue, bad 1: n = 10^9 trials per cell costs O(1) memory per cell.

References are exact rational arithmetic (``fractions``, ``math.comb``) and scipy's
``betaln``, never numbers produced by the code under test.
"""

from __future__ import annotations

import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

import evalbayes as eb
from evalbayes.frequentist import _passk as passk
from evalbayes.frequentist import mean_pass_at_k, mean_pass_hat_k, pass_at_k
from evalbayes.frequentist.crosscheck import crosscheck
from evalbayes.models.beta_binomial import _exact as grid

BIG = 10**9
MIB = 1 << 20


def exact_log_ratio(n: int, m: int, k: int) -> float:
    """``log C(m, k) / C(n, k)`` from the exact product ``prod_{j<k} (m-j)/(n-j)``."""
    if m < k:
        return -math.inf
    ratio = Fraction(1)
    for j in range(k):
        ratio *= Fraction(m - j, n - j)
    if ratio > Fraction(1, 2):
        return math.log1p(float(ratio - 1))
    return math.log(ratio.numerator) - math.log(ratio.denominator)


def peak_bytes(func, *args, **kwargs):
    tracemalloc.start()
    try:
        result = func(*args, **kwargs)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def big_data(n_tasks: int = 6) -> eb.EvalData:
    rng = np.random.default_rng(3)
    c = rng.integers(1, BIG, size=(2, n_tasks))
    return eb.EvalData.from_arrays(np.full((2, n_tasks), BIG), c, systems=["A", "B"])


@pytest.mark.parametrize(
    ("m", "k"),
    [(5 * 10**8, 1), (5 * 10**8, 3), (BIG - 1000, 1000), (BIG - 5, 7), (BIG - 300, 2000),
     (BIG - 10**6, 300), (10**5, 4096), (999, 1000)],
)
def test_log_tail_of_a_billion_trials_matches_the_exact_product(m, k):
    got, peak = peak_bytes(passk._log_tail, np.array([BIG]), np.array([m]), np.array([k]))
    expected = exact_log_ratio(BIG, m, k)
    if expected == -math.inf:
        assert got[0, 0] == -np.inf
    else:
        assert got[0, 0] == pytest.approx(expected, rel=1e-12)
    assert peak < 8 * MIB


def test_large_n_path_matches_math_comb_for_moderate_n():
    """The O(1) path (direct sums and Euler-Maclaurin) against exact binomials."""
    rng = np.random.default_rng(0)
    n = rng.integers(2, 3000, size=400)
    m = np.array([rng.integers(0, v + 1) for v in n])
    k = np.array([rng.integers(1, v + 1) for v in n])
    got = passk._log_tail_large(n.astype(float), m.astype(float), k.astype(float))
    for g, n_i, m_i, k_i in zip(got, n, m, k, strict=True):
        if m_i < k_i:
            assert g == -np.inf
            continue
        expected = math.log(math.comb(int(m_i), int(k_i))) - math.log(
            math.comb(int(n_i), int(k_i))
        )
        assert g == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_pass_at_k_of_a_billion_trials_is_exact_and_small():
    n = np.full(3, BIG)
    c = np.array([1, 5 * 10**8, BIG])
    values, peak = peak_bytes(mean_pass_at_k, n, c, [1, 2])
    expected_k2 = np.mean([1 - float(Fraction(BIG - ci, BIG) * Fraction(BIG - ci - 1, BIG - 1))
                           for ci in c])
    assert values[0] == pytest.approx(np.mean(c / BIG), rel=1e-14)
    assert values[1] == pytest.approx(expected_k2, rel=1e-12)
    assert peak < 8 * MIB
    hat = mean_pass_hat_k(n, c, 2 ** 29)
    assert 0.0 <= hat <= 1.0 / 3 + 1e-12  # only the all-pass task can contribute
    assert pass_at_k(BIG, 0, BIG) == 0.0


def test_crosscheck_on_a_billion_trials_with_default_k_stays_small():
    data = big_data()
    report, peak = peak_bytes(crosscheck, data, n_resamples=200)
    assert report.k[-1] == 2**29
    assert peak < 64 * MIB
    row = report.to_frame().iloc[0]
    c = data.c.values[0]
    assert row["pass@1"] == pytest.approx(np.mean(c / BIG), rel=1e-12)


def test_grid_large_cells_match_the_finite_sums(monkeypatch):
    """betaln for big cells against the exact finite sums on cells of a few thousand trials."""
    n = np.array([3000, 5000])
    c = np.array([1200, 4990])
    w = np.array([1.0, 2.0])
    x, y = np.meshgrid(np.linspace(-2, 2, 5), np.linspace(-1, 8, 5))
    sums = grid.log_density(x, y, n, c, w)
    monkeypatch.setattr(grid, "LARGE_CELL_N", 100)
    closed = grid.log_density(x, y, n, c, w)
    np.testing.assert_allclose(closed, sums, rtol=1e-10)


def test_grid_log_density_of_a_billion_trials_stays_small():
    x, y = np.meshgrid(np.linspace(-2, 2, 33), np.linspace(-1, 8, 33))
    values, peak = peak_bytes(
        grid.log_density, x, y, np.array([BIG]), np.array([BIG // 3]), np.array([1.0])
    )
    assert np.isfinite(values).all()
    assert peak < 16 * MIB


def test_exact_fit_and_ppc_of_a_billion_trials():
    data = big_data()
    fit, peak = peak_bytes(eb.BetaBinomialModel().fit, data, draws=100, chains=2, seed=1)
    assert peak < 256 * MIB
    check, peak = peak_bytes(fit.ppc)
    assert check.bins == "rate"
    assert peak < 64 * MIB
