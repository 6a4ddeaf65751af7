"""Matplotlib figures for the report, rendered to PNG bytes.

Figures are drawn with the Agg backend inside :func:`report_style`, which turns off
mathtext (a system called ``a$b$`` must print as written, not be parsed as TeX) and fixes
the resolution, so the same inputs give the same image.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

import matplotlib as mpl
from matplotlib.figure import Figure as MplFigure

__all__ = ["DPI", "new_figure", "report_style", "to_png"]

DPI = 110


@contextmanager
def report_style() -> Iterator[None]:
    """rcParams for report figures: no mathtext, no TeX, fixed resolution."""
    with mpl.rc_context(
        {
            "text.parse_math": False,
            "text.usetex": False,
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "font.size": 9,
        }
    ):
        yield


def new_figure(width: float, height: float, nrows: int = 1, ncols: int = 1) -> tuple:
    """A figure not registered with pyplot (nothing to close, no global state) and its axes."""
    figure = MplFigure(figsize=(width, height), layout="constrained")
    axes = figure.subplots(nrows, ncols, squeeze=False)
    return figure, axes


def to_png(figure: MplFigure) -> bytes:
    """PNG bytes of ``figure`` (no timestamp or software metadata, so the bytes are stable)."""
    buffer = io.BytesIO()
    figure.savefig(
        buffer,
        format="png",
        dpi=DPI,
        bbox_inches="tight",
        metadata={"Software": None},
    )
    return buffer.getvalue()
