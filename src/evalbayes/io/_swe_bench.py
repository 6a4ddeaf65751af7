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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalbayes.io._common import LogError, as_label
from evalbayes.io._json import load_json
from evalbayes.io._protocol import LogOptions, Parsed, Reader, option
from evalbayes.io._sources import Source
from evalbayes.io._tables import read_table

__all__ = ["READER", "SweBenchOptions", "read_universe"]

UniverseLike = str | Path | Iterable[str]


@dataclass(frozen=True)
class SweBenchOptions(LogOptions):
    """SWE-bench ``results.json`` files with a ``resolved`` (SWE-bench/experiments) or
    ``resolved_ids`` (harness report) list, read against the universe of evaluated instance
    ids: every instance of the universe is one trial, one not listed as resolved is a
    failure, a resolved id outside the universe raises. The default system is the directory
    holding the file, skipping one named ``results``.
    """

    universe: UniverseLike | None = option(
        None,
        "required: the evaluated instance ids, as a list or a file (.txt one per line, .json "
        "a list, or a table with an instance_id column)",
    )
    benchmark: str = option("swe-bench", "the task coordinate 'benchmark'")


def _parse(src: Source, opts: SweBenchOptions) -> Parsed:
    if opts.universe is None:
        raise ValueError(
            "SWE-bench results list only the resolved instances: pass universe= (the ids of "
            "the evaluated split, as a list or a file) so that the unresolved ones count as "
            "failures"
        )
    ids = read_universe(opts.universe)
    doc = src.doc if src.doc is not None else load_json(src.path)
    resolved = _resolved(src.path, doc, set(ids))
    folder = src.path.parent
    default = folder.parent.name if folder.name == "results" else folder.name
    rows = [
        {
            "sample": instance,
            "trial": 0,
            "success": int(instance in resolved),
            "benchmark": opts.benchmark,
            "file": str(src.path),
        }
        for instance in ids
    ]
    return Parsed(rows, default)


READER = Reader(name="swe-bench", options=SweBenchOptions, parse=_parse)


def read_universe(universe: UniverseLike) -> list[str]:
    """The instance ids of ``universe`` (a file or an iterable), in order, checked unique."""
    if isinstance(universe, (str, Path)):
        path = Path(universe)
        if not path.is_file():
            raise FileNotFoundError(f"universe {path}: no such file")
        name = path.name.lower()
        if name.endswith(".txt"):
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as err:
                raise LogError(path, f"universe: not UTF-8 text ({err.reason})") from None
            ids = [line.strip() for line in text.splitlines() if line.strip()]
        elif name.endswith(".json"):
            doc = load_json(path)
            if not isinstance(doc, list):
                raise ValueError(f"universe {path}: expected a JSON list of instance ids")
            ids = [as_label(v, path, f"item {i}", "instance id") for i, v in enumerate(doc)]
        else:
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
