"""``evalbayes plan``: how many tasks x trials reach a target (assurance beside power).

With a training-seeds ``--fit`` it plans runs x tasks x trials per recipe instead
(:func:`evalbayes.decisions.plan_runs`). Exit 0 on success; bad input raises
ValueError (exit 2 in ``main``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import Any

from evalbayes._core.names import ESTIMANDS
from evalbayes.cli._common import (
    add_data_args,
    add_format_arg,
    add_seed_arg,
    output_format,
    read_data,
)
from evalbayes.cli._output import emit, load_fit, write_text
from evalbayes.cli._types import (
    MAX_RUNS,
    MAX_SIMS,
    MAX_TASKS,
    MAX_TRIALS,
    count,
    number,
    positive,
    probability,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser, optional=True)
    parser.add_argument("--baseline", help="system A (pilot data)")
    parser.add_argument("--candidate", help="system B (pilot data)")
    parser.add_argument("--population", nargs=4, type=number(0, 1),
                        metavar=("MEAN_A", "MEAN_B", "ICC_A", "ICC_B"),
                        help="state the task population instead of pilot data")
    parser.add_argument("--correlation", type=number(-1, 1), default=None,
                        help="copula correlation of A and B on a task (default: 0 with "
                             "--population, estimated from the pilot's tasks otherwise)")
    parser.add_argument("--fit", help="saved Beta-Binomial (or formula) fit of the pilot: its "
                                      "posterior draws are the design prior; a training-seeds "
                                      "fit plans "
                                      "runs x tasks x trials per recipe (--runs)")
    parser.add_argument("--tasks", nargs="+", type=count(1, MAX_TASKS), default=None,
                        help="tasks of each design (default 5 10 20 50 100; with a "
                        "training-seeds fit 10 20 50)")
    parser.add_argument("--trials", nargs="+", type=count(1, MAX_TRIALS), default=None,
                        help="trials per task (default 1 4 16; with a training-seeds fit 1 4)")
    parser.add_argument("--runs", nargs="+", type=count(1, MAX_RUNS), default=None,
                        help="training-seeds fit: training runs per recipe (default 2 4 8); "
                        "--baseline / --candidate name recipes (default: the fit's two)")
    parser.add_argument("--alpha", type=probability, default=None,
                        help="training-seeds fit: two-sided level of the run-level Welch "
                        "interval (default 0.05)")
    parser.add_argument("--estimand", nargs="+", choices=ESTIMANDS, default=None,
                        help="which posteriors to simulate (default both)")
    parser.add_argument("--unpaired", action="store_true",
                        help="each system on its own tasks (default: paired)")
    parser.add_argument("--decisive-prob", type=probability, default=None, metavar="PROB",
                        help="decisive: P(B > A) > PROB (default 0.95)")
    parser.add_argument("--width", type=positive,
                        help="decisive instead: the PROB interval is narrower than WIDTH")
    parser.add_argument("--assurance", type=probability, default=0.8,
                        help="report the tasks needed for this assurance (default 0.8)")
    parser.add_argument("--sims", type=count(1, MAX_SIMS), default=400,
                        help=f"simulations per design (at most {MAX_SIMS:,})")
    add_seed_arg(parser, 0)
    add_format_arg(parser)


SEED_ONLY = ("runs", "alpha")
NOT_FOR_SEEDS = ("data", "estimand", "decisive_prob", "width", "unpaired", "correlation")


def _flag(dest: str) -> str:
    return "DATA" if dest == "data" else "--" + dest.replace("_", "-")


def _given(value: Any) -> bool:
    """An option the user gave (not its None / False / empty default)."""
    return value is not None and value is not False and not (isinstance(value, list) and not value)


def run(args: argparse.Namespace) -> int:
    from evalbayes.decisions._plan import Population, plan

    output = output_format(args)
    fit = load_fit(args.fit) if args.fit and args.population is None else None
    if fit is not None and fit.model.name == "training-seeds":
        return _plan_runs(args, fit, output)
    given = [_flag(d) for d in SEED_ONLY if _given(getattr(args, d))]
    if given:
        raise ValueError(f"{', '.join(given)}: only with a training-seeds --fit")
    args.tasks = args.tasks or [5, 10, 20, 50, 100]
    args.trials = args.trials or [1, 4, 16]
    args.estimand = args.estimand or list(ESTIMANDS)
    args.decisive_prob = 0.95 if args.decisive_prob is None else args.decisive_prob

    if args.population is not None:
        if args.data or args.fit:
            raise ValueError("give either --population or pilot data / --fit, not both")
        mean_a, mean_b, icc_a, icc_b = args.population
        corr = 0.0 if args.correlation is None else args.correlation
        source: Any = Population(mean_a, mean_b, icc_a, icc_b, correlation=corr)
    else:
        if not (fit is not None or args.data):
            raise ValueError("give pilot DATA, --fit FIT or --population MEAN_A MEAN_B ICC_A "
                             "ICC_B")
        if args.baseline is None or args.candidate is None:
            raise ValueError("name --baseline and --candidate")
        if fit is not None:
            source = Population.from_posterior(fit, args.baseline, args.candidate,
                                               correlation=args.correlation)
        else:
            source = Population.from_data(read_data(args), args.baseline, args.candidate)
            if args.correlation is not None:
                source = replace(source, correlation=args.correlation)
    result = plan(
        source, baseline=args.baseline, candidate=args.candidate, tasks=args.tasks,
        trials=args.trials,
        estimands=args.estimand, paired=not args.unpaired, threshold=args.decisive_prob,
        target="width" if args.width else "superiority", width=args.width,
        n_sims=args.sims, seed=args.seed,
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
    text = result.summary(args.assurance)
    if fit is not None and fit.model.name == "formula":
        note = (f"note: {fit.model_note(1)} The design prior is, per posterior draw, the Beta "
                "with the mean (pass@1) and pass^2 of each system's rates on a new task; terms "
                "integrated as noise (runs) are folded into the per-task spread, so a run's "
                "shift of every task at once is not simulated.")
        text += "\n" + note
        record["note"] = note
    _write(output, args.output, text, result.table, record)
    return 0


def _plan_runs(args: argparse.Namespace, fit: Any, output: str) -> int:
    """Runs x tasks x trials per recipe from a training-seeds fit."""
    from evalbayes.decisions._plan_runs import plan_runs

    given = [_flag(d) for d in NOT_FOR_SEEDS if _given(getattr(args, d))]
    if given:
        raise ValueError(f"{', '.join(given)}: not with a training-seeds fit (its plan takes "
                         "--runs, --tasks, --trials, --alpha, --baseline, --candidate)")
    result = plan_runs(
        fit, baseline=args.baseline, candidate=args.candidate, runs=args.runs or [2, 4, 8],
        tasks=args.tasks or [10, 20, 50], trials=args.trials or [1, 4], n_sims=args.sims,
        alpha=0.05 if args.alpha is None else args.alpha, seed=args.seed,
    )  # fmt: skip
    table = result.table
    record = {
        "baseline": result.baseline,
        "candidate": result.candidate,
        "alpha": result.alpha,
        "n_sims": result.n_sims,
        "runs_needed": [
            {"tasks": int(t), "trials": int(n),
             "runs": result.runs_needed(int(t), int(n), args.assurance)}
            for (t, n), _ in table.groupby(["tasks", "trials"], sort=True)
        ],
        "table": table.to_dict(orient="records"),
    }
    _write(output, args.output, result.summary(args.assurance), table, record)
    return 0


def _write(output: str, path: str | None, text: str, table: Any, record: dict[str, Any]) -> None:
    """The readable summary, the table as CSV, or the whole record as JSON."""
    if output == "json":
        write_text(json.dumps(record, indent=2, default=str) + "\n", path)
    elif output == "csv":
        emit(table, "csv", path)
    else:
        write_text(text + "\n", path)
