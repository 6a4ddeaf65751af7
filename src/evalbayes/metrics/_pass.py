"""Closed-form pass@k and pass^k of a success probability and of Beta distributions.

Pure NumPy/SciPy: the bottom layer that the posterior summaries are built on.

For a task with success probability ``p``, ``k`` independent attempts give

* pass@k  = 1 - (1 - p)^k   (at least one success; Chen et al. 2021),
* pass^k  = p^k             (all k succeed; Yao et al. 2024, tau-bench).

When ``p ~ Beta(a, b)`` the expectations are ratios of Beta functions (the Beta moments
``E[p^k] = B(a + k, b) / B(a, b)``, applied to ``p`` and to ``1 - p ~ Beta(b, a)``)::

    E[1 - (1 - p)^k] = 1 - B(a, b + k) / B(a, b)
    E[p^k]           =     B(a + k, b) / B(a, b)

They hold for any positive k, also k larger than the number of observed trials. The ratio of
Beta functions is computed on the log scale (``scipy.special.betaln``) and ``1 - exp(x)`` with
``expm1`` so that values close to 1 keep their precision.

References
----------
Chen, M. et al. (2021). Evaluating large language models trained on code.
arXiv:2107.03374.
Yao, S. et al. (2024). tau-bench: a benchmark for tool-agent-user interaction in real-world
domains. arXiv:2406.12045.
Hariri et al. (2025). Don't pass@k: a Bayesian framework for large language model
evaluation (posterior pass@k under a Beta posterior).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalbayes._core.names import Metric, check_k, check_metric

__all__ = [
    "beta_curve",
    "beta_pass_at_k",
    "beta_pass_hat_k",
    "prob_curve",
    "prob_pass_at_k",
    "prob_pass_hat_k",
]


def beta_pass_at_k(a: ArrayLike, b: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """Expected pass@k of ``p ~ Beta(a, b)``: ``1 - B(a, b + k) / B(a, b)``.

    Parameters
    ----------
    a, b : array_like
        Positive Beta parameters (broadcast together).
    k : float or 1-D array_like
        Number of attempts; any positive value. A 1-D ``k`` becomes the last axis.

    Returns
    -------
    numpy.ndarray
        Shape ``broadcast(a, b).shape + (len(k),)``.
    """
    a_arr, b_arr, ks = _broadcast_ab(a, b, k)
    return -np.expm1(_log_beta_ratio(a_arr, b_arr, ks))


def beta_pass_hat_k(a: ArrayLike, b: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """Expected pass^k of ``p ~ Beta(a, b)``: ``B(a + k, b) / B(a, b)``.

    Same shapes as :func:`beta_pass_at_k`.
    """
    a_arr, b_arr, ks = _broadcast_ab(a, b, k)
    return np.exp(_log_beta_ratio(b_arr, a_arr, ks))


def beta_curve(a: ArrayLike, b: ArrayLike, k: ArrayLike, metric: Metric) -> NDArray[np.float64]:
    """Dispatch to :func:`beta_pass_at_k` or :func:`beta_pass_hat_k` by ``metric``."""
    if check_metric(metric) == "pass@k":
        return beta_pass_at_k(a, b, k)
    return beta_pass_hat_k(a, b, k)


def prob_pass_at_k(p: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """pass@k of a known success probability: ``1 - (1 - p)^k`` (k as the last axis)."""
    p_arr, ks = _broadcast_p(p, k)
    with np.errstate(divide="ignore"):
        return -np.expm1(ks * np.log1p(-p_arr))


def prob_pass_hat_k(p: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """pass^k of a known success probability: ``p^k`` (k as the last axis)."""
    p_arr, ks = _broadcast_p(p, k)
    return p_arr**ks


def prob_curve(p: ArrayLike, k: ArrayLike, metric: Metric) -> NDArray[np.float64]:
    """Dispatch to :func:`prob_pass_at_k` or :func:`prob_pass_hat_k` by ``metric``."""
    if check_metric(metric) == "pass@k":
        return prob_pass_at_k(p, k)
    return prob_pass_hat_k(p, k)


_PRODUCT_MAX_K = 64


def _log_beta_ratio(a: np.ndarray, b: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """``log B(a, b + k) - log B(a, b)`` for each k (last axis).

    For integer ``k <= 64`` the ratio is the finite product ``prod_{i<k} (b + i)/(a + b + i)``,
    summed as ``log1p(-a / (a + b + i))``: accurate to a few ulp even when the ratio is close
    to 1, where the difference of two ``betaln`` values loses ~1e-11 relative accuracy.
    Larger or fractional k use ``betaln``.
    """
    shape = np.broadcast_shapes(a.shape, b.shape, ks.shape)
    out = np.empty(shape)
    a_full = np.broadcast_to(a, shape)
    b_full = np.broadcast_to(b, shape)
    for j, kj in enumerate(ks):
        a_j, b_j = a_full[..., j], b_full[..., j]
        if kj == np.round(kj) and kj <= _PRODUCT_MAX_K:
            acc = np.zeros(a_j.shape)
            for i in range(int(kj)):
                acc += np.log1p(-a_j / (a_j + b_j + i))
            out[..., j] = acc
        else:
            from scipy.special import betaln  # imported when used: only for k > 64 (issue 26)

            out[..., j] = betaln(a_j, b_j + kj) - betaln(a_j, b_j)
    return out


def _broadcast_ab(
    a: ArrayLike, b: ArrayLike, k: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    a_arr, b_arr = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    if np.any(~(a_arr > 0)) or np.any(~(b_arr > 0)):
        raise ValueError("Beta parameters a and b must be positive")
    return a_arr[..., None], b_arr[..., None], check_k(k)


def _broadcast_p(p: ArrayLike, k: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    p_arr = np.asarray(p, dtype=np.float64)
    if np.any(~((p_arr >= 0) & (p_arr <= 1))):
        raise ValueError("success probabilities must lie in [0, 1]")
    return p_arr[..., None], check_k(k)
