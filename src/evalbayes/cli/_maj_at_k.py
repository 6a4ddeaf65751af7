"""``evalbayes maj-at-k ANSWERS``: majority-vote accuracy (maj@k) from per-trial answers.

maj@k needs the answer each trial gave, not only whether it was right, so it reads its own
table: one row per trial with the system, the task, the trial's answer and the task's correct
answer (CSV, TSV, JSON lines or Parquet; the column names are flags). Per system it prints the
unbiased maj@k over the tasks (the exact average over all k-subsets of each task's trials;
:func:`evalbayes.metrics.maj_at_k`) and a posterior mean and interval (per task, answer
probabilities ``pi ~ Dirichlet(prior + counts)`` over the observed answers,
:func:`evalbayes.metrics.posterior_maj_at_k`, averaged over the tasks draw by draw).
No PyMC. Wang et al. (2023), "Self-consistency improves chain of thought reasoning", ICLR.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from evalbayes.cli._common import (
    CLIError,
    add_format_arg,
    add_seed_arg,
    output_format,
)
from evalbayes.cli._output import check_output_path, emit
from evalbayes.cli._types import (
    positive,
    positive_int,
    probability,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet", ".pq")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("answers", metavar="ANSWERS",
                        help="one row per trial: system, task, answer, reference (CSV, TSV, "
                        "JSON lines or Parquet)")
    add_format_arg(parser)
    parser.add_argument("--k", type=positive_int, nargs="+", default=[1, 5],
                        help="votes per majority (default 1 5)")
    parser.add_argument("--system-column", default="system", help="default: system")
    parser.add_argument("--task-column", default="task", help="default: task")
    parser.add_argument("--answer-column", default="answer", help="default: answer")
    parser.add_argument("--reference-column", default="reference",
                        help="the task's correct answer (default: reference)")
    parser.add_argument("--draws", type=positive_int, default=1000,
                        help="posterior draws per task (default 1000)")
    parser.add_argument("--prior", type=positive, default=1.0,
                        help="Dirichlet prior count per observed answer (default 1)")
    parser.add_argument("--ci-prob", type=probability, default=0.95, help="interval probability")
    add_seed_arg(parser, 0)


def read_answers(path: str, columns: dict[str, str]) -> pd.DataFrame:
    """The answer table with columns renamed to ``system, task, answer, reference``, answers
    as text; errors name the file, the row and the rule.

    The file is read by :func:`evalbayes.io.read_table`, the loader of the other table
    commands (a FIFO, socket or device is refused before it is opened; JSON Lines are read
    with the depth, duplicate-key and surrogate guards; the four columns are read as text as
    written), and a label or answer holding NUL or a lone surrogate is refused naming its row
    (:func:`evalbayes.io._common.check_labels`).
    """
    from evalbayes.io import read_table
    from evalbayes.io._common import check_labels
    from evalbayes.io._sources import check_regular

    check_regular(path)  # a FIFO, socket or device: refused before anything opens it
    name = Path(path).name.lower().removesuffix(".gz")
    if not name.endswith(_SUFFIXES):
        raise CLIError(f"{path}: unknown table type; use .csv, .tsv, .jsonl or .parquet")
    if not Path(path).exists() and not Path(path).is_symlink():
        raise CLIError(f"{path}: no such file")
    frame = read_table(path, labels=tuple(columns.values()))
    missing = [f"--{role}-column ({name})" for role, name in columns.items() if name not in frame]
    if missing:
        raise CLIError(f"{path}: missing column(s) {', '.join(missing)}; found "
                       f"{list(frame.columns)}")
    frame = frame[list(columns.values())].set_axis(list(columns), axis=1)
    check_labels(frame, path, columns=list(columns))
    for column in frame:
        empty = frame[column].isna() | (frame[column].astype(str) == "")
        if empty.any():
            row = int(empty.to_numpy().nonzero()[0][0])
            raise CLIError(f"{path}: row {row + 2}: empty {column!r} (every trial needs a "
                           "system, a task, an answer and the reference)")
        frame[column] = frame[column].astype(str)
    refs = frame.groupby(["system", "task"])["reference"].nunique()
    if (refs > 1).any():
        system, task = refs[refs > 1].index[0]
        raise CLIError(f"{path}: task {task!r} of system {system!r} has more than one "
                       "reference answer")
    return frame


def maj_table(frame: pd.DataFrame, ks: list[int], draws: int, prior: float, ci_prob: float,
              seed: int, path: str = "ANSWERS") -> pd.DataFrame:
    """Per system and k: tasks, the unbiased maj@k and the posterior mean and interval."""
    import numpy as np
    import pandas as pd

    from evalbayes._core.names import check_ci_prob
    from evalbayes.metrics import maj_at_k, posterior_maj_at_k

    check_ci_prob(ci_prob)
    if not (np.isfinite(prior) and prior > 0):
        raise CLIError(f"--prior must be a positive number, got {prior}")
    rows = []
    tail = (1.0 - ci_prob) / 2
    for s_index, (system, group) in enumerate(frame.groupby("system", sort=False)):
        tasks = list(group.groupby("task", sort=False))
        for k in ks:
            short = [str(t) for t, g in tasks if len(g) < k]
            if short:
                raise CLIError(f"{path}: system {system!r}: task(s) {short[:3]} have fewer "
                               f"than k={k} trials (maj@k needs at least k answers per task)")
            unbiased = np.mean([maj_at_k(g["answer"].tolist(), g["reference"].iloc[0], k)
                                for _, g in tasks])
            sims = np.mean([
                posterior_maj_at_k(g["answer"].tolist(), g["reference"].iloc[0], k,
                                   prior=prior, draws=draws, seed=seed + 7919 * s_index + t)
                for t, (_, g) in enumerate(tasks)
            ], axis=0)
            rows.append({
                "system": system, "k": k, "tasks": len(tasks), "maj@k (unbiased)": unbiased,
                "posterior mean": float(sims.mean()),
                "lower": float(np.quantile(sims, tail)),
                "upper": float(np.quantile(sims, 1 - tail)),
                "ci_prob": ci_prob,
            })
    return pd.DataFrame(rows)


def run(args: argparse.Namespace) -> int:
    output = output_format(args)
    check_output_path(args.output)
    columns = {"system": args.system_column, "task": args.task_column,
               "answer": args.answer_column, "reference": args.reference_column}
    frame = read_answers(args.answers, columns)
    table = maj_table(frame, sorted(set(args.k)), args.draws, args.prior, args.ci_prob,
                      args.seed, path=args.answers)
    emit(table, output, args.output,
         title="maj@k: the plurality of k answers is the reference (ties split)")
    return 0
