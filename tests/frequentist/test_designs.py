"""PPI / PPI++, ANOVA variance components and training-seed noise (frequentist twins)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbayes.frequentist._ppi import ppi_lambda, ppi_mean
from evalbayes.frequentist._training_seeds import (
    recipe_difference,
    recipe_difference_se,
    training_noise,
)
from evalbayes.frequentist._variance_components import (
    empirical_logit,
    factorial_anova,
    satterthwaite_interval,
    two_way_components,
)


# ----------------------------------------------------------------------------- PPI
def _judge_sample(rng, n, big_n, theta=0.4, sens=0.85, spec=0.9):
    y = rng.random(n + big_n) < theta
    f = np.where(y, rng.random(n + big_n) < sens, rng.random(n + big_n) > spec)
    return y[:n].astype(float), f[:n].astype(float), f[n:].astype(float)


def test_ppi_formula_by_hand():
    """Angelopoulos et al. (2023), eq. (1) and Thm 1 for the mean, written out here."""
    rng = np.random.default_rng(1)
    y, fl, fu = _judge_sample(rng, 40, 500)
    got = ppi_mean(y, fl, fu, lam=1.0)
    est = fu.mean() + (y - fl).mean()
    se = math.sqrt(fu.var(ddof=1) / fu.size + (y - fl).var(ddof=1) / y.size)
    assert got.estimate == pytest.approx(est, abs=1e-12)
    assert got.se == pytest.approx(se, abs=1e-12)
    z = stats.norm.ppf(0.975)
    assert got.lower == pytest.approx(est - z * se)
    assert got.upper == pytest.approx(est + z * se)
    # lam = 0 is the labels-only mean and its classical interval
    zero = ppi_mean(y, fl, fu, lam=0.0)
    assert zero.estimate == pytest.approx(y.mean())
    assert zero.se == pytest.approx(zero.classical_se)


def test_ppi_plus_plus_lambda_minimises_the_variance():
    """PPI++ (Angelopoulos, Duchi & Zrnic 2023): the tuned lambda minimises
    lam^2 Var(f)/N + Var(Y - lam f)/n (checked by a grid, with Var(f) the pooled variance)."""
    rng = np.random.default_rng(2)
    y, fl, fu = _judge_sample(rng, 60, 300)
    lam = ppi_lambda(y, fl, fu)
    var_f = np.var(np.concatenate([fl, fu]), ddof=1)
    cov = np.mean((y - y.mean()) * (fl - fl.mean()))

    def var(lam_):
        return lam_**2 * var_f / fu.size + (y.var() + lam_**2 * var_f - 2 * lam_ * cov) / y.size

    grid = np.linspace(-1, 2, 30001)
    assert lam == pytest.approx(grid[np.argmin(var(grid))], abs=1e-3)
    assert ppi_mean(y, fl, fu).lam == pytest.approx(lam)


def test_ppi_coverage_simulation():
    """PPI and PPI++ intervals cover E[Y] near 95 % (2000 simulated evaluations)."""
    rng = np.random.default_rng(3)
    theta = 0.4
    hits = {"ppi": 0, "ppi++": 0}
    widths = {"ppi": [], "ppi++": [], "labels": []}
    reps = 2000
    for _ in range(reps):
        y, fl, fu = _judge_sample(rng, 100, 2000, theta=theta)
        for name, lam in (("ppi", 1.0), ("ppi++", "tuned")):
            r = ppi_mean(y, fl, fu, lam=lam)
            hits[name] += r.lower <= theta <= r.upper
            widths[name].append(r.upper - r.lower)
        widths["labels"].append(2 * 1.96 * r.classical_se)
    for name in hits:
        assert 0.93 <= hits[name] / reps <= 0.97, (name, hits[name] / reps)
    # a good judge narrows the interval relative to the 100 labels alone
    assert np.mean(widths["ppi++"]) < np.mean(widths["labels"])


def test_ppi_rejects_bad_input():
    with pytest.raises(ValueError, match="aligned"):
        ppi_mean([1, 0, 1], [1, 0], [1, 1, 0])
    with pytest.raises(ValueError, match="lam"):
        ppi_mean([1, 0, 1], [1, 0, 0], [1, 1, 0], lam="best")


# ----------------------------------------------------------------------------- ANOVA
def test_two_way_components_seed_section_5_9_3():
    """Seed 004 §5.9.3 worked example: 3x3 design, K = 100, MS_a = 0.81, MS_b = 2.40,
    MS_ab = 0.36, MS_err = 0.19 -> 0.0015, 0.0068, 0.0017, 0.19; shares harness 3.4 %,
    model 0.75 %, interaction 0.85 %, residual 95 %."""
    res = two_way_components(0.81, 2.40, 0.36, 0.19, 3, 3, 100)
    tab = res.table
    assert round(tab.loc["model", "variance"], 4) == 0.0015
    assert round(tab.loc["harness", "variance"], 4) == 0.0068
    assert round(tab.loc["interaction", "variance"], 4) == 0.0017
    assert tab.loc["residual", "variance"] == pytest.approx(0.19)
    assert round(100 * res.share("harness"), 1) == 3.4
    assert round(100 * res.share("model"), 2) == 0.75
    assert round(100 * res.share("interaction"), 2) == 0.85
    assert round(100 * res.share("residual")) == 95


def test_factorial_anova_mean_squares_match_statsmodels():
    """Sums of squares of the additive-task model against statsmodels' OLS anova_lm."""
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    rng = np.random.default_rng(4)
    y = rng.normal(size=(3, 4, 6)) + rng.normal(size=(3, 1, 1)) + rng.normal(size=(1, 1, 6))
    i, j, t = np.meshgrid(range(3), range(4), range(6), indexing="ij")
    frame = pd.DataFrame({"y": y.ravel(), "m": i.ravel(), "h": j.ravel(), "t": t.ravel()})
    fit = ols("y ~ C(m) * C(h) + C(t)", data=frame).fit()
    ref = anova_lm(fit, typ=1)
    got = factorial_anova(y).mean_squares
    for ours, theirs in (("model", "C(m)"), ("harness", "C(h)"), ("interaction", "C(m):C(h)"),
                         ("task", "C(t)"), ("error", "Residual")):
        assert got.loc[ours, "ss"] == pytest.approx(ref.loc[theirs, "sum_sq"], rel=1e-10)
        assert got.loc[ours, "df"] == ref.loc[theirs, "df"]


