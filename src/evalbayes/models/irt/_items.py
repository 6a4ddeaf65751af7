"""Item analysis of an IRT fit: item and ability tables, Fisher information, item selection.

Reached through the posterior of an :class:`~evalbayes.models.irt.IRTModel` fit, an
:class:`IRTPosterior`: ``posterior.items()``, ``posterior.abilities()``,
``posterior.item_information()``, ``posterior.select_items(m)``. Conventions as in the
model: ``logit q = a (theta - b)``, ``p = g + (1 - g) q``, higher ``b`` = harder item.

Fisher information of one trial of item ``t`` about ``theta`` (Birnbaum 1968; Baker & Kim,
*Item Response Theory*, 2nd ed., eq. 3.3 for the 3PL)::

    I_t(theta) = (dp/dtheta)^2 / (p (1 - p)) = a^2 (1 - g) q^2 (1 - q) / p
               = a^2 p (1 - p)                          (g = 0: 1PL with a = 1, 2PL)

Item flags (columns of :func:`item_table`):

``never_solved`` / ``always_solved``
    No success / no failure in any observed trial (saturated: the item cannot separate
    systems; its difficulty is bounded on one side by the prior only).
``low_discrimination`` (2PL/3PL)
    ``P(a < low_a | data) >= flag_prob`` (defaults 0.5 and 0.9): the item barely depends on
    ability. Missing (``<NA>``) for the 1PL, which has no discrimination to estimate.
``negative_discrimination``
    The item's observed solve rates correlate *negatively* with the systems' abilities, and
    less than the model can reproduce: the posterior predictive p-value
    ``P(corr(c_rep / n, theta) <= corr(c / n, theta))`` over posterior draws is below
    ``ppc_alpha`` (0.01). The discrimination is log-normal (``a > 0``), so a reversed item
    (strong systems fail it: often a wrong reference answer) cannot get ``a < 0``; it gets a
    small ``a`` and fails this check. Works for the 1PL too.
``high_information``
    The item's Fisher information summed over the systems' posterior-mean abilities is in
    the top ``high_information_share`` (10 %) of items: the items that best separate these
    systems.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit

from evalbayes._core.intervals import credible_interval
from evalbayes._core.names import CHUNK_NUMBERS, check_ci_prob
from evalbayes.results._posterior import Posterior

__all__ = [
    "IRTDraws",
    "IRTPosterior",
    "ability_table",
    "fisher_information",
    "item_information",
    "item_table",
    "select_items",
]


@dataclass(frozen=True)
class IRTDraws:
    """Parameter draws as NumPy arrays, sample dims flattened or kept as (chain, draw).

    ``a`` is all ones for the 1PL; ``g`` all zeros for the 1PL and 2PL.
    """

    theta: np.ndarray  # (..., system)
    b: np.ndarray  # (..., task)
    a: np.ndarray  # (..., task)
    g: np.ndarray  # (..., task)
    sigma_b: np.ndarray  # (...)
    sigma_a: np.ndarray | None  # (...) or None for the 1PL

    def prob(self, tasks: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Success probability ``g + (1 - g) sigmoid(a (theta - b))``, shape (..., S, T)."""
        a = self.a[..., None, tasks]
        b = self.b[..., None, tasks]
        g = self.g[..., None, tasks]
        q = expit(a * (self.theta[..., :, None] - b))
        return g + (1.0 - g) * q



class ItemModel(Protocol):
    """What item analysis needs of an IRT model (:class:`~evalbayes.models.irt.IRTModel`)."""

    name: str
    has_discrimination: bool
    estimates_guess: bool

    def draws(self, posterior: xr.Dataset) -> IRTDraws: ...


@dataclass(frozen=True, eq=False)
class IRTPosterior(Posterior):
    """Posterior of an IRT fit: the :class:`Posterior` interface plus item analysis."""

    def items(self, ci_prob: float = 0.9, **kwargs: Any) -> pd.DataFrame:
        """Item table; see :func:`item_table`."""
        return item_table(self, ci_prob=ci_prob, **kwargs)

    def abilities(self, ci_prob: float = 0.9) -> pd.DataFrame:
        """Ability table; see :func:`ability_table`."""
        return ability_table(self, ci_prob=ci_prob)

    def item_information(self, theta: Any = None) -> xr.DataArray:
        """Posterior-mean Fisher information; see :func:`item_information`."""
        return item_information(self, theta)

    def select_items(self, m: int) -> pd.DataFrame:
        """The ``m`` most informative items; see :func:`select_items`."""
        return select_items(self, m)


def _irt(posterior: Posterior) -> ItemModel:
    if not isinstance(posterior, IRTPosterior):
        raise ValueError(
            f"item analysis needs an IRT fit (irt-1pl/2pl/3pl), got {posterior.model.name!r}"
        )
    return posterior.model  # type: ignore[return-value]


