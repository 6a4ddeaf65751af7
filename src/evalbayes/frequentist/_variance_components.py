"""Method-of-moments (ANOVA) variance components of a model x harness (x task) design.

The balanced random-effects two-way model with ``K`` replicates per cell (Montgomery,
"Design and Analysis of Experiments", 9th ed., §13.3; Searle, Casella and McCulloch 1992,
"Variance Components", ch. 4)::

    y[i, j, k] = mu + a[i] + b[j] + (ab)[i, j] + e[i, j, k]
    E[MS_A]  = s2_e + K s2_ab + J K s2_a
    E[MS_B]  = s2_e + K s2_ab + I K s2_b
    E[MS_AB] = s2_e + K s2_ab
    E[MS_E]  = s2_e

so ``s2_ab = (MS_AB - MS_E) / K``, ``s2_a = (MS_A - MS_AB) / (J K)``,
``s2_b = (MS_B - MS_AB) / (I K)`` and ``s2_e = MS_E``. :func:`factorial_anova` applies it to a
(model, harness, task) table in which the replicates are tasks crossed with every cell, so a
task main effect is separated too: ``E[MS_T] = s2_e + I J s2_t``.

Intervals are Satterthwaite's (1946): a component ``sum_k c_k MS_k`` is treated as
``s2 chi2_nu / nu`` with ``nu = (sum c_k MS_k)^2 / sum (c_k MS_k)^2 / df_k``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalbayes._core.names import check_ci_prob
from evalbayes.frequentist._checks import as_values

__all__ = [
    "AnovaComponents",
    "empirical_logit",
    "factorial_anova",
    "satterthwaite_interval",
    "two_way_components",
]


@dataclass(frozen=True)
class AnovaComponents:
    """Variance components from mean squares.

    Attributes
    ----------
    table : pandas.DataFrame
        Index = component (``model``, ``harness``, ``interaction``, [``task``,] ``residual``);
        columns ``variance`` (truncated at 0), ``raw`` (the moment estimate, may be
        negative), ``sd``, ``share`` (variance / sum of variances), ``lower``, ``upper``
        (Satterthwaite interval of the variance; NaN where the raw estimate is <= 0).
    mean_squares : pandas.DataFrame
        Index = source; columns ``ss``, ``df``, ``ms``.
    ci_prob : float
        Nominal coverage of the intervals.
    """

    table: pd.DataFrame
    mean_squares: pd.DataFrame
    ci_prob: float

    def share(self, component: str) -> float:
        """Share of the total variance of one component."""
        return float(self.table.loc[component, "share"])


def satterthwaite_interval(
    coefs: Any, ms: Any, df: Any, ci_prob: float = 0.95
) -> tuple[float, float, float]:
    """Estimate, and Satterthwaite interval, of a linear combination ``sum c_k MS_k``.

    Returns ``(estimate, lower, upper)``; the interval is NaN when the estimate is <= 0.
    """
    from scipy import stats  # ~1 s to import: only where a chi-square quantile is needed

    c, m, d = (np.asarray(x, dtype=np.float64) for x in (coefs, ms, df))
    est = float(np.sum(c * m))
    if est <= 0:
        return est, float("nan"), float("nan")
    nu = est**2 / float(np.sum((c * m) ** 2 / d))
    tail = (1.0 - check_ci_prob(ci_prob)) / 2.0
    lower = nu * est / stats.chi2.isf(tail, nu)
    with np.errstate(divide="ignore"):  # nu -> 0: the upper end is infinite
        upper = nu * est / stats.chi2.ppf(tail, nu)
    return est, float(lower), float(upper)


def _table(rows: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    raw = pd.Series({k: v[0] for k, v in rows.items()})
    var = raw.clip(lower=0.0)
    total = float(var.sum())
    return pd.DataFrame(
        {
            "variance": var,
            "raw": raw,
            "sd": np.sqrt(var),
            "share": var / total if total > 0 else np.nan,
            "lower": pd.Series({k: v[1] for k, v in rows.items()}),
            "upper": pd.Series({k: v[2] for k, v in rows.items()}),
        }
    )


def two_way_components(
    ms_a: float,
    ms_b: float,
    ms_ab: float,
    ms_err: float,
    n_a: int,
    n_b: int,
    n_rep: int,
    *,
    df_err: float | None = None,
    ci_prob: float = 0.95,
) -> AnovaComponents:
    """Variance components of the balanced random two-way design from its mean squares.

    Parameters
    ----------
    ms_a, ms_b, ms_ab, ms_err : float
        Mean squares of factor A (model), factor B (harness), their interaction, error.
    n_a, n_b, n_rep : int
        Levels of A (``I``), of B (``J``), replicates per cell (``K``).
    df_err : float, optional
        Error degrees of freedom; default ``I J (K - 1)``.

    Notes
    -----
    ``s2_ab = (MS_AB - MS_E)/K``, ``s2_a = (MS_A - MS_AB)/(J K)``,
    ``s2_b = (MS_B - MS_AB)/(I K)``, ``s2_e = MS_E`` (module docstring).
    """
    for value, name in ((n_a, "n_a"), (n_b, "n_b"), (n_rep, "n_rep")):
        if int(value) < 1 or int(value) != value:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if n_a < 2 or n_b < 2:
        raise ValueError(f"a two-way design needs >= 2 levels of each factor, got {n_a} x {n_b}")
    i, j, k = int(n_a), int(n_b), int(n_rep)
    df_a, df_b, df_ab = i - 1, j - 1, (i - 1) * (j - 1)
    df_e = float(df_err) if df_err is not None else float(i * j * (k - 1))
    ms = np.array([ms_a, ms_b, ms_ab, ms_err], dtype=np.float64)
    df = np.array([df_a, df_b, df_ab, df_e])
    rows = {
        "model": satterthwaite_interval([1 / (j * k), 0, -1 / (j * k), 0], ms, df, ci_prob),
        "harness": satterthwaite_interval([0, 1 / (i * k), -1 / (i * k), 0], ms, df, ci_prob),
        "interaction": satterthwaite_interval([0, 0, 1 / k, -1 / k], ms, df, ci_prob),
        "residual": satterthwaite_interval([0, 0, 0, 1], ms, df, ci_prob),
    }
    mean_squares = pd.DataFrame(
        {"ss": ms * df, "df": df, "ms": ms}, index=["model", "harness", "interaction", "error"]
    )
    return AnovaComponents(_table(rows), mean_squares, check_ci_prob(ci_prob))


def empirical_logit(c: Any, n: Any, *, offset: float = 0.5) -> np.ndarray:
    """``log((c + offset) / (n - c + offset))`` (Cox 1970, "The analysis of binary data").

    Finite at ``c = 0`` and ``c = n``; its variance is about ``1 / (n p (1 - p))``.
    """
    c_arr = np.asarray(c, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if (n_arr < 1).any() or (c_arr < 0).any() or (c_arr > n_arr).any():
        raise ValueError("empirical_logit needs 0 <= c <= n and n >= 1 in every cell")
    return np.log((c_arr + offset) / (n_arr - c_arr + offset))


def factorial_anova(y: Any, *, ci_prob: float = 0.95) -> AnovaComponents:
    """Variance components of a balanced (model, harness, task) table by the method of moments.

    Parameters
    ----------
    y : array_like, shape (I, J, T)
        One value per (model, harness, task): a pass rate, or an empirical logit
        (:func:`empirical_logit`) to work on the logit scale of the Bayesian model.
        Balanced: every cell present (no NaN).

    Notes
    -----
    Model ``y[i,j,t] = mu + a[i] + b[j] + (ab)[i,j] + u[t] + e[i,j,t]``, all random; ``e``
    absorbs the task x model / harness interactions and the trial noise. Sums of squares
    ``SS_A = J T sum (y_i.. - y...)^2`` (df ``I-1``), ``SS_B`` likewise (``J-1``),
    ``SS_AB = T sum (y_ij. - y_i.. - y_.j. + y...)^2`` (``(I-1)(J-1)``),
    ``SS_T = I J sum (y_..t - y...)^2`` (``T-1``), ``SS_E`` the rest (``(IJ-1)(T-1)``).
    The tasks play the replicates of :func:`two_way_components` (``K = T``), and
    ``s2_task = (MS_T - MS_E) / (I J)``.
    """
    arr = as_values(y, "y", ndim=3)
    i, j, t = arr.shape
    if i < 2 or j < 2 or t < 2:
        raise ValueError(f"factorial_anova needs >= 2 models, harnesses and tasks, got {arr.shape}")
    g = arr.mean()
    mi = arr.mean(axis=(1, 2))
    mj = arr.mean(axis=(0, 2))
    mt = arr.mean(axis=(0, 1))
    mij = arr.mean(axis=2)
    ss = {
        "model": j * t * float(np.sum((mi - g) ** 2)),
        "harness": i * t * float(np.sum((mj - g) ** 2)),
        "interaction": t * float(np.sum((mij - mi[:, None] - mj[None, :] + g) ** 2)),
        "task": i * j * float(np.sum((mt - g) ** 2)),
        "error": float(np.sum((arr - mij[:, :, None] - mt[None, None, :] + g) ** 2)),
    }
    df = {
        "model": i - 1,
        "harness": j - 1,
        "interaction": (i - 1) * (j - 1),
        "task": t - 1,
        "error": (i * j - 1) * (t - 1),
    }
    ms = {key: ss[key] / df[key] for key in ss}
    two = two_way_components(
        ms["model"], ms["harness"], ms["interaction"], ms["error"], i, j, t,
        df_err=df["error"], ci_prob=ci_prob,
    )
    rows = {
        key: (float(two.table.loc[key, "raw"]), float(two.table.loc[key, "lower"]),
              float(two.table.loc[key, "upper"]))
        for key in ("model", "harness", "interaction")
    }
    rows["task"] = satterthwaite_interval(
        [1 / (i * j), -1 / (i * j)], [ms["task"], ms["error"]], [df["task"], df["error"]], ci_prob
    )
    rows["residual"] = satterthwaite_interval([1.0], [ms["error"]], [df["error"]], ci_prob)
    mean_squares = pd.DataFrame(
        {"ss": pd.Series(ss), "df": pd.Series(df, dtype=float), "ms": pd.Series(ms)}
    )
    return AnovaComponents(_table(rows), mean_squares, check_ci_prob(ci_prob))
