"""The planner's fast PAIRED population posterior against the default model's paired posterior.

The planner (``evalbayes.decisions``) simulates thousands of evaluations per design, so it
judges each with a fast posterior; for the population estimand with both systems on the same
tasks that is a Student-t posterior of the mean per-task difference of rates
(``fast_population_posterior(paired=True)``). A model with independent population draws
cannot check it (it ignores the pairing). The reference is the default model for two or more
systems, ``RateGridModel()``, whose population comparisons are paired through the shared tasks
(``population="paired"``): here both give ``P(B > A)`` for the same simulated data.

The stored figures (``results/paired_reference_task_effects.txt``, ``details.md``) were
measured with the retired ``TaskEffectsModel`` as the reference (task effects shared by the
two systems); they have not been rerun with the rate grid.

Simulation: per task ``(u_A, u_B) ~ N(0, tau^2 [[1, rho], [rho, 1]])``,
``logit p = theta_s + u_s`` (shared task difficulty plus a per-system residual, no broken
tasks), ``tau = 1.5``, ``theta_B - theta_A = delta``.

Usage: ``PYTHONPATH=src python benchmarks/decisions/decisions_paired_reference.py [--reps 3]``
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit

from evalbayes import EvalData
from evalbayes.decisions import fast_population_posterior, prob_superior
from evalbayes.models import RateGridModel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--draws", type=int, default=500)
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    rows = []
    t0 = time.time()
    for tasks, trials, rho, delta in ((10, 4, 0.6, 0.5), (30, 4, 0.6, 0.3), (30, 1, 0.3, 0.5),
                                      (30, 4, 0.9, 0.15)):
        for rep in range(args.reps):
            cov = 1.5**2 * np.array([[1.0, rho], [rho, 1.0]])
            u = rng.multivariate_normal(np.zeros(2), cov, size=tasks).T
            p = expit(np.array([0.0, delta])[:, None] + u)
            n = np.full((2, tasks), trials)
            c = rng.binomial(n, p)
            data = EvalData.from_arrays(n, c, systems=["A", "B"])
            loc, scale, df = fast_population_posterior(c[0], c[1], trials, paired=True)
            fast = float(prob_superior(loc, scale, df))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                post = RateGridModel().fit(data, draws=args.draws, tune=args.draws, chains=2,
                                           seed=rep, check=False, progressbar=False)
            pop = post.pass_at_k(1, estimand="population").sel(k=1)
            diff = (pop.sel(system="B") - pop.sel(system="A")).values.ravel()
            rows.append({"tasks": tasks, "trials": trials, "rho": rho, "delta": delta,
                         "rep": rep, "fast": fast, "joint": float((diff > 0).mean()),
                         "fast_sd": float(scale * np.sqrt(df / (df - 2)) if df > 2 else np.nan),
                         "joint_sd": float(diff.std())})
    frame = pd.DataFrame(rows)
    frame["abs_diff"] = (frame.fast - frame.joint).abs()
    print(frame.round(3).to_string(index=False))
    out = frame.groupby(["tasks", "trials", "rho", "delta"]).agg(
        data_sets=("rep", "size"), mean_abs_diff=("abs_diff", "mean"),
        max_abs_diff=("abs_diff", "max"), fast_sd=("fast_sd", "mean"),
        joint_sd=("joint_sd", "mean"))
    print("\nP(B > A), fast paired t vs RateGridModel(), paired (population estimand)")
    print(out.round(3).to_string())
    print(f"\n(wall time {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
