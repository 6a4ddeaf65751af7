"""The dense (masked system x task) likelihood graph of IRTModel against the long one: the same
log density at random points (so the same posterior), the auto rule, and the spec setting."""

from __future__ import annotations

import numpy as np
import pytest

from evalbayes.data import EvalData
from evalbayes.models.irt._model import DENSE_MIN_CELLS, DENSE_MIN_SHARE, IRTModel

SETTINGS = [
    {"kind": "2pl", "sigma_a": "estimate", "parameterization": "centered"},
    {"kind": "3pl"},
]


def _data(seed: int = 0, n_sys: int = 5, n_task: int = 9, max_n: int = 4) -> EvalData:
    rng = np.random.default_rng(seed)
    n = rng.integers(1, max_n + 1, (n_sys, n_task))
    n[0, 1] = n[3, 2] = n[4, 8] = 0  # missing cells
    c = rng.binomial(n, 0.4)
    c[:, 5] = 0
    c[:, 6] = n[:, 6]
    return EvalData.from_arrays(n, c)


def _logp(model: IRTModel, data: EvalData):
    inputs = model.inputs(data)
    pm_model = model.build(inputs)
    return pm_model, pm_model.compile_logp(), pm_model.compile_dlogp()


@pytest.mark.parametrize("max_n", [4, 1], ids=["binomial", "binary"])
@pytest.mark.parametrize("settings", [*SETTINGS, {"kind": "1pl"}],
                         ids=lambda s: "-".join(map(str, s.values())))
@pytest.mark.slow  # compiles a PyMC/nutpie graph or runs mypy: the slow tier
def test_dense_and_long_graphs_give_the_same_log_density(settings, max_n):
    """With n <= 1 in every cell the dense graph takes the sign form ``-n softplus((1 - 2c) eta)``
    (missing cells included); the long graph is the two-softplus reference."""
    data = _data(max_n=max_n)
    long_model, long_logp, long_dlogp = _logp(IRTModel(layout="long", **settings), data)
    dense_model, dense_logp, dense_dlogp = _logp(IRTModel(layout="dense", **settings), data)
    assert "cell_n" in long_model.named_vars and "obs_n" in dense_model.named_vars
    rng = np.random.default_rng(1)
    start = long_model.initial_point()
    assert set(start) == set(dense_model.initial_point())
    for _ in range(5):
        point = {k: v + rng.normal(0, 0.7, v.shape) for k, v in start.items()}
        np.testing.assert_allclose(dense_logp(point), long_logp(point), rtol=1e-10)
        np.testing.assert_allclose(dense_dlogp(point), long_dlogp(point), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("max_n", [4, 1], ids=["binomial", "binary"])
def test_dense_log_density_matches_scipy_binomial(max_n):
    """Dense 2PL likelihood = sum of scipy binomial log pmfs minus the log C(n, c) constants."""
    from scipy import stats
    from scipy.special import expit, gammaln

    data = _data(seed=3, max_n=max_n)
    model = IRTModel(kind="2pl", layout="dense")
    inputs = model.inputs(data)
    assert inputs.shape_key[3] == (max_n == 1)  # the sign form is taken for binary cells
    pm_model = model.build(inputs)
    point = {k: v + 0.3 for k, v in pm_model.initial_point().items()}
    outs = pm_model.replace_rvs_by_values(
        [pm_model.potentials[0], pm_model["theta"], pm_model["b"], pm_model["a"]]
    )
    ll, theta, b, a = (np.asarray(x) for x in pm_model.compile_fn(outs, point_fn=True)(point))
    n, c = data.n.values, data.c.values
    p = expit(a[None, :] * (theta[:, None] - b[None, :]))
    obs = n > 0
    expected = stats.binom.logpmf(c, n, p)[obs].sum()
    log_choose = (gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1))[obs].sum()
    np.testing.assert_allclose(float(ll), expected - log_choose, rtol=1e-10)


def test_auto_layout_rule():
    model = IRTModel()
    side = int(np.ceil(np.sqrt(DENSE_MIN_CELLS)))
    full = np.ones((side, side), int)
    assert model.dense(EvalData.from_arrays(full, full * 0))
    small = np.ones((4, 7), int)
    assert not model.dense(EvalData.from_arrays(small, small * 0))
    sparse = full.copy()
    rng = np.random.default_rng(0)
    sparse[rng.random(full.shape) > DENSE_MIN_SHARE - 0.1] = 0
    sparse[:, 0] = sparse[0, :] = 1
    assert not model.dense(EvalData.from_arrays(sparse, sparse * 0))
    assert IRTModel(layout="dense").dense(EvalData.from_arrays(small, small * 0))
    assert not IRTModel(layout="long").dense(EvalData.from_arrays(full, full * 0))


def test_bad_layout_raises_and_round_trips():
    with pytest.raises(ValueError, match="layout"):
        IRTModel(layout="wide")
    model = IRTModel(layout="dense")
    assert model.to_config()["layout"] == "dense"
    assert IRTModel.from_config(model.to_config()) == model


@pytest.mark.slow  # compiles a PyMC/nutpie graph or runs mypy: the slow tier
def test_dense_fit_runs_and_labels_dims():
    data = _data()
    post = IRTModel(kind="2pl", layout="dense").fit(data, draws=50, tune=50, chains=1,
                                                     check=False)
    assert post.posterior["theta"].dims == ("chain", "draw", "system")
    assert post.posterior["b"].sizes["task"] == data.n.shape[1]
