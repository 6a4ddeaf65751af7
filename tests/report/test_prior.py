"""Section "Prior check" of the report: the prior's pass@1 and pass@k next to the data's, and
the flag of a prior too tight to cover the data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import comb

from evalbayes.data import EvalData
from evalbayes.models import BetaBinomialModel
from evalbayes.report._document import Callout, Table
from evalbayes.report._prior import observed_pass_at_k, prior_blocks, too_tight


def _data() -> EvalData:
    rng = np.random.default_rng(0)
    n = np.full((2, 20), 4)
    c = np.vstack([rng.binomial(4, 0.9, 20), rng.binomial(4, 0.8, 20)])
    return EvalData.from_arrays(n, c)


def test_observed_pass_at_k_is_the_unbiased_estimate():
    """Against an explicit loop of 1 - C(n - c, k) / C(n, k) (Chen et al. 2021)."""
    n = np.array([[5, 3, 8], [2, 6, 6]])
    c = np.array([[1, 0, 8], [1, 2, 0]])
    data = EvalData.from_arrays(n, c)
    got = observed_pass_at_k(data, 3)
    for s in range(2):
        values = [1 - comb(n[s, t] - c[s, t], 3) / comb(n[s, t], 3)
                  for t in range(3) if n[s, t] >= 3]
        assert got[s] == pytest.approx(np.mean(values), abs=1e-12)  # gammaln rounding
    assert np.isnan(observed_pass_at_k(data, 9)).all()


def test_too_tight_rule():
    draws = np.random.default_rng(1).uniform(0.45, 0.55, 10_000)
    assert too_tight(draws, 0.9) and too_tight(draws, 0.1)
    assert not too_tight(draws, 0.5)
    assert not too_tight(draws, 0.58)  # within the 0.05 slack of the prior's top


def test_a_deliberately_tight_prior_is_flagged():
    data = _data()  # observed pass@1 0.90 and 0.84
    tight = prior_blocks(BetaBinomialModel(mu_prior=(500.0, 500.0)), data, (1, 8), seed=0,
                         draws=500)
    assert isinstance(tight[0], Callout) and tight[0].kind == "warning"
    assert "too tight" in tight[0].title
    table = next(b for b in tight if isinstance(b, Table))
    assert table.columns[-1] == "prior vs data"
    assert [row[-1] for row in table.rows] == ["TOO TIGHT", "TOO TIGHT"]
    assert "prior pass@8 (90 %)" in table.columns
    loose = prior_blocks(BetaBinomialModel(), data, (1, 8), seed=0, draws=500)
    assert loose[0].kind == "ok"
    table = next(b for b in loose if isinstance(b, Table))
    assert [row[-1] for row in table.rows] == ["covers", "covers"]
