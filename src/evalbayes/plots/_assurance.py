"""Plot of a plan: assurance over tasks, one line per trials per task, one panel per estimand."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes

from evalbayes.plots._common import ESTIMAND_SHORT, finish, get_axes

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.decisions._plan import PlanResult

__all__ = ["plot_assurance"]


def plot_assurance(
    result: PlanResult,
    estimand: str = "population",
    *,
    column: str = "assurance",
    target: float | None = 0.8,
    ax: Axes | None = None,
) -> Axes:
    """Assurance (or ``column="power"``) against the number of tasks, one line per trials.

    Error bars are +-2 Monte Carlo standard errors of the assurance. A dashed line marks
    ``target``. The chapter-17.3 lesson reads off the plot: for ``estimand="population"``
    the lines for many trials per task bunch together (only tasks help); for ``"tasks"``
    they separate.
    """
    table = result.table
    if estimand not in set(table["estimand"]):
        raise ValueError(f"the plan has no estimand {estimand!r}: {sorted(set(table['estimand']))}")
    if column not in ("assurance", "power", "correct"):
        raise ValueError(f"column must be 'assurance', 'power' or 'correct', got {column!r}")
    ax = get_axes(ax)
    rows = table[table["estimand"] == estimand]
    for trials, group in rows.groupby("trials"):
        group = group.sort_values("tasks")
        err = 2 * group["assurance_se"].to_numpy() if column == "assurance" else None
        ax.errorbar(group["tasks"], group[column], yerr=err, marker="o", ms=3, capsize=2,
                    label=f"{trials} trial{'s' if trials != 1 else ''}/task")
    if target is not None:
        ax.axhline(target, ls="--", color="0.5", lw=1)
    ax.set_xscale("log")
    ticks = np.unique(rows["tasks"].to_numpy())
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("tasks")
    pop = result.population
    what = (f"P({pop.candidate} > {pop.baseline}) > {result.threshold:g}"
            if result.target == "superiority" else f"interval width < {result.width:g}")
    ax.set_ylabel({"assurance": "assurance", "power": "frequentist power",
                   "correct": "decisive and right"}[column])
    ax.set_title(f"{what}\nestimand: {estimand} ({ESTIMAND_SHORT[estimand]})", fontsize=10)
    ax.legend(fontsize=8)
    return finish(ax)
