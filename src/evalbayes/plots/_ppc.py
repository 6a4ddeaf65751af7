"""Posterior predictive check plot: observed histogram of per-task counts against replicates."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from evalbayes.plots._common import finish, get_axes
from evalbayes.results._posterior import PosteriorPredictiveCheck

__all__ = ["plot_ppc"]

_COLUMNS = ("system", "bin", "observed", "mean", "lower", "upper", "outside")


def plot_ppc(
    check: PosteriorPredictiveCheck, system: str | None = None, *, ax: Axes | None = None
) -> Axes:
    """Bars of the observed number of tasks per bin; points and bars of the replicates.

    Parameters
    ----------
    check : PosteriorPredictiveCheck
        From :meth:`Posterior.ppc`: per system and bin (successes ``c = 0..n``, or ten rate
        bins when ``n`` varies) the observed count of tasks and the replicated mean and
        central ``ci_prob`` interval.
    system : str, optional
        Which system; required when the check holds several.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).

    Bins whose observed count falls outside the replicated interval are marked with a red
    triangle; a well-specified model leaves about ``1 - ci_prob`` of bins outside.
    """
    if not isinstance(check, PosteriorPredictiveCheck):
        raise TypeError(
            f"expected a PosteriorPredictiveCheck (Posterior.ppc()), got {type(check).__name__}"
        )
    missing = [c for c in _COLUMNS if c not in check.table.columns]
    if missing:
        raise ValueError(f"the check's table lacks columns {missing}")
    systems = list(dict.fromkeys(str(s) for s in check.table["system"]))
    if system is None:
        if len(systems) != 1:
            raise ValueError(f"the check covers several systems {systems}; choose one: system=")
        system = systems[0]
    elif system not in systems:
        raise ValueError(f"unknown system {system!r}; the check covers {systems}")
    rows = check.table[check.table["system"].astype(str) == system]
    ax = get_axes(ax, figsize=(max(6.4, 0.12 * len(rows) + 2), 3.8))
    x = np.arange(len(rows), dtype=float)
    observed = rows["observed"].to_numpy(dtype=float)
    mean = rows["mean"].to_numpy(dtype=float)
    lower = rows["lower"].to_numpy(dtype=float)
    upper = rows["upper"].to_numpy(dtype=float)
    outside = rows["outside"].to_numpy(dtype=bool)
    ax.bar(x, observed, width=0.8, color="0.78", label="observed")
    # the replicated mean of a skewed count can lie outside its quantile interval
    ax.vlines(x, lower, upper, color="C0", lw=2, label=f"replicated {check.ci_prob:.0%} interval")
    ax.plot(x, mean, "o", ms=3.5, color="C0", mfc="white", label="replicated mean")
    if outside.any():
        ax.plot(x[outside], observed[outside], "v", color="C3", ms=7,
                label="outside the interval")
    labels = rows["bin"].astype(str).tolist()
    step = max(1, int(np.ceil(len(labels) / 20)))
    ax.set_xticks(x[::step])
    ax.set_xticklabels(labels[::step], rotation=0 if check.bins == "count" else 30)
    ax.set_xlabel("successes c per task" if check.bins == "count" else "success rate c / n")
    ax.set_ylabel("number of tasks")
    ax.set_title(
        f"Posterior predictive check\n{system}\n"
        f"{int(outside.sum())} of {len(rows)} bins outside the {check.ci_prob:.0%} interval",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    return finish(ax)

