"""Mapping tables of the design flags (``--factors``, ``--recipes``, ``--gold``): read through
:func:`evalbayes.io.read_table`, one label per system, errors naming the file and line
(:class:`~evalbayes.cli._common.CLIError`, exit 2). Nothing here imports PyMC."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalbayes.cli._common import CLIError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalbayes.data import EvalData

__all__ = ["mapped_labels", "read_columns", "table_line"]


def read_columns(path: str, columns: tuple[str, ...], labels: tuple[str, ...]) -> pd.DataFrame:
    """The table at ``path`` with ``columns``; ``labels`` are read as text as written."""
    from evalbayes.io import read_table

    frame = read_table(path, labels=labels)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise CLIError(f"{path}: no column {', '.join(map(repr, missing))}; expected columns "
                       f"{', '.join(columns)}, found {list(map(str, frame.columns))}")
    return frame


def table_line(path: str, pos: int) -> str:
    """'line N' of row ``pos`` of the table at ``path``."""
    from evalbayes.io._tables import line_of

    return line_of(path, pos)


def mapped_labels(path: str, frame: pd.DataFrame, data: EvalData, columns: tuple[str, ...]
                  ) -> dict[str, list[str]]:
    """Per column, one label per system of ``data`` (in data order) from a mapping table.

    Rows for systems absent from the data are ignored (the data may be a selection); a data
    system without a row, an empty label, or a system mapped twice to different labels is an
    error naming the file and line.
    """
    import pandas as pd

    seen: dict[str, tuple[tuple[str, ...], int]] = {}
    for pos, row in enumerate(frame[["system", *columns]].itertuples(index=False)):
        system, *values = row
        for column, value in zip(columns, values, strict=True):
            if pd.isna(value) or str(value).strip() == "":
                raise CLIError(f"{path} ({table_line(path, pos)}): empty {column} for system "
                               f"{system!r}")
        key, labels = str(system), tuple(str(v) for v in values)
        if key in seen and seen[key][0] != labels:
            raise CLIError(f"{path} ({table_line(path, pos)}): system {key!r} is mapped twice, to "
                           f"{seen[key][0]} and {labels} ({table_line(path, seen[key][1])})")
        seen.setdefault(key, (labels, pos))
    absent = [s for s in data.systems if s not in seen]
    if absent:
        raise CLIError(f"{path}: no row for system(s) {absent[:5]}"
                       f"{' ...' if len(absent) > 5 else ''} of the data")
    return {column: [seen[s][0][j] for s in data.systems] for j, column in enumerate(columns)}
