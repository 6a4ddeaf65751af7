"""Sections of the evaluation designs, each present only when the data or the fit has one.

* factorial (model x harness): variance components with intervals and shares, the rank
  flips with P(any flip), the interaction plot (:mod:`evalbayes.models.designs._factorial`;
  random-effects two-way design, Montgomery, *Design and Analysis of Experiments*, §13.3);
* training seeds (recipe -> run -> task -> trial): noise components and recipe differences
  with the training noise in the interval (:mod:`evalbayes.models.designs._training_seeds`; Gelman
  and Hill 2007, ch. 12-13);
* judge error: the judge's sensitivity / specificity and the true pass rate beside the
  judge's raw rate, with Rogan-Gladen (Rogan and Gladen 1978) and PPI++ (Angelopoulos, Duchi
  and Zrnic 2023) cross-checks from the gold counts (:mod:`evalbayes.models.designs._judge_error`).

A fit of another model on data that carry a design's coordinates (``model`` and ``harness``;
``recipe``; the gold counts) gets a short section saying which fit answers the design's
questions. Plain data get none of these sections.
"""

from __future__ import annotations

from itertools import combinations

import pandas as pd

from evalbayes.models.designs._factorial import FactorialModel, FactorialPosterior
from evalbayes.models.designs._judge_error import (
    GOLD_VARS,
    JudgeErrorPosterior,
    gold_accuracy,
    judge_crosscheck,
    true_pass_rate,
)
from evalbayes.models.designs._training_seeds import TrainingSeedsModel, TrainingSeedsPosterior
from evalbayes.plots import plot_interaction, plot_variance_components
from evalbayes.report._context import ReportContext
from evalbayes.report._document import Block, Callout, Code, Figure, Section, Table, paragraph
from evalbayes.report._figures import draw_png, new_figure, report_style
from evalbayes.report._format import fmt, fmt_interval, fmt_signed, fmt_signed_interval

__all__ = [
    "ALL_PAIRS_UP_TO",
    "FLIP_ROWS",
    "design_sections",
    "factorial_section",
    "judge_section",
    "recipe_pairs",
    "seeds_section",
]

FLIP_ROWS = 30  # rank-flip comparisons listed (most likely flips first)
ALL_PAIRS_UP_TO = 5  # recipes: every pair up to this many recipes, else the first vs each other
COMPONENT_LABEL = {
    "model": "model (between models)",
    "harness": "harness (between harnesses)",
    "interaction": "interaction (model x harness)",
    "task": "task (between tasks)",
    "cell": "cell (system x task residual)",
}
NOISE_LABEL = {
    "run": "run (training noise, seed to seed)",
    "task": "task (between tasks)",
    "cell": "cell (run x task residual)",
}


def _ci(ctx: ReportContext) -> str:
    return f"{ctx.ci_prob:.0%}"


# ---------------------------------------------------------------------------- factorial
def _components_table(components: pd.DataFrame, ci: str) -> Table:
    rows = [
        [COMPONENT_LABEL.get(str(name), str(name)), fmt(r["mean"]), fmt(r["median"]),
         fmt_interval(r["lower"], r["upper"]), fmt(r["var_mean"]), f"{r['share']:.1%}"]
        for name, r in components.iterrows()
    ]  # fmt: skip
    return Table.build(
        "variance-components",
        ["component", "sd (mean)", "sd (median)", f"sd {ci}", "variance (mean)", "share"],
        rows,
        caption="Variance components on the logit scale (share: posterior mean of each "
        "variance over their sum; the binomial trial noise is not a component)",
        numeric=[False, True, True, True, True, True],
    )


def _flips_table(flips: pd.DataFrame) -> Table:
    shown = flips.sort_values("p_flip", ascending=False, kind="stable").head(FLIP_ROWS)
    rows = [
        [str(r["model_a"]), str(r["model_b"]), str(r["harness_a"]), str(r["harness_b"]),
         fmt_signed(r["diff_a"], 2), fmt_signed(r["diff_b"], 2), fmt(r["p_flip"])]
        for _, r in shown.iterrows()
    ]  # fmt: skip
    how = (f"all {len(flips)} comparisons" if len(flips) <= FLIP_ROWS
           else f"the {FLIP_ROWS} most likely flips of {len(flips)} comparisons")
    return Table.build(
        "rank-flips",
        ["model A", "model B", "harness 1", "harness 2", "A - B under 1", "A - B under 2",
         "P(flip)"],
        rows,
        caption=f"Rank flips: does A beat B under one harness and lose under the other? ({how}, "
        "most likely first; differences are posterior means on the logit scale)",
        numeric=[False, False, False, False, True, True, True],
    )


