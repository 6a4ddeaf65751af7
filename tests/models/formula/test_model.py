"""Formula model maths on fixed draws (no sampling), against independent references:
direct evaluation of the linear predictor, scipy's binomial pmf, and numerical integration
(scipy.integrate.quad) of the population curve."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest
import xarray as xr
from scipy import integrate, stats
from scipy.special import expit

import evalbayes as eb
from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig
from evalbayes.models import get_model, model_from_config
from evalbayes.models.formula import EXTRAPOLATION_NOTE, FormulaModel, FormulaPosterior
from paths import ROOT

FORMULA = "c | trials(n) ~ harness + length + (1 | task) + (1 | run)"
HARNESS = ["h0", "h1", "h0", "h1"]
RUN = ["r0", "r1", "r2", "r3"]
LENGTH = np.array([0.0, 1.0, 2.0])
BETA = np.array([-0.4, 0.9, 0.3])  # Intercept, harness[h1], length
SD = np.array([1.1, 0.6])  # 1|task, 1|run
U_TASK = np.array([-1.0, 0.2, 0.8])
U_RUN = np.array([0.3, -0.2, 0.1, -0.4])


def _data() -> EvalData:
    n = np.array([[4, 4, 4], [4, 4, 0], [4, 4, 4], [2, 4, 4]])
    c = np.array([[1, 2, 3], [2, 3, 0], [0, 1, 4], [1, 2, 2]])
    return EvalData.from_arrays(n, c, systems=[f"s{i}" for i in range(4)],
                                tasks=["t0", "t1", "t2"],
                                system_coords={"harness": HARNESS, "run": RUN},
                                task_coords={"length": LENGTH})


def _posterior(draws: int = 2, model: FormulaModel | None = None) -> FormulaPosterior:
    model = model or FormulaModel(FORMULA)
    data = _data()
    d = model.design(data)
    assert d.coefs == ("Intercept", "harness[h1]", "length")
    assert [t.name for t in d.terms] == ["1|task", "1|run"]
    one = np.ones((1, draws, 1))
    ds = xr.Dataset({
        "beta": (("chain", "draw", "coef"), BETA * one),
        "sd": (("chain", "draw", "term"), SD * one),
        "u_0": (("chain", "draw", "level_0", "column_0"), (U_TASK * one)[..., None]),
        "u_1": (("chain", "draw", "level_1", "column_1"), (U_RUN * one)[..., None]),
    }).assign_coords(chain=[0], draw=np.arange(draws))
    groups = {"posterior": model.label_effects(ds, data)}
    post = model.posterior_class.from_groups(model, data, SamplerConfig(), groups)
    assert isinstance(post, FormulaPosterior)
    return post


def _eta(s: int, t: int, run: bool) -> float:
    h1 = float(HARNESS[s] == "h1")
    return (BETA[0] + BETA[1] * h1 + BETA[2] * LENGTH[t] + U_TASK[t]
            + (U_RUN[s] if run else 0.0))


def test_rates_condition_on_tasks_and_draw_runs_anew():
    post = _posterior(draws=4000)
    model, data = post.model, post.data
    p = model.rates(post.posterior, data, seed=5, tasks=slice(0, 3))
    assert p.shape == (1, 4000, 4, 3)
    logit = np.log(p) - np.log1p(-p)
    fixed = np.array([[_eta(s, t, run=False) for t in range(3)] for s in range(4)])
    noise = logit - fixed
    # one fresh run effect per system, shared by its tasks, N(0, sd_run^2)
    np.testing.assert_allclose(noise - noise[..., :1], 0.0, atol=1e-9)
    assert noise[0, :, :, 0].std() == pytest.approx(SD[1], rel=0.05)
    assert abs(noise[0, :, :, 0].mean()) < 4 * SD[1] / np.sqrt(4000)
    # the same draws whatever the chunking (curves and success_prob share them)
    parts = np.concatenate([model.rates(post.posterior, data, 5, slice(0, 1)),
                            model.rates(post.posterior, data, 5, slice(1, 3))], axis=-1)
    np.testing.assert_array_equal(parts, p)


def test_conditioning_on_runs_uses_the_fitted_run_effects():
    post = _posterior(model=FormulaModel(FORMULA, noise=()))
    p = post.model.rates(post.posterior, post.data, seed=0, tasks=slice(0, 3))
    expected = expit([[_eta(s, t, run=True) for t in range(3)] for s in range(4)])
    np.testing.assert_allclose(p[0, 0], expected, rtol=1e-12)


def test_cell_log_likelihood_is_the_binomial_pmf_given_every_effect():
    post = _posterior()
    data = post.data
    s_idx, t_idx = np.nonzero(data.n.values > 0)
    ll = post.model.cell_log_likelihood(post.posterior, data, s_idx, t_idx)
    n, c = data.n.values[s_idx, t_idx], data.c.values[s_idx, t_idx]
    p = expit([_eta(s, t, run=True) for s, t in zip(s_idx, t_idx, strict=True)])
    np.testing.assert_allclose(ll[0, 0], stats.binom.logpmf(c, n, p), rtol=1e-10)


def _population_reference(s: int, k: int, metric: str) -> float:
    """Mean over the system's observed tasks of E[f(expit(m + e))], e ~ N(0, sd_task^2 +
    sd_run^2), by quad."""
    n = _data().n.values
    spread = np.hypot(*SD)
    values = []
    for t in np.flatnonzero(n[s] > 0):
        m = _eta(s, t, run=False) - U_TASK[t]

        def f(z, m=m):
            p = expit(m + spread * z)
            return (1 - (1 - p) ** k if metric == "pass@k" else p**k) * stats.norm.pdf(z)

        values.append(integrate.quad(f, -12, 12, epsabs=1e-12)[0])
    return float(np.mean(values))


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
def test_population_curve_integrates_task_and_run_effects(metric):
    post = _posterior()
    ks = np.array([1, 3, 10])
    curve = post.model.population_curve(post.posterior, post.data, ks, metric)
    for s in range(4):
        for j, k in enumerate(ks):
            assert curve[0, 0, s, j] == pytest.approx(_population_reference(s, k, metric),
                                                      abs=1e-6)


def test_effects_table_and_notes():
    post = _posterior(draws=3)
    table = post.effects(ci_prob=0.9)
    assert list(table["name"]) == ["Intercept", "harness[h1]", "length", "1|task", "1|run"]
    assert list(table["term_kind"])[-2:] == ["task", "noise"]
    np.testing.assert_allclose(table["mean"], [*BETA, *SD])
    assert list(table["p_positive"][:3]) == [0.0, 1.0, 1.0]
    summary = post.summary(k=[1, 8])
    assert (summary["note"] == np.where(summary["k"] > 4, EXTRAPOLATION_NOTE, "")).all()
    note = post.model_note(k=[1, 8])
    assert "1|run" in note and "noise" in note and "beyond k = n" in note


def test_config_round_trip_registry_and_spec():
    model = FormulaModel(FORMULA, noise=("run", "seed"), sd_priors={"1|task": 0.5})
    config = model.to_config()
    assert config["sd_priors"] == {"1|task": 0.5} and config["noise"] == ["run", "seed"]
    assert model_from_config(config) == model
    assert get_model("formula", formula=FORMULA) == FormulaModel(FORMULA)
    assert eb.FormulaModel is FormulaModel
    spec = tomllib.loads((ROOT / "models" / "formula.toml").read_text())
    assert model_from_config(spec).to_config() == spec


@pytest.mark.filterwarnings("ignore:.*convergence diagnostics")
def test_save_load_round_trip(tmp_path):
    post = _posterior(draws=5)
    path = post.save(tmp_path / "fit.nc")
    back = eb.load(path)
    assert isinstance(back, FormulaPosterior) and back.model == post.model
    np.testing.assert_allclose(back.summary(k=[1, 2])["mean"], post.summary(k=[1, 2])["mean"])
    assert back.effects().equals(post.effects())


def _runs_data(agents: list[str], n_tasks: int = 12) -> EvalData:
    runs = [f"{a}/{i}" for i, a in enumerate(agents)]
    n = np.ones((len(agents), n_tasks), int)
    return EvalData.from_arrays(n, np.zeros_like(n), systems=runs,
                                system_coords={"agent": agents, "run": runs})


RUNS_FORMULA = "c | trials(n) ~ agent + (1 | task) + (1 | agent:task) + (1 | run)"



def _location_block(model: FormulaModel, data: EvalData):
    """The design and the location block of every cell observed, as :meth:`inputs` centres
    the design (observed columns' means, the intercept left at 0)."""
    d = model.design(data)
    centre = d.X.mean(axis=0)
    centre[d.intercept] = 0.0
    return d, model.location_block(d, np.ones(len(d.X), bool), centre)


def test_location_block_gives_nested_terms_a_mean_per_agent():
    agents = ["a", "a", "a", "b", "b", "b", "c"]  # "c" ran once
    data = _runs_data(agents)
    model = FormulaModel(RUNS_FORMULA)
    d, block = _location_block(model, data)
    assert [d.terms[i].name for i in block.terms] == ["1|task", "1|agent:task", "1|run"]
    # one class per agent: its row of the centred design (Intercept, agent[b], agent[c])
    rows = {"a": [1, 0, 0], "b": [1, 1, 0], "c": [1, 0, 1]}
    share = np.array([0.0, 3 / 7, 1 / 7])
    assert len(block.class_x) == 3
    agent_of_class = [next(a for a, r in rows.items() if np.allclose(x, np.array(r) - share))
                      for x in block.class_x]
    assert sorted(agent_of_class) == ["a", "b", "c"]
    # task crosses the agents (one grand mean of 12 levels); agent:task and run are nested
    assert block.widths == (1, 3, 3)
    assert block.spanned  # three coefficients move the three agents' locations: centred
    np.testing.assert_array_equal(block.counts[0], [12])
    np.testing.assert_array_equal(block.counts[1], [12, 12, 12])
    runs_per_agent = {"a": 3, "b": 3, "c": 1}
    np.testing.assert_array_equal(block.counts[2], [runs_per_agent[a] for a in agent_of_class])
    # each run's mean is its agent's (the class whose row is the agent's), entering only it
    run_term = d.terms[block.terms[2]]
    for level, entry in zip(run_term.levels, block.entry[2], strict=True):
        assert agent_of_class[entry] == level.split("/")[0]
    np.testing.assert_array_equal(block.columns, np.concatenate(
        [np.ones((3, 1)), np.eye(3), np.eye(3)], axis=1))


def test_location_block_falls_back_to_one_class_when_classes_are_not_identified():
    # six systems with their own (harness, date): six design rows, three coefficients and
    # one grand task mean cannot move six class locations independently
    n = np.ones((6, 5), int)
    data = EvalData.from_arrays(n, np.zeros_like(n), system_coords={
        "harness": ["h0", "h1"] * 3, "date": [0.0, 1.0, 2.0, 3.0, 4.0, 6.0]})
    model = FormulaModel("c | trials(n) ~ harness + date + (1 | task)")
    d, block = _location_block(model, data)
    np.testing.assert_allclose(block.class_x, [[1.0, 0.0, 0.0]], atol=1e-12)
    assert block.widths == (1,) and block.columns.tolist() == [[1.0]]
    # a formula with no intercept-only term has no block
    slope = FormulaModel("c | trials(n) ~ harness + (0 + date | task)")
    d = slope.design(data)
    assert slope.location_block(d, np.ones(len(d.X), bool), np.zeros(d.X.shape[1])) is None


def _standard_prior_draws(model: FormulaModel, data: EvalData, share: np.ndarray,
                          draws: int = 20_000, sd_x: np.ndarray | None = None) -> np.ndarray:
    """Prior draws of the centred coefficients and every group effect, each divided by its
    prior sd (``coef_prior / sd(x_j)`` from the indicator shares, or ``sd_x`` where given;
    ``sd_g``); ``share``: the columns' means."""
    import pymc as pm

    graph = model.build(model.inputs(data))
    n_terms = len(model.design(data).terms)
    names = ["beta", "sd"] + [f"u_{i}" for i in range(n_terms)]
    beta, sd, *u = pm.draw([graph[v] for v in names], draws=draws, random_seed=7)
    scale = 1.0 / (np.sqrt(share * (1 - share)) if sd_x is None else sd_x)  # coef_prior 1
    centred = np.column_stack([beta[:, 0] + beta[:, 1:] @ share, beta[:, 1:]])
    standard = [centred / np.array([1.5, *scale])]
    standard += [effect[..., 0] / sd[:, [i]] for i, effect in enumerate(u)]
    return np.concatenate(standard, axis=1)


def _assert_iid_standard_normal(joint: np.ndarray) -> None:
    assert np.abs(joint.mean(axis=0)).max() < 0.04
    assert np.abs(joint.var(axis=0) - 1.0).max() < 0.05
    corr = np.corrcoef(joint.T) - np.eye(joint.shape[1])
    assert np.abs(corr).max() < 0.04


def test_location_block_keeps_the_independent_normal_prior():
    # the drawn class locations and the conditional split must give back the model's prior:
    # centred coefficients N(loc, scale_j^2) and every group effect sd_g * N(0, 1), all
    # independent (here 3 coefficients and 12 + 36 + 7 effects, one agent with one run)
    data = _runs_data(["a", "a", "a", "b", "b", "b", "c"])
    joint = _standard_prior_draws(FormulaModel(RUNS_FORMULA), data, np.array([3 / 7, 1 / 7]))
    assert joint.shape[1] == 3 + 12 + 36 + 7
    _assert_iid_standard_normal(joint)


def test_location_block_with_more_classes_than_coefficients_keeps_the_prior():
    # each run its own (harness, date): six classes, three coefficients, one grand task mean
    # and six run means; the class locations are drawn non-centred (directions only the run
    # sd reaches), and the prior must still be the iid normal one
    harness = np.array(["h0", "h1"] * 3)
    date = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 6.0])
    n = np.ones((6, 5), int)
    data = EvalData.from_arrays(n, np.zeros_like(n), systems=[f"r{i}" for i in range(6)],
                                system_coords={"harness": harness, "date": date,
                                               "run": [f"r{i}" for i in range(6)]})
    model = FormulaModel("c | trials(n) ~ harness + date + (1 | task) + (1 | run)")
    _, block = _location_block(model, data)
    assert len(block.class_x) == 6 and block.widths == (1, 6)
    assert not block.spanned  # six classes, three coefficients: drawn non-centred
    h1 = (harness == "h1").astype(float)
    joint = _standard_prior_draws(model, data, np.array([h1.mean(), date.mean()]),
                                  sd_x=np.array([h1.std(), date.std()]))
    assert joint.shape[1] == 3 + 5 + 6
    _assert_iid_standard_normal(joint)


