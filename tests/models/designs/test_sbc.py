"""The SBC script of the design models (benchmarks/designs/sbc_designs.py): prior draws and fit
path.

The calibration itself is the benchmark (benchmarks/designs/, "SBC"); here the script's
simulate-from-prior + fit path runs for 2 judge-model replicates, and its prior draws are
checked against the model's priors restated with scipy.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from scipy import stats

from evalbayes.models.designs._judge_error import GOLD_VARS
from paths import ROOT

PATH = ROOT / "benchmarks" / "designs" / "sbc_designs.py"
_spec = importlib.util.spec_from_file_location("sbc_designs", PATH)
assert _spec is not None and _spec.loader is not None
sbc = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("sbc_designs", sbc)  # dataclasses look their module up
_spec.loader.exec_module(sbc)


@pytest.mark.slow  # nutpie compile (~12 s) + 2 fits: 17 s at load 5, 80 s at load 9
def test_judge_replicates_give_ranks_in_range():
    sampler = {"draws": 100, "tune": 100, "chains": 2}
    rows = [sbc.replicate("judge-error", seed, sampler) for seed in (3, 4)]
    quantities = ["sensitivity", "specificity", "m[s0]", "sigma[s0]", "pass@1 tasks s0",
                  "pass@1 population s0"]
    for row in rows:
        ranks = np.array([row[key] for key in quantities])
        assert ranks.shape == (6,)
        assert ranks.dtype.kind == "i"
        assert ranks.min() >= 0 and ranks.max() <= sbc.N_RANKS
        assert row["divergences"] >= 0 and np.isfinite(row["rhat_max"])
    assert [row["seed"] for row in rows] == [3, 4]


def test_judge_simulation_is_seeded_and_matches_the_design():
    part = sbc.PARTS["judge-error"]
    sims = []
    for _ in range(2):
        rng = np.random.default_rng(5)
        sims.append(part.simulate(part.prior(part.model, rng), rng))
    (data, values), (again, values_again) = sims
    assert values == values_again
    np.testing.assert_array_equal(data.c.values, again.c.values)
    assert data.shape == (sbc.JUDGE_SYSTEMS, sbc.JUDGE_TASKS)
    assert (data.n.values == 1).all()
    assert sum(int(data.dataset[k].values.sum()) for k in GOLD_VARS) == sbc.JUDGE_GOLD


def test_prior_draws_follow_the_model_priors():
    rng = np.random.default_rng(0)
    judge = sbc.PARTS["judge-error"]
    draws = [judge.prior(judge.model, rng) for _ in range(1000)]
    sens_a, sens_b = judge.model.sens_prior
    assert stats.kstest([d["sensitivity"] for d in draws], stats.beta(sens_a, sens_b).cdf
                        ).pvalue > 0.001
    assert stats.kstest([d["sigma"][0] for d in draws],
                        stats.halfnorm(scale=judge.model.sigma_prior).cdf).pvalue > 0.001
    seeds = sbc.PARTS["training-seeds"]
    draws = [seeds.prior(seeds.model, rng) for _ in range(1000)]
    assert stats.kstest([d["sigma"]["task"] for d in draws],
                        stats.halfnorm(scale=seeds.model.sigma_task_prior).cdf).pvalue > 0.001
    # the training-seeds task effects are zero-sum (ZeroSumNormal in the model)
    assert max(abs(d["b"].sum()) for d in draws) < 1e-9
    fact = sbc.PARTS["factorial"]
    draws = [fact.prior(fact.model, rng) for _ in range(1000)]
    assert stats.kstest([d["mu"] for d in draws], stats.norm(*fact.model.mu_prior).cdf
                        ).pvalue > 0.001
