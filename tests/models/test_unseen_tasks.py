"""The pairing's unseen tasks (models/_base.py: unseen_task_reference, posterior_mean_rows):
the Dirichlet-process reference against its closed-form moments, alpha = 0 against the
Bayesian bootstrap, and the models' population differences at few and many tasks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit

from evalbayes import EvalData
from evalbayes.models import BetaBinomialModel, RateGridModel
from evalbayes.models._base import (
    RowExpectations,
    bayesian_bootstrap_weights,
    couple_to_reference,
    posterior_mean_rows,
    unseen_task_reference,
    weighted_row_average,
)


def _one_row_per_cell(x: np.ndarray, chains: int, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """Values (chain, draw, row, 1) constant over draws, one row per cell of ``x`` (system,
    task), and the cells' rows."""
    n_sys, n_task = x.shape
    values = np.broadcast_to(x.reshape(1, 1, -1, 1), (chains, draws, n_sys * n_task, 1)).copy()
    return values, np.arange(n_sys * n_task).reshape(n_sys, n_task)


def test_no_unseen_tasks_is_the_bayesian_bootstrap_exactly():
    rng = np.random.default_rng(8)
    row_of_cell = np.array([[0, 1, 0, -1, 1], [2, 2, -1, 3, 4]])
    values = rng.random((2, 3, 5, 2))
    weights = bayesian_bootstrap_weights(2, 3, 5, seed=1)
    scale = rng.random((2, 3, 5))
    for task_scale in (None, scale):
        assert np.array_equal(
            unseen_task_reference(values, row_of_cell, weights, 0.0, 4, task_scale),
            weighted_row_average(values, row_of_cell, weights, task_scale),
        )


@pytest.mark.parametrize("alpha", [0.5, 2.0, 6.0])
def test_moments_match_the_dirichlet_process_posterior(alpha):
    """For one system the tasks' weights are Dirichlet(1 + alpha / N) (Dirichlet aggregation
    of (w_1..w_N, w_new u_1..w_new u_N) ~ Dirichlet(1, ..., 1, alpha / N, ...)): mean the
    tasks' mean, variance S^2 / (N + alpha + 1); two systems share only w, covariance
    S_AB N / ((N + alpha)(N + alpha + 1)). Tolerances: 5 Monte Carlo standard errors,
    estimated from the draws themselves."""
    rng = np.random.default_rng(0)
    n_task, chains, draws = 8, 4, 50_000
    x = rng.random((2, n_task))
    x[1] = 0.7 * x[0] + 0.3 * rng.random(n_task)
    values, row_of_cell = _one_row_per_cell(x, chains, draws)
    weights = bayesian_bootstrap_weights(chains, draws, n_task, seed=3)
    ref = unseen_task_reference(values, row_of_cell, weights, alpha, seed=3)[..., 0]
    ref = ref.reshape(-1, 2)
    size = len(ref)
    mean = x.mean(axis=1)
    centred = x - mean[:, None]
    var = (centred**2).mean(axis=1) / (n_task + alpha + 1)
    cov = (centred[0] * centred[1]).mean() * n_task / ((n_task + alpha) * (n_task + alpha + 1))
    dev = ref - mean
    for s in range(2):
        assert abs(ref[:, s].mean() - mean[s]) < 5 * ref[:, s].std() / np.sqrt(size)
        sq = dev[:, s] ** 2
        assert abs(sq.mean() - var[s]) < 5 * sq.std() / np.sqrt(size)
    prod = dev[:, 0] * dev[:, 1]
    assert abs(prod.mean() - cov) < 5 * prod.std() / np.sqrt(size)


def test_systems_with_missing_tasks_average_their_own_tasks():
    """A system's unseen-task mean is over its own observed tasks only: with every draw's
    values constant per system, the reference is that constant whatever the weights."""
    row_of_cell = np.array([[0, 0, -1, 0], [-1, 1, 1, 1]])
    values = np.zeros((1, 500, 2, 1))
    values[:, :, 0], values[:, :, 1] = 0.25, 0.75
    weights = bayesian_bootstrap_weights(1, 500, 4, seed=2)
    ref = unseen_task_reference(values, row_of_cell, weights, 3.0, seed=5)
    assert np.allclose(ref[:, :, 0], 0.25, rtol=1e-12)
    assert np.allclose(ref[:, :, 1], 0.75, rtol=1e-12)


def test_seeded_and_checked():
    x = np.random.default_rng(1).random((3, 6))
    values, row_of_cell = _one_row_per_cell(x, 2, 50)
    weights = bayesian_bootstrap_weights(2, 50, 6, seed=0)
    one = unseen_task_reference(values, row_of_cell, weights, 2.0, seed=7)
    assert np.array_equal(one, unseen_task_reference(values, row_of_cell, weights, 2.0, seed=7))
    assert not np.array_equal(one, unseen_task_reference(values, row_of_cell, weights, 2.0, 8))
    for bad in (-1.0, np.inf, np.nan, True, "2"):
        with pytest.raises(ValueError, match="unseen_tasks"):
            unseen_task_reference(values, row_of_cell, weights, bad, seed=7)
    with pytest.raises(ValueError, match="observed task"):
        unseen_task_reference(values, np.array([[0, 1, 2, 3, 4, 5], [-1] * 6, [6] * 6]),
                              weights, 2.0, seed=7)


