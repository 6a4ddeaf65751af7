"""Shared pieces of the log readers: errors, the success rule, system names, and the step from
a trial-level frame to :class:`~evalbayes.EvalData`.

Every log reader produces one *trial frame*: one row per attempt with the columns

``system``, ``task``, ``trial``, ``success`` (0/1), ``benchmark``, ``sample`` (the id in the
log), ``file`` (the log it came from), plus format-specific columns. :func:`build` turns it
into counts ``n`` (rows per cell) and ``c`` (sum of ``success``).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalbayes.data import EvalData

__all__ = [
    "LogError",
    "LogWarning",
    "build",
    "finish_frame",
    "report",
    "resolve_system",
    "success_of",
    "value_to_float",
]

Check = Literal["raise", "warn", "off"]
Errors = Literal["failure", "drop", "raise"]
SystemOption = str | Mapping[str, str] | None

#: inspect_ai's default string codes (``inspect_ai/scorer/_metric.py``): correct, incorrect,
#: partial, no answer.
SCORE_CODES: dict[str, float] = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_TRUE_WORDS = ("yes", "true")
_FALSE_WORDS = ("no", "false")
#: Absolute tolerance of the cross-checks against values the harness computed in floating
#: point (means of at most a few thousand 0/1 values: rounding error below 1e-12).
CHECK_ATOL = 1e-9
#: Leading columns of every trial frame.
_FRONT = ("system", "task", "trial", "success", "benchmark", "sample", "file")


class LogError(ValueError):
    """A log that cannot be read as it stands: names the file, the record and the rule."""

    def __init__(self, path: str | Path, message: str, record: str | None = None) -> None:
        self.path = str(path)
        self.record = record
        where = f"{path}: {record}: " if record else f"{path}: "
        super().__init__(where + message)


class LogWarning(UserWarning):
    """Something in a log that the reader accepted but the user should know."""


class OneTaskWarning(LogWarning):
    """The data hold one task: an interval over the task population rests on one task."""


def report(check: Check, path: str | Path, message: str, record: str | None = None) -> None:
    """Apply a cross-check policy: raise :class:`LogError`, warn, or stay silent."""
    if check == "raise":
        raise LogError(path, message + " (pass check='warn' or check='off' to read anyway)", record)
    if check == "warn":
        where = f"{path}: {record}: " if record else f"{path}: "
        warnings.warn(where + message, LogWarning, stacklevel=3)
    elif check != "off":
        raise ValueError(f"check must be 'raise', 'warn' or 'off', got {check!r}")


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> None:
    """Raise a :class:`ValueError` when an option is not one of its allowed values."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")


# ---------------------------------------------------------------------------- success rule
def value_to_float(
    value: Any, path: str | Path, record: str, value_key: str | None = None
) -> float:
    """Map a logged score to a float the way inspect_ai's ``value_to_float`` does.

    ``True``/``False`` -> 1/0; numbers as they are; the codes ``"C"`` 1, ``"I"`` 0, ``"P"`` 0.5,
    ``"N"`` 0; ``"yes"``/``"true"`` 1 and ``"no"``/``"false"`` 0 (any case); numeric strings
    as numbers. A dict-valued score needs ``value_key``. Anything else, and NaN, raise
    :class:`LogError` (inspect itself maps unknown strings to 0 with a warning; here nothing is
    coerced silently).
    """
    if isinstance(value, Mapping):
        if value_key is None:
            raise LogError(
                path,
                f"the score is a dict with keys {sorted(value)}; pass value_key= to pick one",
                record,
            )
        if value_key not in value:
            raise LogError(
                path, f"the score has no key {value_key!r} (keys: {sorted(value)})", record
            )
        value = value[value_key]
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        result = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if text in SCORE_CODES:
            return SCORE_CODES[text]
        if text.lower() in _TRUE_WORDS:
            return 1.0
        if text.lower() in _FALSE_WORDS:
            return 0.0
        try:
            result = float(text)
        except ValueError:
            raise LogError(
                path,
                f"score {value!r} cannot be read: expected C/I/P/N, yes/no, true/false or a number",
                record,
            ) from None
    else:
        raise LogError(
            path, f"score {value!r} ({type(value).__name__}) cannot be read as a number", record
        )
    if math.isnan(result):
        raise LogError(path, "score is NaN", record)
    return result


