"""pass@k and pass^k from per-task counts: the unbiased estimators and their plug-in forms.

For a task with ``n`` trials of which ``c`` succeeded:

* unbiased pass@k (Chen et al. 2021, section 2.1 and appendix A):
  ``1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i)``,
* unbiased pass^k (Yao et al. 2024, tau-bench): ``C(c, k) / C(n, k)
  = prod_{i=c+1}^{n} (1 - k/i)``,

both defined for ``1 <= k <= n``. The two ratios are the same "tail product"
``T(n, m, k) = C(m, k) / C(n, k) = prod_{i=m+1}^{n} (1 - k/i)`` (0 when ``m < k``), with
``m = n - c`` for pass@k and ``m = c`` for pass^k. It is evaluated in log space,
``sum_{i=m+1}^{n} log1p(-k/i)``, as a reversed cumulative sum over ``i`` computed once per
distinct ``n`` and shared by every task with that ``n``: the cost is
``O(distinct n x max n x len(k))`` plus one gather, whatever the number of tasks. pass@k is
then ``-expm1(log T)``, accurate to a few ulps even when it is tiny.

The plug-in forms ``1 - (1 - c/n)^k`` and ``(c/n)^k`` are biased low for ``k >= 2`` (Jensen;
Chen et al. 2021) and are provided only to show that bias.

References
----------
Chen, M. et al. (2021). Evaluating large language models trained on code.
arXiv:2107.03374.
Yao, S. et al. (2024). tau-bench: a benchmark for tool-agent-user interaction in real-world
domains. arXiv:2406.12045.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalbayes.frequentist._checks import as_counts, as_k, where

__all__ = [
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "mean_pass_rate",
    "pass_at_k",
    "pass_at_k_plugin",
    "pass_hat_k",
    "pass_hat_k_plugin",
    "pooled_pass_rate",
]

_TABLE_BUDGET = 1 << 22  # entries of one (i, k) log table block (32 MiB of float64)
_WEIGHT_BUDGET = 1 << 22  # entries of one (rows, distinct cells) weight block
_DIRECT_TERMS = 256  # above this many factors, Euler-Maclaurin (see _log_tail_large)


def _check_k_le_n(n: np.ndarray, k: np.ndarray, func: str) -> None:
    k_max = int(k.max())
    bad = n < k_max
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0]) if n.ndim else ()
        raise ValueError(
            f"{func}: k={k_max} exceeds n={int(n[idx])} at {where(idx)}; the unbiased "
            "estimator needs 1 <= k <= n (draw more trials, or use a smaller k)"
        )


def _log_tail_table(n_value: int, m_rows: np.ndarray, kf: np.ndarray) -> np.ndarray:
    """Exact reversed-cumsum table of one ``n`` (memory ``O(n)`` per block of ``k``)."""
    out = np.empty((m_rows.size, kf.size), dtype=np.float64)
    i = np.arange(1, n_value + 1, dtype=np.float64)[:, None]  # (n, 1)
    step = max(1, _TABLE_BUDGET // int(n_value))
    for start in range(0, kf.size, step):
        kk = kf[None, start : start + step]  # (1, K')
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(i > kk, np.log1p(-kk / i), -np.inf)  # (n, K')
        # tail[m] = sum_{i=m+1}^{n} terms[i-1]; tail[n] = 0.
        tail = np.zeros((int(n_value) + 1, kk.shape[1]))
        tail[:-1] = np.cumsum(terms[::-1], axis=0)[::-1]
        out[:, start : start + step] = tail[m_rows]
    return out


def _log_tail_large(n: np.ndarray, m: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``log C(m, k) / C(n, k)`` in ``O(1)`` memory and time per (pair, k) for any ``n``.

    ``log T = sum_{j=0}^{k-1} log1p(-d/(n-j))`` with ``d = n - m``
    (``= sum_{i=m+1}^{n} log1p(-k/i)``, the same product read the other way). When
    ``min(k, d) <= _DIRECT_TERMS`` the shorter of the two sums is added term by term.
    Otherwise the ``j`` sum over ``a = m - j >= _DIRECT_TERMS`` uses the Euler-Maclaurin
    formula (Abramowitz & Stegun 1964, 23.1.30) with the exact integral
    ``a1 log1p(d J/(a1 (a0+d))) - J log1p(d/a0) - d log1p(J/(a1+d))`` (``a0 = m``,
    ``a1 = m - J``: ``a1 log1p(d/a1) - a0 log1p(d/a0) - ...`` without its cancellation)
    and the ``f'`` and ``f'''`` corrections, whose remainder is of order ``1/a^5``. The last
    ``< _DIRECT_TERMS`` terms (``a`` small, where ``f`` varies fast) are added directly.
    ``n``, ``m``, ``k`` broadcast; ``-inf`` where ``m < k``.
    """
    n, m, k = (np.asarray(x, dtype=np.float64) for x in np.broadcast_arrays(n, m, k))
    d = n - m
    out = np.zeros(n.shape)
    zero = m < k
    direct = ~zero & (np.minimum(k, d) <= _DIRECT_TERMS)
    smooth = ~zero & ~direct
    with np.errstate(divide="ignore", invalid="ignore"):
        for t in range(_DIRECT_TERMS):
            j_sum = direct & (k <= d) & (t < k)  # term j = t
            i_sum = direct & (k > d) & (t < d)  # term i = m + 1 + t
            if not (j_sum.any() or i_sum.any()):
                break
            out += np.where(j_sum, np.log1p(-d / (n - t)), 0.0)
            out += np.where(i_sum, np.log1p(-k / (m + 1 + t)), 0.0)
        if smooth.any():
            a_cut = float(_DIRECT_TERMS)
            big_j = np.minimum(k - 1, m - a_cut)  # >= 0 here, since m >= k > a_cut
            a0, a1 = m, m - big_j

            def f(a: np.ndarray) -> np.ndarray:
                return -np.log1p(d / a)

            def f1(a: np.ndarray) -> np.ndarray:
                return -d / (a * (a + d))

            def f3(a: np.ndarray) -> np.ndarray:
                return -2.0 / a**3 + 2.0 / (a + d) ** 3

            # a1 log1p(d/a1) - a0 log1p(d/a0), rewritten without the cancellation
            integral = (
                a1 * np.log1p(d * big_j / (a1 * (a0 + d)))
                - big_j * np.log1p(d / a0)
                - d * np.log1p(big_j / (a1 + d))
            )
            em = (
                integral
                + (f(a0) + f(a1)) / 2.0
                + (f1(a1) - f1(a0)) / 12.0
                - (f3(a1) - f3(a0)) / 720.0
            )
            out = np.where(smooth, em, out)
            # the rest, j = J+1 .. k-1 (fewer than _DIRECT_TERMS terms with a < a_cut)
            rest = np.where(smooth, k - 1 - big_j, 0.0)
            for t in range(_DIRECT_TERMS):
                live = smooth & (t < rest)
                if not live.any():
                    break
                out += np.where(live, np.log1p(-d / (n - (big_j + 1 + t))), 0.0)
    out[zero] = -np.inf
    return out


