"""The graded models' derived quantities on hand-made draws (no sampling), against explicit
loops and scipy (``integrate.quad`` over the task population, ``stats.beta.sf``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import integrate, stats
from scipy.special import expit

from evalbayes.inference import SamplerConfig
from evalbayes.io import ScoreData
from evalbayes.models import get_model, model_from_config
from evalbayes.models.graded import OrdinalModel, PartialCreditModel, ScorePosterior

CHAINS, DRAWS = 1, 3


def _data(scores, graders=("j1", "j2"), kind=None) -> ScoreData:
    rows = [(s, t, j) for s in ("A", "B") for t in ("t1", "t2", "t3") for j in graders]
    df = pd.DataFrame(rows, columns=["system", "task", "judge"])
    df["score"] = np.resize(np.asarray(scores), len(df))
    return ScoreData.from_frame(df, grader="judge" if len(graders) > 1 else None, kind=kind,
                                max_score=4 if df["score"].dtype.kind == "i" else None)


def _effects(rng, data):
    n_s, n_t, n_g = len(data.systems), len(data.tasks), len(data.graders)
    sample = (CHAINS, DRAWS)
    b = rng.normal(0, 1, (*sample, n_s))
    b -= b.mean(-1, keepdims=True)
    values = {"system_effect": (("chain", "draw", "system"), b),
              "task_sd": (("chain", "draw"), np.abs(rng.normal(1, 0.3, sample))),
              "task_effect": (("chain", "draw", "task"), rng.normal(0, 1, (*sample, n_t)))}
    if n_g > 1:
        g = rng.normal(0, 0.5, (*sample, n_g))
        values["grader_effect"] = (("chain", "draw", "grader"), g - g.mean(-1, keepdims=True))
        values["grader_system_sd"] = (("chain", "draw"), np.full(sample, 0.3))
        values["grader_system_effect"] = (("chain", "draw", "grader", "system"),
                                          rng.normal(0, 0.3, (*sample, n_g, n_s)))
    return values


def _eta(post: xr.Dataset, c: int, d: int, s: int, t: int | None, j: int) -> float:
    eta = post["system_effect"].values[c, d, s]
    if t is not None:
        eta += post["task_effect"].values[c, d, t]
    if "grader_effect" in post:
        eta += post["grader_effect"].values[c, d, j]
        eta += post["grader_system_effect"].values[c, d, j, s]
    return float(eta)


def _population(f, tau: float) -> float:
    return integrate.quad(lambda z: f(tau * z) * stats.norm.pdf(z), -12, 12, epsabs=1e-12)[0]


def _ordinal():
    data = _data([0, 1, 2, 3, 4])
    rng = np.random.default_rng(3)
    values = _effects(rng, data)
    values["cutpoints"] = (("chain", "draw", "cutpoint"),
                           np.sort(rng.normal(0, 2, (CHAINS, DRAWS, 4)), axis=-1))
    return data, xr.Dataset(values)


@pytest.mark.parametrize("estimand", ["tasks", "population"])
def test_ordinal_exceedance_and_mean(estimand):
    data, post = _ordinal()
    model = OrdinalModel()
    thresholds = np.array([1.0, 3.0, 4.0])
    got = model.exceedance_draws(post, data, thresholds, estimand)
    mean = model.mean_draws(post, data, estimand)
    assert got.shape == (CHAINS, DRAWS, 2, 3)
    cut = post["cutpoints"].values
    for d in range(DRAWS):
        tau = float(post["task_sd"].values[0, d])
        for s in range(2):
            for k, t in enumerate(thresholds):
                total = []
                for j in range(2):
                    c_t = cut[0, d, int(t) - 1]
                    if estimand == "tasks":
                        total += [expit(_eta(post, 0, d, s, i, j) - c_t) for i in range(3)]
                    else:
                        base = _eta(post, 0, d, s, None, j)
                        total.append(_population(lambda u, b=base, c=c_t: expit(b + u - c),
                                                 tau))
                assert got[0, d, s, k] == pytest.approx(np.mean(total), abs=1e-9)
            every = model.exceedance_draws(post, data, np.arange(1.0, 5.0), estimand)
            # E[y] = sum_k P(y >= k) on 0..K
            assert mean[0, d, s] == pytest.approx(every[0, d, s].sum(), abs=1e-12)


def test_ordinal_exceedance_is_the_category_tail():
    """P(y >= t) against the category probabilities of scipy's logistic CDF, one cell."""
    _, post = _ordinal()
    post = post.assign(task_sd=post["task_sd"] * 0 + 1e-9)
    one = ScoreData.from_frame(pd.DataFrame({"system": ["A", "B"], "task": ["t", "t"],
                                             "score": [0, 4]}), max_score=4)
    post1 = xr.Dataset({"cutpoints": post["cutpoints"],
                        "system_effect": post["system_effect"],
                        "task_sd": post["task_sd"],
                        "task_effect": (("chain", "draw", "task"), np.zeros((1, DRAWS, 1)))})
    got = OrdinalModel().exceedance_draws(post1, one, np.arange(1.0, 5.0), "tasks")
    cut = post["cutpoints"].values[0, 0]
    eta = post["system_effect"].values[0, 0, 1]
    cdf = np.concatenate([stats.logistic.cdf(cut - eta), [1.0]])  # P(y <= k), k = 0..4
    probs = np.diff(np.concatenate([[0.0], cdf]))
    tail = [probs[t:].sum() for t in range(1, 5)]
    np.testing.assert_allclose(got[0, 0, 1], tail, atol=1e-12)


