"""Finding log files: paths, directories and globs, and telling the formats apart.

A directory is walked recursively; a path with ``*``, ``?`` or ``[`` that is not an existing
file is a glob (``**`` recurses). Inside directories, files that are not logs are skipped:
companions that carry no per-item results (HELM ``run_spec.json``, ``stats.json``,
``scenario_state.json``; lm-eval ``results_*.json``, which the lm-eval reader opens next to
its samples file; Terminal-Bench per-trial ``results.json`` copies when the run-level file is
there too) and files whose content is not a known log. A file named explicitly must be a
log; a JSON file that cannot be parsed raises, wherever it is.
"""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalbayes.io._common import LogError

__all__ = ["PathsLike", "Source", "collect", "expand", "sniff"]

PathsLike = str | Path | Iterable[str | Path]

TABLE_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz")
#: HELM run-directory files that hold no per-instance results (skipped unparsed).
HELM_COMPANIONS = frozenset(
    {
        "run_spec.json",
        "stats.json",
        "scenario.json",
        "scenario_state.json",
        "instances.json",
        "display_predictions.json",
        "display_requests.json",
        "costs.json",
    }
)
#: How inspect_ai starts a JSON log (``EvalLog`` fields in order: version, status, eval).
_INSPECT_HEAD = re.compile(r'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
#: Formats a directory may hold besides the data files themselves.
COMPANION_KINDS = frozenset({"lm-eval-results", "terminal-bench-trial", "helm-companion"})


@dataclass(frozen=True)
class Source:
    """One input file, its detected kind, and its parsed JSON (when detection parsed it)."""

    path: Path
    kind: str | None
    doc: Any = None
    explicit: bool = False


def expand(paths: PathsLike) -> list[tuple[Path, bool]]:
    """Files named by ``paths``: ``(path, explicit)``; directories and globs are expanded.

    ``explicit`` is True for a file named directly (it must be a log) and False for files
    found in a directory or by a glob.
    """
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not items:
        raise ValueError("no paths given")
    out: list[tuple[Path, bool]] = []
    for item in items:
        path = Path(item)
        if path.is_file():
            out.append((path, True))
        elif path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file())
            if not files:
                raise FileNotFoundError(f"{path}: the directory holds no files")
            out.extend((p, False) for p in files)
        elif any(ch in str(item) for ch in "*?["):
            matches = sorted(Path(m) for m in glob.glob(str(item), recursive=True))
            files = [m for m in matches if m.is_file()]
            for m in matches:
                if m.is_dir():
                    files.extend(sorted(p for p in m.rglob("*") if p.is_file()))
            if not files:
                raise FileNotFoundError(f"{item}: the pattern matches no file")
            out.extend((p, False) for p in files)
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    seen: dict[Path, bool] = {}
    for path, explicit in out:
        key = path.resolve()
        seen[key] = seen.get(key, False) or explicit
    ordered = list(dict.fromkeys(p.resolve() for p, _ in out))
    originals = {p.resolve(): p for p, _ in out}
    return [(originals[key], seen[key]) for key in ordered]


