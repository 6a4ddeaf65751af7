"""Paired comparisons of two systems on the same units.

Sign-flip (randomisation) test, exact McNemar test, majority outcomes per case, the
``better``/``worse``/``inconclusive`` verdict and the non-inferiority rule. Paired differences
are the recommended comparison of two models on one eval (Miller 2024); the verdict and
non-inferiority rules follow coding.sh, "How evals are computed" (https://coding.sh/docs/eval-methods).

References
----------
Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
evaluations. arXiv:2411.00640.
Fisher, R. A. (1935). *The Design of Experiments*. Oliver and Boyd.
Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero. *Statistical
Applications in Genetics and Molecular Biology* 9(1).
McNemar, Q. (1947). Note on the sampling error of the difference between correlated
proportions or percentages. *Psychometrika* 12(2), 153-157.
Piaggio, G. et al. (2012). Reporting of noninferiority and equivalence randomized trials:
extension of the CONSORT 2010 statement. *JAMA* 308(24), 2594-2604.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from evalbayes._core.names import UNSET, Unset, check_ci_prob, check_count, check_prob, pick_seed
from evalbayes._core.rendering import Rendered
from evalbayes.frequentist._bootstrap import _FEW_VALUES, BootstrapResult, bootstrap_ci
from evalbayes.frequentist._checks import as_clusters, as_counts, as_integral, as_values
from evalbayes.frequentist._dist import binom_cdf
from evalbayes.frequentist._rng import Seed, as_generator

__all__ = [
    "McNemarResult",
    "NonInferiorityResult",
    "PairedComparison",
    "PairedOutcomes",
    "SignFlipResult",
    "majority_outcome",
    "mcnemar",
    "non_inferiority",
    "paired_comparison",
    "paired_outcomes",
    "paired_verdict",
    "sign_flip_test",
]

Alternative = Literal["two-sided", "greater", "less"]
_BLOCK = 1 << 22
_REL_TOL = 1e-10  # sums that differ by less than this share of sum(|d|) count as ties


@dataclass(frozen=True)
class SignFlipResult(Rendered):
    """Result of :func:`sign_flip_test`.

    Attributes
    ----------
    statistic : float
        Observed mean difference (B - A), before any margin shift.
    p_value : float
        Exact share of sign assignments at least as extreme, or the Monte Carlo estimate
        ``(b + 1) / (m + 1)`` (never 0).
    alternative : str
        ``"two-sided"``, ``"greater"`` (B - A > -margin) or ``"less"``.
    method : str
        ``"exact"`` or ``"monte-carlo"``.
    n_units : int
        Units whose signs were flipped (clusters when clusters were given).
    n_assignments : int
        ``2**n_units`` (exact) or the number of random assignments (Monte Carlo).
    margin : float
        The null is "mean difference = -margin"; 0 for the plain test.
    """

    _settings_fields = ("alternative", "method", "margin")

    statistic: float
    p_value: float
    alternative: str
    method: str
    n_units: int
    n_assignments: int
    margin: float


@dataclass(frozen=True)
class McNemarResult(Rendered):
    """Exact McNemar test on the cases that changed outcome.

    Attributes
    ----------
    only_a, only_b : int
        Cases only A passed (``b``) and only B passed (``c``).
    p_value : float
        ``min(1, 2 P(X <= min(b, c)))``, ``X ~ Bin(b + c, 1/2)``; 1 when nothing changed.
    """

    only_a: int
    only_b: int
    p_value: float


@dataclass(frozen=True)
class PairedOutcomes(Rendered):
    """Majority-outcome 2x2 table of two systems on shared cases.

    Attributes
    ----------
    both, only_a, only_b, neither : int
        Cases both passed, only A passed, only B passed, neither passed.
    """

    both: int
    only_a: int
    only_b: int
    neither: int

    @property
    def n_cases(self) -> int:
        """Number of paired cases."""
        return self.both + self.only_a + self.only_b + self.neither


@dataclass(frozen=True)
class PairedComparison(Rendered):
    """Paired bootstrap interval, sign-flip test and verdict for B - A.

    Attributes
    ----------
    difference : float
        Mean of the per-unit differences B - A.
    interval : BootstrapResult
        Paired bootstrap interval of the mean difference.
    sign_flip : SignFlipResult
        Two-sided sign-flip test of "no difference".
    verdict : str
        ``"better"``, ``"worse"`` or ``"inconclusive"`` (:func:`paired_verdict`).
    alpha : float
        Level of the sign-flip test used by the verdict.
    """

    _settings_fields = ("alpha",)

    difference: float
    interval: BootstrapResult
    sign_flip: SignFlipResult
    verdict: str
    alpha: float


@dataclass(frozen=True)
class NonInferiorityResult(Rendered):
    """Non-inferiority of B to A within a margin D (Piaggio et al. 2012).

    Attributes
    ----------
    margin : float
        ``D > 0``: B may be at most D worse than A.
    difference : float
        Mean difference B - A.
    lower, upper : float
        Paired bootstrap interval of B - A.
    p_value : float
        One-sided sign-flip p of the null "B - A <= -D".
    non_inferior : bool
        ``lower > -D`` and ``p_value < alpha``.
    alpha : float
        One-sided level (0.025 by default).
    """

    _settings_fields = ("margin", "alpha")

    margin: float
    difference: float
    lower: float
    upper: float
    p_value: float
    non_inferior: bool
    alpha: float

    @property
    def exit_code(self) -> int:
        """0 when B is non-inferior, 1 otherwise (the exit code of a CI gate)."""
        return 0 if self.non_inferior else 1


def _half_sums(values: np.ndarray) -> np.ndarray:
    """All ``2**len(values)`` signed sums ``sum(+/- values)``."""
    h = values.size
    bits = (np.arange(2**h, dtype=np.int64)[:, None] >> np.arange(h)) & 1
    return (2.0 * bits - 1.0) @ values


def _count_exact(sums: np.ndarray, observed: float, tol: float, alternative: str) -> int:
    """Count sign assignments whose total is at least as extreme as ``observed``.

    Meet in the middle: the totals are ``a + b`` over the signed sums of the two halves; for
    each ``a`` the qualifying ``b`` are counted by binary search in the sorted second half.
    """
    half = sums.size // 2
    left = _half_sums(sums[:half])
    right = np.sort(_half_sums(sums[half:]))
    n_right = right.size
    if alternative == "greater":
        return int((n_right - np.searchsorted(right, observed - tol - left, "left")).sum())
    if alternative == "less":
        return int(np.searchsorted(right, observed + tol - left, "right").sum())
    threshold = abs(observed) - tol
    if threshold <= 0:
        return int(left.size * n_right)
    upper = n_right - np.searchsorted(right, threshold - left, "left")
    lower = np.searchsorted(right, -threshold - left, "right")
    return int((upper + lower).sum())


def _count_monte_carlo(
    sums: np.ndarray,
    observed: float,
    tol: float,
    alternative: str,
    n_resamples: int,
    rng: np.random.Generator,
) -> int:
    """Count random sign assignments whose total is at least as extreme as ``observed``.

    When the units take few distinct magnitudes ``|d|`` (paired binary outcomes give 0 and
    1), a total is drawn as ``sum_j |d_j| (2 B_j - m_j)`` with ``B_j ~ Binomial(m_j, 1/2)``
    the positive signs among the ``m_j`` units of magnitude ``|d_j|``: the same distribution
    as one fair sign per unit, at ``O(distinct)`` per assignment instead of ``O(N)``.
    """
    n_units = sums.size
    magnitudes, counts = np.unique(np.abs(sums), return_counts=True)
    few = len(magnitudes) * _FEW_VALUES <= n_units
    extreme = 0
    step = max(1, _BLOCK // (len(magnitudes) if few else n_units))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        if few:
            positive = rng.binomial(counts, 0.5, size=(rows, len(counts)))
            totals = (2.0 * positive - counts) @ magnitudes
        else:
            signs = np.where(rng.random((rows, n_units)) < 0.5, -1.0, 1.0)
            totals = signs @ sums
        if alternative == "greater":
            extreme += int((totals >= observed - tol).sum())
        elif alternative == "less":
            extreme += int((totals <= observed + tol).sum())
        else:
            extreme += int((np.abs(totals) >= abs(observed) - tol).sum())
    return extreme


def sign_flip_test(
    differences: Any,
    *,
    clusters: Any = None,
    alternative: Alternative = "two-sided",
    n_resamples: int = 10_000,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
    exact_max: int = 20,
    margin: float = 0.0,
) -> SignFlipResult:
    """Sign-flip (Fisher randomisation) test of paired differences.

    Under "no difference" each unit's difference ``d_i`` is as likely to be ``+d_i`` as
    ``-d_i``; p is the share of the ``2^N`` sign assignments whose mean is at least as
    extreme as the observed one (Fisher 1935). Exact enumeration up to
    ``exact_max`` units (meet in the middle, ``O(2^(N/2) N)``); above it ``n_resamples``
    seeded random assignments with the Phipson-Smyth correction ``p = (b + 1)/(m + 1)``, so
    p is never 0. With ``clusters`` all units of a cluster share one sign.

    With ``margin = D`` the null becomes "mean difference = -D" (the differences are shifted
    by ``+D`` before flipping); ``alternative="greater"`` then tests "B - A <= -D" against
    "B - A > -D", the one-sided non-inferiority test (Piaggio et al. 2012).

    Parameters
    ----------
    differences : 1-D array_like of float
        Per-unit differences B - A.
    clusters : 1-D array_like, optional
        A label per unit.
    alternative : {"two-sided", "greater", "less"}
        "At least as extreme" means ``|T*| >= |T|``, ``T* >= T`` or ``T* <= T``. Totals
        within ``1e-10 * sum(|d|)`` of the observed one count as ties (at least as extreme),
        so rounding cannot change an exact p.
    n_resamples : int
        Monte Carlo assignments when ``N > exact_max``.
    seed : int, numpy.random.Generator or None
        Same seed, same p (Monte Carlo only).
    random_seed : optional
        PyMC's name for ``seed``; give either (both given must agree).
    exact_max : int
        Largest number of units (clusters) enumerated exactly.
    margin : float
        Non-inferiority margin ``D >= 0``.
    """
    seed = pick_seed(seed, random_seed)
    d = as_values(differences, "differences")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(
            f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}"
        )
    margin = float(margin)
    if not np.isfinite(margin) or margin < 0:
        raise ValueError(f"margin must be a finite number >= 0, got {margin}")
    if (
        isinstance(exact_max, bool)
        or not isinstance(exact_max, int | np.integer)
        or not (0 <= exact_max <= 40)
    ):
        raise ValueError(f"exact_max must be an int in [0, 40], got {exact_max!r}")
    n_resamples = check_count(n_resamples, "n_resamples")
    shifted = d + margin
    if clusters is None:
        sums = shifted
    else:
        codes, labels = as_clusters(clusters, d.size)
        sums = np.bincount(codes, weights=shifted, minlength=labels.size)
    observed = float(sums.sum())
    tol = _REL_TOL * float(np.abs(sums).sum())
    if sums.size <= exact_max:
        count = _count_exact(sums, observed, tol, alternative)
        total = 2**sums.size
        p_value = count / total
        method = "exact"
    else:
        rng = as_generator(seed)
        count = _count_monte_carlo(sums, observed, tol, alternative, n_resamples, rng)
        total = n_resamples
        p_value = (count + 1) / (n_resamples + 1)
        method = "monte-carlo"
    return SignFlipResult(
        statistic=float(d.mean()),
        p_value=float(p_value),
        alternative=alternative,
        method=method,
        n_units=int(sums.size),
        n_assignments=int(total),
        margin=margin,
    )


def mcnemar(only_a: int, only_b: int) -> McNemarResult:
    """Exact McNemar test (McNemar 1947; exact binomial form).

    ``p = min(1, 2 P(X <= min(b, c)))`` with ``X ~ Bin(b + c, 1/2)``, ``b`` the cases only
    A passed and ``c`` the cases only B passed. Cases both or neither passed say nothing
    about the difference.

    Raises
    ------
    ValueError
        Negative or non-integer counts.
    """
    b = int(as_integral(only_a, "only_a"))
    c = int(as_integral(only_b, "only_b"))
    for name, value in (("only_a", b), ("only_b", c)):
        if value < 0:
            raise ValueError(f"{name}={value} is negative")
    p_value = min(1.0, 2.0 * float(binom_cdf(min(b, c), b + c, 0.5)))
    return McNemarResult(only_a=b, only_b=c, p_value=p_value)


def majority_outcome(n: Any, c: Any) -> np.ndarray | bool:
    """Majority outcome per case: passes when most of its trials pass.

    "Most" is a strict majority, ``2 c > n``; a tie (``c = n/2`` for even ``n``) is a fail,
    so a case counts as solved only when it passes more often than not.
    """
    n_arr, c_arr = as_counts(n, c)
    out = 2 * c_arr > n_arr
    return bool(out) if out.ndim == 0 else out


def paired_outcomes(n_a: Any, c_a: Any, n_b: Any, c_b: Any) -> PairedOutcomes:
    """Majority outcomes of A and B on the same cases as a 2x2 table.

    Parameters
    ----------
    n_a, c_a, n_b, c_b : 1-D array_like of int
        Counts of A and B on the shared cases, aligned.
    """
    pass_a = np.atleast_1d(majority_outcome(n_a, c_a))
    pass_b = np.atleast_1d(majority_outcome(n_b, c_b))
    if pass_a.shape != pass_b.shape:
        raise ValueError(
            f"A and B must be paired case by case, got shapes {pass_a.shape} and {pass_b.shape}"
        )
    return PairedOutcomes(
        both=int((pass_a & pass_b).sum()),
        only_a=int((pass_a & ~pass_b).sum()),
        only_b=int((~pass_a & pass_b).sum()),
        neither=int((~pass_a & ~pass_b).sum()),
    )


def paired_verdict(lower: float, upper: float, p_value: float, alpha: float = 0.05) -> str:
    """The paired verdict rule (interval and sign-flip test must agree).

    ``"better"`` when the paired interval lies above 0 and the sign-flip p is below
    ``alpha``; ``"worse"`` when it lies below 0 and p is below ``alpha``; otherwise
    ``"inconclusive"``.
    """
    alpha = check_prob(alpha, "alpha")
    if not (np.isfinite(lower) and np.isfinite(upper) and lower <= upper):
        raise ValueError(f"need a finite interval lower <= upper, got [{lower}, {upper}]")
    if not 0.0 <= p_value <= 1.0:
        raise ValueError(f"p_value must be in [0, 1], got {p_value}")
    if p_value < alpha and lower > 0:
        return "better"
    if p_value < alpha and upper < 0:
        return "worse"
    return "inconclusive"


def paired_comparison(
    a: Any,
    b: Any,
    *,
    clusters: Any = None,
    n_resamples: int = 10_000,
    ci_prob: float = 0.95,
    alpha: float = 0.05,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
    exact_max: int = 20,
) -> PairedComparison:
    """Paired bootstrap interval, two-sided sign-flip test and verdict for ``b - a``.

    Parameters
    ----------
    a, b : 1-D array_like of float
        Per-unit scores of A (baseline) and B on the same units.
    clusters : 1-D array_like, optional
        Resample and flip whole clusters.
    n_resamples, ci_prob, seed, random_seed
        Bootstrap (and Monte Carlo sign-flip) settings; one generator serves both.
    alpha : float
        Level of the sign-flip test in the verdict.
    exact_max : int
        Largest number of units enumerated exactly by the sign-flip test.
    """
    seed = pick_seed(seed, random_seed)
    a_arr = as_values(a, "a")
    b_arr = as_values(b, "b")
    if a_arr.shape != b_arr.shape:
        raise ValueError(
            f"a and b must be paired (same length), got shapes {a_arr.shape} and {b_arr.shape}"
        )
    alpha = check_prob(alpha, "alpha")
    rng = as_generator(seed)
    diffs = b_arr - a_arr
    interval = bootstrap_ci(
        diffs, n_resamples=n_resamples, ci_prob=ci_prob, seed=rng, clusters=clusters
    )
    flip = sign_flip_test(
        diffs, clusters=clusters, n_resamples=n_resamples, seed=rng, exact_max=exact_max
    )
    return PairedComparison(
        difference=float(diffs.mean()),
        interval=interval,
        sign_flip=flip,
        verdict=paired_verdict(interval.lower, interval.upper, flip.p_value, alpha),
        alpha=alpha,
    )


def non_inferiority(
    a: Any,
    b: Any,
    margin: float,
    *,
    clusters: Any = None,
    alpha: float = 0.025,
    n_resamples: int = 10_000,
    ci_prob: float = 0.95,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
    exact_max: int = 20,
) -> NonInferiorityResult:
    """Is B at most ``margin`` worse than A? (Piaggio et al. 2012, CONSORT).

    Non-inferior when the paired bootstrap interval's lower bound is above ``-D`` and a
    one-sided sign-flip test of "B - A <= -D" has p below ``alpha`` (0.025).

    Parameters
    ----------
    a, b : 1-D array_like of float
        Per-unit scores of A and B on the same units.
    margin : float
        ``D > 0``, on the scale of the scores (e.g. 0.02 for two points of pass rate).
    clusters, alpha, n_resamples, ci_prob, seed, random_seed, exact_max
        As :func:`paired_comparison`; ``alpha`` is one-sided.
    """
    seed = pick_seed(seed, random_seed)
    margin = float(margin)
    if not np.isfinite(margin) or margin <= 0:
        raise ValueError(f"the non-inferiority margin must be > 0, got {margin}")
    alpha = check_prob(alpha, "alpha")
    check_ci_prob(ci_prob)
    a_arr = as_values(a, "a")
    b_arr = as_values(b, "b")
    if a_arr.shape != b_arr.shape:
        raise ValueError(
            f"a and b must be paired (same length), got shapes {a_arr.shape} and {b_arr.shape}"
        )
    rng = as_generator(seed)
    diffs = b_arr - a_arr
    interval = bootstrap_ci(
        diffs, n_resamples=n_resamples, ci_prob=ci_prob, seed=rng, clusters=clusters
    )
    flip = sign_flip_test(
        diffs,
        clusters=clusters,
        alternative="greater",
        n_resamples=n_resamples,
        seed=rng,
        exact_max=exact_max,
        margin=margin,
    )
    return NonInferiorityResult(
        margin=margin,
        difference=float(diffs.mean()),
        lower=interval.lower,
        upper=interval.upper,
        p_value=flip.p_value,
        non_inferior=bool(interval.lower > -margin and flip.p_value < alpha),
        alpha=alpha,
    )
