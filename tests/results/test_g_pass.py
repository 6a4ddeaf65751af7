"""g-pass@k from a fit (Posterior.g_pass_at_k, summary, the pass-at-k command), checked
against the pass@k / pass^k curves (m = 1, m = k), the Beta-Binomial tail in closed form,
and the unbiased estimator from the counts."""

from __future__ import annotations

import numpy as np
import pytest

import evalbayes as eb
from evalbayes.cli import main
from evalbayes.data import EvalData
from evalbayes.metrics import beta_g_pass_at_k, mean_g_pass_at_k


@pytest.fixture(scope="module")
def data() -> EvalData:
    rng = np.random.default_rng(1)
    n = np.full((2, 12), 8)
    return EvalData.from_arrays(n, rng.binomial(8, rng.beta(2, 3, (2, 12))))


@pytest.fixture(scope="module")
def bb(data):
    return eb.BetaBinomialModel().fit(data, draws=1000, chains=2, seed=0)


@pytest.fixture(scope="module")
def grid(data):
    return eb.RateGridModel().fit(data, draws=500, chains=2, seed=0, check=False)


def test_m_one_is_pass_at_k_and_m_k_is_pass_hat_k(bb):
    assert np.allclose(bb.g_pass_at_k([1, 4], m=1), bb.pass_at_k([1, 4]), atol=1e-12)
    assert np.allclose(bb.g_pass_at_k([4], tau=1.0), bb.pass_hat_k([4]), atol=1e-12)


def test_tasks_estimand_matches_the_beta_binomial_tail(bb, data):
    """Per cell p | data ~ Beta(a + c, b + n - c): E[G] is the Beta-Binomial tail."""
    draws = bb.g_pass_at_k([6], m=3).mean(("chain", "draw")).values[:, 0]
    mu = 1 / (1 + np.exp(-bb.posterior["mu_logit"].transpose("chain", "draw", "system").values))
    kappa = bb.posterior["kappa"].transpose("chain", "draw", "system").values
    a, b = mu * kappa, (1 - mu) * kappa
    n, c = data.n.values, data.c.values
    for s in range(2):
        exact = np.mean([
            beta_g_pass_at_k(a[..., s] + c[s, t], b[..., s] + n[s, t] - c[s, t], 6, 3).mean()
            for t in range(n.shape[1])
        ])
        assert draws[s] == pytest.approx(exact, abs=0.01)


def test_tasks_estimand_is_near_the_unbiased_estimate(grid, data):
    post = grid.g_pass_at_k([4], m=2)
    mean, sd = post.mean(("chain", "draw")).values[:, 0], post.std(("chain", "draw")).values[:, 0]
    for s in range(2):
        unbiased = mean_g_pass_at_k(data.n.values[s], data.c.values[s], 4, 2)
        assert abs(mean[s] - unbiased) < 2.5 * sd[s]


def test_population_m_one_has_the_population_pass_at_k_marginals(grid):
    g = grid.g_pass_at_k([1, 16], m=1, estimand="population").mean(("chain", "draw"))
    curve = grid.pass_at_k([1, 16], estimand="population").mean(("chain", "draw"))
    assert np.allclose(g, curve, atol=1e-12)


def test_population_needs_a_grid_population(bb):
    with pytest.raises(ValueError, match="no population g-pass@k"):
        bb.g_pass_at_k([2], m=1, estimand="population")


def test_tau_and_m_rules(bb):
    out = bb.g_pass_at_k([4, 8], tau=0.5)
    assert out["m"].values.tolist() == [2, 4]
    with pytest.raises(ValueError, match="exactly one"):
        bb.g_pass_at_k([4])
    with pytest.raises(ValueError, match="exceeds"):
        bb.g_pass_at_k([2], m=3)
    with pytest.raises(ValueError, match="whole numbers"):
        bb.g_pass_at_k([2.5], m=1)


def test_summary_and_command(bb, tmp_path, capsys):
    table = bb.summary(k=[4], metrics=("pass@k", "g-pass@k"), estimands=("tasks",), m=2)
    assert set(table["metric"]) == {"pass@k", "g-pass@k (m=2)"}
    path = tmp_path / "bb.nc"
    bb.save(path)
    assert main(["pass-at-k", str(path), "--metric", "g-pass@k", "--tau", "0.5", "--k", "4",
                 "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "g-pass@k (m=2)" in out
    expected = bb.g_pass_at_k([4], m=2).mean(("chain", "draw")).values[:, 0]
    rows = [line.split(",") for line in out.strip().splitlines()[1:]]
    assert np.allclose([float(r[4]) for r in rows], expected, atol=1e-4)
    assert main(["pass-at-k", str(path), "--m", "2"]) == 2
    assert "--m and --tau go with --metric g-pass@k" in capsys.readouterr().err
