"""Correlated group effects ``(1 + x | g)``: the parser's spellings, the prior (sds, LKJ
correlation, jointly normal effects) against scipy's distributions, the estimands on fixed
draws against Monte Carlo references, and (slow) recovery of a known slope sd and
correlation."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig
from evalbayes.models.formula import FormulaModel, FormulaPosterior, design
from evalbayes.models.formula._correlated import correlated_key

HARNESS = np.array(["h0", "h1", "h0"])
DATE = np.array([2024.0, 2024.5, 2025.0])
CATEGORY = np.array(["a", "b", "a", "b"])
KIND = np.array(["u", "v", "w", "u"])
LENGTH = np.array([1.0, 2.0, 4.0, 8.0])
WIDTH = np.array([0.5, 0.1, 0.3, 0.2])


def _data() -> EvalData:
    n = np.full((3, 4), 3)
    c = np.minimum(n, [[0, 1, 2, 3], [1, 1, 1, 1], [3, 2, 1, 0]])
    return EvalData.from_arrays(
        n, c, systems=["s0", "s1", "s2"], tasks=["t0", "t1", "t2", "t3"],
        system_coords={"harness": HARNESS, "date": DATE},
        task_coords={"category": CATEGORY, "kind": KIND, "length": LENGTH, "width": WIDTH},
    )


# ------------------------------------------------------------------ parser
@pytest.mark.parametrize(("rhs", "names", "blocks"), [
    ("(1 + length | harness)", ["1|harness", "length|harness"], ((0, 1),)),
    ("(length | harness)", ["1|harness", "length|harness"], ((0, 1),)),  # lme4: 1 implied
    ("(0 + length | harness)", ["length|harness"], ()),  # slope only: one column
    ("(length - 1 | harness)", ["length|harness"], ()),  # lme4's spelling of the same
    ("(-1 + length | harness)", ["length|harness"], ()),
    ("(0 + length + width | harness)", ["length|harness", "width|harness"], ((0, 1),)),
    ("(length - 1 + width | harness)", ["length|harness", "width|harness"], ((0, 1),)),
    ("(length || harness)", ["1|harness", "length|harness"], ()),  # independent
    ("(1 + category | harness)", ["1|harness", "category|harness"], ((0, 1),)),  # 2 levels
    ("date + (1 | task) + (1 + length + width | harness)",
     ["1|task", "1|harness", "length|harness", "width|harness"], ((1, 2, 3),)),
    ("(1 + length | harness) + (1 + date | task)",
     ["1|harness", "length|harness", "1|task", "date|task"], ((0, 1), (2, 3))),
    ("(np.log(length) | harness:category)",
     ["1|harness:category", "np.log(length)|harness:category"], ((0, 1),)),
])
def test_spellings_of_correlated_terms(rhs, names, blocks):
    d = design(_data(), f"c | trials(n) ~ {rhs}")
    assert [t.name for t in d.terms] == names
    assert d.blocks == blocks
    for members in blocks:  # one factor, one column each
        assert len({d.terms[i].factor for i in members}) == 1
        assert all(d.terms[i].expr.shape[1] == 1 for i in members)


def test_columns_of_a_correlated_term_match_hand_built():
    d = design(_data(), "(1 + length | harness)")
    (a, b), = d.blocks
    np.testing.assert_array_equal(d.terms[a].expr[:, 0], np.ones(12))
    np.testing.assert_array_equal(d.terms[b].expr[:, 0], np.tile(LENGTH, 3))
    np.testing.assert_array_equal(d.terms[a].level, np.repeat([0, 1, 0], 4))
    np.testing.assert_array_equal(d.terms[b].level, d.terms[a].level)


@pytest.mark.parametrize(("rhs", "rule"), [
    ("(1 + kind | harness)", r"term 'kind\|harness' of \(1 \+ kind \| harness\) has 2 "
                             r"columns.*numeric covariates.*\(1 \+ kind \|\| harness\)"),
    ("(1 | harness) + (length | harness)", r"'1\|harness' is written twice"),
    ("(1 + length | harness) + (0 + length | harness)", r"'length\|harness' is written twice"),
    ("(1 + length | )", "formula"),
    ("(1 + nope | harness)", r"not a variable of the data"),
])
def test_bad_correlated_terms_name_the_rule(rhs, rule):
    with pytest.raises(ValueError, match=rule):
        design(_data(), rhs)


def test_lkj_eta_must_be_positive():
    with pytest.raises(ValueError, match="lkj_eta"):
        FormulaModel("(1 + length | harness)", lkj_eta=0.0)
    config = FormulaModel("(1 + length | harness)", lkj_eta=1.5).to_config()
    assert config["lkj_eta"] == 1.5
    assert FormulaModel.from_config(config) == FormulaModel("(1 + length | harness)",
                                                            lkj_eta=1.5)


# ------------------------------------------------------------------ prior
def _prior(model: FormulaModel, data: EvalData, draws: int = 20_000
           ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Prior draws of ``sd`` (draw, term), ``corr`` (draw, pair) and each ``u_i``."""
    import pymc as pm

    graph = model.build(model.inputs(data))
    n_terms = len(model.design(data).terms)
    sd, corr, *u = pm.draw([graph[v] for v in ["sd", "corr"]
                            + [f"u_{i}" for i in range(n_terms)]],
                           draws=draws, random_seed=11)
    return sd, corr, u


