"""Benchmark: the import floor of the commands that read a fit, against a baseline tree.

Issue 26 (``summary`` + ``compare`` on SWE-bench Verified <= 2 s): every command that reads a
fit pays, before any derived number, the imports of ``evalbayes._persist`` and the reading of
the file. This times, each in a fresh Python process, ``--repeat`` times, interleaved between
this tree and ``--baseline-src`` (the order alternating from one repeat to the next):

* (a) ``python -c "import evalbayes._persist"``;
* (b) ``python -c "from evalbayes._persist import load; load(FIT)"``;
* (c) ``python -m evalbayes summary FIT`` and (d) ``python -m evalbayes compare FIT`` for
  each fit given (stdout discarded).

Printed per command and tree: the median and the range of wall seconds and of CPU seconds
(user + system of the child, ``resource.getrusage``), the ratio baseline / this tree of the
medians, and the 1-minute load average before and after. One untimed run of every command
and tree first (numba's on-disk cache of the Beta-Binomial "tasks" kernel, the page cache).

Run from the repository root::

    git archive main src | tar -x -C /tmp/main-tree
    nice -n 10 python benchmarks/speed/bench_import_floor.py /tmp/swe_bb.nc \\
        --baseline-src /tmp/main-tree/src --repeat 9
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def commands(fits: list[Path]) -> dict[str, list[str]]:
    """Label -> arguments of ``python``."""
    out = {
        "(a) import evalbayes._persist": ["-c", "import evalbayes._persist"],
        f"(b) load({fits[0].name})": [
            "-c", f"from evalbayes._persist import load; load({str(fits[0])!r})"],
    }
    for fit in fits:
        out[f"(c) summary {fit.name}"] = ["-m", "evalbayes", "summary", str(fit)]
        out[f"(d) compare {fit.name}"] = ["-m", "evalbayes", "compare", str(fit)]
    return out


def run_once(args: list[str], src: Path) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run."""
    env = dict(os.environ, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args} with {src} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fits", type=Path, nargs="+", help="saved fits (.nc)")
    parser.add_argument("--baseline-src", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    trees = {"baseline": args.baseline_src.resolve(), "this tree": ROOT / "src"}
    table = commands(args.fits)
    print(f"bench_import_floor: {sys.executable}, {os.cpu_count()} CPUs, median of "
          f"{args.repeat} interleaved runs; load average before {os.getloadavg()}", flush=True)
    for name, src in trees.items():
        print(f"  {name}: {src}")
    for argv in table.values():  # warm: numba's cache, the page cache
        for src in trees.values():
            run_once(argv, src)
    for label, argv in table.items():
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        load0 = os.getloadavg()[0]
        for r in range(args.repeat):
            order = list(trees) if r % 2 == 0 else list(trees)[::-1]
            for name in order:
                runs[name].append(run_once(argv, trees[name]))
        load1 = os.getloadavg()[0]
        medians = {}
        for name, values in runs.items():
            walls, cpus = [v[0] for v in values], [v[1] for v in values]
            medians[name] = statistics.median(walls), statistics.median(cpus)
            print(f"  {label:<34} {name:<10} wall {medians[name][0]:5.2f} s "
                  f"({min(walls):.2f}-{max(walls):.2f})  CPU {medians[name][1]:5.2f} s "
                  f"({min(cpus):.2f}-{max(cpus):.2f})", flush=True)
        base, this = medians["baseline"], medians["this tree"]
        print(f"  {'':<34} baseline / this tree: wall {base[0] / this[0]:.2f}x, CPU "
              f"{base[1] / this[1]:.2f}x, saved {base[0] - this[0]:+.2f} s wall; load "
              f"{load0:.2f} -> {load1:.2f}", flush=True)
    print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
