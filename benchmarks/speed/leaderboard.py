"""Benchmark: the default model (rate grid, SMC per system) at leaderboard size, on this
machine and mapped over a Dask cluster.

Data: :func:`leaderboard_data`, a synthetic leaderboard from the 2PL simulator of
:mod:`evalbayes.testing` (``simulate_irt``): system abilities ``theta ~ N(0, 1.5^2)``, task
difficulties ``b ~ N(0, 2^2)``, discriminations ``a ~ LogNormal(0, 0.3^2)``, ``n`` trials per
cell, seed 0. Shared task difficulties and a spread of abilities give what a real
leaderboard has: weak systems that solve few tasks, strong ones that solve most, and tasks
that every system fails.

Two questions:

* ``fit`` (default): ``RateGridModel().fit(data)`` at ``--systems x --tasks`` (default
  1000 x 2000) for each ``--trials`` (default 1 and 16), default settings (4 x 1000 draws, seed
  0), in this process after a warm-up fit (numba's cache loaded). Printed: wall and CPU seconds
  (``time.process_time``: every thread of this process) with the 1-minute load average before
  and after, the peak resident memory, and where the time went (cProfile of the main thread:
  data preparation, the SMC map, building the Posterior), then ``diagnostics()`` and
  ``save()`` (seconds and the file's size).
* ``--scaling``: the same fit at ``--systems`` (e.g. 200) on the thread pool and on a
  :class:`distributed.LocalCluster` of 1, 2 and 4 single-threaded worker processes
  (``fit(data, client=...)``; the cluster is started before the clock and its start-up is
  printed apart), each checked to give the thread pool's draws bit for bit. For a real
  cluster give ``--scheduler tcp://host:8786`` (then only that arm runs beside the threads).

The machine has 2 cores shared with other jobs: 4 workers cannot beat 2 here, and under load
wall seconds say little; compare CPU seconds and ratios in the same run. Run::

    nice -n 10 python benchmarks/speed/leaderboard.py                      # 1000 x 2000
    nice -n 10 python benchmarks/speed/leaderboard.py --scaling --systems 200 --trials 16
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from evalbayes.data import EvalData
from evalbayes.models import RateGridModel
from evalbayes.testing import simulate_irt

#: Functions whose cumulative (main-thread) time is printed, by name: data preparation, the
#: SMC map over systems, the Posterior's construction.
PHASES = {
    "_row_table": "distinct (system, n, c) rows",
    "grid_log_likelihood": "binomial log-likelihood of rows x nodes",
    "from_loglik": "per-system row tables (pruned runs)",
    "smc_posterior": "SMC over systems (threads / Dask)",
    "from_groups": "Posterior from the draws",
}


def leaderboard_data(systems: int, tasks: int, trials: int, seed: int = 0) -> EvalData:
    """A synthetic leaderboard (module docstring): 2PL rates, ``trials`` per cell."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.5, systems)
    b = rng.normal(0.0, 2.0, tasks)
    a = rng.lognormal(0.0, 0.3, tasks)
    return simulate_irt(theta, b, a=a, trials=trials, seed=seed + 1)


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def warm_up(model: RateGridModel) -> None:
    """One tiny fit: numba's kernels loaded from its cache (compiled on a first run ever)."""
    model.fit(leaderboard_data(2, 20, 4), draws=20, chains=2, check=False)


def timed_fit(model: RateGridModel, data: EvalData, **options: object) -> tuple:
    """The fit, its wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    posterior = model.fit(data, check=False, **options)
    return posterior, time.perf_counter() - wall, time.process_time() - cpu


def run_fit(args: argparse.Namespace) -> None:
    model = RateGridModel()
    warm_up(model)
    for trials in args.trials:
        start = time.perf_counter()
        data = leaderboard_data(args.systems, args.tasks, trials)
        print(f"\n=== {args.systems} systems x {args.tasks} tasks x n = {trials}: "
              f"data in {time.perf_counter() - start:.1f} s; load {load()}", flush=True)
        profile = cProfile.Profile()
        profile.enable()
        posterior, wall, cpu = timed_fit(model, data)
        profile.disable()
        stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
        print(f"fit: wall {wall:.1f} s, CPU {cpu:.1f} s (CPU / wall {cpu / wall:.2f}); "
              f"load after {load()}; peak RSS {peak_rss_gb():.2f} GB", flush=True)
        for name, text in PHASES.items():
            seconds = sum(v[3] for k, v in stats.items() if k[2] == name)
            print(f"  {name:<20} {seconds:7.2f} s wall  ({text})")
        sample_stats = posterior.sample_stats
        evaluations = sample_stats["smc_likelihood_evaluations"].values
        print(f"  SMC per system: stages mean {sample_stats['smc_stages'].values.mean():.1f}, "
              f"extra rounds mean {sample_stats['smc_extra_rounds'].values.mean():.2f}, "
              f"likelihood evaluations mean {evaluations.mean():,.0f}, "
              f"CPU per system {cpu / args.systems * 1000:.0f} ms, "
              f"passed {int(sample_stats['smc_passed'].values.sum())}/{args.systems}")
        start = time.perf_counter()
        diagnostics = posterior.diagnostics(warn=False)
        print(f"diagnostics(): {time.perf_counter() - start:.1f} s: {diagnostics}".replace(
            "\n", " | "), flush=True)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "fit.nc"
            start = time.perf_counter()
            posterior.save(path)
            print(f"save(): {time.perf_counter() - start:.1f} s, "
                  f"{path.stat().st_size / 1e6:.0f} MB; load {load()}", flush=True)
        del posterior


def run_scaling(args: argparse.Namespace) -> None:
    from distributed import Client, LocalCluster

    model = RateGridModel()
    warm_up(model)
    for trials in args.trials:
        data = leaderboard_data(args.systems, args.tasks, trials)
        print(f"\n=== scaling: {args.systems} systems x {args.tasks} tasks x n = {trials}; "
              f"load {load()}", flush=True)
        reference, wall0, cpu0 = timed_fit(model, data)
        print(f"threads ({os.cpu_count()}): wall {wall0:.1f} s, CPU {cpu0:.1f} s; "
              f"load {load()}", flush=True)
        arms: list[tuple[str, object]] = (
            [(f"scheduler {args.scheduler}", args.scheduler)] if args.scheduler
            else [(f"LocalCluster {n} worker{'s' * (n > 1)}", n) for n in args.workers])
        for label, target in arms:
            start = time.perf_counter()
            if isinstance(target, int):
                cluster = LocalCluster(n_workers=target, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
                client = Client(cluster)
            else:
                cluster, client = None, Client(target)
            client.run(warm_up, model)  # each worker loads numba's kernels, outside the clock
            ready = time.perf_counter() - start
            try:
                posterior, wall, _ = timed_fit(model, data, client=client)
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
            same = np.array_equal(posterior.posterior["coef"].values,
                                  reference.posterior["coef"].values)
            print(f"{label}: wall {wall:.1f} s (start-up {ready:.1f} s apart), "
                  f"threads / this {wall0 / wall:.2f}x, same draws as threads: {same}; "
                  f"load {load()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--trials", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--scaling", action="store_true",
                        help="threads against a Dask LocalCluster of --workers processes")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--scheduler", default=None,
                        help="a running scheduler's address (instead of the LocalClusters)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # n = 1: the single-trial warning, known here
    print(f"cores {os.cpu_count()}; load {load()}; pid {os.getpid()}", flush=True)
    (run_scaling if args.scaling else run_fit)(args)


if __name__ == "__main__":
    main()
