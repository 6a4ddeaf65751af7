"""Benchmark: fitting a suite of benchmarks sequentially vs on a 2-worker local Dask cluster.

Data: ``eval_arena_main.csv.gz`` (15 benchmarks; ``--benchmarks N`` takes the first N by
name). Model: the default Beta-Binomial (partial pooling, nutpie), ``--draws``/``--tune`` per
chain, 4 chains. Both arms run in fresh processes of their own so that each pays its own
numba compiles (nutpie's compiled models are cached per process and per padded data shape,
so the sequential arm compiles once per distinct shape, each worker once per shape it sees).
The parallel arm's time includes starting and stopping the LocalCluster. The machine has 2
cores shared with other jobs: the 1-minute load average is printed beside each time and the
speed-up can be at most ~2 and is less under load. Run::

    nice -n 10 python benchmarks/speed/bench_suite.py --benchmarks 6 --draws 300 --tune 300
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (benchmarks/speed/ is two down)
DATA = Path("/work/shared/data/eval_arena_main.csv.gz")

ARM = r'''
import sys, time
import pandas as pd
from evalbayes.models import get_model
from evalbayes.suite import fit_suite, seed_for, split_benchmarks
arm, path = sys.argv[1], sys.argv[2]
count, draws, tune = (int(v) for v in sys.argv[3:6])
sets = split_benchmarks(pd.read_csv(path))
sets = {k: sets[k] for k in sorted(sets)[:count]}
model = get_model("beta-binomial")
start = time.perf_counter()
if arm == "sequential":
    for name, data in sets.items():
        model.fit(data, draws=draws, tune=tune, chains=4, seed=seed_for(0, name), check=False)
else:
    fit_suite(sets, model, None, n_workers=2, draws=draws, tune=tune, chains=4, seed=0,
              check=False)
print(f"SECONDS {time.perf_counter() - start:.2f}")
print("SHAPES " + "; ".join(f"{k} {v.shape[0]}x{v.shape[1]}" for k, v in sets.items()))
'''


def load1() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", type=int, default=6)
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--tune", type=int, default=300)
    parser.add_argument("--data", default=str(DATA))
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    times = {}
    for arm in ("sequential", "dask-2-workers"):
        before = load1()
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", ARM, arm, args.data, str(args.benchmarks),
             str(args.draws), str(args.tune)],
            env=env, capture_output=True, text=True,
        )
        wall = time.perf_counter() - start
        lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
        if proc.returncode != 0:
            print(proc.stderr[-3000:])
            raise SystemExit(1)
        times[arm] = float(lines["SECONDS"])
        print(f"{arm:<16} fits {times[arm]:7.1f} s  process wall {wall:7.1f} s  "
              f"load before {before} after {load1()}")
        print(f"  {lines['SHAPES']}")
    ratio = times["sequential"] / times["dask-2-workers"]
    print(f"speed-up (sequential / dask, fit time): {ratio:.2f}")


if __name__ == "__main__":
    main()
