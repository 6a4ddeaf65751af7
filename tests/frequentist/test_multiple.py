"""Holm and Benjamini-Hochberg against seed 004 and statsmodels."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from evalbayes.frequentist import MultipleTestResult, benjamini_hochberg, holm

SECTION_5_6 = [0.001, 0.004, 0.012, 0.020, 0.031, 0.040, 0.050, 0.200]
E5_3 = [0.002, 0.008, 0.015, 0.022, 0.030, 0.041, 0.048, 0.060, 0.150, 0.400]


def test_section_5_6_worked_example():
    """Seed 004 §5.6: Holm keeps 2 edits, BH keeps the first 5."""
    h = holm(SECTION_5_6)
    b = benjamini_hochberg(SECTION_5_6)
    np.testing.assert_array_equal(h.reject, [True] * 2 + [False] * 6)
    np.testing.assert_array_equal(b.reject, [True] * 5 + [False] * 3)
    assert isinstance(h, MultipleTestResult) and h.n_rejected == 2 and b.n_rejected == 5


def test_exercise_e5_3():
    """Seed 004 S5.3: Holm keeps 1 edit; BH keeps 3 (p_(3) = 0.015 equals 3 x 0.005)."""
    assert holm(E5_3).n_rejected == 1
    b = benjamini_hochberg(E5_3)
    np.testing.assert_array_equal(b.reject, [True] * 3 + [False] * 7)


def _check_against_statsmodels(p, alpha):
    for ours, method in ((holm, "holm"), (benjamini_hochberg, "fdr_bh")):
        got = ours(p, alpha)
        reject, adjusted, _, _ = multipletests(p, alpha=alpha, method=method)
        np.testing.assert_array_equal(got.reject, reject)
        np.testing.assert_allclose(got.adjusted, adjusted, rtol=0, atol=1e-10)


@pytest.mark.parametrize("p", [SECTION_5_6, E5_3, E5_3[::-1], [0.5], [0.01, 0.01, 0.04, 0.04]])
def test_statsmodels_on_seed_and_tied_inputs(p):
    _check_against_statsmodels(np.asarray(p), 0.05)


PVALUES = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40)
ALPHAS = st.sampled_from([0.01, 0.05, 0.1, 0.2])


@settings(max_examples=30, deadline=None)  # multipletests costs ~0.1 s per call
@given(PVALUES, ALPHAS)
@pytest.mark.slow  # thousands of random p-value sets against statsmodels
def test_statsmodels_on_random_pvalues(p, alpha):
    _check_against_statsmodels(np.asarray(p), alpha)


def _naive(p, alpha):
    """The rules of seed 004 §5.6.2-5.6.3 as loops over sorted p, in exact arithmetic."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    holm_reject = [False] * m
    for j, i in enumerate(order, start=1):
        if p[i] > alpha / (m - j + 1):
            break
        holm_reject[i] = True
    k = max((j for j, i in enumerate(order, start=1) if p[i] <= j * alpha / m), default=0)
    bh_reject = [False] * m
    for i in order[:k]:
        bh_reject[i] = True
    return holm_reject, bh_reject


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=30), ALPHAS)
def test_rejections_follow_the_seed_rules(grid, alpha):
    # A coarse grid gives ties and p-values exactly on a threshold (0.015 = 3 x 0.05/10,
    # as in E5.3): rationals decide those as the seed does, "<=".
    holm_ref, bh_ref = _naive([Fraction(g, 1000) for g in grid], Fraction(str(alpha)))
    p = [g / 1000 for g in grid]
    np.testing.assert_array_equal(holm(p, alpha).reject, holm_ref)
    np.testing.assert_array_equal(benjamini_hochberg(p, alpha).reject, bh_ref)


def test_input_order_is_kept():
    shuffled = [0.2, 0.001, 0.05, 0.012]
    h = holm(shuffled)
    np.testing.assert_array_equal(h.reject, [False, True, False, True])  # 0.012 <= 0.05/3
    assert h.adjusted[1] == pytest.approx(0.004)


def test_bad_inputs():
    with pytest.raises(ValueError, match="pvalues is empty"):
        holm([])
    with pytest.raises(ValueError, match=r"p-value 1.5 at index 1 is outside \[0, 1\]"):
        holm([0.1, 1.5])
    with pytest.raises(ValueError, match="pvalues is nan at index 0"):
        benjamini_hochberg([np.nan])
    with pytest.raises(ValueError, match="alpha"):
        benjamini_hochberg([0.1], alpha=0)
    with pytest.raises(ValueError, match="1-D"):
        holm([[0.1, 0.2]])
