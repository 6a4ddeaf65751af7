"""Simulation-based calibration of the three design models (Talts et al. 2018, arXiv:1804.06788).

One part per model (``factorial``, ``training-seeds``, ``judge-error``). Each replicate ``r``
has its own seed ``seed + r``: parameters are drawn from the model's OWN prior (the dataclass
defaults and the ``build()`` code, restated below), data of a small fixed design are simulated
from them, the model is fitted with its default method (nutpie; one compiled model reused
across replicates), and the rank of each true value among 99 evenly thinned posterior draws is
recorded. Ranks of a calibrated model and sampler are uniform on 0..99; a chi-square test on 10
bins (:func:`evalbayes.testing.rank_uniformity`) checks each quantity. Every replicate is counted,
whatever its diagnostics (dropping divergent fits biases SBC); the number with divergences or
R-hat > 1.01 is reported beside the ranks.

Designs:

* factorial: 3 models x 2 harnesses with model ``m2`` absent under ``h1`` (5 systems,
  unbalanced as on Terminal-Bench) x 12 tasks x n = 4 trials (``factorial-noncentred``: the
  same with the task effects non-centred);
* training-seeds: 2 recipes x 3 runs x 15 tasks x n = 4;
* judge-error: 2 systems x 80 tasks x 1 judged trial, 25 of the 160 trials with a human
  label (gold), chosen at random.

Quantities ranked: the scalar hyper-parameters as the sampler stores them, and derived ones
(a contrast, a variance share, the "tasks" pass@1 of one system: the mean of its true cell
probabilities on these tasks, and for the judge the "population" pass@1 of a new task).

Usage::

    python benchmarks/designs/sbc_designs.py run --model judge-error --reps 200
    python benchmarks/designs/sbc_designs.py summary          # all CSVs -> printed summary

Ranks are written to ``results/sbc_<model>.csv`` beside this script (``sbc_judge.csv`` for
``judge-error``); the stored summary is ``results/sbc.txt``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.models.designs import (
    FactorialModel,
    JudgeErrorModel,
    TrainingSeedsModel,
    add_factors,
    judge_data,
)
from evalbayes.testing import rank_statistics, rank_uniformity

N_RANKS = 99
HERE = Path(__file__).resolve().parent
SAMPLER = {"draws": 400, "tune": 400, "chains": 2}


def _zero_sum(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    """A draw of PyMC's ``ZeroSumNormal(scale)``: iid normal minus its mean."""
    x = rng.normal(0.0, scale, size)
    return x - x.mean()


def _flat(da: Any) -> np.ndarray:
    """Posterior draws with chains stacked, shape (chain * draw,)."""
    return np.asarray(da.transpose("chain", "draw").values, dtype=float).reshape(-1)


# ---------------------------------------------------------------------------- factorial
FACTORIAL_SYSTEMS = [("m0", "h0"), ("m1", "h0"), ("m2", "h0"), ("m0", "h1"), ("m1", "h1")]
FACTORIAL_TASKS, FACTORIAL_TRIALS = 12, 4


def factorial_prior(model: FactorialModel, rng: np.random.Generator) -> dict[str, Any]:
    """mu ~ N(mu_prior); sigma_{model,harness,interaction,cell} ~ HalfNormal(sigma_prior);
    sigma_task ~ HalfNormal(sigma_task_prior); alpha, beta, gamma, b, e iid N(0, sigma)."""
    n_model, n_harness, n_sys = 3, 2, len(FACTORIAL_SYSTEMS)
    sig = {key: abs(rng.normal(0.0, model.sigma_prior))
           for key in ("model", "harness", "interaction", "cell")}
    sig["task"] = abs(rng.normal(0.0, model.sigma_task_prior))
    return {
        "mu": rng.normal(*model.mu_prior),
        "sigma": sig,
        "alpha": rng.normal(0.0, sig["model"], n_model),
        "beta": rng.normal(0.0, sig["harness"], n_harness),
        "gamma": rng.normal(0.0, sig["interaction"], n_sys),
        "b": rng.normal(0.0, sig["task"], FACTORIAL_TASKS),
        "e": rng.normal(0.0, sig["cell"], (n_sys, FACTORIAL_TASKS)),
    }


