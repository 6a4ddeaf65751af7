"""``random_seed`` (PyMC's name) is accepted wherever ``seed`` is, through one helper.

Each public random path gives the same numbers under either name, refuses both names with
different values, and keeps its default when neither is given.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import evalbayes as eb
from evalbayes import frequentist as fq
from evalbayes._core.names import UNSET, pick_seed
from evalbayes.frequentist.crosscheck import crosscheck
from evalbayes.inference import resolve_seed

N = np.full(12, 4)
C = np.array([0, 1, 2, 3, 4, 4, 2, 1, 0, 3, 4, 2])
A = C / N
B = np.clip(A + np.linspace(-0.2, 0.3, 12), 0, 1)
LABELS = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1])
VERDICTS = np.array([1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1])

CALLS = {
    "bootstrap_ci": lambda **kw: fq.bootstrap_ci(A, n_resamples=300, **kw),
    "task_bootstrap_ci": lambda **kw: fq.task_bootstrap_ci(N, C, n_resamples=300, **kw),
    "episode_bootstrap_ci": lambda **kw: fq.episode_bootstrap_ci(N, C, n_resamples=300, **kw),
    "paired_bootstrap_ci": lambda **kw: fq.paired_bootstrap_ci(A, B, n_resamples=300, **kw),
    "sign_flip_test": lambda **kw: fq.sign_flip_test(
        np.concatenate([B - A] * 3), n_resamples=300, **kw
    ),
    "paired_comparison": lambda **kw: fq.paired_comparison(A, B, n_resamples=300, **kw),
    "non_inferiority": lambda **kw: fq.non_inferiority(A, B, 0.1, n_resamples=300, **kw),
    "cohen_kappa": lambda **kw: fq.cohen_kappa(LABELS, VERDICTS, n_resamples=300, **kw),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_frequentist_functions_accept_random_seed(name):
    call = CALLS[name]
    assert call(random_seed=7) == call(seed=7)
    assert call(random_seed=7) == call(seed=7, random_seed=7)
    assert call() == call(seed=0)  # the default is unchanged
    with pytest.raises(ValueError, match="seed=7 and random_seed=8 disagree"):
        call(seed=7, random_seed=8)


def test_every_public_function_with_seed_takes_random_seed():
    """Introspect the public API: a ``seed`` parameter comes with ``random_seed``."""
    import evalbayes.report as report

    functions = [getattr(fq, name) for name in fq.__all__]
    functions += [crosscheck, report.write_report, report.build_report]
    functions += [eb.Posterior.success_prob, eb.Posterior.posterior_predictive,
                  eb.Posterior.ppc, eb.BetaBinomialModel.simulate_prior,
                  eb.BetaBinomialModel.fit, eb.IRTModel.fit]
    missing = []
    for function in functions:
        if not callable(function) or isinstance(function, type):
            continue
        params = inspect.signature(function).parameters
        if "seed" in params and "random_seed" not in params:
            missing.append(function.__qualname__)
    assert not missing


def test_crosscheck_and_simulate_prior_accept_random_seed():
    data = eb.EvalData.from_arrays(np.vstack([N, N]), np.vstack([C, C[::-1]]),
                                   systems=["a", "b"])
    one = crosscheck(data, compare=("a", "b"), n_resamples=200, random_seed=3)
    two = crosscheck(data, compare=("a", "b"), n_resamples=200, seed=3)
    assert one.to_dict() == two.to_dict() and one.seed == 3
    model = eb.BetaBinomialModel()
    d1, truth1 = model.simulate_prior(2, 5, 4, random_seed=11)
    d2, truth2 = model.simulate_prior(2, 5, 4, seed=11)
    assert d1.equals(d2) and np.array_equal(truth1["mu"], truth2["mu"])
    with pytest.raises(ValueError, match="disagree"):
        model.simulate_prior(2, 5, 4, seed=1, random_seed=2)


def test_posterior_methods_accept_random_seed():
    data = eb.EvalData.from_arrays(np.vstack([N, N]), np.vstack([C, C[::-1]]),
                                   systems=["a", "b"])
    fit = eb.BetaBinomialModel(pooling="complete").fit(data, draws=50, chains=2, seed=0)
    assert fit.posterior_predictive(random_seed=4).equals(fit.posterior_predictive(seed=4))
    assert fit.success_prob(random_seed=4).equals(fit.success_prob(4))
    assert fit.success_prob().equals(fit.success_prob(fit.sampler.seed))
    assert fit.ppc(random_seed=4).table.equals(fit.ppc(seed=4).table)
    with pytest.raises(ValueError, match="disagree"):
        fit.ppc(seed=1, random_seed=2)


def test_pick_seed_rules():
    rng = np.random.default_rng(0)
    assert pick_seed(0) == 0
    assert pick_seed(0, UNSET) == 0
    assert pick_seed(0, 5) == 5  # seed at its default yields to random_seed
    assert pick_seed(5, 5) == 5
    assert pick_seed(0, rng) is rng
    assert pick_seed(0, None) is None  # None: fresh entropy, as in NumPy and PyMC
    assert pick_seed(None, 3, default=None) == 3
    assert pick_seed(np.int64(4), 4) == 4
    with pytest.raises(ValueError, match="disagree"):
        pick_seed(rng, np.random.default_rng(0))
    with pytest.raises(ValueError, match="disagree"):
        pick_seed(True, 1)
    # the models' helper is built on it and keeps its rules
    assert resolve_seed(None, None) == 0
    assert resolve_seed(None, 9) == 9 == resolve_seed(9, None) == resolve_seed(9, 9)
    with pytest.raises(ValueError, match="disagree"):
        resolve_seed(1, 2)
