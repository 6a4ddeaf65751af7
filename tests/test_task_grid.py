"""TaskGridModel: the PyTensor graph against the NumPy likelihood, the population integral
against scipy's quad, the conditional rate draws and broken-task probabilities against their
exact formulas, the reduction to RateGridModel at zero loading; recovery and SBC (slow)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import integrate, stats
from scipy.special import expit, logsumexp

from evalbayes import EvalData
from evalbayes.models import RateGridModel, TaskGridModel, get_model, model_from_config
from evalbayes.models.base import binomial_log_choose
from evalbayes.sbc import rank_statistics

SMALL = {"degree": 3, "grid_nodes": 21, "grid_limit": 10.0}


def _data() -> EvalData:
    n = np.array([[8, 8, 8, 8, 0, 8], [4, 4, 4, 4, 4, 4], [16, 16, 16, 1, 16, 16]])
    c = np.array([[0, 3, 8, 0, 0, 1], [1, 0, 4, 0, 0, 2], [0, 9, 16, 1, 0, 5]])
    return EvalData.from_arrays(n, c, systems=list("ABC"), tasks=list("uvwxyz"))


def _posterior(model: TaskGridModel, draws: int, seed: int, tasks: int = 6) -> xr.Dataset:
    rng = np.random.default_rng(seed)
    terms = model.basis.shape[1]
    b = rng.normal(0, 1, (1, draws, tasks))
    return xr.Dataset(
        {"coef": (("chain", "draw", "system", "term"), rng.normal(0, 1.5, (1, draws, 3, terms))),
         "loading": (("chain", "draw", "system"), np.abs(rng.normal(1.5, 0.5, (1, draws, 3)))),
         "b": (("chain", "draw", "task"), b - b.mean(axis=-1, keepdims=True)),
         "pi0": (("chain", "draw"), rng.uniform(0.05, 0.3, (1, draws)))},
        coords={"chain": [0], "draw": np.arange(draws), "system": list("ABC"),
                "term": np.arange(terms), "task": list("uvwxyz")[:tasks]},
    )


def test_settings_registry_round_trip():
    model = get_model("task-grid", loading_prior=1.0)
    assert isinstance(model, TaskGridModel) and model.loading_prior == 1.0
    assert model_from_config(model.to_config()) == model
    with pytest.raises(ValueError):
        TaskGridModel(loading_prior=0.0)
    with pytest.raises(ValueError):
        TaskGridModel(broken_prior=(1.0,))


def test_graph_log_density_matches_numpy():
    pytest.importorskip("pymc")
    data = _data()
    model = TaskGridModel(**SMALL)
    pm_model = model.build(model.inputs(data))
    point = pm_model.initial_point()
    rng = np.random.default_rng(0)
    for key in point:
        point[key] = point[key] + rng.normal(0, 0.5, np.shape(point[key]))
    coef, loading, b, pi0, potential = pm_model.compile_fn(
        pm_model.replace_rvs_by_values(
            [pm_model["coef"], pm_model["loading"], pm_model["b"], pm_model["pi0"],
             pm_model.potentials[0]]),
        inputs=pm_model.value_vars, on_unused_input="ignore",
    )(point)
    assert np.isclose(b.sum(), 0.0) and not np.allclose(loading, loading[0])
    post = xr.Dataset(
        {"coef": (("chain", "draw", "system", "term"), coef[None, None]),
         "loading": (("chain", "draw", "system"), loading[None, None]),
         "b": (("chain", "draw", "task"), b[None, None]),
         "pi0": (("chain", "draw"), np.array([[pi0]]))},
        coords={"chain": [0], "draw": [0], "system": list("ABC"),
                "term": np.arange(len(coef[0])), "task": list("uvwxyz")},
    )
    n, c = data.n.values, data.c.values
    constant = np.where(n > 0, binomial_log_choose(n, c), 0.0).sum()
    numpy_ll = model.task_log_likelihood(post, data).sum() - constant
    assert potential == pytest.approx(numpy_ll, rel=1e-9, abs=1e-8)


@pytest.mark.parametrize("difficulty", ["normal", "student-t"])
def test_population_curve_matches_quad(difficulty):
    model = TaskGridModel(**SMALL, difficulty=difficulty)
    density = stats.norm.pdf if difficulty == "normal" else stats.t(3.0).pdf
    post = _posterior(model, draws=2, seed=1)
    k = np.array([1, 8, 200])
    got = model.population_curve(post, _data(), k, "pass@k")
    got_hat = model.population_curve(post, _data(), k, "pass^k")
    for d in range(2):
        for s in range(3):
            logits = model.basis @ post["coef"].values[0, d, s]
            g = np.exp(logits - logsumexp(logits))
            lam = post["loading"].values[0, d, s]
            pi0 = post["pi0"].values[0, d]
            for j, kj in enumerate(k):
                def mean_f(x, hat, kj=kj, lam=lam):
                    def f(b):
                        p = expit(x - lam * b)
                        return (p**kj if hat else 1 - (1 - p) ** kj) * density(b)
                    return integrate.quad(f, -np.inf, np.inf, epsabs=1e-12, limit=400)[0]
                for hat, arr in ((False, got), (True, got_hat)):
                    inner = sum(w * mean_f(x, hat) for w, x in zip(g[1:-1], model.logits,
                                                                  strict=True))
                    expect = (1 - pi0) * (inner + g[-1])
                    assert math.isclose(arr[0, d, s, j], expect, rel_tol=0, abs_tol=1e-5)


def test_zero_loading_without_broken_tasks_is_the_rate_grid():
    data = _data()
    grid = RateGridModel(**SMALL, tail_terms=0)  # the task grid's default
    model = TaskGridModel(**SMALL, broken=False)
    post = _posterior(model, draws=3, seed=2).drop_vars("pi0")
    post["loading"] = post["loading"] * 0.0
    s_idx, t_idx = np.nonzero(data.n.values > 0)
    np.testing.assert_allclose(
        model.cell_log_likelihood(post, data, s_idx, t_idx),
        grid.cell_log_likelihood(post, data, s_idx, t_idx), rtol=1e-12)
    np.testing.assert_allclose(
        model.population_curve(post, data, np.array([1, 16]), "pass@k"),
        grid.population_curve(post, data, np.array([1, 16]), "pass@k"), rtol=1e-7)


def test_conditional_rates_and_broken_probability_are_exact():
    data = _data()
    model = TaskGridModel(**SMALL)
    one = _posterior(model, draws=1, seed=3)
    post = one.isel(draw=np.zeros(20_000, int)).assign_coords(draw=np.arange(20_000))
    p = model.rates(post, data, seed=4, tasks=slice(0, 6))
    grid_logits = model.logits
    n, c = data.n.values, data.c.values
    coef = one["coef"].values[0, 0]
    lam, b = one["loading"].values[0, 0], one["b"].values[0, 0]
    pi0 = one["pi0"].values[0, 0]

    def cell_terms(s, t):
        logits = model.basis @ coef[s]
        g = np.exp(logits - logsumexp(logits))
        rates = np.concatenate([[0.0], expit(grid_logits - lam[s] * b[t]), [1.0]])
        return g * stats.binom.pmf(c[s, t], n[s, t], rates), rates

    # a task with successes: each cell's rate from g_s(j) Binomial(c | n, p_j)
    for s, t in [(0, 1), (1, 5), (2, 3), (0, 3)]:
        weight, rates = cell_terms(s, t)
        exact = weight / weight.sum()
        counts = np.array([(np.isclose(p[0, :, s, t], r, rtol=0, atol=1e-15)).sum()
                           for r in rates])
        keep = exact * p.shape[1] >= 5
        assert counts.sum() >= p.shape[1] - 5, (s, t)
        chi2 = stats.chisquare(counts[keep], exact[keep] / exact[keep].sum() * counts[keep].sum())
        assert chi2.pvalue > 1e-3, (s, t)
    # task "y" is all zero (A did not run it): broken with pi0 / (pi0 + (1 - pi0) prod_s L[s, y])
    prod = np.prod([cell_terms(s, 4)[0].sum() for s in range(3)])
    broken = pi0 / (pi0 + (1 - pi0) * prod)
    got = model.broken_probability(one, data).values[0, 0]
    assert got[4] == pytest.approx(broken, rel=1e-10)
    assert np.all(np.delete(got, 4) == 0.0)
    share_zero = (p[0, :, :, 4] == 0).all(axis=1).mean()
    assert share_zero >= broken - 4 * math.sqrt(broken * (1 - broken) / p.shape[1])


def test_unobserved_cell_draws_from_g():
    data = _data()  # cell (A, y) has n = 0
    model = TaskGridModel(**SMALL, broken=False)
    post = _posterior(model, draws=1, seed=5).drop_vars("pi0")
    post = post.isel(draw=np.zeros(20_000, int)).assign_coords(draw=np.arange(20_000))
    p = model.rates(post, data, seed=1, tasks=slice(4, 5))[0, :, 0, 0]
    logits = model.basis @ post["coef"].values[0, 0, 0]
    g = np.exp(logits - logsumexp(logits))
    shift = post["loading"].values[0, 0, 0] * post["b"].values[0, 0, 4]
    mean = g[1:-1] @ expit(model.logits - shift) + g[-1]
    assert p.mean() == pytest.approx(mean, abs=4 * p.std() / math.sqrt(len(p)))


@pytest.mark.slow
def test_recovery_of_planted_broken_tasks_and_paired_difference():
    """8 systems x 40 tasks x 20 trials with 3 planted broken tasks (normal difficulty, as the
    data are generated): P(broken) > 0.9 on the planted ones, 0 on every solved task; the
    population difference of two systems with the same rate distribution covers 0."""
    rng = np.random.default_rng(5)
    systems, tasks, trials = 8, 40, 20
    theta = rng.normal(0, 1.0, systems)
    theta[1] = theta[0]
    b = rng.normal(-0.5, 1.5, tasks)
    planted = np.array([3, 17, 29])
    p = expit(theta[:, None] - b + rng.normal(0, 0.8, (systems, tasks)))
    p[:, planted] = 0.0
    n = np.full((systems, tasks), trials)
    data = EvalData.from_arrays(n, rng.binomial(n, p))
    # normal difficulty: with the default Student-t an all-zero task may also be "very hard"
    # (its heavy tail is there for exactly that), so a planted broken task can read ~0.5
    model = TaskGridModel(difficulty="normal")
    post = model.fit(data, draws=400, tune=400, chains=2, seed=4, check=False)
    prob = model.broken_probability(post.posterior, data).mean(("chain", "draw")).values
    assert np.all(prob[planted] > 0.9)
    solved = data.c.values.sum(axis=0) > 0
    assert np.all(prob[solved] < 0.1)
    pop = post.pass_at_k(1, estimand="population").sel(k=1)
    diff = (pop.isel(system=1) - pop.isel(system=0)).values.ravel()
    assert np.quantile(diff, 0.005) < 0 < np.quantile(diff, 0.995)


def _ranks(replicates: int, seed: int) -> dict[str, np.ndarray]:
    model = TaskGridModel()
    ranks: dict[str, list[int]] = {"loading0": [], "b0": [], "pi0": []}
    for r in range(replicates):
        data, truth = model.simulate_prior(3, 20, 8, seed=seed + r)
        post = model.fit(data, draws=198, tune=300, chains=2, seed=r, check=False)
        pos = post.posterior.stack(s=("chain", "draw"))
        pairs = {"loading0": (truth["loading"][0], pos["loading"].isel(system=0).values),
                 "b0": (truth["b"][0], pos["b"].isel(task=0).values),
                 "pi0": (truth["pi0"], pos["pi0"].values)}
        for name, (value, draws) in pairs.items():
            ranks[name].append(rank_statistics(np.array([value]), draws[:, None])[0])
    return {name: np.array(v) for name, v in ranks.items()}


@pytest.mark.slow
def test_sbc_ranks_are_not_degenerate():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranks = _ranks(8, seed=500)
    for name, r in ranks.items():
        assert np.ptp(r) > 10, name


# The 100-replicate SBC of this experimental model is benchmarks/sbc_task_grid.py (~7 min).
