"""Paired comparisons with correlated task effects: a model's population difference (rate-grid or
beta-binomial, paired through the shared tasks) vs the paired task bootstrap (and the
Beta-Binomial with independent population draws for contrast).

Simulation (issue 10, item 5): two systems A and B, T tasks, n trials per cell. Per task
``(u_A, u_B) ~ N(0, tau^2 [[1, rho], [rho, 1]])`` and ``logit p[s, t] = theta_s + u_s``,
``theta_A = 0``, ``theta_B = delta``: shared task difficulty with variance ``rho tau^2`` and a
per-system residual with variance ``(1 - rho) tau^2`` (the structure of the retired
task-effects model, no broken tasks), so rho is the correlation of the two systems' logits
across tasks. The target is the population difference
of pass@1, ``E[sigmoid(delta + u)] - E[sigmoid(u)]``, ``u ~ N(0, tau^2)`` (quadrature).

For each replicate we record whether the 95 % interval covers the target and its width: the
``--model`` (``rate-grid``, the default, or ``beta-binomial``) with its default
``population="paired"`` (each system's draws coupled to a Bayesian bootstrap of the shared
tasks; population estimand, B - A per draw; the "TE" columns of the output, a name kept from
the task-effects model the first runs used), BetaBinomialModel(population="independent")
(unpaired; ``--no-bb`` skips it), and the paired task bootstrap of per-task rates c/n
(``evalbayes.frequentist.paired_bootstrap_ci``).

Usage: ``python benchmarks/validity/paired_simulation.py [--quick] [--reps 40] [--model rate-grid]
[--no-bb] [--rhos 0 0.3 0.6 0.9] [--first-rep 0] [--variants dirichlet:0 copula ...]``
(``--variants``: other pairings of the same fits, one row each under the rho's row, coverage,
width and width / paired bootstrap; ``coupling[:unseen_tasks]``) (``--first-rep R``
continues each rho's random stream after replicate R - 1, so two runs pool into one longer one).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import warnings

import numpy as np
from scipy import integrate, stats
from scipy.special import expit

from evalbayes import EvalData
from evalbayes.frequentist import paired_bootstrap_ci
from evalbayes.models import BetaBinomialModel, RateGridModel


def target(delta: float, tau: float) -> float:
    def mean(theta):
        return integrate.quad(lambda z: expit(theta + tau * z) * stats.norm.pdf(z), -12, 12)[0]

    return mean(delta) - mean(0.0)


def simulate(rng, rho, tau, delta, tasks, trials):
    cov = tau**2 * np.array([[1.0, rho], [rho, 1.0]])
    u = rng.multivariate_normal(np.zeros(2), cov, size=tasks).T  # (2, T)
    p = expit(np.array([0.0, delta])[:, None] + u)
    n = np.full((2, tasks), trials)
    return n, rng.binomial(n, p)


def difference_interval(model, data, sampler):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = model.fit(data, check=False, **sampler)
    pop = post.pass_at_k(1, estimand="population").sel(k=1)
    diff = (pop.sel(system="B") - pop.sel(system="A")).values.ravel()
    lo, hi = np.quantile(diff, [0.025, 0.975])
    div = 0
    if post.sample_stats is not None and "diverging" in post.sample_stats:
        div = int(post.sample_stats["diverging"].sum())
    return lo, hi, div, post


def parse_variant(text: str) -> tuple[str, float | None]:
    """``"dirichlet:4"`` -> ("dirichlet", 4.0); ``"copula"`` -> ("copula", None): the
    model's own ``unseen_tasks``)."""
    coupling, _, alpha = text.partition(":")
    return coupling, (float(alpha) if alpha else None)


