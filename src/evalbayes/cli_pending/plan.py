"""``evalbayes plan``: how many tasks x trials reach a target (assurance beside power).

Exit 0 on success; bad input raises ValueError (exit 2 in ``main``).
"""

from __future__ import annotations

import argparse

from ._decisions_io import add_data_arguments, add_output_arguments, emit, read_data

HELP = "tasks x trials needed: Bayesian assurance beside power / MDE"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_arguments(parser, required=False)
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
    parser.add_argument("--estimand", nargs="+", choices=("tasks", "population"),
                        default=["tasks", "population"])
    parser.add_argument("--unpaired", action="store_true",
                        help="each system on its own tasks (default: paired)")
    parser.add_argument("--threshold", type=float, default=0.95,
                        help="decisive: P(B > A) > THRESHOLD (default 0.95)")
    parser.add_argument("--width", type=float,
                        help="decisive instead: the THRESHOLD interval is narrower than WIDTH")
    parser.add_argument("--assurance", type=float, default=0.8,
                        help="report the tasks needed for this assurance (default 0.8)")
    parser.add_argument("--sims", type=int, default=400, help="simulations per design")
    parser.add_argument("--seed", "--random-seed", type=int, default=0)
    add_output_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from evalbayes.decisions.plan import Population, plan

    if args.population is not None:
        if args.data or args.fit:
            raise ValueError("give either --population or pilot data / --fit, not both")
        source = Population(*args.population, correlation=args.correlation)
    elif args.fit:
        from evalbayes.results import load

        source = load(args.fit)
    elif args.data:
        source = read_data(args)
    else:
        raise ValueError("give pilot DATA, --fit FIT or --population MEAN_A MEAN_B ICC_A ICC_B")
    if args.population is None and (args.baseline is None or args.candidate is None):
        raise ValueError("name --baseline and --candidate")
    result = plan(
        source, args.baseline, args.candidate, tasks=args.tasks, trials=args.trials,
        estimands=args.estimand, paired=not args.unpaired, threshold=args.threshold,
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
    emit(args, result.summary(args.assurance), result.table, record)
    return 0
