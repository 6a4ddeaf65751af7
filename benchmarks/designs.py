"""Designs benchmarks: factorial (Terminal-Bench + recovery), training seeds, judge error.

Each Bayesian model beside its frequentist twin. Run from the repository root::

    PYTHONPATH=src nice -n 10 python benchmarks/designs.py terminal-bench > designs_tb.txt
    PYTHONPATH=src nice -n 10 python benchmarks/designs.py judge-coverage --reps 100
    PYTHONPATH=src nice -n 10 python benchmarks/designs.py seeds

Results are collected by hand into benchmarks/designs.md (numbers as printed here).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
TB_PATTERN = r"^\d{8}_(?P<harness>[^_]+)_(?P<model>.+)$"


def normalise_tb_model(name: str) -> str:
    """Terminal-Bench spells Claude 4.1 Opus two ways."""
    return {"claude-4-1-opus": "claude-4.1-opus"}.get(name, name)


def terminal_bench(draws: int, tune: int, chains: int) -> None:
    from evalbayes.data import EvalData
    from evalbayes.frequentist.variance_components import empirical_logit, factorial_anova
    from evalbayes.models.factorial import (
        FactorialModel,
        factors_from_system_names,
        rank_flips,
        variance_components,
    )

    path = Path("/work/shared/data/terminal_bench_core011_counts.csv")
    if not path.exists():
        path = SHARED / "terminal_bench_core011_counts.csv"
    frame = pd.read_csv(path).drop(columns=["benchmark"])
    data = EvalData.from_frame(frame, task="task_id")
    data = factors_from_system_names(
        data, TB_PATTERN, normalise=normalise_tb_model, drop_unmatched=True
    )
    print(data)
    print(pd.DataFrame({"system": data.systems, **{k: v for k, v in data.system_coords.items()}}))
    t0 = time.time()
    post = FactorialModel().fit(data, draws=draws, tune=tune, chains=chains, seed=0)
    print(f"fit {time.time() - t0:.0f} s; {post.diagnostics()}")
    print("\nvariance components (logit sd), 95 % intervals")
    print(variance_components(post).round(3).to_string())
    table, p_any = rank_flips(post)
    print("\nrank flips")
    print(table.round(3).to_string())
    print(f"P(any rank flip) = {p_any:.3f}")
    # frequentist twin on the one balanced block: models {claude-4-sonnet, claude-4.1-opus}
    # x harnesses {orchestrator, droid}, empirical logits per (model, harness, task)
    coords = data.system_coords
    models, harnesses = ["claude-4-sonnet", "claude-4.1-opus"], ["orchestrator", "droid"]
    y = np.empty((2, 2, data.shape[1]))
    for i, m in enumerate(models):
        for j, h in enumerate(harnesses):
            s = int(np.flatnonzero((coords["model"] == m) & (coords["harness"] == h))[0])
            y[i, j] = empirical_logit(data.c.values[s], data.n.values[s])
    anova = factorial_anova(y)
    print("\nANOVA on empirical logits, balanced 2 x 2 block (orchestrator, droid) x 80 tasks")
    print(anova.table.round(3).to_string())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["terminal-bench"])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    args = parser.parse_args(argv)
    if args.part == "terminal-bench":
        terminal_bench(args.draws, args.tune, args.chains)
    return 0


if __name__ == "__main__":
    sys.exit(main())
