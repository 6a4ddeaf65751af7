"""Section "Comparisons": is B better than A? The Bayesian and the frequentist verdicts side
by side, with the minimum detectable effect at this size.

Bayesian (joint posterior draws, so paired wherever the model shares information; pass@1):
``P(B > A)``, the posterior of ``B - A`` with its interval, ``P(|B - A| < rope)`` and the
verdict rule of :func:`bayes_verdict`. Frequentist (the paired analysis of Miller 2024 and
:func:`evalbayes.frequentist.crosscheck.crosscheck`, with the same seed and resamples, so
the numbers are identical): paired bootstrap interval of the mean per-task difference, two-sided
sign-flip test, exact McNemar test on majority outcomes, Holm's adjustment of the sign-flip p-values
across the pairs shown (Holm 1979), and the minimum detectable effects: the z-based
``(z_{1-alpha/2} + z_{1-beta}) sd_d / sqrt(N)`` of the paired rates (Miller 2024) and the one
from the exact power of McNemar's test (McNemar 1947).

References
----------
Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
evaluations. arXiv:2411.00640.
Fisher, R. A. (1935). *The Design of Experiments*. Oliver and Boyd (the sign-flip test).
McNemar, Q. (1947). Note on the sampling error of the difference between correlated
proportions or percentages. *Psychometrika* 12(2), 153-157.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian
Journal of Statistics* 6(2), 65-70.
Kruschke, J. K. (2018). Rejecting or accepting parameter values in Bayesian estimation.
*Advances in Methods and Practices in Psychological Science* 1(2), 270-280 (the ROPE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.names import default_estimand
from evalbayes.frequentist import (
    McNemarMDE,
    holm,
    mcnemar,
    mcnemar_mde,
    minimum_detectable_effect,
    paired_comparison,
    paired_outcomes,
    paired_verdict,
)
from evalbayes.plots import plot_comparison, plot_superiority_matrix
from evalbayes.report._context import N_RESAMPLES, ReportContext
from evalbayes.report._document import Block, Callout, Figure, Section, Strong, Table, paragraph
from evalbayes.report._figures import draw_png, new_figure, report_style
from evalbayes.report._format import fmt_p, fmt_signed, fmt_signed_interval
from evalbayes.results._comparison import Comparison, shared_task_note

__all__ = [
    "ALL_PAIRS_MAX",
    "MATRIX_MAX",
    "VERDICT_PROB",
    "PairResult",
    "bayes_verdict",
    "compare_pairs",
    "pairs_section",
    "select_pairs",
]

ALL_PAIRS_MAX = 8  # up to this many systems every pair is compared; above, each vs the best
MATRIX_MAX = 150  # the P(B > A) matrix shows at most this many systems (cell text to 25)
MATRIX_ANNOTATE = 25
VERDICT_PROB = 0.95
ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class PairResult:
    """Bayesian and frequentist comparison of system B with baseline A (pass@1, B - A)."""

    system: str
    baseline: str
    n_tasks: int
    # Bayesian, "these tasks"
    diff_mean: float
    diff_lower: float
    diff_upper: float
    p_superior: float
    p_rope: float
    p_beyond_rope: float
    bayes_verdict: str
    # Bayesian, "tasks like these" (NaN, and verdict "n/a", when the model has no population)
    p_superior_population: float
    diff_population_mean: float
    diff_population_lower: float
    diff_population_upper: float
    p_rope_population: float
    p_beyond_rope_population: float
    bayes_verdict_population: str
    # frequentist, paired on shared tasks
    difference: float
    lower: float
    upper: float
    sign_flip_p: float
    sign_flip_method: str
    only_baseline: int
    only_system: int
    mcnemar_p: float
    holm_p: float
    verdict: str
    holm_verdict: str
    mde_paired: float | None
    mde_mcnemar: McNemarMDE
    dropped: int


def bayes_verdict(p_superior: float, p_rope: float, p_beyond_rope: float, rope: float) -> str:
    """The report's reading of the posterior of ``B - A`` (thresholds 0.95).

    ``"B better by more than the rope"`` when ``P(B - A > rope) >= 0.95``; ``"practically
    equivalent"`` when ``P(|B - A| < rope) >= 0.95``; ``"B better"`` when
    ``P(B > A) >= 0.95``; ``"A better"`` when ``P(B > A) <= 0.05``; else ``"uncertain"``.
    """
    if p_beyond_rope >= VERDICT_PROB:
        return f"B better by more than {rope:g}"
    if p_rope >= VERDICT_PROB:
        return f"practically equivalent (|B - A| < {rope:g})"
    if p_superior >= VERDICT_PROB:
        return "B better"
    if p_superior <= 1.0 - VERDICT_PROB:
        return "A better"
    return "uncertain"


def select_pairs(ctx: ReportContext) -> list[tuple[str, str]]:
    """``(B, A)`` pairs: every pair with B the higher posterior mean when there are at most
    :data:`ALL_PAIRS_MAX` systems; otherwise every system B against the best one A."""
    ranking = ctx.ranking()
    if len(ranking) <= ALL_PAIRS_MAX:
        return [(ranking[i], ranking[j]) for i in range(len(ranking))
                for j in range(i + 1, len(ranking))]  # fmt: skip
    return [(s, ranking[0]) for s in ranking[1:]]


def _z_mde(differences: np.ndarray) -> float | None:
    if differences.size < 2:
        return None
    sd = float(np.std(differences, ddof=1))
    if not sd > 0:
        return None
    return minimum_detectable_effect(sd / math.sqrt(differences.size), ALPHA, POWER)


def compare_pairs(ctx: ReportContext, pairs: list[tuple[str, str]]) -> list[PairResult]:
    """Both verdicts for every ``(B, A)`` pair, Holm-adjusted across the pairs."""
    if not pairs:
        return []
    tasks = ctx.draws("pass@k", "tasks").sel(k=1.0)
    population = ctx.curve("pass@k", "population")
    population = None if population is None else population.sel(k=1.0)
    partial: list[dict[str, Any]] = []
    for b, a in pairs:
        diff = (tasks.sel(system=b) - tasks.sel(system=a)).values.ravel()
        lower, upper = np.quantile(diff, [(1 - ctx.ci_prob) / 2, (1 + ctx.ci_prob) / 2])
        p_sup = float(np.mean(diff > 0))
        p_rope = float(np.mean(np.abs(diff) < ctx.rope))
        p_beyond = float(np.mean(diff > ctx.rope))
        if population is not None:
            diff_pop = (population.sel(system=b) - population.sel(system=a)).values.ravel()
            pop = (
                float(np.mean(diff_pop > 0)),
                float(diff_pop.mean()),
                *np.quantile(diff_pop, [(1 - ctx.ci_prob) / 2, (1 + ctx.ci_prob) / 2]),
                float(np.mean(np.abs(diff_pop) < ctx.rope)),
                float(np.mean(diff_pop > ctx.rope)),
            )
            verdict_pop = bayes_verdict(pop[0], pop[4], pop[5], ctx.rope)
        else:
            pop, verdict_pop = (np.nan,) * 6, "n/a"
        paired = ctx.data.paired(a, b)
        comp = paired_comparison(
            paired.rates_a,
            paired.rates_b,
            n_resamples=N_RESAMPLES,
            ci_prob=ctx.ci_prob,
            alpha=ALPHA,
            seed=ctx.seed,
        )
        outcomes = paired_outcomes(paired.n_a, paired.c_a, paired.n_b, paired.c_b)
        n_tasks = len(paired.tasks)
        partial.append(
            dict(
                system=b,
                baseline=a,
                n_tasks=n_tasks,
                diff_mean=float(diff.mean()),
                diff_lower=float(lower),
                diff_upper=float(upper),
                p_superior=p_sup,
                p_rope=p_rope,
                p_beyond_rope=p_beyond,
                bayes_verdict=bayes_verdict(p_sup, p_rope, p_beyond, ctx.rope),
                p_superior_population=float(pop[0]),
                diff_population_mean=float(pop[1]),
                diff_population_lower=float(pop[2]),
                diff_population_upper=float(pop[3]),
                p_rope_population=float(pop[4]),
                p_beyond_rope_population=float(pop[5]),
                bayes_verdict_population=verdict_pop,
                difference=comp.difference,
                lower=comp.interval.lower,
                upper=comp.interval.upper,
                sign_flip_p=comp.sign_flip.p_value,
                sign_flip_method=comp.sign_flip.method,
                only_baseline=outcomes.only_a,
                only_system=outcomes.only_b,
                mcnemar_p=mcnemar(outcomes.only_a, outcomes.only_b).p_value,
                verdict=comp.verdict,
                mde_paired=_z_mde(paired.rates_b - paired.rates_a),
                mde_mcnemar=mcnemar_mde(
                    n_tasks, (outcomes.only_a + outcomes.only_b) / n_tasks, ALPHA, POWER
                ),
                dropped=len(paired.dropped),
            )
        )
    adjusted = holm([row["sign_flip_p"] for row in partial], ALPHA).adjusted
    results = []
    for row, p_holm in zip(partial, adjusted, strict=True):
        results.append(
            PairResult(
                **row,
                holm_p=float(p_holm),
                holm_verdict=paired_verdict(row["lower"], row["upper"], float(p_holm), ALPHA),
            )
        )
    return results


def _mde_text(mde: float | None) -> str:
    return "-" if mde is None else f"{mde:.3f}"


def _population_first(ctx: ReportContext) -> bool:
    """Whether the main table's Bayesian columns are the population's (the default estimand of
    :func:`~evalbayes.results.compare` where the model has one)."""
    return default_estimand(ctx.estimands) == "population"


def _bayes_main(r: PairResult, population: bool) -> tuple[float, float, float, float, float,
                                                          str]:
    """Mean, interval, P(B > A), P(ROPE) and verdict of the main table's estimand."""
    if population:
        return (r.diff_population_mean, r.diff_population_lower, r.diff_population_upper,
                r.p_superior_population, r.p_rope_population, r.bayes_verdict_population)
    return r.diff_mean, r.diff_lower, r.diff_upper, r.p_superior, r.p_rope, r.bayes_verdict


