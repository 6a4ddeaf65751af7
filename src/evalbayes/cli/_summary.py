"""``evalbayes summary FIT``: per-system posterior summary of a fit (a c-of-n fit: pass@k and
pass^k; a graded-score fit: the mean score and ``P(score >= t)``)."""

from __future__ import annotations

import argparse

from evalbayes._core.names import METRICS
from evalbayes.cli._common import (
    add_fit_arg,
    add_format_arg,
    ks,
    output_format,
)
from evalbayes.cli._output import (
    check_fit,
    check_output_path,
    emit,
    fit_notes,
    is_score_fit,
    load_fit,
)
from evalbayes.cli._scores import add_threshold_arg, refuse_thresholds, summarize_scores
from evalbayes.cli._types import (
    k_value,
    probability,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_fit_arg(parser)
    add_format_arg(parser)
    parser.add_argument("--k", type=k_value, nargs="+", help="k values (default 1)")
    parser.add_argument("--ci-prob", type=probability, default=0.95, help="interval probability")
    add_threshold_arg(parser)


def run(args: argparse.Namespace) -> int:
    output = output_format(args)
    check_output_path(args.output, args)
    posterior = load_fit(args.fit, scores=True)
    code = check_fit(posterior, args.strict)
    if is_score_fit(posterior):
        summarize_scores(args, posterior, output)
        return code
    refuse_thresholds(args)
    k = ks(args.k, (1,))
    table = posterior.summary(k=k, metrics=METRICS, ci_prob=args.ci_prob)
    emit(table, output, args.output, title=f"{posterior.label}\n{posterior.data!r}",
         note=fit_notes(posterior, k))
    if output == "table":
        effects = getattr(posterior, "effects", None)
        if effects is not None:  # a formula fit: its coefficients and group sds
            emit(effects(ci_prob=args.ci_prob), output, None,
                 title="effects (logit scale; sd rows: spread of each group term; correlation "
                       "rows: of the terms of one (1 + x | g))")
        print(f"diagnostics: {_diagnostics_line(posterior)}")
    return code


def _diagnostics_line(posterior) -> str:
    if posterior.approximate:
        return f"none ({posterior.label}: intervals are approximate)"
    if not posterior.is_mcmc:
        return "none needed (exact posterior draws)"
    return str(posterior.diagnostics(warn=False))