def _factorial_blocks(ctx: ReportContext, posterior: FactorialPosterior) -> list[Block]:
    model = posterior.model
    assert isinstance(model, FactorialModel)
    factors = model.factors(posterior.data)
    ci = _ci(ctx)
    components = posterior.variance_components(ctx.ci_prob)
    flips, p_any = posterior.rank_flips()
    blocks: list[Block] = [
        paragraph(
            f"{posterior.label}: logit p = mu + alpha[model] + beta[harness] + "
            "gamma[model, harness] + b[task] + e[system, task]. "
            f"{len(factors.models)} models x {len(factors.harnesses)} harnesses, "
            f"{posterior.data.shape[0]} of {len(factors.models) * len(factors.harnesses)} "
            "combinations run. A large interaction share means the best harness depends on "
            "the model: compare harnesses model by model, not on average.",
        ),
        _components_table(components, ci),
    ]
    if len(flips):
        blocks += [
            Callout(
                "warning" if p_any >= 0.5 else "note",
                f"P(the ranking of the models differs between two harnesses) = {fmt(p_any)}",
                ("The probability that at least one pair of models swaps places between at "
                 "least two harnesses (population logits of each (model, harness), new tasks).",),
            ),
            _flips_table(flips),
        ]
    else:
        blocks.append(paragraph(
            "No two models were run under a common pair of harnesses, so no ranking can flip "
            "within the design."))  # fmt: skip
    with report_style():
        figure, axes = new_figure(12.0, 4.2, 1, 2)
        plot_interaction(posterior.harness_curves([1]).sel(k=1), ci_prob=ctx.ci_prob,
                         ax=axes[0, 0])
        plot_variance_components(components, ax=axes[0, 1])
        png = draw_png(figure)
    blocks.append(
        Figure(
            name="factorial",
            png=png,
            alt="interaction plot of models across harnesses and variance components",
            caption=(f"Left: pass@1 of a new task per (model, harness) with {ci} intervals; "
                     "crossing lines are rank flips. Right: the components' sd on the logit "
                     "scale (median and interval), share of the summed variances in brackets."),
        )
    )
    return blocks


def factorial_section(ctx: ReportContext) -> Section | None:
    """Variance components, rank flips and the interaction plot of a factorial fit; a pointer
    for data with ``model`` and ``harness`` system coordinates; None otherwise."""
    posterior = ctx.posterior
    title = "Model × harness (factorial)"
    if isinstance(posterior, FactorialPosterior):
        return Section("factorial", title, tuple(_factorial_blocks(ctx, posterior)))
    coords = ctx.data.system_coords
    if "model" in coords and "harness" in coords:
        return Section("factorial", title, (
            paragraph(
                "The systems name a model and a harness (system coordinates). How much of the "
                "spread is the model, the harness or their interaction, and whether the "
                "models' ranking flips between harnesses, needs the factorial fit: ",
                Code("evalbayes fit DATA --model factorial -o fit.nc"), " then ",
                Code("evalbayes report fit.nc"), ".",
            ),
        ))  # fmt: skip
    return None


# ---------------------------------------------------------------------------- training seeds
def recipe_pairs(recipes: list[str]) -> list[tuple[str, str]]:
    """(A, B) pairs reported: every pair up to :data:`ALL_PAIRS_UP_TO` recipes, else the first
    recipe (the baseline) against each other."""
    if len(recipes) <= ALL_PAIRS_UP_TO:
        return list(combinations(recipes, 2))
    return [(recipes[0], other) for other in recipes[1:]]


def _noise_table(noise: pd.DataFrame, ci: str) -> Table:
    rows = [[NOISE_LABEL.get(str(name), str(name)), fmt(r["mean"]),
             fmt_interval(r["lower"], r["upper"])] for name, r in noise.iterrows()]
    return Table.build(
        "noise-components",
        ["component", "sd (mean)", f"sd {ci}"],
        rows,
        caption="Noise components on the logit scale (the binomial trial noise comes on top)",
        numeric=[False, True, True],
    )


