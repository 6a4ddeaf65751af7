"""Leaderboard IRT: gradient cost and full NUTS runs, long vs dense layout, numba vs JAX.

Usage (from the repository root, PYTHONPATH=src):

    python benchmarks/irt/bench_leaderboard_irt.py grad  [--data swebench|chembench|synth:S:T]
    python benchmarks/irt/bench_leaderboard_irt.py nuts  --data swebench --variant jax-dense
    python benchmarks/irt/bench_leaderboard_irt.py approx --data synth:50:200

``grad`` times one log-density gradient of the 2PL for every variant in the same process:
  numba-long   nutpie, numba backend, long (observed-cell) graph   <- the current method
  numba-dense  nutpie, numba backend, dense masked graph
  jax-dense    nutpie, JAX backend (logp and gradient jitted by XLA), dense graph
  numpyro      the jitted JAX gradient of the dense graph with pytensor's JAX softplus
  numpyro-softplus-binomial  the same after register_jax_softplus, with the general binomial
               form c eta - n softplus(eta) forced on binary data (the round-5 library graph)
  numpyro-softplus  the same after register_jax_softplus (what fit(method="numpyro") uses:
               on binary data the sign form -n softplus((1 - 2c) eta); keep the softplus
               variants last: the registration holds for the rest of the process)
and prints ms per gradient, the ratio to numba-long, and the 1-minute load average.
``nuts`` runs full NUTS (chains x (tune + draws)) for one variant (``numpyro`` there uses the
registered softplus, as the library does; ``EVALBAYES_PYTENSOR_SOFTPLUS=1`` for the old one)
and prints seconds (compile and sampling apart), max R-hat, min bulk ESS, divergences and
gradients per draw.
Results: benchmarks/irt/leaderboard.md (raw outputs in benchmarks/irt/results/).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

# numpyro runs chains in sequence on CPU unless JAX sees one host device per chain
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_force_host_platform_device_count=4").strip()

VARIANTS = ("numba-long", "numba-dense", "jax-dense", "numpyro", "numpyro-softplus-binomial",
            "numpyro-softplus")


def load_avg() -> float:
    return os.getloadavg()[0]


def dataset(spec: str, seed: int = 0):
    from evalbayes.data import EvalData

    if spec == "swebench":
        import pandas as pd

        frame = pd.read_csv("/work/shared/data/swebench_verified_binary.csv")
        return EvalData.from_frame(frame.rename(columns={"task_id": "task"})[
            ["system", "task", "n", "c"]])
    if spec == "chembench":
        from evalbayes import datasets

        return datasets.load("chembench")
    if spec.startswith("synth:"):
        _, s, t = spec.split(":")
        return synthetic(int(s), int(t), seed)
    raise ValueError(f"unknown data {spec!r}")


def synthetic(n_sys: int, n_task: int, seed: int = 0, share: float = 1.0):
    """2PL draws from the model's own prior (sigma_b = 1.5, sigma_a = 0.5), n = 1."""
    from evalbayes.data import EvalData

    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_sys)
    b = rng.normal(0, 1.5, n_task)
    a = np.exp(rng.normal(0, 0.5, n_task))
    p = 1 / (1 + np.exp(-a * (theta[:, None] - b)))
    n = (rng.random((n_sys, n_task)) < share).astype(int)
    n[:, 0] = 1
    n[0, :] = 1
    c = rng.binomial(n, p)
    return EvalData.from_arrays(n, c), {"theta": theta, "b": b, "a": a}


def pymc_model(data, layout: str, binary_form: bool = True):
    """The library's 2PL graph; ``binary_form=False`` forces the general binomial form of the
    dense likelihood on binary data (for the same-run comparison of the two forms)."""
    from dataclasses import replace

    from evalbayes.models.irt import IRTModel

    model = IRTModel(kind="2pl", layout=layout)
    inputs = model.inputs(data)
    if not binary_form and inputs.shape_key[0] == "dense":
        layout_, n_sys, n_task, _binary, centered = inputs.shape_key
        inputs = replace(inputs, shape_key=(layout_, n_sys, n_task, False, centered))
    return model.build(inputs)


def compile_variant(data, variant: str):
    import nutpie

    t0 = time.perf_counter()
    if variant == "numba-long":
        compiled = nutpie.compile_pymc_model(pymc_model(data, "long"))
    elif variant == "numba-dense":
        compiled = nutpie.compile_pymc_model(pymc_model(data, "dense"))
    elif variant == "jax-dense":
        compiled = nutpie.compile_pymc_model(pymc_model(data, "dense"), backend="jax",
                                             gradient_backend="jax")
    else:
        raise ValueError(variant)
    return compiled, time.perf_counter() - t0


