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

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io._common import (
    Check,
    Errors,
    LogError,
    SystemOption,
    as_label,
    build,
    check_choice,
    check_mapping_used,
    finish_frame,
    mapping_keys,
    report,
    resolve_system,
)
from evalbayes.io._sources import PathsLike, Source, collect

__all__ = ["read_terminal_bench", "terminal_bench_trials"]

_TRIAL = re.compile(r"^(?P<task>.+)\.(?P<k>\d+)-of-(?P<K>\d+)\.(?P<run>.+)$")


def read_terminal_bench(
    paths: PathsLike,
    *,
    system: SystemOption = None,
    errors: Errors = "failure",
    check: Check = "raise",
    benchmark: str = "terminal-bench",
    task_prefix: bool | None = None,
) -> EvalData:
    """Read Terminal-Bench ``results.json`` files (runs x trials) into EvalData.

    Parameters
    ----------
    paths : path, glob, directory, or a list of them
        Run-level ``results.json`` files or directories holding them. In a directory the
        per-trial copies are skipped when a run-level file is present (they repeat its
        trials); on their own they are read as single trials.
    system : str or mapping, optional
        System names. The logs do not name the agent or model, so the default is the
        directory holding ``results.json`` -- or the directory above it when that directory
        is the run itself (its name is the run id that ends every ``trial_name``), so the runs
        of one submission form one system. A string names every file's system; a mapping
        renames by file path, file name or default name.
    errors : {"failure", "drop", "raise"}
        Trials with ``is_resolved`` null (agent error, timeout, parse error). ``"failure"``
        (default) counts them as unresolved, as the harness does
        (``n_resolved + n_unresolved`` = all trials); ``"drop"`` leaves them out of ``n``;
        ``"raise"`` refuses them.
    check : {"raise", "warn", "off"}
        The run's ``n_resolved`` must equal the number of trials with ``is_resolved`` true
        and ``n_resolved + n_unresolved`` the number of trials.
    benchmark : str
        The task coordinate ``benchmark`` (the files do not name the dataset).
    task_prefix : bool, optional
        ``True`` labels tasks ``"<benchmark>/<task_id>"``.
    """
    return build(
        terminal_bench_trials(
            paths,
            system=system,
            errors=errors,
            check=check,
            benchmark=benchmark,
            task_prefix=task_prefix,
        )
    )


def terminal_bench_trials(
    paths: PathsLike,
    *,
    system: SystemOption = None,
    errors: Errors = "failure",
    check: Check = "raise",
    benchmark: str = "terminal-bench",
    task_prefix: bool | None = None,
) -> pd.DataFrame:
    """Trial-level frame of Terminal-Bench results (options as in :func:`read_terminal_bench`).

    Columns: ``system, task, trial`` (the ``trial_name``), ``success, benchmark, sample, file,
    run, attempt, is_resolved`` (True/False/None as logged), ``failure_mode``.
    """
    return _trials(
        collect(paths, "terminal-bench"),
        system=system,
        errors=errors,
        check=check,
        benchmark=benchmark,
        task_prefix=task_prefix,
    )


def _trials(
    sources: list[Source],
    *,
    system: SystemOption = None,
    errors: Errors = "failure",
    check: Check = "raise",
    benchmark: str = "terminal-bench",
    task_prefix: bool | None = None,
) -> pd.DataFrame:
    check_choice("errors", errors, ("failure", "drop", "raise"))
    check_choice("check", check, ("raise", "warn", "off"))
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for src in sources:
        doc = src.doc if src.doc is not None else _load(src.path)
        trials, run_level = _trial_list(src.path, doc)
        default = _default_system(src.path, trials)
        keys += mapping_keys(src.path, default)
        name = resolve_system(default, src.path, system)
        rows += _rows(src.path, trials, name, benchmark, errors)
        if run_level:
            _check_run(src.path, doc, trials, check)
    check_mapping_used(system, keys)
    if not rows:
        raise ValueError("the results hold no trials (all dropped by errors='drop'?)")
    return finish_frame(rows, task_prefix=task_prefix)


def _load(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return json.load(fh)
    except json.JSONDecodeError as err:
        raise LogError(
            path, f"not valid JSON (truncated?): {err.msg} at line {err.lineno}"
        ) from None


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


def _rows(
    path: Path, trials: list[Any], system: str, benchmark: str, errors: Errors
) -> list[dict[str, Any]]:
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
                "system": system,
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
