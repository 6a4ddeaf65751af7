"""The rate grid's compiled node counts (``row_node_sums``), against closed-form multinomial
moments, a chi-square test on the exact node probabilities and numpy's own multinomial."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy import stats

from evalbayes.models.rate_grid._tasks_kernel import row_node_sums


def _counts(log_g, loglik, row_system, row_cells, seed, draws):
    """Per-node counts of every row's cells: ``values`` the identity, so the sums are the
    counts (summed over a system's rows), shape (draws, systems, nodes)."""
    support = log_g.shape[-1]
    log_g = np.ascontiguousarray(np.broadcast_to(log_g, (draws, *log_g.shape)))
    loglik = np.asarray(loglik, float)
    return row_node_sums(np.exp(log_g), log_g, np.asarray(row_system, np.int64),
                         np.asarray(row_cells, np.int64),
                         np.exp(loglik - loglik.max(axis=1, keepdims=True)), loglik,
                         np.eye(support), seed)


def _case(support=9):
    rng = np.random.default_rng(3)
    logits = rng.normal(0, 1.5, (2, support))
    log_g = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    grid = np.linspace(0.05, 0.95, support)
    n, c = np.array([4, 4, 1]), np.array([1, 3, 0])
    loglik = stats.binom.logpmf(c[:, None], n[:, None], grid)
    return log_g, loglik, np.array([0, 1, 1]), grid


def _node_prob(log_g, loglik):
    """The exact conditional P(p_j | n, c) proportional to g(p_j) Binomial(c | n, p_j)."""
    p = np.exp(log_g + loglik)
    return p / p.sum()


def test_counts_have_the_multinomial_mean_covariance_and_law():
    """One row per system (system 0): the counts' mean ``w P_j``, variance ``w P_j (1 - P_j)``
    and covariance ``-w P_i P_j`` within Monte Carlo error, and the pooled counts of 20,000
    draws pass a chi-square test against the exact node probabilities."""
    log_g, loglik, _, _ = _case()
    w, draws = 37, 20_000
    counts = _counts(log_g, loglik[:1], [0], [w], seed=11, draws=draws)[:, 0]
    assert np.all(counts.sum(axis=1) == w)
    prob = _node_prob(log_g[0], loglik[0])
    mean, var = w * prob, w * prob * (1 - prob)
    assert np.all(np.abs(counts.mean(axis=0) - mean) < 4.5 * np.sqrt(var / draws))
    # s.e. of a sample variance, (mu_4 - sigma^4) / draws, with the binomial marginal's mu_4
    mu4 = var * (1 + 3 * (w - 2) * prob * (1 - prob))
    assert np.all(np.abs(counts.var(axis=0, ddof=1) - var) < 4.5 * np.sqrt((mu4 - var**2) / draws))
    cov = np.cov(counts[:, 0], counts[:, 1])[0, 1]
    exact = -w * prob[0] * prob[1]
    # s.e. of a sample covariance: sqrt((Var X Var Y + Cov^2) / draws) (near-normal counts)
    assert abs(cov - exact) < 4.5 * math.sqrt((var[0] * var[1] + exact**2) / draws)
    pooled = counts.sum(axis=0)
    assert stats.chisquare(pooled, pooled.sum() * prob).pvalue > 1e-3


def test_rows_of_one_system_add_up_and_match_numpy_multinomial():
    """System 1 has two rows: its counts are the sum of two independent multinomials; a
    two-sample chi-square of each node's count against numpy's ``Generator.multinomial``."""
    log_g, loglik, row_system, _ = _case()
    cells, draws = [5, 60, 23], 20_000
    counts = _counts(log_g, loglik, row_system, cells, seed=4, draws=draws)[:, 1]
    rng = np.random.default_rng(0)
    reference = (rng.multinomial(60, _node_prob(log_g[1], loglik[1]), size=draws)
                 + rng.multinomial(23, _node_prob(log_g[1], loglik[2]), size=draws))
    for j in range(counts.shape[1]):
        values = np.union1d(counts[:, j], reference[:, j])
        table = np.array([[np.sum(x == v) for v in values] for x in (counts[:, j],
                                                                     reference[:, j])])
        table = table[:, table.sum(axis=0) >= 10]  # cells with enough counts for chi-square
        if table.shape[1] > 1:
            assert stats.chi2_contingency(table).pvalue > 1e-4, j


def test_a_row_whose_products_underflow_is_drawn_in_log_space():
    """``g`` tiny exactly where the row's likelihood is not: the products are all 0 and the
    row falls back to log space; the counts follow the exact conditional (here uniform on
    the last three nodes, e^-50 of that on the first)."""
    log_g = np.array([[0.0, -900.0, -900.0, -900.0]])
    loglik = np.array([[-950.0, 0.0, 0.0, 0.0]])
    counts = _counts(log_g, loglik, [0], [30], seed=2, draws=4000)[:, 0]
    assert np.all(counts.sum(axis=1) == 30)
    pooled = counts.sum(axis=0)
    assert pooled[0] == 0  # weight e^-50 of the others'
    assert stats.chisquare(pooled[1:], np.full(3, pooled.sum() / 3)).pvalue > 1e-3


def test_a_node_of_zero_weight_is_never_drawn():
    with np.errstate(divide="ignore"):
        log_g = np.log(np.array([[0.3, 0.0, 0.5, 0.0, 0.2]]))
    loglik = np.zeros((1, 5))
    counts = _counts(log_g, loglik, [0], [50], seed=1, draws=2000)[:, 0]
    assert counts[:, 1].sum() == 0 and counts[:, 3].sum() == 0
    assert np.all(counts.sum(axis=1) == 50)


def test_same_seed_same_numbers_whatever_the_thread_count():
    log_g, loglik, row_system, _ = _case()
    args = (log_g, loglik, row_system, [7, 300, 41])
    first = _counts(*args, seed=9, draws=500)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        alone = _counts(*args, seed=9, draws=500)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(first, alone)
    np.testing.assert_array_equal(first, _counts(*args, seed=9, draws=500))
    assert not np.array_equal(first, _counts(*args, seed=10, draws=500))


def test_draws_in_blocks_give_the_numbers_of_one_call():
    """``first_draw``: draws taken in blocks (the rate grid's "tasks" curve, a block of ``g``
    at a time) read the streams of their index in the whole posterior, so the blocks give the
    numbers of one call, and a block read as the first draws gives others."""
    log_g, loglik, row_system, _ = _case()
    rng = np.random.default_rng(4)
    log_g = log_g + rng.normal(0, 0.3, (300, *log_g.shape))  # a different g per draw
    log_g = np.ascontiguousarray(log_g - np.log(np.exp(log_g).sum(axis=-1, keepdims=True)))
    loglik = np.asarray(loglik, float)
    rest = (np.asarray(row_system, np.int64), np.array([7, 30, 41]),
            np.exp(loglik - loglik.max(axis=1, keepdims=True)), loglik,
            np.eye(log_g.shape[-1]), 9)
    whole = row_node_sums(np.exp(log_g), log_g, *rest)
    blocks = [row_node_sums(np.exp(log_g[s:s + 64]), log_g[s:s + 64], *rest, s)
              for s in range(0, 300, 64)]
    np.testing.assert_array_equal(np.concatenate(blocks), whole)
    assert not np.array_equal(row_node_sums(np.exp(log_g[64:128]), log_g[64:128], *rest),
                              whole[64:128])


@pytest.mark.parametrize("support", [2, 59, 64, 65])
def test_every_support_size_gives_whole_rows(support):
    """The search pads the cdf to a power of two: sizes at and past one are all handled."""
    rng = np.random.default_rng(support)
    log_g = rng.normal(0, 1, (1, support))
    loglik = rng.normal(0, 1, (1, support))
    counts = _counts(log_g, loglik, [0], [25], seed=3, draws=3000)[:, 0]
    assert np.all(counts.sum(axis=1) == 25)
    pooled = counts.sum(axis=0)
    expected = pooled.sum() * _node_prob(log_g[0], loglik[0])
    small = expected < 5  # pooled into one bin, as chi-square needs
    observed = np.append(pooled[~small], pooled[small].sum())
    expected = np.append(expected[~small], expected[small].sum())
    assert stats.chisquare(observed[expected > 0], expected[expected > 0]).pvalue > 1e-3
