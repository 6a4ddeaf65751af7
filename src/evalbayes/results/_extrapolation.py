"""Where a pass@k curve is extrapolation: k beyond the trials a system actually ran.

A model can report pass@k for any k, but for ``k > n`` (the most trials the system ran on any
task) the value rests on the assumed shape of the rate distribution below ``1 / n``, not on
observed repeats: with the Beta-Binomial, on the Beta's tail; with the IRT and design models,
on their logit-normal shapes; with the rate grid, on the smoothness of a learned log-density,
which leaves the mass between 0 and ``1 / n`` as uncertain as the data do. Curves, tables and
plots mark that stretch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from evalbayes.data import EvalData

__all__ = ["extrapolated", "max_trials"]


def max_trials(data: EvalData) -> xr.DataArray:
    """Per system, the largest number of trials on any of its tasks, dims ``(system,)``.

    ``k`` up to this value is interpolation for at least one task (the unbiased pass@k of that
    task exists); beyond it, every task's value is extrapolated.
    """
    n = data.n
    return n.max(dim="task").rename("max_trials")


def extrapolated(data: EvalData, k: Any) -> xr.DataArray:
    """Boolean ``(system, k)``: True where ``k`` exceeds :func:`max_trials` of the system."""
    ks = np.atleast_1d(np.asarray(k))
    limit = max_trials(data)
    return xr.DataArray(
        ks[None, :] > limit.values[:, None],
        dims=("system", "k"),
        coords={"system": limit["system"].values, "k": ks},
        name="extrapolated",
    )
