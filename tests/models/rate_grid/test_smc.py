"""The rate grid's sequential Monte Carlo (``method="smc"``): its likelihood kernel against a
direct NumPy sum, its posterior against importance sampling from the prior (pass@k means and
sds, both estimands, within Monte Carlo error), reproducibility, per-system streams, the
default method and the warning of a fit that misses the bars."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from evalbayes import EvalData
from evalbayes.inference import SamplerConfig
from evalbayes.models import RateGridModel
from evalbayes.models.rate_grid._model import _PRUNE, grid_log_likelihood
from evalbayes.models.rate_grid._smc import SystemRows, _next_beta, _systematic, system_seed
from evalbayes.results import ConvergenceWarning
from evalbayes.results._diagnostics import convergence_diagnostics, ess_bulk

K = np.array([1.0, 4.0, 16.0])

# Two systems, eight tasks, four trials each: a posterior wide enough for importance sampling
# from the prior to be exact within a few thousand effective draws.
N = np.full((2, 8), 4)
C = np.array([[0, 0, 1, 2, 4, 4, 3, 0],
              [4, 4, 4, 3, 4, 2, 4, 4]])


def _direct_loglik(coef: np.ndarray, basis: np.ndarray, n: np.ndarray, c: np.ndarray,
                   rates: np.ndarray) -> np.ndarray:
    """``sum_t log sum_j g(p_j) Binomial(c_t | n_t, p_j)`` per coefficient row, in NumPy over
    every node (no pruning), each distinct ``(n, c)`` once times its count."""
    (n, c), weight = np.unique(np.stack([n, c]), axis=1, return_counts=True)
    logits = coef @ basis.T
    log_g = logits - logsumexp(logits, axis=1, keepdims=True)
    cell = grid_log_likelihood(n, c, rates)  # (row, node)
    terms = log_g[:, None, :] + cell[None]
    top = terms.max(axis=2, keepdims=True)
    return (top[..., 0] + np.log(np.exp(terms - top).sum(axis=2))) @ weight


def _functionals(coef: np.ndarray, model: RateGridModel, n: np.ndarray, c: np.ndarray
                 ) -> dict[str, np.ndarray]:
    """Per coefficient row: population pass@k ``sum_j g_j (1 - (1 - p_j)^k)`` and the tasks
    estimand's Rao-Blackwellised mean ``mean_t E[1 - (1 - p_t)^k | g, n_t, c_t]``."""
    (n, c), weight = np.unique(np.stack([n, c]), axis=1, return_counts=True)
    rates = model.rates_grid
    logits = coef @ model.basis.T
    log_g = logits - logsumexp(logits, axis=1, keepdims=True)
    f = 1.0 - (1.0 - rates[:, None]) ** K[None, :]  # (node, k)
    population = np.exp(log_g) @ f
    post = log_g[:, None, :] + grid_log_likelihood(n, c, rates)[None]
    post = np.exp(post - post.max(axis=2, keepdims=True))
    post /= post.sum(axis=2, keepdims=True)
    tasks = np.einsum("drk,r->dk", post @ f, weight / weight.sum())
    return {"population": population, "tasks": tasks}


def test_kernel_log_likelihood_matches_direct_sum():
    model = RateGridModel()
    rng = np.random.default_rng(3)
    n = np.array([1, 1, 5, 64, 64, 1100, 1100, 7])
    c = np.array([0, 1, 2, 0, 64, 17, 1099, 3])
    weight = np.array([3, 1, 2, 1, 4, 1, 2, 1])
    coef = rng.normal(0.0, 3.0, (50, model.basis.shape[1]))
    coef[0] = 0.0
    coef[1, -2] = 40.0  # almost all mass on the atom at 0: rows without c = 0 underflow
    rows = SystemRows.from_loglik(grid_log_likelihood(n, c, model.rates_grid), weight, _PRUNE)
    got = rows.log_likelihood(coef, model.basis) + rows.offset
    expect = _direct_loglik(coef, model.basis, np.repeat(n, weight), np.repeat(c, weight),
                            model.rates_grid)
    assert np.allclose(got, expect, rtol=1e-11, atol=1e-8)


