"""Quadrature of the IRT population estimand against scipy.integrate and brute-force MC."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import integrate, special, stats

from evalbayes.models._quadrature import (
    NodeSet,
    beta_nodes,
    logistic_normal_mean,
    normal_hermite_nodes,
)
from evalbayes.models.irt._population import item_population_curve


def _f(p, k, metric):
    return 1.0 - (1.0 - p) ** k if metric == "pass@k" else p**k


def _quad_reference(c, v, g, k, metric):
    """E f(g + (1-g) sigmoid(u)), u ~ N(c, v), by adaptive quadrature (independent)."""

    def integrand(u):
        return _f(g + (1 - g) * special.expit(u), k, metric) * stats.norm.pdf(u, c, v)

    # pieces split where either factor is sharp: the logistic near 0, the normal near c
    lo, hi = c - 12 * v, c + 12 * v
    cuts = sorted({lo, hi, *(x for x in (-50.0, -5.0, 5.0, 50.0, c) if lo < x < hi)})
    return sum(
        integrate.quad(integrand, x0, x1, limit=1000, epsabs=1e-15)[0]
        for x0, x1 in itertools.pairwise(cuts)
    )


@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
@pytest.mark.parametrize("g", [0.0, 0.2])
def test_logistic_normal_mean_matches_adaptive_quadrature(metric, g):
    # flat items (small v), sharp items (v up to 500) and both regimes' boundary at v = 4
    worst = 0.0
    for c in (-30.0, -3.0, -0.5, 0.0, 0.7, 4.0, 25.0):
        for v in (0.01, 0.3, 1.0, 3.99, 4.01, 10.0, 60.0, 500.0):
            for k in (1.0, 2.5, 10.0):
                got = logistic_normal_mean(np.array(c), np.array(v), np.array(g), np.array([k]),
                                           metric)[0]
                worst = max(worst, abs(got - _quad_reference(c, v, g, k, metric)))
    # the module docstring's bound (measured: below 1e-8)
    assert worst < 1e-7


def test_gauss_hermite_alone_fails_on_sharp_items():
    """Why the b integral is not plain Gauss-Hermite: a sharp item (a sigma_b = 8)."""
    c, v = 0.3 * 2.0, 8.0  # theta = 0.3, a = 2, sigma_b = 4
    ref = _quad_reference(c, v, 0.0, 1.0, "pass@k")
    z, w = np.polynomial.hermite_e.hermegauss(40)
    gh = float((special.expit(c - v * z) * w).sum() / w.sum())
    ours = logistic_normal_mean(np.array(c), np.array(v), np.array(0.0), np.array([1.0]),
                                "pass@k")[0]
    assert abs(gh - ref) > 1e-3
    assert abs(ours - ref) < 1e-8


def test_beta_nodes_reproduce_beta_moments():
    """Gauss-Jacobi nodes: E[(1 - g)^k] = B(a, b + k) / B(a, b) (closed form)."""
    rule = beta_nodes(2.0, 8.0)
    for k in (1, 3, 10):
        exact = np.exp(special.betaln(2.0, 8.0 + k) - special.betaln(2.0, 8.0))
        assert np.isclose((rule.weights * (1 - rule.nodes) ** k).sum(), exact, rtol=1e-12)


def test_two_dimensional_rule_matches_nested_quadrature():
    """b and log a together (2PL) against nested scipy quadrature."""
    for theta, sigma_b, sigma_a in ((0.5, 2.0, 0.5), (-1.0, 3.0, 1.0)):
        def outer(za, theta=theta, sigma_b=sigma_b, sigma_a=sigma_a):
            a = np.exp(sigma_a * za)
            return _quad_reference(a * theta, a * sigma_b, 0.0, 1.0, "pass@k") * stats.norm.pdf(za)

        ref = integrate.quad(outer, -10, 10, limit=400, epsabs=1e-12)[0]
        got = item_population_curve(
            np.array([[theta]]), np.array([sigma_b]), np.array([sigma_a]),
            NodeSet(np.zeros(1), np.ones(1)), np.array([1.0]), "pass@k",
        )[0, 0, 0]  # fmt: skip
        assert abs(got - ref) < 1e-6


@pytest.mark.parametrize(
    ("kind", "metric", "k"),
    [("1pl", "pass@k", 1.0), ("2pl", "pass@k", 5.0), ("2pl", "pass^k", 3.0),
     ("3pl", "pass@k", 4.0), ("3pl", "pass^k", 2.0)],
)
def test_population_curve_matches_brute_force_monte_carlo(kind, metric, k):
    """Draw 400k new items from the population and average f(p); agree within 5 MC s.e."""
    rng = np.random.default_rng(7)
    theta = np.array([[-0.8, 0.4, 1.9], [0.1, -1.5, 0.7]])
    sigma_b = np.array([1.7, 2.6])
    sigma_a = None if kind == "1pl" else np.array([0.4, 0.8])
    guess = beta_nodes(2.0, 8.0) if kind == "3pl" else NodeSet(np.zeros(1), np.ones(1))
    got = item_population_curve(theta, sigma_b, sigma_a, guess, np.array([k]), metric)
    m = 400_000
    for d in range(2):
        b = sigma_b[d] * rng.standard_normal(m)
        a = np.ones(m) if sigma_a is None else np.exp(sigma_a[d] * rng.standard_normal(m))
        g = rng.beta(2.0, 8.0, m) if kind == "3pl" else np.zeros(m)
        for s in range(theta.shape[1]):
            vals = _f(g + (1 - g) * special.expit(a * (theta[d, s] - b)), k, metric)
            se = vals.std() / np.sqrt(m)
            assert abs(got[d, s, 0] - vals.mean()) < 5 * se


def test_hermite_nodes_are_normal_expectations():
    rule = normal_hermite_nodes()
    assert np.isclose(rule.weights.sum(), 1.0)
    assert np.isclose((rule.weights * rule.nodes**2).sum(), 1.0)
    assert np.isclose((rule.weights * rule.nodes**4).sum(), 3.0)
