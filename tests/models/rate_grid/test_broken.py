"""RateGridModel's broken-task mixture: the graph against the NumPy mixture, the conditional
probability of being broken against a direct sum with scipy, rate draws and the population
curve with ``pi0``, the paired population's per-task factor, and recovery of planted broken
tasks (slow)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from scipy.special import logit, logsumexp

from evalbayes import EvalData
from evalbayes.models import RateGridModel, model_from_config
from evalbayes.models._base import bayesian_bootstrap_weights, weighted_row_average


def _posterior(coef: np.ndarray, pi0: np.ndarray, systems: list[str]) -> xr.Dataset:
    """A fake posterior: coefficient draws (chain, draw, system, term) and ``pi0`` draws."""
    return xr.Dataset(
        {"coef": (("chain", "draw", "system", "term"), coef),
         "pi0": (("chain", "draw"), pi0)},
        coords={"chain": np.arange(coef.shape[0]), "draw": np.arange(coef.shape[1]),
                "system": systems, "term": np.arange(coef.shape[3])},
    )


def _data() -> EvalData:
    """Tasks x and z have no success (z observed by B only); y is unobserved by A."""
    n = np.array([[16, 16, 16, 0, 4], [4, 4, 4, 1, 1]])
    c = np.array([[0, 3, 0, 0, 0], [1, 0, 0, 1, 0]])
    return EvalData.from_arrays(n, c, systems=["A", "B"], tasks=list("vwxyz"))


def _model() -> RateGridModel:
    return RateGridModel(degree=2, grid_nodes=15, grid_limit=8.0, tail_terms=0, broken=True)


def _marginal(model: RateGridModel, coef: np.ndarray, n: int, c: int) -> float:
    """``sum_j g(p_j) Binomial(c | n, p_j)`` by a direct sum with scipy's pmf."""
    logits = model.basis @ coef
    g = np.exp(logits - logsumexp(logits))
    return float(g @ stats.binom.pmf(c, n, model.rates_grid))


def test_settings_and_config():
    """Off by default; on with two or more systems when asked; a config round trip."""
    assert RateGridModel().broken is False
    assert not RateGridModel().has_broken(5)
    model = RateGridModel(broken=True)
    assert model.has_broken(2) and not model.has_broken(1)
    one = EvalData.from_arrays(np.array([[4, 4]]), np.array([[0, 1]]))
    assert model.posterior_vars(one) == ["coef"]
    assert model.posterior_vars(_data()) == ["coef", "pi0"]
    assert RateGridModel().posterior_vars(_data()) == ["coef"]
    for bad in ({"broken": "auto"}, {"broken": 1}, {"broken_prior": (1.0, 0.0)},
                {"broken_prior": (1.0,)}):
        with pytest.raises(ValueError, match="broken"):
            RateGridModel(**bad)
    config = RateGridModel(broken=True, broken_prior=(2.0, 5.0)).to_config()
    assert config["broken"] is True and config["broken_prior"] == [2.0, 5.0]
    assert model_from_config(config) == RateGridModel(broken=True, broken_prior=(2.0, 5.0))


def _one_trial_b() -> EvalData:
    """:func:`_data` with B run once on every task (coef_prior="auto": A 3, B 1.25)."""
    n = np.array([[16, 16, 16, 0, 4], [1, 1, 1, 1, 1]])
    c = np.array([[0, 3, 0, 0, 0], [1, 0, 0, 1, 0]])
    return EvalData.from_arrays(n, c, systems=["A", "B"], tasks=list("vwxyz"))


@pytest.mark.parametrize(("make_data", "sds"), [(_data, (3.0, 3.0)),
                                                (_one_trial_b, (3.0, 1.25))])
def test_graph_log_density_is_the_task_mixture(make_data, sds):
    """The compiled log density (no Jacobian) equals the NumPy task mixture plus the Normal
    (each system's sd under coef_prior="auto") and Beta log priors up to one constant:
    compare two points with different ``pi0``."""
    pytest.importorskip("pymc")
    model = _model()
    data = make_data()
    pm_model = model.build(model.inputs(data))
    logp = pm_model.compile_logp(jacobian=False)
    rng = np.random.default_rng(4)
    values = []
    for pi0 in (0.07, 0.4):
        coef = rng.normal(0, 1.5, (2, model.basis.shape[1]))
        post = _posterior(coef[None, None], np.array([[pi0]]), ["A", "B"])
        task_ll = model.task_log_likelihood(post, data).sum()
        # the same sum written out: tasks x, z may be broken, v, w, y cannot
        by_hand = 0.0
        for t in range(5):
            cells = [(s, data.n.values[s, t], data.c.values[s, t]) for s in range(2)
                     if data.n.values[s, t] > 0]
            solvable = (1 - pi0) * math.prod(_marginal(model, coef[s], n, c) for s, n, c in cells)
            zero = all(c == 0 for _, _, c in cells)
            by_hand += math.log(solvable + (pi0 if zero else 0.0))
        assert math.isclose(task_ll, by_hand, rel_tol=1e-10)
        prior = stats.norm(0, np.array(sds)[:, None]).logpdf(coef).sum() + stats.beta(
            *model.broken_prior).logpdf(pi0)
        point = {"coef": coef, "pi0_logodds__": logit(pi0)}
        values.append((logp(point), task_ll + prior))
    (g0, n0), (g1, n1) = values
    assert math.isclose(g1 - g0, n1 - n0, rel_tol=1e-9, abs_tol=1e-8)