def test_next_beta_keeps_half_the_ess_and_systematic_resampling():
    ll = np.random.default_rng(0).normal(0.0, 30.0, 1000)
    beta = _next_beta(ll, 0.0, 0.5)
    w = np.exp(beta * (ll - ll.max()))
    assert 0 < beta < 1
    assert abs(w.sum() ** 2 / (w * w).sum() / 1000 - 0.5) < 1e-6
    assert _next_beta(ll * 1e-6, 0.3, 0.5) == 1.0
    # systematic resampling: each index appears floor or ceil of P w_i times, sorted
    weights = np.array([0.1, 0.0, 0.55, 0.35])
    idx = _systematic(weights, 0.37)
    counts = np.bincount(idx, minlength=4)
    assert np.all(np.abs(counts - 4 * weights) < 1) and np.all(np.diff(idx) >= 0)


@pytest.fixture(scope="module")
def smc_fit():
    data = EvalData.from_arrays(N, C, systems=["weak", "strong"])
    return RateGridModel().fit(data, chains=4, draws=1000, seed=5)


def test_posterior_matches_importance_sampling(smc_fit):
    """Means and sds of pass@k (k = 1, 4, 16), both estimands, per system: SMC against
    self-normalised importance sampling from the prior (100k draws, ~5k effective), each
    difference within 4 combined Monte Carlo standard errors (SMC's from its bulk ESS, IS's
    from its weights: Kish's effective size)."""
    model = smc_fit.model
    assert smc_fit.sampler.method == "smc"
    coef_smc = smc_fit.posterior["coef"].transpose("chain", "draw", "system", "term").values
    rng = np.random.default_rng(11)
    draws = 100_000
    checked = 0
    for s in range(2):
        prior = rng.normal(0.0, 3.0, (draws, model.basis.shape[1]))  # n = 4: sd 3
        log_w = _direct_loglik(prior, model.basis, N[s], C[s], model.rates_grid)
        w = np.exp(log_w - log_w.max())
        w /= w.sum()
        ess_is = 1.0 / (w * w).sum()
        assert ess_is > 3000
        ref = _functionals(prior, model, N[s], C[s])
        got = _functionals(coef_smc[:, :, s].reshape(-1, coef_smc.shape[-1]), model, N[s], C[s])
        for estimand in ("population", "tasks"):
            for j in range(len(K)):
                f_is, f_smc = ref[estimand][:, j], got[estimand][:, j]
                mean_is = w @ f_is
                var_is = w @ (f_is - mean_is) ** 2
                m4_is = w @ (f_is - mean_is) ** 4
                ess_smc = float(ess_bulk(f_smc.reshape(4, -1)))
                mean_smc, var_smc = f_smc.mean(), f_smc.var()
                m4_smc = ((f_smc - mean_smc) ** 4).mean()
                se_mean = np.sqrt(var_is / ess_is + var_smc / ess_smc)
                se_sd = np.sqrt((m4_is - var_is**2) / (4 * var_is * ess_is)
                                + (m4_smc - var_smc**2) / (4 * var_smc * ess_smc))
                assert abs(mean_smc - mean_is) < 4 * se_mean, (s, estimand, K[j])
                assert abs(np.sqrt(var_smc) - np.sqrt(var_is)) < 4 * se_sd, (s, estimand, K[j])
                checked += 1
    assert checked == 12


def test_fit_passes_diagnostics_and_records_stages(smc_fit):
    diag = smc_fit.diagnostics(warn=False)
    assert diag.passed, diag.problems
    stats = smc_fit.sample_stats
    assert list(stats["system"].values) == ["weak", "strong"]
    assert np.all(stats["smc_stages"].values >= 1) and np.all(stats["smc_passed"].values)
    assert smc_fit.posterior["coef"].dims == ("chain", "draw", "system", "term")
    assert smc_fit.posterior["coef"].shape == (4, 1000, 2, smc_fit.model.basis.shape[1])


