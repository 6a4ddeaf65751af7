"""Leaderboard groups and shrinkage of many comparisons.

Plausibly-best set
    the smallest set of systems whose posterior probabilities of being best add up to at
    least ``prob`` (a credible set for the identity of the best system; the Bayesian reading
    of the frequentist "plausibly best set", which keeps the configurations not
    significantly worse than the best).

Groups of ties
    walking down the posterior means, a group starts at the best system not yet placed and
    takes every unplaced system ``j`` with ``P(f_leader > f_j) < prob``: systems the posterior
    cannot order at that probability. Beside it, :func:`holm_groups` builds the same groups
    from paired sign-flip tests of per-task rates with Holm's adjustment (Holm 1979, Scand. J.
    Stat. 6(2)): ``j`` joins the leader's group when the adjusted p-value is ``>= alpha``.

Shrinkage of many comparisons
    many effect estimates ``y_i`` with standard errors ``s_i`` (e.g. every candidate against
    a baseline) are partially pooled with a normal-normal hierarchy whose between-effect sd
    ``tau`` is estimated (:mod:`evalbayes.decisions._normal_hierarchy`). Claims are made
    only when ``P(theta_i > 0)`` or ``P(theta_i < 0)`` exceeds ``1 - alpha/2``; the pooling
    pulls noisy estimates toward the common mean, which is how a multilevel model handles
    multiple comparisons without a Bonferroni-type correction (Gelman, Hill & Yajima 2012,
    "Why we (usually) don't have to worry about multiple comparisons", J. Res. Educ. Eff.
    5(2)). :func:`multiple_comparison_study` measures its false-discovery rate beside Holm and
    Benjamini-Hochberg (1995).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import special

from evalbayes._core.names import check_count, check_prob
from evalbayes.decisions._normal_hierarchy import fit_normal_hierarchy

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.data import EvalData
    from evalbayes.results._comparison import Comparison

__all__ = [
    "ShrunkEffects",
    "holm_groups",
    "leaderboard_groups",
    "multiple_comparison_study",
    "plausibly_best",
    "shrink_effects",
    "tie_groups",
]


# ----------------------------------------------------------------------------- pure NumPy
def plausibly_best(p_best: Any, prob: float = 0.95) -> np.ndarray:
    """Indices of the smallest set whose P(best) sums to ``>= prob`` (largest first)."""
    p = np.asarray(p_best, dtype=np.float64)
    prob = check_prob(prob, "prob")
    order = np.argsort(-p, kind="stable")
    cum = np.cumsum(p[order])
    size = int(np.searchsorted(cum, prob - 1e-12) + 1)
    return order[: min(size, p.size)]


def tie_groups(means: Any, p_superior: Any, prob: float = 0.95) -> np.ndarray:
    """Group label (0 = top group) per system from means and ``P(f_i > f_j)`` (module doc).

    ``p_superior[i, j]`` is ``P(f_i > f_j)``.
    """
    means = np.asarray(means, dtype=np.float64)
    sup = np.asarray(p_superior, dtype=np.float64)
    prob = check_prob(prob, "prob")
    label = np.full(means.size, -1)
    group = 0
    for i in np.argsort(-means, kind="stable"):
        if label[i] >= 0:
            continue
        label[i] = group
        for j in np.argsort(-means, kind="stable"):
            if label[j] < 0 and sup[i, j] < prob:
                label[j] = group
        group += 1
    return label


# ----------------------------------------------------------------------------- wrappers
def leaderboard_groups(
    comparison: Comparison, k: Any = None, prob: float = 0.95
) -> pd.DataFrame:
    """Posterior leaderboard: mean, P(best), plausibly-best set and tie groups.

    Columns ``system, mean, p_best, plausibly_best, group`` (sorted by mean).
    """
    ks = [float(v) for v in comparison.draws["k"].values]
    kk = ks[0] if k is None and len(ks) == 1 else float(k) if k is not None else None
    if kk is None or kk not in ks:
        raise ValueError(f"choose k among {comparison.k}")
    draws = comparison.draws.sel(k=kk).transpose("chain", "draw", "system").values
    flat = draws.reshape(-1, draws.shape[-1])
    means = flat.mean(axis=0)
    sup = comparison.stats["p_superior"].sel(k=kk).values
    np.fill_diagonal(sup, 0.0)
    p_best = comparison.p_best().sel(k=kk).values
    best = set(plausibly_best(p_best, prob).tolist())
    frame = pd.DataFrame(
        {
            "system": comparison.systems,
            "mean": means,
            "p_best": p_best,
            "plausibly_best": [i in best for i in range(len(means))],
            "group": tie_groups(means, sup, prob),
        }
    )
    return frame.sort_values("mean", ascending=False, ignore_index=True)


def holm_groups(
    data: EvalData, alpha: float = 0.05, n_resamples: int = 10_000, seed: int = 0
) -> pd.DataFrame:
    """Frequentist groups: paired sign-flip tests of per-task rates, Holm-adjusted.

    Every pair of systems is tested on the tasks both ran (two-sided, :func:`~evalbayes.
    frequentist.sign_flip_test`); the ``S (S - 1) / 2`` p-values are adjusted together with
    :func:`~evalbayes.frequentist.holm`; groups as in :func:`tie_groups` with "cannot
    order" = adjusted ``p >= alpha``. Columns ``system, mean, group``.
    """
    from evalbayes.frequentist import holm, sign_flip_test

    n, c = data.n.values, data.c.values
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(n > 0, c / np.where(n > 0, n, 1), np.nan)
    means = np.nanmean(rates, axis=1)
    n_sys = len(means)
    pairs = [(i, j) for i in range(n_sys) for j in range(i + 1, n_sys)]
    pvals = []
    for i, j in pairs:
        both = np.isfinite(rates[i]) & np.isfinite(rates[j])
        d = rates[i][both] - rates[j][both]
        pvals.append(sign_flip_test(d, n_resamples=n_resamples, seed=seed).p_value)
    adjusted = holm(np.asarray(pvals), alpha=alpha).adjusted
    distinct = np.zeros((n_sys, n_sys))
    for (i, j), p in zip(pairs, adjusted, strict=True):
        distinct[i, j] = distinct[j, i] = 1.0 if p < alpha else 0.0
    # reuse tie_groups with "P(superior)" = 1 for distinguishable pairs
    labels = tie_groups(means, distinct, prob=0.5)
    frame = pd.DataFrame({"system": data.systems, "mean": means, "group": labels})
    return frame.sort_values("mean", ascending=False, ignore_index=True)


@dataclass(frozen=True)
class ShrunkEffects:
    """Partially pooled effects (module docstring).

    Attributes
    ----------
    table : pandas.DataFrame
        ``label, estimate, se, shrunk_mean, shrunk_sd, p_positive, claim`` (``claim`` is
        ``"positive"``, ``"negative"`` or ``""``).
    tau : float
        Posterior mean of the between-effect sd.
    alpha : float
        Claims need ``P(sign) > 1 - alpha / 2``.
    """

    table: pd.DataFrame
    tau: float
    alpha: float


def shrink_effects(
    estimates: Any, standard_errors: Any, labels: Any = None, *, alpha: float = 0.05,
    mu: float | None = None,
) -> ShrunkEffects:
    """Partially pool many effect estimates and make sign claims (module docstring).

    ``P(theta_i > 0)`` uses the Normal approximation of each marginal posterior (mean and sd
    from the exact mixture over ``tau``).
    """
    alpha = check_prob(alpha, "alpha")
    fit = fit_normal_hierarchy(estimates, standard_errors, mu=mu)
    p_pos = special.ndtr(fit.mean / np.maximum(fit.sd, 1e-300))
    cut = 1 - alpha / 2
    claim = np.where(p_pos > cut, "positive", np.where(p_pos < 1 - cut, "negative", ""))
    labels = list(range(fit.y.size)) if labels is None else list(labels)
    table = pd.DataFrame(
        {"label": labels, "estimate": fit.y, "se": fit.s, "shrunk_mean": fit.mean,
         "shrunk_sd": fit.sd, "p_positive": p_pos, "claim": claim}
    )  # fmt: skip
    return ShrunkEffects(table=table, tau=fit.tau_mean, alpha=alpha)


def multiple_comparison_study(
    m: int = 50,
    null_share: float = 0.8,
    effect_sd: float = 2.0,
    se: float = 1.0,
    alpha: float = 0.05,
    n_sims: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Simulated false-discovery rate and power: none, Holm, BH and shrinkage.

    Each replicate has ``m`` effects; a share ``null_share`` is exactly 0, the rest
    ``N(0, effect_sd^2)``; estimates ``y ~ N(theta, se^2)``. A discovery is a claimed sign
    (two-sided z-test p < alpha, Holm- or BH-adjusted, or the shrinkage claim). False
    discovery: the effect is 0 or has the other sign (type S, Gelman & Tuerlinckx 2000).
    Returns per method the mean false-discovery proportion (FDR), the family-wise error rate
    (any false discovery) and the share of non-null effects discovered with the right sign.
    """
    from evalbayes.frequentist import benjamini_hochberg, holm

    m = check_count(m, "m", 2)
    n_sims = check_count(n_sims, "n_sims")
    rng = np.random.default_rng(seed)
    rows: dict[str, list[tuple[float, float, float]]] = {
        "unadjusted": [], "holm": [], "benjamini-hochberg": [], "shrinkage": [],
    }  # fmt: skip
    for _ in range(n_sims):
        null = rng.random(m) < null_share
        theta = np.where(null, 0.0, rng.normal(0.0, effect_sd, m))
        y = theta + rng.normal(0.0, se, m)
        p = 2 * special.ndtr(-np.abs(y) / se)
        sign = np.sign(y)
        found = {
            "unadjusted": p < alpha,
            "holm": holm(p, alpha).reject,
            "benjamini-hochberg": benjamini_hochberg(p, alpha).reject,
        }
        shrunk = shrink_effects(y, np.full(m, se), alpha=alpha).table
        found["shrinkage"] = shrunk["claim"].to_numpy() != ""
        for name, hit in found.items():
            claimed_sign = np.where(name == "shrinkage", np.sign(shrunk["shrunk_mean"]), sign)
            false = hit & (null | (claimed_sign != np.sign(theta)))
            n_hit = hit.sum()
            fdp = false.sum() / n_hit if n_hit else 0.0
            true = hit & ~null & (claimed_sign == np.sign(theta))
            power = true.sum() / max((~null).sum(), 1)
            rows[name].append((fdp, float(false.any()), power))
    out = []
    for name, vals in rows.items():
        arr = np.asarray(vals)
        out.append({"method": name, "fdr": arr[:, 0].mean(), "fwer": arr[:, 1].mean(),
                    "power": arr[:, 2].mean(), "fdr_se": arr[:, 0].std(ddof=1) / np.sqrt(n_sims)})
    return pd.DataFrame(out)
