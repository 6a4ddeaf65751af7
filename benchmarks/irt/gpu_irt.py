"""The dense 2PL IRT with numpyro's NUTS on whatever JAX device exists (GPU if present).

Usage (from the repository root, PYTHONPATH=src; needs ``pip install 'evalbayes[jax]'``, and
for a GPU the CUDA build of jaxlib, e.g. ``pip install 'jax[cuda12]'``):

    python benchmarks/irt/gpu_irt.py --systems 100 --tasks 2000 --draws 1000 --tune 1000

Prints the JAX device, ms per log-density gradient (the jitted value-and-gradient of the
PyMC model's JAX log density, the function numpyro's NUTS calls), and the wall time of
``pm.sample(nuts_sampler="numpyro")`` with max R-hat, min bulk ESS and divergences. Data are
simulated from the model (2PL, n = 1 per cell, all cells observed). On a GPU the chains run
``vectorized`` on the one device; on CPU ``parallel`` over host devices (one per chain, via
XLA_FLAGS set before JAX is imported). Results: benchmarks/irt/leaderboard.md ("GPU path").
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--evals", type=int, default=100, help="gradient timings")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    flag = f"--xla_force_host_platform_device_count={args.chains}"
    if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()
    import jax
    import pymc as pm
    from pymc.model.transform.optimization import freeze_dims_and_data
    from pymc.sampling.jax import get_jaxified_logp

    from evalbayes.data import EvalData
    from evalbayes.models.irt import IRTModel
    from evalbayes.results import convergence_diagnostics

    device = jax.devices()[0]
    print(f"JAX {jax.__version__}, device: {device.platform} ({device.device_kind}), "
          f"{len(jax.devices())} device(s); load {os.getloadavg()[0]:.1f}", flush=True)

    rng = np.random.default_rng(args.seed)
    theta = rng.normal(0, 1, args.systems)
    b = rng.normal(0, 1.5, args.tasks)
    a = np.exp(rng.normal(0, 0.5, args.tasks))
    n = np.ones((args.systems, args.tasks), int)
    c = rng.binomial(n, 1 / (1 + np.exp(-a * (theta[:, None] - b))))
    data = EvalData.from_arrays(n, c)
    model = IRTModel(kind="2pl", layout="dense")
    pm_model = model.build(model.inputs(data))

    t0 = time.perf_counter()
    frozen = freeze_dims_and_data(pm_model)
    logp = get_jaxified_logp(frozen)
    point = [np.asarray(v) + 0.01 for v in frozen.initial_point().values()]
    grad = jax.jit(jax.value_and_grad(lambda xs: logp(xs)))
    jax.block_until_ready(grad(point))
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(args.evals):
        t = time.perf_counter()
        jax.block_until_ready(grad(point))
        times.append(time.perf_counter() - t)
    ms = 1e3 * float(np.median(times))
    print(f"{args.systems} x {args.tasks} cells: {ms:.3f} ms per gradient "
          f"(jit {compile_s:.1f} s)", flush=True)

    chain_method = "vectorized" if device.platform == "gpu" else "parallel"
    t0 = time.perf_counter()
    with pm_model:
        tree = pm.sample(draws=args.draws, tune=args.tune, chains=args.chains,
                         random_seed=args.seed, target_accept=0.9, nuts_sampler="numpyro",
                         progressbar=False, compute_convergence_checks=False,
                         nuts_sampler_kwargs={"chain_method": chain_method})
    nuts_s = time.perf_counter() - t0
    post = tree["posterior"].to_dataset()[["theta", "b", "a", "sigma_b"]]
    diag = convergence_diagnostics(post, tree["sample_stats"].to_dataset(), warn=False)
    corr = float(np.corrcoef(post["theta"].mean(("chain", "draw")).values, theta)[0, 1])
    print(f"NUTS {args.chains} x ({args.tune} + {args.draws}) {chain_method}: {nuts_s:.1f} s "
          f"(incl. JIT), max R-hat {diag.rhat_max:.4f}, min bulk ESS {diag.ess_bulk_min:.0f}, "
          f"divergences {diag.divergences}, corr(theta mean, truth) {corr:.3f}; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    return {"device": device.platform, "ms_per_gradient": ms, "nuts_s": nuts_s,
            "rhat_max": diag.rhat_max, "ess_bulk_min": diag.ess_bulk_min,
            "divergences": diag.divergences}


if __name__ == "__main__":
    main()
