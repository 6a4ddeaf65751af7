"""Credible intervals of posterior draws: equal-tailed (ETI) and highest-density (HDI).

Draws are reduced over the sample dims ``(chain, draw)``; every other dim is kept.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from evalbayes._core.names import SAMPLE_DIMS, IntervalKind, check_ci_prob, check_interval_kind

__all__ = ["credible_interval", "equal_tailed"]


def _hdi_1d(sorted_draws: np.ndarray, ci_prob: float) -> tuple[float, float]:
    """Narrowest window containing ``ceil(ci_prob * m)`` of ``m`` sorted draws."""
    m = sorted_draws.shape[0]
    width = int(np.ceil(ci_prob * m))
    if width >= m:
        return float(sorted_draws[0]), float(sorted_draws[-1])
    spans = sorted_draws[width:] - sorted_draws[: m - width]
    i = int(np.argmin(spans))
    return float(sorted_draws[i]), float(sorted_draws[i + width])


def equal_tailed(values: np.ndarray, ci_prob: float) -> tuple[np.ndarray, np.ndarray]:
    """``np.quantile(values, [(1 - ci_prob) / 2, (1 + ci_prob) / 2], axis=0)``, the same
    numbers, by selecting only the four order statistics it interpolates.

    numpy's default ("linear", Hyndman & Fan 1996 type 7) reads the sorted draws at
    ``h = (m - 1) q`` (computed as numpy does), ``x_(floor h)`` and the next one, and returns
    numpy's ``_lerp`` of them with weight ``h - floor h``; it finds them by partitioning
    every column at six positions (the two pairs, and the first and last to look for NaN).
    Here each column is partitioned at two (the upper neighbour of the lower bound, the lower
    neighbour of the upper bound), in a draws-last copy (contiguous rows), and the other two
    are the largest entry before the first and the smallest after the second: 2.4x less
    time on 4000 draws (the pairs of ``compare``). Finite draws only (the callers' draws
    never hold NaN); tested against ``np.quantile``.
    """
    m = values.shape[0]
    q = np.array([(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    virtual = (m - 1) * q
    previous = np.floor(virtual)
    gamma = virtual - previous
    lo, hi = int(previous[0]), int(previous[1])
    if m < 4 or hi + 1 > m - 1 or lo + 1 >= hi:  # bounds at the ends, or pairs that touch
        low, high = np.quantile(values, q, axis=0)
        return low, high
    rows = np.ascontiguousarray(values.reshape(m, -1).T)  # (columns, draws)
    rows.partition([lo + 1, hi], axis=-1)
    a = (rows[:, :lo + 1].max(axis=-1), rows[:, hi])
    b = (rows[:, lo + 1], rows[:, hi + 1:].min(axis=-1))
    out = []
    for i in range(2):  # numpy's _lerp: a + (b - a) t, or b - (b - a)(1 - t) for t >= 0.5
        diff = b[i] - a[i]
        t = gamma[i]
        value = b[i] - diff * (1 - t) if t >= 0.5 else a[i] + diff * t
        out.append(value.reshape(values.shape[1:]))
    return out[0], out[1]


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
    if kind == "eti":
        # np.quantile over the sample axis in one call (xarray's NaN-aware quantile works
        # column by column and was 2.4x slower); draws never contain NaN by construction.
        lo, hi = equal_tailed(values, ci_prob)
        return template.copy(data=lo), template.copy(data=hi)
    ordered_values = np.sort(values, axis=0)
    flat = ordered_values.reshape(ordered_values.shape[0], -1)
    bounds = np.array([_hdi_1d(flat[:, j], ci_prob) for j in range(flat.shape[1])])
    shape = ordered_values.shape[1:]
    return (
        template.copy(data=bounds[:, 0].reshape(shape)),
        template.copy(data=bounds[:, 1].reshape(shape)),
    )
