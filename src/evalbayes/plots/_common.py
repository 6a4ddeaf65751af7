"""Helpers shared by the plot modules: axes creation and titles that name the estimand."""

from __future__ import annotations

import weakref
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter

from evalbayes._core.names import display_label

__all__ = ["ESTIMAND_SHORT", "MAX_LINE", "finish", "get_axes", "plot_label", "title_suffix"]

MAX_LINE = 120  # characters of one line of text in a figure

ESTIMAND_SHORT = {"tasks": "these tasks", "population": "tasks like these"}


#: Relative size of a negative error-bar arm that is float rounding (a mean and quantiles of
#: nearly equal draws differ in the last bits), clipped to 0; anything larger is a bug.
ROUNDING = 1e-9


def error_arms(center: Any, lower: Any, upper: Any) -> np.ndarray:
    """``[center - lower, upper - center]`` for matplotlib's ``xerr``/``yerr``, which refuses
    negative arms. When all draws are nearly equal (n = 10^9 trials: a rate known to 10^-5)
    the mean can fall a rounding error outside its quantiles; such arms (below ``ROUNDING``
    times the scale of the numbers) become 0. A larger negative arm raises ``ValueError``:
    the interval does not contain its centre, a real error."""
    center, lower, upper = (np.asarray(v, dtype=float) for v in (center, lower, upper))
    arms = np.stack([center - lower, upper - center])
    scale = np.maximum(1.0, np.maximum(np.abs(lower), np.abs(upper)))
    tol = ROUNDING * np.broadcast_to(scale, arms.shape)
    bad = arms < -tol
    if np.any(bad):
        raise ValueError(f"an interval does not contain its centre (arm {arms[bad].min():.3g}); "
                         "lower <= centre <= upper is required")
    return np.where(arms < 0, 0.0, arms)


#: Axes whose texts :func:`finish` has passed over (weak: a closed figure's axes drop out).
_FINISHED: weakref.WeakSet[Axes] = weakref.WeakSet()


def get_axes(ax: Axes | None, figsize: tuple[float, float] = (6.4, 4.2)) -> Axes:
    """The given axes, or the axes of a new figure (pyplot's: imported here, not with the
    module, so the report, which draws on figures of its own, does not pay for it)."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    elif not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    return ax


def title_suffix(estimand: Any, approximate: bool) -> str:
    """``"estimand: tasks (these tasks)"`` plus an APPROXIMATE mark for approximate fits
    (variational or Laplace)."""
    if estimand is None:
        text = "estimand not stated"
    else:
        text = f"estimand: {estimand}"
        if estimand in ESTIMAND_SHORT:
            text += f" ({ESTIMAND_SHORT[estimand]})"
    if approximate:
        text += " · APPROXIMATE (not MCMC)"
    return text


def plot_label(name: Any) -> str:
    """A system or task name for a plot: :func:`evalbayes._core.names.display_label` (short,
    printable, long names kept distinct), with ``$`` escaped while mathtext is on, so
    ``$alpha$`` prints as written instead of being parsed (or failing to parse) as TeX."""
    text = display_label(name)
    if mpl.rcParams["text.parse_math"]:
        text = _escape_dollars(text)
    return text


def _escape_dollars(text: str) -> str:
    out, escaped = [], False
    for ch in text:
        if ch == "$" and not escaped:
            out.append("\\$")
        else:
            out.append(ch)
        escaped = ch == "\\" and not escaped
    return "".join(out)


def _safe_line(line: str) -> str:
    if len(line) <= MAX_LINE and line.isprintable():
        return line
    return display_label(line, MAX_LINE)


def finish(ax: Axes) -> Axes:
    """Last pass over the texts of ``ax`` (and of its figure's other axes and figure-level
    artists not seen by an earlier pass) before it is returned.

    Any line longer than ``MAX_LINE`` characters is shortened (a 100,000-character system
    name would otherwise ask Agg for a canvas of gigabytes), control characters are shown
    as escapes (a tab has no glyph), and, while mathtext is on,
    unescaped ``$`` are escaped. Fixed tick labels are rewritten in their formatter, which
    re-creates the tick texts at every draw. Axes already passed over by an earlier call
    (another panel of the same figure) are not walked again, except ``ax`` itself: a
    figure of ``m`` panels costs ``m`` walks, not ``m**2``.
    """
    parse_math = mpl.rcParams["text.parse_math"]

    def safe(text: str) -> str:
        text = "\n".join(_safe_line(line) for line in text.split("\n"))
        if parse_math and "$" in text:
            text = _escape_dollars(text)
        return text

    figure = ax.figure
    walked = [a for a in figure.axes if a is ax or a not in _FINISHED]
    parts: list[Any] = [*walked, *(c for c in figure.get_children() if c not in figure.axes)]
    for axes in walked:
        for axis in (axes.xaxis, axes.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, FixedFormatter):
                formatter.seq = [safe(str(s)) for s in formatter.seq]
        _FINISHED.add(axes)
    for part in parts:
        for artist in part.findobj(Text):
            text = artist.get_text()
            new = safe(text)
            if new != text:
                artist.set_text(new)
    return ax