def test_broken_probability_is_the_closed_form():
    """P(broken | g, pi0, data) = pi0 / (pi0 + (1 - pi0) prod_s L_s(c = 0)) on tasks with no
    success, 0 elsewhere; cell pieces sum to the task log-likelihood."""
    model = _model()
    data = _data()
    coef = np.random.default_rng(5).normal(0, 2, (1, 3, 2, model.basis.shape[1]))
    pi0 = np.array([[0.02, 0.1, 0.5]])
    post = _posterior(coef, pi0, ["A", "B"])
    got = model.broken_probability(post, data).values
    n, c = data.n.values, data.c.values
    for d in range(3):
        for t in range(5):
            seen = np.flatnonzero(n[:, t] > 0)
            if c[seen, t].sum() > 0:
                assert got[0, d, t] == 0.0
                continue
            solvable = math.prod(_marginal(model, coef[0, d, s], n[s, t], 0) for s in seen)
            p = pi0[0, d]
            assert math.isclose(got[0, d, t], p / (p + (1 - p) * solvable), rel_tol=1e-10)
    s_idx, t_idx = np.nonzero(n > 0)
    pieces = model.cell_log_likelihood(post, data, s_idx, t_idx)
    tasks = model.task_log_likelihood(post, data)
    assert np.allclose(pieces.sum(axis=-1), tasks.sum(axis=-1), rtol=1e-12)


def test_rates_draw_the_broken_indicator_per_task():
    """A task with no success is broken (p = 0 for every system) in a share of the draws equal
    to its conditional probability; tasks with a success never are."""
    model = _model()
    data = _data()
    draws = 20_000
    coef = np.broadcast_to(np.array([0.5, -0.5, -1.0, -2.0]), (1, draws, 2, 4)).copy()
    post = _posterior(coef, np.full((1, draws), 0.3), ["A", "B"])
    p = model.rates(post, data, seed=3, tasks=slice(0, 5))
    prob = model.broken_probability(post, data).values[0, 0]
    for t in (2, 4):  # x, z
        both_zero = np.all(p[0, :, :, t] == 0.0, axis=-1)
        # a draw with both rates 0 is broken, or solvable with both on their atom at 0
        logits = model.basis @ coef[0, 0, 0]
        g0 = np.exp(logits - logsumexp(logits))[0]
        atoms = [g0 / _marginal(model, coef[0, 0, s], data.n.values[s, t], 0)
                 for s in range(2) if data.n.values[s, t] > 0]
        unobserved_zero = [g0 for s in range(2) if data.n.values[s, t] == 0]
        expect = prob[t] + (1 - prob[t]) * math.prod(atoms + unobserved_zero)
        se = math.sqrt(expect * (1 - expect) / draws)
        assert abs(both_zero.mean() - expect) < 4.5 * se, (t, both_zero.mean(), expect)
    assert np.array_equal(p, model.rates(post, data, seed=3, tasks=slice(0, 5)))


