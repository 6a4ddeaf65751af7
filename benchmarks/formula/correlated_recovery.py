"""Recovery of a correlated intercept and slope, ``x + (1 + x | task)``, over seeds.

Each replicate simulates 6 systems (x evenly on [-1, 1]) x 40 tasks x 20 trials with task
effects ``(b0, b1) ~ MvNormal(0, Sigma)``, sds 1.0 and 0.6, correlation 0.6, fits the formula
(2 chains x 500 draws after 500 tuning) and records whether each 95 % interval (the two sds,
the correlation, the common slope) covers the truth, with R-hat, ESS and divergences, CPU
seconds and the load average. Usage::

    PYTHONPATH=src nice -n 10 python benchmarks/formula/correlated_recovery.py --reps 10
"""

from __future__ import annotations

import argparse
import os
import resource
import warnings

import numpy as np
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.models.formula import FormulaModel

TRUTH = {"x": 0.5, "1|task": 1.0, "x|task": 0.6, "1|task, x|task": 0.6}


def replicate(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    systems, tasks, trials = 6, 40, 20
    x = np.linspace(-1.0, 1.0, systems)
    s0, s1, r = TRUTH["1|task"], TRUTH["x|task"], TRUTH["1|task, x|task"]
    b = rng.multivariate_normal([0.0, 0.0], [[s0**2, r * s0 * s1], [r * s0 * s1, s1**2]],
                                size=tasks)
    eta = -0.2 + TRUTH["x"] * x[:, None] + b[None, :, 0] + b[None, :, 1] * x[:, None]
    n = np.full((systems, tasks), trials)
    data = EvalData.from_arrays(n, rng.binomial(n, expit(eta)), system_coords={"x": x})
    before = resource.getrusage(resource.RUSAGE_SELF)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = FormulaModel("c | trials(n) ~ x + (1 + x | task)").fit(
            data, draws=500, tune=500, chains=2, seed=seed, check=False)
    after = resource.getrusage(resource.RUSAGE_SELF)
    table = post.effects(ci_prob=0.95).set_index("name")
    diag = post.diagnostics(warn=False)
    out = {f"covers {k}": float(table.loc[k, "lower"] < v < table.loc[k, "upper"])
           for k, v in TRUTH.items()}
    out.update(rhat=diag.rhat_max, ess_bulk=diag.ess_bulk_min, divergences=diag.divergences,
               cpu_s=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=100)
    args = parser.parse_args()
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.reps):
        row = replicate(seed)
        rows.append(row)
        print(f"seed {seed}: " + ", ".join(f"{k} {v:.3g}" for k, v in row.items()),
              f"load {os.getloadavg()[0]:.1f}", flush=True)
    keys = rows[0].keys()
    print("mean over", len(rows), "replicates:",
          ", ".join(f"{k} {np.mean([r[k] for r in rows]):.3g}" for k in keys))


if __name__ == "__main__":
    main()