def grad_ms_nutpie(compiled, evals: int) -> float:
    """Wall time of a short one-chain nutpie run divided by its gradient evaluations
    (warm-up and draws; nutpie 0.16 has no per-gradient timer for PyMC models), so sampler
    overhead is included, as in a real run."""
    import nutpie

    t0 = time.perf_counter()
    tree = nutpie.sample(compiled, draws=evals, tune=evals, chains=1, seed=0,
                         progress_bar=False, save_warmup=True)
    wall = time.perf_counter() - t0
    steps = float(tree["sample_stats"]["n_steps"].sum())
    if "warmup_sample_stats" in tree.children:
        steps += float(tree["warmup_sample_stats"]["n_steps"].sum())
    return 1e3 * wall / steps


def grad_ms_numpyro(data, evals: int, binary_form: bool = True) -> tuple[float, float]:
    import jax
    from pymc.sampling.jax import get_jaxified_logp

    t0 = time.perf_counter()
    model = pymc_model(data, "dense", binary_form)
    from pymc.model.transform.optimization import freeze_dims_and_data

    model = freeze_dims_and_data(model)
    logp = get_jaxified_logp(model)
    start = [np.asarray(v) + 0.01 for v in model.initial_point().values()]
    fn = jax.jit(jax.value_and_grad(lambda xs: logp(xs)))
    jax.block_until_ready(fn(start))
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(evals):
        t = time.perf_counter()
        jax.block_until_ready(fn(start))
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times)), compile_s


def cmd_grad(args) -> None:
    data = dataset(args.data)
    data = data[0] if isinstance(data, tuple) else data
    cells = int(np.count_nonzero(data.n.values))
    print(f"data {args.data}: {data.n.shape[0]} x {data.n.shape[1]}, {cells} observed cells")
    rows = []
    for variant in args.variants.split(","):
        load0 = load_avg()
        if variant.startswith("numpyro"):
            if variant.startswith("numpyro-softplus"):  # from here on, for the whole process
                from evalbayes.inference import register_jax_softplus

                register_jax_softplus()
            ms, compile_s = grad_ms_numpyro(data, args.evals,
                                            binary_form=not variant.endswith("-binomial"))
        else:
            compiled, compile_s = compile_variant(data, variant)
            ms = grad_ms_nutpie(compiled, args.evals)
        rows.append((variant, ms, compile_s, (load0 + load_avg()) / 2))
        print(f"  {variant:12s} {ms:8.3f} ms/gradient  compile {compile_s:6.1f} s  "
              f"load {rows[-1][3]:.1f}", flush=True)
    base = dict((r[0], r[1]) for r in rows).get("numba-long")
    print("| variant | ms per gradient | ratio vs numba-long | compile s | load |")
    print("|---|---:|---:|---:|---:|")
    for variant, ms, compile_s, load in rows:
        ratio = f"{base / ms:.2f}" if base else "-"
        print(f"| {variant} | {ms:.3f} | {ratio} | {compile_s:.1f} | {load:.1f} |")


def run_nuts(data, variant: str, draws: int, tune: int, chains: int, seed: int = 0,
             chain_method: str = "parallel"):
    """Full NUTS for one variant; returns (compile s, sample s, summary dict, tree)."""
    import arviz_stats  # noqa: F401

    from evalbayes.results import convergence_diagnostics

    if variant == "numpyro":
        import pymc as pm

        from evalbayes.inference import register_jax_softplus

        if os.environ.get("EVALBAYES_PYTENSOR_SOFTPLUS") != "1":  # A/B: the old translation
            register_jax_softplus()
        t0 = time.perf_counter()
        with pymc_model(data, "dense"):
            tree = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed,
                             target_accept=0.9, nuts_sampler="numpyro", progressbar=False,
                             compute_convergence_checks=False,
                             nuts_sampler_kwargs={"chain_method": chain_method})
        compile_s, sample_s = float("nan"), time.perf_counter() - t0
    else:
        import nutpie

        compiled, compile_s = compile_variant(data, variant)
        t0 = time.perf_counter()
        tree = nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, seed=seed,
                             target_accept=0.9, progress_bar=False)
        sample_s = time.perf_counter() - t0
    post = tree["posterior"].to_dataset()[["theta", "b", "a", "sigma_b"]]
    stats = tree["sample_stats"].to_dataset()
    diag = convergence_diagnostics(post, stats, warn=False)
    steps = stats["n_steps"].values.mean() if "n_steps" in stats else float("nan")
    return compile_s, sample_s, diag, steps, tree


