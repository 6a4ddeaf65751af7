"""Build the crosscheck report: the per-system and paired blocks from :class:`EvalData`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from evalbayes._core.names import UNSET, Unset, pick_seed
from evalbayes.data import EvalData
from evalbayes.frequentist import (
    intra_task_correlation,
    mcnemar,
    mcnemar_mde,
    mean_pass_at_k,
    mean_pass_hat_k,
    non_inferiority,
    paired_comparison,
    paired_outcomes,
    task_bootstrap_ci,
    wilson_interval,
)
from evalbayes.frequentist._checks import as_k
from evalbayes.frequentist._rng import Seed
from evalbayes.frequentist.crosscheck._report import (
    SATURATED_SHARE,
    SMALL_SUITE,
    ComparisonCrosscheck,
    CrosscheckReport,
    SystemCrosscheck,
)

__all__ = ["crosscheck"]


def _default_k(min_n: int) -> tuple[int, ...]:
    """Powers of two up to ``min_n``."""
    return tuple(2**i for i in range(int(math.log2(min_n)) + 1))


def _cluster_labels(data: EvalData, cluster: str | None) -> np.ndarray | None:
    if cluster is None:
        return None
    coord = data.dataset.coords.get(cluster)
    if coord is None or coord.dims != ("task",):
        raise ValueError(
            f"cluster {cluster!r} is not a task coordinate; task coordinates: "
            f"{sorted(data.task_coords)}"
        )
    return np.asarray(coord.values)


def _system_block(
    data: EvalData,
    index: int,
    k: tuple[int, ...],
    clusters: np.ndarray | None,
    n_resamples: int,
    ci_prob: float,
    seed: Seed,
) -> SystemCrosscheck:
    name = data.systems[index]
    n_all = data.n.values[index]
    observed = n_all > 0
    if not observed.any():
        raise ValueError(f"system {name!r} has no observed task (n = 0 everywhere)")
    n = n_all[observed]
    c = data.c.values[index][observed]
    notes: list[str] = []
    missing = int((~observed).sum())
    if missing:
        notes.append(f"{missing} tasks not run (n = 0) are left out")
    min_n = int(n.min())
    usable = [kk for kk in k if kk <= min_n]
    skipped = [kk for kk in k if kk > min_n]
    if skipped:
        notes.append(
            f"pass@k and pass^k at k = {', '.join(map(str, skipped))} not computed: the "
            f"unbiased estimators need k <= the smallest n ({min_n})"
        )
    at_k = dict.fromkeys(k, float("nan"))
    hat_k = dict.fromkeys(k, float("nan"))
    if usable:
        at_k.update(zip(usable, np.atleast_1d(mean_pass_at_k(n, c, usable)).tolist(), strict=True))
        hat_k.update(
            zip(usable, np.atleast_1d(mean_pass_hat_k(n, c, usable)).tolist(), strict=True)
        )
    correlation = None
    if n.size < 2 or min_n < 2:
        notes.append("intra-task correlation not estimated: needs >= 2 tasks with >= 2 trials")
    else:
        correlation = intra_task_correlation(n, c)
        if not math.isfinite(correlation.rho):
            notes.append("intra-task correlation undefined: every trial passed or every one failed")
    labels = None if clusters is None else clusters[observed]
    saturated_share = float(np.mean(c == n))
    return SystemCrosscheck(
        system=name,
        n_tasks=int(n.size),
        n_trials=int(n.sum()),
        min_trials=min_n,
        pass1_mean=float(np.mean(c / n)),
        pass1_pooled=float(c.sum() / n.sum()),
        wilson=wilson_interval(int(c.sum()), int(n.sum()), ci_prob),
        task_bootstrap=task_bootstrap_ci(
            n, c, labels, n_resamples=n_resamples, ci_prob=ci_prob, seed=seed
        ),
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        correlation=correlation,
        flaky=int(np.sum((c > 0) & (c < n))),
        saturated_share=saturated_share,
        saturated=saturated_share >= SATURATED_SHARE,
        small_suite=n.size < SMALL_SUITE,
        notes=tuple(notes),
    )


def _comparison_block(
    data: EvalData,
    pair: Sequence[str],
    clusters: np.ndarray | None,
    n_resamples: int,
    ci_prob: float,
    seed: Seed,
    margin: float | None,
) -> ComparisonCrosscheck:
    if isinstance(pair, str) or len(pair) != 2:
        raise ValueError(f"compare must be a pair (A, B) of system names, got {pair!r}")
    a, b = (str(x) for x in pair)
    paired = data.paired(a, b)
    labels = None
    if clusters is not None:
        position = {t: i for i, t in enumerate(data.tasks)}
        labels = clusters[[position[t] for t in paired.tasks]]
    comp = paired_comparison(
        paired.rates_a,
        paired.rates_b,
        clusters=labels,
        n_resamples=n_resamples,
        ci_prob=ci_prob,
        seed=seed,
    )
    outcomes = paired_outcomes(paired.n_a, paired.c_a, paired.n_b, paired.c_b)
    n_tasks = len(paired.tasks)
    ni = None
    if margin is not None:
        ni = non_inferiority(
            paired.rates_a,
            paired.rates_b,
            margin,
            clusters=labels,
            n_resamples=n_resamples,
            ci_prob=ci_prob,
            seed=seed,
        )
    return ComparisonCrosscheck(
        baseline=a,
        system=b,
        n_tasks=n_tasks,
        difference=comp.difference,
        interval=comp.interval,
        sign_flip=comp.sign_flip,
        outcomes=outcomes,
        mcnemar=mcnemar(outcomes.only_a, outcomes.only_b),
        verdict=comp.verdict,
        mde=mcnemar_mde(n_tasks, (outcomes.only_a + outcomes.only_b) / n_tasks),
        non_inferiority=ni,
        dropped=paired.dropped,
    )


def crosscheck(
    data: EvalData,
    k: Sequence[int] | int | None = None,
    compare: Sequence[str] | None = None,
    *,
    n_resamples: int = 10_000,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
    ci_prob: float = 0.95,
    cluster: str | None = None,
    margin: float | None = None,
) -> CrosscheckReport:
    """Frequentist cross-check report of every system, and optionally of a pair.

    Parameters
    ----------
    data : EvalData
        Counts; missing cells (``n = 0``) are skipped.
    k : int or sequence of int, optional
        pass@k / pass^k at these ``k``; default the powers of two up to the smallest ``n``
        of any observed cell. A ``k`` above a system's smallest ``n`` is reported as missing
        with a note.
    compare : (str, str), optional
        ``(A, B)``: add the paired block for B - A on the tasks both ran.
    n_resamples : int
        Bootstrap and Monte Carlo resamples (10,000 by default).
    seed : int, numpy.random.Generator or None
        Same seed, same report. An int seeds each random path afresh, so one system's
        numbers do not depend on which other systems are in the data.
    random_seed : optional
        PyMC's name for ``seed``; give either (both given must agree).
    ci_prob : float
        Nominal coverage of every interval.
    cluster : str, optional
        A task coordinate (e.g. ``"family"``): bootstraps and the sign-flip test resample
        whole groups of tasks.
    margin : float, optional
        Non-inferiority margin ``D`` for the paired block (Piaggio et al. 2012).
    """
    seed = pick_seed(seed, random_seed)
    if not isinstance(data, EvalData):
        raise TypeError(f"expected EvalData, got {type(data).__name__}")
    observed_n = data.n.values[data.n.values > 0]
    if k is None:
        ks = _default_k(int(observed_n.min()))
    else:
        ks = tuple(int(v) for v in as_k(k)[0])
    clusters = _cluster_labels(data, cluster)
    systems = tuple(
        _system_block(data, i, ks, clusters, n_resamples, ci_prob, seed)
        for i in range(len(data.systems))
    )
    comparison = None
    if compare is not None:
        comparison = _comparison_block(data, compare, clusters, n_resamples, ci_prob, seed, margin)
    elif margin is not None:
        raise ValueError("margin needs compare=(A, B)")
    return CrosscheckReport(
        systems=systems,
        comparison=comparison,
        k=ks,
        ci_prob=float(ci_prob),
        n_resamples=int(n_resamples),
        seed=seed if isinstance(seed, int) else None,
        cluster=cluster,
    )
