"""Plots of the design models: interaction plot (model x harness) and variance components."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.intervals import credible_interval
from evalbayes.plots._common import get_axes

__all__ = ["plot_interaction", "plot_variance_components"]


def plot_interaction(curves: xr.DataArray, *, ci_prob: float = 0.9, ax: Any = None) -> Any:
    """Interaction plot: a new task's pass@k per harness (x), one line per model, with bands.

    Parameters
    ----------
    curves : xarray.DataArray
        Draws with dims ``(chain, draw, model, harness)``, NaN where a combination was not run:
        ``harness_curves(posterior, [k]).sel(k=k)``
        (:func:`evalbayes.models.designs.harness_curves`).
    ci_prob : float
        Mass of the equal-tailed bands (:func:`~evalbayes._core.intervals.credible_interval`).

    Combinations that were not run are left out (a line only joins harnesses the model ran
    under). Crossing lines are the rank flips of :func:`evalbayes.models.designs.rank_flips`.
    """
    ax = get_axes(ax)
    k = curves.coords["k"].item() if "k" in curves.coords and curves["k"].ndim == 0 else None
    ran = curves.notnull().all(("chain", "draw")).transpose("model", "harness").values
    filled = curves.fillna(0.0)  # bounds of a combination not run are masked below
    mean = filled.mean(("chain", "draw")).transpose("model", "harness").values
    lo, hi = (b.transpose("model", "harness").values for b in credible_interval(filled, ci_prob))
    x = np.arange(curves.sizes["harness"])
    for i, model in enumerate(curves["model"].values):
        offset = (i - (curves.sizes["model"] - 1) / 2) * 0.06
        row = ran[i]
        line = ax.plot(x[row] + offset, mean[i, row], marker="o", label=str(model))[0]
        ax.vlines(x[row] + offset, lo[i, row], hi[i, row], color=line.get_color(), alpha=0.6)
    ax.set_xticks(x, [str(h) for h in curves["harness"].values], rotation=30, ha="right")
    shown = "pass@k" if k is None else f"pass@{k:g}"
    ax.set_ylabel(f"{shown} of a new task")
    ax.set_title(f"model x harness: {shown} (population), {int(ci_prob * 100)} % intervals")
    ax.legend(fontsize="small")
    return ax


def plot_variance_components(table: pd.DataFrame, *, ax: Any = None) -> Any:
    """Forest plot of the logit-scale standard deviations of the factorial model's components.

    ``table`` is :func:`evalbayes.models.designs.variance_components`'s output (one row per
    component: ``median``, ``lower``, ``upper``, ``share``; its ``ci_prob`` attribute names the
    interval).
    """
    ax = get_axes(ax)
    y = np.arange(len(table))[::-1]
    ax.hlines(y, table["lower"], table["upper"], color="C0")
    ax.plot(table["median"], y, "o", color="C0")
    ax.set_yticks(y, [f"{name} ({share:.0%})" for name, share in table["share"].items()])
    level = table.attrs.get("ci_prob")
    shown = "" if level is None else f", {int(level * 100)} % interval"
    ax.set_xlabel(f"sd on the logit scale (median{shown})")
    ax.set_title("variance components (share of the summed variances)")
    return ax
