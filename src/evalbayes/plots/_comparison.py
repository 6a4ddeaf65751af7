"""Plots of a :class:`~evalbayes.results.Comparison`: a forest of differences and the
matrix of P(row > column)."""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes

from evalbayes.plots._common import error_arms, finish, get_axes, plot_label, title_suffix
from evalbayes.results._comparison import Comparison

__all__ = ["plot_comparison", "plot_superiority_matrix"]


def _check_comparison(comparison: Any) -> Comparison:
    if not isinstance(comparison, Comparison):
        raise TypeError(
            f"expected a Comparison (evalbayes.compare), got {type(comparison).__name__}"
        )
    return comparison


def _k_text(comparison: Comparison, k: Any) -> str:
    if k is None:
        return f"k={comparison.k[0]}" if len(comparison.k) == 1 else ""
    return f"k={k:g}" if isinstance(k, (int, float)) else f"k={k}"


#: Most pairs :func:`plot_comparison` draws by default (13 systems are 78 pairs).
PAIRS_MAX = 30


def plot_comparison(
    comparison: Comparison,
    k: Any = None,
    *,
    baseline: str | None = None,
    max_pairs: int | None = PAIRS_MAX,
    ax: Axes | None = None,
) -> Axes:
    """Forest plot of ``B - A`` (posterior mean and interval) with P(B > A) written beside.

    Parameters
    ----------
    comparison : Comparison
        From :func:`evalbayes.compare`.
    k : int, optional
        Which k; may be omitted when the comparison has one k.
    baseline : str, optional
        Draw every system against this baseline. Default: every pair once, later system
        minus earlier system in the comparison's order.
    max_pairs : int or None
        Draw at most this many pairs (default 30): beyond, the pairs with the largest
        ``|B - A|`` (posterior mean), largest first, and the title says how many are left
        out; ``None`` draws every pair (13 systems are 78 pairs, a figure about 36 inches
        tall).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).

    The shaded band is the ROPE ``|B - A| < rope``; the interval is the comparison's
    ``ci_prob`` interval.
    """
    comparison = _check_comparison(comparison)
    mean = comparison.matrix(k, "diff_mean")
    lower = comparison.matrix(k, "diff_lower")
    upper = comparison.matrix(k, "diff_upper")
    p_sup = comparison.matrix(k, "p_superior")
    systems = comparison.systems
    if baseline is None:
        pairs = [(systems[j], systems[i]) for i in range(len(systems))
                 for j in range(i + 1, len(systems))]
    else:
        if baseline not in systems:
            raise ValueError(f"unknown baseline {baseline!r}; compared systems: {systems}")
        pairs = [(s, baseline) for s in systems if s != baseline]
    if max_pairs is not None and (not isinstance(max_pairs, int) or max_pairs < 1):
        raise ValueError(f"max_pairs must be a positive integer or None, got {max_pairs!r}")
    total = len(pairs)
    if max_pairs is not None and total > max_pairs:
        size = np.array([abs(float(mean.loc[b, a])) for b, a in pairs])
        keep = np.argsort(-size, kind="stable")[:max_pairs]
        pairs = [pairs[i] for i in keep]
    ax = get_axes(ax, figsize=(6.4, 1.2 + 0.45 * len(pairs)))
    y = np.arange(len(pairs))[::-1].astype(float)
    m = np.array([mean.loc[b, a] for b, a in pairs])
    lo = np.array([lower.loc[b, a] for b, a in pairs])
    hi = np.array([upper.loc[b, a] for b, a in pairs])
    if comparison.rope > 0:
        ax.axvspan(-comparison.rope, comparison.rope, color="0.85", zorder=0)
    ax.axvline(0.0, color="0.4", lw=1, zorder=1)
    ax.errorbar(m, y, xerr=error_arms(m, lo, hi), fmt="o", color="C0", ecolor="C0", capsize=3,
                zorder=2)
    for (b, a), yy in zip(pairs, y, strict=True):
        ax.annotate(f"P(B>A) = {p_sup.loc[b, a]:.3f}", xy=(1.02, yy),
                    xycoords=("axes fraction", "data"), va="center", fontsize=8)
    span = max(float(np.max(hi) - np.min(lo)), 2 * comparison.rope, 1e-6)
    ax.set_xlim(min(float(np.min(lo)), -comparison.rope) - 0.05 * span,
                max(float(np.max(hi)), comparison.rope) + 0.05 * span)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{plot_label(b)} − {plot_label(a)}" for b, a in pairs])
    ax.set_ylim(-0.7, len(pairs) - 0.3)
    # three short lines: a label wider than its panel would stick out of the figure
    rope_text = f";\nshaded: ROPE ±{comparison.rope:g}" if comparison.rope > 0 else ""
    ax.set_xlabel(
        f"{comparison.metric} difference B − A\n(point: posterior mean, bar: "
        f"{comparison.ci_prob:.0%} interval{rope_text})"
    )
    left_out = (f"\nthe {len(pairs)} of {total} pairs with the largest |B − A|; "
                f"{total - len(pairs)} left out" if len(pairs) < total else "")
    ax.set_title(
        f"{comparison.metric} {_k_text(comparison, k)}: B − A\n"
        f"{title_suffix(comparison.estimand, comparison.approximate)}{left_out}",
        fontsize=10,
    )
    ax.grid(True, axis="x", alpha=0.3)
    return finish(ax)


