"""``evalbayes convert LOGS -o FILE``: harness logs -> a tidy counts (or trials) table.

The table format follows the extension of ``-o`` (CSV/TSV, Parquet, JSON Lines); ``--format
csv|json`` must agree with it. The output may not be one of the inputs. No PyMC.
"""

from __future__ import annotations

import argparse

from evalbayes.cli._common import (
    CLIError,
    add_data_args,
    read_data,
    warn,
)
from evalbayes.cli._output import check_output_path

#: --format -> the file name endings written in that format.
SUFFIXES = {"csv": (".csv", ".csv.gz", ".tsv", ".tsv.gz"), "json": (".jsonl", ".ndjson",
                                                                     ".jsonl.gz")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser, name="logs")
    parser.add_argument("-o", "--output", required=True,
                        help="counts.csv / .csv.gz / .tsv / .parquet / .jsonl")
    parser.add_argument("--format", default=None, choices=tuple(SUFFIXES),
                        help="output table format; must agree with the -o extension "
                        "(json = JSON Lines; the input format is --input-format)")
    parser.add_argument("--level", choices=("counts", "trials"), default="counts")


def _check_format(value: str | None, output: str) -> None:
    if value is None:
        return
    if not output.lower().endswith(SUFFIXES[value]):
        raise CLIError(f"--format {value} needs -o ending in {' / '.join(SUFFIXES[value])}; "
                       f"got -o {output} (the file's extension sets its format)")


def run(args: argparse.Namespace) -> int:
    from evalbayes import io

    _check_format(args.format, args.output)
    check_output_path(args.output, args)  # not an input (inode), its folder exists
    data = read_data(args, name="logs", level=args.level)
    frame = data.to_frame() if args.level == "counts" else data
    path = io.write_table(frame, args.output)
    warn(f"wrote {path}")
    return 0