def _main_table(ctx: ReportContext, results: list[PairResult]) -> Table:
    pct = f"{ctx.ci_prob:.0%}"
    population = _population_first(ctx)
    rows = [
        [
            r.system,
            r.baseline,
            f"{fmt_signed(main[0])} {fmt_signed_interval(main[1], main[2])}",
            fmt_p(main[3]),
            fmt_p(main[4]),
            main[5],
            f"{fmt_signed(r.difference)} {fmt_signed_interval(r.lower, r.upper)}",
            fmt_p(r.sign_flip_p),
            fmt_p(r.holm_p),
            fmt_p(r.mcnemar_p),
            r.holm_verdict,
            _mde_text(r.mde_paired),
        ]
        for r in results
        for main in [_bayes_main(r, population)]
    ]
    return Table.build(
        "pairs",
        [
            "B", "A",
            f"Bayes: B - A [{pct}]", "P(B > A)", f"P(|B - A| < {ctx.rope:g})", "Bayes verdict",
            f"paired B - A [{pct} bootstrap]", "sign-flip p", "Holm p", "McNemar p",
            "frequentist verdict (Holm)", "MDE (80% power)",
        ],
        rows,
        caption=("pass@1, B - A: Bayesian verdict on "
                 + ("tasks like these (left)" if population else "these tasks (left)")
                 + ", frequentist on these tasks (right)"),
        numeric=[False, False, True, True, True, False, True, True, True, True, False, True],
    )  # fmt: skip