# "tasks" is exact arithmetic; "population" is a 24-node Gauss-Hermite rule against quad: the
# rule is exact for polynomials of degree < 48 in z, and the Beta tail in the logit of its mean
# is smooth but not polynomial; its error on these draws is 5e-7 at most (measured, 1e-6 bar).
TOL = {"tasks": 1e-9, "population": 1e-6}


@pytest.mark.parametrize("estimand", ["tasks", "population"])
def test_partial_credit_exceedance_and_mean(estimand):
    data = _data([0.0, 0.3, 0.55, 1.0, 0.8, 0.1])
    rng = np.random.default_rng(4)
    values = _effects(rng, data)
    values["intercept"] = (("chain", "draw"), rng.normal(0, 1, (CHAINS, DRAWS)))
    values["precision"] = (("chain", "draw"), np.exp(rng.normal(2, 0.5, (CHAINS, DRAWS))))
    probs = rng.dirichlet([1, 1, 1], (CHAINS, DRAWS, 2))
    values["part_prob"] = (("chain", "draw", "system", "part"), probs)
    post = xr.Dataset(values).assign_coords(part=["interior", "zero", "one"])
    model = PartialCreditModel()
    thresholds = np.array([0.2, 0.5, 0.9, 1.0])
    got = model.exceedance_draws(post, data, thresholds, estimand)
    mean = model.mean_draws(post, data, estimand)
    for d in range(DRAWS):
        tau = float(post["task_sd"].values[0, d])
        alpha = float(post["intercept"].values[0, d])
        phi = float(post["precision"].values[0, d])
        for s in range(2):
            p_in, _, p_one = probs[0, d, s]

            def sf(eta, t, alpha=alpha, phi=phi):
                mu = expit(alpha + eta)
                return 0.0 if t >= 1 else stats.beta.sf(t, mu * phi, (1 - mu) * phi)

            for k, t in enumerate(thresholds):
                parts, means = [], []
                for j in range(2):
                    if estimand == "tasks":
                        parts += [sf(_eta(post, 0, d, s, i, j), t) for i in range(3)]
                        means += [expit(alpha + _eta(post, 0, d, s, i, j)) for i in range(3)]
                    else:
                        base = _eta(post, 0, d, s, None, j)
                        parts.append(_population(lambda u, b=base, t=t: sf(b + u, t), tau))
                        means.append(_population(
                            lambda u, b=base, a=alpha: expit(a + b + u), tau))
                expected = p_one + p_in * np.mean(parts)
                assert got[0, d, s, k] == pytest.approx(expected, abs=TOL[estimand])
            assert mean[0, d, s] == pytest.approx(p_one + p_in * np.mean(means),
                                                  abs=TOL[estimand])


