"""Judge calibration: Cohen's kappa against human labels, and the Rogan-Gladen correction.

References
----------
Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and
Psychological Measurement* 20(1), 37-46.
Rogan, W. J. and Gladen, B. (1978). Estimating prevalence from the results of a screening
test. *American Journal of Epidemiology* 107(1), 71-76.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.names import UNSET, Unset, check_ci_prob, check_count, pick_seed
from evalbayes._core.rendering import Rendered
from evalbayes.frequentist._checks import as_integral, where
from evalbayes.frequentist._dist import norm_isf
from evalbayes.frequentist._rng import Seed, as_generator

__all__ = ["KappaResult", "RoganGladenResult", "cohen_kappa", "rogan_gladen"]

_BLOCK = 1 << 22


@dataclass(frozen=True)
class KappaResult(Rendered):
    """Agreement of a judge with labels on the same cases.

    Attributes
    ----------
    kappa : float
        Cohen's kappa ``(p0 - pe) / (1 - pe)``; NaN when undefined (``pe = 1``).
    lower, upper : float
        Percentile bootstrap interval (resampling cases); resamples with undefined kappa are
        left out of the quantiles and counted in ``n_undefined``.
    ci_prob : float
        Nominal coverage.
    n_resamples, n_undefined : int
        Bootstrap resamples, and how many of them had undefined kappa.
    observed_agreement, chance_agreement : float
        ``p0`` and ``pe``.
    sensitivity, specificity : float
        ``q1 = P(judge pass | label pass)`` and ``q0 = P(judge fail | label fail)``; NaN when
        no case has that label.
    n_cases : int
        Cases with both a label and a verdict.
    status : str
        ``"calibrated"`` (kappa >= threshold on at least ``min_n`` cases),
        ``"insufficient-data"`` (fewer cases, or kappa undefined) or ``"uncalibrated"``.
    """

    _settings_fields = ("ci_prob", "n_resamples")

    kappa: float
    lower: float
    upper: float
    ci_prob: float
    n_resamples: int
    n_undefined: int
    observed_agreement: float
    chance_agreement: float
    sensitivity: float
    specificity: float
    n_cases: int
    status: str


@dataclass(frozen=True)
class RoganGladenResult(Rendered):
    """Judge pass rate corrected for the judge's errors.

    Attributes
    ----------
    estimate : float or numpy.ndarray
        ``(p_hat + q0 - 1) / (q0 + q1 - 1)``. Not clipped: a value outside [0, 1] says the
        inputs are inconsistent (sampling noise in ``p_hat``, ``q0`` or ``q1``).
    se : float, numpy.ndarray or None
        Delta-method standard error, when sample sizes were given.
    lower, upper : float, numpy.ndarray or None
        ``estimate -/+ z se`` (not clipped), when sample sizes were given.
    ci_prob : float
        Nominal coverage of the interval.
    """

    _settings_fields = ("ci_prob",)

    estimate: float | np.ndarray
    se: float | np.ndarray | None
    lower: float | np.ndarray | None
    upper: float | np.ndarray | None
    ci_prob: float


def _binary(x: Any, name: str) -> np.ndarray:
    arr = as_integral(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one verdict per case), got shape {arr.shape}")
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        idx = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}={arr[idx]} at {where(idx)}: verdicts must be pass/fail (1/0)")
    return arr.astype(bool)


def _kappa_rows(judge: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kappa and chance agreement along the last axis (NaN kappa where pe = 1)."""
    p0 = (judge == label).mean(axis=-1)
    pj = judge.mean(axis=-1)
    pl = label.mean(axis=-1)
    pe = pj * pl + (1.0 - pj) * (1.0 - pl)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(pe < 1.0, (p0 - pe) / (1.0 - pe), np.nan)
    return kappa, pe


