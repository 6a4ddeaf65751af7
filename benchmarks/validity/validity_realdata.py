"""Real-data validity of pass@k intervals: subsample m trials, compare with the full data.

Protocol (issue 10, item 5). ``shared/data/noise_highk_temp0.7.csv.gz`` (beside the repository)
has ~1100 samples
per (system, task) for HumanEval+ and MATH500. The "truth" of a system is the unbiased pass@k
(Chen et al. 2021) of all its samples, averaged over the tasks. Per subsampling seed, m trials
per cell are drawn without replacement (hypergeometric counts), the models are fitted to the
subsample, and we record whether the 95 % equal-tailed interval covers the truth, and its width.

* ``tasks`` estimand: all tasks of the benchmark (MATH500: a fixed random 200 of 500, to keep
  the run short); truth = mean over those tasks of the full-data unbiased pass@k.
* ``population`` estimand: N in {10, 30} random tasks are fitted; truth = the mean over ALL
  tasks of the benchmark (the benchmark's tasks stand in for the population).
* Truth noise: at k close to n ~ 1100 the full-data value is itself an estimate. Its standard
  error is estimated by a parametric bootstrap of the full data (c* ~ Binomial(n, c / n) per
  cell, 200 replicates). "cov+" counts an interval as covering when the truth lies within the
  interval widened (about its midpoint) to ``sqrt(half^2 + (1.96 se)^2)``; "cov" is the raw
  coverage. The bootstrap gives zero noise to cells with c = 0 (where the real uncertainty is
  largest), so cov+ is still a slight under-correction at k = 1024.
* Models: RateGridModel() (the default for two or more systems; ``rate-grid-grid`` and
  ``rate-grid-bootstrap`` are its ``population="independent"`` and ``"bayesian-bootstrap"``
  forms, population rows only), BetaBinomialModel() (partial pooling, the default for one
  system), BetaBinomialModel(pooling="none") (per-task Beta(1, 1)); and the task bootstrap of
  per-task unbiased pass@k (defined for k <= m only). The retired task-effects and task-grid
  models are gone from the options; their rows stay in ``../experimental/results/`` and in
  ``results/`` (``--pool`` still reads them).
* Systems: those with at least max(k) samples on every task (so the truth exists at every k;
  1024 by default); a subset of ``--systems`` of them, evenly spaced in full-data pass@1 rank
  (documented in the output), because one joint fit of all 46 x 164 cells takes ~30 min on
  this loaded machine.
* AIME 2024 / 2025 (issue 27): 30 tasks each, ~1100 samples per cell; ``--benchmarks AIME2024
  AIME2025 --systems 48 --ks 1 4 16 64 256 512 --fit-defaults`` (k <= 16 m at m = 32; the rate
  grid's SMC with ``Model.fit``'s own draws). Each row also records the share of intervals
  wholly above (``above@k``) and below (``below@k``) the truth: the misses' direction.
* ``--variant key=value,...`` fits ``RateGridModel(**options)`` beside the others (e.g.
  ``grid_limit=10``), labelled ``rate-grid:<options>``.

Usage: ``python benchmarks/validity/validity_realdata.py [--quick] [--out results.json]``
(stored runs: ``--out benchmarks/validity/results/<name>.json``, the printed output beside it
as ``.txt``);
``--pool a.json b.json ...`` prints the table of the rows of earlier runs together (e.g. the
same model over several runs' subsampling seeds; ``--models`` selects) without fitting.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from evalbayes import EvalData
from evalbayes.frequentist import mean_pass_at_k, pass_at_k
from evalbayes.models import BetaBinomialModel, RateGridModel

# benchmarks/validity/ -> parents[2] is the repository, parents[3] holds shared/
DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "noise_highk_temp0.7.csv.gz"
if not DATA.exists():
    DATA = Path("/work/shared/data/noise_highk_temp0.7.csv.gz")
KS = np.array([1, 4, 16, 64, 256, 1024])
BENCHMARKS = {"HumanEval+": "human_eval_plus", "MATH500": "math500_cot",
              "AIME2024": "aime2024_cot", "AIME2025": "aime2025_cot"}


def load(benchmark: str, n_systems: int, max_tasks: int | None, seed: int = 0):
    d = pd.read_csv(DATA)
    d = d[d.benchmark == benchmark]
    n = d.pivot(index="system", columns="task_id", values="n")
    c = d.pivot(index="system", columns="task_id", values="c")
    keep = n.min(axis=1) >= KS.max()  # the truth exists at every k
    n, c = n[keep], c[keep]
    rate = (c / n).mean(axis=1).sort_values()
    idx = np.linspace(0, len(rate) - 1, min(n_systems, len(rate))).round().astype(int)
    systems = list(rate.index[idx])
    n, c = n.loc[systems], c.loc[systems]
    tasks = list(n.columns)
    if max_tasks is not None and len(tasks) > max_tasks:
        rng = np.random.default_rng(seed)
        tasks = sorted(rng.choice(tasks, max_tasks, replace=False))
    return n.values.astype(int), c.values.astype(int), systems, tasks, n[tasks].values.astype(
        int
    ), c[tasks].values.astype(int)


def truth_and_noise(n, c, ks, replicates=200, seed=0):
    """Full-data unbiased pass@k averaged over tasks, and its parametric-bootstrap s.e."""
    truth = mean_pass_at_k(n, c, ks, axis=1)  # (S, K)
    rng = np.random.default_rng(seed)
    reps = np.empty((replicates, *truth.shape))
    for r in range(replicates):
        c_star = rng.binomial(n, c / n)
        reps[r] = mean_pass_at_k(n, c_star, ks, axis=1)
    return truth, reps.std(axis=0)


def subsample(n, c, m, rng):
    return np.full_like(n, m), rng.hypergeometric(c, n - c, m)


def interval(draws):
    """95 % equal-tailed interval over (chain, draw) -> arrays (S, K)."""
    flat = draws.values.reshape(-1, *draws.shape[2:])
    return np.quantile(flat, 0.025, axis=0), np.quantile(flat, 0.975, axis=0)


def task_bootstrap(n, c, ks, replicates=2000, seed=0):
    """Percentile task bootstrap of the per-task unbiased pass@k (k <= n only)."""
    ok = ks <= n.min()
    lo = np.full((n.shape[0], len(ks)), np.nan)
    hi = np.full_like(lo, np.nan)
    if not ok.any():
        return lo, hi
    per = pass_at_k(n, c, ks[ok])  # (S, T, K')
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n.shape[1], (replicates, n.shape[1]))
    means = per[:, idx].mean(axis=2)  # (S, R, K')
    lo[:, ok] = np.quantile(means, 0.025, axis=1)
    hi[:, ok] = np.quantile(means, 0.975, axis=1)
    return lo, hi


def score(lo, hi, truth, se):
    """Per (system, k): covered (raw, and truth-noise corrected), the interval wholly above
    the truth (``above``: a miss by over-estimating) or below it, and the width."""
    half = (hi - lo) / 2
    mid = (hi + lo) / 2
    wide = np.sqrt(half**2 + (1.96 * se) ** 2)
    return {
        "cov": (lo <= truth) & (truth <= hi),
        "cov+": np.abs(truth - mid) <= wide,
        "above": lo > truth,
        "below": hi < truth,
        "width": hi - lo,
    }


def fit_intervals(model, data, estimand, sampler):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = model.fit(data, check=False, **sampler.get(model.default_method, sampler["*"]))
        draws = post.pass_at_k(KS, estimand=estimand)
    diag = {}
    if post.sample_stats is not None and "diverging" in post.sample_stats:
        diag["divergences"] = int(post.sample_stats["diverging"].sum())
    return interval(draws), diag


def run(args) -> list[dict]:
    rows: list[dict] = []
    # 2 x (draws + draws) for every sampler (SMC: 2 x draws particles); --fit-defaults: the
    # rate grid's SMC with Model.fit's own defaults (4 x 1000 particles), as a user gets it
    sampler = {"*": {"draws": args.draws, "tune": args.draws, "chains": 2, "seed": 1}}
    if args.fit_defaults:
        sampler["smc"] = {"seed": 1}
    models = {
        "beta-binomial": BetaBinomialModel(),
        "bb-none": BetaBinomialModel(pooling="none"),
        "rate-grid": RateGridModel(),
        "rate-grid-grid": RateGridModel(population="independent"),
        "rate-grid-bootstrap": RateGridModel(population="bayesian-bootstrap"),
    }
    for sd in args.coef_prior or ():
        models[f"rate-grid:{sd:g}"] = RateGridModel(coef_prior=sd)
    if args.models:
        models = {name: model for name, model in models.items() if name in args.models}
    for text in args.variant or ():  # fitted whatever --models says
        models[f"rate-grid:{text}"] = RateGridModel(**_options(text))
    for label, bench in BENCHMARKS.items():
        if args.benchmarks and label not in args.benchmarks:
            continue
        n_all, c_all, systems, tasks, n_t, c_t = load(bench, args.systems, args.max_tasks)
        print(f"# {label}: {len(systems)} systems {systems}; {len(tasks)} tasks", flush=True)
        truth_t, se_t = truth_and_noise(n_t, c_t, KS)
        truth_p, se_p = truth_and_noise(n_all, c_all, KS)
        for m in args.m:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                rng = np.random.default_rng([seed, m])
                # tasks estimand on the chosen tasks
                n_s, c_s = subsample(n_t, c_t, m, rng)
                data = EvalData.from_arrays(n_s, c_s, systems=systems, tasks=tasks)
                for name, model in models.items():
                    if "tasks" not in args.estimands or name.startswith("rate-grid-"):
                        continue  # (rate-grid-* differ from rate-grid in population only)
                    t0 = time.time()
                    (lo, hi), diag = fit_intervals(model, data, "tasks", sampler)
                    rows.append(_row(label, "tasks", len(tasks), m, seed, name,
                                     score(lo, hi, truth_t, se_t), time.time() - t0, diag))
                if "tasks" in args.estimands:
                    lo, hi = task_bootstrap(n_s, c_s, KS, seed=seed)
                    rows.append(_row(label, "tasks", len(tasks), m, seed, "task-bootstrap",
                                     score(lo, hi, truth_t, se_t), 0.0, {}))
                    _progress(rows)
                # population estimand on N random tasks (of all the benchmark's tasks)
                for size in args.population_tasks if "population" in args.estimands else ():
                    pick = np.sort(rng.choice(n_all.shape[1], size, replace=False))
                    n_s, c_s = subsample(n_all[:, pick], c_all[:, pick], m, rng)
                    data = EvalData.from_arrays(n_s, c_s, systems=systems)
                    for name in ("beta-binomial", "rate-grid", "rate-grid-grid",
                                 "rate-grid-bootstrap",
                                 *(n for n in models if n.startswith("rate-grid:"))):
                        if name not in models:
                            continue
                        t0 = time.time()
                        (lo, hi), diag = fit_intervals(models[name], data, "population", sampler)
                        rows.append(_row(label, "population", size, m, seed, name,
                                         score(lo, hi, truth_p, se_p), time.time() - t0, diag))
                    lo, hi = task_bootstrap(n_s, c_s, KS, seed=seed)
                    rows.append(_row(label, "population", size, m, seed, "task-bootstrap",
                                     score(lo, hi, truth_p, se_p), 0.0, {}))
                _progress(rows)
    return rows


def _options(text: str) -> dict:
    """``"grid_limit=10,tail_terms=4"`` -> ``{"grid_limit": 10, "tail_terms": 4}`` (values
    read as Python literals)."""
    import ast

    out = {}
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep:
            raise SystemExit(f"--variant {text!r}: expected key=value, got {part!r}")
        out[key.strip()] = ast.literal_eval(value.strip())
    return out


PER_SYSTEM = False


def _row(bench, estimand, tasks, m, seed, model, sc, seconds, diag):
    if PER_SYSTEM:  # (system, k) lists: which system missed, and to which side
        diag = {**diag, **{f"{key}_by_system": sc[key].astype(int).tolist()
                           for key in ("cov", "above", "below")}}
    return {
        "benchmark": bench, "estimand": estimand, "tasks": tasks, "m": m, "seed": seed,
        "model": model, "seconds": round(seconds, 1),
        **{f"{key}@{k}": float(v) for key in ("cov", "cov+", "above", "below", "width")
           for k, v in zip(KS, np.nanmean(np.where(np.isnan(sc["width"]), np.nan,
                                                    sc[key].astype(float)), axis=0),
                           strict=True)},
        **diag,
    }


OUT: Path | None = None


def _progress(rows):
    if OUT is not None:  # incremental, so a stopped run keeps its rows
        OUT.write_text(json.dumps({"rows": rows}, indent=1))
    r = rows[-1]
    print(f"  {r['benchmark']} {r['estimand']} N={r['tasks']} m={r['m']} seed={r['seed']} "
          f"done ({len(rows)} rows)", flush=True)


def table(rows: list[dict]) -> str:
    df = pd.DataFrame(rows)
    ks = sorted({int(col.split("@")[1]) for col in df.columns if col.startswith("cov@")})
    lines = []
    for (bench, estimand, tasks), part in df.groupby(["benchmark", "estimand", "tasks"],
                                                       sort=False):
        lines.append(f"\n### {bench}, {estimand} estimand, {tasks} tasks "
                     f"(up to {part.seed.nunique()} seeds per m; coverage pooled over the "
                     "systems)\n")
        header = "| m | model | " + " | ".join(f"k={k}" for k in ks) + " | mean s |"
        lines += [header, "|" + "---|" * (len(ks) + 3)]
        for (m, model), g in part.groupby(["m", "model"], sort=False):
            cells = []
            for k in ks:
                cov, covp, width = g[f"cov@{k}"].mean(), g[f"cov+@{k}"].mean(), g[
                    f"width@{k}"].mean()
                miss = ""
                if f"above@{k}" in g and not g[f"above@{k}"].isna().any():
                    # the misses' direction: intervals wholly above / below the truth
                    miss = f" ^{g[f'above@{k}'].mean():.2f} v{g[f'below@{k}'].mean():.2f}"
                cells.append("-" if np.isnan(cov) else f"{cov:.2f}/{covp:.2f} w{width:.3f}"
                             + miss)
            lines.append(f"| {m} | {model} | " + " | ".join(cells) +
                         f" | {g.seconds.mean():.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    global KS, OUT, PER_SYSTEM
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coef-prior", type=float, nargs="+", default=None,
                        help="also fit RateGridModel(coef_prior=X), labelled rate-grid:X "
                        "(tasks estimand, and population with the default pairing)")
    parser.add_argument("--variant", nargs="+", default=None,
                        help="also fit RateGridModel(**options) for each 'key=value,...' "
                        "(e.g. grid_limit=10), labelled rate-grid:<options>")
    parser.add_argument("--quick", action="store_true", help="6 systems, 1 seed, m = 16")
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="subsampling seeds first-seed .. first-seed + seeds - 1")
    parser.add_argument("--m", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--max-tasks", type=int, default=200)
    parser.add_argument("--population-tasks", type=int, nargs="*", default=[10, 30],
                        help="task counts of the population estimand (none: tasks only)")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--fit-defaults", action="store_true",
                        help="fit the SMC models (the rate grid) with Model.fit's default "
                        "draws and chains instead of 2 x --draws")
    parser.add_argument("--ks", type=int, nargs="+", default=None,
                        help=f"the k of pass@k (default {' '.join(map(str, KS))}); systems "
                        "need at least max(k) samples per task")
    parser.add_argument("--estimands", nargs="+", default=["tasks", "population"],
                        choices=("tasks", "population"))
    parser.add_argument("--benchmarks", nargs="+", default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--per-system", action="store_true",
                        help="also store each row's per-system (system x k) cover / above / "
                        "below flags (systems in the order printed)")
    parser.add_argument("--models", nargs="+", default=None,
                        help="only these of beta-binomial, bb-none, rate-grid, rate-grid-grid "
                        "(population=\"independent\"), rate-grid-bootstrap "
                        "(population=\"bayesian-bootstrap\"); with --pool, any model name "
                        "in the files (e.g. the retired task-effects, task-grid)")
    parser.add_argument("--pool", type=Path, nargs="+", default=None,
                        help="print the table of these result files' rows together; no fits")
    args = parser.parse_args(argv)
    if args.ks:
        KS = np.array(sorted(set(args.ks)))
    PER_SYSTEM = args.per_system
    if args.pool:
        rows = [row for path in args.pool for row in json.loads(path.read_text())["rows"]
                if not args.models or row["model"] in args.models]
        print(f"# pooled: {', '.join(path.name for path in args.pool)}")
        print(table(rows))
        return 0
    if args.quick:
        args.systems, args.seeds, args.m = 6, 1, [16]
    OUT = args.out
    t0 = time.time()
    rows = run(args)
    text = table(rows)
    print(text)
    print(f"\ntotal {time.time() - t0:.0f} s; cells: cov/cov+ (raw / truth-noise corrected), "
          "mean width of the 95 % interval, and the share of intervals wholly above (^) and "
          "below (v) the truth")
    if args.out:
        args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                        "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
