"""Decisions on top of posteriors: plan, gate, stop early, group a leaderboard, pick a winner.

Each module holds one decision and its frequentist counterpart's name:

* :mod:`~evalbayes.decisions.plan` — tasks x trials for a target: power / MDE beside Bayesian
  assurance;
* :mod:`~evalbayes.decisions.plan_runs` — training runs x tasks x trials per recipe for a
  recipe comparison, assurance from a training-seeds fit;
* :mod:`~evalbayes.decisions.gate` — posterior ship / hold gate beside the seed-001 gate;
* :mod:`~evalbayes.decisions.sequential` — stop / continue after each batch, with operating
  characteristics;
* :mod:`~evalbayes.decisions.groups` — plausibly-best set, groups of ties, shrinkage of many
  comparisons beside Holm / Benjamini-Hochberg;
* :mod:`~evalbayes.decisions.selection` — the winner's curse of picking the best checkpoint;
* :mod:`~evalbayes.decisions.scoring` — a new system scored against a calibrated item bank.

Submodules are imported on demand (``from evalbayes.decisions.gate import posterior_gate``).
"""
