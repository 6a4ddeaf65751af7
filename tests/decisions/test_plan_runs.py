"""Planning a recipe comparison from a training-seeds fit (decisions.plan_runs).

The table is checked against models.training_seeds.design_assurance called directly on the
same grid, and the assurance against what the simulation must give whatever the code: with no
true difference it is the one-sided false-claim rate of the Welch interval, alpha / 2; with a
huge difference it is 1. Posteriors are fixed draws (no sampling).
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from evalbayes.data import EvalData
from evalbayes.decisions._plan_runs import RunPlanResult, plan_runs
from evalbayes.inference import SamplerConfig
from evalbayes.models.designs._training_seeds import TrainingSeedsModel, design_assurance


def _seed_posterior(m, recipes=("A", "B"), sigma_run=0.3, sigma_task=1.0, sigma_cell=0.2,
                    draws=50):
    """A TrainingSeedsPosterior with fixed draws: recipe logits ``m`` (one row for every draw,
    or a row per draw), the given scales."""
    k = len(recipes)
    runs = np.repeat(list(recipes), 2)
    data = EvalData.from_arrays(np.full((2 * k, 3), 2), np.ones((2 * k, 3), int),
                                system_coords={"recipe": runs})
    one = np.ones((1, draws))
    ds = xr.Dataset({
        "m": (("chain", "draw", "recipe"), np.broadcast_to(np.asarray(m, float), (draws, k))[None]),
        "sigma_run": (("chain", "draw"), sigma_run * one),
        "u": (("chain", "draw", "system"), np.zeros((1, draws, 2 * k))),
        "sigma_task": (("chain", "draw"), sigma_task * one),
        "b": (("chain", "draw", "task"), np.zeros((1, draws, 3))),
        "sigma_cell": (("chain", "draw"), sigma_cell * one),
    }).assign_coords(chain=[0], draw=np.arange(draws), system=data.dataset["system"].values,
                     task=data.dataset["task"].values)  # fmt: skip
    model = TrainingSeedsModel()
    return model.posterior_class.from_groups(model, data, SamplerConfig(), {"posterior": ds})


def test_table_equals_design_assurance_on_the_full_grid():
    posterior = _seed_posterior([0.0, 0.4])
    result = plan_runs(posterior, baseline="A", candidate="B", runs=[4, 2], tasks=[10, 5],
                       trials=[1, 3], n_sims=30, seed=7)  # fmt: skip
    assert isinstance(result, RunPlanResult)
    grid = [(t, n, r) for t in (5, 10) for n in (1, 3) for r in (2, 4)]
    table = result.table
    assert list(zip(table["tasks"], table["trials"], table["runs"], strict=True)) == grid
    assert (table["cost"] == 2 * table["runs"] * table["tasks"] * table["trials"]).all()
    ref = design_assurance(posterior, "A", "B", runs=[g[2] for g in grid],
                           tasks=[g[0] for g in grid], trials=[g[1] for g in grid],
                           n_sims=30, alpha=0.05, seed=7)  # fmt: skip
    for column in ("runs", "tasks", "trials", "cost", "se", "estimate_sd", "assurance"):
        np.testing.assert_array_equal(table[column].to_numpy(), ref[column].to_numpy())
    a = table["assurance"].to_numpy()
    np.testing.assert_allclose(table["assurance_se"], np.sqrt(a * (1 - a) / 30))


def test_se_is_one_experiments_precision_and_estimate_sd_adds_the_prior_spread():
    """With one fixed truth and no task effects, one experiment's Welch s.e. (``se``, its
    root mean square) and the spread of the estimates across simulated experiments
    (``estimate_sd``) estimate the same sd; when the posterior is unsure of the truth
    (draws at m_B = -0.6 and 0.6), ``estimate_sd`` grows by that spread and ``se`` does not."""
    kwargs = {"sigma_task": 0.0, "draws": 2}
    fixed = plan_runs(_seed_posterior([0.0, 0.0], **kwargs), runs=8, tasks=40, trials=2,
                      n_sims=1500, seed=1).table.iloc[0]
    assert abs(fixed["estimate_sd"] / fixed["se"] - 1) < 0.06  # Monte Carlo: ~0.02
    unsure = _seed_posterior([[0.0, -0.6], [0.0, 0.6]], **kwargs)
    spread = plan_runs(unsure, runs=8, tasks=40, trials=2, n_sims=1500, seed=1).table.iloc[0]
    assert abs(spread["se"] / fixed["se"] - 1) < 0.06
    # the truth's own spread: pass rates of the two draws differ by about 0.29 (sd ~0.145)
    assert spread["estimate_sd"] > 2 * fixed["estimate_sd"]


def test_no_difference_gives_the_one_sided_false_claim_rate():
    """Truth 0: a 'hit' is an interval entirely below 0, probability alpha / 2 for a
    calibrated Welch interval (runs as the unit, near-normal per-run rates)."""
    posterior = _seed_posterior([0.2, 0.2])
    n_sims, alpha = 2000, 0.1
    result = plan_runs(posterior, runs=6, tasks=30, trials=4, n_sims=n_sims, alpha=alpha,
                       seed=3)  # fmt: skip
    rate = float(result.table["assurance"].iloc[0])
    se = np.sqrt(alpha / 2 * (1 - alpha / 2) / n_sims)
    assert abs(rate - alpha / 2) < 4 * se


def test_huge_difference_is_always_settled():
    posterior = _seed_posterior([-1.5, 1.5], sigma_run=0.1, sigma_cell=0.1)
    result = plan_runs(posterior, runs=[3, 5], tasks=20, trials=4, n_sims=50)
    assert (result.table["assurance"] == 1.0).all()
    assert result.runs_needed(20, 4, 0.8) == 3
    assert "3 runs per recipe for 80% assurance" in result.summary(0.8)


def test_runs_needed_reads_the_table():
    posterior = _seed_posterior([0.0, 0.6])
    result = plan_runs(posterior, runs=[2, 3, 6], tasks=[10], trials=[2], n_sims=40)
    table = result.table
    for target in (0.1, 0.5, 0.9, 1.0):
        hit = table[table["assurance"] >= target]["runs"]
        assert result.runs_needed(10, 2, target) == (None if hit.empty else int(hit.min()))
    with pytest.raises(ValueError, match="tasks=99"):
        result.runs_needed(99, 2)


def test_bad_input():
    three = _seed_posterior([0.0, 0.1, 0.2], recipes=("A", "B", "C"))
    with pytest.raises(ValueError, match="name the baseline"):
        plan_runs(three)
    with pytest.raises(ValueError, match="unknown recipe 'Z'"):
        plan_runs(three, baseline="A", candidate="Z")
    with pytest.raises(ValueError, match="same recipe"):
        plan_runs(three, baseline="A", candidate="A")
    two = _seed_posterior([0.0, 0.1])
    with pytest.raises(ValueError, match="runs must be an integer >= 2"):
        plan_runs(two, runs=[1, 2])
    with pytest.raises(ValueError, match="alpha"):
        plan_runs(two, alpha=1.5)
    with pytest.raises(ValueError, match="training-seeds fit"):
        plan_runs(object())
