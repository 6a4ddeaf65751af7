"""Cost of paired population draws: the Beta-Binomial's population curve with
``population="independent"`` (closed form per draw) against ``"paired"`` (the same draws
coupled to a Bayesian bootstrap of the shared tasks, which needs every cell's rate draws) and
``"bayesian-bootstrap"``, and the "tasks" estimand for scale, on SWE-bench Verified
(123 systems x 500 tasks, n = 1; exact quadrature posterior, 4 x 1000 draws) and
Terminal-Bench (13 x 80, n = 5).

Prints seconds and the ratio to the independent curve in the same run, with the load
average (2 shared cores: absolute seconds are noisy, ratios less so).

Usage: ``python benchmarks/speed/bench_paired_population.py [--ks 11]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from evalbayes import EvalData
from evalbayes.models import BetaBinomialModel

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"  # beside the repository
if not DATA.exists():
    DATA = Path("/work/shared/data")


def load(name: str) -> EvalData:
    frame = pd.read_csv(DATA / name).rename(columns={"task_id": "task"})
    if "n" not in frame.columns:
        frame = frame.groupby(["system", "task"], as_index=False).agg(n=("c", "size"),
                                                                     c=("c", "sum"))
    return EvalData.from_frame(frame[["system", "task", "n", "c"]])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", type=int, default=11, help="number of k values (1, 2, 4, ...)")
    args = parser.parse_args(argv)
    ks = 2 ** np.arange(args.ks)
    print(f"load average {os.getloadavg()[0]:.1f}; k = {ks.tolist()}")
    print("| data | curve | seconds | / independent |")
    print("|---|---|---:|---:|")
    for label, name in (("SWE-bench Verified 123 x 500", "swebench_verified_binary.csv"),
                        ("Terminal-Bench 13 x 80", "terminal_bench_core011_counts.csv")):
        data = load(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = BetaBinomialModel().fit(data, draws=1000, chains=4, seed=0)
        base = None
        for population in ("independent", "paired", "bayesian-bootstrap", "tasks estimand"):
            model = BetaBinomialModel(population=population if population != "tasks estimand"
                                      else "independent")
            estimand = "tasks" if population == "tasks estimand" else "population"
            t0 = time.perf_counter()
            model.curve(post.posterior, data, ks, "pass@k", estimand, False, seed=0)
            seconds = time.perf_counter() - t0
            base = base or seconds
            print(f"| {label} | {population} | {seconds:.2f} | {seconds / base:.0f}x |",
                  flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
