"""pass@k and pass^k curves: posterior median and credible bands per system on a log2 k axis.

Input is the draws of :meth:`Posterior.pass_at_k` / :meth:`Posterior.pass_hat_k`, dims
``(chain, draw, system, k)``. Bands are equal-tailed credible intervals
(:func:`evalbayes._core.intervals.credible_interval`); the unbiased frequentist estimates
(:func:`evalbayes.frequentist.pass_curve`, defined only for k <= n) can be overlaid as points,
and a reference curve (e.g. a uniform guess among five options, ``1 - 0.8**k``, as in the
TinyAgent worked example, bundled dataset ``tinyagent``) as a dashed line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullLocator

from evalbayes._core.intervals import credible_interval
from evalbayes.plots._common import finish, get_axes, plot_label, title_suffix

__all__ = ["plot_pass_at_k", "plot_pass_hat_k"]

DRAW_DIMS = ("chain", "draw", "system", "k")
Reference = xr.DataArray | Callable[[np.ndarray], Any]


def _check_draws(draws: Any, metric: str) -> xr.DataArray:
    if not isinstance(draws, xr.DataArray):
        raise TypeError(f"draws must be an xarray.DataArray, got {type(draws).__name__}")
    if "task" in draws.dims:
        raise ValueError(
            "draws have a 'task' dim: plot one task with draws.sel(task=...), or the task "
            "average (per_task=False)"
        )
    missing = [d for d in DRAW_DIMS if d not in draws.dims]
    extra = [d for d in draws.dims if d not in DRAW_DIMS]
    if missing or extra:
        raise ValueError(
            f"draws need dims {DRAW_DIMS}; missing {missing}, unexpected {extra}"
        )
    recorded = draws.attrs.get("metric")
    if recorded is not None and recorded != metric:
        raise ValueError(f"draws are {recorded!r} draws; this function plots {metric!r}")
    if np.any(draws["k"].values <= 0):
        raise ValueError("k must be positive to be drawn on a log2 axis")
    return draws.transpose(*DRAW_DIMS)


def _check_ci_probs(ci_probs: Sequence[float]) -> list[float]:
    probs = [float(p) for p in ci_probs]
    if not probs:
        raise ValueError("ci_probs must hold at least one probability")
    bad = [p for p in probs if not 0 < p < 1]
    if bad:
        raise ValueError(f"ci_probs must lie in (0, 1), got {bad}")
    return sorted(set(probs), reverse=True)


def _pick_systems(available: list[str], systems: Sequence[str] | None) -> list[str]:
    if systems is None:
        return available
    if isinstance(systems, str):
        raise ValueError(f"systems must be a sequence of names, got the string {systems!r}")
    chosen = [str(s) for s in systems]
    unknown = [s for s in chosen if s not in available]
    if unknown:
        raise ValueError(f"unknown systems {unknown}; the draws have {available}")
    return chosen


def _check_unbiased(unbiased: Any) -> xr.DataArray:
    if not isinstance(unbiased, xr.DataArray):
        raise TypeError(f"unbiased must be an xarray.DataArray, got {type(unbiased).__name__}")
    if set(unbiased.dims) != {"system", "k"}:
        raise ValueError(f"unbiased needs dims ('system', 'k'), got {tuple(unbiased.dims)}")
    return unbiased.transpose("system", "k")


def _reference_points(reference: Reference, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(reference, xr.DataArray):
        if reference.dims != ("k",):
            raise ValueError(f"reference needs the single dim 'k', got {reference.dims}")
        return reference["k"].values.astype(float), reference.values.astype(float)
    if not callable(reference):
        raise TypeError("reference must be a DataArray over k or a callable of k")
    grid = np.geomspace(ks.min(), ks.max(), 200) if ks.max() > ks.min() else ks.astype(float)
    values = np.asarray(reference(grid), dtype=float)
    if values.shape != grid.shape:
        raise ValueError(
            f"reference(k) must return one value per k: got shape {values.shape} for "
            f"{grid.shape}"
        )
    return grid, values


MANY_SYSTEMS = 8
HIGHLIGHT_DEFAULT = 5
LEGEND_INSIDE_MAX = 6


def ranking_k(draws: xr.DataArray) -> float:
    """The k at which :func:`rank_systems` ranks: 1 when the grid has it, else the smallest k
    that no system extrapolates (k <= its trials), else the smallest k."""
    ks = draws["k"].values.astype(float)
    if 1.0 in ks:
        return 1.0
    if "extrapolated" in draws.coords:
        flags = draws.coords["extrapolated"]
        observed = ~np.asarray(flags.any("system").values if "system" in flags.dims else flags,
                               bool)
        if observed.any():
            return float(ks[observed].min())
    return float(ks.min())


def rank_systems(draws: xr.DataArray) -> list[str]:
    """Systems by posterior median at :func:`ranking_k`, best first (ties: in given order).

    An observed k, never an extrapolated one: at k far beyond the trials run, every value
    rests on the model's assumed rate distribution, and the systems best on the data would
    go unnamed (issue 28).
    """
    k = ranking_k(draws)
    top = draws.sel(k=k).median(("chain", "draw"))
    names = [str(s) for s in draws["system"].values]
    return sorted(names, key=lambda s: -float(top.sel(system=s)))


def _log2_axis(ax: Axes, ks: np.ndarray) -> None:
    ax.set_xscale("log", base=2)
    ticks = ks if len(ks) <= 12 else 2.0 ** np.arange(
        np.floor(np.log2(ks.min())), np.ceil(np.log2(ks.max())) + 1
    )
    ax.set_xticks(ticks)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))


def _segments(sel: xr.DataArray, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks over ``ks`` of the observed stretch (``k <= n``) and the extrapolated one.

    From the ``extrapolated`` coordinate of :meth:`evalbayes.Posterior.curve` (no coordinate:
    nothing is marked). The two stretches share the boundary point so that they join.
    """
    if "extrapolated" not in sel.coords:
        return np.ones(len(ks), bool), np.zeros(len(ks), bool)
    flags = np.asarray(sel.coords["extrapolated"].values, bool)
    inside = ~flags
    beyond = flags.copy()
    if inside.any() and beyond.any():
        beyond[np.flatnonzero(inside).max()] = True
    return inside, beyond


