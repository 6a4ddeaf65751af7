"""Wilson and Clopper-Pearson intervals against statsmodels and the seed's closed form."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalbayes.frequentist import Interval, clopper_pearson_interval, wilson_interval

CASES = [(c, n) for n in (1, 2, 5, 10, 32, 40, 320, 1000) for c in sorted({0, 1, n // 3, n - 1, n})]


@pytest.mark.parametrize("ci_prob", [0.8, 0.95, 0.99])
def test_wilson_matches_statsmodels(ci_prob):
    for c, n in CASES:
        got = wilson_interval(c, n, ci_prob)
        lo, hi = proportion_confint(c, n, alpha=1 - ci_prob, method="wilson")
        assert got.lower == pytest.approx(lo, abs=1e-10)
        assert got.upper == pytest.approx(hi, abs=1e-10)
        assert got.estimate == c / n


@pytest.mark.parametrize("ci_prob", [0.8, 0.95, 0.99])
def test_clopper_pearson_matches_statsmodels(ci_prob):
    for c, n in CASES:
        got = clopper_pearson_interval(c, n, ci_prob)
        lo, hi = proportion_confint(c, n, alpha=1 - ci_prob, method="beta")
        assert got.lower == pytest.approx(lo, abs=1e-10)
        assert got.upper == pytest.approx(hi, abs=1e-10)


def test_wilson_seed_formula_section_17_3():
    """Seed 003 §17.3 ``wilson_interval`` with z = 1.96, written out independently."""
    z = stats.norm.isf(0.025)
    for c, n in [(3, 32), (0, 40), (40, 40), (262, 320)]:
        p = c / n
        denom = 1 + z**2 / n
        center = (p + z**2 / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
        got = wilson_interval(c, n)
        assert got.lower == pytest.approx(center - half, abs=1e-14)
        assert got.upper == pytest.approx(center + half, abs=1e-14)
    zero = wilson_interval(0, 40)
    assert zero.lower == pytest.approx(0.0, abs=1e-15) and zero.upper > 0.05  # never collapses


def test_vectorised_and_frozen():
    c = np.array([0, 5, 10])
    got = wilson_interval(c, 10)
    assert isinstance(got, Interval) and got.method == "wilson"
    assert got.lower.shape == (3,)
    for i, ci in enumerate(c):
        assert got.lower[i] == pytest.approx(wilson_interval(int(ci), 10).lower)
    cp = clopper_pearson_interval(c, 10)
    assert cp.lower[0] == 0.0 and cp.upper[2] == 1.0
    with pytest.raises(AttributeError):
        got.lower = 0  # frozen


def test_clopper_pearson_is_exact_coverage_bound():
    """Each CP bound is where the one-sided binomial tail equals (1 - ci_prob)/2."""
    n, c = 30, 7
    cp = clopper_pearson_interval(c, n)
    assert stats.binom.sf(c - 1, n, cp.lower) == pytest.approx(0.025, rel=1e-9)
    assert stats.binom.cdf(c, n, cp.upper) == pytest.approx(0.025, rel=1e-9)


def test_bad_inputs():
    with pytest.raises(ValueError, match="c=11 > n=10"):
        wilson_interval(11, 10)
    with pytest.raises(ValueError, match="n=0"):
        clopper_pearson_interval(0, 0)
    with pytest.raises(ValueError, match="ci_prob"):
        wilson_interval(1, 10, ci_prob=1.0)
    with pytest.raises(ValueError, match="ci_prob"):
        clopper_pearson_interval(1, 10, ci_prob=0)
    with pytest.raises(ValueError, match="nan"):
        wilson_interval(np.nan, 10)
    with pytest.raises(ValueError, match="do not broadcast"):
        wilson_interval([1, 2], [3, 4, 5])
