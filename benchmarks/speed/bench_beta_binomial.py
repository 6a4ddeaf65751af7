"""Collapsed vs explicit latent-p Beta-Binomial, and cold vs warm `evalbayes fit`.

1. Same data (one system, N tasks x 16 trials, task rates from a U-shaped Beta(0.4, 0.3)),
   two models sampled with nutpie (4 chains x 1000 draws, 1000 tuning):
   - collapsed (evalbayes): BetaBinomial likelihood on unique (n, c) cells, mu and kappa only;
   - explicit: p[t] ~ Beta(mu kappa, (1 - mu) kappa) for every task, c ~ Binomial(n, p).
   Prints sampling seconds, min bulk ESS of (mu, kappa), ESS per second, divergences and the
   ratio collapsed / explicit.
2. Wall time of the `evalbayes fit` command on bundled TinyAgent, run twice in fresh
   processes (cold, then warm), for nutpie and for PyMC's NUTS.

Usage: python benchmarks/speed/bench_beta_binomial.py [--tasks 10 500 5000] [--skip-cli]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SAMPLING = {"draws": 1000, "tune": 1000, "chains": 4}


def explicit_model(n: np.ndarray, c: np.ndarray):
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model(coords={"task": np.arange(len(n))}) as model:
        mu = pm.Beta("mu", 1.0, 1.0)
        log_kappa = pm.Normal("log_kappa", 1.0, 1.5)
        kappa = pm.Deterministic("kappa", pt.exp(log_kappa))
        p = pm.Beta("p", mu * kappa, (1 - mu) * kappa, dims="task")
        pm.Binomial("c", n=n, p=p, observed=c, dims="task")
    return model


def sample_explicit(n: np.ndarray, c: np.ndarray, seed: int) -> tuple[float, float, int]:
    import arviz as az
    import nutpie

    compiled = nutpie.compile_pymc_model(explicit_model(n, c))
    start = time.perf_counter()
    tree = nutpie.sample(compiled, seed=seed, progress_bar=False, **SAMPLING)
    seconds = time.perf_counter() - start
    posterior = tree["posterior"].to_dataset()[["mu", "kappa"]]
    ess = az.ess(posterior)
    min_ess = float(min(ess["mu"], ess["kappa"]))
    return seconds, min_ess, int(tree["sample_stats"]["diverging"].sum())


def sample_collapsed(n: np.ndarray, c: np.ndarray, seed: int) -> tuple[float, float, int]:
    from evalbayes import EvalData
    from evalbayes.models import BetaBinomialModel

    data = EvalData.from_arrays(n[None, :], c[None, :])
    model = BetaBinomialModel()
    model.fit(data, seed=seed, check=False, **SAMPLING)  # compile (cached per process)
    start = time.perf_counter()
    post = model.fit(data, seed=seed + 1, check=False, **SAMPLING)
    seconds = time.perf_counter() - start
    diag = post.diagnostics(warn=False)
    table = diag.table.set_index("parameter")
    min_ess = float(table.loc[["mu[system_0]", "kappa[system_0]"], "ess_bulk"].min())
    return seconds, min_ess, diag.divergences


def bench_models(task_counts: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    header = (
        f"{'tasks':>6} | {'model':<9} | {'seconds':>8} | {'min ESS':>8} | {'ESS/s':>9} | "
        f"{'diverg.':>7}"
    )
    print(header)
    print("-" * len(header))
    for n_tasks in task_counts:
        p = rng.beta(0.4, 0.3, size=n_tasks)
        n = np.full(n_tasks, 16)
        c = rng.binomial(n, p)
        results = {
            "collapsed": sample_collapsed(n, c, seed),
            "explicit": sample_explicit(n, c, seed),
        }
        for name, (seconds, ess, div) in results.items():
            print(
                f"{n_tasks:>6} | {name:<9} | {seconds:>8.2f} | {ess:>8.0f} | "
                f"{ess / seconds:>9.0f} | {div:>7}"
            )
        (s_c, e_c, _), (s_e, e_e, _) = results["collapsed"], results["explicit"]
        ratio = (e_c / s_c) / (e_e / s_e)
        print(f"{'':>6} | ratio collapsed/explicit ESS per second: {ratio:.1f}x")


def bench_cli() -> None:
    exe = Path(sys.executable).with_name("evalbayes")
    with tempfile.TemporaryDirectory() as tmp:
        for method in ("nutpie", "pymc"):
            times = []
            for attempt in range(2):
                out = Path(tmp) / f"fit-{method}-{attempt}.nc"
                start = time.perf_counter()
                subprocess.run(
                    [str(exe), "fit", "dataset:tinyagent", "--method", method, "--quiet",
                     "--seed", "1", "-o", str(out)],
                    check=True,
                    capture_output=True,
                )
                times.append(time.perf_counter() - start)
            print(
                f"evalbayes fit dataset:tinyagent --method {method}: cold {times[0]:.1f} s, "
                f"warm {times[1]:.1f} s (warm/cold {times[1] / times[0]:.2f})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, nargs="+", default=[10, 500, 5000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-cli", action="store_true")
    args = parser.parse_args()
    bench_models(args.tasks, args.seed)
    if not args.skip_cli:
        bench_cli()


if __name__ == "__main__":
    main()
