"""Full simulation-based calibration run of the Beta-Binomial hierarchy.

R prior draws (mu, kappa) -> N tasks x n trials each -> one collapsed fit with R systems
(independent hyperpriors: the posterior factorises, so this is R fits compiled once) -> ranks
of mu, kappa and population pass@k (k = 1, 4, 16) among 99 thinned draws -> chi-square test of
uniformity (10 bins). Repeated for a few (N, n) designs. A mis-specified fit (wrong prior on
kappa) is run on the same data as a control that the test can fail.

Usage: python benchmarks/calibration/sbc_beta_binomial.py [--replicates 1000]
"""

from __future__ import annotations

import argparse
import time

from evalbayes.metrics import beta_pass_at_k
from evalbayes.models import BetaBinomialModel
from evalbayes.testing import rank_statistics, rank_uniformity

DESIGNS = [(10, 8), (10, 32), (50, 4)]


def run(model: BetaBinomialModel, fit_model: BetaBinomialModel, replicates: int, tasks: int,
        trials: int, seed: int) -> dict[str, float]:
    data, truth = model.simulate_prior(replicates, tasks, trials, seed=seed)
    post = fit_model.fit(data, draws=1000, tune=1000, chains=2, seed=seed, check=False)
    posterior = post.posterior.stack(sample=("chain", "draw")).transpose("sample", ...)
    out = {}
    for name in ("mu", "kappa"):
        ranks = rank_statistics(truth[name], posterior[name].values)
        out[name] = rank_uniformity(ranks).pvalue
    for k in (1, 4, 16):
        draws = post.pass_at_k(k, estimand="population").sel(k=k)
        draws = draws.stack(sample=("chain", "draw")).transpose("sample", ...)
        true = beta_pass_at_k(truth["mu"] * truth["kappa"], (1 - truth["mu"]) * truth["kappa"],
                              k)[:, 0]
        out[f"pass@{k}"] = rank_uniformity(rank_statistics(true, draws.values)).pvalue
    diag = post.diagnostics(warn=False)
    out["divergences"] = diag.divergences
    out["rhat_max"] = diag.rhat_max
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    model = BetaBinomialModel()
    wrong = BetaBinomialModel(log_kappa_prior=(3.5, 0.5))
    print(f"SBC, {args.replicates} replicates per design; p-values of the chi-square test of "
          "uniform ranks (reject at 0.01)")
    for tasks, trials in DESIGNS:
        for label, fit_model in (("default", model), ("mis-specified kappa prior", wrong)):
            start = time.perf_counter()
            result = run(model, fit_model, args.replicates, tasks, trials, args.seed)
            pvals = {k: v for k, v in result.items() if k not in ("divergences", "rhat_max")}
            verdict = "uniform" if min(pvals.values()) > 0.01 else "NOT uniform"
            print(
                f"N={tasks:3d} n={trials:3d} {label:<26} "
                + " ".join(f"{k} {v:.3f}" for k, v in pvals.items())
                + f" | {verdict}; divergences {result['divergences']}, "
                f"R-hat max {result['rhat_max']:.3f}, {time.perf_counter() - start:.0f} s"
            )


if __name__ == "__main__":
    main()
