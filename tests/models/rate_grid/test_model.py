"""RateGridModel: the grid maths against scipy and direct sums, the PyTensor graph against the
NumPy likelihood, conditional rate draws against the exact discrete posterior, recovery and
SBC (slow)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from scipy.special import expit, logsumexp

from evalbayes import EvalData
from evalbayes.frequentist import bootstrap_ci, paired_bootstrap_ci
from evalbayes.models import RateGridModel, get_model, model_from_config
from evalbayes.models._base import (
    bayesian_bootstrap_weights,
    couple_to_reference,
    unseen_task_reference,
    weighted_row_average,
)
from evalbayes.models.rate_grid._model import grid_log_likelihood
from evalbayes.testing import rank_statistics, rank_uniformity


def _posterior(coef: np.ndarray, systems: list[str]) -> xr.Dataset:
    """A fake posterior with the given coefficient draws, shape (chain, draw, system, term)."""
    return xr.Dataset(
        {"coef": (("chain", "draw", "system", "term"), coef)},
        coords={"chain": np.arange(coef.shape[0]), "draw": np.arange(coef.shape[1]),
                "system": systems, "term": np.arange(coef.shape[3])},
    )


def test_grid_log_likelihood_matches_scipy_and_atoms():
    n = np.array([1, 5, 16, 1100, 1100, 7])
    c = np.array([0, 2, 16, 17, 0, 7])
    rates = np.array([0.0, 1e-6, 0.01, 0.5, 0.999, 1.0])
    got = grid_log_likelihood(n, c, rates)
    expect = stats.binom.logpmf(c[:, None], n[:, None], rates[None, :])
    assert np.allclose(got, expect, rtol=1e-12, atol=1e-9, equal_nan=False)
    # the atoms exactly: p = 0 only for c = 0, p = 1 only for c = n
    assert np.array_equal(np.isfinite(got[:, 0]), c == 0)
    assert np.array_equal(np.isfinite(got[:, -1]), c == n)


def test_support_and_basis():
    model = RateGridModel(degree=3, grid_limit=10.0, grid_nodes=21, tail_terms=0)
    grid = model.rates_grid
    assert grid[0] == 0.0 and grid[-1] == 1.0 and len(grid) == 23
    assert np.allclose(grid[1:-1], expit(np.linspace(-10, 10, 21)))
    basis = model.basis
    assert basis.shape == (23, 5)
    # degree-d Legendre column: P_1(z) = z, P_2 = (3 z^2 - 1) / 2
    z = np.linspace(-1, 1, 21)
    assert np.allclose(basis[1:-1, 0], z)
    assert np.allclose(basis[1:-1, 1], (3 * z**2 - 1) / 2)
    assert basis[0].tolist() == [0, 0, 0, 1, 0] and basis[-1].tolist() == [0, 0, 0, 0, 1]
    no_atoms = RateGridModel(degree=3, grid_limit=10.0, grid_nodes=21, atoms=False,
                             tail_terms=0)
    assert no_atoms.basis.shape == (21, 3) and len(no_atoms.rates_grid) == 21


def test_tail_bumps_of_the_default_grid():
    """Default: Legendre degree 5, then Gaussian bumps (sd 1.5) at logits -10, -7, -4, 4, 7,
    10, then the two atom indicators; the bumps are 0 at the atoms."""
    model = RateGridModel()
    x = np.linspace(-14, 14, 57)
    basis = model.basis
    assert basis.shape == (59, 5 + 6 + 2)
    assert np.allclose(basis[1:-1, 4], (63 * (x / 14) ** 5 - 70 * (x / 14) ** 3
                                        + 15 * (x / 14)) / 8)  # P_5
    for column, centre in enumerate([-10.0, -7.0, -4.0, 4.0, 7.0, 10.0], start=5):
        assert np.allclose(basis[1:-1, column], np.exp(-((x - centre) ** 2) / (2 * 1.5**2)))
        assert basis[0, column] == 0.0 and basis[-1, column] == 0.0
    assert basis[0].tolist() == [0.0] * 11 + [1.0, 0.0]
    assert basis[-1].tolist() == [0.0] * 12 + [1.0]
    assert np.allclose(RateGridModel(tail_terms=1).tail_centres, [-4.0, 4.0])


@pytest.mark.parametrize("bad", [
    {"degree": 0}, {"degree": 2.5}, {"coef_prior": 0.0}, {"grid_limit": -1.0},
    {"grid_nodes": 3, "degree": 5}, {"coef_prior": True}, {"population": "bootstrap"},
    {"tail_terms": -1}, {"tail_terms": 1.5}, {"tail_terms": True},
])
def test_bad_settings_raise(bad):
    with pytest.raises(ValueError):
        RateGridModel(**bad)


def test_registry_and_config_round_trip():
    model = get_model("rate-grid", degree=4)
    assert isinstance(model, RateGridModel) and model.degree == 4
    assert model_from_config(model.to_config()) == model


def _data() -> EvalData:
    n = np.array([[16, 16, 16, 16, 0], [4, 4, 4, 1, 1]])
    c = np.array([[0, 3, 16, 0, 0], [1, 0, 4, 1, 0]])
    return EvalData.from_arrays(n, c, systems=["A", "B"], tasks=list("vwxyz"))


def test_population_curve_is_the_weighted_sum():
    model = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0)
    rng = np.random.default_rng(0)
    coef = rng.normal(0, 2, (2, 3, 2, model.basis.shape[1]))
    post = _posterior(coef, ["A", "B"])
    k = np.array([1, 3, 100])
    got = model.population_curve(post, _data(), k, "pass@k")
    got_hat = model.population_curve(post, _data(), k, "pass^k")
    grid = model.rates_grid
    for ch in range(2):
        for d in range(3):
            for s in range(2):
                logits = model.basis @ coef[ch, d, s]
                g = np.exp(logits) / np.exp(logits).sum()
                for j, kj in enumerate(k):
                    expect = sum(w * (1 - (1 - p) ** kj) for w, p in zip(g, grid, strict=True))
                    hat = sum(w * p**kj for w, p in zip(g, grid, strict=True))
                    assert math.isclose(got[ch, d, s, j], expect, rel_tol=1e-10, abs_tol=1e-14)
                    assert math.isclose(got_hat[ch, d, s, j], hat, rel_tol=1e-10, abs_tol=1e-14)


def test_bayesian_bootstrap_weights_are_dirichlet_one():
    """Moments of Dirichlet(1, ..., 1) over T tasks: mean 1/T, variance (T-1)/(T^2 (T+1)),
    covariance -1/(T^2 (T+1)); each weight is Beta(1, T-1) (KS test); same seed, same
    weights."""
    tasks = 7
    w = bayesian_bootstrap_weights(4, 20_000, tasks, seed=3)
    assert w.shape == (4, 20_000, tasks)
    assert np.allclose(w.sum(axis=-1), 1.0)
    flat = w.reshape(-1, tasks)
    se = math.sqrt((tasks - 1) / (tasks**2 * (tasks + 1)) / len(flat))
    assert np.allclose(flat.mean(axis=0), 1 / tasks, atol=4 * se)
    cov = np.cov(flat, rowvar=False)
    assert np.allclose(np.diag(cov), (tasks - 1) / (tasks**2 * (tasks + 1)), rtol=0.03)
    off = cov[~np.eye(tasks, dtype=bool)]
    assert np.allclose(off, -1 / (tasks**2 * (tasks + 1)), rtol=0.1)
    assert stats.kstest(flat[:, 0], stats.beta(1, tasks - 1).cdf).pvalue > 1e-3
    assert np.array_equal(w, bayesian_bootstrap_weights(4, 20_000, tasks, seed=3))
    assert not np.array_equal(w, bayesian_bootstrap_weights(4, 20_000, tasks, seed=4))


def test_couple_to_reference_keeps_marginals_and_takes_the_reference_ranks():
    """Each column keeps its multiset of draws; its ranks become the reference's (checked
    with scipy.stats.rankdata), so the rank correlation between columns is the reference's."""
    rng = np.random.default_rng(4)
    values = rng.normal(size=(2, 50, 3, 2))
    common = rng.normal(size=(2, 50, 1, 1))
    reference = common + 0.3 * rng.normal(size=(2, 50, 3, 2))
    out = couple_to_reference(values, reference)
    flat_out, flat_ref = out.reshape(100, 6), reference.reshape(100, 6)
    assert np.array_equal(np.sort(flat_out, axis=0), np.sort(values.reshape(100, 6), axis=0))
    for j in range(6):
        assert np.array_equal(stats.rankdata(flat_out[:, j]), stats.rankdata(flat_ref[:, j]))
    before = stats.spearmanr(values.reshape(100, 6)[:, 0], values.reshape(100, 6)[:, 2])[0]
    after = stats.spearmanr(flat_out[:, 0], flat_out[:, 2])[0]
    assert abs(before) < 0.3 < 0.8 < after
    assert math.isclose(after, stats.spearmanr(flat_ref[:, 0], flat_ref[:, 2])[0])
    with pytest.raises(ValueError, match="shapes differ"):
        couple_to_reference(values, reference[:, :10])


