"""The report of a graded-score fit (``evalbayes report fit.nc`` of an ordinal or
partial-credit fit): the mean score and ``P(score >= t)`` per system for both estimands, the
exceedance curve with its band, the pairwise comparisons, the parameters, the MCMC
diagnostics (with the non-convergence warning of the count report), the stated protocol and
the settings.

Built from the report's own blocks (:mod:`evalbayes.report._document`), figures
(:mod:`evalbayes.report._figures`), number formats, diagnostics section and protocol section,
so both renderers (HTML, Markdown) draw it unchanged. The quantities are the fit's own
(:meth:`~evalbayes.models.graded.ScorePosterior.summary` and ``compare``): ``"tasks"``
averages over the data's tasks and graders, ``"population"`` over a new task from the task
population (and the data's graders).
"""

from __future__ import annotations

import json
import math

import numpy as np

from evalbayes._version import __version__
from evalbayes.models.graded import ScorePosterior
from evalbayes.report._checks import _diagnostics_blocks
from evalbayes.report._document import (
    Block,
    Callout,
    Code,
    Document,
    Figure,
    Section,
    Strong,
    Table,
    paragraph,
)
from evalbayes.report._figures import draw_png, new_figure, report_style
from evalbayes.report._format import fmt, fmt_interval, fmt_p, fmt_signed, fmt_signed_interval
from evalbayes.report._meta import ProtocolMeta
from evalbayes.report._protocol import protocol_section

__all__ = ["CI_PROB", "MAX_PAIRS", "build_score_report"]

CI_PROB = 0.95
#: Pairs compared in the report at most (the systems in data order, each with the next ones).
MAX_PAIRS = 45
#: Systems drawn in the exceedance-curve figure (the table lists all).
MAX_CURVES = 10
#: Threshold columns of the P(B > A) table at most (evenly spaced over the thresholds).
MAX_THRESHOLD_COLUMNS = 10

ESTIMAND_WORDS = {"tasks": "these tasks (the data's tasks and graders)",
                  "population": "tasks like these (a new task from the task population, the "
                                "data's graders)"}


def _scale(posterior: ScorePosterior) -> str:
    data = posterior.data
    if data.kind == "ordinal":
        return f"ordinal 0..{data.max_score} (levels {', '.join(data.levels)})"
    return "partial credit in [0, 1]"


def _overview(posterior: ScorePosterior) -> Section:
    data = posterior.data
    frame = data.frame
    rows = [[system, str(int((frame["system"] == system).sum())),
             fmt(float(frame.loc[frame["system"] == system, "score"].mean()))]
            for system in data.systems]
    return Section("overview", "Overview", (
        paragraph(
            f"{len(data):,} scores of {len(data.systems)} systems on {len(data.tasks)} tasks "
            f"from {len(data.graders)} grader(s); scale: {_scale(posterior)}. Model: ",
            Code(posterior.model.name), f" ({posterior.label}). Scores from ",
            Code(str(data.source)), ".",
        ),
        Table.build("score-counts", ["system", "scores", "observed mean score"], rows,
                    caption="The data", numeric=[False, True, True]),
    ))


def _estimand_table(posterior: ScorePosterior, estimand: str) -> Table:
    table = posterior.summary(estimand=estimand, ci_prob=CI_PROB)
    quantities = list(dict.fromkeys(table["quantity"]))
    rows = []
    for system in posterior.data.systems:
        mine = table[table["system"] == system].set_index("quantity")
        cells = [system]
        for quantity in quantities:
            r = mine.loc[quantity]
            cells.append(f"{fmt(r['mean'])} {fmt_interval(r['lower'], r['upper'])} "
                         f"(obs. {fmt(r['observed'])})")
        rows.append(cells)
    return Table.build(
        f"scores-{estimand}", ["system", *quantities], rows,
        caption=(f"Posterior mean [{CI_PROB:.0%} interval] (observed raw value) for "
                 f"{ESTIMAND_WORDS[estimand]}"),
        numeric=[False] + [True] * len(quantities))


