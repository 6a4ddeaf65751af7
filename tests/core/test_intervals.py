"""Equal-tailed bounds by selection: the same numbers as ``np.quantile`` (its default,
linear interpolation), for every draw count, interval probability and tie pattern."""

from __future__ import annotations

import numpy as np
import pytest

from evalbayes._core.intervals import equal_tailed


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
        low, high = equal_tailed(values, ci_prob)
        ref_low, ref_high = np.quantile(values, q, axis=0)
        np.testing.assert_array_equal(low, ref_low)
        np.testing.assert_array_equal(high, ref_high)
        assert np.shape(low) == np.shape(ref_low)
