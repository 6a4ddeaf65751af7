"""Benchmark: the whole ``evalbayes fit dataset:tinyagent -o fit.nc`` command, start-up included.

Each command runs in a fresh Python process (what a shell pays), ``--repeat`` times, the
arms interleaved so that a change of load hits them alike; per arm the median and the best
CPU seconds (user + system of the child, ``resource.getrusage``, all its threads) and wall
seconds are printed with the 1-minute load average, and the ratio to ``--compare-src``'s
tree in the same run. Arms:

* ``python -c "import numpy, xarray"``: the floor of any command that builds a dataset;
* ``evalbayes fit dataset:tinyagent -o X`` (the default model: the rate grid by SMC), warm
  numba cache (a cache directory per tree, filled by an untimed first run);
* the same with ``--model beta-binomial`` (the exact model: no numba);
* ``--cold``: the default once per tree with an empty ``NUMBA_CACHE_DIR``;
* ``--split``: the default fit's steps in one process (imports, reading, numba's first call,
  SMC, save), CPU seconds each, and what the whole command spends beyond them (the
  interpreter's start and exit).

After the runs the two trees' fits are compared: the posterior draws must be identical.

Run from the repository root (``--compare-src`` a checkout of main's ``src``)::

    nice -n 10 python benchmarks/speed/bench_fit_startup.py --repeat 7 --cold --split \
        --compare-src /work/main/src
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from evalbayes.cli import main; sys.exit(main())"  # as the console script

#: The command's steps in one process, CPU seconds of each (all threads): what
#: ``evalbayes fit dataset:tinyagent -o X`` does, in its order, minus the interpreter's
#: start and exit (the whole command's CPU minus their sum). White-box: it calls the
#: command's private modules (``evalbayes.cli._fit``, the SMC kernels) step by step.
SPLIT = """
import json, os, sys, time
marks = [("start", time.process_time())]
def mark(name):
    marks.append((name, time.process_time()))
import numpy, xarray
mark("import numpy, xarray (with pandas)")
import evalbayes.cli as cli
from evalbayes.cli import _common, _fit
args = cli.build_parser("fit").parse_args(["fit", "dataset:tinyagent", "-o", sys.argv[1],
                                           "--quiet"])
mark("imports of the fit command (evalbayes, SciPy)")
data = _common.read_data(args)
mark("read the dataset (EvalData)")
model = _fit.make_model(args, {}, data)
options = _fit.sampler_options(args, {}, model)
import evalbayes.models.rate_grid._smc_kernel
mark("import numba and the SMC kernels")
posterior = model.fit(data, **options, progressbar=False, check=False, client=None,
                      n_workers=None)
