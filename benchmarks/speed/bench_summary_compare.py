"""Benchmark: ``evalbayes summary FIT`` and ``evalbayes compare FIT`` as whole commands, on
saved fits, this tree against a baseline tree in the same run (issue 26, item 3: both
commands <= 2 s together on SWE-bench Verified, either model, on an idle 2-core machine).

Each command runs in a fresh process (``python -m evalbayes``, output to ``/dev/null``),
alternating trees, ``--repeat`` times; printed per command and tree: the best and median CPU
seconds of the child (user + system, ``resource.getrusage``; the median system seconds apart),
the best and median wall seconds, and the ratio baseline / this tree, with the 1-minute load
average. ``--commands report`` writes its HTML to a temporary directory. On a loaded
machine read the CPU seconds and the ratios; the wall seconds count only on an idle one. The
first run of a tree compiles its numba kernels into that tree's cache: pass ``--warm`` to run
every command once untimed first.

Run from the repository root (fits written beforehand, e.g. by ``evalbayes fit``)::

    nice -n 10 python benchmarks/speed/bench_summary_compare.py /tmp/swe_bb.nc /tmp/swe_rg.nc \
        --baseline-src /tmp/main-tree/src --repeat 3 --warm
    nice -n 10 python benchmarks/speed/bench_summary_compare.py /tmp/tb_rg.nc \
        --commands report --baseline-src /tmp/main-tree/src --repeat 5 --warm
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_once(src: Path, command: str, fit: Path) -> tuple[float, float, float]:
    """CPU seconds (user + system), wall seconds and system seconds of one command in a fresh
    process."""
    env = dict(os.environ, PYTHONPATH=str(src))
    with tempfile.TemporaryDirectory() as tmp:
        output = ["-o", str(Path(tmp) / "report.html")] if command == "report" else []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "evalbayes", command, str(fit), *output], env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    system = after.ru_stime - before.ru_stime
    return (after.ru_utime - before.ru_utime) + system, wall, system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fits", type=Path, nargs="+")
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--commands", nargs="+", default=["summary", "compare"])
    parser.add_argument("--warm", action="store_true", help="run each command once untimed")
    args = parser.parse_args()
    trees = {"this": ROOT / "src"}
    if args.baseline_src is not None:
        trees = {"baseline": args.baseline_src.resolve(), **trees}
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, trees: "
          + ", ".join(f"{k}={v}" for k, v in trees.items()))
    for fit in args.fits:
        for command in args.commands:
            if args.warm:
                for src in trees.values():
                    run_once(src, command, fit)
            times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
            for _ in range(args.repeat):
                for name, src in trees.items():
                    times[name].append(run_once(src, command, fit))
            load = os.getloadavg()[0]
            line = [f"{command:8s} {fit.name:12s}"]
            for name, runs in times.items():
                cpus, walls = [c for c, _, _ in runs], [w for _, w, _ in runs]
                line.append(f"{name}: cpu best {min(cpus):5.2f} s median "
                            f"{statistics.median(cpus):5.2f} s (sys "
                            f"{statistics.median(s for _, _, s in runs):4.2f}), wall best "
                            f"{min(walls):5.2f} s median {statistics.median(walls):5.2f} s")
            if "baseline" in times:
                ratio = (statistics.median(c for c, _, _ in times["baseline"])
                         / statistics.median(c for c, _, _ in times["this"]))
                line.append(f"baseline/this (median cpu) {ratio:4.2f}x")
            line.append(f"load {load:4.1f}")
            print(" | ".join(line), flush=True)


if __name__ == "__main__":
    main()