ANNOTATE_MAX = 25
TICKS_MAX = 40


def _order_by_mean(comparison: Comparison, k: Any, systems: list[str]) -> list[str]:
    """Systems by decreasing posterior mean of the compared metric at ``k``."""
    draws = comparison.draws
    if "k" in draws.dims:
        kk = comparison.k[0] if k is None else k
        draws = draws.sel(k=kk)
    means = draws.mean(("chain", "draw")).to_series()
    means.index = [str(v) for v in means.index]
    return sorted(systems, key=lambda s: -float(means.get(s, np.nan)))


def plot_superiority_matrix(
    comparison: Comparison,
    k: Any = None,
    *,
    ax: Axes | None = None,
    order: str | None = "mean",
    annotate: bool | None = None,
) -> Axes:
    """Heat map of P(row > column), readable from 3 to 100+ systems.

    Rows are systems B, columns baselines A; the diagonal is blank. ``k`` may be omitted
    when the comparison has one k.

    Parameters
    ----------
    order : {"mean", None}
        ``"mean"`` (default): rows and columns by decreasing posterior mean at ``k``, so the
        matrix is blue above the diagonal's mirror and reads as a ranking; ``None``: the
        comparison's order.
    annotate : bool, optional
        Write the probabilities in the cells; default only up to 25 systems (beyond that
        the colour bar carries the values and the figure stays legible).

    Beyond 40 systems only every m-th tick is labelled (m chosen to leave <= 40 labels).
    """
    comparison = _check_comparison(comparison)
    table = comparison.matrix(k, "p_superior")
    names = [str(v) for v in table.index]
    table.index, table.columns = names, [str(v) for v in table.columns]
    if order == "mean":
        ranked = _order_by_mean(comparison, k, names)
        table = table.loc[ranked, ranked]
    elif order is not None:
        raise ValueError(f"order must be 'mean' or None, got {order!r}")
    values = table.to_numpy(dtype=float)
    n = values.shape[0]
    if annotate is None:
        annotate = n <= ANNOTATE_MAX
    side = 1.6 + 0.9 * n if n <= ANNOTATE_MAX else min(4.0 + 0.09 * n, 16.0)
    ax = get_axes(ax, figsize=(side + 1.0, side))
    cmap = mpl.colormaps["RdBu"].with_extremes(bad="0.92")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0.0, vmax=1.0,
                      interpolation="nearest")
    if annotate:
        # cell texts sit inside the axes: left out of the layout, which then measures only
        # the labels around the matrix (n**2 fewer texts per layout pass)
        for i in range(n):
            for j in range(n):
                v = values[i, j]
                if np.isnan(v):
                    cell = ax.text(j, i, "–", ha="center", va="center", color="0.5")
                else:
                    color = "white" if v < 0.2 or v > 0.8 else "black"
                    cell = ax.text(j, i, f"{v:.2f}", ha="center", va="center", color=color,
                                   fontsize=9)
                cell.set_in_layout(False)
    step = max(1, int(np.ceil(n / TICKS_MAX)))
    ticks = np.arange(0, n, step)
    size = 9 if n <= ANNOTATE_MAX else 6
    ax.set_xticks(ticks)
    ax.set_xticklabels([plot_label(table.columns[i]) for i in ticks], rotation=60 if n > 10 else 30,
                       ha="right", fontsize=size)
    ax.set_yticks(ticks)
    ax.set_yticklabels([plot_label(table.index[i]) for i in ticks], fontsize=size)
    ordered = " (ordered by posterior mean)" if order == "mean" else ""
    thinned = f"; one label in {step}" if step > 1 else ""
    ax.set_xlabel(f"baseline A{ordered}{thinned}")
    ax.set_ylabel("system B")
    ax.figure.colorbar(image, ax=ax, label="P(B > A)", shrink=0.8)
    ax.set_title(
        f"P(row > column), {comparison.metric} {_k_text(comparison, k)}\n"
        f"{title_suffix(comparison.estimand, comparison.approximate)}",
        fontsize=10,
    )
    return finish(ax)
