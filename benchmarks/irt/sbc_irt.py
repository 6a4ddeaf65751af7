"""Simulation-based calibration of the IRT models (Talts et al. 2018, arXiv:1804.06788).

For each replicate: draw ``sigma_b, sigma_a, theta, b, a`` from the model's prior, simulate
counts, fit with nutpie (one compiled model reused across replicates: same shapes, cache key
and ``with_data``), and record the rank of each true value among 99 thinned posterior draws.
Ranks of a calibrated model and sampler are uniform on 0..99; a chi-square test on 10 bins
checks each parameter group at the 1 % level (first element of each vector, so replicates
are independent; the pooled ranks over all elements are reported too, but they are
dependent within a replicate and only descriptive).

A deliberately mis-specified run simulates with the opposite sign convention
(``logit p = a (theta + b)``) and fits the correct model: SBC must reject it.

Usage::

    python benchmarks/irt/sbc_irt.py --kind 2pl --reps 200 --systems 5 --tasks 30 --n 1
    python benchmarks/irt/sbc_irt.py --kind 2pl --reps 40 --flip-sign
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from evalbayes.data import EvalData
from evalbayes.models.irt import IRTModel
from evalbayes.testing import rank_statistics, rank_uniformity, simulate_irt

N_RANKS = 99


def prior_draw(model: IRTModel, n_sys: int, n_task: int, rng: np.random.Generator) -> dict:
    """One draw of every parameter from the model's prior (module docstring of irt.py)."""
    sigma_b = abs(rng.normal(0.0, model.sigma_b_prior))
    truth = {
        "theta": rng.normal(0.0, 1.0, n_sys),
        "b": rng.normal(0.0, sigma_b, n_task),
        "sigma_b": np.array([sigma_b]),
    }
    if model.has_discrimination:
        if model.sigma_a == "estimate":
            sigma_a = abs(rng.normal(0.0, model.sigma_a_prior))
            truth["sigma_a"] = np.array([sigma_a])
        else:
            sigma_a = float(model.sigma_a)
        truth["a"] = np.exp(rng.normal(0.0, sigma_a, n_task))
    return truth


def simulate(truth: dict, n: int, rng: np.random.Generator, flip_sign: bool) -> EvalData:
    """Counts ``c ~ Binomial(n, p)`` with ``logit p = a (theta - b)`` (or ``+ b`` flipped, the
    negative control): :func:`evalbayes.testing.simulate_irt`."""
    b = -truth["b"] if flip_sign else truth["b"]
    return simulate_irt(truth["theta"], b, truth.get("a"), trials=n,
                        seed=int(rng.integers(2**32)))


def run_sbc(
    kind: str, reps: int, n_sys: int, n_task: int, n: int, seed: int, flip_sign: bool,
    sigma_a: float | str = 0.5, draws: int = 250, tune: int = 400, chains: int = 4,
) -> dict:
    """Ranks per parameter group: ``{name: (first-element ranks, pooled ranks)}`` + stats."""
    model = IRTModel(kind=kind, sigma_a=sigma_a)
    rng = np.random.default_rng(seed)
    ranks: dict[str, list[np.ndarray]] = {}
    divergences = 0
    for rep in range(reps):
        truth = prior_draw(model, n_sys, n_task, rng)
        data = simulate(truth, n, rng, flip_sign)
        post = model.fit(data, draws=draws, tune=tune, chains=chains, seed=seed + rep,
                         check=False)
        stats = post.sample_stats
        divergences += int(stats["diverging"].sum()) if stats is not None else 0
        for name, value in truth.items():
            da = post.posterior[name]
            flat = da.values.reshape(chains * draws, -1)
            ranks.setdefault(name, []).append(rank_statistics(np.atleast_1d(value), flat,
                                                              N_RANKS))
    return {"ranks": {k: np.stack(v) for k, v in ranks.items()}, "divergences": divergences}


def report(result: dict, bins: int = 10) -> dict[str, float]:
    """Chi-square p-value per group (first element) and, descriptively, pooled."""
    pvalues = {}
    for name, ranks in result["ranks"].items():
        first = rank_uniformity(ranks[:, 0], N_RANKS, bins)
        pooled = rank_uniformity(ranks.ravel(), N_RANKS, bins)
        pvalues[name] = first.pvalue
        print(f"  {name:8s} first element: chi2 p = {first.pvalue:.3f} "
              f"counts {first.counts.tolist()} | pooled ({ranks.size} ranks): "
              f"p = {pooled.pvalue:.3g}")
    print(f"  divergences: {result['divergences']}")
    return pvalues


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="2pl", choices=["1pl", "2pl", "3pl"])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--n", type=int, default=1)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--flip-sign", action="store_true")
    parser.add_argument("--sigma-a", default="0.5", help='a number, or "estimate"')
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    sigma_a = args.sigma_a if args.sigma_a == "estimate" else float(args.sigma_a)
    result = run_sbc(args.kind, args.reps, args.systems, args.tasks, args.n, args.seed,
                     args.flip_sign, sigma_a)
    label = "MIS-SPECIFIED (sign flipped)" if args.flip_sign else "correct"
    print(f"SBC {args.kind} (sigma_a={sigma_a}) {label}: {args.reps} replicates, "
          f"{args.systems} systems x "
          f"{args.tasks} tasks, n = {args.n}, {time.perf_counter() - t0:.0f} s")
    pvalues = report(result)
    verdict = "REJECTED" if min(pvalues.values()) < 0.01 else "uniform (not rejected)"
    print(f"  verdict at 1 %: {verdict}")


if __name__ == "__main__":
    main()
