"""One way to render every result: a table, a dict, text and HTML.

:class:`Rendered` is a mixin for result classes. A result supplies :meth:`Rendered.to_frame`
(a :class:`pandas.DataFrame`, one row per record) and may name its settings (``ci_prob``,
``metric``, ``estimand``, ``approximate`` ...); the mixin derives from them

* :meth:`Rendered.to_dict`: ``{"result", "title", "settings", "records"}``, plain Python that
  :func:`json.dumps` accepts (NumPy scalars become Python numbers, NaN and infinities
  ``None``, arrays and tuples lists);
* ``str(result)``: a title line and the table as aligned text;
* ``_repr_html_``: the same as an HTML table for notebooks (Jupyter calls it), with every
  string escaped, so a system named ``<script>`` is shown, never run.

A frozen dataclass result gets a default :meth:`Rendered.to_frame` from its fields: scalars
become one row, nested results and mappings become prefixed columns, equal-shaped arrays
become one row per element. A class with its own readable ``__str__`` keeps it.

This module sits in the bottom layer: it imports nothing from evalbayes, and pandas only
when a table is built, so the frequentist estimators stay quick to import.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Rendered", "frame_html", "frame_text", "jsonable"]


def jsonable(value: Any) -> Any:
    """JSON-friendly copy: NumPy scalars to Python, NaN/inf to None, tuples and arrays to
    lists, mapping keys to strings; other objects (e.g. timestamps) to their ``str``."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(item) for item in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return str(value)


def frame_text(frame: pd.DataFrame) -> str:
    """The table as aligned text (every row and column; no index)."""
    if frame.empty:
        return "(no rows)"
    return str(frame.to_string(index=False))


def frame_html(frame: pd.DataFrame) -> str:
    """The table as HTML with cells and headers escaped."""
    return str(frame.to_html(index=False, escape=True, border=0, na_rep="-"))


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _flatten(f"{prefix}{f.name}" if not prefix else f"{prefix}_{f.name}",
                     getattr(value, f.name), out)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _flatten(f"{prefix}[{key}]", item, out)
    elif isinstance(value, tuple | list) and all(isinstance(v, str) for v in value):
        out[prefix] = "; ".join(value)
    elif isinstance(value, np.ndarray) and value.ndim == 0:
        out[prefix] = value.item()
    else:
        out[prefix] = value


def dataclass_frame(result: Any) -> pd.DataFrame:
    """Default table of a dataclass result: its (flattened) fields as columns.

    Scalars give one row; arrays of one shape give one row per element (scalars repeated).
    """
    import pandas as pd

    columns: dict[str, Any] = {}
    _flatten("", result, columns)
    shapes = {np.shape(v) for v in columns.values() if isinstance(v, np.ndarray)}
    if len(shapes) == 1:
        (shape,) = shapes
        size = int(np.prod(shape))
        rows = {
            name: (np.ravel(v) if isinstance(v, np.ndarray) else [v] * size)
            for name, v in columns.items()
        }
        return pd.DataFrame(rows)
    return pd.DataFrame([{k: (v.tolist() if isinstance(v, np.ndarray) else v)
                          for k, v in columns.items()}])


class Rendered:
    """Mixin giving a result ``to_frame``, ``to_dict``, ``str`` and ``_repr_html_``.

    Subclasses supply :meth:`to_frame` (a dataclass gets a default from its fields) and may
    list in ``_settings_fields`` the attributes that are settings of the result rather than
    records (they go to ``to_dict()["settings"]`` and the title line), or override
    :meth:`settings` and :meth:`title`.
    """

    _settings_fields: ClassVar[tuple[str, ...]] = ()

    def to_frame(self) -> pd.DataFrame:
        """The result as a table, one row per record."""
        if dataclasses.is_dataclass(self):
            return dataclass_frame(self)
        raise NotImplementedError(f"{type(self).__name__} must define to_frame()")

    def settings(self) -> dict[str, Any]:
        """The settings the result was computed with (JSON-serialisable values)."""
        return {name: jsonable(getattr(self, name)) for name in self._settings_fields}

    def title(self) -> str:
        """One line naming the result and its settings (metric, estimand, approximate ...)."""
        parts = []
        for name, value in self.settings().items():
            if name == "approximate":
                if value:
                    parts.append("APPROXIMATE")
                continue
            if value is not None:
                parts.append(f"{name} {value}")
        name = type(self).__name__
        return f"{name} ({', '.join(parts)})" if parts else name

    def to_dict(self) -> dict[str, Any]:
        """``{"result", "title", "settings", "records"}`` as plain, JSON-serialisable Python."""
        frame = self.to_frame()
        return {
            "result": type(self).__name__,
            "title": self.title(),
            "settings": self.settings(),
            "records": jsonable(frame.to_dict(orient="records")),
        }

    def to_text(self) -> str:
        """Title line and the table as aligned text."""
        return f"{self.title()}\n{frame_text(self.to_frame())}"

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        """HTML for notebooks: the title and the table, every string escaped."""
        return (
            f"<div><p><strong>{html.escape(self.title())}</strong></p>"
            f"{frame_html(self.to_frame())}</div>"
        )
