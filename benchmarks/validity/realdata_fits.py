"""The default models on real data: convergence and timing, paired widths, direction, broken tasks.

* Convergence (R-hat, bulk ESS, divergences) and wall time on TinyAgent, tau-bench (one
  system), Terminal-Bench (13 x 80, n = 5), HumanEval+ (noise_highk_temp0.7, n ~ 1100) and,
  with ``--swe``, SWE-bench Verified (123 x 500, n = 1). Without ``--swe`` the SWE-bench
  gradient cost is measured instead.
* Terminal-Bench, top two systems: width of the population difference interval of pass@1
  (paired through the shared tasks, ``population="paired"``) against the paired task bootstrap
  and the Beta-Binomial with independent population draws; with ``--variants``, other
  pairings of the same fit beside it (``COUPLING[:UNSEEN_TASKS[:REFERENCE]]``, the models'
  ``coupling`` and ``unseen_tasks`` and the pairing's reference, as in ``paired_simulation.py``).
* HumanEval+ full data (``--model rate-grid-broken``): posterior P(broken) for tasks unsolved
  by every system and for tasks solved at least 5 times by some system.
* SWE-bench Verified (with ``--swe``): for every adjacent pair of systems (ordered by their
  solve rate), the exact McNemar test on the 500 tasks against the model's P(B > A) of
  population pass@1: do they agree in direction on every pair with p < 0.05?

Usage: ``python benchmarks/validity/realdata_fits.py [--only NAME ...] [--swe] [--draws N]
[--full] [--method nutpie|numpyro] [--model rate-grid|rate-grid-broken|beta-binomial]
[--variants dirichlet:4 copula:2 ...]``
(``--full``: 4 chains x ``--draws`` on the large data sets too; ``--method numpyro`` needs the
``jax`` extra; ``rate-grid`` is ``RateGridModel()``, the default for two or more systems,
``rate-grid-broken`` ``RateGridModel(broken=True)``, ``beta-binomial`` ``BetaBinomialModel()``,
both defaults with ``population="paired"``). The broken-task line is printed for fits with a
broken-task mixture. Data: ``_realdata.py``.

(This script was ``benchmarks/task_effects_realdata.py``; the options of the retired
task-effects and task-grid models are gone with them: ``../experimental/``.)
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings

import numpy as np
from _realdata import NAMES, load, nutpie_cost, pairing_variant

from evalbayes.frequentist import mcnemar, paired_bootstrap_ci
from evalbayes.models import BetaBinomialModel, RateGridModel

MODELS = ("rate-grid", "rate-grid-broken", "beta-binomial")


def make_model(name="rate-grid"):
    if name == "rate-grid":
        return RateGridModel()
    if name == "rate-grid-broken":
        return RateGridModel(broken=True)
    if name == "beta-binomial":
        return BetaBinomialModel()
    raise ValueError(f"unknown model {name!r}; one of {MODELS}")


def fit(data, draws, chains=4, method=None, model_name="rate-grid"):
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_model(model_name)
        post = model.fit(data, draws=draws, tune=draws, chains=chains, seed=1, check=False,
                         method=method)
    seconds = time.time() - t0
    diag = post.diagnostics(warn=False)
    return post, seconds, diag


def gradient_cost(data, repeats=20, model_name="rate-grid"):
    """Compile seconds, seconds per log-density + gradient evaluation and gradients per draw
    of the compiled model (nutpie, a short warm-up)."""
    model = make_model(model_name)
    compile_s, per_grad, steps = nutpie_cost(model.build(model.inputs(data)), repeats)
    return compile_s, per_grad, steps / (2 * repeats)


def terminal_bench_pairs(post, data, variants=()):
    rates = (data.c / data.n).mean("task").values
    order = np.argsort(-rates)
    a, b = data.systems[order[1]], data.systems[order[0]]
    pop = post.pass_at_k(1, estimand="population").sel(k=1)
    diff = (pop.sel(system=b) - pop.sel(system=a)).values.ravel()
    te = np.quantile(diff, [0.025, 0.975])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bb_post = BetaBinomialModel(population="independent").fit(
            data, draws=1000, tune=1000, chains=4, seed=1, check=False)
    bpop = bb_post.pass_at_k(1, estimand="population").sel(k=1)
    bb = np.quantile((bpop.sel(system=b) - bpop.sel(system=a)).values.ravel(), [0.025, 0.975])
    ra = (data.c.sel(system=a) / data.n.sel(system=a)).values
    rb = (data.c.sel(system=b) / data.n.sel(system=b)).values
    boot = paired_bootstrap_ci(ra, rb, seed=0)
    corr = np.corrcoef(ra, rb)[0, 1]
    w_boot = boot.upper - boot.lower
    print(f"Terminal-Bench top two: {b} - {a}; per-task correlation {corr:.2f}")
    print(f"  {post.model.name} population diff 95% [{te[0]:.3f}, {te[1]:.3f}] width "
          f"{te[1] - te[0]:.3f} ({(te[1] - te[0]) / w_boot:.2f}x paired bootstrap)")
    print(f"  beta-binomial, population='independent' [{bb[0]:.3f}, {bb[1]:.3f}] width "
          f"{bb[1] - bb[0]:.3f} ({(bb[1] - bb[0]) / w_boot:.2f}x)")
    print(f"  paired task bootstrap        [{boot.lower:.3f}, {boot.upper:.3f}] width "
          f"{w_boot:.3f}")
    ia, ib = data.systems.index(a), data.systems.index(b)
    for variant in variants:
        other = pairing_variant(post.model, variant)
        curve = other.curve(post.posterior, data, np.array([1]), "pass@k", "population", False,
                            seed=1).values[..., 0]
        lo, hi = np.quantile((curve[..., ib] - curve[..., ia]).ravel(), [0.025, 0.975])
        print(f"  pairing {variant:<21} [{lo:.3f}, {hi:.3f}] width {hi - lo:.3f} "
              f"({(hi - lo) / w_boot:.2f}x paired bootstrap)")


def broken_tasks(post, data):
    model = post.model
    prob = model.broken_probability(post.posterior, data).mean(("chain", "draw")).values
    c = data.c.values
    unsolved = c.sum(axis=0) == 0
    solved5 = c.max(axis=0) >= 5
    print(f"HumanEval+ broken tasks: {unsolved.sum()} unsolved by every system: "
          f"P(broken) min {prob[unsolved].min():.3f} (all > 0.9: "
          f"{bool(np.all(prob[unsolved] > 0.9))}); {solved5.sum()} solved >= 5 times by some "
          f"system: P(broken) max {prob[solved5].max():.3g}")
    print("  pi0 posterior mean", float(post.posterior["pi0"].mean()))


def swe_bench_pairs(post, data):
    """Adjacent pairs by solve rate: exact McNemar test vs the model's P(B > A), pass@1."""
    c = data.c.values
    order = np.argsort(c.mean(axis=1), kind="stable")
    pop = post.pass_at_k(1, estimand="population").sel(k=1)
    draws = pop.transpose("chain", "draw", "system").values.reshape(-1, c.shape[0])
    rows = []
    for lo, hi in itertools.pairwise(order):
        only_lo = int(np.sum((c[lo] == 1) & (c[hi] == 0)))
        only_hi = int(np.sum((c[hi] == 1) & (c[lo] == 0)))
        test = mcnemar(only_lo, only_hi)
        p_hi = float(np.mean(draws[:, hi] > draws[:, lo]))
        rows.append((data.systems[lo], data.systems[hi], only_lo, only_hi, test.p_value, p_hi))
    significant = [r for r in rows if r[4] < 0.05]
    agree = [r for r in significant if (r[5] > 0.5) == (r[3] > r[2])]
    print(f"SWE-bench adjacent pairs: {len(rows)}; McNemar p < 0.05: {len(significant)}; "
          f"model P(B > A) on the same side: {len(agree)} of {len(significant)}")
    for r in significant:
        print(f"  {r[0]} vs {r[1]}: only A {r[2]}, only B {r[3]}, McNemar p {r[4]:.4f}, "
              f"P(B > A) {r[5]:.3f}")
    p_all = np.array([r[5] for r in rows])
    print(f"  all pairs: P(B > A) median {np.median(p_all):.3f}, share > 0.5 "
          f"{np.mean(p_all > 0.5):.2f} (B = the system with the higher solve rate)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=None)
    parser.add_argument("--swe", action="store_true", help="run the full SWE-bench fit")
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--method", default=None, choices=("nutpie", "numpyro"))
    parser.add_argument("--model", default="rate-grid", choices=MODELS)
    parser.add_argument("--full", action="store_true",
                        help="4 chains x --draws also above 5000 cells (else 2 x (300 + 300))")
    parser.add_argument("--variants", nargs="*", default=[],
                        help="Terminal-Bench: other pairings of the same fit, "
                        "'COUPLING[:UNSEEN_TASKS[:REFERENCE]]', e.g. dirichlet:4 copula:2 "
                        "dirichlet:4:posterior-mean")
    args = parser.parse_args(argv)
    names = args.only or list(NAMES)
    print("| data | systems x tasks | cells | max n | chains x (tune+draws) | seconds | "
          "R-hat max | ESS bulk min | divergences |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        data = load(name)
        S, T = data.n.shape
        cells = int((data.n.values > 0).sum())
        if name == "swe-bench" and not args.swe:
            compile_s, per_grad, per_draw = gradient_cost(data, model_name=args.model)
            print(f"| {name} | {S} x {T} | {cells} | {int(data.n.max())} | not run | "
                  f"compile {compile_s:.0f} s, {1000 * per_grad:.0f} ms per gradient, "
                  f"{per_draw:.0f} gradients per draw in a short warm-up | | | |", flush=True)
            continue
        chains, draws = (2, 300) if cells > 5000 and not args.full else (4, args.draws)
        post, seconds, diag = fit(data, draws, chains, args.method, args.model)
        print(f"| {name} | {S} x {T} | {cells} | {int(data.n.max())} | {chains} x "
              f"({draws}+{draws}) | {seconds:.0f} | {diag.rhat_max:.3f} | "
              f"{diag.ess_bulk_min:.0f} | {diag.divergences} |", flush=True)
        if name == "terminal-bench":
            terminal_bench_pairs(post, data, args.variants)
        if name == "humaneval+" and post.has_broken_tasks:
            broken_tasks(post, data)
        if name == "swe-bench":
            swe_bench_pairs(post, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
