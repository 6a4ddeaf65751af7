"""Benchmark: ``evalbayes fit DATA --model irt-2pl`` with the default method, against the
old default (nutpie on the dense pytensor graph), end to end, with posterior agreement.

Each fit is ``evalbayes fit DATA --model irt-2pl -o FIT.nc`` in a fresh Python process:

* ``fused`` — the default now (``layout="auto"``: the hand-written compiled log density of
  ``models/irt/_fused.py``, sampled by nutpie);
* ``graph`` — the old default, ``--spec`` with ``layout = "dense"`` (nutpie's numba backend
  on the dense pytensor graph, compiled per process); the reference.

Wall seconds and the child's CPU seconds (user + system) are printed with the 1-minute load
average before and after; the machine is shared, so compare CPU seconds and ratios. From
each fit: R-hat max, min bulk / tail ESS, divergences, mean gradients per iteration
(``n_steps``), the final step sizes, and CPU milliseconds per gradient (CPU seconds over
all gradients of all chains, compile and start included). ``--graph-draws N`` runs the
reference with ``N`` warm-up and ``N`` draws per chain (the full run takes ~10 min CPU on
SWE-bench); its CPU seconds per gradient then project the full run's
(``gradients of the fused run x graph CPU ms per gradient``). When both ran in full, the
posterior means of ``theta``, ``b`` and ``a`` are compared as the largest ``|mean_fused -
mean_graph| / sd_graph`` (Monte Carlo error of this difference is about ``sqrt(1/ESS_1 +
1/ESS_2)``), and the sds as the range of ``sd_fused / sd_graph``.

Data (``benchmarks/validity/_realdata.py``): ``swe-bench`` (123 x 500 x 1), ``terminal-bench``
(13 x 80 x 5), or ``sim:S:T:N`` (the 2PL's prior, seed 0)::

    nice -n 10 python benchmarks/speed/irt_default.py --data sim:20:100:1 terminal-bench
    nice -n 10 python benchmarks/speed/irt_default.py --data swe-bench --graph-draws 150
"""

from __future__ import annotations

import argparse
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
from evalbayes.models.irt import IRTModel  # noqa: E402


def run_fit(source: str, out: Path, extra: list[str]) -> tuple[float, float, int]:
    """Wall and CPU seconds of one ``evalbayes fit`` process, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", "from evalbayes.cli import main; raise SystemExit(main())",
         "fit", source, "--model", "irt-2pl", "-o", str(out), "--quiet", *extra],
        env=ENV, capture_output=True, text=True, check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode:
        print(proc.stderr[-2000:])
    return wall, cpu, proc.returncode


def fit_stats(path: Path) -> dict[str, float]:
    """Convergence, gradients per iteration and step size of a saved fit."""
    fit = eb.load(path)
    diag = fit.diagnostics()
    stats = fit.sample_stats
    steps = stats["n_steps"]
    step = stats["step_size"].isel(draw=-1).values
    return {"rhat": float(diag.rhat_max), "ess_bulk": float(diag.ess_bulk_min),
            "ess_tail": float(diag.ess_tail_min), "divergences": int(diag.divergences),
            "grads_per_iter": float(steps.mean()), "draw_grads": float(steps.sum()),
            "step_min": float(step.min()), "step_max": float(step.max())}


def agreement(fused: Path, graph: Path) -> dict[str, float]:
    """Largest standardised difference of the posterior means; range of the sd ratios."""
    a, b = eb.load(fused).posterior, eb.load(graph).posterior
    out: dict[str, float] = {}
    for name in ("theta", "b", "a"):
        sd = b[name].std(("chain", "draw"))
        diff = np.abs(a[name].mean(("chain", "draw")) - b[name].mean(("chain", "draw"))) / sd
        ratio = a[name].std(("chain", "draw")) / sd
        out[f"{name} max |d mean|/sd"] = float(diff.max())
        out[f"{name} sd ratio min"] = float(ratio.min())
        out[f"{name} sd ratio max"] = float(ratio.max())
    return out


def data_of(name: str):
    if name.startswith("sim:"):
        _, systems, tasks, trials = name.split(":")
        data, _ = IRTModel(kind="2pl").simulate_prior(int(systems), int(tasks), int(trials),
                                                      seed=0)
        return data
    return load(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="+", default=["sim:20:100:1"])
    parser.add_argument("--graph-draws", type=int, default=None,
                        help="warm-up and draws per chain of the reference (default: full)")
    parser.add_argument("--skip-graph", action="store_true")
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, evalbayes {eb.__version__}, cpus {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        spec = Path(tmp) / "graph.toml"
        spec.write_text('model = "irt-2pl"\nkind = "2pl"\nlayout = "dense"\n')
        for name in args.data:
            data = data_of(name)
            label = name.replace(":", "-")
            source = str(Path(tmp) / f"{label}.csv")
            data.to_frame().to_csv(source, index=False)
            print(f"\n{name}: {data}", flush=True)
            runs = {"fused": []}
            if not args.skip_graph:
                runs["graph"] = ["--spec", str(spec)]
                if args.graph_draws:
                    runs["graph"] += ["--draws", str(args.graph_draws),
                                      "--tune", str(args.graph_draws)]
            result = {}
            for method, extra in runs.items():
                out = folder / f"{label}-{method}.nc"
                load_before = os.getloadavg()[0]
                wall, cpu, rc = run_fit(source, out, extra)
                stats = fit_stats(out) if rc == 0 else {}
                result[method] = (wall, cpu, stats)
                print(f"  {method:6s} wall {wall:7.1f} s  cpu {cpu:7.1f} s  rc {rc}  "
                      f"load {load_before:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)
                if stats:
                    print(f"         R-hat max {stats['rhat']:.4f}, ESS bulk / tail min "
                          f"{stats['ess_bulk']:.0f} / {stats['ess_tail']:.0f}, divergences "
                          f"{stats['divergences']}, gradients per iteration "
                          f"{stats['grads_per_iter']:.1f}, final step sizes "
                          f"{stats['step_min']:.3f}-{stats['step_max']:.3f}", flush=True)
            if "graph" in result and result["graph"][2] and result["fused"][2]:
                f_wall, f_cpu, f_stats = result["fused"]
                g_wall, g_cpu, g_stats = result["graph"]
                # gradients: warm-up and draws; n_steps is stored for the draws only, so
                # count warm-up as the draws' rate (tune = draws in both runs)
                f_grads = 2 * f_stats["draw_grads"]
                g_grads = 2 * g_stats["draw_grads"]
                print(f"  CPU ms per gradient (all included): fused {1e3 * f_cpu / f_grads:.3f}"
                      f", graph {1e3 * g_cpu / g_grads:.3f}")
                if args.graph_draws:
                    projected = f_grads * g_cpu / g_grads
                    print(f"  graph projected to the fused run's gradients: {projected:.0f} CPU"
                          f" s; fused / graph CPU {f_cpu / projected:.3f}")
                else:
                    print(f"  fused / graph: wall {f_wall / g_wall:.3f}, cpu "
                          f"{f_cpu / g_cpu:.3f}")
                    for key, value in agreement(folder / f"{label}-fused.nc",
                                                folder / f"{label}-graph.nc").items():
                        print(f"  agreement {key}: {value:.3f}")


if __name__ == "__main__":
    main()
