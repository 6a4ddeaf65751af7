"""Simulation-based calibration of the graded models (Talts et al. 2018, arXiv 1804.06788).

Design: 3 systems x 12 tasks x 2 graders, one score per (system, task, grader) (72 scores).
``ordinal``: a 0..4 scale (four cut points); ``partial-credit``: scores in (0, 1) (no exact 0
or 1 is simulated, so the zero-one inflation is absent from both the simulation and the fit).
A Beta draw with a tiny shape parameter can underflow to exactly 0 or 1 in float64 (or lie
within 1e-9 of it); such a replicate is rejected and the next prior draw used (``--edge
reject``, the default): rejecting on the data alone leaves each kept replicate's posterior
p(theta | y) unchanged, so the ranks stay uniform. ``--edge clip`` instead clips the scores
into [1e-9, 1 - 1e-9], which changes the likelihood of the clipped replicates (kept as the
record of why the default rejects: ``results/sbc_partial_credit_clipped.txt``).
Each replicate draws every parameter from the model's own prior (``ScoreModel.prior_sample``,
the NumPy prior that the prior predictive check uses), simulates the scores from the model's
likelihood, refits with the package's default sampler, and records, per quantity (the cut
points or intercept and precision, the first system's effect, the first grader's effect, the
task sd), the rank of the truth among thinned posterior draws and whether the central 95 %
interval covers it. Uniform ranks (chi-square over 10 bins) and 95 % coverage are what a
correct model and sampler give.

Usage (from the repository root; about a second per fit on an idle core)::

    PYTHONPATH=src nice -n 10 python benchmarks/graded/sbc.py --model ordinal --reps 200
    PYTHONPATH=src nice -n 10 python benchmarks/graded/sbc.py --model partial-credit --reps 200
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from evalbayes.io import ScoreData
from evalbayes.models import get_model

OUT = Path(__file__).resolve().parent / "results"
SYSTEMS, TASKS, GRADERS, TOP = 3, 12, 2, 4
#: simulated partial-credit scores within this margin of 0 or 1 (a Beta draw can round to
#: exactly 0 or 1 in float64 when mu * phi is tiny) reject the replicate (or are clipped)
EDGE = 1e-9


def design(scores: np.ndarray, kind: str) -> ScoreData:
    """The (system, task, grader) rows in the order of ``scores`` (system slowest)."""
    s, t, j = np.meshgrid(np.arange(SYSTEMS), np.arange(TASKS), np.arange(GRADERS),
                          indexing="ij")
    frame = pd.DataFrame({"system": [f"s{v}" for v in s.ravel()],
                          "task": [f"t{v}" for v in t.ravel()],
                          "grader": [f"g{v}" for v in j.ravel()], "score": scores})
    if kind == "ordinal":
        return ScoreData.from_frame(frame, grader="grader", kind="ordinal", max_score=TOP)
    return ScoreData.from_frame(frame, grader="grader", kind="continuous")


def eta_of(truth: dict[str, np.ndarray]) -> np.ndarray:
    """``b[s] + u[t] + g[j] + h[j, s]`` on the (system, task, grader) grid, flattened."""
    b, u = truth["system_effect"], truth["task_effect"]
    g, h = truth["grader_effect"], truth["grader_system_effect"]  # h: (grader, system)
    eta = b[:, None, None] + u[None, :, None] + g[None, None, :] + h.T[:, None, :]
    return eta.ravel()


def simulate(kind: str, truth: dict[str, np.ndarray], rng: np.random.Generator
             ) -> tuple[np.ndarray, int]:
    """Scores from the likelihood, and how many lie within :data:`EDGE` of 0 or 1 (clipped
    into [EDGE, 1 - EDGE])."""
    eta = eta_of(truth)
    if kind == "ordinal":
        above = expit(eta[:, None] - truth["cutpoints"][None, :])  # P(y >= k), k = 1..K
        u = rng.uniform(size=(len(eta), 1))
        return (u < above).sum(axis=1).astype(float), 0  # P(y >= k) is decreasing in k
    mu = expit(truth["intercept"] + eta)
    phi = truth["precision"]
    y = rng.beta(mu * phi, (1.0 - mu) * phi)
    clipped = int(np.sum((y < EDGE) | (y > 1 - EDGE)))
    return np.clip(y, EDGE, 1 - EDGE), clipped


def quantities(kind: str) -> list[tuple[str, str, int | None]]:
    """(label, variable, index) of the recorded quantities."""
    first = ([(f"cutpoint[{k + 1}]", "cutpoints", k) for k in range(TOP)] if kind == "ordinal"
             else [("intercept", "intercept", None), ("precision", "precision", None)])
    return [*first, ("system_effect[s0]", "system_effect", 0),
            ("grader_effect[g0]", "grader_effect", 0), ("task_sd", "task_sd", None)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("ordinal", "partial-credit"), required=True)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=400, help="per chain (and as many tune)")
    parser.add_argument("--thin", type=int, default=8)
    parser.add_argument("--edge", choices=("reject", "clip"), default="reject",
                        help="partial credit: a replicate with a score within 1e-9 of 0 or 1")
    parser.add_argument("--out", default=None, help="file stem in results/ (default "
                        "sbc_<model>)")
    args = parser.parse_args(argv)
    model = get_model(args.model)
    kind = "ordinal" if args.model == "ordinal" else "continuous"
    template = design(np.full(SYSTEMS * TASKS * GRADERS, 1.0 if kind == "ordinal" else 0.5),
                      kind)
    rng = np.random.default_rng([args.seed, 25])
    pool = args.reps * 4  # prior draws to take replicates from (rejections use up some)
    prior = model.prior_sample(template, pool, rng)
    names = quantities(kind)
    records, clipped_total, rejected, next_draw = [], 0, 0, 0
    start, cpu0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    for r in range(args.reps):
        while True:
            if next_draw == pool:
                raise SystemExit(f"more than {pool - args.reps} rejected replicates")
            truth = {name: value[next_draw] for name, (_dims, value) in prior.items()}
            next_draw += 1
            scores, clipped = simulate(kind, truth, rng)
            if clipped and args.edge == "reject":
                rejected += 1
                continue
            break
        clipped_total += clipped
        data = design(scores, kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = model.fit(data, draws=args.draws, tune=args.draws, chains=2, seed=r,
                            check=False)
            diag = fit.diagnostics(warn=False)
        post = fit.posterior
        for label, var, index in names:
            draws = post[var].transpose("chain", "draw", ...).values
            draws = draws.reshape(-1) if index is None else draws.reshape(-1, draws.shape[-1])[
                :, index]
            true = float(truth[var] if index is None else truth[var][index])
            thinned = draws[:: args.thin]
            lo, hi = np.quantile(draws, [0.025, 0.975])
            records.append({"rep": r, "quantity": label, "truth": true,
                            "rank": int((thinned < true).sum()), "n_ranks": len(thinned) + 1,
                            "covered": bool(lo < true < hi), "rhat_max": diag.rhat_max,
                            "divergences": diag.divergences})
        if r % 20 == 0:
            print(f"rep {r}: {time.perf_counter() - start:.0f} s, load {os.getloadavg()}",
                  flush=True)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    frame = pd.DataFrame(records)
    OUT.mkdir(exist_ok=True)
    stem = args.out or f"sbc_{args.model.replace('-', '_')}"
    frame.to_csv(OUT / f"{stem}.csv", index=False)
    rows_out = []
    for name, group in frame.groupby("quantity", sort=False):
        bins = np.histogram(group["rank"], bins=10, range=(0, group["n_ranks"].iloc[0]))[0]
        rows_out.append({"quantity": name, "coverage95": group["covered"].mean(),
                         "chi2_p": stats.chisquare(bins).pvalue, "reps": len(group),
                         "bins": " ".join(map(str, bins))})
    summary = pd.DataFrame(rows_out)
    fits = frame.drop_duplicates("rep")
    print(summary.round(3).to_string(index=False))
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    print(f"{args.model}: fits {len(fits)}, R-hat > 1.01 in {(fits['rhat_max'] > 1.01).sum()}, "
          f"with divergences {(fits['divergences'] > 0).sum()}; replicates rejected for a "
          f"score within {EDGE:g} of 0 or 1: {rejected}; scores clipped: {clipped_total}; "
          f"{time.perf_counter() - start:.0f} s wall, {cpu:.0f} s CPU, "
          f"load {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