mark("fit: numba's first call (cache load), SMC, diagnostics")
posterior.save(sys.argv[1])
mark("save (h5netcdf)")
print(json.dumps([(b[0], b[1] - a[1]) for a, b in zip(marks, marks[1:])]))
"""


def run_once(args: list[str], src: Path, cache: Path) -> tuple[float, float, float]:
    """(child CPU seconds, wall seconds, 1-minute load at the start) of one process."""
    env = dict(os.environ, PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(cache))
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args} under {src} failed ({done.returncode}):\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, load


def same_draws(first: Path, second: Path) -> str:
    """Whether two saved fits hold the same posterior draws (every variable, bit for bit)."""
    import numpy as np
    import xarray as xr

    a = xr.open_datatree(first, engine="h5netcdf")
    b = xr.open_datatree(second, engine="h5netcdf")
    pa, pb = a["posterior"].to_dataset(), b["posterior"].to_dataset()
    names = sorted(pa.data_vars)
    if names != sorted(pb.data_vars):
        return f"different variables: {names} / {sorted(pb.data_vars)}"
    differ = [n for n in names if not np.array_equal(pa[n].values, pb[n].values)]
    return (f"identical ({len(names)} variables, {sum(pa[n].size for n in names)} values)"
            if not differ else f"DIFFERENT: {differ}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compare-src", type=Path, default=None,
                        help="another tree's src (e.g. main's), timed in the same run")
    parser.add_argument("--cold", action="store_true",
                        help="also one cold run (empty numba cache) of the default per tree")
    parser.add_argument("--split", action="store_true",
                        help="also the default fit's steps, CPU each (best of --repeat)")
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fit_startup_"))
    trees = {"this": ROOT / "src"}
    if opts.compare_src is not None:
        trees["before"] = opts.compare_src.resolve()
    fit = ["-c", CLI, "fit", "dataset:tinyagent", "--quiet", "-o"]
    arms: dict[str, tuple[list[str] | None, str]] = {
        'python -c "import numpy, xarray"': (["-c", "import numpy, xarray"], "this"),
    }
    for tree in trees:
        arms[f"fit (default), {tree}"] = ([*fit, str(work / f"{tree}_rg.nc")], tree)
        arms[f"fit --model beta-binomial, {tree}"] = (
            [*fit, str(work / f"{tree}_bb.nc"), "--model", "beta-binomial"], tree)
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {os.cpu_count()} CPUs, "
          f"python {sys.version.split()[0]}, trees: "
          + ", ".join(f"{k}={v}" for k, v in trees.items()))
    for tree, src in trees.items():  # warm each tree's numba cache (untimed)
        run_once(arms[f"fit (default), {tree}"][0] or [], src, work / f"numba_{tree}")
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in arms}
    for i in range(opts.repeat):
        for name, (args, tree) in arms.items():
            cpu, wall, load = run_once(args or [], trees[tree], work / f"numba_{tree}")
            results[name].append((cpu, wall, load))
            print(f"run {i + 1} {name:45s} cpu {cpu:5.2f} s  wall {wall:5.2f} s  load {load:5.2f}",
                  flush=True)
    if opts.split:
        for tree, src in trees.items():
            best: dict[str, float] = {}
            for _ in range(opts.repeat):
                env = dict(os.environ, PYTHONPATH=str(src),
                           NUMBA_CACHE_DIR=str(work / f"numba_{tree}"))
                done = subprocess.run([sys.executable, "-c", SPLIT, str(work / "split.nc")],
                                      env=env, capture_output=True, text=True, check=True)
                for name, cpu in json.loads(done.stdout.strip().splitlines()[-1]):
                    best[name] = min(cpu, best.get(name, cpu))
            whole = statistics.median(r[0] for r in results[f"fit (default), {tree}"])
            print(f"\nsteps of the default fit, {tree} (best CPU s of {opts.repeat}; "
                  f"load {os.getloadavg()[0]:.1f}):")
            for name, cpu in best.items():
                print(f"  {name:55s} {cpu:5.3f}")
            print(f"  {'sum':55s} {sum(best.values()):5.3f}")
            print(f"  {'whole command (median above) - sum: start, exit, CLI':55s} "
                  f"{whole - sum(best.values()):5.3f}")
    if opts.cold:
        for tree, src in trees.items():
            cache = work / f"numba_cold_{tree}"
            shutil.rmtree(cache, ignore_errors=True)
            cpu, wall, load = run_once(arms[f"fit (default), {tree}"][0] or [], src, cache)
            results[f"fit (default) cold, {tree}"] = [(cpu, wall, load)]
            print(f"cold {tree:5s} cpu {cpu:5.2f} s  wall {wall:5.2f} s  load {load:5.2f}")
    print(f"\n{'arm':50s} {'CPU median':>10s} {'best':>6s} {'wall median':>12s} {'best':>6s}"
          f" {'load':>10s}")
    for name, rows in results.items():
        cpus, walls, loads = zip(*rows, strict=True)
        print(f"{name:50s} {statistics.median(cpus):10.2f} {min(cpus):6.2f} "
              f"{statistics.median(walls):12.2f} {min(walls):6.2f} "
              f"{min(loads):4.1f}-{max(loads):4.1f}")
    if "before" in trees:
        print()
        for arm in ("fit (default)", "fit --model beta-binomial", "fit (default) cold"):
            if f"{arm}, before" in results:
                this = statistics.median(r[0] for r in results[f"{arm}, this"])
                before = statistics.median(r[0] for r in results[f"{arm}, before"])
                print(f"{arm}: this / before CPU (medians) = {this:.2f} / {before:.2f} = "
                      f"{this / before:.3f}")
        for model in ("rg", "bb"):
            print(f"same draws ({model}): "
                  f"{same_draws(work / f'this_{model}.nc', work / f'before_{model}.nc')}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