def _curve_figure(posterior: ScorePosterior) -> Figure:
    exceed = posterior.exceedance(estimand="population")
    thresholds = np.asarray(exceed["threshold"].values, dtype=float)
    frame = posterior.data.frame
    shown = posterior.data.systems[:MAX_CURVES]
    with report_style():
        figure, axes = new_figure(6.4, 3.8)
        ax = axes[0, 0]
        for i, system in enumerate(shown):
            draws = exceed.sel(system=system).values.reshape(-1, len(thresholds))
            low, high = np.quantile(draws, [(1 - CI_PROB) / 2, (1 + CI_PROB) / 2], axis=0)
            colour = f"C{i % 10}"
            ax.fill_between(thresholds, low, high, color=colour, alpha=0.18, linewidth=0)
            ax.plot(thresholds, draws.mean(axis=0), color=colour, label=system)
            own = frame.loc[frame["system"] == system, "score"].to_numpy()
            ax.plot(thresholds, [np.mean(own >= t) for t in thresholds], "o", color=colour,
                    markersize=3)
        ax.set_xlabel("threshold t")
        ax.set_ylabel("P(score >= t)")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7, loc="best")
        png = draw_png(figure)
    more = ("" if len(posterior.data.systems) <= MAX_CURVES else
            f" The first {MAX_CURVES} systems are drawn; the tables cover all.")
    return Figure(
        name="score-curves", png=png,
        alt="P(score >= t) against the threshold t per system, with intervals",
        caption=(f"P(score >= t) for a new task (tasks like these): posterior mean (line) and "
                 f"{CI_PROB:.0%} interval (band); dots: the observed share of scores at or "
                 "above t." + more))


def _scores_section(posterior: ScorePosterior) -> Section:
    return Section("scores", "Scores: mean and P(score >= t) per system", (
        paragraph(
            "For each system, the posterior of its mean score (",
            "the level index 0..K" if posterior.data.kind == "ordinal" else "in [0, 1]",
            ") and of P(score >= t), the share of scores at or above each threshold t, for ",
            Strong("these tasks"), " (the average over the data's tasks and graders: compare "
            "it with the observed values) and for ", Strong("tasks like these"),
            " (a new task from the task population, averaged over the data's graders; wider, "
            "as it carries the task-to-task spread).",
        ),
        _estimand_table(posterior, "tasks"),
        _estimand_table(posterior, "population"),
        _curve_figure(posterior),
    ))


def _pairs(systems: list[str]) -> list[tuple[str, str]]:
    pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]]
    return pairs[:MAX_PAIRS]


def _pairs_section(posterior: ScorePosterior) -> Section:
    systems = posterior.data.systems
    if len(systems) < 2:
        return Section("pairs", "Comparisons", (paragraph("One system: nothing to compare."),))
    pairs = _pairs(systems)
    frames = [posterior.compare(baseline=a, candidate=b, estimand="population",
                                ci_prob=CI_PROB) for a, b in pairs]
    mean_rows, p_rows = [], []
    thresholds = list(frames[0]["quantity"].iloc[1:])
    step = max(1, math.ceil(len(thresholds) / MAX_THRESHOLD_COLUMNS))
    chosen = thresholds[::step]
    for frame in frames:
        first = frame.iloc[0]
        mean_rows.append([str(first["baseline"]), str(first["candidate"]),
                          fmt_signed(first["difference"]),
                          fmt_signed_interval(first["lower"], first["upper"]),
                          fmt_p(first["P(candidate > baseline)"])])
        by = frame.set_index("quantity")
        p_rows.append([f"{first['candidate']} vs {first['baseline']}",
                       *["tie" if by.loc[q, "P(tie)"] == 1 else
                         fmt_p(by.loc[q, "P(candidate > baseline)"]) for q in chosen]])
    blocks: list[Block] = [
        paragraph(
            "Each pair: candidate B against baseline A, from the same posterior draws (paired "
            "through the shared cut points, task and grader effects), for tasks like these. ",
            "P(B > A) near 1 or 0 is a clear difference; near 0.5 none.",
        ),
        Table.build("score-pairs-mean", ["baseline A", "candidate B", "B - A mean score",
                                         f"{CI_PROB:.0%} interval", "P(B > A)"],
                    mean_rows, caption="The mean score",
                    numeric=[False, False, True, True, True]),
        Table.build("score-pairs-exceedance", ["B vs A", *chosen], p_rows,
                    caption=("P(B > A) of P(score >= t) at each threshold ('tie': equal in "
                             "every draw, e.g. both 0)"),
                    numeric=[False] + [True] * len(chosen)),
    ]
    total = len(systems) * (len(systems) - 1) // 2
    if total > len(pairs):
        blocks.append(paragraph(f"The first {len(pairs)} of {total} pairs are shown; ",
                                Code("evalbayes compare FIT A B"), " compares any two."))
    return Section("pairs", "Comparisons: P(B > A)", tuple(blocks))


