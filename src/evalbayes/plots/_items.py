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

from evalbayes.plots._common import finish, plot_label

__all__ = ["FLAG_COLUMNS", "plot_item_curves", "plot_item_difficulty", "plot_wright_map"]

FLAG_COLUMNS = ("never_solved", "always_solved", "low_discrimination", "negative_discrimination")
_FLAG_STYLE = {
    "never_solved": ("tab:red", "v"),
    "always_solved": ("tab:green", "^"),
    "low_discrimination": ("tab:orange", "s"),
    "negative_discrimination": ("tab:purple", "X"),
}


#: Most item labels :func:`plot_item_difficulty` writes (beyond, every m-th item by
#: difficulty) and most system labels :func:`plot_wright_map` writes.
ITEM_LABELS = 40
SYSTEM_LABELS = 30


def _axes(ax: Any, figsize: tuple[float, float] | None = None) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.figure(figsize=figsize).add_subplot()


def _every(n: int, most: int) -> np.ndarray:
    """Indices ``0, m, 2m, ...`` of ``n`` rows, with ``m`` the smallest step leaving at most
    ``most`` of them."""
    return np.arange(0, n, max(1, int(np.ceil(n / most))))


def _spread(y: np.ndarray, gap: float, low: float, high: float) -> np.ndarray:
    """Label heights for increasing ``y``: each at least ``gap`` above the one below, as
    close to the points as that allows: a forward pass pushes crowded labels up, the block
    is then shifted so that its mean is the points' mean, and kept inside ``[low, high]``
    where it fits."""
    y = np.asarray(y, dtype=float)
    out = y.copy()
    for i in range(1, len(out)):
        out[i] = max(out[i], out[i - 1] + gap)
    if len(out):
        out += y.mean() - out.mean()
        out += max(0.0, low - out[0])
        out -= max(0.0, min(out[-1] - high, out[0] - low))
    return out


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
    shown = _every(len(items), ITEM_LABELS)
    ax = _axes(ax, figsize=(6.4, max(4.8, 1.6 + 0.17 * len(shown))))
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
    tasks = frame["task"].to_numpy()
    ax.set_yticks(y[shown], [plot_label(tasks[i]) for i in shown],
                  fontsize=8 if len(shown) <= 25 else 7)
    ci = f" ({float(frame['ci_prob'].iloc[0]):.0%} interval)" if "ci_prob" in frame else ""
    ax.set_xlabel(f"difficulty b (higher = harder){ci}")
    order = "by difficulty" if sort else "in table order"
    ax.set_ylabel("item" if len(shown) == len(frame) else
                  f"item (one label in {int(shown[1] - shown[0])} of {len(frame)}, {order})")
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
    ax = _axes(ax, figsize=(7.4, 5.6))
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
    labelled = _every(len(order), SYSTEM_LABELS)
    low, high = float(edges[0]), float(edges[-1])
    ax.set_ylim(low, high)
    # labels in a column left of the systems, spread so that none overlaps (at least 1/40 of
    # the axis apart, about 7 points on this figure), each joined to its point by a thin line
    heights = _spread(order["theta_mean"].to_numpy(dtype=float)[labelled],
                      (high - low) / 40, low, high)
    for index, height in zip(labelled, heights, strict=True):
        ax.annotate(plot_label(order["system"].iloc[index]),
                    (x[index], float(order["theta_mean"].iloc[index])), xytext=(-1.08, height),
                    textcoords="data", fontsize=6, ha="right", va="center",
                    arrowprops={"arrowstyle": "-", "color": "0.7", "lw": 0.5,
                                "shrinkA": 0, "shrinkB": 2})
    ax.set_xlim(-1.75, 1.05)
    ax.axvline(0.0, color="k", lw=0.8)
    thinned = (f" (one label in {int(labelled[1] - labelled[0])} of {len(order)})"
               if len(labelled) < len(order) else "")
    ax.set_xticks([-0.55, 0.5], [f"systems: ability theta{thinned}", "items: difficulty b"])
    ax.set_ylabel("logit scale (higher = abler system / harder item)")
    ax.legend(loc="upper right", fontsize="small")
    return finish(ax)
