"""SWE-bench results: lists of resolved instance ids, read against an instance universe.

SWE-bench/experiments stores one ``evaluation/<split>/<system>/results/results.json`` per
submission with lists of instance ids (``resolved``, ``no_generation``, ``applied``, ...);
the evaluation harness writes a report with ``resolved_ids``. Only the resolved list is
needed, but a list of successes says nothing about which instances were attempted: an
instance missing from it is a failure only if it belongs to the evaluated set. So the
*universe* of instance ids is required, every instance in it is one trial (``n = 1``), and a
resolved id outside it raises (a wrong split or a stale universe).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io._common import (
    LogError,
    SystemOption,
    as_label,
    build,
    check_mapping_used,
    finish_frame,
    mapping_keys,
    resolve_system,
)
from evalbayes.io._sources import PathsLike, Source, collect

__all__ = ["read_swe_bench", "read_universe", "swe_bench_trials"]

UniverseLike = str | Path | Iterable[str]


def read_swe_bench(
    paths: PathsLike,
    *,
    universe: UniverseLike | None = None,
    system: SystemOption = None,
    benchmark: str = "swe-bench",
    task_prefix: bool | None = None,
) -> EvalData:
    """Read SWE-bench ``results.json`` files into :class:`~evalbayes.EvalData`.

    Parameters
    ----------
    paths : path, glob, directory, or a list of them
        ``results.json`` files with a ``resolved`` (experiments repository) or
        ``resolved_ids`` (harness report) list.
    universe : path or iterable of str
        Required. The instance ids that were evaluated (e.g. the 500 ids of SWE-bench
        Verified): an iterable of ids, or a file -- ``.txt`` (one id per line), ``.json``
        (a list), or a CSV/Parquet/JSONL table with an ``instance_id`` column.
    system : str or mapping, optional
        System names. Default: the directory holding the file, skipping a directory named
        ``results`` (``evaluation/verified/<system>/results/results.json``).
    benchmark : str
        The task coordinate ``benchmark``.
    task_prefix : bool, optional
        ``True`` labels tasks ``"<benchmark>/<instance_id>"``.

    Raises
    ------
    ValueError
        No universe, an empty or duplicated universe.
    LogError
        A file without a resolved list, a duplicated or non-string id, or a resolved id
        outside the universe.
    """
    return build(
        swe_bench_trials(
            paths, universe=universe, system=system, benchmark=benchmark, task_prefix=task_prefix
        )
    )


def swe_bench_trials(
    paths: PathsLike,
    *,
    universe: UniverseLike | None = None,
    system: SystemOption = None,
    benchmark: str = "swe-bench",
    task_prefix: bool | None = None,
) -> pd.DataFrame:
    """Trial-level frame (one row per system and universe instance); see :func:`read_swe_bench`.

    Columns: ``system, task, trial, success, benchmark, sample, file``.
    """
    return _trials(
        collect(paths, "swe-bench"),
        universe=universe,
        system=system,
        benchmark=benchmark,
        task_prefix=task_prefix,
    )


def read_universe(universe: UniverseLike) -> list[str]:
    """The instance ids of ``universe`` (a file or an iterable), in order, checked unique."""
    if isinstance(universe, (str, Path)):
        path = Path(universe)
        if not path.is_file():
            raise FileNotFoundError(f"universe {path}: no such file")
        name = path.name.lower()
        if name.endswith(".txt"):
            ids = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        elif name.endswith(".json"):
            doc = json.loads(path.read_text())
            if not isinstance(doc, list):
                raise ValueError(f"universe {path}: expected a JSON list of instance ids")
            ids = [as_label(v, path, f"item {i}", "instance id") for i, v in enumerate(doc)]
        else:
            from evalbayes.io.tables import read_table

            frame = read_table(path)
            if "instance_id" not in frame.columns:
                raise ValueError(
                    f"universe {path}: no 'instance_id' column (columns: {list(frame.columns)})"
                )
            ids = [str(v) for v in frame["instance_id"]]
    else:
        ids = [str(v) for v in universe]
    if not ids:
        raise ValueError("the universe is empty")
    seen = pd.Index(ids)
    if seen.has_duplicates:
        raise ValueError(f"the universe lists instance {seen[seen.duplicated()][0]!r} twice")
    return ids


def _trials(
    sources: list[Source],
    *,
    universe: UniverseLike | None = None,
    system: SystemOption = None,
    benchmark: str = "swe-bench",
    task_prefix: bool | None = None,
) -> pd.DataFrame:
    if universe is None:
        raise ValueError(
            "SWE-bench results list only the resolved instances: pass universe= (the ids of "
            "the evaluated split, as a list or a file) so that the unresolved ones count as "
            "failures"
        )
    ids = read_universe(universe)
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for src in sources:
        doc = src.doc if src.doc is not None else _load(src.path)
        resolved = _resolved(src.path, doc, set(ids))
        folder = src.path.parent
        default = folder.parent.name if folder.name == "results" else folder.name
        keys += mapping_keys(src.path, default)
        name = resolve_system(default, src.path, system)
        rows += [
            {
                "system": name,
                "sample": instance,
                "trial": 0,
                "success": int(instance in resolved),
                "benchmark": benchmark,
                "file": str(src.path),
            }
            for instance in ids
        ]
    check_mapping_used(system, keys)
    return finish_frame(rows, task_prefix=task_prefix)


def _load(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return json.load(fh)
    except json.JSONDecodeError as err:
        raise LogError(
            path, f"not valid JSON (truncated?): {err.msg} at line {err.lineno}"
        ) from None


def _resolved(path: Path, doc: Any, universe: set[str]) -> set[str]:
    if not isinstance(doc, Mapping):
        raise LogError(path, "not a SWE-bench results file (expected a JSON object)")
    key = "resolved" if isinstance(doc.get("resolved"), list) else "resolved_ids"
    values = doc.get(key)
    if not isinstance(values, list):
        raise LogError(path, "missing field: no 'resolved' or 'resolved_ids' list")
    resolved: set[str] = set()
    for i, value in enumerate(values):
        if not isinstance(value, str) or not value:
            raise LogError(path, f"{value!r} is not an instance id", f"{key}[{i}]")
        if value in resolved:
            raise LogError(path, f"duplicate instance id {value!r}", f"{key}[{i}]")
        if value not in universe:
            raise LogError(
                path,
                f"resolved instance {value!r} is not in the universe ({len(universe)} ids): "
                "wrong split or stale universe?",
                f"{key}[{i}]",
            )
        resolved.add(value)
    return resolved
