"""Judge calibration: Cohen's kappa and the Rogan-Gladen correction (seed 001)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from evalbayes.frequentist import KappaResult, cohen_kappa, rogan_gladen


def _table(judge, label):
    judge, label = np.asarray(judge), np.asarray(label)
    return np.array(
        [[np.sum((judge == i) & (label == j)) for j in (0, 1)] for i in (0, 1)], dtype=float
    )


def test_kappa_matches_statsmodels():
    rng = np.random.default_rng(0)
    for _ in range(20):
        size = int(rng.integers(5, 200))
        label = rng.random(size) < rng.uniform(0.2, 0.8)
        flip = rng.random(size) < rng.uniform(0.0, 0.4)
        judge = label ^ flip
        got = cohen_kappa(judge, label, n_resamples=200)
        ref = sm_cohens_kappa(_table(judge, label)).kappa
        assert got.kappa == pytest.approx(ref, abs=1e-10)


def test_kappa_by_hand_and_rates():
    judge = [1, 1, 1, 0, 0, 1, 0, 1, 1, 0]
    label = [1, 1, 0, 0, 0, 1, 1, 1, 1, 0]
    p0 = 8 / 10
    pe = 0.6 * 0.6 + 0.4 * 0.4
    got = cohen_kappa(judge, label)
    assert isinstance(got, KappaResult)
    assert got.observed_agreement == pytest.approx(p0)
    assert got.chance_agreement == pytest.approx(pe)
    assert got.kappa == pytest.approx((p0 - pe) / (1 - pe))
    assert got.sensitivity == pytest.approx(5 / 6)  # judge pass | label pass
    assert got.specificity == pytest.approx(3 / 4)  # judge fail | label fail
    assert got.lower <= got.kappa <= got.upper
    assert got.status == "insufficient-data"  # 10 < 20 cases


def test_status_rules():
    rng = np.random.default_rng(3)
    label = rng.random(60) < 0.5
    good = cohen_kappa(label ^ (rng.random(60) < 0.05), label)
    assert good.kappa >= 0.6 and good.status == "calibrated"
    bad = cohen_kappa(label ^ (rng.random(60) < 0.4), label)
    assert bad.kappa < 0.6 and bad.status == "uncalibrated"
    same = cohen_kappa(np.ones(30), np.ones(30))
    assert math.isnan(same.kappa) and same.status == "insufficient-data"
    assert cohen_kappa(label, label, threshold=0.99).status == "calibrated"
    assert cohen_kappa(label[:19], label[:19]).status == "insufficient-data"


def test_kappa_bootstrap_is_seeded():
    rng = np.random.default_rng(1)
    label = rng.random(40) < 0.5
    judge = label ^ (rng.random(40) < 0.2)
    first = cohen_kappa(judge, label, seed=5)
    assert cohen_kappa(judge, label, seed=5) == first
    assert cohen_kappa(judge, label, seed=6).lower != first.lower
    assert first.n_resamples == 2000


def test_rogan_gladen_formula_and_recovery():
    """theta = (p_hat + q0 - 1)/(q0 + q1 - 1): with the judge's expected pass rate
    p_hat = q1 theta + (1 - q0)(1 - theta) the correction returns theta exactly."""
    for theta, q0, q1 in [(0.3, 0.9, 0.8), (0.7, 0.95, 0.6), (0.0, 0.8, 0.8), (1.0, 0.7, 0.9)]:
        p_hat = q1 * theta + (1 - q0) * (1 - theta)
        got = rogan_gladen(p_hat, q0, q1)
        assert got.estimate == pytest.approx(theta, abs=1e-12)
        assert got.se is None and got.lower is None
    arr = rogan_gladen(np.array([0.3, 0.5]), 0.9, 0.8)
    np.testing.assert_allclose(arr.estimate, (np.array([0.3, 0.5]) + 0.9 - 1) / 0.7)


def test_rogan_gladen_delta_method_against_finite_differences_and_simulation():
    p, q0, q1 = 0.42, 0.9, 0.8
    n, n_neg, n_pos = 2000, 800, 600
    got = rogan_gladen(p, q0, q1, n=n, n_neg=n_neg, n_pos=n_pos)

    def theta(a, b, c):
        return (a + b - 1) / (b + c - 1)

    h = 1e-6
    grads = [
        (theta(p + h, q0, q1) - theta(p - h, q0, q1)) / (2 * h),
        (theta(p, q0 + h, q1) - theta(p, q0 - h, q1)) / (2 * h),
        (theta(p, q0, q1 + h) - theta(p, q0, q1 - h)) / (2 * h),
    ]
    variances = [p * (1 - p) / n, q0 * (1 - q0) / n_neg, q1 * (1 - q1) / n_pos]
    se_fd = math.sqrt(sum(g**2 * v for g, v in zip(grads, variances, strict=True)))
    assert got.se == pytest.approx(se_fd, rel=1e-6)
    assert got.lower == pytest.approx(got.estimate - 1.959963984540054 * got.se)

    # Monte Carlo: sd of theta_hat from binomial p_hat, q0_hat, q1_hat. The delta method is
    # first order; at these sizes its error is well under 5%, and the MC sd's own relative
    # standard error with 40,000 draws is 1/sqrt(2 x 40,000) = 0.35%.
    rng = np.random.default_rng(0)
    draws = 40_000
    sims = theta(
        rng.binomial(n, p, draws) / n,
        rng.binomial(n_neg, q0, draws) / n_neg,
        rng.binomial(n_pos, q1, draws) / n_pos,
    )
    assert sims.std() == pytest.approx(got.se, rel=0.05)


def test_rogan_gladen_partial_sizes_drop_terms():
    only_p = rogan_gladen(0.4, 0.9, 0.8, n=500)
    assert only_p.se == pytest.approx(math.sqrt(0.4 * 0.6 / 500) / 0.7)


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"q0 \+ q1 = 1 <= 1"):
        rogan_gladen(0.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="no better than chance"):
        rogan_gladen(0.5, 0.3, 0.4)
    with pytest.raises(ValueError, match=r"p_hat=1\.2"):
        rogan_gladen(1.2, 0.9, 0.9)
    with pytest.raises(ValueError, match="q1=nan"):
        rogan_gladen(0.5, 0.9, np.nan)
    with pytest.raises(ValueError, match="n_pos"):
        rogan_gladen(0.5, 0.9, 0.9, n_pos=0)
    with pytest.raises(ValueError, match="aligned by case"):
        cohen_kappa([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match=r"judge=2 at index 1: verdicts must be pass/fail"):
        cohen_kappa([1, 2], [1, 0])
    with pytest.raises(ValueError, match="label is empty"):
        cohen_kappa([1], [])
    with pytest.raises(ValueError, match="label is nan"):
        cohen_kappa([1.0, 0.0], [1.0, np.nan])
