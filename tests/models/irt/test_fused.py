"""The fused (hand-written, compiled) 1PL / 2PL log density of IRTModel against the PyMC graph:
the same value and gradient at random points on the same unconstrained coordinates (so the
same posterior), finite differences, the layout rule, and a short fit against the graph's."""

from __future__ import annotations

import numpy as np
import pytest

from evalbayes.data import EvalData
from evalbayes.models.irt import _fused
from evalbayes.models.irt._model import IRTModel

CASES = [
    {"kind": "2pl", "parameterization": "noncentered"},
    {"kind": "2pl", "parameterization": "centered", "sigma_a": "estimate"},
    {"kind": "2pl", "parameterization": "noncentered", "sigma_a": "estimate"},
    {"kind": "1pl", "parameterization": "centered"},
]


def _data(seed: int = 0, n_sys: int = 5, n_task: int = 9, max_n: int = 4) -> EvalData:
    rng = np.random.default_rng(seed)
    n = rng.integers(1, max_n + 1, (n_sys, n_task))
    n[0, 1] = n[3, 2] = n[4, 8] = 0  # missing cells
    c = rng.binomial(n, 0.4)
    c[:, 5] = 0
    c[:, 6] = n[:, 6]
    return EvalData.from_arrays(n, c)


def _layout(model: IRTModel, data: EvalData) -> _fused.FusedLayout:
    n_sys, n_task = data.n.shape
    estimate = model.sigma_a == "estimate"
    return _fused.FusedLayout(n_sys, n_task, model.kind == "2pl", model.centered(data),
                              0.5 if estimate else float(model.sigma_a), estimate,
                              model.sigma_b_prior, model.sigma_a_prior)


def _arrays(data: EvalData, dense: bool) -> tuple[np.ndarray, ...]:
    n, c = data.n.values.astype(float), data.c.values.astype(float)
    if dense:
        return n, c
    s_idx, t_idx = np.nonzero(n > 0)
    return n[s_idx, t_idx], c[s_idx, t_idx], s_idx.astype(np.int64), t_idx.astype(np.int64)


@pytest.mark.parametrize("dense", [True, False], ids=["dense", "cells"])
@pytest.mark.parametrize("max_n", [4, 1], ids=["binomial", "binary"])
@pytest.mark.parametrize("settings", CASES, ids=lambda s: "-".join(map(str, s.values())))
@pytest.mark.slow  # compiles a PyMC graph: the slow tier
def test_fused_log_density_and_gradient_equal_the_graphs(settings, max_n, dense):
    """Value and gradient against PyMC's ``logp`` / ``dlogp`` (Jacobians included) of the
    long graph at random points, to 1e-8 relative."""
    from pymc.blocking import DictToArrayBijection, RaveledVars

    data = _data(max_n=max_n)
    model = IRTModel(layout="long", **settings)
    pm_model = model.build(model.inputs(data))
    logp, dlogp = pm_model.compile_logp(), pm_model.compile_dlogp()
    layout = _layout(model, data)
    start = DictToArrayBijection.map(pm_model.initial_point())
    assert start.data.size == layout.n_dim
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.normal(0.0, 1.0, layout.n_dim)
        point = DictToArrayBijection.rmap(RaveledVars(x, start.point_map_info))
        value, grad = _fused.logp_grad(x, layout.settings(), *_arrays(data, dense))
        np.testing.assert_allclose(value, logp(point), rtol=1e-8)
        reference = dlogp(point)
        np.testing.assert_allclose(grad, reference, rtol=1e-8,
                                   atol=1e-8 * np.abs(reference).max())


@pytest.mark.parametrize("settings", CASES, ids=lambda s: "-".join(map(str, s.values())))
def test_fused_gradient_matches_finite_differences(settings):
    data = _data(seed=2)
    model = IRTModel(**settings)
    layout = _layout(model, data)
    arrays = _arrays(data, True)
    x = np.random.default_rng(3).normal(0.0, 0.8, layout.n_dim)
    _, grad = _fused.logp_grad(x, layout.settings(), *arrays)
    h = 1e-6
    numeric = np.empty_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = h
        up = _fused.logp_grad(x + step, layout.settings(), *arrays)[0]
        down = _fused.logp_grad(x - step, layout.settings(), *arrays)[0]
        numeric[i] = (up - down) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6)


