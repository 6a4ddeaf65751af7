"""Decisions on top of posteriors: plan, gate, stop early, group a leaderboard, pick a winner.

One entry point per decision, each beside its frequentist counterpart:

* :func:`plan` — tasks x trials for a target: power / MDE beside Bayesian
  assurance;
* :func:`plan_runs` — training runs x tasks x trials per recipe for a
  recipe comparison, assurance from a training-seeds fit;
* :func:`posterior_gate`, :func:`counts_gate` — posterior ship / hold gate beside the seed-001 gate;
* :func:`sequential_decision` — stop / continue after each batch, with operating
  characteristics;
* :func:`leaderboard_groups` — plausibly-best set, groups of ties, shrinkage of many
  comparisons beside Holm / Benjamini-Hochberg;
* :func:`select_winner` — the winner's curse of picking the best checkpoint;
* :func:`score_new_system` — a new system scored against a calibrated item bank.

"""

from evalbayes.decisions._gate import (
    CountsGateResult,
    PosteriorGateResult,
    counts_gate,
    gate_from_draws,
    posterior_gate,
)
from evalbayes.decisions._groups import (
    ShrunkEffects,
    holm_groups,
    leaderboard_groups,
    multiple_comparison_study,
    plausibly_best,
    shrink_effects,
    tie_groups,
)
from evalbayes.decisions._plan import (
    PlanResult,
    Population,
    design_sd,
    fast_population_posterior,
    fast_tasks_posterior,
    plan,
    prob_superior,
    task_moments,
)
from evalbayes.decisions._plan_runs import RunPlanResult, plan_runs
from evalbayes.decisions._scoring import AbilityScore, adaptive_test, next_item, score_new_system
from evalbayes.decisions._selection import WinnerEstimate, select_winner, winners_curse_study
from evalbayes.decisions._sequential import (
    SequentialDecision,
    next_allocation,
    operating_characteristics,
    sequential_decision,
)

__all__ = [
    "AbilityScore",
    "CountsGateResult",
    "PlanResult",
    "Population",
    "PosteriorGateResult",
    "RunPlanResult",
    "SequentialDecision",
    "ShrunkEffects",
    "WinnerEstimate",
    "adaptive_test",
    "counts_gate",
    "design_sd",
    "fast_population_posterior",
    "fast_tasks_posterior",
    "gate_from_draws",
    "holm_groups",
    "leaderboard_groups",
    "multiple_comparison_study",
    "next_allocation",
    "next_item",
    "operating_characteristics",
    "plan",
    "plan_runs",
    "plausibly_best",
    "posterior_gate",
    "prob_superior",
    "score_new_system",
    "select_winner",
    "sequential_decision",
    "shrink_effects",
    "task_moments",
    "tie_groups",
    "winners_curse_study",
]
