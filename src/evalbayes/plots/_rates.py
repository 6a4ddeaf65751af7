"""The fitted distribution of per-task success rates of each system (rate-grid fits)."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from scipy.special import logit

from evalbayes.plots._common import error_arms, finish, get_axes, plot_label

__all__ = ["plot_rate_distribution"]

_ATOM_GAP = 2.5  # logits between the grid's end and the marker of an atom


#: Up to this many systems the legend sits inside the axes; beyond, beside them.
LEGEND_INSIDE = 8


def plot_rate_distribution(
    g: xr.DataArray,
    *,
    ci_prob: float = 0.9,
    trials: int | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Posterior of each system's rate distribution ``g_s``: the histogram of its tasks'
    success rates on the logit scale, with the point masses at ``p = 0`` and ``p = 1``.

    Interior nodes are drawn as a density per logit (mass of a node divided by the node
    spacing) with the posterior mean as a line and the equal-tailed ``ci_prob`` band; the atoms
    as points with interval bars (their mass, not a density) beyond the ends of the axis.
    Efron's g-modeling (B. Efron, *Biometrika* 103, 2016): where the band is wide, the data do
    not show the shape; with ``trials``, the rate ``1 / trials`` is marked: below it the shape
    (and so pass@k far beyond ``k = trials``) rests on the smoothness of ``g_s``.

    Parameters
    ----------
    g : xarray.DataArray
        Dims ``(chain, draw, system, rate)``, probabilities summing to 1 over ``rate``, e.g.
        ``RateGridModel().rate_distribution(posterior.posterior)``. The rates must be
        increasing, interior nodes evenly spaced on the logit scale, optionally with 0 first
        and 1 last.
    ci_prob : float
        Band probability (default 0.9).
    trials : int, optional
        The largest number of trials per task: marks ``p = 1 / trials``.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    dims = ("chain", "draw", "system", "rate")
    if not isinstance(g, xr.DataArray) or set(g.dims) != set(dims):
        raise ValueError(f"g must be a DataArray with dims {dims}")
    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must be in (0, 1), got {ci_prob!r}")
    g = g.transpose(*dims)
    rates = g["rate"].values.astype(float)
    atom0, atom1 = rates[0] == 0.0, rates[-1] == 1.0
    inner = slice(int(atom0), len(rates) - int(atom1))
    x = logit(rates[inner])
    steps = np.diff(x)
    if len(x) < 2 or np.any(steps <= 0) or not np.allclose(steps, steps[0], rtol=1e-6):
        raise ValueError("interior rates must be increasing and evenly spaced on the logit scale")
    step = float(steps[0])
    mass = g.values.reshape(-1, g.sizes["system"], len(rates))  # (draws, system, rate)
    lo_q, hi_q = (1 - ci_prob) / 2, 1 - (1 - ci_prob) / 2
    n_systems = g.sizes["system"]
    columns = 1 if n_systems <= LEGEND_INSIDE else int(np.ceil(n_systems / 30))
    ax = get_axes(ax, figsize=(7.2 + (0 if n_systems <= LEGEND_INSIDE else 2.2 * columns), 4.2))
    for s, system in enumerate(g["system"].values):
        density = mass[:, s, inner] / step
        line = ax.plot(x, density.mean(axis=0), lw=1.6, label=plot_label(system))[0]
        ax.fill_between(x, np.quantile(density, lo_q, axis=0), np.quantile(density, hi_q, axis=0),
                        color=line.get_color(), alpha=0.18, lw=0)
        for index, where in ((0, x[0] - _ATOM_GAP), (len(rates) - 1, x[-1] + _ATOM_GAP)):
            if (index == 0 and not atom0) or (index == len(rates) - 1 and not atom1):
                continue
            atom = mass[:, s, index]
            mean = float(atom.mean())
            lo, hi = np.quantile(atom, [lo_q, hi_q])
            ax.errorbar([where], [mean], yerr=error_arms([mean], [lo], [hi]), fmt="o",
                        color=line.get_color(), ms=4, capsize=2)
    ticks = [t for t in (1e-4, 1e-2, 0.1, 0.5, 0.9, 0.99, 1 - 1e-4)
             if x[0] <= logit(t) <= x[-1]]
    positions = [float(logit(t)) for t in ticks]
    labels = [f"{t:g}" for t in ticks]
    if atom0:
        positions.insert(0, float(x[0] - _ATOM_GAP))
        labels.insert(0, "p = 0")
    if atom1:
        positions.append(float(x[-1] + _ATOM_GAP))
        labels.append("p = 1")
    ax.set_xticks(positions, labels)
    if trials is not None:
        if int(trials) < 1:
            raise ValueError(f"trials must be >= 1, got {trials!r}")
        if int(trials) > 1 and x[0] <= logit(1 / trials) <= x[-1]:
            ax.axvline(float(logit(1 / trials)), color="0.4", ls=":", lw=1)
            ax.annotate(f"1/n = 1/{int(trials)}: below, shape by smoothness",
                        (float(logit(1 / trials)), 0.98), xycoords=("data", "axes fraction"),
                        ha="right", va="top", fontsize=8, color="0.3")
    ax.set_xlabel("per-task success rate (logit scale); points: mass at p = 0 and p = 1")
    ax.set_ylabel("density per logit (points: mass)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"rate distribution of each system's tasks: posterior mean, "
                 f"{ci_prob:.0%} band")
    if n_systems <= LEGEND_INSIDE:
        ax.legend(loc="upper right", fontsize=8, frameon=False, title="system")
    else:  # beyond, inside it would hide the curves: beside the axes, in columns of 30
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False,
                  ncol=columns, title="system")
    return finish(ax)