def _flat(draws: IRTDraws) -> IRTDraws:
    """Collapse (chain, draw) into one sample axis."""

    def f(x: np.ndarray) -> np.ndarray:
        return x.reshape(-1, *x.shape[2:])

    return IRTDraws(
        theta=f(draws.theta), b=f(draws.b), a=f(draws.a), g=f(draws.g),
        sigma_b=f(draws.sigma_b), sigma_a=None if draws.sigma_a is None else f(draws.sigma_a),
    )  # fmt: skip


def fisher_information(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, g: np.ndarray
) -> np.ndarray:
    """Per-trial Fisher information ``a^2 (1 - g) q^2 (1 - q) / p`` (broadcasting).

    ``q = sigmoid(a (theta - b))``, ``p = g + (1 - g) q``; equals ``a^2 p (1 - p)`` for g = 0.
    """
    q = expit(a * (theta - b))
    p = g + (1.0 - g) * q
    with np.errstate(invalid="ignore", divide="ignore"):
        info = a**2 * (1.0 - g) * q**2 * (1.0 - q) / p
    return np.where(p > 0, info, 0.0)


def _mean_information(draws: IRTDraws, theta: np.ndarray) -> np.ndarray:
    """Posterior mean over draws of I_t(theta_j), shape (len(theta), tasks)."""
    n_samples, n_task = draws.b.shape
    out = np.zeros((len(theta), n_task))
    step = max(1, CHUNK_NUMBERS // max(1, n_samples * len(theta)))
    for start in range(0, n_task, step):
        sl = slice(start, start + step)
        info = fisher_information(
            theta[None, :, None], draws.a[:, None, sl], draws.b[:, None, sl], draws.g[:, None, sl]
        )
        out[:, sl] = info.mean(axis=0)
    return out


def item_information(posterior: Posterior, theta: Any = None) -> xr.DataArray:
    """Posterior-mean Fisher information of each item (one trial) at given abilities.

    Parameters
    ----------
    posterior : Posterior
        An IRT fit.
    theta : array_like, optional
        Abilities to evaluate at. Default: the systems' posterior-mean abilities, and the
        result has dims ``(system, task)`` with coordinate ``theta``; otherwise dims
        ``(theta, task)``.

    Returns
    -------
    xarray.DataArray
        ``E[I_t(theta) | data]`` over the posterior draws of the item parameters.
    """
    model = _irt(posterior)
    draws = _flat(model.draws(posterior.posterior))
    task = posterior.data.dataset["task"].values
    if theta is None:
        values = draws.theta.mean(axis=0)
        info = _mean_information(draws, values)
        return xr.DataArray(
            info,
            dims=("system", "task"),
            coords={
                "system": posterior.data.dataset["system"].values,
                "theta": ("system", values),
                "task": task,
            },
            name="information",
        )
    values = np.atleast_1d(np.asarray(theta, dtype=float))
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise ValueError(f"theta must be a finite number or 1-D sequence, got {theta!r}")
    info = _mean_information(draws, values)
    return xr.DataArray(
        info, dims=("theta", "task"), coords={"theta": values, "task": task},
        name="information",
    )  # fmt: skip


def select_items(posterior: Posterior, m: int) -> pd.DataFrame:
    """The ``m`` items that best separate the systems.

    Criterion: the item's posterior-mean Fisher information summed over the systems'
    posterior-mean abilities, ``sum_s E[I_t(theta_s)]`` (the information a test made of these
    items carries about where each of these systems stands; Lord 1980, *Applications of Item
    Response Theory to Practical Testing Problems*: run the items that best separate the
    systems first). Columns ``task``,
    ``information``, ``b_mean``, ``a_mean`` (2PL/3PL), ``solve_rate``, sorted by information.
    """
    model = _irt(posterior)
    n_task = len(posterior.data.tasks)
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or not 1 <= m <= n_task:
        raise ValueError(f"m must be an integer between 1 and the {n_task} items, got {m!r}")
    info = item_information(posterior).sum("system").values
    draws = model.draws(posterior.posterior)
    order = np.argsort(-info, kind="stable")[:m]
    n, c = posterior.data.n.values, posterior.data.c.values
    frame = pd.DataFrame(
        {
            "task": np.asarray(posterior.data.tasks)[order],
            "information": info[order],
            "b_mean": draws.b.mean(axis=(0, 1))[order],
        }
    )
    if model.has_discrimination:
        frame["a_mean"] = draws.a.mean(axis=(0, 1))[order]
    frame["solve_rate"] = c.sum(axis=0)[order] / n.sum(axis=0)[order]
    return frame


def _masked_corr(
    theta: np.ndarray, rates: np.ndarray, weight: np.ndarray
) -> np.ndarray:
    """Correlation over systems of ``rates[..., s, t]`` with ``theta[d, s]`` per draw and item.

    ``weight[s, t]`` is 1 for observed cells; ``rates`` is (S, T) or (D, S, T). NaN where the
    item's rates (or abilities) are constant over its systems.
    """
    total = weight.sum(axis=0)
    mean_t = theta @ weight / total  # (D, T)
    var_t = (theta**2) @ weight / total - mean_t**2
    if rates.ndim == 2:
        wr = weight * rates
        mean_r = wr.sum(axis=0) / total
        var_r = (wr * rates).sum(axis=0) / total - mean_r**2
        cov = theta @ wr / total - mean_t * mean_r
    else:
        wr = weight[None] * rates
        mean_r = wr.sum(axis=1) / total
        var_r = (wr * rates).sum(axis=1) / total - mean_r**2
        cov = np.einsum("ds,dst->dt", theta, wr) / total - mean_t * mean_r
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.sqrt(var_t * var_r)
    return np.where((var_r > 1e-12) & (var_t > 1e-12), corr, np.nan)


def _ability_ppc(
    posterior: Posterior, draws: IRTDraws, max_draws: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean correlation of observed rates with abilities, and its predictive p-value.

    Uses up to ``max_draws`` evenly spaced draws; replicates ``c_rep ~ Binomial(n, p)``.
    """
    n, c = posterior.data.n.values, posterior.data.c.values
    weight = (n > 0).astype(float)
    rates = np.where(n > 0, c / np.maximum(n, 1), 0.0)
    total = draws.theta.shape[0]
    pick = np.unique(np.linspace(0, total - 1, min(total, max_draws)).round().astype(int))
    theta = draws.theta[pick]
    obs = _masked_corr(theta, rates, weight)
    rng = np.random.default_rng([seed, 17])
    below = np.zeros(n.shape[1])
    step = max(1, CHUNK_NUMBERS // max(1, len(pick) * n.shape[0]))
    for start in range(0, n.shape[1], step):
        sl = slice(start, start + step)
        sub = _slice_draws(draws, pick, sl)
        p = sub.prob()
        rep = rng.binomial(n[None, :, sl], np.clip(p, 0.0, 1.0)) / np.maximum(n[None, :, sl], 1)
        rep_corr = _masked_corr(theta, rep, weight[:, sl])
        # a replicate with constant rates has no correlation: count it as not below
        below[sl] = np.mean(np.where(np.isnan(rep_corr), 0.0, rep_corr <= obs[:, sl]), axis=0)
    constant = np.all(np.isnan(obs), axis=0)
    with np.errstate(invalid="ignore"):
        mean_obs = np.where(constant, np.nan, np.nanmean(np.where(constant, 0.0, obs), axis=0))
    return mean_obs, np.where(constant, np.nan, below)


def _slice_draws(draws: IRTDraws, pick: np.ndarray, tasks: slice) -> IRTDraws:
    return IRTDraws(
        theta=draws.theta[pick], b=draws.b[pick, tasks], a=draws.a[pick, tasks],
        g=draws.g[pick, tasks], sigma_b=draws.sigma_b[pick],
        sigma_a=None if draws.sigma_a is None else draws.sigma_a[pick],
    )  # fmt: skip


def _interval(values: np.ndarray, ci_prob: float, dim: str) -> tuple[np.ndarray, np.ndarray]:
    """ETI bounds of (chain, draw, dim) draws via :func:`credible_interval`."""
    da = xr.DataArray(values, dims=("chain", "draw", dim))
    lower, upper = credible_interval(da, ci_prob, "eti")
    return lower.values, upper.values


def item_table(
    posterior: Posterior,
    ci_prob: float = 0.9,
    *,
    low_a: float = 0.5,
    flag_prob: float = 0.9,
    ppc_alpha: float = 0.01,
    high_information_share: float = 0.1,
    ppc_draws: int = 500,
) -> pd.DataFrame:
    """One row per item: difficulty, discrimination, floor, solve rate, information, flags.

    Columns: ``task, systems, trials, successes, solve_rate``; ``b_mean, b_sd, b_lower,
    b_upper`` (higher = harder); for 2PL/3PL ``a_mean, a_sd, a_lower, a_upper, p_low_a``
    (``P(a < low_a)``); for the 3PL with estimated floors ``g_mean, g_lower, g_upper``;
    ``ability_corr`` (posterior mean correlation of the item's solve rates with the
    abilities), ``ppc_corr_p`` (its predictive p-value), ``information`` (summed over the
    systems' posterior-mean abilities); the flags of the module docstring; ``ci_prob``; and
    ``approximate`` (True) for a variational fit. Intervals are equal-tailed.
    """
    model = _irt(posterior)
    check_ci_prob(ci_prob)
    if not 0 < flag_prob < 1 or not 0 < ppc_alpha < 1 or not 0 < high_information_share < 1:
        raise ValueError("flag_prob, ppc_alpha and high_information_share must lie in (0, 1)")
    if not low_a > 0:
        raise ValueError(f"low_a must be positive, got {low_a}")
    data = posterior.data
    n, c = data.n.values, data.c.values
    draws = model.draws(posterior.posterior)
    trials, successes = n.sum(axis=0), c.sum(axis=0)
    frame = pd.DataFrame(
        {
            "task": data.tasks,
            "systems": (n > 0).sum(axis=0),
            "trials": trials,
            "successes": successes,
            "solve_rate": successes / trials,
        }
    )
    b_lo, b_hi = _interval(draws.b, ci_prob, "task")
    frame["b_mean"] = draws.b.mean(axis=(0, 1))
    frame["b_sd"] = draws.b.std(axis=(0, 1), ddof=1)
    frame["b_lower"], frame["b_upper"] = b_lo, b_hi
    if model.has_discrimination:
        a_lo, a_hi = _interval(draws.a, ci_prob, "task")
        frame["a_mean"] = draws.a.mean(axis=(0, 1))
        frame["a_sd"] = draws.a.std(axis=(0, 1), ddof=1)
        frame["a_lower"], frame["a_upper"] = a_lo, a_hi
        frame["p_low_a"] = (draws.a < low_a).mean(axis=(0, 1))
    if model.estimates_guess:
        g_lo, g_hi = _interval(draws.g, ci_prob, "task")
        frame["g_mean"] = draws.g.mean(axis=(0, 1))
        frame["g_lower"], frame["g_upper"] = g_lo, g_hi
    flat = _flat(draws)
    corr, ppc_p = _ability_ppc(posterior, flat, ppc_draws, posterior.sampler.seed)
    frame["ability_corr"] = corr
    frame["ppc_corr_p"] = ppc_p
    info = item_information(posterior).sum("system").values
    frame["information"] = info
    frame["never_solved"] = successes == 0
    frame["always_solved"] = successes == trials
    if model.has_discrimination:
        frame["low_discrimination"] = pd.array(frame["p_low_a"] >= flag_prob, dtype="boolean")
    else:
        frame["low_discrimination"] = pd.array([pd.NA] * len(frame), dtype="boolean")
    frame["negative_discrimination"] = (corr < 0) & (ppc_p < ppc_alpha)
    frame["high_information"] = info >= np.quantile(info, 1.0 - high_information_share)
    frame["ci_prob"] = ci_prob
    if posterior.approximate:
        frame["approximate"] = True
    return frame


def ability_table(posterior: Posterior, ci_prob: float = 0.9) -> pd.DataFrame:
    """One row per system: ability ``theta`` with interval, rank with interval, P(best).

    Columns ``system, theta_mean, theta_sd, theta_lower, theta_upper, rank_mean, rank_lower,
    rank_upper, p_best, solve_rate, ci_prob`` (+ ``approximate`` for a variational fit).
    Rank 1 is the highest ability; rank bounds are quantiles of the rank of each draw's
    ``theta`` among the systems (lower/upper quantile taken as observed ranks).
    """
    model = _irt(posterior)
    check_ci_prob(ci_prob)
    theta = model.draws(posterior.posterior).theta
    flat = theta.reshape(-1, theta.shape[-1])
    # rank 1 = best; ties (measure zero for continuous draws) broken by order
    ranks = np.argsort(np.argsort(-flat, axis=1, kind="stable"), axis=1) + 1
    lo_q, hi_q = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    lower, upper = _interval(theta, ci_prob, "system")
    n, c = posterior.data.n.values, posterior.data.c.values
    frame = pd.DataFrame(
        {
            "system": posterior.data.systems,
            "theta_mean": flat.mean(axis=0),
            "theta_sd": flat.std(axis=0, ddof=1),
            "theta_lower": lower,
            "theta_upper": upper,
            "rank_mean": ranks.mean(axis=0),
            "rank_lower": np.quantile(ranks, lo_q, axis=0, method="lower").astype(int),
            "rank_upper": np.quantile(ranks, hi_q, axis=0, method="higher").astype(int),
            "p_best": (ranks == 1).mean(axis=0),
            "solve_rate": c.sum(axis=1) / n.sum(axis=1),
            "ci_prob": ci_prob,
        }
    )
    if posterior.approximate:
        frame["approximate"] = True
    return frame
