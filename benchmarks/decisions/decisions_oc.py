"""Operating characteristics of the decision rules beside their frequentist counterparts.

Run: PYTHONPATH=src nice -n 10 python benchmarks/decisions/decisions_oc.py [--quick]
Sections: posterior gate vs seed-001 gate, sequential stopping vs fixed design and naive
peeking, shrinkage vs Holm / BH, winner's curse.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from evalbayes.decisions import (
    Population,
    fast_tasks_posterior,
    gate_from_draws,
    multiple_comparison_study,
    operating_characteristics,
    winners_curse_study,
)
from evalbayes.frequentist import gate_counts, ship_gate

QUICK = "--quick" in sys.argv
REPS = 300 if QUICK else 2000


def gate_oc() -> None:
    """Ship rates over simulated paired evaluations (50 tasks x 3 trials)."""
    rng = np.random.default_rng(0)
    rows = []
    for effect in (-0.05, 0.0, 0.05, 0.10):
        pop = Population(0.6, 0.6 + effect, 0.3, 0.3, correlation=0.8)
        params = pop.parameters(rng, REPS)
        pa, pb = pop.sample_rates(rng, params, 50)
        ca, cb = rng.binomial(3, pa), rng.binomial(3, pb)
        loc, sd = fast_tasks_posterior(ca, cb, 3, pooling="none")
        ships = {"posterior superiority": 0, "posterior non-inferiority (margin 0.02)": 0,
                 "seed-001 gate": 0}
        for i in range(REPS):
            draws = rng.normal(loc[i], sd[i], 4000)
            ships["posterior superiority"] += gate_from_draws(
                draws, mode="superiority", max_loss=0.005).decision == "ship"
            ships["posterior non-inferiority (margin 0.02)"] += gate_from_draws(
                draws, margin=0.02, max_loss=0.005).decision == "ship"
            n = np.full(50, 3)
            counts = gate_counts(n, ca[i], n, cb[i])
            ships["seed-001 gate"] += ship_gate(counts.wins, counts.losses,
                                                counts.solved).decision == "ship"
        for name, k in ships.items():
            rows.append({"true B - A": effect, "rule": name, "ship rate": k / REPS})
    frame = pd.DataFrame(rows).pivot(index="rule", columns="true B - A", values="ship rate")
    print("\n### Ship rate (50 paired tasks x 3 trials, population icc 0.3, copula r 0.8)")
    print(f"({REPS} simulated evaluations per column; Monte Carlo s.e. <= "
          f"{0.5 / np.sqrt(REPS):.3f})")
    print(frame.to_string(float_format="{:.3f}".format))


def sequential_oc() -> None:
    for effect in (0.0, 0.05, 0.10):
        pop = Population(0.6, 0.6 + effect, 0.3, 0.3, correlation=0.7)
        for rope in (0.0, 0.03):
            oc = operating_characteristics(pop, batch=5, max_tasks=60, trials=4, rope=rope,
                                           n_sim=REPS, seed=1)
            print(f"\n### Sequential, true effect {effect}, rope {rope} (12 looks, 5 tasks each, "
                  f"4 trials/task, threshold 0.95, peeking alpha 0.05; {REPS} runs)")
            print(oc.to_string(index=False, float_format="{:.3f}".format))


def groups_oc() -> None:
    res = multiple_comparison_study(m=50, null_share=0.8, effect_sd=2.0, reps=REPS // 4)
    print(f"\n### Many comparisons: 50 effects, 80% exactly 0, others N(0, 2^2), se 1 "
          f"({REPS // 4} replicates)")
    print(res.to_string(index=False, float_format="{:.3f}".format))
    res = multiple_comparison_study(m=50, null_share=0.0, effect_sd=0.5, reps=REPS // 4)
    print("\n### Many comparisons: 50 small effects N(0, 0.5^2), se 1 (type S errors)")
    print(res.to_string(index=False, float_format="{:.3f}".format))


def selection_oc() -> None:
    for m, tau in ((8, 0.0), (8, 0.02), (30, 0.02)):
        res = winners_curse_study(m=m, sigma=0.03, tau=tau, reps=REPS // 4, draws=2000)
        print(f"\n### Winner's curse: {m} checkpoints, sigma 0.03, tau {tau} "
              f"({REPS // 4} replicates)")
        print(res.to_string(index=False, float_format="{:.4f}".format))
        print(f"P(truly best): predicted {res.attrs['p_truly_best_predicted']:.3f}, "
              f"observed {res.attrs['p_truly_best_observed']:.3f}")


if __name__ == "__main__":
    t0 = time.time()
    gate_oc()
    sequential_oc()
    groups_oc()
    selection_oc()
    print(f"\n(wall time {time.time() - t0:.0f} s)")
