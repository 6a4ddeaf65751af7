"""Prediction-powered inference (PPI, PPI++) for a mean graded by a judge.

A judge (an LLM grader, a classifier) scores every case; a small gold subset also carries the
human label. PPI estimates the mean of the label from both, without assuming the judge is right:

``theta_lambda = lambda * mean_N(f) + mean_n(Y - lambda * f)``

with ``f`` the judge's score, ``Y`` the label, ``n`` labelled and ``N`` unlabelled cases
(disjoint). ``lambda = 1`` is PPI (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic 2023,
"Prediction-powered inference", Science 382); the variance-minimising ``lambda`` is PPI++
(Angelopoulos, Duchi and Zrnic 2023, "PPI++: Efficient prediction-powered inference",
arXiv:2311.01453). Both are unbiased for ``E[Y]`` whatever the judge does; a poor judge only
costs width (PPI++ never does worse than the labels alone, asymptotically).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.names import check_ci_prob
from evalbayes.frequentist._checks import as_values
from evalbayes.frequentist._dist import norm_isf

__all__ = ["PPIResult", "ppi_lambda", "ppi_mean"]


@dataclass(frozen=True)
class PPIResult:
    """A prediction-powered estimate of a mean.

    Attributes
    ----------
    estimate : float
        ``lambda mean_N(f) + mean_n(Y - lambda f)``.
    se : float
        ``sqrt(lambda^2 Var(f_unlabelled) / N + Var(Y - lambda f) / n)``.
    lower, upper : float
        ``estimate -/+ z se`` (a CLT interval; not clipped to [0, 1]).
    ci_prob : float
        Nominal coverage.
    lam : float
        The weight of the judge (1 for PPI).
    n_labelled, n_unlabelled : int
        ``n`` and ``N``.
    classical_se : float
        ``sd(Y) / sqrt(n)``, the labels-only standard error, for comparison.
    """

    estimate: float
    se: float
    lower: float
    upper: float
    ci_prob: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    classical_se: float


def ppi_lambda(y: np.ndarray, f_labelled: np.ndarray, f_unlabelled: np.ndarray) -> float:
    """The PPI++ weight of the judge for a mean (Angelopoulos, Duchi and Zrnic 2023, Ex. 6.1).

    ``lambda = Cov_n(Y, f) / ((1 + n / N) Var(f))``, the minimiser of
    ``lambda^2 Var(f) / N + Var(Y - lambda f) / n``, with ``Cov`` over the labelled cases and
    ``Var(f)`` over all cases (labelled and unlabelled), as in the authors' ``ppi_py``.
    Returns 0 when the judge's scores do not vary.
    """
    n, big_n = y.size, f_unlabelled.size
    cov = float(np.mean((y - y.mean()) * (f_labelled - f_labelled.mean())))
    var_f = float(np.var(np.concatenate([f_labelled, f_unlabelled]), ddof=1))
    if var_f <= 0:
        return 0.0
    return cov / ((1.0 + n / big_n) * var_f)


def ppi_mean(
    y: Any,
    f_labelled: Any,
    f_unlabelled: Any,
    *,
    lam: float | str = "tuned",
    ci_prob: float = 0.95,
    clip: bool = False,
) -> PPIResult:
    """Prediction-powered estimate and interval of ``E[Y]``.

    Parameters
    ----------
    y : 1-D array_like
        Labels of the gold cases (0/1 for pass/fail, or any real score).
    f_labelled : 1-D array_like
        The judge's scores of the same gold cases, aligned with ``y``.
    f_unlabelled : 1-D array_like
        The judge's scores of the other cases (no label).
    lam : float or "tuned"
        The weight of the judge: ``1.0`` is PPI (Angelopoulos et al. 2023), ``"tuned"``
        (default) is PPI++ with :func:`ppi_lambda`, ``0.0`` is the labels-only mean.
    ci_prob : float
        Nominal coverage of the interval ``estimate -/+ z se``.
    clip : bool
        Clip a tuned ``lambda`` to [0, 1].

    Notes
    -----
    ``theta = lam mean_N(f) + mean_n(Y - lam f)``;
    ``se^2 = lam^2 s^2(f_unlabelled) / N + s^2(Y - lam f) / n`` (sample variances, ddof 1).
    With a tuned ``lambda`` the interval is asymptotically valid (PPI++, Theorem 1).
    """
    yv = as_values(y, "y")
    fl = as_values(f_labelled, "f_labelled")
    fu = as_values(f_unlabelled, "f_unlabelled")
    if yv.shape != fl.shape:
        raise ValueError(
            f"y and f_labelled must be aligned by case, got shapes {yv.shape} and {fl.shape}"
        )
    if yv.size < 2 or fu.size < 2:
        raise ValueError(
            f"PPI needs at least 2 labelled and 2 unlabelled cases, got {yv.size} and {fu.size}"
        )
    level = check_ci_prob(ci_prob)
    if isinstance(lam, str):
        if lam != "tuned":
            raise ValueError(f"lam must be a number or 'tuned', got {lam!r}")
        weight = ppi_lambda(yv, fl, fu)
        if clip:
            weight = min(1.0, max(0.0, weight))
    else:
        weight = float(lam)
        if not np.isfinite(weight):
            raise ValueError(f"lam must be finite, got {lam}")
    rect = yv - weight * fl
    estimate = weight * float(fu.mean()) + float(rect.mean())
    var = weight**2 * float(np.var(fu, ddof=1)) / fu.size + float(np.var(rect, ddof=1)) / yv.size
    se = float(np.sqrt(var))
    z = float(norm_isf((1.0 - level) / 2.0))
    return PPIResult(
        estimate=estimate,
        se=se,
        lower=estimate - z * se,
        upper=estimate + z * se,
        ci_prob=level,
        lam=weight,
        n_labelled=int(yv.size),
        n_unlabelled=int(fu.size),
        classical_se=float(np.std(yv, ddof=1) / np.sqrt(yv.size)),
    )
