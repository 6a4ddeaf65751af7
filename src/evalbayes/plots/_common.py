"""Helpers shared by the plot modules: axes creation and titles that name the estimand."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

__all__ = ["ESTIMAND_SHORT", "get_axes", "title_suffix"]

ESTIMAND_SHORT = {"tasks": "these tasks", "population": "tasks like these"}


def get_axes(ax: Axes | None, figsize: tuple[float, float] = (6.4, 4.2)) -> Axes:
    """The given axes, or the axes of a new figure."""
    if ax is None:
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
