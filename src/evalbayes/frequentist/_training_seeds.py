"""Training noise versus evaluation noise: runs (training seeds) evaluated more than once.

A recipe claim ("recipe B beats recipe A") is about the distribution of checkpoints a recipe
produces, so its unit of replication is the training run. Evaluating each run twice or more
with independent episodes separates the two kinds of noise by the one-way random-effects
ANOVA (Searle, Casella and McCulloch 1992, "Variance Components", §3.5)::

    x[r, e] = m + u[r] + eps[r, e],   Var(u) = s2_train,   Var(eps) = s2_eval

    s2_eval  = mean_r  s^2(x[r, :])                     (within-run sample variance)
    s2_train = max(0, s^2(xbar[r]) - s2_eval / E)      (between-run, net of evaluation noise)

With ``E = 2`` evaluations per run the within-run variance is ``(x1 - x2)^2 / 2``.
:func:`recipe_difference_se` is the standard error of a difference of two recipes' means for a
design of ``runs x tasks x trials`` from the nested components.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.names import check_ci_prob
from evalbayes.frequentist._checks import as_values

__all__ = [
    "RecipeDifference",
    "TrainingNoise",
    "recipe_difference",
    "recipe_difference_se",
    "training_noise",
]


@dataclass(frozen=True)
class TrainingNoise:
    """Evaluation noise and training (seed) noise from replicated evaluations.

    Attributes
    ----------
    eval_sd : float
        Standard deviation of one evaluation of a fixed checkpoint, ``sqrt(s2_eval)``.
    run_sd : float
        Standard deviation across runs of their mean evaluations (both kinds of noise).
    training_sd : float
        ``sqrt(max(0, run_sd^2 - eval_sd^2 / E))``: the spread of the recipe's checkpoints.
    training_var_raw : float
        The moment estimate before truncation at 0 (negative: the runs spread less than
        their evaluation noise predicts).
    run_means : numpy.ndarray
        Mean evaluation per run.
    n_runs, n_evals : int
        Runs and evaluations per run.
    """

    eval_sd: float
    run_sd: float
    training_sd: float
    training_var_raw: float
    run_means: np.ndarray
    n_runs: int
    n_evals: int


def training_noise(evals: Any) -> TrainingNoise:
    """Split the spread of replicated evaluations into training and evaluation noise.

    Parameters
    ----------
    evals : array_like, shape (runs, evaluations)
        Pass rates (or any score) of each run's independent evaluations; at least 2 runs
        and 2 evaluations per run.
    """
    x = as_values(evals, "evals", ndim=2)
    runs, reps = x.shape
    if runs < 2 or reps < 2:
        raise ValueError(
            f"training_noise needs >= 2 runs and >= 2 evaluations per run, got {x.shape}"
        )
    eval_var = float(np.mean(np.var(x, axis=1, ddof=1)))
    means = x.mean(axis=1)
    run_var = float(np.var(means, ddof=1))
    raw = run_var - eval_var / reps
    return TrainingNoise(
        eval_sd=float(np.sqrt(eval_var)),
        run_sd=float(np.sqrt(run_var)),
        training_sd=float(np.sqrt(max(0.0, raw))),
        training_var_raw=raw,
        run_means=means,
        n_runs=runs,
        n_evals=reps,
    )


def recipe_difference_se(
    sigma_run: float,
    sigma_run_task: float,
    sigma_trial: float,
    runs: Any,
    tasks: Any,
    trials: Any,
) -> np.ndarray:
    """Standard error of the difference of two recipes' means under a nested design.

    ``se^2 = 2 (s_run^2 / R + s_rt^2 / (R T) + s_trial^2 / (R T n))`` for ``R`` runs per
    recipe, the same ``T`` tasks for both recipes (the task main effect cancels) and ``n``
    trials per (run, task); ``s_rt`` is the run-by-task interaction and ``s_trial^2`` the
    within-cell trial variance (``E[p (1 - p)]`` on the rate scale). The law of total
    variance applied to a three-level nested design (Snedecor and Cochran 1989, §13.11).
    Broadcasts over ``runs``, ``tasks``, ``trials``.
    """
    r, t, n = (np.asarray(v, dtype=np.float64) for v in (runs, tasks, trials))
    if (r < 1).any() or (t < 1).any() or (n < 1).any():
        raise ValueError("runs, tasks and trials must be >= 1")
    var = sigma_run**2 / r + sigma_run_task**2 / (r * t) + sigma_trial**2 / (r * t * n)
    return np.sqrt(2.0 * var)


@dataclass(frozen=True)
class RecipeDifference:
    """Difference of two recipes' mean scores with runs as the unit (Welch).

    Attributes
    ----------
    estimate, se, lower, upper, df, ci_prob
        ``mean(B) - mean(A)``, Welch's standard error, t interval and degrees of freedom.
    """

    estimate: float
    se: float
    lower: float
    upper: float
    df: float
    ci_prob: float


def recipe_difference(scores_a: Any, scores_b: Any, *, ci_prob: float = 0.95) -> RecipeDifference:
    """Welch interval for ``mean(B) - mean(A)`` over training runs (one score per run).

    The runs, not the episodes, are the unit: each run's score is its pass rate over all its
    tasks and trials, and the interval is Welch's (1947) t interval with
    ``df = (va + vb)^2 / (va^2 / (Ra - 1) + vb^2 / (Rb - 1))``, ``va = s_A^2 / R_A``.
    """
    a = as_values(scores_a, "scores_a")
    b = as_values(scores_b, "scores_b")
    if a.size < 2 or b.size < 2:
        raise ValueError(f"each recipe needs >= 2 runs, got {a.size} and {b.size}")
    level = check_ci_prob(ci_prob)
    va, vb = np.var(a, ddof=1) / a.size, np.var(b, ddof=1) / b.size
    se = float(np.sqrt(va + vb))
    est = float(b.mean() - a.mean())
    if se == 0:
        return RecipeDifference(est, 0.0, est, est, float("inf"), level)
    df = float((va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1)))
    from scipy import stats  # ~1 s to import: only where a t quantile is needed

    q = float(stats.t.isf((1 - level) / 2, df))
    return RecipeDifference(est, se, est - q * se, est + q * se, df, level)