def cohen_kappa(
    judge: Any,
    label: Any,
    *,
    n_resamples: int = 2000,
    ci_prob: float = 0.95,
    seed: Seed = 0,
    random_seed: Seed | Unset = UNSET,
    threshold: float = 0.6,
    min_n: int = 20,
) -> KappaResult:
    """Cohen's kappa of a judge's pass/fail verdicts against labels, with a bootstrap interval.

    ``p0`` = share of cases where judge and label agree, ``pe = P(judge pass) P(label pass)
    + P(judge fail) P(label fail)``, ``kappa = (p0 - pe) / (1 - pe)`` (Cohen 1960); the 95%
    interval comes from 2,000 seeded bootstrap resamples of the cases.

    Parameters
    ----------
    judge, label : 1-D array_like of bool or 0/1
        Verdicts of the judge and labels, aligned by case (held-out cases only).
    n_resamples, ci_prob, seed, random_seed
        Bootstrap settings.
    threshold : float
        Kappa needed for ``"calibrated"`` (``--threshold``).
    min_n : int
        Cases needed for a status other than ``"insufficient-data"`` (``--min-n``).
    """
    seed = pick_seed(seed, random_seed)
    j = _binary(judge, "judge")
    lab = _binary(label, "label")
    if j.shape != lab.shape:
        raise ValueError(
            f"judge and label must be aligned by case, got shapes {j.shape} and {lab.shape}"
        )
    level = check_ci_prob(ci_prob)
    n_resamples = check_count(n_resamples, "n_resamples")
    min_n = check_count(min_n, "min_n")
    rng = as_generator(seed)
    kappa, pe = _kappa_rows(j, lab)
    n_cases = j.size
    boot = np.empty(n_resamples)
    step = max(1, _BLOCK // n_cases)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        idx = rng.integers(0, n_cases, size=(rows, n_cases))
        boot[start : start + rows] = _kappa_rows(j[idx], lab[idx])[0]
    defined = boot[np.isfinite(boot)]
    tail = (1.0 - level) / 2.0
    if defined.size:
        lower, upper = (float(v) for v in np.quantile(defined, [tail, 1.0 - tail]))
    else:
        lower = upper = float("nan")
    pos = lab.sum()
    neg = n_cases - pos
    sensitivity = float((j & lab).sum() / pos) if pos else float("nan")
    specificity = float((~j & ~lab).sum() / neg) if neg else float("nan")
    kappa_value = float(kappa)
    if n_cases < min_n or not np.isfinite(kappa_value):
        status = "insufficient-data"
    elif kappa_value >= threshold:
        status = "calibrated"
    else:
        status = "uncalibrated"
    return KappaResult(
        kappa=kappa_value,
        lower=lower,
        upper=upper,
        ci_prob=level,
        n_resamples=n_resamples,
        n_undefined=int(n_resamples - defined.size),
        observed_agreement=float((j == lab).mean()),
        chance_agreement=float(pe),
        sensitivity=sensitivity,
        specificity=specificity,
        n_cases=int(n_cases),
        status=status,
    )


def _unit_interval(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > 1)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0]) if arr.ndim else ()
        raise ValueError(f"{name}={arr[idx]} at {where(idx)} must be a probability in [0, 1]")
    return arr


def _scalar(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def rogan_gladen(
    p_hat: Any,
    q0: Any,
    q1: Any,
    *,
    n: int | None = None,
    n_neg: int | None = None,
    n_pos: int | None = None,
    ci_prob: float = 0.95,
) -> RoganGladenResult:
    """Rogan-Gladen correction of a judge's pass rate (Rogan and Gladen 1978).

    ``theta = (p_hat + q0 - 1) / (q0 + q1 - 1)`` with ``p_hat`` the judge's pass rate,
    ``q0`` its specificity and ``q1`` its sensitivity. Refused when ``q0 + q1 <= 1``: such a
    judge is no better than chance and the correction divides by a non-positive number.

    Interval (optional): the delta method with independent binomial errors in the three
    inputs, ``Var(theta) = [p(1-p)/n + (1-theta)^2 q0(1-q0)/n_neg + theta^2 q1(1-q1)/n_pos]
    / (q0 + q1 - 1)^2``, and ``theta -/+ z sqrt(Var)``. Pass the number of judged cases
    ``n`` and the labelled fails ``n_neg`` and passes ``n_pos`` the specificity and
    sensitivity were measured on; a size left out is treated as known exactly (its term
    drops), so giving ``n_neg`` and ``n_pos`` is what makes the interval count the
    uncertainty in ``q0`` and ``q1``.

    Raises
    ------
    ValueError
        Inputs outside [0, 1] or NaN, ``q0 + q1 <= 1``, non-positive sample sizes.
    """
    p = _unit_interval(p_hat, "p_hat")
    spec = _unit_interval(q0, "q0")
    sens = _unit_interval(q1, "q1")
    level = check_ci_prob(ci_prob)
    youden = spec + sens - 1.0
    if (youden <= 0).any():
        idx = tuple(int(i) for i in np.argwhere(np.broadcast_to(youden <= 0, youden.shape))[0])
        total = float(np.asarray(spec + sens)[idx])
        raise ValueError(
            f"Rogan-Gladen correction refused: q0 + q1 = {total:g} <= 1"
            f"{' at ' + where(idx) if idx else ''}; the judge is no better than chance"
        )
    theta = (p + spec - 1.0) / youden
    if n is None and n_neg is None and n_pos is None:
        return RoganGladenResult(
            estimate=_scalar(theta), se=None, lower=None, upper=None, ci_prob=level
        )
    var = np.zeros(np.shape(theta))
    for size, name, term in (
        (n, "n", p * (1.0 - p)),
        (n_neg, "n_neg", (1.0 - theta) ** 2 * spec * (1.0 - spec)),
        (n_pos, "n_pos", theta**2 * sens * (1.0 - sens)),
    ):
        if size is not None:
            var = var + term / check_count(size, name)
    se = np.sqrt(var) / youden
    z = norm_isf((1.0 - level) / 2.0)
    return RoganGladenResult(
        estimate=_scalar(theta),
        se=_scalar(se),
        lower=_scalar(theta - z * se),
        upper=_scalar(theta + z * se),
        ci_prob=level,
    )