def _parameters_section(posterior: ScorePosterior) -> Section:
    table = posterior.parameters(ci_prob=CI_PROB)
    keep = ~table["parameter"].str.startswith(("task_effect[", "grader_system_effect["))
    rows = [[str(r.parameter), fmt(r.mean), fmt_interval(r.lower, r.upper)]
            for r in table[keep].itertuples()]
    return Section("parameters", "Parameters", (
        paragraph("Cut points (ordinal) or intercept and precision (partial credit), system and "
                  "grader effects (sum to zero) and the spreads of the task and grader x system "
                  "effects, on the logit scale. The per-task and grader x system effects are "
                  "left out here; ", Code("ScorePosterior.parameters()"), " lists them."),
        Table.build("score-parameters", ["parameter", "mean", f"{CI_PROB:.0%} interval"], rows,
                    caption=f"Posterior of the parameters ({posterior.model.name})",
                    numeric=[False, True, True]),
    ))


def _checks_section(posterior: ScorePosterior) -> Section:
    return Section("checks", "Model checks: diagnostics",
                   tuple(_diagnostics_blocks(posterior)))  # type: ignore[arg-type]


def _reproduce_section(posterior: ScorePosterior, fitted_here: bool) -> Section:
    rows = [
        ["evalbayes", __version__],
        ["model", json.dumps(posterior.model.to_config(), sort_keys=True)],
        ["inference", posterior.label],
        ["sampler", json.dumps(posterior.sampler.to_dict(), sort_keys=True)],
        ["fit", "fitted for this report" if fitted_here else "read from a saved fit"],
        ["intervals", f"{CI_PROB:.0%}, equal-tailed (posterior)"],
    ]
    return Section("reproduce", "Reproduce", (
        paragraph("Every number above follows from the scores and these settings; the same "
                  "tables print with ", Code("evalbayes summary FIT"), " and ",
                  Code("evalbayes compare FIT"), "."),
        Table.build("settings", ["setting", "value"], rows, caption="Settings"),
    ))


def build_score_report(posterior: ScorePosterior, meta: ProtocolMeta | None = None, *,
                       fitted_here: bool = False) -> Document:
    """Every section of a graded-score fit's report as a
    :class:`~evalbayes.report._document.Document`.

    Parameters
    ----------
    posterior : ScorePosterior
        An ordinal or partial-credit fit (``OrdinalModel().fit(...)`` or
        ``evalbayes.load("fit.nc")``).
    meta : ProtocolMeta, optional
        Harness and protocol as stated by the user.
    fitted_here : bool
        Whether the fit was made for this report (recorded in "Reproduce").
    """
    if not isinstance(posterior, ScorePosterior):
        raise TypeError(f"build_score_report takes a ScorePosterior, got "
                        f"{type(posterior).__name__}")
    data = posterior.data
    header: tuple[str, ...] = (
        f"{len(data.systems)} systems × {len(data.tasks):,} tasks × {len(data.graders)} "
        f"graders; {len(data):,} scores, {_scale(posterior)}; {posterior.label}; "
        f"evalbayes {__version__}.",
        "Every number names its estimand: 'these tasks' or 'tasks like these'.",
    )
    checks = _checks_section(posterior)
    overview = _overview(posterior)
    unconverged = [b for b in checks.blocks if isinstance(b, Callout) and b.kind == "warning"]
    if unconverged:  # the warning also heads the report, where no reader can miss it
        overview = Section(overview.key, overview.title, (*unconverged, *overview.blocks))
    sections = (
        overview,
        _scores_section(posterior),
        _pairs_section(posterior),
        _parameters_section(posterior),
        checks,
        protocol_section(meta),
        _reproduce_section(posterior, fitted_here),
    )
    return Document(title="evalbayes report: graded scores", header=header, sections=sections)
