"""Planner: population moments, fast posteriors against exact ones, assurance against power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evalbayes.decisions._plan import (
    Population,
    design_sd,
    fast_population_posterior,
    fast_tasks_posterior,
    plan,
    prob_superior,
    task_moments,
)
from evalbayes.frequentist import intra_task_correlation


def test_copula_rates_have_the_stated_moments():
    pop = Population(0.3, 0.6, 0.2, 0.5, correlation=0.7)
    rng = np.random.default_rng(0)
    pa, pb = pop.sample_rates(rng, pop.parameters(rng, 1), 200_000)
    for p, mean, icc in ((pa[0], 0.3, 0.2), (pb[0], 0.6, 0.5)):
        se_mean = p.std() / math.sqrt(p.size)
        assert abs(p.mean() - mean) < 4 * se_mean
        # Var(p) = icc mu (1 - mu); s.e. of the sample variance sqrt(Var((p - mean)^2) / m)
        var = icc * mean * (1 - mean)
        se_var = np.std((p - p.mean()) ** 2) / math.sqrt(p.size)
        assert abs(p.var() - var) < 4 * se_var
    # Gaussian-copula correlation recovered from the normal scores
    za = stats.norm.ppf(stats.beta(0.3 * 4, 0.7 * 4).cdf(pa[0]))
    zb = stats.norm.ppf(stats.beta(0.6 * 1, 0.4 * 1).cdf(pb[0]))
    ok = np.isfinite(za) & np.isfinite(zb)
    assert np.corrcoef(za[ok], zb[ok])[0, 1] == pytest.approx(0.7, abs=0.01)


def test_task_moments_closed_form_without_correlation():
    pop = Population(0.3, 0.6, 0.2, 0.5, correlation=0.0)
    var_diff, binvar = task_moments(pop, paired=True, size=400_000)
    assert var_diff == pytest.approx(0.2 * 0.21 + 0.5 * 0.24, rel=0.02)
    # E[p (1 - p)] = mu (1 - mu) (1 - icc)
    assert binvar == pytest.approx(0.21 * 0.8 + 0.24 * 0.5, rel=0.01)
    # the chapter 17.3 floor: more trials shrink sd_d only down to sqrt(Var(p_B - p_A))
    sds = [design_sd(pop, n, "population", True) for n in (1, 16, 256, 4096)]
    assert sds == sorted(sds, reverse=True)
    assert sds[-1] == pytest.approx(math.sqrt(var_diff), rel=0.01)
    assert design_sd(pop, 4096, "tasks", True) < 0.02


def test_from_data_uses_the_moment_estimator(tinyagent):
    pop = Population.from_data(tinyagent, "GRPO 20", "GRPO 80")
    n, c = tinyagent.n.values, tinyagent.c.values
    i = tinyagent.systems.index("GRPO 20")
    itc = intra_task_correlation(n[i], c[i])
    assert pop.mean_a == pytest.approx(itc.mean) and pop.icc_a == pytest.approx(itc.rho)
    assert 0.5 < pop.correlation < 1.0
    with pytest.raises(ValueError, match="unknown candidate"):
        Population.from_data(tinyagent, "GRPO 20", "GRPO 99")


def test_fast_tasks_posterior_matches_the_exact_no_pooling_posterior():
    """Normal approximation vs Monte Carlo from the exact independent Beta posteriors."""
    rng = np.random.default_rng(4)
    n, n_tasks = 8, 12
    ca = rng.binomial(n, rng.beta(2, 2, n_tasks))
    cb = rng.binomial(n, rng.beta(3, 2, n_tasks))
    loc, sd = fast_tasks_posterior(ca[None], cb[None], n, pooling="none")
    draws = (rng.beta(1 + cb, 1 + n - cb, (200_000, n_tasks))
             - rng.beta(1 + ca, 1 + n - ca, (200_000, n_tasks))).mean(axis=1)
    assert loc[0] == pytest.approx(draws.mean(), abs=4 * draws.std() / math.sqrt(draws.size))
    assert sd[0] == pytest.approx(draws.std(), rel=0.01)
    exact = np.mean(draws > 0)
    assert prob_superior(loc, sd)[0] == pytest.approx(exact, abs=0.01)


def test_fast_population_posterior_is_the_paired_t():
    ca = np.array([[3, 5, 1, 7, 2]])
    cb = np.array([[4, 8, 1, 8, 5]])
    loc, scale, df = fast_population_posterior(ca, cb, 8, paired=True)
    d = (cb - ca)[0] / 8
    assert loc[0] == pytest.approx(d.mean())
    assert scale[0] == pytest.approx(d.std(ddof=1) / math.sqrt(5))
    # P(mu_d > 0) equals 1 - the one-sided paired t-test p-value (reference prior)
    p_one_sided = stats.ttest_1samp(d, 0.0, alternative="greater").pvalue
    assert prob_superior(loc, scale, df)[0] == pytest.approx(1 - p_one_sided)


def test_assurance_with_fixed_parameters_approaches_frequentist_power():
    """Large N: P(post > 0.95) is the one-sided z-test, so Bayesian power = power."""
    pop = Population(0.5, 0.56, 0.2, 0.2, correlation=0.8)
    res = plan(pop, tasks=(60,), trials=(4,), estimands=("population",), n_sims=2000, seed=3)
    row = res.table.iloc[0]
    # tolerance: 4 Monte Carlo s.e. plus the t(59) vs z difference in the cut-off
    t_shift = stats.norm.pdf(1.645) * (stats.t.ppf(0.95, 59) - 1.645)
    assert abs(row["assurance"] - row["power"]) < 4 * row["assurance_se"] + t_shift
    # wrong decisions are rare when the effect is real
    assert row["wrong"] == 0.0


def test_chapter_17_3_lesson_trials_help_only_the_tasks_estimand(tinyagent):
    res = plan(tinyagent, baseline="GRPO 20", candidate="GRPO 80", tasks=(5,),
               trials=(1, 4, 16, 64), n_sims=600, seed=1)
    tab = res.table.set_index(["estimand", "trials"])["assurance"]
    se = res.table["assurance_se"].max()
    tasks_curve = [tab["tasks", n] for n in (1, 4, 16, 64)]
    pop_curve = [tab["population", n] for n in (1, 4, 16, 64)]
    assert tasks_curve[-1] > 0.9  # trial noise gone: these 5 tasks are decided
    assert pop_curve[-1] < 0.75  # 5 tasks cannot pin the population down
    assert tasks_curve[-1] - tasks_curve[1] > 4 * se
    # more tasks do help the population estimand
    more = plan(tinyagent, baseline="GRPO 20", candidate="GRPO 80", tasks=(30,), trials=(64,),
                estimands=("population",), n_sims=600, seed=1)
    assert more.table["assurance"].iloc[0] > pop_curve[-1] + 4 * se
    assert "tasks for 80% assurance" in res.summary()
    assert res.tasks_needed("tasks", 64, 0.8) == 5


def test_plan_rejects_bad_input(tinyagent):
    pop = Population(0.5, 0.6, 0.1, 0.1)
    with pytest.raises(ValueError, match="tasks"):
        plan(pop, tasks=(1,))
    with pytest.raises(ValueError, match="estimand"):
        plan(pop, estimands=("these",))
    with pytest.raises(ValueError, match="name the baseline"):
        plan(tinyagent)
    with pytest.raises(ValueError, match="width"):
        plan(pop, target="width")
    with pytest.raises(ValueError, match="icc_a"):
        Population(0.5, 0.6, 1.0, 0.1)


def test_width_target():
    pop = Population(0.5, 0.6, 0.1, 0.1, correlation=0.5)
    res = plan(pop, tasks=(10, 200), trials=(8,), target="width", width=0.1,
               estimands=("population",), n_sims=200)
    a = res.table.set_index("tasks")["assurance"]
    assert a[10] == 0.0 and a[200] == 1.0


def test_plot_assurance():
    import matplotlib

    matplotlib.use("Agg")
    from evalbayes.plots._assurance import plot_assurance

    pop = Population(0.5, 0.6, 0.3, 0.3, correlation=0.5)
    res = plan(pop, tasks=(5, 20), trials=(1, 8), n_sims=50)
    ax = plot_assurance(res, "tasks")
    assert len(ax.lines) >= 2 and "tasks" in ax.get_title()
    with pytest.raises(ValueError, match="estimand"):
        plot_assurance(res, "nope")
