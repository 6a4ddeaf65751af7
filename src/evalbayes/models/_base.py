"""The model template: what every model shares, and the hooks a model supplies.

A model is a frozen dataclass holding configuration only (priors, pooling, kind).
``fit(data)`` is owned by :class:`Model`: it validates, runs inference and returns an
immutable :class:`~evalbayes.results.Posterior` (or the model's typed subclass,
``posterior_class``). Derived quantities are computed by the template from a few hooks, in
NumPy, so that a saved fit can be reloaded and summarised without PyMC compiling anything.

Hooks (``docs/new_model.md`` walks through a complete model):

``inputs(data) -> ModelInputs`` and ``build(inputs) -> pymc.Model``
    The PyMC model. The template compiles it once per configuration and shape and swaps the
    ``pm.Data`` values for later fits (``run_inference``). A model with an exact posterior
    overrides ``sample(data, sampler)`` instead.
``posterior_vars(data) -> list[str]``
    Variables kept in the ``posterior`` group.
``rates(posterior, data, seed, tasks) -> ndarray (chain, draw, system, len(tasks))``
    Draws of each cell's success probability for a slice of tasks (deterministic given
    ``seed`` and the slice): the "tasks" estimand, ``success_prob`` and the posterior
    predictive are built on it.
``population_curve(posterior, data, k, metric) -> ndarray (chain, draw, system, k)``
    pass@k / pass^k of a new task drawn from the task population; models without a
    population estimand return ``estimands() == ("tasks",)`` and skip it. A model whose
    systems share no parameter can still pair its population comparisons through the tasks
    (``population_pairing``): ``"bootstrap"`` replaces the hook by the Bayesian bootstrap of
    the observed tasks (:func:`bayesian_bootstrap_weights`: one set of task weights per
    draw, shared by every system); ``"coupled"`` keeps the hook's per-system draws and
    reorders them to follow the bootstrap's ranks (:func:`couple_to_reference`), taken from
    ``row_expectations`` where the model has that optional hook.
``cell_log_likelihood(posterior, data, s_idx, t_idx) -> ndarray (chain, draw, cell)``
    Pointwise log-likelihood of the observed cells, for PSIS-LOO.

PyMC, pytensor and nutpie are imported by :mod:`evalbayes.inference` and inside ``build``,
never at module import.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.names import (
    CHUNK_NUMBERS,
    ESTIMANDS,
    SAMPLER_DEFAULTS,
    Method,
    check_count,
    check_coupling,
    check_estimand,
    check_k,
    check_metric,
    check_nonnegative,
    check_population,
)
from evalbayes._core.ranks import average_ranks
from evalbayes.data import EvalData
from evalbayes.inference import (
    SamplerConfig,
    config_hash,
    padded_size,
    resolve_seed,
    run_inference,
)
from evalbayes.metrics._attempts import prob_g_pass_at_k
from evalbayes.results._posterior import Posterior
from evalbayes.results._prior import PriorPredictive, prior_table

__all__ = [
    "Model",
    "ModelInputs",
    "RowExpectations",
    "bayesian_bootstrap_weights",
    "binomial_log_choose",
    "copula_reference",
    "couple_to_reference",
    "observed_cells",
    "population_pairing_of",
    "posterior_correlated_normals",
    "posterior_mean_rows",
    "require_observed",
    "task_chunks",
    "task_normal_scores",
    "unseen_task_reference",
    "weighted_row_average",
]


@dataclass(frozen=True)
class ModelInputs:
    """What ``build`` needs: ``pm.Data`` values and the shape that keys the compile cache.

    Attributes
    ----------
    values : dict of str to numpy.ndarray
        The ``pm.Data`` containers' values, by name (swapped into a cached compiled model).
    shape_key : tuple
        Everything besides the configuration that fixes the compiled graph's shapes
        (padded sizes, counts of systems and tasks, structural switches).
    extra : dict
        Anything else ``build`` needs that is not a ``pm.Data`` value.
    """

    values: dict[str, np.ndarray]
    shape_key: tuple[Any, ...]
    extra: dict[str, Any] = field(default_factory=dict)


def task_chunks(n_draws: int, n_units: int, n_tasks: int) -> list[slice]:
    """Task slices such that one chunk of draws x units x tasks holds ~CHUNK_NUMBERS numbers.

    The same slices for every caller, so curves, per-task curves and ``success_prob`` of one
    fit share their rate draws.
    """
    size = max(1, CHUNK_NUMBERS // max(1, n_draws * n_units))
    return [slice(i, min(n_tasks, i + size)) for i in range(0, n_tasks, size)]


# The template's pairing (``Model.population_pairing``) of each ``population`` setting
# (``names.POPULATIONS``) of a model whose systems share no parameter.
_PAIRING = {"paired": "coupled", "independent": "none", "bayesian-bootstrap": "bootstrap"}


def population_pairing_of(population: str) -> str:
    """The template's pairing (``"coupled"``, ``"none"``, ``"bootstrap"``) of a
    ``population`` setting (``"paired"``, ``"independent"``, ``"bayesian-bootstrap"``)."""
    return _PAIRING[check_population(population)]


def bayesian_bootstrap_weights(chains: int, draws: int, tasks: int, seed: int) -> np.ndarray:
    """Dirichlet(1, ..., 1) weights over the tasks, one set per draw, ``(chain, draw, task)``.

    The Bayesian bootstrap (D. B. Rubin, "The Bayesian bootstrap", *Annals of Statistics* 9,
    1981, 130-134): the posterior of a population of tasks under a Dirichlet-process prior of
    vanishing concentration puts weight ``w_t`` on observed task ``t``,
    ``w ~ Dirichlet(1, ..., 1)``, drawn as normalised standard exponentials. A functional of
    the population (mean pass@k) is then ``sum_t w_t f_t``. Deterministic given ``seed``.
    """
    rng = np.random.default_rng([int(seed), 17])
    weights = rng.standard_exponential((chains, draws, tasks))
    return weights / weights.sum(axis=-1, keepdims=True)


def couple_to_reference(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Reorder the draws of ``values`` so that they follow the ranks of ``reference``.

    Both have shape ``(chain, draw, *rest)``; each ``rest`` column is handled alone: the draw
    holding the j-th smallest ``reference`` receives the j-th smallest ``values`` (ties in
    ``reference`` broken by draw order). Every column's marginal distribution is unchanged
    (the same multiset of draws); the dependence between columns becomes that of
    ``reference`` (its rank correlations, exactly). This is the Schaake shuffle / empirical
    copula coupling (M. Clark et al., "The Schaake shuffle", *J. Hydrometeorology* 5, 2004,
    243-262; R. Schefzik, T. Thorarinsdottir and T. Gneiting, "Uncertainty quantification in
    complex simulation models using ensemble copula coupling", *Statistical Science* 28, 2013,
    616-640). Deterministic.
    """
    if values.shape != reference.shape:
        raise ValueError(f"shapes differ: {values.shape} and {reference.shape}")
    flat_values = values.reshape(values.shape[0] * values.shape[1], -1)
    flat_reference = reference.reshape(flat_values.shape)
    order = np.argsort(flat_reference, axis=0, kind="stable")
    out = np.empty_like(flat_values)
    np.put_along_axis(out, order, np.sort(flat_values, axis=0), axis=0)
    return out.reshape(values.shape)


