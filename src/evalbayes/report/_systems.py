"""Sections "Systems" (pass@1 per system, every interval side by side) and "pass@k and
pass^k" (tables over k and band plots).

Two estimands, always named (Miller 2024): *these tasks* (the average over the tasks
that were run; only trial noise is uncertain) and *tasks like these* (a new task from the
same population; task sampling is uncertain too). The frequentist columns answer the same
two questions: the Wilson interval of the pooled trials treats every trial as independent
(at most a these-tasks interval, too narrow when tasks differ); the task bootstrap resamples
tasks (tasks like these).
"""

from __future__ import annotations

import numpy as np

from evalbayes._core.names import LABEL_WIDTH, label_key
from evalbayes.plots import plot_pass_at_k, plot_pass_hat_k, plot_system_forest
from evalbayes.report._context import ReportContext
from evalbayes.report._document import (
    Block,
    Callout,
    Code,
    Figure,
    Section,
    Strong,
    Table,
    paragraph,
)
from evalbayes.report._figures import draw_png, new_figure, report_style
from evalbayes.report._format import fmt, fmt_interval
from evalbayes.results._comparison import Comparison
from evalbayes.results._extrapolation import max_trials, one_trial_note

__all__ = ["MAX_CURVE_SYSTEMS", "TABLE_TOP", "curves_section", "systems_section"]

MAX_CURVE_SYSTEMS = 8  # above this, the band plots show a grey field with the top few coloured
HIGHLIGHT = 5
TABLE_TOP = 15  # long tables: the top systems by posterior pass@1 plus the notable ones
ESTIMAND_LABEL = {"tasks": "these tasks", "population": "tasks like these"}
EXTRAPOLATED_MARK = "(extrapolated)"


def _estimate_cells(ctx: ReportContext, metric: str, estimand: str, k: int) -> dict[str, str]:
    """'mean [lower, upper]' per system, or 'n/a' when the model lacks the estimand."""
    summary = ctx.summary(metric, estimand, k)
    if not summary:
        return {s: "n/a" for s in ctx.systems}
    return {s: f"{fmt(m)} {fmt_interval(lo, hi)}" for s, (m, lo, hi) in summary.items()}


def _p_best(ctx: ReportContext) -> dict[str, float]:
    draws = ctx.draws("pass@k", "tasks").sel(k=[1.0])
    if len(ctx.systems) < 2:
        return {s: 1.0 for s in ctx.systems}
    best = Comparison.from_draws(draws, rope=ctx.rope, ci_prob=ctx.ci_prob).p_best()
    return {str(s): float(best.sel(system=s, k=1.0)) for s in best["system"].values}


def systems_section(ctx: ReportContext) -> Section:
    """pass@1 per system: unbiased, Wilson, task bootstrap, posterior for both estimands."""
    tasks = ctx.summary("pass@k", "tasks", 1)
    population = ctx.summary("pass@k", "population", 1)
    p_best = _p_best(ctx)
    rows = []
    shown = _shown_systems(ctx)
    by_name = {s.system: s for s in ctx.crosscheck.systems}
    for name in shown:
        s = by_name[name]
        t_mean, t_lo, t_hi = tasks[s.system]
        p_mean, p_lo, p_hi = population.get(s.system, (np.nan, np.nan, np.nan))
        rows.append(
            [
                s.system,
                fmt(s.pass1_mean),
                fmt_interval(float(s.wilson.lower), float(s.wilson.upper)),
                fmt_interval(s.task_bootstrap.lower, s.task_bootstrap.upper),
                fmt(t_mean),
                fmt_interval(t_lo, t_hi),
                fmt(p_mean) if population else "n/a",
                fmt_interval(p_lo, p_hi) if population else "n/a",
                fmt(p_best[s.system]),
            ]
        )
    pct = f"{ctx.ci_prob:.0%}"
    table = Table.build(
        "per-system",
        [
            "system",
            "pass@1 (unbiased, task average)",
            f"Wilson {pct} (pooled trials)",
            f"task bootstrap {pct}",
            "posterior mean: these tasks",
            f"{pct} interval: these tasks",
            "posterior mean: tasks like these",
            f"{pct} interval: tasks like these",
            "P(best)",
        ],
        rows,
        caption="pass@1 per system: frequentist estimates beside the posterior, both estimands"
        + _collapsed_note(ctx, shown),
        numeric=[False] + [True] * 8,
    )
    blocks: list[Block] = [
        paragraph(
            "pass@1 is the task average of the per-task success rates (Miller 2024). ",
            Strong("These tasks"),
            ": how well the system does on the tasks that were run; only trial noise is "
            "uncertain. ",
            Strong("Tasks like these"),
            ": how well it will do on new tasks from the same population; the sampling of "
            "tasks is uncertain too, so this interval is wider, often several times.",
        ),
        table,
        paragraph(
            "The Wilson interval pools all trials as if independent and is at most a "
            "these-tasks interval; the task bootstrap resamples tasks and answers the "
            "tasks-like-these question (Miller 2024). Posterior intervals are equal-tailed, from "
            f"{ctx.posterior.label}. P(best): posterior probability that the system has the "
            "highest pass@1 on these tasks.",
        ),
    ]
    key = label_key(ctx.systems)
    if key:
        blocks.append(Table.build(
            "label-key", ["label in the figures", "system"], key,
            caption=f"Names longer than {LABEL_WIDTH} characters are shortened in the figures "
            "(head…tail and #six hex digits of the full name); the tables show full names",
        ))  # fmt: skip
    if len(ctx.systems) > MAX_CURVE_SYSTEMS:
        blocks.append(_system_forest_figure(ctx))
    if ctx.posterior.approximate:
        kind = ctx.posterior.sampler.approximation_kind
        blocks.insert(0, paragraph(Strong("APPROXIMATE: "), f"{kind} fit; posterior "
                                   "intervals are approximate, often too narrow."))
    return Section("systems", "Systems: pass@1", tuple(blocks))