def test_bootstrap_population_is_the_weighted_average_of_the_task_draws():
    """population="bayesian-bootstrap": per draw, sum_t w_t f(p[s, t]) / sum_t w_t over the
    system's observed tasks, with the same rate draws as the per-task curve (same seed) and
    the same weights for every system; "independent" gives the g_s integral instead, and "paired"
    the grid's draws reordered to the bootstrap's ranks."""
    model = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0,
                          population="bayesian-bootstrap")
    data = _data()
    coef = np.random.default_rng(2).normal(0, 2, (2, 3, 2, model.basis.shape[1]))
    post = _posterior(coef, ["A", "B"])
    k = np.array([1, 5])
    for metric in ("pass@k", "pass^k"):
        got = model.curve(post, data, k, metric, "population", False, seed=9).values
        per_task = model.curve(post, data, k, metric, "tasks", True, seed=9).values
        w = bayesian_bootstrap_weights(2, 3, 5, seed=9)
        seen = data.n.values > 0
        for s in range(2):
            ws = w * seen[s]
            expect = np.einsum("cdtk,cdt->cdk", np.nan_to_num(per_task[:, :, s]), ws)
            assert np.allclose(got[:, :, s], expect / ws.sum(axis=-1)[..., None], rtol=1e-12)
    grid = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0, population="independent")
    exact = grid.population_curve(post, data, k, "pass@k")
    assert np.allclose(grid.curve(post, data, k, "pass@k", "population", False, seed=9).values,
                       exact)
    assert grid.description == "rate-grid (population=independent, broken=False)"
    # unseen_tasks=0: the Bayesian bootstrap's ranks of each task's posterior mean (the mean
    # over the draws of its conditional mean given g_s, the same for every draw)
    paired = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0, unseen_tasks=0.0)
    got = paired.curve(post, data, k, "pass@k", "population", False, seed=9).values
    expected = paired.row_expectations(post, data, k, "pass@k")
    means = np.repeat(np.repeat(expected.values.mean(axis=(0, 1), keepdims=True), 2, axis=0),
                      3, axis=1)
    reference = weighted_row_average(means, expected.row_of_cell,
                                     bayesian_bootstrap_weights(2, 3, 5, seed=9))
    assert np.array_equal(got, couple_to_reference(exact, reference))
    # the default: the ranks of the Dirichlet-process reference with the unseen tasks
    default = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0)
    assert default.pairing_reference == "posterior-mean"
    got = default.curve(post, data, k, "pass@k", "population", False, seed=9).values
    reference = unseen_task_reference(means, expected.row_of_cell,
                                      bayesian_bootstrap_weights(2, 3, 5, seed=9), 4.0, 9)
    assert np.array_equal(got, couple_to_reference(exact, reference))


