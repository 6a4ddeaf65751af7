"""Paired population comparisons on real benchmarks at 10-100 tasks (issue 27).

Protocol: from a benchmark with many systems on the same tasks, draw ``N`` tasks at random
(and, to keep the fits quick, a random subset of ``--systems`` systems), fit the model once,
and for every pair of systems (A, B) ask

* whether the 95 % population interval of the pass@1 difference ``B - A`` covers the
  difference on the whole benchmark (each system's mean of ``c / n`` over all its tasks);
  the finite benchmark's own sampling puts the exact target near 0.95-0.97;
* how wide it is against the paired task bootstrap's interval on the same ``N`` tasks
  (:func:`evalbayes.frequentist.paired_bootstrap_ci`, 2000 resamples) and against the
  model's unpaired (``population="independent"``) interval;
* whether ``P(B > A)`` is calibrated against "B is ahead on the whole benchmark": ECE over
  bins of the favoured side's probability ``q = max(P, 1 - P)`` (edges 0.5, 0.6, 0.7, 0.8,
  0.9, 0.95, 0.975, 1; pairs tied on the whole benchmark left out), and the wrong-sign rate
  among pairs with ``q > 0.975`` beside its expected value ``mean(1 - q)``.

The population difference is computed for each ``--alphas`` value of ``unseen_tasks`` and
each ``--couplings`` value of ``coupling`` from the same fit (the pairing is a derived
quantity: the posterior is the same). Single-system
rows record whether each system's population pass@1 interval covers its whole-benchmark rate.

Benchmarks (``shared/data``, see its README): ``swe-bench`` (SWE-bench Verified, 123 x 500,
n = 1), ``cruxeval`` (Eval-Arena CRUXEval-input at T = 0.8, 31 x 800, n = 10), ``mbpp+``
(Eval-Arena, 59 x 378, n = 1) and ``opencompass`` (PSN-IRT's OpenCompass matrix, 12 x 41,871,
n = 1).

Usage::

    nice -n 10 python benchmarks/validity/paired_realdata.py --model beta-binomial \\
        --benchmarks swe-bench cruxeval opencompass --tasks 10 20 50 --reps 10 \\
        --out benchmarks/validity/results/paired_realdata_beta_binomial_reps0-9.json
    python benchmarks/validity/paired_realdata.py --pool FILE [FILE ...]

Seeds: replicate ``r`` of benchmark ``b`` at ``N`` tasks draws its tasks and systems from
``default_rng([b's index, N, r])`` and fits with ``seed = r``; rerunning gives the same rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _realdata import DATA

from evalbayes import EvalData
from evalbayes.frequentist import paired_bootstrap_ci
from evalbayes.models import BetaBinomialModel, RateGridModel

BENCHMARKS = {
    "swe-bench": ("swebench_verified_binary.csv", None),
    "cruxeval": ("eval_arena_main.csv.gz", "CRUXEval-input-T0.8"),
    "mbpp+": ("eval_arena_main.csv.gz", "mbpp+"),
    "opencompass": ("psn_irt_opencompass_binary.csv.gz", None),
}
EDGES = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.975, 1.0 + 1e-12])


def load_matrix(name: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Systems and the (system, task) n and c matrices of one benchmark (tasks in file order)."""
    path, bench = BENCHMARKS[name]
    d = pd.read_csv(DATA / path)
    if bench is not None:
        d = d[d.benchmark == bench]
    n = d.pivot(index="system", columns="task_id", values="n").fillna(0).astype(int)
    c = d.pivot(index="system", columns="task_id", values="c").reindex_like(n).fillna(0)
    return list(n.index), n.values, c.values.astype(int)


def favoured_calibration(p: np.ndarray, ahead: np.ndarray) -> tuple[float, float, float, int]:
    """ECE over bins of ``q = max(p, 1 - p)``, the wrong-sign rate at ``q > 0.975``, its
    expected value, and how many pairs have ``q > 0.975``."""
    q = np.maximum(p, 1 - p)
    right = np.where(p >= 0.5, ahead, ~ahead).astype(float)
    ece = 0.0
    for lo, hi in itertools.pairwise(EDGES):
        inside = (q >= lo) & (q < hi)
        if inside.any():
            ece += inside.mean() * abs(q[inside].mean() - right[inside].mean())
    sure = q > 0.975
    wrong = float(1 - right[sure].mean()) if sure.any() else np.nan
    expected = float((1 - q[sure]).mean()) if sure.any() else np.nan
    return ece, wrong, expected, int(sure.sum())


def _key(reference: str, alpha: float, coupling: str = "dirichlet") -> str:
    """The column name of one pairing variant: ``"2.0"`` (the model's own reference, the
    ``"dirichlet"`` coupling), ``"posterior-mean 2.0"`` or ``"copula 4.0"``."""
    key = str(alpha) if coupling == "dirichlet" else f"{coupling} {alpha}"
    return key if reference == "model" else f"{reference} {key}"


