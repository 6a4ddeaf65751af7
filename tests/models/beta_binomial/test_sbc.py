"""Simulation-based calibration of the Beta-Binomial hierarchy (reduced CI version).

The full run is ``benchmarks/calibration/sbc_beta_binomial.py`` (results in
benchmarks/calibration/). Here
200 prior draws are fitted as 200 independent systems of one model (with independent
hyperpriors the posterior factorises, so this is 200 separate fits compiled once).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalbayes import EvalData
from evalbayes.metrics._pass import beta_pass_at_k
from evalbayes.models import BetaBinomialModel
from evalbayes.testing import rank_statistics, rank_uniformity

REPLICATES = 200
TASKS = 10
TRIALS = 8


def simulate_from_prior(model: BetaBinomialModel, seed: int):
    data, truth = model.simulate_prior(REPLICATES, TASKS, TRIALS, seed=seed)
    return data, truth["mu"], truth["kappa"]


def sbc_pvalues(fit_model: BetaBinomialModel, data: EvalData, mu, kappa) -> dict[str, float]:
    post = fit_model.fit(data, draws=1000, tune=1000, chains=2, seed=11, check=False)
    posterior = post.posterior.stack(sample=("chain", "draw")).transpose("sample", ...)
    population = post.pass_at_k(4, estimand="population").sel(k=4)
    population = population.stack(sample=("chain", "draw")).transpose("sample", ...)
    truth = {
        "mu": mu,
        "kappa": kappa,
        "pass@4": beta_pass_at_k(mu * kappa, (1 - mu) * kappa, 4)[:, 0],
    }
    draws = {
        "mu": posterior["mu"].values,
        "kappa": posterior["kappa"].values,
        "pass@4": population.values,
    }
    return {
        name: rank_uniformity(rank_statistics(truth[name], draws[name])).pvalue
        for name in truth
    }


def test_rank_statistics_reference():
    """Ranks count draws below the truth; uniform ranks pass, piled-up ranks fail."""
    draws = np.arange(99, dtype=float)[:, None].repeat(3, axis=1)
    ranks = rank_statistics(np.array([-1.0, 50.5, 1000.0]), draws, n_ranks=99)
    np.testing.assert_array_equal(ranks, [0, 51, 99])  # 0..50 lie below 50.5
    rng = np.random.default_rng(0)
    uniform = rng.integers(0, 100, size=1000)
    assert rank_uniformity(uniform).pvalue > 0.001
    expected = stats.chisquare(np.bincount(uniform // 10, minlength=10)).pvalue
    assert rank_uniformity(uniform).pvalue == pytest.approx(expected)
    assert rank_uniformity(np.full(200, 99)).pvalue < 1e-10


@pytest.mark.slow
def test_sbc_ranks_uniform_for_the_default_model():
    model = BetaBinomialModel()
    data, mu, kappa = simulate_from_prior(model, seed=20261129)
    pvalues = sbc_pvalues(model, data, mu, kappa)
    assert min(pvalues.values()) > 0.01, pvalues


@pytest.mark.slow
def test_sbc_detects_a_misspecified_prior():
    """Data from the default prior, fitted with a wrong prior on kappa: ranks not uniform."""
    data, mu, kappa = simulate_from_prior(BetaBinomialModel(), seed=20261129)
    wrong = BetaBinomialModel(log_kappa_prior=(3.5, 0.5))
    pvalues = sbc_pvalues(wrong, data, mu, kappa)
    assert pvalues["kappa"] < 0.01, pvalues
