"""``evalbayes pass-at-k FIT``: posterior pass@k / pass^k curves of a fit."""

from __future__ import annotations

import argparse

from evalbayes._core.names import ESTIMANDS, METRICS
from evalbayes.cli._common import (
    add_fit_arg,
    add_format_arg,
    ks,
    output_format,
)
from evalbayes.cli._output import check_fit, check_output_path, emit, load_fit
from evalbayes.cli._types import (
    k_value,
    probability,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_fit_arg(parser)
    add_format_arg(parser)
    parser.add_argument("--k", type=k_value, nargs="+", help="k values (default 1 2 4 ... 32)")
    parser.add_argument("--metric", choices=METRICS, default=METRICS[0])
    parser.add_argument("--estimand", choices=ESTIMANDS, default=ESTIMANDS[0])
    parser.add_argument("--ci-prob", type=probability, default=0.95, help="interval probability")


def run(args: argparse.Namespace) -> int:
    output = output_format(args)
    check_output_path(args.output, args)
    posterior = load_fit(args.fit)
    code = check_fit(posterior, args.strict)
    table = posterior.summary(
        k=ks(args.k, (1, 2, 4, 8, 16, 32)), metrics=(args.metric,),
        estimands=(args.estimand,), ci_prob=args.ci_prob,
    )  # fmt: skip
    title = f"{args.metric} ({args.estimand}) - {posterior.label}"
    emit(table, output, args.output, title=title)
    return code
