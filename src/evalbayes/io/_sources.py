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

import csv
import glob
import gzip
import io
import os
import re
import stat
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalbayes.io._common import LogError, LogWarning
from evalbayes.io._json import first_jsonl, load_json

__all__ = [
    "PathsLike",
    "Source",
    "check_regular",
    "collect",
    "csv_header",
    "examine",
    "expand",
    "gzip_check",
    "open_text",
    "sniff",
]

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
    why: str | None = None


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
        path = check_regular(item)
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
            raise FileNotFoundError(missing_path_message(path))
    seen: dict[Path, bool] = {}
    for path, explicit in out:
        key = path.resolve()
        seen[key] = seen.get(key, False) or explicit
    ordered = list(dict.fromkeys(p.resolve() for p, _ in out))
    originals = {p.resolve(): p for p, _ in out}
    return [(originals[key], seen[key]) for key in ordered]


def gzip_check(path: Path) -> None:
    """Refuse gzip data in a file not named ``.gz`` (pandas would fail on it obscurely)."""
    with path.open("rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b" and not path.name.lower().endswith(".gz"):
        raise LogError(path, "the file is gzip-compressed but not named .gz; rename it")


def open_text(path: Path) -> io.TextIOBase:
    """A CSV file as text (``.gz`` decompressed, a UTF-8 byte-order mark dropped)."""
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return path.open("r", encoding="utf-8-sig", newline="")


def csv_header(path: str | Path) -> tuple[list[str], str]:
    """``(column names, delimiter)`` of a CSV/TSV file.

    The delimiter is a tab for ``.tsv`` files; for ``.csv`` files a comma, or a semicolon,
    tab or ``|`` when the header holds no comma but one of those (such files are read).
    """
    path = Path(path)
    gzip_check(path)
    try:
        with open_text(path) as fh:
            first = fh.readline()
    except UnicodeDecodeError as err:
        raise LogError(path, f"not UTF-8 text ({err.reason})") from None
    except (OSError, EOFError) as err:
        raise LogError(path, f"cannot be read: truncated or corrupt ({err})") from None
    if not first.strip():
        raise LogError(path, "empty file: no header line")
    sep = "\t" if ".tsv" in path.name.lower() else ","
    if sep == "," and "," not in first:
        sep = next((d for d in (";", "\t", "|") if d in first), ",")
    try:
        header = next(csv.reader([first], delimiter=sep))
    except csv.Error as err:
        raise LogError(path, f"unreadable header ({err})", "line 1") from None
    return [h.strip() for h in header], sep


def _table_kind(columns: Iterable[str]) -> str | None:
    cols = set(columns)
    if ({"n", "trials"} & cols) and ({"c", "successes"} & cols):
        return "counts"
    if "success" in cols:
        return "trials"
    return None


def table_columns(path: Path) -> list[str]:
    """The column names of a table file (header or schema only)."""
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except Exception as err:  # pyarrow: ArrowInvalid, OSError for corrupt files
            raise LogError(
                path, f"not a readable Parquet file (corrupt or truncated?): {err}"
            ) from None
    return csv_header(path)[0]


#: Names of a trial table's outcome column (one row per attempt), the likeliest first.
OUTCOME_NAMES = (
    "success", "passed", "is_resolved", "resolved", "correct", "is_correct", "solved",
    "is_solved", "pass", "reward", "score", "outcome", "result", "c",
)  # fmt: skip
#: Texts of a 0/1 outcome (as the trials reader accepts them), lower case.
_BINARY = frozenset({"0", "1", "0.0", "1.0", "true", "false"})
#: Cells read when a hint looks at an outcome column's values (the error path only).
_HINT_ROWS = 200_000


def binary_columns(path: Path, names: Sequence[str]) -> list[tuple[str, int]]:
    """Which of ``names`` hold only 0/1 or boolean values: ``(name, number of empty cells)``.

    Reads at most ``_HINT_ROWS`` rows of those columns; used only to word an error, so an
    unreadable file gives no candidate rather than a second error.
    """
    import pandas as pd

    if not names:
        return []
    try:
        if path.name.lower().endswith((".parquet", ".pq")):
            frame = pd.read_parquet(path, columns=list(names)).head(_HINT_ROWS).astype(str)
            frame = frame.replace({"None": "", "nan": "", "<NA>": ""})
        else:
            sep = csv_header(path)[1]
            frame = pd.read_csv(
                path, sep=sep, usecols=list(names), dtype=str, keep_default_na=False,
                nrows=_HINT_ROWS,
            )  # fmt: skip
    except Exception:
        return []
    found = []
    for name in names:
        values = frame[name].str.strip().str.lower()
        empty = int((values == "").sum())
        if empty < len(values) and set(values[values != ""]) <= _BINARY:
            found.append((name, empty))
    return found


def explain_table(columns: list[str], path: Path | None = None) -> str:
    """Why a table's columns match neither table kind: what was expected, what was found.

    With the ``path`` of the file, a column with a trial table's outcome name
    (:data:`OUTCOME_NAMES`) whose values are all 0/1 or booleans is named with the options
    that read the file as a trial table.
    """
    found = f"found columns {columns[:12]}"
    lower = {c.lower(): c for c in columns}
    hints = []
    if any(c in lower and c not in columns for c in ("n", "c", "success", "trials", "successes")):
        hints.append("column names are case-sensitive: rename them to lower case or pass n=, c=")
    if ({"n", "trials"} & set(columns)) and not ({"c", "successes"} & set(columns)):
        hints.append("the counts column c (or successes) is missing")
    named = [name for name in OUTCOME_NAMES if name in columns]
    if path is not None and named and not ({"n", "trials"} & set(columns)):
        binary = binary_columns(path, named)
        if binary:
            name, empty = binary[0]
            others = [f"{n!r}" for n, _ in binary[1:]]
            hint = (
                f"it looks like a trial table (one row per attempt) whose outcome column "
                f"{name!r} holds only 0/1: read it with format='trials', success={name!r}"
            )
            if empty:
                hint += (
                    f", missing='failure' ({empty} empty outcomes; that option counts them as "
                    "failures, leave it out to have them refused)"
                )
            if others:
                hint += f" (other 0/1 columns: {', '.join(others)})"
            hints.append(hint)
    elif named:
        hints.append(
            f"for a trial table with outcome column {named[0]!r} pass "
            f"format='trials', success={named[0]!r}"
        )
    if len(columns) == 1 and any(d in columns[0] for d in (";", "\t", "|")):
        hints.append("one column only: is the delimiter something else than a comma?")
    tail = "; ".join(hints)
    return (
        "expected a counts table (system, task, n or trials, c or successes) or a trial table "
        f"(system, task, success); {found}" + (f"; {tail}" if tail else "")
    )


def classify_json(doc: Any) -> str | None:
    """The log kind of a parsed JSON document, or None when it is not a known log."""
    if isinstance(doc, dict):
        if "eval" in doc and "version" in doc:
            return "inspect"
        results = doc.get("results")
        if isinstance(results, list) and (
            not results
            or any(
                isinstance(r, dict) and ({"is_resolved", "trial_name", "task_id"} & set(r))
                for r in results[:50]
            )
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


#: Keys that mark a JSON document as an attempt at a log of some format, with what that
#: format needs (a file that has some but not all of them is refused, never skipped).
_NEAR: dict[str, tuple[frozenset[str], str]] = {
    "inspect": (
        frozenset({"eval", "version", "samples", "status"}),
        "an inspect_ai log needs the fields 'version' and 'eval' (and 'samples')",
    ),
    "helm": (
        frozenset({"instance_id", "stats", "train_trial_index"}),
        "a HELM per_instance_stats file is a list of records with 'instance_id', "
        "'train_trial_index' and 'stats'",
    ),
}


def near_miss(doc: Any) -> str | None:
    """For a JSON document of no known kind that looks like a damaged log: what it lacks."""
    if isinstance(doc, dict):
        keys = set(doc)
        fields, need = _NEAR["inspect"]
        if len(keys & fields) >= 2:
            return f"{need}; found keys {sorted(map(str, keys))[:12]}"
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        fields, need = _NEAR["helm"]
        if keys := set(doc[0]) & fields:
            return f"{need}; the first record has {sorted(map(str, doc[0]))[:12]}"
        del keys
    return None


def explain_json(doc: Any) -> str:
    """What a JSON document that is no known log holds, and what the formats expect."""
    if isinstance(doc, dict):
        found = f"a JSON object with keys {sorted(map(str, doc))[:12]}"
    elif isinstance(doc, list):
        first = doc[0] if doc else None
        inner = (
            f" whose first item has keys {sorted(map(str, first))[:12]}"
            if isinstance(first, dict)
            else ""
        )
        found = f"a JSON list of {len(doc)} items{inner}"
    else:
        found = f"a JSON {type(doc).__name__}"
    return (
        "expected an inspect_ai log ('version', 'eval'), a HELM per_instance_stats list "
        "('instance_id', 'stats'), a Terminal-Bench results.json ('results': trials with "
        "'task_id', 'trial_name', 'is_resolved') or a SWE-bench results.json ('resolved' or "
        f"'resolved_ids'); found {found}"
    )


Detector = Callable[[Path, Any], bool]


def examine(
    path: Path, explicit: bool = False, detectors: Mapping[str, Detector] | None = None
) -> Source:
    """Detect the kind of one file; for a file of no known kind, say what was found."""
    name = path.name.lower()
    if name.endswith(".eval"):
        return Source(path, "inspect", None, explicit)
    if name in HELM_COMPANIONS:
        return Source(path, "helm-companion", None, explicit)
    if name.endswith(TABLE_SUFFIXES):
        columns = table_columns(path)
        kind = _table_kind(columns)
        why = None if kind else explain_table(columns, path if explicit else None)
        return Source(path, kind, None, explicit, why)
    if name.endswith(JSONL_SUFFIXES):
        if name.startswith("samples_"):
            return Source(path, "lm-eval", None, explicit)
        first = first_jsonl(path)
        if isinstance(first, dict):
            if "doc_id" in first:
                return Source(path, "lm-eval", None, explicit)
            kind = _table_kind(first)
            if kind is None and {"id", "n", "c"} <= set(first):
                kind = "counts"
            if kind is not None:
                return Source(path, kind, None, explicit)
        found = (
            f"a first line with keys {sorted(map(str, first))[:12]}"
            if isinstance(first, dict)
            else f"a first line holding a JSON {type(first).__name__}"
        )
        why = (
            "expected lm-eval samples (lines with 'doc_id') or table rows ('n' and 'c', "
            f"'success', or 'id', 'n', 'c'); found {found}"
        )
        return Source(path, _detect(path, first, detectors), None, explicit, why)
    if name.endswith(".json"):
        with path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
        if _INSPECT_HEAD.match(head):
            # parsed once, by the reader (inspect logs can be large)
            return Source(path, "inspect", None, explicit)
        doc = load_json(path)
        kind = classify_json(doc) or _detect(path, doc, detectors)
        if kind is not None:
            return Source(path, kind, doc, explicit)
        damage = near_miss(doc)
        if damage is not None:
            return Source(path, "damaged", doc, explicit, damage)
        return Source(path, None, doc, explicit, explain_json(doc))
    if detectors:
        kind = _detect(path, None, detectors)
        if kind is not None:
            return Source(path, kind, None, explicit)
    return Source(path, None, None, explicit, f"no reader handles files named {path.name!r}")


def _detect(path: Path, doc: Any, detectors: Mapping[str, Detector] | None) -> str | None:
    for kind, detect in (detectors or {}).items():
        if detect(path, doc):
            return kind
    return None


def sniff(path: Path) -> tuple[str | None, Any]:
    """Detect the kind of one file: ``(kind, parsed JSON or None)``."""
    src = examine(path)
    return src.kind, src.doc


_BUILTIN_KINDS = ("inspect", "lm-eval", "helm", "terminal-bench", "swe-bench", "counts", "trials")
#: Files in a directory that could be data: one of no known kind is reported in a warning.
_DATA_SUFFIXES = (".json", ".eval", *TABLE_SUFFIXES, *JSONL_SUFFIXES)


def collect(
    paths: PathsLike, fmt: str, detectors: Mapping[str, Detector] | None = None
) -> list[Source]:
    """Expand ``paths`` and keep the files of format ``fmt`` (``"auto"``: the one format found).

    ``detectors`` maps the names of formats that this module does not know to their
    ``detect(path, doc)`` functions.

    Raises
    ------
    ValueError
        A file named explicitly is not a log (auto), a file in a directory looks like a
        damaged log, the inputs mix formats (auto), or no file of the format was found.
    """
    data_kinds = (*_BUILTIN_KINDS, *(detectors or {}))
    sources: list[Source] = []
    for path, explicit in expand(paths):
        if explicit and fmt != "auto":
            sources.append(Source(path, fmt, None, True))
            continue
        src = examine(path, explicit, detectors)
        if src.kind == "terminal-bench-trial" and explicit:
            src = Source(path, "terminal-bench", src.doc, explicit)
        sources.append(src)
    damaged = [s for s in sources if s.kind == "damaged"]
    if damaged:
        raise LogError(
            damaged[0].path,
            f"looks like a log but cannot be read: {damaged[0].why}; fix the file or move it "
            "out of the directory",
        )
    if fmt == "auto":
        unknown = [s for s in sources if s.explicit and s.kind not in data_kinds]
        if unknown:
            src = unknown[0]
            hint = (
                "an lm-eval results file: pass its samples_*.jsonl (or the directory)"
                if src.kind == "lm-eval-results"
                else f"{src.why}; pass format= to name its format"
            )
            raise ValueError(f"{src.path}: cannot detect a log format ({hint})")
    run_level = any(s.kind == "terminal-bench" for s in sources)
    data: list[Source] = []
    for src in sources:
        kind = src.kind
        if kind == "terminal-bench-trial" and not run_level:
            kind = "terminal-bench"
        if kind in data_kinds and (fmt == "auto" or kind == fmt):
            data.append(Source(src.path, kind, src.doc, src.explicit))
    if not data:
        what = "log" if fmt == "auto" else f"{fmt} log"
        whys = [f"{s.path}: {s.why}" for s in sources if s.why][:3]
        detail = f"; {' | '.join(whys)}" if whys else ""
        raise ValueError(f"no {what} found in {[str(s.path) for s in sources][:5]}{detail}")
    skipped = [
        str(s.path)
        for s in sources
        if s.kind is None and s.path.name.lower().endswith(_DATA_SUFFIXES)
    ]
    if skipped:
        warnings.warn(
            f"skipped {len(skipped)} files that are not logs of a known format: {skipped[:10]}",
            LogWarning,
            stacklevel=4,
        )
    kinds = list(dict.fromkeys(s.kind for s in data))
    if len(kinds) > 1:
        examples = {k: str(next(s.path for s in data if s.kind == k)) for k in kinds}
        raise ValueError(
            f"the inputs mix formats {examples}; read one format at a time (format=...)"
        )
    return data


def not_regular_message(path: str | Path) -> str | None:
    """Why ``path`` is not a file that can be read to its end, or None if it is one (or a
    folder, or missing): a FIFO, socket or device would block or never end."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
    return f"{path}: {kind}, not a regular file; reading it could block forever: give a file"


def check_regular(path: str | Path) -> Path:
    """``path`` if it is not a FIFO, socket or device (:func:`not_regular_message`)."""
    message = not_regular_message(path)
    if message is not None:
        raise ValueError(message)
    return Path(path)


def missing_path_message(path: Path) -> str:
    """Why ``path`` cannot be opened: missing, a broken symbolic link, or a symlink loop."""
    if path.is_symlink():
        try:
            path.resolve(strict=True)
        except RuntimeError:
            return f"{path}: a symbolic link loop (the link points back to itself)"
        except OSError:
            return f"{path}: a broken symbolic link (its target {os.readlink(path)!r} is missing)"
    return f"{path}: no such file or directory"
