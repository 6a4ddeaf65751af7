"""Simulation-based calibration of a small formula model (Talts et al. 2018, arXiv 1804.06788).

Design: 2 harnesses x 3 runs (6 systems, each run on its own date), 15 tasks, 2 trials per
cell, and the formula ``c | trials(n) ~ harness * date + (1 | task) + (1 | run)``: a harness
effect, a linear date trend, their interaction, task and run-to-run spreads. Each replicate
draws every parameter from the model's own prior (``Model.prior_draws``, PyMC's forward
sampling of the fitted graph), simulates the counts, refits, and records the rank of the truth
among thinned posterior draws and whether the central 95 % interval covers it.

Usage (from the repository root; a few seconds per fit)::

    PYTHONPATH=src nice -n 10 python benchmarks/formula/sbc.py --reps 200
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.models.formula import FormulaModel

FORMULA = "c | trials(n) ~ harness * date + (1 | task) + (1 | run)"
OUT = Path(__file__).resolve().parent / "results"


def design_data() -> EvalData:
    harness = np.repeat(["h0", "h1"], 3)
    date = np.tile([-1.0, 0.0, 1.0], 2)  # years from the middle release
    runs = [f"{h}-r{i}" for h, i in zip(harness, np.tile(range(3), 2), strict=True)]
    n = np.full((6, 15), 2)
    return EvalData.from_arrays(n, np.zeros_like(n), systems=runs,
                                system_coords={"harness": harness, "date": date, "run": runs})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--thin", type=int, default=10)
    args = parser.parse_args(argv)
    base = design_data()
    model = FormulaModel(FORMULA)
    d = model.design(base)
    prior = model.prior_draws(base, draws=args.reps, seed=args.seed)
    names = [f"beta[{c}]" for c in d.coefs] + [f"sd[{t.name}]" for t in d.terms]
    rows = d.rows(*np.nonzero(base.n.values > 0))
    rng = np.random.default_rng([args.seed, 5])
    records = []
    start = time.perf_counter()
    for r in range(args.reps):
        truth_post = prior.isel(draw=[r])
        eta = model._eta(truth_post, d, rows, ("system", "task", "noise"))[0, 0]
        c = rng.binomial(2, expit(eta)).reshape(base.shape)
        data = EvalData.from_arrays(base.n.values, c, systems=base.systems,
                                    system_coords=base.system_coords)
        fit = model.fit(data, draws=args.draws, tune=args.draws, chains=2, seed=r, check=False)
        post = fit.posterior
        diag = fit.diagnostics(warn=False)
        truth = np.concatenate([truth_post["beta"].values.ravel(),
                                truth_post["sd"].values.ravel()])
        draws = np.concatenate([post["beta"].values.reshape(-1, len(d.coefs)),
                                post["sd"].values.reshape(-1, len(d.terms))], axis=1)
        thinned = draws[:: args.thin]
        for j, name in enumerate(names):
            lo, hi = np.quantile(draws[:, j], [0.025, 0.975])
            records.append({"rep": r, "quantity": name, "truth": truth[j],
                            "rank": int((thinned[:, j] < truth[j]).sum()),
                            "n_ranks": len(thinned) + 1, "covered": bool(lo < truth[j] < hi),
                            "rhat_max": diag.rhat_max, "divergences": diag.divergences})
        if r % 20 == 0:
            print(f"rep {r}: {time.perf_counter() - start:.0f} s, load {os.getloadavg()}",
                  flush=True)
    frame = pd.DataFrame(records)
    OUT.mkdir(exist_ok=True)
    frame.to_csv(OUT / "sbc.csv", index=False)
    rows_out = []
    for name, group in frame.groupby("quantity", sort=False):
        bins = np.histogram(group["rank"], bins=10, range=(0, group["n_ranks"].iloc[0]))[0]
        rows_out.append({"quantity": name, "coverage95": group["covered"].mean(),
                         "chi2_p": stats.chisquare(bins).pvalue, "reps": len(group)})
    summary = pd.DataFrame(rows_out)
    fits = frame.drop_duplicates("rep")
    print(summary.round(3).to_string(index=False))
    print(f"fits: {len(fits)}, R-hat > 1.01 in {(fits['rhat_max'] > 1.01).sum()}, with "
          f"divergences {(fits['divergences'] > 0).sum()}; "
          f"{time.perf_counter() - start:.0f} s, load {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