@pytest.mark.parametrize("cls", [RateGridModel, BetaBinomialModel])
def test_models_check_and_keep_the_setting(cls):
    assert cls().unseen_tasks == 4.0
    assert cls().pairing_concentration == 4.0
    assert cls(unseen_tasks=0).pairing_concentration == 0.0
    assert cls.from_config(cls(unseen_tasks=3.5).to_config()) == cls(unseen_tasks=3.5)
    for bad in (-0.5, np.inf, True, "2"):
        with pytest.raises(ValueError, match="unseen_tasks"):
            cls(unseen_tasks=bad)


def test_posterior_mean_rows_average_the_draws():
    rng = np.random.default_rng(4)
    values, scale = rng.random((2, 3, 4, 2)), rng.random((2, 3, 5))
    out = posterior_mean_rows(RowExpectations(values, np.zeros((1, 5), int), scale))
    assert out.values.shape == values.shape
    assert np.allclose(out.values, values.mean(axis=(0, 1)), rtol=1e-12)
    assert np.allclose(out.task_scale, scale.mean(axis=(0, 1)), rtol=1e-12)


def _bb_fit(tasks: int, seed: int, model: BetaBinomialModel):
    """Two systems with correlated task logits (rho 0.8, sd 2), 4 trials per cell."""
    rng = np.random.default_rng(seed)
    u = rng.multivariate_normal([0.0, 0.3], 4.0 * np.array([[1.0, 0.8], [0.8, 1.0]]), tasks).T
    n = np.full((2, tasks), 4)
    data = EvalData.from_arrays(n, rng.binomial(n, expit(u)), systems=["A", "B"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(data, draws=2000, chains=2, seed=seed)


def _diff_width(model, post) -> float:
    pop = model.curve(post.posterior, post.data, np.array([1]), "pass@k", "population",
                      False, seed=0)[..., 0]
    diff = (pop.sel(system="B") - pop.sel(system="A")).values.ravel()
    return float(np.diff(np.quantile(diff, [0.025, 0.975]))[0])


def test_the_model_couples_to_the_unseen_task_reference():
    """population="paired": the closed-form draws reordered to the ranks of the
    unseen-task reference of the posterior-mean rows (alpha = 0: the Bayesian bootstrap's)."""
    post = _bb_fit(12, 1, BetaBinomialModel())
    k = np.array([1, 3])
    for alpha in (0.0, 2.0):
        model = BetaBinomialModel(unseen_tasks=alpha)
        got = model.curve(post.posterior, post.data, k, "pass@k", "population", False, seed=5)
        exact = model.population_curve(post.posterior, post.data, k, "pass@k")
        rows = posterior_mean_rows(model.row_expectations(post.posterior, post.data, k,
                                                          "pass@k"))
        weights = bayesian_bootstrap_weights(2, 2000, 12, seed=5)
        reference = unseen_task_reference(rows.values, rows.row_of_cell, weights, alpha, 5)
        assert np.array_equal(got.values, couple_to_reference(exact, reference))


def test_unseen_tasks_widen_few_tasks_toward_unpaired_and_leave_many_alone():
    """At 10 tasks alpha = 2 widens the paired difference (the correlation of the ranks falls
    by N / (N + alpha) = 0.83; the exact factor is tested on the reference above) but stays
    within the unpaired interval; at 400 tasks (factor 0.995) the width moves by less than
    2 %."""
    few = _bb_fit(10, 2, BetaBinomialModel())
    paired = _diff_width(BetaBinomialModel(unseen_tasks=0.0), few)
    loose = _diff_width(BetaBinomialModel(unseen_tasks=2.0), few)
    unpaired = _diff_width(BetaBinomialModel(population="independent"), few)
    assert paired < loose <= unpaired
    many = _bb_fit(400, 3, BetaBinomialModel())
    ratio = (_diff_width(BetaBinomialModel(unseen_tasks=2.0), many)
             / _diff_width(BetaBinomialModel(unseen_tasks=0.0), many))
    assert 1.0 <= ratio < 1.02


def test_a_task_factor_multiplies_both_parts():
    """task_scale a_t enters the numerators only (a broken task's f(0) = 0): a factor c on
    every task scales the reference by c, observed and unseen parts alike (same seed, so the
    same weights)."""
    x = np.random.default_rng(6).random((3, 7))
    values, row_of_cell = _one_row_per_cell(x, 2, 40)
    weights = bayesian_bootstrap_weights(2, 40, 7, seed=1)
    plain = unseen_task_reference(values, row_of_cell, weights, 4.0, seed=3)
    scaled = unseen_task_reference(values, row_of_cell, weights, 4.0, seed=3,
                                   task_scale=np.full((2, 40, 7), 0.25))
    assert np.allclose(scaled, 0.25 * plain, rtol=1e-12)


def test_rows_shared_by_many_tasks_keep_the_dirichlet_process_moments():
    """Tasks sharing a row (one trial per task: two rows per system) get their unseen-task
    weights per row (Dirichlet aggregation): the reference keeps the closed-form moments of
    the per-task construction (mean the tasks' mean, variance S^2 / (N + alpha + 1)), and a
    task factor of 1 (the per-cell path) gives the same distribution (two-sample KS)."""
    from scipy.stats import ks_2samp

    rng = np.random.default_rng(11)
    n_task, chains, draws, alpha = 30, 2, 40_000, 4.0
    outcome = (rng.random((2, n_task)) < [[0.3], [0.6]]).astype(int)
    row_of_cell = outcome + np.array([[0], [2]])  # rows 0-1 system 0, rows 2-3 system 1
    row_values = np.array([0.2, 0.9, 0.1, 0.7])
    values = np.broadcast_to(row_values.reshape(1, 1, 4, 1), (chains, draws, 4, 1)).copy()
    weights = bayesian_bootstrap_weights(chains, draws, n_task, seed=1)
    ref = unseen_task_reference(values, row_of_cell, weights, alpha, seed=2)[..., 0]
    ref = ref.reshape(-1, 2)
    cell = row_values[row_of_cell]
    mean = cell.mean(axis=1)
    var = ((cell - mean[:, None]) ** 2).mean(axis=1) / (n_task + alpha + 1)
    for s in range(2):
        dev = ref[:, s] - mean[s]
        assert abs(dev.mean()) < 5 * dev.std() / np.sqrt(len(dev))
        assert abs((dev**2).mean() - var[s]) < 5 * (dev**2).std() / np.sqrt(len(dev))
    other_weights = bayesian_bootstrap_weights(chains, draws, n_task, seed=5)  # independent
    per_cell = unseen_task_reference(values, row_of_cell, other_weights, alpha, seed=3,
                                     task_scale=np.ones((chains, draws, n_task)))
    per_cell = per_cell[..., 0].reshape(-1, 2)
    for s in range(2):
        assert ks_2samp(ref[:, s], per_cell[:, s]).pvalue > 1e-3
def _coupled_difference(x: np.ndarray, alpha: float, marginals: np.ndarray) -> np.ndarray:
    """B - A of ``marginals`` (chain, draw, 2) reordered to the unseen-task reference of the
    task values ``x`` (2, task)."""
    chains, draws = marginals.shape[:2]
    values, row_of_cell = _one_row_per_cell(x, chains, draws)
    weights = bayesian_bootstrap_weights(chains, draws, x.shape[1], seed=11)
    ref = unseen_task_reference(values, row_of_cell, weights, alpha, seed=11)[..., 0]
    coupled = couple_to_reference(marginals, ref)
    return (coupled[..., 1] - coupled[..., 0]).ravel()


def test_identical_results_pair_exactly_and_unseen_tasks_loosen_by_n_over_n_plus_alpha():
    """Two systems with the same task values and the same marginal draws: with alpha = 0 the
    reference ranks the draws identically, so the difference is 0 in every draw; with alpha
    the references' correlation is N / (N + alpha) (test above), and for Gaussian marginals
    the difference's variance is then 2 sigma^2 (1 - N / (N + alpha)), the independent
    reference's value (the Gaussian copula's Pearson correlation equals its rank-based one
    only approximately: tolerance 10 % of the variance, 4 x 20,000 draws)."""
    rng = np.random.default_rng(12)
    n_task = 10
    x = np.tile(rng.random(n_task), (2, 1))
    same = rng.normal(0.5, 0.05, (4, 20_000, 1))
    marginals = np.concatenate([same, same], axis=-1)
    assert np.array_equal(_coupled_difference(x, 0.0, marginals), np.zeros(4 * 20_000))
    other = rng.normal(0.5, 0.05, (4, 20_000, 1))  # same law, drawn apart
    for alpha in (2.0, 10.0):
        diff = _coupled_difference(x, alpha, np.concatenate([same, other], axis=-1))
        expected = 2 * 0.05**2 * (1 - n_task / (n_task + alpha))
        assert diff.var() == pytest.approx(expected, rel=0.10)


def test_independent_results_give_the_unpaired_variance():
    """Two systems whose task values are drawn independently (400 tasks: the observed
    correlation is within ~0.1 of 0): the coupled difference has the variance of the
    unpaired one, sigma_A^2 + sigma_B^2 (closed form for independent Gaussian marginals),
    at every alpha."""
    rng = np.random.default_rng(13)
    x = rng.random((2, 400))
    r = np.corrcoef(x)[0, 1]
    marginals = rng.normal([0.3, 0.6], [0.04, 0.03], (4, 20_000, 2))
    unpaired = 0.04**2 + 0.03**2
    for alpha in (0.0, 4.0):
        diff = _coupled_difference(x, alpha, marginals)
        # the ranks carry the observed correlation r: variance unpaired - 2 r sA sB
        assert diff.var() == pytest.approx(unpaired - 2 * r * 0.04 * 0.03 * 400 / (400 + alpha),
                                           rel=0.05)
        assert diff.var() == pytest.approx(unpaired, rel=0.15)