def test_factorial_anova_recovers_known_components():
    """Unbiased moment estimates: the average over 400 simulated tables of each raw
    component is within 4 Monte Carlo standard errors of the truth."""
    rng = np.random.default_rng(5)
    truth = {"model": 0.5, "harness": 0.3, "interaction": 0.2, "task": 1.0, "residual": 0.4}
    shape = (5, 4, 30)
    raws = []
    for _ in range(400):
        sd = {k: math.sqrt(v) for k, v in truth.items()}
        y = (rng.normal(0, sd["model"], (5, 1, 1)) + rng.normal(0, sd["harness"], (1, 4, 1))
             + rng.normal(0, sd["interaction"], (5, 4, 1)) + rng.normal(0, sd["task"], (1, 1, 30))
             + rng.normal(0, sd["residual"], shape))
        raws.append(factorial_anova(y).table["raw"])
    raws = pd.DataFrame(raws)
    for key, value in truth.items():
        mcse = raws[key].std() / math.sqrt(len(raws))
        assert abs(raws[key].mean() - value) < 4 * mcse, key


def test_satterthwaite_residual_is_exact_chi2():
    """One mean square: the interval is the exact chi-square interval for a variance."""
    est, lo, hi = satterthwaite_interval([1.0], [2.0], [10], 0.9)
    assert est == 2.0
    assert lo == pytest.approx(10 * 2.0 / stats.chi2.ppf(0.95, 10))
    assert hi == pytest.approx(10 * 2.0 / stats.chi2.ppf(0.05, 10))


def test_empirical_logit():
    assert empirical_logit(0, 4) == pytest.approx(math.log(0.5 / 4.5))
    with pytest.raises(ValueError):
        empirical_logit(5, 4)


# ----------------------------------------------------------------------------- seeds
# Seed 003 §17.4 prints two 320-episode evaluations of each of four step-30 checkpoints,
# rounded to 3 digits; the counts out of 320 that round to them are unique.
SECTION_17_4_COUNTS = np.array([[233, 227], [222, 231], [223, 229], [234, 227]])


def test_training_noise_section_17_4():
    """Seed 000/003 §17.4: 'sd of one evaluation 0.016 | sd across seeds (mean of 2 evals)
    0.007 | training-noise sd 0.000'; evaluations of one checkpoint differ by up to 0.028;
    the four seeds' means run from 0.706 to 0.720."""
    evals = SECTION_17_4_COUNTS / 320
    assert np.round(evals, 3).tolist() == [[0.728, 0.709], [0.694, 0.722], [0.697, 0.716],
                                           [0.731, 0.709]]
    res = training_noise(evals)
    assert round(res.eval_sd, 3) == 0.016
    assert round(res.run_sd, 3) == 0.007
    assert round(res.training_sd, 3) == 0.000
    assert res.training_var_raw < 0
    assert round(np.abs(evals[:, 0] - evals[:, 1]).max(), 3) == 0.028
    assert round(res.run_means.min(), 3) == 0.706 and round(res.run_means.max(), 3) == 0.720


def test_binomial_sd_section_17_4():
    """§17.4: binomial sqrt(0.71 * 0.29 / 320) = 0.025; 80 episodes near 0.78: about 0.045
    (the nested formula with one run, one task, n trials reduces to the binomial)."""
    se = recipe_difference_se(0.0, 0.0, math.sqrt(0.71 * 0.29), 1, 1, 320) / math.sqrt(2)
    assert round(float(se), 3) == 0.025
    se80 = recipe_difference_se(0.0, 0.0, math.sqrt(0.785 * 0.215), 1, 1, 80) / math.sqrt(2)
    assert abs(float(se80) - 0.045) < 0.002


def test_recipe_difference_se_by_monte_carlo():
    rng = np.random.default_rng(6)
    s_run, s_rt, s_trial, r, t, n = 0.05, 0.1, 0.4, 3, 20, 4
    diffs = []
    for _ in range(4000):
        means = []
        for _arm in range(2):
            x = (rng.normal(0, s_run, (r, 1, 1)) + rng.normal(0, s_rt, (r, t, 1))
                 + rng.normal(0, s_trial, (r, t, n)))
            means.append(x.mean())
        diffs.append(means[1] - means[0])
    want = float(recipe_difference_se(s_run, s_rt, s_trial, r, t, n))
    assert np.std(diffs) == pytest.approx(want, rel=0.05)


def test_recipe_difference_welch_matches_scipy():
    a, b = np.array([0.70, 0.72, 0.69]), np.array([0.75, 0.78, 0.74, 0.77])
    res = recipe_difference(a, b)
    ref = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    assert res.lower == pytest.approx(ref.low)
    assert res.upper == pytest.approx(ref.high)
    with pytest.raises(ValueError):
        training_noise([[0.1, 0.2]])
