"""``evalbayes report DATA|FIT``: one self-contained HTML (or Markdown) report."""

from __future__ import annotations

import argparse

from evalbayes._core.names import SAMPLER_DEFAULTS
from evalbayes.cli._common import (
    CLIError,
    add_data_args,
    check_no_output_format,
    read_data,
    reader_options,
    refuse_output_format,
    warn,
)
from evalbayes.cli._designs import (
    add_design_args,
    apply_designs,
    design_model,
    formula_settings,
    given_flags,
)
from evalbayes.cli._output import check_fit, check_output_path, load_fit
from evalbayes.cli._progress import HEARTBEAT_S, progress
from evalbayes.cli._sampler import add_sampler_args, model_help, sampler_options
from evalbayes.cli._scores import is_score_model


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser, name="source")
    refuse_output_format(parser, "report writes HTML (or Markdown with --md)")
    parser.add_argument("-o", "--output", default="report.html", help="the report file")
    parser.add_argument("--md", action="store_true", help="write Markdown instead of HTML")
    parser.add_argument("--meta", default=None, help="TOML/JSON/text file: harness and protocol")
    add_sampler_args(parser)  # the fit of DATA; --seed also seeds the report's bootstraps
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when the fit failed its convergence diagnostics")
    parser.add_argument("--model", default=None,
                        help=model_help("the model the report fits to DATA; "))
    add_design_args(parser)


def run(args: argparse.Namespace) -> int:
    check_no_output_format(args)
    from evalbayes.report._build import FIT_SETTINGS, write_report

    check_output_path(args.output, args, create=True)
    if args.md:
        from evalbayes.report._build import markdown_path

        check_output_path(markdown_path(args.output), args, create=True)
    code = 0
    if len(args.source) == 1 and args.source[0].endswith(".nc"):
        if args.where or reader_options(args) or args.input_format:
            raise CLIError("--where, --input-format and reader options apply to DATA, not a fit")
        if args.model or given_flags(args):
            raise CLIError("--model and the design flags apply to DATA; a fit has its model "
                           "and its data")
        given = [f"--{key.replace('_', '-')}" for key in ("draws", *FIT_SETTINGS)
                 if getattr(args, key) is not None]
        if given:
            raise CLIError(f"{', '.join(given)} apply to fitting DATA; a fit has its sampler")
        fit = load_fit(args.source[0], scores=True)
        code = check_fit(fit, args.strict)
        data = fit.data
        seed = SAMPLER_DEFAULTS["seed"] if args.seed is None else args.seed
        with progress("building the report (bootstraps, predictive checks, figures)",
                      "building the report", every=HEARTBEAT_S):
            path = write_report(data, fit=fit, output=args.output, markdown=args.md,
                                meta=args.meta, seed=seed)
    else:
        from evalbayes.models import default_model, get_model

        name = design_model(args, args.model)
        if is_score_model(name):
            raise CLIError(f"report DATA --model {name}: graded scores are reported from their "
                           f"fit: evalbayes fit SCORES --model {name} [--score COL --grader COL "
                           "...] -o fit.nc, then evalbayes report fit.nc")
        data = read_data(args, name="source")
        model = default_model(data) if name is None else get_model(
            name, **formula_settings(args, name))
        if name is not None:
            data = apply_designs(args, data, model)
        options = sampler_options(args, {}, model)
        start = (f"fitting {model.name} to {data!r} with {options['method']} "
                 f"({options['chains']} chains x {options['draws']} draws), then building "
                 "the report (bootstraps, predictive checks, figures)")
        with progress(start, "fitting and building the report", every=HEARTBEAT_S):
            path = write_report(data, output=args.output, markdown=args.md, meta=args.meta,
                                draws=options.pop("draws"), seed=options.pop("seed"),
                                model=model, sampler=options)
    warn(f"wrote {path}")
    return code
