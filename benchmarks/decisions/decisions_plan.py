"""Planner benchmarks: TinyAgent plan, fast posterior vs full fits, assurance calibration.

Run: PYTHONPATH=src nice -n 10 python benchmarks/decisions/decisions_plan.py [--quick]
Prints Markdown tables (copied into benchmarks/decisions/details.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evalbayes.data import EvalData
from evalbayes.datasets import load
from evalbayes.decisions import (
    Population,
    fast_population_posterior,
    fast_tasks_posterior,
    plan,
    prob_superior,
)

QUICK = "--quick" in sys.argv
RESULTS = Path(__file__).resolve().parent / "results"  # benchmarks/decisions/results


def tinyagent_plan() -> None:
    data = load("tinyagent", experiment="sec17.7")
    grid = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30, 40, 50, 80, 120)
    for paired in (True, False):
        res = plan(
            data,
            "GRPO 20",
            "GRPO 80",
            tasks=grid,
            trials=(1, 4, 16, 64),
            paired=paired,
            n_sim=400 if QUICK else 2000,
            seed=0,
        )
        print(f"\n### TinyAgent sec17.7, GRPO 80 vs GRPO 20, {'paired' if paired else 'unpaired'}")
        print(res.summary())


def validate_fast_posterior(n_data: int) -> None:
    """P(B > A) of the fast approximation vs full fits on simulated data sets."""
    from evalbayes.models.beta_binomial import BetaBinomialModel
    from evalbayes.results import compare

    pop = Population(0.55, 0.65, 0.3, 0.3, correlation=0.0)
    rows = []
    rng = np.random.default_rng(0)
    for n_tasks, trials in ((5, 1), (10, 4), (20, 16), (40, 2)):
        for rep in range(n_data):
            params = pop.parameters(rng, 1)
            pa, pb = pop.sample_rates(rng, params, n_tasks, paired=False)
            ca, cb = rng.binomial(trials, pa[0]), rng.binomial(trials, pb[0])
            data = EvalData.from_arrays(
                np.full((2, n_tasks), trials), np.vstack([ca, cb]), systems=["A", "B"]
            )
            row = {"tasks": n_tasks, "trials": trials, "rep": rep}
            loc, sd = fast_tasks_posterior(ca, cb, trials, pooling="none")
            row["fast_tasks_none"] = float(prob_superior(loc, sd))
            loc, sd = fast_tasks_posterior(ca, cb, trials, pooling="partial")
            row["fast_tasks_partial"] = float(prob_superior(loc, sd))
            loc, scale, df = fast_population_posterior(ca, cb, trials, paired=False)
            row["fast_population"] = float(prob_superior(loc, scale, df))
            none = BetaBinomialModel(pooling="none").fit(data, draws=2000, chains=2, seed=rep)
            row["full_tasks_none"] = float(compare(none, k=1).matrix(1).loc["B", "A"])
            part = BetaBinomialModel().fit(
                data, draws=500, tune=500, chains=2, seed=rep, progressbar=False
            )
            row["full_tasks_partial"] = float(compare(part, k=1).matrix(1).loc["B", "A"])
            row["full_population"] = float(
                compare(part, k=1, estimand="population").matrix(1).loc["B", "A"]
            )
            rows.append(row)
    frame = pd.DataFrame(rows)
    out = []
    for (n_tasks, trials), g in frame.groupby(["tasks", "trials"]):
        out.append(
            {
                "tasks": n_tasks,
                "trials": trials,
                "data sets": len(g),
                "tasks/none: max |fast - full|": np.abs(
                    g.fast_tasks_none - g.full_tasks_none
                ).max(),
                "tasks/partial: mean |fast - full|": np.abs(
                    g.fast_tasks_partial - g.full_tasks_partial
                ).mean(),
                "population: mean |fast - full|": np.abs(
                    g.fast_population - g.full_population
                ).mean(),
                "population: max |fast - full|": np.abs(
                    g.fast_population - g.full_population
                ).max(),
            }
        )
    print("\n### Fast posterior P(B > A) vs full fits (unpaired, Beta-Binomial)")
    print(pd.DataFrame(out).to_string(index=False, float_format="{:.3f}".format))


def assurance_calibration(reps: int) -> None:
    """Plan from a pilot, run the chosen design on the true population: decisive rate."""
    rng = np.random.default_rng(1)
    grid = (4, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100)
    rows = []
    for rep in range(reps):
        mean_a = rng.uniform(0.4, 0.6)
        truth = Population(
            mean_a,
            mean_a + rng.uniform(0.03, 0.15),
            rng.uniform(0.1, 0.5),
            rng.uniform(0.1, 0.5),
            correlation=0.7,
        )
        params = truth.parameters(rng, 1)
        pa, pb = (x[0] for x in truth.sample_rates(rng, params, 10))
        pilot = EvalData.from_arrays(
            np.full((2, 10), 16),
            np.vstack([rng.binomial(16, pa), rng.binomial(16, pb)]),
            systems=["A", "B"],
        )
        res = plan(
            pilot, "A", "B", tasks=grid, trials=(4,), estimands=("population",), n_sim=200, seed=rep
        )
        need = res.tasks_needed("population", 4, 0.8)
        if need is None:
            continue
        # the real evaluation at the chosen design, from the true population
        pa, pb = (x[0] for x in truth.sample_rates(rng, params, need))
        ca, cb = rng.binomial(4, pa), rng.binomial(4, pb)
        loc, scale, df = fast_population_posterior(ca[None], cb[None], 4, paired=True)
        rows.append(
            {
                "predicted": float(res.table.set_index("tasks").loc[need, "assurance"]),
                "decisive": float(prob_superior(loc, scale, df)[0] > 0.95),
                "tasks": need,
                "pilot_effect": res.population.effect,
                "true_effect": truth.effect,
            }
        )
    frame = pd.DataFrame(rows)
    se = np.sqrt(frame.decisive.mean() * (1 - frame.decisive.mean()) / len(frame))
    print("\n### Assurance calibration (pilot of 10 tasks x 16 trials, plug-in population)")
    print(
        f"designs chosen for >= 80% predicted assurance: {len(frame)} of {reps}; mean "
        f"predicted {frame.predicted.mean():.3f}; realised decisive rate "
        f"{frame.decisive.mean():.3f} (s.e. {se:.3f}); median tasks {frame.tasks.median():.0f}"
    )
    over = frame.pilot_effect > frame.true_effect
    print(
        f"pilot overestimated the effect in {over.mean():.0%}: realised "
        f"{frame.decisive[over].mean():.3f} there, {frame.decisive[~over].mean():.3f} "
        "elsewhere"
    )


CALIBRATION_GRID = (4, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100)
CALIBRATION_BINS = (0.0, 0.05, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 1.0)


def _prior_truth(rng: np.random.Generator) -> Population:
    """A truth drawn from the Beta-Binomial model's own prior (independent hyperprior):
    mu ~ Beta(1, 1), log kappa ~ N(1, 1.5) per system; systems independent."""
    mu = rng.uniform(0.0, 1.0, 2).clip(1e-3, 1 - 1e-3)
    icc = 1.0 / (1.0 + np.exp(rng.normal(1.0, 1.5, 2)))
    return Population(mu[0], mu[1], icc[0], icc[1], correlation=0.0)


def _benchmark_truth(rng: np.random.Generator) -> Population:
    """The plug-in study's truth: mean 0.4-0.6, effect 0.03-0.15, icc 0.1-0.5."""
    mean_a = rng.uniform(0.4, 0.6)
    return Population(
        mean_a,
        mean_a + rng.uniform(0.03, 0.15),
        rng.uniform(0.1, 0.5),
        rng.uniform(0.1, 0.5),
        correlation=0.0,
    )


