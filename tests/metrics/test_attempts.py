"""g-pass@k and maj@k against enumeration of k-subsets, exact expectations and integration."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from evalbayes.metrics._attempts import (
    beta_g_pass_at_k,
    g_pass_at_k,
    g_pass_m,
    maj_at_k,
    mean_maj_at_k,
    mg_pass_at_k,
    posterior_maj_at_k,
    prob_g_pass_at_k,
    prob_maj_at_k,
)
from evalbayes.metrics._pass import beta_pass_at_k, beta_pass_hat_k


def enumerate_g_pass(n: int, c: int, k: int, m: int) -> Fraction:
    trials = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    hits = sum(sum(trials[i] for i in s) >= m for s in subsets)
    return Fraction(hits, len(subsets))


@pytest.mark.parametrize(("n", "c"), [(6, 0), (6, 3), (7, 7), (8, 5), (9, 2)])
@pytest.mark.parametrize(("k", "m"), [(1, 1), (3, 1), (3, 2), (4, 4), (5, 3)])
def test_g_pass_equals_enumeration_of_subsets(n, c, k, m):
    got = g_pass_at_k(n, c, k, m)
    assert float(got) == pytest.approx(float(enumerate_g_pass(n, c, k, m)), abs=1e-12)


@pytest.mark.parametrize("p", [0.05, 0.4, 0.9])
def test_g_pass_estimator_is_unbiased_exactly(p):
    n, k, m = 12, 5, 3
    c = np.arange(n + 1)
    expectation = np.sum(stats.binom.pmf(c, n, p) * g_pass_at_k(n, c, k, m))
    truth = sum(stats.binom.pmf(j, k, p) for j in range(m, k + 1))
    assert expectation == pytest.approx(truth, abs=1e-12)
    assert float(prob_g_pass_at_k(p, k, m)) == pytest.approx(truth, abs=1e-12)


def test_g_pass_special_cases_are_pass_at_k_and_pass_hat_k():
    a, b, k = 1.7, 0.6, 6
    assert float(beta_g_pass_at_k(a, b, k, 1)) == pytest.approx(beta_pass_at_k(a, b, k)[0])
    assert float(beta_g_pass_at_k(a, b, k, k)) == pytest.approx(beta_pass_hat_k(a, b, k)[0])


@pytest.mark.parametrize(
    ("a", "b", "k", "m"), [(0.4, 0.3, 8, 4), (3.0, 2.0, 10, 7), (50, 2, 64, 60)]
)
def test_beta_g_pass_equals_numerical_integration(a, b, k, m):
    dens = stats.beta(a, b).pdf
    ref = integrate.quad(lambda p: stats.binom.sf(m - 1, k, p) * dens(p), 0, 1, limit=200)[0]
    assert float(beta_g_pass_at_k(a, b, k, m)) == pytest.approx(ref, rel=1e-7)


def test_tau_threshold_and_mg_pass():
    assert g_pass_m(5, tau=0.6) == 3
    assert g_pass_m(4, tau=0.5) == 2
    assert g_pass_m(4, tau=1.0) == 4
    with pytest.raises(ValueError, match="exactly one"):
        g_pass_m(4)
    n, c, k = 10, 6, 4
    # (2/k) * sum over i = ceil(k/2)+1 .. k = 3, 4, by enumeration
    ref = 2 / k * sum(float(enumerate_g_pass(n, c, k, i)) for i in (3, 4))
    assert float(mg_pass_at_k(n, c, k)) == pytest.approx(ref)


def test_g_pass_rejects_too_few_trials():
    with pytest.raises(ValueError, match="n=3 < k=4"):
        g_pass_at_k([5, 3], [1, 1], 4, 2)


def enumerate_maj(answers, reference, k) -> Fraction:
    total = Fraction(0)
    subsets = list(itertools.combinations(range(len(answers)), k))
    for s in subsets:
        counts = Counter(answers[i] for i in s)
        top = max(counts.values())
        winners = [a for a, v in counts.items() if v == top]
        if reference in winners:
            total += Fraction(1, len(winners))
    return total / len(subsets)


@pytest.mark.parametrize(
    "answers",
    [
        list("AABBC"),
        list("ABCDEFG"),
        list("AAAAB"),
        list("BBBCCA"),
        list("AABBCCDD"),
        list("ABABABCC"),
    ],
)
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_maj_at_k_equals_enumeration(answers, k):
    assert maj_at_k(answers, "A", k) == pytest.approx(float(enumerate_maj(answers, "A", k)))


def test_maj_at_k_reference_never_given_is_zero_and_mean():
    assert maj_at_k(list("BBC"), "A", 2) == 0.0
    got = mean_maj_at_k({"t1": list("AAB"), "t2": list("BBA")}, {"t1": "A", "t2": "A"}, 1)
    assert got == pytest.approx((2 / 3 + 1 / 3) / 2)


def test_maj_k1_is_share_of_correct_answers():
    assert maj_at_k(list("AABCD"), "A", 1) == pytest.approx(0.4)


@pytest.mark.parametrize("probs", [[0.5, 0.3, 0.2], [0.3, 0.35, 0.35], [0.2, 0.1, 0.1, 0.6]])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_prob_maj_at_k_equals_multinomial_enumeration(probs, k):
    ref = 0.0
    for draw in itertools.product(range(len(probs)), repeat=k):
        weight = math.prod(probs[i] for i in draw)
        counts = Counter(draw)
        top = max(counts.values())
        winners = [a for a, v in counts.items() if v == top]
        if 0 in winners:
            ref += weight / len(winners)
    assert prob_maj_at_k(probs, k) == pytest.approx(ref, abs=1e-12)


def test_maj_estimator_is_unbiased_by_simulation():
    """E over simulated trial sets of the subset estimator = the multinomial probability."""
    rng = np.random.default_rng(3)
    probs, n, k = np.array([0.45, 0.35, 0.2]), 7, 3
    values = [maj_at_k(list(rng.choice(3, size=n, p=probs)), 0, k) for _ in range(4000)]
    se = np.std(values, ddof=1) / np.sqrt(len(values))
    assert abs(np.mean(values) - prob_maj_at_k(probs, k)) < 4 * se


def test_posterior_maj_concentrates_on_observed_distribution():
    answers = ["A"] * 300 + ["B"] * 200 + ["C"] * 100
    draws = posterior_maj_at_k(answers, "A", 3, draws=200, seed=1)
    truth = prob_maj_at_k([0.5, 1 / 3, 1 / 6], 3)
    assert abs(draws.mean() - truth) < 4 * draws.std() / np.sqrt(200) + 0.01
    assert draws.std() < 0.05
