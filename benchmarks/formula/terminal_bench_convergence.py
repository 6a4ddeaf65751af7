"""Terminal-Bench formula fit with the package's default sampler settings: convergence.

Fits ``c | trials(n) ~ agent + (1 | task) + (1 | agent:task) + (1 | run)`` (53 (agent, run)
systems x 80 tasks; ``terminal_bench_runs.py``) with ``FormulaModel(...).fit(data)``'s
defaults (4 chains x 1,000 draws after 1,000 tuning, target_accept 0.9, seed 0), prints the
diagnostics, the parameters with the lowest ESS and the highest R-hat, the effects, the goose
opus - goose sonnet comparison for a new run and the run-to-run sd, with CPU seconds and the
load average. ``--save`` keeps the posterior draws; ``--against OLD.nc`` compares each
coefficient's and sd's mean with a saved fit's, in units of their combined Monte Carlo
standard error (``az.mcse``).

Usage (from the repository root)::

    PYTHONPATH=src nice -n 10 python benchmarks/formula/terminal_bench_convergence.py \
        --save /tmp/new.nc [--against /tmp/old.nc]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_bench_runs import FORMULA, PAIRS, SHARED, run_data

from evalbayes.models.formula import FormulaModel


def against(old_path: str, new: object) -> None:
    """Each coefficient's and sd's posterior mean, old against new, in combined MCSEs."""
    import arviz as az
    import xarray as xr

    old = xr.open_dataset(old_path)
    zs = []
    for var, dim in (("beta", "coef"), ("sd", "term")):
        for name in old[var][dim].values:
            x, y = old[var].sel({dim: name}).values, new[var].sel({dim: name}).values
            mcse = float(np.hypot(az.mcse(x), az.mcse(y)))
            z = (x.mean() - y.mean()) / mcse
            zs.append(z)
            print(f"  {var}[{name}]: old {x.mean():+.4f} new {y.mean():+.4f} mcse {mcse:.4f} "
                  f"z {z:+.2f}")
    print(f"  max |z| {np.abs(zs).max():.2f} over {len(zs)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", help="write the posterior draws here (.nc)")
    parser.add_argument("--against", help="a saved posterior (.nc) to compare means with")
    args = parser.parse_args(argv)
    data = run_data(pd.read_csv(SHARED / "terminal_bench_core011_trials.csv"))
    print(f"data: {data!r}; load {os.getloadavg()}")
    start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    post = FormulaModel(FORMULA).fit(data, check=False)
    end = resource.getrusage(resource.RUSAGE_SELF)
    used = end.ru_utime - cpu.ru_utime + end.ru_stime - cpu.ru_stime
    print(f"fit {time.perf_counter() - start:.1f} s wall, {used:.1f} CPU s, load "
          f"{os.getloadavg()}")
    diag = post.diagnostics(warn=False)
    print(diag)
    table = diag.to_frame()
    print(table.sort_values("ess_bulk").head(8).to_string())
    print(table.sort_values("rhat", ascending=False).head(8).to_string())
    print(post.effects().round(3).to_string(index=False))
    a, b = PAIRS[0]
    sys_a = next(s for s in data.systems if s.startswith(a + "/"))
    sys_b = next(s for s in data.systems if s.startswith(b + "/"))
    for estimand in ("tasks", "population"):
        draws = post.pass_at_k(1, estimand=estimand).sel(k=1)
        diff = (draws.sel(system=sys_b) - draws.sel(system=sys_a)).values.ravel()
        print(f"{b} - {a}, {estimand} (new run): {diff.mean():+.4f} "
              f"[{np.quantile(diff, 0.025):+.4f}, {np.quantile(diff, 0.975):+.4f}], "
              f"P(B > A) {np.mean(diff > 0):.4f}")
    sd_run = post.posterior["sd"].sel(term="1|run").values.ravel()
    print(f"run-to-run sd: {sd_run.mean():.4f} [{np.quantile(sd_run, 0.025):.4f}, "
          f"{np.quantile(sd_run, 0.975):.4f}]")
    if args.against:
        against(args.against, post.posterior)
    if args.save:
        post.posterior.to_netcdf(args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
