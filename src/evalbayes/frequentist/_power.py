"""Power, sample size and minimum detectable effects.

* :func:`required_units` — paired (or per-arm) units for a z-test (Miller 2024, power),
* :func:`two_proportion_sample_size` — tasks per arm to tell ``p1`` from ``p2`` (the
  normal-approximation formula of Fleiss et al. 2003),
* :func:`difference_se` and :func:`minimum_detectable_effect` — the standard error of a
  difference of two pass rates and the z-based minimum detectable effect (Miller 2024),
* :func:`mcnemar_power` and :func:`mcnemar_mde` — exact power of McNemar's test (McNemar
  1947) and the smallest gap it finds 80% of the time.

References
----------
Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
evaluations. arXiv:2411.00640.
Fleiss, J. L., Levin, B. and Paik, M. C. (2003). *Statistical Methods for Rates and
Proportions*, 3rd ed. Wiley, ch. 4.
McNemar, Q. (1947). Note on the sampling error of the difference between correlated
proportions or percentages. *Psychometrika* 12(2), 153-157.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.names import check_prob
from evalbayes._core.rendering import Rendered
from evalbayes.frequentist._dist import (
    binom_cdf,
    binom_cdf_bound,
    binom_pmf,
    binom_sf,
    norm_isf,
    norm_ppf,
)

__all__ = [
    "McNemarMDE",
    "difference_se",
    "mcnemar_mde",
    "mcnemar_power",
    "minimum_detectable_effect",
    "required_units",
    "two_proportion_sample_size",
]


def _z_sum(alpha: float, power: float) -> float:
    """``z_{1 - alpha/2} + z_{power}``."""
    check_prob(alpha, "alpha")
    check_prob(power, "power")
    return float(norm_isf(alpha / 2.0) + norm_ppf(power))


def _positive(value: Any, name: str) -> float:
    out = float(value)
    if not np.isfinite(out) or out <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return out


def _proportion(value: Any, name: str) -> float:
    out = float(value)
    if not 0.0 < out < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value}")
    return out


def required_units(sd: float, effect: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Units needed for a two-sided z-test to detect a mean difference ``effect``.

    ``N = ceil(((z_{1-alpha/2} + z_{1-beta}) sd / effect)^2)`` (Miller 2024), with
    ``sd`` the per-unit standard deviation of the paired differences. For two independent
    groups pass ``sqrt(2) * sd`` and read the result as units per group.
    """
    sd = _positive(sd, "sd")
    effect = _positive(effect, "effect")
    return math.ceil((_z_sum(alpha, power) * sd / effect) ** 2)


