"""Multi-attempt metrics beyond pass@k and pass^k: g-pass@k and maj@k.

Pure NumPy/SciPy (bottom layer). For one task with per-attempt success probability ``p``
and ``k`` independent attempts:

g-pass@k (Liu et al. 2024, "Are Your LLMs Capable of Stable Reasoning?", arXiv 2412.13147)
    the probability that **at least m** of the k attempts succeed,
    ``G(p; k, m) = P(Bin(k, p) >= m) = I_p(m, k - m + 1)`` (regularised incomplete Beta).
    ``m = 1`` is pass@k, ``m = k`` is pass^k. Liu et al. index it by a threshold
    ``tau in (0, 1]`` with ``m = ceil(tau k)``; mg-pass@k averages it over ``tau`` in
    ``(0.5, 1]``: ``(2 / k) sum_{i = ceil(k/2) + 1}^{k} G(p; k, i)``.

    *Unbiased estimator* from ``n >= k`` trials with ``c`` successes: the share of the
    ``C(n, k)`` k-subsets of the trials with at least m successes, the hypergeometric tail
    ``sum_{j >= m} C(c, j) C(n - c, k - j) / C(n, k)`` (a U-statistic, as Chen et al. 2021 for
    pass@k; its expectation over ``c ~ Bin(n, p)`` is exactly ``G(p; k, m)``).

    *Posterior version* for ``p ~ Beta(a, b)``: ``E[G] = sum_{j >= m} BetaBin(j; k, a, b)``.

maj@k (majority voting, "self-consistency", Wang et al. 2023, ICLR)
    k attempts each produce an answer; the task is solved when the most frequent answer
    (plurality) is the reference answer. Ties for the plurality are broken uniformly at
    random, so a tie of the reference with ``r`` other answers counts ``1 / (r + 1)``.

    *Unbiased estimator* from ``n`` labelled attempts: the average over all ``C(n, k)``
    k-subsets, computed exactly by a generating function (below) instead of enumeration.
    *Probability version* for answer probabilities ``pi`` (a multinomial of k draws), by the
    same generating function with ``C(n_i, x)`` replaced by ``pi_i^x / x!`` times ``k!``.
    *Posterior version*: the probability version averaged over Dirichlet draws of ``pi``.

Generating function for maj@k: with ``j`` copies of the reference answer in the subset,
every other answer ``i`` must appear fewer than ``j`` times, or exactly ``j`` times (a tie).
The number of subsets is the coefficient of ``t^(k - j)`` in
``prod_i (sum_{x < j} C(n_i, x) t^x + C(n_i, j) t^j u)`` times ``C(n_ref, j)``; the power of
``u`` counts the tied answers, weighted ``1 / (r + 1)``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalbayes._core.names import check_count

__all__ = [
    "beta_g_pass_at_k",
    "g_pass_at_k",
    "g_pass_m",
    "maj_at_k",
    "mean_g_pass_at_k",
    "mean_maj_at_k",
    "mg_pass_at_k",
    "posterior_maj_at_k",
    "prob_g_pass_at_k",
    "prob_maj_at_k",
]


def g_pass_m(k: int, m: int | None = None, tau: float | None = None) -> int:
    """The least number of successes ``m`` from ``m`` or Liu et al.'s ``tau``: ``ceil(tau k)``.

    Exactly one of ``m`` (``1 <= m <= k``) and ``tau`` (``0 < tau <= 1``) must be given.
    """
    k = check_count(k, "k")
    if (m is None) == (tau is None):
        raise ValueError("give exactly one of m (successes needed) and tau (share of k)")
    if tau is not None:
        tau = float(tau)
        if not 0.0 < tau <= 1.0:
            raise ValueError(f"tau must lie in (0, 1], got {tau}")
        # ceil with a tolerance so that tau = 0.6, k = 5 gives 3, not 4 from 3.0000000000000004
        m = max(1, math.ceil(tau * k - 1e-9))
    m = check_count(m, "m")
    if m > k:
        raise ValueError(f"m={m} exceeds k={k}: at most k attempts can succeed")
    return m


def prob_g_pass_at_k(p: ArrayLike, k: int, m: int) -> NDArray[np.float64]:
    """``P(Bin(k, p) >= m) = I_p(m, k - m + 1)`` for known success probabilities ``p``."""
    from scipy import special  # imported when used (issue 26)

    m = g_pass_m(k, m)
    p_arr = np.asarray(p, dtype=np.float64)
    if np.any(~((p_arr >= 0) & (p_arr <= 1))):
        raise ValueError("success probabilities must lie in [0, 1]")
    return special.betainc(m, k - m + 1, p_arr)


def g_pass_at_k(n: ArrayLike, c: ArrayLike, k: int, m: int) -> NDArray[np.float64]:
    """Unbiased g-pass@k of one or many tasks: the hypergeometric tail ``P(H >= m)``.

    ``H`` counts successes in k trials drawn without replacement from ``n`` trials of which
    ``c`` succeeded: ``sum_{j >= m} C(c, j) C(n - c, k - j) / C(n, k)``. Needs ``n >= k``.

    Parameters
    ----------
    n, c : array_like of int
        Trials and successes per task (broadcast together).
    k, m : int
        Attempts and the least number of them that must succeed, ``1 <= m <= k``.
    """
    m = g_pass_m(k, m)
    n_arr, c_arr = np.broadcast_arrays(np.asarray(n), np.asarray(c))
    if np.any(n_arr != np.round(n_arr)) or np.any(c_arr != np.round(c_arr)):
        raise ValueError("n and c must be integers")
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        raise ValueError("counts must satisfy 0 <= c <= n")
    if np.any(n_arr < k):
        bad = int(np.flatnonzero(np.ravel(n_arr < k))[0])
        raise ValueError(
            f"task at position {bad} has n={int(np.ravel(n_arr)[bad])} < k={k}: the unbiased "
            "estimator needs at least k trials"
        )
    from scipy import stats  # ~1 s to import: only for g-pass@k

    return stats.hypergeom.sf(m - 1, n_arr.astype(np.int64), c_arr.astype(np.int64), k)


def mean_g_pass_at_k(n: ArrayLike, c: ArrayLike, k: int, m: int) -> float:
    """Task average of :func:`g_pass_at_k` (the benchmark's g-pass@k)."""
    return float(np.mean(g_pass_at_k(n, c, k, m)))


def beta_g_pass_at_k(a: ArrayLike, b: ArrayLike, k: int, m: int) -> NDArray[np.float64]:
    """``E[P(Bin(k, p) >= m)]`` for ``p ~ Beta(a, b)``: the Beta-Binomial tail.

    ``sum_{j=m}^{k} C(k, j) B(a + j, b + k - j) / B(a, b)``, each term from ``betaln`` on
    the log scale (no cancellation: the terms are all positive).
    """
    from scipy import special  # imported when used (issue 26)

    m = g_pass_m(k, m)
    a_arr, b_arr = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    if np.any(~(a_arr > 0)) or np.any(~(b_arr > 0)):
        raise ValueError("Beta parameters a and b must be positive")
    j = np.arange(m, k + 1, dtype=np.float64)
    log_terms = (
        special.gammaln(k + 1.0) - special.gammaln(j + 1.0) - special.gammaln(k - j + 1.0)
        + special.betaln(a_arr[..., None] + j, b_arr[..., None] + k - j)
        - special.betaln(a_arr, b_arr)[..., None]
    )
    return np.minimum(np.exp(special.logsumexp(log_terms, axis=-1)), 1.0)


def mg_pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> NDArray[np.float64]:
    """Unbiased mg-pass@k: ``(2 / k) sum_{i = ceil(k/2) + 1}^{k} g-pass@k(m = i)``.

    Liu et al. (2024), eq. for mG-Pass@k (the area under g-pass@k_tau for tau in (0.5, 1]).
    """
    k = check_count(k, "k")
    start = math.ceil(k / 2) + 1
    if start > k:
        raise ValueError(f"mg-pass@k needs k >= 2, got {k}")
    total = sum(g_pass_at_k(n, c, k, i) for i in range(start, k + 1))
    return 2.0 / k * np.asarray(total)


# ----------------------------------------------------------------------------- maj@k
def _poly_mul(p: list[Any], q: list[Any], degree: int) -> list[Any]:
    out = [0] * (degree + 1)
    for i, a in enumerate(p):
        if not a:
            continue
        for j, b in enumerate(q[: degree + 1 - i]):
            out[i + j] += a * b
    return out


def _maj_sum(ref_weight: list[Any], other_weights: list[list[Any]], k: int) -> Any:
    """``sum_j ref_weight[j] sum_r coef[t^(k-j) u^r] / (r + 1)`` (see the module docstring).

    ``ref_weight[x]`` and ``other_weights[i][x]`` are the weights of x copies of the reference
    and of answer i: binomial coefficients (subsets) or ``pi^x / x!`` (multinomial).
    Polynomials in ``u`` are lists indexed by ``r``; in ``t`` by the degree.
    """
    total: Any = 0
    for j in range(1, k + 1):
        if not ref_weight[j]:
            continue
        need = k - j
        # poly[r][d]: coefficient of u^r t^d
        poly = [[1] + [0] * need]
        for w in other_weights:
            below = [w[x] if x < j and x < len(w) else 0 for x in range(need + 1)]
            tie = [0] * (need + 1)
            if j <= need and j < len(w):
                tie[j] = w[j]
            new = [[0] * (need + 1) for _ in range(len(poly) + 1)]
            for r, row in enumerate(poly):
                lo = _poly_mul(row, below, need)
                hi = _poly_mul(row, tie, need)
                new[r] = [x + y for x, y in zip(new[r], lo, strict=True)]
                new[r + 1] = [x + y for x, y in zip(new[r + 1], hi, strict=True)]
            poly = new
        for r, row in enumerate(poly):
            term = ref_weight[j] * row[need]
            if term:
                total += Fraction(term, r + 1) if isinstance(term, int) else term / (r + 1)
    return total


def _answer_counts(answers: Sequence[Hashable], reference: Hashable) -> tuple[int, list[int]]:
    values: dict[Hashable, int] = {}
    for a in answers:
        values[a] = values.get(a, 0) + 1
    ref = values.pop(reference, 0)
    return ref, sorted(values.values(), reverse=True)


def maj_at_k(answers: Sequence[Hashable], reference: Hashable, k: int) -> float:
    """Unbiased maj@k of one task from its per-trial answer labels.

    The exact share of the ``C(n, k)`` k-subsets of the ``n`` trials whose plurality answer is
    ``reference``, ties split uniformly (module docstring). Exact rational arithmetic.

    Parameters
    ----------
    answers : sequence of hashable
        One answer label per trial (e.g. the extracted final answer), ``n >= k`` of them.
    reference : hashable
        The correct answer.
    k : int
        Votes per majority.
    """
    k = check_count(k, "k")
    answers = list(answers)
    n = len(answers)
    if n < k:
        raise ValueError(f"{n} answers < k={k}: the unbiased estimator needs at least k trials")
    ref, others = _answer_counts(answers, reference)
    ref_weight = [math.comb(ref, x) for x in range(k + 1)]
    other_weights = [[math.comb(c, x) for x in range(min(c, k) + 1)] for c in others]
    count = _maj_sum(ref_weight, other_weights, k)
    return float(Fraction(count) / math.comb(n, k))


def mean_maj_at_k(
    answers: dict[Hashable, Sequence[Hashable]], references: dict[Hashable, Hashable], k: int
) -> float:
    """Task average of :func:`maj_at_k`: ``answers[task]`` labels, ``references[task]``."""
    missing = [t for t in answers if t not in references]
    if missing:
        raise ValueError(f"tasks without a reference answer: {missing[:5]}")
    if not answers:
        raise ValueError("no tasks")
    return float(np.mean([maj_at_k(answers[t], references[t], k) for t in answers]))


def prob_maj_at_k(probs: ArrayLike, k: int, reference: int = 0) -> float:
    """maj@k for known answer probabilities: the plurality of ``Multinomial(k, probs)`` wins.

    ``probs`` lists the probability of every distinct answer (summing to 1); ``reference`` is
    the index of the correct one. Ties split uniformly.
    """
    from scipy import special  # imported when used (issue 26)

    k = check_count(k, "k")
    pi = np.asarray(probs, dtype=np.float64)
    if pi.ndim != 1 or pi.size == 0 or np.any(pi < 0) or abs(pi.sum() - 1.0) > 1e-9:
        raise ValueError("probs must be a 1-D vector of probabilities summing to 1")
    if not 0 <= reference < pi.size:
        raise ValueError(f"reference index {reference} outside 0..{pi.size - 1}")
    x = np.arange(k + 1)
    log_fact = special.gammaln(x + 1.0)

    def weights(q: float) -> list[float]:
        with np.errstate(divide="ignore"):
            return list(np.exp(x * np.log(q) - log_fact)) if q > 0 else [1.0] + [0.0] * k

    others = [weights(float(q)) for i, q in enumerate(pi) if i != reference and q > 0]
    total = _maj_sum(weights(float(pi[reference])), others, k)
    return float(min(1.0, total * math.exp(special.gammaln(k + 1.0))))


def posterior_maj_at_k(
    answers: Sequence[Hashable],
    reference: Hashable,
    k: int,
    *,
    prior: float = 1.0,
    draws: int = 1000,
    seed: int = 0,
) -> NDArray[np.float64]:
    """Posterior draws of maj@k: ``pi ~ Dirichlet(prior + counts)`` over the observed answers.

    The categories are the distinct observed answers plus the reference (if never observed).
    Each draw gives :func:`prob_maj_at_k`. An answer never seen gets no category: the
    posterior is conditional on the observed answer set (state it when reporting).
    """
    k = check_count(k, "k")
    ref, others = _answer_counts(list(answers), reference)
    counts = np.array([ref, *others], dtype=np.float64)
    if prior <= 0:
        raise ValueError(f"prior must be > 0, got {prior}")
    rng = np.random.default_rng(seed)
    pis = rng.dirichlet(counts + prior, size=check_count(draws, "draws"))
    return np.array([prob_maj_at_k(p / p.sum(), k, 0) for p in pis])
