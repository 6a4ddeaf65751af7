"""Formula model fits (slow: MCMC): recovery of known effects on simulated data, and the
factorial design written as a formula against ``FactorialModel`` on the same data."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.models.designs._factorial import FactorialModel, add_factors
from evalbayes.models.formula import FormulaModel

pytestmark = pytest.mark.slow


def test_recovers_a_harness_effect_and_the_run_to_run_spread():
    rng = np.random.default_rng(11)
    harness = np.repeat(["h0", "h1"], 5)  # 2 harnesses x 5 runs
    runs = [f"{h}-r{i}" for h, i in zip(harness, np.tile(np.arange(5), 2), strict=True)]
    tasks, trials = 60, 2
    truth = {"Intercept": -0.3, "harness[h1]": 1.0, "1|task": 1.2, "1|run": 0.6}
    eta = (truth["Intercept"] + truth["harness[h1]"] * (harness == "h1")[:, None]
           + rng.normal(0, truth["1|task"], tasks)[None, :]
           + rng.normal(0, truth["1|run"], len(runs))[:, None])
    n = np.full((len(runs), tasks), trials)
    data = EvalData.from_arrays(n, rng.binomial(n, expit(eta)), systems=runs,
                                system_coords={"harness": harness, "run": runs})
    model = FormulaModel("c | trials(n) ~ harness + (1 | task) + (1 | run)")
    post = model.fit(data, draws=1000, tune=1000, chains=4, seed=3, check=False)
    assert post.diagnostics(warn=False).passed
    table = post.effects(ci_prob=0.95).set_index("name")
    for name, value in truth.items():
        assert table.loc[name, "lower"] < value < table.loc[name, "upper"], name
    assert table.loc["1|run", "term_kind"] == "noise"


def test_factorial_written_as_a_formula_gives_the_factorial_posterior():
    # the factorial's own test design: m2 only under h1, one cell missing
    rng = np.random.default_rng(0)
    n = np.full((5, 4), 5)
    n[4, 3] = 0
    data = add_factors(EvalData.from_arrays(n, rng.binomial(n, 0.5)),
                       ["m0", "m0", "m1", "m1", "m2"], ["h0", "h1", "h0", "h1", "h1"])
    sampler = {"draws": 2000, "tune": 1000, "chains": 4, "seed": 2, "check": False}
    factorial = FactorialModel().fit(data, **sampler)
    # mu + alpha[model] + beta[harness] + gamma[system] + b[task] + e[system, task], the same
    # priors: sd_cell ~ HalfNormal(1) where task-grouped terms default to sigma_task_prior
    formula = FormulaModel(
        "c | trials(n) ~ 1 + (1 | model) + (1 | harness) + (1 | model:harness) + (1 | task)"
        " + (1 | system:task)", sd_priors={"1|system:task": 1.0},
    ).fit(data, **{**sampler, "seed": 4})  # chains independent of the factorial's
    for estimand in ("tasks", "population"):
        a = factorial.pass_at_k(1, estimand=estimand).sel(k=1)
        b = formula.pass_at_k(1, estimand=estimand).sel(k=1)
        for system in data.systems:
            x, y = a.sel(system=system), b.sel(system=system)
            mcse = float(np.hypot(az.mcse(x), az.mcse(y)))
            assert abs(float(x.mean()) - float(y.mean())) < 3 * mcse, (estimand, system)
    sd_task = formula.posterior["sd"].sel(term="1|task")
    sigma_task = factorial.posterior["sigma_task"]
    mcse = float(np.hypot(az.mcse(sd_task), az.mcse(sigma_task)))
    assert abs(float(sd_task.mean()) - float(sigma_task.mean())) < 3 * mcse
