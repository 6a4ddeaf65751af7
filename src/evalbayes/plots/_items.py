"""Item plots of an IRT fit: difficulty forest, item characteristic curves, Wright map.

The functions take the computed tables (``posterior.items()``, ``posterior.abilities()``),
never a posterior to sample from. Conventions: higher ``b`` = harder item; the item
characteristic curve is ``p(theta) = g + (1 - g) sigmoid(a (theta - b))``, drawn at the
posterior means of ``a``, ``b`` and ``g`` (a plug-in curve, not the posterior mean curve).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from evalbayes.plots._common import finish

__all__ = ["FLAG_COLUMNS", "plot_item_curves", "plot_item_difficulty", "plot_wright_map"]

FLAG_COLUMNS = ("never_solved", "always_solved", "low_discrimination", "negative_discrimination")
_FLAG_STYLE = {
    "never_solved": ("tab:red", "v"),
    "always_solved": ("tab:green", "^"),
    "low_discrimination": ("tab:orange", "s"),
    "negative_discrimination": ("tab:purple", "X"),
}


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.figure().add_subplot()


def _need(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [col for col in columns if col not in frame.columns]
    if missing:
        raise ValueError(f"{what} table lacks columns {missing} (use posterior.{what}())")


def _flagged(items: pd.DataFrame, flag: str) -> np.ndarray:
    if flag not in items.columns:
        return np.zeros(len(items), dtype=bool)
    return items[flag].fillna(False).to_numpy(dtype=bool)


def plot_item_difficulty(
    items: pd.DataFrame, *, sort: bool = True, ax: Any = None
) -> Any:
    """Forest plot of item difficulties ``b`` (mean and interval), flagged items marked.

    Parameters
    ----------
    items : pandas.DataFrame
        ``posterior.items()`` (or rows of it): needs ``task, b_mean, b_lower, b_upper``;
        flag columns, where present, set each marker's colour and shape.
    sort : bool
        Order items by difficulty (hardest at the top).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    _need(items, ("task", "b_mean", "b_lower", "b_upper"), "items")
    ax = _axes(ax)
    frame = items.sort_values("b_mean") if sort else items
    y = np.arange(len(frame))
    ax.hlines(y, frame["b_lower"], frame["b_upper"], color="0.6", lw=1)
    plain = np.ones(len(frame), dtype=bool)
    for flag, (color, marker) in _FLAG_STYLE.items():
        mask = _flagged(frame, flag)
        plain &= ~mask
        if mask.any():
            ax.scatter(frame["b_mean"][mask], y[mask], color=color, marker=marker, zorder=3,
                       label=f"{flag.replace('_', ' ')} ({int(mask.sum())})")
    ax.scatter(frame["b_mean"][plain], y[plain], color="k", s=12, zorder=2, label="item")
    ax.set_yticks(y, frame["task"].astype(str) if len(frame) <= 60 else [""] * len(frame))
    ci = f" ({float(frame['ci_prob'].iloc[0]):.0%} interval)" if "ci_prob" in frame else ""
    ax.set_xlabel(f"difficulty b (higher = harder){ci}")
    ax.set_ylabel("item")
    ax.axvline(0.0, color="0.85", lw=0.8, zorder=0)
    ax.legend(loc="lower right", fontsize="small")
    return finish(ax)


def plot_item_curves(
    items: pd.DataFrame,
    tasks: Sequence[str] | None = None,
    *,
    abilities: pd.DataFrame | None = None,
    theta_range: tuple[float, float] = (-4.0, 4.0),
    ax: Any = None,
) -> Any:
    """Item characteristic curves ``p(theta)`` of chosen items, at posterior-mean parameters.

    Parameters
    ----------
    items : pandas.DataFrame
        ``posterior.items()``: needs ``task, b_mean``; ``a_mean`` (default 1) and
        ``g_mean`` (default 0) where the model has them.
    tasks : sequence of str, optional
        Items to draw (default: all rows, at most 12).
    abilities : pandas.DataFrame, optional
        ``posterior.abilities()``: the systems' posterior-mean abilities are marked on the
        axis.
    theta_range : (float, float)
        Range of abilities drawn.
    """
    _need(items, ("task", "b_mean"), "items")
    ax = _axes(ax)
    frame = items.set_index(items["task"].astype(str))
    if tasks is None:
        chosen = list(frame.index[:12])
    else:
        chosen = [str(t) for t in tasks]
        unknown = [t for t in chosen if t not in frame.index]
        if unknown:
            raise ValueError(f"tasks {unknown} are not in the items table")
    theta = np.linspace(*theta_range, 200)
    for task in chosen:
        row = frame.loc[task]
        a = float(row["a_mean"]) if "a_mean" in frame else 1.0
        g = float(row["g_mean"]) if "g_mean" in frame else 0.0
        p = g + (1.0 - g) * expit(a * (theta - float(row["b_mean"])))
        ax.plot(theta, p, label=f"{task} (b={float(row['b_mean']):.2f})")
    if abilities is not None:
        _need(abilities, ("system", "theta_mean"), "abilities")
        ax.plot(abilities["theta_mean"], np.zeros(len(abilities)), "|", color="k", ms=14,
                label="systems")
    ax.set_xlabel("ability theta")
    ax.set_ylabel("P(success)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize="small")
    return finish(ax)


def plot_wright_map(
    abilities: pd.DataFrame, items: pd.DataFrame, *, bins: int = 30, ax: Any = None
) -> Any:
    """Wright map: abilities (left, with intervals) against item difficulties (right).

    Both on the same logit scale (vertical): a system faces a 50 % chance (above the floor)
    on items level with it; items above all systems are too hard to separate them, items
    below all of them too easy.
    """
    _need(abilities, ("system", "theta_mean", "theta_lower", "theta_upper"), "abilities")
    _need(items, ("b_mean",), "items")
    ax = _axes(ax)
    values = np.concatenate(
        [abilities["theta_lower"], abilities["theta_upper"], items["b_mean"]]
    )
    edges = np.linspace(values.min() - 0.25, values.max() + 0.25, bins + 1)
    counts, _ = np.histogram(items["b_mean"], bins=edges)
    width = counts / max(counts.max(), 1)
    ax.barh(edges[:-1], width, height=np.diff(edges), align="edge", color="tab:blue",
            alpha=0.6, label=f"items ({len(items)})")
    order = abilities.sort_values("theta_mean").reset_index(drop=True)
    x = -0.1 - 0.9 * np.arange(len(order)) / max(len(order) - 1, 1)
    ax.vlines(x, order["theta_lower"], order["theta_upper"], color="tab:red", lw=1)
    ax.scatter(x, order["theta_mean"], color="tab:red", s=14, zorder=3, label="systems")
    if len(order) <= 30:
        for xi, (_, row) in zip(x, order.iterrows(), strict=True):
            ax.annotate(str(row["system"]), (xi, row["theta_mean"]), fontsize=6,
                        xytext=(3, 0), textcoords="offset points", va="center")
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_xticks([-0.55, 0.5], ["systems: ability theta", "items: difficulty b"])
    ax.set_ylabel("logit scale (higher = abler system / harder item)")
    ax.legend(loc="upper right", fontsize="small")
    return finish(ax)
