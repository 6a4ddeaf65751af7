"""The extrapolation helper: k beyond the largest n a system ran on any task."""

import numpy as np

from evalbayes import EvalData
from evalbayes.extrapolation import extrapolated, max_trials


def test_max_trials_and_extrapolated_flags():
    n = np.array([[5, 0, 3], [1, 1, 1]])
    data = EvalData.from_arrays(n, np.zeros_like(n), systems=["a", "b"])
    np.testing.assert_array_equal(max_trials(data).values, [5, 1])
    flags = extrapolated(data, [1, 5, 6])
    assert flags.dims == ("system", "k")
    np.testing.assert_array_equal(flags.values, [[False, False, True], [False, True, True]])