def _grid(trials: int, n_tasks: int = 12) -> EvalData:
    rng = np.random.default_rng(0)
    n = np.full((4, n_tasks), trials)
    return EvalData.from_arrays(n, rng.binomial(n, 0.5), system_coords={
        "harness": ["h0", "h1"] * 2, "date": [0.0, 1.0, 3.0, 4.0]},
        task_coords={"length": np.linspace(0, 1, n_tasks)})


def _whitened(sd: np.ndarray, corr: np.ndarray, effects: list[np.ndarray]) -> np.ndarray:
    """Effects of a block divided by their sds and decorrelated by each draw's Cholesky
    factor of the correlation: iid N(0, 1) under the stated prior, (draw, level, column)."""
    p = len(effects)
    R = np.broadcast_to(np.eye(p), (len(sd), p, p)).copy()
    k = 0
    for a in range(p):
        for b in range(a + 1, p):
            R[:, a, b] = R[:, b, a] = corr[:, k]
            k += 1
    scaled = np.stack([e[..., 0] for e in effects], axis=-1) / sd[:, None, :]
    return np.linalg.solve(np.linalg.cholesky(R)[:, None], scaled[..., None])[..., 0]


@pytest.mark.parametrize("trials", [1, 20])  # (1 | harness) non-centred and centred
def test_prior_of_a_correlated_term(trials):
    # (1 + date | task): sds HalfNormal(sigma_task_prior = 2) and HalfNormal(0.5)
    # (sd_priors), one correlation ~ 2 Beta(2, 2) - 1 (LKJ(2), d = 2), and the effects of a
    # level jointly normal with that covariance, independent across levels; the intercept
    # term (1 | harness) beside it keeps its own prior
    model = FormulaModel("c | trials(n) ~ date + (1 + date | task) + (1 | harness)",
                         sd_priors={"date|task": 0.5})
    data = _grid(trials)
    assert correlated_key(model.design(data)) == ((0, 1),)
    sd, corr, u = _prior(model, data)
    assert stats.kstest(sd[:, 0], stats.halfnorm(scale=2.0).cdf).pvalue > 0.01
    assert stats.kstest(sd[:, 1], stats.halfnorm(scale=0.5).cdf).pvalue > 0.01
    assert stats.kstest(sd[:, 2], stats.halfnorm(scale=1.0).cdf).pvalue > 0.01
    assert stats.kstest((corr[:, 0] + 1) / 2, stats.beta(2.0, 2.0).cdf).pvalue > 0.01
    white = _whitened(sd[:, :2], corr, u[:2])  # (draw, 12 tasks, 2)
    flat = white.reshape(len(white), -1)
    assert np.abs(flat.mean(axis=0)).max() < 0.04
    assert np.abs(flat.var(axis=0) - 1.0).max() < 0.05
    cross = np.corrcoef(flat.T) - np.eye(flat.shape[1])
    assert np.abs(cross).max() < 0.04
    assert stats.kstest(flat[:, 0], stats.norm.cdf).pvalue > 0.01
    # the harness effects: sd * N(0, 1), independent of the block
    assert stats.kstest(u[2][:, 0, 0] / sd[:, 2], stats.norm.cdf).pvalue > 0.01


