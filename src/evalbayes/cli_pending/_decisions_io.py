"""Stand-in input/output helpers of the ``plan`` and ``gate`` commands.

The integrator replaces these with ``evalbayes.cli._common`` (data input with
``--input-format`` and reader options, ``--format`` and ``-o``); the two commands use only
:func:`add_data_arguments`, :func:`read_data`, :func:`add_output_arguments` and
:func:`emit`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

DATASET_PREFIX = "dataset:"


def add_data_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("data", nargs=None if required else "?",
                        help="counts/trials table, harness logs, or dataset:NAME")
    parser.add_argument("--input-format", default="auto", help="input format (default auto)")
    parser.add_argument("--where", action="append", metavar="COLUMN=VALUE",
                        help="select rows, e.g. --where experiment=sec17.7 (repeatable)")


def read_data(args: argparse.Namespace) -> Any:
    filters: dict[str, str] = {}
    for item in args.where or []:
        if "=" not in item:
            raise ValueError(f"--where expects COLUMN=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        filters[key] = value
    if args.data.startswith(DATASET_PREFIX):
        from evalbayes.datasets import load

        return load(args.data[len(DATASET_PREFIX):], **filters)
    from evalbayes import io

    if not Path(args.data).exists():
        raise FileNotFoundError(f"{args.data}: no such file")
    data = io.read(args.data, format=args.input_format)
    return data.subset(**filters) if filters else data


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table",
                        help="output format (default table)")
    parser.add_argument("-o", "--output", help="write to this file instead of stdout")


def emit(args: argparse.Namespace, text: str, frame: pd.DataFrame | None = None,
         record: dict[str, Any] | None = None) -> None:
    if args.format == "csv" and frame is not None:
        out = frame.to_csv(index=False)
    elif args.format == "json":
        out = json.dumps(record if record is not None else frame.to_dict(orient="records"),
                         indent=2, default=float) + "\n"
    else:
        out = text if text.endswith("\n") else text + "\n"
    if args.output:
        Path(args.output).write_text(out)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(out)