def _difference_rows(posterior: TrainingSeedsPosterior, pairs: list[tuple[str, str]], ci_prob: float
                     ) -> list[list[str]]:
    rows = []
    for a, b in pairs:
        diff = posterior.recipe_difference(a, b, ci_prob=ci_prob)
        for scale, r in diff.iterrows():
            rows.append([f"{b} - {a}", str(scale), fmt_signed(r["mean"]),
                         fmt_signed_interval(r["lower"], r["upper"]), fmt(r["p_b_better"])])
    return rows


def _seeds_blocks(ctx: ReportContext, posterior: TrainingSeedsPosterior) -> list[Block]:
    model = posterior.model
    assert isinstance(model, TrainingSeedsModel)
    idx, recipes = model.recipes(posterior.data)
    ci = _ci(ctx)
    runs = ", ".join(f"{name}: {int((idx == k).sum())}" for k, name in enumerate(recipes))
    blocks: list[Block] = [
        paragraph(
            f"{posterior.label}: logit p = m[recipe] + u[run] + b[task] + e[run, task]. "
            f"Runs per recipe: {runs}. A claim about a recipe is about the checkpoints it "
            "produces, so the run-to-run (training) noise is inside every interval below.",
        ),
        _noise_table(posterior.noise_components(ci_prob=ctx.ci_prob), ci),
    ]
    pairs = recipe_pairs(recipes)
    if pairs:
        how = ("every pair of recipes" if len(recipes) <= ALL_PAIRS_UP_TO
               else f"{recipes[0]} against each other recipe")
        blocks.append(Table.build(
            "recipe-differences",
            ["difference", "scale", "mean", ci, "P(B > A)"],
            _difference_rows(posterior, pairs, ctx.ci_prob),
            caption=f"Recipe differences B - A ({how}): logit of the recipe level, and pass "
            "rate of a new run on these tasks / on new tasks",
            numeric=[False, False, True, True, True],
        ))  # fmt: skip
        a, b = pairs[0]
        blocks.append(paragraph(
            "How many runs, tasks and trials a new experiment needs to settle the claim "
            "(assurance simulated from this fit): ",
            Code(f"evalbayes plan --fit FIT.nc --baseline {a} --candidate {b} --runs 2 4 8"),
            ".",
        ))  # fmt: skip
    return blocks


def seeds_section(ctx: ReportContext) -> Section | None:
    """Noise components and recipe differences of a training-seeds fit; a pointer for data
    with a ``recipe`` system coordinate; None otherwise."""
    posterior = ctx.posterior
    title = "Training seeds (recipe → run)"
    if isinstance(posterior, TrainingSeedsPosterior):
        return Section("training-seeds", title, tuple(_seeds_blocks(ctx, posterior)))
    if "recipe" in ctx.data.system_coords:
        return Section("training-seeds", title, (
            paragraph(
                "The systems name a training recipe (system coordinate recipe): they are "
                "training runs. A claim about a recipe must carry the run-to-run noise; it "
                "needs the training-seeds fit: ",
                Code("evalbayes fit DATA --model training-seeds -o fit.nc"), " then ",
                Code("evalbayes report fit.nc"), ".",
            ),
        ))  # fmt: skip
    return None


# ---------------------------------------------------------------------------- judge error
def _accuracy_table(posterior: JudgeErrorPosterior, ctx: ReportContext) -> Table:
    post = posterior.judge_accuracy(ci_prob=ctx.ci_prob)
    counted = gold_accuracy(posterior.data)
    sizes = {"sensitivity": counted["n_pos"], "specificity": counted["n_neg"]}
    rows = [
        [str(name), fmt(r["mean"]), fmt_interval(r["lower"], r["upper"]), fmt(counted[name]),
         f"{int(sizes[name]):,}"]
        for name, r in post.iterrows()
    ]  # fmt: skip
    return Table.build(
        "judge-accuracy",
        ["judge", "posterior mean", _ci(ctx), "gold count", "gold trials"],
        rows,
        caption="The judge's sensitivity P(judge pass | true pass) and specificity "
        "P(judge fail | true fail): posterior, and counted on the gold trials",
        numeric=[False, True, True, True, True],
    )


