"""Percentile bootstrap intervals: over units, tasks (clusters), episodes, and paired units.

Which unit to resample decides which question the interval answers (Miller 2024):
resampling tasks answers "how well on tasks like these" (the population estimand);
resampling episodes answers at most "how well on these tasks" and is far too narrow when
tasks differ. Every function is seeded and vectorised: resamples are drawn in blocks of at
most ``2**22`` indices, with no Python loop per resample.

References
----------
Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
evaluations. arXiv:2411.00640.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.names import UNSET, Unset, check_ci_prob, check_count, pick_seed
from evalbayes._core.rendering import Rendered
from evalbayes.frequentist._checks import as_clusters, as_counts, as_values
from evalbayes.frequentist._rng import Seed, as_generator

__all__ = [
    "BootstrapResult",
    "bootstrap_ci",
    "episode_bootstrap_ci",
    "paired_bootstrap_ci",
    "task_bootstrap_ci",
]

_BLOCK = 1 << 22  # resampled indices drawn at once
_FEW_VALUES = 4  # resample value counts when units take at most N / 4 distinct values


@dataclass(frozen=True)
class BootstrapResult(Rendered):
    """A mean with its percentile bootstrap interval.

    Attributes
    ----------
    estimate : float
        The statistic on the observed data (a mean over units).
    lower, upper : float
        The ``(1 - ci_prob)/2`` and ``(1 + ci_prob)/2`` quantiles of the resampled means
        (NumPy's default linear quantile).
    ci_prob : float
        Nominal coverage.
    n_resamples : int
        Number of bootstrap resamples.
    unit : str
        What was resampled: ``"units"``, ``"clusters"``, ``"tasks"`` or ``"episodes"``.
    n_units : int
        How many of them the data had.
    """

    _settings_fields = ("ci_prob", "n_resamples", "unit")

    estimate: float
    lower: float
    upper: float
    ci_prob: float
    n_resamples: int
    unit: str
    n_units: int


def _resampled_means(
    sums: np.ndarray, sizes: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Means ``sum(sums[idx]) / sum(sizes[idx])`` over ``n_resamples`` draws of ``idx``.

    When the units take few distinct ``(sum, size)`` values (binary outcomes, a handful of
    trials per task), each resample is drawn as the counts of those values, ``Multinomial(N,
    m_j / N)`` for a value shared by ``m_j`` of the ``N`` units: the same distribution as
    ``N`` uniform indices drawn with replacement, at ``O(distinct)`` per resample instead of
    ``O(N)`` (on SWE-bench Verified, 500 binary tasks, two values instead of 500 indices).
    """
    n_units = sums.size
    values, counts = np.unique(np.stack([sums, sizes], axis=1), axis=0, return_counts=True)
    if len(values) * _FEW_VALUES <= n_units:
        out = np.empty(n_resamples)
        step = max(1, _BLOCK // len(values))
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            drawn = rng.multinomial(n_units, counts / n_units, size=rows).astype(float)
            out[start : start + rows] = (drawn @ values[:, 0]) / (drawn @ values[:, 1])
        return out
    out = np.empty(n_resamples)
    equal = bool(np.all(sizes == sizes[0]))
    step = max(1, _BLOCK // n_units)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        idx = rng.integers(0, n_units, size=(rows, n_units))
        total = sums[idx].sum(axis=1)
        out[start : start + rows] = (
            total / (sizes[0] * n_units) if equal else total / sizes[idx].sum(axis=1)
        )
    return out


def _interval(
    estimate: float, means: np.ndarray, ci_prob: float, unit: str, n_units: int
) -> BootstrapResult:
    tail = (1.0 - ci_prob) / 2.0
    lower, upper = np.quantile(means, [tail, 1.0 - tail])
    return BootstrapResult(
        estimate=float(estimate),
        lower=float(lower),
        upper=float(upper),
        ci_prob=ci_prob,
        n_resamples=int(means.size),
        unit=unit,
        n_units=n_units,
    )


def bootstrap_ci(
    values: Any,
    *,
    n_resamples: int = 10_000,
    ci_prob: float = 0.95,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
    clusters: Any = None,
) -> BootstrapResult:
    """Percentile bootstrap interval for the mean of ``values``, one value per unit.

    Resample the units with replacement ``n_resamples`` times and take the ``(1 -
    ci_prob)/2`` and ``(1 + ci_prob)/2`` quantiles of the resampled means (Efron and
    Tibshirani 1993; 10,000 seeded resamples by default). With ``clusters`` whole
    clusters are resampled (the cluster bootstrap; Miller 2024): each resample draws as many
    clusters as there are, with replacement, and its statistic is the mean over the units
    they carry.

    Parameters
    ----------
    values : 1-D array_like of float
        One finite value per unit.
    n_resamples : int
        Number of resamples (positive).
    ci_prob : float
        Nominal coverage in (0, 1).
    seed : int, numpy.random.Generator or None
        Same seed, same interval.
    random_seed : optional
        PyMC's name for ``seed``; give either (both given must agree).
    clusters : 1-D array_like, optional
        A label per unit (e.g. the repository of each task).

    Raises
    ------
    ValueError
        Empty or non-finite values, cluster labels of the wrong length or missing,
        ``n_resamples < 1``, ``ci_prob`` outside (0, 1).
    """
    seed = pick_seed(seed, random_seed)
    vals = as_values(values, "values")
    level = check_ci_prob(ci_prob)
    n_resamples = check_count(n_resamples, "n_resamples")
    rng = as_generator(seed)
    if clusters is None:
        sums, sizes, unit = vals, np.ones(vals.size), "units"
    else:
        codes, labels = as_clusters(clusters, vals.size)
        sums = np.bincount(codes, weights=vals, minlength=labels.size)
        sizes = np.bincount(codes, minlength=labels.size).astype(np.float64)
        unit = "clusters"
    means = _resampled_means(sums, sizes, n_resamples, rng)
    return _interval(vals.mean(), means, level, unit, int(sums.size))


def task_bootstrap_ci(
    n: Any,
    c: Any,
    clusters: Any = None,
    *,
    n_resamples: int = 10_000,
    ci_prob: float = 0.95,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
) -> BootstrapResult:
    """Task-level (cluster) bootstrap of the task-average pass rate ``mean(c/n)``.

    Resamples tasks, each carrying all its trials, which is :func:`bootstrap_ci` of the
    per-task rates (Miller 2024: the interval for "tasks like these"). With ``clusters`` (e.g. a
    repository or bug family per task) whole groups of tasks are resampled instead.

    Parameters
    ----------
    n, c : 1-D array_like of int
        Trials and successes per task (``n >= 1``).
    clusters : 1-D array_like, optional
        A label per task.
    n_resamples, ci_prob, seed, random_seed
        As :func:`bootstrap_ci`.
    """
    seed = pick_seed(seed, random_seed)
    n_arr, c_arr = as_counts(n, c)
    if n_arr.ndim != 1:
        raise ValueError(f"n and c must be 1-D (one entry per task), got shape {n_arr.shape}")
    result = bootstrap_ci(
        c_arr / n_arr, n_resamples=n_resamples, ci_prob=ci_prob, seed=seed, clusters=clusters
    )
    if clusters is None:
        return BootstrapResult(**{**result.__dict__, "unit": "tasks"})
    return result


def episode_bootstrap_ci(
    n: Any,
    c: Any,
    *,
    n_resamples: int = 10_000,
    ci_prob: float = 0.95,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
) -> BootstrapResult:
    """Naive bootstrap that resamples individual episodes (trials) as if independent.

    Shown for contrast (Miller 2024): when tasks differ, episodes of one task are correlated and
    this interval is too narrow for the population by ``sqrt(design effect)``. Resampling
    ``E = sum(n)`` episodes with replacement from outcomes of which ``S = sum(c)`` are
    successes gives ``Binomial(E, S/E)`` successes, so each resampled mean is drawn exactly
    as ``Binomial(E, S/E) / E``. The estimate is the pooled rate ``S / E``.
    """
    seed = pick_seed(seed, random_seed)
    n_arr, c_arr = as_counts(n, c)
    level = check_ci_prob(ci_prob)
    n_resamples = check_count(n_resamples, "n_resamples")
    rng = as_generator(seed)
    episodes = int(n_arr.sum())
    successes = int(c_arr.sum())
    means = rng.binomial(episodes, successes / episodes, size=n_resamples) / episodes
    return _interval(successes / episodes, means, level, "episodes", episodes)


def paired_bootstrap_ci(
    a: Any,
    b: Any,
    clusters: Any = None,
    *,
    n_resamples: int = 10_000,
    ci_prob: float = 0.95,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
) -> BootstrapResult:
    """Paired bootstrap interval for ``mean(b - a)`` over units both systems ran.

    Resamples the same units (or clusters) for both systems, so shared difficulty cancels
    (the paired analysis of Miller 2024).

    Parameters
    ----------
    a, b : 1-D array_like of float
        Per-unit scores (e.g. pass rates) of the baseline A and of B, same length.
    clusters, n_resamples, ci_prob, seed, random_seed
        As :func:`bootstrap_ci`.
    """
    seed = pick_seed(seed, random_seed)
    a_arr = as_values(a, "a")
    b_arr = as_values(b, "b")
    if a_arr.shape != b_arr.shape:
        raise ValueError(
            f"a and b must be paired (same length), got shapes {a_arr.shape} and {b_arr.shape}"
        )
    return bootstrap_ci(
        b_arr - a_arr, n_resamples=n_resamples, ci_prob=ci_prob, seed=seed, clusters=clusters
    )