def cmd_nuts(args) -> None:
    data = dataset(args.data)
    data = data[0] if isinstance(data, tuple) else data
    load0 = load_avg()
    compile_s, sample_s, diag, steps, _ = run_nuts(data, args.variant, args.draws, args.tune,
                                                   args.chains, chain_method=args.chain_method)
    print(f"{args.data} {data.n.shape} {args.variant} ({args.chain_method}) "
          f"{args.chains}x({args.tune}+{args.draws}): "
          f"compile {compile_s:.1f} s, sampling {sample_s:.1f} s, "
          f"max R-hat {diag.rhat_max:.4f}, min bulk ESS {diag.ess_bulk_min:.0f}, "
          f"divergences {diag.divergences}, gradients/draw {steps:.1f}, "
          f"load {(load0 + load_avg()) / 2:.1f}")


def cmd_approx(args) -> None:
    """Laplace and pathfinder against NUTS on the same data, through IRTModel.fit."""
    from evalbayes.models.irt import IRTModel

    data = dataset(args.data)
    data = data[0] if isinstance(data, tuple) else data
    model = IRTModel(kind="2pl")
    fits = {}
    for method in ["numpyro", *args.methods.split(",")]:
        load0 = load_avg()
        t0 = time.perf_counter()
        try:
            draws = args.draws if method == "numpyro" else 1000
            post = model.fit(data, method=method, draws=draws, tune=args.draws, chains=4,
                             seed=0, check=False)
        except Exception as err:  # report and go on: a failing method is a result too
            print(f"{method}: FAILED {type(err).__name__}: {str(err)[:300]}", flush=True)
            continue
        seconds = time.perf_counter() - t0
        fits[method] = post
        extra = ""
        if method == "numpyro":
            diag = post.diagnostics(warn=False)
            extra = (f", R-hat {diag.rhat_max:.3f}, ESS {diag.ess_bulk_min:.0f}, "
                     f"divergences {diag.divergences}")
        print(f"{method}: {seconds:.1f} s (load {(load0 + load_avg()) / 2:.1f}), "
              f"label {post.label!r}{extra}", flush=True)
    ref = fits.pop("numpyro", None)
    if ref is None:
        return
    print("| method | param | corr of posterior means | median sd ratio (approx / NUTS) "
          "| 5-95 % of sd ratio |")
    print("|---|---|---:|---:|---:|")
    for method, post in fits.items():
        for var in ("theta", "b", "a"):
            m_ref = ref.posterior[var].mean(("chain", "draw")).values
            s_ref = ref.posterior[var].std(("chain", "draw")).values
            m = post.posterior[var].mean(("chain", "draw")).values
            sd = post.posterior[var].std(("chain", "draw")).values
            ratio = sd / s_ref
            print(f"| {method} | {var} | {np.corrcoef(m, m_ref)[0, 1]:.4f} | "
                  f"{np.median(ratio):.2f} | {np.quantile(ratio, 0.05):.2f}-"
                  f"{np.quantile(ratio, 0.95):.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("grad")
    g.add_argument("--data", default="swebench")
    g.add_argument("--variants", default=",".join(VARIANTS))
    g.add_argument("--evals", type=int, default=200)
    n = sub.add_parser("nuts")
    n.add_argument("--data", default="swebench")
    n.add_argument("--variant", default="jax-dense", choices=VARIANTS[:4])
    n.add_argument("--draws", type=int, default=1000)
    n.add_argument("--tune", type=int, default=1000)
    n.add_argument("--chains", type=int, default=4)
    n.add_argument("--chain-method", default="parallel", choices=("parallel", "vectorized"),
                   help="numpyro: chains on 4 XLA host devices, or vmapped on one")
    a = sub.add_parser("approx")
    a.add_argument("--data", default="swebench")
    a.add_argument("--methods", default="laplace,pathfinder,advi")
    a.add_argument("--draws", type=int, default=500)
    args = parser.parse_args()
    {"grad": cmd_grad, "nuts": cmd_nuts, "approx": cmd_approx}[args.cmd](args)


if __name__ == "__main__":
    main()
