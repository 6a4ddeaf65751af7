"""``evalbayes items FIT``: the item (task) table of an IRT fit, or the best M items; for a
fit with broken tasks (rate-grid with ``broken=True``), each task's
probability of being broken."""

from __future__ import annotations

import argparse

from evalbayes.cli._common import (
    CLIError,
    add_fit_arg,
    add_format_arg,
    output_format,
)
from evalbayes.cli._output import check_fit, check_output_path, emit, load_fit
from evalbayes.cli._types import (
    positive_int,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_fit_arg(parser)
    add_format_arg(parser)
    parser.add_argument("--select", type=positive_int, default=None, metavar="M",
                        help="the M items that best separate the systems (M >= 1)")


def run(args: argparse.Namespace) -> int:
    output = output_format(args)
    check_output_path(args.output, args)
    posterior = load_fit(args.fit)
    from evalbayes.models.irt._items import IRTPosterior

    if not isinstance(posterior, IRTPosterior):
        if not posterior.has_broken_tasks:
            raise CLIError(f"items needs an IRT fit (--model irt-2pl) or a fit with broken "
                           f"tasks (rate-grid with broken = true in a --spec), "
                           f"this is {posterior.label}")
        if args.select is not None:
            raise CLIError(f"--select needs an IRT fit (--model irt-2pl), this is "
                           f"{posterior.model.name}")
        code = check_fit(posterior, args.strict)
        emit(posterior.broken_tasks(), output, args.output,
             title=f"tasks, most likely broken first (p_broken: posterior probability that no "
             f"system can solve it) - {posterior.label}")
        return code
    code = check_fit(posterior, args.strict)
    if args.select is not None:
        table = posterior.select_items(args.select)
        title = f"the {args.select} items that best separate the systems - {posterior.label}"
    else:
        table = posterior.items()
        title = f"items - {posterior.label}"
    emit(table, output, args.output, title=title)
    return code
