"""Fast draws of the tasks estimand: closed-form moments and agreement with exact draws."""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import betaln

from evalbayes.curves_fast import beta_moment_curve, tasks_curve_fast


def test_moments_match_numerical_integration():
    a, b = np.array([0.7, 2.5]), np.array([1.3, 0.4])
    n, c, w = np.array([5, 5, 3]), np.array([0, 4, 3]), np.array([4.0, 2.0, 1.0])
    k = np.array([1.0, 3.0, 10.0])
    for metric in ("pass@k", "pass^k"):
        mean, var = beta_moment_curve(a, b, n, c, w, k, metric)
        for d in range(2):
            means, variances = [], []
            for kj in k:
                m_cells, v_cells = [], []
                for ni, ci in zip(n, c, strict=True):
                    dist = stats.beta(a[d] + ci, b[d] + ni - ci)
                    f = (lambda p, kj=kj: 1 - (1 - p) ** kj) if metric == "pass@k" else (
                        lambda p, kj=kj: p**kj)
                    m1 = dist.expect(f)
                    m2 = dist.expect(lambda p, f=f: f(p) ** 2)
                    m_cells.append(m1)
                    v_cells.append(m2 - m1**2)
                means.append(np.dot(w, m_cells) / w.sum())
                variances.append(np.dot(w, v_cells) / w.sum() ** 2)
            np.testing.assert_allclose(mean[d], means, rtol=1e-7)
            np.testing.assert_allclose(var[d], variances, rtol=1e-6)


def test_moment_of_large_k_matches_beta_function_ratio():
    a, b = np.array([0.3]), np.array([0.9])
    mean, _ = beta_moment_curve(a, b, np.array([32]), np.array([0]), np.ones(1),
                                np.array([1024.0]), "pass@k")
    ref = 1 - np.exp(betaln(a + 0, b + 32 + 1024) - betaln(a + 0, b + 32))
    np.testing.assert_allclose(mean[:, 0], ref, rtol=1e-10)


def _exact_reference(a, b, n, c, k, seed):
    """Independent exact draws: every task's rate from its conjugate Beta."""
    rng = np.random.default_rng(seed)
    p = rng.beta(a[..., None] + c, b[..., None] + n - c)  # (D, T)
    return np.stack([(1 - (1 - p) ** kj).mean(axis=-1) for kj in k], axis=-1)


def test_fast_draws_agree_with_exact_draws():
    rng = np.random.default_rng(0)
    tasks, draws = 400, 2000
    p_true = rng.beta(0.5, 0.6, tasks)
    n = np.ones((1, tasks), int) * 8
    c = rng.binomial(8, p_true)[None, :]
    a = rng.lognormal(np.log(0.5), 0.1, (1, draws, 1))
    b = rng.lognormal(np.log(0.6), 0.1, (1, draws, 1))
    k = np.array([1.0, 4.0, 64.0])
    fast = tasks_curve_fast(a, b, n, c, k, "pass@k", seed=1)[0, :, 0, :]
    ref = _exact_reference(a[0, :, 0], b[0, :, 0], n[0], c[0], k, seed=2)
    for j in range(len(k)):
        assert stats.ks_2samp(fast[:, j], ref[:, j]).pvalue > 1e-3
    exact = tasks_curve_fast(a, b, n, c, k, "pass@k", seed=1, max_skew=0.0)[0, :, 0, :]
    for j in range(len(k)):
        assert stats.ks_2samp(exact[:, j], ref[:, j]).pvalue > 1e-3
    assert np.all(np.diff(fast, axis=1) >= 0)


def test_missing_cells_are_left_out():
    n = np.array([[4, 0, 4]])
    c = np.array([[4, 0, 4]])
    a = np.full((1, 50, 1), 50.0)
    b = np.full((1, 50, 1), 1e-3)
    out = tasks_curve_fast(a, b, n, c, np.array([1.0]), "pass@k", seed=0)
    assert np.all(out > 0.99)
