"""Bootstrap intervals against the exact bootstrap distribution.

The percentile bootstrap estimates quantiles of the *bootstrap distribution* (the mean of N
draws with replacement). For small data that distribution is computed exactly here, by
convolution or enumeration, and the Monte Carlo bounds are checked against it: the exact CDF
just below / at a bound must bracket the nominal tail within 4 binomial standard errors of a
quantile estimated from ``m`` resamples, ``4 sqrt(q (1 - q) / m) + 1/m``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from evalbayes.datasets import load
from evalbayes.frequentist import (
    BootstrapResult,
    bootstrap_ci,
    episode_bootstrap_ci,
    paired_bootstrap_ci,
    task_bootstrap_ci,
)

SEC17_1 = {
    "RL base": np.array([3, 8, 1, 6, 4, 4, 6, 2, 7, 5]),
    "GRPO 80": np.array([31, 32, 31, 30, 29, 17, 31, 1, 29, 31]),
}


def _sum_pmf(ints: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact pmf of the sum of len(ints) draws with replacement from integer values."""
    offset = int(ints.min())
    shifted = ints - offset
    single = np.bincount(shifted) / ints.size
    pmf = np.array([1.0])
    for _ in range(ints.size):
        pmf = np.convolve(pmf, single)
    return pmf, offset * ints.size


def _brackets(cdf_below: float, cdf_at: float, q: float, m: int) -> bool:
    delta = 4 * math.sqrt(q * (1 - q) / m) + 1 / m
    return cdf_below <= q + delta and cdf_at >= q - delta


def _check_against_pmf(result, pmf, offset, scale, m):
    """pmf over integer totals offset..; a mean x corresponds to total x * scale."""
    cdf = np.cumsum(pmf)

    def cdf_at(total: float) -> float:
        i = math.floor(total + 1e-9) - offset
        return 0.0 if i < 0 else float(cdf[min(i, cdf.size - 1)])

    def cdf_below(total: float) -> float:
        return cdf_at(math.ceil(total - 1e-9) - 1)

    tail = (1 - result.ci_prob) / 2
    lo, hi = result.lower * scale, result.upper * scale
    assert _brackets(cdf_below(lo), cdf_at(lo), tail, m)
    assert _brackets(cdf_below(hi), cdf_at(hi), 1 - tail, m)


@pytest.mark.parametrize("system", list(SEC17_1))
def test_task_bootstrap_matches_exact_distribution(system):
    """§17.3 'resample tasks' on the §17.1 counts (32 episodes per task)."""
    c = SEC17_1[system]
    m = 20_000
    result = task_bootstrap_ci(np.full(10, 32), c, n_resamples=m, seed=3)
    assert result.unit == "tasks" and result.n_units == 10
    assert result.estimate == pytest.approx(c.mean() / 32)
    pmf, offset = _sum_pmf(c)
    _check_against_pmf(result, pmf, offset, 320, m)


def test_seed_printed_intervals_are_consistent_with_exact_distribution():
    """Seed 003 §17.3 printed tasks/episodes intervals (1,000 resamples, 3 decimals)."""
    printed = {
        "RL base": {"tasks": (0.106, 0.188), "episodes": (0.103, 0.178)},
        "GRPO 80": {"tasks": (0.603, 0.959), "episodes": (0.775, 0.856)},
    }
    m, half_digit = 1000, 0.0005
    for system, intervals in printed.items():
        c = SEC17_1[system]
        task_pmf, offset = _sum_pmf(c)
        episode_pmf = stats.binom.pmf(np.arange(321), 320, c.sum() / 320)
        for unit, pmf, off in (("tasks", task_pmf, offset), ("episodes", episode_pmf, 0)):
            cdf = np.cumsum(pmf)
            lo, hi = intervals[unit]
            for bound, q in ((lo, 0.025), (hi, 0.975)):
                at = cdf[min(math.floor((bound + half_digit) * 320) - off, cdf.size - 1)]
                below = cdf[math.ceil((bound - half_digit) * 320) - 1 - off]
                assert _brackets(below, at, q, m)


