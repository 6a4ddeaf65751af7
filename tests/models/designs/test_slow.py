"""Recovery of the design models on simulated data (slow: MCMC fits)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.models.designs._factorial import FactorialModel, add_factors, variance_components
from evalbayes.models.designs._judge_error import JudgeErrorModel, judge_data, true_pass_rate
from evalbayes.models.designs._training_seeds import TrainingSeedsModel, recipe_difference

pytestmark = pytest.mark.slow
SAMPLER = {"draws": 500, "tune": 500, "chains": 2, "seed": 1, "check": False}


def test_factorial_recovers_task_scale():
    rng = np.random.default_rng(0)
    i, j, t, n = 4, 3, 40, 5
    eta = (-0.3 + rng.normal(0, 0.8, (i, 1, 1)) + rng.normal(0, 0.6, (1, j, 1))
           + rng.normal(0, 0.3, (i, j, 1)) + rng.normal(0, 1.5, (1, 1, t)))
    c = rng.binomial(n, expit(eta)).reshape(i * j, t)
    data = add_factors(EvalData.from_arrays(np.full_like(c, n), c),
                       [f"m{a}" for a in range(i) for _ in range(j)],
                       [f"h{b}" for _ in range(i) for b in range(j)])
    vc = variance_components(FactorialModel().fit(data, **SAMPLER))
    assert vc.loc["task", "lower"] < 1.5 < vc.loc["task", "upper"]
    for key in ("model", "harness", "interaction"):
        assert vc.loc[key, "upper"] > 0.1


def test_seed_model_recovers_recipe_difference():
    rng = np.random.default_rng(1)
    r, t, n = 5, 30, 4
    eta = (np.repeat([0.0, 0.8], r)[:, None] + rng.normal(0, 0.2, (2 * r, 1))
           + rng.normal(0, 1.2, t) + rng.normal(0, 0.3, (2 * r, t)))
    c = rng.binomial(n, expit(eta))
    data = EvalData.from_arrays(np.full_like(c, n), c,
                                system_coords={"recipe": np.repeat(["A", "B"], r)})
    diff = recipe_difference(TrainingSeedsModel().fit(data, **SAMPLER), "A", "B")
    assert diff.loc["logit", "lower"] < 0.8 < diff.loc["logit", "upper"]


def test_judge_model_recovers_true_rate():
    rng = np.random.default_rng(2)
    t = 300
    p = expit(rng.normal(-0.3, 1.5, t))
    y = rng.random(t) < p
    j = np.where(y, rng.random(t) < 0.85, rng.random(t) > 0.9).astype(int)
    idx = rng.choice(t, 100, replace=False)
    gold = pd.DataFrame({"system": "system_0", "task": [f"task_{i}" for i in idx],
                         "judge": j[idx], "human": y[idx].astype(int)})
    data = judge_data(EvalData.from_arrays(np.ones((1, t), int), j[None, :]), gold)
    table = true_pass_rate(JudgeErrorModel().fit(data, **SAMPLER))
    assert table["lower"].iloc[0] < p.mean() < table["upper"].iloc[0]
