"""IRT fits on tiny simulated data with short chains (fast): structure, sign convention,
identification, every inference method."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.models.irt._model import IRTModel
from evalbayes.testing import simulate_irt

SHORT = {"draws": 200, "tune": 300, "chains": 2, "seed": 3, "check": False}

# one worker under pytest-xdist (--dist loadgroup): the 2PL fit is a module fixture
pytestmark = pytest.mark.xdist_group("irt_fit")


def _simulate(n_sys, n_task, n, seed, theta_loc=0.0, kind="2pl"):
    rng = np.random.default_rng(seed)
    theta = rng.normal(theta_loc, 1.0, n_sys)
    b = np.linspace(-2.0, 2.0, n_task)
    a = np.exp(rng.normal(0, 0.3, n_task)) if kind != "1pl" else np.ones(n_task)
    trials = np.full((n_sys, n_task), n)
    trials[0, 0] = 0  # a missing cell
    return simulate_irt(theta, b, a, trials=trials, seed=seed + 1), theta, b


@pytest.fixture(scope="module")
def fit_2pl():
    data, theta, b = _simulate(8, 20, 10, seed=11)
    return IRTModel(kind="2pl").fit(data, **SHORT), theta, b


def test_posterior_variables_and_dims(fit_2pl):
    post, _, _ = fit_2pl
    ds = post.posterior
    assert set(ds.data_vars) == {"theta", "b", "a", "sigma_b"}  # sigma_a fixed by default
    assert ds["theta"].dims == ("chain", "draw", "system")
    assert ds["b"].dims == ("chain", "draw", "task")
    assert list(ds["task"].values) == post.data.tasks
    assert post.label.startswith("irt-2pl (nutpie")
    assert post.success_prob().dims == ("chain", "draw", "system", "task")
    # the missing cell is not in the likelihood
    assert post.log_likelihood().sizes["cell"] == 8 * 20 - 1


def test_harder_items_get_higher_difficulty(fit_2pl):
    """Sign convention: higher b = harder. True b rises from -2 to 2 across the items."""
    post, theta, b_true = fit_2pl
    b_mean = post.posterior["b"].mean(("chain", "draw")).values
    assert stats.spearmanr(b_mean, b_true).statistic > 0.9
    assert b_mean[-1] > b_mean[0]
    items = post.items()
    assert items.loc[19, "solve_rate"] < items.loc[0, "solve_rate"]
    theta_mean = post.posterior["theta"].mean(("chain", "draw")).values
    assert stats.spearmanr(theta_mean, theta).statistic > 0.8


def test_paired_population_comparison_runs(fit_2pl):
    from evalbayes.results._comparison import compare

    post, _, _ = fit_2pl
    comparison = compare(post, estimand="population")
    assert comparison.estimand == "population"
    assert np.isfinite(comparison.stats["p_superior"].values).sum() == 8 * 7


@pytest.mark.slow  # a statistical check at 4 chains x 1000 draws (ESS ratios): the slow tier
def test_location_is_identified_by_the_item_population():
    """Strong systems (theta ~ N(1.5, 1)): the shift is absorbed by the abilities, the items
    keep median difficulty near 0, and the shift direction (theta + d, b + d) mixes about as
    well as single abilities. A confounded shift (free mean of b; DESIGN.md) had bulk ESS
    15-40 where single parameters had hundreds: a factor of 10, not 2."""
    import arviz as az

    data, _, _ = _simulate(8, 60, 5, seed=5, theta_loc=1.5, kind="1pl")
    post = IRTModel(kind="1pl").fit(data, draws=1000, tune=1000, chains=4, seed=2, check=False)
    ds = post.posterior
    shift = ds.assign(
        mean_theta=ds["theta"].mean("system"), mean_b=ds["b"].mean("task")
    )
    rhat = az.rhat(shift)
    ess = az.ess(shift, method="bulk")
    typical = float(np.median(ess["theta"].values))
    for name in ("mean_theta", "mean_b"):
        assert float(rhat[name]) < 1.01
        assert float(ess[name]) > 0.5 * typical
    mean_theta, mean_b = shift["mean_theta"], shift["mean_b"]
    assert abs(float(mean_b.mean())) < float(mean_theta.mean())
    assert float(mean_theta.mean()) > 0.7


@pytest.mark.parametrize("settings", [{"kind": "1pl"}, {"kind": "3pl", "guess": 0.2},
                                      {"kind": "3pl"}])
def test_other_kinds_fit(settings):
    data, _, _ = _simulate(5, 12, 4, seed=8)
    post = IRTModel(**settings).fit(data, draws=100, tune=200, chains=2, seed=1, check=False)
    ds = post.posterior
    assert ("a" in ds) == (settings["kind"] != "1pl")
    assert ("g" in ds) == (settings.get("guess", "estimate") == "estimate" and
                           settings["kind"] == "3pl")
    p = post.success_prob().values
    if settings.get("guess") == 0.2:
        assert p.min() >= 0.2
    pop = post.pass_at_k([1, 2], estimand="population").values
    assert np.all((pop > 0) & (pop < 1))


@pytest.mark.slow  # compiles a PyMC/nutpie graph or runs mypy: the slow tier
def test_advi_is_labelled_approximate():
    data, _, _ = _simulate(5, 12, 4, seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = IRTModel(kind="2pl").fit(data, method="advi", draws=100, chains=1, seed=1)
    assert post.approximate
    assert "APPROXIMATE" in post.label
    assert post.items()["approximate"].all()
    assert post.abilities()["approximate"].all()


def test_pymc_nuts_fallback():
    data, _, _ = _simulate(4, 8, 4, seed=9, kind="1pl")
    post = IRTModel(kind="1pl").fit(data, method="pymc", draws=100, tune=100, chains=2,
                                    seed=1, check=False)
    assert post.posterior["theta"].shape == (2, 100, 4)


@pytest.mark.skipif(importlib.util.find_spec("numpyro") is None, reason="numpyro not installed")
def test_numpyro_optional():
    data, _, _ = _simulate(4, 8, 4, seed=9, kind="1pl")
    post = IRTModel(kind="1pl").fit(data, method="numpyro", draws=100, tune=100, chains=2,
                                    seed=1, check=False)
    assert post.posterior["theta"].shape == (2, 100, 4)


def test_reversed_and_flat_items_are_flagged():
    """A reversed item (strong systems fail it: a wrong reference answer) is flagged
    negative_discrimination; a coin-flip item gets a low discrimination; clean items are
    rarely flagged (each flag is a 1 % / 90 % rule, so a few false flags among 30 would be
    unusual, not impossible)."""
    rng = np.random.default_rng(21)
    theta = np.linspace(-2.0, 2.0, 16)
    b = rng.normal(0.0, 1.0, 32)
    a = np.exp(rng.normal(0.0, 0.2, 32))
    logit = a * (theta[:, None] - b)
    logit[:, 0] = -2.5 * theta  # reversed
    logit[:, 1] = 0.0  # coin flip, no dependence on ability
    trials = np.full((16, 32), 6)
    counts = rng.binomial(trials, expit(logit))
    data = EvalData.from_arrays(trials, counts)
    post = IRTModel(kind="2pl").fit(data, draws=300, tune=500, chains=2, seed=4, check=False)
    items = post.items()
    assert items.loc[0, "negative_discrimination"]
    assert items.loc[0, "ability_corr"] < -0.5
    assert items.loc[1, "p_low_a"] > items.loc[2:, "p_low_a"].max()
    assert items.loc[2:, "negative_discrimination"].sum() <= 1
    assert items.loc[2:, "low_discrimination"].sum() <= 1
