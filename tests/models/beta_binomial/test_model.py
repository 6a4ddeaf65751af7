"""BetaBinomialModel and Posterior: closed forms, seeds' numbers, save/load, diagnostics."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evalbayes
from evalbayes import EvalData
from evalbayes._core.intervals import credible_interval
from evalbayes.metrics._pass import beta_pass_at_k, beta_pass_hat_k
from evalbayes.models import BetaBinomialModel, get_model, model_from_config
from evalbayes.results._diagnostics import ConvergenceWarning

# "Don't Pass@k" (Hariri et al., ICLR 2026; cited in seed 001 "Sources"): two questions,
# five trials each, R = [[0,1,1,0,1],[1,1,0,1,1]] -> c = (3, 4) of n = 5.
DONT_PASS_K = EvalData.from_arrays([[5, 5]], [[3, 4]], systems=["model"], tasks=["q1", "q2"])


def test_pooling_none_closed_form_reproduces_dont_pass_at_k_numbers():
    a = 1 + np.array([3, 4])
    b = 1 + np.array([2, 1])
    assert beta_pass_at_k(a, b, 1)[:, 0].mean() == pytest.approx(0.642857, abs=5e-7)
    assert beta_pass_at_k(a, b, 2)[:, 0].mean() == pytest.approx(0.839286, abs=5e-7)
    assert beta_pass_hat_k(a, b, 2)[:, 0].mean() == pytest.approx(0.446429, abs=5e-7)
    # sd of the task average of independent Beta(a, b): sqrt(sum var) / 2.
    var = a * b / ((a + b) ** 2 * (a + b + 1))
    assert np.sqrt(var.sum()) / 2 == pytest.approx(0.118451, abs=5e-7)


def test_pooling_none_posterior_draws_match_dont_pass_at_k_within_mc_error():
    post = BetaBinomialModel(pooling="none").fit(DONT_PASS_K, draws=50_000, chains=2, seed=3)
    draws = post.pass_at_k([1, 2]).sel(system="model")
    size = draws.sizes["chain"] * draws.sizes["draw"]
    mean = draws.mean(("chain", "draw")).values
    sd = draws.std(("chain", "draw")).values
    se_mean = sd / np.sqrt(size)
    assert abs(mean[0] - 0.642857) < 4 * se_mean[0]
    assert abs(mean[1] - 0.839286) < 4 * se_mean[1]
    assert abs(sd[0] - 0.118451) < 4 * 0.118451 / np.sqrt(2 * size)
    hat = post.pass_hat_k(2).sel(system="model", k=2)
    assert abs(float(hat.mean()) - 0.446429) < 4 * float(hat.std()) / np.sqrt(size)
    with pytest.raises(ValueError, match="not available for beta-binomial with pooling='none'"):
        post.pass_at_k(1, estimand="population")


def test_pooling_complete_is_one_beta_per_system():
    data = EvalData.from_arrays([[10, 10, 10]], [[0, 5, 10]])
    post = BetaBinomialModel(pooling="complete").fit(data, draws=40_000, chains=1, seed=0)
    draws = post.pass_at_k(1).sel(system="system_0", k=1)
    expected = (1 + 15) / (2 + 30)
    assert abs(float(draws.mean()) - expected) < 4 * float(draws.std()) / np.sqrt(40_000)
    population = post.pass_at_k(1, estimand="population")
    # the same p for every task: both estimands are f(p); the tasks average of three equal
    # terms differs from f(p) by rounding only
    np.testing.assert_allclose(population.values, post.pass_at_k(1).values, rtol=1e-14)


def test_tasks_estimand_mean_agrees_with_rao_blackwell_closed_form(tinyagent_fit):
    ks = np.array([1.0, 4.0, 32.0, 100.0])
    for metric in ("pass@k", "pass^k"):
        draws = tinyagent_fit.curve(metric, ks)
        closed = tinyagent_fit.model.expected_curve(
            tinyagent_fit.posterior, tinyagent_fit.data, ks, metric
        )
        # MC error of the difference: per-draw spread of (draws - closed) over sqrt(#draws).
        diff = draws - closed
        size = diff.sizes["chain"] * diff.sizes["draw"]
        se = diff.std(("chain", "draw")) / np.sqrt(size)
        assert bool((abs(diff.mean(("chain", "draw"))) <= 4 * se + 1e-12).all())


def test_tasks_interval_includes_trial_noise(tinyagent_fit):
    """The 'tasks' draws must be wider than the per-draw conditional expectation."""
    draws = tinyagent_fit.pass_at_k(1).sel(k=1)
    closed = tinyagent_fit.model.expected_curve(
        tinyagent_fit.posterior, tinyagent_fit.data, np.array([1.0]), "pass@k"
    ).sel(k=1)
    assert bool((draws.std(("chain", "draw")) > closed.std(("chain", "draw"))).all())
    # For GRPO 80 on sec17.1 (c = 31,32,31,30,29,17,31,1,29,31 of 32), the posterior sd of
    # the average of ten independent task rates is about sqrt(sum var_t)/10 with
    # var_t ~ Beta(c+1, n-c+1): ~0.0125. The tasks sd must be of that size.
    c = np.array([31, 32, 31, 30, 29, 17, 31, 1, 29, 31])
    a, b = c + 1, 32 - c + 1
    sd_independent = np.sqrt((a * b / ((a + b) ** 2 * (a + b + 1))).sum()) / 10
    sd = float(draws.sel(system="GRPO 80").std())
    assert 0.7 * sd_independent < sd < 1.3 * sd_independent


def test_tinyagent_fit_converges(tinyagent_fit):
    diag = tinyagent_fit.diagnostics(warn=False)
    assert diag.divergences == 0
    assert diag.rhat_max <= 1.01
    assert diag.ess_bulk_min >= 400
    assert diag.passed


def test_population_interval_several_times_wider_than_tasks(tinyagent_fit):
    """Ch. 17.3: the task-level interval of GRPO 80 is 4.4x the episode-level one."""
    widths = {}
    for estimand in ("tasks", "population"):
        lower, upper = credible_interval(
            tinyagent_fit.pass_at_k(1, estimand=estimand).sel(k=1), 0.95
        )
        widths[estimand] = (upper - lower).sel(system="GRPO 80").item()
    assert widths["population"] > 3 * widths["tasks"]
    # and the population interval overlaps the task bootstrap's [0.60, 0.96] of ch. 17.3
    lower, upper = credible_interval(
        tinyagent_fit.pass_at_k(1, estimand="population").sel(k=1, system="GRPO 80"), 0.95
    )
    assert lower.item() < 0.96 and upper.item() > 0.60


def test_curve_dims_and_k_beyond_n(tinyagent_fit):
    draws = tinyagent_fit.pass_at_k([1, 64, 1024], estimand="population")
    assert draws.dims == ("chain", "draw", "system", "k")
    assert draws.attrs["estimand"] == "population"
    per_task = tinyagent_fit.pass_hat_k([1, 2], per_task=True)
    assert per_task.dims == ("chain", "draw", "system", "task", "k")
    assert per_task.sizes["task"] == 10
    with pytest.raises(ValueError, match="per_task=True needs estimand='tasks'"):
        tinyagent_fit.pass_at_k(1, estimand="population", per_task=True)
    with pytest.raises(ValueError, match="estimand must be one of"):
        tinyagent_fit.pass_at_k(1, estimand="these")
    with pytest.raises(ValueError, match="metric must be one of"):
        tinyagent_fit.curve("pass@1", 1)


def test_same_seed_same_numbers(tinyagent_fit):
    first = tinyagent_fit.pass_at_k([1, 8])
    second = tinyagent_fit.pass_at_k([1, 8])
    np.testing.assert_array_equal(first.values, second.values)
    again = BetaBinomialModel().fit(
        tinyagent_fit.data, method="nutpie", draws=1000, tune=1000, chains=4, seed=1
    )
    np.testing.assert_array_equal(
        again.posterior["mu"].values, tinyagent_fit.posterior["mu"].values
    )


def test_success_prob_and_posterior_predictive(tinyagent_fit):
    p = tinyagent_fit.success_prob()
    assert p.dims == ("chain", "draw", "system", "task")
    assert bool(((p >= 0) & (p <= 1)).all())
    rep = tinyagent_fit.posterior_predictive(seed=2)
    assert bool(((rep >= 0) & (rep <= 32)).all())
    check = tinyagent_fit.ppc()
    assert set(check.table["system"]) == {"RL base", "GRPO 80"}
    assert check.bins == "count"
    assert check.table.groupby("system")["observed"].sum().tolist() == [10, 10]


def test_ppc_flags_complete_pooling_on_u_shaped_tasks():
    """Without task heterogeneity the model cannot reproduce a U-shaped count histogram."""
    rng = np.random.default_rng(5)
    p = rng.beta(0.4, 0.3, size=200)
    data = EvalData.from_arrays(np.full((1, 200), 16), rng.binomial(16, p)[None, :])
    complete = BetaBinomialModel(pooling="complete").fit(data, draws=500, chains=2, seed=1)
    partial = BetaBinomialModel().fit(data, draws=500, tune=500, chains=2, seed=1)
    assert complete.ppc().outside_fraction > 0.5
    assert partial.ppc().outside_fraction < 0.3


def test_save_load_round_trip_is_exact(tmp_path, tinyagent_fit):
    path = tinyagent_fit.save(tmp_path / "fit.nc")
    restored = evalbayes.load(path)
    assert restored.data.equals(tinyagent_fit.data) or (
        restored.data.systems == tinyagent_fit.data.systems
        and np.array_equal(restored.data.n.values, tinyagent_fit.data.n.values)
    )
    assert restored.model == tinyagent_fit.model
    assert restored.sampler == tinyagent_fit.sampler
    for estimand in ("tasks", "population"):
        for metric in ("pass@k", "pass^k"):
            np.testing.assert_array_equal(
                restored.curve(metric, [1, 3, 100], estimand=estimand).values,
                tinyagent_fit.curve(metric, [1, 3, 100], estimand=estimand).values,
            )
    np.testing.assert_array_equal(
        restored.pass_at_k(2, per_task=True).values,
        tinyagent_fit.pass_at_k(2, per_task=True).values,
    )
    assert restored.summary(k=[1, 4]).equals(tinyagent_fit.summary(k=[1, 4]))


def test_load_refuses_foreign_and_tampered_files(tmp_path, tinyagent_fit):
    foreign = tmp_path / "foreign.nc"
    xr.Dataset({"x": ("a", [1.0, 2.0])}).to_netcdf(foreign, engine="h5netcdf")
    with pytest.raises(ValueError, match="not an evalbayes fit"):
        evalbayes.load(foreign)
    text = tmp_path / "text.nc"
    text.write_text("hello")
    with pytest.raises(ValueError, match="not a NetCDF file written by evalbayes"):
        evalbayes.load(text)
    with pytest.raises(FileNotFoundError):
        evalbayes.load(tmp_path / "missing.nc")


def _edit_saved_fit(fit, tmp_path, name, edit):
    """Save ``fit``, edit the file as a careless user would, write it back."""
    saved = fit.save(tmp_path / f"{name}-orig.nc")
    tree = xr.open_datatree(saved, engine="h5netcdf").load()
    edit(tree)
    out = tmp_path / f"{name}.nc"
    tree.to_netcdf(out, engine="h5netcdf")
    return out


def _set_config(tree):
    config = json.loads(tree.attrs["model_config"])
    config["log_kappa_prior"] = [0.0, 9.0]
    tree.attrs["model_config"] = json.dumps(config)


def _set_seed(tree):
    sampler = json.loads(tree.attrs["sampler"])
    sampler["seed"] = 99
    tree.attrs["sampler"] = json.dumps(sampler)


def _scale_draws(tree):
    tree["posterior"]["kappa"] = tree["posterior"]["kappa"] * 1.5


def _flip_divergences(tree):
    stats = tree["sample_stats"].to_dataset()
    tree["sample_stats"] = xr.DataTree(stats.assign(diverging=~stats["diverging"].astype(bool)))


def _hide_bad_rhat(tree):
    stats = tree["convergence"].to_dataset()
    tree["convergence"] = xr.DataTree(stats.assign(kappa=stats["kappa"] * 0 + 1.0))


def _shift_saved_curve(tree):
    curves = tree["curves"].to_dataset()
    tree["curves"] = xr.DataTree(curves.assign(curve_0=curves["curve_0"] * 0.5))


def _rename_task(tree):
    observed = tree["observed_data"].to_dataset()
    tasks = [str(t) for t in observed["task"].values]
    tasks[0] = "renamed"
    tree["observed_data"] = xr.DataTree(observed.assign_coords(task=tasks))


@pytest.mark.parametrize(
    ("name", "edit", "what"),
    [
        ("config", _set_config, "'model_config' settings changed"),
        ("seed", _set_seed, "'sampler' settings changed"),
        ("draws", _scale_draws, "'posterior' group changed"),
        ("stats", _flip_divergences, "'sample_stats' group changed"),
        ("coords", _rename_task, "'observed_data' group changed"),
        ("convergence", _hide_bad_rhat, "'convergence' group changed"),
        ("curves", _shift_saved_curve, "'curves' group changed"),
    ],
)
def test_load_refuses_edited_fits_naming_what_changed(tmp_path, tinyagent_fit, name, edit, what,
                                                      monkeypatch):
    from evalbayes.results import _posterior

    monkeypatch.setattr(_posterior, "SAVED_CURVES_CELL_DRAWS", (0, 1e9))  # keep them: small
    untouched = _edit_saved_fit(tinyagent_fit, tmp_path, "same", lambda tree: None)
    evalbayes.load(untouched)  # a plain re-write is not an edit
    tampered = _edit_saved_fit(tinyagent_fit, tmp_path, name, edit)
    with pytest.raises(ValueError, match=what):
        evalbayes.load(tampered)


def test_saved_diagnostics_are_read_back_not_recomputed(tmp_path, tinyagent_fit, monkeypatch):
    """save stores each parameter's R-hat and ESS (the ``convergence`` group); load reads
    them back instead of computing them again, and they equal a fresh computation on the
    loaded draws."""
    from evalbayes.results import _diagnostics

    path = tinyagent_fit.save(tmp_path / "fit.nc")
    fresh = _diagnostics.convergence_diagnostics(
        tinyagent_fit.posterior, tinyagent_fit.sample_stats, warn=False
    )
    calls = []
    real = _diagnostics.rhat_ess
    monkeypatch.setattr(_diagnostics, "rhat_ess", lambda v: calls.append(1) or real(v))
    restored = evalbayes.load(path)
    loaded = restored.diagnostics(warn=False)
    assert calls == []
    assert "convergence" not in restored.tree.children
    pd.testing.assert_frame_equal(loaded.table, fresh.table)
    assert loaded.problems == fresh.problems
    # saving the loaded fit again writes the same file content
    again = evalbayes.load(restored.save(tmp_path / "again.nc"))
    pd.testing.assert_frame_equal(again.diagnostics(warn=False).table, fresh.table)


def test_config_round_trip_and_registry():
    model = BetaBinomialModel(pooling="partial", hyperprior="shared", log_kappa_prior=(2.0, 1.0))
    config = model.to_config()
    assert config["model"] == "beta-binomial"
    assert model_from_config(config) == model
    assert get_model("beta-binomial", pooling="none") == BetaBinomialModel(pooling="none")
    with pytest.raises(ValueError, match="unknown model"):
        get_model("gaussian-process")
    with pytest.raises(ValueError, match="unknown beta-binomial settings"):
        model_from_config({"model": "beta-binomial", "pool": "none"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pooling": "some"}, "pooling must be"),
        ({"hyperprior": "global"}, "hyperprior must be"),
        ({"mu_prior": (0.0, 1.0)}, "mu_prior must be two positive numbers"),
        ({"log_kappa_prior": (1.0, -1.0)}, "log_kappa_prior must be"),
    ],
)
def test_bad_model_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BetaBinomialModel(**kwargs)


def test_bad_sampler_settings(tinyagent_171):
    with pytest.raises(ValueError, match="method must be one of"):
        BetaBinomialModel().fit(tinyagent_171, method="gibbs")
    with pytest.raises(ValueError, match="draws must be an integer >= 1"):
        BetaBinomialModel().fit(tinyagent_171, draws=0)
    with pytest.raises(TypeError, match="fit expects EvalData"):
        BetaBinomialModel().fit({"n": [1]})


def test_missing_cells_are_skipped():
    data = EvalData.from_arrays([[8, 0, 8], [8, 8, 8]], [[8, 0, 0], [4, 4, 4]])
    post = BetaBinomialModel(pooling="none").fit(data, draws=20_000, chains=1, seed=0)
    draws = post.pass_at_k(1).sel(k=1, system="system_0")
    # average over the two observed tasks only: Beta(9, 1) and Beta(1, 9) -> 0.5
    assert abs(float(draws.mean()) - 0.5) < 4 * float(draws.std()) / np.sqrt(20_000)


def test_non_converged_fit_warns_loudly(tinyagent_171):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        BetaBinomialModel().fit(tinyagent_171, method="nutpie", draws=20, tune=5, chains=2, seed=0)
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


def test_loo_runs_on_pointwise_log_likelihood(tinyagent_fit):
    log_lik = tinyagent_fit.log_likelihood()
    assert log_lik.dims == ("chain", "draw", "cell")
    assert log_lik.sizes["cell"] == 20
    assert bool(np.isfinite(log_lik).all())


@pytest.mark.slow  # compiles a PyMC/nutpie graph or runs mypy: the slow tier
def test_shared_hyperprior_fits_and_borrows_strength(tinyagent):
    post = BetaBinomialModel(hyperprior="shared").fit(
        tinyagent, draws=1000, tune=1000, chains=4, seed=4, target_accept=0.95
    )
    diag = post.diagnostics(warn=False)
    assert diag.passed, str(diag)
    assert {"mu_logit_loc", "log_kappa_scale"} <= set(post.posterior.data_vars)
    draws = post.pass_at_k([1, 8], estimand="population")
    assert draws.dims == ("chain", "draw", "system", "k")
    # borrowing strength: the shared log-kappa location lies between the systems' values
    loc = float(post.posterior["log_kappa_loc"].mean())
    per_system = post.posterior["log_kappa"].mean(("chain", "draw")).values
    assert per_system.min() - 0.5 < loc < per_system.max() + 0.5


def test_stable_beta_binomial_log_ratio_against_references():
    """The likelihood's finite-sum form equals betaln differences where those are accurate
    and the Binomial limit at huge kappa, where differences of gammaln lose all precision."""
    import pytensor
    import pytensor.tensor as pt
    from scipy.special import betaln, expit

    from evalbayes.models.beta_binomial._model import _log_beta_binomial_ratio

    n_var, c_var = pt.lvector("n"), pt.lvector("c")
    x_var, k_var = pt.dvector("x"), pt.dvector("k")
    fn = pytensor.function(
        [n_var, c_var, x_var, k_var], _log_beta_binomial_ratio(n_var, c_var, x_var, k_var, 64)
    )
    n = np.array([1, 5, 32, 64, 64, 17])
    c = np.array([0, 3, 31, 0, 64, 9])
    x = np.array([-2.0, 0.3, 4.0, -0.5, 1.5, 0.0])
    log_kappa = np.array([-3.0, 0.0, 2.0, 5.0, 1.0, 8.0])
    mu, kappa = expit(x), np.exp(log_kappa)
    reference = betaln(mu * kappa + c, (1 - mu) * kappa + n - c) - betaln(mu * kappa,
                                                                          (1 - mu) * kappa)
    np.testing.assert_allclose(fn(n, c, x, log_kappa), reference, rtol=1e-9, atol=1e-10)
    huge = np.full(6, 40.0)  # kappa = 2.4e17
    binomial = c * np.log(mu) + (n - c) * np.log1p(-mu)
    np.testing.assert_allclose(fn(n, c, x, huge), binomial, rtol=1e-12, atol=1e-12)


def test_many_trials_per_cell_use_the_gammaln_branch_and_converge():
    """Cells with more than 256 trials (e.g. highk sampling runs) take the gammaln form."""
    rng = np.random.default_rng(8)
    p = rng.beta(2.0, 3.0, size=40)
    n = np.full(40, 1000)
    data = EvalData.from_arrays(n[None, :], rng.binomial(n, p)[None, :])
    post = BetaBinomialModel().fit(data, draws=500, tune=500, chains=2, seed=2)
    diag = post.diagnostics(warn=False)
    assert diag.divergences == 0 and diag.rhat_max < 1.02
    # with 1000 trials per task the population mean is pinned near the mean task rate
    lower, upper = credible_interval(post.pass_at_k(1, estimand="population").sel(k=1), 0.99)
    mean_rate = float((data.c / data.n).mean())
    assert lower.item() < mean_rate < upper.item()


def test_population_comparison_is_paired_by_default():
    """Two systems whose task logits correlate 0.6 (60 tasks, 5 trials): the default
    population ("paired") keeps each system's closed-form population draws exactly (as
    "independent") and pairs the difference through the shared tasks, so its interval is close
    to the paired task bootstrap's (frequentist, evalbayes.frequentist.paired_bootstrap_ci)
    and clearly narrower than the independent draws' difference; the Bayesian-bootstrap form
    (weighted NumPy path, not the compiled kernel) pairs too."""
    from scipy.special import expit

    from evalbayes.frequentist import paired_bootstrap_ci

    rng = np.random.default_rng(5)
    u = rng.multivariate_normal([0.0, 0.5], 4.0 * np.array([[1.0, 0.6], [0.6, 1.0]]), 60).T
    n = np.full((2, 60), 5)
    c = rng.binomial(n, expit(u))
    data = EvalData.from_arrays(n, c, systems=["A", "B"])
    post = BetaBinomialModel().fit(data, draws=1000, chains=4, seed=1)
    boot = paired_bootstrap_ci(c[0] / n[0], c[1] / n[1], seed=0, n_resamples=4000)
    boot_width = boot.upper - boot.lower

    def widths(population: str) -> tuple[float, np.ndarray]:
        model = BetaBinomialModel(population=population)
        pop = model.curve(post.posterior, data, np.array([1]), "pass@k", "population", False,
                          seed=1).sel(k=1)
        diff = (pop.sel(system="B") - pop.sel(system="A")).values.ravel()
        return float(np.diff(np.quantile(diff, [0.025, 0.975]))[0]), pop.values

    paired, paired_draws = widths("paired")
    independent, independent_draws = widths("independent")
    bootstrap, _ = widths("bayesian-bootstrap")
    for s in range(2):
        assert np.array_equal(np.sort(paired_draws[..., s].ravel()),
                              np.sort(independent_draws[..., s].ravel()))
    assert 0.85 < paired / boot_width < 1.25
    assert 0.85 < bootstrap / boot_width < 1.25
    assert independent > 1.15 * paired
    assert BetaBinomialModel(pooling="none", population="paired").population_pairing == "none"
    with pytest.raises(ValueError, match="population must be one of"):
        BetaBinomialModel(population="grid")


def test_row_expectations_are_the_conjugate_means():
    """E[pass@k | mu, kappa, n, c] per distinct (system, n, c) equals
    1 - B(a + c, b + n - c + k) / B(a + c, b + n - c) from scipy's betaln, cell by cell."""
    from scipy.special import betaln

    n = np.array([[4, 4, 4, 0], [16, 1, 16, 16]])
    c = np.array([[0, 4, 0, 0], [3, 1, 16, 3]])
    data = EvalData.from_arrays(n, c)
    model = BetaBinomialModel()
    post = model.fit(data, draws=5, chains=2, seed=3)
    k = np.array([1, 5, 40])
    values, row_of_cell, _ = model.row_expectations(post.posterior, data, k, "pass@k")
    a, b = model._ab(post.posterior)
    assert np.array_equal(row_of_cell < 0, n == 0)
    for s, t in zip(*np.nonzero(n > 0), strict=True):
        ap, bp = a[..., s] + c[s, t], b[..., s] + n[s, t] - c[s, t]
        for j, kj in enumerate(k):
            expect = 1 - np.exp(betaln(ap, bp + kj) - betaln(ap, bp))
            assert np.allclose(values[..., row_of_cell[s, t], j], expect, rtol=1e-9)
    assert BetaBinomialModel(pooling="none").row_expectations(post.posterior, data, k,
                                                              "pass@k") is None
