"""Forest of systems at chosen k, ordered by the posterior: the leaderboard view."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from matplotlib.axes import Axes

from evalbayes._core.intervals import credible_interval
from evalbayes.plots._common import error_arms, finish, get_axes, plot_label, title_suffix

__all__ = ["plot_system_forest"]


def plot_system_forest(
    draws: xr.DataArray,
    k: Sequence[float] | float | None = None,
    *,
    ci_prob: float = 0.95,
    highlight: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Posterior mean and ``ci_prob`` equal-tailed interval of every system at each chosen k.

    Systems are ordered by the posterior mean at the first chosen k (best at the top); one
    marker colour per k. Readable from 2 to 150+ systems: the figure height grows with the
    number of systems and labels shrink past 40.

    Parameters
    ----------
    draws : xarray.DataArray
        Dims ``(chain, draw, <unit>, k)`` with one unit dim (e.g. ``system``), e.g.
        ``Posterior.pass_at_k(...)``.
    k : float or sequence of float, optional
        Which k (default: the smallest and largest available).
    ci_prob : float
        Interval probability.
    highlight : sequence of str, optional
        Systems whose labels are drawn bold.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    if not isinstance(draws, xr.DataArray) or not {"chain", "draw", "k"} <= set(draws.dims):
        raise ValueError("draws must be a DataArray with dims chain, draw, <unit>, k")
    units = [d for d in draws.dims if d not in ("chain", "draw", "k")]
    if len(units) != 1:
        raise ValueError(f"draws must have exactly one unit dim besides chain/draw/k: {units}")
    unit = units[0]
    available = draws["k"].values.astype(float)
    if k is None:
        chosen = sorted({float(available.min()), float(available.max())})
    else:
        chosen = [float(v) for v in np.atleast_1d(k)]
    missing = [v for v in chosen if v not in available]
    if missing:
        raise ValueError(f"k {missing} not in the draws (available: {available.tolist()})")
    names = [str(v) for v in draws[unit].values]
    first = draws.sel(k=chosen[0]).mean(("chain", "draw")).values
    order = np.argsort(-first, kind="stable")
    n = len(names)
    ax = get_axes(ax, figsize=(6.4, 1.4 + (0.22 * n if n <= 40 else 0.15 * n)))
    y = np.arange(n)[::-1].astype(float)
    offsets = np.linspace(-0.2, 0.2, len(chosen)) if len(chosen) > 1 else [0.0]
    for idx, (kk, off) in enumerate(zip(chosen, offsets, strict=True)):
        sel = draws.sel(k=kk)
        mean = sel.mean(("chain", "draw")).values[order]
        lower, upper = credible_interval(sel, ci_prob, "eti")
        lo, hi = lower.values[order], upper.values[order]
        ax.errorbar(mean, y + off, xerr=error_arms(mean, lo, hi), fmt="o",
                    ms=3 if n > 40 else 5, color=f"C{idx}", elinewidth=1,
                    label=f"k = {kk:g}")
    ax.set_yticks(y)
    size = 8 if n <= 40 else 6
    labels = [names[i] for i in order]
    ax.set_yticklabels([plot_label(label) for label in labels], fontsize=size)
    bold = set(highlight or [])
    for tick, label in zip(ax.get_yticklabels(), labels, strict=True):
        if label in bold:
            tick.set_fontweight("bold")
    ax.set_ylim(-0.8, n - 0.2)
    metric = str(draws.name or draws.attrs.get("metric", "pass@k"))
    ax.set_xlabel(f"{metric} (point: posterior mean, bar: {ci_prob:.0%} interval)")
    ax.grid(True, axis="x", alpha=0.3)
    approximate = bool(draws.attrs.get("approximate", 0))
    ax.set_title(f"{metric} by {unit}, ordered by the posterior mean at k = {chosen[0]:g}\n"
                 f"{title_suffix(draws.attrs.get('estimand'), approximate)}", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return finish(ax)