def test_weighted_row_average_matches_the_cell_by_cell_sum():
    """Per-row values spread to their cells and averaged with the task weights directly."""
    rng = np.random.default_rng(8)
    row_of_cell = np.array([[0, 1, 0, -1, 1], [2, 2, -1, 3, 4]])
    values = rng.random((2, 3, 5, 2))
    weights = bayesian_bootstrap_weights(2, 3, 5, seed=1)
    got = weighted_row_average(values, row_of_cell, weights)
    for s in range(2):
        seen = row_of_cell[s] >= 0
        cell_values = values[:, :, row_of_cell[s, seen], :]  # (chain, draw, cell, k)
        w = weights[:, :, seen]
        expect = (cell_values * w[..., None]).sum(axis=2) / w.sum(axis=-1)[..., None]
        assert np.allclose(got[:, :, s], expect, rtol=1e-12)


def test_row_expectations_are_the_exact_conditional_means():
    """E[f(p) | g_s, n, c] per distinct (system, n, c) against a direct sum over the grid
    with scipy's binomial pmf; every observed cell points at its row."""
    model = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0)
    data = _data()
    coef = np.random.default_rng(3).normal(0, 2, (1, 2, 2, model.basis.shape[1]))
    post = _posterior(coef, ["A", "B"])
    k = np.array([1, 7])
    values, row_of_cell, scale = model.row_expectations(post, data, k, "pass@k")
    assert scale is None  # no pi0 in this posterior: no broken tasks
    grid = model.rates_grid
    n, c = data.n.values, data.c.values
    assert np.array_equal(row_of_cell < 0, n == 0)
    for d in range(2):
        for s, t in zip(*np.nonzero(n > 0), strict=True):
            logits = model.basis @ coef[0, d, s]
            post_j = np.exp(logits - logsumexp(logits)) * stats.binom.pmf(c[s, t], n[s, t], grid)
            post_j /= post_j.sum()
            for j, kj in enumerate(k):
                expect = float(post_j @ (1 - (1 - grid) ** kj))
                assert math.isclose(values[0, d, row_of_cell[s, t], j], expect, rel_tol=1e-9,
                                    abs_tol=1e-12)