@pytest.mark.parametrize("eta", [1.0, 4.0])
def test_lkj_marginal_of_three_columns(eta):
    # d = 3: each correlation ~ 2 Beta(eta - 1 + 3/2, eta - 1 + 3/2) - 1 (Lewandowski,
    # Kurowicka and Joe 2009)
    model = FormulaModel("c | trials(n) ~ (1 + date + length | task)", lkj_eta=eta)
    sd, corr, u = _prior(model, _grid(1), draws=10_000)
    assert corr.shape == (10_000, 3)
    beta = stats.beta(eta + 0.5, eta + 0.5)
    for k in range(3):
        assert stats.kstest((corr[:, k] + 1) / 2, beta.cdf).pvalue > 0.01, k
    white = _whitened(sd, corr, u).reshape(10_000, -1)
    assert np.abs(white.var(axis=0) - 1.0).max() < 0.07


# ------------------------------------------------------------------ estimands
FORMULA = "c | trials(n) ~ harness + (1 + x | task) + (1 + length | run)"
X = np.array([-1.0, 0.0, 0.5, 2.0])
TASK_LENGTH = np.array([0.0, 1.0, 3.0])
BETA = np.array([-0.4, 0.9])
SD = np.array([1.1, 0.7, 0.5, 0.3])  # 1|task, x|task, 1|run, length|run
CORR = np.array([-0.6, 0.4])  # (1|task, x|task), (1|run, length|run)


def _fixed_posterior(draws: int = 2) -> FormulaPosterior:
    model = FormulaModel(FORMULA)
    n = np.array([[4, 4, 4], [4, 4, 0], [4, 4, 4], [2, 4, 4]])
    data = EvalData.from_arrays(
        n, np.minimum(n, 2), systems=[f"s{i}" for i in range(4)], tasks=["t0", "t1", "t2"],
        system_coords={"harness": ["h0", "h1", "h0", "h1"], "x": X,
                       "run": ["r0", "r1", "r2", "r3"]},
        task_coords={"length": TASK_LENGTH})
    d = model.design(data)
    assert [t.name for t in d.terms] == ["1|task", "x|task", "1|run", "length|run"]
    assert d.blocks == ((0, 1), (2, 3))
    one = np.ones((1, draws, 1))
    rng = np.random.default_rng(1)
    ds = xr.Dataset({
        "beta": (("chain", "draw", "coef"), BETA * one),
        "sd": (("chain", "draw", "term"), SD * one),
        "corr": (("chain", "draw", "corr_pair"), CORR * one),
        **{f"u_{i}": ((("chain", "draw", f"level_{i}", f"column_{i}")),
                      rng.normal(size=(1, draws, len(t.levels), 1)))
           for i, t in enumerate(d.terms)},
    }).assign_coords(chain=[0], draw=np.arange(draws))
    groups = {"posterior": model.label_effects(ds, data)}
    post = model.posterior_class.from_groups(model, data, SamplerConfig(), groups)
    assert isinstance(post, FormulaPosterior)
    return post


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
def test_population_integrates_a_new_level_of_each_correlated_term(metric):
    # a new task and a new run: (b_task, b_run) ~ MvNormal(0, Sigma) each, by Monte Carlo
    post = _fixed_posterior()
    ks = np.array([1, 4])
    curve = post.model.population_curve(post.posterior, post.data, ks, metric)
    rng = np.random.default_rng(7)
    m = 400_000

    def mvn(sd, r):
        cov = np.array([[sd[0] ** 2, r * sd[0] * sd[1]], [r * sd[0] * sd[1], sd[1] ** 2]])
        return rng.multivariate_normal([0.0, 0.0], cov, size=m)

    task, run = mvn(SD[:2], CORR[0]), mvn(SD[2:], CORR[1])
    n = post.data.n.values
    for s in range(4):
        for j, k in enumerate(ks):
            values = []
            for t in np.flatnonzero(n[s] > 0):
                eta = (BETA[0] + BETA[1] * (s % 2) + task[:, 0] + task[:, 1] * X[s]
                       + run[:, 0] + run[:, 1] * TASK_LENGTH[t])
                p = expit(eta)
                values.append(1 - (1 - p) ** k if metric == "pass@k" else p**k)
            draws = np.mean(values, axis=0)
            se = draws.std() / np.sqrt(m)
            assert abs(curve[0, 0, s, j] - draws.mean()) < 4 * se + 1e-6, (s, k)


