"""Section "Data": what was measured, how much, and the small-suite and saturation flags.

Systems, tasks, trials per cell, missing cells; per system the flaky tasks (``0 < c < n``),
the share of always-solved tasks (saturated at >= 90 %), the small-suite flag (< 20 tasks),
and the intra-task correlation with its design effect (Kish 1965; Miller 2024): how
much an interval that treats every trial as independent understates the uncertainty about
tasks like these.

References
----------
Kish, L. (1965). *Survey Sampling*. Wiley (the design effect).
Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
evaluations. arXiv:2411.00640.
"""

from __future__ import annotations

import math

import numpy as np

from evalbayes.frequentist.crosscheck import SATURATED_SHARE, SMALL_SUITE
from evalbayes.report._context import ReportContext
from evalbayes.report._document import Block, Callout, Code, Section, Strong, Table, paragraph
from evalbayes.report._format import fmt

__all__ = ["MAX_COUNT_TASKS", "overview_section"]

MAX_COUNT_TASKS = 60  # list every task's counts up to this many tasks


def _trials_text(n: np.ndarray) -> str:
    observed = n[n > 0]
    low, high = int(observed.min()), int(observed.max())
    if low == high:
        return f"{low} trial{'s' if low != 1 else ''} in every observed cell"
    return (
        f"{low} to {high} trials per observed cell (median {float(np.median(observed)):g})"
    )


def _system_rows(ctx: ReportContext) -> list[list[str]]:
    n, c = ctx.data.n.values, ctx.data.c.values
    rows = []
    for i, s in enumerate(ctx.crosscheck.systems):
        observed = n[i] > 0
        never = int(np.sum(c[i][observed] == 0))
        flags = []
        if s.small_suite:
            flags.append("small suite")
        if s.saturated:
            flags.append("saturated")
        corr = s.correlation
        low, high = int(n[i][observed].min()), int(n[i][observed].max())
        rows.append(
            [
                s.system,
                str(s.n_tasks),
                str(int((~observed).sum())),
                f"{s.n_trials:,}",
                str(low) if low == high else f"{low}-{high}",
                str(s.flaky),
                str(never),
                f"{s.saturated_share:.0%}",
                fmt(corr.rho if corr else None, 2),
                fmt(corr.design_effect if corr else None, 1),
                ", ".join(flags) or "-",
            ]
        )
    return rows


def _flag_callouts(ctx: ReportContext) -> list[Block]:
    blocks: list[Block] = []
    small = [s for s in ctx.crosscheck.systems if s.small_suite]
    if small:
        sizes = sorted({s.n_tasks for s in small})
        blocks.append(
            Callout(
                "warning",
                f"Small suite: {', '.join(map(str, sizes))} tasks (fewer than {SMALL_SUITE})",
                (
                    "With this few tasks only large differences can show, and the interval "
                    "for tasks like these is wide whatever the number of trials per task: "
                    "more trials shrink the trial noise, only more tasks shrink the task "
                    "sampling term (Miller 2024).",
                ),
            )
        )
    saturated = [s.system for s in ctx.crosscheck.systems if s.saturated]
    if saturated:
        blocks.append(
            Callout(
                "warning",
                f"Saturated: {', '.join(saturated)}",
                (
                    f"{SATURATED_SHARE:.0%} or more of the tasks passed every trial: the "
                    "suite cannot separate systems at this level; add harder tasks.",
                ),
            )
        )
    missing = int((ctx.data.n.values == 0).sum())
    if missing:
        blocks.append(
            Callout(
                "note",
                f"{missing} missing cells",
                (
                    "Some systems did not run some tasks (n = 0). Every per-system number "
                    "averages over the tasks that system ran; paired comparisons use the "
                    "tasks both systems ran; the model leaves missing cells out of the "
                    "likelihood.",
                ),
            )
        )
    by_note: dict[str, list[str]] = {}
    for s in ctx.crosscheck.systems:
        for note in s.notes:
            by_note.setdefault(note, []).append(s.system)
    for note, systems in by_note.items():
        who = "every system" if len(systems) == len(ctx.systems) > 1 else ", ".join(systems)
        blocks.append(Callout("note", f"{who}: {note}"))
    return blocks