def test_fit_reuses_the_bars_check_diagnostics(smc_fit):
    """The fit's R-hat and ESS come from SMC's own bars check (not computed twice): they
    equal those computed afresh from the saved draws."""
    assert smc_fit._memo["known diagnostics"]["coef"].shape == (3, 2, smc_fit.model.basis.shape[1])
    fresh = convergence_diagnostics(smc_fit.posterior, smc_fit.sample_stats, warn=False)
    kept = smc_fit.diagnostics(warn=False)
    assert kept.table["parameter"].tolist() == fresh.table["parameter"].tolist()
    for column in ("rhat", "ess_bulk", "ess_tail"):
        assert np.array_equal(kept.table[column].values, fresh.table[column].values), column


def test_same_seed_same_draws_and_subset_of_systems():
    data = EvalData.from_arrays(N, C, systems=["weak", "strong"])
    model = RateGridModel()
    one = model.fit(data, chains=2, draws=100, seed=1, check=False).posterior["coef"]
    two = model.fit(data, chains=2, draws=100, seed=1, check=False).posterior["coef"]
    other = model.fit(data, chains=2, draws=100, seed=2, check=False).posterior["coef"]
    assert np.array_equal(one.values, two.values)
    assert not np.array_equal(one.values, other.values)
    # a system's stream is keyed by its label: fitting it alone gives the same draws
    alone = model.fit(EvalData.from_arrays(N[1:], C[1:], systems=["strong"]), chains=2,
                      draws=100, seed=1, check=False).posterior["coef"]
    assert np.array_equal(alone.sel(system="strong").values, one.sel(system="strong").values)
    assert system_seed(1, "strong").entropy != system_seed(1, "weak").entropy


def test_default_method_and_broken_tasks():
    assert RateGridModel().default_method == "smc"
    assert RateGridModel(broken=True).default_method == "nutpie"
    data = EvalData.from_arrays(N, C)
    with pytest.raises(ValueError, match="broken"):
        RateGridModel(broken=True).fit(data, method="smc")
    # smc needs no warm-up: tune=0 is accepted
    assert SamplerConfig(method="smc", tune=0).mcmc


def test_too_few_particles_warn():
    """4 x 25 particles cannot reach a bulk ESS of 400: the extra rounds run to their cap and
    the fit's diagnostics warn."""
    data = EvalData.from_arrays(N, C)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = RateGridModel().fit(data, chains=4, draws=25, seed=0)
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert np.all(fit.sample_stats["smc_extra_rounds"].values == 50)
    assert not fit.sample_stats["smc_passed"].values.any()


def test_moves_leave_the_prior_invariant_under_a_mismatched_t():
    """At beta = 0 the target is the prior N(0, 3^2 I): sweeps with a t far from it (centre
    0.5, scale 0.5) must keep prior draws prior draws (means within 5 standard errors of 0,
    variances of 9)."""
    from evalbayes.models.rate_grid._smc_kernel import move

    model = RateGridModel()
    dim, particles = model.basis.shape[1], 20_000
    rows = SystemRows.from_loglik(grid_log_likelihood(np.array([4]), np.array([1]),
                                                      model.rates_grid), np.ones(1), _PRUNE)
    x = np.random.default_rng(8).normal(0.0, 3.0, (particles, dim))
    ll = rows.log_likelihood(x, model.basis)
    chol = 0.5 * np.eye(dim)
    move(x, ll, 0.0, 3.0, np.full(dim, 0.5), chol, np.linalg.inv(chol), 5.0, 3, 4,
         model.basis, rows.row_start, rows.pair_node, rows.pair_lik, rows.pair_ll, rows.row_w)
    assert np.all(np.abs(x.mean(axis=0)) < 5 * 3.0 / np.sqrt(particles))
    assert np.all(np.abs(x.var(axis=0) - 9.0) < 5 * 9.0 * np.sqrt(2 / particles))
    assert np.allclose(ll, rows.log_likelihood(x, model.basis))
