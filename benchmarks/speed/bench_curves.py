"""Benchmark: posterior pass@k curves for 4000 draws x 100 systems x 500 tasks, k = 1..1024.

Compares, in one run and on the same synthetic posterior (mu, kappa draws of the
Beta-Binomial model, built directly as a Dataset; no sampling):

* ``population`` — ``BetaBinomialModel.curve(..., estimand="population")``: closed form
  ``1 - B(a, b + k) / B(a, b)`` per draw and system (no task dimension at all);
* ``kernel`` — ``BetaBinomialModel.curve(..., estimand="tasks")``, which at this size (from
  5e6 draws x observed cells, ``FAST_CURVE_MIN_TASK_DRAWS``) runs the compiled kernel: exact
  conjugate draws of every rate fused with the powers in one compiled pass, rows in parallel
  (below that size the library keeps the NumPy path, and so does this row);
* ``numpy tasks`` — the previous library method (``Model._tasks_curve``, still used below
  ``FAST_CURVE_MIN_TASK_DRAWS``): the same exact draws from NumPy's generator, streamed per
  system in chunks, one ``exp`` per rate and k. **The baseline of the speed target** (issue
  11: >= 8x, <= 5 s for 4000 x 100 x 500 x 11);
* ``expected`` — ``BetaBinomialModel.expected_curve``: the Rao-Blackwellised per-draw
  expectation over unique (n, c) cells (its mean equals the tasks estimand's mean; its spread
  does not include trial noise, so it is not a substitute for ``tasks`` intervals);
* baseline ``explicit p`` — draw every latent rate into one full (draws x systems x tasks)
  array, then compute ``1 - (1 - p)^k`` and average over tasks for each k.

``kernel``
draws from its own streams, so it is compared in distribution: per (system, k), the gap
between its 5 / 50 / 95 % quantiles and ``numpy tasks``' in units of the posterior sd, beside
the same gap between two ``numpy tasks`` runs with different seeds (the Monte Carlo null),
and the two-sample KS p-values. The kernel's one-time compilation (numba, cached on disk
afterwards) is timed apart on a tiny grid before the measurements.

Only public entry points are called, except ``numpy tasks`` (the private template method
``Model._tasks_curve``, the baseline) and ``--gamma`` (a white-box micro-benchmark of the
kernel's private Gamma generators, which imports them from their private module).

The k grid is the powers of two 1, 2, 4, ..., 1024 (11 values). A dense grid k = 1..1024 is
not measured: its *output* alone, draws x systems x 1024 float64, is 3.3 GB for every method;
time grows linearly in the number of k for ``numpy tasks`` and ``explicit p`` (one pass over
the rates per k), so ``--dense`` figures can be read off as x 1024 / 11.

The baseline's full array is 4000 x 100 x 500 x 8 B = 1.6 GB (plus a same-size temporary per
k), too much for a shared 2-core machine; it is measured only on ``--baseline-systems``
systems (default 10), where every other method is measured too. The full grid measures the
library methods and ``numpy tasks``, the baseline of the speed target.

Peak memory is measured with ``tracemalloc`` (NumPy reports its allocations to it), time with
``time.perf_counter`` in a separate, untraced call (tracemalloc's per-allocation cost inflated
the compiled kernel's time by 60 % when both were taken from one call). Run::

    .venv/bin/python benchmarks/speed/bench_curves.py            # full grid, ~1-2 minutes
    .venv/bin/python benchmarks/speed/bench_curves.py --quick    # small smoke run
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from evalbayes.data import EvalData
from evalbayes.metrics import prob_curve
from evalbayes.models import Model
from evalbayes.models.beta_binomial import BetaBinomialModel

SEED = 20240601
KERNEL_MIN = 5_000_000  # FAST_CURVE_MIN_TASK_DRAWS of the Beta-Binomial model (not exported)


def synthetic(
    n_draws: int, n_systems: int, n_tasks: int, n_trials: int
) -> tuple[EvalData, xr.Dataset]:
    """Counts from a U-shaped task population, and posterior-like (mu, kappa) draws."""
    rng = np.random.default_rng(SEED)
    mu = rng.uniform(0.1, 0.9, n_systems)
    kappa = rng.lognormal(0.5, 0.7, n_systems)
    p = rng.beta(mu[:, None] * kappa[:, None], (1 - mu[:, None]) * kappa[:, None],
                 size=(n_systems, n_tasks))
    n = np.full((n_systems, n_tasks), n_trials)
    c = rng.binomial(n, p)
    data = EvalData.from_arrays(n, c)
    chains = 4
    draws = n_draws // chains
    shape = (chains, draws, n_systems)
    mu_draws = np.clip(mu + rng.normal(0, 0.02, shape), 0.01, 0.99)
    log_kappa = np.log(kappa) + rng.normal(0, 0.15, shape)
    coords = {"chain": np.arange(chains), "draw": np.arange(draws),
              "system": data.dataset["system"].values}
    dims = ("chain", "draw", "system")
    posterior = xr.Dataset(
        {
            "mu": (dims, mu_draws),
            "mu_logit": (dims, np.log(mu_draws / (1 - mu_draws))),
            "kappa": (dims, np.exp(log_kappa)),
            "log_kappa": (dims, log_kappa),
        },
        coords=coords,
    )
    return data, posterior


def explicit_p(
    posterior: xr.Dataset, data: EvalData, k: np.ndarray, seed: int
) -> np.ndarray:
    """Baseline: every latent rate in one (chain, draw, system, task) array, then each k."""
    mu = posterior["mu"].values
    kappa = posterior["kappa"].values
    a, b = mu * kappa, (1 - mu) * kappa
    n, c = data.n.values, data.c.values
    p = np.empty((*a.shape, n.shape[1]))
    for s in range(n.shape[0]):  # one NumPy stream per system
        rng = np.random.default_rng([seed, s])
        p[:, :, s, :] = rng.beta(a[..., s, None] + c[s], b[..., s, None] + (n[s] - c[s]))
    out = np.empty((*a.shape, len(k)))
    for j, kj in enumerate(k):
        out[..., j] = prob_curve(p, kj, "pass@k")[..., 0].mean(axis=-1)
    return out


def numpy_tasks(model: BetaBinomialModel, posterior: xr.Dataset, data: EvalData,
                k: np.ndarray, seed: int) -> np.ndarray:
    """The previous library method: NumPy draws of the rates, chunked, one exp per k."""
    return Model._tasks_curve(model, posterior, data, k, "pass@k", False, seed)


def kernel_tasks(model: BetaBinomialModel, posterior: xr.Dataset, data: EvalData,
                 k: np.ndarray, seed: int) -> np.ndarray:
    """The library's "tasks" curve: the compiled kernel on the model's collapsed cells from
    ``FAST_CURVE_MIN_TASK_DRAWS`` (5e6) draws x observed cells on, the NumPy path below."""
    return model.curve(posterior, data, k, "pass@k", "tasks", False, seed).values


def unique_cells(data: EvalData) -> int:
    """Number of distinct observed ``(system, n, c)`` cells (what the kernel loops over)."""
    n, c = data.n.values, data.c.values
    s_idx, t_idx = np.nonzero(n > 0)
    keys = np.stack([s_idx, n[s_idx, t_idx], c[s_idx, t_idx]], axis=1)
    return len(np.unique(keys, axis=0))


def kernel_size(posterior: xr.Dataset, data: EvalData) -> int:
    """Draws x observed cells, compared with ``FAST_CURVE_MIN_TASK_DRAWS`` by the model."""
    draws = posterior.sizes["chain"] * posterior.sizes["draw"]
    return draws * int((data.n.values > 0).sum())


def accuracy(kernel: np.ndarray, numpy_a: np.ndarray, numpy_b: np.ndarray) -> None:
    """Kernel vs NumPy draws in distribution, beside the NumPy-vs-NumPy Monte Carlo null."""
    sd = numpy_a.std((0, 1))
    for q in (0.05, 0.5, 0.95):
        def gap(x: np.ndarray, y: np.ndarray, q: float = q) -> float:
            diff = np.abs(np.quantile(x, q, axis=(0, 1)) - np.quantile(y, q, axis=(0, 1)))
            return float(np.max(diff / np.maximum(sd, 1e-12)))
        print(f"{q:.0%} quantile: max gap / sd  kernel vs numpy {gap(kernel, numpy_a):.3f}   "
              f"numpy vs numpy (null) {gap(numpy_b, numpy_a):.3f}")
    flat = kernel.reshape(-1, *kernel.shape[2:])
    ref = numpy_a.reshape(-1, *numpy_a.shape[2:])
    pvalues = np.array([[stats.ks_2samp(flat[:, s, j], ref[:, s, j]).pvalue
                         for j in range(flat.shape[2])] for s in range(flat.shape[1])])
    print(f"two-sample KS, kernel vs numpy, {pvalues.size} (system, k) pairs: "
          f"min p {pvalues.min():.3g}, share p < 0.05: {np.mean(pvalues < 0.05):.3f} "
          "(about 0.05 when the distributions agree)")


def measure(func: Callable[[], Any]) -> tuple[float, float, Any]:
    """Seconds of one untraced call, peak traced memory (MB) of a second call, and the result.

    Two calls, because tracemalloc's per-allocation cost is not negligible for every method:
    the compiled kernel's small scratch allocations (numba's allocator is traced) added
    1.3-1.5 s to its 2.2 s when timed under tracemalloc.
    """
    start = time.perf_counter()
    result = func()
    seconds = time.perf_counter() - start
    tracemalloc.start()
    tracemalloc.reset_peak()
    func()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return seconds, peak, result


def run(n_draws: int, n_systems: int, n_tasks: int, n_trials: int, k: np.ndarray,
        base_systems: int) -> None:
    data, posterior = synthetic(n_draws, n_systems, n_tasks, n_trials)
    model = BetaBinomialModel()
    seed = 0
    print(f"grid: {n_draws} draws x {n_systems} systems x {n_tasks} tasks (n = {n_trials}), "
          f"k = {k.astype(int).tolist()}")
    print(f"load average (1 min) {open('/proc/loadavg').read().split()[0]}")
    print(f"output per method: {n_draws * n_systems * len(k) * 8 / 1e6:.1f} MB; "
          f"full explicit-p array: {n_draws * n_systems * n_tasks * 8 / 1e9:.2f} GB")

    warm_data, warm_post = synthetic(4000, 1, 1250, n_trials)  # 5e6: just takes the kernel
    t0 = time.perf_counter()
    kernel_tasks(model, warm_post, warm_data, k, seed)
    print(f"kernel first call (compile or load from numba's cache, 4000 draws x 1250 tasks): "
          f"{time.perf_counter() - t0:.2f} s")

    def methods(post: xr.Dataset, dat: EvalData) -> dict[str, Callable[[], Any]]:
        return {
            "population": lambda: model.curve(post, dat, k, "pass@k", "population", False),
            "kernel": lambda: kernel_tasks(model, post, dat, k, seed),
            "expected": lambda: model.expected_curve(post, dat, k, "pass@k"),
            "numpy tasks": lambda: numpy_tasks(model, post, dat, k, seed),
        }

    # ---- subset: every method, including the explicit-p baseline, measured
    sub_names = data.systems[:base_systems]
    sub_data = data.subset(systems=sub_names)
    sub_post = posterior.sel(system=sub_names)
    if kernel_size(sub_post, sub_data) < KERNEL_MIN:
        print(f"note: below {KERNEL_MIN:.0e} draws x observed cells the 'kernel' row takes the "
              "library's NumPy path (a smoke run of the script, not a kernel measurement)")
    print(f"\n[subset: {base_systems} systems, all measured; load "
          f"{os.getloadavg()[0]:.1f}]")
    sub = {name: measure(func) for name, func in methods(sub_post, sub_data).items()}
    sub["explicit p"] = measure(lambda: explicit_p(sub_post, sub_data, k, seed))
    base_s = sub["numpy tasks"][0]
    print(f"{'method':<12} {'seconds':>9} {'peak MB':>9} {'numpy tasks / method':>21}")
    for name, (sec, mb, _) in sub.items():
        print(f"{name:<12} {sec:9.2f} {mb:9.1f} {base_s / sec:21.1f}")
    numpy_values = sub["numpy tasks"][2]
    kernel_values = sub["kernel"][2]
    accuracy(kernel_values, numpy_values, numpy_tasks(model, sub_post, sub_data, k, seed + 1))
    mean_gap = np.max(np.abs(sub["expected"][2].values.mean((0, 1))
                             - kernel_values.mean((0, 1))))
    print(f"max |posterior mean of expected - of kernel|: {mean_gap:.2e} "
          "(Monte Carlo error of the p draws)")

    # ---- full grid: every library method measured, the baseline included
    if n_systems == base_systems:
        return
    print(f"\n[full grid: {n_systems} systems; load {os.getloadavg()[0]:.1f}]")
    full = {}
    for name, func in methods(posterior, data).items():
        full[name] = measure(func)
        print(f"  {name}: {full[name][0]:.2f} s (load {os.getloadavg()[0]:.1f})", flush=True)
    base_s = full["numpy tasks"][0]
    print(f"{'method':<12} {'seconds':>9} {'peak MB':>9} {'numpy tasks / method':>21}")
    for name, (sec, mb, _) in full.items():
        print(f"{name:<12} {sec:9.2f} {mb:9.1f} {base_s / sec:21.1f}")
    print(f"load average (1 min) at the end {os.getloadavg()[0]:.2f}")


def gamma_rates(tasks: int = 100, variates: int = 2_000_000) -> None:
    """ns per Gamma variate, one thread: the kernel's vectorised batch against the scalar
    Marsaglia-Tsang generator it replaced, and the share of proposals finished by the scalar
    code; the same for the boost ``U^(1/s)`` of shapes below 1 (``--gamma``)."""
    from numba import njit

    # White-box: the kernel's private generators, from their private module (no public path
    # exists for them; this mode follows the kernel's internals and breaks when they change).
    from evalbayes.models.beta_binomial._kernel import (  # white-box
        _GOLDEN,
        _boost,
        _gamma_batch,
        _gamma_unit,
        _word,
    )

    @njit
    def batched(d: float, scale: float, reps: int, w: int) -> tuple[float, int]:
        out, pending = np.empty(w), np.empty(w, dtype=np.bool_)
        d_all, scale_all = np.full(w, d), np.full(w, scale)
        key, total, finished = np.uint64(12345), 0.0, 0
        for _ in range(reps):
            key = _gamma_batch(d_all, scale_all, key, w, out, pending)
            total += out.sum()
            finished += pending.sum()
        return total, finished

    @njit
    def scalar(d: float, scale: float, reps: int, w: int) -> float:
        out, state, total = np.empty(w), np.uint64(12345), 0.0
        for _ in range(reps):
            for i in range(w):
                out[i], state = _gamma_unit(d, scale, state)
            total += out.sum()
        return total

    print(f"Gamma variates, {tasks} per cell, one thread; load {os.getloadavg()[0]:.1f}")
    print(f"{'shape':>6} {'scalar ns':>10} {'batch ns':>9} {'ratio':>6} {'finished alone':>15}")
    for shape in (1.0, 3.0, 30.0):
        d = shape - 1.0 / 3.0
        scale = 1.0 / np.sqrt(9.0 * d)
        reps = variates // tasks
        batched(d, scale, 2, tasks)
        scalar(d, scale, 2, tasks)
        t0 = time.perf_counter()
        _, finished = batched(d, scale, reps, tasks)
        t_batch = (time.perf_counter() - t0) / (reps * tasks) * 1e9
        t0 = time.perf_counter()
        scalar(d, scale, reps, tasks)
        t_scalar = (time.perf_counter() - t0) / (reps * tasks) * 1e9
        print(f"{shape:6.1f} {t_scalar:10.2f} {t_batch:9.2f} {t_scalar / t_batch:6.2f} "
              f"{finished / (reps * tasks):15.3f}")

    @njit
    def boost(vectorised: bool, shape: float, reps: int, w: int) -> float:
        values, uniform, scale = np.ones(w), np.empty(w), np.empty(w)
        key, total = np.uint64(3), 0.0
        for _ in range(reps):
            if vectorised:
                key = _boost(values, w, shape, key, uniform, scale)
            else:  # the scalar boost it replaced
                for i in range(w):
                    u = (float(np.int64(_word(key, i + 1) >> np.uint64(11))) + 0.5) / 2.0**53
                    values[i] *= np.exp(np.log(u) / shape)
                key += np.uint64(w + 1) * _GOLDEN
            total += values[0]
            values[:] = 1.0
        return total

    reps = variates // tasks
    seconds = []
    for vectorised in (False, True):
        boost(vectorised, 0.5, 2, tasks)
        t0 = time.perf_counter()
        boost(vectorised, 0.5, reps, tasks)
        seconds.append((time.perf_counter() - t0) / (reps * tasks) * 1e9)
    print(f"boost U^(1/s), s = 0.5: scalar {seconds[0]:.2f} ns, vectorised {seconds[1]:.2f} ns, "
          f"ratio {seconds[0] / seconds[1]:.2f}")


def cells_scaling(draws: int = 1000, systems: int = 100, tasks: int = 500) -> None:
    """ns per task of the kernel as the number of unique (n, c) cells per system grows
    (more trials per task, more distinct counts; ``--cells``); best of 3 calls."""
    model = BetaBinomialModel()
    k = 2.0 ** np.arange(11)
    print(f"kernel, {draws} draws x {systems} systems x {tasks} tasks x 11 k; "
          f"load {os.getloadavg()[0]:.1f}")
    for trials in (4, 32, 256):
        data, posterior = synthetic(draws, systems, tasks, trials)
        cells = unique_cells(data)
        warm = data.systems[:10]  # 1000 draws x 10 x 500 = 5e6: the kernel path, compiled
        kernel_tasks(model, posterior.sel(system=warm), data.subset(systems=warm), k, 0)
        best = min(measure_seconds(lambda d=data, p=posterior: kernel_tasks(model, p, d, k, 0))
                   for _ in range(3))
        print(f"  {trials:4d} trials: {cells / systems:6.1f} cells per system, "
              f"{best / (draws * systems * tasks) * 1e9:6.2f} ns per task")


def measure_seconds(func: Callable[[], Any]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--kmax", type=int, default=1024)
    parser.add_argument("--baseline-systems", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="400 draws x 10 systems x 100 tasks")
    parser.add_argument("--gamma", action="store_true",
                        help="only the Gamma generator: vectorised batch vs scalar, ns per variate")
    parser.add_argument("--cells", action="store_true",
                        help="only the kernel's ns per task at 5 / 32 / 169 cells per system")
    args = parser.parse_args()
    if args.gamma:
        gamma_rates()
        return
    if args.cells:
        cells_scaling()
        return
    if args.quick:
        args.draws, args.systems, args.tasks, args.baseline_systems = 400, 10, 100, 5
    if not 1 <= args.baseline_systems <= args.systems:
        parser.error("--baseline-systems must lie in 1..--systems")
    k = 2.0 ** np.arange(int(np.log2(args.kmax)) + 1)
    run(args.draws, args.systems, args.tasks, args.trials, k, args.baseline_systems)


if __name__ == "__main__":
    main()