def _log_tail(n_u: np.ndarray, m_u: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``log C(m, k) / C(n, k)`` for distinct pairs ``(n_u, m_u)`` and every ``k``.

    Returns an array ``(len(n_u), len(k))``; ``-inf`` where ``m < k`` (the ratio is 0).
    A distinct ``n`` up to ``_TABLE_BUDGET`` shares one exact table of ``O(n)`` memory;
    a larger ``n`` (10^9 trials of a cell, say) uses :func:`_log_tail_large`, whose memory
    and time do not grow with ``n`` or ``k``.
    """
    out = np.empty((n_u.size, k.size), dtype=np.float64)
    kf = k.astype(np.float64)
    for n_value in np.unique(n_u):
        rows = np.flatnonzero(n_u == n_value)
        if n_value <= _TABLE_BUDGET:
            out[rows] = _log_tail_table(int(n_value), m_u[rows], kf)
        else:
            out[rows] = _log_tail_large(
                np.asarray(n_value, dtype=np.float64), m_u[rows].astype(np.float64)[:, None],
                kf[None, :],
            )
    return out


def _distinct(n: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (n, m) pairs of flattened arrays -> (n_u, m_u, inverse)."""
    n_flat = n.reshape(-1)
    m_flat = m.reshape(-1)
    key = n_flat * (int(n_flat.max()) + 1) + m_flat
    key_u, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    del key_u
    return n_flat[first], m_flat[first], inverse.reshape(-1)


def _per_cell(n: Any, c: Any, k: Any, func: str, hat: bool) -> np.ndarray | float:
    n_arr, c_arr = as_counts(n, c)
    k_arr, k_scalar = as_k(k)
    _check_k_le_n(n_arr, k_arr, func)
    m = c_arr if hat else n_arr - c_arr
    n_u, m_u, inverse = _distinct(n_arr, m)
    log_tail = _log_tail(n_u, m_u, k_arr)
    values = np.exp(log_tail) if hat else -np.expm1(log_tail)
    out = np.take(values, inverse, axis=0).reshape((*n_arr.shape, k_arr.size))
    if k_scalar:
        out = out[..., 0]
    return float(out) if out.ndim == 0 else out


def _task_mean(n: Any, c: Any, k: Any, axis: int, func: str, hat: bool) -> np.ndarray | float:
    n_arr, c_arr = as_counts(n, c)
    k_arr, k_scalar = as_k(k)
    _check_k_le_n(n_arr, k_arr, func)
    if n_arr.ndim == 0:
        n_arr, c_arr = n_arr[None], c_arr[None]
    n_arr = np.moveaxis(n_arr, axis, -1)
    c_arr = np.moveaxis(c_arr, axis, -1)
    lead = n_arr.shape[:-1]
    n_tasks = n_arr.shape[-1]
    m = c_arr if hat else n_arr - c_arr
    n_u, m_u, inverse = _distinct(n_arr, m)
    log_tail = _log_tail(n_u, m_u, k_arr)
    values = np.exp(log_tail) if hat else -np.expm1(log_tail)  # (U, K)
    n_rows = int(np.prod(lead, dtype=np.int64))
    inverse = inverse.reshape(n_rows, n_tasks)
    n_u_count = values.shape[0]
    out = np.empty((n_rows, k_arr.size))
    step = max(1, _WEIGHT_BUDGET // n_u_count)
    for start in range(0, n_rows, step):
        block = inverse[start : start + step]
        rows = block.shape[0]
        offsets = (np.arange(rows)[:, None] * n_u_count + block).reshape(-1)
        weights = np.bincount(offsets, minlength=rows * n_u_count).reshape(rows, n_u_count)
        out[start : start + rows] = weights @ values / n_tasks
    out = out.reshape((*lead, k_arr.size))
    if k_scalar:
        out = out[..., 0]
    return float(out) if out.ndim == 0 else out


def pass_at_k(n: Any, c: Any, k: Any) -> np.ndarray | float:
    """Unbiased pass@k of each cell (Chen et al. 2021).

    ``pass@k = 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i)``, exactly 1 when
    ``n - c < k`` (Chen et al. 2021). It is the probability that at least one of
    ``k`` trials drawn without replacement from the ``n`` observed ones succeeded, and an
    unbiased estimator of ``1 - (1-p)^k``.

    Parameters
    ----------
    n, c : array_like of int
        Trials and successes per cell; broadcast together. ``n >= 1`` and ``0 <= c <= n``.
    k : int or 1-D array_like of int
        Number of attempts, ``1 <= k <= n`` for every cell. A 1-D ``k`` becomes the last
        axis of the result.

    Returns
    -------
    float or numpy.ndarray
        Shape ``broadcast(n, c).shape`` (scalar ``k``) or that plus ``(len(k),)``.

    Raises
    ------
    ValueError
        Naming the cell: ``k > n``, ``k < 1``, ``n = 0`` (missing cell), ``c > n``, negative,
        NaN or non-integer counts, empty input, shapes that do not broadcast.

    Examples
    --------
    >>> round(pass_at_k(10, 3, 5), 6)  # 1 - 21/252
    0.916667
    """
    return _per_cell(n, c, k, "pass_at_k", hat=False)


def pass_hat_k(n: Any, c: Any, k: Any) -> np.ndarray | float:
    """Unbiased pass^k of each cell (Yao et al. 2024, tau-bench).

    ``pass^k = C(c, k) / C(n, k) = prod_{i=c+1}^{n} (1 - k/i)``, 0 when ``c < k``: the
    probability that ``k`` trials drawn without replacement from the ``n`` observed ones all
    succeeded, an unbiased estimator of ``p^k``. Arguments, shapes and errors as
    :func:`pass_at_k`.

    Examples
    --------
    >>> round(pass_hat_k(4, 2, 2), 6)  # C(2,2)/C(4,2) = 1/6
    0.166667
    """
    return _per_cell(n, c, k, "pass_hat_k", hat=True)


def mean_pass_at_k(n: Any, c: Any, k: Any, *, axis: int = -1) -> np.ndarray | float:
    """Task-averaged unbiased pass@k, ``(1/N) sum_j pass@k_j`` over ``axis`` (Chen et al. 2021).

    Computed from the histogram of distinct ``(n, c)`` cells, so its memory does not grow
    with the number of tasks times ``len(k)``. Arguments and errors as :func:`pass_at_k`;
    the result drops ``axis`` (a 1-D ``k`` stays the last axis).
    """
    return _task_mean(n, c, k, axis, "mean_pass_at_k", hat=False)


def mean_pass_hat_k(n: Any, c: Any, k: Any, *, axis: int = -1) -> np.ndarray | float:
    """Task-averaged unbiased pass^k, ``(1/N) sum_j C(c_j, k)/C(n_j, k)`` (Yao et al. 2024)."""
    return _task_mean(n, c, k, axis, "mean_pass_hat_k", hat=True)


def _plugin(n: Any, c: Any, k: Any, hat: bool) -> np.ndarray | float:
    n_arr, c_arr = as_counts(n, c)
    k_arr, k_scalar = as_k(k)
    p = (c_arr / n_arr)[..., None]
    kf = k_arr.astype(np.float64)
    with np.errstate(divide="ignore"):
        out = p**kf if hat else -np.expm1(kf * np.log1p(-p))
    if k_scalar:
        out = out[..., 0]
    return float(out) if out.ndim == 0 else out


def pass_at_k_plugin(n: Any, c: Any, k: Any) -> np.ndarray | float:
    """Plug-in pass@k ``1 - (1 - c/n)^k``: biased low for ``k >= 2`` (Jensen; Chen et al. 2021).

    Provided to show the bias of the obvious estimate; it is defined for any ``k >= 1``,
    including ``k > n``. Shapes and count rules as :func:`pass_at_k`.
    """
    return _plugin(n, c, k, hat=False)


def pass_hat_k_plugin(n: Any, c: Any, k: Any) -> np.ndarray | float:
    """Plug-in pass^k ``(c/n)^k`` (biased for ``k >= 2``: the form for iid trials)."""
    return _plugin(n, c, k, hat=True)


def pooled_pass_rate(n: Any, c: Any, *, axis: int = -1) -> np.ndarray | float:
    """Pooled pass rate ``sum(c) / sum(n)`` over ``axis``: the share of all trials that passed.

    This is the trial-weighted pass@1 that many eval tools print. It equals
    :func:`mean_pass_rate` only when every task has the same ``n``; with unequal ``n`` it weights
    tasks by their trial counts.
    """
    n_arr, c_arr = as_counts(n, c)
    if n_arr.ndim == 0:
        return float(c_arr / n_arr)
    out = c_arr.sum(axis=axis) / n_arr.sum(axis=axis)
    return float(out) if np.ndim(out) == 0 else out


def mean_pass_rate(n: Any, c: Any, *, axis: int = -1) -> np.ndarray | float:
    """Task-average pass@1 ``(1/N) sum_j c_j / n_j`` over ``axis``.

    The benchmark's pass@1 as a task average (Miller 2024): every task weighs the
    same whatever its number of trials. See :func:`pooled_pass_rate` for the trial-weighted
    share.
    """
    n_arr, c_arr = as_counts(n, c)
    if n_arr.ndim == 0:
        return float(c_arr / n_arr)
    out = (c_arr / n_arr).mean(axis=axis)
    return float(out) if np.ndim(out) == 0 else out