def _design_effect_text(ctx: ReportContext) -> list[Block]:
    candidates = [
        (s, s.correlation) for s in ctx.crosscheck.systems
        if s.correlation is not None and math.isfinite(s.correlation.design_effect)
    ]  # fmt: skip
    if not candidates:
        return []
    worst, corr = max(candidates, key=lambda pair: pair[1].design_effect)
    factor = math.sqrt(max(corr.design_effect, 0.0))
    return [
        paragraph(
            Strong("Correlated trials. "),
            "Trials of one task share its difficulty, so they are not independent coin "
            "flips. The intra-task correlation ρ is the share of the outcome variance that "
            "lies between tasks, and the design effect 1 + (n - 1)ρ is how many times the "
            "variance of the task-average pass rate exceeds the naive variance that treats "
            f"all trials as independent (Kish 1965). For {worst.system}, ρ = "
            f"{corr.rho:.2f} and the design effect is {corr.design_effect:.1f}: an "
            f"episode-level interval would be about {factor:.1f} times too narrow for tasks "
            "like these.",
        )
    ]


def _counts_table(ctx: ReportContext) -> list[Block]:
    data = ctx.data
    if len(data.tasks) > MAX_COUNT_TASKS:
        return [
            paragraph(
                f"The {len(data.tasks):,} tasks are too many to list here; ",
                Code("EvalData.to_frame()"),
                " gives every count.",
            )
        ]
    coords = [  # task coordinates that vary (a constant one says nothing per task)
        str(name) for name, coord in data.dataset.coords.items()
        if coord.dims == ("task",) and name != "task" and len(set(coord.values.tolist())) > 1
    ]  # fmt: skip
    n, c = data.n.values, data.c.values
    rows = []
    for j, task in enumerate(data.tasks):
        row = [task]
        row += [str(data.dataset.coords[name].values[j]) for name in coords]
        row += ["-" if n[i, j] == 0 else f"{c[i, j]}/{n[i, j]}" for i in range(n.shape[0])]
        rows.append(row)
    columns = ["task", *coords, *data.systems]
    numeric = [False] * (1 + len(coords)) + [True] * len(data.systems)
    return [
        Table.build(
            "counts",
            columns,
            rows,
            caption="Successes / trials per task and system (- = not run)",
            numeric=numeric,
        )
    ]


def overview_section(ctx: ReportContext) -> Section:
    """The data overview section."""
    data = ctx.data
    n = data.n.values
    n_cells = n.size
    observed = int((n > 0).sum())
    intro = paragraph(
        f"{len(data.systems)} systems × {len(data.tasks):,} tasks: {observed:,} of "
        f"{n_cells:,} cells observed, {n_cells - observed:,} missing; "
        f"{_trials_text(n)}; {int(n.sum()):,} trials in all.",
    )
    table = Table.build(
        "data-summary",
        [
            "system", "tasks", "missing", "trials", "trials per task", "flaky tasks",
            "never solved", "always solved", "ρ (intra-task)", "design effect", "flags",
        ],
        _system_rows(ctx),
        caption="Per system: coverage, flaky and saturated tasks, intra-task correlation",
        numeric=[False, True, True, True, True, True, True, True, True, True, False],
    )  # fmt: skip
    legend = paragraph(
        "Flaky: 0 < c < n (the task sometimes passes). Always solved: share of tasks that "
        f"passed every trial (saturated at {SATURATED_SHARE:.0%} or more). Small suite: "
        f"fewer than {SMALL_SUITE} tasks, where only large differences show (Bowyer et al. "
        "2025). ρ and the design effect are the moment estimates of the one-way "
        "random-effects model; '-' where they are undefined (every trial passed or failed, "
        "or a task has a single trial).",
    )
    blocks: list[Block] = [intro, table, legend]
    blocks += _design_effect_text(ctx)
    blocks += _flag_callouts(ctx)
    blocks += _counts_table(ctx)
    return Section("data", "Data", tuple(blocks))
