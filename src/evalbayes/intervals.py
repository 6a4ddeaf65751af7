"""Credible intervals of posterior draws: equal-tailed (ETI) and highest-density (HDI).

Draws are reduced over the sample dims ``(chain, draw)``; every other dim is kept.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import xarray as xr

__all__ = ["IntervalKind", "credible_interval"]

IntervalKind = Literal["eti", "hdi"]
SAMPLE_DIMS = ("chain", "draw")


def _hdi_1d(sorted_draws: np.ndarray, ci_prob: float) -> tuple[float, float]:
    """Narrowest window containing ``ceil(ci_prob * m)`` of ``m`` sorted draws."""
    m = sorted_draws.shape[0]
    width = int(np.ceil(ci_prob * m))
    if width >= m:
        return float(sorted_draws[0]), float(sorted_draws[-1])
    spans = sorted_draws[width:] - sorted_draws[: m - width]
    i = int(np.argmin(spans))
    return float(sorted_draws[i]), float(sorted_draws[i + width])


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
    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must lie in (0, 1), got {ci_prob}")
    missing = [d for d in SAMPLE_DIMS if d not in draws.dims]
    if missing:
        raise ValueError(f"draws need dims {SAMPLE_DIMS}, missing {missing}")
    stacked = draws.stack(sample=SAMPLE_DIMS).transpose("sample", ...)
    if kind == "eti":
        q = stacked.quantile([(1 - ci_prob) / 2, (1 + ci_prob) / 2], dim="sample")
        return q.isel(quantile=0, drop=True), q.isel(quantile=1, drop=True)
    if kind != "hdi":
        raise ValueError(f"kind must be 'eti' or 'hdi', got {kind!r}")
    values = np.sort(stacked.values, axis=0)
    flat = values.reshape(values.shape[0], -1)
    bounds = np.array([_hdi_1d(flat[:, j], ci_prob) for j in range(flat.shape[1])])
    shape = values.shape[1:]
    template = stacked.isel(sample=0, drop=True)
    lower = template.copy(data=bounds[:, 0].reshape(shape))
    upper = template.copy(data=bounds[:, 1].reshape(shape))
    return lower, upper
