"""Normal hierarchy vs 2-D quadrature; groups; shrinkage FDR; winner's curse vs E[max Z]."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from evalbayes.decisions._groups import (
    holm_groups,
    leaderboard_groups,
    multiple_comparison_study,
    plausibly_best,
    shrink_effects,
    tie_groups,
)
from evalbayes.decisions._normal_hierarchy import fit_normal_hierarchy
from evalbayes.decisions._selection import select_winner, winners_curse_study

SCHOOLS_Y = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
SCHOOLS_S = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])


def test_hierarchy_matches_brute_force_quadrature_over_mu_and_tau():
    fit = fit_normal_hierarchy(SCHOOLS_Y, SCHOOLS_S, tau_max=60.0, grid=600)
    mu = np.linspace(-60, 80, 1401)
    tau = np.linspace(0.05, 60, 1200)
    M, T = np.meshgrid(mu, tau, indexing="ij")
    var = SCHOOLS_S**2 + T[..., None] ** 2
    logp = (-0.5 * np.log(var) - 0.5 * (SCHOOLS_Y - M[..., None]) ** 2 / var).sum(-1)
    w = np.exp(logp - logp.max())
    w /= w.sum()
    shrink = SCHOOLS_S**2 / var
    cond_mean = (1 - shrink) * SCHOOLS_Y + shrink * M[..., None]
    ref = (w[..., None] * cond_mean).sum(axis=(0, 1))
    np.testing.assert_allclose(fit.mean, ref, atol=0.05)
    assert fit.tau_mean == pytest.approx((w * T).sum(), abs=0.05)
    # BDA3 Table 5.3 (simulation, rounded): school A posterior median 10, 95% [-2, 31]
    draws = fit.sample(40_000, seed=1)[:, 0]
    assert np.median(draws) == pytest.approx(10, abs=1.0)


def test_hierarchy_with_fixed_mu_matches_1d_quadrature():
    y, s = np.array([0.5, -0.2, 1.5]), np.array([0.4, 0.5, 0.6])
    fit = fit_normal_hierarchy(y, s, mu=0.0, tau_max=5.0, grid=2000)

    def dens(t):
        return np.prod(stats.norm.pdf(y, 0, np.sqrt(s**2 + t**2)))

    z = integrate.quad(dens, 0, 5, limit=200)[0]
    ref = [integrate.quad(lambda t, i=i: t**2 / (s[i] ** 2 + t**2) * y[i] * dens(t), 0, 5,
                          limit=200)[0] / z for i in range(3)]
    np.testing.assert_allclose(fit.mean, ref, atol=1e-4)


def test_plausibly_best_and_tie_groups_by_hand():
    assert sorted(plausibly_best([0.6, 0.3, 0.08, 0.02], 0.95)) == [0, 1, 2]
    assert list(plausibly_best([0.97, 0.02, 0.01], 0.95)) == [0]
    means = [0.9, 0.85, 0.5, 0.48]
    sup = np.array([[0, 0.8, 0.99, 0.99], [0.2, 0, 0.99, 0.99],
                    [0.01, 0.01, 0, 0.6], [0.01, 0.01, 0.4, 0]])
    assert list(tie_groups(means, sup, 0.95)) == [0, 0, 1, 1]


def test_leaderboard_and_holm_groups_on_tinyagent(tinyagent):
    from evalbayes.models.beta_binomial._model import BetaBinomialModel
    from evalbayes.results._comparison import compare

    fit = BetaBinomialModel(pooling="none").fit(tinyagent, draws=500, chains=2, seed=0)
    board = leaderboard_groups(compare(fit, k=1))
    assert board["system"].iloc[0] == "GRPO 80" and board["plausibly_best"].iloc[0]
    assert board.loc[board["system"] == "RL base", "group"].item() > 0
    freq = holm_groups(tinyagent, n_resamples=2000)
    # 10 tasks: the sign-flip test cannot separate GRPO 20 from GRPO 80 after Holm
    assert freq.loc[freq["system"] == "RL base", "group"].item() > 0
    assert set(freq["system"]) == set(tinyagent.systems)


def test_shrinkage_controls_false_discoveries_better_than_unadjusted():
    res = multiple_comparison_study(m=40, n_sims=40, seed=2)
    fdr = res.set_index("method")["fdr"]
    se = res.set_index("method")["fdr_se"]
    assert fdr["shrinkage"] < fdr["unadjusted"] - 2 * (se["shrinkage"] + se["unadjusted"])
    all_null = shrink_effects(np.random.default_rng(0).normal(0, 1, 30), np.ones(30))
    assert (all_null.table["claim"] != "").sum() <= 1
    assert all_null.tau < 0.6


def test_winners_curse_naive_bias_is_sigma_times_expected_max():
    m, sigma = 8, 1.0
    # E[max of 8 standard normals] = int z d(Phi^8) = 1.4236 (numerical integration)
    e_max = integrate.quad(lambda z: z * m * stats.norm.pdf(z) * stats.norm.cdf(z) ** (m - 1),
                           -10, 10)[0]
    res = winners_curse_study(m=m, sigma=sigma, tau=0.0, n_sims=400, draws=500, seed=1)
    row = res.set_index("estimator")
    assert abs(row.loc["naive", "bias"] - sigma * e_max) < 4 * row.loc["naive", "bias_se"]
    assert abs(row.loc["shrunk", "bias"]) < 0.35 * sigma * e_max


def test_p_truly_best_is_calibrated_when_checkpoints_differ():
    res = winners_curse_study(m=6, sigma=1.0, tau=1.0, n_sims=300, draws=1000, seed=3)
    pred, obs = res.attrs["p_truly_best_predicted"], res.attrs["p_truly_best_observed"]
    assert abs(pred - obs) < 4 * np.sqrt(obs * (1 - obs) / 300)
    one = select_winner([0.70, 0.74, 0.72], [0.02, 0.02, 0.02], ["a", "b", "c"])
    assert one.label == "b" and one.shrunk_mean < one.naive
