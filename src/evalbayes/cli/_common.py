"""Shared argument groups and input reading of the ``evalbayes`` commands (output: _output).

Input errors are :class:`CLIError` (a ValueError), reported by :func:`evalbayes.cli.main`
(exit 2). The reader flags are generated from ``evalbayes.io.reader_options()`` (``_readers``);
:func:`reader_options` maps the flags given to ``io.read`` options.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from evalbayes.cli._readers import add_reader_args, flag, reader_flags
from evalbayes.cli._readers import reader_options as _reader_options
from evalbayes.cli._types import seed_int

OUTPUT_FORMATS = ("table", "csv", "json")
#: The input formats of :func:`evalbayes.io.read` (``evalbayes.io.FORMATS``; a test keeps
#: the two equal without importing the readers at parser-build time).
INPUT_FORMATS = (
    "auto", "inspect", "lm-eval", "helm", "terminal-bench", "swe-bench", "counts", "trials",
)  # fmt: skip
DATASET_PREFIX = "dataset:"


class CLIError(ValueError):
    """A user-facing input error: printed without a traceback, exit code 2."""


def warn(message: str) -> None:
    """Print a message for the user on stderr."""
    print(message, file=sys.stderr)


# --------------------------------------------------------------------------- argument groups
def add_data_args(parser: argparse.ArgumentParser, name: str = "data", optional: bool = False
                  ) -> None:
    """DATA, --input-format, --where and the readers' options (--system, --threshold ...)."""
    parser.add_argument(
        name, nargs="*" if optional else "+", metavar=name.upper(),
        help="counts/trials table, harness log(s), directory or glob, or dataset:NAME "
        "(bundled, see `evalbayes datasets`)",
    )  # fmt: skip
    parser.add_argument("--input-format", choices=INPUT_FORMATS, default=None,
                        help="how to read DATA (default: detect from the file)")
    parser.add_argument(
        "--where", action="extend", nargs="+", metavar="COLUMN=VALUE",
        help="keep only tasks/systems whose coordinate has this value, e.g. "
        "experiment=sec17.1; a column given twice keeps either value",
    )  # fmt: skip
    parser.set_defaults(_reader_args=True)  # the flags come last: finish_arguments


def finish_arguments(parser: argparse.ArgumentParser) -> None:
    """After a command's own arguments: the reader flags of a command that reads data."""
    if parser.get_default("_reader_args"):
        add_reader_args(parser)


def add_format_arg(parser: argparse.ArgumentParser) -> None:
    """--format (OUTPUT: table|csv|json) and -o."""
    parser.add_argument("--format", default=None, choices=OUTPUT_FORMATS,
                        help="output format (default table; the input format is "
                        "--input-format)")
    parser.add_argument("-o", "--output", default=None, help="write to this file")


def refuse_output_format(parser: argparse.ArgumentParser, writes: str) -> None:
    """A hidden --format on a command with one output kind, refused with what it writes."""
    parser.add_argument("--format", default=None, help=argparse.SUPPRESS)
    parser.set_defaults(_writes=writes)


def check_no_output_format(args: argparse.Namespace) -> None:
    """Refuse --format where :func:`refuse_output_format` declared it."""
    if getattr(args, "format", None) is not None:
        raise CLIError(f"{args._writes} and has no --format; the input format is "
                       "--input-format")


def add_seed_arg(parser: Any, default: int | None, shown: int | None = None) -> None:
    """--seed, with PyMC's name --random-seed as an alias."""
    shown = default if shown is None else shown
    parser.add_argument("--seed", "--random-seed", dest="seed", type=seed_int,
                        default=default, help=f"random seed, 0 to 2^32 - 1 (default {shown})")


def add_fit_arg(parser: argparse.ArgumentParser) -> None:
    """FIT (a saved posterior) and --strict."""
    parser.add_argument("fit", help="a fit saved by `evalbayes fit` (NetCDF)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when the fit failed its convergence diagnostics")


# --------------------------------------------------------------------------- formats
def output_format(args: argparse.Namespace) -> str:
    """The OUTPUT format (``--format``; default ``table``)."""
    value: str | None = getattr(args, "format", None)
    return value or "table"


# --------------------------------------------------------------------------- input
def reader_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments for :func:`evalbayes.io.read` from the reader flags that were given."""
    return _reader_options(args, error=CLIError)


def parse_where(items: Sequence[str] | None) -> dict[str, list[str]]:
    """``--where COLUMN=VALUE`` pairs; a column given twice keeps either value ("any of")."""
    filters: dict[str, list[str]] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CLIError(f"--where expects COLUMN=VALUE, got {item!r}")
        filters.setdefault(key, []).append(value)
    return filters


def read_data(args: argparse.Namespace, name: str = "data", level: str = "counts") -> Any:
    """Read DATA: a bundled dataset (``dataset:NAME``), a counts/trials table or harness logs.

    Returns :class:`~evalbayes.EvalData`, or with ``level="trials"`` the trial-level frame.
    """
    sources = list(getattr(args, name))
    filters = parse_where(getattr(args, "where", None))
    options = reader_options(args)
    if len(sources) == 1 and sources[0].startswith(DATASET_PREFIX):
        if options:
            flags = ", ".join(flag(key) for key in options)
            raise CLIError(f"{flags}: reader options do not apply to a bundled dataset")
        if level != "counts":
            raise CLIError("a bundled dataset is read as counts (--level counts)")
        from evalbayes.datasets import load

        return load(sources[0][len(DATASET_PREFIX):], **filters)
    from evalbayes import io

    reader = io.read if level == "counts" else io.read_trials_frame
    try:
        return reader(sources if len(sources) > 1 else sources[0],
                      format=args.input_format or "auto", where=filters or None, **options)
    except TypeError as err:  # an option the format does not take
        if "takes no option" not in str(err):
            raise
        raise CLIError(_flag_names(str(err))) from err


def _flag_names(message: str) -> str:
    for key, name in reader_flags().items():
        message = message.replace(f"'{key}'", name)
    return message


def ks(values: Sequence[float] | None, default: Sequence[int]) -> list[float]:
    """k values as ints where they are whole numbers."""
    chosen = list(values) if values else list(default)
    return [int(k) if float(k).is_integer() else float(k) for k in chosen]