def test_population_difference_is_paired():
    """Two systems whose task logits correlate 0.6 (60 tasks, 5 trials, as on Terminal-Bench):
    the default population ("paired": grid marginals coupled to the Bayesian bootstrap's ranks)
    keeps each system's grid draws exactly, and its difference interval is close to the
    paired task bootstrap's (frequentist, evalbayes.frequentist.paired_bootstrap_ci; 1.1-1.2x
    here: the independent per-system posteriors cannot shrink per-task differences, so trial
    noise is counted a little more than once) and narrower than the unpaired "independent"
    population's, while each system's own interval is close to the task bootstrap's."""
    rng = np.random.default_rng(5)
    u = rng.multivariate_normal([0.0, 0.5], 4.0 * np.array([[1.0, 0.6], [0.6, 1.0]]), 60).T
    n = np.full((2, 60), 5)
    c = rng.binomial(n, expit(u))
    data = EvalData.from_arrays(n, c, systems=["A", "B"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = RateGridModel().fit(data, draws=500, tune=500, chains=2, seed=1, check=False)
    pop = post.pass_at_k(1, estimand="population").sel(k=1)
    diff = (pop.sel(system="B") - pop.sel(system="A")).values.ravel()
    width = np.diff(np.quantile(diff, [0.025, 0.975]))[0]
    boot = paired_bootstrap_ci(c[0] / n[0], c[1] / n[1], seed=0, n_resamples=4000)
    assert 0.9 < width / (boot.upper - boot.lower) < 1.3
    gpop = RateGridModel(population="independent").curve(
        post.posterior, data, np.array([1]), "pass@k", "population", False
    ).sel(k=1)
    for system in ("A", "B"):
        assert np.array_equal(np.sort(pop.sel(system=system).values.ravel()),
                              np.sort(gpop.sel(system=system).values.ravel()))
    gdiff = (gpop.sel(system="B") - gpop.sel(system="A")).values.ravel()
    assert np.diff(np.quantile(gdiff, [0.025, 0.975]))[0] > 1.1 * width
    own = np.diff(np.quantile(pop.sel(system="A").values.ravel(), [0.025, 0.975]))[0]
    single = bootstrap_ci(c[0] / n[0], seed=0, n_resamples=4000)
    assert 0.8 < own / (single.upper - single.lower) < 1.25


def test_cell_log_likelihood_is_the_mixture():
    model = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0)
    data = _data()
    coef = np.random.default_rng(1).normal(0, 2, (1, 2, 2, model.basis.shape[1]))
    post = _posterior(coef, ["A", "B"])
    s_idx, t_idx = np.nonzero(data.n.values > 0)
    got = model.cell_log_likelihood(post, data, s_idx, t_idx)
    grid = model.rates_grid
    for d in range(2):
        for i, (s, t) in enumerate(zip(s_idx, t_idx, strict=True)):
            logits = model.basis @ coef[0, d, s]
            g = np.exp(logits - logsumexp(logits))
            n, c = data.n.values[s, t], data.c.values[s, t]
            expect = np.log(sum(w * stats.binom.pmf(c, n, p) for w, p in zip(g, grid, strict=True)))
            assert math.isclose(got[0, d, i], expect, rel_tol=1e-10)


def test_graph_log_density_matches_numpy():
    """The compiled model's log density differs from the NumPy likelihood plus the Normal
    prior by a constant (binomial coefficients, row shifts): compare two points."""
    pytest.importorskip("pymc")
    model = RateGridModel(degree=3, grid_nodes=21, grid_limit=10.0, broken=False)
    data = _data()
    pm_model = model.build(model.inputs(data))
    logp = pm_model.compile_logp()
    s_idx, t_idx = np.nonzero(data.n.values > 0)
    rng = np.random.default_rng(2)
    values = []
    for _ in range(2):
        coef = rng.normal(0, 1.5, (2, model.basis.shape[1]))
        post = _posterior(coef[None, None], ["A", "B"])
        ll = model.cell_log_likelihood(post, data, s_idx, t_idx).sum()
        prior = stats.norm(0, 3.0).logpdf(coef).sum()  # repeated trials: sd 3
        values.append((logp({"coef": coef}), ll + prior))
    (g0, n0), (g1, n1) = values
    assert math.isclose(g1 - g0, n1 - n0, rel_tol=1e-9, abs_tol=1e-8)


def test_pruned_graph_matches_the_full_sum_with_many_trials():
    """With ~1000 trials per cell the graph leaves most (row, node) pairs out of its sums; its
    log density still equals the full NumPy sum over all 59 nodes plus the prior, up to a
    constant, at coefficients as far out as the prior reaches (sd 3)."""
    pytest.importorskip("pymc")
    model = RateGridModel()
    rng = np.random.default_rng(5)
    n = rng.integers(900, 1200, (3, 40))
    n[0, :3] = 0  # missing cells
    n[1, :5] = 3  # few trials: nothing pruned on these rows
    p = np.clip(expit(rng.normal(0, 3, (3, 40))), 0, 1)
    p[:, :4] = 0.0
    c = rng.binomial(n, p)
    data = EvalData.from_arrays(n, c)
    inputs = model.inputs(data)
    real = inputs.values["row_real"] > 0
    assert np.count_nonzero(inputs.values["pair_ll"]) < 0.4 * real.sum() * len(model.rates_grid)
    logp = model.build(inputs).compile_logp()
    s_idx, t_idx = np.nonzero(n > 0)
    values = []
    for scale in (0.5, 1.5, 3.0, 3.0):
        coef = rng.normal(0, scale, (3, model.basis.shape[1]))
        post = _posterior(coef[None, None], list(data.dataset["system"].values))
        ll = model.cell_log_likelihood(post, data, s_idx, t_idx).sum()
        prior = stats.norm(0, 3.0).logpdf(coef).sum()  # repeated trials: sd 3
        values.append(logp({"coef": coef}) - (ll + prior))
    assert np.ptp(values) < 1e-8


def test_conditional_rate_draws_match_the_exact_posterior():
    model = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0, tail_terms=0)
    data = _data()
    coef = np.broadcast_to(np.array([1.0, -0.5, -1.0, -2.0]), (1, 20_000, 2, 4)).copy()
    post = _posterior(coef, ["A", "B"])
    p = model.rates(post, data, seed=3, tasks=slice(0, 5))
    grid = model.rates_grid
    logits = model.basis @ coef[0, 0, 0]
    g = np.exp(logits - logsumexp(logits))
    for s, t in [(0, 0), (0, 1), (0, 2), (1, 3), (0, 4)]:
        n, c = data.n.values[s, t], data.c.values[s, t]
        exact = g * stats.binom.pmf(c, n, grid)
        exact /= exact.sum()
        counts = np.array([(p[0, :, s, t] == r).sum() for r in grid])
        assert counts.sum() == p.shape[1]  # every draw is a grid node
        keep = exact * p.shape[1] >= 5
        chi2 = stats.chisquare(counts[keep], exact[keep] / exact[keep].sum() * counts[keep].sum())
        assert chi2.pvalue > 1e-3, (s, t)
    # same seed, same draws
    assert np.array_equal(p, model.rates(post, data, seed=3, tasks=slice(0, 5)))


def test_single_trial_data_warns():
    pytest.importorskip("pymc")
    n = np.ones((2, 6), int)
    c = np.array([[1, 0, 1, 1, 0, 0], [0, 0, 1, 0, 0, 1]])
    with pytest.warns(UserWarning, match="at most one trial"):
        RateGridModel().fit(EvalData.from_arrays(n, c), draws=50, tune=50, chains=1,
                            check=False)


@pytest.mark.slow
def test_recovery_of_an_atom_and_a_spread_tail():
    """Rates: 30 % never solved, the rest logit-normal N(-3, 2): the fit's population pass@k
    at k = 1, 16 and 256 covers the truth of the generating distribution, and so does its mass
    below p = 0.003 (~0.1 / n). The atom itself is not identified apart from the grid's tail
    below 1 / n (32 trials cannot tell p = 0 from p = 1e-5), so only the sum is checked."""
    rng = np.random.default_rng(7)
    tasks, trials = 400, 32
    dead = rng.random(tasks) < 0.3
    p = np.where(dead, 0.0, expit(rng.normal(-3.0, 2.0, tasks)))
    n = np.full((1, tasks), trials)
    data = EvalData.from_arrays(n, rng.binomial(n, p[None, :]))
    model = RateGridModel()
    post = model.fit(data, draws=500, tune=500, chains=2, seed=3, check=False)
    k = np.array([1, 16, 256])
    z = np.random.default_rng(8).normal(-3.0, 2.0, 400_000)
    truth = 0.7 * (1 - (1 - expit(z)[:, None]) ** k).mean(axis=0)
    pop = post.pass_at_k(k, estimand="population").sel(system=data.systems[0])
    lo = pop.quantile(0.005, ("chain", "draw")).values
    hi = pop.quantile(0.995, ("chain", "draw")).values
    assert np.all((lo <= truth) & (truth <= hi)), (lo, truth, hi)
    g = model.rate_distribution(post.posterior)
    low = g.where(g["rate"] < 0.003, 0.0).sum("rate")
    true_low = 0.3 + 0.7 * stats.norm.cdf((np.log(0.003 / 0.997) + 3.0) / 2.0)
    assert low.quantile(0.005).item() <= true_low <= low.quantile(0.995).item(), (
        low.mean().item(), true_low)


