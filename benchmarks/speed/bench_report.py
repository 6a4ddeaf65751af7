"""Benchmark: ``evalbayes report FIT -o page.html``, whole command and split by phase.

Issue 26 asks for ``report`` of the Terminal-Bench fit in <= 5 s on an idle 2-core machine,
for the default rate-grid fit and the exact Beta-Binomial fit. This script times, in fresh
processes and CPU seconds (user + system of the child, ``resource.getrusage``):

* the whole command, ``python -m evalbayes.cli report FIT -o page.html``;
* the same command split by phase (``--split``), in one process: interpreter start and
  ``evalbayes.cli`` (``start``), building the ``report`` parser (``parser``: it imports the
  model registry), the report's own imports (``imports``: matplotlib, the plots), reading the
  fit (``read``), each section of :func:`~evalbayes.report._build.build_report` with the
  figures drawn inside it taken out (``figures``: all time inside ``report_style``), and
  writing the HTML (``render``).

With ``--compare-src DIR`` every run is repeated with another source tree first on the path
(the baseline, e.g. ``git archive main src | tar -x -C /tmp/main-tree``), alternating, and
the ratio baseline / this tree is printed beside, with the 1-minute load average. Best of
``--repeat`` runs counts (the first run of a tree compiles its numba kernels into its cache).

Run from the repository root (fits written once, e.g. by ``evalbayes fit``)::

    nice -n 10 python benchmarks/speed/bench_report.py /tmp/tb_bb.nc /tmp/tb_rg.nc \
        --compare-src /tmp/main-tree/src --repeat 3 --split
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The child of ``--split``: phases in CPU seconds, printed as one JSON line.
CHILD = r"""
import json, sys, time
clock = time.process_time
phases = {"start": clock()}
t = clock()
import evalbayes.cli as cli
phases["start"] += clock() - t
t = clock(); cli.build_parser("report"); phases["parser"] = clock() - t
t = clock()
import evalbayes.report._build as build
import evalbayes.report._figures as figures
phases["imports"] = clock() - t
t = clock()
from evalbayes.cli._output import load_fit
fit = load_fit(sys.argv[1], scores=True)
phases["read"] = clock() - t
inside = [0.0]
style = figures.report_style
from contextlib import contextmanager
@contextmanager
def timed_style():
    t0 = clock()
    try:
        with style():
            yield
    finally:
        inside[0] += clock() - t0
import importlib
for name in ("_checks", "_designs", "_items", "_pairs", "_systems", "_scores"):
    module = importlib.import_module("evalbayes.report." + name)
    if hasattr(module, "report_style"):
        module.report_style = timed_style
def wrap(name, fn):
    def timed(*args, **kwargs):
        before, t0 = inside[0], clock()
        out = fn(*args, **kwargs)
        phases[name] = phases.get(name, 0.0) + clock() - t0 - (inside[0] - before)
        return out
    return timed
for name in dir(build):
    if name.endswith("_section") or name.endswith("_sections") or name == "make_context":
        setattr(build, name, wrap(name, getattr(build, name)))
build.render_html = wrap("render", build.render_html)
build.write_report(fit.data, fit=fit, output=sys.argv[2], seed=0)
phases["figures"] = inside[0]
print(json.dumps(phases))
"""


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}


def _cpu(args: list[str], src: Path) -> tuple[float, str]:
    """CPU seconds (user + system) of one child process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, env=_env(src), capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{args} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fits", nargs="+", type=Path)
    parser.add_argument("--compare-src", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--split", action="store_true", help="also the phase split")
    args = parser.parse_args()
    trees = {"branch": ROOT / "src"}
    if args.compare_src is not None:
        trees = {"base": args.compare_src.resolve(), **trees}
    print(f"bench_report: {os.cpu_count()} CPUs, load {os.getloadavg()}, trees "
          + ", ".join(f"{k}={v}" for k, v in trees.items()))
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "page.html")
        for fit in args.fits:
            best: dict[str, float] = {}
            for i in range(args.repeat):
                for label, src in trees.items():
                    cpu, _ = _cpu([sys.executable, "-m", "evalbayes.cli", "report", str(fit),
                                   "-o", out], src)
                    best[label] = min(cpu, best.get(label, float("inf")))
                    print(f"  {fit.name} {label} run {i + 1}: {cpu:.2f} CPU-s, "
                          f"load {os.getloadavg()[0]:.2f}", flush=True)
            ratio = (f", base / branch {best['base'] / best['branch']:.2f}x"
                     if "base" in best else "")
            print(f"{fit.name}: whole command, best of {args.repeat}: "
                  + ", ".join(f"{k} {v:.2f} CPU-s" for k, v in best.items()) + ratio)
            if not args.split:
                continue
            splits: dict[str, dict[str, float]] = {}
            for _ in range(args.repeat):
                for label, src in trees.items():
                    cpu, stdout = _cpu([sys.executable, "-c", CHILD, str(fit), out], src)
                    phases = json.loads(stdout.strip().splitlines()[-1])
                    phases["child total"] = cpu
                    for key, value in phases.items():
                        slot = splits.setdefault(key, {})
                        slot[label] = min(value, slot.get(label, float("inf")))
            print(f"{fit.name}: phases, CPU-s, best of {args.repeat} per phase "
                  f"(load {os.getloadavg()[0]:.2f})")
            print(f"  {'phase':<22}" + "".join(f"{k:>10}" for k in trees))
            for key, values in splits.items():
                print(f"  {key:<22}" + "".join(f"{values.get(k, 0.0):>10.2f}" for k in trees))


if __name__ == "__main__":
    main()
