"""Prior predictive checks: Model.prior_predictive and `evalbayes prior-check`, checked against
the priors' closed forms (Beta quantiles), the rate grid's symmetry, and the data's range."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalbayes as eb
from evalbayes.cli import main
from evalbayes.data import EvalData
from evalbayes.models import get_model


@pytest.fixture(scope="module")
def data() -> EvalData:
    rng = np.random.default_rng(2)
    return EvalData.from_arrays(np.ones((3, 10), int), rng.binomial(1, [[0.2], [0.6], [0.9]],
                                                                     (3, 10)))


def test_beta_binomial_population_pass_at_1_is_the_mu_prior(data):
    model = eb.BetaBinomialModel(mu_prior=(2.0, 5.0))
    check = model.prior_predictive(data, k=[1], draws=20000, seed=1)
    first = check.table[check.table["system"] == data.systems[0]].iloc[0]
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):
        assert first[f"q{int(q * 100):02d}"] == pytest.approx(stats.beta.ppf(q, 2, 5), abs=0.01)
    observed = data.c.values[0].mean()
    assert first["observed pass@1"] == pytest.approx(observed)
    assert first["prior P(<= observed)"] == pytest.approx(stats.beta.cdf(observed, 2, 5),
                                                          abs=0.01)


def test_complete_pooling_is_the_task_prior(data):
    check = eb.BetaBinomialModel(pooling="complete", task_prior=(1.0, 1.0)).prior_predictive(
        data, k=[1, 4], draws=20000, seed=0)
    row = check.table[(check.table["k"] == 4)].iloc[0]
    # pass@4 = 1 - (1 - p)^4 with p ~ U(0, 1): P(pass@4 <= x) = 1 - (1 - x)^(1/4)
    assert row["q50"] == pytest.approx(1 - 0.5 ** 4, abs=0.01)


def test_rate_grid_prior_is_symmetric_and_u_shaped_at_3(data):
    check = eb.RateGridModel(coef_prior=3.0).prior_predictive(data, k=[1], draws=20000, seed=3)
    table = check.table
    assert np.allclose(table["below 0.05"], table["above 0.95"], atol=0.02)
    assert np.allclose(table["q50"], 0.5, atol=0.03)
    # the finding of issue 27: about a quarter of the prior at each edge with coef_prior = 3
    assert (table["below 0.05"] > 0.15).all()
    # the default ("auto": 1.25 on these one-trial systems): about the uniform's 5 % at each
    # edge (benchmarks/validity/)
    flat = eb.RateGridModel().prior_predictive(data, k=[1], draws=20000, seed=3).table
    assert np.allclose(flat["below 0.05"], 0.05, atol=0.02)
    assert np.allclose(flat["above 0.95"], 0.05, atol=0.02)
    assert check.difference.size == 20000
    assert np.quantile(check.difference, 0.5) == pytest.approx(0.0, abs=0.03)


def test_pymc_forward_sampling_path_and_reproducibility(data):
    model = get_model("irt-1pl")
    a = model.prior_predictive(data, k=[1], draws=300, seed=5)
    b = model.prior_predictive(data, k=[1], draws=300, seed=5)
    assert a.curve.sizes == {"draw": 300, "system": 3, "k": 1}
    assert np.array_equal(a.curve.values, b.curve.values)
    assert ((a.curve >= 0) & (a.curve <= 1)).all()


def test_command(tmp_path, capsys):
    assert main(["prior-check", "dataset:tinyagent", "--where", "experiment=sec17.7",
                 "--model", "beta-binomial", "--k", "1", "--draws", "500",
                 "--format", "csv"]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert list(table["system"]) == ["RL base", "GRPO 20", "GRPO 80"]
    assert table["observed pass@1"].between(0, 1).all()
