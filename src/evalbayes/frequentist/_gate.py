"""The ship-or-hold gate (the rule documented by coding.sh, "How evals are computed",
https://coding.sh/docs/eval-methods, after Wang et al., SAGE).

Cases where both runs agree are dropped; each remaining case is a *win* (B solves a case A
failed) or a *loss* (B breaks a case A solved); ``solved`` is the number of cases A solved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalbayes._core.rendering import Rendered
from evalbayes.frequentist._checks import as_integral
from evalbayes.frequentist._dist import binom_sf
from evalbayes.frequentist._paired import paired_outcomes

__all__ = ["GateCounts", "GateResult", "gate_counts", "ship_gate", "smallest_clean_win"]


@dataclass(frozen=True)
class GateCounts(Rendered):
    """Wins, losses and A's solved cases from majority outcomes.

    Attributes
    ----------
    wins : int
        Cases B solved and A did not.
    losses : int
        Cases A solved and B did not.
    solved : int
        Cases A solved.
    unchanged : int
        Cases both solved or both failed (dropped by the gate).
    """

    wins: int
    losses: int
    solved: int
    unchanged: int


@dataclass(frozen=True)
class GateResult(Rendered):
    """Decision of :func:`ship_gate`.

    Attributes
    ----------
    decision : str
        ``"ship"``, ``"hold"`` or ``"dont_ship"``.
    headline : str
        ``"Ship it: B wins N cases, loses M"``, ``"Hold: not enough evidence (...)"`` or
        ``"Don't ship: B breaks N cases A solved"``.
    exit_code : int
        0 to ship, 1 otherwise.
    wins, losses, solved : int
        The inputs.
    net_gain : float
        ``wins - lam * losses``.
    p_value : float
        ``P(X >= wins)``, ``X ~ Bin(wins + losses, lam / (1 + lam))``.
    breakage : float
        ``losses / solved`` (0 when A solved nothing, which forces ``losses = 0``).
    loss_p_value : float
        ``P(Y >= losses)``, ``Y ~ Bin(wins + losses, 1/2)``: do B's losses beat chance?
    net_gain_ok, significant, breakage_ok : bool
        The three ship conditions.
    lam, alpha, tau : float
        Settings.
    """

    _settings_fields = ("lam", "alpha", "tau")

    decision: str
    headline: str
    exit_code: int
    wins: int
    losses: int
    solved: int
    net_gain: float
    p_value: float
    breakage: float
    loss_p_value: float
    net_gain_ok: bool
    significant: bool
    breakage_ok: bool
    lam: float
    alpha: float
    tau: float


def _count(value: Any, name: str) -> int:
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a single count, got shape {np.shape(value)}")
    out = int(as_integral(value, name))
    if out < 0:
        raise ValueError(f"{name}={out} is negative")
    return out


def _settings(lam: float, alpha: float) -> tuple[float, float]:
    lam = float(lam)
    alpha = float(alpha)
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be a finite number > 0, got {lam}")
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    return lam, alpha


def smallest_clean_win(lam: float = 2.0, alpha: float = 0.05) -> int:
    """Smallest ``w`` with ``(lam / (1 + lam))^w < alpha``: 8 at the defaults.

    The fewest wins with no losses that pass the gate's significance condition.
    """
    lam, alpha = _settings(lam, alpha)
    share = lam / (1.0 + lam)
    wins = 1
    while share**wins >= alpha:
        wins += 1
    return wins


def ship_gate(
    wins: int,
    losses: int,
    solved: int,
    *,
    lam: float = 2.0,
    alpha: float = 0.05,
    tau: float = 0.10,
) -> GateResult:
    """Decide whether to ship B (the ship-or-hold gate).

    Ship when all three hold:

    * net gain: ``wins - lam * losses > 0`` (one break costs ``lam`` fixes),
    * significance: ``P(X >= wins) < alpha`` with ``X ~ Bin(wins + losses, lam/(1 + lam))``,
      the win share at which B only breaks even,
    * breakage: ``losses / solved <= tau``.

    Otherwise "Don't ship" when B's losses beat chance (exact one-sided binomial test of the
    losses among the changed cases at ``p = 1/2``, ``P(Y >= losses) < alpha``), else "Hold".
    With ``lam=1, alpha=1, tau=1`` the gate ships exactly when wins exceed losses.

    Parameters
    ----------
    wins, losses, solved : int
        Counts as in :class:`GateCounts`; ``losses <= solved``.
    lam : float
        Cost of a loss in wins (``--lambda``), > 0.
    alpha : float
        Level in (0, 1] (``--gate-alpha``).
    tau : float
        Largest tolerated breakage ``losses / solved`` (``--tau``), >= 0.
    """
    wins = _count(wins, "wins")
    losses = _count(losses, "losses")
    solved = _count(solved, "solved")
    if losses > solved:
        raise ValueError(
            f"losses={losses} > solved={solved}: a loss is a case A solved, so there cannot "
            "be more losses than solved cases"
        )
    lam, alpha = _settings(lam, alpha)
    tau = float(tau)
    if not np.isfinite(tau) or tau < 0:
        raise ValueError(f"tau must be a finite number >= 0, got {tau}")
    changed = wins + losses
    net_gain = wins - lam * losses
    p_value = float(binom_sf(wins - 1, changed, lam / (1.0 + lam)))
    breakage = losses / solved if solved else 0.0
    loss_p_value = float(binom_sf(losses - 1, changed, 0.5))
    net_ok = net_gain > 0
    significant = p_value < alpha
    breakage_ok = breakage <= tau
    if net_ok and significant and breakage_ok:
        decision = "ship"
        headline = f"Ship it: B wins {wins} cases, loses {losses}"
    elif loss_p_value < alpha:
        decision = "dont_ship"
        headline = f"Don't ship: B breaks {losses} cases A solved"
    else:
        decision = "hold"
        reasons = []
        if not net_ok:
            reasons.append(f"net gain {wins} - {lam:g} x {losses} = {net_gain:g} <= 0")
        if not significant:
            reasons.append(
                f"P(X >= {wins}) = {p_value:.3g} >= {alpha:g}; a clean win needs "
                f"{smallest_clean_win(lam, alpha)} wins with no losses"
            )
        if not breakage_ok:
            reasons.append(f"breakage {losses}/{solved} = {breakage:.3f} > {tau:g}")
        headline = f"Hold: not enough evidence ({'; '.join(reasons)})"
    return GateResult(
        decision=decision,
        headline=headline,
        exit_code=0 if decision == "ship" else 1,
        wins=wins,
        losses=losses,
        solved=solved,
        net_gain=float(net_gain),
        p_value=p_value,
        breakage=float(breakage),
        loss_p_value=loss_p_value,
        net_gain_ok=bool(net_ok),
        significant=bool(significant),
        breakage_ok=bool(breakage_ok),
        lam=lam,
        alpha=alpha,
        tau=tau,
    )


def gate_counts(n_a: Any, c_a: Any, n_b: Any, c_b: Any) -> GateCounts:
    """Wins, losses and solved cases of B against A from paired counts.

    Each case's outcome is its majority outcome (strict majority of trials passed; see
    :func:`~evalbayes.frequentist.majority_outcome`).
    """
    table = paired_outcomes(n_a, c_a, n_b, c_b)
    return GateCounts(
        wins=table.only_b,
        losses=table.only_a,
        solved=table.both + table.only_a,
        unchanged=table.both + table.neither,
    )
