"""Compiled kernels of the rate grid's sequential Monte Carlo (:mod:`._smc`).

Two loops, compiled by numba once and then read from its on-disk cache (``cache=True``), and
free of the GIL (``nogil=True``) so that systems can run on threads:

* :func:`log_likelihoods`: one system's collapsed grid log-likelihood for every particle,
  ``sum_r w_r log sum_j g(p_j) Binomial(c_r | n_r, p_j)`` over the system's distinct
  ``(n, c)`` rows, each row summed over its ``(row, node)`` pairs only (the pairs the model's
  graph keeps, :meth:`~._model.RateGridModel.inputs`), with ``g = softmax(Q coef)``.
* :func:`move`: ``n_moves`` sweeps of generalised elliptical slice sampling over every
  particle, each leaving the tempered posterior
  ``pi_beta(x) propto L(x)^beta N(x | 0, prior_sd^2 I)`` invariant.

Generalised elliptical slice sampling (R. Nishihara, I. Murray and R. P. Adams, "Parallel
MCMC with generalized elliptical slice sampling", *JMLR* 15, 2014, 2087-2112): with a
multivariate Student-t ``T(x) = t_nu(x | mu, Sigma)`` fitted to the particle cloud, write
``pi_beta(x) = [pi_beta(x) / T(x)] T(x)`` and the t as a scale mixture of normals,
``T(x) = int N(x | mu, s Sigma) InvGamma(s | nu / 2, nu / 2) ds``. One sweep draws the
scale from its conditional, ``s | x ~ InvGamma((nu + D) / 2, (nu + q(x)) / 2)`` with
``q(x) = (x - mu)' Sigma^-1 (x - mu)``, then takes one elliptical slice sampling step
(I. Murray, R. P. Adams and D. J. C. MacKay, "Elliptical slice sampling", *AISTATS* 2010)
with prior ``N(mu, s Sigma)`` and likelihood ``h(x) = pi_beta(x) / T(x)``:

    log h(x) = beta log L(x) - |x|^2 / (2 prior_sd^2) + (nu + D) / 2 log(1 + q(x) / nu) + const.

Both are Gibbs steps on the joint ``pi_beta(x) T(x, s) / T(x)`` of ``(x, s)`` (whose
conditional of ``x`` given ``s`` is ``h(x) N(x | mu, s Sigma)``), so they leave ``pi_beta``
invariant; the step always moves
(the slice shrinks towards the current point, which is on it), so no proposal is wasted on a
rejection. On the ellipse ``x(theta) = mu + (x - mu) cos theta + v sin theta`` the logits are
``Q mu + Q (x - mu) cos theta + Q v sin theta``: three products per sweep, not one per
shrink.

Random numbers come from numba's own generator (Mersenne Twister), seeded at the start of
each call from the caller's seed: a call runs on one thread from start to end, so the draws
depend only on the seed, not on which thread ran it or what ran beside it.
"""

# numba's nopython mode reads numpy's legacy module-level generator (per thread, seeded per call)
# ruff: noqa: NPY002
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["log_likelihoods", "move"]

#: A row sum below this is recomputed in log space (no underflow to ``log 0``).
_TINY = 1e-280
#: ``log2(e)`` and ``log(2)`` in two parts (Cody and Waite), for :func:`_exp_nonpositive`.
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10


@njit(cache=True, nogil=True)
def _exp_nonpositive(rel: np.ndarray, out: np.ndarray, bits: np.ndarray) -> None:
    """``out = exp(rel)`` for ``rel <= 0``, in loops the compiler vectorises (numba's scalar
    ``exp`` is a library call per element, most of a likelihood evaluation's time).

    ``exp(x) = 2^k exp(r)`` with ``k = round(x / log 2)`` and ``r = x - k log 2`` (``log 2``
    in two parts, W. J. Cody and W. Waite, *Software Manual for the Elementary Functions*,
    Prentice-Hall 1980, ch. 6), ``|r| <= log(2) / 2``, ``exp(r)`` by its Taylor polynomial to
    ``r^12 / 12!`` (truncation < 2e-16 relative) and ``2^k`` written into the exponent bits
    (``bits``: int64 scratch of ``rel``'s length). Within ~2 ulp of ``exp`` where
    ``exp(rel) >= 2^-1022``; below that (subnormal, ~1e-308 of the largest weight, which is
    1) it gives 0.
    """
    scale = bits.view(np.float64)
    for j in range(rel.shape[0]):
        x = max(rel[j], -745.0)
        k = np.floor(x * _LOG2E + 0.5)
        r = (x - k * _LN2_HI) - k * _LN2_LO
        out[j] = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
            1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
                1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
                    1.0 / 479001600))))))))))))
        bits[j] = np.int64(max(k + 1023.0, 0.0)) << 52
    for j in range(rel.shape[0]):
        out[j] *= scale[j]


