"""R-hat and ESS in NumPy against ArviZ (the reference implementation of Vehtari et al. 2021):
equal to 1e-8 on independent, autocorrelated, tied and short chains."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest
import xarray as xr

from evalbayes.results._diagnostics import ess_bulk, ess_tail, rank_rhat, rhat_ess


def _draws(kind: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(len(kind) + 100 * shape[1])
    x = rng.normal(size=shape)
    if kind == "ar1":  # strongly autocorrelated: Geyer's truncation and monotone steps act
        for t in range(1, shape[1]):
            x[:, t] = 0.95 * x[:, t - 1] + np.sqrt(1 - 0.95**2) * x[:, t]
    elif kind == "ties":  # many equal values: average ranks
        x = np.round(x * 2)
    elif kind == "shifted":  # chains disagree: R-hat well above 1
        x += np.arange(shape[0])[:, None, None] * 0.5
    elif kind == "antithetic":  # negative lag-1 correlation: ESS above the draws
        x[:, 1::2] = -0.8 * x[:, 0::2][:, : x[:, 1::2].shape[1]] + 0.6 * x[:, 1::2]
    return x


@pytest.mark.parametrize("kind", ["iid", "ar1", "ties", "shifted", "antithetic"])
@pytest.mark.parametrize("shape", [(4, 1000, 3), (4, 101, 2), (2, 7, 1), (1, 60, 2)])
def test_numpy_diagnostics_match_arviz(kind, shape):
    x = _draws(kind, shape)
    ds = xr.Dataset({"a": (("chain", "draw", "k"), x)})
    pairs = [(rank_rhat(x), az.rhat(ds)["a"]),
             (ess_bulk(x), az.ess(ds, method="bulk")["a"]),
             (ess_tail(x), az.ess(ds, method="tail")["a"])]
    for ours, ref in pairs:
        ref = np.asarray(ref)
        assert ours.shape == ref.shape
        assert np.array_equal(np.isnan(ours), np.isnan(ref))
        assert np.allclose(ours, ref, rtol=1e-8, atol=0, equal_nan=True)


@pytest.mark.parametrize("kind", ["iid", "ar1", "ties", "shifted"])
def test_rhat_ess_together_equal_each_alone(kind):
    x = _draws(kind, (4, 200, 3))
    rhat, bulk, tail = rhat_ess(x)
    assert np.array_equal(rhat, rank_rhat(x), equal_nan=True)
    assert np.array_equal(bulk, ess_bulk(x), equal_nan=True)
    assert np.array_equal(tail, ess_tail(x), equal_nan=True)


def test_rhat_ess_in_blocks_against_arviz(monkeypatch):
    """Many columns go through :func:`rhat_ess` in blocks (memory of the FFT temporaries at
    leaderboard size); with a block of 7 columns (a partial last block) the statistics still
    equal ArviZ's per column."""
    from evalbayes.results import _diagnostics

    monkeypatch.setattr(_diagnostics, "_BLOCK", 7)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 200, 5, 4)).cumsum(axis=1) * 0.05 + rng.standard_normal(
        (3, 200, 5, 4))
    rhat, bulk, tail = rhat_ess(x)
    data = xr.Dataset({"x": (("chain", "draw", "a", "b"), x)})
    np.testing.assert_allclose(rhat, az.rhat(data, method="rank")["x"].values, rtol=1e-8)
    np.testing.assert_allclose(bulk, az.ess(data, method="bulk")["x"].values, rtol=1e-8)
    np.testing.assert_allclose(tail, az.ess(data, method="tail")["x"].values, rtol=1e-8)
