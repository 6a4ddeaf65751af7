"""The logit-normal-binomial cell (evalbayes.models.logit_normal) against independent references:
scipy.integrate.quad for the marginal likelihood and the population curve, a brute-force grid
posterior for the conditional draws, and the PyTensor graph against the NumPy reference."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit, gammaln

from evalbayes.models.logit_normal import (
    cell_mode,
    conditional_logit_draws,
    log_marginal,
    population_curve,
    task_log_likelihood,
)


def _log_density(x, mu, sigma, n, c):
    """log Binomial(c | n, sigmoid(x)) + log N(x | mu, sigma), written out independently."""
    return (
        stats.binom.logpmf(c, n, expit(x)) if n > 0 else 0.0
    ) + stats.norm.logpdf(x, mu, sigma)


def _quad_log_marginal(mu, sigma, n, c):
    """log of the integral by scipy.integrate.quad, split at the mode, relative to the peak."""
    x0 = float(cell_mode(mu, sigma, n, c, steps=60)[0])
    # the binomial log pmf in closed form (stats.binom.logpmf loses precision at p ~ 1e-300)
    def log_f(x):
        return (
            gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1)
            + c * -np.logaddexp(0, -x) + (n - c) * -np.logaddexp(0, x)
            + stats.norm.logpdf(x, mu, sigma)
        )

    peak = log_f(x0)
    total = 0.0
    pieces = (x0 - 60 * sigma, x0 - 1.0, x0, x0 + 1.0, x0 + 60 * sigma)
    for a, b in itertools.pairwise(pieces):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            total += integrate.quad(
                lambda x: np.exp(log_f(x) - peak), a, b, limit=400, epsabs=0, epsrel=1e-12
            )[0]
    return np.log(total) + peak


GRID = [
    (mu, sigma, n, c)
    for mu in (-8.0, -2.0, 0.0, 5.0)
    for sigma in (0.3, 1.0, 3.0)
    for n, c in ((1, 0), (1, 1), (16, 0), (16, 5), (1000, 0), (1000, 1), (1000, 500),
                 (1000, 999), (1000, 1000), (1100, 17))
]


def test_log_marginal_matches_quad_including_many_trials():
    ref = np.array([_quad_log_marginal(*case) for case in GRID])
    got = np.array([log_marginal(*case) for case in GRID])
    # 20 nodes: measured worst 3.9e-4 nats on this kind of grid (module docstring)
    assert np.max(np.abs(got - ref)) < 1e-3
    # the error is quadrature error: more nodes shrink it
    fine = np.array([log_marginal(*case, nodes=48) for case in GRID])
    assert np.max(np.abs(fine - ref)) < 1e-6


def test_log_marginal_single_trial_is_the_logistic_normal_mean():
    # P(c = 1) = E[sigmoid(mu + sigma z)], an independent 1-D integral
    for mu, sigma in ((0.3, 1.0), (-4.0, 2.0), (3.0, 0.5)):
        p1 = integrate.quad(
            lambda z, mu=mu, sigma=sigma: expit(mu + sigma * z) * stats.norm.pdf(z), -12, 12
        )[0]
        assert np.exp(log_marginal(mu, sigma, 1, 1)) == pytest.approx(p1, rel=1e-4)
        assert np.exp(log_marginal(mu, sigma, 1, 0)) == pytest.approx(1 - p1, rel=1e-4)


def test_unobserved_cell_has_zero_log_likelihood():
    assert log_marginal(1.5, 2.0, 0, 0) == pytest.approx(0.0, abs=1e-4)


def test_mode_converges_on_extremes():
    rng = np.random.default_rng(0)
    size = 20_000
    mu = rng.uniform(-20, 20, size)
    sigma = np.exp(rng.uniform(-3, 2, size))
    n = rng.choice([1, 2, 5, 32, 1000, 5000], size).astype(float)
    c = np.minimum(np.floor(rng.uniform(0, 1, size) ** 3 * (n + 1)), n)
    c = np.where(rng.random(size) < 0.3, n - c, c)
    x, s = cell_mode(mu, sigma, n, c)
    grad = c - n * expit(x) - (x - mu) / sigma**2
    assert np.max(np.abs(grad) * s) < 1e-6


@pytest.mark.parametrize(
    "mu, sigma, n, c",
    [(0.0, 1.0, 10, 3), (2.0, 2.0, 1000, 0), (-3.0, 1.5, 1, 1), (-1.0, 1.0, 1100, 1099)],
)
def test_conditional_draws_match_a_brute_force_grid_posterior(mu, sigma, n, c):
    rng = np.random.default_rng(1)
    size = 100_000
    x = conditional_logit_draws(mu, sigma, n, c, rng.random(size), rng.random(size))
    # brute force: the normalised density on a fine uniform grid
    lo, hi = mu - 12 * sigma - 20, mu + 12 * sigma + 20
    grid = np.linspace(lo, hi, 400_001)
    logd = np.array([_log_density(g, mu, sigma, n, c) for g in grid[::1000]])
    # coarse check that the grid covers the mass, then the fine CDF
    assert np.isfinite(logd).any()
    log_f = (
        c * -np.logaddexp(0, -grid) + (n - c) * -np.logaddexp(0, grid)
        - 0.5 * ((grid - mu) / sigma) ** 2
    )
    dens = np.exp(log_f - log_f.max())
    cdf = np.cumsum(dens)
    cdf /= cdf[-1]
    ks = stats.kstest(x, lambda q: np.interp(q, grid, cdf))
    # KS at 100,000 draws: 1.63 / sqrt(N) = 0.005 is the 1 % critical value; the histogram
    # approximation of 64 bins adds < 0.002
    assert ks.statistic < 0.007
    mean = np.sum(grid * dens) / dens.sum()
    sd = np.sqrt(np.sum((grid - mean) ** 2 * dens) / dens.sum())
    assert abs(x.mean() - mean) < 5 * sd / np.sqrt(size) + 0.002 * sd
    assert x.std() == pytest.approx(sd, rel=0.02)


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
def test_population_curve_matches_quad(metric):
    theta = np.array([[-1.0, 0.5, 3.0]])
    total = np.array([2.5])
    pi0 = np.array([0.1])
    ks = np.array([1.0, 4.0, 64.0])
    got = population_curve(theta, total, pi0, ks, metric)
    for s, th in enumerate(theta[0]):
        for j, k in enumerate(ks):
            def f(z, th=th, k=k):
                p = expit(th + total[0] * z)
                value = 1 - (1 - p) ** k if metric == "pass@k" else p**k
                return value * stats.norm.pdf(z)

            ref = (1 - pi0[0]) * integrate.quad(f, -12, 12, limit=200)[0]
            assert got[0, s, j] == pytest.approx(ref, abs=1e-7)


def test_task_log_likelihood_is_the_mixture():
    cell_ll = np.array([[-3.0, -0.5]])  # one draw, two tasks
    all_zero = np.array([True, False])
    pi0 = 0.2
    got = task_log_likelihood(cell_ll, all_zero, np.log([pi0]), np.log1p([-pi0]))
    assert got[0, 0] == pytest.approx(np.log(pi0 + (1 - pi0) * np.exp(-3.0)))
    assert got[0, 1] == pytest.approx(np.log(1 - pi0) - 0.5)
