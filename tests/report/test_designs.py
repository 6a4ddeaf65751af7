"""Report sections of the designs (factorial, training seeds, judge error).

Each section is built from a short real fit and its cells are checked against the library's
functions (variance_components, rank_flips, noise_components, recipe_difference,
judge_accuracy, true_pass_rate) and, for the judge, against Rogan-Gladen and PPI++ computed
here from the raw gold rows. Plain data get none of the sections; data that carry a design's
coordinates under another fit get a pointer. The fits are short (2 chains x 100 draws) but
each compiles a model: the tests that use one are marked slow.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from evalbayes.data import EvalData
from evalbayes.frequentist import ppi_mean, rogan_gladen
from evalbayes.models import BetaBinomialModel
from evalbayes.models.designs._factorial import (
    FactorialModel,
    add_factors,
    rank_flips,
    variance_components,
)
from evalbayes.models.designs._judge_error import (
    JudgeErrorModel,
    gold_accuracy,
    judge_accuracy,
    judge_crosscheck,
    judge_data,
    true_pass_rate,
)
from evalbayes.models.designs._training_seeds import (
    TrainingSeedsModel,
    noise_components,
    recipe_difference,
)
from evalbayes.report import build_report, write_report
from evalbayes.report._designs import ALL_PAIRS_UP_TO, recipe_pairs
from evalbayes.report._document import Callout, Table

SAMPLER = {"draws": 100, "tune": 100, "chains": 2, "seed": 0, "progressbar": False,
           "check": False}  # fmt: skip
DESIGN_KEYS = ("factorial", "training-seeds", "judge-error")


def _fit(model, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: diagnostics are not the point here
        return model.fit(data, **SAMPLER)


def _f3(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{x:.3f}"


def _iv(lo: float, hi: float) -> str:
    return "-" if not (np.isfinite(lo) and np.isfinite(hi)) else f"[{lo:.3f}, {hi:.3f}]"


def _rows(table: Table) -> list[dict[str, str]]:
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def _keys(document) -> list[str]:
    return [s.key for s in document.sections]


# ---------------------------------------------------------------------------- data and fits
@pytest.fixture(scope="module")
def factorial_data():
    rng = np.random.default_rng(1)
    n = np.full((6, 8), 4)
    c = rng.binomial(n, 0.5)
    return add_factors(EvalData.from_arrays(n, c), ["ma", "ma", "mb", "mb", "mc", "mc"],
                       ["hx", "hy"] * 3)  # fmt: skip


@pytest.fixture(scope="module")
def factorial_fit(factorial_data):
    return _fit(FactorialModel(), factorial_data)


@pytest.fixture(scope="module")
def seeds_data():
    rng = np.random.default_rng(2)
    n = np.full((6, 6), 3)
    c = rng.binomial(n, np.repeat([0.3, 0.5, 0.6], 2)[:, None])
    return EvalData.from_arrays(n, c, system_coords={"recipe": np.repeat(["A", "B", "C"], 2)})


@pytest.fixture(scope="module")
def seeds_fit(seeds_data):
    return _fit(TrainingSeedsModel(), seeds_data)


@pytest.fixture(scope="module")
def gold_rows():
    """Two systems, 20 tasks x 2 judged trials; the first trial of 12 tasks per system is
    labelled by hand. Returns (counts, gold frame)."""
    rng = np.random.default_rng(3)
    systems, tasks = ["sys_a", "sys_b"], [f"t{i:02d}" for i in range(20)]
    human = rng.random((2, 20, 2)) < np.array([0.4, 0.7])[:, None, None]
    judge = np.where(human, rng.random(human.shape) < 0.85, rng.random(human.shape) > 0.9)
    counts = EvalData.from_arrays(np.full((2, 20), 2), judge.sum(axis=2), systems=systems,
                                  tasks=tasks)  # fmt: skip
    gold = pd.DataFrame(
        [(systems[s], tasks[t], int(judge[s, t, 0]), int(human[s, t, 0]))
         for s in range(2) for t in range(12)],
        columns=["system", "task", "judge", "human"],
    )  # fmt: skip
    return counts, gold


@pytest.fixture(scope="module")
def judge_fit(gold_rows):
    counts, gold = gold_rows
    return _fit(JudgeErrorModel(), judge_data(counts, gold))


# ---------------------------------------------------------------------------- factorial
@pytest.mark.slow  # a short fit, mostly compile time
def test_factorial_section_equals_the_library(factorial_data, factorial_fit):
    document = build_report(factorial_data, factorial_fit, seed=0)
    keys = _keys(document)
    assert "factorial" in keys and "training-seeds" not in keys and "judge-error" not in keys
    assert keys.index("items") < keys.index("factorial") < keys.index("checks")
    tables = document.tables()
    comp = variance_components(factorial_fit, ci_prob=0.95)
    rows = _rows(tables["variance-components"])
    assert [r["component"].split(" ")[0] for r in rows] == list(comp.index)
    for row, (_, ref) in zip(rows, comp.iterrows(), strict=True):
        assert row["sd (mean)"] == _f3(ref["mean"])
        assert row["sd (median)"] == _f3(ref["median"])
        assert row["sd 95%"] == _iv(ref["lower"], ref["upper"])
        assert row["variance (mean)"] == _f3(ref["var_mean"])
        assert row["share"] == f"{ref['share']:.1%}"
    shares = [float(r["share"].rstrip("%")) for r in rows]
    assert sum(shares) == pytest.approx(100.0, abs=0.3)
    flips, p_any = rank_flips(factorial_fit)
    assert len(flips) == 3  # one pair of harnesses, three pairs of models
    shown = _rows(tables["rank-flips"])
    assert len(shown) == 3
    by_pair = {(r["model A"], r["model B"]): r for r in shown}
    for _, ref in flips.iterrows():
        row = by_pair[(ref["model_a"], ref["model_b"])]
        assert (row["harness 1"], row["harness 2"]) == (ref["harness_a"], ref["harness_b"])
        assert row["A - B under 1"] == f"{ref['diff_a']:+.2f}"
        assert row["A - B under 2"] == f"{ref['diff_b']:+.2f}"
        assert row["P(flip)"] == _f3(ref["p_flip"])
    assert [float(r["P(flip)"]) for r in shown] == sorted(
        (float(r["P(flip)"]) for r in shown), reverse=True)  # fmt: skip
    callouts = [b for b in document.section("factorial").blocks if isinstance(b, Callout)]
    assert any(c.title.endswith(f"= {p_any:.3f}") for c in callouts)
    figures = [f for f in document.figures() if f.name == "factorial"]
    assert len(figures) == 1 and figures[0].png.startswith(b"\x89PNG")


@pytest.mark.slow  # a short fit, mostly compile time
def test_factorial_section_in_html_and_markdown(factorial_data, factorial_fit, tmp_path):
    html = write_report(factorial_data, factorial_fit, tmp_path / "r.html").read_text("utf-8")
    assert '<section id="factorial">' in html
    assert '<table id="variance-components">' in html and '<table id="rank-flips">' in html
    assert '<figure id="fig-factorial">' in html
    md_path = write_report(factorial_data, factorial_fit, tmp_path / "r.html", markdown=True)
    text = md_path.read_text("utf-8")
    assert "Model × harness \\(factorial\\)" in text
    assert (tmp_path / "r_files" / "factorial.png").exists()


# ---------------------------------------------------------------------------- training seeds
@pytest.mark.slow  # a short fit, mostly compile time
def test_seeds_section_equals_the_library(seeds_data, seeds_fit):
    document = build_report(seeds_data, seeds_fit, seed=0)
    keys = _keys(document)
    assert "training-seeds" in keys and "factorial" not in keys and "judge-error" not in keys
    tables = document.tables()
    noise = noise_components(seeds_fit, ci_prob=0.95)
    rows = _rows(tables["noise-components"])
    assert [r["component"].split(" ")[0] for r in rows] == ["run", "task", "cell"]
    for row, (_, ref) in zip(rows, noise.iterrows(), strict=True):
        assert row["sd (mean)"] == _f3(ref["mean"])
        assert row["sd 95%"] == _iv(ref["lower"], ref["upper"])
    diffs = _rows(tables["recipe-differences"])
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]  # three recipes: every pair
    assert len(diffs) == 3 * len(pairs)
    for i, (a, b) in enumerate(pairs):
        ref = recipe_difference(seeds_fit, a, b, ci_prob=0.95)
        for row, (scale, r) in zip(diffs[3 * i: 3 * i + 3], ref.iterrows(), strict=True):
            assert row["difference"] == f"{b} - {a}" and row["scale"] == scale
            assert row["mean"] == f"{r['mean']:+.3f}"
            assert row["95%"] == f"[{r['lower']:+.3f}, {r['upper']:+.3f}]"
            assert row["P(B > A)"] == _f3(r["p_b_better"])


def test_recipe_pairs_all_then_first_against_each():
    few = [f"r{i}" for i in range(ALL_PAIRS_UP_TO)]
    assert len(recipe_pairs(few)) == ALL_PAIRS_UP_TO * (ALL_PAIRS_UP_TO - 1) // 2
    many = [f"r{i}" for i in range(ALL_PAIRS_UP_TO + 2)]
    assert recipe_pairs(many) == [("r0", other) for other in many[1:]]
    assert recipe_pairs(["only"]) == []


# ---------------------------------------------------------------------------- judge error
@pytest.mark.slow  # a short fit, mostly compile time
def test_judge_section_equals_the_library_and_the_frequentist_twins(gold_rows, judge_fit):
    counts, gold = gold_rows
    document = build_report(judge_fit.data, judge_fit, seed=0)
    keys = _keys(document)
    assert "judge-error" in keys and "factorial" not in keys and "training-seeds" not in keys
    tables = document.tables()
    # sensitivity / specificity: posterior and counted on the raw gold rows
    tp = int(((gold.judge == 1) & (gold.human == 1)).sum())
    fn = int(((gold.judge == 0) & (gold.human == 1)).sum())
    tn = int(((gold.judge == 0) & (gold.human == 0)).sum())
    fp = int(((gold.judge == 1) & (gold.human == 0)).sum())
    q1, q0 = tp / (tp + fn), tn / (tn + fp)
    acc = judge_accuracy(judge_fit, ci_prob=0.95)
    rows = {r["judge"]: r for r in _rows(tables["judge-accuracy"])}
    for name, counted, size in (("sensitivity", q1, tp + fn), ("specificity", q0, tn + fp)):
        assert rows[name]["posterior mean"] == _f3(acc.loc[name, "mean"])
        assert rows[name]["95%"] == _iv(acc.loc[name, "lower"], acc.loc[name, "upper"])
        assert rows[name]["gold count"] == _f3(counted)
        assert rows[name]["gold trials"] == str(size)
    # per system: raw judge rate, the model's true rate, Rogan-Gladen, PPI++
    bayes = true_pass_rate(judge_fit, ci_prob=0.95)
    rates = {r["system"]: r for r in _rows(tables["judge-pass-rates"])}
    assert set(rates) == set(counts.systems)
    for s, system in enumerate(counts.systems):
        row = rates[system]
        n_s, c_s = int(counts.n.values[s].sum()), int(counts.c.values[s].sum())
        assert row["judge rate"] == _f3(c_s / n_s)
        assert row["true rate"] == _f3(bayes.loc[system, "mean"])
        assert row["true 95%"] == _iv(bayes.loc[system, "lower"], bayes.loc[system, "upper"])
        rg = rogan_gladen(c_s / n_s, q0, q1, n=n_s, n_pos=tp + fn, n_neg=tn + fp)
        assert row["Rogan-Gladen"] == _f3(rg.estimate)
        assert row["RG 95%"] == _iv(rg.lower, rg.upper)
        mine = gold[gold.system == system]
        rest = c_s - int(mine.judge.sum()), n_s - len(mine)
        f_rest = np.r_[np.ones(rest[0]), np.zeros(rest[1] - rest[0])]
        ppi = ppi_mean(mine.human.to_numpy(float), mine.judge.to_numpy(float), f_rest)
        assert row["PPI++"] == _f3(ppi.estimate)
        assert row["PPI++ 95%"] == _iv(ppi.lower, ppi.upper)
        assert row["gold trials"] == str(len(mine))


def test_judge_crosscheck_leaves_out_what_the_gold_cannot_give():
    counts = EvalData.from_arrays(np.full((2, 4), 3), [[3, 2, 1, 0], [1, 1, 2, 3]],
                                  systems=["s0", "s1"], tasks=["a", "b", "c", "d"])
    gold = pd.DataFrame({"system": ["s0", "s1", "s1", "s1"], "task": ["a", "a", "b", "c"],
                         "judge": [1, 1, 0, 1], "human": [1, 1, 1, 1]})
    table = judge_crosscheck(judge_data(counts, gold))
    # no human fail in the gold subset: no specificity, no Rogan-Gladen
    assert np.isnan(gold_accuracy(judge_data(counts, gold))["specificity"])
    assert table["rg"].isna().all()
    # s0 has one gold trial: no PPI++; s1 has three
    assert np.isnan(table.loc["s0", "ppi"])
    ref = ppi_mean([1.0, 1.0, 1.0], [1.0, 0.0, 1.0], np.r_[np.ones(7 - 2), np.zeros(4)])
    assert table.loc["s1", "ppi"] == pytest.approx(ref.estimate, abs=1e-12)
    assert table.loc["s1", "ppi_lower"] == pytest.approx(ref.lower, abs=1e-12)
    assert table.loc["s1", ["n", "n_gold"]].tolist() == [12, 3]
    assert table.loc["s1", "judge_rate"] == pytest.approx(7 / 12)


# ---------------------------------------------------------------------------- plain data
@pytest.mark.slow  # a short fit, mostly compile time
def test_plain_data_get_no_design_section(gold_rows, factorial_data, seeds_data):
    counts, gold = gold_rows
    plain = _fit(BetaBinomialModel(), counts)
    assert not set(DESIGN_KEYS) & set(_keys(build_report(counts, plain, seed=0)))
    # the same data with a design's coordinates, under a plain fit: a pointer, no tables
    for data, key in ((factorial_data, "factorial"), (seeds_data, "training-seeds"),
                      (judge_data(counts, gold), "judge-error")):
        document = build_report(data, _fit(BetaBinomialModel(), data), seed=0)
        present = [k for k in _keys(document) if k in DESIGN_KEYS]
        assert present == [key]
        section = document.section(key)
        assert not any(isinstance(b, Table) for b in section.blocks)
        assert "evalbayes fit" in repr(section.blocks)


@pytest.mark.slow  # a short fit, mostly compile time
def test_write_report_fits_the_given_model(seeds_data, tmp_path):
    path = write_report(seeds_data, output=tmp_path / "r.html", model=TrainingSeedsModel(),
                        draws=50)
    assert '<section id="training-seeds">' in path.read_text("utf-8")
    with pytest.raises(ValueError, match="not both"):
        write_report(seeds_data, fit=_fit(BetaBinomialModel(), seeds_data),
                     output=tmp_path / "x.html", model=TrainingSeedsModel())  # fmt: skip
