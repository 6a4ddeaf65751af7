"""The result of :func:`~evalbayes.frequentist.crosscheck.crosscheck`: per-system and paired
blocks, and the report that renders them (frame, dict, text)."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalbayes._core.names import TEXT_LABEL_WIDTH, display_label
from evalbayes._core.rendering import Rendered, frame_html, jsonable
from evalbayes.frequentist import (
    BootstrapResult,
    Interval,
    IntraTaskCorrelation,
    McNemarMDE,
    McNemarResult,
    NonInferiorityResult,
    PairedOutcomes,
    SignFlipResult,
)

__all__ = [
    "SATURATED_SHARE",
    "SMALL_SUITE",
    "ComparisonCrosscheck",
    "CrosscheckReport",
    "SystemCrosscheck",
]

SMALL_SUITE = 20  # fewer than 20 cases is a small suite (coding.sh/docs/eval-methods)
SATURATED_SHARE = 0.9  # coding.sh/docs/eval-methods: 90% or more of the cases pass every trial


@dataclass(frozen=True)
class SystemCrosscheck(Rendered):
    """Frequentist summary of one system over the tasks it ran.

    Attributes
    ----------
    system : str
        System name.
    n_tasks, n_trials, min_trials : int
        Observed tasks, total trials, and the smallest ``n`` of a task.
    pass1_mean, pass1_pooled : float
        Task-average pass@1 (Miller 2024) and pooled ``sum c / sum n``.
    wilson : Interval
        Wilson interval of the pooled rate (treats trials as independent).
    task_bootstrap : BootstrapResult
        Task-level (cluster) bootstrap interval of the task-average pass@1.
    pass_at_k, pass_hat_k : Mapping[int, float]
        Unbiased task-average pass@k and pass^k; NaN where ``k`` exceeds ``min_trials``.
    correlation : IntraTaskCorrelation or None
        Intra-task correlation and design effect; None when it cannot be estimated.
    flaky : int
        Tasks with ``0 < c < n``.
    saturated_share : float
        Share of tasks that passed every trial.
    saturated, small_suite : bool
        ``saturated_share >= 0.9``; fewer than 20 tasks.
    notes : tuple of str
        What was left out and why.
    """

    system: str
    n_tasks: int
    n_trials: int
    min_trials: int
    pass1_mean: float
    pass1_pooled: float
    wilson: Interval
    task_bootstrap: BootstrapResult
    pass_at_k: Mapping[int, float]
    pass_hat_k: Mapping[int, float]
    correlation: IntraTaskCorrelation | None
    flaky: int
    saturated_share: float
    saturated: bool
    small_suite: bool
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ComparisonCrosscheck(Rendered):
    """Paired comparison of B against the baseline A on the tasks both ran.

    Attributes
    ----------
    baseline, system : str
        A and B; differences are B - A.
    n_tasks : int
        Shared tasks.
    difference : float
        Mean per-task difference of pass rates, B - A.
    interval : BootstrapResult
        Paired bootstrap interval.
    sign_flip : SignFlipResult
        Two-sided sign-flip test.
    outcomes : PairedOutcomes
        Majority-outcome 2x2 table (strict majority; a tie is a fail).
    mcnemar : McNemarResult
        Exact McNemar test on the majority outcomes.
    verdict : str
        ``better``, ``worse`` or ``inconclusive`` (:func:`paired_verdict`).
    mde : McNemarMDE
        Smallest gap in majority-outcome pass rate McNemar's test finds 80% of the time at
        this many tasks, holding the observed share of changed tasks.
    non_inferiority : NonInferiorityResult or None
        When a margin was given.
    dropped : tuple of str
        Tasks only one of the two systems ran.
    """

    baseline: str
    system: str
    n_tasks: int
    difference: float
    interval: BootstrapResult
    sign_flip: SignFlipResult
    outcomes: PairedOutcomes
    mcnemar: McNemarResult
    verdict: str
    mde: McNemarMDE
    non_inferiority: NonInferiorityResult | None
    dropped: tuple[str, ...]


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}f}"


def _interval_text(lower: float, upper: float, digits: int = 3) -> str:
    return f"[{lower:.{digits}f}, {upper:.{digits}f}]"


@dataclass(frozen=True)
class CrosscheckReport(Rendered):
    """Result of :func:`crosscheck`.

    Attributes
    ----------
    systems : tuple of SystemCrosscheck
        One entry per system, in data order.
    comparison : ComparisonCrosscheck or None
        The paired block when ``compare`` was given.
    k : tuple of int
        Requested ``k``.
    ci_prob : float
        Nominal coverage of every interval.
    n_resamples : int
        Bootstrap (and Monte Carlo sign-flip) resamples.
    seed : int or None
        Seed of the random paths (None when a generator or fresh entropy was used).
    cluster : str or None
        Task coordinate whose groups were resampled as clusters.
    """

    systems: tuple[SystemCrosscheck, ...]
    comparison: ComparisonCrosscheck | None
    k: tuple[int, ...]
    ci_prob: float
    n_resamples: int
    seed: int | None
    cluster: str | None

    _settings_fields = ("k", "ci_prob", "n_resamples", "seed", "cluster")

    def title(self) -> str:
        """E.g. ``Crosscheck of 3 systems (95% intervals, 10,000 resamples, seed 0)``."""
        return (
            f"Crosscheck of {len(self.systems)} systems ({self.ci_prob:.0%} intervals, "
            f"{self.n_resamples:,} resamples, seed {self.seed}); estimand: these tasks"
        )

    def to_text(self) -> str:
        """The readable report (:meth:`format_table`)."""
        return self.format_table()

    def _repr_html_(self) -> str:
        """Title, the per-system table and the paired block as HTML (escaped)."""
        parts = [f"<div><p><strong>{html.escape(self.title())}</strong></p>",
                 frame_html(self.to_frame())]
        if self.comparison is not None:
            comp = self.comparison
            parts.append(
                f"<p>compare {html.escape(comp.system)} - {html.escape(comp.baseline)}</p>"
            )
            parts.append(frame_html(self.comparison_frame()))
        return "".join(parts) + "</div>"

    def to_frame(self) -> pd.DataFrame:
        """One row per system: pass@1 two ways, intervals, pass@k, pass^k, rho, flags."""
        rows = []
        for s in self.systems:
            row: dict[str, Any] = {
                "system": s.system,
                "n_tasks": s.n_tasks,
                "n_trials": s.n_trials,
                "pass1_mean": s.pass1_mean,
                "pass1_pooled": s.pass1_pooled,
                "wilson_lower": s.wilson.lower,
                "wilson_upper": s.wilson.upper,
                "bootstrap_lower": s.task_bootstrap.lower,
                "bootstrap_upper": s.task_bootstrap.upper,
            }
            row.update({f"pass@{k}": value for k, value in s.pass_at_k.items()})
            row.update({f"pass^{k}": value for k, value in s.pass_hat_k.items()})
            corr = s.correlation
            row["rho"] = corr.rho if corr else float("nan")
            row["design_effect"] = corr.design_effect if corr else float("nan")
            row.update(
                flaky=s.flaky,
                saturated_share=s.saturated_share,
                saturated=s.saturated,
                small_suite=s.small_suite,
            )
            rows.append(row)
        return pd.DataFrame(rows)

    def comparison_frame(self) -> pd.DataFrame:
        """The paired block as a one-row frame (empty when no comparison was asked)."""
        comp = self.comparison
        if comp is None:
            return pd.DataFrame()
        row = {
            "baseline": comp.baseline,
            "system": comp.system,
            "n_tasks": comp.n_tasks,
            "difference": comp.difference,
            "lower": comp.interval.lower,
            "upper": comp.interval.upper,
            "sign_flip_p": comp.sign_flip.p_value,
            "sign_flip_method": comp.sign_flip.method,
            "only_baseline": comp.outcomes.only_a,
            "only_system": comp.outcomes.only_b,
            "mcnemar_p": comp.mcnemar.p_value,
            "verdict": comp.verdict,
            "mde": comp.mde.effect if comp.mde.effect is not None else float("nan"),
            "n_dropped": len(comp.dropped),
        }
        if comp.non_inferiority is not None:
            row.update(
                margin=comp.non_inferiority.margin,
                non_inferiority_p=comp.non_inferiority.p_value,
                non_inferior=comp.non_inferiority.non_inferior,
            )
        return pd.DataFrame([row])

    def to_dict(self) -> dict[str, Any]:
        """Nested plain-Python dict (``json.dumps``-able; NaN becomes None): ``settings``,
        ``systems``, ``comparison``, and the rendered ``result``, ``title`` and ``records``
        (the rows of :meth:`to_frame`)."""
        systems = []
        for s in self.systems:
            corr = s.correlation
            systems.append(
                {
                    "system": s.system,
                    "n_tasks": s.n_tasks,
                    "n_trials": s.n_trials,
                    "min_trials": s.min_trials,
                    "pass1_mean": s.pass1_mean,
                    "pass1_pooled": s.pass1_pooled,
                    "wilson": {"lower": s.wilson.lower, "upper": s.wilson.upper},
                    "task_bootstrap": {
                        "lower": s.task_bootstrap.lower,
                        "upper": s.task_bootstrap.upper,
                        "unit": s.task_bootstrap.unit,
                    },
                    "pass_at_k": dict(s.pass_at_k),
                    "pass_hat_k": dict(s.pass_hat_k),
                    "correlation": None if corr is None else corr.__dict__,
                    "flags": {
                        "flaky": s.flaky,
                        "saturated_share": s.saturated_share,
                        "saturated": s.saturated,
                        "small_suite": s.small_suite,
                    },
                    "notes": s.notes,
                }
            )
        out: dict[str, Any] = {
            "settings": {
                "k": self.k,
                "ci_prob": self.ci_prob,
                "n_resamples": self.n_resamples,
                "seed": self.seed,
                "cluster": self.cluster,
                "estimand": "tasks (pass@1 is the task average; bootstrap resamples tasks)",
            },
            "systems": systems,
            "comparison": None,
        }
        comp = self.comparison
        if comp is not None:
            out["comparison"] = {
                "baseline": comp.baseline,
                "system": comp.system,
                "n_tasks": comp.n_tasks,
                "difference": comp.difference,
                "interval": {"lower": comp.interval.lower, "upper": comp.interval.upper},
                "sign_flip": comp.sign_flip.__dict__,
                "outcomes": comp.outcomes.__dict__,
                "mcnemar_p": comp.mcnemar.p_value,
                "verdict": comp.verdict,
                "mde": {"effect": comp.mde.effect, "message": comp.mde.message},
                "non_inferiority": None
                if comp.non_inferiority is None
                else comp.non_inferiority.__dict__,
                "dropped": comp.dropped,
            }
        rendered = super().to_dict()
        out.update(result=rendered["result"], title=rendered["title"], records=rendered["records"])
        return jsonable(out)

    def format_table(self) -> str:
        """Readable plain-text report for a terminal."""
        pct = f"{self.ci_prob:.0%}"
        unit = f"clusters of tasks by {self.cluster!r}" if self.cluster else "tasks"
        lines = [
            f"evalbayes crosscheck: {len(self.systems)} "
            f"system{'' if len(self.systems) == 1 else 's'}; {pct} intervals, "
            f"{self.n_resamples:,} resamples, seed {self.seed}",
            f"pass@1 = task average (pooled = share of all trials); bootstrap resamples {unit}",
            "",
        ]
        shown = {s.system: display_label(s.system, TEXT_LABEL_WIDTH) for s in self.systems}
        width = max(6, *(len(label) for label in shown.values()))
        header = (
            f"{'system':<{width}}  {'tasks':>5}  {'trials':>7}  {'pass@1':>6}  {'pooled':>6}  "
            f"{'Wilson (pooled)':<16}  {'task bootstrap':<16}  {'rho':>5}  {'deff':>5}"
        )
        lines += [header, "-" * len(header)]
        for s in self.systems:
            corr = s.correlation
            lines.append(
                f"{shown[s.system]:<{width}}  {s.n_tasks:>5}  {s.n_trials:>7}  "
                f"{s.pass1_mean:>6.3f}  {s.pass1_pooled:>6.3f}  "
                f"{_interval_text(float(s.wilson.lower), float(s.wilson.upper)):<16}  "
                f"{_interval_text(s.task_bootstrap.lower, s.task_bootstrap.upper):<16}  "
                f"{_fmt(corr.rho if corr else None, 2):>5}  "
                f"{_fmt(corr.design_effect if corr else None, 1):>5}"
            )
        for title, attr in (("pass@k", "pass_at_k"), ("pass^k", "pass_hat_k")):
            lines += ["", f"{title} (unbiased, task average)"]
            head = f"{'system':<{width}}" + "".join(f"  {'k=' + str(k):>6}" for k in self.k)
            lines.append(head)
            for s in self.systems:
                values = getattr(s, attr)
                lines.append(
                    f"{shown[s.system]:<{width}}"
                    + "".join(f"  {_fmt(values[k]):>6}" for k in self.k)
                )
        lines += ["", "flags"]
        unflagged = 0
        # a note every system shares is said once, not once per system
        common = [n for n in self.systems[0].notes if all(n in s.notes for s in self.systems)]
        if len(self.systems) > 1:
            lines += [f"  every system: {note}" for note in common]
        else:
            common = []
        for s in self.systems:
            # flaky = 0 < c < n needs n > 1: with one trial per task it cannot happen
            flags = [f"{s.flaky} flaky tasks (0 < c < n)"] if s.n_trials > s.n_tasks else []
            if s.saturated:
                flags.append(
                    f"saturated: {s.saturated_share:.0%} of tasks pass every trial; add harder "
                    "tasks"
                )
            if s.small_suite:
                flags.append(
                    f"small suite: {s.n_tasks} tasks < {SMALL_SUITE}; only large changes show"
                )
            notes = [n for n in s.notes if n not in common]
            if not flags and not notes:
                unflagged += 1
                continue
            lines.append(f"  {shown[s.system]}: " + ("; ".join(flags) or "-"))
            lines += [f"    note: {note}" for note in notes]
        if unflagged:
            who = ("every system" if unflagged == len(self.systems) else
                   f"{unflagged} other system{'s' if unflagged > 1 else ''}")
            lines.append(f"  {who}: nothing else to flag (one trial per task: no task can be "
                         "flaky)")
        comp = self.comparison
        if comp is not None:
            lines += self._comparison_lines(comp, pct)
        return "\n".join(lines)

    @staticmethod
    def _comparison_lines(comp: ComparisonCrosscheck, pct: str) -> list[str]:
        flip = comp.sign_flip
        mde = comp.mde.message if comp.mde.effect is None else f"{comp.mde.effect:.3f}"
        lines = [
            "",
            f"compare {comp.system} - {comp.baseline} (paired on {comp.n_tasks} tasks)",
            f"  difference      {comp.difference:+.3f}  {pct} paired bootstrap "
            f"[{comp.interval.lower:+.3f}, {comp.interval.upper:+.3f}]",
            f"  sign-flip p     {flip.p_value:.4g} ({flip.method}, "
            f"{flip.n_assignments:,} assignments)",
            f"  McNemar p       {comp.mcnemar.p_value:.4g} (majority outcomes: only "
            f"{comp.baseline} {comp.outcomes.only_a}, only {comp.system} {comp.outcomes.only_b})",
            f"  verdict         {comp.verdict}",
            f"  MDE             {mde} (exact McNemar power at {comp.n_tasks} tasks, "
            f"{comp.mde.discordant_rate:.0%} of them changed)",
        ]
        ni = comp.non_inferiority
        if ni is not None:
            status = "non-inferior" if ni.non_inferior else "not shown non-inferior"
            lines.append(
                f"  margin {ni.margin:g}    {status} (lower {ni.lower:+.3f} vs -{ni.margin:g}, "
                f"one-sided p {ni.p_value:.4g} vs {ni.alpha:g})"
            )
        dropped = ", ".join(comp.dropped[:5]) + (" ..." if len(comp.dropped) > 5 else "")
        lines.append(f"  dropped tasks   {len(comp.dropped)}{': ' + dropped if dropped else ''}")
        return lines
