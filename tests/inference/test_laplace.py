"""method="laplace": exact where the posterior is normal (closed form), labelled approximate."""

from __future__ import annotations

import numpy as np
import pytest

from evalbayes._core.names import APPROXIMATE_METHODS, METHODS
from evalbayes.inference import SamplerConfig, laplace_draws, run_inference


def test_laplace_is_an_approximate_method():
    assert "laplace" in METHODS and "laplace" in APPROXIMATE_METHODS
    sampler = SamplerConfig(method="laplace", tune=0)
    assert sampler.approximate and not sampler.mcmc


def test_laplace_matches_the_conjugate_normal_posterior():
    """y_i ~ N(mu, 1), mu ~ N(m0, s0): posterior N(m1, s1) in closed form (BDA3 sec. 2.5);
    Laplace is exact here, so draws' mean and sd agree within Monte Carlo error."""
    import pymc as pm

    y = np.array([0.3, 1.9, 1.1, 0.4, 2.2])
    m0, s0 = 0.5, 2.0
    precision = 1 / s0**2 + len(y)
    m1, s1 = (m0 / s0**2 + y.sum()) / precision, precision**-0.5

    def build():
        with pm.Model() as model:
            mu = pm.Normal("mu", m0, s0)
            pm.Normal("y", mu, 1.0, observed=y)
            pm.Deterministic("twice", 2 * mu)
        return model

    tree = run_inference(build, SamplerConfig(method="laplace", chains=2, draws=4000, tune=0))
    mu = tree["posterior"]["mu"].values
    assert mu.shape == (2, 4000)
    mc = s1 / np.sqrt(mu.size)
    assert abs(mu.mean() - m1) < 5 * mc
    assert abs(mu.std() / s1 - 1) < 5 / np.sqrt(2 * mu.size)
    np.testing.assert_allclose(tree["posterior"]["twice"].values, 2 * mu)


def test_laplace_of_a_positive_scale_stays_positive_and_matches_lognormal():
    """sigma ~ LogNormal(0.3, 0.5) alone: on log sigma the density is exactly normal, so the
    Laplace draws are exactly LogNormal(0.3, 0.5) (the log Jacobian is linear in log sigma)."""
    import pymc as pm

    with pm.Model() as model:
        pm.LogNormal("sigma", 0.3, 0.5)
    sigma = laplace_draws(model, 1, 6000, seed=3)["posterior"]["sigma"].values
    assert (sigma > 0).all()
    log_s = np.log(sigma)
    assert abs(log_s.mean() - 0.3) < 5 * 0.5 / np.sqrt(log_s.size)
    assert abs(log_s.std() / 0.5 - 1) < 5 / np.sqrt(2 * log_s.size)


@pytest.mark.slow  # compiles a PyMC/nutpie graph or runs mypy: the slow tier
def test_laplace_irt_fit_is_labelled_approximate():
    from evalbayes.data import EvalData
    from evalbayes.models.irt._model import IRTModel

    rng = np.random.default_rng(0)
    n = np.full((6, 12), 4)
    c = rng.binomial(n, np.linspace(0.1, 0.9, 12)[None, :])
    post = IRTModel(kind="2pl").fit(EvalData.from_arrays(n, c), method="laplace", draws=200,
                                    chains=2, check=False)
    assert post.approximate and "APPROXIMATE: Laplace" in post.label
    assert post.posterior["theta"].dims == ("chain", "draw", "system")
    assert np.isfinite(post.posterior["a"].values).all() and (post.posterior["a"] > 0).all()
    with pytest.warns(UserWarning, match="approximate"):
        post.diagnostics(warn=True)
    summary = post.summary() if hasattr(post, "summary") else None
    if summary is not None and "approximate" in getattr(summary, "columns", []):
        assert summary["approximate"].all()