def variant_interval(model, post, data, variant: str, seed: int) -> tuple[float, float]:
    """The population pass@1 difference's 95 % interval of ``model`` with the pairing
    ``variant`` (:func:`parse_variant`), from the same fit ``post``."""
    coupling, alpha = parse_variant(variant)
    other = dataclasses.replace(model, coupling=coupling, unseen_tasks=float(
        model.unseen_tasks if alpha is None else alpha))
    curve = other.curve(post.posterior, data, np.array([1]), "pass@k", "population", False,
                        seed=seed).values[..., 0]
    diff = (curve[..., 1] - curve[..., 0]).ravel()
    lo, hi = np.quantile(diff, [0.025, 0.975])
    return float(lo), float(hi)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--tau", type=float, default=2.0)
    parser.add_argument("--delta", type=float, default=0.5)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--model", default="rate-grid", choices=("rate-grid", "beta-binomial"))
    parser.add_argument("--no-bb", action="store_true", help="skip the Beta-Binomial column")
    parser.add_argument("--rhos", type=float, nargs="+", default=[0.0, 0.3, 0.6, 0.9])
    parser.add_argument("--variants", nargs="*", default=[],
                        help="pairing variants computed from the same fits beside the model's "
                        "default: 'COUPLING[:UNSEEN_TASKS]', e.g. dirichlet:4 copula "
                        "dirichlet-copula:4 (the models' `coupling` and `unseen_tasks`)")
    parser.add_argument("--first-rep", type=int, default=0,
                        help="start at this replicate of each rho's stream (the earlier ones "
                        "are simulated and skipped), to extend an earlier run")
    args = parser.parse_args(argv)
    joint = {"rate-grid": RateGridModel, "beta-binomial": BetaBinomialModel}[args.model]()
    if args.quick:
        args.reps = 6
    sampler = {"draws": args.draws, "tune": args.draws, "chains": 2, "seed": 3}
    truth = target(args.delta, args.tau)
    print(f"# T={args.tasks} tasks, n={args.trials}, tau={args.tau}, delta={args.delta}: "
          f"target pass@1 difference {truth:.4f}; {args.reps} replicates per rho; "
          f"joint model (TE columns) = {args.model}; replicates {args.first_rep} to "
          f"{args.first_rep + args.reps - 1} of each rho's stream")
    print("| rho | TE cover | TE width | boot cover | boot width | BB cover | BB width | "
          "TE/boot | BB/boot | TE div | s/fit |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    t_start = time.time()
    for rho in args.rhos:
        rng = np.random.default_rng([11, int(rho * 10)])
        for _ in range(args.first_rep):
            simulate(rng, rho, args.tau, args.delta, args.tasks, args.trials)
        res = {"te": [], "boot": [], "bb": [], **{v: [] for v in args.variants}}
        divs, seconds = 0, 0.0
        for rep in range(args.first_rep, args.first_rep + args.reps):
            n, c = simulate(rng, rho, args.tau, args.delta, args.tasks, args.trials)
            data = EvalData.from_arrays(n, c, systems=["A", "B"])
            t0 = time.time()
            lo, hi, div, post = difference_interval(joint, data, sampler)
            seconds += time.time() - t0
            divs += div
            res["te"].append((lo, hi))
            for variant in args.variants:
                res[variant].append(variant_interval(joint, post, data, variant, sampler["seed"]))
            if not args.no_bb:
                res["bb"].append(difference_interval(
                    BetaBinomialModel(population="independent"), data, sampler)[:2])
            else:
                res["bb"].append((np.nan, np.nan))
            boot = paired_bootstrap_ci(c[0] / n[0], c[1] / n[1], seed=rep, n_resamples=4000)
            res["boot"].append((boot.lower, boot.upper))
        stats_ = {}
        for key, iv in res.items():
            iv = np.array(iv)
            stats_[key] = (np.mean((iv[:, 0] <= truth) & (truth <= iv[:, 1])),
                           np.mean(iv[:, 1] - iv[:, 0]))
        bb_cover, bb_width, bb_ratio = (
            ("-", "-", "-") if args.no_bb else
            (f"{stats_['bb'][0]:.2f}", f"{stats_['bb'][1]:.3f}",
             f"{stats_['bb'][1] / stats_['boot'][1]:.2f}")
        )
        print(f"| {rho} | {stats_['te'][0]:.2f} | {stats_['te'][1]:.3f} | "
              f"{stats_['boot'][0]:.2f} | {stats_['boot'][1]:.3f} | {bb_cover} | "
              f"{bb_width} | {stats_['te'][1] / stats_['boot'][1]:.2f} | {bb_ratio} | {divs} | "
              f"{seconds / args.reps:.1f} |", flush=True)
        for variant in args.variants:
            print(f"|   {variant} | {stats_[variant][0]:.3f} | {stats_[variant][1]:.3f} | | | | | "
                  f"{stats_[variant][1] / stats_['boot'][1]:.2f} | | | |", flush=True)
    print(f"total {time.time() - t_start:.0f} s; Monte Carlo s.e. of a coverage near 0.95 with "
          f"{args.reps} replicates: {np.sqrt(0.95 * 0.05 / args.reps):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
