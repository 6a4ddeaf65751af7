"""``evalbayes prior-check DATA``: what the model's prior implies for pass@k, before fitting.

The model's parameters are drawn from their prior on the data's shape and pushed through its
population estimand (:meth:`evalbayes.models.Model.prior_predictive`): per system, quantiles of
a new task's pass@k, the prior's share below 0.05 and above 0.95, the data's observed pass@1
and where it falls in the prior; the title line gives the prior range of two systems' pass@1
difference. Nothing is fitted and no file is written but ``-o``.

A graded-score model (``--model ordinal | partial-credit``) reads a score table instead and
gives the prior's mean score and ``P(score >= t)`` at the ``--threshold`` values ``t`` (the
name ``summary`` and ``compare`` of a score fit and ``prior_predictive(thresholds=)`` use);
``--k`` (pass@k needs c-of-n counts) is refused for it. For a c-of-n model ``--threshold``
takes one value, the log readers' success rule as in ``fit`` (scores ``>= T`` count as
successes); several values are refused there.
"""

from __future__ import annotations

import argparse

from evalbayes.cli._common import (
    CLIError,
    add_data_args,
    add_format_arg,
    add_seed_arg,
    ks,
    output_format,
    read_data,
)
from evalbayes.cli._designs import add_design_args, apply_designs, design_model
from evalbayes.cli._fit import make_model, read_spec
from evalbayes.cli._output import check_output_path, emit
from evalbayes.cli._sampler import model_help
from evalbayes.cli._scores import add_score_args, is_score_model, prior_check_scores
from evalbayes.cli._types import (
    finite,
    k_value,
    positive_int,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser)
    add_format_arg(parser)
    parser.add_argument("--model", default=None, help=model_help())
    parser.add_argument("--spec", default=None, help="model spec TOML (see models/*.toml)")
    parser.add_argument("--k", type=k_value, nargs="+",
                        help="c-of-n models: k values of pass@k (default 1 8)")
    parser.add_argument("--threshold", type=finite, nargs="+", default=None, metavar="T",
                        help="graded-score models: the thresholds t of P(score >= t) (default "
                        "every level 1..K of an ordinal scale, 0.1..0.9 of partial credit); "
                        "c-of-n models: one value, the log readers' success rule as in fit "
                        "(scores >= T count as successes; also --reader-threshold)")
    parser.add_argument("--draws", type=positive_int, default=2000,
                        help="prior draws (default 2000)")
    add_seed_arg(parser, 0)
    add_design_args(parser)  # the design models' inputs and --formula, as in fit
    add_score_args(parser)


def run(args: argparse.Namespace) -> int:
    output = output_format(args)
    check_output_path(args.output)
    settings, _ = read_spec(args.spec)
    if is_score_model(args.model or settings.get("model")):
        if args.k is not None:
            raise CLIError("--k is pass@k, which needs c-of-n counts; a graded-score model "
                           "gives P(score >= t): use --threshold T ...")
        return prior_check_scores(args, settings, output)
    reader_threshold(args)
    implied = design_model(args, args.model or settings.get("model"))
    if args.model is None and "model" not in settings:
        args.model = implied
    try:
        data = read_data(args)
    except CLIError as err:
        if args.threshold is None:
            raise
        raise CLIError(f"{err}\n(--threshold of a c-of-n model is the log readers' success "
                       "rule; P(score >= t) needs a graded-score model: --model ordinal | "
                       "partial-credit)") from None
    model = make_model(args, settings, data)
    data = apply_designs(args, data, model)
    check = model.prior_predictive(data, k=ks(args.k, (1, 8)), draws=args.draws,
                                   seed=args.seed)
    emit(check.to_frame(), output, args.output, title=check.title())
    return 0


def reader_threshold(args: argparse.Namespace) -> None:
    """``--threshold`` of a c-of-n model: one value, handed to the log reader (its success
    rule, ``--reader-threshold``); several values, or both flags, are refused."""
    if args.threshold is None:
        return
    if getattr(args, "reader_threshold", None) is not None:
        raise CLIError("--threshold and --reader-threshold are the same success rule of a "
                       "c-of-n model's logs: give one")
    if len(args.threshold) > 1:
        raise CLIError("--threshold: P(score >= t) at several thresholds t is for graded-score "
                       "models (--model ordinal | partial-credit); a c-of-n model takes one "
                       "--threshold, the log readers' success rule (scores >= T count as "
                       "successes), and --k for pass@k")
    args.reader_threshold = args.threshold[0]
