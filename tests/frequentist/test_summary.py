"""xarray wrappers over EvalData: pass_curve and pass_rates."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from evalbayes.data import EvalData
from evalbayes.datasets import load
from evalbayes.frequentist import pass_curve, pass_rates


@pytest.fixture
def ragged() -> EvalData:
    """Two systems, three tasks, one missing cell and unequal n."""
    return EvalData.from_arrays(
        [[4, 6, 0], [5, 5, 8]],
        [[1, 6, 0], [0, 2, 8]],
        systems=["A", "B"],
        tasks=["t1", "t2", "t3"],
        task_coords={"family": ["x", "x", "y"]},
    )


def _exact_at(n, c, k):
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def _exact_hat(n, c, k):
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def test_task_average_skips_missing_cells(ragged):
    curve = pass_curve(ragged, [1, 2, 4])
    assert curve.dims == ("system", "k") and curve.name == "pass_at_k"
    np.testing.assert_array_equal(curve["k"].values, [1, 2, 4])
    assert curve.attrs == {"metric": "pass@k", "estimator": "unbiased", "estimand": "tasks"}
    for j, k in enumerate([1, 2, 4]):
        a = (_exact_at(4, 1, k) + _exact_at(6, 6, k)) / 2  # t3 missing for A
        b = (_exact_at(5, 0, k) + _exact_at(5, 2, k) + _exact_at(8, 8, k)) / 3
        assert curve.values[0, j] == pytest.approx(a, rel=1e-13)
        assert curve.values[1, j] == pytest.approx(b, rel=1e-13)


def test_per_task_curve_and_pass_hat(ragged):
    curve = pass_curve(ragged, 2, metric="pass^k", per_task=True)
    assert curve.dims == ("system", "task", "k") and curve.name == "pass_hat_k"
    assert "family" in curve.coords
    assert math.isnan(curve.sel(system="A", task="t3", k=2))
    assert float(curve.sel(system="B", task="t2", k=2)) == pytest.approx(_exact_hat(5, 2, 2))
    assert float(curve.sel(system="A", task="t2", k=2)) == 1.0


def test_k_above_n_names_system_and_task(ragged):
    with pytest.raises(ValueError, match=r"k=5 exceeds n=4 for system 'A', task 't1'"):
        pass_curve(ragged, [1, 5])
    plugin = pass_curve(ragged, [1, 5], plugin=True)  # the plug-in is defined for any k
    assert plugin.attrs["estimator"] == "plug-in"
    assert plugin.sel(system="A", k=5) == pytest.approx(((1 - 0.75**5) + 1.0) / 2)


def test_plugin_below_unbiased_on_section_17_7():
    data = load("tinyagent")
    unbiased = pass_curve(data, [2, 4, 8, 16, 32])
    plugin = pass_curve(data, [2, 4, 8, 16, 32], plugin=True)
    assert (plugin <= unbiased + 1e-12).all()


def test_system_without_observed_tasks_is_nan():
    data = EvalData.from_arrays([[0, 0], [3, 3]], [[0, 0], [1, 2]], systems=["A", "B"])
    curve = pass_curve(data, [1, 2])
    assert np.isnan(curve.sel(system="A")).all()
    assert float(curve.sel(system="B", k=1)) == pytest.approx(0.5)


def test_pass_rates(ragged):
    rates = pass_rates(ragged)
    assert rates["mean"].sel(system="A") == pytest.approx((0.25 + 1.0) / 2)
    assert rates["pooled"].sel(system="A") == pytest.approx(7 / 10)
    assert rates["pooled"].sel(system="B") == pytest.approx(10 / 18)
    assert int(rates["n_tasks"].sel(system="A")) == 2


def test_bad_inputs(ragged):
    with pytest.raises(ValueError, match="metric"):
        pass_curve(ragged, 1, metric="pass@1")
    with pytest.raises(ValueError, match="k must be at least 1"):
        pass_curve(ragged, [0, 1])
    with pytest.raises(TypeError, match="EvalData"):
        pass_curve(np.ones((2, 2)), 1)