def _variants(references: list[str], alphas: list[float], couplings: list[str],
              copula_alphas: list[float] | None) -> list[tuple[str, float, str]]:
    """``(reference, alpha, coupling)`` of every pairing variant (``"copula"`` with
    ``copula_alphas`` where given, its prior weight; alpha = 0 is left out for it)."""
    def weights(coupling: str) -> list[float]:
        if coupling == "copula":
            return [a for a in (copula_alphas or alphas) if a > 0]
        return alphas

    return [(r, a, c) for r in references for c in couplings for a in weights(c)]


def _with_reference(model, reference: str):
    """``model`` with its :attr:`pairing_reference` replaced (a subclass; same settings)."""
    cls = type(type(model).__name__, (type(model),),
               {"pairing_reference": property(lambda self: reference)})
    return cls(**{f.name: getattr(model, f.name) for f in dataclasses.fields(model)})


def run_one(model, bench_index, bench, names, n_all, c_all, truth, n_tasks, systems, rep,
            variants, draws):
    rng = np.random.default_rng([bench_index, n_tasks, rep])
    keep = np.sort(rng.choice(len(names), min(systems, len(names)), replace=False))
    tasks = np.sort(rng.choice(n_all.shape[1], n_tasks, replace=False))
    n, c = n_all[np.ix_(keep, tasks)], c_all[np.ix_(keep, tasks)]
    sub = [names[i] for i in keep]
    data = EvalData.from_arrays(n, c, systems=sub)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = model.fit(data, draws=draws, tune=draws, chains=2, seed=rep, check=False)
    k = np.array([1])
    curves = {}
    for reference, alpha, coupling in variants:
        base = model if reference == "model" else _with_reference(model, reference)
        variant = dataclasses.replace(base, coupling=coupling, unseen_tasks=float(alpha))
        curves[_key(reference, alpha, coupling)] = variant.curve(
            post.posterior, data, k, "pass@k", "population", False, seed=rep
        ).values[..., 0]
    indep = dataclasses.replace(model, population="independent")
    curves["independent"] = indep.curve(post.posterior, data, k, "pass@k", "population",
                                        False, seed=rep).values[..., 0]
    rate = c / n
    rows, singles = [], []
    for i in range(len(keep)):
        draws_i = curves["independent"][..., i].ravel()
        lo, hi = np.quantile(draws_i, [0.025, 0.975])
        singles.append({"benchmark": bench, "N": n_tasks, "rep": rep, "system": sub[i],
                        "truth": truth[keep[i]], "lower": lo, "upper": hi,
                        "solved_all": bool((c[i] == n[i]).all())})
        for j in range(i + 1, len(keep)):
            true_diff = truth[keep[j]] - truth[keep[i]]
            boot = paired_bootstrap_ci(rate[i], rate[j], seed=rep, n_resamples=2000)
            d = rate[j] - rate[i]
            sd = d.std(ddof=1) / np.sqrt(n_tasks)
            half = stats.t.ppf(0.975, n_tasks - 1) * sd
            row = {"benchmark": bench, "N": n_tasks, "rep": rep, "A": sub[i], "B": sub[j],
                   "truth": true_diff, "boot_lower": boot.lower, "boot_upper": boot.upper,
                   "t_lower": d.mean() - half, "t_upper": d.mean() + half,
                   "agree": bool((c[i] == c[j]).all())}
            for key, draws_s in curves.items():
                diff = (draws_s[..., j] - draws_s[..., i]).ravel()
                lo, hi = np.quantile(diff, [0.025, 0.975])
                row[f"{key}_lower"], row[f"{key}_upper"] = lo, hi
                row[f"{key}_p"] = float((diff > 0).mean() + 0.5 * (diff == 0).mean())
            rows.append(row)
    return rows, singles


