"""Plots of the design models: interaction plot (model x harness) and variance components."""

from __future__ import annotations

from typing import Any

import numpy as np

from evalbayes.plots._common import get_axes

__all__ = ["plot_interaction", "plot_variance_components"]


def plot_interaction(posterior: Any, *, k: int = 1, ci_prob: float = 0.9, ax: Any = None) -> Any:
    """Interaction plot: pass@k of a new task per harness (x), one line per model, with bands.

    Combinations that were not run are left out (a line only joins harnesses the model ran
    under). Crossing lines are the rank flips of
    :func:`evalbayes.models.factorial.rank_flips`.
    """
    from evalbayes.models.factorial import harness_curves

    ax = get_axes(ax)
    hc = harness_curves(posterior, [k]).sel(k=k)
    values = hc.stack(sample=("chain", "draw")).transpose("model", "harness", "sample").values
    tail = (1 - ci_prob) / 2
    x = np.arange(hc.sizes["harness"])
    for i, model in enumerate(hc["model"].values):
        v = values[i]
        ran = ~np.isnan(v[:, 0])
        mean = np.where(ran, np.nanmean(v, axis=1) if ran.any() else np.nan, np.nan)
        lo = np.where(ran, np.nanquantile(v, tail, axis=1), np.nan)
        hi = np.where(ran, np.nanquantile(v, 1 - tail, axis=1), np.nan)
        offset = (i - (hc.sizes["model"] - 1) / 2) * 0.06
        line = ax.plot(x[ran] + offset, mean[ran], marker="o", label=str(model))[0]
        ax.vlines(x[ran] + offset, lo[ran], hi[ran], color=line.get_color(), alpha=0.6)
    ax.set_xticks(x, [str(h) for h in hc["harness"].values], rotation=30, ha="right")
    ax.set_ylabel(f"pass@{k} of a new task")
    ax.set_title(f"model x harness: pass@{k} (population), {int(ci_prob * 100)} % intervals")
    ax.legend(fontsize="small")
    return ax


def plot_variance_components(posterior: Any, *, ci_prob: float = 0.95, ax: Any = None) -> Any:
    """Forest plot of the logit-scale standard deviations of the factorial model's components."""
    from evalbayes.models.factorial import variance_components

    ax = get_axes(ax)
    table = variance_components(posterior, ci_prob=ci_prob)
    y = np.arange(len(table))[::-1]
    ax.hlines(y, table["lower"], table["upper"], color="C0")
    ax.plot(table["median"], y, "o", color="C0")
    ax.set_yticks(y, [f"{name} ({share:.0%})" for name, share in table["share"].items()])
    ax.set_xlabel(f"sd on the logit scale (median, {int(ci_prob * 100)} % interval)")
    ax.set_title("variance components (share of the summed variances)")
    return ax
