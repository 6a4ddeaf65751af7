"""``evalbayes compare-models FIT FIT ...``: PSIS-LOO comparison of fits of the same data."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalbayes.cli._common import CLIError, add_format_arg, output_format
from evalbayes.cli._output import check_fit, check_output_path, emit, load_fit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fits", nargs="+", metavar="FIT", help="two or more fits of the same data")
    add_format_arg(parser)
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a fit failed its convergence diagnostics")


def labels(paths: list[str]) -> list[str]:
    """File stems, or the paths as given where two stems coincide; the same file twice raises."""
    resolved = [Path(p).resolve() for p in paths]
    if len(set(resolved)) < len(resolved):
        raise CLIError("compare-models: the same fit is given twice")
    stems = [Path(p).stem for p in paths]
    return stems if len(set(stems)) == len(stems) else list(paths)


def run(args: argparse.Namespace) -> int:
    from evalbayes.results._loo import compare_models

    output = output_format(args)
    check_output_path(args.output, args)
    if len(args.fits) < 2:
        raise CLIError("compare-models needs at least two fits of the same data")
    posteriors = {label: load_fit(path) for label, path in zip(labels(args.fits), args.fits,
                                                                strict=True)}
    code = max(check_fit(p, args.strict) for p in posteriors.values())
    table = compare_models(posteriors).reset_index()  # the model labels are the index
    emit(table, output, args.output, title="PSIS-LOO model comparison (higher elpd is better)")
    return code