def success_of(value: float, threshold: float | None, path: str | Path, record: str) -> int:
    """The success rule: 0/1 as logged, or ``value >= threshold`` when a threshold is given.

    Without a threshold a value other than 0 or 1 (a partial score ``"P"`` = 0.5, a
    similarity 0.8) raises :class:`LogError`: counting it one way or the other is a modelling
    choice the user makes explicitly with ``threshold=``.
    """
    if threshold is None:
        if value in (0.0, 1.0):
            return int(value)
        raise LogError(
            path,
            f"score {value!r} is not binary (0/1); pass threshold= to count values >= threshold "
            "as successes (e.g. threshold=1.0: only full credit; threshold=0.5: partial credit "
            "too)",
            record,
        )
    if isinstance(threshold, bool) or not math.isfinite(threshold):
        # value >= nan is False for every value: a silent "all failures"
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    return int(value >= threshold)


def dig(node: Any, *keys: str) -> Any:
    """``node[k1][k2]...`` through mappings, or None where a level is missing or not a mapping
    (malformed headers give None, never an AttributeError)."""
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


# ---------------------------------------------------------------------------- names
def resolve_system(default: str, path: Path, system: SystemOption) -> str:
    """System name of one log: ``system`` as a string, a mapping, or the log's own name.

    A mapping is looked up by the file path (as given, resolved, or the file name) and then by
    the name read from the log; names it does not mention keep their default.
    """
    if system is None:
        return default
    if isinstance(system, str):
        return system
    if isinstance(system, Mapping):
        for key in (str(path), str(path.resolve()), path.name, default):
            if key in system:
                return str(system[key])
        return default
    raise TypeError(f"system must be a string, a mapping or None, got {type(system).__name__}")


def check_mapping_used(system: SystemOption, used: Iterable[str]) -> None:
    """A mapping key that matched no log is most likely a typo: say so."""
    if isinstance(system, Mapping):
        unused = sorted(set(system) - set(used))
        if unused:
            raise ValueError(
                f"system mapping keys {unused} match no log file or system name; "
                f"known: {sorted(set(used))}"
            )


def mapping_keys(path: Path, default: str) -> list[str]:
    """The keys under which :func:`resolve_system` looks a log up."""
    return [str(path), str(path.resolve()), path.name, default]


_NUM = re.compile(r"(\d+)")


def natural_key(label: str) -> tuple[Any, ...]:
    """Sort key putting ``"2"`` before ``"10"`` and ``"id15"`` before ``"id147"``."""
    parts = _NUM.split(label)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))


#: Characters no label may hold: NUL (cut short by C libraries, refused by HDF5) and lone
#: UTF-16 surrogates (from a JSON "\\ud800" escape or an undecodable file name; no UTF-8
#: file, NetCDF fit, CSV or HTML can store them).
BAD_LABEL = re.compile("[\x00\ud800-\udfff]")
LABEL_COLUMNS = ("system", "task", "task_id", "id", "sample", "benchmark")


def check_labels(frame: pd.DataFrame, path: str | Path, columns: Sequence[str] = LABEL_COLUMNS
                 ) -> None:
    """Refuse, when a file is read, a label holding NUL or a lone surrogate
    (:data:`BAD_LABEL`): :class:`LogError` naming the file, the row and the column. Before
    this check such a label failed only when the fit was saved, after the sampling."""
    for column in columns:
        if column not in frame.columns or pd.api.types.is_numeric_dtype(frame[column]):
            continue
        try:
            values = frame[column].tolist()
        except Exception as err:  # pyarrow (ArrowException): a text column that is not UTF-8
            raise LogError(path, f"{column}: a label is not valid UTF-8 text ({err})") from None
        bad = [isinstance(v, str) and BAD_LABEL.search(v) is not None for v in values]
        if any(bad):
            pos = bad.index(True)
            row = int(frame["_pos"].iloc[pos]) if "_pos" in frame.columns else pos
            label = values[pos]
            what = "a NUL character" if "\x00" in label else "a lone surrogate (not UTF-8)"
            raise LogError(path, f"{column} {label.encode('ascii', 'backslashreplace').decode()!r} "
                           f"holds {what}; no fit, table or report can store it: fix the label",
                           f"data row {row + 1}")


def as_label(value: Any, path: str | Path, record: str, field: str) -> str:
    """A sample/task id as a string label; missing or non-scalar ids raise."""
    if value is None or isinstance(value, (dict, list, bool)):
        raise LogError(path, f"{field} is missing or not a scalar id ({value!r})", record)
    if isinstance(value, float):
        if math.isnan(value):
            raise LogError(path, f"{field} is NaN", record)
        if value.is_integer():
            value = int(value)
    return str(value)


