"""Score a new system against a calibrated item bank, without refitting the bank.

Given an IRT fit of a bank of items (draws of ``a_t, b_t, g_t``; :mod:`evalbayes.models.irt._model`)
and a new system's counts ``c_t`` of ``n_t`` trials on any subset of the items, its ability
has the posterior

    p(theta | y, bank) ∝ N(theta; 0, 1) * (1/M) sum_m prod_t Bin(c_t | n_t, p_t(theta; m))
    p_t(theta; m) = g_t^m + (1 - g_t^m) sigmoid(a_t^m (theta - b_t^m))

the prior of abilities in the model's units times the likelihood averaged over the ``M``
posterior draws of the item parameters: the item uncertainty is integrated, not plugged in.
It is evaluated on a grid of ``theta`` (quadrature; expected a posteriori, "EAP", scoring of
Bock & Mislevy 1982, Appl. Psychol. Meas. 6(4)), giving the EAP, posterior sd and a
central interval. It neglects only what the new system's responses would teach about the
items, which a refit would use (compared with a refit in
``tests/decisions/test_scoring.py``).

Adaptive item selection: the next item is the unanswered one with the largest Fisher
information at the current EAP, averaged over the item draws (Lord 1980, *Applications of
Item Response Theory to Practical Testing Problems*, ch. 10; van der Linden & Glas 2010,
*Elements of Adaptive Testing*).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import special

from evalbayes._core.names import check_count, check_prob

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.results._posterior import Posterior

__all__ = [
    "AbilityScore",
    "ability_grid_posterior",
    "adaptive_test",
    "item_draws",
    "next_item",
    "score_new_system",
]

_CHUNK = 4_000_000
DEFAULT_GRID = np.linspace(-6.0, 6.0, 241)


@dataclass(frozen=True)
class AbilityScore:
    """Posterior of a new system's ability on a grid.

    Attributes
    ----------
    eap, sd : float
        Posterior mean and standard deviation of ``theta``.
    lower, upper : float
        Central ``ci_prob`` interval (inverse CDF on the grid, linear interpolation).
    ci_prob : float
    grid, weight : numpy.ndarray
        Grid points and posterior probabilities.
    n_items, n_trials : int
        Items answered and trials used.
    """

    eap: float
    sd: float
    lower: float
    upper: float
    ci_prob: float
    grid: np.ndarray
    weight: np.ndarray
    n_items: int
    n_trials: int


def ability_grid_posterior(
    n: Any,
    c: Any,
    a: Any,
    b: Any,
    g: Any,
    *,
    grid: Any = None,
    prior_sd: float = 1.0,
    ci_prob: float = 0.9,
) -> AbilityScore:
    """Grid posterior of ``theta`` (module docstring), pure NumPy.

    Parameters
    ----------
    n, c : array_like, shape (T,)
        Trials and successes on the answered items.
    a, b, g : array_like, shape (M, T)
        Item-parameter draws for those items.
    grid : array_like, optional
        Ability grid; default 241 points on [-6, 6].
    prior_sd : float
        Sd of the Normal(0, sd) prior of abilities (1 in evalbayes' IRT models).
    """
    n = np.asarray(n, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    a, b, g = (np.atleast_2d(np.asarray(x, dtype=np.float64)) for x in (a, b, g))
    if n.ndim != 1 or c.shape != n.shape or a.shape != b.shape or b.shape != g.shape \
            or a.shape[1] != n.size:
        raise ValueError("n, c must be (T,) and a, b, g (M, T) for the same T items")
    if np.any((c < 0) | (c > n)):
        raise ValueError("counts must satisfy 0 <= c <= n")
    grid = DEFAULT_GRID if grid is None else np.asarray(grid, dtype=np.float64)
    ci_prob = check_prob(ci_prob, "ci_prob")
    m, t = a.shape
    loglik = np.zeros((m, grid.size))
    step = max(1, _CHUNK // max(1, m * grid.size))
    for start in range(0, t, step):
        sl = slice(start, start + step)
        logit = a[:, None, sl] * (grid[None, :, None] - b[:, None, sl])
        gg = g[:, None, sl]
        # log p and log(1 - p) for p = g + (1 - g) sigmoid(x), stable at both ends (g = 0:
        # log(g) = -inf and logaddexp returns log_q)
        log_q, log_1mq = special.log_expit(logit), special.log_expit(-logit)
        with np.errstate(divide="ignore"):
            log_p = np.logaddexp(np.log(gg), np.log1p(-gg) + log_q)
            log_1mp = np.log1p(-gg) + log_1mq
        loglik += (c[sl] * log_p + (n[sl] - c[sl]) * log_1mp).sum(axis=2)
    log_post = special.logsumexp(loglik, axis=0) - np.log(m) - 0.5 * (grid / prior_sd) ** 2
    weight = np.exp(log_post - special.logsumexp(log_post))
    eap = float(weight @ grid)
    sd = float(np.sqrt(max(weight @ (grid - eap) ** 2, 0.0)))
    cdf = np.cumsum(weight) - weight / 2  # each point's mass centred on it
    lo, hi = np.interp([(1 - ci_prob) / 2, (1 + ci_prob) / 2], cdf, grid)
    return AbilityScore(
        eap=eap, sd=sd, lower=float(lo), upper=float(hi), ci_prob=ci_prob, grid=grid,
        weight=weight, n_items=int(n.size), n_trials=int(n.sum()),
    )  # fmt: skip


def item_draws(posterior: Posterior) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Task names and flat ``(M, T)`` draws of ``a, b, g`` from an IRT fit."""
    from evalbayes.models.irt._model import IRTModel

    if not isinstance(posterior.model, IRTModel):
        raise ValueError(f"scoring needs an IRT fit, got {posterior.model.name!r}")
    draws = posterior.model.draws(posterior.posterior)
    a, b, g = (x.reshape(-1, x.shape[-1]) for x in (draws.a, draws.b, draws.g))
    return [str(t) for t in posterior.data.tasks], a, b, g


def _responses(responses: Any, tasks: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Item indices, n and c from a DataFrame (task, n, c) or a dict task -> (n, c)."""
    if isinstance(responses, pd.DataFrame):
        missing = [col for col in ("task", "n", "c") if col not in responses.columns]
        if missing:
            raise ValueError(f"responses need columns task, n, c; missing {missing}")
        items = {str(r.task): (r.n, r.c) for r in responses.itertuples()}
    else:
        items = {str(k): v for k, v in dict(responses).items()}
    unknown = [t for t in items if t not in tasks]
    if unknown:
        raise ValueError(f"responses name items not in the bank: {unknown[:5]}")
    if not items:
        raise ValueError("no responses")
    index = np.array([tasks.index(t) for t in items])
    n = np.array([int(v[0]) for v in items.values()], dtype=np.int64)
    c = np.array([int(v[1]) for v in items.values()], dtype=np.int64)
    bad = np.flatnonzero((n < 1) | (c < 0) | (c > n))
    if bad.size:
        t = list(items)[bad[0]]
        raise ValueError(f"item {t!r}: need n >= 1 and 0 <= c <= n, got n={n[bad[0]]}, "
                         f"c={c[bad[0]]}")
    return index, n, c


def score_new_system(
    posterior: Posterior, responses: Any, *, ci_prob: float = 0.9, grid: Any = None
) -> AbilityScore:
    """Ability posterior of a new system from its responses to any subset of bank items.

    Parameters
    ----------
    posterior : Posterior
        An IRT fit of the bank (1PL, 2PL or 3PL).
    responses : pandas.DataFrame or dict
        Columns ``task, n, c``, or ``{task: (n, c)}``.
    """
    tasks, a, b, g = item_draws(posterior)
    idx, n, c = _responses(responses, tasks)
    return ability_grid_posterior(n, c, a[:, idx], b[:, idx], g[:, idx], grid=grid,
                                  ci_prob=ci_prob)


def next_item(theta: float, a: np.ndarray, b: np.ndarray, g: np.ndarray,
              exclude: Any = ()) -> int:
    """Index of the item with the largest draw-averaged Fisher information at ``theta``."""
    from evalbayes.models.irt._items import fisher_information

    info = fisher_information(np.asarray(theta, dtype=np.float64), a, b, g).mean(axis=0)
    info = np.asarray(info, dtype=np.float64)
    excluded = np.asarray(list(exclude), dtype=np.int64)
    if excluded.size:
        info[excluded] = -np.inf
    if not np.isfinite(info).any():
        raise ValueError("no item left to select")
    return int(np.argmax(info))


def adaptive_test(
    posterior: Posterior,
    respond: Callable[[str], tuple[int, int]],
    n_items: int,
    *,
    start: float = 0.0,
    ci_prob: float = 0.9,
) -> pd.DataFrame:
    """Run an adaptive test: pick by :func:`next_item` at the EAP, ask ``respond``, update.

    ``respond(task) -> (n, c)`` runs the new system on one item. Returns one row per step:
    ``step, task, n, c, eap, sd, lower, upper``.
    """
    tasks, a, b, g = item_draws(posterior)
    n_items = check_count(n_items, "n_items")
    if n_items > len(tasks):
        raise ValueError(f"n_items={n_items} exceeds the {len(tasks)} items of the bank")
    chosen: list[int] = []
    ns: list[int] = []
    cs: list[int] = []
    theta = float(start)
    rows = []
    for step in range(1, n_items + 1):
        j = next_item(theta, a, b, g, exclude=chosen)
        n_j, c_j = respond(tasks[j])
        chosen.append(j)
        ns.append(int(n_j))
        cs.append(int(c_j))
        idx = np.asarray(chosen)
        score = ability_grid_posterior(ns, cs, a[:, idx], b[:, idx], g[:, idx], ci_prob=ci_prob)
        theta = score.eap
        rows.append({"step": step, "task": tasks[j], "n": n_j, "c": c_j, "eap": score.eap,
                     "sd": score.sd, "lower": score.lower, "upper": score.upper})
    return pd.DataFrame(rows)