def two_proportion_sample_size(
    p1: float, p2: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Tasks per arm to detect ``p1 -> p2`` with a two-sided two-proportion z-test.

    The standard pooled-variance formula (Fleiss, *Statistical Methods for Rates and
    Proportions*, 1981, without continuity correction):
    ``n = (z_{1-alpha/2} sqrt(2 pbar qbar) + z_{1-beta} sqrt(p1 q1 + p2 q2))^2 /
    (p2 - p1)^2``, ``pbar = (p1 + p2)/2``, rounded up (Fleiss et al. 2003). A worked
    example in our course notes quotes "about 4,100 per arm" for 0.60 -> 0.63; this gives
    4,129.
    """
    p1 = _proportion(p1, "p1")
    p2 = _proportion(p2, "p2")
    if p1 == p2:
        raise ValueError("p1 and p2 are equal: no sample size detects a zero difference")
    check_prob(alpha, "alpha")
    check_prob(power, "power")
    z_a = norm_isf(alpha / 2.0)
    z_b = norm_ppf(power)
    pbar = (p1 + p2) / 2.0
    root = z_a * math.sqrt(2.0 * pbar * (1.0 - pbar)) + z_b * math.sqrt(
        p1 * (1.0 - p1) + p2 * (1.0 - p2)
    )
    return math.ceil(root**2 / (p2 - p1) ** 2)


def difference_se(p: float, n_units: int, rho: float = 0.0) -> float:
    """Standard error of a difference of two pass rates near ``p`` on ``n_units`` units each.

    ``sqrt(2 p (1 - p) (1 - rho) / n)`` (Miller 2024, paired differences): ``rho = 0``
    for independent (unpaired) samples, ``rho`` the correlation of the paired per-unit
    outcomes for a paired design.
    """
    p = _proportion(p, "p")
    n = _positive(n_units, "n_units")
    rho = float(rho)
    if not -1.0 <= rho < 1.0:
        raise ValueError(f"rho must be in [-1, 1), got {rho}")
    return math.sqrt(2.0 * p * (1.0 - p) * (1.0 - rho) / n)


def minimum_detectable_effect(se: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """z-based minimum detectable effect ``(z_{1-alpha/2} + z_{1-beta}) * se`` (Miller 2024)."""
    return _z_sum(alpha, power) * _positive(se, "se")


def mcnemar_power(n_cases: int, p_only_a: float, p_only_b: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided exact McNemar test.

    Each of ``n_cases`` cases is, independently, "only A passes" with probability
    ``p_only_a``, "only B passes" with ``p_only_b``, and a tie otherwise. Then the number of
    changed cases is ``D ~ Bin(n, p_only_a + p_only_b)``, the only-B count given ``D = d`` is
    ``Bin(d, p_only_b / (p_only_a + p_only_b))``, and the test rejects when
    ``min(1, 2 P(X <= min(b, c))) < alpha`` (McNemar 1947). The power sums the rejection
    probability over ``d``.
    """
    n = int(n_cases)
    if n < 1 or n != n_cases:
        raise ValueError(f"n_cases must be a positive int, got {n_cases}")
    alpha = check_prob(alpha, "alpha")
    pa, pb = float(p_only_a), float(p_only_b)
    if pa < 0 or pb < 0 or pa + pb > 1:
        raise ValueError(f"need p_only_a, p_only_b >= 0 with sum <= 1, got {p_only_a}, {p_only_b}")
    return _mcnemar_power(n, pa, pb, _mcnemar_bound(n, alpha))


def _mcnemar_bound(n: int, alpha: float) -> np.ndarray:
    """Per number of changed cases ``d = 0..n``, the largest ``min(b, c)`` that the exact
    two-sided McNemar test rejects at ``alpha`` (-1: none); depends on ``n`` and ``alpha``
    only, so a search over effects computes it once."""
    return binom_cdf_bound(alpha / 2.0, np.arange(n + 1), 0.5)


def _mcnemar_power(n: int, pa: float, pb: float, bound: np.ndarray) -> float:
    """:func:`mcnemar_power` given the rejection bounds of :func:`_mcnemar_bound`.

    The power is ``sum_d P(D = d) P(reject | d)`` with ``D ~ Bin(n, pa + pb)`` changed
    cases; terms with ``P(D = d) < 1e-20 max_d P(D = d)`` are left out (together below
    ``n 1e-20``, far under double precision of a power), so a search over effects at a
    large ``n`` evaluates only the ``d`` that carry probability.
    """
    disc = pa + pb
    if disc == 0:
        return 0.0
    d = np.arange(n + 1)
    weight = binom_pmf(d, n, disc)
    keep = weight >= 1e-20 * weight.max()
    d, weight, bound = d[keep], weight[keep], bound[keep]
    share_b = pb / disc
    reject = np.where(
        bound >= 0,
        binom_cdf(bound, d, share_b) + binom_sf(d - bound - 1, d, share_b),
        0.0,
    )
    return float(np.sum(weight * reject))


@dataclass(frozen=True)
class McNemarMDE(Rendered):
    """Smallest gap McNemar's test finds with the requested power.

    Attributes
    ----------
    effect : float or None
        Smallest ``P(only B) - P(only A)`` (the gap in majority-outcome pass rate) detected
        with probability ``power``; ``None`` when even B winning every changed case is not
        enough ("no 80% power at this n").
    n_cases : int
        Paired cases.
    discordant_rate : float
        Share of cases that change outcome, held fixed.
    alpha, power : float
        Test level and target power.
    """

    _settings_fields = ("alpha", "power")

    effect: float | None
    n_cases: int
    discordant_rate: float
    alpha: float
    power: float

    @property
    def message(self) -> str:
        """Readable summary, e.g. ``'MDE 0.152'`` or ``'no 80% power at this n'``."""
        if self.effect is None:
            return f"no {self.power:.0%} power at this n"
        return f"MDE {self.effect:.3f}"


def mcnemar_mde(
    n_cases: int, discordant_rate: float, alpha: float = 0.05, power: float = 0.8
) -> McNemarMDE:
    """Minimum detectable effect from the exact power of McNemar's test.

    Holds the share of cases that change outcome at ``discordant_rate = psi`` (in a report,
    the observed share) and finds the smallest gap ``delta = P(only B) - P(only A)`` in
    ``(0, psi]`` with :func:`mcnemar_power` ``>= power``, by bisection (the power grows with
    ``delta`` for a fixed ``psi``); the returned gap has at least the requested power.
    """
    psi = float(discordant_rate)
    if not 0.0 <= psi <= 1.0:
        raise ValueError(f"discordant_rate must be in [0, 1], got {discordant_rate}")
    check_prob(alpha, "alpha")
    check_prob(power, "power")
    if power <= alpha:
        raise ValueError(f"power ({power}) must exceed alpha ({alpha})")
    n = int(n_cases)
    bound = None  # the test's rejection bounds: the same for every delta, computed once

    def excess(delta: float) -> float:
        nonlocal bound
        if bound is None:
            if n < 1 or n != n_cases:
                raise ValueError(f"n_cases must be a positive int, got {n_cases}")
            bound = _mcnemar_bound(n, alpha)
        return _mcnemar_power(n, (psi - delta) / 2.0, (psi + delta) / 2.0, bound) - power

    effect = None
    if psi > 0.0 and excess(psi) >= 0:
        low, high = 0.0, psi  # excess(0) < 0 <= excess(psi); bisect to psi * 2**-32
        for _ in range(32):
            mid = (low + high) / 2.0
            if excess(mid) >= 0:
                high = mid
            else:
                low = mid
        effect = high
    return McNemarMDE(effect=effect, n_cases=n, discordant_rate=psi, alpha=alpha, power=power)