class RowExpectations(NamedTuple):
    """What the optional hook :meth:`Model.row_expectations` returns.

    ``values`` (chain, draw, row, k): ``E[f(p) | parameters, n, c]`` per distinct observed
    ``(system, n, c)`` row; ``row_of_cell`` (system, task): each cell's row, -1 where
    unobserved; ``task_scale`` (chain, draw, task) or None: a per-draw factor of every cell
    of a task, for models whose tasks carry a shared state (a task broken with conditional
    probability ``q_t`` has cell means ``(1 - q_t) E[f(p) | solvable, n, c]``, since
    ``f(0) = 0`` for pass@k and pass^k).
    """

    values: np.ndarray
    row_of_cell: np.ndarray
    task_scale: np.ndarray | None = None


def posterior_mean_rows(expected: RowExpectations) -> RowExpectations:
    """``expected`` with its values (and task factors) replaced by their means over the
    draws, broadcast back to every draw: each task's posterior mean ``E[f(p[s, t]) | data]``.

    As the pairing's reference (:attr:`Model.pairing_reference`) the ranks then come from the
    task weights alone. Per-draw values of a system also move with its own parameters (for
    the Beta-Binomial with one trial per task, ``E[p | mu, kappa, c] = (mu kappa + c) /
    (kappa + 1)`` swings between ``c`` and ``mu`` as ``kappa`` does, which the data cannot
    pin down), which no other system shares: in the ranks that noise decouples the systems
    toward the unpaired interval.
    """
    values = np.broadcast_to(expected.values.mean(axis=(0, 1), keepdims=True),
                             expected.values.shape)
    scale = expected.task_scale
    if scale is not None:
        scale = np.broadcast_to(scale.mean(axis=(0, 1), keepdims=True), scale.shape)
    return RowExpectations(values, expected.row_of_cell, scale)


def weighted_row_average(
    values: np.ndarray,
    row_of_cell: np.ndarray,
    weights: np.ndarray,
    task_scale: np.ndarray | None = None,
) -> np.ndarray:
    """Each system's task average of per-row values under per-draw task weights.

    ``values`` (chain, draw, row, k) holds a value per distinct ``(system, n, c)`` row,
    ``row_of_cell`` (system, task) each cell's row (-1 unobserved), ``weights`` (chain, draw,
    task) and ``task_scale`` (chain, draw, task; default 1) a factor of every cell of a task.
    Returns ``sum_t w_t a_t values[row(s, t)] / sum_t w_t`` over the system's observed tasks
    (``a`` = ``task_scale``), (chain, draw, system, k): the task weights are first summed per
    row (one sparse product), so the cost is draws x (tasks + rows x k), not draws x cells x k.
    """
    from scipy import sparse  # imported when used (issue 26)

    chains, draws, rows, n_k = values.shape
    n_sys, n_task = row_of_cell.shape
    s_idx, t_idx = np.nonzero(row_of_cell >= 0)
    to_rows = sparse.csr_matrix(
        (np.ones(len(s_idx)), (t_idx, row_of_cell[s_idx, t_idx])), shape=(n_task, rows)
    )
    flat_weights = weights.reshape(chains * draws, n_task)
    row_weight = np.asarray(flat_weights @ to_rows)  # (CD, row)
    row_system = np.empty(rows, dtype=np.int64)
    row_system[row_of_cell[s_idx, t_idx]] = s_idx
    to_system = sparse.csr_matrix(
        (np.ones(rows), (np.arange(rows), row_system)), shape=(rows, n_sys)
    )
    total = np.asarray(row_weight @ to_system)  # (CD, system)
    if task_scale is not None:
        row_weight = np.asarray((flat_weights * task_scale.reshape(flat_weights.shape)) @ to_rows)
    out = np.empty((chains * draws, n_sys, n_k))
    flat = values.reshape(chains * draws, rows, n_k)
    for j in range(n_k):
        out[..., j] = np.asarray((row_weight * flat[..., j]) @ to_system) / total
    return out.reshape(chains, draws, n_sys, n_k)


#: Numbers per temporary (draws x cells) array of :func:`unseen_task_reference`.
_CELL_WORK = 4_000_000


