"""Benchmark: where the seconds of a small fit go, and which back end wins end to end.

Every variant runs in a *fresh* Python process (what a user pays in a shell or a CI job) on
the bundled TinyAgent counts (3 systems x 10 tasks x 32 trials), default model
(Beta-Binomial, partial pooling, independent hyperpriors), 4 chains x 1000 draws (+1000
tuning):

* ``stages`` — one process that times each step with ``time.perf_counter``: importing
  evalbayes and reading the data, importing PyMC, building the PyMC model, nutpie's numba
  compile, sampling, assembling the Posterior (+ diagnostics), writing the NetCDF file;
* ``cli nutpie`` — ``evalbayes fit dataset:tinyagent`` (the current default) end to end;
* ``cli pymc (cold/warm)`` — ``--method pymc`` (PyMC's NUTS on pytensor's C backend) twice in a
  row: the second run finds pytensor's on-disk compile cache warm;
* ``nutpie jax`` — ``nutpie.compile_pymc_model(model, backend="jax")`` (only when JAX is
  installed);
* ``exact`` — the quadrature posterior of :mod:`evalbayes.models.beta_binomial` (no
  PyMC, no compile), assembled into a Posterior and written like a fit.

Ratios are against ``cli nutpie`` measured in the same run. The 1-minute load average is
printed beside every timing (the machine is shared). Run::

    nice -n 10 python benchmarks/speed/bench_small_fits.py [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (benchmarks/speed/ is two down)
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

STAGES = r'''
import time, sys
t0 = time.perf_counter(); marks = {}
def mark(name):
    global t0
    t = time.perf_counter(); marks[name] = t - t0; t0 = t
from evalbayes.datasets import load
from evalbayes.models.beta_binomial import BetaBinomialModel
data = load("tinyagent"); mark("import evalbayes + read data")
import pymc, pytensor, nutpie; mark("import pymc + nutpie (+arviz)")
from evalbayes.inference import SamplerConfig
model = BetaBinomialModel()
pm_model = model.build(model.inputs(data))  # the padded unique (n, c) cells, as fit() builds
mark("build PyMC model")
compiled = nutpie.compile_pymc_model(pm_model); mark("nutpie compile (numba)")
tree = nutpie.sample(compiled, draws=1000, tune=1000, chains=4, seed=0, progress_bar=False)
mark("sampling 4 x (1000 + 1000)")
from evalbayes.results import Posterior
keep = ["mu", "mu_logit", "kappa", "log_kappa"]
post = tree["posterior"].to_dataset()[keep].assign_coords(system=data.dataset["system"].values)
fit = Posterior.from_groups(model, data, SamplerConfig(),
                            {"posterior": post, "sample_stats": tree["sample_stats"].to_dataset()})
fit.diagnostics(warn=False); mark("Posterior + diagnostics")
fit.save(sys.argv[1]); mark("write NetCDF")
for k, v in marks.items(): print(f"STAGE\t{k}\t{v:.3f}")
'''

EXACT = r'''
import sys, time
t0 = time.perf_counter()
from evalbayes.datasets import load
from evalbayes.models.beta_binomial import BetaBinomialModel
from evalbayes.models.beta_binomial import exact_posterior
from evalbayes.inference import SamplerConfig
from evalbayes.results import Posterior
data = load("tinyagent"); t1 = time.perf_counter()
groups = exact_posterior(data, draws=1000, chains=4, seed=0); t2 = time.perf_counter()
fit = Posterior.from_groups(BetaBinomialModel(), data, SamplerConfig(), groups)
fit.save(sys.argv[1]); t3 = time.perf_counter()
print(f"STAGE\timport + read\t{t1 - t0:.3f}\nSTAGE\tquadrature + draws\t{t2 - t1:.3f}")
print(f"STAGE\tPosterior + write\t{t3 - t2:.3f}")
'''

JAX = r'''
import sys, time
t0 = time.perf_counter()
import nutpie
from evalbayes.datasets import load
from evalbayes.models.beta_binomial import BetaBinomialModel
data = load("tinyagent")
model = BetaBinomialModel()
pm_model = model.build(model.inputs(data))
t1 = time.perf_counter()
compiled = nutpie.compile_pymc_model(pm_model, backend="jax", gradient_backend="jax")
t2 = time.perf_counter()
nutpie.sample(compiled, draws=1000, tune=1000, chains=4, seed=0, progress_bar=False)
t3 = time.perf_counter()
print(f"STAGE\timport + build\t{t1 - t0:.3f}\nSTAGE\tnutpie compile (jax)\t{t2 - t1:.3f}")
print(f"STAGE\tsampling\t{t3 - t2:.3f}")
'''


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, load average before, and stdout of one fresh process."""
    load = load1()
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        return float("nan"), load, proc.stderr[-2000:]
    return wall, load, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    py = sys.executable
    tmp = Path(tempfile.mkdtemp())
    rows: list[tuple[str, float, float]] = []
    for rep in range(args.repeat):
        wall, load, out = timed([py, "-c", STAGES, str(tmp / "stages.nc")])
        print(f"\n[stages, run {rep + 1}] wall {wall:.2f} s (load {load:.2f})")
        for line in out.splitlines():
            if line.startswith("STAGE"):
                _, name, sec = line.split("\t")
                print(f"  {name:<34} {float(sec):7.2f} s")
        cli = [py, "-m", "evalbayes.cli", "fit", "dataset:tinyagent", "--quiet", "-o"]
        rows.append(("cli nutpie", *timed([*cli, str(tmp / "a.nc")])[:2]))
        rows.append(("cli pymc (1st)", *timed([*cli, str(tmp / "b.nc"), "--method", "pymc"])[:2]))
        rows.append(("cli pymc (2nd, warm C cache)",
                     *timed([*cli, str(tmp / "c.nc"), "--method", "pymc"])[:2]))
        wall, load, out = timed([py, "-c", EXACT, str(tmp / "e.nc")])
        rows.append(("exact (grid) end to end", wall, load))
        print("[exact stages] " + "; ".join(
            f"{ln.split(chr(9))[1]} {float(ln.split(chr(9))[2]):.2f} s"
            for ln in out.splitlines() if ln.startswith("STAGE")))
        try:
            import jax  # noqa: F401

            wall, load, out = timed([py, "-c", JAX])
            rows.append(("nutpie jax backend", wall, load))
            print("[nutpie jax stages] " + "; ".join(
                f"{ln.split(chr(9))[1]} {float(ln.split(chr(9))[2]):.2f} s"
                for ln in out.splitlines() if ln.startswith("STAGE")) or out[-500:])
        except ImportError:
            print("[nutpie jax] JAX is not installed: skipped")
    print(f"\n{'variant (fresh process)':<32} {'wall s':>8} {'load':>6} {'ratio':>7}"
          "   (ratio = cli nutpie of the same repetition / variant)")
    base = None
    for name, wall, load in rows:
        if name == "cli nutpie":
            base = wall
        print(f"{name:<32} {wall:8.2f} {load:6.2f} {base / wall:7.2f}")


if __name__ == "__main__":
    main()
