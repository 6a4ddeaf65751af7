"""The few distribution functions the cross-checks need, on :mod:`scipy.special` only.

``scipy.stats`` takes about a second to import; these wrappers keep ``evalbayes crosscheck``
starting fast. Each is checked against ``scipy.stats`` in ``tests/frequentist/test_dist.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "beta_isf",
    "beta_ppf",
    "binom_cdf",
    "binom_cdf_bound",
    "binom_pmf",
    "binom_sf",
    "norm_isf",
    "norm_ppf",
]


def norm_ppf(p: Any) -> Any:
    """Standard normal quantile ``Phi^{-1}(p)``."""
    return special.ndtri(p)


def norm_isf(q: Any) -> Any:
    """Upper quantile ``Phi^{-1}(1 - q)``, computed as ``-Phi^{-1}(q)`` (exact by symmetry)."""
    return -special.ndtri(q)


def binom_cdf(k: Any, n: Any, p: Any) -> Any:
    """``P(X <= k)`` for ``X ~ Bin(n, p)``; 0 for ``k < 0``, 1 for ``k >= n``."""
    k, n, p = np.broadcast_arrays(np.asarray(k, dtype=np.float64), n, p)
    inside = special.bdtr(np.clip(k, 0, None), n, p)
    return np.where(k < 0, 0.0, np.where(k >= n, 1.0, inside))


def binom_sf(k: Any, n: Any, p: Any) -> Any:
    """``P(X > k)`` for ``X ~ Bin(n, p)``; 1 for ``k < 0``, 0 for ``k >= n``."""
    k, n, p = np.broadcast_arrays(np.asarray(k, dtype=np.float64), n, p)
    inside = special.bdtrc(np.clip(k, 0, None), n, p)
    return np.where(k < 0, 1.0, np.where(k >= n, 0.0, inside))


def binom_pmf(x: Any, n: Any, p: Any) -> Any:
    """``P(X = x)`` for ``X ~ Bin(n, p)``, in log space (no overflow for large ``n``)."""
    x, n, p = np.broadcast_arrays(np.asarray(x, dtype=np.float64), n, p)
    inside = np.clip(x, 0, n)
    log_pmf = (
        special.gammaln(n + 1)
        - special.gammaln(inside + 1)
        - special.gammaln(n - inside + 1)
        + special.xlogy(inside, p)
        + special.xlog1py(n - inside, -p)
    )
    return np.where((x < 0) | (x > n), 0.0, np.exp(log_pmf))


def binom_cdf_bound(q: float, n: np.ndarray, p: float) -> np.ndarray:
    """Largest integer ``x`` with ``P(X <= x) < q`` for ``X ~ Bin(n, p)`` (-1 if none).

    Starts from the continuous inverse ``bdtrik`` and corrects it against the cdf itself.
    """
    n = np.asarray(n, dtype=np.int64)
    guess = np.floor(np.nan_to_num(special.bdtrik(q, n, p), nan=0.0)).astype(np.int64)
    bound = np.clip(guess, -1, n)
    for _ in range(64):  # bdtrik is within a step or two; the cdf has the last word
        up = (bound + 1 <= n) & (binom_cdf(bound + 1, n, p) < q)
        down = (bound >= 0) & (binom_cdf(bound, n, p) >= q)
        if not (up.any() or down.any()):
            break
        bound = bound + up.astype(np.int64) - down.astype(np.int64)
    return bound


def beta_ppf(q: Any, a: Any, b: Any) -> Any:
    """Quantile of ``Beta(a, b)``."""
    return special.betaincinv(a, b, q)


def beta_isf(q: Any, a: Any, b: Any) -> Any:
    """Upper quantile of ``Beta(a, b)``: the ``x`` with ``P(X > x) = q``."""
    return special.betainccinv(a, b, q)
