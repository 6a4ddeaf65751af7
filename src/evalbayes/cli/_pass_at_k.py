"""``evalbayes pass-at-k FIT``: posterior pass@k / pass^k curves of a fit, and g-pass@k (at
least m of k attempts succeed; Liu et al. 2024) with ``--metric g-pass@k --m M`` or ``--tau``."""

from __future__ import annotations

import argparse

from evalbayes._core.names import ESTIMANDS, METRICS
from evalbayes.cli._common import (
    add_fit_arg,
    add_format_arg,
    ks,
    output_format,
)
from evalbayes.cli._output import check_fit, check_output_path, emit, fit_notes, load_fit
from evalbayes.cli._types import (
    k_value,
    number,
    positive_int,
    probability,
)

G_PASS = "g-pass@k"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_fit_arg(parser)
    add_format_arg(parser)
    parser.add_argument("--k", type=k_value, nargs="+", help="k values (default 1 2 4 ... 32)")
    parser.add_argument("--metric", choices=(*METRICS, G_PASS), default=METRICS[0],
                        help="pass@k (at least one of k succeeds), pass^k (all k) or g-pass@k "
                        "(at least --m, or a share --tau, of k)")
    parser.add_argument("--m", type=positive_int,
                        help="g-pass@k: least number of the k that succeed")
    parser.add_argument("--tau", type=number(0, 1, open_low=True),
                        help="g-pass@k: least share of the k that succeed, m = ceil(tau k)")
    parser.add_argument("--estimand", choices=ESTIMANDS, default=ESTIMANDS[0])
    parser.add_argument("--ci-prob", type=probability, default=0.95, help="interval probability")


def run(args: argparse.Namespace) -> int:
    if (args.metric == G_PASS) != (args.m is not None or args.tau is not None):
        raise ValueError("--m and --tau go with --metric g-pass@k" if args.metric != G_PASS
                         else "--metric g-pass@k needs --m or --tau")
    output = output_format(args)
    check_output_path(args.output, args)
    posterior = load_fit(args.fit)
    code = check_fit(posterior, args.strict)
    k = ks(args.k, (1, 2, 4, 8, 16, 32))
    table = posterior.summary(
        k=k, metrics=(args.metric,),
        estimands=(args.estimand,), ci_prob=args.ci_prob, m=args.m, tau=args.tau,
    )  # fmt: skip
    title = f"{args.metric} ({args.estimand}) - {posterior.label}"
    emit(table, output, args.output, title=title, note=fit_notes(posterior, k))
    return code