def factorial_simulate(truth: dict[str, Any], rng: np.random.Generator) -> tuple[EvalData, dict]:
    i = np.array([int(m[1]) for m, _ in FACTORIAL_SYSTEMS])
    j = np.array([int(h[1]) for _, h in FACTORIAL_SYSTEMS])
    eta = (truth["mu"] + truth["alpha"][i] + truth["beta"][j] + truth["gamma"])[:, None]
    p = expit(eta + truth["b"][None, :] + truth["e"])
    n = np.full(p.shape, FACTORIAL_TRIALS)
    data = add_factors(EvalData.from_arrays(n, rng.binomial(n, p)),
                       [m for m, _ in FACTORIAL_SYSTEMS], [h for _, h in FACTORIAL_SYSTEMS])
    sig = truth["sigma"]
    var = {key: v**2 for key, v in sig.items()}
    values = {
        # the sampler stores mu + mean(alpha) + mean(beta) + mean(gamma) (factorial.py)
        "mu": truth["mu"] + truth["alpha"].mean() + truth["beta"].mean() + truth["gamma"].mean(),
        **{f"sigma_{key}": sig[key] for key in ("model", "harness", "interaction", "task",
                                                "cell")},
        "alpha[m1]-alpha[m0]": truth["alpha"][1] - truth["alpha"][0],
        "task share": var["task"] / sum(var.values()),
        "pass@1 tasks s0": p[0].mean(),
    }
    return data, values


def factorial_draws(post: Any) -> dict[str, np.ndarray]:
    pos = post.posterior
    sig = {key: _flat(pos[f"sigma_{key}"]) for key in ("model", "harness", "interaction",
                                                        "task", "cell")}
    alpha = pos["alpha"].transpose("chain", "draw", ...).values.reshape(-1, pos.sizes["model"])
    return {
        "mu": _flat(pos["mu"]),
        **{f"sigma_{key}": v for key, v in sig.items()},
        "alpha[m1]-alpha[m0]": alpha[:, 1] - alpha[:, 0],
        "task share": sig["task"] ** 2 / sum(v**2 for v in sig.values()),
        "pass@1 tasks s0": _flat(post.pass_at_k(1).sel(k=1).isel(system=0)),
    }


# ---------------------------------------------------------------------------- training seeds
SEED_RECIPES, SEED_RUNS, SEED_TASKS, SEED_TRIALS = 2, 3, 15, 4


def seeds_prior(model: TrainingSeedsModel, rng: np.random.Generator) -> dict[str, Any]:
    """m[k] ~ N(m_prior); sigma_run, sigma_cell ~ HalfNormal(sigma_prior); sigma_task ~
    HalfNormal(sigma_task_prior); u ~ N(0, sigma_run); b ~ ZeroSumNormal(sigma_task) (the task
    effects are zero-sum in build(), so m[k] is the logit at the mean task); e ~ N(0, sigma_cell).
    """
    n_run = SEED_RECIPES * SEED_RUNS
    sig = {"run": abs(rng.normal(0.0, model.sigma_prior)),
           "task": abs(rng.normal(0.0, model.sigma_task_prior)),
           "cell": abs(rng.normal(0.0, model.sigma_prior))}
    return {
        "m": rng.normal(*model.m_prior, SEED_RECIPES),
        "sigma": sig,
        "u": rng.normal(0.0, sig["run"], n_run),
        "b": _zero_sum(rng, sig["task"], SEED_TASKS),
        "e": rng.normal(0.0, sig["cell"], (n_run, SEED_TASKS)),
    }


def seeds_simulate(truth: dict[str, Any], rng: np.random.Generator) -> tuple[EvalData, dict]:
    recipe = np.repeat(np.arange(SEED_RECIPES), SEED_RUNS)
    p = expit((truth["m"][recipe] + truth["u"])[:, None] + truth["b"][None, :] + truth["e"])
    n = np.full(p.shape, SEED_TRIALS)
    data = EvalData.from_arrays(n, rng.binomial(n, p),
                                system_coords={"recipe": np.array(["A", "B"])[recipe]})
    sig = truth["sigma"]
    values = {
        "m[A]": truth["m"][0],
        "m[B]": truth["m"][1],
        "m[B]-m[A]": truth["m"][1] - truth["m"][0],
        **{f"sigma_{key}": v for key, v in sig.items()},
        "run share": sig["run"] ** 2 / sum(v**2 for v in sig.values()),
        "pass@1 tasks run0": p[0].mean(),
    }
    return data, values


