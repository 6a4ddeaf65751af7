"""Sequential stopping: the t posterior, type-I inflation of peeking, expected sample size."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalbayes.decisions._plan import Population
from evalbayes.decisions._sequential import (
    next_allocation,
    operating_characteristics,
    sequential_decision,
)


def test_decision_probability_is_one_minus_the_one_sided_t_p_value():
    ca, cb = np.array([2, 3, 1, 4, 2, 3]), np.array([3, 4, 3, 4, 3, 4])
    res = sequential_decision(ca, cb, 4, rope=0.05)
    d = (cb - ca) / 4
    p = stats.ttest_1samp(d, 0.0, alternative="greater").pvalue
    assert res.p_superior == pytest.approx(1 - p)
    assert res.action == "b_better" and res.next == "stop"
    m, se = d.mean(), d.std(ddof=1) / np.sqrt(d.size)
    t = stats.t(d.size - 1)
    assert res.p_rope == pytest.approx(t.cdf((0.05 - m) / se) - t.cdf((-0.05 - m) / se))
    early = sequential_decision(ca[:2], cb[:2], 4)
    assert early.action == "continue"
    with pytest.raises(ValueError, match="counts"):
        sequential_decision([5], [1], 4)


def test_equivalence_stop():
    rng = np.random.default_rng(0)
    c = rng.binomial(50, 0.5, 200)
    res = sequential_decision(c, c + rng.integers(-1, 2, 200).clip(-c, 50 - c), 50,
                              rope=0.05)
    assert res.action == "equivalent"


def test_peeking_inflates_type_one_error_and_sequential_saves_tasks():
    null = Population(0.6, 0.6, 0.3, 0.3, correlation=0.7)
    oc = operating_characteristics(null, batch=5, max_tasks=40, trials=4, n_sims=2000, seed=1)
    row = oc.set_index("procedure")
    fixed, peek = row.loc["fixed-t"], row.loc["peeking-t"]
    # fixed two-sided t-test holds its level (tolerance: 4 Monte Carlo s.e.)
    assert abs(fixed["false_decision"] - 0.05) < 4 * fixed["false_decision_se"]
    # eight looks: well above the nominal 0.05 (Armitage et al. 1969: ~0.17 for 8 looks)
    assert peek["false_decision"] > fixed["false_decision"] + 4 * peek["false_decision_se"]
    alt = Population(0.55, 0.7, 0.3, 0.3, correlation=0.7)
    oc = operating_characteristics(alt, batch=5, max_tasks=40, trials=4, n_sims=1000, seed=2)
    row = oc.set_index("procedure")
    assert row.loc["bayes-sequential", "mean_tasks"] < 30
    assert row.loc["bayes-fixed", "mean_tasks"] == 40


def test_next_allocation_top_two():
    rng = np.random.default_rng(0)
    draws = np.column_stack([rng.normal(m, 0.05, 4000) for m in (0.5, 0.6, 0.62, 0.3)])
    res = next_allocation(draws, ["a", "b", "c", "d"])
    assert not res["stop"] and res["sample"] == ["c", "b"]
    clear = np.column_stack([rng.normal(m, 0.01, 4000) for m in (0.5, 0.9)])
    assert next_allocation(clear, ["a", "b"])["stop"]
