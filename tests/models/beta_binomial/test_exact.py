"""Exact (quadrature) posterior of the independent Beta-Binomial hierarchy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import betaln, expit

from evalbayes.data import EvalData
from evalbayes.models.beta_binomial._exact import (
    exact_posterior,
    grid_draws,
    grid_posterior,
    log_density,
    sample_grid,
)

PRIORS = ((1.0, 1.0), (1.0, 1.5))


def reference_log_density(x, y, n, c, w, mu_prior, log_kappa_prior):
    """Independent reference: scipy densities and log Beta functions (BDA3 eq. 5.8 form)."""
    mu, kappa = expit(x), np.exp(y)
    a, b = mu * kappa, (1 - mu) * kappa
    # density of logit(mu) when mu ~ Beta(a0, b0): Beta pdf times the Jacobian mu (1 - mu)
    out = stats.beta.logpdf(mu, *mu_prior) + np.log(mu * (1 - mu))
    out = out + stats.norm.logpdf(y, *log_kappa_prior)
    for ni, ci, wi in zip(n, c, w, strict=True):
        out = out + wi * (betaln(a + ci, b + ni - ci) - betaln(a, b))
    return out


def brute_moments(n, c, w, centre, spread, mu_prior=PRIORS[0], log_kappa_prior=PRIORS[1]):
    """Means and sds on a plain 1201 x 1201 grid in (logit mu, log kappa)."""
    x = np.linspace(centre[0] - 12 * spread[0], centre[0] + 12 * spread[0], 1201)
    y = np.linspace(centre[1] - 14 * spread[1], centre[1] + 14 * spread[1], 1201)
    gx, gy = np.meshgrid(x, y, indexing="ij")
    lp = reference_log_density(gx, gy, n, c, w, mu_prior, log_kappa_prior)
    wt = np.exp(lp - lp.max())
    wt /= wt.sum()
    mx, my = (wt * gx).sum(), (wt * gy).sum()
    return np.array([mx, my, np.sqrt((wt * (gx - mx) ** 2).sum()),
                     np.sqrt((wt * (gy - my) ** 2).sum())])


CASES = {
    # U-shaped agent-like system: 10 tasks x 32 trials
    "tiny": (np.array([32] * 10), np.array([0, 0, 0, 1, 3, 30, 32, 32, 5, 0]), np.ones(10)),
    # 500 tasks of one trial each, as unique cells with weights
    "binary": (np.array([1, 1]), np.array([0, 1]), np.array([310.0, 190.0])),
    # all failures: a long tail in log kappa
    "all_fail": (np.array([8, 8]), np.array([0, 0]), np.array([12.0, 3.0])),
}


def test_log_density_matches_scipy_reference():
    rng = np.random.default_rng(1)
    x, y = rng.normal(0, 2, 50), rng.normal(1, 2, 50)
    for n, c, w in CASES.values():
        mine = log_density(x, y, n, c, w, *PRIORS)
        ref = reference_log_density(x, y, n, c, w, *PRIORS)
        diff = mine - ref
        # equal up to an additive constant
        np.testing.assert_allclose(diff - diff.mean(), 0.0, atol=1e-8)


@pytest.mark.parametrize("case", sorted(CASES))
def test_grid_moments_match_brute_force_grid(case):
    n, c, w = CASES[case]
    grid = grid_posterior(n, c, w, *PRIORS)
    ref = brute_moments(n, c, w, grid.mean, grid.sd)
    got = np.concatenate([grid.mean, grid.sd])
    np.testing.assert_allclose(got, ref, atol=1e-4 * ref[2:].min())


def test_no_data_gives_the_prior():
    # logit of a Beta(1, 1) variable is standard logistic: mean 0, sd pi / sqrt(3)
    grid = grid_posterior(np.zeros(0, int), np.zeros(0, int), np.zeros(0), *PRIORS)
    np.testing.assert_allclose(grid.mean, [0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(grid.sd, [np.pi / np.sqrt(3), 1.5], rtol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_draws_agree_with_quadrature_within_monte_carlo_error(case):
    n, c, w = CASES[case]
    grid = grid_posterior(n, c, w, *PRIORS)
    size = 40_000
    x, y = sample_grid(grid, size, np.random.default_rng(3))
    for draws, mean, sd in ((x, grid.mean[0], grid.sd[0]), (y, grid.mean[1], grid.sd[1])):
        assert abs(draws.mean() - mean) < 4.5 * sd / np.sqrt(size)
        # sd of the sample sd ~ sd * sqrt((kurtosis - 1) / (4 N)); allow for heavy tails
        kurt = stats.kurtosis(draws, fisher=False)
        assert abs(draws.std() - sd) < 4.5 * sd * np.sqrt((kurt - 1) / (4 * size))


def test_draws_ks_against_quadrature_marginal():
    n, c, w = CASES["tiny"]
    grid = grid_posterior(n, c, w, *PRIORS)
    x, _ = sample_grid(grid, 20_000, np.random.default_rng(5))
    # marginal CDF of logit mu from a fine brute-force grid (independent of the sampler)
    xs = np.linspace(grid.mean[0] - 10 * grid.sd[0], grid.mean[0] + 10 * grid.sd[0], 1501)
    ys = np.linspace(grid.mean[1] - 12 * grid.sd[1], grid.mean[1] + 14 * grid.sd[1], 1501)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    lp = reference_log_density(gx, gy, n, c, w, *PRIORS)
    marg = np.exp(lp - lp.max()).sum(axis=1)
    cdf = np.cumsum(marg) / marg.sum()
    result = stats.kstest(x, lambda v: np.interp(v, xs, cdf))
    assert result.pvalue > 1e-3


def test_grid_draws_layout_and_seed():
    n = np.array([4, 4, 4])
    c = np.array([0, 2, 4])
    w = np.array([3.0, 2.0, 5.0])
    system = np.array([0, 0, 1])
    out = grid_draws(n, c, w, system, 3, *PRIORS, draws=50, chains=2, seed=9)
    assert set(out) == {"mu_logit", "log_kappa", "mu", "kappa"}
    assert all(v.shape == (2, 50, 3) for v in out.values())
    np.testing.assert_allclose(out["mu"], expit(out["mu_logit"]))
    again = grid_draws(n, c, w, system, 3, *PRIORS, draws=50, chains=2, seed=9)
    np.testing.assert_array_equal(out["mu_logit"], again["mu_logit"])
    # system 1 alone gives the same draws (per-system streams)
    alone = grid_draws(n[2:], c[2:], w[2:], np.array([1]), 2, *PRIORS, draws=50, chains=2, seed=9)
    np.testing.assert_array_equal(alone["log_kappa"][..., 1], out["log_kappa"][..., 1])


def test_exact_posterior_feeds_the_model_curves():
    from evalbayes.models.beta_binomial._model import BetaBinomialModel

    n = np.full((2, 6), 4)
    c = np.array([[0, 1, 4, 4, 2, 0], [3, 3, 4, 1, 0, 4]])
    data = EvalData.from_arrays(n, c)
    groups = exact_posterior(data, *PRIORS, draws=100, chains=2, seed=0)
    post = groups["posterior"]
    assert post["mu"].dims == ("chain", "draw", "system")
    model = BetaBinomialModel()
    k = np.array([1.0, 4.0])
    curve = model.curve(post, data, k, "pass@k", "population", False)
    assert curve.shape == (2, 100, 2, 2)
    tasks = model.curve(post, data, k, "pass@k", "tasks", False, seed=1)
    assert np.all((tasks.values >= 0) & (tasks.values <= 1))


@pytest.mark.slow
def test_exact_matches_nuts_on_tinyagent():
    from evalbayes.datasets import load
    from evalbayes.models.beta_binomial._model import BetaBinomialModel

    data = load("tinyagent")
    fit = BetaBinomialModel().fit(data, draws=2000, tune=1000, chains=4, seed=1, check=False)
    nuts = fit.posterior
    exact = exact_posterior(data, *PRIORS, draws=2000, chains=4, seed=2)["posterior"]
    import arviz as az

    for var in ("mu_logit", "log_kappa"):
        ess = np.asarray(az.ess(nuts[[var]])[var])
        m_n = nuts[var].mean(("chain", "draw")).values
        m_e = exact[var].mean(("chain", "draw")).values
        sd = exact[var].std(("chain", "draw")).values
        mc_err = sd * np.sqrt(1 / ess + 1 / 8000)
        assert np.all(np.abs(m_n - m_e) < 4 * mc_err), (var, m_n, m_e, mc_err)
        s_n = nuts[var].std(("chain", "draw")).values
        assert np.all(np.abs(s_n / sd - 1) < 4 * np.sqrt(1 / (2 * ess) + 1 / 16000) + 0.01)


def test_one_trial_per_task_warns_and_kappa_keeps_its_prior():
    import warnings

    from evalbayes.models import BetaBinomialModel

    rng = np.random.default_rng(5)
    n = np.ones((2, 60), int)
    n[1, :] = 3  # the second system ran repeated trials: no warning for it
    data = EvalData.from_arrays(n, rng.binomial(n, 0.4), systems=["once", "thrice"])
    model = BetaBinomialModel()
    with pytest.warns(UserWarning, match=r"\['once'\] ran at most one trial per task") as got:
        post = model.fit(data, draws=4000, chains=2, seed=1)
    # the warning points at the line that called fit, not inside evalbayes or above the caller
    ours = [w for w in got if "one trial per task" in str(w.message)]
    assert [w.filename for w in ours] == [__file__]
    assert "its posterior is its prior" in str(ours[0].message)
    # n = 1 leaves kappa's likelihood flat: its posterior is the prior log kappa ~ N(1, 1.5)
    log_kappa = np.log(post.posterior["kappa"].sel(system="once").values.ravel())
    mean, sd = model.log_kappa_prior
    assert abs(log_kappa.mean() - mean) < 4 * sd / np.sqrt(len(log_kappa)) + 0.05
    assert abs(log_kappa.std() - sd) < 0.08
    repeated = EvalData.from_arrays(n[1:], rng.binomial(n[1:], 0.4), systems=["thrice"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model.fit(repeated, draws=200, chains=2, seed=1)
