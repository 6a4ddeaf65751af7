"""Benchmark: the default model (rate grid) end to end, SMC against NUTS, and their agreement.

Each fit is ``evalbayes fit DATA -o FIT.nc`` in a fresh Python process (what a user pays in a
shell), default model (``rate-grid``), default settings (4 x 1000 draws, seed 0):

* ``smc`` — the default method (tempered SMC per system, ``models/rate_grid/_smc.py``);
* ``nutpie`` — ``--method nutpie``, the reference (NUTS, numba compile per process);
* ``beta-binomial`` — ``--model beta-binomial`` (exact quadrature), the fast baseline the issue
  measures against;
* ``smc-reference`` — the default method from another source tree (``--reference-src DIR``,
  e.g. ``git archive OLD src | tar -x -C /tmp/old``): a change to the sampler checked against
  the sampler before it.

Wall seconds and the child's CPU seconds (user + system, ``resource.RUSAGE_CHILDREN``) are
printed with the 1-minute load average; ratios are against ``nutpie`` in the same run (and
against ``beta-binomial``). When both ``smc`` and ``nutpie`` (else ``smc-reference``) ran,
their fits are compared:
posterior means and 5/50/95 % quantiles of pass@k (k = 1, 16, 256; both estimands) per
system, as the largest ``|mean_smc - mean_nutpie| / sd_nutpie`` (and the same of the
quantiles), the range of the sd ratios (where the sd is >= 0.01), and the largest
difference of P(B > A) in pass@1 between systems adjacent in the nutpie fit's ranking.

Data (``benchmarks/validity/_realdata.py``): ``tinyagent`` (bundled), ``terminal-bench``,
``humaneval+``, ``swe-bench`` (``shared/data``; written to a temporary counts CSV first, outside
the timing). ``--subset N`` keeps N systems, evenly spaced (for the NUTS comparison on the
large data sets). Run::

    nice -n 10 python benchmarks/speed/bench_default_fit.py \
        --data tinyagent terminal-bench --methods smc nutpie beta-binomial
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "validity"))
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

from _realdata import load  # noqa: E402

import evalbayes as eb  # noqa: E402

K = [1, 16, 256]
ARGS = {"smc": [], "nutpie": ["--method", "nutpie"], "beta-binomial": ["--model", "beta-binomial"],
        "smc-reference": []}


def run_fit(source: str, method: str, out: Path, reference_src: Path | None = None
            ) -> tuple[float, float, int]:
    """Wall and CPU seconds of one ``evalbayes fit`` process, and its exit code."""
    env = ENV
    if method == "smc-reference":
        if reference_src is None:
            raise SystemExit("smc-reference needs --reference-src DIR")
        env = dict(ENV, PYTHONPATH=str(reference_src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", "from evalbayes.cli import main; raise SystemExit(main())",
         "fit", source, "-o", str(out), *ARGS[method]],
        env=env, capture_output=True, text=True, check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode:
        print(proc.stderr[-2000:])
    for line in proc.stderr.splitlines() + proc.stdout.splitlines():
        if line.startswith("diagnostics") or "did not converge" in line:
            print(f"    {method}: {line.strip()[:160]}")
    return wall, cpu, proc.returncode


def agreement(smc_path: Path, nuts_path: Path) -> dict[str, float]:
    """Largest standardised difference of pass@k means, sd ratios and P(B > A) differences."""
    smc, nuts = eb.load(smc_path), eb.load(nuts_path)
    out: dict[str, float] = {}
    for estimand in ("tasks", "population"):
        a = smc.pass_at_k(K, estimand=estimand)
        b = nuts.pass_at_k(K, estimand=estimand)
        sd = b.std(("chain", "draw"))
        z = np.abs(a.mean(("chain", "draw")) - b.mean(("chain", "draw"))) / sd
        out[f"{estimand} max |d mean|/sd"] = float(z.max())
        q = [0.05, 0.5, 0.95]
        zq = np.abs(a.quantile(q, ("chain", "draw")) - b.quantile(q, ("chain", "draw"))) / sd
        out[f"{estimand} max |d quantile 5/50/95 %|/sd"] = float(zq.max())
        # sd ratios where the sd is not pinned near 0 (pass@k ~ 1: a few draws decide the sd)
        wide = sd >= 0.01
        ratio = (a.std(("chain", "draw")) / sd).where(wide)
        out[f"{estimand} sd ratio min (sd >= 0.01)"] = float(ratio.min())
        out[f"{estimand} sd ratio max (sd >= 0.01)"] = float(ratio.max())
        order = np.argsort(b.sel(k=1).mean(("chain", "draw")).values)
        worst = 0.0
        for lo, hi in itertools.pairwise(order):
            p_smc = float((a.sel(k=1).isel(system=hi) > a.sel(k=1).isel(system=lo)).mean())
            p_nuts = float((b.sel(k=1).isel(system=hi) > b.sel(k=1).isel(system=lo)).mean())
            worst = max(worst, abs(p_smc - p_nuts))
        out[f"{estimand} max |d P(B>A)|"] = worst
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="+", default=["tinyagent", "terminal-bench"])
    parser.add_argument("--methods", nargs="+", default=["smc", "nutpie", "beta-binomial"],
                        choices=list(ARGS))
    parser.add_argument("--subset", type=int, default=None,
                        help="keep this many systems, evenly spaced (SMC's draws of a system "
                        "do not depend on the others, so a subset checks agreement cheaply)")
    parser.add_argument("--reference-src", type=Path, default=None,
                        help="the src folder of another tree, for method smc-reference")
    parser.add_argument("--keep", type=Path, default=None,
                        help="folder to keep the fits in (default: a temporary one)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, evalbayes {eb.__version__}, cpus {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name in args.data:
            data = load(name)
            if args.subset is not None and args.subset < len(data.systems):
                keep = np.linspace(0, len(data.systems) - 1, args.subset).round().astype(int)
                data = eb.EvalData.from_arrays(data.n.values[keep], data.c.values[keep],
                                               systems=[data.systems[i] for i in keep],
                                               tasks=list(data.tasks))
                name = f"{name}-subset{args.subset}"
            if name == "tinyagent":
                source = "dataset:tinyagent"
            else:
                source = str(Path(tmp) / f"{name}.csv")
                data.to_frame().to_csv(source, index=False)
            print(f"\n{name}: {data}")
            times = {}
            for method in args.methods:
                out = folder / f"{name}-{method}.nc"
                load_before = os.getloadavg()[0]
                wall, cpu, rc = run_fit(source, method, out, args.reference_src)
                times[method] = (wall, cpu)
                print(f"  {method:14s} wall {wall:7.1f} s  cpu {cpu:7.1f} s  rc {rc}  "
                      f"load {load_before:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)
            for base in ("nutpie", "smc-reference", "beta-binomial"):
                if base in times:
                    for method, (wall, cpu) in times.items():
                        if method != base:
                            print(f"  {method} / {base}: wall {wall / times[base][0]:.3f}, "
                                  f"cpu {cpu / times[base][1]:.3f}")
            for reference in ("nutpie", "smc-reference"):
                if "smc" in times and reference in times:
                    for key, value in agreement(folder / f"{name}-smc.nc",
                                                folder / f"{name}-{reference}.nc").items():
                        print(f"  agreement with {reference}: {key}: {value:.3f}")
                    break


if __name__ == "__main__":
    main()
