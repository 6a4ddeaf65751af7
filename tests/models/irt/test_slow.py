"""Slow IRT checks: recovery, agreement with maximum likelihood, SBC with one compiled model,
paired population comparisons against the Beta-Binomial, real data."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import expit

from evalbayes.data import EvalData
from evalbayes.inference import COMPILED_MODELS
from evalbayes.models.irt._model import IRTModel
from evalbayes.testing import rank_statistics, rank_uniformity, simulate_irt

# one worker under pytest-xdist (--dist loadgroup): the fits are module fixtures
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("irt_slow")]

# 1000 draws per chain: with 500 the largest of ~420 R-hat estimates sat at 1.010 and crossed
# the 1.01 bar on one CI run (noise of the estimate, not a sampling problem).
RECOVERY = {"draws": 1000, "tune": 1000, "chains": 4, "seed": 4, "check": False}


def _simulate_2pl(n_sys, n_task, n, seed):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n_sys)
    b = rng.normal(0.0, 1.5, n_task)
    a = np.exp(rng.normal(0.0, 0.3, n_task))
    return simulate_irt(theta, b, a, trials=n, seed=seed + 1), theta, b, a


@pytest.fixture(scope="module")
def recovery_fits():
    """2PL fits of 20 systems x 200 tasks with n = 1 and n = 5 (same truth)."""
    fits = {}
    for n in (1, 5):
        data, theta, b, a = _simulate_2pl(20, 200, n, seed=2024)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = IRTModel(kind="2pl").fit(data, **RECOVERY)
        fits[n] = (post, theta, b, a)
    return fits


def _coverage(draws: np.ndarray, truth: np.ndarray, prob: float = 0.9) -> np.ndarray:
    flat = draws.reshape(-1, draws.shape[-1])
    lo, hi = np.quantile(flat, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    return (truth >= lo) & (truth <= hi)


def test_recovery_converges_and_correlates(recovery_fits):
    for n, (post, _, b, _) in recovery_fits.items():
        diag = post.diagnostics(warn=False)
        assert diag.rhat_max <= 1.01, (n, str(diag))
        assert diag.divergences == 0, (n, str(diag))
        draws = post.posterior["b"].values.reshape(-1, 200)
        b_mean = draws.mean(axis=0)
        corr = np.corrcoef(b_mean, b)[0, 1]
        if n == 5:
            assert corr >= 0.95
        # For a calibrated posterior, var(b) = var(E[b|y]) + E[var(b|y)] and
        # cov(b, E[b|y]) = var(E[b|y]) (law of total variance), so the correlation that the
        # data allow is sqrt(var(E[b|y]) / (var(E[b|y]) + mean var(b|y))). With 20 binary
        # responses per item (n = 1) that is ~0.93, below 0.95 whatever the model; check
        # that the fit reaches it (s.e. of a correlation ~ (1 - r^2) / sqrt(200) = 0.01).
        expected = np.sqrt(b_mean.var() / (b_mean.var() + draws.var(axis=0).mean()))
        assert abs(corr - expected) < 0.03, (n, corr, expected)


def test_recovery_intervals_cover(recovery_fits):
    b_cover, theta_cover = [], []
    for post, theta, b, _ in recovery_fits.values():
        b_cover.append(_coverage(post.posterior["b"].values, b))
        theta_cover.append(_coverage(post.posterior["theta"].values, theta))
    b_rate = np.concatenate(b_cover).mean()
    theta_rate = np.concatenate(theta_cover).mean()
    # 400 item intervals: binomial s.e. of 90 % coverage is 1.5 %, so 85-95 % is +-3.3 s.e.
    assert 0.85 <= b_rate <= 0.95, b_rate
    # 40 ability intervals (2 x 20 systems): s.e. 4.7 %; the 99.9 % binomial range
    lo, hi = stats.binom.ppf([0.0005, 0.9995], 40, 0.9) / 40
    assert lo <= theta_rate <= hi, theta_rate


def _joint_mle_2pl(trials: np.ndarray, counts: np.ndarray):
    """Joint maximum likelihood 2PL (scipy L-BFGS, analytic gradient).

    Returns ``theta, b, log_a``. Location and scale are fixed by a penalty on mean(theta)
    and mean(theta^2) - 1 (the likelihood is invariant to them); items solved always or
    never are left out by the caller (their MLE is infinite).
    """
    n_sys, n_task = trials.shape

    def unpack(x):
        return x[:n_sys], x[n_sys : n_sys + n_task], x[n_sys + n_task :]

    def objective(x):
        theta, b, log_a = unpack(x)
        a = np.exp(log_a)
        eta = a * (theta[:, None] - b)
        nll = -(counts * -np.logaddexp(0, -eta) + (trials - counts) * -np.logaddexp(0, eta))
        resid = trials * expit(eta) - counts  # d nll / d eta
        m1, m2 = theta.mean(), (theta**2).mean() - 1.0
        value = nll.sum() + 50.0 * (m1**2 + m2**2)
        g_theta = (resid * a).sum(axis=1) + 50.0 * (2 * m1 / n_sys + 4 * m2 * theta / n_sys)
        g_b = -(resid * a).sum(axis=0)
        g_log_a = (resid * a * (theta[:, None] - b)).sum(axis=0)
        return value, np.concatenate([g_theta, g_b, g_log_a])

    x0 = np.zeros(n_sys + 2 * n_task)
    rates = (counts.sum(0) + 0.5) / (trials.sum(0) + 1.0)
    x0[n_sys : n_sys + n_task] = -np.log(rates / (1 - rates))
    result = optimize.minimize(objective, x0, jac=True, method="L-BFGS-B",
                               options={"maxiter": 5000})
    assert result.success, result.message
    return unpack(result.x)


def _ml_standard_error_of_b(trials, theta, b, a):
    """SE of each item's ML difficulty from its 2 x 2 Fisher information in (b, log a)."""
    p = expit(a * (theta[:, None] - b))
    w = trials * p * (1 - p)
    d = theta[:, None] - b
    i_bb, i_ba, i_aa = (w * a**2).sum(0), -(w * a**2 * d).sum(0), (w * a**2 * d**2).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):  # singular: not determined (NaN)
        return np.sqrt(i_aa / (i_bb * i_aa - i_ba**2))