def _ranks(replicates: int, seed: int) -> dict[str, np.ndarray]:
    """SBC of the model's own functional of g_s (population="independent"); the Bayesian bootstrap
    population is a nonparametric posterior of the task population, checked on real data and
    in benchmarks/validity/paired_simulation.py instead."""
    model = RateGridModel(population="independent")
    ranks: dict[str, list[int]] = {"coef0": [], "pop@1": [], "pop@8": []}
    k = np.array([1, 8])
    for r in range(replicates):
        data, truth = model.simulate_prior(2, 30, 8, seed=seed + r)
        post = model.fit(data, draws=198, tune=300, chains=2, seed=r, check=False)
        draws = post.posterior["coef"].isel(system=0, term=0).stack(s=("chain", "draw")).values
        ranks["coef0"].append(rank_statistics(truth["coef"][:1, 0], draws[:, None])[0])
        pop = post.pass_at_k(k, estimand="population").isel(system=0)
        flat = pop.stack(s=("chain", "draw")).transpose("s", "k").values
        exact = truth["g"][0] @ (1 - (1 - model.rates_grid[:, None]) ** k)
        for j, name in enumerate(("pop@1", "pop@8")):
            ranks[name].append(rank_statistics(exact[j:j + 1], flat[:, j:j + 1])[0])
    return {name: np.array(v) for name, v in ranks.items()}


@pytest.mark.slow
def test_sbc_ranks_are_not_degenerate():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranks = _ranks(8, seed=300)
    for name, r in ranks.items():
        assert np.ptp(r) > 10, name


@pytest.mark.slow
def test_sbc_ranks_uniform():
    ranks = _ranks(100, seed=3000)
    for name, r in ranks.items():
        assert rank_uniformity(r, n_ranks=99, bins=10).pvalue > 0.001, name


def _tasks_case():
    """Counts with repeated (n, c) rows (weights above 1), a missing cell, and one fixed
    draw of g_s repeated 20,000 times, so the draws are those of Y given g."""
    model = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0, tail_terms=0)
    rng = np.random.default_rng(8)
    n = np.array([[6] * 12 + [0, 3, 3], [2] * 8 + [9] * 7])
    c = rng.binomial(n, [[0.3], [0.7]])
    data = EvalData.from_arrays(n, c, systems=["A", "B"])
    coef = np.broadcast_to(np.array([[0.5, -1.0, 1.5, -2.0], [-0.7, 0.4, -1.0, 0.5]]),
                           (1, 20_000, 2, 4)).copy()
    return model, data, _posterior(coef, ["A", "B"])


def test_tasks_estimand_counts_per_node_match_the_cell_draws():
    """The per-row multinomial counts give the law of the per-cell draws (Model._tasks_curve,
    one categorical per cell): the exact conditional mean and variance of the task average
    given g (from an independent sum over cells with scipy's binomial pmf), and a two-sample
    KS test against the per-cell path."""
    from evalbayes.models._base import Model

    model, data, post = _tasks_case()
    k = np.array([1.0, 4.0, 64.0])
    fast = model.curve(post, data, k, "pass@k", "tasks", False, seed=5).values[0]
    cell = Model._tasks_curve(model, post, data, k, "pass@k", False, 5)[0]
    grid = model.rates_grid
    n, c = data.n.values, data.c.values
    for s in range(2):
        logits = model.basis @ post["coef"].values[0, 0, s]
        g = np.exp(logits - logsumexp(logits))
        seen = np.flatnonzero(n[s] > 0)
        for j, kj in enumerate(k):
            f = 1 - (1 - grid) ** kj
            mean = var = 0.0
            for t in seen:
                p_t = g * stats.binom.pmf(c[s, t], n[s, t], grid)
                p_t /= p_t.sum()
                mean += p_t @ f / len(seen)
                var += (p_t @ f**2 - (p_t @ f) ** 2) / len(seen) ** 2
            x = fast[:, s, j]
            se = math.sqrt(var / len(x))
            assert abs(x.mean() - mean) < 4.5 * se
            # sample variance of 20,000 near-normal draws: relative s.e. sqrt(2 / 20,000)
            assert abs(x.var(ddof=1) / var - 1) < 5 * math.sqrt(2 / len(x))
            assert stats.ks_2samp(x, cell[:, s, j]).pvalue > 1e-3


def test_tasks_estimand_of_both_metrics_comes_from_one_set_of_draws():
    model, data, post = _tasks_case()
    k = np.array([1.0, 2.0, 8.0])
    both = model.curves(post, data, k, ("pass@k", "pass^k"), "tasks", seed=2)
    for metric in ("pass@k", "pass^k"):
        alone = model.curve(post, data, k, metric, "tasks", False, seed=2)
        np.testing.assert_array_equal(both[metric].values, alone.values)
    # pass@1 and pass^1 are both the average rate: one set of draws gives one number
    np.testing.assert_allclose(both["pass@k"].values[..., 0], both["pass^k"].values[..., 0],
                               rtol=0, atol=1e-12)
    again = model.curve(post, data, k, "pass@k", "tasks", False, seed=2)
    other = model.curve(post, data, k, "pass@k", "tasks", False, seed=3)
    np.testing.assert_array_equal(again.values, both["pass@k"].values)
    assert not np.array_equal(other.values, again.values)