def _notable(ctx: ReportContext) -> list[str]:
    """Systems whose unbiased pass@1 lies outside their these-tasks posterior interval."""
    tasks = ctx.summary("pass@k", "tasks", 1)
    out = []
    for s in ctx.crosscheck.systems:
        _, lo, hi = tasks[s.system]
        if np.isfinite(s.pass1_mean) and not lo <= s.pass1_mean <= hi:
            out.append(s.system)
    return out


def _shown_systems(ctx: ReportContext) -> list[str]:
    """Every system up to TABLE_TOP + 5; beyond, the top TABLE_TOP and the notable ones,
    in ranking order."""
    ranking = ctx.ranking()
    if len(ranking) <= TABLE_TOP + 5:
        return [s.system for s in ctx.crosscheck.systems]
    keep = set(ranking[:TABLE_TOP]) | set(_notable(ctx))
    return [s for s in ranking if s in keep]


def _collapsed_note(ctx: ReportContext, shown: list[str]) -> str:
    if len(shown) == len(ctx.systems):
        return ""
    extra = len(shown) - TABLE_TOP
    notable = (f" and {extra} notable (unbiased estimate outside the posterior interval)"
               if extra > 0 else "")
    return (f". Showing the top {TABLE_TOP} of {len(ctx.systems)} systems by posterior "
            f"pass@1{notable}; `evalbayes summary FIT` lists all")


def _system_forest_figure(ctx: ReportContext) -> Figure:
    draws = ctx.draws("pass@k", "tasks")
    ks = [float(k) for k in draws["k"].values]
    chosen = sorted({1.0, max(ks)} & set(ks)) or ks[:1]
    n = len(ctx.systems)
    with report_style():
        figure, axes = new_figure(7.0, 1.4 + (0.22 * n if n <= 40 else 0.15 * n))
        plot_system_forest(draws, chosen, ci_prob=ctx.ci_prob, ax=axes[0, 0])
        png = draw_png(figure)
    return Figure(
        name="system-forest",
        png=png,
        alt="every system's posterior pass@k with its interval, ordered by posterior mean",
        caption=(f"Every system's pass@k on these tasks at k = "
                 f"{', '.join(f'{k:g}' for k in chosen)}: posterior mean and "
                 f"{ctx.ci_prob:.0%} interval, best first."),
    )


