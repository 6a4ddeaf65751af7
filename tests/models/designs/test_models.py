"""Factorial, training-seeds and judge-error models: maths on fixed draws (no sampling).

Each derived quantity is checked against an independent reference: numerical integration
(scipy.integrate.quad) for the Gauss-Hermite integrals, brute-force enumeration for the
rank flips, the seed's §17.4 data layout for the training-seeds model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import integrate, stats
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig
from evalbayes.models import get_model
from evalbayes.models.designs._factorial import (
    FactorialModel,
    add_factors,
    factors_from_system_names,
    harness_curves,
    rank_flips,
    variance_components,
)
from evalbayes.models.designs._judge_error import JudgeErrorModel, judge_accuracy, judge_data
from evalbayes.models.designs._training_seeds import (
    TrainingSeedsModel,
    noise_components,
    recipe_difference,
)
from evalbayes.results._posterior import Posterior


def _posterior(model, data, variables):
    ds = xr.Dataset({k: (("chain", "draw", *dims), np.asarray(v)) for k, (dims, v) in
                     variables.items()})
    ds = ds.assign_coords(chain=np.arange(ds.sizes["chain"]), draw=np.arange(ds.sizes["draw"]))
    for dim in ("system", "task"):
        if dim in ds.dims:
            ds = ds.assign_coords({dim: data.dataset[dim].values})
    return model.posterior_class.from_groups(model, data, SamplerConfig(), {"posterior": ds})


def _normal_expectation(f, mean, sd):
    return integrate.quad(lambda z: f(mean + sd * z) * stats.norm.pdf(z), -12, 12,
                          epsabs=1e-12)[0]


# ----------------------------------------------------------------------------- factorial
def _factorial_data():
    # models m0, m1, m2; harnesses h0, h1; m2 only under h1 (unbalanced, like Terminal-Bench)
    models = ["m0", "m0", "m1", "m1", "m2"]
    harnesses = ["h0", "h1", "h0", "h1", "h1"]
    rng = np.random.default_rng(0)
    n = np.full((5, 4), 5)
    n[4, 3] = 0
    c = rng.binomial(n, 0.5)
    return add_factors(EvalData.from_arrays(n, c), models, harnesses)


def _factorial_posterior(gamma):
    data = _factorial_data()
    draws = len(gamma)
    one = np.ones((1, draws))
    variables = {
        "mu": ((), 0.2 * one),
        "sigma_model": ((), 0.5 * one), "sigma_harness": ((), 0.4 * one),
        "sigma_interaction": ((), 0.3 * one), "sigma_task": ((), 1.2 * one),
        "sigma_cell": ((), 0.7 * one),
        "alpha": (("model",), np.tile([0.5, -0.5, 0.0], (1, draws, 1))),
        "beta": (("harness",), np.tile([0.1, -0.1], (1, draws, 1))),
        "gamma": (("system",), np.asarray(gamma)[None]),
        "b": (("task",), np.tile([-1.0, 0.0, 0.5, 2.0], (1, draws, 1))),
    }
    return _posterior(FactorialModel(), data, variables)


def test_factorial_registry_and_config_round_trip():
    model = get_model("factorial")
    assert isinstance(model, FactorialModel)
    assert FactorialModel.from_config(model.to_config()) == model


def test_factorial_population_curve_matches_quadrature():
    post = _factorial_posterior(np.zeros((2, 5)))
    curve = post.curve("pass@k", [1, 3], estimand="population").values  # (1, 2, 5, 2)
    tau = np.sqrt(1.2**2 + 0.7**2)
    theta = 0.2 + np.array([0.5, 0.5, -0.5, -0.5, 0.0]) + np.array([0.1, -0.1, 0.1, -0.1, -0.1])
    for s in range(5):
        for j, k in enumerate((1, 3)):
            want = _normal_expectation(lambda x, k=k: 1 - (1 - expit(x)) ** k, theta[s], tau)
            assert curve[0, 0, s, j] == pytest.approx(want, abs=1e-6)


def test_factorial_cell_log_likelihood_matches_quadrature():
    post = _factorial_posterior(np.zeros((1, 5)))
    ll = post.model.log_likelihood(post.posterior, post.data).values[0, 0]
    data = post.data
    s_idx, t_idx = np.nonzero(data.n.values > 0)
    theta = 0.2 + np.array([0.5, 0.5, -0.5, -0.5, 0.0]) + np.array([0.1, -0.1, 0.1, -0.1, -0.1])
    b = np.array([-1.0, 0.0, 0.5, 2.0])
    for cell in (0, 7, len(s_idx) - 1):
        s, t = s_idx[cell], t_idx[cell]
        n, c = data.n.values[s, t], data.c.values[s, t]
        want = _normal_expectation(lambda x, n=n, c=c: stats.binom.pmf(c, n, expit(x)),
                                   theta[s] + b[t], 0.7)
        assert ll[cell] == pytest.approx(np.log(want), abs=1e-6)


def test_rank_flips_by_enumeration():
    # two draws: draw 0 keeps m0 > m1 under both harnesses, draw 1 flips it under h1
    gamma = np.array([[0, 0, 0, 0, 0], [0, -0.8, 0, 0.8, 0]], dtype=float)
    post = _factorial_posterior(gamma)
    table, p_any = rank_flips(post)
    # only (m0, m1) are run under both h0 and h1; m2 only under h1
    assert len(table) == 1
    row = table.iloc[0]
    assert (row.model_a, row.model_b, row.harness_a, row.harness_b) == ("m0", "m1", "h0", "h1")
    theta = 0.2 + np.array([0.5, 0.5, -0.5, -0.5, 0.0])[None] + np.array(
        [0.1, -0.1, 0.1, -0.1, -0.1])[None] + gamma
    flips = np.sign(theta[:, 0] - theta[:, 2]) != np.sign(theta[:, 1] - theta[:, 3])
    assert flips.tolist() == [False, True]
    assert row.p_flip == pytest.approx(0.5)
    assert p_any == pytest.approx(0.5)


def test_harness_curves_and_components():
    post = _factorial_posterior(np.zeros((2, 5)))
    hc = harness_curves(post, [1])
    assert hc.dims == ("chain", "draw", "model", "harness", "k")
    assert np.isnan(hc.sel(model="m2", harness="h0")).all()
    pop = post.curve("pass@k", 1, estimand="population")
    assert float(hc.sel(model="m2", harness="h1", k=1)[0, 0]) == pytest.approx(
        float(pop.isel(system=4, k=0)[0, 0]))
    vc = variance_components(post)
    assert list(vc.index) == ["model", "harness", "interaction", "task", "cell"]
    assert vc["share"].sum() == pytest.approx(1.0)
    assert vc.loc["task", "mean"] == pytest.approx(1.2)


def test_factorial_rates_are_deterministic_and_in_range():
    post = _factorial_posterior(np.zeros((2, 5)))
    p1 = post.model.success_prob(post.posterior, post.data, seed=3).values
    p2 = post.model.success_prob(post.posterior, post.data, seed=3).values
    assert np.array_equal(p1, p2)
    assert ((p1 > 0) & (p1 < 1)).all()


def test_factorial_data_errors():
    data = EvalData.from_arrays(np.full((2, 3), 4), np.ones((2, 3), int))
    with pytest.raises(ValueError, match="system coordinate 'model'"):
        FactorialModel().check_data(data)
    one_harness = add_factors(data, ["a", "b"], ["h", "h"])
    with pytest.raises(ValueError, match=">= 2 harnesses"):
        FactorialModel().check_data(one_harness)


def test_factors_from_terminal_bench_names():
    names = ["20250923_droid_claude-4-1-opus", "20250906_orchestrator_claude-4.1-opus",
             "ob1-09-10-25"]
    data = EvalData.from_arrays(np.full((3, 2), 5), np.ones((3, 2), int), systems=names)
    out = factors_from_system_names(
        data, r"^\d{8}_(?P<harness>[^_]+)_(?P<model>.+)$",
        normalise=lambda m: m.replace("4-1", "4.1"), drop_unmatched=True,
    )
    assert out.systems == names[:2]
    assert list(out.system_coords["model"]) == ["claude-4.1-opus"] * 2
    assert list(out.system_coords["harness"]) == ["droid", "orchestrator"]
    with pytest.raises(ValueError, match="does not match"):
        factors_from_system_names(data, r"^\d{8}_(?P<harness>[^_]+)_(?P<model>.+)$")


# ----------------------------------------------------------------------------- seeds
def _seed_posterior():
    n = np.full((4, 3), 10)
    c = np.array([[3, 5, 8], [4, 6, 9], [5, 7, 9], [6, 6, 10]])
    data = EvalData.from_arrays(n, c, system_coords={"recipe": ["A", "A", "B", "B"]})
    m = np.array([[[0.0, 0.4], [0.1, 0.6]]])  # (chain, draw, recipe)
    one = np.ones((1, 2))
    variables = {
        "m": (("recipe",), m),
        "sigma_run": ((), 0.3 * one), "u": (("system",), np.zeros((1, 2, 4))),
        "sigma_task": ((), 1.0 * one), "b": (("task",), np.tile([-1.0, 0.0, 1.0], (1, 2, 1))),
        "sigma_cell": ((), 0.5 * one),
    }
    return _posterior(TrainingSeedsModel(), data, variables)


def test_seed_recipe_difference_by_quadrature():
    post = _seed_posterior()
    diff = recipe_difference(post, "A", "B")
    assert diff.loc["logit", "mean"] == pytest.approx(np.mean([0.4, 0.5]))
    assert diff.loc["logit", "p_b_better"] == 1.0
    # draw 0: rate of a new run on these tasks, recipe B minus A
    tau = np.sqrt(0.3**2 + 0.5**2)
    def rate(m):
        return np.mean([_normal_expectation(expit, m + b, tau) for b in (-1.0, 0.0, 1.0)])
    want0 = rate(0.4) - rate(0.0)
    want1 = rate(0.6) - rate(0.1)
    assert diff.loc["rate (these tasks)", "mean"] == pytest.approx((want0 + want1) / 2, abs=1e-6)
    nc = noise_components(post)
    assert nc.loc["run", "mean"] == pytest.approx(0.3)


def test_seed_population_curve_by_quadrature():
    post = _seed_posterior()
    pop = post.curve("pass@k", [2], estimand="population").values
    tau = np.sqrt(1.0 * (1 + 1 / 3) + 0.5**2)
    want = _normal_expectation(lambda x: 1 - (1 - expit(x)) ** 2, 0.4, tau)
    assert pop[0, 0, 2, 0] == pytest.approx(want, abs=1e-6)


def test_seed_model_needs_recipe():
    data = EvalData.from_arrays(np.full((2, 3), 4), np.ones((2, 3), int))
    with pytest.raises(ValueError, match="recipe"):
        TrainingSeedsModel().check_data(data)


# ----------------------------------------------------------------------------- judge
def _judge_fixture():
    counts = EvalData.from_arrays(np.array([[3, 2, 1]]), np.array([[2, 1, 0]]))
    gold = pd.DataFrame({"system": ["system_0"] * 3, "task": ["task_0", "task_0", "task_2"],
                         "judge": [1, 0, 0], "human": [1, 1, 0]})
    return judge_data(counts, gold)


def test_judge_data_counts_and_errors():
    data = _judge_fixture()
    assert data.dataset["gold_tp"].values.tolist() == [[1, 0, 0]]
    assert data.dataset["gold_fn"].values.tolist() == [[1, 0, 0]]
    assert data.dataset["gold_tn"].values.tolist() == [[0, 0, 1]]
    counts = EvalData.from_arrays(np.array([[1]]), np.array([[0]]))
    bad = pd.DataFrame({"system": ["system_0"], "task": ["task_0"], "judge": [1], "human": [1]})
    with pytest.raises(ValueError, match="gold judge passes"):
        judge_data(counts, bad)
    bad = bad.assign(task="nope")
    with pytest.raises(ValueError, match="gold row 0"):
        judge_data(counts, bad)


def test_judge_cell_log_likelihood_matches_direct_integration():
    data = _judge_fixture()
    q1, q0, m, sd = 0.8, 0.9, 0.3, 1.1
    one = np.ones((1, 1))
    post = _posterior(JudgeErrorModel(), data, {
        "sensitivity": ((), q1 * one), "specificity": ((), q0 * one),
        "m": (("system",), np.full((1, 1, 1), m)), "sigma": (("system",), np.full((1, 1, 1), sd)),
    })
    ll = post.model.log_likelihood(post.posterior, post.data).values[0, 0]

    # cell 0: 3 trials, c = 2; gold: (judge 1, human 1), (judge 0, human 1); unlabelled: 1 trial
    # judged pass
    def cell0(x):
        p = expit(x)
        pi = q1 * p + (1 - q0) * (1 - p)
        return pi * p * q1 * p * (1 - q1)

    want0 = np.log(_normal_expectation(cell0, m, sd))  # binomial constant of 1 trial is 0
    assert ll[0] == pytest.approx(want0, abs=1e-6)

    # cell 1: 2 unlabelled trials, 1 judge pass: C(2, 1) pi (1 - pi)
    def cell1(x):
        p = expit(x)
        pi = q1 * p + (1 - q0) * (1 - p)
        return 2 * pi * (1 - pi)

    assert ll[1] == pytest.approx(np.log(_normal_expectation(cell1, m, sd)), abs=1e-6)
    acc = judge_accuracy(post)
    assert acc.loc["sensitivity", "mean"] == pytest.approx(q1)


def test_judge_model_needs_gold():
    data = EvalData.from_arrays(np.full((1, 3), 2), np.ones((1, 3), int))
    with pytest.raises(ValueError, match="gold"):
        JudgeErrorModel().check_data(data)


def test_design_plots_return_axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from evalbayes.models.designs import harness_curves, variance_components
    from evalbayes.plots import plot_interaction, plot_variance_components

    post = _factorial_posterior(np.zeros((2, 5)))
    ax = plot_interaction(harness_curves(post, [1]).sel(k=1))
    assert "pass@1" in ax.get_title()
    assert len(ax.lines) == len(post.model.factors(post.data).models)
    ax = plot_variance_components(variance_components(post, ci_prob=0.9))
    assert "90 % interval" in ax.get_xlabel()
    plt.close("all")


def test_design_models_return_their_typed_posteriors():
    """Each design model's fit is its own Posterior subclass, with the design's summaries."""
    from evalbayes.models.designs._factorial import FactorialModel, FactorialPosterior
    from evalbayes.models.designs._judge_error import JudgeErrorModel, JudgeErrorPosterior
    from evalbayes.models.designs._training_seeds import TrainingSeedsModel, TrainingSeedsPosterior

    for model, cls, methods in (
        (FactorialModel(), FactorialPosterior,
         ("variance_components", "rank_flips", "harness_curves")),
        (TrainingSeedsModel(), TrainingSeedsPosterior, ("recipe_difference", "noise_components",
                                      "design_assurance")),
        (JudgeErrorModel(), JudgeErrorPosterior, ("judge_accuracy", "true_pass_rate")),
    ):
        assert model.posterior_class is cls and issubclass(cls, Posterior)
        assert all(callable(getattr(cls, name)) for name in methods)


def test_judge_graph_collapses_identical_cells_without_changing_the_likelihood():
    # two systems x 40 one-trial tasks (12 gold each) collapse to at most 2 x 6 distinct cells;
    # the graph's likelihood must equal the sum over all 80 cells of the per-cell quadrature
    # reference, at a point where the systems differ (at the initial point they are equal, so
    # a collapse that lost the system index would pass there)
    rng = np.random.default_rng(3)
    j = rng.integers(0, 2, (2, 40))
    counts = EvalData.from_arrays(np.ones((2, 40), int), j)
    idx = np.arange(12)
    gold = pd.DataFrame({"system": np.repeat(["system_0", "system_1"], 12),
                         "task": [f"task_{i}" for i in idx] * 2,
                         "judge": np.r_[j[0, idx], j[1, idx]],
                         "human": rng.integers(0, 2, 24)})
    data = judge_data(counts, gold)
    model = JudgeErrorModel()
    inputs = model.inputs(data)
    assert int((inputs.values["weight"] > 0).sum()) <= 12
    assert inputs.values["weight"].sum() == 80
    graph = model.build(inputs)
    names = ["sensitivity", "specificity", "m", "sigma"]
    point = graph.initial_point()
    point["m"] = np.array([0.9, -1.3])
    point["sigma_log__"] = np.log([0.4, 1.7])
    outs = graph.replace_rvs_by_values(
        [graph[v] for v in names] + [graph["loglik"] + graph["gold_judge"]])
    *found, potential = graph.compile_fn(outs, inputs=graph.value_vars,
                                         on_unused_input="ignore")(point)
    values = dict(zip(names, found, strict=True))
    np.testing.assert_allclose(values["sigma"], [0.4, 1.7])
    post = _posterior(model, data, {
        "sensitivity": ((), np.full((1, 1), values["sensitivity"])),
        "specificity": ((), np.full((1, 1), values["specificity"])),
        "m": (("system",), np.asarray(values["m"]).reshape(1, 1, 2)),
        "sigma": (("system",), np.asarray(values["sigma"]).reshape(1, 1, 2)),
    })
    # one trial per cell: every binomial constant is log 1 = 0
    want = model.log_likelihood(post.posterior, post.data).values.sum()
    assert float(potential) == pytest.approx(want, abs=1e-8)


@pytest.mark.parametrize("model_class", [FactorialModel, TrainingSeedsModel, JudgeErrorModel])
def test_design_models_refuse_a_bad_quadrature_size(model_class):
    # every design model integrates its residual on the same Gauss-Hermite rule
    assert model_class(quadrature_nodes=4).quadrature_nodes == 4
    for bad in (3, 101, 2.5, True):
        with pytest.raises(ValueError, match=r"quadrature_nodes must be an integer in \[4, 100\]"):
            model_class(quadrature_nodes=bad)


def test_factorial_task_parameterization_switch():
    data = _factorial_data()  # 5 systems x 4 tasks x 5 trials: 23.75 trials per task -> centred
    free = {}
    for setting in ("auto", "centered", "noncentered"):
        model = FactorialModel(task_parameterization=setting)
        graph = model.build(model.inputs(data))
        free[setting] = {v.name for v in graph.free_RVs}
    assert "b_dev" in free["auto"] and "b_dev" in free["centered"]
    assert "b_z" in free["noncentered"] and "b_dev" not in free["noncentered"]
    with pytest.raises(ValueError, match="task_parameterization"):
        FactorialModel(task_parameterization="sideways")