def _rates_table(posterior: JudgeErrorPosterior, ctx: ReportContext) -> Table:
    bayes = true_pass_rate(posterior, ci_prob=ctx.ci_prob)
    check = judge_crosscheck(posterior.data, ci_prob=ctx.ci_prob)
    rows = []
    for system in posterior.data.systems:
        b, f = bayes.loc[system], check.loc[system]
        rows.append([
            str(system), fmt(b["judge_rate"]), fmt(b["mean"]), fmt_interval(b["lower"], b["upper"]),
            fmt(f["rg"]), fmt_interval(f["rg_lower"], f["rg_upper"]),
            fmt(f["ppi"]), fmt_interval(f["ppi_lower"], f["ppi_upper"]), f"{int(f['n_gold']):,}",
        ])  # fmt: skip
    ci = _ci(ctx)
    return Table.build(
        "judge-pass-rates",
        ["system", "judge rate", "true rate", f"true {ci}", "Rogan-Gladen", f"RG {ci}",
         "PPI++", f"PPI++ {ci}", "gold trials"],
        rows,
        caption="Pass rate as the judge says, and corrected for its errors: the model's "
        "true pass@1 on these tasks beside the Rogan-Gladen correction and PPI++ "
        "(frequentist, per system; - where the gold subset cannot give one)",
        numeric=[False] + [True] * 8,
    )


def _judge_blocks(ctx: ReportContext, posterior: JudgeErrorPosterior) -> list[Block]:
    counted = gold_accuracy(posterior.data)
    n_gold = int(counted["n_pos"] + counted["n_neg"])
    blocks: list[Block] = [
        paragraph(
            f"{posterior.label}: the counts are the judge's verdicts; {n_gold:,} trials also "
            "carry a human label (the gold subset). The model learns the judge's sensitivity "
            "and specificity from the gold trials and corrects every system's pass rate: "
            "P(judge pass) = q1 p + (1 - q0)(1 - p). Elsewhere in this report the posterior "
            "columns are true rates, the frequentist columns count judge verdicts.",
        ),
        _accuracy_table(posterior, ctx),
        _rates_table(posterior, ctx),
        paragraph(
            "Rogan-Gladen divides out the judge's error rates counted on the gold subset "
            "(pooled over systems, delta-method interval); PPI++ combines each system's gold "
            "labels with the judge's verdicts on its other trials and is unbiased whatever "
            "the judge does. Both average over trials; the model's true rate averages over "
            "tasks (the same when every task has the same number of trials).",
        ),
    ]
    youden = counted["sensitivity"] + counted["specificity"] - 1
    if not youden > 0:
        blocks.insert(1, Callout(
            "warning",
            "The gold counts do not show a judge better than chance",
            ("Counted on the gold trials, sensitivity + specificity <= 1 (or the gold subset "
             "has no human pass or no human fail): Rogan-Gladen is undefined and the model "
             "leans on its prior that the judge beats chance. Label more trials.",),
        ))  # fmt: skip
    return blocks


def judge_section(ctx: ReportContext) -> Section | None:
    """Judge accuracy and corrected pass rates of a judge-error fit; a pointer for data with
    gold counts; None otherwise."""
    posterior = ctx.posterior
    title = "Judge error"
    if isinstance(posterior, JudgeErrorPosterior):
        return Section("judge-error", title, tuple(_judge_blocks(ctx, posterior)))
    if all(name in ctx.data.dataset for name in GOLD_VARS):
        return Section("judge-error", title, (
            paragraph(
                "The data carry human labels for a gold subset of the judged trials, but this "
                "fit treats the judge's verdicts as the truth. The judge's sensitivity and "
                "specificity and the corrected pass rates need the judge-error fit: ",
                Code("evalbayes fit DATA --model judge-error -o fit.nc"), " (or ",
                Code("--gold GOLD.csv"), " with counts that lack the gold columns), then ",
                Code("evalbayes report fit.nc"), ".",
            ),
        ))  # fmt: skip
    return None


def design_sections(ctx: ReportContext) -> tuple[Section, ...]:
    """The design sections that apply to this report (none for plain data)."""
    from evalbayes.report._formula import formula_section

    found = (factorial_section(ctx), seeds_section(ctx), judge_section(ctx),
             formula_section(ctx))
    return tuple(section for section in found if section is not None)
