"""Terminal-Bench run results (harness ``tb``), read without the harness.

Format (``/work/shared/data/FORMATS.md`` §3): a run-level ``results.json`` holds ``results``,
a list of trials with ``task_id``, ``trial_name`` (``<task>.<k>-of-<K>.<run id>``) and
``is_resolved`` (true, false, or null for an error or timeout), plus the run's own
``n_resolved``/``n_unresolved``. Per-trial copies of each trial sit in
``<run>/<task>/<trial_name>/results.json``. Submissions run the benchmark several times:
several run directories of one attempt each, or one run with ``--n-attempts K``; every
trial of every run is one trial of its (system, task) cell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalbayes.io._common import (
    Check,
    Errors,
    LogError,
    as_label,
    report,
)
from evalbayes.io._json import load_json
from evalbayes.io._protocol import (
    LogOptions,
    Parsed,
    Reader,
    check_option,
    errors_option,
    option,
)
from evalbayes.io._sources import Source

__all__ = ["READER", "TerminalBenchOptions"]

_TRIAL = re.compile(r"^(?P<task>.+)\.(?P<k>\d+)-of-(?P<K>\d+)\.(?P<run>.+)$")


@dataclass(frozen=True)
class TerminalBenchOptions(LogOptions):
    """Terminal-Bench ``results.json`` files (runs x trials): every trial of every run is one
    trial of its (system, task) cell. The default system is the directory holding
    ``results.json``, or the one above it when that directory is the run itself (its name is
    the run id ending every ``trial_name``). In a directory, per-trial copies are skipped
    when a run-level file is present; on their own they are read as single trials.
    """

    errors: Errors = errors_option(
        "trials with is_resolved null (agent error, timeout; the harness counts them as unresolved)"
    )
    check: Check = check_option("the run's n_resolved and n_unresolved agree with its trials")
    benchmark: str = option(
        "terminal-bench", "the task coordinate 'benchmark' (the files do not name the dataset)"
    )


def _parse(src: Source, opts: TerminalBenchOptions) -> Parsed:
    doc = src.doc if src.doc is not None else load_json(src.path)
    trials, run_level = _trial_list(src.path, doc)
    rows = _rows(src.path, trials, opts.benchmark, opts.errors)
    if run_level:
        _check_run(src.path, doc, trials, opts.check)
    return Parsed(rows, _default_system(src.path, trials))


READER = Reader(
    name="terminal-bench",
    options=TerminalBenchOptions,
    parse=_parse,
    empty="the results hold no trials (all dropped by errors='drop'?)",
)


def _trial_list(path: Path, doc: Any) -> tuple[list[Any], bool]:
    if isinstance(doc, Mapping) and isinstance(doc.get("results"), list):
        return doc["results"], True
    if isinstance(doc, Mapping) and "trial_name" in doc:
        return [doc], False
    raise LogError(path, "not a Terminal-Bench results.json (no 'results' list, no 'trial_name')")


def _run_id(trial: Any) -> str | None:
    if isinstance(trial, Mapping):
        match = _TRIAL.match(str(trial.get("trial_name", "")))
        if match:
            return match["run"]
    return None


def _default_system(path: Path, trials: list[Any]) -> str:
    folder = path.parent
    if len(trials) > 0 and _run_id(trials[0]) == folder.name and folder.parent.name:
        return folder.parent.name
    if "trial_name" in (trials[0] if trials and isinstance(trials[0], Mapping) else {}):
        # a per-trial copy lives in <run>/<task>/<trial_name>/results.json
        run = _run_id(trials[0])
        for parent in path.parents:
            if parent.name == run and parent.parent.name:
                return parent.parent.name
    return folder.name


def _rows(path: Path, trials: list[Any], benchmark: str, errors: Errors) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i, trial in enumerate(trials):
        where = f"trial {i}"
        if not isinstance(trial, Mapping):
            raise LogError(path, "the trial is not a JSON object", where)
        for field in ("task_id", "trial_name", "is_resolved"):
            if field not in trial:
                raise LogError(path, f"missing field {field!r}", where)
        task = as_label(trial["task_id"], path, where, "task_id")
        name = str(trial["trial_name"])
        where = f"trial {i} ({name})"
        resolved = trial["is_resolved"]
        if resolved is None:
            if errors == "raise":
                raise LogError(
                    path,
                    f"is_resolved is null (failure_mode {trial.get('failure_mode')!r}); pass "
                    "errors='failure' to count it as unresolved (as the harness does) or "
                    "errors='drop' to leave it out",
                    where,
                )
            if errors == "drop":
                continue
            success = 0
        elif isinstance(resolved, bool):
            success = int(resolved)
        else:
            raise LogError(path, f"is_resolved={resolved!r} is not true, false or null", where)
        match = _TRIAL.match(name)
        rows.append(
            {
                "sample": task,
                "trial": name,
                "success": success,
                "benchmark": benchmark,
                "file": str(path),
                "run": match["run"] if match else None,
                "attempt": int(match["k"]) if match else None,
                "is_resolved": resolved,
                "failure_mode": trial.get("failure_mode"),
            }
        )
    return rows


def _check_run(path: Path, doc: Mapping[str, Any], trials: list[Any], check: Check) -> None:
    resolved = sum(1 for t in trials if isinstance(t, Mapping) and t.get("is_resolved") is True)
    n_resolved = doc.get("n_resolved")
    n_unresolved = doc.get("n_unresolved")
    if isinstance(n_resolved, int) and n_resolved != resolved:
        report(check, path, f"n_resolved={n_resolved} but {resolved} trials have is_resolved true")
    if (
        isinstance(n_resolved, int)
        and isinstance(n_unresolved, int)
        and n_resolved + n_unresolved != len(trials)
    ):
        report(
            check,
            path,
            f"n_resolved + n_unresolved = {n_resolved + n_unresolved} but the run has "
            f"{len(trials)} trials",
        )
