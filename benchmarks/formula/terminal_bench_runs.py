"""Terminal-Bench core 0.1.1: run-to-run spread and agent comparisons with a formula model.

Each submission ("agent": harness + model) ran the 80 tasks in 5 separate runs of one
attempt (three orchestrator submissions: one run of 5 attempts). Every (agent, run) becomes a
system of the EvalData with the coordinates ``agent`` and ``run``, and the formula::

    c | trials(n) ~ agent + (1 | task) + (1 | agent:task) + (1 | run)

fits a run-level effect (a shift of a whole run on the logit scale) beside the task and
agent-by-task effects. The run term is integrated as noise, so each agent's pass@1 and the
comparison of two agents are for a new run. Beside it: the rate grid's P(B > A) on the pooled
counts (5 trials per task) and the frequentist paired comparison (bootstrap and sign-flip over
tasks) of the per-task pass rates.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/formula/terminal_bench_runs.py [--draws 1000 --tune 1000]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import evalbayes as eb
from evalbayes.frequentist import paired_comparison
from evalbayes.models.formula import FormulaModel

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"  # beside the repository
FORMULA = "c | trials(n) ~ agent + (1 | task) + (1 | agent:task) + (1 | run)"
PAIRS = [("20250829_goose_claude-4-sonnet", "20250829_goose_claude-4-opus"),
         ("20250923_droid_claude-4-sonnet", "20250924_droid_gpt-5"),
         ("20250911_chaterm_claude-4-sonnet", "20250923_droid_claude-4-sonnet")]


def run_data(trials: pd.DataFrame) -> eb.EvalData:
    """One system per (agent, run), coordinates ``agent`` and ``run``."""
    frame = trials.assign(
        run=lambda d: d["system"] + "/" + d["run"].astype(str),
        agent=lambda d: d["system"],
        success=lambda d: d["is_resolved"].astype(int),
    )
    counts = (frame.groupby(["run", "task_id"], sort=True)
              .agg(n=("success", "size"), c=("success", "sum"), agent=("agent", "first"))
              .reset_index())
    return eb.EvalData.from_frame(counts.rename(columns={"run": "system", "task_id": "task"})
                                  .assign(run=lambda d: d["system"]))


def pooled_data(trials: pd.DataFrame) -> eb.EvalData:
    """One system per agent (all its runs' attempts pooled per task)."""
    counts = (trials.assign(success=trials["is_resolved"].astype(int))
              .groupby(["system", "task_id"]).agg(n=("success", "size"), c=("success", "sum"))
              .reset_index().rename(columns={"task_id": "task"}))
    return eb.EvalData.from_frame(counts)


def _use_adaptation(adaptation: str) -> None:
    """Make this process's nutpie fits use ``adaptation`` (nutpie.sample's mass-matrix
    adaptation; the package's sampler settings do not carry it, so the benchmark wraps the
    one call that passes them)."""
    import evalbayes.inference as inference

    def sample(nutpie: Any, compiled: Any, sampler: Any) -> Any:
        return nutpie.sample(compiled, draws=sampler.draws, tune=sampler.tune,
                             chains=sampler.chains, seed=sampler.seed,
                             progress_bar=sampler.progressbar,
                             target_accept=sampler.target_accept, adaptation=adaptation)

    inference._nutpie_sample = sample


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--target-accept", type=float, default=0.9)
    parser.add_argument("--adaptation", default="diag", choices=("diag", "low_rank"),
                        help="nutpie's mass-matrix adaptation (low_rank: a low-rank modified "
                        "diagonal that adapts to correlated directions, such as an agent's "
                        "coefficient against the mean of its agent-by-task effects)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    trials = pd.read_csv(SHARED / "terminal_bench_core011_trials.csv")
    reported = pd.read_csv(SHARED / "terminal_bench_core011_reported_runs.csv")
    data = run_data(trials)
    print(f"data: {data!r}; load {os.getloadavg()}")
    spread = reported.groupby("system")["accuracy"].agg(["mean", "std", "count"])
    print("reported per-run accuracy (runs of one submission):")
    print(spread.round(4).to_string())

    sampler = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "seed": args.seed}
    if args.adaptation != "diag":
        _use_adaptation(args.adaptation)
    print(f"sampler: {sampler}, target_accept {args.target_accept}, adaptation "
          f"{args.adaptation}")
    start = time.perf_counter()
    post = FormulaModel(FORMULA).fit(data, **sampler, target_accept=args.target_accept,
                                     check=False)
    formula_s = time.perf_counter() - start
    print(f"\nformula fit {formula_s:.1f} s (load {os.getloadavg()}): "
          f"{post.diagnostics(warn=False)}")
    effects = post.effects()
    print(effects[effects["kind"] == "sd"].round(3).to_string(index=False))
    sd_run = post.posterior["sd"].sel(term="1|run").values.ravel()
    print(f"run-to-run sd (logit): mean {sd_run.mean():.3f}, 95% "
          f"[{np.quantile(sd_run, 0.025):.3f}, {np.quantile(sd_run, 0.975):.3f}]")

    pooled = pooled_data(trials)
    rows = []
    for a, b in PAIRS:
        # formula: the first run of each agent; its run effect is drawn anew (a new run)
        sys_a = next(s for s in data.systems if s.startswith(a + "/"))
        sys_b = next(s for s in data.systems if s.startswith(b + "/"))
        row: dict[str, object] = {"A": a, "B": b}
        for estimand in ("tasks", "population"):
            draws = post.pass_at_k(1, estimand=estimand).sel(k=1)
            diff = (draws.sel(system=sys_b) - draws.sel(system=sys_a)).values.ravel()
            row[f"formula_{estimand}_diff"] = diff.mean()
            row[f"formula_{estimand}_lo"] = np.quantile(diff, 0.025)
            row[f"formula_{estimand}_hi"] = np.quantile(diff, 0.975)
            row[f"formula_{estimand}_P(B>A)"] = (diff > 0).mean()
        # the same formula conditioning on the five fitted runs instead (noise=())
        beta = post.posterior["beta"]
        coef = {s: f"agent[{s}]" for s in (a, b)}
        la = beta.sel(coef=coef[a]).values.ravel() if coef[a] in beta["coef"] else 0.0
        lb = beta.sel(coef=coef[b]).values.ravel() if coef[b] in beta["coef"] else 0.0
        row["formula_logodds_P(B>A)"] = np.mean(np.asarray(lb - la) > 0)
        start = time.perf_counter()
        grid = eb.RateGridModel().fit(pooled.subset(systems=[a, b]), **sampler, check=False)
        grid_s = time.perf_counter() - start
        g = grid.pass_at_k(1, estimand="tasks").sel(k=1)
        gd = (g.sel(system=b) - g.sel(system=a)).values.ravel()
        row.update({"grid_diff": gd.mean(), "grid_lo": np.quantile(gd, 0.025),
                    "grid_hi": np.quantile(gd, 0.975), "grid_P(B>A)": (gd > 0).mean(),
                    "grid_s": grid_s})
        paired = pooled.paired(a, b)
        freq = paired_comparison(paired.rates_a, paired.rates_b, seed=0)
        row.update({"freq_diff": freq.difference, "freq_lo": freq.interval.lower,
                    "freq_hi": freq.interval.upper, "freq_signflip_p": freq.sign_flip.p_value,
                    "freq_verdict": freq.verdict})
        rows.append(row)
        print(f"\n{b} - {a}:")
        for key, value in row.items():
            if key not in ("A", "B"):
                print(f"  {key}: {value if isinstance(value, str) else round(float(value), 4)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
