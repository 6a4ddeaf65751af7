"""The compiled "tasks" curve: exact conjugate draws, checked against independent references."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
import xarray as xr
from scipy import stats
from scipy.special import betaln

from evalbayes.data import EvalData
from evalbayes.models._base import Model
from evalbayes.models._splitmix import word
from evalbayes.models.beta_binomial import _model as beta_binomial
from evalbayes.models.beta_binomial._kernel import _boost, _gamma_batch
from evalbayes.models.beta_binomial._model import BetaBinomialModel, _unique_cells
from evalbayes.models.beta_binomial._tasks_curve import tasks_curve_fast, tasks_curves_fast


def _curve(a, b, n, c, k, metric, seed):
    """``tasks_curve_fast`` on (system, task) counts, collapsed as the model collapses them."""
    cells = _unique_cells(EvalData.from_arrays(n, c))
    return tasks_curve_fast(a, b, cells.system, cells.n, cells.c, cells.weight, k, metric,
                            seed)


def _random_case(seed, systems, tasks, trials, p, draws):
    """Counts with success probability ``p`` and log-normal ``(a, b)`` draws (2 chains)."""
    rng = np.random.default_rng(seed)
    n = np.full((systems, tasks), trials)
    c = rng.binomial(trials, p, size=(systems, tasks))
    a = rng.lognormal(0, 0.3, (2, draws, systems))
    b = rng.lognormal(0, 0.3, (2, draws, systems))
    return n, c, a, b


@pytest.mark.parametrize(
    ("shape_a", "shape_b"), [(0.02, 1.01), (0.3, 8.7), (1.3, 0.2), (5.0, 40.0), (2.0, 1.0)]
)
@pytest.mark.parametrize("metric", ["pass@k", "pass^k"])
def test_one_task_draws_follow_the_conjugate_beta(shape_a, shape_b, metric):
    # one task, n = 1: p ~ Beta(a + c, b + 1 - c); shapes below 1 exercise the Gamma boost
    # on each side
    draws = 20_000
    c = 0 if shape_b > 1 else 1
    a = np.full((1, draws, 1), shape_a - c)
    b = np.full((1, draws, 1), shape_b - 1.0 + c)
    out = _curve(a, b, np.array([[1]]), np.array([[c]]), np.array([1.0, 3.0]), metric,
                 seed=3)[0, :, 0]
    # pass@1 = pass^1 = p, against NumPy's Beta generator; both censored at 1e-12 (pass@1 is
    # computed as 1 - (1 - p), which is 0 for p < 1e-16, immaterial in a task average)
    reference = np.random.default_rng(0).beta(shape_a, shape_b, draws)
    floor = 1e-12
    assert stats.ks_2samp(np.maximum(out[:, 0], floor),
                          np.maximum(reference, floor)).pvalue > 1e-3
    # k = 3: pass^3 = p^3, pass@3 = 1 - (1 - p)^3; exact means from Beta-function ratios
    if metric == "pass^k":
        mean3 = np.exp(betaln(shape_a + 3, shape_b) - betaln(shape_a, shape_b))
    else:
        mean3 = 1 - np.exp(betaln(shape_a, shape_b + 3) - betaln(shape_a, shape_b))
    se = out[:, 1].std() / np.sqrt(draws)
    assert abs(out[:, 1].mean() - mean3) < 4.5 * se


def test_task_average_mean_matches_closed_form():
    # per draw, E[Y_k | a, b] = 1 - sum_t B(A_t, B_t + k) / B(A_t, B_t) / T; averaged over
    # 4000 draws of fixed (a, b) the Monte Carlo mean must match it within 4.5 s.e.
    rng = np.random.default_rng(0)
    n = rng.integers(1, 40, size=(1, 60))
    c = rng.binomial(n, 0.3)
    a, b = 0.4, 1.7
    k = np.array([1.0, 2.0, 5.0, 64.0, 1024.0])
    out = _curve(np.full((1, 4000, 1), a), np.full((1, 4000, 1), b), n, c, k, "pass@k",
                 seed=11)[0, :, 0]
    big_a, big_b = a + c[0], b + n[0] - c[0]
    expected = [1 - np.mean(np.exp(betaln(big_a, big_b + kj) - betaln(big_a, big_b)))
                for kj in k]
    se = out.std(axis=0) / np.sqrt(out.shape[0])
    assert np.all(np.abs(out.mean(axis=0) - expected) < 4.5 * se + 1e-12)
    assert np.all(np.diff(out, axis=1) >= 0)  # each draw's curve rises in k


def test_integer_and_real_exponent_paths_agree():
    # the same stream gives the same rates; only the powers differ (squaring vs exp(k log x))
    n, c, a, b = _random_case(1, systems=2, tasks=30, trials=12, p=0.4, draws=50)
    k = np.array([1.0, 3.0, 6.0, 1024.0])
    integer = _curve(a, b, n, c, k, "pass@k", 5)
    real = _curve(a, b, n, c, np.append(k, 0.5), "pass@k", 5)
    np.testing.assert_allclose(integer, real[..., :4], rtol=1e-9, atol=1e-12)


def test_same_seed_same_draws_whatever_the_thread_count():
    n, c, a, b = _random_case(2, systems=3, tasks=40, trials=8, p=0.5, draws=100)
    k = np.array([1.0, 4.0])
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _curve(a, b, n, c, k, "pass^k", seed=9)
    finally:
        numba.set_num_threads(threads)
    again = _curve(a, b, n, c, k, "pass^k", seed=9)
    other = _curve(a, b, n, c, k, "pass^k", seed=10)
    np.testing.assert_array_equal(one, again)
    assert not np.allclose(one, other)


def test_both_metrics_come_from_one_set_of_rate_draws():
    # one pass gives each metric exactly the draws it gets alone, and pass@1 = 1 - mean(1 - p)
    # equals pass^1 = mean(p) draw by draw (the same Beta variates, G_f / (G_s + G_f) and
    # G_s / (G_s + G_f))
    n, c, a, b = _random_case(3, systems=3, tasks=40, trials=6, p=0.3, draws=200)
    cells = _unique_cells(EvalData.from_arrays(n, c))
    for k in (np.array([1.0, 3.0, 1024.0]), np.array([1.0, 0.5, 7.0])):
        both = tasks_curves_fast(a, b, cells.system, cells.n, cells.c, cells.weight, k,
                                 ("pass^k", "pass@k"), 4)
        assert list(both) == ["pass^k", "pass@k"]
        for metric in ("pass@k", "pass^k"):
            np.testing.assert_array_equal(both[metric], _curve(a, b, n, c, k, metric, 4))
        np.testing.assert_allclose(both["pass@k"][..., 0], both["pass^k"][..., 0], rtol=0,
                                   atol=1e-12)
    with pytest.raises(ValueError, match="at least one metric"):
        tasks_curves_fast(a, b, cells.system, cells.n, cells.c, cells.weight, k, (), 4)


def test_bad_cells_get_a_clear_error():
    a = b = np.ones((1, 3, 2))
    k = np.array([1.0])
    with pytest.raises(ValueError, match="sorted system indices"):
        tasks_curve_fast(a, b, [1, 0], [4, 4], [1, 2], [1, 1], k, "pass@k")
    with pytest.raises(ValueError, match="0 <= c <= n"):
        tasks_curve_fast(a, b, [0, 1], [4, 4], [5, 2], [1, 1], k, "pass@k")
    with pytest.raises(ValueError, match="k must be positive"):
        tasks_curve_fast(a, b, [0, 1], [4, 4], [1, 2], [1, 1], np.array([0.0]), "pass@k")


def test_missing_cells_are_left_out_and_empty_systems_are_nan():
    n = np.array([[4, 0, 4], [0, 0, 0]])
    c = np.array([[4, 0, 4], [0, 0, 0]])
    a = np.full((1, 50, 2), 50.0)
    b = np.full((1, 50, 2), 1e-3)
    out = _curve(a, b, n, c, np.array([1.0]), "pass@k", seed=0)
    assert np.all(out[:, :, 0] > 0.99)
    assert np.all(np.isnan(out[:, :, 1]))


def test_model_uses_the_kernel_above_the_threshold_and_matches_numpy_draws(monkeypatch):
    # Same posterior, both paths: distributions per (system, k) must agree (two-sample KS),
    # and the kernel must actually be the one used above the threshold.
    rng = np.random.default_rng(4)
    p = rng.beta(0.5, 0.7, size=(2, 200))
    n = np.full((2, 200), 16)
    data = EvalData.from_arrays(n, rng.binomial(16, p))
    model = BetaBinomialModel()
    shape = (2, 1500, 2)
    posterior = xr.Dataset(
        {"mu_logit": (("chain", "draw", "system"), rng.normal([-0.3, 0.2], 0.05, shape)),
         "kappa": (("chain", "draw", "system"), rng.lognormal(0.2, 0.1, shape))},
        coords={"chain": [0, 1], "draw": np.arange(1500), "system": data.systems},
    )
    k = np.array([1.0, 16.0, 256.0])
    monkeypatch.setattr(beta_binomial, "FAST_CURVE_MIN_TASK_DRAWS", 0)
    fast = model.curve(posterior, data, k, "pass@k", "tasks", False, seed=1).values
    direct = _curve(*model._ab(posterior), n, data.c.values, k, "pass@k", 1)
    np.testing.assert_array_equal(fast, direct)
    numpy_path = Model._tasks_curve(model, posterior, data, k, "pass@k", False, 1)
    for s in range(2):
        for j in range(len(k)):
            x, y = fast[:, :, s, j].ravel(), numpy_path[:, :, s, j].ravel()
            assert stats.ks_2samp(x, y).pvalue > 1e-3
    # below the threshold the NumPy path is used (its numbers, unchanged)
    monkeypatch.setattr(beta_binomial, "FAST_CURVE_MIN_TASK_DRAWS", 10**12)
    small = model.curve(posterior, data, k, "pass@k", "tasks", False, seed=1).values
    np.testing.assert_array_equal(small, numpy_path)


@numba.njit
def _gamma_batches(shape, batches, width):
    d = np.full(width, shape - 1.0 / 3.0)
    scale = 1.0 / np.sqrt(9.0 * d)
    out, pending = np.empty(width), np.empty(width, dtype=np.bool_)
    values = np.empty(batches * width)
    key, finished = np.uint64(7), 0
    for b in range(batches):
        key = _gamma_batch(d, scale, key, width, out, pending)
        values[b * width:(b + 1) * width] = out
        finished += pending.sum()
    return values, finished


@pytest.mark.parametrize("shape", [1.0, 1.5, 4.0, 40.0])
def test_vectorised_gamma_batches_follow_the_gamma_law(shape):
    """The SIMD first proposals plus the scalar finishing of the rest are exactly
    Marsaglia-Tsang: a squeeze that accepted too much, or a finish that skipped the exact test
    or restarted a proposal, shows here (a wrong squeeze gave KS p ~ 1e-107 at shape 1)."""
    values, finished = _gamma_batches(shape, 4000, 50)
    assert stats.kstest(values, stats.gamma(shape).cdf).pvalue > 1e-3
    assert abs(values.mean() - shape) < 4.5 * np.sqrt(shape / values.size)
    # the scalar finishing is exercised (ziggurat wedges and tails, the log test)
    assert finished > 0.01 * values.size


@numba.njit
def _boost_against_libm(shape, count, seed):
    from_kernel = np.ones(count)
    key = np.uint64(seed)
    _boost(from_kernel, count, shape, key, np.empty(count), np.empty(count))
    reference = np.empty(count)
    for i in range(count):  # the same uniforms, powered by the C library
        uniform = (float(np.int64(word(key, i + 1) >> np.uint64(11))) + 0.5) / 2.0**53
        reference[i] = math.exp(math.log(uniform) / shape)
    return from_kernel, reference


@pytest.mark.parametrize("shape", [1e-3, 0.02, 0.3, 0.999])
def test_vectorised_boost_matches_the_c_library_power(shape):
    """``U^(1/shape)`` from the kernel's own log / exp series against ``exp(log(U) / shape)``:
    both round ``y = log(U) / shape`` and so carry a relative error of about ``|y|`` ulps each
    (the conditioning of the power), hence a bound of 3 ``(|y| + 1)`` ulps on their gap (the
    measured maximum is 2.0); values below the normal range (only at tiny shapes) are 0."""
    ours, reference = _boost_against_libm(shape, 20_000, 11)
    normal = reference > 2.3e-308
    y = np.abs(np.log(np.maximum(reference[normal], 1e-300)))
    rel = np.abs(ours[normal] / reference[normal] - 1.0)
    assert np.all(rel <= 3.0 * (y + 1.0) * np.finfo(float).eps)
    assert np.all(ours[~normal] < 2.3e-308)
    if shape == 1e-3:
        assert (~normal).sum() > 1000  # the underflow branch is exercised
