"""``evalbayes report DATA|FIT``: one self-contained HTML (or Markdown) report."""

from __future__ import annotations

import argparse

from evalbayes.cli._common import (
    OUTPUT_FORMATS,
    CLIError,
    add_data_args,
    add_seed_arg,
    output_format,
    positive_int,
    read_data,
    reader_options,
    warn,
)
from evalbayes.cli._designs import add_design_args, apply_designs, design_model, given_flags
from evalbayes.cli._output import check_fit, check_output_path, load_fit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser, name="source")
    parser.add_argument("--format", default=None, help=argparse.SUPPRESS)  # deprecated input
    parser.add_argument("-o", "--output", default="report.html", help="the report file")
    parser.add_argument("--md", action="store_true", help="write Markdown instead of HTML")
    parser.add_argument("--meta", default=None, help="TOML/JSON/text file: harness and protocol")
    parser.add_argument("--draws", type=positive_int, default=1000,
                        help="draws per chain when the report fits DATA")
    add_seed_arg(parser, 0)
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when the fit failed its convergence diagnostics")
    parser.add_argument("--model", default=None,
                        help="the model the report fits to DATA (default rate-grid for two or "
                        "more systems, beta-binomial for one; a design flag implies its model)")
    add_design_args(parser)


def run(args: argparse.Namespace) -> int:
    from evalbayes.report import write_report

    if args.format in OUTPUT_FORMATS:
        raise CLIError("report writes HTML (or Markdown with --md) and has no --format")
    if args.format is not None:  # the old meaning: an input format (deprecated)
        output_format(args)
    check_output_path(args.output)
    fit, model, code = None, None, 0
    if len(args.source) == 1 and args.source[0].endswith(".nc"):
        if args.where or reader_options(args) or args.input_format:
            raise CLIError("--where, --input-format and reader options apply to DATA, not a fit")
        if args.model or given_flags(args):
            raise CLIError("--model and the design flags apply to DATA; a fit has its model "
                           "and its data")
        fit = load_fit(args.source[0])
        code = check_fit(fit, args.strict)
        data = fit.data
    else:
        name = design_model(args, args.model)
        if name is not None:
            from evalbayes.models import get_model

            model = get_model(name)
        data = read_data(args, name="source")
        if model is not None:
            data = apply_designs(args, data, model)
    path = write_report(data, fit=fit, output=args.output, markdown=args.md, meta=args.meta,
                        draws=args.draws, seed=args.seed, model=model)
    warn(f"wrote {path}")
    return code
