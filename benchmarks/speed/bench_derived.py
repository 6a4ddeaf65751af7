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

``--commands`` times the whole commands instead (what the acceptance of issue 26 counts:
``evalbayes summary`` and ``compare`` of SWE-bench Verified fits, ``evalbayes report`` of
Terminal-Bench fits), each in a fresh process on fits saved once by this tree, best of
``--repeat`` (CPU seconds of the child: user + system, ``resource.getrusage``); with
``--compare-src DIR`` every command runs again with another source tree first on the path (the
baseline, e.g. ``git archive main src | tar -x -C /tmp/main-tree``), and the ratio
baseline / this tree is printed beside, with the load average. The first run of a tree
compiles its numba kernels into that tree's cache (the best of two or more is warm).

Run from the repository root::

    nice -n 10 python benchmarks/speed/bench_derived.py [--rate-grid] [--skip-swe]
    nice -n 10 python benchmarks/speed/bench_derived.py --commands [--rate-grid] \
        [--compare-src /tmp/main-tree/src] [--repeat 2]

The numba kernel of the Beta-Binomial "tasks" curve is compiled once (cached on disk) before
timing.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import subprocess
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


CLI = "import sys; from evalbayes.cli import main; raise SystemExit(main(sys.argv[1:]))"


def _command(args: list[str], src: Path) -> tuple[float, float]:
    """(child CPU seconds, wall seconds) of ``evalbayes ARGS`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CLI, *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(src)), check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"evalbayes {' '.join(args)} failed ({done.returncode}) with {src}: "
                         f"{done.stderr[-2000:]}")
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall)


def commands(rate_grid: bool, skip_swe: bool, compare_src: Path | None, repeat: int) -> None:
    """Whole commands on saved fits, this tree against ``compare_src`` (module docstring)."""
    swe = str(DATA / "swebench_verified_binary.csv")
    tb = str(DATA / "terminal_bench_core011_counts.csv")
    models = [("beta-binomial", ["--model", "beta-binomial"])]
    if rate_grid:
        models.append(("rate grid", []))
    trees = [("this tree", ROOT / "src")] + ([("baseline", compare_src)] if compare_src else [])
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for label, flags in models:
            for name, data in (("SWE-bench Verified", swe), ("Terminal-Bench", tb)):
                if skip_swe and name.startswith("SWE"):
                    continue
                fit = str(Path(tmp) / f"{name[:3]}_{label[:4]}.nc")
                cpu, wall = _command(["fit", data, *flags, "-o", fit], ROOT / "src")
                print(f"  fit {name}, {label:<14} {cpu:7.2f} s CPU {wall:7.2f} s wall   "
                      f"load {os.getloadavg()[0]:5.2f}", flush=True)
                if name.startswith("SWE"):
                    jobs += [(f"summary {name}, {label}", ["summary", fit]),
                             (f"compare {name}, {label}", ["compare", fit])]
                else:
                    jobs.append((f"report {name}, {label}",
                                 ["report", fit, "-o", str(Path(tmp) / "report.html")]))
        for label, args in jobs:
            best = {}
            for tree, src in trees:
                runs = [_command(args, src) for _ in range(repeat)]
                best[tree] = (min(r[0] for r in runs), min(r[1] for r in runs))
            line = "  ".join(f"{tree} {cpu:6.2f} s CPU {wall:6.2f} s wall"
                             for tree, (cpu, wall) in best.items())
            ratio = (f"  baseline / this tree {best['baseline'][0] / best['this tree'][0]:5.2f}x"
                     if "baseline" in best else "")
            print(f"  {label:<42} {line}{ratio}   load {os.getloadavg()[0]:5.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate-grid", action="store_true",
                        help="also fit the default rate grid to Terminal-Bench (NUTS)")
    parser.add_argument("--skip-swe", action="store_true", help="leave out SWE-bench Verified")
    parser.add_argument("--commands", action="store_true",
                        help="time the whole commands (summary, compare, report) instead")
    parser.add_argument("--compare-src", type=Path, default=None,
                        help="with --commands: a baseline source tree timed beside this one")
    parser.add_argument("--repeat", type=int, default=2,
                        help="with --commands: runs per command and tree (the best counts)")
    args = parser.parse_args()
    if args.commands:
        print(f"bench_derived --commands: load average {os.getloadavg()}, {os.cpu_count()} "
              f"CPUs, best of {args.repeat}", flush=True)
        commands(args.rate_grid, args.skip_swe, args.compare_src, args.repeat)
        print(f"\nload average at the end {os.getloadavg()}")
        return
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
