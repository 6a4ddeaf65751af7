"""Intra-task correlation and the design effect of an evaluation.

References
----------
Kish, L. (1965). *Survey Sampling*. Wiley (the design effect ``1 + (n - 1) rho``).
Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
evaluations. arXiv:2411.00640.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.rendering import Rendered
from evalbayes.frequentist._checks import as_counts, where

__all__ = ["IntraTaskCorrelation", "intra_task_correlation"]


@dataclass(frozen=True)
class IntraTaskCorrelation(Rendered):
    """Moment estimate of how strongly trials of one task are correlated.

    Attributes
    ----------
    rho : float
        Intra-task correlation ``sigma^2_task / (mu (1 - mu))``; NaN when ``mu`` is 0 or 1.
    design_effect : float
        Variance of the task-average pass rate over the naive variance that treats every
        trial as independent; ``1 + (n - 1) rho`` for equal ``n``. NaN with ``rho``.
    task_variance : float
        Between-task variance of the true pass rates, ``sigma^2_task`` (clamped at 0).
    mean : float
        Task-average pass rate ``mu``.
    trials_per_task : float
        Mean number of trials per task (arithmetic).
    n_tasks : int
        Number of tasks.
    """

    rho: float
    design_effect: float
    task_variance: float
    mean: float
    trials_per_task: float
    n_tasks: int


def intra_task_correlation(n: Any, c: Any) -> IntraTaskCorrelation:
    """Moment estimator of the intra-task correlation and the design effect.

    With per-task rates ``r_j = c_j / n_j`` (moment estimates; Kish 1965, Miller 2024):

    * ``sigma^2_task = max(0, var(r, ddof=1) - mean_j(r_j (1 - r_j) / (n_j - 1)))``,
    * ``mu = mean(r)``, ``rho = sigma^2_task / (mu (1 - mu))``,
    * design effect ``= n_a (rho + (1 - rho) / n_h)`` with ``n_a`` the arithmetic and
      ``n_h`` the harmonic mean of ``n``.

    For equal ``n`` these are exactly ``var(r) - mean(r(1 - r)) / (n - 1)`` and
    ``1 + (n - 1) rho``. Unequal ``n`` (our choice, derived from the law of total variance):
    ``r_j (1 - r_j) / (n_j - 1)`` is unbiased for the within-task variance
    ``p_j (1 - p_j) / n_j`` of each task, so subtracting its mean from the sample variance of
    the rates keeps ``sigma^2_task`` unbiased; and the variance of ``mean(r)``,
    ``(mu (1 - mu) / N) (rho + (1 - rho) mean(1/n_j))``, divided by the naive
    ``mu (1 - mu) / sum(n)`` gives the design effect above.

    Parameters
    ----------
    n, c : 1-D array_like of int
        Trials and successes per task; at least two tasks and ``n_j >= 2`` (one trial cannot
        show within-task variation).

    Raises
    ------
    ValueError
        Fewer than two tasks, a task with ``n < 2``, or any count rule of
        :func:`~evalbayes.frequentist.pass_at_k`.
    """
    n_arr, c_arr = as_counts(n, c)
    if n_arr.ndim != 1:
        raise ValueError(f"n and c must be 1-D (one entry per task), got shape {n_arr.shape}")
    if n_arr.size < 2:
        raise ValueError("the intra-task correlation needs at least two tasks")
    if (n_arr < 2).any():
        idx = int(np.flatnonzero(n_arr < 2)[0])
        raise ValueError(
            f"n={n_arr[idx]} at {where(idx)}: the intra-task correlation needs at least two "
            "trials per task"
        )
    rates = c_arr / n_arr
    within = np.mean(rates * (1.0 - rates) / (n_arr - 1))
    task_variance = max(0.0, float(np.var(rates, ddof=1) - within))
    mean = float(rates.mean())
    n_arith = float(n_arr.mean())
    n_harm = float(1.0 / np.mean(1.0 / n_arr))
    between = mean * (1.0 - mean)
    if between == 0.0:
        rho = design_effect = float("nan")
    else:
        rho = task_variance / between
        design_effect = n_arith * (rho + (1.0 - rho) / n_harm)
    return IntraTaskCorrelation(
        rho=float(rho),
        design_effect=float(design_effect),
        task_variance=task_variance,
        mean=mean,
        trials_per_task=n_arith,
        n_tasks=int(n_arr.size),
    )
