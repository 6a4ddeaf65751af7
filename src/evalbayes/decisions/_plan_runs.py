"""Plan a training-recipe comparison: how many runs x tasks x trials per recipe settle it.

A claim "recipe B beats recipe A" is about the checkpoints each recipe produces, so its unit
of replication is the training run (Miller 2024, "Adding error bars to evals",
arXiv:2411.00640; the run-to-run variance component of
:class:`~evalbayes.models.designs.TrainingSeedsModel`). More tasks and trials shrink only the
evaluation noise of each run; past a point only more runs help. This module puts
:func:`evalbayes.models.designs.design_assurance` on a full grid of designs, the
planner's view of it:

for each design ``(runs, tasks, trials)`` and each of ``n_sims`` posterior draws of a pilot
training-seeds fit, a new experiment is simulated (``runs`` new runs per recipe, ``tasks``
new tasks shared by both recipes, ``trials`` trials per task) and analysed with runs as the
unit (Welch interval of the per-run pass rates at level ``1 - alpha``). The assurance is the
share of simulations whose interval excludes 0 on the side of that draw's true difference:
power averaged over the posterior (O'Hagan and Stevens 2001, "Bayesian assessment of sample
size for clinical trials of cost-effectiveness", Med. Decis. Making 21(3)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalbayes._core.names import check_count, check_prob
from evalbayes.decisions._common import check_grid

__all__ = ["RunPlanResult", "plan_runs"]


@dataclass(frozen=True)
class RunPlanResult:
    """Assurance of every (runs, tasks, trials) design of a recipe comparison.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per design, sorted by tasks, trials, runs: ``runs`` (per recipe), ``tasks``,
        ``trials``, ``cost`` (evaluations, ``2 runs tasks trials``), ``se`` (the standard
        error of the difference of pass rates that one experiment of the design will have:
        root mean square of the simulated Welch standard errors), ``estimate_sd`` (the
        spread of the estimate across simulations: ``se`` plus the posterior's uncertainty
        about the true difference), ``assurance`` and its Monte Carlo ``assurance_se``.
    baseline, candidate : str
        Recipes A and B.
    alpha : float
        Two-sided level of the run-level Welch interval.
    n_sims, seed : int
        Simulations per design and the seed.
    """

    table: pd.DataFrame
    baseline: str
    candidate: str
    alpha: float
    n_sims: int
    seed: int

    def runs_needed(self, tasks: int, trials: int, assurance: float = 0.8) -> int | None:
        """Fewest runs per recipe in the grid with ``assurance >= assurance`` at these tasks
        and trials (None when no design of the grid reaches it)."""
        rows = self.table[(self.table["tasks"] == tasks) & (self.table["trials"] == trials)]
        if rows.empty:
            raise ValueError(f"no designs with tasks={tasks}, trials={trials} in the grid")
        hit = rows[rows["assurance"] >= assurance]
        return None if hit.empty else int(hit["runs"].min())

    def summary(self, assurance: float = 0.8) -> str:
        """Readable table plus the runs needed per (tasks, trials)."""
        lines = [
            f"Plan runs: recipe {self.candidate} (candidate, B) vs {self.baseline} (baseline, A); "
            f"decisive = the "
            f"{1 - self.alpha:.0%} Welch interval of B - A over runs excludes 0 on the side "
            "of the true difference",
            f"design prior: the training-seeds fit's posterior; {self.n_sims} simulated "
            "experiments per design (Monte Carlo s.e. in assurance_se)",
            "",
        ]
        with pd.option_context("display.width", 200, "display.max_rows", 1000):
            lines.append(self.table.to_string(index=False, float_format="{:.3f}".format))
        lines.append("")
        top = int(self.table["runs"].max())
        for (tasks, trials), _ in self.table.groupby(["tasks", "trials"], sort=True):
            need = self.runs_needed(int(tasks), int(trials), assurance)
            text = f">{top} (not in grid)" if need is None else str(need)
            unit = "trial" if int(trials) == 1 else "trials"
            lines.append(f"{int(tasks):>6} tasks, {int(trials)} {unit}/task: {text} runs per "
                         f"recipe for {assurance:.0%} assurance")
        return "\n".join(lines)


def plan_runs(
    posterior: Any,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    runs: Sequence[int] | int = (2, 4, 8),
    tasks: Sequence[int] | int = (10, 20, 50),
    trials: Sequence[int] | int = (1, 4),
    n_sims: int = 400,
    alpha: float = 0.05,
    seed: int = 0,
) -> RunPlanResult:
    """Assurance of every (runs, tasks, trials) design for recipe ``candidate`` vs
    ``baseline`` (module docstring), from a training-seeds fit.

    Parameters
    ----------
    posterior : TrainingSeedsPosterior
        A :class:`~evalbayes.models.designs.TrainingSeedsModel` fit of a pilot: its posterior
        draws are the design prior.
    baseline, candidate : str, optional
        Recipes A and B; default the fit's two recipes when it has exactly two.
    runs, tasks, trials : int or sequence of int
        The grid: runs per recipe (>= 2), new tasks shared by both recipes (>= 1), trials
        per task (>= 1). Every combination is simulated.
    n_sims : int
        Simulated experiments per design (>= 10).
    alpha : float
        Two-sided level of the run-level Welch interval.
    seed : int
        Seed of the simulations.

    Returns
    -------
    RunPlanResult
        Delegates each design to :func:`evalbayes.models.designs.design_assurance`
        (one call over the whole grid, so the simulations follow one random stream).
    """
    from evalbayes.models.designs._training_seeds import TrainingSeedsModel, design_assurance

    model = getattr(posterior, "model", None)
    if not isinstance(model, TrainingSeedsModel):
        name = getattr(model, "name", type(posterior).__name__)
        raise ValueError(f"plan_runs needs a training-seeds fit, got {name!r}")
    _, recipes = model.recipes(posterior.data)
    if baseline is None and candidate is None:
        if len(recipes) != 2:
            raise ValueError(f"name the baseline and candidate recipes; the fit has {recipes}")
        baseline, candidate = recipes
    if baseline is None or candidate is None:
        raise ValueError("name both the baseline and the candidate recipe")
    for label in (baseline, candidate):
        if label not in recipes:
            raise ValueError(f"unknown recipe {label!r}; the fit has {recipes}")
    if baseline == candidate:
        raise ValueError(f"baseline and candidate are the same recipe {baseline!r}")
    grid_runs = check_grid(runs, "runs", 2)
    grid_tasks = check_grid(tasks, "tasks", 1)
    grid_trials = check_grid(trials, "trials", 1)
    n_sims = check_count(n_sims, "n_sims", 10)
    alpha = check_prob(alpha, "alpha")
    seed = check_count(seed, "seed", 0)
    t, n, r = np.meshgrid(grid_tasks, grid_trials, grid_runs, indexing="ij")
    table = design_assurance(posterior, baseline, candidate, runs=r.ravel(), tasks=t.ravel(),
                             trials=n.ravel(), n_sims=n_sims, alpha=alpha, seed=seed)
    table["assurance_se"] = [math.sqrt(a * (1 - a) / n_sims) for a in table["assurance"]]
    return RunPlanResult(table=table, baseline=baseline, candidate=candidate, alpha=alpha,
                         n_sims=n_sims, seed=seed)  # fmt: skip
