"""``evalbayes datasets``: the bundled datasets with provenance and licence (no PyMC)."""

from __future__ import annotations

import argparse

from evalbayes.cli._common import add_format_arg, output_format
from evalbayes.cli._output import emit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_format_arg(parser)


def run(args: argparse.Namespace) -> int:
    from evalbayes.datasets import table as list_datasets

    emit(list_datasets(), output_format(args), args.output)
    return 0
