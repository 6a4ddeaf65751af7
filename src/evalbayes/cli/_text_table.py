"""A text table of plain columns, written the way ``DataFrame.to_string(index=False,
float_format=...)`` writes it, without pandas' per-cell formatting machinery.

``evalbayes compare`` of 123 systems prints 15,006 rows x 15 columns: pandas' formatter
took 1.5-2 CPU-s for it (measured with cProfile on SWE-bench Verified), most of it measuring
and justifying each cell through several layers of generic code. Here every column is
formatted once into strings (floats by the caller's format, ``NaN`` where missing; integers,
booleans and strings as they print), a numeric column's header given a leading space (room
for a sign), and each cell right-justified to its column's width (the longest of its cells
and its header), columns joined by one space: pandas' layout for these dtypes (tested
against ``to_string`` on the commands' own tables and random frames). Any other dtype, a
text cell that pandas would escape (tab, newline) or a non-string in a text column gives
``None``: the caller falls back to pandas.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["plain_text_table", "text_table"]


def _cells(values: Any, dtype: Any, float_format: Callable[[float], str],
           label: Callable[[str], str] | None = None) -> list[str] | None:
    """A column's cells as text (text cells through ``label``, once per distinct value),
    or None where its dtype is not a plain one."""
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return ["True" if v else "False" for v in values.tolist()]
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return [str(v) for v in values.tolist()]
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        return ["NaN" if math.isnan(v) else float_format(v) for v in values.tolist()]
    if str(dtype) not in ("str", "string"):
        return None  # object columns print None and NaN apart, and other types their way
    out = []
    shown: dict[str, str] = {}
    for v in values.tolist():
        if isinstance(v, str):
            if label is not None:
                v = shown[v] if v in shown else shown.setdefault(v, label(v))
            if "\t" in v or "\r" in v or "\n" in v:
                return None  # pandas escapes these
            out.append(v)
        elif isinstance(v, float) and math.isnan(v):
            out.append("NaN")
        else:
            return None
    return out


def _is_numeric(dtype: Any) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


def plain_text_table(frame: Any, float_format: Callable[[float], str],
                     label: Callable[[str], str] | None = None) -> str | None:
    """``frame.to_string(index=False, float_format=float_format)`` for columns of floats,
    integers, booleans and strings (each text cell through ``label`` first, where given);
    None for anything else (or an empty frame)."""
    if len(frame) == 0 or len(frame.columns) == 0:
        return None
    if not all(isinstance(name, str) for name in frame.columns):
        return None
    columns = []
    for name in frame.columns:
        column = frame[name]
        cells = _cells(column.to_numpy(), column.dtype, float_format, label)
        if cells is None:
            return None
        header = " " + name if _is_numeric(column.dtype) else name  # pandas' sign room
        width = max(len(header), max(map(len, cells)))
        columns.append([header.rjust(width)] + [c.rjust(width) for c in cells])
    return "\n".join(" ".join(row) for row in zip(*columns, strict=True))


def text_table(frame: pd.DataFrame, label: Callable[[str], str] | None = None) -> str:
    """``frame`` as the commands print it (no index, floats to 4 decimals, each text cell
    through ``label`` where given): by :func:`plain_text_table` where its columns are
    plain, else by pandas."""
    text = plain_text_table(frame, float_format="{:.4f}".format, label=label)
    if text is not None:
        return text
    if label is not None:
        frame = frame.copy()
        for column in frame.columns:
            if not pd.api.types.is_numeric_dtype(frame[column]):
                frame[column] = [label(v) if isinstance(v, str) else v for v in frame[column]]
    with pd.option_context("display.width", 200, "display.max_columns", 50,
                           "display.max_rows", 500):
        return frame.to_string(index=False, float_format=lambda v: f"{v:.4f}")