def seeds_draws(post: Any) -> dict[str, np.ndarray]:
    pos = post.posterior
    m = pos["m"].transpose("chain", "draw", ...).values.reshape(-1, pos.sizes["recipe"])
    sig = {key: _flat(pos[f"sigma_{key}"]) for key in ("run", "task", "cell")}
    return {
        "m[A]": m[:, 0],
        "m[B]": m[:, 1],
        "m[B]-m[A]": m[:, 1] - m[:, 0],
        **{f"sigma_{key}": v for key, v in sig.items()},
        "run share": sig["run"] ** 2 / sum(v**2 for v in sig.values()),
        "pass@1 tasks run0": _flat(post.pass_at_k(1).sel(k=1).isel(system=0)),
    }


# ---------------------------------------------------------------------------- judge error
JUDGE_SYSTEMS, JUDGE_TASKS, JUDGE_GOLD = 2, 80, 25


def judge_prior(model: JudgeErrorModel, rng: np.random.Generator) -> dict[str, Any]:
    """sensitivity ~ Beta(sens_prior), specificity ~ Beta(spec_prior); m[s] ~ N(m_prior);
    sigma[s] ~ HalfNormal(sigma_prior); logit p[s, t] = m[s] + sigma[s] z, z ~ N(0, 1)."""
    m = rng.normal(*model.m_prior, JUDGE_SYSTEMS)
    sigma = np.abs(rng.normal(0.0, model.sigma_prior, JUDGE_SYSTEMS))
    return {
        "sensitivity": rng.beta(*model.sens_prior),
        "specificity": rng.beta(*model.spec_prior),
        "m": m,
        "sigma": sigma,
        "p": expit(m[:, None] + sigma[:, None] * rng.normal(size=(JUDGE_SYSTEMS, JUDGE_TASKS))),
    }


def _population_pass1(m: float, sigma: float) -> float:
    """E[expit(m + sigma Z)] by 200-node Gauss-Hermite (probabilists') quadrature."""
    x, w = np.polynomial.hermite_e.hermegauss(200)
    return float(expit(m + sigma * x) @ w / np.sqrt(2 * np.pi))


def judge_simulate(truth: dict[str, Any], rng: np.random.Generator) -> tuple[EvalData, dict]:
    """One trial per cell: human ~ Bernoulli(p), judge | human ~ Bernoulli(q1 or 1 - q0)."""
    p = truth["p"]
    human = (rng.random(p.shape) < p).astype(int)
    pass_prob = np.where(human == 1, truth["sensitivity"], 1.0 - truth["specificity"])
    judge = (rng.random(p.shape) < pass_prob).astype(int)
    counts = EvalData.from_arrays(np.ones_like(judge), judge)
    gold_cells = rng.choice(p.size, JUDGE_GOLD, replace=False)
    s_idx, t_idx = np.unravel_index(gold_cells, p.shape)
    gold = pd.DataFrame({
        "system": [counts.systems[s] for s in s_idx],
        "task": [counts.tasks[t] for t in t_idx],
        "judge": judge[s_idx, t_idx],
        "human": human[s_idx, t_idx],
    })
    values = {
        "sensitivity": truth["sensitivity"],
        "specificity": truth["specificity"],
        "m[s0]": truth["m"][0],
        "sigma[s0]": truth["sigma"][0],
        "pass@1 tasks s0": p[0].mean(),
        "pass@1 population s0": _population_pass1(truth["m"][0], truth["sigma"][0]),
    }
    return judge_data(counts, gold), values


def judge_draws(post: Any) -> dict[str, np.ndarray]:
    pos = post.posterior
    return {
        "sensitivity": _flat(pos["sensitivity"]),
        "specificity": _flat(pos["specificity"]),
        "m[s0]": _flat(pos["m"].isel(system=0)),
        "sigma[s0]": _flat(pos["sigma"].isel(system=0)),
        "pass@1 tasks s0": _flat(post.pass_at_k(1).sel(k=1).isel(system=0)),
        "pass@1 population s0": _flat(
            post.pass_at_k(1, estimand="population").sel(k=1).isel(system=0)
        ),
    }


# ---------------------------------------------------------------------------- the loop
@dataclass(frozen=True)
class Part:
    """One model's SBC: its prior draw, simulator and posterior draws of the same quantities."""

    model: Any
    prior: Callable[[Any, np.random.Generator], dict[str, Any]]
    simulate: Callable[[dict[str, Any], np.random.Generator], tuple[EvalData, dict]]
    draws: Callable[[Any], dict[str, np.ndarray]]
    design: str


