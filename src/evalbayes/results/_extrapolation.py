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

__all__ = ["extrapolated", "max_trials", "one_trial_note"]


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


def one_trial_note(data: EvalData, k: Any = None) -> str | None:
    """A sentence for wherever pass@k or pass^k beyond k = 1 is shown of systems that ran at
    most one trial per task; None when no such system (or no ``k > 1`` among ``k``).

    With ``n = 1`` a task's outcome is Bernoulli(p) whatever the spread of the task rates
    ``p`` around their mean, so the data say nothing of that spread; pass@k = E[1 - (1 - p)^k]
    and pass^k = E[p^k] for k > 1 depend on it and are then the model's assumption (its prior,
    or what a shared hyperprior borrows from other systems), not a measurement. Fits warn
    once when they run; this note goes beside the numbers.
    """
    if k is not None and not (np.atleast_1d(np.asarray(k, dtype=float)) > 1).any():
        return None
    limit = max_trials(data)
    single = [str(s) for s, m in zip(limit["system"].values, limit.values, strict=True) if m <= 1]
    if not single:
        return None
    total = len(limit)
    if len(single) == total:
        who = "every system" if total > 1 else "the system"
    else:
        listed = ", ".join(single[:5]) + (", ..." if len(single) > 5 else "")
        who = f"{len(single)} of {total} systems ({listed})"
    return (
        f"{who} ran one trial per task (n = 1): pass@k and pass^k for k > 1 are not measured; "
        "they come from the model's assumed spread of task rates (its prior), not from the "
        "data. Only k = 1 rests on the data; run repeated trials to measure k > 1."
    )