def _bayes_table(ctx: ReportContext, results: list[PairResult]) -> Table:
    pct = f"{ctx.ci_prob:.0%}"
    rows = [
        [
            r.system,
            r.baseline,
            fmt_p(r.p_superior),
            fmt_p(r.p_beyond_rope),
            f"{fmt_signed(r.diff_mean)} {fmt_signed_interval(r.diff_lower, r.diff_upper)}",
            fmt_p(r.p_superior_population),
            f"{fmt_signed(r.diff_population_mean)} "
            f"{fmt_signed_interval(r.diff_population_lower, r.diff_population_upper)}"
            if math.isfinite(r.p_superior_population) else "n/a",
        ]
        for r in results
    ]
    return Table.build(
        "pairs-bayes",
        [
            "B", "A", "P(B > A): these tasks", f"P(B - A > {ctx.rope:g}): these tasks",
            f"B - A: these tasks [{pct}]", "P(B > A): tasks like these",
            f"B - A: tasks like these [{pct}]",
        ],
        rows,
        caption="Posterior comparisons for both estimands (pass@1)",
        numeric=[False, False, True, True, True, True, True],
    )  # fmt: skip


def _frequentist_table(results: list[PairResult]) -> Table:
    rows = [
        [
            r.system,
            r.baseline,
            str(r.n_tasks),
            f"{fmt_p(r.sign_flip_p)} ({r.sign_flip_method})",
            r.verdict,
            f"{r.only_baseline} / {r.only_system}",
            r.mde_mcnemar.message.removeprefix("MDE "),
            str(r.dropped),
        ]
        for r in results
    ]
    return Table.build(
        "pairs-frequentist",
        [
            "B", "A", "shared tasks", "sign-flip p (method)", "verdict before Holm",
            "only A / only B passed (majority)", "McNemar MDE (80% power)", "tasks dropped",
        ],
        rows,
        caption="Frequentist details: paired tasks, McNemar's counts and its detectable effect",
        numeric=[False, False, True, True, False, True, True, True],
    )  # fmt: skip


