"""Benchmark: what the ``evalbayes`` entry points cost before they do any work.

Each command runs in a fresh Python process (what a shell pays), ``--repeat`` times; the
best CPU seconds (user + system of the child, ``resource.getrusage``) and the best wall
seconds are printed with the 1-minute load average, and the ratio to the baseline of the same
run: ``python -c "import numpy"`` (the floor of any NumPy program). Commands:

* ``evalbayes --help`` and ``evalbayes --version`` (the README's first commands);
* ``evalbayes crosscheck dataset:tinyagent`` (frequentist, no PyMC: the README promises
  well under 2 s);
* ``import evalbayes``; ``evalbayes summary --help`` (the parser of a Bayesian command);
* the modules that a fast path must not import, listed after each command from
  ``sys.modules`` of a run with ``-X importtime`` off (``pandas``, ``scipy.stats``,
  ``matplotlib``, ``pymc``, ``arviz``, ``dask``).

``--compare-src DIR`` runs every command a second time with another source tree first on the
path (e.g. a checkout of the previous commit) and prints its figures beside.

Run from the repository root::

    nice -n 10 python benchmarks/speed/bench_cli_startup.py [--repeat 5] [--compare-src DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
HEAVY = ("pandas", "xarray", "scipy.stats", "matplotlib", "pymc", "arviz", "dask", "numba")
CLI = "from evalbayes.cli import main; import sys; code = main(sys.argv[1:])"
PROBE = ("; import sys as _s; print('MODULES', ' '.join(m for m in {heavy!r} "
         "if m in _s.modules), file=_s.stderr); raise SystemExit(code)")

COMMANDS = {
    'python -c "import numpy" (baseline)': ["-c", "import numpy"],
    "import evalbayes": ["-c", "import evalbayes"],
    "evalbayes --help": ["-c", CLI + PROBE.format(heavy=HEAVY), "--help"],
    "evalbayes --version": ["-c", CLI + PROBE.format(heavy=HEAVY), "--version"],
    "evalbayes summary --help": ["-c", CLI + PROBE.format(heavy=HEAVY), "summary", "--help"],
    "evalbayes crosscheck dataset:tinyagent": [
        "-c", CLI + PROBE.format(heavy=HEAVY), "crosscheck", "dataset:tinyagent"],
}


def run_once(args: list[str], src: Path = ROOT / "src") -> tuple[float, float, str]:
    """(child CPU seconds, wall seconds, heavy modules it imported)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=dict(ENV, PYTHONPATH=str(src)),
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0,):
        raise SystemExit(f"{args} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    modules = next((line.split(" ", 1)[1] if " " in line else ""
                    for line in done.stderr.splitlines() if line.startswith("MODULES")), "-")
    return cpu, wall, modules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compare-src", type=Path, default=None,
                        help="another source tree to time beside this one")
    args = parser.parse_args()
    print(f"bench_cli_startup: load average {os.getloadavg()}, {os.cpu_count()} CPUs, "
          f"best of {args.repeat}", flush=True)
    trees = [("this tree", ROOT / "src")]
    if args.compare_src is not None:
        trees.append((str(args.compare_src), args.compare_src))
    base = None
    for label, command in COMMANDS.items():
        for name, src in trees:
            runs = [run_once(command, src) for _ in range(args.repeat)]
            cpu = min(r[0] for r in runs)
            wall = min(r[1] for r in runs)
            base = cpu if base is None else base
            print(f"  {label:<40} {name:<14} {cpu:6.2f} s CPU {wall:6.2f} s wall "
                  f"{cpu / base:6.1f}x baseline   load {os.getloadavg()[0]:5.2f}   "
                  f"heavy imports: {runs[-1][2] or 'none'}", flush=True)


if __name__ == "__main__":
    main()