@njit(cache=True, nogil=True)
def _loglik(logits: np.ndarray, row_start: np.ndarray, pair_node: np.ndarray,
            pair_lik: np.ndarray, pair_ll: np.ndarray, row_w: np.ndarray, total_w: float,
            g: np.ndarray, bits: np.ndarray) -> float:
    """``sum_r w_r log sum_{(r, j)} exp(pair_ll) g_j`` with ``g = softmax(logits)``.

    ``pair_lik = exp(pair_ll)`` (each row's best node has ``pair_ll = 0``); ``g`` and
    ``bits`` are scratch of the support's length (:func:`_exp_nonpositive`). The row sums
    use ``g`` relative to its largest weight and the normaliser once
    (``- W log sum_j exp(logits_j - max)``); a row whose sum underflows is summed again in
    log space. ``logits`` is left less its largest.
    """
    top = logits.max()
    for j in range(logits.shape[0]):
        logits[j] -= top
    _exp_nonpositive(logits, g, bits)
    norm = 0.0
    for j in range(logits.shape[0]):
        norm += g[j]
    total = -total_w * math.log(norm)
    for r in range(row_w.shape[0]):
        # A row's pairs are one run of consecutive nodes (SystemRows.from_loglik): a
        # contiguous dot product, summed in four independent lanes (no gather, no chain of
        # dependent additions).
        first, stop = row_start[r], row_start[r + 1]
        shift = pair_node[first] - first
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        p = first
        while p + 4 <= stop:
            a0 += pair_lik[p] * g[shift + p]
            a1 += pair_lik[p + 1] * g[shift + p + 1]
            a2 += pair_lik[p + 2] * g[shift + p + 2]
            a3 += pair_lik[p + 3] * g[shift + p + 3]
            p += 4
        while p < stop:
            a0 += pair_lik[p] * g[shift + p]
            p += 1
        acc = (a0 + a1) + (a2 + a3)
        if acc > _TINY:
            total += row_w[r] * math.log(acc)
            continue
        best = -np.inf
        for p in range(row_start[r], row_start[r + 1]):
            best = max(best, pair_ll[p] + logits[pair_node[p]])
        acc = 0.0
        for p in range(row_start[r], row_start[r + 1]):
            acc += math.exp(pair_ll[p] + logits[pair_node[p]] - best)
        total += row_w[r] * (best + math.log(acc))
    return total


@njit(cache=True, nogil=True)
def log_likelihoods(x: np.ndarray, basis: np.ndarray, row_start: np.ndarray,
                    pair_node: np.ndarray, pair_lik: np.ndarray, pair_ll: np.ndarray,
                    row_w: np.ndarray) -> np.ndarray:
    """Log-likelihood of each particle ``x[i]`` (coefficients, (particle, term)) given one
    system's rows (module docstring)."""
    n_part = x.shape[0]
    support = basis.shape[0]
    out = np.empty(n_part)
    g = np.empty(support)
    bits = np.empty(support, dtype=np.int64)
    logits = np.empty(support)
    total_w = row_w.sum()
    basis_t = basis.T.copy()
    for i in range(n_part):
        # Q x over the nodes for each term in turn: independent lanes the compiler
        # vectorises (a sum over the terms per node is one chain of dependent additions)
        logits[:] = 0.0
        for d in range(basis.shape[1]):
            xd = x[i, d]
            for j in range(support):
                logits[j] += basis_t[d, j] * xd
        out[i] = _loglik(logits, row_start, pair_node, pair_lik, pair_ll, row_w, total_w, g,
                         bits)
    return out