def unseen_task_reference(
    values: np.ndarray,
    row_of_cell: np.ndarray,
    weights: np.ndarray,
    concentration: float,
    seed: int,
    task_scale: np.ndarray | None = None,
    copula: bool = False,
) -> np.ndarray:
    """Each system's mean over a Dirichlet-process posterior of the task population whose
    unseen tasks pair the systems independently (or, with ``copula``, through a Gaussian
    copula of posterior correlation), ``(chain, draw, system, k)``.

    The Bayesian bootstrap (:func:`bayesian_bootstrap_weights`, Rubin 1981) is the posterior
    of the task population under a Dirichlet process of vanishing concentration: the
    population is the observed tasks, so two systems move together exactly as their results
    on those tasks do, however few they are. With concentration ``alpha`` (T. S. Ferguson, "A
    Bayesian analysis of some nonparametric problems", *Annals of Statistics* 1, 1973,
    209-230) the posterior of the population is ``DP(alpha H + sum_t delta_t)``: observed
    task ``t`` gets weight ``w_t`` and the unseen tasks the rest, ``(w_1, ..., w_N, w_new) ~
    Dirichlet(1, ..., 1, alpha)``, spread as a draw ``G ~ DP(alpha, H)``. Here ``H`` is, for
    each system alone, the empirical distribution of its own task values, and the systems'
    ``G`` are independent: a new task is like the observed ones for each system, but how the
    systems' results on it go together is not known. Per draw::

        w_new ~ Beta(alpha, N),   (the observed part, normalised: ``weights``) ~ Dirichlet(1)
        u_s ~ Dirichlet(alpha / N_s, ..., alpha / N_s) over system s's N_s observed tasks,
              independently per system (the mean of G ~ DP(alpha, H_s))
        ref[s] = (1 - w_new) sum_t w_t a_t v[s, t] / sum_t w_t
                 + w_new sum_t u_st a_t v[s, t]

    with ``v[s, t] = values[row_of_cell[s, t]]`` and ``a`` = ``task_scale`` (default 1);
    sums over system ``s``'s observed tasks, ``N`` = tasks observed for some system. The split
    uses the Dirichlet's aggregation property (the normalised observed weights are independent
    of their total, ``1 - w_new ~ Beta(N, alpha)``), so ``alpha = 0`` returns
    :func:`weighted_row_average` of ``weights`` exactly, and ``weights`` are not redrawn.

    For one system the weights of its tasks are then Dirichlet(1 + alpha / N) (with ``N_s =
    N``): the mean is the observed mean and the variance ``S_s^2 / (N + alpha + 1)``
    (``S^2`` the tasks' population variance of ``v``). Across systems only the shared
    ``w`` links them: the covariance is ``S_AB N / ((N + alpha)(N + alpha + 1))``, so the
    correlation of two systems' references is the observed tasks' correlation of their
    values times ``N / (N + alpha)``. Coupling draws to these ranks
    (:func:`couple_to_reference`) loosens the pairing by that factor: toward the unpaired
    population at a few tasks, unchanged as ``N`` grows. Deterministic given ``seed``.

    With ``copula=True`` the base measure ``H`` is no longer independent across systems:
    the unseen part ``sum_t u_st a_t v[s, t]`` of each system keeps its distribution, and its
    draws are reordered (:func:`couple_to_reference`) to the ranks of
    :func:`posterior_correlated_normals` of the observed tasks' normal scores (per ``k``,
    :func:`copula_reference`): a new task pairs the systems as a Gaussian copula whose
    correlation matrix is drawn from its posterior given the ``N`` observed tasks. The
    correlation of two systems' references is then about ``(N r + alpha rho) / (N +
    alpha)``, ``rho`` the posterior draw of the copula's correlation.

    Parameters
    ----------
    values, row_of_cell, weights, task_scale
        As in :func:`weighted_row_average`.
    concentration : float
        ``alpha >= 0``, in units of tasks: the weight of the unseen tasks against ``N``
        observed ones.
    seed : int
        Seeds ``w_new`` and ``u`` (streams ``[seed, 19]``; the weights' own is ``[seed, 17]``,
        the copula's ``[seed, 23]``).
    copula : bool
        Couple the unseen part by the posterior Gaussian copula (default False: independent).
    """
    alpha = check_nonnegative(concentration, "unseen_tasks")
    seen = row_of_cell >= 0
    if not seen.any(axis=1).all():
        raise ValueError("every system needs an observed task for the unseen-task reference")
    paired = weighted_row_average(values, row_of_cell, weights, task_scale)
    if alpha == 0.0:
        return paired
    chains, draws, _, n_k = values.shape
    n_sys = row_of_cell.shape[0]
    rng = np.random.default_rng([int(seed), 19])
    new_share = rng.beta(alpha, int(seen.any(axis=0).sum()), size=(chains * draws, 1, 1))
    if task_scale is None:
        own = _unseen_row_means(values, row_of_cell, alpha, rng)
    else:
        own = _unseen_cell_means(values, row_of_cell, alpha, rng, task_scale)
    own = own.reshape(chains, draws, n_sys, n_k)
    if copula:
        own = couple_to_reference(own, copula_reference(values, row_of_cell, seed, task_scale,
                                                        alpha))
    new_share = new_share.reshape(chains, draws, 1, 1)
    return (1.0 - new_share) * paired + new_share * own


#: Draws per block of :func:`posterior_correlated_normals` (each holds three system x system
#: matrices per draw).
_COPULA_BLOCK = 256
#: Up to this many systems :func:`posterior_correlated_normals` inverts a block of Bartlett
#: factors at once; beyond, one triangular solve per draw is faster.
_BATCHED_SYSTEMS = 24


def task_normal_scores(cell_values: np.ndarray) -> np.ndarray:
    """Normal scores of each system's task values, ``(system, task)``: ``Phi^-1((r - 1/2) /
    N_s)`` of the mid-ranks ``r`` (ties averaged) of system ``s``'s ``N_s`` observed values;
    NaN cells (unobserved) score 0, the scores' mean (van der Waerden scores: B. L. van der
    Waerden, "Order tests for the two-sample problem", *Proc. KNAW* 55, 1952, 453-458).
    A system with one value on every task scores 0 everywhere."""
    from scipy.special import ndtri  # imported when used (issue 26)

    scores = np.zeros(cell_values.shape)
    for s, row in enumerate(cell_values):
        seen = ~np.isnan(row)
        if seen.any():
            scores[s, seen] = ndtri((average_ranks(row[seen]) - 0.5) / seen.sum())
    return scores


def posterior_correlated_normals(scores: np.ndarray, chains: int, draws: int,
                                 seed: int, prior_tasks: float = 1.0) -> np.ndarray:
    """Standard normal vectors over the systems, ``(chain, draw, system)``, each drawn with
    its own correlation matrix from the posterior of the systems' Gaussian copula given the
    tasks' normal scores ``scores`` ``(system, task)``.

    With scores ``z_t ~ N(0, Sigma)`` over the ``T`` tasks and the prior ``Sigma ~
    IW(S + 1, lambda I)`` (whose correlations are each uniform on [-1, 1], whatever
    ``lambda``: J. Barnard, R. McCulloch and X.-L. Meng, "Modeling covariance matrices in
    terms of standard deviations and correlations", *Statistica Sinica* 10, 2000,
    1281-1311), the posterior is ``Sigma ~ IW(S + 1 + T, lambda I + sum_t z_t z_t')``:
    ``lambda`` (``prior_tasks``) acts as that many tasks of uncorrelated unit scores, so a
    correlation's posterior centre is about the scores' one times ``T / (T + lambda)``.
    Per draw: ``Sigma^-1 = L B B' L'`` (Bartlett's decomposition of the Wishart,
    ``(lambda I + sum_t z_t z_t')^-1 = L L'``, ``B`` lower triangular,
    ``B_ii^2 ~ chi^2(S + 1 + T - i)``, ``B_ij ~ N(0, 1)`` below), ``x = L'^-1 B'^-1 e`` with
    ``e ~ N(0, I)`` (so ``x ~ N(0, Sigma)``), returned as ``x_s / sqrt(Sigma_ss)``: the
    correlation matrix's draw, not the scales, sets the dependence. A two-system block of
    the posterior is ``IW(3 + T, .)`` whatever ``S``, so each pair's copula does not depend
    on how many other systems are fitted; its correlation concentrates on the scores'
    correlation as ``T`` grows and spreads toward the uniform prior with few tasks.
    Deterministic given ``seed`` (stream ``[seed, 23]``); the same seed gives the same
    ``B`` and ``e`` for any ``scores`` of one shape.
    """
    from scipy.linalg import solve_triangular  # imported when used (issue 26)

    lam = check_nonnegative(prior_tasks, "prior_tasks")
    if lam == 0.0:
        raise ValueError("prior_tasks must be > 0 (the copula's prior scale)")
    n_sys, n_task = scores.shape
    psi_inv = np.linalg.inv(lam * np.eye(n_sys) + scores @ scores.T)
    lower = np.linalg.cholesky((psi_inv + psi_inv.T) / 2)
    upper_inv = solve_triangular(lower, np.eye(n_sys), lower=True).T  # L'^-1
    dof = n_sys + 1 + n_task - np.arange(n_sys)
    rng = np.random.default_rng([int(seed), 23])
    size = chains * draws
    out = np.empty((size, n_sys))
    below = np.tril_indices(n_sys, -1)
    for start in range(0, size, _COPULA_BLOCK):
        m = min(size, start + _COPULA_BLOCK) - start
        bartlett = np.zeros((m, n_sys, n_sys))
        bartlett[:, np.arange(n_sys), np.arange(n_sys)] = np.sqrt(rng.chisquare(dof, (m, n_sys)))
        bartlett[:, below[0], below[1]] = rng.standard_normal((m, len(below[0])))
        noise = rng.standard_normal((m, n_sys))
        if n_sys <= _BATCHED_SYSTEMS:
            factor = upper_inv @ np.linalg.inv(bartlett).transpose(0, 2, 1)  # Sigma = F F'
        else:  # F' = B^-1 L^-1, one triangular solve per draw (cheaper than a batched inverse)
            factor = np.stack([solve_triangular(b, upper_inv.T, lower=True,
                                                check_finite=False).T for b in bartlett])
        x = (factor @ noise[..., None])[..., 0]
        out[start:start + m] = x / np.sqrt((factor**2).sum(axis=-1))
    return out.reshape(chains, draws, n_sys)


