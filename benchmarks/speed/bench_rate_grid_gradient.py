"""Benchmark: one log-density + gradient of the rate-grid model, pruned pairs against the dense sum.

``RateGridModel.build`` sums each distinct ``(system, n, c)`` row only over the grid nodes whose
binomial likelihood is within ``e^-200`` of the row's best (``models/README.md``, "Only the
nodes a row can see"). The baseline is the dense graph the model had before: every row over
all 59 nodes, ``logsumexp(row_ll + log_g[row_s], axis=1)``, on the same rows and weights.
Both log densities are first compared at 20 coefficient points (they differ by a constant).
Then each graph is compiled by nutpie (numba) and sampled, one chain of ``--iterations``
warm-up + draws with seed 0, alternating, ``--repeat`` times; the two give the same
trajectories, so the seconds per gradient (wall time over leapfrog steps) are the cost a fit
pays. It prints them, their ratio and the 1-minute load average.

Data: HumanEval+ from ``shared/data/noise_highk_temp0.7.csv.gz`` beside the repository (49
systems x 164 tasks, ~1100 trials per cell), or ``--data tinyagent`` (32 trials per cell:
little to prune); loaded by ``../validity/_realdata.py``.

Run::

    python benchmarks/speed/bench_rate_grid_gradient.py [--data NAME] [--repeat 2] \
        [--iterations 100]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validity"))

from _realdata import load, nutpie_cost

from evalbayes.models import RateGridModel
from evalbayes.models.rate_grid import grid_log_likelihood


def distinct_rows(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Distinct observed ``(system, n, c)`` rows, (row, 3), in ``np.unique`` order: the rows
    that ``RateGridModel.inputs`` weights (``row_w``) in the same order."""
    s_idx, t_idx = np.nonzero(n > 0)
    keys = np.stack([s_idx, n[s_idx, t_idx], c[s_idx, t_idx]], axis=1)
    return np.unique(keys, axis=0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="humaneval+")
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs of each")
    parser.add_argument("--iterations", type=int, default=100,
                        help="warm-up and draws of each one-chain run")
    args = parser.parse_args(argv)
    import pymc as pm
    import pytensor.tensor as pt

    data = load(args.data)
    model = RateGridModel()
    inputs = model.inputs(data)
    v = inputs.values
    real = v["row_real"] > 0
    rows = distinct_rows(data.n.values, data.c.values)
    dense_ll = grid_log_likelihood(rows[:, 1], rows[:, 2], model.rates_grid)
    dense_ll = np.maximum(dense_ll - dense_ll.max(axis=1, keepdims=True), -1e10)
    pruned = model.build(inputs)
    with pm.Model() as dense:
        sds = model.system_coef_prior(data.n.values)[:, None]  # the pruned graph's prior
        coef = pm.Normal("coef", 0.0, sds, shape=(inputs.shape_key[0], model.basis.shape[1]))
        logits = pt.dot(coef, model.basis.T)
        log_g = logits - pt.logsumexp(logits, axis=1, keepdims=True)
        ll = pt.logsumexp(dense_ll + log_g[rows[:, 0]], axis=1)
        pm.Potential("loglik", (v["row_w"][real] * ll).sum())
    n_rows = int(real.sum())
    kept = int((v["pair_row"] < n_rows).sum())
    print(f"data {args.data}: {data.n.shape[0]} x {data.n.shape[1]}, distinct rows {n_rows}, "
          f"dense pairs {n_rows * dense_ll.shape[1]}, pruned pairs {kept} "
          f"(padded to {len(v['pair_ll'])})")
    rng = np.random.default_rng(0)
    diff = []
    logp_pruned, logp_dense = pruned.compile_logp(), dense.compile_logp()
    for _ in range(20):
        x = {"coef": rng.normal(0, 1.5, (inputs.shape_key[0], model.basis.shape[1]))}
        diff.append(float(logp_pruned(x)) - float(logp_dense(x)))
    print(f"log density pruned - dense at 20 points (coef sd 1.5): constant {np.mean(diff):.6f}, "
          f"spread {np.ptp(diff):.2e}")
    cost = {}
    for _ in range(args.repeat):
        for name, pm_model in (("pruned", pruned), ("dense", dense)):
            compile_s, per_grad, steps = nutpie_cost(pm_model, args.iterations)
            cost.setdefault(name, []).append(per_grad)
            print(f"  {name}: compile {compile_s:.1f} s, {1000 * per_grad:.2f} ms per gradient "
                  f"over {steps} gradients (load {os.getloadavg()[0]:.1f})", flush=True)
    ms = {name: 1000 * float(np.median(v)) for name, v in cost.items()}
    print(f"median: pruned {ms['pruned']:.2f} ms, dense {ms['dense']:.2f} ms per gradient; "
          f"dense / pruned {ms['dense'] / ms['pruned']:.1f}x (load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