@pytest.mark.parametrize("system", list(SEC17_1))
def test_episode_bootstrap_is_the_binomial_resample(system):
    c = SEC17_1[system]
    m = 20_000
    result = episode_bootstrap_ci(np.full(10, 32), c, n_resamples=m, seed=5)
    assert result.unit == "episodes" and result.n_units == 320
    assert result.estimate == pytest.approx(c.sum() / 320)
    pmf = stats.binom.pmf(np.arange(321), 320, c.sum() / 320)
    _check_against_pmf(result, pmf, 0, 320, m)
    # Resampling the 320 outcomes explicitly gives the same distribution.
    outcomes = np.concatenate([np.r_[np.ones(ci), np.zeros(32 - ci)] for ci in c])
    explicit = bootstrap_ci(outcomes, n_resamples=m, seed=9)
    _check_against_pmf(explicit, pmf, 0, 320, m)


def test_task_interval_wider_than_episode_interval_for_heterogeneous_tasks():
    """§17.3: for GRPO 80 (rho 0.63) the task-level interval is several times wider."""
    n = np.full(10, 32)
    tasks = task_bootstrap_ci(n, SEC17_1["GRPO 80"], seed=0)
    episodes = episode_bootstrap_ci(n, SEC17_1["GRPO 80"], seed=0)
    ratio = (tasks.upper - tasks.lower) / (episodes.upper - episodes.lower)
    assert ratio > 3  # seed: 4.4 (MC intervals); sqrt(design effect 20.4) = 4.5


def test_cluster_bootstrap_matches_enumeration():
    """Clusters of unequal size: enumerate all G^G ordered cluster resamples exactly."""
    values = np.array([0.0, 1.0, 1.0, 0.5, 0.25, 1.0, 0.0])
    clusters = np.array(["a", "a", "b", "c", "c", "c", "d"])
    m = 20_000
    result = bootstrap_ci(values, clusters=clusters, n_resamples=m, seed=11)
    assert result.unit == "clusters" and result.n_units == 4
    sums = {"a": 1.0, "b": 1.0, "c": 1.75, "d": 0.0}
    sizes = {"a": 2, "b": 1, "c": 3, "d": 1}
    means = np.array(
        [
            sum(sums[g] for g in pick) / sum(sizes[g] for g in pick)
            for pick in itertools.product("abcd", repeat=4)
        ]
    )
    for bound, q in ((result.lower, 0.025), (result.upper, 0.975)):
        below = np.mean(means < bound - 1e-12)
        at = np.mean(means <= bound + 1e-12)
        assert _brackets(below, at, q, m)


def test_singleton_clusters_equal_plain_bootstrap():
    values = np.random.default_rng(0).random(15)
    plain = bootstrap_ci(values, n_resamples=2000, seed=4)
    clustered = bootstrap_ci(values, clusters=np.arange(15), n_resamples=2000, seed=4)
    assert clustered.lower == pytest.approx(plain.lower, rel=1e-12)
    assert clustered.upper == pytest.approx(plain.upper, rel=1e-12)


def test_paired_bootstrap_matches_exact_distribution():
    a = np.array([10, 20, 18, 5, 30, 31, 2, 12]) / 32
    b = np.array([12, 25, 18, 9, 31, 30, 8, 13]) / 32
    m = 20_000
    result = paired_bootstrap_ci(a, b, n_resamples=m, seed=2)
    assert result.estimate == pytest.approx(np.mean(b - a))
    diffs = np.round((b - a) * 32).astype(int)
    pmf, offset = _sum_pmf(diffs)
    _check_against_pmf(result, pmf, offset, 32 * 8, m)
    same = bootstrap_ci(b - a, n_resamples=m, seed=2)
    assert (same.lower, same.upper) == (result.lower, result.upper)


