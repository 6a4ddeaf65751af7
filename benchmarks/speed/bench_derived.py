"""Benchmark: derived quantities (summary, compare, pass@k curves, report) against the fit.

Every derived quantity is timed as a ratio to the fit it comes from, in the same process and
the same run: a summary that costs more than its fit is the thing to look for. Two real data
sets from ``shared/data`` (beside the repository; ``/work/shared/data`` as a fallback):

* SWE-bench Verified, 123 systems x 500 tasks x 1 trial (``swebench_verified_binary.csv``),
  exact Beta-Binomial (``--model beta-binomial``; its fit is quadrature, no MCMC);
* Terminal-Bench 0.1.1, 13 x 80 x 5 (``terminal_bench_core011_counts.csv``), the exact
  Beta-Binomial and, with ``--rate-grid``, the default rate grid (nutpie, 4 x (1000 + 1000)).

Timed for each fit (CPU seconds of this process, ``time.process_time``, beside wall seconds;
the 1-minute load average beside each line):

* ``summary`` -- :meth:`Posterior.summary` of pass@1 and pass^1, both estimands (what
  ``evalbayes summary`` prints), on a fresh copy of the fit (nothing kept from before);
* ``summary, metric by metric`` -- the same four curves asked for one at a time on fresh
  copies: the old path, where each metric drew its own latent rates;
* ``compare`` -- :func:`evalbayes.compare` of every pair, pass@1, "tasks", plus its table;
* ``pass@k curves`` -- both metrics and estimands on the report's k grid (1, 2, 4, ...);
* ``report`` -- :func:`evalbayes.report.write_report` of the fit (HTML);
* rate grid only: ``tasks curve, per-cell draws`` -- the "tasks" estimand of both metrics on
  the k grid from a categorical draw per cell and draw (``Model._tasks_curve``, the path
  before the per-row multinomial counts), against ``tasks curve`` (the current path).

Run from the repository root::

    nice -n 10 python benchmarks/speed/bench_derived.py [--rate-grid] [--skip-swe]

The numba kernel of the Beta-Binomial "tasks" curve is compiled once (cached on disk) before
timing.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

import evalbayes as eb  # noqa: E402
from evalbayes.models import Model, get_model  # noqa: E402
from evalbayes.report import write_report  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")
METRICS = ("pass@k", "pass^k")


def _load(name: str) -> eb.EvalData:
    frame = pd.read_csv(DATA / name).rename(columns={"task_id": "task"})
    return eb.EvalData.from_frame(frame[["system", "task", "n", "c"]])


def _timed(fn):
    """(result, cpu seconds, wall seconds, 1-minute load average)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - t0, os.getloadavg()[0]


def _line(label: str, cpu: float, wall: float, load: float, base: float | None) -> None:
    ratio = f"{cpu / base:7.2f}x fit" if base else " " * 13
    print(f"  {label:<34} {cpu:7.2f} s CPU {wall:7.2f} s wall  {ratio}   load {load:5.2f}",
          flush=True)


def _fresh(fit):
    """A copy of the fit with nothing computed yet (curves and diagnostics are kept per fit)."""
    return dataclasses.replace(fit)


def bench(label: str, data: eb.EvalData, model_name: str, ks: list[int]) -> None:
    print(f"\n{label}: {data!r}, {model_name}", flush=True)
    model = get_model(model_name)
    fit, cpu, wall, load = _timed(lambda: model.fit(data, progressbar=False))
    _line(f"fit ({fit.sampler.method})", cpu, wall, load, None)
    base = cpu
    _, cpu, wall, load = _timed(lambda: _fresh(fit).summary(k=1, metrics=METRICS))
    _line("summary (pass@1, pass^1)", cpu, wall, load, base)

    def one_by_one():
        for estimand in fit.model.estimands():
            for metric in METRICS:
                _fresh(fit).curve(metric, 1, estimand=estimand)

    _, cpu, wall, load = _timed(one_by_one)
    _line("summary, metric by metric", cpu, wall, load, base)
    _, cpu, wall, load = _timed(lambda: eb.compare(_fresh(fit)).to_frame())
    _line("compare (all pairs, pass@1)", cpu, wall, load, base)

    def curves():
        fresh = _fresh(fit)
        for estimand in fit.model.estimands():
            fresh.curves(METRICS, ks, estimand=estimand)

    _, cpu, wall, load = _timed(curves)
    _line(f"pass@k curves ({len(ks)} k)", cpu, wall, load, base)
    if model_name == "rate-grid":
        posterior, k = fit.posterior, [float(v) for v in ks]
        _, cpu, wall, load = _timed(lambda: fit.model.curves(
            posterior, data, k, METRICS, "tasks", seed=0))
        _line("tasks curve (per-row counts)", cpu, wall, load, base)
        _, cpu, wall, load = _timed(lambda: Model._tasks_curves(
            fit.model, posterior, data, k, METRICS, False, 0))
        _line("tasks curve, per-cell draws (old)", cpu, wall, load, base)
    with tempfile.TemporaryDirectory() as tmp:
        _, cpu, wall, load = _timed(lambda: write_report(
            data, fit=_fresh(fit), output=Path(tmp) / "report.html", seed=0))
    _line("report (HTML)", cpu, wall, load, base)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate-grid", action="store_true",
                        help="also fit the default rate grid to Terminal-Bench (NUTS)")
    parser.add_argument("--skip-swe", action="store_true", help="leave out SWE-bench Verified")
    args = parser.parse_args()
    print(f"bench_derived: load average {os.getloadavg()}, {os.cpu_count()} CPUs", flush=True)
    # compile the Beta-Binomial curve kernel once (numba caches it on disk)
    warm = _load("terminal_bench_core011_counts.csv")
    get_model("beta-binomial").fit(warm).summary(k=1, metrics=METRICS)
    ks = [1, 2, 4, 8]  # the report's k grid for n <= 5
    tb = _load("terminal_bench_core011_counts.csv")
    if not args.skip_swe:
        bench("SWE-bench Verified", _load("swebench_verified_binary.csv"), "beta-binomial", ks)
    bench("Terminal-Bench", tb, "beta-binomial", ks)
    if args.rate_grid:
        bench("Terminal-Bench", tb, "rate-grid", ks)
    print(f"\nload average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
