"""The broken-task mixture of the rate grid (``broken=True``).

A task is broken (``p[s, t] = 0`` for every system) with probability ``pi0``; marginalised per
task (BDA3 sec. 5 hierarchical mixture)::

    L[t] = pi0 1[c[s, t] = 0 for all observed s] + (1 - pi0) prod_s L[s, t].

The NumPy functions take the per-cell log-likelihoods ``log L[s, t]`` of a model (shape
``(chain, draw, system, tasks)``, 0 on unobserved cells, computed chunk by chunk by
``cell_ll_of(sl)``) and ``pi0`` per draw ``(chain, draw)``; :func:`add_broken_task_mixture`
is the same mixture in a model's PyMC graph (PyMC imported when a graph is built).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from evalbayes.models._base import task_chunks

__all__ = [
    "add_broken_task_mixture",
    "all_zero_tasks",
    "broken_log_odds",
    "broken_probability_draws",
    "cell_pieces",
    "check_broken_prior",
    "task_log_likelihood",
]

CellLogLik = Callable[[slice], np.ndarray]


def all_zero_tasks(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Tasks observed at least once with no success in any observed cell, shape (task,)."""
    observed = n > 0
    return ((c * observed).sum(axis=0) == 0) & observed.any(axis=0)


def check_broken_prior(prior: tuple[float, float]) -> None:
    """``broken_prior`` must be the two positive, finite parameters of a Beta."""
    if len(prior) != 2 or not all(np.isfinite(v) and v > 0 for v in prior):
        raise ValueError(f"broken_prior must be two positive numbers, got {prior!r}")


def add_broken_task_mixture(
    cell_ll: Any, cell_w: Any, cell_t: Any, n_task: int, task_zero: Any,
    broken_prior: tuple[float, float] | None, solved_ll: Any = 0.0, solved_tasks: Any = 0.0,
) -> None:
    """Inside a ``pm.Model`` context: sum the weighted per-cell log-likelihoods into tasks and
    add ``sum_t log L[t]`` as a Potential, with ``pi0 ~ Beta(*broken_prior)`` and the mixture
    ``log(pi0 + (1 - pi0) prod_s L[s, t])`` on the tasks flagged in ``task_zero`` (no broken
    mass when ``broken_prior`` is None). The graph form of :func:`task_log_likelihood`.

    A model that sums the cells of tasks with a success elsewhere (by distinct counts) passes
    that sum as ``solved_ll`` and their number as ``solved_tasks``: such a task cannot be
    broken, so it adds ``log(1 - pi0) + sum_s log L[s, t]``."""
    import pymc as pm
    import pytensor.tensor as pt

    task_ll = pt.inc_subtensor(pt.zeros(n_task)[cell_t], cell_ll * cell_w)
    total = solved_ll
    if broken_prior is not None:
        pi0 = pm.Beta("pi0", *broken_prior)
        solvable = pt.log1p(-pi0) + task_ll
        mixed = pt.logaddexp(pt.log(pi0), solvable)
        task_ll = pt.switch(pt.gt(task_zero, 0.5), mixed, solvable)
        total = total + solved_tasks * pt.log1p(-pi0)
    pm.Potential("loglik", task_ll.sum() + total)


def broken_log_odds(pi0: np.ndarray, cell_ll: np.ndarray, all_zero: np.ndarray) -> np.ndarray:
    """``log P(broken) - log P(solvable)`` per task given a draw: ``log pi0 - log(1 - pi0) -
    sum_s log L[s, t]`` where all counts are 0, ``-inf`` elsewhere. Shape (chain, draw, chunk)."""
    pi0 = pi0[..., None]
    with np.errstate(divide="ignore"):
        odds = np.log(pi0) - np.log1p(-pi0) - cell_ll.sum(axis=-2)
    return np.where(all_zero, odds, -np.inf)


def broken_probability_draws(
    cell_ll_of: CellLogLik, pi0: np.ndarray, n: np.ndarray, c: np.ndarray
) -> np.ndarray:
    """``P(task broken | parameters, data)`` per draw, (chain, draw, task); 0 for any task with
    a success (Rao-Blackwellised: its mean over draws is the posterior probability)."""
    from scipy.special import expit  # imported when used (issue 26)

    all_zero = all_zero_tasks(n, c)
    chains, draws = pi0.shape
    out = np.zeros((chains, draws, n.shape[1]))
    for sl in task_chunks(chains * draws, n.shape[0], n.shape[1]):
        out[..., sl] = expit(broken_log_odds(pi0, cell_ll_of(sl), all_zero[sl]))
    return out


def _task_sum(cell_ll: np.ndarray, pi0: np.ndarray | None, all_zero: np.ndarray) -> np.ndarray:
    """``log L[t]`` from the cells of a chunk of tasks (``pi0 is None``: no broken mass)."""
    solvable = cell_ll.sum(axis=-2)
    if pi0 is None:
        return solvable
    pi0 = pi0[..., None]
    solvable = np.log1p(-pi0) + solvable
    return np.where(all_zero, np.logaddexp(np.log(pi0), solvable), solvable)


def task_log_likelihood(
    cell_ll_of: CellLogLik, pi0: np.ndarray | None, n: np.ndarray, c: np.ndarray,
    shape: tuple[int, int],
) -> np.ndarray:
    """``log L[t]`` per draw, (chain, draw, task): the exact PSIS-LOO unit (cells of a task are
    coupled by the broken indicator). ``pi0 is None`` when the model has no broken mass;
    ``shape`` is (chain, draw)."""
    all_zero = all_zero_tasks(n, c)
    out = np.zeros((*shape, n.shape[1]))
    for sl in task_chunks(shape[0] * shape[1], n.shape[0], n.shape[1]):
        out[..., sl] = _task_sum(cell_ll_of(sl), pi0, all_zero[sl])
    return out


def cell_pieces(
    cell_ll_of: CellLogLik, pi0: np.ndarray | None, n: np.ndarray, c: np.ndarray,
    shape: tuple[int, int], s_idx: np.ndarray, t_idx: np.ndarray,
) -> np.ndarray:
    """Per-cell pieces of the task log-likelihood, (chain, draw, cell): ``log L[s, t]`` plus an
    equal share of the task's mixture term ``log L[t] - sum_s log L[s, t]`` (0 unless the task
    has no success), so the pieces sum exactly to the task log-likelihood and the total elpd is
    right. Per-cell PSIS-LOO is then an approximation; :func:`task_log_likelihood` is exact."""
    all_zero = all_zero_tasks(n, c)
    observed = (n > 0).sum(axis=0)
    cell = np.zeros((*shape, *n.shape))
    for sl in task_chunks(shape[0] * shape[1], n.shape[0], n.shape[1]):
        cell[..., sl] = cell_ll_of(sl)
    task = _task_sum(cell, pi0, all_zero)  # every cell computed once, not twice
    share = (task - cell.sum(axis=-2)) / np.maximum(observed, 1)
    return (cell + share[..., None, :])[..., s_idx, t_idx]
