"""``evalbayes plan``: how many tasks x trials reach a target (assurance beside power).

Exit 0 on success; bad input raises ValueError (exit 2 in ``main``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from evalbayes.cli._common import (
    add_data_args,
    add_format_arg,
    add_seed_arg,
    output_format,
    read_data,
)
from evalbayes.cli._output import emit, load_fit, write_text
from evalbayes.names import ESTIMANDS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser, optional=True)
    parser.add_argument("--baseline", help="system A (pilot data)")
    parser.add_argument("--candidate", help="system B (pilot data)")
    parser.add_argument("--population", nargs=4, type=float,
                        metavar=("MEAN_A", "MEAN_B", "ICC_A", "ICC_B"),
                        help="state the task population instead of pilot data")
    parser.add_argument("--correlation", type=float, default=0.0,
                        help="copula correlation of A and B on a task (with --population)")
    parser.add_argument("--fit", help="saved Beta-Binomial fit of the pilot: its posterior "
                                      "draws are the design prior")
    parser.add_argument("--tasks", nargs="+", type=int, default=[5, 10, 20, 50, 100])
    parser.add_argument("--trials", nargs="+", type=int, default=[1, 4, 16])
    parser.add_argument("--estimand", nargs="+", choices=ESTIMANDS, default=list(ESTIMANDS))
    parser.add_argument("--unpaired", action="store_true",
                        help="each system on its own tasks (default: paired)")
    parser.add_argument("--decisive-prob", type=float, default=0.95, metavar="PROB",
                        help="decisive: P(B > A) > PROB (default 0.95)")
    parser.add_argument("--width", type=float,
                        help="decisive instead: the PROB interval is narrower than WIDTH")
    parser.add_argument("--assurance", type=float, default=0.8,
                        help="report the tasks needed for this assurance (default 0.8)")
    parser.add_argument("--sims", type=int, default=400, help="simulations per design")
    add_seed_arg(parser, 0)
    add_format_arg(parser, reads_data=True)


def run(args: argparse.Namespace) -> int:
    from evalbayes.decisions.plan import Population, plan

    output = output_format(args)

    if args.population is not None:
        if args.data or args.fit:
            raise ValueError("give either --population or pilot data / --fit, not both")
        mean_a, mean_b, icc_a, icc_b = args.population
        source: Any = Population(mean_a, mean_b, icc_a, icc_b, correlation=args.correlation)
    elif args.fit:
        source = load_fit(args.fit)
    elif args.data:
        source = read_data(args)
    else:
        raise ValueError("give pilot DATA, --fit FIT or --population MEAN_A MEAN_B ICC_A ICC_B")
    if args.population is None and (args.baseline is None or args.candidate is None):
        raise ValueError("name --baseline and --candidate")
    result = plan(
        source, args.baseline, args.candidate, tasks=args.tasks, trials=args.trials,
        estimands=args.estimand, paired=not args.unpaired, threshold=args.decisive_prob,
        target="width" if args.width else "superiority", width=args.width,
        n_sim=args.sims, seed=args.seed,
    )  # fmt: skip
    record = {
        "population": {k: getattr(result.population, k) for k in (
            "baseline", "candidate", "mean_a", "mean_b", "icc_a", "icc_b", "correlation")},
        "tasks_needed": [
            {"estimand": est, "trials": int(tr),
             "tasks": result.tasks_needed(est, int(tr), args.assurance)}
            for est in args.estimand for tr in sorted(set(args.trials))
        ],
        "table": result.table.to_dict(orient="records"),
    }
    _write(output, args.output, result.summary(args.assurance), result.table, record)
    return 0


def _write(output: str, path: str | None, text: str, table: Any, record: dict[str, Any]) -> None:
    """The readable summary, the table as CSV, or the whole record as JSON."""
    if output == "json":
        write_text(json.dumps(record, indent=2, default=str) + "\n", path)
    elif output == "csv":
        emit(table, "csv", path)
    else:
        write_text(text + "\n", path)