def _k_table(ctx: ReportContext) -> Table:
    unbiased = {m: ctx.unbiased(m) for m in ("pass@k", "pass^k")}
    cells = {
        (metric, estimand, k): _estimate_cells(ctx, metric, estimand, k)
        for metric in ("pass@k", "pass^k")
        for estimand in ("tasks", "population")
        for k in ctx.ks
    }
    limit = max_trials(ctx.posterior.data)
    rows = []
    shown = _shown_systems(ctx)
    for system in shown:
        n_max = int(limit.sel(system=system))
        for k in ctx.ks:
            mark = f"{k} {EXTRAPOLATED_MARK}" if k > n_max else str(k)
            row = [system, mark]
            for metric in ("pass@k", "pass^k"):
                value = float(unbiased[metric].sel(system=system, k=float(k)))
                row.append(fmt(value))
                for estimand in ("tasks", "population"):
                    row.append(cells[metric, estimand, k][system])
            rows.append(row)
    pct = f"{ctx.ci_prob:.0%}"
    return Table.build(
        "pass-at-k",
        [
            "system", "k",
            "pass@k unbiased", f"pass@k these tasks [{pct}]", f"pass@k tasks like these [{pct}]",
            "pass^k unbiased", f"pass^k these tasks [{pct}]", f"pass^k tasks like these [{pct}]",
        ],
        rows,
        caption="pass@k and pass^k: unbiased estimates (k <= n) and posterior mean [interval]; "
        f"{EXTRAPOLATED_MARK} k beyond the most trials the system ran on any task "
        "(extrapolation)" + _one_trial_caption(ctx) + _collapsed_note(ctx, shown),
        numeric=[False] + [True] * 7,
    )  # fmt: skip


def _one_trial_caption(ctx: ReportContext) -> str:
    note = one_trial_note(ctx.posterior.data, ctx.ks)
    return f". {note[0].upper()}{note[1:].rstrip('.')}" if note else ""


def _curve_figure(ctx: ReportContext, metric: str) -> Figure:
    estimands = [e for e in ("tasks", "population") if ctx.curve(metric, e) is not None]
    many = len(ctx.systems) > MAX_CURVE_SYSTEMS
    highlight = ctx.ranking()[:HIGHLIGHT] if many else None
    plot = plot_pass_at_k if metric == "pass@k" else plot_pass_hat_k
    with report_style():
        figure, axes = new_figure((7.6 if many else 5.6) * len(estimands), 4.2, 1,
                                  len(estimands))
        for ax, estimand in zip(axes[0], estimands, strict=True):
            plot(
                ctx.draws(metric, estimand),
                unbiased=ctx.unbiased(metric) if estimand == "tasks" else None,
                ax=ax,
                highlight=highlight,
            )
        png = draw_png(figure)
    slug = "pass-at-k" if metric == "pass@k" else "pass-hat-k"
    what = "at least one of k attempts succeeds" if metric == "pass@k" else "all k succeed"
    return Figure(
        name=slug,
        png=png,
        alt=f"{metric} against k per system, posterior median with 50% and 95% bands",
        caption=(
            f"{metric} ({what}): posterior median and 50 % / 95 % bands per system; open "
            "points: unbiased estimates (these tasks only, k <= n); hatched band and dashed "
            "median: k beyond the trials the system ran (extrapolation). Left: these tasks; "
            "right: tasks like these."
        ),
    )


def curves_section(ctx: ReportContext) -> Section:
    """Band plots and the table over k."""
    blocks: list[Block] = [
        paragraph(
            "pass@k is the chance that at least one of k independent attempts succeeds, "
            "averaged over tasks: coverage with an oracle that picks the passing attempt "
            "(Chen et al. 2021). pass^k is the chance that all k succeed: reliability (Yao et al. "
            "2024). "
            "The unbiased estimator of pass@k exists only for k <= n; the posterior extends "
            "past n through the model of per-task rates. ",
            Strong("Beyond the trials run"),
            " (k larger than the most trials a system ran on any task, marked "
            f"{EXTRAPOLATED_MARK} and hatched) the curve is extrapolation: it rests on the "
            "assumed shape of the rate distribution below 1/n (",
            f"{ctx.posterior.label}), not on observed repeats. On real benchmarks such "
            "intervals have covered the truth less often than stated: read them as "
            "model-based projections.",
        ),
        _curve_figure(ctx, "pass@k"),
        _curve_figure(ctx, "pass^k"),
    ]
    note = one_trial_note(ctx.posterior.data, ctx.ks)
    if note:  # said where the numbers are, not only on stderr when the fit ran
        blocks.insert(1, Callout("warning", "pass@k for k > 1 is the prior's here",
                                 (note[0].upper() + note[1:],)))
    if len(ctx.systems) > MAX_CURVE_SYSTEMS:
        blocks.append(
            paragraph(
                f"The plots colour the {HIGHLIGHT} systems with the highest posterior pass@1 "
                "(with bands); every other system is a thin grey median line (",
                Code("evalbayes plot FIT --kind pass-at-k"),
                " draws chosen systems).",
            )
        )
    blocks.append(_k_table(ctx))
    return Section("curves", "pass@k and pass^k", tuple(blocks))
