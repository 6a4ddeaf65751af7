"""Tidy tables on disk: counts (``system, task, n, c``) and trials (``system, task, success``).

CSV (optionally gzip-compressed), Parquet and JSON Lines are read by extension.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from evalbayes.data import EvalData

__all__ = ["read_counts", "read_table", "read_trials"]

_CSV = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
_PARQUET = (".parquet", ".pq")
_JSONL = (".jsonl", ".ndjson", ".jsonl.gz")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV/TSV (optionally ``.gz``), Parquet or JSON Lines file into a DataFrame."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    name = path.name.lower()
    if name.endswith(_CSV):
        sep = "\t" if ".tsv" in name else ","
        frame = pd.read_csv(path, sep=sep)
    elif name.endswith(_PARQUET):
        frame = pd.read_parquet(path)
    elif name.endswith(_JSONL):
        try:
            frame = pd.read_json(path, lines=True)
        except ValueError as err:
            raise ValueError(f"{path}: not valid JSON Lines ({err})") from err
    else:
        raise ValueError(
            f"{path}: unknown table format; expected one of {_CSV + _PARQUET + _JSONL}"
        )
    if len(frame) == 0:
        raise ValueError(f"{path}: empty table")
    return frame


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
    frame = read_table(path)
    frame = _single_system(frame, path, system_name, kwargs)
    try:
        return EvalData.from_frame(frame, **kwargs)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


def read_trials(path: str | Path, *, system_name: str | None = None, **kwargs: Any) -> EvalData:
    """Read a trial-level table (``system, task, success``) into :class:`EvalData`."""
    path = Path(path)
    frame = read_table(path)
    frame = _single_system(frame, path, system_name, kwargs)
    try:
        return EvalData.from_trials(frame, **kwargs)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err


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
