"""``evalbayes fit-suite``: fit every benchmark of a long counts table on a Dask cluster.

One module per command (ARCH_SPEC CLI protocol): ``add_arguments`` and ``run``. Input is a
tidy counts table with a benchmark column (e.g. ``eval_arena_main.csv.gz``); each benchmark's
posterior is written to ``<output-dir>/<benchmark>.nc``; a table of what was written goes to
stdout. When the shared helpers of ``evalbayes/cli/_common.py`` exist, the sampler options
and ``--format`` below should come from there (names and defaults are the same).
"""

from __future__ import annotations

import argparse
import json
import sys

HELP = "fit every benchmark of a suite in parallel (Dask; local cluster by default)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", help="long counts table (CSV / CSV.gz / Parquet) with a "
                        "benchmark column")
    parser.add_argument("--benchmark-column", default="benchmark")
    parser.add_argument("--benchmarks", nargs="+", default=None,
                        help="fit only these benchmarks (default: all)")
    parser.add_argument("--model", default="beta-binomial")
    parser.add_argument("--set", dest="settings", nargs="+", default=[], metavar="KEY=VALUE",
                        help="model settings, e.g. pooling=none (values parsed as JSON "
                        "when possible)")
    parser.add_argument("--method", default="nutpie")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", "--random-seed", dest="seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2,
                        help="local cluster worker processes (ignored with --scheduler)")
    parser.add_argument("--scheduler", default=None,
                        help="address of a running Dask scheduler, e.g. tcp://host:8786")
    parser.add_argument("-o", "--output-dir", default="fits",
                        help="directory for <benchmark>.nc (must be visible to the workers)")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from evalbayes.models import get_model
    from evalbayes.suite import fit_suite, seed_for, split_benchmarks

    if str(args.data).endswith(".parquet"):
        frame = pd.read_parquet(args.data)
    else:
        frame = pd.read_csv(args.data)
    datasets = split_benchmarks(frame, args.benchmark_column)
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
    paths = fit_suite(
        datasets, model, args.scheduler, n_workers=args.workers, method=args.method,
        draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed,
        output_dir=args.output_dir,
    )
    rows = [
        {"benchmark": name, "systems": len(datasets[name].systems),
         "tasks": len(datasets[name].tasks), "seed": seed_for(args.seed, name),
         "path": str(path)}
        for name, path in paths.items()
    ]
    table = pd.DataFrame(rows)
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    elif args.format == "csv":
        sys.stdout.write(table.to_csv(index=False))
    else:
        sys.stdout.write(table.to_string(index=False) + "\n")
    return 0