def test_rate_draws_pick_the_node_of_a_direct_count_below_the_uniform():
    """Model.rates finds each cell's node by a binary search; the same uniforms counted against
    every cdf value (the direct inversion) give the same nodes, draw for draw."""
    model = RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0)
    data = _data()
    coef = np.random.default_rng(6).normal(0, 2, (2, 300, 2, model.basis.shape[1]))
    post = _posterior(coef, ["A", "B"])
    tasks = slice(1, 5)
    got = model.rates(post, data, seed=4, tasks=tasks)
    grid = model.rates_grid
    u = np.random.default_rng([4, 11, 1]).random(got.shape)
    n, c = data.n.values[:, tasks], data.c.values[:, tasks]
    for s in range(2):
        logits = np.einsum("cdt,jt->cdj", coef[:, :, s], model.basis)
        for t in range(n.shape[1]):
            post_j = np.exp(logits - logsumexp(logits, axis=-1, keepdims=True))
            post_j = post_j * stats.binom.pmf(c[s, t], n[s, t], grid)
            cdf = np.cumsum(post_j, axis=-1) / post_j.sum(axis=-1, keepdims=True)
            node = np.minimum((cdf < u[:, :, s, t, None]).sum(axis=-1), len(grid) - 1)
            # the model's cdf is computed in another order (max-shifted logs), so a uniform
            # within rounding of a cdf value may fall on the other side: allow 1e-3 of draws
            assert np.mean(grid[node] != got[:, :, s, t]) < 1e-3, (s, t)