def test_tasks_estimand_draws_a_new_run_of_a_correlated_noise_term():
    # (1 + length | run) is noise: each draw, a fresh (b0, b1) per run ~ MvNormal(0, Sigma),
    # shared by the run's tasks; the task terms are conditioned on
    post = _fixed_posterior(draws=20_000)
    model, data = post.model, post.data
    p = model.rates(post.posterior, data, seed=3, tasks=slice(0, 3))
    logit = np.log(p) - np.log1p(-p)
    u0 = post.posterior["u_0"].values[0, :, :, 0]  # (draw, task)
    u1 = post.posterior["u_1"].values[0, :, :, 0]
    fixed = (BETA[0] + BETA[1] * (np.arange(4) % 2)[None, :, None] + u0[:, None, :]
             + u1[:, None, :] * X[None, :, None])
    noise = logit[0] - fixed  # (draw, system, task) = b0[run] + b1[run] * length[task]
    b1 = (noise[:, :, 1] - noise[:, :, 0]) / (TASK_LENGTH[1] - TASK_LENGTH[0])
    b0 = noise[:, :, 0] - b1 * TASK_LENGTH[0]
    np.testing.assert_allclose(noise[:, :, 2], b0 + b1 * TASK_LENGTH[2], atol=1e-8)
    for s in range(4):  # each run's own draw
        assert b0[:, s].std() == pytest.approx(SD[2], rel=0.03)
        assert b1[:, s].std() == pytest.approx(SD[3], rel=0.03)
        assert np.corrcoef(b0[:, s], b1[:, s])[0, 1] == pytest.approx(CORR[1], abs=0.02)
    assert abs(np.corrcoef(b0[:, 0], b0[:, 1])[0, 1]) < 0.03  # runs independent
    again = model.rates(post.posterior, data, seed=3, tasks=slice(1, 3))
    np.testing.assert_array_equal(again, p[..., 1:])


def test_effects_table_lists_the_sds_and_correlations():
    post = _fixed_posterior(draws=3)
    table = post.effects().set_index("name")
    assert list(table.index[-2:]) == ["1|task, x|task", "1|run, length|run"]
    assert table.loc["1|task, x|task", "kind"] == "correlation"
    assert table.loc["1|task, x|task", "term_kind"] == "task"
    assert table.loc["1|run, length|run", "term_kind"] == "noise"
    assert table.loc["1|task, x|task", "mean"] == pytest.approx(CORR[0])
    assert table.loc["1|task, x|task", "p_positive"] == 0.0
    assert table.loc["x|task", "mean"] == pytest.approx(SD[1])
    assert list(post.posterior["corr"].coords["corr_pair"].values) == [
        "1|task, x|task", "1|run, length|run"]


# ------------------------------------------------------------------ recovery
@pytest.mark.slow
def test_recovers_a_slope_sd_and_its_correlation_with_the_intercept():
    rng = np.random.default_rng(3)
    systems, tasks, trials = 6, 40, 20
    x = np.linspace(-1.0, 1.0, systems)
    truth = {"1|task": 1.0, "x|task": 0.6, "1|task, x|task": 0.6}
    s0, s1, r = truth["1|task"], truth["x|task"], truth["1|task, x|task"]
    b = rng.multivariate_normal([0.0, 0.0], [[s0**2, r * s0 * s1], [r * s0 * s1, s1**2]],
                                size=tasks)
    eta = -0.2 + 0.5 * x[:, None] + b[None, :, 0] + b[None, :, 1] * x[:, None]
    n = np.full((systems, tasks), trials)
    data = EvalData.from_arrays(n, rng.binomial(n, expit(eta)), system_coords={"x": x})
    post = FormulaModel("c | trials(n) ~ x + (1 + x | task)").fit(
        data, draws=500, tune=500, chains=2, seed=1, check=False)
    table = post.effects(ci_prob=0.95).set_index("name")
    for name, value in truth.items():
        assert table.loc[name, "lower"] < value < table.loc[name, "upper"], name
