"""Posterior ship/hold gate: closed forms on Normal and Beta draws, seed-001 counts beside."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalbayes.decisions._gate import counts_gate, gate_from_draws, posterior_gate
from evalbayes.frequentist._gate import ship_gate


def normal_draws(mean, sd, size=200_000, seed=0):
    return np.random.default_rng(seed).normal(mean, sd, size)


def test_probabilities_and_loss_match_normal_closed_forms():
    mean, sd, margin = 0.01, 0.02, 0.03
    d = normal_draws(mean, sd)
    res = gate_from_draws(d, margin=margin, threshold=0.95, max_loss=0.01)
    z = (mean + margin) / sd
    assert res.p_ship == pytest.approx(stats.norm.cdf(z), abs=4 * res.p_ship_se)
    # E[max(-margin - D, 0)] = sd * (phi(z) - z * (1 - Phi(z))) for D ~ N(mean, sd)
    loss = sd * (stats.norm.pdf(z) - z * stats.norm.sf(z))
    assert res.expected_loss == pytest.approx(loss, rel=0.03)
    assert res.decision == "ship" and res.exit_code == 0
    sup = gate_from_draws(d, mode="superiority", margin=0.0, threshold=0.95)
    assert sup.p_ship == pytest.approx(stats.norm.cdf(mean / sd), abs=0.004)
    assert sup.decision == "hold" and sup.exit_code == 1
    assert "P(B - A > 0)" in sup.headline


def test_dont_ship_when_decisively_worse_and_loss_blocks():
    d = normal_draws(-0.1, 0.02)
    assert gate_from_draws(d).decision == "dont_ship"
    # probability passes but the expected loss is too large for a tight max_loss
    d = normal_draws(0.05, 0.03)
    res = gate_from_draws(d, threshold=0.9, max_loss=1e-5)
    assert res.decision == "hold" and any("expected loss" in r for r in res.reasons)


def test_bad_input():
    with pytest.raises(ValueError, match="mode"):
        gate_from_draws([0.1, 0.2], mode="better")
    with pytest.raises(ValueError, match="threshold"):
        gate_from_draws([0.1, 0.2], threshold=1.0)
    with pytest.raises(ValueError, match="finite"):
        gate_from_draws([np.nan])


def test_counts_gate_closed_form_and_seed_examples():
    # no losses: P(theta > 2/3) = 1 - (2/3)^(w + 1)
    for w in range(1, 12):
        res = counts_gate(w, 0, 20)
        assert res.p_net_gain == pytest.approx(1 - (2 / 3) ** (w + 1))
    # seed 001: 8 clean wins is the smallest frequentist ship; the Bayesian gate ships at 7
    assert ship_gate(8, 0, 20).decision == "ship"
    assert ship_gate(7, 0, 20).decision == "hold"
    assert counts_gate(7, 0, 20).decision == "ship"
    assert counts_gate(6, 0, 20).decision == "hold"
    # breakage posterior Beta(1 + l, 1 + s - l) against tau by numerical CDF
    res = counts_gate(30, 3, 20, tau=0.1)
    assert res.p_breakage_ok == pytest.approx(stats.beta(4, 18).cdf(0.1))
    # win share posterior by Monte Carlo
    theta = np.random.default_rng(1).beta(31, 4, 400_000)
    assert res.p_net_gain == pytest.approx(np.mean(theta > 2 / 3), abs=0.003)
    assert counts_gate(0, 12, 20).decision == "dont_ship"


def test_posterior_gate_on_a_conjugate_fit(tinyagent_171):
    from evalbayes.models.beta_binomial._model import BetaBinomialModel

    fit = BetaBinomialModel(pooling="none").fit(tinyagent_171, draws=500, chains=2, seed=1)
    res = posterior_gate(fit, baseline="RL base", candidate="GRPO 80", mode="superiority",
                         margin=0.5)
    # per-task Beta(1 + c, 1 + n - c) posteriors: the mean difference is the closed form
    n, c = tinyagent_171.n.values, tinyagent_171.c.values
    means = ((1 + c) / (2 + n)).mean(axis=1)
    systems = tinyagent_171.systems
    diff = means[systems.index("GRPO 80")] - means[systems.index("RL base")]
    assert res.diff_mean == pytest.approx(diff, abs=0.005)
    assert res.decision == "ship" and res.info["estimand"] == "tasks"
    back = posterior_gate(fit, baseline="GRPO 80", candidate="RL base")
    assert back.decision == "dont_ship"
    with pytest.raises(ValueError, match="unknown systems"):
        posterior_gate(fit, baseline="RL base", candidate="GRPO 81")


def test_posterior_gate_defaults_to_the_population(tinyagent_171):
    """A model with a population gates on it unless told otherwise; a comparison keeps its
    own estimand, and asking for another one is an error, not a silent switch."""
    from evalbayes.models.beta_binomial._model import BetaBinomialModel
    from evalbayes.results._comparison import compare

    fit = BetaBinomialModel().fit(tinyagent_171, draws=500, chains=2, seed=1)
    res = posterior_gate(fit, baseline="RL base", candidate="GRPO 80")
    assert res.info["estimand"] == "population"
    tasks = compare(fit, k=1, estimand="tasks")
    assert posterior_gate(tasks, baseline="RL base", candidate="GRPO 80").info["estimand"] \
        == "tasks"
    with pytest.raises(ValueError, match="estimand 'tasks', not 'population'"):
        posterior_gate(tasks, baseline="RL base", candidate="GRPO 80", estimand="population")
