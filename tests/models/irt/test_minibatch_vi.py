"""benchmarks/irt/bench_minibatch_vi.py at tiny size: numpyro minibatch SVI recovers a simulated
2PL (skipped without the optional JAX extra)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from paths import ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numpyro") is None or importlib.util.find_spec("jax") is None,
    reason="the optional JAX extra (jax, numpyro) is not installed",
)
sys.path.insert(0, str(ROOT / "benchmarks" / "irt"))


def test_minibatch_svi_recovers_simulated_abilities_and_difficulties():
    import bench_minibatch_vi as bench

    c, truth = bench.simulate(60, 200, seed=2)
    assert c.dtype == np.uint8 and c.shape == (60, 200)
    # the simulated success share matches the model's expected one (independent check of
    # simulate: the mean of sigmoid(a (theta - b)) over the same draws)
    p = 1 / (1 + np.exp(-truth["a"] * (truth["theta"][:, None] - truth["b"])))
    assert abs(c.mean() - p.mean()) < 4 * np.sqrt(p.mean() * (1 - p.mean()) / c.size)
    _, _, q = bench.fit_numpyro(c, batch=2000, steps=3000, lr=0.02, seed=0)
    lower, mean, upper = q["theta"]
    assert mean.shape == (60,) and (lower < mean).all() and (mean < upper).all()
    # 60 systems x 200 binary items: the full posterior means of theta and b correlate
    # > 0.9 with the truth at this size; the subsampled ELBO must not lose that
    assert np.corrcoef(mean, truth["theta"])[0, 1] > 0.9
    assert np.corrcoef(q["b"][1], truth["b"])[0, 1] > 0.85
