"""Calibration (SBC, Talts et al. 2018) and recovery of the task-effects model.

The fast SBC runs a handful of prior replicates on a small design and checks the ranks
loosely; the ``slow`` one runs 100 replicates and tests rank uniformity (chi-square, 10 bins).
Recovery: planted broken tasks get posterior P(broken) > 0.9, solved tasks < 0.1.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalbayes.models import TaskEffectsModel
from evalbayes.sbc import rank_statistics, rank_uniformity

SYSTEMS, TASKS, TRIALS = 4, 12, 8
SAMPLER = {"draws": 198, "tune": 300, "chains": 2, "check": False}


def _ranks(replicates: int, seed: int) -> dict[str, np.ndarray]:
    model = TaskEffectsModel()
    names = ("theta0", "b0", "sigma_b", "sigma_e", "pi0", "pop@4")
    ranks = {name: [] for name in names}
    for r in range(replicates):
        data, truth = model.simulate_prior(SYSTEMS, TASKS, TRIALS, seed=seed + r)
        post = model.fit(data, seed=r, **SAMPLER)
        pos = post.posterior.stack(sample=("chain", "draw"))
        pop = post.pass_at_k(4, estimand="population").sel(k=4, system=data.systems[0])
        # the true population pass@4 of system 0 at the true hyperparameters
        from evalbayes.models.logit_normal import population_curve

        true_pop = population_curve(
            truth["theta"][None, :1],
            np.array([np.hypot(truth["sigma_b"], truth["sigma_e"])]),
            np.array([truth["pi0"]]),
            np.array([4.0]),
            "pass@k",
        )[0, 0, 0]
        pairs = {
            "theta0": (truth["theta"][0], pos["theta"].isel(system=0).values),
            "b0": (truth["b"][0], pos["b"].isel(task=0).values),
            "sigma_b": (truth["sigma_b"], pos["sigma_b"].values),
            "sigma_e": (truth["sigma_e"], pos["sigma_e"].values),
            "pi0": (truth["pi0"], pos["pi0"].values),
            "pop@4": (true_pop, pop.stack(sample=("chain", "draw")).values),
        }
        for name, (value, draws) in pairs.items():
            ranks[name].append(
                rank_statistics(np.array([value]), draws[:, None], n_ranks=99)[0]
            )
    return {name: np.array(v) for name, v in ranks.items()}


@pytest.mark.slow
def test_sbc_fast_ranks_are_not_degenerate():
    ranks = _ranks(8, seed=100)
    for name, r in ranks.items():
        # with 8 replicates a calibrated posterior puts all ranks in one tenth with
        # probability 10 * 0.1^8: a stuck or biased posterior does exactly that
        assert np.ptp(r) > 10, name


@pytest.mark.slow
def test_sbc_ranks_uniform():
    ranks = _ranks(100, seed=1000)
    for name, r in ranks.items():
        assert rank_uniformity(r, n_ranks=99, bins=10).pvalue > 0.001, name


@pytest.mark.slow
def test_recovery_of_planted_broken_tasks():
    rng = np.random.default_rng(5)
    systems, tasks, trials = 8, 40, 20
    theta = rng.normal(0, 1.0, systems)
    b = rng.normal(-0.5, 1.5, tasks)
    planted = np.array([3, 17, 29])
    p = 1 / (1 + np.exp(-(theta[:, None] - b + rng.normal(0, 0.8, (systems, tasks)))))
    p[:, planted] = 0.0
    n = np.full((systems, tasks), trials)
    from evalbayes import EvalData

    data = EvalData.from_arrays(n, rng.binomial(n, p))
    model = TaskEffectsModel()
    post = model.fit(data, draws=400, tune=400, chains=2, seed=4, check=False)
    prob = model.broken_probability(post.posterior, data).mean(("chain", "draw")).values
    assert np.all(prob[planted] > 0.9)
    solved = data.c.values.sum(axis=0) > 0
    assert np.all(prob[solved] < 0.1)
