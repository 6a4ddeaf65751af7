"""Scoring a new system on a calibrated item bank: grid posterior vs quadrature, refitting."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

from evalbayes.decisions._scoring import ability_grid_posterior, next_item


def reference_moments(n, c, a, b, g):
    """Mean and sd of theta by adaptive quadrature of N(0,1) x mean_m prod_t Bin."""

    def lik(theta):
        p = g + (1 - g) * expit(a * (theta - b))  # (M, T)
        return np.mean(np.prod(stats.binom.pmf(c, n, p), axis=1)) * stats.norm.pdf(theta)

    z = integrate.quad(lik, -8, 8, limit=200)[0]
    m1 = integrate.quad(lambda t: t * lik(t), -8, 8, limit=200)[0] / z
    m2 = integrate.quad(lambda t: t * t * lik(t), -8, 8, limit=200)[0] / z
    return m1, np.sqrt(m2 - m1**2)


@pytest.mark.parametrize("n_draws", [1, 5])
@pytest.mark.parametrize("guess", [0.0, 0.2])
def test_grid_posterior_equals_quadrature(n_draws, guess):
    rng = np.random.default_rng(n_draws)
    t = 6
    a = np.exp(rng.normal(0, 0.3, (n_draws, t)))
    b = rng.normal(0, 1, (n_draws, t))
    g = np.full((n_draws, t), guess)
    n = np.array([4, 4, 2, 8, 1, 3])
    c = np.array([4, 1, 0, 6, 1, 2])
    res = ability_grid_posterior(n, c, a, b, g, grid=np.linspace(-8, 8, 1601))
    mean, sd = reference_moments(n, c, a, b, g)
    assert res.eap == pytest.approx(mean, abs=1e-4)
    assert res.sd == pytest.approx(sd, abs=1e-4)
    assert res.lower < res.eap < res.upper


def test_no_responses_give_the_prior():
    res = ability_grid_posterior([1], [0], [[1e-9]], [[0.0]], [[0.0]], ci_prob=0.9)
    assert res.eap == pytest.approx(0.0, abs=1e-6)
    assert res.sd == pytest.approx(1.0, abs=1e-3)
    assert res.upper == pytest.approx(stats.norm.ppf(0.95), abs=0.01)


def test_next_item_maximises_information():
    b = np.array([[-2.0, -0.5, 0.4, 2.0]])
    a = np.ones_like(b)
    g = np.zeros_like(b)
    assert next_item(0.3, a, b, g) == 2
    assert next_item(0.3, a, b, g, exclude=[2]) == 1
    # 2PL: a steep item far from theta can beat a flat one at theta
    assert next_item(0.0, np.array([[0.3, 3.0]]), np.array([[0.0, 0.5]]),
                     np.zeros((1, 2))) == 1


@pytest.mark.slow
def test_scoring_without_refit_agrees_with_refitting():
    from evalbayes.data import EvalData
    from evalbayes.decisions._scoring import adaptive_test, score_new_system
    from evalbayes.models.irt._model import IRTModel

    rng = np.random.default_rng(5)
    n_sys, n_task = 16, 40
    theta = rng.normal(0, 1, n_sys + 1)
    b = rng.normal(0, 1.2, n_task)
    trials = np.full((n_sys + 1, n_task), 2)
    counts = rng.binomial(trials, expit(theta[:, None] - b))
    systems = [f"s{i}" for i in range(n_sys + 1)]
    tasks = [f"t{j}" for j in range(n_task)]
    bank = EvalData.from_arrays(trials[:-1], counts[:-1], systems=systems[:-1], tasks=tasks)
    options = {"draws": 500, "tune": 500, "chains": 2, "seed": 1, "progressbar": False}
    bank_fit = IRTModel(kind="1pl").fit(bank, **options)
    # the new system answered every second item; the refit sees the bank plus those cells
    keep = np.arange(n_task) % 2 == 0
    part_trials = trials.copy()
    part_trials[-1, ~keep] = 0
    part = EvalData.from_arrays(part_trials, counts * (part_trials > 0), systems=systems,
                                tasks=tasks)
    refit = IRTModel(kind="1pl").fit(part, **options)
    responses = {tasks[j]: (2, int(counts[-1, j])) for j in np.flatnonzero(keep)}
    score = score_new_system(bank_fit, responses)
    draws = refit.posterior["theta"].sel(system="s16").values.ravel()
    # Monte Carlo s.e. of the refit mean is ~ sd / sqrt(ESS ~ 500); allow 0.15 sd for
    # what the new system teaches about the items in the refit
    assert score.eap == pytest.approx(draws.mean(), abs=0.15 * draws.std() + 0.05)
    assert score.sd == pytest.approx(draws.std(), rel=0.15)
    steps = adaptive_test(bank_fit, lambda t: (2, int(counts[-1, tasks.index(t)])), 10)
    assert steps["sd"].iloc[-1] < steps["sd"].iloc[0]