def test_ten_single_trial_tasks_all_solved_are_no_surer_than_wilson_by_default():
    """Issue 27 (SWE-bench Verified at 10 tasks, one trial each): with the default
    coef_prior="auto" (1.25 for these one-trial systems: the implied prior of the mean rate
    about uniform) a system that solved all 10 gets a population pass@1 interval no narrower
    than Wilson's score interval (statsmodels), reaching at least as low, and one that solved
    none reaches at least Wilson's upper end. coef_prior = 3 gave [0.84, 1]."""
    from statsmodels.stats.proportion import proportion_confint

    n = np.ones((2, 10), dtype=int)
    c = np.zeros((2, 10), dtype=int)
    c[0] = 1
    data = EvalData.from_arrays(n, c, systems=["all", "none"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = RateGridModel().fit(data, draws=2000, chains=4, seed=0)
    draws = post.pass_at_k(1, estimand="population").sel(k=1)
    lo_all, hi_all = np.quantile(draws.sel(system="all").values.ravel(), [0.025, 0.975])
    hi_none = np.quantile(draws.sel(system="none").values.ravel(), 0.975)
    wilson_lo, wilson_hi = proportion_confint(10, 10, alpha=0.05, method="wilson")
    assert wilson_lo == pytest.approx(10 / (10 + stats.norm.ppf(0.975) ** 2))  # 0.722
    assert lo_all <= wilson_lo
    assert hi_all - lo_all >= wilson_hi - wilson_lo
    assert hi_none >= proportion_confint(0, 10, alpha=0.05, method="wilson")[1]  # 0.278


# ---------------------------------------------------------------- coef_prior="auto" (issue 27)
def _mixed_design() -> EvalData:
    """System "one": one trial on every observed task (a missing cell too); "many": four
    trials; "mixed": one trial on most tasks, two on one."""
    n = np.array([[1, 1, 1, 0, 1, 1], [4, 4, 4, 4, 4, 4], [1, 1, 2, 1, 1, 1]])
    c = np.array([[1, 0, 1, 0, 1, 1], [0, 1, 4, 2, 3, 4], [0, 1, 1, 1, 0, 1]])
    return EvalData.from_arrays(n, c, systems=["one", "many", "mixed"], tasks=list("abcdef"))


def test_auto_coef_prior_is_1_25_only_where_every_task_has_one_trial():
    data = _mixed_design()
    assert RateGridModel().coef_prior == "auto"
    assert RateGridModel().system_coef_prior(data.n.values).tolist() == [1.25, 3.0, 3.0]
    assert RateGridModel(coef_prior=2).system_coef_prior(data.n.values).tolist() == [2.0] * 3


@pytest.mark.parametrize("value", ["auto", 1.25, 3.0])
def test_coef_prior_config_round_trip(value):
    model = RateGridModel(coef_prior=value)
    config = model.to_config()
    assert config["coef_prior"] == value
    assert model_from_config(config) == model
    assert model_from_config(json.loads(json.dumps(config))) == model


def test_coef_prior_other_strings_raise():
    with pytest.raises(ValueError, match="coef_prior"):
        RateGridModel(coef_prior="flat")


def test_implied_prior_of_a_one_trial_systems_mean_rate_is_uniform():
    """The prior of a system's mean rate ``sum_j g_s(p_j) p_j`` (prior draws of the fit's
    coefficients) against the uniform's deciles: within 0.01 for the one-trial system, and
    still U-shaped (about a quarter below 0.05) for the repeated-trial ones (sd 3); the
    prior predictive check of the same model gives the same split."""
    data = _mixed_design()
    model = RateGridModel()
    prior = model.prior_draws(data, draws=200_000, seed=0)
    mean = np.exp(model.log_weights(prior)) @ model.rates_grid  # (1, draw, system)
    deciles = np.arange(1, 10) / 10
    one = np.quantile(mean[0, :, 0], deciles)
    assert np.abs(one - stats.uniform.ppf(deciles)).max() < 0.01
    for s in (1, 2):
        assert 0.2 < np.mean(mean[0, :, s] < 0.05) < 0.3
    table = model.prior_predictive(data, k=[1], draws=20_000, seed=1).table.set_index("system")
    assert table.loc["one", "below 0.05"] == pytest.approx(0.04, abs=0.01)
    assert table.loc["many", "below 0.05"] > 0.2 and table.loc["mixed", "below 0.05"] > 0.2


def test_simulated_prior_takes_the_design_s_sd():
    model = RateGridModel()
    width = model.basis.shape[1]
    for trials, sd in ((1, 1.25), (4, 3.0)):
        _, truth = model.simulate_prior(systems=2, tasks=5, trials=trials, seed=3)
        reference = np.random.default_rng(3).normal(0.0, sd, (2, width))
        np.testing.assert_allclose(truth["coef"], reference, rtol=1e-15)


def test_smc_draws_of_each_system_are_those_of_its_own_sd():
    """SMC streams are keyed by the system's label: under "auto" the repeated-trial systems'
    draws are exactly those of coef_prior = 3 with the same seed, and the one-trial system's
    those of coef_prior = 1.25."""
    data = _mixed_design()
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for value in ("auto", 3.0, 1.25):
            post = RateGridModel(coef_prior=value).fit(data, chains=2, draws=200, seed=4,
                                                       check=False)
            fits[value] = post.posterior["coef"]
    auto = fits["auto"]
    assert np.array_equal(auto.sel(system=["many", "mixed"]).values,
                          fits[3.0].sel(system=["many", "mixed"]).values)
    assert np.array_equal(auto.sel(system="one").values, fits[1.25].sel(system="one").values)
    assert not np.array_equal(auto.sel(system="one").values, fits[3.0].sel(system="one").values)


def test_many_trial_posterior_is_unchanged_from_coef_prior_3():
    """A fit where every system has repeated trials: the default's posterior is exactly that
    of coef_prior = 3 with the same seed (SMC), and the NUTS graph is the same graph (its log
    density equal at random points)."""
    n = np.full((2, 8), 4)
    c = np.array([[0, 0, 1, 2, 4, 4, 3, 0], [4, 4, 4, 3, 4, 2, 4, 4]])
    data = EvalData.from_arrays(n, c, systems=["weak", "strong"])
    posts = [RateGridModel(coef_prior=value).fit(data, chains=2, draws=300, seed=7,
                                                 check=False) for value in ("auto", 3.0)]
    assert np.array_equal(posts[0].posterior["coef"].values, posts[1].posterior["coef"].values)
    pytest.importorskip("pymc")
    inputs = [RateGridModel(coef_prior=value).inputs(data) for value in ("auto", 3.0)]
    assert inputs[0].shape_key == inputs[1].shape_key and "coef_sd" not in inputs[0].values
    logps = [RateGridModel().build(inputs[0]).compile_logp(),
             RateGridModel(coef_prior=3.0).build(inputs[1]).compile_logp()]
    rng = np.random.default_rng(0)
    for _ in range(3):
        point = {"coef": rng.normal(0, 3, (2, RateGridModel().basis.shape[1]))}
        assert logps[0](point) == logps[1](point)


def test_graph_log_density_takes_each_system_s_sd():
    """NUTS path with systems of both kinds: the compiled log density equals the NumPy
    likelihood plus Normal(0, 1.25) on the one-trial system's coefficients and Normal(0, 3)
    on the others' (scipy), up to one constant."""
    pytest.importorskip("pymc")
    model = RateGridModel(degree=3, grid_nodes=21, grid_limit=10.0)
    data = _mixed_design()
    inputs = model.inputs(data)
    assert inputs.values["coef_sd"].tolist() == [1.25, 3.0, 3.0]
    logp = model.build(inputs).compile_logp()
    s_idx, t_idx = np.nonzero(data.n.values > 0)
    sds = np.array([[1.25], [3.0], [3.0]])
    rng = np.random.default_rng(6)
    values = []
    for _ in range(3):
        coef = rng.normal(0, 2.0, (3, model.basis.shape[1]))
        post = _posterior(coef[None, None], ["one", "many", "mixed"])
        ll = model.cell_log_likelihood(post, data, s_idx, t_idx).sum()
        values.append(logp({"coef": coef}) - ll - stats.norm(0, sds).logpdf(coef).sum())
    assert np.ptp(values) < 1e-8



@pytest.mark.parametrize("shape", [(3, 5, 59), (2, 7), (4, 1), (1000, 61)])
def test_log_normalise_is_scipy_logsumexp_to_the_bit(shape):
    """log_normalise (the softmax of log g_s) gives the numbers of ``x - logsumexp(x)`` to the
    bit, ties at the maximum included (integer-valued rows tie often)."""
    from evalbayes.models.rate_grid._model import log_normalise

    rng = np.random.default_rng(len(shape) * 7 + shape[-1])
    for x in (rng.normal(0, 10, shape), np.round(rng.normal(0, 3, shape))):
        x[..., 0] = x.max(axis=-1)  # a tie with the maximum in every row
        expected = x - logsumexp(x, axis=-1, keepdims=True)
        np.testing.assert_array_equal(log_normalise(x.copy()), expected)


def test_log_normalise_in_blocks_is_scipy_logsumexp_to_the_bit(monkeypatch):
    """Taken in blocks of rows (the last one short), in place in a contiguous array, and
    whole on a non-contiguous one (written through the view): the numbers of
    ``x - logsumexp(x)``."""
    from evalbayes.models.rate_grid import _model as rate_grid

    monkeypatch.setattr(rate_grid, "_BLOCK", 7 * 59 + 5)  # 7 rows a block, 83 rows: 12 blocks
    rng = np.random.default_rng(12)
    x = rng.normal(0, 10, (83, 59))
    x[::3, 4] = x[::3].max(axis=-1)  # ties with the maximum
    expected = x - logsumexp(x, axis=-1, keepdims=True)
    y = x.reshape(1, 83, 59).copy()
    assert rate_grid.log_normalise(y) is y
    np.testing.assert_array_equal(y[0], expected)
    z = np.asfortranarray(x)
    rate_grid.log_normalise(z[:, :])
    np.testing.assert_array_equal(z, expected)


def test_derived_quantities_in_blocks_of_draws_are_those_of_the_whole(monkeypatch):
    """The population curve, the rows' conditional expectations, the cells' log-likelihoods
    and the "tasks" curve, taken a few draws at a time: the numbers of the direct formulas on
    the whole array (``exp(log g) @ f``; ``exp(post - max) @ f / sum``; SciPy's ``logsumexp``
    of ``log g + log Binomial``), and the same whatever the block."""
    from evalbayes.metrics._pass import prob_curve
    from evalbayes.models.rate_grid import _model as rate_grid

    model, data, post = _tasks_case()
    rng = np.random.default_rng(2)
    post = post.isel(draw=slice(0, 300)).copy(deep=True)
    post["coef"] = post["coef"] + rng.normal(0, 0.5, post["coef"].shape)
    k = np.array([1.0, 4.0])
    log_g = model.log_weights(post)
    f = prob_curve(model.rates_grid, k, "pass@k")
    rows, _ = rate_grid._row_table(data.n.values, data.c.values)
    loglik = grid_log_likelihood(rows[:, 1], rows[:, 2], model.rates_grid)
    cond = log_g[:, :, rows[:, 0], :] + loglik
    cond = np.exp(cond - cond.max(axis=-1, keepdims=True))
    expected_rows = (cond @ f) / cond.sum(axis=-1, keepdims=True)
    s_idx, t_idx = np.nonzero(data.n.values > 0)
    cell = grid_log_likelihood(data.n.values[s_idx, t_idx], data.c.values[s_idx, t_idx],
                               model.rates_grid)
    expected_cells = logsumexp(log_g[:, :, s_idx, :] + cell, axis=-1)
    whole = {
        "population": model.population_curve(post, data, k, "pass@k"),
        "rows": model.row_expectations(post, data, k, "pass@k").values,
        "tasks": model.curve(post, data, k, "pass@k", "tasks", False, seed=3).values,
        "cells": model.cell_log_likelihood(post, data, s_idx, t_idx),
    }
    np.testing.assert_array_equal(whole["cells"], expected_cells)
    np.testing.assert_array_equal(whole["population"], np.exp(log_g) @ f)
    np.testing.assert_array_equal(whole["rows"], expected_rows)
    monkeypatch.setattr(rate_grid, "_BLOCK", 3 * 2 * 15 + 1)  # 3 draws of both systems
    monkeypatch.setattr(rate_grid, "_KERNEL_BLOCK", 1)  # 64 draws a call: 5 calls
    np.testing.assert_array_equal(model.population_curve(post, data, k, "pass@k"),
                                  whole["population"])
    np.testing.assert_array_equal(model.row_expectations(post, data, k, "pass@k").values,
                                  whole["rows"])
    np.testing.assert_array_equal(
        model.curve(post, data, k, "pass@k", "tasks", False, seed=3).values, whole["tasks"])
    np.testing.assert_array_equal(model.cell_log_likelihood(post, data, s_idx, t_idx),
                                  whole["cells"])


def test_shared_log_weights_are_computed_once_and_read_only(monkeypatch):
    """Within shared_log_weights one posterior's log g_s is computed once and reused (the
    same array, which no caller may change); outside, each call computes afresh; a summary's
    curves equal those computed with no sharing."""
    from evalbayes.models._base import Model
    from evalbayes.models.rate_grid import _model as rate_grid

    model, data, post = _tasks_case()
    calls = []
    real = rate_grid.log_normalise
    monkeypatch.setattr(rate_grid, "log_normalise", lambda x: calls.append(1) or real(x))
    with rate_grid.shared_log_weights():
        first = model.log_weights(post)
        again = model.log_weights(post)
        other = RateGridModel(degree=model.degree, grid_nodes=model.grid_nodes,
                              grid_limit=model.grid_limit, tail_terms=0, coef_prior=2.0)
        other.log_weights(post)
    assert again is first and len(calls) == 2 and not first.flags.writeable
    with pytest.raises(ValueError):
        first[...] = 0.0
    assert model.log_weights(post) is not first and len(calls) == 3
    coef = post["coef"].transpose("chain", "draw", "system", "term").values
    logits = coef @ model.basis.T
    np.testing.assert_array_equal(first, logits - logsumexp(logits, axis=-1, keepdims=True))
    k = np.array([1.0, 4.0])
    for estimand in ("tasks", "population"):
        shared = model.curves(post, data, k, ("pass@k", "pass^k"), estimand, seed=3)
        for metric in ("pass@k", "pass^k"):
            # the template's curve, outside any shared block: every call computes its own
            alone = Model.curve(model, post, data, k, metric, estimand, False, seed=3)
            np.testing.assert_array_equal(shared[metric].values, alone.values)


def test_shared_row_expectations_are_those_of_a_call_alone():
    """Within ``sharing()`` the rows' conditional expectations of both metrics come from one
    pass (and ``log g_s`` from one softmax): bitwise the numbers of separate calls, read-only,
    and computed once."""
    from evalbayes.models.rate_grid import _model as rate_grid

    model, data, post = _tasks_case()
    k = np.array([1.0, 3.0])
    alone = {m: model.row_expectations(post, data, k, m) for m in ("pass@k", "pass^k")}
    calls = []
    original = rate_grid.log_normalise
    rate_grid.log_normalise = lambda x: calls.append(1) or original(x)
    try:
        with model.sharing():
            shared = {m: model.row_expectations(post, data, k, m) for m in ("pass^k", "pass@k")}
            again = model.row_expectations(post, data, k, "pass@k")
    finally:
        rate_grid.log_normalise = original
    assert len(calls) == 1 and again is shared["pass@k"]
    for m in alone:
        np.testing.assert_array_equal(shared[m].values, alone[m].values)
        np.testing.assert_array_equal(shared[m].row_of_cell, alone[m].row_of_cell)
        assert not shared[m].values.flags.writeable
