"""Posterior ship-or-hold gate, beside the frequentist gate of :mod:`evalbayes.frequentist._gate`.

From posterior draws of the difference ``D = f_B - f_A`` of candidate B and baseline A (a
metric such as pass@1, in one estimand), with margin ``delta >= 0``:

non-inferiority (default)
    ship when ``P(D > -delta) >= threshold`` **and** the expected loss of shipping,
    ``E[max(-delta - D, 0)]`` (how far B falls below the tolerated margin, on average), is
    at most ``max_loss``;
superiority
    ship when ``P(D > delta) >= threshold`` and ``E[max(-D, 0)] <= max_loss``.

"Don't ship" when the posterior is decisive the other way, ``P(D < -delta) >= threshold``;
otherwise "hold". The probability rule is the Bayesian decision with a 0-1 loss (Berger,
*Statistical Decision Theory and Bayesian Analysis*, 1985, §4.4); the expected-loss rule is
the "threshold of caring" of Bayesian A/B testing (Stucchio 2015, "Bayesian A/B testing at
VWO"); a region of practical equivalence ``|D| < delta`` is Kruschke's (2018, "Rejecting or
accepting parameter values in Bayesian estimation", AMPPS 1(2)). Non-inferiority margins
follow the CONSORT extension (Piaggio et al. 2012, JAMA 308(24)).

:func:`counts_gate` is the Bayesian counterpart of the seed-001 gate on the same wins and
losses (the seed's worked examples, lambda = 2, alpha = 0.05, tau = 0.1): with a uniform
Dirichlet prior on the shares of (win, loss, unchanged) cases, the win share among changed
cases is ``theta ~ Beta(1 + wins, 1 + losses)``, and the net gain ``wins - lam losses > 0``
in the population is ``theta > lam / (1 + lam)``, so ``P(net gain > 0) = 1 - I_q(1 + w, 1 +
l)`` with ``q = lam / (1 + lam)``; breakage ``losses / solved`` has the posterior
``Beta(1 + losses, 1 + solved - losses)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from scipy import special

from evalbayes._core.names import check_nonnegative, check_prob
from evalbayes.decisions._common import difference_draws

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.results._comparison import Comparison
    from evalbayes.results._posterior import Posterior

__all__ = ["CountsGateResult", "PosteriorGateResult", "counts_gate", "gate_from_draws",
           "posterior_gate"]

Mode = Literal["non-inferiority", "superiority"]
MODES: tuple[str, ...] = ("non-inferiority", "superiority")


@dataclass(frozen=True)
class PosteriorGateResult:
    """Decision of the posterior gate, with the numbers behind it.

    Attributes
    ----------
    decision : str
        ``"ship"``, ``"hold"`` or ``"dont_ship"``.
    headline : str
        One line for a CI log, naming the reason.
    exit_code : int
        0 to ship, 1 otherwise (the CLI uses 2 for bad input).
    mode : str
        ``"non-inferiority"`` or ``"superiority"``.
    margin, threshold, max_loss : float
        Settings.
    p_ship : float
        ``P(D > -margin)`` (non-inferiority) or ``P(D > margin)`` (superiority).
    p_worse : float
        ``P(D < -margin)``.
    expected_loss : float
        ``E[max(-margin - D, 0)]`` (non-inferiority) or ``E[max(-D, 0)]`` (superiority).
    p_ship_se : float
        Monte Carlo standard error of ``p_ship``, ``sqrt(p (1 - p) / draws)`` (independent
        draws; for MCMC draws read it as a lower bound).
    diff_mean, diff_lower, diff_upper : float
        Posterior mean and central ``ci_prob`` interval of ``D``.
    ci_prob : float
        Probability of that interval.
    n_draws : int
        Draws of ``D``.
    reasons : tuple of str
        The conditions that failed (empty when shipping).
    info : dict
        ``metric, k, estimand, candidate, baseline, label`` when built from a posterior.
    """

    decision: str
    headline: str
    exit_code: int
    mode: str
    margin: float
    threshold: float
    max_loss: float
    p_ship: float
    p_worse: float
    expected_loss: float
    p_ship_se: float
    diff_mean: float
    diff_lower: float
    diff_upper: float
    ci_prob: float
    n_draws: int
    reasons: tuple[str, ...]
    info: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "info"}
        out["reasons"] = list(self.reasons)
        out.update(self.info)
        return out


def gate_from_draws(
    diff: Any,
    *,
    mode: Mode = "non-inferiority",
    margin: float = 0.0,
    threshold: float = 0.95,
    max_loss: float = 0.005,
    ci_prob: float = 0.95,
    info: dict[str, Any] | None = None,
) -> PosteriorGateResult:
    """Posterior gate from draws of ``D = f_B - f_A`` (pure NumPy; module docstring).

    Parameters
    ----------
    diff : array_like
        Posterior draws of the difference (any shape; flattened).
    mode : {"non-inferiority", "superiority"}
        Which claim B must support.
    margin : float
        ``delta >= 0``: the tolerated shortfall (non-inferiority) or the least improvement
        that counts (superiority).
    threshold : float
        Posterior probability needed, in (0, 1).
    max_loss : float
        Largest tolerated expected loss, ``>= 0`` (same units as the metric).
    ci_prob : float
        Probability of the reported interval of D.
    """
    d = np.asarray(diff, dtype=np.float64).ravel()
    if d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError("diff must be a non-empty array of finite draws")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    margin = check_nonnegative(margin, "margin")
    threshold = check_prob(threshold, "threshold")
    max_loss = check_nonnegative(max_loss, "max_loss")
    ci_prob = check_prob(ci_prob, "ci_prob")
    if mode == "non-inferiority":
        p_ship = float(np.mean(d > -margin))
        loss = float(np.mean(np.maximum(-margin - d, 0.0)))
        claim = f"P(B - A > -{margin:g})"
    else:
        p_ship = float(np.mean(d > margin))
        loss = float(np.mean(np.maximum(-d, 0.0)))
        claim = f"P(B - A > {margin:g})"
    p_worse = float(np.mean(d < -margin))
    lo, hi = np.quantile(d, [(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    reasons = []
    if p_ship < threshold:
        reasons.append(f"{claim} = {p_ship:.3f} < {threshold:g}")
    if loss > max_loss:
        reasons.append(f"expected loss {loss:.4f} > {max_loss:g}")
    if not reasons:
        decision = "ship"
        headline = f"Ship it: {claim} = {p_ship:.3f}, expected loss {loss:.4f}"
    elif p_worse >= threshold:
        decision = "dont_ship"
        headline = f"Don't ship: P(B - A < -{margin:g}) = {p_worse:.3f} >= {threshold:g}"
    else:
        decision = "hold"
        headline = f"Hold: not enough evidence ({'; '.join(reasons)})"
    return PosteriorGateResult(
        decision=decision,
        headline=headline,
        exit_code=0 if decision == "ship" else 1,
        mode=mode,
        margin=margin,
        threshold=threshold,
        max_loss=max_loss,
        p_ship=p_ship,
        p_worse=p_worse,
        expected_loss=loss,
        p_ship_se=float(np.sqrt(p_ship * (1 - p_ship) / d.size)),
        diff_mean=float(d.mean()),
        diff_lower=float(lo),
        diff_upper=float(hi),
        ci_prob=ci_prob,
        n_draws=int(d.size),
        reasons=tuple(reasons),
        info=dict(info or {}),
    )


def posterior_gate(
    source: Posterior | Comparison,
    *,
    baseline: str,
    candidate: str,
    metric: str = "pass@k",
    k: Any = 1,
    estimand: str | None = None,
    mode: Mode = "non-inferiority",
    margin: float = 0.0,
    threshold: float = 0.95,
    max_loss: float = 0.005,
    ci_prob: float = 0.95,
) -> PosteriorGateResult:
    """Posterior gate of ``candidate`` (B) against ``baseline`` (A) from a fit or comparison.

    The draws of ``f_B - f_A`` are joint draws of one posterior, so the gate is paired
    whenever the model is. ``estimand="population"`` asks about tasks like these (wider; the
    default where the model has it, :func:`~evalbayes.results.compare`); ``"tasks"`` about the
    evaluated tasks. See :func:`gate_from_draws` for the rule.
    """
    diff, info = difference_draws(
        source, candidate, baseline, metric=metric, k=k, estimand=estimand
    )
    info.update({"candidate": candidate, "baseline": baseline})
    return gate_from_draws(
        diff, mode=mode, margin=margin, threshold=threshold, max_loss=max_loss,
        ci_prob=ci_prob, info=info,
    )  # fmt: skip


@dataclass(frozen=True)
class CountsGateResult:
    """Bayesian counterpart of the seed-001 gate on wins, losses and solved cases.

    Attributes
    ----------
    decision : str
        ``"ship"`` or ``"hold"`` (``"dont_ship"`` when ``P(theta < 1/2) >= threshold``:
        B's losses outnumber its wins in the population).
    exit_code : int
        0 to ship, else 1.
    p_net_gain : float
        ``P(theta > lam / (1 + lam))``, ``theta ~ Beta(1 + wins, 1 + losses)``.
    p_breakage_ok : float
        ``P(breakage <= tau)``, breakage ``~ Beta(1 + losses, 1 + solved - losses)``.
    p_more_losses : float
        ``P(theta < 1/2)``.
    wins, losses, solved : int
    lam, threshold, tau : float
    """

    decision: str
    exit_code: int
    p_net_gain: float
    p_breakage_ok: float
    p_more_losses: float
    wins: int
    losses: int
    solved: int
    lam: float
    threshold: float
    tau: float


def counts_gate(
    wins: int,
    losses: int,
    solved: int,
    *,
    lam: float = 2.0,
    threshold: float = 0.95,
    tau: float = 0.10,
    breakage_prob: float = 0.5,
) -> CountsGateResult:
    """Ship when ``P(net gain > 0) >= threshold`` and ``P(breakage <= tau) >= breakage_prob``.

    Closed forms (module docstring): ``P(theta > q) = 1 - I_q(1 + w, 1 + l)`` with
    ``q = lam / (1 + lam)``. With no losses this is ``1 - q^(w + 1)``: at the seed's
    ``lam = 2`` and ``threshold = 0.95`` it ships from 7 clean wins (``1 - (2/3)^8 = 0.961``),
    one fewer than the frequentist ``(2/3)^w < 0.05`` (8 wins), because the uniform prior
    counts as one extra win and one extra loss.
    """
    from evalbayes.frequentist._gate import ship_gate

    check = ship_gate(wins, losses, solved, lam=lam, alpha=0.5, tau=1.0)  # validates counts
    w, l_, s = check.wins, check.losses, check.solved
    threshold = check_prob(threshold, "threshold")
    tau = check_nonnegative(tau, "tau")
    breakage_prob = check_prob(breakage_prob, "breakage_prob")
    q = lam / (1.0 + lam)
    p_gain = float(1.0 - special.betainc(1 + w, 1 + l_, q))
    p_break = float(special.betainc(1 + l_, 1 + s - l_, min(tau, 1.0)))
    p_more_losses = float(special.betainc(1 + w, 1 + l_, 0.5))
    if p_gain >= threshold and p_break >= breakage_prob:
        decision = "ship"
    elif p_more_losses >= threshold:
        decision = "dont_ship"
    else:
        decision = "hold"
    return CountsGateResult(
        decision=decision,
        exit_code=0 if decision == "ship" else 1,
        p_net_gain=p_gain,
        p_breakage_ok=p_break,
        p_more_losses=p_more_losses,
        wins=w,
        losses=l_,
        solved=s,
        lam=float(lam),
        threshold=threshold,
        tau=tau,
    )
