"""Credible intervals of posterior draws: equal-tailed (ETI) and highest-density (HDI).

Draws are reduced over the sample dims ``(chain, draw)``; every other dim is kept.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from evalbayes._core.names import SAMPLE_DIMS, IntervalKind, check_ci_prob, check_interval_kind

__all__ = ["credible_interval", "interval_rows"]


def _lerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    """numpy's ``_lerp``: ``a + (b - a) t``, or ``b - (b - a)(1 - t)`` for ``t >= 0.5``."""
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


def interval_rows(
    rows: np.ndarray, ci_prob: float, kind: IntervalKind = "eti"
) -> tuple[np.ndarray, np.ndarray]:
    """Credible bounds of each row of ``rows`` (shape ``(n, m)``: ``m`` draws per row, the
    draws contiguous), **reordering each row in place** (a partition or a sort).

    Equal-tailed: ``np.quantile(rows, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=-1)``,
    the same numbers, by selecting only the four order statistics it interpolates. numpy's
    default ("linear", Hyndman & Fan 1996 type 7) reads the sorted draws at
    ``h = (m - 1) q`` (computed as numpy does), ``x_(floor h)`` and the next one, and returns
    numpy's ``_lerp`` of them with weight ``h - floor h``; it finds them by partitioning
    every row at six positions (the two pairs, and the first and last to look for NaN).
    Here each row is partitioned at two (the upper neighbour of the lower bound, the lower
    neighbour of the upper bound), and the other two are the largest entry before the first
    and the smallest after the second: 2.4x less time on 4000 draws (the pairs of
    ``compare``). Finite draws only (the callers' draws never hold NaN); tested against
    ``np.quantile``.

    Highest-density: the narrowest window of the sorted row holding ``ceil(ci_prob m)``
    draws, the first such window where several are equally narrow (Hyndman 1996).
    """
    n, m = rows.shape
    if kind == "hdi":
        rows.sort(axis=-1)
        width = int(np.ceil(ci_prob * m))
        if width >= m:
            return rows[:, 0].copy(), rows[:, -1].copy()
        start = np.argmin(rows[:, width:] - rows[:, : m - width], axis=-1)
        index = np.arange(n)
        return rows[index, start], rows[index, start + width]
    q = np.array([(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    virtual = (m - 1) * q
    previous = np.floor(virtual)
    gamma = virtual - previous
    lo, hi = int(previous[0]), int(previous[1])
    if m < 4 or hi + 1 > m - 1 or lo + 1 >= hi:  # bounds at the ends, or pairs that touch
        low, high = np.quantile(rows, q, axis=-1)
        return low, high
    rows.partition([lo + 1, hi], axis=-1)
    low = _lerp(rows[:, : lo + 1].max(axis=-1), rows[:, lo + 1], float(gamma[0]))
    high = _lerp(rows[:, hi], rows[:, hi + 1 :].min(axis=-1), float(gamma[1]))
    return low, high


def credible_interval(
    draws: xr.DataArray, ci_prob: float = 0.95, kind: IntervalKind = "eti"
) -> tuple[xr.DataArray, xr.DataArray]:
    """Lower and upper bounds of a credible interval over ``(chain, draw)``.

    Parameters
    ----------
    draws : xarray.DataArray
        Posterior draws with dims ``chain`` and ``draw`` (plus any others).
    ci_prob : float
        Probability mass inside the interval, in (0, 1).
    kind : {"eti", "hdi"}
        Equal-tailed (quantiles ``(1 - ci_prob)/2`` and ``(1 + ci_prob)/2``) or highest
        density (the narrowest interval holding ``ci_prob`` of the draws; Hyndman 1996).
    """
    ci_prob = check_ci_prob(ci_prob)
    missing = [d for d in SAMPLE_DIMS if d not in draws.dims]
    if missing:
        raise ValueError(f"draws need dims {SAMPLE_DIMS}, missing {missing}")
    check_interval_kind(kind)
    ordered = draws.transpose(*SAMPLE_DIMS, ...)
    values = ordered.values.reshape(-1, *ordered.shape[2:])
    template = ordered.isel(chain=0, draw=0, drop=True)
    # one call over every column (xarray's NaN-aware quantile works column by column and was
    # 2.4x slower); draws never contain NaN by construction
    rows = values.reshape(values.shape[0], -1).T.copy()  # (columns, draws), a copy to reorder
    lo, hi = interval_rows(rows, ci_prob, kind)
    shape = values.shape[1:]
    return template.copy(data=lo.reshape(shape)), template.copy(data=hi.reshape(shape))
