"""``evalbayes crosscheck DATA``: frequentist estimates without any model (no PyMC)."""

from __future__ import annotations

import argparse
import json

from evalbayes.cli._common import (
    add_data_args,
    add_format_arg,
    add_seed_arg,
    ks,
    output_format,
    read_data,
)
from evalbayes.cli._output import check_output_path, emit, write_text
from evalbayes.cli._types import (
    MAX_K,
    MAX_RESAMPLES,
    count,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser)
    add_format_arg(parser)
    parser.add_argument("--k", type=count(1, MAX_K), nargs="+",
                        help="k values, integers (default: powers of two <= n)")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="paired block for B - A")
    parser.add_argument("--resamples", type=count(1, MAX_RESAMPLES), default=10_000,
                        help=f"bootstrap resamples (at most {MAX_RESAMPLES:,})")
    add_seed_arg(parser, 0)


def run(args: argparse.Namespace) -> int:
    from evalbayes.frequentist.crosscheck import crosscheck

    output = output_format(args)
    check_output_path(args.output, args)
    data = read_data(args)
    report = crosscheck(
        data,
        k=tuple(int(k) for k in ks(args.k, ())) or None,
        compare=tuple(args.compare) if args.compare else None,
        n_resamples=args.resamples,
        seed=args.seed,
    )
    if output == "json":
        write_text(json.dumps(report.to_dict(), indent=2) + "\n", args.output)
    elif output == "csv":
        emit(report.to_frame(), "csv", args.output)
    else:
        write_text(report.format_table() + "\n", args.output)
    return 0
