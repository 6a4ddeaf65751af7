"""``evalbayes prior-check DATA``: what the model's prior implies for pass@k, before fitting.

The model's parameters are drawn from their prior on the data's shape and pushed through its
population estimand (:meth:`evalbayes.models.Model.prior_predictive`): per system, quantiles of
a new task's pass@k, the prior's share below 0.05 and above 0.95, the data's observed pass@1
and where it falls in the prior; the title line gives the prior range of two systems' pass@1
difference. Nothing is fitted and no file is written but ``-o``.
"""

from __future__ import annotations

import argparse

from evalbayes.cli._common import (
    add_data_args,
    add_format_arg,
    add_seed_arg,
    ks,
    output_format,
    read_data,
)
from evalbayes.cli._fit import make_model, read_spec
from evalbayes.cli._output import check_output_path, emit
from evalbayes.cli._sampler import model_help
from evalbayes.cli._scores import add_score_args, is_score_model, prior_check_scores
from evalbayes.cli._types import (
    k_value,
    positive_int,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser)
    add_format_arg(parser)
    parser.add_argument("--model", default=None, help=model_help())
    parser.add_argument("--spec", default=None, help="model spec TOML (see models/*.toml)")
    parser.add_argument("--k", type=k_value, nargs="+", help="k values (default 1 8)")
    parser.add_argument("--draws", type=positive_int, default=2000,
                        help="prior draws (default 2000)")
    add_seed_arg(parser, 0)
    add_score_args(parser)


def run(args: argparse.Namespace) -> int:
    output = output_format(args)
    check_output_path(args.output)
    settings, _ = read_spec(args.spec)
    if is_score_model(args.model or settings.get("model")):
        return prior_check_scores(args, settings, output)
    data = read_data(args)
    model = make_model(args, settings, data)
    check = model.prior_predictive(data, k=ks(args.k, (1, 8)), draws=args.draws,
                                   seed=args.seed)
    emit(check.to_frame(), output, args.output, title=check.title())
    return 0
