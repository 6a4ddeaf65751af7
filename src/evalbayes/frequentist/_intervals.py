"""Binomial confidence intervals for one pass rate: Wilson score and Clopper-Pearson.

References
----------
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
*JASA* 22(158), 209-212.
Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated
in the case of the binomial. *Biometrika* 26(4), 404-413.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.names import check_ci_prob
from evalbayes._core.rendering import Rendered
from evalbayes.frequentist._checks import as_counts
from evalbayes.frequentist._dist import beta_isf, beta_ppf, norm_isf

__all__ = ["Interval", "clopper_pearson_interval", "wilson_interval"]


@dataclass(frozen=True)
class Interval(Rendered):
    """A point estimate with a confidence interval (scalars or arrays of one shape).

    Attributes
    ----------
    estimate, lower, upper : float or numpy.ndarray
        ``c / n`` and the interval bounds.
    ci_prob : float
        Nominal coverage, e.g. 0.95.
    method : str
        ``"wilson"`` or ``"clopper-pearson"``.
    """

    _settings_fields = ("ci_prob", "method")

    estimate: float | np.ndarray
    lower: float | np.ndarray
    upper: float | np.ndarray
    ci_prob: float
    method: str


def _scalar(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def wilson_interval(c: Any, n: Any, ci_prob: float = 0.95) -> Interval:
    """Wilson score interval for ``c`` successes in ``n`` Bernoulli trials.

    The set of ``p`` the score test does not reject (Wilson 1927):
    ``(p_hat + z^2/(2n)) / (1 + z^2/n) +/- z / (1 + z^2/n) * sqrt(p_hat (1 - p_hat)/n
    + z^2/(4 n^2))`` with ``z = Phi^{-1}(1 - (1 - ci_prob)/2)``. Its width never collapses at
    ``c = 0`` or ``c = n``, which makes it the usual interval for a pooled pass@1.

    Parameters
    ----------
    c, n : array_like of int
        Successes and trials, broadcast together; ``n >= 1``, ``0 <= c <= n``.
    ci_prob : float
        Nominal coverage in (0, 1).
    """
    n_arr, c_arr = as_counts(n, c)
    level = check_ci_prob(ci_prob)
    z = norm_isf((1.0 - level) / 2.0)
    p = c_arr / n_arr
    denom = 1.0 + z**2 / n_arr
    center = (p + z**2 / (2.0 * n_arr)) / denom
    half = z / denom * np.sqrt(p * (1.0 - p) / n_arr + z**2 / (4.0 * n_arr**2))
    return Interval(
        estimate=_scalar(p),
        lower=_scalar(center - half),
        upper=_scalar(center + half),
        ci_prob=level,
        method="wilson",
    )


def clopper_pearson_interval(c: Any, n: Any, ci_prob: float = 0.95) -> Interval:
    """Exact (Clopper-Pearson) interval from Beta quantiles.

    ``lower = Beta^{-1}(a/2; c, n - c + 1)`` (0 when ``c = 0``) and
    ``upper = Beta^{-1}(1 - a/2; c + 1, n - c)`` (1 when ``c = n``), ``a = 1 - ci_prob``:
    the interval inverting two one-sided exact binomial tests, conservative by construction.
    Arguments as :func:`wilson_interval`.
    """
    n_arr, c_arr = as_counts(n, c)
    level = check_ci_prob(ci_prob)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(c_arr == 0, 0.0, beta_ppf(tail, np.maximum(c_arr, 1), n_arr - c_arr + 1))
        upper = np.where(
            c_arr == n_arr,
            1.0,
            beta_isf(tail, c_arr + 1, np.maximum(n_arr - c_arr, 1)),
        )
    return Interval(
        estimate=_scalar(c_arr / n_arr),
        lower=_scalar(lower),
        upper=_scalar(upper),
        ci_prob=level,
        method="clopper-pearson",
    )