def summarise(rows: pd.DataFrame, singles: pd.DataFrame, alphas: list[str]) -> None:
    def cover(lo, hi, t):
        return float(((lo <= t) & (t <= hi)).mean())

    print("| model | N | pairs | method | coverage | width | width / boot | ECE P(B>A) | "
          "wrong sign at q > 0.975 (expected, pairs) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (model, n_tasks), g in rows.groupby(["model", "N"]):
        boot_w = (g.boot_upper - g.boot_lower).mean()
        ahead = (g.truth > 0).values
        untied = (g.truth != 0).values
        for key in [*alphas, "independent", "boot", "t"]:
            lo_col = f"{key}_lower"
            if lo_col not in g:
                continue
            lo, hi = g[lo_col].values, g[f"{key}_upper"].values
            width = float(np.mean(hi - lo))
            cal = "-"
            if f"{key}_p" in g:
                ece, wrong, exp, sure = favoured_calibration(g[f"{key}_p"].values[untied],
                                                             ahead[untied])
                cal = f"{ece:.3f} | {wrong:.4f} ({exp:.4f}, {sure})"
            else:
                cal = "- | -"
            label = {"boot": "paired bootstrap", "t": "paired t",
                     "independent": "unpaired"}.get(key, key if "copula" in key
                                                    else f"unseen_tasks {key}")
            print(f"| {model} | {n_tasks} | {len(g)} | {label} | "
                  f"{cover(lo, hi, g.truth.values):.3f} | {width:.3f} | {width / boot_w:.2f} | "
                  f"{cal} |")
    print()
    print("| model | N | systems | single-system coverage | solved all: n | solved all: "
          "median lower | solved all: coverage |")
    print("|---|---|---|---|---|---|---|")
    for (model, n_tasks), g in singles.groupby(["model", "N"]):
        inside = (g.lower <= g.truth) & (g.truth <= g.upper)
        full = g[g.solved_all]
        lower = f"{full.lower.median():.3f}" if len(full) else "-"
        full_cover = f"{((full.lower <= full.truth) & (full.truth <= full.upper)).mean():.3f}" \
            if len(full) else "-"
        print(f"| {model} | {n_tasks} | {len(g)} | {inside.mean():.3f} | {len(full)} | "
              f"{lower} | {full_cover} |")
    agree = rows[rows.agree]
    if len(agree):
        print()
        print("Pairs with identical results on every drawn task:")
        for (model, n_tasks), g in agree.groupby(["model", "N"]):
            parts = [f"{key} {cover(g[f'{key}_lower'], g[f'{key}_upper'], g.truth):.3f}"
                     for key in [*alphas, "independent", "boot"] if f"{key}_lower" in g]
            print(f"  {model} N={n_tasks} ({len(g)} pairs): coverage " + ", ".join(parts))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="beta-binomial",
                        choices=("beta-binomial", "rate-grid"))
    parser.add_argument("--coef-prior", type=float, default=None,
                        help="rate grid: coef_prior (default: the model's)")
    parser.add_argument("--references", nargs="+", default=["model"],
                        choices=("model", "draws", "posterior-mean"),
                        help="the pairing's reference task values (Model.pairing_reference; "
                        "'model': the model's own), each with every --alphas")
    parser.add_argument("--benchmarks", nargs="+", default=["swe-bench", "cruxeval",
                                                            "opencompass"])
    parser.add_argument("--tasks", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--first-rep", type=int, default=0)
    parser.add_argument("--systems", type=int, default=12)
    parser.add_argument("--alphas", type=float, nargs="+", default=[0.0, 1.0, 2.0, 4.0])
    parser.add_argument("--couplings", nargs="+", default=["dirichlet"],
                        choices=("dirichlet", "dirichlet-copula", "copula"),
                        help="the pairing's coupling (the models' `coupling`), each with every "
                        "--alphas ('copula': with --copula-alphas where given)")
    parser.add_argument("--copula-alphas", type=float, nargs="+",
                        help="unseen_tasks values of the 'copula' coupling (its prior weight)")
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--pool", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.pool:
        payloads = [json.loads(p.read_text()) for p in args.pool]
        rows = pd.concat([pd.DataFrame(p["pairs"]) for p in payloads])
        singles = pd.concat([pd.DataFrame(p["singles"]) for p in payloads])
        summarise(rows, singles, payloads[0]["alphas"])
        return 0
    if args.model == "rate-grid":
        model = RateGridModel() if args.coef_prior is None else RateGridModel(
            coef_prior=args.coef_prior)
    else:
        model = BetaBinomialModel()
    label = args.model if args.coef_prior is None else f"{args.model}:{args.coef_prior}"
    alphas = [float(a) for a in args.alphas]
    variants = _variants(args.references, alphas, args.couplings, args.copula_alphas)
    print(f"# {label}, benchmarks {args.benchmarks}, N {args.tasks}, reps {args.first_rep}-"
          f"{args.first_rep + args.reps - 1}, {args.systems} systems, draws 2 x {args.draws}, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    all_rows, all_singles = [], []
    t0, cpu0 = time.time(), time.process_time()
    for bench in args.benchmarks:
        names, n_all, c_all = load_matrix(bench)
        truth = np.array([np.mean(c_all[s][n_all[s] > 0] / n_all[s][n_all[s] > 0])
                          for s in range(len(names))])
        index = list(BENCHMARKS).index(bench)
        for n_tasks in args.tasks:
            for rep in range(args.first_rep, args.first_rep + args.reps):
                rows, singles = run_one(model, index, bench, names, n_all, c_all, truth,
                                        n_tasks, args.systems, rep, variants, args.draws)
                for row in rows + singles:
                    row["model"] = label
                all_rows += rows
                all_singles += singles
            print(f"  {bench} N={n_tasks}: {time.time() - t0:.0f} s wall, "
                  f"{time.process_time() - cpu0:.0f} s CPU, load {os.getloadavg()[0]:.1f}",
                  flush=True)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"# total {time.time() - t0:.0f} s wall, {usage.ru_utime + usage.ru_stime:.0f} s CPU")
    keys = [_key(*v) for v in variants]
    summarise(pd.DataFrame(all_rows), pd.DataFrame(all_singles), keys)
    if args.out:
        args.out.write_text(json.dumps({"alphas": keys, "pairs": all_rows,
                                        "singles": all_singles}, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
