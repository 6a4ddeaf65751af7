"""Tidy tables on disk: counts (``system, task, n, c``) and trials (``system, task, success``).

CSV/TSV (optionally gzip-compressed), Parquet and JSON Lines are read and written by
extension. System and task labels are read as text (a task ``007`` stays ``"007"``); JSON
Lines values keep their JSON types (no guessing of numbers or dates from strings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io._common import SystemOption, resolve_system

__all__ = ["read_counts", "read_table", "read_table_files", "read_trials", "write_table"]

_CSV = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
_PARQUET = (".parquet", ".pq")
_JSONL = (".jsonl", ".ndjson", ".jsonl.gz")
_LABELS = ("system", "task", "task_id", "id")


def read_table(path: str | Path, *, labels: Sequence[str] = _LABELS) -> pd.DataFrame:
    """Read a CSV/TSV (optionally ``.gz``), Parquet or JSON Lines file into a DataFrame.

    Parameters
    ----------
    path : str or Path
        The file; the format follows the extension.
    labels : sequence of str
        CSV columns read as text rather than numbers (default: the usual system and task
        column names; names absent from the file are ignored).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    name = path.name.lower()
    if name.endswith(_CSV):
        frame = _read_csv(path, "\t" if ".tsv" in name else ",", labels)
    elif name.endswith(_PARQUET):
        frame = pd.read_parquet(path)
    elif name.endswith(_JSONL):
        frame = _read_jsonl(path)
    else:
        raise ValueError(
            f"{path}: unknown table format; expected one of {_CSV + _PARQUET + _JSONL}"
        )
    if len(frame) == 0:
        raise ValueError(f"{path}: empty table")
    return frame


def _read_csv(path: Path, sep: str, labels: Sequence[str]) -> pd.DataFrame:
    """CSV with the label columns as text.

    ``dtype=str`` up front makes pandas' parser about 3x slower on a million rows, so the file
    is parsed as usual and only label columns that came out as numbers are read again as text
    (a task ``007`` stays ``"007"``).
    """
    frame = pd.read_csv(path, sep=sep)
    numeric = [
        col
        for col in labels
        if col in frame.columns and not pd.api.types.is_string_dtype(frame[col].dtype)
    ]
    if numeric:
        text = pd.read_csv(path, sep=sep, usecols=numeric, dtype=dict.fromkeys(numeric, str))
        for col in numeric:
            frame[col] = text[col]
    return frame