def copula_reference(
    values: np.ndarray,
    row_of_cell: np.ndarray,
    seed: int,
    task_scale: np.ndarray | None = None,
    prior_tasks: float = 1.0,
) -> np.ndarray:
    """A Gaussian-copula reference for the pairing, ``(chain, draw, system, k)``: per ``k``,
    :func:`posterior_correlated_normals` (prior weight ``prior_tasks``) of the
    :func:`task_normal_scores` of each cell's posterior mean ``E[a_t v[s, t]]`` over the
    draws (``values``, ``row_of_cell`` and ``task_scale`` as in
    :func:`weighted_row_average`).

    Coupling each system's draws to these ranks (:func:`couple_to_reference`) pairs two
    systems as a Gaussian copula whose correlation is drawn from its posterior given the
    observed tasks: each draw's difference then has the spread of its own correlation draw,
    ``sd(B - A) ~ sqrt(var_A + var_B - 2 rho sd_A sd_B)``, a scale mixture that is wide (in
    its tails and its mean) when few tasks leave ``rho`` uncertain and settles on the
    observed coupling as the tasks grow. Every ``k`` uses the same random numbers.
    Deterministic given ``seed``.
    """
    chains, draws, rows, n_k = values.shape
    seen = row_of_cell >= 0
    s_idx, t_idx = np.nonzero(seen)
    cell_row = row_of_cell[s_idx, t_idx]
    out = np.empty((chains, draws, row_of_cell.shape[0], n_k))
    for j in range(n_k):
        if task_scale is None:
            means = values[..., j].mean(axis=(0, 1))[cell_row]
        else:
            flat_scale = task_scale.reshape(chains * draws, -1)
            by_task_row = flat_scale.T @ values[..., j].reshape(chains * draws, rows)
            means = by_task_row[t_idx, cell_row] / (chains * draws)
        cells = np.full(row_of_cell.shape, np.nan)
        cells[s_idx, t_idx] = means
        out[..., j] = posterior_correlated_normals(task_normal_scores(cells), chains, draws,
                                                   seed, prior_tasks)
    return out