def test_seeded_and_reproducible():
    values = np.random.default_rng(1).random(30)
    first = bootstrap_ci(values, n_resamples=500, seed=7)
    again = bootstrap_ci(values, n_resamples=500, seed=7)
    other = bootstrap_ci(values, n_resamples=500, seed=8)
    assert first == again
    assert (first.lower, first.upper) != (other.lower, other.upper)
    gen_a = bootstrap_ci(values, n_resamples=500, seed=np.random.default_rng(7))
    assert (gen_a.lower, gen_a.upper) == (first.lower, first.upper)
    assert isinstance(first, BootstrapResult) and first.n_resamples == 500


def test_many_resamples_are_blocked_not_looped():
    values = np.arange(5000, dtype=float)
    result = bootstrap_ci(values, n_resamples=3000, seed=0)  # 15e6 indices, several blocks
    sd = values.std() / math.sqrt(values.size)
    assert result.lower < values.mean() < result.upper
    # a 95% interval of a near-normal mean spans about 2 x 1.96 sd
    assert (result.upper - result.lower) / (2 * 1.96 * sd) == pytest.approx(1, abs=0.1)


def test_bad_inputs():
    with pytest.raises(ValueError, match="values is empty"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match=r"values is nan at index 1"):
        bootstrap_ci([0.1, np.nan])
    with pytest.raises(ValueError, match="one label per unit"):
        bootstrap_ci([0.1, 0.2], clusters=["a"])
    with pytest.raises(ValueError, match="cluster label at index 1 is missing"):
        bootstrap_ci([0.1, 0.2], clusters=np.array(["a", None], dtype=object))
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci([0.1, 0.2], n_resamples=0)
    with pytest.raises(ValueError, match="ci_prob"):
        bootstrap_ci([0.1, 0.2], ci_prob=95)
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap_ci([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="seed must be non-negative"):
        bootstrap_ci([0.1, 0.2], seed=-1)
    with pytest.raises(ValueError, match="seed must be an int"):
        bootstrap_ci([0.1, 0.2], seed=1.5)
    with pytest.raises(ValueError, match="n=0"):
        task_bootstrap_ci([5, 0], [1, 0])
    with pytest.raises(ValueError, match="1-D"):
        task_bootstrap_ci([[5]], [[1]])
    with pytest.raises(ValueError, match="c=6 > n=5"):
        episode_bootstrap_ci([5], [6])


def test_tinyagent_loads_the_same_counts():
    data = load("tinyagent", experiment="sec17.1")
    for system, c in SEC17_1.items():
        np.testing.assert_array_equal(data.c.sel(system=system).values, c)


def test_few_distinct_units_resample_their_counts():
    """Units with few distinct (sum, size) values are resampled as Multinomial counts of
    those values: the distribution of the resampled ratio must match that of N indices
    drawn with replacement, computed here by exact enumeration of the counts' Multinomial
    (scipy.stats.multinomial) over the 3 distinct values."""
    from evalbayes.frequentist._bootstrap import _resampled_means

    sums = np.array([0.0] * 6 + [3.0] * 4 + [5.0] * 2)
    sizes = np.array([4.0] * 6 + [4.0] * 4 + [8.0] * 2)
    n = sums.size
    m = 40_000
    drawn = _resampled_means(sums, sizes, m, np.random.default_rng(7))
    probs = np.array([6, 4, 2]) / n
    exact: dict[float, float] = {}
    for a in range(n + 1):
        for b in range(n + 1 - a):
            c = n - a - b
            ratio = round((3.0 * b + 5.0 * c) / (4.0 * a + 4.0 * b + 8.0 * c), 12)
            exact[ratio] = exact.get(ratio, 0.0) + stats.multinomial.pmf([a, b, c], n, probs)
    values = np.array(sorted(exact))
    cdf = np.cumsum([exact[v] for v in values])
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):
        x = values[np.searchsorted(cdf, q)]
        share = (np.round(drawn, 12) <= x).mean()
        at = cdf[np.searchsorted(values, x)]
        assert abs(share - at) <= 4 * math.sqrt(at * (1 - at) / m)