def _read_jsonl(path: Path) -> pd.DataFrame:
    """JSON Lines with the types JSON gives: pyarrow's reader when installed, else pandas.

    pyarrow (about 7x faster on a million rows, see ``benchmarks/io.md``) infers timestamps
    from ISO-date strings; such columns are read again as text, so values keep their JSON
    type. A column mixing types (``1`` and ``"t1"``) falls back to pandas.
    """
    try:
        import pyarrow as pa
        import pyarrow.json as pj
    except ImportError:
        pa = None
    if pa is not None:
        try:
            table = pj.read_json(path)
            dated = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
            if dated:
                schema = pa.schema([(name, pa.string()) for name in dated])
                options = pj.ParseOptions(explicit_schema=schema)
                table = pj.read_json(path, parse_options=options).select(table.schema.names)
            return table.to_pandas()
        except pa.ArrowInvalid:
            pass
    try:
        return pd.read_json(path, lines=True, dtype=False)
    except ValueError as err:
        raise ValueError(f"{path}: not valid JSON Lines ({err})") from err


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` as CSV/TSV (``.gz`` compressed by name), Parquet or JSON Lines.

    Parquet needs one type per column: an object column mixing types (e.g. inspect scores
    ``"C"`` and ``0.5``) is written as text there.
    """
    path = Path(path)
    name = path.name.lower()
    if name.endswith(_CSV):
        frame.to_csv(path, sep="\t" if ".tsv" in name else ",", index=False)
    elif name.endswith(_PARQUET):
        _parquet_safe(frame).to_parquet(path, index=False)
    elif name.endswith(_JSONL):
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        raise ValueError(
            f"{path}: unknown table format; expected one of {_CSV + _PARQUET + _JSONL}"
        )
    return path


def _parquet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object:
            types = {type(v) for v in out[col] if v is not None and v == v}
            if len(types) > 1:
                out[col] = [None if v is None or v != v else str(v) for v in out[col]]
    return out


def read_counts(path: str | Path, *, system_name: str | None = None, **kwargs: Any) -> EvalData:
    """Read a tidy counts table (``system, task, n, c``) into :class:`EvalData`.

    Parameters
    ----------
    path : str or Path
        CSV/TSV (optionally gzip), Parquet or JSON Lines. An ``{"id", "n", "c"}`` JSONL file
        (one system) is accepted: ``id`` is the task and the system is named by ``system_name``
        (default: the file stem).
    system_name : str, optional
        System name for single-system files without a system column.
    **kwargs
        Passed to :meth:`EvalData.from_frame` (column names, coordinates).
    """
    path = Path(path)
    frame = read_table(path, labels=_label_columns(kwargs))
    frame = _single_system(frame, path, system_name, kwargs)
    try:
        return EvalData.from_frame(frame, **kwargs)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


def read_trials(path: str | Path, *, system_name: str | None = None, **kwargs: Any) -> EvalData:
    """Read a trial-level table (``system, task, success``) into :class:`EvalData`.

    ``**kwargs`` go to :meth:`EvalData.from_trials` (column names, ``missing=``, coordinates).
    """
    path = Path(path)
    frame = read_table(path, labels=_label_columns(kwargs))
    frame = _single_system(frame, path, system_name, kwargs)
    try:
        return EvalData.from_trials(frame, **kwargs)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


def read_table_files(
    paths: Sequence[str | Path],
    level: str,
    *,
    system: SystemOption = None,
    system_column: str = "system",
    **kwargs: Any,
) -> EvalData:
    """Read one or more counts (``level="counts"``) or trial tables into one EvalData.

    ``system`` names the system of files without a system column (default: the file stem) or,
    as a mapping, renames systems (by system name, or by file for files without the column).
    ``system_column`` names the system column; the other options go to
    :meth:`EvalData.from_frame` / :meth:`EvalData.from_trials`. A (system, task) pair in two
    counts files raises, naming both files.
    """
    frame = table_frame(paths, level, system=system, system_column=system_column, **kwargs)
    build = EvalData.from_frame if level == "counts" else EvalData.from_trials
    try:
        return build(frame, system=system_column, **kwargs)
    except ValueError as err:
        where = str(paths[0]) if len(paths) == 1 else f"{len(paths)} files"
        raise ValueError(f"{where}: {err}") from err


def table_frame(
    paths: Sequence[str | Path],
    level: str,
    *,
    system: SystemOption = None,
    system_column: str = "system",
    **kwargs: Any,
) -> pd.DataFrame:
    """The tables of ``paths`` concatenated, with system names resolved (see above)."""
    kwargs = dict(kwargs, system=system_column)
    frames = []
    origin: dict[tuple[str, str], str] = {}
    for item in paths:
        path = Path(item)
        frame = read_table(path, labels=_label_columns(kwargs))
        if system_column not in frame.columns:
            name = resolve_system(path.name.split(".")[0], path, system)
            frame = frame.assign(**{system_column: name})
        elif isinstance(system, str):
            raise ValueError(
                f"{path}: the table has a {system_column!r} column; pass a mapping to rename "
                "systems, not one name"
            )
        elif isinstance(system, Mapping):
            frame[system_column] = [
                str(system.get(str(s), s)) for s in frame[system_column].astype(str)
            ]
        frame = _single_system(frame, path, None, kwargs)
        if level == "counts" and len(paths) > 1:
            task_col = kwargs.get("task") or next(
                (c for c in ("task", "task_id") if c in frame.columns), None
            )
            if task_col is not None:
                for key in zip(
                    frame[system_column].astype(str), frame[task_col].astype(str), strict=True
                ):
                    if key in origin and origin[key] != str(path):
                        raise ValueError(
                            f"(system {key[0]!r}, task {key[1]!r}) is in both {origin[key]} and "
                            f"{path}"
                        )
                    origin.setdefault(key, str(path))
        frames.append(frame)
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _label_columns(kwargs: Mapping[str, Any]) -> list[str]:
    names = [kwargs.get("system") or "system", kwargs.get("task"), *_LABELS]
    return list(dict.fromkeys(n for n in names if n))


def _single_system(
    frame: pd.DataFrame, path: Path, system_name: str | None, kwargs: dict[str, Any]
) -> pd.DataFrame:
    """Add a system column to single-system files and map ``id`` to the task."""
    system_col = kwargs.get("system", "system")
    if system_col not in frame.columns:
        frame = frame.assign(**{system_col: system_name or path.name.split(".")[0]})
    elif system_name is not None:
        raise ValueError(f"{path}: the table has a system column; do not pass system_name=")
    if "task" not in frame.columns and "task_id" not in frame.columns and "id" in frame.columns:
        if "task" not in kwargs:
            frame = frame.rename(columns={"id": "task"})
    return frame
