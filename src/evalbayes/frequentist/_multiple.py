"""Multiple comparisons: Holm's step-down and Benjamini-Hochberg.

References
----------
Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian
Journal of Statistics* 6(2), 65-70.
Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate: a practical and
powerful approach to multiple testing. *JRSS B* 57(1), 289-300.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.names import check_prob
from evalbayes._core.rendering import Rendered
from evalbayes.frequentist._checks import as_values, where

__all__ = ["MultipleTestResult", "benjamini_hochberg", "holm"]

_TIE = 1e-12  # p within this relative distance of its threshold counts as <=


@dataclass(frozen=True)
class MultipleTestResult(Rendered):
    """Rejections and adjusted p-values, in the input order.

    Attributes
    ----------
    reject : numpy.ndarray of bool
        True for the hypotheses rejected at ``alpha``.
    adjusted : numpy.ndarray of float
        Adjusted p-values (capped at 1).
    alpha : float
        Family-wise error rate (Holm) or false discovery rate (BH).
    method : str
        ``"holm"`` or ``"benjamini-hochberg"``.
    """

    _settings_fields = ("alpha", "method")

    reject: np.ndarray
    adjusted: np.ndarray
    alpha: float
    method: str

    @property
    def n_rejected(self) -> int:
        """Number of rejected hypotheses."""
        return int(self.reject.sum())


def _pvalues(pvalues: Any) -> np.ndarray:
    p = as_values(pvalues, "pvalues")
    bad = (p < 0) | (p > 1)
    if bad.any():
        idx = int(np.flatnonzero(bad)[0])
        raise ValueError(f"p-value {p[idx]} at {where(idx)} is outside [0, 1]")
    return p


def _unsort(order: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    out = np.empty_like(sorted_values)
    out[order] = sorted_values
    return out


def holm(pvalues: Any, alpha: float = 0.05) -> MultipleTestResult:
    """Holm's step-down procedure, controlling the family-wise error rate.

    Order ``p_(1) <= ... <= p_(m)``; reject ``H_(i)`` when ``p_(j) <= alpha / (m - j + 1)``
    for every ``j <= i`` (Holm 1979). Adjusted p-values:
    ``max_{j <= i} min(1, (m - j + 1) p_(j))``. A p-value equal to its threshold up to
    floating-point rounding (relative ``1e-12``) counts as ``<=``, as worked
    examples computed by hand read it.
    """
    p = _pvalues(pvalues)
    alpha = check_prob(alpha, "alpha")
    m = p.size
    order = np.argsort(p, kind="stable")
    p_sorted = p[order]
    factors = np.arange(m, 0, -1, dtype=np.float64)
    passes = p_sorted <= alpha / factors * (1.0 + _TIE)
    n_reject = m if passes.all() else int(np.argmin(passes))
    reject_sorted = np.arange(m) < n_reject
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(p_sorted * factors))
    return MultipleTestResult(
        reject=_unsort(order, reject_sorted),
        adjusted=_unsort(order, adjusted_sorted),
        alpha=alpha,
        method="holm",
    )


def benjamini_hochberg(pvalues: Any, alpha: float = 0.05) -> MultipleTestResult:
    """Benjamini-Hochberg step-up procedure, controlling the false discovery rate.

    Find the largest ``k`` with ``p_(k) <= (k / m) alpha`` and reject ``H_(1), ...,
    H_(k)`` (Benjamini and Hochberg 1995). Adjusted p-values: ``min_{j >= i} min(1, m p_(j) / j)``.
    Threshold ties as in :func:`holm`.
    """
    p = _pvalues(pvalues)
    alpha = check_prob(alpha, "alpha")
    m = p.size
    order = np.argsort(p, kind="stable")
    p_sorted = p[order]
    rank = np.arange(1, m + 1, dtype=np.float64)
    passes = np.flatnonzero(p_sorted <= rank / m * alpha * (1.0 + _TIE))
    n_reject = int(passes[-1]) + 1 if passes.size else 0
    reject_sorted = np.arange(m) < n_reject
    adjusted_sorted = np.minimum(1.0, np.minimum.accumulate((p_sorted * m / rank)[::-1])[::-1])
    return MultipleTestResult(
        reject=_unsort(order, reject_sorted),
        adjusted=_unsort(order, adjusted_sorted),
        alpha=alpha,
        method="benjamini-hochberg",
    )