def test_centred_levels_by_information_against_the_spread():
    from evalbayes.models.formula._model import centred_levels

    # tasks with the same rate: no spread beyond the binomial noise, nothing centred
    assert not centred_levels(np.full(6, 20), np.full(6, 10)).any()
    # rates 1/20 ... 19/20 spread widely: by hand, p = (c + 1/2) / 21, I = 20 p (1 - p),
    # s^2 = var(logit p) - mean(1 / I) (about 3.3 here); centred where I s^2 >= 1, never
    # at a level whose trials all fail or all succeed
    wins = np.array([0, 1, 4, 10, 16, 19, 20])
    p = (wins + 0.5) / 21
    info = 20 * p * (1 - p)
    mixed = (wins > 0) & (wins < 20)
    logit = np.log(p[mixed] / (1 - p[mixed]))
    s2 = logit.var(ddof=1) - (1 / info[mixed]).mean()
    expected = mixed & (info * s2 >= 1)
    assert expected[1:6].all()
    np.testing.assert_array_equal(centred_levels(np.full(7, 20), wins), expected)


def test_centred_term_with_uninformative_levels_keeps_the_prior():
    # 20 trials per task: the task term is centred, except tasks whose trials all fail or all
    # succeed (non-centred); the effects are still iid sd * N(0, 1), independent of beta
    n = np.full((4, 6), 5)
    c = np.array([[0, 5, 2, 1, 0, 3]] * 4)
    c[:, 3] = [0, 1, 0, 0]
    data = EvalData.from_arrays(n, c, system_coords={"harness": ["h0", "h1"] * 2})
    model = FormulaModel("c | trials(n) ~ harness + (1 | task)")
    inputs = model.inputs(data)
    # informative tasks t2, t3, t5 (centred) first, then t0, t1, t4: each task's position
    assert inputs.shape_key[-1] == (0, 3)
    np.testing.assert_array_equal(inputs.values["location_order_0"], [3, 4, 0, 1, 5, 2])
    _assert_iid_standard_normal(_standard_prior_draws(model, data, np.array([0.5])))