def posterior_assurance_calibration(
    reps: int, scenario: str, hyperprior: str = "independent"
) -> pd.DataFrame:
    """Assurance from the pilot's POSTERIOR (design prior) against the realised decisive rate.

    Per replicate: a truth (``scenario`` "prior": from the fitted model's own prior, where
    a Bayesian assurance is calibrated by construction up to the fast-posterior
    approximations; "benchmark": the plug-in study's narrow truth); a pilot of 10 tasks x 16
    trials per system; an exact Beta-Binomial fit; ``plan(Population.from_posterior(fit))``
    over the task grid at 4 trials per task (unpaired, population estimand, P(B > A) >
    0.95); then ONE design per replicate, the smallest predicted to reach 80 % assurance
    (when one does) and one drawn at random from the grid, is run on the truth and judged
    by the same decisive rule. ``hyperprior="shared"`` fits the pilot with the systems'
    means and concentrations drawn from a common distribution, which shrinks the pilot's
    difference towards zero.
    """
    from evalbayes.models.beta_binomial import BetaBinomialModel

    rng = np.random.default_rng(7 if scenario == "prior" else 8)
    truth_of = _prior_truth if scenario == "prior" else _benchmark_truth
    rows = []
    for rep in range(reps):
        truth = truth_of(rng)
        params = truth.parameters(rng, 1)
        pa, pb = (x[0] for x in truth.sample_rates(rng, params, 10, paired=False))
        pilot = EvalData.from_arrays(
            np.full((2, 10), 16),
            np.vstack([rng.binomial(16, pa), rng.binomial(16, pb)]),
            systems=["A", "B"],
        )
        fit = BetaBinomialModel(hyperprior=hyperprior).fit(pilot, seed=rep, progressbar=False)
        design_prior = Population.from_posterior(fit, "A", "B", correlation=0.0)
        res = plan(
            design_prior,
            tasks=CALIBRATION_GRID,
            trials=(4,),
            estimands=("population",),
            paired=False,
            n_sim=400,
            seed=rep,
        )
        table = res.table.set_index("tasks")
        chosen = {"random": int(rng.choice(CALIBRATION_GRID))}
        need = res.tasks_needed("population", 4, 0.8)
        if need is not None:
            chosen["smallest >= 0.8"] = need
        for rule, n_tasks in chosen.items():
            pa, pb = (x[0] for x in truth.sample_rates(rng, params, n_tasks, paired=False))
            ca, cb = rng.binomial(4, pa), rng.binomial(4, pb)
            loc, scale, df = fast_population_posterior(ca[None], cb[None], 4, paired=False)
            rows.append(
                {
                    "scenario": f"{scenario}, {hyperprior} hyperprior",
                    "rule": rule,
                    "rep": rep,
                    "tasks": n_tasks,
                    "predicted": float(table.loc[n_tasks, "assurance"]),
                    "decisive": float(prob_superior(loc, scale, df)[0] > 0.95),
                    "true_effect": truth.effect,
                }
            )
    return pd.DataFrame(rows)


