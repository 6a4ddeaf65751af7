"""Input validation shared by the frequentist estimators.

Every rule raises :class:`ValueError` naming the offending element and the rule; nothing is
dropped, clipped or coerced. Integral floats (``3.0``) are accepted as counts, ``3.5`` is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "as_clusters",
    "as_counts",
    "as_integral",
    "as_k",
    "as_values",
    "where",
]


def where(index: tuple[int, ...] | Sequence[int] | int) -> str:
    """``'index 3'`` for 1-D positions, ``'index (1, 2)'`` otherwise."""
    if isinstance(index, int | np.integer):
        return f"index {int(index)}"
    index = tuple(int(i) for i in index)
    if len(index) == 1:
        return f"index {index[0]}"
    return f"index {index}"


def _first(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def as_integral(x: Any, name: str) -> np.ndarray:
    """Array of integers from ints, bools or integral floats; raises on NaN or fractions."""
    arr = np.asarray(x)
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.floating):
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = _first(bad) if arr.ndim else ()
        raise ValueError(f"{name} is {arr[idx]} at {where(idx)}: counts must be finite")
    frac = arr != np.round(arr)
    if frac.any():
        idx = _first(frac) if arr.ndim else ()
        raise ValueError(f"{name}={arr[idx]} at {where(idx)} is not an integer")
    return arr.astype(np.int64)


def as_counts(n: Any, c: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate and broadcast trial counts ``n`` and success counts ``c``.

    Rules: numeric and integral, no NaN, ``n >= 1`` (``n = 0`` is a missing cell and has no
    pass rate; drop it first, as :class:`~evalbayes.EvalData` wrappers do), ``0 <= c <= n``,
    shapes broadcast, not empty.
    """
    n_arr = as_integral(n, "n")
    c_arr = as_integral(c, "c")
    try:
        n_arr, c_arr = np.broadcast_arrays(n_arr, c_arr)
    except ValueError:
        raise ValueError(
            f"n and c have shapes {n_arr.shape} and {c_arr.shape}, which do not broadcast"
        ) from None
    if (n_arr < 0).any():
        idx = _first(n_arr < 0) if n_arr.ndim else ()
        raise ValueError(f"n={n_arr[idx]} at {where(idx)} is negative")
    if (n_arr == 0).any():
        idx = _first(n_arr == 0) if n_arr.ndim else ()
        raise ValueError(
            f"n=0 at {where(idx)}: a cell with no trials has no pass rate (it marks a missing "
            "cell); leave it out before calling this function"
        )
    if (c_arr < 0).any():
        idx = _first(c_arr < 0) if c_arr.ndim else ()
        raise ValueError(f"c={c_arr[idx]} at {where(idx)} is negative")
    if (c_arr > n_arr).any():
        idx = _first(c_arr > n_arr) if c_arr.ndim else ()
        raise ValueError(
            f"c={c_arr[idx]} > n={n_arr[idx]} at {where(idx)}: successes cannot exceed trials"
        )
    return n_arr, c_arr


def as_k(k: Any) -> tuple[np.ndarray, bool]:
    """Validate ``k`` (int or 1-D ints, each >= 1) -> (1-D int64 array, was_scalar)."""
    arr = np.asarray(k)
    if arr.ndim > 1:
        raise ValueError(f"k must be an int or a 1-D sequence of ints, got shape {arr.shape}")
    scalar = arr.ndim == 0
    arr = as_integral(np.atleast_1d(arr), "k")
    if (arr < 1).any():
        idx = int(np.flatnonzero(arr < 1)[0])
        raise ValueError(f"k={arr[idx]} at {where(idx)} of k: k must be at least 1")
    return arr, scalar


def as_values(x: Any, name: str, *, ndim: int | None = 1) -> np.ndarray:
    """Finite float array (default 1-D), not empty."""
    arr = np.asarray(x)
    if arr.dtype == bool:
        arr = arr.astype(np.float64)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = _first(bad) if arr.ndim else ()
        raise ValueError(f"{name} is {arr[idx]} at {where(idx)}: values must be finite")
    return arr


def as_clusters(clusters: Any, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Cluster labels for ``size`` units -> (integer codes in first-seen order, labels)."""
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.shape[0] != size:
        raise ValueError(
            f"clusters must be 1-D with one label per unit ({size}), got shape {labels.shape}"
        )
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        idx = int(np.flatnonzero(np.isnan(labels))[0])
        raise ValueError(f"cluster label at {where(idx)} is NaN")
    if labels.dtype == object:
        for i, lab in enumerate(labels):
            if lab is None or (isinstance(lab, float) and np.isnan(lab)):
                raise ValueError(f"cluster label at {where(i)} is missing")
    uniques, first, codes = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    remap = np.empty_like(order)
    remap[order] = np.arange(order.size)
    return remap[codes.reshape(-1)], uniques[order]
