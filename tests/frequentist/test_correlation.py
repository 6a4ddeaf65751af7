"""Intra-task correlation and design effect (seeds 000/003 §17.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalbayes.datasets import load
from evalbayes.frequentist import IntraTaskCorrelation, intra_task_correlation


def _seed_formula(c: np.ndarray, n: int) -> tuple[float, float]:
    """Seed 003 §17.3 code, transcribed: torch var is ddof=1."""
    rates = c / n
    task_var = max(0.0, rates.var(ddof=1) - (rates * (1 - rates)).mean() / (n - 1))
    rho = task_var / (rates.mean() * (1 - rates.mean()))
    return rho, 1 + (n - 1) * rho


def test_section_17_3_printed_values():
    """Seed 003 §17.3 output: RL base rho 0.01, deff 1.2; GRPO 80 rho 0.63, deff 20.4."""
    data = load("tinyagent", experiment="sec17.1")
    base = intra_task_correlation(data.n.sel(system="RL base"), data.c.sel(system="RL base"))
    grpo = intra_task_correlation(data.n.sel(system="GRPO 80"), data.c.sel(system="GRPO 80"))
    assert f"{base.rho:.2f}" == "0.01" and f"{base.design_effect:.1f}" == "1.2"
    assert f"{grpo.rho:.2f}" == "0.63" and f"{grpo.design_effect:.1f}" == "20.4"
    assert isinstance(grpo, IntraTaskCorrelation)
    assert grpo.mean == pytest.approx(0.81875) and grpo.trials_per_task == 32
    assert grpo.n_tasks == 10


def test_equal_n_reduces_to_the_seed_formula():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 80))
        c = rng.binomial(n, rng.beta(0.5, 0.5, size=int(rng.integers(2, 40))))
        if c.sum() in (0, c.size * n):
            continue
        rho, deff = _seed_formula(c, n)
        got = intra_task_correlation(np.full(c.size, n), c)
        assert got.rho == pytest.approx(rho, rel=1e-12, abs=1e-15)
        assert got.design_effect == pytest.approx(deff, rel=1e-12)


def test_unequal_n_task_variance_is_unbiased_given_the_task_rates():
    """Law of total variance: E[var(r) - mean(r(1-r)/(n-1)) | p] = var(p) (ddof=1).

    Fixed true rates with a wide spread (the clamp at 0 never binds); tolerance 4 standard
    errors of the simulated mean.
    """
    rng = np.random.default_rng(42)
    p = np.array([0.02, 0.98, 0.1, 0.9, 0.3, 0.7, 0.5, 0.05])
    n = np.array([3, 4, 5, 8, 13, 21, 34, 55])
    reps = 20_000
    estimates = np.empty(reps)
    for i in range(reps):
        c = rng.binomial(n, p)
        estimates[i] = intra_task_correlation(n, c).task_variance
    assert (estimates > 0).all()
    se = estimates.std(ddof=1) / math.sqrt(reps)
    assert abs(estimates.mean() - p.var(ddof=1)) <= 4 * se


def test_unequal_n_design_effect_is_the_variance_ratio():
    """deff = Var(mean r) / (mu(1-mu)/sum n) for task rates drawn from a population.

    Population Beta(a, b): mu = a/(a+b), rho = 1/(a+b+1). Var(mean r) =
    (1/N^2) sum_j (sigma^2 + E[p(1-p)]/n_j); the function's formula evaluated at the true
    rho must equal that ratio.
    """
    a, b = 0.4, 0.3
    mu = a / (a + b)
    rho = 1 / (a + b + 1)
    sigma2 = rho * mu * (1 - mu)
    n = np.array([2, 5, 10, 40, 64, 100])
    var_mean = np.sum(sigma2 + (mu * (1 - mu) - sigma2) / n) / n.size**2
    ratio = var_mean / (mu * (1 - mu) / n.sum())
    n_a, n_h = n.mean(), 1 / np.mean(1 / n)
    assert n_a * (rho + (1 - rho) / n_h) == pytest.approx(ratio, rel=1e-12)
    # and the function uses exactly that form: check on data whose estimate is rho_hat
    c = np.array([1, 4, 2, 30, 50, 99])
    got = intra_task_correlation(n, c)
    assert got.design_effect == pytest.approx(n_a * (got.rho + (1 - got.rho) / n_h), rel=1e-12)


def test_homogeneous_tasks_clamp_at_zero():
    got = intra_task_correlation([32] * 5, [16] * 5)
    assert got.task_variance == 0.0 and got.rho == 0.0 and got.design_effect == 1.0


def test_all_pass_gives_undefined_rho():
    got = intra_task_correlation([4, 4, 4], [4, 4, 4])
    assert math.isnan(got.rho) and math.isnan(got.design_effect) and got.mean == 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"n=1 at index 1: .* at least two trials"):
        intra_task_correlation([5, 1], [2, 1])
    with pytest.raises(ValueError, match="at least two tasks"):
        intra_task_correlation([5], [2])
    with pytest.raises(ValueError, match="1-D"):
        intra_task_correlation([[5, 5]], [[2, 2]])
    with pytest.raises(ValueError, match="c=6 > n=5"):
        intra_task_correlation([5, 5], [6, 1])
    with pytest.raises(ValueError, match="n=0"):
        intra_task_correlation([5, 0], [1, 0])