def _grouped_gammas(shape: np.ndarray, size: tuple[int, int], starts: np.ndarray,
                    group: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Gamma(``shape``) variates ``(size)``, each scaled by the largest of its group (columns
    ``starts[g]:starts[g + 1]``, ``group`` naming each column's group), and the group totals:
    normalised per group they are Dirichlet(``shape``) weights. Drawn as ``Gamma(a + 1)
    U^(1 / a)`` on the log scale, so a small ``a`` does not underflow; the common factor of a
    group cancels in its normalisation."""
    log_u = np.log(rng.standard_gamma(shape + 1.0, size)) + np.log(rng.random(size)) / shape
    u = np.exp(log_u - np.maximum.reduceat(log_u, starts, axis=1)[:, group])
    return u, np.add.reduceat(u, starts, axis=1)


def _unseen_row_means(values: np.ndarray, row_of_cell: np.ndarray, alpha: float,
                      rng: np.random.Generator) -> np.ndarray:
    """``sum_t u_st v[s, t]`` with ``u_s ~ Dirichlet(alpha / N_s, ...)`` over system s's
    observed tasks, drawn per distinct row: by the Dirichlet's aggregation property the
    summed weight of the ``m_r`` tasks of row ``r`` is a component of ``Dirichlet(alpha m_r /
    N_s, ...)`` over the system's rows, the same distribution as summing per-task weights,
    at draws x rows instead of draws x cells. ``(chain * draw, system, k)``."""
    chains, draws, rows, n_k = values.shape
    seen = row_of_cell >= 0
    s_idx, t_idx = np.nonzero(seen)
    cell_row = row_of_cell[s_idx, t_idx]
    row_tasks = np.bincount(cell_row, minlength=rows)
    row_system = np.zeros(rows, dtype=np.int64)
    row_system[cell_row] = s_idx
    used = np.flatnonzero(row_tasks > 0)
    order = used[np.argsort(row_system[used], kind="stable")]
    systems = row_system[order]
    starts = np.searchsorted(systems, np.arange(row_of_cell.shape[0]))
    shape = alpha * row_tasks[order] / seen.sum(axis=1)[systems]
    flat = values.reshape(chains * draws, rows, n_k)[:, order, :]
    own = np.empty((chains * draws, row_of_cell.shape[0], n_k))
    step = max(1, _CELL_WORK // max(1, len(order) * n_k))
    for start in range(0, chains * draws, step):
        block = slice(start, min(chains * draws, start + step))
        size = (block.stop - block.start, len(order))
        u, total = _grouped_gammas(shape, size, starts, systems, rng)
        own[block] = np.add.reduceat(u[..., None] * flat[block], starts, axis=1) / total[..., None]
    return own


def _unseen_cell_means(values: np.ndarray, row_of_cell: np.ndarray, alpha: float,
                       rng: np.random.Generator, task_scale: np.ndarray) -> np.ndarray:
    """As :func:`_unseen_row_means` with a per-draw factor ``a_t`` of every cell of a task,
    ``sum_t u_st a_t v[s, t] / sum_t u_st``: the factors differ within a row, so the weights
    are drawn per cell. ``(chain * draw, system, k)``."""
    chains, draws, _, n_k = values.shape
    seen = row_of_cell >= 0
    n_sys = row_of_cell.shape[0]
    s_idx, t_idx = np.nonzero(seen)  # row-major: the cells of each system are contiguous
    starts = np.searchsorted(s_idx, np.arange(n_sys))
    shape = alpha / seen.sum(axis=1)[s_idx]  # Dirichlet(alpha / N_s, ...) per cell
    cell_row = row_of_cell[s_idx, t_idx]
    flat = values.reshape(chains * draws, -1, n_k)
    scale = task_scale.reshape(chains * draws, -1)
    own = np.empty((chains * draws, n_sys, n_k))
    step = max(1, _CELL_WORK // max(1, len(s_idx) * n_k))
    for start in range(0, chains * draws, step):
        block = slice(start, min(chains * draws, start + step))
        size = (block.stop - block.start, len(s_idx))
        u, total = _grouped_gammas(shape, size, starts, s_idx, rng)
        u = u * scale[block][:, t_idx]
        cell_values = flat[block][:, cell_row, :]  # (block, cell, k)
        own[block] = np.add.reduceat(u[..., None] * cell_values, starts, axis=1) / total[..., None]
    return own


class Configured:
    """``to_config`` / ``from_config`` of a frozen dataclass model with a ``name``: the one
    home of the round trip through ``models/*.toml`` for every model base."""

    name: ClassVar[str]

    def to_config(self) -> dict[str, Any]:
        """The model's configuration as a JSON-serialisable dict (maps onto models/*.toml)."""
        config: dict[str, Any] = {"model": self.name}
        for key, value in asdict(self).items():  # type: ignore[call-overload]
            config[key] = list(value) if isinstance(value, tuple) else value
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        """Rebuild a model from :meth:`to_config` output (unknown keys raise)."""
        config = dict(config)
        name = config.pop("model", cls.name)
        if name != cls.name:
            raise ValueError(f"config is for model {name!r}, not {cls.name!r}")
        known = set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
        unknown = sorted(set(config) - known)
        if unknown:
            raise ValueError(f"unknown {cls.name} settings {unknown}; known: {sorted(known)}")
        kwargs = {
            key: tuple(value) if isinstance(value, list) else value for key, value in config.items()
        }
        return cls(**kwargs)


@dataclass(frozen=True)
class Model(Configured, ABC):
    """Base class of evalbayes models: configuration only, ``fit`` returns a Posterior."""

    name: ClassVar[str]
    posterior_class: ClassVar[type[Posterior]] = Posterior
    approximate_ok: ClassVar[bool] = True
    #: a saved fit keeps its pass@1 / pass^1 draws (``Posterior.save``): for the models whose
    #: readers would draw them again at a cost (the Beta-Binomial's and the rate grid's
    #: "tasks" draws), not for those whose curves take longer to save than the fit itself
    #: (the 2PL's population quadrature on SWE-bench Verified)
    keeps_curves: ClassVar[bool] = False

    # --------------------------------------------------------------- fitting
    def fit(
        self,
        data: EvalData,
        *,
        method: Method | None = None,
        draws: int = SAMPLER_DEFAULTS["draws"],
        tune: int = SAMPLER_DEFAULTS["tune"],
        chains: int = SAMPLER_DEFAULTS["chains"],
        seed: int | None = None,
        random_seed: int | None = None,
        target_accept: float = SAMPLER_DEFAULTS["target_accept"],
        progressbar: bool = False,
        check: bool = True,
        client: Any = None,
        n_workers: int | None = None,
    ) -> Posterior:
        """Fit the model to ``data`` and return an immutable :class:`Posterior`.

        Parameters
        ----------
        data : EvalData
            Counts; missing cells (``n = 0``) are skipped.
        method : str, optional
            Inference method (:class:`~evalbayes.inference.SamplerConfig`); default
            :attr:`default_method`.
        draws, tune, chains, target_accept, progressbar
            See :class:`~evalbayes.inference.SamplerConfig`.
        seed, random_seed : int, optional
            The random seed, under evalbayes' or PyMC's name (give one; default 0).
        check : bool
            Run :meth:`Posterior.diagnostics` after sampling, warning loudly on failure.
        client, n_workers : optional
            ``method="smc"``: map the systems over a Dask cluster, a scheduler address or
            Client, or a local cluster of ``n_workers`` processes
            (:class:`~evalbayes.inference.SamplerConfig`); the same draws as on threads.
        """
        if not isinstance(data, EvalData):
            raise TypeError(f"fit expects EvalData, got {type(data).__name__}")
        sampler = SamplerConfig(
            method=self.default_method if method is None else method,
            draws=draws,
            tune=tune,
            chains=chains,
            seed=resolve_seed(seed, random_seed),
            target_accept=target_accept,
            progressbar=progressbar,
            client=client,
            n_workers=n_workers,
        )
        if sampler.approximate and not self.approximate_ok:
            raise ValueError(f"{self.name} does not support method={method!r}")
        self.check_data(data)
        groups = self.sample(data, sampler)
        # R-hat and ESS a sampler already computed on its own draws (not part of the file)
        known = groups.pop("convergence", None)
        # where the draws were computed is not part of the fit (nor a live client in it)
        sampler = replace(sampler, client=None, n_workers=None)
        result = self.posterior_class.from_groups(self, data, sampler, groups)
        if known is not None and result.is_mcmc:
            result._take_diagnostics({str(k): v.values for k, v in known.data_vars.items()})
        if check and result.is_mcmc:
            result.diagnostics(warn=True)
        return result

    @property
    def default_method(self) -> Method:
        """Inference method used when ``fit`` is not given one."""
        return SAMPLER_DEFAULTS["method"]

    @property
    def needs_mcmc(self) -> bool:
        """False when the posterior is drawn exactly (conjugate), so no MCMC diagnostics."""
        return True

    def estimands(self) -> tuple[str, ...]:
        """Estimands this model can report."""
        return ESTIMANDS

    def row_expectations(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> RowExpectations | None:
        """``E[f(p[s, t]) | parameters, n, c]`` per draw for each distinct observed
        ``(system, n, c)`` row, ``(chain, draw, row, k)``, each cell's row ``(system,
        task)`` (-1 where unobserved) and an optional per-task factor (:class:`RowExpectations`),
        or None (optional hook; default None).

        With it the ``"coupled"`` population takes its ranks from the Bayesian bootstrap of
        these Rao-Blackwellised task values (:func:`weighted_row_average`) instead of from
        rate draws: cheaper (distinct counts, not cells) and without the per-cell posterior
        noise, which no system shares and which would weaken the coupling below the pairing
        of the systems' results on the tasks.
        """
        return None

    @property
    def population_pairing(self) -> str:
        """How the population estimand links the systems beyond the model's own parameters:
        ``"none"`` (:meth:`population_curve` as it is), ``"bootstrap"`` (the Bayesian bootstrap
        of the observed tasks' rate draws instead) or ``"coupled"`` (:meth:`population_curve`
        reordered to the bootstrap's ranks). See :meth:`curve`."""
        return "none"

    @property
    def pairing_concentration(self) -> float:
        """The Dirichlet-process concentration ``alpha`` of the tasks not yet seen in the
        ``"coupled"`` pairing (:func:`unseen_task_reference`; default 0: the Bayesian
        bootstrap of the observed tasks)."""
        return 0.0

    @property
    def pairing_coupling(self) -> str:
        """How the ``"coupled"`` pairing links the systems (``names.COUPLINGS``):
        ``"dirichlet"`` (default; the Dirichlet-process reference, unseen tasks independent,
        :func:`unseen_task_reference`), ``"dirichlet-copula"`` (its unseen tasks coupled by
        the posterior Gaussian copula) or ``"copula"`` (that copula alone,
        :func:`copula_reference`, with :attr:`pairing_concentration` as the prior weight,
        in tasks, of uncorrelated scores: it must then be > 0)."""
        return "dirichlet"

    @property
    def pairing_reference(self) -> str:
        """Which task values the ``"coupled"`` pairing's ranks weigh: ``"draws"`` (default:
        :meth:`row_expectations` of each draw) or ``"posterior-mean"`` (their mean over the
        draws, :func:`posterior_mean_rows`): for models whose per-draw task values move with
        parameters no other system shares, which would decouple the systems."""
        return "draws"

    @property
    def description(self) -> str:
        """The model's name with the settings that change what it can report."""
        return self.name

    def check_data(self, data: EvalData) -> None:
        """Raise ``ValueError`` for data this model cannot fit (hook; default: any data)."""

    def sample(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """Run inference; return DataTree groups (``posterior`` with system/task coords).

        The default compiles ``build(inputs(data))`` (cached per configuration and shape)
        and keeps :meth:`posterior_vars`. Models with exact posteriors override it.
        """
        inputs = self.inputs(data)
        key = (self.name, config_hash(self.to_config()), inputs.shape_key)
        tree = run_inference(
            lambda: self.build(inputs), sampler, key, data_updates=inputs.values
        )
        posterior = tree["posterior"].to_dataset()[self.posterior_vars(data)]
        groups = {"posterior": self.label_dims(posterior, data)}
        if "sample_stats" in tree.children:
            groups["sample_stats"] = tree["sample_stats"].to_dataset()
        return groups

    @staticmethod
    def label_dims(posterior: xr.Dataset, data: EvalData) -> xr.Dataset:
        """Give the ``system`` and ``task`` dims of posterior draws the data's labels."""
        coords = {
            dim: data.dataset[dim].values for dim in ("system", "task") if dim in posterior.dims
        }
        return posterior.assign_coords(coords)

    # --------------------------------------------------------------- hooks
    def inputs(self, data: EvalData) -> ModelInputs:
        """``pm.Data`` values and shape key for :meth:`build` (hook)."""
        raise NotImplementedError(f"{type(self).__name__} does not build a PyMC model")

    def build(self, inputs: ModelInputs) -> Any:
        """The PyMC model for :meth:`inputs` (hook)."""
        raise NotImplementedError(f"{type(self).__name__} does not build a PyMC model")

    def posterior_vars(self, data: EvalData) -> list[str]:
        """Variables of the PyMC model kept in the ``posterior`` group (hook)."""
        raise NotImplementedError(f"{type(self).__name__} does not build a PyMC model")

    @abstractmethod
    def rates(
        self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice
    ) -> np.ndarray:
        """Success-probability draws ``(chain, draw, system, len(tasks))`` (hook)."""

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """pass@k / pass^k of a new task, ``(chain, draw, system, k)`` (hook)."""
        raise NotImplementedError(f"{type(self).__name__} has no population estimand")

    @abstractmethod
    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Log-likelihood draws ``(chain, draw, cell)`` of cells ``(s_idx, t_idx)`` (hook)."""

    # --------------------------------------------------------------- derived (template)
    def curve(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metric: str,
        estimand: str,
        per_task: bool,
        seed: int = 0,
    ) -> xr.DataArray:
        """pass@k / pass^k draws, dims ``(chain, draw, system, [task,] k)``.

        ``estimand="tasks"``: the average over each system's observed tasks of
        ``f(p[s, t])`` per draw (``f(p) = 1 - (1 - p)^k`` or ``p^k``), from :meth:`rates`;
        ``"population"``: :meth:`population_curve`; with :attr:`population_pairing`
        ``"bootstrap"``, ``sum_t w_t f(p[s, t]) / sum_t w_t`` over the system's observed tasks
        with ``w ~ Dirichlet(1, ..., 1)`` per draw, the same ``w`` for every system
        (:func:`bayesian_bootstrap_weights`); with ``"coupled"``, the draws of
        :meth:`population_curve` reordered per ``(system, k)`` to the ranks of that bootstrap
        (:func:`couple_to_reference`; of the bootstrap of :meth:`row_expectations` where the
        model has them): each system's draws are the model's, and systems move together as
        their results on the shared tasks do. ``seed`` drives every Monte Carlo
        step (the rate draws, the weights), so the same fit and seed give the same numbers.
        """
        metric = check_metric(metric)
        check_estimand(estimand, self.estimands(), self.description)
        k = check_k(k)
        if per_task and estimand == "population":
            raise ValueError("per_task=True needs estimand='tasks' (population is over new tasks)")
        if estimand == "population":
            pairing = self.population_pairing
            if pairing != "bootstrap":
                values = self.population_curve(posterior, data, k, metric)
            if pairing != "none":
                weights = bayesian_bootstrap_weights(
                    posterior.sizes["chain"], posterior.sizes["draw"], data.n.shape[1], seed
                )
                expected = (self.row_expectations(posterior, data, k, metric)
                            if pairing == "coupled" else None)
                if expected is not None and self.pairing_reference == "posterior-mean":
                    expected = posterior_mean_rows(expected)
                coupling = check_coupling(self.pairing_coupling)
                if expected is None:
                    if pairing == "coupled" and (self.pairing_concentration > 0
                                                 or coupling != "dirichlet"):
                        raise ValueError(f"{self.description}: unseen tasks or a copula in "
                                         "the pairing need the row_expectations hook")
                    bootstrap = self._tasks_curve(posterior, data, k, metric, False, seed,
                                                  weights)
                elif coupling == "copula":
                    bootstrap = copula_reference(expected.values, expected.row_of_cell, seed,
                                                 expected.task_scale, self.pairing_concentration)
                else:
                    bootstrap = unseen_task_reference(
                        expected.values, expected.row_of_cell, weights,
                        self.pairing_concentration, seed, expected.task_scale,
                        copula=coupling == "dirichlet-copula",
                    )
                values = bootstrap if pairing == "bootstrap" else couple_to_reference(
                    values, bootstrap
                )
        else:
            values = self._tasks_curves(posterior, data, k, (metric,), per_task, seed)[metric]
        return self._curve_array(posterior, data, k, values, per_task, metric)

    def curves(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metrics: tuple[str, ...],
        estimand: str,
        seed: int = 0,
    ) -> dict[str, xr.DataArray]:
        """:meth:`curve` of several metrics at once, ``metric -> (chain, draw, system, k)``.

        The "tasks" estimand of every metric comes from one set of rate draws
        (:meth:`_tasks_curves`: pass@k and pass^k are two functions of the same latent
        rates), and each metric's draws are those :meth:`curve` gives for it alone with the
        same seed; other estimands are :meth:`curve` per metric.
        """
        metrics = tuple(dict.fromkeys(check_metric(m) for m in metrics))
        if estimand != "tasks" or len(metrics) < 2:
            return {m: self.curve(posterior, data, k, m, estimand, False, seed) for m in metrics}
        check_estimand(estimand, self.estimands(), self.description)
        k = check_k(k)
        values = self._tasks_curves(posterior, data, k, metrics, False, seed)
        return {m: self._curve_array(posterior, data, k, values[m], False, m) for m in metrics}

    @staticmethod
    def _curve_array(
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        values: np.ndarray,
        per_task: bool,
        metric: str,
    ) -> xr.DataArray:
        """Label curve draws with the fit's chains, draws, systems[, tasks] and k."""
        dims = ("chain", "draw", "system", "task", "k") if per_task else (
            "chain", "draw", "system", "k"
        )
        coords = {
            "chain": posterior["chain"].values,
            "draw": posterior["draw"].values,
            "system": data.dataset["system"].values,
            "k": k,
        }
        if per_task:
            coords["task"] = data.dataset["task"].values
        return xr.DataArray(values, dims=dims, coords=coords, name=metric)

    def _tasks_curves(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metrics: tuple[str, ...],
        per_task: bool,
        seed: int,
        weights: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """Each system's average of ``f(p)`` over its observed tasks, per draw, for every
        metric from the same draws of :meth:`rates`; with ``weights`` (chain, draw, task) a
        weighted average (the Bayesian bootstrap). Models with a faster exact route override
        it (the NumPy path stays :meth:`_tasks_curve`)."""
        observed = data.n.values > 0
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        n_sys, n_task = observed.shape
        shape = ((chains, draws, n_sys, n_task, len(k)) if per_task
                 else (chains, draws, n_sys, len(k)))
        out = {m: np.full(shape, np.nan) if per_task else np.zeros(shape) for m in metrics}
        for tasks in task_chunks(chains * draws, n_sys, n_task):
            p = self.rates(posterior, data, seed, tasks)
            seen = observed[:, tasks]
            for metric in metrics:
                # log(1 - p) (pass@k) or log p (pass^k) once per chunk, then one exp per k.
                with np.errstate(divide="ignore"):
                    log_base = np.log1p(-p) if metric == "pass@k" else np.log(p)
                for j, kj in enumerate(k):
                    scaled = kj * log_base
                    f = -np.expm1(scaled) if metric == "pass@k" else np.exp(scaled)
                    if per_task:
                        out[metric][:, :, :, tasks, j] = np.where(seen, f, np.nan)
                    elif weights is None:
                        out[metric][..., j] += np.einsum("cdst,st->cds", f, seen.astype(float))
                    else:
                        out[metric][..., j] += np.einsum(
                            "cdst,st,cdt->cds", f, seen.astype(float), weights[:, :, tasks]
                        )
        if per_task:
            return out
        if weights is None:
            total = observed.sum(axis=1)[None, None, :, None]
        else:
            total = np.einsum("st,cdt->cds", observed.astype(float), weights)[..., None]
        return {m: values / total for m, values in out.items()}

    def _tasks_curve(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metric: str,
        per_task: bool,
        seed: int,
        weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """The NumPy path of :meth:`_tasks_curves` for one metric (from :meth:`rates`, whatever
        a model overrides): the Bayesian bootstrap's route and the reference of the faster
        ones."""
        return Model._tasks_curves(self, posterior, data, k, (metric,), per_task, seed,
                                   weights)[metric]

    def success_prob(self, posterior: xr.Dataset, data: EvalData, seed: int) -> xr.DataArray:
        """Draws of every cell's success probability, dims ``(chain, draw, system, task)``."""
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        n_sys, n_task = data.n.shape
        p = np.empty((chains, draws, n_sys, n_task))
        for tasks in task_chunks(chains * draws, n_sys, n_task):
            p[..., tasks] = self.rates(posterior, data, seed, tasks)
        return xr.DataArray(
            p,
            dims=("chain", "draw", "system", "task"),
            coords={
                "chain": posterior["chain"].values,
                "draw": posterior["draw"].values,
                "system": data.dataset["system"].values,
                "task": data.dataset["task"].values,
            },
            name="p",
        )

    def log_likelihood(self, posterior: xr.Dataset, data: EvalData) -> xr.DataArray:
        """Pointwise log-likelihood per observed cell, dims ``(chain, draw, cell)``.

        Coordinates ``cell_system`` and ``cell_task`` name each cell (only ``n > 0`` cells).
        """
        s_idx, t_idx = np.nonzero(data.n.values > 0)
        values = self.cell_log_likelihood(posterior, data, s_idx, t_idx)
        return xr.DataArray(
            values,
            dims=("chain", "draw", "cell"),
            coords={
                "chain": posterior["chain"].values,
                "draw": posterior["draw"].values,
                "cell_system": ("cell", data.dataset["system"].values[s_idx]),
                "cell_task": ("cell", data.dataset["task"].values[t_idx]),
            },
            name="log_likelihood",
        )

    def posterior_predictive(
        self, posterior: xr.Dataset, data: EvalData, seed: int
    ) -> xr.DataArray:
        """Replicated counts ``c_rep ~ Binomial(n, p)`` on the observed cells.

        Dims ``(chain, draw, system, task)``; missing cells are 0.
        """
        p = self.success_prob(posterior, data, seed)
        rng = np.random.default_rng([seed, 1])
        n = np.broadcast_to(data.n.values, p.shape)
        c_rep = rng.binomial(n, np.clip(p.values, 0.0, 1.0))
        return xr.DataArray(c_rep, dims=p.dims, coords=p.coords, name="c")

    # --------------------------------------------------------------- prior predictive
    def prior_draws(self, data: EvalData, draws: int = 1000, seed: int = 0) -> xr.Dataset:
        """Draws of the model's parameters from their prior, on ``data``'s shape (systems,
        tasks, trials), dims ``(chain, draw, ...)`` with one chain, like a posterior.

        PyMC's forward sampling of :meth:`build` (``pymc.sample_prior_predictive``); the
        likelihood terms (``pm.Potential``) are left out, which is the prior.
        """
        import warnings

        import pymc as pm

        draws = check_count(draws, "draws")
        graph = self.build(self.inputs(data))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*Potential.*")
            tree = pm.sample_prior_predictive(
                draws=draws, model=graph, var_names=self.posterior_vars(data),
                random_seed=seed,
            )
        prior = tree["prior"].to_dataset() if hasattr(tree, "children") else tree.prior
        return self.label_dims(prior[self.posterior_vars(data)], data)

    def prior_predictive(
        self, data: EvalData, k: Any = (1, 8), draws: int = 1000, seed: int = 0
    ) -> PriorPredictive:
        """Prior predictive check: the population pass@k per system implied by the prior alone
        (:meth:`prior_draws` through :meth:`population_curve`), and the pass@1 difference of
        two systems, beside the data's observed pass@1 (:class:`~evalbayes.results.
        PriorPredictive`). Run it before fitting: a prior whose mass sits far from the data's
        range, or piles up at 0 and 1, decides small-sample answers.
        """
        if "population" not in self.estimands():
            raise ValueError(f"{self.description} has no population estimand to check")
        self.check_data(data)
        ks = check_k(k)
        prior = self.prior_draws(data, draws, seed)
        values = self.population_curve(prior, data, ks, "pass@k")[0]  # (draw, system, k)
        systems = data.dataset["system"].values
        curve = xr.DataArray(values, dims=("draw", "system", "k"),
                             coords={"draw": np.arange(values.shape[0]), "system": systems,
                                     "k": ks}, name="pass@k")
        first = int(np.argmin(ks))
        difference = xr.DataArray(values[:, 1, first] - values[:, 0, first] if len(systems) > 1
                                  else np.zeros(0), dims=("draw",), name="difference")
        n, c = data.n.values, data.c.values
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = np.nanmean(np.where(n > 0, c / np.where(n > 0, n, 1), np.nan), axis=1)
        table = prior_table(curve, pd.Series(observed, index=systems))
        return PriorPredictive(model=self.description, curve=curve, difference=difference,
                               table=table, draws=int(values.shape[0]))

    # --------------------------------------------------------------- g-pass@k (template)
    def population_rates(self, posterior: xr.Dataset) -> tuple[np.ndarray, np.ndarray] | None:
        """The task population as a discrete distribution of success rates, ``(rates,
        weights)`` with ``weights`` (chain, draw, system, len(rates)) summing to 1 (optional
        hook; default None: the model's population is not a distribution on a fixed grid).
        With it, :meth:`g_pass_curve` has a ``"population"`` estimand."""
        return None

    def g_pass_curve(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        m: np.ndarray,
        estimand: str,
        seed: int = 0,
    ) -> np.ndarray:
        """g-pass@k draws, ``(chain, draw, system, k)``: the probability that at least
        ``m[j]`` of ``k[j]`` attempts succeed, ``G(p) = P(Bin(k, p) >= m) = I_p(m, k - m + 1)``
        (Liu et al. 2024, arXiv 2412.13147), averaged over each system's observed tasks
        (``"tasks"``, from the :meth:`rates` draws, so the same seed gives the draws of the
        pass@k curves) or over the task population (``"population"``: ``sum_j w_j G(p_j)``
        over :meth:`population_rates`; the systems' draws are not paired through the tasks).
        ``m = 1`` is pass@k and ``m = k`` pass^k.
        """
        check_estimand(estimand, self.estimands(), self.description)
        k = check_k(k)
        m = np.asarray(m, dtype=float)

        def g(p: np.ndarray) -> np.ndarray:
            pairs = zip(k, m, strict=True)
            return np.stack([prob_g_pass_at_k(p, int(kj), int(mj)) for kj, mj in pairs], axis=-1)

        if estimand == "population":
            population = self.population_rates(posterior)
            if population is None:
                raise ValueError(
                    f"{self.description} has no population g-pass@k (its task population is "
                    "not a distribution on a grid of rates); use estimand='tasks', or the "
                    "rate-grid model"
                )
            rates, weights = population
            return weights @ g(rates)
        observed = data.n.values > 0
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        n_sys, n_task = observed.shape
        out = np.zeros((chains, draws, n_sys, len(k)))
        for tasks in task_chunks(chains * draws, n_sys, n_task):
            p = np.clip(self.rates(posterior, data, seed, tasks), 0.0, 1.0)
            out += np.einsum("cdstk,st->cdsk", g(p), observed[:, tasks].astype(float))
        return out / observed.sum(axis=1)[None, None, :, None]


def require_observed(data: EvalData) -> None:
    """Raise ``ValueError`` unless every system and every task has an observed cell (``n > 0``
    somewhere): models with a parameter per system and per task need data for each."""
    n = data.n.values
    for axis, label, names in ((1, "system", data.systems), (0, "task", data.tasks)):
        empty = np.flatnonzero(n.sum(axis=axis) == 0)
        if len(empty):
            raise ValueError(
                f"{label} {names[empty[0]]!r} has no observed cell (n = 0 everywhere); "
                "drop it with EvalData.subset before fitting"
            )


def observed_cells(data: EvalData) -> tuple[dict[str, np.ndarray], int]:
    """The observed cells (``n > 0``) as ``pm.Data`` values padded to
    :func:`~evalbayes.inference.padded_size`, and that size.

    ``cell_s``, ``cell_t`` (int: each cell's system and task) and ``cell_n``, ``cell_c``
    (float); the padding repeats cell ``(0, 0)`` with ``n = c = 0``, which adds nothing to a
    binomial log-likelihood. Models with one likelihood term per observed cell share it.
    """
    n, c = data.n.values, data.c.values
    s_idx, t_idx = np.nonzero(n > 0)
    size = padded_size(len(s_idx))
    pad = np.zeros(size - len(s_idx), np.int64)
    values = {
        "cell_s": np.concatenate([s_idx, pad]),
        "cell_t": np.concatenate([t_idx, pad]),
        "cell_n": np.concatenate([n[s_idx, t_idx], pad]).astype(float),
        "cell_c": np.concatenate([c[s_idx, t_idx], pad]).astype(float),
    }
    return values, size


def binomial_log_choose(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``log C(n, c)`` for arrays of counts (the constant of a Binomial log pmf)."""
    from scipy.special import gammaln  # imported when used (issue 26)

    return gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1)

