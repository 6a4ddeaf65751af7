"""xarray wrappers: pass@k / pass^k curves and pass rates of every system in an EvalData.

Dims and names match the Bayesian outputs minus ``chain, draw``: ``(system, k)`` or
``(system, task, k)``, coordinate ``k``. Missing cells (``n = 0``) are skipped.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import xarray as xr

from evalbayes.data import EvalData
from evalbayes.frequentist._checks import as_k
from evalbayes.frequentist._passk import (
    pass_at_k,
    pass_at_k_plugin,
    pass_hat_k,
    pass_hat_k_plugin,
)

__all__ = ["pass_curve", "pass_rates"]

_ESTIMATORS = {
    ("pass@k", False): (pass_at_k, "pass_at_k"),
    ("pass@k", True): (pass_at_k_plugin, "pass_at_k"),
    ("pass^k", False): (pass_hat_k, "pass_hat_k"),
    ("pass^k", True): (pass_hat_k_plugin, "pass_hat_k"),
}


def _coords_on(data: EvalData, dims: tuple[str, ...]) -> dict[str, Any]:
    return {
        str(name): coord
        for name, coord in data.dataset.coords.items()
        if coord.dims and set(coord.dims) <= set(dims)
    }


def pass_curve(
    data: EvalData,
    k: Any,
    metric: Literal["pass@k", "pass^k"] = "pass@k",
    *,
    per_task: bool = False,
    plugin: bool = False,
) -> xr.DataArray:
    """pass@k or pass^k of every system (and task) at each ``k``.

    Parameters
    ----------
    data : EvalData
        Counts with dims ``(system, task)``.
    k : int or 1-D array_like of int
        Attempts; always becomes the ``k`` dimension.
    metric : {"pass@k", "pass^k"}
        At least one of ``k`` succeeds, or all ``k`` succeed.
    per_task : bool
        Return ``(system, task, k)`` (NaN for missing cells) instead of the task average
        ``(system, k)``, which averages over each system's observed tasks (NaN for a system
        with none).
    plugin : bool
        Use the biased plug-in forms ``1 - (1 - c/n)^k`` / ``(c/n)^k`` instead of the
        unbiased estimators (to show the bias; defined for any ``k``).

    Raises
    ------
    ValueError
        Unknown metric, bad ``k``, or (unbiased estimators) ``k > n`` for an observed cell,
        naming the system and task.
    """
    if not isinstance(data, EvalData):
        raise TypeError(f"expected EvalData, got {type(data).__name__}")
    key = (metric, bool(plugin))
    if key not in _ESTIMATORS:
        raise ValueError(f"metric must be 'pass@k' or 'pass^k', got {metric!r}")
    estimator, name = _ESTIMATORS[key]
    k_arr, _ = as_k(k)
    n = data.n.values
    c = data.c.values
    observed = n > 0
    if not plugin:
        short = observed & (n < k_arr.max())
        if short.any():
            si, ti = np.argwhere(short)[0]
            raise ValueError(
                f"k={int(k_arr.max())} exceeds n={int(n[si, ti])} for system "
                f"{data.systems[si]!r}, task {data.tasks[ti]!r}; the unbiased {metric} needs "
                "1 <= k <= n (use smaller k, or plugin=True to see the biased plug-in)"
            )
    cells = np.full((*n.shape, k_arr.size), np.nan)
    cells[observed] = estimator(n[observed], c[observed], k_arr)
    attrs = {
        "metric": metric,
        "estimator": "plug-in" if plugin else "unbiased",
        "estimand": "tasks",
    }
    if per_task:
        dims: tuple[str, ...] = ("system", "task", "k")
        values = cells
    else:
        dims = ("system", "k")
        counts = observed.sum(axis=1)[:, None]
        totals = np.nansum(cells, axis=1)
        # a system with no observed task has no average: NaN, not a division warning
        values = np.divide(totals, counts, out=np.full_like(totals, np.nan), where=counts > 0)
    coords = {**_coords_on(data, dims), "k": k_arr}
    return xr.DataArray(values, dims=dims, coords=coords, name=name, attrs=attrs)


def pass_rates(data: EvalData) -> xr.Dataset:
    """Per-system pass@1 two ways, dims ``(system,)``.

    Variables: ``mean`` (task average of ``c/n``, the benchmark pass@1; Miller 2024),
    ``pooled`` (``sum c / sum n``, the trial-weighted pass@1), ``n_tasks`` (observed tasks) and
    ``n_trials``. Missing cells are skipped.
    """
    if not isinstance(data, EvalData):
        raise TypeError(f"expected EvalData, got {type(data).__name__}")
    observed = data.observed
    rates = data.rates
    return xr.Dataset(
        {
            "mean": rates.mean("task", skipna=True),
            "pooled": data.c.sum("task") / data.n.sum("task"),
            "n_tasks": observed.sum("task"),
            "n_trials": data.n.sum("task"),
        },
        coords=_coords_on(data, ("system",)),
        attrs={"estimand": "tasks"},
    )