def summarise_calibration(frame: pd.DataFrame) -> None:
    for (scenario, rule), grp in frame.groupby(["scenario", "rule"], sort=False):
        print(
            f"\n### Posterior design prior, truth from the {scenario}, design: {rule} "
            f"({len(grp)} designs)"
        )
        bins = pd.cut(grp.predicted, CALIBRATION_BINS, include_lowest=True)
        out = grp.groupby(bins, observed=True).agg(
            designs=("decisive", "size"),
            predicted=("predicted", "mean"),
            realised=("decisive", "mean"),
        )
        out["s.e."] = np.sqrt(out.realised * (1 - out.realised) / out.designs)
        print(out.to_string(float_format="{:.3f}".format))
        print(
            f"all: predicted {grp.predicted.mean():.3f}, realised {grp.decisive.mean():.3f} "
            f"(s.e. {grp.decisive.std(ddof=1) / np.sqrt(len(grp)):.3f})"
        )


def calibration_runs() -> None:
    """The three settings of :func:`posterior_assurance_calibration` the docs quote (truths
    from the model's prior; the plug-in study's narrow truth, pilot fitted with the
    independent and with the shared hyperprior), saved to CSV and summarised."""
    reps = 200 if QUICK else 1000
    frame = pd.concat(
        [
            posterior_assurance_calibration(reps, "prior"),
            posterior_assurance_calibration(reps // 2, "benchmark"),
            posterior_assurance_calibration(reps // 2, "benchmark", "shared"),
        ]
    )
    frame.to_csv(RESULTS / "assurance_calibration.csv", index=False)
    summarise_calibration(frame)


if __name__ == "__main__":
    t0 = time.time()
    if "--calibration-only" in sys.argv:
        calibration_runs()
        sys.exit(0)
    if "--skip-tinyagent" not in sys.argv:
        tinyagent_plan()
    validate_fast_posterior(2 if QUICK else 5)
    assurance_calibration(40 if QUICK else 200)
    calibration_runs()
    print(f"\n(wall time {time.time() - t0:.0f} s)")
