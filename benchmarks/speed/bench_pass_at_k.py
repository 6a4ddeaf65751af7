"""Benchmark: unbiased pass@k for 1,000,000 tasks x k = 1..100 (n = 200).

Compares, in one run:

* ``mean_pass_at_k`` — task-averaged pass@k over the full grid (what a report prints),
* ``pass_at_k`` — per-task pass@k over the full grid (a 1e6 x 100 float64 array, 800 MB),
* a vectorised log-gamma form ``1 - exp(lgC(n-c, k) - lgC(n, k))``, timed on the first
  100,000 tasks and extrapolated (it is linear in the number of tasks),
* the naive baseline: a Python loop of ``1 - comb(n-c, k) / comb(n, k)`` with exact
  integers (``math.comb``), timed on a sample of tasks and extrapolated per task,

and checks that all of them agree on the sample. The two evalbayes timings are the best of
``--repeat`` runs (the machine is shared). Run:
``.venv/bin/python benchmarks/speed/bench_pass_at_k.py [--tasks 1000000] [--sample 2000]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.special import gammaln

from evalbayes.frequentist import mean_pass_at_k, pass_at_k


def naive(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    out = np.empty((n.size, ks.size))
    for i, (ni, ci) in enumerate(zip(n.tolist(), c.tolist(), strict=True)):
        for j, k in enumerate(ks.tolist()):
            out[i, j] = 1 - math.comb(ni - ci, k) / math.comb(ni, k)
    return out


def log_gamma(n: np.ndarray, c: np.ndarray, ks: np.ndarray) -> np.ndarray:
    n = n[:, None].astype(np.float64)
    m = (n - c[:, None]).astype(np.float64)
    k = ks[None, :].astype(np.float64)
    with np.errstate(invalid="ignore"):
        log_ratio = gammaln(m + 1) - gammaln(m - k + 1) - gammaln(n + 1) + gammaln(n - k + 1)
    return np.where(m < k, 1.0, -np.expm1(log_ratio))


def timed(func, *args, repeat: int = 1):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = func(*args)
        best = min(best, time.perf_counter() - start)
    return result, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=2_000)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--kmax", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    n = np.full(args.tasks, args.n)
    c = rng.binomial(args.n, rng.beta(0.4, 0.3, size=args.tasks))  # U-shaped task rates
    ks = np.arange(1, args.kmax + 1)
    grid = f"{args.tasks:,} tasks x k = 1..{args.kmax} (n = {args.n})"

    _, t_mean = timed(mean_pass_at_k, n, c, ks, repeat=args.repeat)
    per_task, t_cells = timed(pass_at_k, n, c, ks, repeat=args.repeat)
    part = min(args.tasks, 100_000)
    _, t_lg_part = timed(log_gamma, n[:part], c[:part], ks)
    t_lg = t_lg_part * args.tasks / part
    sample = rng.choice(args.tasks, size=args.sample, replace=False)
    ref, t_naive = timed(naive, n[sample], c[sample], ks)
    t_naive_full = t_naive / args.sample * args.tasks

    err_cells = float(np.abs(per_task[sample] - ref).max())
    err_lg = float(np.abs(log_gamma(n[sample], c[sample], ks) - ref).max())
    err_mean = float(np.abs(mean_pass_at_k(n[sample], c[sample], ks) - ref.mean(0)).max())
    del per_task
    mib = args.tasks * args.kmax * 8 / 2**20

    print(grid)
    print(f"mean_pass_at_k (task average)   {t_mean:8.3f} s")
    print(f"pass_at_k (per task, {mib:,.0f} MiB out) {t_cells:6.3f} s")
    print(f"log-gamma, vectorised           {t_lg:8.3f} s  (extrapolated from {part:,} tasks)")
    print(
        f"math.comb loop                  {t_naive_full:8.1f} s  (extrapolated from "
        f"{args.sample:,} tasks: {t_naive / args.sample * 1e3:.2f} ms per task)"
    )
    print(
        f"speed-up vs math.comb: task average {t_naive_full / t_mean:,.0f}x, "
        f"per task {t_naive_full / t_cells:,.0f}x; vs log-gamma: per task "
        f"{t_lg / t_cells:.1f}x"
    )
    print(
        f"max |difference| to math.comb on the sample: per task {err_cells:.1e}, "
        f"task average {err_mean:.1e}, log-gamma {err_lg:.1e}"
    )


if __name__ == "__main__":
    main()
