"""Average ranks (ties share the mean of their positions), without importing ``scipy.stats``
(~0.5 CPU-s of every command that would import it only for this)."""

from __future__ import annotations

import numpy as np

__all__ = ["average_ranks"]


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks ``1..n`` of a 1-D array, tied values given the average of their ranks (SciPy's
    ``rankdata(values, method="average")``; M. G. Kendall, *Rank Correlation Methods*, 1948,
    ch. 3)."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError("average_ranks takes a 1-D array")
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    start = np.flatnonzero(first)
    stop = np.r_[start[1:], values.size]
    ranks = np.empty(values.size)
    ranks[order] = ((start + stop + 1) / 2.0)[np.cumsum(first) - 1]
    return ranks
