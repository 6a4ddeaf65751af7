"""Every result renders one way: ``to_frame``, ``to_dict`` (JSON), ``str`` and ``_repr_html_``.

The HTML of a result whose strings come from the user (system names) escapes them: a system
named ``<script>`` shows as text, never as a tag.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalbayes as eb
from evalbayes import frequentist as fq
from evalbayes._core.rendering import Rendered, jsonable
from evalbayes.frequentist.crosscheck import crosscheck
from evalbayes.results._diagnostics import Diagnostics
from evalbayes.testing import rank_uniformity

EVIL = "<script>alert(1)</script>"


def evil_data() -> eb.EvalData:
    """Two systems, one named with HTML, 24 tasks of 4 trials."""
    rng = np.random.default_rng(0)
    n = np.full((2, 24), 4)
    c = rng.binomial(4, rng.uniform(0.1, 0.9, size=(2, 24)))
    return eb.EvalData.from_arrays(n, c, systems=["base", EVIL])


@pytest.fixture(scope="module")
def fit():
    return eb.BetaBinomialModel(pooling="none").fit(evil_data(), draws=100, chains=2, seed=1)


def frequentist_results() -> list[Rendered]:
    n = np.full(12, 4)
    c = np.array([0, 1, 2, 3, 4, 4, 2, 1, 0, 3, 4, 2])
    a = c / n
    b = np.clip(a + np.linspace(-0.2, 0.3, 12), 0, 1)
    outcomes = fq.paired_outcomes(n, c, n, np.roll(c, 1))
    labels = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1])
    verdicts = np.array([1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1])
    return [
        fq.task_bootstrap_ci(n, c, n_resamples=200, seed=0),
        fq.intra_task_correlation(n, c),
        fq.gate_counts(n, c, n, np.roll(c, 1)),
        fq.ship_gate(5, 1, 10),
        fq.wilson_interval(7, 10),
        fq.wilson_interval(np.array([3, 7]), np.array([10, 10])),
        fq.cohen_kappa(labels, verdicts, n_resamples=200, seed=0),
        fq.rogan_gladen(0.6, 0.9, 0.8),
        fq.holm([0.01, 0.04, 0.3]),
        fq.sign_flip_test(b - a, seed=0),
        fq.mcnemar(3, 7),
        outcomes,
        fq.paired_comparison(a, b, n_resamples=200, seed=0),
        fq.non_inferiority(a, b, 0.1, n_resamples=200, seed=0),
        fq.mcnemar_mde(100, 0.2),
        rank_uniformity(np.arange(100) % 100),
    ]


def check_four_ways(result: Rendered) -> None:
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) >= 1
    out = result.to_dict()
    text = json.dumps(out, allow_nan=False)  # JSON-serialisable, no NaN tokens
    assert json.loads(text)["records"] == jsonable(frame.to_dict(orient="records"))
    assert isinstance(out["settings"], dict) and out["title"]
    assert (str(result).strip() and "\n" in str(result)) or isinstance(result, Diagnostics)
    html = result._repr_html_()
    assert html.startswith("<div>") and "<table" in html


@pytest.mark.parametrize("index", range(16))
def test_frequentist_results_render_four_ways(index):
    result = frequentist_results()[index]
    check_four_ways(result)
    for name in result._settings_fields:
        assert name in result.title() or name == "approximate"
        assert name in result.to_dict()["settings"]


def test_array_results_give_one_row_per_element():
    interval = fq.wilson_interval(np.array([3, 7, 9]), np.array([10, 10, 10]))
    frame = interval.to_frame()
    assert list(frame["estimate"]) == [0.3, 0.7, 0.9]
    assert set(frame["method"]) == {"wilson"}
    assert interval.to_dict()["settings"] == {"ci_prob": 0.95, "method": "wilson"}


def test_nested_results_flatten_with_prefixes():
    n = np.full(12, 4)
    a = np.linspace(0, 1, 12)
    comp = fq.paired_comparison(a, a[::-1], n_resamples=200, seed=0)
    columns = set(comp.to_frame().columns)
    assert {"difference", "interval_lower", "sign_flip_p_value", "verdict"} <= columns
    del n


def test_posterior_renders_label_diagnostics_and_summary(fit):
    text = str(fit)
    lines = text.splitlines()
    assert lines[0] == fit.label
    assert lines[1].startswith("diagnostics: ")
    pd.testing.assert_frame_equal(fit.to_frame(), fit.summary())
    out = fit.to_dict()
    json.dumps(out, allow_nan=False)
    assert out["settings"]["model"] == fit.model.name
    assert out["diagnostics"]["passed"] in (True, False)
    html = fit._repr_html_()
    assert EVIL not in html and "&lt;script&gt;" in html
    assert repr(fit).startswith("Posterior(")  # the short repr is unchanged


def test_ppc_diagnostics_comparison_render(fit):
    ppc = fit.ppc(seed=0)
    check_four_ways(ppc)
    assert "Posterior predictive check (90% intervals" in str(ppc)
    diag = fit.diagnostics(warn=False)
    check_four_ways(diag)
    assert str(diag).startswith("R-hat max")  # the one-line readable form is kept
    assert "\n" not in str(diag)
    assert diag.to_dict()["passed"] == diag.passed  # the old keys are kept
    cmp = eb.compare(fit, k=[1, 2])
    check_four_ways(cmp)
    assert str(cmp) == cmp.summary()
    assert cmp.to_dict()["settings"]["metric"] == "pass@k"
    assert cmp.to_dict()["settings"]["estimand"] == "tasks"
    html = cmp._repr_html_()
    assert EVIL not in html and "&lt;script&gt;" in html
    assert "estimand &#x27;tasks&#x27;" in html or "estimand 'tasks'" in html


def test_crosscheck_report_renders_and_escapes():
    report = crosscheck(evil_data(), compare=("base", EVIL), n_resamples=200, seed=0)
    check_four_ways(report)
    assert str(report) == report.format_table()
    out = report.to_dict()
    assert {"settings", "systems", "comparison", "records"} <= set(out)
    assert out["settings"]["estimand"].startswith("tasks")
    html = report._repr_html_()
    assert EVIL not in html and html.count("&lt;script&gt;") >= 2
    for block in (report.systems[0], report.comparison):
        check_four_ways(block)
        assert EVIL not in block._repr_html_()


def test_approximate_is_named_in_titles():
    draws = eb.BetaBinomialModel(pooling="complete").fit(
        evil_data(), draws=50, chains=2, seed=0
    ).curve("pass@k", [1])
    draws.attrs["approximate"] = 1
    cmp = eb.Comparison.from_draws(draws)
    assert "APPROXIMATE" in cmp.title()
    assert cmp.to_dict()["settings"]["approximate"] is True


def test_rank_test_has_one_row_per_bin():
    ranks = np.repeat(np.arange(0, 100, 10), [5, 15, 10, 10, 10, 10, 10, 10, 10, 10])
    result = rank_uniformity(ranks)
    frame = result.to_frame()
    assert list(frame["count"]) == [5, 15] + [10] * 8
    assert np.allclose(frame["expected"], 10.0)
    # chi-square by hand: (25 + 25) / 10 = 5
    assert result.to_dict()["settings"]["statistic"] == pytest.approx(5.0)
    assert str(result).startswith("SBC rank uniformity: chi-square 5")