def test_difficulties_agree_with_maximum_likelihood(recovery_fits):
    """Independent fit: joint ML 2PL with scipy on the same counts (n = 5, i.e. the same
    binary trials: the Binomial likelihood is the product of the Bernoulli ones).

    With 20 systems the ML difficulty of an item with a small or huge discrimination is
    ill-determined (b = -intercept / a runs to +-9 as a -> 0), so the comparison is over the
    items whose ML difficulty has a standard error below 0.5 logits (about three quarters).
    """
    post, *_ = recovery_fits[5]
    n, c = post.data.n.values, post.data.c.values
    finite = (c.sum(0) > 0) & (c.sum(0) < n.sum(0))
    theta_ml, b_ml, log_a_ml = _joint_mle_2pl(n[:, finite], c[:, finite])
    se = _ml_standard_error_of_b(n[:, finite], theta_ml, b_ml, np.exp(log_a_ml))
    determined = se < 0.5
    assert determined.sum() >= 100
    b_bayes = post.posterior["b"].mean(("chain", "draw")).values[finite]
    assert np.corrcoef(b_bayes[determined], b_ml[determined])[0, 1] >= 0.98


# --------------------------------------------------------------------------- SBC
def _prior_draw(model, n_sys, n_task, rng):
    sigma_b = abs(rng.normal(0.0, model.sigma_b_prior))
    sigma_a = float(model.sigma_a)
    return {
        "theta": rng.normal(0.0, 1.0, n_sys),
        "b": rng.normal(0.0, sigma_b, n_task),
        "a": np.exp(rng.normal(0.0, sigma_a, n_task)),
    }


def _sbc_ranks(reps, flip_sign, seed):
    model = IRTModel(kind="2pl")
    rng = np.random.default_rng(seed)
    ranks = {"theta": [], "b": [], "a": []}
    for rep in range(reps):
        truth = _prior_draw(model, 5, 30, rng)
        sign = 1.0 if flip_sign else -1.0
        p = expit(truth["a"] * (truth["theta"][:, None] + sign * truth["b"]))
        trials = np.full(p.shape, 2)
        data = EvalData.from_arrays(trials, rng.binomial(trials, p))
        post = model.fit(data, draws=200, tune=300, chains=2, seed=rep, check=False)
        for name in ranks:
            draws = post.posterior[name].values.reshape(400, -1)[:, :1]
            ranks[name].append(rank_statistics(truth[name][:1], draws, 99)[0])
    return {name: np.array(v) for name, v in ranks.items()}


