"""Credible bounds by selection (``interval_rows``): equal-tailed, the same numbers as
``np.quantile`` (its default, linear interpolation), for every draw count, interval
probability and tie pattern; highest-density, the narrowest window found by a plain scan;
``credible_interval`` leaves the caller's draws as they were."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from evalbayes._core.intervals import credible_interval, interval_rows


def _columns(values: np.ndarray) -> np.ndarray:
    """Each column of ``values`` (draws first) as a row, copied: interval_rows reorders it."""
    return values.reshape(values.shape[0], -1).T.copy()


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 10, 40, 101, 999, 1000, 4000])
@pytest.mark.parametrize("ci_prob", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999])
def test_same_numbers_as_numpy_quantile(m, ci_prob):
    rng = np.random.default_rng(m)
    q = [(1 - ci_prob) / 2, (1 + ci_prob) / 2]
    for values in (
        rng.normal(size=(m, 6, 2)),
        rng.integers(0, 4, size=(m, 5)).astype(float),  # many ties
        np.round(rng.standard_t(2, size=(m, 3)), 1),  # heavy tails, ties
        rng.normal(size=m),
    ):
        low, high = interval_rows(_columns(values), ci_prob, "eti")
        ref_low, ref_high = np.quantile(values, q, axis=0)
        np.testing.assert_array_equal(low, np.ravel(ref_low))
        np.testing.assert_array_equal(high, np.ravel(ref_high))


@pytest.mark.parametrize("m", [1, 2, 5, 40, 1000])
@pytest.mark.parametrize("ci_prob", [0.5, 0.9, 0.95])
def test_hdi_is_the_first_narrowest_window(m, ci_prob):
    rng = np.random.default_rng(m)
    values = np.round(rng.gamma(2.0, size=(m, 4)), 1)  # skewed, with ties
    low, high = interval_rows(_columns(values), ci_prob, "hdi")
    width = int(np.ceil(ci_prob * m))
    for j in range(values.shape[1]):
        x = sorted(values[:, j].tolist())
        if width >= m:
            assert (low[j], high[j]) == (x[0], x[-1])
            continue
        spans = [x[i + width] - x[i] for i in range(m - width)]
        i = spans.index(min(spans))
        assert (low[j], high[j]) == (x[i], x[i + width])


@pytest.mark.parametrize("kind", ["eti", "hdi"])
def test_credible_interval_leaves_the_draws_as_they_were(kind):
    """One column: its transposed view would be contiguous, the very memory of the draws."""
    values = np.random.default_rng(1).normal(size=(2, 50))
    draws = xr.DataArray(values.copy(), dims=("chain", "draw"))
    low, high = credible_interval(draws, 0.9, kind)
    np.testing.assert_array_equal(draws.values, values)
    assert float(low) < float(high)