@njit(cache=True, nogil=True)
def move(x: np.ndarray, ll: np.ndarray, beta: float, prior_sd: float, mu: np.ndarray,
         chol: np.ndarray, chol_inv: np.ndarray, dof: float, n_moves: int, seed: int,
         basis: np.ndarray, row_start: np.ndarray, pair_node: np.ndarray,
         pair_lik: np.ndarray, pair_ll: np.ndarray, row_w: np.ndarray) -> int:
    """``n_moves`` generalised elliptical slice sampling sweeps of every particle, in place.

    ``x`` (particle, term) and its log-likelihoods ``ll`` are updated; ``mu``, ``chol`` (the
    lower Cholesky factor of the t's scale matrix ``Sigma``) and ``chol_inv`` (its inverse)
    and ``dof`` fix the t (module docstring). Returns the number of likelihood evaluations.
    """
    np.random.seed(seed)
    n_part, dim = x.shape
    support = basis.shape[0]
    total_w = row_w.sum()
    prec = 1.0 / (prior_sd * prior_sd)
    half_dof_d = 0.5 * (dof + dim)
    g = np.empty(support)
    bits = np.empty(support, dtype=np.int64)
    logits = np.empty(support)
    l_mu = basis @ mu
    basis_t = basis.T.copy()
    l_d = np.empty(support)
    l_v = np.empty(support)
    d = np.empty(dim)
    z = np.empty(dim)
    eps = np.empty(dim)
    v = np.empty(dim)
    xp = np.empty(dim)
    evals = 0
    for i in range(n_part):
        for _ in range(n_moves):
            for a in range(dim):
                d[a] = x[i, a] - mu[a]
            q = 0.0
            for a in range(dim):
                acc = 0.0
                for b in range(a + 1):
                    acc += chol_inv[a, b] * d[b]
                z[a] = acc
                q += acc * acc
            # s | x ~ InvGamma((dof + D) / 2, (dof + q) / 2)
            s = 0.5 * (dof + q) / np.random.gamma(0.5 * (dof + dim), 1.0)
            root = math.sqrt(s)
            for a in range(dim):
                eps[a] = np.random.standard_normal()
            for a in range(dim):
                acc = 0.0
                for b in range(a + 1):
                    acc += chol[a, b] * eps[b]
                v[a] = root * acc
            sq = 0.0
            for a in range(dim):
                sq += x[i, a] * x[i, a]
            log_y = (beta * ll[i] - 0.5 * prec * sq + half_dof_d * math.log1p(q / dof)
                     + math.log(np.random.random()))
            l_d[:] = 0.0  # Q d and Q v, term by term (vectorised over the nodes)
            l_v[:] = 0.0
            for a in range(dim):
                da = d[a]
                va = v[a]
                for j in range(support):
                    l_d[j] += basis_t[a, j] * da
                    l_v[j] += basis_t[a, j] * va
            theta = 2.0 * math.pi * np.random.random()
            lo = theta - 2.0 * math.pi
            hi = theta
            while True:
                cos_t = math.cos(theta)
                sin_t = math.sin(theta)
                sq = 0.0
                qp = 0.0
                for a in range(dim):
                    xp[a] = mu[a] + d[a] * cos_t + v[a] * sin_t
                    sq += xp[a] * xp[a]
                    za = z[a] * cos_t + root * eps[a] * sin_t
                    qp += za * za
                for j in range(support):
                    logits[j] = l_mu[j] + l_d[j] * cos_t + l_v[j] * sin_t
                llp = _loglik(logits, row_start, pair_node, pair_lik, pair_ll, row_w,
                              total_w, g, bits)
                evals += 1
                if beta * llp - 0.5 * prec * sq + half_dof_d * math.log1p(qp / dof) > log_y:
                    for a in range(dim):
                        x[i, a] = xp[a]
                    ll[i] = llp
                    break
                if theta < 0.0:
                    lo = theta
                else:
                    hi = theta
                if hi - lo < 1e-12:  # only by rounding: theta -> 0 is the current point
                    break
                theta = lo + (hi - lo) * np.random.random()
    return evals
