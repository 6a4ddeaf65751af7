"""The pairing's Gaussian copula of posterior correlation (models/_base.py:
task_normal_scores, posterior_correlated_normals, copula_reference and the ``coupling``
setting): scores against closed forms, the mixture's moments against scipy's inverse
Wishart, the limits of many tasks and of no correlation, and the models' marginals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from evalbayes import EvalData
from evalbayes.models import BetaBinomialModel, RateGridModel
from evalbayes.models._base import (
    bayesian_bootstrap_weights,
    copula_reference,
    posterior_correlated_normals,
    task_normal_scores,
    unseen_task_reference,
)


def test_normal_scores_closed_form():
    """Distinct values: Phi^-1((rank - 1/2) / N), rank from a double argsort; ties take their
    mid-rank (two 0s and two 1s: ranks 1.5 and 3.5); unobserved cells and constant systems
    score 0."""
    x = np.array([[0.3, 0.1, 0.9, np.nan, 0.5],
                  [0.0, 1.0, 0.0, 1.0, np.nan],
                  [0.7, 0.7, np.nan, 0.7, 0.7]])
    got = task_normal_scores(x)
    ranks = np.argsort(np.argsort([0.3, 0.1, 0.9, 0.5])) + 1
    expected0 = stats.norm.ppf((ranks - 0.5) / 4)
    assert np.allclose(got[0, [0, 1, 2, 4]], expected0, rtol=1e-12)
    assert got[0, 3] == 0.0
    lo, hi = stats.norm.ppf(0.25), stats.norm.ppf(0.75)
    assert np.allclose(got[1], [lo, hi, lo, hi, 0.0], rtol=1e-12)
    assert np.array_equal(got[2], np.zeros(5))


def _iw_correlations(scores: np.ndarray, size: int, seed: int, lam: float = 1.0) -> np.ndarray:
    """Correlation draws of IW(S + 1 + T, lam I + Z Z') from scipy (the independent
    reference)."""
    n_sys, n_task = scores.shape
    sigma = stats.invwishart(df=n_sys + 1 + n_task, scale=lam * np.eye(n_sys) + scores @ scores.T
                             ).rvs(size, random_state=np.random.default_rng(seed))
    sd = np.sqrt(np.diagonal(sigma, axis1=1, axis2=2))
    return sigma / sd[:, :, None] / sd[:, None, :]


@pytest.mark.parametrize(("n_task", "lam"), [(0, 1.0), (6, 1.0), (30, 1.0), (6, 4.0)])
def test_the_mixture_matches_scipy_inverse_wishart(n_task, lam):
    """x_d = standardised draw of N(0, Sigma_d), Sigma_d ~ IW(S + 1 + T, lam I + Z Z'): each x_s
    is N(0, 1); E[x_a x_b] = E[rho_ab]; and the difference x_b - x_a, a scale mixture
    N(0, 2 - 2 rho), has E[(x_b - x_a)^4] = 3 E[(2 - 2 rho)^2]. The rho moments come from
    scipy.stats.invwishart draws. Tolerances: 5 Monte Carlo standard errors (of the
    estimate and the reference together)."""
    rng = np.random.default_rng(n_task)
    cov = np.array([[1.0, 0.7, 0.2], [0.7, 1.0, 0.0], [0.2, 0.0, 1.0]])
    x_tasks = rng.multivariate_normal(np.zeros(3), cov, size=n_task).T
    scores = task_normal_scores(x_tasks) if n_task else np.zeros((3, 0))
    x = posterior_correlated_normals(scores, 4, 25_000, seed=1, prior_tasks=lam).reshape(-1, 3)
    rho = _iw_correlations(scores, 40_000, seed=2, lam=lam)
    for s in range(3):
        assert stats.kstest(x[:, s], "norm").pvalue > 1e-3
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        prod = x[:, a] * x[:, b]
        err = np.hypot(prod.std() / np.sqrt(len(prod)), rho[:, a, b].std() / np.sqrt(len(rho)))
        assert abs(prod.mean() - rho[:, a, b].mean()) < 5 * err
        fourth = (x[:, b] - x[:, a]) ** 4
        ref = 3 * (2 - 2 * rho[:, a, b]) ** 2
        err = np.hypot(fourth.std() / np.sqrt(len(fourth)), ref.std() / np.sqrt(len(ref)))
        assert abs(fourth.mean() - ref.mean()) < 5 * err


def test_no_tasks_is_the_uniform_prior():
    """T = 0: IW(S + 1, I), whose correlations are uniform on [-1, 1] (Barnard et al. 2000):
    E[rho] = 0, E[rho^2] = 1/3, so E[x_a x_b] = 0 and E[(x_b - x_a)^4] = 3 E[(2 - 2 rho)^2]
    = 3 (4 + 4/3) = 16 (closed form)."""
    x = posterior_correlated_normals(np.zeros((4, 0)), 2, 50_000, seed=3).reshape(-1, 4)
    prod = x[:, 0] * x[:, 3]
    assert abs(prod.mean()) < 5 * prod.std() / np.sqrt(len(prod))
    fourth = (x[:, 2] - x[:, 1]) ** 4
    assert abs(fourth.mean() - 16.0) < 5 * fourth.std() / np.sqrt(len(fourth))


def test_many_tasks_give_the_scores_correlation_and_none_give_none():
    """T = 2000 tasks: the posterior of the correlation is within ~0.02 of the scores' own
    (Pearson) correlation, so the draws' correlation is that; with uncorrelated task
    values (a period-4 pattern against a trend) the draws' correlation is the scores' near-0
    one."""
    rng = np.random.default_rng(5)
    x = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], size=2000).T
    scores = task_normal_scores(x)
    target = np.corrcoef(scores)[0, 1]
    z = posterior_correlated_normals(scores, 2, 20_000, seed=4).reshape(-1, 2)
    assert np.corrcoef(z.T)[0, 1] == pytest.approx(target, abs=0.03)
    flat = np.vstack([np.arange(200.0), np.where(np.arange(200) % 4 < 2, 0.0, 1.0)])
    scores = task_normal_scores(flat)
    assert abs(np.corrcoef(scores)[0, 1]) < 0.2
    z = posterior_correlated_normals(scores, 2, 20_000, seed=4).reshape(-1, 2)
    assert np.corrcoef(z.T)[0, 1] == pytest.approx(np.corrcoef(scores)[0, 1], abs=0.03)


def test_seeded_and_checked():
    scores = task_normal_scores(np.random.default_rng(0).random((3, 8)))
    one = posterior_correlated_normals(scores, 2, 300, seed=7)
    assert np.array_equal(one, posterior_correlated_normals(scores, 2, 300, seed=7))
    assert not np.array_equal(one, posterior_correlated_normals(scores, 2, 300, seed=8))
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="prior_tasks"):
            posterior_correlated_normals(scores, 2, 300, seed=7, prior_tasks=bad)


def test_many_systems_take_the_triangular_solve_path():
    """Above ``_BATCHED_SYSTEMS`` systems each draw's factor comes from a triangular solve
    instead of the batched inverse: the same numbers to rounding."""
    import evalbayes.models._base as base

    scores = task_normal_scores(np.random.default_rng(2).random((30, 40)))
    batched = base._BATCHED_SYSTEMS
    try:
        base._BATCHED_SYSTEMS = 100
        one = posterior_correlated_normals(scores, 2, 300, seed=5)
    finally:
        base._BATCHED_SYSTEMS = batched
    assert np.allclose(posterior_correlated_normals(scores, 2, 300, seed=5), one, atol=1e-10)


def test_copula_reference_scores_the_cells_posterior_means():
    """The reference of each k uses the normal scores of E[a_t v[row(s, t)]] over the draws,
    here brute force per cell; the same seed for every k (common random numbers)."""
    rng = np.random.default_rng(9)
    chains, draws, n_task = 2, 50, 6
    row_of_cell = np.array([[0, 1, 0, 1, -1, 0], [2, 3, 4, 2, 3, 4]])
    values = rng.random((chains, draws, 5, 2))
    scale = rng.random((chains, draws, n_task))
    got = copula_reference(values, row_of_cell, seed=3, task_scale=scale)
    for j in range(2):
        cells = np.full((2, n_task), np.nan)
        for s in range(2):
            for t in range(n_task):
                if row_of_cell[s, t] >= 0:
                    cells[s, t] = np.mean(scale[:, :, t] * values[:, :, row_of_cell[s, t], j])
        expected = posterior_correlated_normals(task_normal_scores(cells), chains, draws, 3)
        assert np.allclose(got[..., j], expected, rtol=1e-10)


def test_copula_unseen_part_keeps_alpha_zero_and_seeds():
    """``copula=True`` changes only the unseen part: alpha = 0 is still the Bayesian
    bootstrap exactly, and the result is seeded."""
    rng = np.random.default_rng(1)
    values, row_of_cell = rng.random((2, 30, 4, 1)), np.array([[0, 1, 0], [2, 3, 3]])
    weights = bayesian_bootstrap_weights(2, 30, 3, seed=1)
    plain = unseen_task_reference(values, row_of_cell, weights, 0.0, seed=2)
    assert np.array_equal(unseen_task_reference(values, row_of_cell, weights, 0.0, 2,
                                                copula=True), plain)
    one = unseen_task_reference(values, row_of_cell, weights, 4.0, 2, copula=True)
    assert np.array_equal(one, unseen_task_reference(values, row_of_cell, weights, 4.0, 2,
                                                     copula=True))


def _fit(cls, tasks: int, rho: float, seed: int):
    rng = np.random.default_rng(seed)
    u = rng.multivariate_normal([0.0, 0.4], 4.0 * np.array([[1.0, rho], [rho, 1.0]]), tasks).T
    n = np.full((2, tasks), 4)
    data = EvalData.from_arrays(n, rng.binomial(n, expit(u)), systems=["A", "B"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return data, cls().fit(data, draws=1000, chains=2, seed=seed)


@pytest.mark.parametrize("cls", [RateGridModel, BetaBinomialModel])
def test_models_keep_the_marginals_and_check_the_setting(cls):
    """Every coupling reorders draws only: each system's sorted draws are those of the
    unpaired population (population="independent"), exactly; the setting round-trips and a
    bad value names the choices."""
    data, post = _fit(cls, 15, 0.8, 1)
    k = np.array([1, 2])
    unpaired = cls(population="independent").curve(post.posterior, data, k, "pass@k",
                                                   "population", False, seed=0).values
    flat = np.sort(unpaired.reshape(-1, 2, 2), axis=0)
    for coupling in ("copula", "dirichlet-copula"):
        model = cls(coupling=coupling)
        got = model.curve(post.posterior, data, k, "pass@k", "population", False, seed=0)
        assert np.array_equal(np.sort(got.values.reshape(-1, 2, 2), axis=0), flat)
        assert cls.from_config(model.to_config()) == model
    assert cls().coupling == "dirichlet"
    with pytest.raises(ValueError, match="coupling must be one of dirichlet"):
        cls(coupling="gaussian")
    with pytest.raises(ValueError, match="unseen_tasks > 0"):
        cls(coupling="copula", unseen_tasks=0)
