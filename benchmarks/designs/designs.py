"""Designs benchmarks: factorial (Terminal-Bench + recovery), training seeds, judge error.

Each Bayesian model beside its frequentist twin. Run from the repository root::

    PYTHONPATH=src nice -n 10 python benchmarks/designs/designs.py terminal-bench \
        > benchmarks/designs/results/terminal_bench_factorial.txt
    PYTHONPATH=src nice -n 10 python benchmarks/designs/designs.py terminal-bench \
        --task-parameterization noncentered        # the factorial's task effects non-centred
    PYTHONPATH=src nice -n 10 python benchmarks/designs/designs.py judge-coverage --reps 400

Results are collected by hand into benchmarks/designs/details.md (numbers as printed here);
``judge-coverage`` writes its rows to ``benchmarks/designs/results/judge_coverage.csv``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"  # beside the repository
TB_PATTERN = r"^\d{8}_(?P<harness>[^_]+)_(?P<model>.+)$"


def normalise_tb_model(name: str) -> str:
    """Terminal-Bench spells Claude 4.1 Opus two ways."""
    return {"claude-4-1-opus": "claude-4.1-opus"}.get(name, name)


def terminal_bench(draws: int, tune: int, chains: int, parameterization: str = "auto") -> None:
    from evalbayes.data import EvalData
    from evalbayes.frequentist import empirical_logit, factorial_anova
    from evalbayes.models.designs import (
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
    post = FactorialModel(task_parameterization=parameterization).fit(
        data, draws=draws, tune=tune, chains=chains, seed=0)
    print(f"fit (task effects {parameterization}) {time.time() - t0:.0f} s; {post.diagnostics()}")
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


def judge_coverage(reps: int, gold_sizes: list[int], draws: int, seed: int, out: Path) -> None:
    """Coverage of the true pass rate ("these tasks") as the gold subset shrinks.

    One system, 300 tasks, one judged trial each; true p ~ logit-normal(-0.3, 1.5);
    judge sensitivity 0.85, specificity 0.90. Truth = mean of the 300 true p. Beside the
    judge model: Rogan-Gladen (delta method with n, n_pos, n_neg) and PPI++ (gold = labelled,
    the other judged trials = unlabelled).
    """
    from scipy.special import expit

    from evalbayes.data import EvalData
    from evalbayes.frequentist import ppi_mean, rogan_gladen
    from evalbayes.models.designs import JudgeErrorModel, judge_data

    n_task, sens, spec = 300, 0.85, 0.90
    rng = np.random.default_rng(seed)
    rows = []
    for rep in range(reps):
        p = expit(rng.normal(-0.3, 1.5, n_task))
        y = rng.random(n_task) < p
        j = np.where(y, rng.random(n_task) < sens, rng.random(n_task) > spec).astype(int)
        truth = float(p.mean())
        counts = EvalData.from_arrays(np.ones((1, n_task), int), j[None, :])
        for g in gold_sizes:
            idx = rng.choice(n_task, g, replace=False)
            gold = pd.DataFrame({"system": "system_0", "task": [f"task_{i}" for i in idx],
                                 "judge": j[idx], "human": y[idx].astype(int)})
            t0 = time.time()
            post = JudgeErrorModel().fit(judge_data(counts, gold), draws=draws, tune=draws,
                                    chains=2, seed=rep, check=False)
            pk = post.curve("pass@k", 1).values.ravel()
            lo, hi = np.quantile(pk, [0.025, 0.975])
            row = {"rep": rep, "gold": g, "truth": truth, "bayes_lo": lo, "bayes_hi": hi,
                   "secs": time.time() - t0}
            hp, jp = y[idx], j[idx].astype(bool)
            n_pos, n_neg = int(hp.sum()), int((~hp).sum())
            try:
                q1, q0 = (jp & hp).sum() / n_pos, (~jp & ~hp).sum() / n_neg
                rg = rogan_gladen(j.mean(), q0, q1, n=n_task, n_pos=n_pos, n_neg=n_neg)
                row.update(rg_lo=rg.lower, rg_hi=rg.upper)
            except (ValueError, ZeroDivisionError):
                row.update(rg_lo=np.nan, rg_hi=np.nan)
            rest = np.setdiff1d(np.arange(n_task), idx)
            if len(rest) >= 2:
                pp = ppi_mean(y[idx].astype(float), j[idx].astype(float), j[rest].astype(float))
                row.update(ppi_lo=pp.lower, ppi_hi=pp.upper)
            rows.append(row)
        frame = pd.DataFrame(rows)
        frame.to_csv(out, index=False)
    summarise_coverage(frame)


def summarise_coverage(frame: pd.DataFrame) -> None:
    out = []
    for g, grp in frame.groupby("gold"):
        row = {"gold": g, "reps": len(grp)}
        for name in ("bayes", "rg", "ppi"):
            lo, hi = grp.get(f"{name}_lo"), grp.get(f"{name}_hi")
            if lo is None:
                continue
            ok = lo.notna()
            row[f"{name}_cover"] = float(((lo <= grp.truth) & (grp.truth <= hi))[ok].mean())
            row[f"{name}_width"] = float((hi - lo)[ok].mean())
            row[f"{name}_na"] = int((~ok).sum())
        out.append(row)
    print(pd.DataFrame(out).round(3).to_string(index=False))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["terminal-bench", "judge-coverage"])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--gold", type=int, nargs="+", default=[20, 50, 200])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--task-parameterization", default="auto",
                        choices=["auto", "centered", "noncentered"])
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "judge_coverage.csv")
    args = parser.parse_args(argv)
    if args.part == "terminal-bench":
        terminal_bench(args.draws, args.tune, args.chains, args.task_parameterization)
    elif args.part == "judge-coverage":
        judge_coverage(args.reps, args.gold, args.draws, args.seed, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