def _load_json(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return json.load(fh)
    except json.JSONDecodeError as err:
        raise LogError(
            path, f"not valid JSON (truncated or corrupt?): {err.msg} at line {err.lineno}"
        ) from None
    except UnicodeDecodeError as err:
        raise LogError(path, f"not valid JSON text ({err})") from None


def _table_kind(columns: Iterable[str]) -> str | None:
    cols = set(columns)
    if ({"n", "trials"} & cols) and ({"c", "successes"} & cols):
        return "counts"
    if "success" in cols:
        return "trials"
    return None


def _first_json_line(path: Path) -> Any:
    import gzip

    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                try:
                    return json.loads(line)
                except json.JSONDecodeError as err:
                    raise LogError(path, f"line 1 is not valid JSON: {err.msg}") from None
    raise LogError(path, "empty JSON Lines file")


def classify_json(doc: Any) -> str | None:
    """The log kind of a parsed JSON document, or None when it is not a known log."""
    if isinstance(doc, dict):
        if "eval" in doc and "version" in doc:
            return "inspect"
        results = doc.get("results")
        if isinstance(results, list) and (
            not results or (isinstance(results[0], dict) and "is_resolved" in results[0])
        ):
            return "terminal-bench"
        if "trial_name" in doc and "is_resolved" in doc:
            return "terminal-bench-trial"
        if isinstance(doc.get("resolved"), list) or isinstance(doc.get("resolved_ids"), list):
            return "swe-bench"
        if isinstance(results, dict) and ("configs" in doc or "versions" in doc):
            return "lm-eval-results"
        return None
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        if "instance_id" in doc[0] and "stats" in doc[0]:
            return "helm"
    return None


def sniff(path: Path) -> tuple[str | None, Any]:
    """Detect the kind of one file: ``(kind, parsed JSON or None)``."""
    name = path.name.lower()
    if name.endswith(".eval"):
        return "inspect", None
    if name in HELM_COMPANIONS:
        return "helm-companion", None
    if name.endswith(TABLE_SUFFIXES):
        if name.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            columns = pq.read_schema(path).names
        else:
            sep = "\t" if ".tsv" in name else ","
            columns = list(pd.read_csv(path, sep=sep, nrows=0).columns)
        return _table_kind(columns), None
    if name.endswith(JSONL_SUFFIXES):
        if name.startswith("samples_"):
            return "lm-eval", None
        first = _first_json_line(path)
        if isinstance(first, dict):
            if "doc_id" in first:
                return "lm-eval", None
            kind = _table_kind(first)
            if kind is None and {"id", "n", "c"} <= set(first):
                kind = "counts"
            return kind, None
        return None, None
    if name.endswith(".json"):
        with path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
        if _INSPECT_HEAD.match(head):
            return "inspect", None  # parsed once, by the reader (inspect logs can be large)
        doc = _load_json(path)
        return classify_json(doc), doc
    return None, None


_DATA_KINDS = ("inspect", "lm-eval", "helm", "terminal-bench", "swe-bench", "counts", "trials")


def collect(paths: PathsLike, fmt: str) -> list[Source]:
    """Expand ``paths`` and keep the files of format ``fmt`` (``"auto"``: the one format found).

    Raises
    ------
    ValueError
        A file named explicitly is not a log (auto) or the inputs mix formats (auto), or no
        file of the format was found.
    """
    sources: list[Source] = []
    for path, explicit in expand(paths):
        if explicit and fmt != "auto":
            sources.append(Source(path, fmt, None, True))
            continue
        kind, doc = sniff(path)
        if kind == "terminal-bench-trial" and explicit:
            kind = "terminal-bench"
        sources.append(Source(path, kind, doc, explicit))
    if fmt == "auto":
        unknown = [s.path for s in sources if s.explicit and s.kind not in _DATA_KINDS]
        if unknown:
            kind = next(s.kind for s in sources if s.path == unknown[0])
            hint = (
                "an lm-eval results file: pass its samples_*.jsonl (or the directory)"
                if kind == "lm-eval-results"
                else "pass format= to name its format"
            )
            raise ValueError(f"{unknown[0]}: cannot detect a log format ({hint})")
    run_level = any(s.kind == "terminal-bench" for s in sources)
    data: list[Source] = []
    for src in sources:
        kind = src.kind
        if kind == "terminal-bench-trial" and not run_level:
            kind = "terminal-bench"
        if kind in _DATA_KINDS and (fmt == "auto" or kind == fmt):
            data.append(Source(src.path, kind, src.doc, src.explicit))
    if not data:
        what = "log" if fmt == "auto" else f"{fmt} log"
        raise ValueError(f"no {what} found in {[str(s.path) for s in sources][:5]}")
    kinds = list(dict.fromkeys(s.kind for s in data))
    if len(kinds) > 1:
        examples = {k: str(next(s.path for s in data if s.kind == k)) for k in kinds}
        raise ValueError(
            f"the inputs mix formats {examples}; read one format at a time (format=...)"
        )
    return data