def test_population_curve_and_paired_reference_with_broken_tasks():
    """Population: (1 - pi0) sum_j g(p_j) f(p_j). Paired reference: the Bayesian bootstrap of
    each cell's E[f(p)] = (1 - q_t) E[f(p) | solvable, n, c] (q_t = P(broken)), cell by cell."""
    model = _model()
    data = _data()
    coef = np.random.default_rng(6).normal(0, 2, (2, 3, 2, model.basis.shape[1]))
    pi0 = np.array([[0.05, 0.2, 0.6], [0.1, 0.3, 0.9]])
    post = _posterior(coef, pi0, ["A", "B"])
    k = np.array([1, 4, 50])
    grid = model.rates_grid
    pop = model.population_curve(post, data, k, "pass@k")
    for ch in range(2):
        for d in range(3):
            for s in range(2):
                logits = model.basis @ coef[ch, d, s]
                g = np.exp(logits - logsumexp(logits))
                expect = (1 - pi0[ch, d]) * (g @ (1 - (1 - grid[:, None]) ** k))
                assert np.allclose(pop[ch, d, s], expect, rtol=1e-12)
    expected = model.row_expectations(post, data, k, "pass@k")
    q = model.broken_probability(post, data).values
    weights = bayesian_bootstrap_weights(2, 3, 5, seed=2)
    got = weighted_row_average(expected.values, expected.row_of_cell, weights,
                               expected.task_scale)
    n, c = data.n.values, data.c.values
    for ch in range(2):
        for d in range(3):
            for s in range(2):
                logits = model.basis @ coef[ch, d, s]
                g = np.exp(logits - logsumexp(logits))
                total, weight = np.zeros(len(k)), 0.0
                for t in np.flatnonzero(n[s] > 0):
                    post_j = g * stats.binom.pmf(c[s, t], n[s, t], grid)
                    mean = (post_j / post_j.sum()) @ (1 - (1 - grid[:, None]) ** k)
                    total += weights[ch, d, t] * (1 - q[ch, d, t]) * mean
                    weight += weights[ch, d, t]
                assert np.allclose(got[ch, d, s], total / weight, rtol=1e-10)


def test_single_system_fit_has_no_broken_mass():
    pytest.importorskip("pymc")
    data = EvalData.from_arrays(np.array([[4, 4, 4, 4]]), np.array([[0, 1, 4, 0]]))
    model = RateGridModel(broken=True)
    post = model.fit(data, draws=30, tune=30, chains=1, seed=1, check=False)
    assert "pi0" not in post.posterior and not post.has_broken_tasks
    assert np.all(model.broken_probability(post.posterior, data).values == 0)
    with pytest.raises(ValueError, match="no broken-task mixture"):
        post.broken_tasks()


@pytest.mark.slow
def test_planted_broken_tasks_are_found():
    """Eight systems x 60 tasks x 8 trials with 6 planted broken tasks and every other task
    solvable at rates 0.2-0.9: the planted ones get P(broken) > 0.9, every task with a success
    exactly 0, and pi0's interval covers the planted share (0.1)."""
    rng = np.random.default_rng(12)
    systems, tasks, trials = 8, 60, 8
    p = rng.uniform(0.2, 0.9, (systems, tasks))
    broken = np.zeros(tasks, bool)
    broken[rng.choice(tasks, 6, replace=False)] = True
    p[:, broken] = 0.0
    n = np.full((systems, tasks), trials)
    data = EvalData.from_arrays(n, rng.binomial(n, p))
    model = RateGridModel(broken=True)
    post = model.fit(data, draws=600, tune=600, chains=2, seed=3)
    prob = model.broken_probability(post.posterior, data).mean(("chain", "draw")).values
    assert np.all(prob[broken] > 0.9), prob[broken]
    solved = data.c.values.sum(axis=0) > 0
    assert np.all(prob[solved] == 0.0)
    lo, hi = np.quantile(post.posterior["pi0"].values, [0.025, 0.975])
    assert lo < 0.1 < hi


@pytest.mark.slow  # compiles a PyMC/nutpie graph or runs mypy: the slow tier
def test_broken_task_table_cli_and_report(tmp_path, capsys):
    """A task that none of six systems solves in 30 trials each is listed first with
    P(broken) > 0.5 by Posterior.broken_tasks, `evalbayes items FIT` and the report; tasks
    with a success read exactly 0."""
    pytest.importorskip("pymc")
    from evalbayes.cli import main
    from evalbayes.report import write_report

    rng = np.random.default_rng(3)
    n = np.full((6, 12), 30)
    p = rng.uniform(0.3, 0.9, n.shape)
    p[:, 4] = 0.0
    data = EvalData.from_arrays(n, rng.binomial(n, p), tasks=[f"t{i}" for i in range(12)])
    post = RateGridModel(broken=True).fit(data, draws=300, tune=300, chains=2, seed=2,
                                          check=False)
    table = post.broken_tasks()
    assert list(table.columns) == ["task", "systems", "trials", "successes", "p_broken"]
    assert table.loc[0, "task"] == "t4" and table.loc[0, "p_broken"] > 0.5
    assert table.loc[0, "trials"] == 180 and table.loc[0, "successes"] == 0
    assert np.all(table.loc[1:, "p_broken"] == 0.0)
    fit = post.save(tmp_path / "fit.nc")
    assert main(["items", str(fit), "--format", "csv"]) in (0, 1)
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("t4,6,180,0,")
    assert main(["items", str(fit), "--select", "3"]) == 2
    assert "--select needs an IRT fit" in capsys.readouterr().err
    html = write_report(data, fit=post, output=tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'id="broken-tasks"' in html and "1 of 12 tasks are more likely broken" in html
