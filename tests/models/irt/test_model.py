"""IRTModel without sampling: configuration, bad input, and every derived quantity against an
independent reference (scipy.stats, explicit loops, finite differences), on hand-made draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig
from evalbayes.models import get_model, model_from_config
from evalbayes.models.irt._model import IRTModel
from evalbayes.results._posterior import Posterior

CHAINS, DRAWS = 2, 40


def _data(seed: int = 0, n_sys: int = 4, n_task: int = 7) -> EvalData:
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 6, (n_sys, n_task))
    n[0, 1] = 0  # missing cells
    n[2, 4] = 0
    c = rng.binomial(n, 0.5)
    c[:, 5] = 0  # never solved
    c[:, 6] = n[:, 6]  # always solved
    return EvalData.from_arrays(n, c)


def _fake(model: IRTModel, data: EvalData, seed: int = 1, method: str = "nutpie") -> Posterior:
    """A Posterior with draws made up from the priors (no sampling)."""
    rng = np.random.default_rng(seed)
    n_sys, n_task = data.n.shape
    shape = (CHAINS, DRAWS)
    coords = {"chain": np.arange(CHAINS), "draw": np.arange(DRAWS),
              "system": data.dataset["system"].values, "task": data.dataset["task"].values}
    sigma_b = np.abs(rng.normal(1.5, 0.2, shape))
    variables = {
        "theta": (("chain", "draw", "system"), rng.normal(0, 1, (*shape, n_sys))),
        "b": (("chain", "draw", "task"), sigma_b[..., None] * rng.normal(0, 1, (*shape, n_task))),
        "sigma_b": (("chain", "draw"), sigma_b),
    }
    if model.has_discrimination:
        sigma_a = np.abs(rng.normal(0.4, 0.1, shape))
        a = np.exp(sigma_a[..., None] * rng.normal(0, 1, (*shape, n_task)))
        variables["a"] = (("chain", "draw", "task"), a)
        variables["sigma_a"] = (("chain", "draw"), sigma_a)
    if model.estimates_guess:
        variables["g"] = (("chain", "draw", "task"), rng.beta(2, 8, (*shape, n_task)))
    ds = xr.Dataset(variables, coords=coords)
    sampler = SamplerConfig(method=method, chains=CHAINS, draws=DRAWS)
    return model.posterior_class.from_groups(model, data, sampler, {"posterior": ds})


def _params(post: Posterior):
    ds = post.posterior
    theta = ds["theta"].values
    b = ds["b"].values
    a = ds["a"].values if "a" in ds else np.ones_like(b)
    if "g" in ds:
        g = ds["g"].values
    elif post.model.kind == "3pl":
        g = np.full_like(b, post.model.guess)
    else:
        g = np.zeros_like(b)
    return theta, b, a, g


KIND_SETTINGS = [("1pl", {}), ("2pl", {}), ("2pl", {"sigma_a": "estimate"}), ("3pl", {}),
                 ("3pl", {"guess": 0.2})]


# --------------------------------------------------------------------------- configuration
@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"kind": "4pl"}, "kind must be one of"),
        ({"kind": "3pl", "guess": 1.2}, "strictly inside"),
        ({"kind": "3pl", "guess": 0.0}, "strictly inside"),
        ({"kind": "3pl", "guess": -0.1}, "strictly inside"),
        ({"kind": "3pl", "guess": "blind"}, "guess must be"),
        ({"kind": "3pl", "guess": True}, "guess must be"),
        ({"kind": "2pl", "guess": 0.2}, "use kind='3pl'"),
        ({"guess_prior": (0.0, 1.0)}, "guess_prior"),
        ({"sigma_b_prior": -1.0}, "sigma_b_prior"),
        ({"sigma_a_prior": float("nan")}, "sigma_a_prior"),
        ({"parameterization": "both"}, "parameterization"),
        ({"sigma_a": 0.0}, "sigma_a must be"),
        ({"sigma_a": "learn"}, "sigma_a must be"),
    ],
)
def test_bad_settings_raise(settings, message):
    with pytest.raises(ValueError, match=message):
        IRTModel(**settings)


@pytest.mark.parametrize(
    ("n", "message"),
    [
        (np.ones((1, 5), int), "at least 2 systems and 2 tasks"),
        (np.ones((4, 1), int), "at least 2 systems and 2 tasks"),
        (np.array([[1, 1, 1], [0, 0, 0]]), "system 'system_1' has no observed cell"),
        (np.array([[1, 0, 1], [1, 0, 1]]), "task 'task_1' has no observed cell"),
    ],
)
def test_bad_data_raise_before_sampling(n, message):
    data = EvalData.from_arrays(n, np.zeros_like(n))
    with pytest.raises(ValueError, match=message):
        IRTModel().fit(data)


@pytest.mark.parametrize(("kind", "settings"), KIND_SETTINGS)
def test_config_round_trips_through_the_registry(kind, settings):
    model = IRTModel(kind=kind, **settings)
    config = model.to_config()
    assert config["model"] == f"irt-{kind}"
    assert model_from_config(config) == model
    assert IRTModel.from_config(config) == model
    assert get_model(f"irt-{kind}", **settings) == model


def test_config_with_mismatched_kind_raises():
    with pytest.raises(ValueError, match="kind"):
        IRTModel.from_config({"model": "irt-1pl", "kind": "2pl"})


def test_auto_parameterization_follows_trials_per_item():
    from evalbayes.models.irt._model import AUTO_CENTER_TRIALS

    few = EvalData.from_arrays(np.ones((2, 4), int), np.zeros((2, 4), int))
    many_n = np.full((2, 4), int(np.ceil(AUTO_CENTER_TRIALS / 2)))
    many = EvalData.from_arrays(many_n, np.zeros((2, 4), int))
    assert not IRTModel().centered(few)
    assert IRTModel().centered(many)
    assert IRTModel(parameterization="noncentered").centered(many) is False


# --------------------------------------------------------------------------- derived
@pytest.mark.parametrize(("kind", "settings"), KIND_SETTINGS)
def test_success_prob_and_log_likelihood_match_scipy(kind, settings):
    data = _data()
    post = _fake(IRTModel(kind=kind, **settings), data)
    theta, b, a, g = _params(post)
    p = post.success_prob()
    ll = post.log_likelihood()
    n, c = data.n.values, data.c.values
    cells = list(zip(*np.nonzero(n > 0), strict=True))
    assert ll.sizes["cell"] == len(cells)
    for j, (s, t) in enumerate(cells):
        expected_p = g[..., t] + (1 - g[..., t]) * expit(a[..., t] * (theta[..., s] - b[..., t]))
        np.testing.assert_allclose(p.values[:, :, s, t], expected_p, rtol=1e-12)
        np.testing.assert_allclose(
            ll.values[..., j], stats.binom.logpmf(c[s, t], n[s, t], expected_p), rtol=1e-9
        )
        assert ll["cell_system"].values[j] == data.systems[s]
        assert ll["cell_task"].values[j] == data.tasks[t]


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
@pytest.mark.parametrize(("kind", "settings"), KIND_SETTINGS)
def test_tasks_curve_is_the_average_over_observed_tasks(kind, settings, metric):
    data = _data()
    post = _fake(IRTModel(kind=kind, **settings), data)
    p = post.success_prob().values
    k = np.array([1.0, 3.0, 7.5])
    got = post.curve(metric, k).values
    per_task = post.curve(metric, k, per_task=True).values
    n = data.n.values
    for s in range(n.shape[0]):
        seen = np.flatnonzero(n[s] > 0)
        for j, kj in enumerate(k):
            f = 1 - (1 - p[:, :, s, seen]) ** kj if metric == "pass@k" else p[:, :, s, seen] ** kj
            np.testing.assert_allclose(got[:, :, s, j], f.mean(axis=-1), rtol=1e-10)
            np.testing.assert_allclose(per_task[:, :, s, seen, j], f, rtol=1e-10)
            assert np.all(np.isnan(per_task[:, :, s, n[s] == 0, j]))


def test_population_curve_is_ordered_by_ability_and_rejects_per_task():
    data = _data()
    post = _fake(IRTModel(kind="2pl"), data)
    pop = post.pass_at_k([1, 4], estimand="population")
    theta = post.posterior["theta"].values
    values = pop.values
    # within a draw, a higher theta means a higher population pass@k (same item draw)
    order = np.argsort(theta, axis=-1)
    sorted_vals = np.take_along_axis(values[..., 0], order, axis=-1)
    assert np.all(np.diff(sorted_vals, axis=-1) > 0)
    assert np.all(values[..., 1] > values[..., 0])
    with pytest.raises(ValueError, match="per_task"):
        post.pass_at_k(1, estimand="population", per_task=True)


# --------------------------------------------------------------------------- item analysis
def _numerical_information(theta, a, b, g, eps=1e-5):
    """E[(d/dtheta log P(y))^2] for a Bernoulli trial, by central differences."""

    def prob(t):
        return g + (1 - g) * expit(a * (t - b))

    p = prob(theta)
    dp = (prob(theta + eps) - prob(theta - eps)) / (2 * eps)
    return p * (dp / p) ** 2 + (1 - p) * (dp / (1 - p)) ** 2


@pytest.mark.parametrize(("kind", "settings"), KIND_SETTINGS)
def test_item_information_matches_finite_differences(kind, settings):
    data = _data()
    post = _fake(IRTModel(kind=kind, **settings), data)
    theta_eval = np.array([-1.3, 0.0, 2.2])
    info = post.item_information(theta_eval)
    assert info.dims == ("theta", "task")
    _, b, a, g = _params(post)
    for i, th in enumerate(theta_eval):
        expected = _numerical_information(th, a, b, g).mean(axis=(0, 1))
        np.testing.assert_allclose(info.values[i], expected, rtol=1e-6)
    default = post.item_information()
    assert default.dims == ("system", "task")
    np.testing.assert_allclose(
        default["theta"].values, post.posterior["theta"].mean(("chain", "draw")).values
    )


def test_select_items_takes_the_most_informative():
    data = _data()
    post = _fake(IRTModel(kind="2pl"), data)
    total = post.item_information().sum("system").values
    chosen = post.select_items(3)
    assert list(chosen["task"]) == [data.tasks[i] for i in np.argsort(-total)[:3]]
    np.testing.assert_allclose(chosen["information"], np.sort(total)[::-1][:3])
    for bad in (0, 8, 2.5, True):
        with pytest.raises(ValueError, match="m must be"):
            post.select_items(bad)


def test_ability_table_ranks_match_a_loop():
    data = _data()
    post = _fake(IRTModel(kind="1pl"), data)
    table = post.abilities(ci_prob=0.8)
    theta = post.posterior["theta"].values.reshape(-1, 4)
    ranks = np.array([[1 + np.sum(row > row[s]) for s in range(4)] for row in theta])
    np.testing.assert_allclose(table["rank_mean"], ranks.mean(axis=0))
    np.testing.assert_allclose(table["p_best"], (ranks == 1).mean(axis=0))
    assert np.isclose(table["p_best"].sum(), 1.0)
    np.testing.assert_allclose(table["theta_lower"], np.quantile(theta, 0.1, axis=0))
    assert "approximate" not in table


@pytest.mark.parametrize(("kind", "settings"), KIND_SETTINGS)
def test_item_table_columns_and_saturation_flags(kind, settings):
    data = _data()
    model = IRTModel(kind=kind, **settings)
    table = _fake(model, data).items()
    assert list(table["task"]) == data.tasks
    assert table["never_solved"].tolist() == [False] * 5 + [True, False]
    assert table["always_solved"].tolist() == [False] * 6 + [True]
    assert ("a_mean" in table) == model.has_discrimination
    assert ("g_mean" in table) == model.estimates_guess
    if not model.has_discrimination:
        assert table["low_discrimination"].isna().all()
    # a constant item has no correlation with ability and no predictive p-value
    assert table.loc[5:6, "ability_corr"].isna().all()
    assert table.loc[5:6, "ppc_corr_p"].isna().all()
    assert table["high_information"].sum() >= 1
    b = _fake(model, data).posterior["b"].values
    np.testing.assert_allclose(table["b_upper"], np.quantile(b.reshape(-1, 7), 0.95, axis=0))


def test_variational_tables_carry_approximate_column():
    data = _data()
    post = _fake(IRTModel(kind="2pl"), data, method="advi")
    assert post.items()["approximate"].all()
    assert post.abilities()["approximate"].all()
    assert "APPROXIMATE" in post.label


def test_item_analysis_refuses_other_models():
    from evalbayes.models import BetaBinomialModel
    from evalbayes.models.irt._items import item_table

    data = _data()
    ds = xr.Dataset({"p": (("chain", "draw", "system"), np.full((1, 5, 4), 0.5))})
    post = Posterior.from_groups(BetaBinomialModel(pooling="complete"), data,
                                 SamplerConfig(chains=1, draws=5), {"posterior": ds})
    with pytest.raises(ValueError, match="needs an IRT fit"):
        item_table(post)


def test_compare_models_refuses_different_data_and_ranks_fits():
    from evalbayes.results._loo import compare_models

    data = _data()
    one = _fake(IRTModel(kind="1pl"), data)
    two = _fake(IRTModel(kind="2pl"), data, seed=2)
    other = _fake(IRTModel(kind="2pl"), _data(seed=3))
    with pytest.raises(ValueError, match="different data"):
        compare_models({"a": one, "b": other})
    with pytest.raises(ValueError, match="at least two"):
        compare_models({"a": one})
    table = compare_models({"1pl": one, "2pl": two})
    assert list(table.columns[:6]) == ["rank", "elpd_loo", "se", "p_loo", "elpd_diff", "se_diff"]
    assert table["elpd_diff"].iloc[0] == 0.0
    assert (table["elpd_diff"] >= 0).all()
    # elpd_loo is the sum of the pointwise values arviz reports
    assert np.isclose(table.loc["1pl", "elpd_loo"], float(one.loo().elpd))
    assert table["stacking_weight"].sum() == pytest.approx(1.0)
    assert (table["stacking_weight"] >= 0).all()


def test_plots_return_axes():
    import matplotlib

    matplotlib.use("Agg")
    from evalbayes.plots import plot_item_curves, plot_item_difficulty, plot_wright_map

    data = _data()
    post = _fake(IRTModel(kind="3pl"), data)
    items, abilities = post.items(), post.abilities()
    ax = plot_item_difficulty(items)
    assert "harder" in ax.get_xlabel()
    assert len(ax.get_legend().get_texts()) >= 2  # flagged items are marked
    ax = plot_item_curves(items, tasks=["task_0", "task_3"], abilities=abilities)
    assert len(ax.get_lines()) == 3
    ax = plot_wright_map(abilities, items)
    assert ax.get_ylabel().startswith("logit")
    with pytest.raises(ValueError, match="not in the items table"):
        plot_item_curves(items, tasks=["nope"])
    with pytest.raises(ValueError, match="lacks columns"):
        plot_wright_map(abilities, pd.DataFrame({"x": [1]}))