def test_posterior_tables_and_comparison():
    data, post = _ordinal()
    post = post.assign_coords(system=["A", "B"], task=data.tasks, grader=data.graders)
    result = ScorePosterior(OrdinalModel(), data, SamplerConfig(draws=DRAWS, chains=1), post)
    exceed = result.exceedance([2, 4], estimand="tasks")
    assert exceed.dims == ("chain", "draw", "system", "threshold")
    assert list(exceed["threshold"].values) == [2, 4]
    table = result.compare(baseline="A", candidate="B", thresholds=[2], estimand="tasks")
    diff = (result.mean_score("tasks").sel(system="B")
            - result.mean_score("tasks").sel(system="A")).values.ravel()
    row = table.set_index("quantity").loc["mean score"]
    assert row["difference"] == pytest.approx(diff.mean())
    assert row["P(candidate > baseline)"] == pytest.approx(np.mean(diff > 0))
    summary = result.summary(thresholds=[2])
    assert set(summary["quantity"]) == {"mean score", "P(score >= 2)"}
    with pytest.raises(ValueError, match="not a system"):
        result.compare(baseline="A", candidate="Z")
    with pytest.raises(ValueError, match="same system"):
        result.compare(baseline="A", candidate="A")
    with pytest.raises(ValueError, match=r"not a level 1\.\.4"):
        result.exceedance([5])
    with pytest.raises(ValueError, match="not a level"):
        result.exceedance([1.5])


def test_registry_and_config_round_trip():
    for name, cls in (("ordinal", OrdinalModel), ("partial-credit", PartialCreditModel)):
        model = get_model(name)
        assert isinstance(model, cls)
        assert model_from_config(model.to_config()) == model
    with pytest.raises(ValueError, match="cut_scale"):
        OrdinalModel(cut_scale=0)
    with pytest.raises(ValueError, match="boundary"):
        PartialCreditModel(boundary="clip")


def test_models_refuse_the_wrong_data():
    ordinal = _data([0, 1, 2, 3, 4])
    continuous = _data([0.0, 0.3, 0.5, 1.0])
    with pytest.raises(ValueError, match="use the partial-credit model"):
        OrdinalModel().fit(continuous)
    with pytest.raises(ValueError, match="use the ordinal model"):
        PartialCreditModel().fit(ordinal)
    with pytest.raises(ValueError, match=r"row 0 .*exactly 0 or 1.*inflate"):
        PartialCreditModel(boundary="error").fit(continuous)
    with pytest.raises(ValueError, match="binary outcomes"):
        PartialCreditModel().fit(_data([0.0, 1.0], kind="continuous"))
    with pytest.raises(TypeError, match="ScoreData"):
        OrdinalModel().fit(pd.DataFrame())


def test_prior_predictive_flags_a_tight_prior():
    """A prior that pins every system effect, task effect and cut point near 0 cannot reach
    data where one system scores 4 of 4 and the other 0: flagged; the default prior is not."""
    df = pd.DataFrame({"system": ["A"] * 6 + ["B"] * 6, "task": [f"t{i}" for i in range(6)] * 2,
                       "score": [4] * 6 + [0] * 6})
    data = ScoreData.from_frame(df, max_score=4)
    loose = OrdinalModel().prior_predictive(data, thresholds=[2], draws=2000, seed=1)
    tight = OrdinalModel(cut_scale=0.05, system_scale=0.05, task_scale=0.05).prior_predictive(
        data, thresholds=[2], draws=2000, seed=1)
    assert not loose.table["too tight"].any()
    assert tight.table["too tight"].all()
    assert "4 of 4" in tight.title()
    # The prior's cut points are K sorted iid N(0, cut_scale) draws (the ordered transform of
    # iid normals): with no system or task effect, P(y >= 1) = expit(-c_1), c_1 the minimum
    # of 4 N(0, 4) draws; its prior median against scipy's draws of the same.
    rng = np.random.default_rng(5)
    minimum = np.sort(stats.norm.rvs(0, 4, (200_000, 4), random_state=rng), axis=1)[:, 0]
    none = OrdinalModel(system_scale=1e-9, task_scale=1e-9)
    check = none.prior_predictive(data, thresholds=[1], draws=20_000, seed=2).table
    got = check[check["quantity"] == "P(score >= 1)"]["q50"].iloc[0]
    # the median of 20,000 draws: sd of the sample median ~ 1.2 / (2 f sqrt(n)) ~ 0.004 here
    assert got == pytest.approx(np.median(expit(-minimum)), abs=0.015)
