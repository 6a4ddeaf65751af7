"""Sign-flip, McNemar, majority outcomes, verdict and non-inferiority (seed 001)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from evalbayes.frequentist import (
    PairedOutcomes,
    majority_outcome,
    mcnemar,
    non_inferiority,
    paired_comparison,
    paired_outcomes,
    paired_verdict,
    sign_flip_test,
)


def _brute_force(d: list[Fraction], alternative: str, clusters=None) -> Fraction:
    """Exact p over all 2^G sign assignments, in rational arithmetic."""
    if clusters is None:
        sums = list(d)
    else:
        groups: dict = {}
        for value, label in zip(d, clusters, strict=True):
            groups[label] = groups.get(label, Fraction(0)) + value
        sums = list(groups.values())
    observed = sum(sums)
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(sums)):
        total = sum(s * v for s, v in zip(signs, sums, strict=True))
        if alternative == "two-sided":
            hits += abs(total) >= abs(observed)
        elif alternative == "greater":
            hits += total >= observed
        else:
            hits += total <= observed
    return Fraction(hits, 2 ** len(sums))


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_sign_flip_equals_brute_force(alternative):
    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 9, 12):
        for _ in range(4):
            ints = rng.integers(-6, 7, size=size)  # ties and zeros on purpose
            d = [Fraction(int(v), 32) for v in ints]
            got = sign_flip_test(ints / 32, alternative=alternative)
            assert got.method == "exact" and got.n_assignments == 2**size
            assert got.p_value == float(_brute_force(d, alternative))


def test_exact_sign_flip_with_clusters_and_margin():
    ints = np.array([3, -1, 4, 1, -5, 9, 2, -6, 5, 3])
    labels = ["a", "a", "b", "c", "c", "c", "d", "e", "e", "f"]
    got = sign_flip_test(ints / 10, clusters=labels)
    assert got.n_units == 6
    exact = _brute_force([Fraction(int(v), 10) for v in ints], "two-sided", labels)
    assert got.p_value == float(exact)
    # margin D: the null is mean = -D, i.e. flip d + D; one-sided "greater"
    margin = Fraction(1, 5)
    shifted = [Fraction(int(v), 10) + margin for v in ints]
    got = sign_flip_test(ints / 10, alternative="greater", margin=0.2)
    assert got.p_value == float(_brute_force(shifted, "greater"))
    assert got.statistic == pytest.approx(ints.mean() / 10)


def test_monte_carlo_within_error_of_exact_at_20_units():
    rng = np.random.default_rng(5)
    d = rng.normal(0.05, 0.2, size=20)
    exact = sign_flip_test(d)  # 20 <= exact_max: 1,048,576 assignments
    assert exact.method == "exact"
    m = 20_000
    mc = sign_flip_test(d, exact_max=19, n_resamples=m, seed=1)
    assert mc.method == "monte-carlo" and mc.n_assignments == m
    se = math.sqrt(exact.p_value * (1 - exact.p_value) / m)
    assert abs(mc.p_value - exact.p_value) <= 4 * se + 1 / (m + 1)


def test_monte_carlo_p_is_never_zero_and_reproducible():
    d = np.full(40, 0.5)  # every random assignment is less extreme than the observed one
    got = sign_flip_test(d, n_resamples=999, seed=3)
    assert got.method == "monte-carlo"
    assert got.p_value == pytest.approx(1 / 1000)  # Phipson-Smyth (0 + 1)/(999 + 1)
    again = sign_flip_test(d, n_resamples=999, seed=3)
    assert again == got
    noisy = np.random.default_rng(2).normal(size=30)
    assert sign_flip_test(noisy, seed=4) == sign_flip_test(noisy, seed=4)
    assert sign_flip_test(noisy, seed=4).p_value != sign_flip_test(noisy, seed=5).p_value


def test_sign_flip_all_zero_differences():
    assert sign_flip_test(np.zeros(8)).p_value == 1.0


def test_seed_001_fewer_than_six_changed_cases_cannot_reach_005():
    """Seed 001: 'p cannot go below 0.05 with fewer than 6 changed cases'."""
    for changed in range(1, 6):
        d = np.r_[np.ones(changed), np.zeros(10)]
        assert sign_flip_test(d).p_value >= 0.05
        assert mcnemar(0, changed).p_value >= 0.05
    assert sign_flip_test(np.r_[np.ones(6), np.zeros(10)]).p_value < 0.05


def test_mcnemar_matches_statsmodels_and_scipy():
    for b in range(0, 25, 3):
        for c in range(0, 25, 4):
            got = mcnemar(b, c).p_value
            ref = sm_mcnemar([[7, b], [c, 11]], exact=True).pvalue
            assert got == pytest.approx(ref, abs=1e-10)
            if b + c:
                ref2 = stats.binomtest(min(b, c), b + c, 0.5).pvalue
                assert got == pytest.approx(min(1.0, ref2), abs=1e-10)
    assert mcnemar(0, 0).p_value == 1.0


def test_majority_outcome_tie_is_a_fail():
    np.testing.assert_array_equal(
        majority_outcome([3, 4, 4, 1, 1], [2, 2, 3, 0, 1]), [True, False, True, False, True]
    )
    assert majority_outcome(2, 1) is False


def test_paired_outcomes_table():
    table = paired_outcomes([3, 3, 3, 3, 4], [3, 0, 2, 0, 2], [3, 3, 3, 3, 4], [2, 3, 0, 1, 3])
    assert table == PairedOutcomes(both=1, only_a=1, only_b=2, neither=1)
    assert table.n_cases == 5
    with pytest.raises(ValueError, match="paired case by case"):
        paired_outcomes([3, 3], [1, 1], [3], [1])


def test_verdict_rule():
    assert paired_verdict(0.01, 0.2, 0.01) == "better"
    assert paired_verdict(-0.2, -0.01, 0.01) == "worse"
    assert paired_verdict(0.01, 0.2, 0.06) == "inconclusive"
    assert paired_verdict(-0.01, 0.2, 0.001) == "inconclusive"
    assert paired_verdict(0.0, 0.2, 0.001) == "inconclusive"  # must exclude 0
    with pytest.raises(ValueError, match="lower <= upper"):
        paired_verdict(0.2, 0.1, 0.01)
    with pytest.raises(ValueError, match="p_value"):
        paired_verdict(0.1, 0.2, 1.5)


def test_paired_comparison_section_17_1():
    """§17.1 counts, GRPO 80 - RL base: every task but one improves; verdict better."""
    base = np.array([3, 8, 1, 6, 4, 4, 6, 2, 7, 5]) / 32
    grpo = np.array([31, 32, 31, 30, 29, 17, 31, 1, 29, 31]) / 32
    got = paired_comparison(base, grpo, seed=0)
    assert got.difference == pytest.approx(np.mean(grpo - base))
    # exact: all-plus, all-plus with the one negative flipped, and their mirror images
    assert got.sign_flip.p_value == pytest.approx(4 / 1024)
    assert got.verdict == "better"
    reverse = paired_comparison(grpo, base, seed=0)
    assert reverse.verdict == "worse"


def test_non_inferiority():
    rng = np.random.default_rng(8)
    a = rng.uniform(0.2, 0.8, size=60)
    b = a - 0.005 + rng.normal(0, 0.02, size=60)
    ok = non_inferiority(a, b, margin=0.05, seed=1)
    assert ok.non_inferior and ok.exit_code == 0 and ok.lower > -0.05 and ok.p_value < 0.025
    worse = non_inferiority(a, a - 0.1, margin=0.05, seed=1)
    assert not worse.non_inferior and worse.exit_code == 1
    with pytest.raises(ValueError, match="margin must be > 0"):
        non_inferiority(a, b, margin=0)


def test_bad_inputs():
    with pytest.raises(ValueError, match="differences is empty"):
        sign_flip_test([])
    with pytest.raises(ValueError, match="differences is nan at index 2"):
        sign_flip_test([0.1, 0.2, np.nan])
    with pytest.raises(ValueError, match="alternative"):
        sign_flip_test([0.1], alternative="bigger")
    with pytest.raises(ValueError, match="exact_max"):
        sign_flip_test([0.1], exact_max=-1)
    with pytest.raises(ValueError, match="margin"):
        sign_flip_test([0.1], margin=-0.1)
    with pytest.raises(ValueError, match="one label per unit"):
        sign_flip_test([0.1, 0.2], clusters=[1])
    with pytest.raises(ValueError, match="only_a=-1 is negative"):
        mcnemar(-1, 3)
    with pytest.raises(ValueError, match="not an integer"):
        mcnemar(1.5, 3)
    with pytest.raises(ValueError, match="same length"):
        paired_comparison([0.1, 0.2], [0.3])


def test_monte_carlo_with_few_magnitudes_is_the_sign_test():
    """Paired binary outcomes over 300 tasks: differences in {-1, 0, 1}, so the Monte Carlo
    path draws each total as |d| (2 B - m), B ~ Binomial(m, 1/2) over the m non-zero
    differences. Its p-value must agree, within Monte Carlo error, with the exact sign test
    (scipy's binomtest of the positive differences among the non-zero ones)."""
    rng = np.random.default_rng(12)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.12, 0.7, 0.18], size=300)
    m = 40_000
    for alternative in ("two-sided", "greater", "less"):
        got = sign_flip_test(d, alternative=alternative, n_resamples=m, seed=2)
        assert got.method == "monte-carlo"
        exact = stats.binomtest(int((d > 0).sum()), int((d != 0).sum()), 0.5,
                                alternative=alternative).pvalue
        se = math.sqrt(exact * (1 - exact) / m)
        assert abs(got.p_value - exact) <= 4 * se + 2 / (m + 1)
