"""Matplotlib figures for the report, rendered to PNG bytes.

Figures are drawn with the Agg backend inside :func:`report_style`, which turns off
mathtext (a system called ``a$b$`` must print as written, not be parsed as TeX) and fixes
the resolution, so the same inputs give the same image.

Each figure is drawn once where it can be: its constrained layout fits the axes, labels and
legends inside the figure, and :func:`to_png` crops that one Agg draw to the figure's tight
bounding box. (``savefig(bbox_inches="tight")`` made three passes over every text: a layout
draw with rendering turned off, the tight box, and the image; text layout is most of a
report figure's cost.)

Drawing is most of a report's own time (about 2 of the 5 s of ``evalbayes report`` on a
Terminal-Bench fit), and it needs nothing the rest of the report computes. Inside
:func:`drawing_in_child_processes` (``write_report`` opens it), :func:`draw_png` hands each
finished figure to a forked child process and returns at once; the report goes on computing
its next section while the figure is drawn on another core, and the PNG is collected when the
document is rendered. The bytes are those :func:`to_png` gives in the parent.
"""

from __future__ import annotations

import gc
import io
import math
import multiprocessing
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from multiprocessing.connection import Connection
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure
from matplotlib.image import imsave
from matplotlib.transforms import Bbox

__all__ = [
    "DPI",
    "ChildDrawing",
    "draw_png",
    "drawing_in_child_processes",
    "new_figure",
    "report_style",
    "to_png",
]

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


class ChildDrawing:
    """A figure being drawn to PNG (:func:`to_png`) in a forked child process.

    The child inherits the figure and the rcParams in force (fork copies the parent's memory);
    it sends back the PNG bytes, or the exception that drawing raised, through a pipe and
    exits. :meth:`result` waits for it and returns the bytes (or raises that exception).
    """

    def __init__(self, figure: MplFigure) -> None:
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_draw_in_child, args=(figure, send),
                                        daemon=True)
        with warnings.catch_warnings():
            # Python >= 3.12 warns when a process with threads forks (numba's and BLAS's
            # worker pools here): a child that used those pools could deadlock. The child
            # only draws with matplotlib (Agg, NumPy, zlib) and leaves by os._exit.
            warnings.filterwarnings("ignore", message=r".*multi-threaded.*fork",
                                    category=DeprecationWarning)
            self._process.start()
        send.close()
        self._receive: Connection | None = receive
        self._outcome: bytes | BaseException | None = None

    @property
    def collected(self) -> bool:
        """Whether the child's answer (the bytes, or its error) has been received."""
        return self._outcome is not None

    def result(self) -> bytes:
        """The PNG bytes, waiting for the child if it is still drawing; raises what drawing
        raised there."""
        if self._outcome is None:
            self._outcome = self._receive_outcome()
        if isinstance(self._outcome, BaseException):
            raise self._outcome
        return self._outcome

    def _receive_outcome(self) -> bytes | BaseException:
        receive = self._receive
        if receive is None:
            return RuntimeError("the process drawing this report figure was stopped")
        try:
            ok, payload = receive.recv()
        except EOFError:
            ok, payload = False, None
        finally:
            receive.close()
            self._receive = None
            self._process.join()
        if ok:
            return payload
        if isinstance(payload, BaseException):
            return payload
        return RuntimeError("the process drawing a report figure ended without a result "
                            f"(exit code {self._process.exitcode})")

    def stop(self) -> None:
        """End the child without collecting its figure (the report failed elsewhere)."""
        if self._receive is not None:
            self._process.terminate()
            self._process.join()
            self._receive.close()
            self._receive = None


def _draw_in_child(figure: MplFigure, send: Connection) -> None:
    # the inherited heap is never collected here: a collection would walk (and so copy, page
    # by page) the parent's objects for nothing, as the child exits when the figure is drawn
    gc.freeze()
    try:
        png = to_png(figure)
    except Exception as err:
        try:
            send.send((False, err))
        except Exception:
            send.send((False, RuntimeError(f"drawing a report figure failed: {err!r}")))
    else:
        send.send((True, png))
    finally:
        send.close()


#: The children drawing figures, while :func:`drawing_in_child_processes` is active.
_CHILDREN: ContextVar[list[ChildDrawing] | None] = ContextVar("report_children", default=None)


def child_processes_available() -> int:
    """How many figures may be drawn at once in child processes here: the CPUs this process
    may run on, where fork is the platform's safe default (Linux); 0 elsewhere (macOS forks
    unsafely under its system frameworks; Windows cannot fork) or on a single CPU."""
    if sys.platform != "linux" or multiprocessing.current_process().daemon:
        return 0  # a daemonic process (a pool's worker) may not start children
    cpus = len(os.sched_getaffinity(0))
    return cpus if cpus >= 2 else 0


@contextmanager
def drawing_in_child_processes() -> Iterator[None]:
    """While active, :func:`draw_png` draws each figure in a child process (at most
    :func:`child_processes_available` at once) instead of in this one. On leaving, every
    drawing is collected (or, on an error, its child stopped)."""
    if child_processes_available() == 0 or _CHILDREN.get() is not None:
        yield
        return
    children: list[ChildDrawing] = []
    token = _CHILDREN.set(children)
    failed = True
    try:
        yield
        failed = False
    finally:
        _CHILDREN.reset(token)
        for child in children:
            if failed:
                child.stop()
            elif not child.collected:
                child.result()


def draw_png(figure: MplFigure) -> bytes | ChildDrawing:
    """:func:`to_png` of ``figure``: now, or in a child process inside
    :func:`drawing_in_child_processes` (the caller must not change the figure afterwards)."""
    children = _CHILDREN.get()
    if children is None:
        return to_png(figure)
    running = [child for child in children if not child.collected]
    if len(running) >= child_processes_available():
        running[0].result()  # wait for the oldest before starting another
    try:
        child = ChildDrawing(figure)
    except OSError:  # no process to be had (a limit, a sandbox): draw it here
        return to_png(figure)
    children.append(child)
    return child
