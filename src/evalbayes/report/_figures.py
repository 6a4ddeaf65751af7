"""Matplotlib figures for the report, rendered to PNG bytes.

Figures are drawn with the Agg backend inside :func:`report_style`, which turns off
mathtext (a system called ``a$b$`` must print as written, not be parsed as TeX) and fixes
the resolution, so the same inputs give the same image.

Each figure is drawn once where it can be: its constrained layout fits the axes, labels and
legends inside the figure, and :func:`to_png` crops that one Agg draw to the figure's tight
bounding box. (``savefig(bbox_inches="tight")`` made three passes over every text: a layout
draw with rendering turned off, the tight box, and the image; text layout is most of a
report figure's cost.)
"""

from __future__ import annotations

import io
import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure
from matplotlib.image import imsave
from matplotlib.transforms import Bbox

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
    """PNG bytes of ``figure`` at :data:`DPI`, framed as ``savefig(bbox_inches="tight")``
    frames it (every artist, plus ``savefig.pad_inches``), from one Agg draw where it can.

    The figure is drawn once (its constrained layout runs inside that draw) and its tight
    bounding box is measured on that draw (text sizes are cached by then). When the box lies
    on the canvas, the PNG is the drawn canvas cropped to it (the pad cut short at the
    canvas's edges, where the layout keeps a pad of its own); when something sticks out (a
    label wider than its panel, or a figure too small for its decorations), the figure is
    drawn a second time on a canvas of the box's size, as ``savefig`` does. No timestamp or
    software metadata, so the bytes are stable.
    """
    figure.set_dpi(DPI)
    canvas = FigureCanvasAgg(figure)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=COLLAPSED)  # the box below handles it
        canvas.draw()
    tight = figure.get_tightbbox(canvas.get_renderer())
    box = tight.padded(mpl.rcParams["savefig.pad_inches"])
    width, height = figure.get_size_inches()
    slack = 0.5 / DPI  # half a pixel
    if (tight.x0 < -slack or tight.y0 < -slack or tight.x1 > width + slack
            or tight.y1 > height + slack):
        return _redrawn_png(figure, box)
    # on the canvas: crop to the padded box (the pad cut short at the canvas's edges, where
    # the layout's own pad already is)
    pixels = np.asarray(canvas.buffer_rgba())
    rows, columns = pixels.shape[:2]
    left, right = max(math.floor(box.x0 * DPI), 0), min(math.ceil(box.x1 * DPI), columns)
    top = max(rows - math.ceil(box.y1 * DPI), 0)
    bottom = min(rows - math.floor(box.y0 * DPI), rows)
    buffer = io.BytesIO()
    imsave(buffer, pixels[top:bottom, left:right], format="png", origin="upper", dpi=DPI,
           metadata=NO_SOFTWARE)
    return buffer.getvalue()


#: PNG metadata: no software key (matplotlib's version would change the bytes).
NO_SOFTWARE: dict[str, Any] = {"Software": None}

#: The start of matplotlib's warning when the constrained layout gives up.
COLLAPSED = "constrained_layout not applied"


def _redrawn_png(figure: MplFigure, box: Bbox) -> bytes:
    """PNG bytes of ``figure`` on a canvas of ``box`` (inches), the layout of the first draw
    kept (no layout engine: one more draw, where ``savefig`` with a layout engine makes
    two)."""
    engine = figure.get_layout_engine()
    figure.set_layout_engine(None)  # None, not "none": that leaves a placeholder engine
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", dpi=DPI, bbox_inches=box, metadata=NO_SOFTWARE)
    finally:
        figure.set_layout_engine(engine)
    return buffer.getvalue()