def _plot_curves(
    draws: xr.DataArray,
    metric: str,
    *,
    unbiased: xr.DataArray | None,
    reference: Reference | None,
    reference_label: str | None,
    ci_probs: Sequence[float],
    ax: Axes | None,
    systems: Sequence[str] | None,
    highlight: Sequence[str] | None = None,
) -> Axes:
    draws = _check_draws(draws, metric)
    probs = _check_ci_probs(ci_probs)
    chosen = _pick_systems([str(s) for s in draws["system"].values], systems)
    points = None if unbiased is None else _check_unbiased(unbiased)
    ax = get_axes(ax)
    ks = draws["k"].values.astype(float)
    alphas = np.linspace(0.12, 0.3, len(probs))  # wider band, lighter
    handles: list[Any] = []
    if highlight is None and len(chosen) > MANY_SYSTEMS:
        # leaderboard size: the top systems stand out, ranked where the data speak
        highlight = rank_systems(draws.sel(system=chosen))[:HIGHLIGHT_DEFAULT]
    if highlight is not None:
        unknown = sorted(set(highlight) - set(chosen))
        if unknown:
            raise ValueError(f"highlight names unknown systems {unknown}")
        grey = [s for s in chosen if s not in set(highlight)]
        for system in grey:  # the grey field: medians only, behind everything
            median = draws.sel(system=system).median(("chain", "draw")).values
            ax.plot(ks, median, color="0.75", lw=0.8, zorder=1)
        if grey:
            handles.append(Line2D([], [], color="0.75", lw=0.8,
                                  label=f"{len(grey)} other systems (median)"))
        chosen = [s for s in chosen if s in set(highlight)]
    colors = [f"C{i % 10}" for i in range(len(chosen))]

    any_extrapolated = False
    for system, color in zip(chosen, colors, strict=True):
        sel = draws.sel(system=system)
        inside, beyond = _segments(sel, ks)
        any_extrapolated |= bool(beyond.any())
        for prob, alpha in zip(probs, alphas, strict=True):
            lower, upper = credible_interval(sel, prob, "eti")
            ax.fill_between(ks[inside], lower.values[inside], upper.values[inside], color=color,
                            alpha=alpha, lw=0)
            if beyond.any():
                ax.fill_between(ks[beyond], lower.values[beyond], upper.values[beyond],
                                facecolor=color, alpha=0.6 * alpha, hatch="///",
                                edgecolor=color, lw=0)
        median = sel.median(("chain", "draw")).values
        (line,) = ax.plot(ks[inside], median[inside], color=color, lw=2,
                          label=plot_label(system))
        if beyond.any():
            ax.plot(ks[beyond], median[beyond], color=color, lw=1.5, ls="--",
                    label="_nolegend_")
        if not inside.any():
            line = Line2D([], [], color=color, lw=2, label=plot_label(system))
        handles.append(line)
        if points is not None and system in points["system"].values:
            row = points.sel(system=system)
            k_u, v_u = row["k"].values.astype(float), row.values.astype(float)
            keep = np.isfinite(v_u) & (k_u > 0)
            if keep.any():
                ax.plot(k_u[keep], v_u[keep], "o", color=color, mfc="white", mew=1.5, ms=5,
                        label="_nolegend_")

    if points is not None:
        handles.append(Line2D([], [], marker="o", ls="none", color="0.3", mfc="white",
                              mew=1.5, label="unbiased estimate"))
    if reference is not None:
        k_ref, v_ref = _reference_points(reference, ks)
        label = reference_label or (
            str(reference.name) if isinstance(reference, xr.DataArray) and reference.name
            else "reference"
        )
        (ref_line,) = ax.plot(k_ref, v_ref, ls="--", color="0.2", lw=1.2, label=label)
        handles.append(ref_line)
    handles.extend(
        Patch(color="0.5", alpha=alpha, label=f"{prob:.0%} interval")
        for prob, alpha in zip(probs, alphas, strict=True)
    )
    if any_extrapolated:
        handles.append(Patch(facecolor="none", edgecolor="0.35", hatch="///",
                             label="k > trials run: extrapolated"))

    _log2_axis(ax, ks)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("k (attempts)")
    ax.set_ylabel(metric)
    ax.grid(True, alpha=0.3)
    approximate = bool(draws.attrs.get("approximate", 0))
    ax.set_title(f"{metric}: posterior median and bands\n"
                 f"{title_suffix(draws.attrs.get('estimand'), approximate)}", fontsize=10)
    if len(handles) > LEGEND_INSIDE_MAX:  # many entries: beside the axes, never over bands
        ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  frameon=False)
    else:
        ax.legend(handles=handles, fontsize=8, loc="best")
    return finish(ax)