PARTS: dict[str, Part] = {
    "factorial": Part(FactorialModel(), factorial_prior, factorial_simulate, factorial_draws,
                      f"3 models x 2 harnesses (m2 absent under h1: 5 systems) x "
                      f"{FACTORIAL_TASKS} tasks x n={FACTORIAL_TRIALS}"),
    # the same design with the task effects always non-centred ("auto" centres them here:
    # 20 trials per task); the evidence for revisiting the "auto" rule
    # (benchmarks/designs/details.md)
    "factorial-noncentred": Part(FactorialModel(task_parameterization="noncentered"),
                                 factorial_prior, factorial_simulate, factorial_draws,
                                 "as factorial, task effects non-centred"),
    "training-seeds": Part(TrainingSeedsModel(), seeds_prior, seeds_simulate, seeds_draws,
                           f"{SEED_RECIPES} recipes x {SEED_RUNS} runs x {SEED_TASKS} tasks x "
                           f"n={SEED_TRIALS}"),
    "judge-error": Part(JudgeErrorModel(), judge_prior, judge_simulate, judge_draws,
                        f"{JUDGE_SYSTEMS} systems x {JUDGE_TASKS} tasks x 1 trial, "
                        f"{JUDGE_GOLD} gold labels"),
}


def replicate(name: str, seed: int, sampler: dict[str, int] | None = None) -> dict[str, Any]:
    """One SBC replicate: prior draw, simulation and fit all seeded by ``seed``.

    Returns the rank (0..99) of each true quantity among 99 thinned posterior draws, plus the
    fit's divergences, max R-hat, min bulk ESS and seconds.
    """
    part = PARTS[name]
    rng = np.random.default_rng(seed)
    truth = part.prior(part.model, rng)
    data, values = part.simulate(truth, rng)
    start = time.perf_counter()
    post = part.model.fit(data, **(sampler or SAMPLER), seed=seed, check=False,
                          progressbar=False)
    draws = part.draws(post)
    diag = post.diagnostics(warn=False)
    row: dict[str, Any] = {"seed": seed, **(sampler or SAMPLER)}
    for key, value in values.items():
        row[key] = int(rank_statistics(np.array([value]), draws[key][:, None], N_RANKS)[0])
    row.update(divergences=int(diag.divergences), rhat_max=float(diag.rhat_max),
               ess_bulk_min=float(diag.ess_bulk_min),
               seconds=round(time.perf_counter() - start, 2))
    return row


def csv_path(name: str) -> Path:
    return HERE / "results" / f"sbc_{name.replace('-error', '').replace('-', '_')}.csv"


def run(name: str, reps: int, seed: int, start: int, sampler: dict[str, int]) -> None:
    path = csv_path(name)
    rows = pd.read_csv(path).to_dict("records") if start and path.exists() else []
    t0 = time.perf_counter()
    for rep in range(start, start + reps):
        rows.append({"replicate": rep, **replicate(name, seed + rep, sampler)})
        pd.DataFrame(rows).to_csv(path, index=False)  # rewritten each replicate: crash-safe
        last = rows[-1]
        print(f"{name} rep {rep}: {last['seconds']:.1f} s, divergences {last['divergences']}, "
              f"R-hat max {last['rhat_max']:.3f} ({time.perf_counter() - t0:.0f} s total)",
              flush=True)


DIAG = ("replicate", "seed", "draws", "tune", "chains", "divergences", "rhat_max",
        "ess_bulk_min", "seconds")


