"""``evalbayes fit-suite``: fit every benchmark of a long counts table on a Dask cluster.

One module per command (ARCH_SPEC CLI protocol): ``add_arguments`` and ``run``. Input is a
tidy counts table with a benchmark column (e.g. ``eval_arena_main.csv.gz``); each benchmark's
posterior is written to ``<output-dir>/<benchmark>.nc``; a table of what was written goes to
stdout.
"""

from __future__ import annotations

import argparse
import json
import os

from evalbayes.cli._common import (
    CLIError,
    add_format_arg,
    output_format,
)
from evalbayes.cli._output import emit, write_text
from evalbayes.cli._sampler import add_sampler_args, sampler_options
from evalbayes.cli._types import (
    count,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", help="long counts table (CSV / CSV.gz / Parquet / JSONL) with "
                        "a benchmark column")
    parser.add_argument("--benchmark-column", default="benchmark")
    parser.add_argument("--benchmarks", nargs="+", default=None,
                        help="fit only these benchmarks (default: all)")
    parser.add_argument("--model", default="beta-binomial")
    parser.add_argument("--set", dest="settings", nargs="+", default=[], metavar="KEY=VALUE",
                        help="model settings, e.g. pooling=none (values parsed as JSON "
                        "when possible)")
    add_sampler_args(parser)
    parser.add_argument("--workers", type=count(1, 1024), default=2,
                        help="local cluster worker processes (ignored with --scheduler)")
    parser.add_argument("--scheduler", default=None,
                        help="address of a running Dask scheduler, e.g. tcp://host:8786")
    parser.add_argument("--output-dir", default="fits",
                        help="directory for <benchmark>.nc (must be visible to the workers)")
    add_format_arg(parser)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from evalbayes.io._tables import read_table
    from evalbayes.models import get_model
    from evalbayes.suite import fit_suite, seed_for, split_benchmarks

    output = output_format(args)
    if os.path.exists(args.output_dir) and not os.path.isdir(args.output_dir):
        raise CLIError(f"--output-dir {args.output_dir}: is a file, not a folder")
    datasets = split_benchmarks(read_table(args.data), args.benchmark_column)
    if args.benchmarks:
        unknown = sorted(set(args.benchmarks) - set(datasets))
        if unknown:
            raise ValueError(f"{args.data}: unknown benchmarks {unknown}; "
                             f"available: {sorted(datasets)}")
        datasets = {name: datasets[name] for name in args.benchmarks}
    settings = {}
    for item in args.settings:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            settings[key] = json.loads(value)
        except json.JSONDecodeError:
            settings[key] = value
    model = get_model(args.model, **settings)
    sampler = sampler_options(args, {}, model)
    paths = fit_suite(datasets, model, args.scheduler, n_workers=args.workers,
                      output_dir=args.output_dir, **sampler)
    rows = [
        {"benchmark": name, "systems": len(datasets[name].systems),
         "tasks": len(datasets[name].tasks), "seed": seed_for(sampler["seed"], name),
         "path": str(path)}
        for name, path in paths.items()
    ]
    if output == "json":
        write_text(json.dumps(rows, indent=2) + "\n", args.output)
    else:
        emit(pd.DataFrame(rows), output, args.output)
    return 0
