"""Fast draws of the "these tasks" pass@k / pass^k estimand of a Beta-Binomial posterior.

For a posterior draw ``(a, b) = (mu kappa, (1 - mu) kappa)`` of a system, the latent rates
of its ``T`` observed tasks are independent, ``p_t ~ Beta(A_t, B_t)`` with
``A_t = a + c_t``, ``B_t = b + n_t - c_t`` (conjugacy), and the estimand is the task average
``Y_k = (1/T) sum_t f_k(p_t)`` with ``f_k(p) = 1 - (1 - p)^k`` (pass@k) or ``p^k`` (pass^k).
Drawing every ``p_t`` costs O(draws x systems x tasks x k): 48 s for 4000 x 100 x 500 x 11.

Here ``Y_k`` is drawn from its conditional distribution given ``(a, b)`` by its first two
moments, which are closed forms over the unique ``(n, c)`` cells with weights ``w``
(number of tasks sharing the cell)::

    E q^j = B(A, B + j) / B(A, B) = Gamma(B + j) Gamma(A + B) / (Gamma(B) Gamma(A + B + j)),
    E[Y_k]   = (1/T) sum_cells w (1 - E q^k),
    Var[Y_k] = (1/T^2) sum_cells w (E q^{2k} - (E q^k)^2),

(``q = 1 - p``; for pass^k the same with ``p`` and ``A``, ``B`` swapped and no ``1 -``).
Per cell, the sum of its ``w`` task terms is a sum of ``w`` iid bounded variables, so by the
central limit theorem it is approximately ``Normal(w E f, w Var f)``. The approximation is
poor when the sum is skewed: at large k the deficit ``q^k`` of unsolved tasks is a rare-event
variable (mostly ~0, sometimes ~1) and no moment-matched normal *or log-normal* reproduces
its sum (measured: KS distance 0.3-0.5 against exact draws at k >= 64 even with 500 tasks).
So each cell is classified once per system, at the posterior-mean ``(a, b)``: if the
skewness of its sum, ``gamma_X / sqrt(w)`` with ``gamma_X`` the skewness of ``f_k(p)`` (raw
moments ``E q^{rk}``, r = 1..3), is below ``max_skew`` (default :data:`MAX_SKEW` = 0.1) for
every k, the cell's sum is drawn from the normal, with one standard normal ``z`` per draw
shared by every k (perfect rank correlation across k: exact per-k marginals up to the
CLT, approximate dependence between k); otherwise the cell's tasks get exact conjugate draws
of ``p_t``. A skewness of 0.1 moves a normal's 5 % / 95 % quantiles by about
``gamma (z^2 - 1) / 6 = 0.03`` sds (Cornish-Fisher), below the Monte Carlo error of 4000
draws; the accuracy study in ``benchmarks/scale.md`` (KS distances and 90 % interval
coverage against exact draws) bears this out. ``max_skew = 0`` is exact throughout.

Cost: ``O(draws x systems x unique cells x k)`` exponentials plus ``O(draws x systems x k)``
log-gamma evaluations; the log-gamma differences over a system's cells are obtained from one
``gammaln`` per draw and k and a cumulative sum of logs along the integer lattice
``B + m`` (``log Gamma(x + m) = log Gamma(x) + sum_{i<m} log(x + i)``).

References
----------
Billingsley, *Probability and Measure* (3rd ed., 1995), Thm. 27.3 (Lyapunov's CLT).
Johnson, Kotz & Balakrishnan, *Continuous Univariate Distributions* vol. 2 (2nd ed., 1995),
ch. 25 (moments of the Beta distribution).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

__all__ = ["MAX_SKEW", "beta_moment_curve", "tasks_curve_fast"]

MAX_SKEW = 0.1
_LATTICE_MAX = 4096


def _lgamma_lattice(x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``log Gamma(x[:, None] + offsets[None, :])`` for non-negative integer ``offsets``.

    One ``gammaln`` per row and a cumulative sum of ``log(x + i)`` when the offsets are
    small integers; plain ``gammaln`` otherwise.
    """
    top = int(offsets.max()) if len(offsets) else 0
    if top > _LATTICE_MAX or top > 16 * len(offsets):
        return gammaln(x[:, None] + offsets[None, :])
    steps = np.log(x[:, None] + np.arange(top)[None, :])
    table = np.empty((len(x), top + 1))
    table[:, 0] = gammaln(x)
    np.cumsum(steps, axis=1, out=table[:, 1:])
    table[:, 1:] += table[:, :1]
    return table[:, offsets]