def plot_pass_at_k(
    draws: xr.DataArray,
    *,
    unbiased: xr.DataArray | None = None,
    reference: Reference | None = None,
    reference_label: str | None = None,
    ci_probs: Sequence[float] = (0.5, 0.95),
    ax: Axes | None = None,
    systems: Sequence[str] | None = None,
    highlight: Sequence[str] | None = None,
) -> Axes:
    """pass@k = E[1 - (1 - p)^k] per system: median line and credible bands over log2 k.

    Parameters
    ----------
    draws : xarray.DataArray
        Posterior draws, dims ``(chain, draw, system, k)`` (``Posterior.pass_at_k``). Where
        its boolean coordinate ``extrapolated`` (system, k) is True (k beyond the trials the
        system ran), the band is hatched and the median dashed. The title names
        ``draws.attrs["estimand"]`` and says APPROXIMATE when ``draws.attrs["approximate"]``
        is set.
    unbiased : xarray.DataArray, optional
        Unbiased estimates, dims ``(system, k)``, drawn as open points in each system's
        colour. Pass only k <= n (the estimator does not exist beyond); NaN are skipped.
    reference : xarray.DataArray over ``k`` or callable of k, optional
        A reference curve drawn dashed, e.g. ``lambda k: 1 - 0.8**k`` (a uniform guess among
        five options, as in the TinyAgent worked example).
    reference_label : str, optional
        Legend label of the reference (default: its name, else "reference").
    ci_probs : sequence of float
        Probabilities of the equal-tailed bands (default 50 % and 95 %).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).
    systems : sequence of str, optional
        Systems to draw, in order (default all).
    highlight : sequence of str, optional
        Systems drawn in colour with bands; the others become thin grey median lines (a
        grey field). Default: none up to 8 systems; from 9 systems on, the top 5 by
        posterior median at k = 1 (or the smallest k that every system ran, when the grid
        has no k = 1): ranked on observed trials, never on an extrapolation. The legend
        moves outside the axes when it has more than 6 entries.

    Returns
    -------
    matplotlib.axes.Axes
    """
    return _plot_curves(draws, "pass@k", unbiased=unbiased, reference=reference,
                        reference_label=reference_label, ci_probs=ci_probs, ax=ax,
                        systems=systems, highlight=highlight)


def plot_pass_hat_k(
    draws: xr.DataArray,
    *,
    unbiased: xr.DataArray | None = None,
    reference: Reference | None = None,
    reference_label: str | None = None,
    ci_probs: Sequence[float] = (0.5, 0.95),
    ax: Axes | None = None,
    systems: Sequence[str] | None = None,
    highlight: Sequence[str] | None = None,
) -> Axes:
    """pass^k = E[p^k] (all k attempts succeed) per system; see :func:`plot_pass_at_k`.

    ``draws`` come from ``Posterior.pass_hat_k``; a guessing reference would be ``0.2**k``.
    """
    return _plot_curves(draws, "pass^k", unbiased=unbiased, reference=reference,
                        reference_label=reference_label, ci_probs=ci_probs, ax=ax,
                        systems=systems, highlight=highlight)
