"""Average ranks against SciPy's rankdata (the independent reference)."""

import numpy as np
import pytest
from scipy.stats import rankdata

from evalbayes._core.ranks import average_ranks


@pytest.mark.parametrize("seed", range(5))
def test_average_ranks_match_scipy_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    for values in (rng.normal(size=50), rng.integers(0, 6, size=80).astype(float),
                   np.array([2.0]), np.array([1.0, 1.0, 1.0]), np.array([], dtype=float)):
        np.testing.assert_array_equal(average_ranks(values), rankdata(values, method="average"))


def test_average_ranks_refuse_two_dimensions():
    with pytest.raises(ValueError, match="1-D"):
        average_ranks(np.zeros((2, 2)))