def _by_k_table(ctx: ReportContext, pairs: list[tuple[str, str]]) -> Table:
    # P(B > A) = the share of joint draws with f_B - f_A > 0, for the listed pairs only (a
    # Comparison of every pair, intervals included, cost 26 CPU-s at 123 systems)
    draws = ctx.draws("pass@k", "tasks").sel(k=[float(k) for k in ctx.ks])
    draws = draws.transpose("chain", "draw", "system", "k")
    values = draws.values.reshape(-1, *draws.shape[2:])  # (draw, system, k)
    index = {str(s): i for i, s in enumerate(draws["system"].values)}
    rows = []
    for b, a in pairs:
        above = np.count_nonzero(values[:, index[b]] - values[:, index[a]] > 0, axis=0)
        rows.append([b, a, *(fmt_p(float(v)) for v in above / values.shape[0])])
    return Table.build(
        "p-superior-by-k",
        ["B", "A", *(f"k={k}" for k in ctx.ks)],
        rows,
        caption="P(B > A) for pass@k on these tasks, at every k of the plots",
        numeric=[False, False] + [True] * len(ctx.ks),
    )


def _matrix_figure(ctx: ReportContext) -> Figure:
    chosen = ctx.ranking()[:MATRIX_MAX]
    estimands = [e for e in ("tasks", "population") if ctx.curve("pass@k", e) is not None]
    n = len(chosen)
    size = 1.6 + 0.7 * n if n <= MATRIX_ANNOTATE else min(4.0 + 0.09 * n, 14.0)
    with report_style():
        figure, axes = new_figure(size * len(estimands) + 1.0, size, 1, len(estimands))
        for ax, estimand in zip(axes[0], estimands, strict=True):
            comparison = Comparison.from_draws(
                ctx.draws("pass@k", estimand).sel(k=[1.0]), rope=ctx.rope,
                ci_prob=ctx.ci_prob, systems=chosen,
            )  # fmt: skip
            plot_superiority_matrix(comparison, ax=ax)
        png = draw_png(figure)
    return Figure(
        name="superiority-matrix",
        png=png,
        alt="matrix of posterior probabilities that the row system beats the column system",
        caption=(
            "P(row > column) for pass@1; left: these tasks, right: tasks like these. Systems "
            "in order of posterior mean" + (f" (the top {MATRIX_MAX})" if len(ctx.systems)
                                            > MATRIX_MAX else "") + "."
        ),
    )


def _forest_figure(ctx: ReportContext) -> Figure:
    ranking = ctx.ranking()
    many = len(ranking) > ALL_PAIRS_MAX
    # plot_comparison draws "later minus earlier": worst first gives better minus worse
    comparison = Comparison.from_draws(
        ctx.draws("pass@k", "tasks").sel(k=[1.0]), rope=ctx.rope, ci_prob=ctx.ci_prob,
        systems=ranking if many else ranking[::-1],
    )  # fmt: skip
    n_pairs = len(ranking) - 1 if many else len(ranking) * (len(ranking) - 1) // 2
    with report_style():
        figure, axes = new_figure(7.5, 1.4 + 0.42 * n_pairs)
        plot_comparison(comparison, baseline=ranking[0] if many else None, ax=axes[0, 0])
        png = draw_png(figure)
    return Figure(
        name="comparison",
        png=png,
        alt="posterior mean and interval of each pairwise difference of pass@1",
        caption=(
            "B - A for pass@1 on these tasks: posterior mean, "
            f"{ctx.ci_prob:.0%} interval, shaded ROPE ±{ctx.rope:g}"
            + ("; every system against the best." if many else ".")
        ),
    )


