"""TaskEffectsModel: configuration, the PyMC graph against the NumPy reference, derived
quantities, and small fits (planted broken tasks, a single system, n = 1 warning)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from evalbayes import EvalData
from evalbayes.models import TaskEffectsModel, get_model, model_from_config
from evalbayes.models.logit_normal import log_marginal


def simulate(seed, systems=6, tasks=30, trials=20, broken=(), sigma_e=1.0):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.5, systems)
    b = rng.normal(0, 2, tasks)
    e = rng.normal(0, sigma_e, (systems, tasks))
    p = 1 / (1 + np.exp(-(theta[:, None] - b + e)))
    p[:, list(broken)] = 0.0
    n = np.full((systems, tasks), trials)
    return EvalData.from_arrays(n, rng.binomial(n, p)), p


def fake_posterior(model, data, seed=0, chains=2, draws=50):
    """Parameter draws that look like a posterior (for the NumPy-only derived quantities)."""
    rng = np.random.default_rng(seed)
    S, T = data.n.shape
    coords = {"chain": np.arange(chains), "draw": np.arange(draws)}
    ds = xr.Dataset(
        {
            "theta": (("chain", "draw", "system"), rng.normal(0, 1, (chains, draws, S))),
            "b": (("chain", "draw", "task"), rng.normal(0, 2, (chains, draws, T))),
            "sigma_b": (("chain", "draw"), rng.uniform(1, 2, (chains, draws))),
            "sigma_e": (("chain", "draw"), rng.uniform(0.5, 1.5, (chains, draws))),
            "pi0": (("chain", "draw"), rng.uniform(0.05, 0.2, (chains, draws))),
        },
        coords=coords,
    )
    return ds.assign_coords(system=data.dataset["system"].values, task=data.dataset["task"].values)


def test_registry_and_config_round_trip():
    model = get_model("task-effects")
    assert isinstance(model, TaskEffectsModel)
    assert model_from_config(model.to_config()) == model
    assert TaskEffectsModel(sigma_e=0.0).has_residual is False


@pytest.mark.parametrize(
    "kwargs",
    [{"theta_prior": 0}, {"sigma_e": -1.0}, {"sigma_e": "fixed"}, {"broken_prior": (1.0,)},
     {"parameterization": "x"}, {"quadrature_nodes": 3}],
)
def test_bad_configuration_raises(kwargs):
    with pytest.raises(ValueError):
        TaskEffectsModel(**kwargs)


def test_auto_parameterization_rule():
    """Centred difficulty deviations from 10 trials per task on average and 4 systems."""
    model = TaskEffectsModel()

    def data(systems: int, tasks: int, trials: int) -> EvalData:
        n = np.full((systems, tasks), trials)
        return EvalData.from_arrays(n, n // 2)

    assert model.centered(data(13, 80, 5))  # Terminal-Bench shape: 65 trials per task
    assert not model.centered(data(9, 80, 1))  # 9 trials per task
    assert not model.centered(data(3, 10, 64))  # TinyAgent shape: too few systems
    assert not model.centered(data(6, 10, 1))  # 6 trials per task
    assert model.centered(data(4, 10, 3))  # 12 trials per task, 4 systems
    assert not TaskEffectsModel(parameterization="noncentered").centered(data(13, 80, 5))
    assert TaskEffectsModel(parameterization="centered").centered(data(3, 10, 64))


def test_unobserved_task_is_rejected():
    n = np.array([[5, 0], [5, 0]])
    with pytest.raises(ValueError, match="no observed cell"):
        TaskEffectsModel().inputs(EvalData.from_arrays(n, np.zeros_like(n)))


# The graphs are evaluated at the perturbed initial POINT of the value variables: outputs
# written in random variables go through replace_rvs_by_values, else compile_fn would draw them
# from the prior (a different point in every test order).


def test_graph_log_density_matches_numpy_reference():
    data, _ = simulate(3, systems=4, tasks=12, trials=50, broken=(2,))
    n = data.n.values.copy()
    n[0, 5] = 0  # a missing cell
    c = np.minimum(data.c.values, n)
    data = EvalData.from_arrays(n, c)
    model = TaskEffectsModel(discrimination="system")
    inputs = model.inputs(data)
    pm_model = model.build(inputs)
    point = pm_model.initial_point()
    rng = np.random.default_rng(0)
    for key in point:
        point[key] = point[key] + rng.normal(0, 0.3, np.shape(point[key]))
    values = pm_model.compile_fn(
        pm_model.replace_rvs_by_values(
            [pm_model["theta"], pm_model["b"], pm_model["a"], pm_model["sigma_e"], pm_model["pi0"],
             pm_model.potentials[0]]),
        inputs=pm_model.value_vars, on_unused_input="ignore",
    )(point)
    theta, b, a, sigma_e, pi0, potential = values
    assert sigma_e == pytest.approx(np.exp(point["sigma_e_log__"]))  # evaluated AT the point
    assert not np.allclose(a, 1.0)
    mu = a[:, None] * (theta[:, None] - b[None, :])
    ll = log_marginal(mu, sigma_e, n, c, include_binomial_coefficient=False)
    ll = np.where(n > 0, ll, 0.0).sum(axis=0)
    zero = (c * (n > 0)).sum(axis=0) == 0
    task = np.where(zero, np.logaddexp(np.log(pi0), np.log1p(-pi0) + ll), np.log1p(-pi0) + ll)
    assert potential == pytest.approx(task.sum(), abs=1e-3)


def test_rates_are_seeded_and_shaped():
    data, _ = simulate(1, systems=3, tasks=8, broken=(0,))
    model = TaskEffectsModel()
    post = fake_posterior(model, data)
    a = model.rates(post, data, seed=5, tasks=slice(2, 6))
    b = model.rates(post, data, seed=5, tasks=slice(2, 6))
    assert a.shape == (2, 50, 3, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, model.rates(post, data, seed=6, tasks=slice(2, 6)))
    assert np.all((a >= 0) & (a <= 1))


def test_broken_probability_closed_form():
    data, _ = simulate(2, systems=3, tasks=6, broken=(1,))
    model = TaskEffectsModel()
    post = fake_posterior(model, data, draws=5)
    got = model.broken_probability(post, data).values
    n, c = data.n.values, data.c.values
    for ch in range(2):
        for d in range(5):
            pi0 = post["pi0"].values[ch, d]
            mu = post["theta"].values[ch, d][:, None] - post["b"].values[ch, d][None, :]
            lik = np.exp(log_marginal(mu, post["sigma_e"].values[ch, d], n, c).sum(axis=0))
            zero = c.sum(axis=0) == 0
            ref = np.where(zero, pi0 / (pi0 + (1 - pi0) * lik), 0.0)
            np.testing.assert_allclose(got[ch, d], ref, rtol=1e-9, atol=1e-12)
    # a broken draw zeroes the whole task in the rates
    rates = model.rates(post, data, seed=0, tasks=slice(0, 6))
    assert np.all((rates[..., 1] == 0).all(axis=-1) | (rates[..., 1] > 0).all(axis=-1))


def test_cell_pieces_sum_to_task_log_likelihood():
    data, _ = simulate(4, systems=3, tasks=7, broken=(2, 3))
    model = TaskEffectsModel()
    post = fake_posterior(model, data, draws=4)
    s_idx, t_idx = np.nonzero(data.n.values > 0)
    cells = model.cell_log_likelihood(post, data, s_idx, t_idx)
    tasks = model.task_log_likelihood(post, data)
    summed = np.zeros_like(tasks)
    np.add.at(summed, (slice(None), slice(None), t_idx), cells)
    np.testing.assert_allclose(summed, tasks, rtol=1e-10)


@pytest.mark.slow  # nutpie's numba compile: ~30 s on a loaded 2-core machine
def test_uninformed_sigma_e_warning_with_one_trial_per_cell():
    rng = np.random.default_rng(0)
    n = np.ones((3, 10), int)
    data = EvalData.from_arrays(n, rng.binomial(1, 0.5, n.shape))
    with pytest.warns(UserWarning, match="sigma_e"):
        post = TaskEffectsModel().fit(data, draws=50, tune=50, chains=1, seed=0, check=False)
    assert post.pass_at_k(1).shape == (1, 50, 3, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TaskEffectsModel(sigma_e=0.0).inputs(data)


@pytest.mark.slow  # nutpie's numba compile: ~30 s on a loaded 2-core machine
def test_small_fit_curves_and_planted_broken_tasks():
    data, _ = simulate(7, systems=5, tasks=24, trials=30, broken=(0, 5))
    model = TaskEffectsModel()
    post = model.fit(data, draws=200, tune=200, chains=2, seed=1, check=False)
    p_broken = model.broken_probability(post.posterior, data).mean(("chain", "draw")).values
    assert p_broken[0] > 0.5 and p_broken[5] > 0.5
    solved = data.c.values.sum(axis=0) >= 5
    assert np.all(p_broken[solved] == 0)
    tasks = post.pass_at_k([1, 8, 1024])
    population = post.pass_at_k([1, 8, 1024], estimand="population")
    assert tasks.dims == population.dims == ("chain", "draw", "system", "k")
    assert np.all(np.diff(tasks.values, axis=-1) >= -1e-12)
    per_task = post.pass_at_k(4, per_task=True)
    np.testing.assert_allclose(per_task.mean("task").values, post.pass_at_k(4).values)
    assert post.log_likelihood().sizes["cell"] == int((data.n.values > 0).sum())


@pytest.mark.slow  # nutpie's numba compile: ~30 s on a loaded 2-core machine
def test_single_system_fits():
    data, _ = simulate(9, systems=1, tasks=20, trials=16, broken=(3,))
    post = TaskEffectsModel().fit(data, draws=150, tune=150, chains=2, seed=2, check=False)
    band = post.pass_at_k([1, 64]).quantile([0.05, 0.95], ("chain", "draw"))
    assert np.all(np.isfinite(band.values))
    pop = post.pass_at_k([1, 64], estimand="population")
    assert pop.sizes["system"] == 1


def test_dead_cells_graph_matches_numpy_reference():
    data, _ = simulate(5, systems=3, tasks=10, trials=30, broken=(1,))
    model = TaskEffectsModel(dead_cells=True)
    pm_model = model.build(model.inputs(data))
    point = pm_model.initial_point()
    rng = np.random.default_rng(1)
    for key in point:
        point[key] = point[key] + rng.normal(0, 0.3, np.shape(point[key]))
    theta, b, sigma_e, pi0, zeta, potential = pm_model.compile_fn(
        pm_model.replace_rvs_by_values(
            [pm_model["theta"], pm_model["b"], pm_model["sigma_e"], pm_model["pi0"],
             pm_model["zeta"], pm_model.potentials[0]]),
        inputs=pm_model.value_vars, on_unused_input="ignore",
    )(point)
    n, c = data.n.values, data.c.values
    alive = log_marginal(theta[:, None] - b[None, :], sigma_e, n, c,
                         include_binomial_coefficient=False) + np.log1p(-zeta)[:, None]
    cell = np.where(c == 0, np.logaddexp(np.log(zeta)[:, None], alive), alive).sum(axis=0)
    zero = c.sum(axis=0) == 0
    task = np.where(zero, np.logaddexp(np.log(pi0), np.log1p(-pi0) + cell), np.log1p(-pi0) + cell)
    assert potential == pytest.approx(task.sum(), abs=1e-3)


def test_per_system_residual_graph_matches_numpy_reference():
    data, _ = simulate(6, systems=3, tasks=9, trials=25, broken=(4,))
    model = TaskEffectsModel(residual_scale="system")
    pm_model = model.build(model.inputs(data))
    point = pm_model.initial_point()
    rng = np.random.default_rng(2)
    for key in point:
        point[key] = point[key] + rng.normal(0, 0.3, np.shape(point[key]))
    theta, b, sigma_e, pi0, potential = pm_model.compile_fn(
        pm_model.replace_rvs_by_values(
            [pm_model["theta"], pm_model["b"], pm_model["sigma_e"], pm_model["pi0"],
             pm_model.potentials[0]]),
        inputs=pm_model.value_vars, on_unused_input="ignore",
    )(point)
    assert sigma_e.shape == (3,)
    n, c = data.n.values, data.c.values
    cell = log_marginal(theta[:, None] - b[None, :], sigma_e[:, None], n, c,
                        include_binomial_coefficient=False).sum(axis=0)
    zero = c.sum(axis=0) == 0
    task = np.where(zero, np.logaddexp(np.log(pi0), np.log1p(-pi0) + cell), np.log1p(-pi0) + cell)
    assert potential == pytest.approx(task.sum(), abs=1e-3)
