"""The report section of a formula fit: what its estimands mean, and its effects.

A formula model (:mod:`evalbayes.models.formula`) conditions on some group terms and
integrates others (task-grouped terms for "tasks like these", noise terms such as runs for
both); the section states that in words (``FormulaPosterior.model_note``) and lists each
common coefficient (logit scale) and group sd with its interval (``FormulaPosterior.effects``;
the GLMM of Breslow and Clayton, *JASA* 88, 1993). Other fits get no section.
"""

from __future__ import annotations

from evalbayes.report._context import ReportContext
from evalbayes.report._document import Code, Section, Table, paragraph
from evalbayes.report._format import fmt, fmt_interval

__all__ = ["formula_section"]


def formula_section(ctx: ReportContext) -> Section | None:
    """Estimand note and effects table of a formula fit; None for any other fit."""
    posterior = ctx.posterior
    effects = getattr(posterior, "effects", None)
    model_note = getattr(posterior, "model_note", None)
    if effects is None or model_note is None:
        return None
    table = effects(ci_prob=ctx.ci_prob)
    ci = f"{ctx.ci_prob:.0%}"
    rows = [
        [str(r["kind"]), str(r["name"]), str(r["term_kind"]) or "-", fmt(r["mean"]),
         fmt_interval(r["lower"], r["upper"]),
         "-" if r["kind"] == "sd" else f"{r['p_positive']:.3f}"]
        for _, r in table.iterrows()
    ]  # fmt: skip
    formula = str(getattr(posterior.model, "formula", ""))
    return Section("formula", "Formula model: estimands and effects", (
        paragraph("Formula ", Code(formula), ". ", model_note(max(ctx.ks))),
        Table.build(
            "formula-effects",
            ["kind", "name", "term kind", "posterior mean", ci, "P(> 0)"],
            rows,
            caption="Common coefficients (logit scale; categorical levels against the first "
            "level), the sd of each group term (its spread on the logit scale; term kind: "
            "task = drawn anew for tasks like these, noise = drawn anew in both estimands, "
            "system = conditioned on in both) and the correlation of the terms of one "
            "(1 + x | g)",
            numeric=[False, False, False, True, True, True],
        ),
        paragraph("Levels of a system variable (two harnesses, two agents) are compared with ",
                  Code("evalbayes compare FIT A B --by VARIABLE"), "."),
    ))  # fmt: skip
