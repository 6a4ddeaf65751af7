"""Recovery of the graded models on simulated scores with known effects, and the ordinal fit
against statsmodels' OrderedModel (maximum likelihood) as an independent reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from scipy.special import expit

from evalbayes.io import ScoreData
from evalbayes.models.graded import OrdinalModel, PartialCreditModel

pytestmark = pytest.mark.slow

CUT = np.linspace(-3.0, 3.0, 10)  # a 0-10 rating scale
SYSTEM = np.array([-0.8, 0.0, 0.8])  # sums to zero, as the model's system effects
GRADER = np.array([-0.4, 0.4])
TASK_SD = 1.0


def _ratings(seed: int, tasks: int = 40, task_sd: float = TASK_SD, graders=GRADER,
             repeats: int = 1) -> ScoreData:
    """0-10 ratings from the ordered-logistic model with the effects above."""
    rng = np.random.default_rng(seed)
    u = rng.normal(0.0, task_sd, tasks)
    rows = []
    for s, b in enumerate(SYSTEM):
        for t in range(tasks):
            for j, g in enumerate(graders):
                for _ in range(repeats):
                    ge = expit(b + u[t] + g - CUT)  # P(y >= k), k = 1..10
                    probs = -np.diff(np.concatenate([[1.0], ge, [0.0]]))
                    rows.append((f"sys{s}", f"t{t}", rng.choice(11, p=probs), f"judge{j}"))
    df = pd.DataFrame(rows, columns=["system", "task", "score", "judge"])
    return ScoreData.from_frame(df, grader="judge" if len(graders) > 1 else None, max_score=10)


def _covered(draws: np.ndarray, truth: np.ndarray) -> np.ndarray:
    low, high = np.quantile(draws.reshape(-1, *draws.shape[2:]), [0.025, 0.975], axis=0)
    return (low <= truth) & (truth <= high)


def _population_exceedance(b: float, graders: np.ndarray, t: int) -> float:
    """The truth of P(y >= t) for a new task: E_u over u ~ N(0, TASK_SD), mean over graders,
    by scipy quad."""
    values = [integrate.quad(lambda z, g=g: expit(b + g + TASK_SD * z - CUT[t - 1])
                             * stats.norm.pdf(z), -12, 12)[0] for g in graders]
    return float(np.mean(values))


@pytest.fixture(scope="module")
def ordinal_fit():
    data = _ratings(seed=11)
    # two graders leave the grader x system sd barely identified (a funnel): target_accept
    # 0.95 as the fit warning advises
    return OrdinalModel().fit(data, draws=1000, tune=1000, chains=2, seed=3, check=False,
                              target_accept=0.95)


def test_ordinal_recovers_cut_points_and_effects(ordinal_fit):
    post = ordinal_fit.posterior
    cut = _covered(post["cutpoints"].transpose("chain", "draw", "cutpoint").values, CUT)
    system = _covered(post["system_effect"].transpose("chain", "draw", "system").values,
                      SYSTEM)
    grader = _covered(post["grader_effect"].transpose("chain", "draw", "grader").values,
                      GRADER)
    covered = np.concatenate([cut, system, grader])
    # 15 nominal 95 % intervals: more than 2 misses has probability 0.036 if they were
    # independent (binomial); one fixed seed
    assert covered.sum() >= len(covered) - 2, covered
    assert system.all() and grader.all()
    assert ordinal_fit.diagnostics(warn=False).divergences == 0


def test_ordinal_exceedance_covers_the_closed_form_truth(ordinal_fit):
    exceed = ordinal_fit.exceedance([3, 5, 8], estimand="population")
    for s, b in enumerate(SYSTEM):
        for t in (3, 5, 8):
            draws = exceed.sel(system=f"sys{s}", threshold=t).values
            truth = _population_exceedance(b, GRADER, t)
            low, high = np.quantile(draws, [0.025, 0.975])
            assert low <= truth <= high, (s, t, truth, low, high)
    table = ordinal_fit.compare(baseline="sys0", candidate="sys2", thresholds=[5])
    assert (table["P(candidate > baseline)"] > 0.99).all()  # 1.6 logits apart


def test_ordinal_matches_statsmodels_ordered_model():
    """With no task or grader effects in the data, the posterior mean of the cut points and
    system contrasts is the maximum-likelihood estimate of statsmodels' OrderedModel up to the
    prior's weight, O(1/n): within 0.25 posterior sd at 900 ratings (Bernstein-von Mises).
    The task effect's scale is pinned near 0 (task_scale 0.01), as statsmodels has none: a
    free task sd (posterior ~0.1 here) makes the cut points conditional on the task, spread
    wider than the marginal ones by up to 0.3 sd (measured)."""
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    data = _ratings(seed=2, tasks=30, task_sd=0.0, graders=np.zeros(1), repeats=10)
    fit = OrdinalModel(task_scale=0.01).fit(data, draws=1000, tune=1000, chains=2, seed=2,
                                            check=False)
    df = data.frame
    exog = pd.get_dummies(df["system"])[["sys1", "sys2"]].astype(float)
    mle = OrderedModel(df["score"].astype(int), exog, distr="logit").fit(
        method="bfgs", disp=False, maxiter=5000)
    thresholds = mle.model.transform_threshold_params(mle.params)[1:-1]
    b = fit.posterior["system_effect"].transpose("chain", "draw", "system").values
    cut = fit.posterior["cutpoints"].transpose("chain", "draw", "cutpoint").values
    # statsmodels has no intercept and sys0 as reference: contrasts and cut points - b[sys0]
    for draws, ref in ((b[..., 1:] - b[..., :1], mle.params[["sys1", "sys2"]].to_numpy()),
                       (cut - b[..., :1], thresholds)):
        z = (draws.mean(axis=(0, 1)) - ref) / draws.std(axis=(0, 1))
        assert np.all(np.abs(z) < 0.25), z


def test_partial_credit_recovery_and_boundaries():
    """Zero-one-inflated Beta scores: the Beta part's effects are covered, and each system's
    boundary probabilities (a Dirichlet(1, 1, 1) prior on counts, independent of the rest)
    have the conjugate posterior mean (1 + count) / (3 + total), up to Monte Carlo error."""
    rng = np.random.default_rng(7)
    alpha, phi, tasks = 0.2, 12.0, 40
    system = np.array([-0.6, 0.0, 0.6])
    zero = np.array([0.15, 0.05, 0.02])
    one = np.array([0.02, 0.05, 0.15])
    u = rng.normal(0.0, 0.7, tasks)
    rows = []
    for s in range(3):
        for t in range(tasks):
            for _ in range(3):
                part = rng.choice(3, p=[1 - zero[s] - one[s], zero[s], one[s]])
                mu = expit(alpha + system[s] + u[t])
                y = (rng.beta(mu * phi, (1 - mu) * phi), 0.0, 1.0)[part]
                rows.append((f"sys{s}", f"t{t}", y))
    data = ScoreData.from_frame(pd.DataFrame(rows, columns=["system", "task", "score"]))
    fit = PartialCreditModel().fit(data, draws=1000, tune=1000, chains=2, seed=5, check=False)
    post = fit.posterior
    assert _covered(post["system_effect"].transpose("chain", "draw", "system").values,
                    system).all()
    # the sample of 40 task effects has mean u.mean() (sd 0.11), which the intercept absorbs
    assert _covered(post["intercept"].values[..., None], np.array([alpha + u.mean()])).all()
    assert _covered(post["precision"].values[..., None], np.array([phi])).all()
    probs = post["part_prob"].transpose("chain", "draw", "system", "part")
    y = data.scores
    codes = data.codes("system")
    for s in range(3):
        counts = np.array([np.sum((codes == s) & (y > 0) & (y < 1)),
                           np.sum((codes == s) & (y == 0)), np.sum((codes == s) & (y == 1))])
        expected = (1 + counts) / (3 + counts.sum())
        draws = probs.isel(system=s).values.reshape(-1, 3)
        # Monte Carlo error of the mean, 4 standard errors at the effective sample size
        ess = 500  # at least, for a conjugate block of 2 x 1000 draws
        assert np.all(np.abs(draws.mean(0) - expected) < 4 * draws.std(0) / np.sqrt(ess))
    exceed = fit.exceedance([0.5, 1.0], estimand="population")
    # P(score >= 1) is the probability of full credit, the system's own pi1
    np.testing.assert_allclose(exceed.sel(threshold=1.0).values,
                               probs.sel(part="one").values)
    assert fit.compare(baseline="sys0", candidate="sys2").iloc[0][
        "P(candidate > baseline)"] > 0.99
