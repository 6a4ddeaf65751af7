"""The scipy.special-based distribution helpers against scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalbayes.frequentist._dist import (
    beta_isf,
    beta_ppf,
    binom_cdf,
    binom_cdf_bound,
    binom_pmf,
    binom_sf,
    norm_isf,
    norm_ppf,
)


def test_normal_quantiles():
    q = np.array([1e-10, 0.001, 0.025, 0.1, 0.5, 0.8, 0.975])
    np.testing.assert_allclose(norm_ppf(q), stats.norm.ppf(q), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(norm_isf(q), stats.norm.isf(q), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", [0.0, 1e-3, 0.3, 0.5, 2 / 3, 0.999, 1.0])
def test_binomial_functions(p):
    for n in (0, 1, 2, 7, 50, 400):
        x = np.arange(-2, n + 3)
        np.testing.assert_allclose(binom_cdf(x, n, p), stats.binom.cdf(x, n, p), atol=1e-12)
        np.testing.assert_allclose(binom_sf(x, n, p), stats.binom.sf(x, n, p), atol=1e-12)
        np.testing.assert_allclose(binom_pmf(x, n, p), stats.binom.pmf(x, n, p), atol=1e-12)


@pytest.mark.parametrize("q", [0.005, 0.025, 0.05, 0.3])
def test_cdf_bound(q):
    n = np.arange(0, 300)
    bound = binom_cdf_bound(q, n, 0.5)
    for ni, b in zip(n, bound, strict=True):
        assert b == -1 or stats.binom.cdf(b, ni, 0.5) < q
        assert b + 1 > ni or stats.binom.cdf(b + 1, ni, 0.5) >= q


def test_beta_quantiles():
    for a, b in [(1, 10), (3, 28), (30, 2), (0.5, 0.5)]:
        for q in (0.005, 0.025, 0.5):
            assert beta_ppf(q, a, b) == pytest.approx(stats.beta.ppf(q, a, b), abs=1e-12)
            assert beta_isf(q, a, b) == pytest.approx(stats.beta.isf(q, a, b), abs=1e-12)
