"""Minibatch stochastic VI for very large item banks (2PL, n = 1 per cell): scaling curve.

Usage (from the repository root, PYTHONPATH=src; needs the jax extra):

    python benchmarks/irt/bench_minibatch_vi.py --sizes 250x1250,500x2500,1000x5000 --steps 20000
    python benchmarks/irt/bench_minibatch_vi.py --engine pymc --sizes 100x500   # pm.Minibatch ADVI

Doubly stochastic VI (Titsias & Lazaro-Gredilla 2014; Hoffman et al. 2013, "Stochastic
variational inference"): each step draws ``B`` cells uniformly (with replacement) from
the ``N = S x T`` observed cells, scales their log-likelihood by ``N / B`` (an unbiased
estimate of the full sum) and takes one Adam step on the ELBO of a mean-field normal
guide (numpyro ``AutoNormal``) over
``theta`` (S), ``b`` (T), ``log a`` (T) and ``log sigma_b``. Cost per step is O(B + S + T),
independent of N. Priors as IRTModel's 2PL (theta ~ N(0, 1), b ~ N(0, sigma_b),
sigma_b ~ HalfNormal(2), log a ~ N(0, 0.5)); location and scale are fixed by those priors.
What is approximate: the mean-field family (no posterior correlations; sds typically too
small) and the finite number of noisy steps. Data are simulated from the model, so recovery
is measured against the truth: correlation of posterior means with the true b and theta, and
the share of true values inside the 90 % guide interval (0.90 if the guide were calibrated).
Results: benchmarks/irt/leaderboard.md ("Minibatch VI"); design: docs/scale.md.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def simulate(n_sys: int, n_task: int, seed: int):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_sys)
    b = rng.normal(0, 1.5, n_task)
    a = np.exp(rng.normal(0, 0.5, n_task))
    c = np.empty((n_sys, n_task), np.uint8)
    for lo in range(0, n_sys, 256):  # rows in blocks: 4000 x 20000 in ~1 GB peak
        eta = a * (theta[lo:lo + 256, None] - b)
        c[lo:lo + 256] = rng.random(eta.shape) < 1 / (1 + np.exp(-eta))
    return c, {"theta": theta, "b": b, "a": a}


def fit_numpyro(c: np.ndarray, batch: int, steps: int, lr: float, seed: int):
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal

    n_sys, n_task = c.shape
    n_cells = c.size
    flat = jnp.asarray(c.reshape(-1))

    def model(flat_c):
        sigma_b = numpyro.sample("sigma_b", dist.HalfNormal(2.0))
        with numpyro.plate("system", n_sys):
            theta = numpyro.sample("theta", dist.Normal(0.0, 1.0))
        with numpyro.plate("task", n_task):
            b = numpyro.sample("b", dist.Normal(0.0, sigma_b))
            log_a = numpyro.sample("log_a", dist.Normal(0.0, 0.5))
        # B cells drawn uniformly with replacement: O(B) per step (numpyro's
        # plate(subsample_size=B) draws without replacement through an O(N) permutation)
        idx = jax.random.randint(numpyro.prng_key(), (batch,), 0, n_cells)
        s, t = idx // n_task, idx % n_task
        eta = jnp.exp(log_a[t]) * (theta[s] - b[t])
        with numpyro.plate("cell", batch), numpyro.handlers.scale(scale=n_cells / batch):
            numpyro.sample("c", dist.Bernoulli(logits=eta), obs=flat_c[idx])

    guide = AutoNormal(model, init_scale=0.1)
    def schedule(i):  # lr -> lr / 20 over the run
        return lr * 0.05 ** (i / steps)

    svi = SVI(model, guide, numpyro.optim.Adam(schedule), Trace_ELBO())
    t0 = time.perf_counter()
    state = svi.init(jax.random.PRNGKey(seed), flat)

    def body(i, st):
        return svi.update(st, flat)[0]

    run = jax.jit(lambda st: jax.lax.fori_loop(0, steps, body, st)).lower(state).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    state = jax.block_until_ready(run(state))
    seconds = time.perf_counter() - t0
    q = guide.quantiles(svi.get_params(state), [0.05, 0.5, 0.95])
    return seconds, compile_s, {k: tuple(np.asarray(v[i]) for i in range(3))
                                for k, v in q.items() if k in ("theta", "b", "log_a")}


def fit_pymc(c: np.ndarray, batch: int, steps: int, lr: float, seed: int):
    """The same model with pm.Minibatch and ADVI (PyMC's own minibatch route)."""
    import pymc as pm

    n_sys, n_task = c.shape
    s_idx, t_idx = np.divmod(np.arange(c.size), n_task)
    with pm.Model():
        s_mb, t_mb, c_mb = pm.Minibatch(s_idx, t_idx, c.reshape(-1).astype("int32"),
                                        batch_size=batch)
        sigma_b = pm.HalfNormal("sigma_b", 2.0)
        theta = pm.Normal("theta", 0.0, 1.0, shape=n_sys)
        b = pm.Normal("b", 0.0, sigma_b, shape=n_task)
        log_a = pm.Normal("log_a", 0.0, 0.5, shape=n_task)
        eta = pm.math.exp(log_a[t_mb]) * (theta[s_mb] - b[t_mb])
        pm.Bernoulli("c", logit_p=eta, observed=c_mb, total_size=c.size)
        compile_s = float("nan")  # pm.fit compiles inside; included in seconds
        t0 = time.perf_counter()
        approx = pm.fit(steps, method="advi", random_seed=seed, progressbar=False,
                        obj_optimizer=pm.adam(learning_rate=lr))
        seconds = time.perf_counter() - t0
    mean = approx.mean.eval()
    sd = approx.std.eval()
    out = {}
    for name in ("theta", "b", "log_a"):
        sl = approx.ordering[name][1]
        m, s = mean[sl], sd[sl]
        out[name] = (m - 1.645 * s, m, m + 1.645 * s)
    return seconds, compile_s, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="250x1250,500x2500,1000x5000")
    parser.add_argument("--engine", default="numpyro", choices=("numpyro", "pymc"))
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    fit = fit_numpyro if args.engine == "numpyro" else fit_pymc
    print("| systems x tasks | cells | engine | steps x batch | epochs | seconds (compile) | load "
          "| corr b | corr theta | corr log a | 90 % cover b | 90 % cover theta |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes.split(","):
        n_sys, n_task = map(int, size.split("x"))
        c, truth = simulate(n_sys, n_task, args.seed)
        load0 = os.getloadavg()[0]
        seconds, compile_s, q = fit(c, args.batch, args.steps, args.lr, args.seed)
        load = (load0 + os.getloadavg()[0]) / 2
        truth = {"theta": truth["theta"], "b": truth["b"], "log_a": np.log(truth["a"])}
        corr = {k: float(np.corrcoef(q[k][1], truth[k])[0, 1]) for k in truth}
        cover = {k: float(np.mean((q[k][0] <= truth[k]) & (truth[k] <= q[k][2])))
                 for k in truth}
        print(f"| {n_sys} x {n_task} | {c.size:,} | {args.engine} | {args.steps} x "
              f"{args.batch} | {args.steps * args.batch / c.size:.2f} | {seconds:.1f} "
              f"({compile_s:.0f}) | "
              f"{load:.1f} | {corr['b']:.3f} | {corr['theta']:.3f} | {corr['log_a']:.3f} | "
              f"{cover['b']:.2f} | {cover['theta']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