def test_fused_likelihood_matches_scipy_binomial():
    """The fused density is the sum of scipy binomial log pmfs minus the log C(n, c) constants
    plus the priors written with scipy: the zero-sum transform is an isometry, so in the
    non-centred 2PL every coordinate but ``log sigma_b`` has a standard normal prior."""
    from scipy import stats
    from scipy.special import expit, gammaln

    data = _data(seed=4)
    model = IRTModel(kind="2pl", parameterization="noncentered")
    layout = _layout(model, data)
    x = np.random.default_rng(5).normal(0.0, 0.8, layout.n_dim)
    params = _fused.expand(x, layout.settings())
    n, c = data.n.values, data.c.values
    p = expit(params["a"][None, :] * (params["theta"][:, None] - params["b"][None, :]))
    observed = n > 0
    loglik = (stats.binom.logpmf(c, n, p) - (gammaln(n + 1) - gammaln(c + 1)
                                             - gammaln(n - c + 1)))[observed].sum()
    # the priors of the fused density, written with scipy
    sigma_b = np.exp(x[0])
    z = x[1:]
    prior = (stats.halfnorm.logpdf(sigma_b, scale=model.sigma_b_prior) + x[0]
             + stats.norm.logpdf(z).sum())
    value, _ = _fused.logp_grad(x, layout.settings(), *_arrays(data, True))
    np.testing.assert_allclose(value, loglik + prior, rtol=1e-10)


def test_expand_gives_zero_sum_deviations_and_positive_discriminations():
    data = _data()
    model = IRTModel(kind="2pl", sigma_a="estimate")
    layout = _layout(model, data)
    x = np.random.default_rng(6).normal(0.0, 1.0, layout.n_dim)
    out = _fused.expand(x, layout.settings())
    assert set(out) == {"theta", "b", "a", "sigma_b", "sigma_a"}
    assert out["theta"].shape == (5,) and out["b"].shape == (9,) and np.all(out["a"] > 0)
    np.testing.assert_allclose(float(out["sigma_b"]), np.exp(x[0]))


def test_layout_rule():
    assert IRTModel(kind="2pl").fused("nutpie")
    assert IRTModel(kind="1pl").fused("nutpie")
    assert not IRTModel(kind="2pl").fused("pymc")
    assert not IRTModel(kind="3pl").fused("nutpie")
    assert not IRTModel(kind="2pl", layout="dense").fused("nutpie")
    with pytest.raises(ValueError, match="1PL and 2PL"):
        IRTModel(kind="3pl", layout="fused")
    with pytest.raises(ValueError, match="nutpie only"):
        IRTModel(kind="2pl", layout="fused").fit(_data(), method="advi", draws=10)


def test_fused_fit_runs_without_a_graph():
    """The default 2PL fit on small data: posterior variables, dims and labels."""
    data = _data(max_n=1)
    fit = IRTModel(kind="2pl").fit(data, draws=100, tune=100, chains=2, check=False)
    post = fit.posterior
    assert set(post.data_vars) == {"theta", "b", "a", "sigma_b"}
    assert post["theta"].dims == ("chain", "draw", "system")
    assert list(post["b"]["task"].values) == list(data.tasks)
    assert "n_steps" in fit.sample_stats


@pytest.mark.slow  # compiles the PyMC graph for the reference fit
def test_fused_fit_agrees_with_the_graph():
    """Same posterior as nutpie on the dense graph (the old default): theta, b and a means
    within 0.25 posterior sd (Monte Carlo error of the difference ~0.04 sd with ESS ~1000)
    and sds within 15 %."""
    data, _ = IRTModel(kind="2pl").simulate_prior(8, 30, 1, seed=11)
    fused = IRTModel(kind="2pl").fit(data, seed=1, check=False).posterior
    graph = IRTModel(kind="2pl", layout="dense").fit(data, seed=2, check=False).posterior
    for name in ("theta", "b", "a"):
        sd = graph[name].std(("chain", "draw"))
        diff = np.abs(fused[name].mean(("chain", "draw")) - graph[name].mean(("chain", "draw")))
        assert float((diff / sd).max()) < 0.25
        ratio = fused[name].std(("chain", "draw")) / sd
        assert 0.85 < float(ratio.min()) and float(ratio.max()) < 1.15


def test_fused_fit_is_reproducible():
    """The same seed gives the same draws (the chains run on threads; each is deterministic)."""
    data = _data(max_n=1)
    model = IRTModel(kind="2pl")
    one = model.fit(data, draws=50, tune=50, chains=2, seed=3, check=False).posterior
    two = model.fit(data, draws=50, tune=50, chains=2, seed=3, check=False).posterior
    other = model.fit(data, draws=50, tune=50, chains=2, seed=4, check=False).posterior
    assert np.array_equal(one["theta"].values, two["theta"].values)
    assert not np.array_equal(one["theta"].values, other["theta"].values)
