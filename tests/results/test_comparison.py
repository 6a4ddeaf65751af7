"""Tests of ``evalbayes.compare`` / ``Comparison`` against independent references.

References: with ``pooling="complete"`` each system's rate has the exact posterior
Beta(1 + sum c, 1 + sum n - sum c), and the draws are exact independent conjugate draws, so
every statistic has a closed form or a one-dimensional integral (scipy ``quad``), and its
Monte Carlo error is known from the number of draws M: a probability has standard error
sqrt(P (1 - P) / M), a mean sd / sqrt(M), a quantile sqrt(q (1 - q) / M) / density. Tolerances
are Z = 4.5 standard errors (two-sided false-alarm rate below 1e-5 per check).
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

import numpy as np
import pytest
import xarray as xr
from scipy import integrate, optimize, stats

import evalbayes as eb
from evalbayes.inference import SamplerConfig
from evalbayes.results._posterior import Posterior

Z = 4.5
CHAINS, DRAWS = 4, 10_000
M = CHAINS * DRAWS

# two systems, five tasks of eight trials: sums 20/40 and 23/40
C_A = [3, 5, 2, 6, 4]
C_B = [4, 6, 3, 5, 5]
N_TRIALS = 8


def two_systems(c_a=C_A, c_b=C_B) -> eb.EvalData:
    n = np.full((2, len(c_a)), N_TRIALS)
    return eb.EvalData.from_arrays(n, np.array([c_a, c_b]), systems=["A", "B"])


def beta_params(c: list[int], n_trials: int = N_TRIALS) -> tuple[int, int]:
    """Posterior Beta(1 + sum c, 1 + sum n - sum c) of a completely pooled system."""
    return 1 + sum(c), 1 + n_trials * len(c) - sum(c)


def beta_fn(x: int, y: int) -> Fraction:
    """Exact B(x, y) = (x-1)! (y-1)! / (x+y-1)! for positive integers."""
    return Fraction(factorial(x - 1) * factorial(y - 1), factorial(x + y - 1))


def miller_p_superior(a_a: int, b_a: int, a_b: int, b_b: int) -> Fraction:
    """Exact P(p_B > p_A) for independent Beta(a_a, b_a), Beta(a_b, b_b), integer a_b.

    Evan Miller, "Formulas for Bayesian A/B testing" (2015):
    sum_{i=0}^{a_b - 1} B(a_a + i, b_a + b_b) / ((b_b + i) B(1 + i, b_b) B(a_a, b_a)).
    """
    total = Fraction(0)
    for i in range(a_b):
        total += beta_fn(a_a + i, b_a + b_b) / (
            (b_b + i) * beta_fn(1 + i, b_b) * beta_fn(a_a, b_a)
        )
    return total


def quad(func) -> float:
    value, _ = integrate.quad(func, 0.0, 1.0, limit=200, epsabs=1e-12, epsrel=1e-10)
    return value


@pytest.fixture(scope="session")
def complete_fit() -> Posterior:
    return eb.BetaBinomialModel(pooling="complete").fit(
        two_systems(), draws=DRAWS, chains=CHAINS, seed=11
    )


@pytest.fixture(scope="session")
def tiny() -> eb.EvalData:
    return eb.datasets.load("tinyagent", experiment="sec17.7")


@pytest.fixture(scope="session")
def tiny_partial(tiny) -> Posterior:
    return eb.BetaBinomialModel().fit(tiny, draws=500, chains=2, seed=1)


@pytest.fixture(scope="session")
def tiny_none(tiny) -> Posterior:
    return eb.BetaBinomialModel(pooling="none").fit(tiny, draws=DRAWS, chains=CHAINS, seed=3)


# ---------------------------------------------------------------- closed-form references


def test_miller_formula_matches_integration():
    # the reference itself, checked against an integral: P(B > A) = int f_A (1 - F_B)
    a_a, b_a = beta_params(C_A)
    a_b, b_b = beta_params(C_B)
    exact = float(miller_p_superior(a_a, b_a, a_b, b_b))
    fa, fb = stats.beta(a_a, b_a), stats.beta(a_b, b_b)
    assert exact == pytest.approx(quad(lambda x: fa.pdf(x) * fb.sf(x)), abs=1e-9)


def test_p_superior_matches_exact_beta_formula(complete_fit):
    # pass@1 = p under complete pooling: P(p_B > p_A) has Miller's exact rational form
    cmp = eb.compare(complete_fit, k=1)
    exact = float(miller_p_superior(*beta_params(C_A), *beta_params(C_B)))
    tol = Z * np.sqrt(exact * (1 - exact) / M)
    assert cmp.matrix().loc["B", "A"] == pytest.approx(exact, abs=tol)
    assert cmp.matrix().loc["A", "B"] == pytest.approx(1 - exact, abs=tol)


def test_p_superior_is_invariant_under_monotone_metrics(complete_fit):
    # pass@k = 1 - (1 - p)^k is increasing in p, so {f(p_B) > f(p_A)} = {p_B > p_A}
    frame = eb.compare(complete_fit, k=[1, 2, 4, 8]).to_frame()
    values = frame.loc[frame["system"] == "B", "p_superior"].to_numpy()
    np.testing.assert_allclose(values, values[0], atol=1 / M)


def test_difference_mean_and_interval_match_integrals(complete_fit):
    cmp = eb.compare(complete_fit, k=1, ci_prob=0.9)
    row = cmp.stats.sel(system="B", baseline="A", k=1.0)
    fa, fb = stats.beta(*beta_params(C_A)), stats.beta(*beta_params(C_B))
    mean = fb.mean() - fa.mean()
    sd = np.sqrt(fa.var() + fb.var())
    assert float(row["diff_mean"]) == pytest.approx(mean, abs=Z * sd / np.sqrt(M))

    def cdf(d: float) -> float:  # P(p_B - p_A <= d)
        return quad(lambda x: fa.pdf(x) * fb.cdf(x + d))

    def density(d: float) -> float:
        return quad(lambda x: fa.pdf(x) * fb.pdf(x + d))

    for q, name in ((0.05, "diff_lower"), (0.95, "diff_upper")):
        d_q = optimize.brentq(lambda d, q=q: cdf(d) - q, -1.0, 1.0, xtol=1e-12)
        se = np.sqrt(q * (1 - q) / M) / density(d_q)
        assert float(row[name]) == pytest.approx(d_q, abs=Z * se)


def test_rope_probability_and_expected_loss_match_integrals(complete_fit):
    rope = 0.05
    cmp = eb.compare(complete_fit, k=1, rope=rope)
    row = cmp.stats.sel(system="B", baseline="A", k=1.0)
    a_b, b_b = beta_params(C_B)
    fa, fb = stats.beta(*beta_params(C_A)), stats.beta(a_b, b_b)
    fb1, fb2 = stats.beta(a_b + 1, b_b), stats.beta(a_b + 2, b_b)
    m1 = a_b / (a_b + b_b)
    m2 = a_b * (a_b + 1) / ((a_b + b_b) * (a_b + b_b + 1))

    p_rope = quad(lambda x: fa.pdf(x) * (fb.cdf(x + rope) - fb.cdf(x - rope)))
    tol = Z * np.sqrt(p_rope * (1 - p_rope) / M)
    assert float(row["p_rope"]) == pytest.approx(p_rope, abs=tol)

    # loss L = max(p_A - p_B, 0): inner integrals over p_B < x in closed form
    # E[L | p_A = x] = x F_B(x) - m1 F_{B+1}(x);  E[L^2 | x] = x^2 F_B - 2 x m1 F_{B+1} + m2 F_{B+2}
    loss = quad(lambda x: fa.pdf(x) * (x * fb.cdf(x) - m1 * fb1.cdf(x)))
    loss2 = quad(
        lambda x: fa.pdf(x) * (x**2 * fb.cdf(x) - 2 * x * m1 * fb1.cdf(x) + m2 * fb2.cdf(x))
    )
    se = np.sqrt(loss2 - loss**2) / np.sqrt(M)
    assert float(row["expected_loss"]) == pytest.approx(loss, abs=Z * se)


def test_ranks_match_integrals():
    c_sys = [[3, 5, 2, 6, 4], [4, 6, 3, 5, 5], [5, 4, 4, 5, 5]]
    data = eb.EvalData.from_arrays(np.full((3, 5), N_TRIALS), np.array(c_sys),
                                   systems=["A", "B", "C"])
    fit = eb.BetaBinomialModel(pooling="complete").fit(data, draws=DRAWS, chains=CHAINS, seed=5)
    cmp = eb.compare(fit, k=1)
    ranks = cmp.ranks().sel(k=1.0)
    dists = [stats.beta(*beta_params(c)) for c in c_sys]
    for s, name in enumerate(["A", "B", "C"]):
        others = [d for j, d in enumerate(dists) if j != s]
        best = quad(lambda x, s=s, o=others: dists[s].pdf(x) * o[0].cdf(x) * o[1].cdf(x))
        worst = quad(lambda x, s=s, o=others: dists[s].pdf(x) * o[0].sf(x) * o[1].sf(x))
        for r, ref in ((1, best), (3, worst), (2, 1 - best - worst)):
            tol = Z * np.sqrt(ref * (1 - ref) / M)
            assert float(ranks.sel(system=name, rank=r)) == pytest.approx(ref, abs=tol)
    np.testing.assert_allclose(cmp.p_best().sel(k=1.0).values, ranks.sel(rank=1).values)


def test_close_systems_are_a_coin_flip():
    # identical counts: P(B > A) = 1/2 exactly by symmetry
    fit = eb.BetaBinomialModel(pooling="complete").fit(
        two_systems(C_A, C_A), draws=DRAWS, chains=CHAINS, seed=2
    )
    p = eb.compare(fit, k=[1, 4]).matrix(k=4).loc["B", "A"]
    assert p == pytest.approx(0.5, abs=Z * np.sqrt(0.25 / M))


def test_task_values_match_exact_beta_moments(tiny, tiny_none):
    # pooling="none": p_t ~ Beta(1 + c, 1 + n - c) exactly; per-task pass@32 has the
    # posterior mean 1 - B(a, b + 32) / B(a, b) and variance from E[(1 - p)^64]
    cmp = eb.compare(tiny_none, k=32, systems=["GRPO 80", "RL base"])
    table = cmp.task_contributions("GRPO 80", "RL base").set_index("task")
    n, c = tiny.n.values, tiny.c.values
    for s, column in (("GRPO 80", "system_value"), ("RL base", "baseline_value")):
        i = tiny.systems.index(s)
        for t, task in enumerate(tiny.tasks):
            a, b = 1 + int(c[i, t]), 1 + int(n[i, t] - c[i, t])
            m1 = 1 - beta_fn(a, b + 32) / beta_fn(a, b)
            var = beta_fn(a, b + 64) / beta_fn(a, b) - (1 - m1) ** 2
            se = np.sqrt(float(var) / M)
            assert table.loc[task, column] == pytest.approx(float(m1), abs=Z * se + 1e-12)


# ---------------------------------------------------------------- identities


def test_antisymmetry_and_loss_identity(tiny_partial):
    cmp = eb.compare(tiny_partial, k=[1, 8, 64, 1024])
    st = cmp.stats
    for b in cmp.systems:
        for a in cmp.systems:
            if a == b:
                continue
            fwd, back = st.sel(system=b, baseline=a), st.sel(system=a, baseline=b)
            # every draw is B > A, A > B or a tie
            total = fwd["p_superior"] + back["p_superior"] + fwd["p_tie"]
            np.testing.assert_allclose(total.values, 1.0, atol=1e-12)
            # max(A - B, 0) - max(B - A, 0) = A - B
            np.testing.assert_allclose(
                (fwd["expected_loss"] - back["expected_loss"]).values,
                -fwd["diff_mean"].values,
                atol=1e-12,
            )
            np.testing.assert_allclose(fwd["diff_lower"].values, -back["diff_upper"].values,
                                       atol=1e-12)


def test_ranks_and_p_best_sum_to_one(tiny_partial):
    cmp = eb.compare(tiny_partial, k=[1, 16, 32, 1024])
    ranks = cmp.ranks()
    np.testing.assert_allclose(ranks.sum("rank").values, 1.0, atol=1e-12)
    np.testing.assert_allclose(ranks.sum("system").values, 1.0, atol=1e-12)
    np.testing.assert_allclose(cmp.p_best().sum("system").values, 1.0, atol=1e-12)


def test_ties_share_ranks():
    # all three systems equal in every draw: each rank has probability 1/3
    values = np.full((1, 4, 3, 1), 0.5)
    draws = xr.DataArray(values, dims=("chain", "draw", "system", "k"),
                         coords={"system": ["a", "b", "c"], "k": [1.0]},
                         attrs={"metric": "pass@k", "estimand": "tasks"})
    cmp = eb.Comparison.from_draws(draws)
    np.testing.assert_allclose(cmp.ranks().values, 1 / 3)
    assert float(cmp.stats["p_tie"].sel(system="a", baseline="b", k=1.0)) == 1.0
    assert float(cmp.stats["p_superior"].sel(system="a", baseline="b", k=1.0)) == 0.0


def test_hdi_is_no_wider_than_eti(complete_fit):
    eti = eb.compare(complete_fit, k=1, kind="eti").stats.sel(system="B", baseline="A", k=1.0)
    hdi = eb.compare(complete_fit, k=1, kind="hdi").stats.sel(system="B", baseline="A", k=1.0)
    width = lambda s: float(s["diff_upper"] - s["diff_lower"])  # noqa: E731
    assert width(hdi) <= width(eti) + 1e-12
    draws = complete_fit.pass_at_k(1).isel(k=0)
    diff = (draws.sel(system="B") - draws.sel(system="A")).values.ravel()
    inside = np.mean((diff >= float(hdi["diff_lower"])) & (diff <= float(hdi["diff_upper"])))
    assert inside >= 0.95


def test_reproducible_with_the_same_seed(tiny_partial):
    fit1 = eb.BetaBinomialModel(pooling="complete").fit(two_systems(), draws=200, seed=7)
    fit2 = eb.BetaBinomialModel(pooling="complete").fit(two_systems(), draws=200, seed=7)
    a = eb.compare(fit1, k=[1, 4]).to_frame()
    b = eb.compare(fit2, k=[1, 4]).to_frame()
    assert a.equals(b)
    c1 = eb.compare(tiny_partial, k=[1, 32]).to_frame()
    c2 = eb.compare(tiny_partial, k=[1, 32]).to_frame()
    assert c1.equals(c2)


# ---------------------------------------------------------------- ch. 17.7: where the deficit is


def test_speed_task_produces_the_whole_deficit_at_k32(tiny_partial):
    # seed 000 ch. 17.7: at k = 32 the base agent is ahead of the 80-step checkpoint (0.998
    # against 0.988) and "that one task produces the whole deficit at large k": zero/speed
    cmp = eb.compare(tiny_partial, k=[1, 32], estimand="tasks")
    total = float(cmp.stats["diff_mean"].sel(system="GRPO 80", baseline="RL base", k=32.0))
    assert total < 0
    table = cmp.task_contributions("GRPO 80", "RL base", k=32)
    assert table.loc[0, "task"] == "zero/speed"
    speed = table.loc[0, "contribution"]
    assert speed < total  # speed alone is more than the whole deficit
    assert (table.loc[1:, "contribution"] > 0).all()  # every other task helps GRPO 80
    assert table["contribution"].sum() == pytest.approx(total, abs=1e-12)
    # ch. 17.7: speed was solved 3 of 64 times by GRPO 80, 10 of 64 by the base agent
    assert table.loc[0, "system_value"] < table.loc[0, "baseline_value"]


def test_contributions_sum_to_the_difference_draw_by_draw(tiny_none):
    cmp = eb.compare(tiny_none, k=[4])
    table = cmp.task_contributions("GRPO 20", "RL base")
    diff = float(cmp.stats["diff_mean"].sel(system="GRPO 20", baseline="RL base", k=4.0))
    assert table["contribution"].sum() == pytest.approx(diff, abs=1e-12)
    assert list(table.columns[:6]) == [
        "task", "contribution", "lower", "upper", "system_value", "baseline_value"
    ]
    assert (np.diff(np.abs(table["contribution"].to_numpy())) <= 0).all()


# ---------------------------------------------------------------- outputs


def test_frame_matrix_and_summary(tiny_partial):
    cmp = eb.compare(tiny_partial, k=[1, 32], estimand="population", rope=0.02)
    frame = cmp.to_frame()
    assert len(frame) == 3 * 2 * 2
    for col in ("system", "baseline", "metric", "k", "estimand", "p_superior", "diff_mean",
                "diff_lower", "diff_upper", "p_rope", "expected_loss", "ci_prob"):
        assert col in frame.columns
    assert "approximate" not in frame.columns
    assert set(frame["estimand"]) == {"population"}
    assert set(frame["k"]) == {1, 32}
    assert (frame["diff_lower"] <= frame["diff_mean"]).all()
    assert (frame["diff_mean"] <= frame["diff_upper"]).all()
    mat = cmp.matrix(k=32)
    assert list(mat.index) == list(mat.columns) == cmp.systems
    assert np.isnan(np.diag(mat.to_numpy())).all()
    text = cmp.summary()
    assert "population" in text and "tasks like these" in text
    assert "APPROXIMATE" not in text
    assert "GRPO 80" in text and "P(best)" in text


def test_approximate_fits_are_labelled(complete_fit):
    sampler = SamplerConfig(method="advi", draws=DRAWS, chains=CHAINS, seed=11)
    approx = Posterior.from_groups(
        complete_fit.model, complete_fit.data, sampler, {"posterior": complete_fit.posterior}
    )
    cmp = eb.compare(approx, k=1)
    assert cmp.approximate
    assert cmp.to_frame()["approximate"].all()
    assert "APPROXIMATE" in cmp.summary()
    assert "APPROXIMATE" in repr(cmp)


def test_systems_subset_keeps_order(tiny_partial):
    cmp = eb.compare(tiny_partial, systems=["GRPO 80", "RL base"])
    assert cmp.systems == ["GRPO 80", "RL base"]
    assert len(cmp.to_frame()) == 2


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"systems": ["RL base", "nope"]}, "unknown systems"),
        ({"systems": ["RL base"]}, r"need at least 2 system"),
        ({"systems": ["RL base", "RL base"]}, "more than once"),
        ({"systems": "RL base"}, "sequence of names"),
        ({"rope": -0.01}, "rope"),
        ({"rope": float("nan")}, "rope"),
        ({"ci_prob": 1.0}, "ci_prob"),
        ({"kind": "mode"}, "kind"),
        ({"metric": "pass@1"}, "metric"),
        ({"estimand": "everything"}, "estimand"),
    ],
)
def test_bad_arguments(tiny_partial, kwargs, match):
    with pytest.raises(ValueError, match=match):
        eb.compare(tiny_partial, **kwargs)


def test_repeated_k_rejected(tiny_partial):
    with pytest.raises(ValueError, match="repeated k"):
        eb.compare(tiny_partial, k=[1, 4, 1])


def test_estimand_not_available_for_model(tiny_none):
    with pytest.raises(ValueError, match="not available"):
        eb.compare(tiny_none, estimand="population")


def test_bad_queries(tiny_partial):
    cmp = eb.compare(tiny_partial, k=[1, 32], estimand="tasks")
    with pytest.raises(ValueError, match="choose one"):
        cmp.matrix()
    with pytest.raises(ValueError, match="not one of"):
        cmp.matrix(k=2)
    with pytest.raises(ValueError, match="value"):
        cmp.matrix(k=1, value="p_best")
    with pytest.raises(ValueError, match="unknown system"):
        cmp.task_contributions("GRPO 99", "RL base", k=32)
    with pytest.raises(ValueError, match="both"):
        cmp.task_contributions("RL base", "RL base", k=32)
    population = eb.compare(tiny_partial, k=32, estimand="population")
    with pytest.raises(ValueError, match="estimand='tasks'"):
        population.task_contributions("GRPO 80", "RL base")


def test_bad_draws():
    good = xr.DataArray(
        np.random.default_rng(0).uniform(size=(1, 5, 2, 1)),
        dims=("chain", "draw", "system", "k"),
        coords={"system": ["a", "b"], "k": [1.0]},
        attrs={"metric": "pass@k", "estimand": "tasks"},
    )
    with pytest.raises(ValueError, match="dims"):
        eb.Comparison.from_draws(good.isel(k=0, drop=True))
    no_attrs = good.copy()
    no_attrs.attrs = {}
    with pytest.raises(ValueError, match="metric"):
        eb.Comparison.from_draws(no_attrs)
    with_nan = good.copy(data=good.values.copy())
    with_nan.values[0, 2, 1, 0] = np.nan
    with pytest.raises(ValueError, match="system 'b'"):
        eb.Comparison.from_draws(with_nan)
    repeated = good.assign_coords(system=["a", "a"])
    with pytest.raises(ValueError, match="repeated system"):
        eb.Comparison.from_draws(repeated)
    with pytest.raises(TypeError, match="from_draws"):
        eb.compare(good)
    cmp = eb.Comparison.from_draws(good)
    with pytest.raises(ValueError, match="needs the posterior"):
        cmp.task_contributions("a", "b")


# ---------------------------------------------------------------- default estimand, few tasks


def test_default_estimand_is_the_population_where_the_model_has_one(tiny_partial, tiny_none):
    """Judged against a whole benchmark, "tasks" intervals of a difference measured on 10-100
    of its tasks covered 0.60-0.67 (issue 27), so a comparison asks about tasks like these
    unless told otherwise; pooling="none" has no population and keeps "tasks"."""
    cmp = eb.compare(tiny_partial, k=1)
    assert cmp.estimand == "population"
    explicit = eb.compare(tiny_partial, k=1, estimand="population")
    assert cmp.to_frame().equals(explicit.to_frame())
    assert eb.compare(tiny_none, k=1).estimand == "tasks"


def test_summary_says_how_many_tasks_the_comparison_rests_on(tiny, tiny_partial):
    n_tasks = int(((tiny.n.values > 0).all(axis=0)).sum())
    assert n_tasks < 30  # TinyAgent: 10 tasks
    text = eb.compare(tiny_partial, k=1, systems=["GRPO 80", "RL base"]).summary()
    assert f"rests on {n_tasks} shared tasks" in text
    assert "fewer than 30 tasks" in text and "unseen tasks" in text
    tasks = eb.compare(tiny_partial, k=1, estimand="tasks").summary()
    assert f"rests on {n_tasks} tasks shared by every pair" in tasks
    assert "about these tasks only" in tasks


def test_few_tasks_note_names_the_copula_coupling(tiny):
    """With coupling="copula" the unseen-task weight is the copula's prior, not a share of
    unseen tasks: the note says the pairing is loosely pinned down instead."""
    post = eb.BetaBinomialModel(coupling="copula").fit(tiny, draws=300, chains=2, seed=1)
    text = eb.compare(post, k=1, systems=["GRPO 80", "RL base"]).summary()
    assert "fewer than 30 tasks" in text and "pin down the systems' pairing" in text
    assert "unseen tasks" not in text


@pytest.mark.parametrize("kind", ["eti", "hdi"])
def test_pair_stats_match_each_ordered_pair_computed_directly(kind):
    """_pair_stats (equal-tailed: each unordered pair once, A - B read off B - A) against a
    direct computation of every ordered pair with NumPy: counts exactly, means and bounds to
    rounding; equal-tailed bounds exactly antisymmetric. Ties (rounded draws) included."""
    from evalbayes.results._comparison import _pair_stats

    def narrowest(x, prob):  # Hyndman (1996): the shortest window holding ceil(prob m) draws
        x = np.sort(x)
        width = int(np.ceil(prob * len(x)))
        i = int(np.argmin(x[width:] - x[: len(x) - width]))
        return x[i], x[i + width]

    rng = np.random.default_rng(3)
    values = np.round(rng.beta(2.0, 3.0, size=(2, 300, 5, 2)), 2)
    values[:, :, 3] = values[:, :, 1]  # two systems equal in every draw
    draws = xr.DataArray(values, dims=("chain", "draw", "system", "k"),
                         coords={"system": list("abcde"), "k": [1.0, 4.0]})
    got = _pair_stats(draws, 0.05, 0.9, kind)
    loss = got["expected_loss"].values
    assert not np.signbit(loss[np.isfinite(loss)]).any()  # 0.0 where B never trails, not -0.0
    flat = values.reshape(600, 5, 2)
    for b in range(5):
        for a in range(5):
            cell = got.isel(system=b, baseline=a)
            if a == b:
                assert all(np.isnan(cell[name].values).all() for name in cell.data_vars)
                continue
            d = flat[:, b] - flat[:, a]
            np.testing.assert_array_equal(cell["p_superior"].values, (d > 0).mean(axis=0))
            np.testing.assert_array_equal(cell["p_tie"].values, (d == 0).mean(axis=0))
            np.testing.assert_array_equal(cell["p_rope"].values,
                                          (np.abs(d) < 0.05).mean(axis=0))
            np.testing.assert_allclose(cell["diff_mean"].values, d.mean(axis=0),
                                       rtol=0, atol=1e-15)
            np.testing.assert_allclose(cell["expected_loss"].values,
                                       np.maximum(-d, 0).mean(axis=0), rtol=0, atol=1e-15)
            if kind == "eti":
                bounds = np.quantile(d, [0.05, 0.95], axis=0)
                back = got.isel(system=a, baseline=b)
                assert np.array_equal(cell["diff_lower"].values, -back["diff_upper"].values)
            else:
                bounds = np.array([narrowest(d[:, j], 0.9) for j in range(2)]).T
            np.testing.assert_allclose(cell["diff_lower"].values, bounds[0], rtol=0,
                                       atol=1e-14)
            np.testing.assert_allclose(cell["diff_upper"].values, bounds[1], rtol=0,
                                       atol=1e-14)


@pytest.mark.parametrize("kind", ["eti", "hdi"])
def test_pair_statistics_on_threads_are_those_of_one_thread(monkeypatch, kind):
    """Many systems: the rows run on a thread pool; the numbers are those of the serial
    loop (each row writes its own cells), ties and all."""
    from evalbayes.results import _comparison

    rng = np.random.default_rng(11)
    values = np.round(rng.beta(2, 5, size=(4, 1000, 60, 2)), 2)  # rounded: ties
    draws = xr.DataArray(values, dims=("chain", "draw", "system", "k"),
                         coords={"system": [f"s{i}" for i in range(60)], "k": [1, 4]})
    assert 60 * 4000 >= _comparison._THREADED_CELLS
    threaded = _comparison._pair_stats(draws, 0.01, 0.9, kind)
    monkeypatch.setattr(_comparison, "_THREADED_CELLS", 10**12)
    serial = _comparison._pair_stats(draws, 0.01, 0.9, kind)
    xr.testing.assert_identical(threaded, serial)
    diff = values[:, :, 3, 1] - values[:, :, 7, 1]
    assert threaded["p_superior"].values[3, 7, 1] == np.mean(diff > 0)
    np.testing.assert_allclose(threaded["diff_mean"].values[3, 7, 1], diff.mean(), rtol=1e-12)