def _direction(result: PairResult, population: bool) -> tuple[str | None, str | None]:
    """Which system each verdict favours: ("B" | "A" | None) for Bayes (the main table's
    estimand) and frequentist."""
    verdict = _bayes_main(result, population)[5]
    bayes = (
        "B" if verdict.startswith("B better")
        else "A" if verdict == "A better" else None
    )  # fmt: skip
    freq = {"better": "B", "worse": "A"}.get(result.holm_verdict)
    return bayes, freq


def _few_tasks_text(ctx: ReportContext, population: bool) -> str:
    """"The comparisons rest on N shared tasks" and, below 30, why that widens them."""
    lines = [line.strip() for line in shared_task_note(
        ctx.posterior, list(ctx.systems), "population" if population else "tasks")]
    text = "; ".join(lines).replace("rests on", "rest on", 1)
    return f"The comparisons {text}." if text else ""


def pairs_section(ctx: ReportContext) -> Section:
    """The comparison section (a note only when there is a single system)."""
    if len(ctx.systems) < 2:
        return Section(
            "comparisons", "Comparisons",
            (paragraph("One system: nothing to compare."),),
        )  # fmt: skip
    pairs = select_pairs(ctx)
    results = compare_pairs(ctx, pairs)
    population = _population_first(ctx)
    blocks: list[Block] = [
        paragraph(
            "Each pair is compared on pass@1, B - A, with B the system of higher posterior "
            "mean" if len(ctx.systems) <= ALL_PAIRS_MAX else
            f"With more than {ALL_PAIRS_MAX} systems, each system B is compared with the "
            f"best one, {ctx.ranking()[0]}, as A",
            ". ",
            Strong("Bayes"),
            ": P(B > A) from the joint posterior draws, the interval of B - A, "
            f"P(|B - A| < {ctx.rope:g}) (the region of practical equivalence), and the verdict "
            f"rule: B better by more than the rope when P(B - A > {ctx.rope:g}) >= "
            f"{VERDICT_PROB:g}, practically equivalent when P(|B - A| < {ctx.rope:g}) >= "
            f"{VERDICT_PROB:g}, B (or A) better when P(B > A) >= {VERDICT_PROB:g} (<= "
            f"{1 - VERDICT_PROB:.2g}), else uncertain. ",
            Strong("Frequentist"),
            f": the paired bootstrap interval ({N_RESAMPLES:,} resamples of tasks) and the "
            "two-sided sign-flip test of the per-task differences; the verdict is 'better' or "
            f"'worse' only when the interval excludes 0 and the Holm-adjusted p < {ALPHA:g} "
            f"across the {len(results)} pairs shown (Holm 1979). McNemar's exact "
            "test uses each task's majority outcome.",
        ),
        paragraph(
            "The Bayesian verdict is on ",
            Strong("tasks like these" if population else "these tasks"),
            (" (the population estimand: would B beat A on more tasks of this kind; the "
             "frequentist columns, like 'these tasks', are about the tasks run). "
             if population else ". "),
            _few_tasks_text(ctx, population),
        ),
        _main_table(ctx, results),
        paragraph(
            Strong("Minimum detectable effect. "),
            f"MDE (80% power) is the smallest true difference that a paired test at level "
            f"{ALPHA:g} finds 80 % of the time with this many tasks: (z_0.975 + z_0.8) × "
            "sd(per-task differences) / √N (Miller 2024). A difference below it "
            "that the test calls inconclusive is not evidence of no difference.",
        ),
        _matrix_figure(ctx),
        _forest_figure(ctx),
        _bayes_table(ctx, results),
        _frequentist_table(results),
        _by_k_table(ctx, pairs),
    ]
    disagree = [r for r in results if _direction(r, population)[0] != _direction(r, population)[1]]
    if disagree:
        names = "; ".join(f"{r.system} vs {r.baseline}" for r in disagree)
        blocks.insert(
            2,
            Callout(
                "note",
                "The two verdicts differ for: " + names,
                (
                    "The posterior of B - A uses the model (shared task population, partial "
                    "pooling), the frequentist tests use only the per-task differences and "
                    "correct for the number of pairs. Read the intervals, not only the labels.",
                ),
            ),
        )
    return Section("comparisons", "Comparisons", tuple(blocks))
