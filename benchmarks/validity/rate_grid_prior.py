"""What the rate grid's coefficient prior says about a system's mean rate, and what it does to
pass@1 with one trial on 10 tasks (issue 27).

1. Prior predictive (no fit): coefficients ``coef ~ N(0, coef_prior)``, ``g = softmax(Q
   coef)`` on the default grid, the mean rate ``sum_j g_j p_j``; the share of prior mass with
   the mean below 0.05 and above 0.95, and its deciles, for each ``--coef-priors`` value.
2. One system that solved all ``--tasks`` single-trial tasks (and one that solved none, and
   one that solved half): the 95 % interval of pass@1, both estimands, beside Wilson's
   interval of the same counts (``evalbayes.frequentist``), for each value.

The coverage side (single-system and paired intervals on real benchmarks at 10-50 tasks)
is ``paired_realdata.py --model rate-grid --coef-prior X``.

Usage: ``nice -n 10 python benchmarks/validity/rate_grid_prior.py [--coef-priors 1.5 2 3]
[--tasks 10] [--draws 1000]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from scipy.special import logsumexp

from evalbayes import EvalData
from evalbayes.frequentist import wilson_interval
from evalbayes.models import RateGridModel


def prior_mean_rates(model: RateGridModel, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    coef = rng.normal(0.0, model.coef_prior, (draws, model.basis.shape[1]))
    logits = coef @ model.basis.T
    g = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    return g @ model.rates_grid


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coef-priors", type=float, nargs="+", default=[1.5, 2.0, 3.0])
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args(argv)
    print(f"# load {os.getloadavg()[0]:.1f}")
    print("| coef_prior | P(mean < 0.05) | P(mean > 0.95) | deciles of the mean rate |")
    print("|---|---|---|---|")
    for sd in args.coef_priors:
        mean = prior_mean_rates(RateGridModel(coef_prior=sd), 200_000, seed=0)
        deciles = " ".join(f"{q:.2f}" for q in np.quantile(mean, np.linspace(0.1, 0.9, 9)))
        print(f"| {sd:g} | {np.mean(mean < 0.05):.3f} | {np.mean(mean > 0.95):.3f} | "
              f"{deciles} |", flush=True)
    n_t = args.tasks
    solved = {"all": n_t, "half": n_t // 2, "none": 0}
    n = np.ones((3, n_t), dtype=int)
    c = np.zeros((3, n_t), dtype=int)
    for i, s in enumerate(solved.values()):
        c[i, :s] = 1
    data = EvalData.from_arrays(n, c, systems=list(solved))
    print()
    print(f"{n_t} single-trial tasks, 95 % intervals of pass@1 (Wilson beside):")
    print("| coef_prior | system | tasks | population | Wilson | s CPU |")
    print("|---|---|---|---|---|---|")
    for sd in args.coef_priors:
        cpu = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = RateGridModel(coef_prior=sd).fit(data, draws=args.draws, tune=args.draws,
                                                    chains=2, seed=0, check=False)
        seconds = time.process_time() - cpu
        for name, s in solved.items():
            cells = []
            for estimand in ("tasks", "population"):
                draws = post.pass_at_k(1, estimand=estimand).sel(system=name, k=1)
                lo, hi = np.quantile(draws.values.ravel(), [0.025, 0.975])
                cells.append(f"[{lo:.3f}, {hi:.3f}]")
            w = wilson_interval(s, n_t)
            print(f"| {sd:g} | {name} ({s}/{n_t}) | {cells[0]} | {cells[1]} | "
                  f"[{w.lower:.3f}, {w.upper:.3f}] | {seconds:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
