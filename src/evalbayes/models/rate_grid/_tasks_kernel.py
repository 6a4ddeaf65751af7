"""Compiled kernel of the rate grid's "tasks" estimand: node counts of every row's cells.

Given a posterior draw of ``g_s`` (weights on the grid nodes ``p_j``), the ``w`` cells of a
distinct ``(system, n, c)`` row have independent rates from the row's exact conditional
``P(p_j | n, c) = g_s(p_j) L(p_j) / sum_i g_s(p_i) L(p_i)``, ``L(p) = p^c (1 - p)^(n - c)``,
so the numbers of them on each node are ``Multinomial(w, P(. | n, c))``, and the system's
task sum of any ``f`` is ``sum over its rows of sum_j N_j f(p_j)`` (Johnson, Kotz &
Balakrishnan 1997, *Discrete Multivariate Distributions*, ch. 35: the counts of iid
categorical draws). :func:`row_node_sums` draws those counts and returns the sums, in one
compiled pass per posterior draw:

* **The conditional without a log-space pass per row**: ``g_s(p_j) L_r(p_j)`` as the product
  of ``exp(log g_s)`` (computed once per draw and system) and ``exp(log L_r - max log L_r)``
  (once per row, for all draws); a row whose weights all underflow (below 1e-280 in total:
  ``g_s`` far from the row's data) is recomputed in log space, shifted by its largest term.
* **Categorical draws by inversion** (Devroye 1986, *Non-Uniform Random Variate
  Generation*, section III.2): with the row's cumulative weights ``C_j``, a cell's node is
  the first ``j`` with ``C_j > U C_J``, found by a binary search run level by level over
  all of the row's cells (``log2 J`` passes of independent iterations; a guide table, Walker's
  alias method and a search per cell measured 1.5-4x slower here: per-row set-up, and a
  histogram update whose address waits on a chain of loads). Exact up to the
  rounding of ``C`` (a node of zero weight is never drawn): ``P(node j) = (C_j - C_{j-1}) /
  C_J``, the same inversion as :func:`~._model._count_below`.
* **Counter-based streams** (SplitMix64, Steele, Lea & Flood 2014): row ``r`` of draw ``d``
  reads its uniforms by position from a stream keyed by hashing ``(seed, r, d)``, so the
  draws do not depend on the number of threads or on which thread ran which draw (draws run
  in parallel), and the same seed gives the same numbers.

The counts follow the multinomial exactly; they are a different Monte Carlo stream from
numpy's ``Generator.multinomial`` (conditional binomials), so the same seed gives other draws
of the same posterior (tested: moments and chi-square against the closed-form node
probabilities, and two-sample against numpy's multinomial).

References
----------
Devroye, L. (1986). *Non-Uniform Random Variate Generation*. Springer.
Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable pseudorandom number
generators. *OOPSLA 2014* (SplitMix64).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from evalbayes.models._splitmix import GOLDEN, S11, TWO_M53, mix, word

__all__ = ["row_node_sums"]

_TINY = 1e-280  # a row's total weight below this is recomputed in log space


@njit(cache=True)
def _uniforms(key: np.uint64, count: int, out: np.ndarray) -> None:
    """``out[i]``, ``i < count``: uniforms in (0, 1) from words ``1 .. count`` of stream ``key``
    (53 bits each, via a signed conversion that vectorises)."""
    for i in range(count):
        out[i] = (float(np.int64(word(key, i + 1) >> S11)) + 0.5) * TWO_M53


@njit(cache=True)
def _row_weights(g: np.ndarray, lik: np.ndarray, log_g: np.ndarray, loglik: np.ndarray,
                 cdf: np.ndarray) -> float:
    """Cumulative weights ``cdf[j] = sum_{i <= j} g_i lik_i`` and their total; in log space,
    shifted by the largest term, when the products underflow."""
    total = 0.0
    for j in range(g.shape[0]):
        total += g[j] * lik[j]
        cdf[j] = total
    if total > _TINY:
        return total
    best = -np.inf
    for j in range(g.shape[0]):
        best = max(best, log_g[j] + loglik[j])
    total = 0.0
    for j in range(g.shape[0]):
        total += math.exp(log_g[j] + loglik[j] - best)
        cdf[j] = total
    return total


@njit(cache=True)
def _draw_counts(cdf: np.ndarray, total: float, uniform: np.ndarray, count: int,
                 node: np.ndarray, hist: np.ndarray) -> None:
    """``hist[j] +=`` the number of the ``count`` uniforms whose point ``U total`` falls on
    node ``j``: the first ``j`` with ``cdf[j] > U total``, i.e. how many ``cdf`` entries are
    ``<= U total``, by a binary search run level by level over all the points (``cdf``: a
    power of two long, padded with ``+inf``; ``uniform`` is overwritten, ``node`` is
    scratch)."""
    support = hist.shape[0]
    for i in range(count):
        uniform[i] = uniform[i] * total
        node[i] = 0
    step = cdf.shape[0] // 2
    while step:  # one level of every point's search: independent iterations, no branches
        for i in range(count):
            node[i] += step if cdf[node[i] + step - 1] <= uniform[i] else 0
        step //= 2
    for i in range(count):  # U total == total after rounding: the last node
        hist[min(node[i], support - 1)] += 1


@njit(cache=True, parallel=True)
def row_node_sums(
    g: np.ndarray,
    log_g: np.ndarray,
    row_system: np.ndarray,
    row_cells: np.ndarray,
    row_lik: np.ndarray,
    row_loglik: np.ndarray,
    values: np.ndarray,
    seed: int,
    first_draw: int = 0,
) -> np.ndarray:
    """Draws of ``sum over a system's cells of f_m(p)``, shape ``(draws, systems, M)``.

    Parameters
    ----------
    g, log_g : (D, S, J) float arrays
        ``g_s(p_j)`` per draw and its log (``log g`` is read only for rows whose products
        underflow).
    row_system, row_cells : (R,) int arrays
        Each distinct ``(system, n, c)`` row's system and its number of cells ``w``.
    row_lik, row_loglik : (R, J) float arrays
        ``exp(log L_r(p_j) - max_j log L_r)`` and ``log L_r(p_j)`` (any constant in ``j``
        cancels).
    values : (J, M) float array
        ``f_m(p_j)`` for every metric and k asked for.
    seed : int
        Row ``r`` of draw ``d`` reads the stream hashed from ``(seed, r, d)``.
    first_draw : int
        Draw ``d`` of ``g`` is draw ``first_draw + d`` of the posterior (its streams): a
        posterior taken in blocks of draws gives the numbers of one call on all of it.

    Returns
    -------
    ndarray
        ``out[d, s, m] = sum over the rows r of s of sum_j N_rj f_m(p_j)``, with ``N_r ~
        Multinomial(w_r, P(. | n_r, c_r))`` drawn anew for each draw.
    """
    n_draws, n_sys, support = g.shape
    n_rows = row_system.shape[0]
    n_values = values.shape[1]
    out = np.zeros((n_draws, n_sys, n_values))
    most = 1
    for r in range(n_rows):
        most = max(most, row_cells[r])
    padded = 1
    while padded < support:
        padded *= 2
    seed_mixed = mix(mix(np.uint64(seed) + GOLDEN) + np.uint64(17))
    row_keys = np.empty(n_rows, dtype=np.uint64)
    for r in range(n_rows):
        row_keys[r] = mix(seed_mixed + np.uint64(r))
    for d in prange(n_draws):
        cdf = np.full(padded, np.inf)  # the search's padding stays +inf
        node = np.empty(most, dtype=np.int64)
        hist = np.empty(support, dtype=np.int64)
        uniform = np.empty(most)
        for r in range(n_rows):
            s = row_system[r]
            w = row_cells[r]
            total = _row_weights(g[d, s], row_lik[r], log_g[d, s], row_loglik[r],
                                 cdf[:support])
            _uniforms(mix(row_keys[r] + np.uint64(first_draw + d)), w, uniform)
            hist[:] = 0
            _draw_counts(cdf, total, uniform, w, node, hist)
            for j in range(support):
                if hist[j]:
                    for m in range(n_values):
                        out[d, s, m] += hist[j] * values[j, m]
    return out
