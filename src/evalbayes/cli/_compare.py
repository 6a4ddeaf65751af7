"""``evalbayes compare FIT [A B]``: P(B > A), B - A, rope and expected loss (a graded-score
fit: P(B > A) and B - A of the mean score and of each ``P(score >= t)``)."""

from __future__ import annotations

import argparse

from evalbayes._core.names import ESTIMANDS, METRICS
from evalbayes.cli._common import (
    CLIError,
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
    write_text,
)
from evalbayes.cli._scores import add_threshold_arg, compare_scores, refuse_thresholds
from evalbayes.cli._types import (
    k_value,
    non_negative,
    probability,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_fit_arg(parser)
    parser.add_argument("systems", nargs="*", metavar="SYSTEM", help="A B (default: all pairs)")
    add_format_arg(parser)
    parser.add_argument("--k", type=k_value, nargs="+", help="k values (default 1)")
    parser.add_argument("--metric", choices=METRICS, default=None,
                        help=f"c-of-n fits (default {METRICS[0]})")
    parser.add_argument("--estimand", choices=ESTIMANDS, default=None,
                        help="tasks (these tasks) or population (tasks like these; the "
                        "default where the fit's model has it)")
    parser.add_argument("--rope", type=non_negative, default=None,
                        help="region of practical equivalence (c-of-n fits; default 0.01)")
    parser.add_argument("--ci-prob", type=probability, default=0.95, help="interval probability")
    add_threshold_arg(parser)
    parser.add_argument("--by", metavar="VARIABLE", default=None,
                        help="formula fit: compare the levels of this system variable (e.g. "
                        "harness), each the mean of its systems; SYSTEM names levels")


def run(args: argparse.Namespace) -> int:
    from evalbayes.results._comparison import compare

    output = output_format(args)
    check_output_path(args.output, args)
    systems = list(args.systems) if args.systems else None
    if systems is not None and len(systems) != 2:
        raise CLIError("compare takes either no systems (all pairs) or exactly two: A B")
    posterior = load_fit(args.fit, scores=True)
    code = check_fit(posterior, args.strict)
    if is_score_fit(posterior):
        compare_scores(args, posterior, systems, output)
        return code
    refuse_thresholds(args)
    metric = args.metric or METRICS[0]
    rope = 0.01 if args.rope is None else args.rope
    if args.by is not None:
        if not hasattr(posterior, "compare_levels"):
            raise CLIError(f"--by compares levels of a formula's variable; this is a "
                           f"{posterior.model.name} fit (compare its systems without --by, "
                           "or fit --formula)")
        comparison = posterior.compare_levels(
            args.by, levels=systems, k=ks(args.k, (1,)), metric=metric,
            estimand=args.estimand, rope=rope, ci_prob=args.ci_prob)
    else:
        comparison = compare(
            posterior, metric=metric, k=ks(args.k, (1,)), estimand=args.estimand,
            rope=rope, ci_prob=args.ci_prob, systems=systems,
        )  # fmt: skip
    table = comparison.to_frame()
    unit = comparison.unit_dim
    if systems is not None:
        baseline, system = systems
        table = table[(table[unit] == system) & (table["baseline"] == baseline)]
    # a formula fit's note: what its estimands condition on and integrate (runs, tasks)
    note = fit_notes(posterior, ks(args.k, (1,))) if hasattr(posterior, "model_note") else None
    if output == "table":
        write_text(comparison.summary() + "\n", None)
    emit(table, output, args.output, note=note)
    return code