def test_sbc_reuses_one_compiled_model_and_rejects_a_sign_error():
    """Reduced SBC of the 2PL (5 systems x 30 tasks, n = 2): ranks of theta[0], b[0], a[0]
    uniform at 1 % over 40 replicates; the same fit on data simulated with the opposite sign
    convention (logit p = a (theta + b)) is rejected. All fits share one compiled model."""
    before = len(COMPILED_MODELS)
    correct = _sbc_ranks(40, flip_sign=False, seed=10)
    assert len(COMPILED_MODELS) - before <= 1  # one compile for all replicates
    for name, ranks in correct.items():
        assert rank_uniformity(ranks, 99, bins=5).pvalue > 0.01, name
    flipped = _sbc_ranks(15, flip_sign=True, seed=11)
    assert len(COMPILED_MODELS) - before <= 1
    # a sign error puts the ranks at both ends (0 and 99): ten bins resolve that
    assert rank_uniformity(flipped["b"], 99, bins=10).pvalue < 0.01


# --------------------------------------------------------------------------- paired
def _true_population_pass1(theta: float, sigma_b: float) -> float:
    """E_b sigmoid(theta - b), b ~ N(0, sigma_b), by adaptive quadrature (1PL truth)."""
    return integrate.quad(lambda b: expit(theta - b) * stats.norm.pdf(b, 0.0, sigma_b),
                          -12 * sigma_b, 12 * sigma_b, limit=200)[0]


def test_population_comparison_is_paired_and_narrower_than_beta_binomial():
    """Systems sharing item difficulty (16 trials per task, as in seed 000 sec. 17.4, where
    per-task rates of two checkpoints correlated at 0.97): IRT's interval for the population
    B - A is far narrower than the Beta-Binomial's unpaired one (population="independent"),
    and both cover the truth.

    Expected widths: the Beta-Binomial's mu of each system carries the task-sampling error
    sd(p_t) / sqrt(T) ~ 0.05 independently; IRT's difference depends on theta_B - theta_A,
    known to ~0.1 logit from 640 trials each, about 0.02 on the probability scale."""
    from evalbayes.models import BetaBinomialModel

    rng = np.random.default_rng(77)
    sigma_b, reps = 2.0, 8
    widths = {"irt": [], "bb": []}
    covered = {"irt": 0, "bb": 0}
    for rep in range(reps):
        theta = np.array([-0.2, 0.3, 0.0, 0.8])
        b = rng.normal(0.0, sigma_b, 40)
        trials = np.full((4, 40), 16)
        counts = rng.binomial(trials, expit(theta[:, None] - b))
        data = EvalData.from_arrays(trials, counts)
        truth = _true_population_pass1(theta[1], sigma_b) - _true_population_pass1(
            theta[0], sigma_b
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits = {
                "irt": IRTModel(kind="1pl").fit(data, draws=400, tune=400, chains=4,
                                                seed=rep, check=False),
                "bb": BetaBinomialModel(population="independent").fit(
                    data, draws=400, tune=400, chains=4, seed=rep, check=False),
            }
        for name, post in fits.items():
            pop = post.pass_at_k(1, estimand="population").isel(k=0).values
            diff = (pop[..., 1] - pop[..., 0]).ravel()
            lo, hi = np.quantile(diff, [0.025, 0.975])
            widths[name].append(hi - lo)
            covered[name] += int(lo <= truth <= hi)
    ratio = np.median(np.array(widths["irt"]) / np.array(widths["bb"]))
    assert ratio < 0.5, ratio
    # 95 % intervals over 8 replicates: P(at most 5 of 8 cover) = 0.006
    assert covered["irt"] >= 6, covered
    assert covered["bb"] >= 6, covered


# --------------------------------------------------------------------------- real data
def test_terminal_bench_fits_cleanly(shared_data):
    from evalbayes.io import read_counts

    path = shared_data / "terminal_bench_core011_counts.csv"
    if not path.exists():
        pytest.skip(f"{path.name} not available")
    data = read_counts(path)
    post = IRTModel(kind="2pl").fit(data, draws=2000, tune=1500, chains=4, seed=1,
                                    check=False)
    diag = post.diagnostics(warn=False)
    assert diag.rhat_max <= 1.01, str(diag)
    assert diag.divergences == 0, str(diag)
    items = post.items()
    # never-solved tasks are the hardest: their difficulty exceeds every solved task's
    never = items["never_solved"]
    if never.any() and (~never).any():
        assert items.loc[never, "b_mean"].min() > items.loc[~never, "b_mean"].median()