def beta_moment_curve(
    a: np.ndarray,
    b: np.ndarray,
    n: np.ndarray,
    c: np.ndarray,
    weights: np.ndarray,
    k: np.ndarray,
    metric: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the task average of ``f_k(p_t)`` given ``(a, b)``, per draw.

    Parameters
    ----------
    a, b : (D,) arrays
        Population Beta parameters per draw.
    n, c, weights : (U,) arrays
        Unique cells (trials, successes) and how many tasks share each.
    k : (K,) array
        The k grid (any non-negative reals).
    metric : {"pass@k", "pass^k"}

    Returns
    -------
    mean, var : (D, K) arrays
        ``E[Y_k | a, b]`` and ``Var[Y_k | a, b]`` (formulas in the module docstring).
    """
    if metric not in ("pass@k", "pass^k"):
        raise ValueError(f"metric must be 'pass@k' or 'pass^k', got {metric!r}")
    n = np.asarray(n, np.int64)
    c = np.asarray(c, np.int64)
    w = np.asarray(weights, float)
    total = w.sum()
    k = np.asarray(k, float)
    # q = 1 - p ~ Beta(b + n - c, a + c) for pass@k; p ~ Beta(a + c, b + n - c) for pass^k
    if metric == "pass@k":
        base, offset = b, n - c
    else:
        base, offset = a, c
    n_vals, n_idx = np.unique(n, return_inverse=True)
    m_vals, m_idx = np.unique(offset, return_inverse=True)
    s = a + b
    lg_base = _lgamma_lattice(base, m_vals)  # log Gamma(base + m)
    lg_s = _lgamma_lattice(s, n_vals)  # log Gamma(a + b + n)
    mean = np.empty((len(a), len(k)))
    var = np.empty((len(a), len(k)))
    cache: dict[float, np.ndarray] = {}

    def log_moment(j: float) -> np.ndarray:
        """log E[q^j] per (draw, cell)."""
        if j not in cache:
            if j == 0:
                cache[j] = np.zeros((len(a), len(n)))
            else:
                num = _lgamma_lattice(base + j, m_vals) - lg_base
                den = _lgamma_lattice(s + j, n_vals) - lg_s
                cache[j] = num[:, m_idx] - den[:, n_idx]
        return cache[j]

    for i, kj in enumerate(k):
        m1 = np.exp(log_moment(float(kj)))
        m2 = np.exp(log_moment(2.0 * float(kj)))
        e = m1 @ w / total
        mean[:, i] = 1.0 - e if metric == "pass@k" else e
        var[:, i] = np.maximum((m2 - m1 * m1) @ w, 0.0) / total**2
    return mean, var


def _lognormal_draws(
    mean: np.ndarray, var: np.ndarray, z: np.ndarray, metric: str
) -> np.ndarray:
    """Moment-matched log-normal draws of the non-negative average (see module docstring).

    pass^k: ``Y`` itself; pass@k: the deficit ``1 - Y = mean of q^k``. Both are averages of
    values in [0, 1], skewed towards 0 when small; a log-normal with the same mean ``m`` and
    variance ``v`` has ``sigma^2 = log(1 + v / m^2)``, ``mu = log m - sigma^2 / 2``.
    """
    m = 1.0 - mean if metric == "pass@k" else mean
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma2 = np.log1p(np.where(m > 0, var / m**2, 0.0))
        draws = np.where(m > 0, m * np.exp(np.sqrt(sigma2) * z[:, None] - 0.5 * sigma2), 0.0)
    draws = np.clip(draws, 0.0, 1.0)
    return 1.0 - draws if metric == "pass@k" else draws


def _cell_skewness(
    a: float, b: float, n: np.ndarray, c: np.ndarray, w: np.ndarray, k: np.ndarray, metric: str
) -> np.ndarray:
    """Skewness of each cell's sum of ``w`` iid ``f_k(p)`` at one ``(a, b)``: ``(U, K)``.

    ``gamma_X / sqrt(w)`` with ``gamma_X`` the skewness of ``X = q^k`` (pass@k) or ``p^k``
    (pass^k) under the cell's Beta posterior, from the raw moments ``E X^r = E q^{rk}``.
    """
    one = np.ones(1)
    out = np.empty((len(n), len(k)))
    for i, kj in enumerate(k):
        raw = []
        for r in (1, 2, 3):
            m, _ = _cell_moments(a * one, b * one, n, c, r * kj, metric)
            raw.append(m[0])
        m1, m2, m3 = raw
        var = np.maximum(m2 - m1**2, 1e-300)
        third = m3 - 3 * m1 * m2 + 2 * m1**3
        out[:, i] = np.abs(third) / var**1.5 / np.sqrt(w)
    return out


def _cell_moments(
    a: np.ndarray, b: np.ndarray, n: np.ndarray, c: np.ndarray, j: float, metric: str
) -> tuple[np.ndarray, None]:
    """``E[q^j]`` (pass@k) or ``E[p^j]`` (pass^k) per (draw, cell)."""
    base, offset = (b, n - c) if metric == "pass@k" else (a, c)
    n_vals, n_idx = np.unique(n, return_inverse=True)
    m_vals, m_idx = np.unique(offset, return_inverse=True)
    s = a + b
    num = _lgamma_lattice(base + j, m_vals) - _lgamma_lattice(base, m_vals)
    den = _lgamma_lattice(s + j, n_vals) - _lgamma_lattice(s, n_vals)
    return np.exp(num[:, m_idx] - den[:, n_idx]), None


def _exact_cell_sums(
    a: np.ndarray, b: np.ndarray, n: np.ndarray, c: np.ndarray, w: np.ndarray,
    k: np.ndarray, metric: str, rng: np.random.Generator,
) -> np.ndarray:
    """Exact draws of ``sum over the cells' tasks of f_k(p_t)``, shape ``(D, K)``."""
    out = np.zeros((len(a), len(k)))
    for ni, ci, wi in zip(n, c, w, strict=True):
        p = rng.beta((a + ci)[:, None], (b + ni - ci)[:, None], size=(len(a), int(wi)))
        with np.errstate(divide="ignore"):
            log_base = np.log1p(-p) if metric == "pass@k" else np.log(p)
        for j, kj in enumerate(k):
            out[:, j] += np.exp(kj * log_base).sum(axis=1)
    if metric == "pass@k":  # the sums above are of q^k; f = 1 - q^k
        out = w.sum() - out
    return out


def tasks_curve_fast(
    a: np.ndarray,
    b: np.ndarray,
    n: np.ndarray,
    c: np.ndarray,
    k: np.ndarray,
    metric: str,
    seed: int = 0,
    *,
    max_skew: float = MAX_SKEW,
) -> np.ndarray:
    """Draws of the task-average pass@k / pass^k, shape ``(chain, draw, system, k)``.

    Parameters
    ----------
    a, b : (chain, draw, system) arrays
        ``mu kappa`` and ``(1 - mu) kappa`` per posterior draw.
    n, c : (system, task) arrays
        Counts; ``n = 0`` marks a missing cell (left out of the average).
    k, metric
        The k grid and ``"pass@k"`` / ``"pass^k"``.
    seed : int
        Seeds the draws (stream ``[seed, system, 2]``).
    max_skew : float
        A cell's sum is drawn from the normal approximation when its skewness (at the
        system's posterior-mean ``(a, b)``, for every k) is below ``max_skew``; otherwise
        its tasks' rates are drawn exactly. ``0`` gives exact draws throughout.

    Returns
    -------
    ndarray
        ``(chain, draw, system, K)``.
    """
    chains, draws, n_sys = a.shape
    k = np.asarray(k, float)
    n = np.asarray(n, np.int64)
    c = np.asarray(c, np.int64)
    out = np.empty((chains, draws, n_sys, len(k)))
    observed = n > 0
    order = np.argsort(k)
    for s in range(n_sys):
        seen = observed[s]
        keys, weights = np.unique(
            np.stack([n[s, seen], c[s, seen]], axis=1), axis=0, return_counts=True
        )
        cn, cc, cw = keys[:, 0], keys[:, 1], weights.astype(float)
        a_s, b_s = a[..., s].ravel(), b[..., s].ravel()
        rng = np.random.default_rng([seed, s, 2])
        if max_skew > 0:
            skew = _cell_skewness(float(a_s.mean()), float(b_s.mean()), cn, cc, cw, k, metric)
            normal = skew.max(axis=1) < max_skew
        else:
            normal = np.zeros(len(cn), bool)
        total = np.zeros((len(a_s), len(k)))
        if (~normal).any():
            ex = ~normal
            total += _exact_cell_sums(a_s, b_s, cn[ex], cc[ex], cw[ex], k, metric, rng)
        if normal.any():
            mean, var = beta_moment_curve(
                a_s, b_s, cn[normal], cc[normal], cw[normal], k, metric
            )
            w_norm = cw[normal].sum()
            z = rng.standard_normal(len(a_s))
            total += w_norm * np.clip(mean + np.sqrt(var) * z[:, None], 0.0, 1.0)
        vals = total / cw.sum()
        if normal.any():  # keep each draw's curve monotone in k (the normal part may not be)
            sorted_vals = vals[:, order]
            acc = np.maximum.accumulate if metric == "pass@k" else np.minimum.accumulate
            vals[:, order] = acc(sorted_vals, axis=1)
        out[:, :, s, :] = vals.reshape(chains, draws, len(k))
    return out
