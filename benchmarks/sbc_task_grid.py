"""Simulation-based calibration of the experimental TaskGridModel (Talts et al. 2018,
arXiv:1804.06788), 100 replicates.

For each replicate: draw the parameters from the model's prior (``simulate_prior``: 3 systems,
20 tasks, 8 trials per cell), fit with nutpie (2 chains x (300 + 198)), and record the rank of
the true first loading, first task difficulty and broken-task share ``pi0`` among the 396
posterior draws (thinned to 99 ranks by ``rank_statistics``). A chi-square test on 10 bins
checks each at the 0.1 % level. The test suite keeps an 8-replicate smoke test
(``tests/test_task_grid.py::test_sbc_ranks_are_not_degenerate``); the 100 replicates take
~7 min on an idle 2-core machine, too long for CI for a model that is not a default.

Usage: ``python benchmarks/sbc_task_grid.py [--reps 100] [--seed 5000]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from evalbayes.models import TaskGridModel
from evalbayes.sbc import rank_statistics, rank_uniformity


def ranks(replicates: int, seed: int) -> dict[str, np.ndarray]:
    model = TaskGridModel()
    out: dict[str, list[int]] = {"loading0": [], "b0": [], "pi0": []}
    for r in range(replicates):
        data, truth = model.simulate_prior(3, 20, 8, seed=seed + r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = model.fit(data, draws=198, tune=300, chains=2, seed=r, check=False)
        pos = post.posterior.stack(s=("chain", "draw"))
        pairs = {"loading0": (truth["loading"][0], pos["loading"].isel(system=0).values),
                 "b0": (truth["b"][0], pos["b"].isel(task=0).values),
                 "pi0": (truth["pi0"], pos["pi0"].values)}
        for name, (value, draws) in pairs.items():
            out[name].append(rank_statistics(np.array([value]), draws[:, None])[0])
    return {name: np.array(v) for name, v in out.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=5000)
    args = parser.parse_args(argv)
    t0 = time.time()
    result = ranks(args.reps, args.seed)
    print("| parameter | replicates | chi-square p (10 bins) | uniform at 0.1 % |")
    print("|---|---|---|---|")
    ok = True
    for name, r in result.items():
        p = rank_uniformity(r, n_ranks=99, bins=10).pvalue
        ok &= p > 0.001
        print(f"| {name} | {len(r)} | {p:.3f} | {'yes' if p > 0.001 else 'NO'} |")
    print(f"total {time.time() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