def summarise(name: str) -> None:
    frame = pd.read_csv(csv_path(name))
    part = PARTS[name]
    bad_div = int((frame["divergences"] > 0).sum())
    bad_rhat = int((frame["rhat_max"] > 1.01).sum())
    print(f"\n{name}: {part.design}; {len(frame)} replicates (seeds {frame['seed'].min()}-"
          f"{frame['seed'].max()}), {frame['chains'].iloc[0]} chains x {frame['draws'].iloc[0]} "
          f"draws after {frame['tune'].iloc[0]} tune, ranks among {N_RANKS} thinned draws")
    print(f"  fits with divergences: {bad_div} ({int(frame['divergences'].sum())} in all); "
          f"R-hat max (over all parameters) > 1.01: {bad_rhat}, > 1.05: "
          f"{int((frame['rhat_max'] > 1.05).sum())}; bulk ESS min < 100: "
          f"{int((frame['ess_bulk_min'] < 100).sum())}; median fit "
          f"{frame['seconds'].median():.1f} s, total {frame['seconds'].sum() / 60:.1f} min")
    pvalues = {}
    for key in (c for c in frame.columns if c not in DIAG):
        test = rank_uniformity(frame[key].to_numpy(), N_RANKS, 10)
        pvalues[key] = test.pvalue
        divergent = frame.loc[frame["divergences"] > 0, key]
        print(f"  {key:22s} chi2 {test.statistic:6.2f}  p {test.pvalue:.3f}  "
              f"counts {test.counts.tolist()}  mean rank {frame[key].mean():5.1f}"
              + (f" (divergent fits {divergent.mean():5.1f})" if len(divergent) else ""))
    verdict = "REJECTED" if min(pvalues.values()) < 0.01 else "uniform (not rejected)"
    print(f"  verdict at 1 % per quantity: {verdict}; expected rank 49.5")


def factorial_divergences() -> None:
    """Refit the factorial replicates that diverged, with centred (default) and non-centred
    task effects: same data, same seed, divergences and the ranks of sigma_task."""
    frame = pd.read_csv(csv_path("factorial"))
    part = PARTS["factorial"]
    truths = [part.prior(part.model, np.random.default_rng(int(seed))) for seed in frame["seed"]]
    flag = frame["divergences"] > 0
    for key in ("task", "interaction"):
        true = pd.Series([t["sigma"][key] for t in truths])
        share = flag.groupby(pd.qcut(true, 4, labels=False)).mean()
        print(f"factorial: share of fits with divergences by quartile of the true sigma_{key}: "
              f"{share.round(2).tolist()}; median true sigma_{key} {true[flag].median():.2f} "
              f"(divergent) vs {true[~flag].median():.2f}")
    for bins in (5, 20):
        test = rank_uniformity(frame["sigma_interaction"].to_numpy(), N_RANKS, bins)
        print(f"sigma_interaction with {bins} bins (descriptive): p {test.pvalue:.3f}, counts "
              f"{test.counts.tolist()}")
    diverged = frame.loc[flag]
    print(f"factorial: {len(diverged)} of {len(frame)} replicates diverged; refit with "
          "non-centred task effects (same data and seed)")
    totals = {"centred (default)": int(diverged["divergences"].sum()), "non-centred": 0}
    still = 0
    for row in diverged.itertuples():
        rng = np.random.default_rng(int(row.seed))
        data, _ = part.simulate(part.prior(part.model, rng), rng)
        post = FactorialModel(task_parameterization="noncentered").fit(
            data, **SAMPLER, seed=int(row.seed), check=False, progressbar=False)
        n_div = int(post.diagnostics(warn=False).divergences)
        totals["non-centred"] += n_div
        still += n_div > 0
    print(f"  divergent transitions: {totals}; replicates still divergent: {still}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_p = sub.add_parser("run", help="fit replicates and write the ranks CSV")
    run_p.add_argument("--model", required=True, choices=list(PARTS))
    run_p.add_argument("--reps", type=int, default=100)
    run_p.add_argument("--start", type=int, default=0,
                       help="first replicate (appends to an existing CSV when > 0)")
    run_p.add_argument("--seed", type=int, default=2026)
    for key, value in SAMPLER.items():
        run_p.add_argument(f"--{key}", type=int, default=value)
    sum_p = sub.add_parser("summary", help="chi-square tests of the ranks in the CSVs")
    sum_p.add_argument("--model", nargs="*", default=list(PARTS), choices=list(PARTS))
    sub.add_parser("factorial-divergences", help="refit divergent factorial replicates with "
                   "non-centred task effects")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.command == "factorial-divergences":
        factorial_divergences()
    elif args.command == "run":
        sampler = {key: getattr(args, key) for key in SAMPLER}
        run(args.model, args.reps, args.seed, args.start, sampler)
    else:
        print("SBC of the design models (Talts et al. 2018): chi-square test of uniform ranks "
              "(10 bins), one p-value per quantity; reject at 0.01")
        for name in args.model:
            if csv_path(name).exists():
                summarise(name)


if __name__ == "__main__":
    main()