# ---------------------------------------------------------------------------- frame -> data
def finish_frame(
    rows: Sequence[Mapping[str, Any]] | pd.DataFrame,
    *,
    task_prefix: bool | None,
) -> pd.DataFrame:
    """Turn raw trial rows into the canonical trial frame.

    Task labels are the sample ids when every row comes from one benchmark and
    ``"<benchmark>/<id>"`` when several benchmarks are read together (``task_prefix=None``);
    ``True``/``False`` force either. Rows are ordered by system (first appearance), task
    (natural order) and trial. The same (system, benchmark, sample, trial) twice raises
    :class:`LogError` naming both files.
    """
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if len(frame) == 0:
        raise ValueError("the logs hold no trials")
    prefix = (
        frame["benchmark"].nunique(dropna=False) > 1 if task_prefix is None else bool(task_prefix)
    )
    if prefix:
        frame["task"] = frame["benchmark"].astype(str) + "/" + frame["sample"].astype(str)
    else:
        frame["task"] = frame["sample"].astype(str)
        per_task = frame.groupby("task", sort=False)["benchmark"].nunique()
        if (per_task > 1).any():
            task = per_task.index[per_task.to_numpy() > 1][0]
            names = sorted(frame.loc[frame["task"] == task, "benchmark"].unique())
            raise ValueError(
                f"task id {task!r} occurs in benchmarks {names}; pass task_prefix=True to "
                "label tasks '<benchmark>/<id>'"
            )
    key = ["system", "benchmark", "sample", "trial"]
    dup = frame.duplicated(key, keep=False)
    if dup.any():
        rows_dup = frame[dup]
        first = rows_dup.iloc[0]
        same = rows_dup[(rows_dup[key] == first[key]).all(axis=1)]
        files = sorted(set(same["file"].astype(str)))
        raise LogError(
            files[0],
            f"duplicate record: system {first['system']!r}, benchmark {first['benchmark']!r}, "
            f"sample {first['sample']!r}, trial {_plain(first['trial'])!r} appears "
            f"{len(same)} times (files: {files}); remove the duplicate or give the logs "
            "different system names (system={...})",
        )
    s_codes, _ = pd.factorize(frame["system"])
    order = np.lexsort((_natural_rank(frame["trial"]), _natural_rank(frame["task"]), s_codes))
    frame = frame.iloc[order].reset_index(drop=True)
    front = [c for c in _FRONT if c in frame.columns]
    return frame[front + [c for c in frame.columns if c not in front]]


def _natural_rank(values: pd.Series) -> np.ndarray:
    """Per row, the rank of its value in natural order (for a stable multi-key sort)."""
    codes, uniques = pd.factorize(values.astype(str))
    order = sorted(range(len(uniques)), key=lambda i: natural_key(str(uniques[i])))
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[order] = np.arange(len(uniques))
    return rank[codes]


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def build(frame: pd.DataFrame, *, task_coords: Sequence[str] = ("benchmark",)) -> EvalData:
    """Counts from a canonical trial frame: ``n`` = rows, ``c`` = successes per cell.

    Systems keep their order of first appearance and tasks their natural order; the columns in
    ``task_coords`` become task coordinates (each must be constant within a task).
    """
    s_idx, system_labels = pd.factorize(frame["system"])
    systems = [str(s) for s in system_labels]
    tasks = sorted((str(t) for t in pd.unique(frame["task"])), key=natural_key)
    t_idx = pd.Index(tasks).get_indexer(frame["task"].astype(str))
    n = np.zeros((len(systems), len(tasks)), dtype=np.int64)
    c = np.zeros_like(n)
    np.add.at(n, (s_idx, t_idx), 1)
    np.add.at(c, (s_idx, t_idx), frame["success"].to_numpy(dtype=np.int64))
    coords: dict[str, np.ndarray] = {}
    for name in task_coords:
        per_task = frame.groupby("task", sort=False)[name]
        varying = per_task.nunique(dropna=False) > 1
        if varying.any():
            raise ValueError(
                f"{name} varies within task {varying.index[varying.to_numpy()][0]!r}; it cannot "
                "be a task coordinate"
            )
        values = per_task.first().reindex(tasks)
        coords[name] = np.asarray(values.to_numpy(), dtype=object)
    return EvalData.from_arrays(n, c, systems=systems, tasks=tasks, task_coords=coords)
