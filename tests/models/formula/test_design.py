"""Formula -> design matrices, checked against matrices built by hand from the data."""

from __future__ import annotations

import numpy as np
import pytest

from evalbayes.data import EvalData
from evalbayes.models.formula import FormulaModel, design
from evalbayes.models.formula._design import grid_frame, split_formula

HARNESS = np.array(["h0", "h1", "h0"])
DATE = np.array([2024.0, 2024.5, 2025.0])
CATEGORY = np.array(["a", "b", "a", "b"])
LENGTH = np.array([1.0, 2.0, 4.0, 8.0])


def _data() -> EvalData:
    n = np.full((3, 4), 3)
    n[2, 3] = 0  # an unobserved cell still gets a design row
    c = np.minimum(n, [[0, 1, 2, 3], [1, 1, 1, 1], [3, 2, 1, 0]])
    return EvalData.from_arrays(
        n, c, systems=["s0", "s1", "s2"], tasks=["t0", "t1", "t2", "t3"],
        system_coords={"harness": HARNESS, "date": DATE},
        task_coords={"category": CATEGORY, "length": LENGTH},
    )


def test_response_spellings():
    rhs = "harness + (1 | task)"
    for formula in (f"c | trials(n) ~ {rhs}", f"p(c, n) ~ {rhs}", f"~ {rhs}", rhs,
                    f"successes | trials(trials) ~ {rhs}"):
        assert split_formula(formula) == rhs
    for bad, rule in (("c ~ harness", "the response must be"),
                      ("c | trials(n) ~", "no terms"), ("", "needs a formula"),
                      ("a ~ b ~ c", "more than one")):
        with pytest.raises(ValueError, match=rule):
            split_formula(bad)


def test_grid_frame_broadcasts_coordinates_system_major():
    frame = grid_frame(_data())
    assert list(frame["system"]) == [s for s in ("s0", "s1", "s2") for _ in range(4)]
    assert list(frame["task"]) == ["t0", "t1", "t2", "t3"] * 3
    np.testing.assert_array_equal(frame["date"], np.repeat(DATE, 4))
    np.testing.assert_array_equal(frame["length"], np.tile(LENGTH, 3))


def test_common_terms_with_interaction_match_hand_built():
    d = design(_data(), "c | trials(n) ~ harness * date + length")
    h1 = np.repeat((HARNESS == "h1").astype(float), 4)
    date = np.repeat(DATE, 4)
    length = np.tile(LENGTH, 3)
    expected = np.column_stack([np.ones(12), h1, date, length, h1 * date])
    order = [d.coefs.index(c) for c in
             ("Intercept", "harness[h1]", "date", "length", "harness[h1]:date")]
    np.testing.assert_array_equal(d.X[:, order], expected)
    assert d.terms == ()


def test_categorical_of_a_numeric_coordinate():
    d = design(_data(), "0 + C(date)")
    assert d.X.shape == (12, 3)
    np.testing.assert_array_equal(d.X.argmax(axis=1), np.repeat([0, 1, 2], 4))


def test_group_terms_levels_expressions_and_kinds():
    d = design(_data(), "1 + (1 | task) + (length | harness) + (1 | harness:task)")
    terms = {t.name: t for t in d.terms}
    task = terms["1|task"]
    assert task.kind == "task" and task.levels == ("t0", "t1", "t2", "t3")
    np.testing.assert_array_equal(task.level, np.tile(np.arange(4), 3))
    np.testing.assert_array_equal(task.expr, np.ones((12, 1)))
    slope = terms["length|harness"]
    assert slope.kind == "system" and slope.levels == ("h0", "h1")
    np.testing.assert_array_equal(slope.level, np.repeat([0, 1, 0], 4))
    np.testing.assert_array_equal(slope.expr[:, 0], np.tile(LENGTH, 3))
    assert terms["1|harness"].kind == "system"
    nested = terms["1|harness:task"]
    assert nested.kind == "task" and len(nested.levels) == 8
    labels = [f"{h}:{t}" for h in HARNESS for t in ("t0", "t1", "t2", "t3")]
    assert [nested.levels[i] for i in nested.level] == labels


def test_categorical_slope_has_one_column_per_contrast():
    d = design(_data(), "(0 + category | harness)")
    (term,) = d.terms
    assert term.columns == ("category[a]", "category[b]")
    np.testing.assert_array_equal(term.expr, np.tile(np.eye(2)[[0, 1, 0, 1]], (3, 1)))


def test_noise_terms_and_categories_of_task_coordinates():
    data = _data()
    ds = data.dataset.assign_coords(run=("system", ["r0", "r1", "r0"]))
    d = design(EvalData(ds), "(1 | run) + (1 | category)")
    kinds = {t.name: t.kind for t in d.terms}
    assert kinds == {"1|run": "noise", "1|category": "task"}
    assert {t.name: t.kind for t in design(EvalData(ds), "(1 | run)", noise=()).terms} == {
        "1|run": "system"}


def test_datetime_coordinates_become_decimal_years():
    data = _data()
    dates = np.array(["2024-01-01", "2024-07-02", "2025-01-01"], dtype="datetime64[ns]")
    ds = data.dataset.assign_coords(released=("system", dates))
    d = design(EvalData(ds), "released")
    np.testing.assert_allclose(d.X[::4, 1], [2024.0, 2024 + 183 / 365.25, 2025.0])


def test_unknown_variable_and_bad_syntax_name_the_rule():
    with pytest.raises(ValueError, match=r"not a variable of the data.*harness"):
        design(_data(), "c | trials(n) ~ scaffold")
    with pytest.raises(ValueError, match="formula"):
        design(_data(), "harness +")
    with pytest.raises(ValueError, match="needs a formula"):
        FormulaModel()
    with pytest.raises(ValueError, match="sd_priors names"):
        FormulaModel("harness + (1|task)", sd_priors={"1|nope": 1.0}).check_data(_data())
