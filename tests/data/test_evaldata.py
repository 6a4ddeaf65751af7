"""EvalData: builders, views, and one test per bad-input rule (DESIGN.md "The data")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbayes import EvalData
from evalbayes.io import read_counts, read_trials


def counts_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "system": ["A", "A", "B", "B"],
            "task": ["t1", "t2", "t1", "t2"],
            "n": [4, 4, 4, 2],
            "c": [1, 4, 0, 2],
            "family": ["f", "g", "f", "g"],
        }
    )


def test_from_frame_builds_system_by_task_counts():
    data = EvalData.from_frame(counts_frame())
    assert data.systems == ["A", "B"]
    assert data.tasks == ["t1", "t2"]
    assert data.n.dims == ("system", "task")
    np.testing.assert_array_equal(data.n.values, [[4, 4], [4, 2]])
    np.testing.assert_array_equal(data.c.values, [[1, 4], [0, 2]])
    assert list(data.dataset["family"].values) == ["f", "g"]
    assert data.dataset["family"].dims == ("task",)


def test_aliases_trials_successes_and_task_id():
    frame = counts_frame().rename(columns={"n": "trials", "c": "successes", "task": "task_id"})
    assert EvalData.from_frame(frame).equals(EvalData.from_frame(counts_frame()))


def test_column_overrides():
    frame = counts_frame().rename(columns={"system": "model", "task": "item", "n": "N", "c": "k"})
    data = EvalData.from_frame(frame, system="model", task="item", n="N", c="k")
    assert data.equals(EvalData.from_frame(counts_frame()))


def test_missing_pair_becomes_missing_cell():
    frame = counts_frame().iloc[:3]
    data = EvalData.from_frame(frame)
    assert data.n.sel(system="B", task="t2").item() == 0
    assert not bool(data.observed.sel(system="B", task="t2"))
    assert np.isnan(data.rates.sel(system="B", task="t2").item())
    with pytest.raises(ValueError, match="has no row and fill_missing=False"):
        EvalData.from_frame(frame, fill_missing=False)


def test_system_metadata_becomes_system_coordinate():
    frame = counts_frame().assign(harness=["h1", "h1", "h2", "h2"])
    data = EvalData.from_frame(frame)
    assert data.dataset["harness"].dims == ("system",)
    assert data.system_coords["harness"].tolist() == ["h1", "h2"]


def test_from_trials_counts_attempts():
    trials = pd.DataFrame(
        {
            "system": ["A"] * 5 + ["B"] * 3,
            "task": ["t1", "t1", "t2", "t2", "t2", "t1", "t1", "t2"],
            "success": [True, False, 1, 1, 0, "pass", "fail", "C"],
        }
    )
    data = EvalData.from_trials(trials)
    np.testing.assert_array_equal(data.n.values, [[2, 3], [2, 1]])
    np.testing.assert_array_equal(data.c.values, [[1, 2], [1, 1]])


def test_from_trials_missing_outcome_is_an_explicit_choice():
    trials = pd.DataFrame({"system": ["A", "A"], "task": ["t", "t"], "success": [1, None]})
    with pytest.raises(ValueError, match=r"row 1 .*success is missing"):
        EvalData.from_trials(trials)
    data = EvalData.from_trials(trials, missing="failure")
    assert (data.n.item(), data.c.item()) == (2, 1)


def test_from_trials_unreadable_outcome():
    trials = pd.DataFrame({"system": ["A", "A"], "task": ["t", "u"], "success": [1, "maybe"]})
    with pytest.raises(ValueError, match=r"row 1 \(system 'A', task 'u'\).*'maybe'"):
        EvalData.from_trials(trials)
    with pytest.raises(ValueError, match="not a success indicator"):
        EvalData.from_trials(trials.assign(success=[1, 2]))


def test_from_arrays_and_names():
    data = EvalData.from_arrays([[3, 3]], [[1, 2]], systems=["s"], tasks=["a", "b"])
    assert data.shape == (1, 2)
    one = EvalData.from_arrays([3, 3], [1, 2])
    assert one.systems == ["system_0"] and one.tasks == ["task_0", "task_1"]


def test_to_frame_round_trip():
    data = EvalData.from_frame(counts_frame())
    assert EvalData.from_frame(data.to_frame()).equals(data)


def test_subset_and_coordinate_selection():
    data = EvalData.from_frame(counts_frame())
    assert data.subset(systems="A").systems == ["A"]
    assert data.subset(family="g").tasks == ["t2"]
    with pytest.raises(ValueError, match="unknown systems"):
        data.subset(systems=["Z"])
    with pytest.raises(ValueError, match="unknown coordinate"):
        data.subset(colour="red")


def test_paired_aligns_shared_tasks_and_reports_dropped():
    frame = pd.DataFrame(
        {"system": ["A", "A", "A", "B", "B"], "task": ["x", "y", "z", "x", "z"],
         "n": [2, 2, 2, 2, 2], "c": [0, 1, 2, 2, 2]}
    )
    pair = EvalData.from_frame(frame).paired("A", "B")
    assert pair.tasks == ("x", "z")
    assert pair.dropped == ("y",)
    np.testing.assert_allclose(pair.differences, [1.0, 0.0])
    with pytest.raises(ValueError, match="unknown system"):
        EvalData.from_frame(frame).paired("A", "C")


# --------------------------------------------------------------- one test per bad-input rule
def test_rule_c_greater_than_n():
    frame = counts_frame()
    frame.loc[2, "c"] = 5
    with pytest.raises(ValueError, match=r"row 2 \(system 'B', task 't1'\): c=5 > n=4"):
        EvalData.from_frame(frame)


def test_rule_negative_count():
    frame = counts_frame()
    frame.loc[1, "n"] = -1
    with pytest.raises(ValueError, match=r"row 1 .*n=-1 is negative"):
        EvalData.from_frame(frame)


def test_rule_non_integer_count():
    frame = counts_frame().astype({"c": float})
    frame.loc[3, "c"] = 1.5
    with pytest.raises(ValueError, match=r"row 3 .*c=1.5 is not an integer"):
        EvalData.from_frame(frame)


def test_rule_nan_count():
    frame = counts_frame().astype({"n": float})
    frame.loc[0, "n"] = np.nan
    with pytest.raises(ValueError, match=r"row 0 .*n is missing \(NaN\)"):
        EvalData.from_frame(frame)


def test_rule_non_numeric_count():
    frame = counts_frame().astype({"c": object})
    frame.loc[0, "c"] = "three"
    with pytest.raises(ValueError, match=r"row 0 .*'three' is not a number"):
        EvalData.from_frame(frame)


def test_rule_nan_label():
    frame = counts_frame().astype({"task": object})
    frame.loc[1, "task"] = None
    with pytest.raises(ValueError, match="row 1: task label is missing"):
        EvalData.from_frame(frame)


def test_rule_duplicate_rows():
    frame = pd.concat([counts_frame(), counts_frame().iloc[[1]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"rows 1, 4: duplicate \(system, task\) = \('A', 't2'\)"):
        EvalData.from_frame(frame)


def test_rule_empty_data():
    with pytest.raises(ValueError, match="empty table"):
        EvalData.from_frame(counts_frame().iloc[:0])
    with pytest.raises(ValueError, match="every cell has n = 0"):
        EvalData.from_arrays([[0, 0]], [[0, 0]])


def test_rule_unknown_columns():
    with pytest.raises(ValueError, match="unknown column 'succ'"):
        EvalData.from_frame(counts_frame(), c="succ")
    with pytest.raises(ValueError, match="no column for n"):
        EvalData.from_frame(counts_frame().drop(columns="n"))
    with pytest.raises(ValueError, match="unknown column 'colour'"):
        EvalData.from_frame(counts_frame(), task_coords=["colour"])


def test_rule_metadata_that_is_neither_task_nor_system_level():
    frame = counts_frame().assign(seed=[1, 2, 3, 4])
    with pytest.raises(ValueError, match="column 'seed' varies within both tasks and systems"):
        EvalData.from_frame(frame)
    assert EvalData.from_frame(frame, extra="ignore").shape == (2, 2)


def test_rule_array_shapes_and_values():
    with pytest.raises(ValueError, match="one shape"):
        EvalData.from_arrays([[1, 2]], [[1]])
    with pytest.raises(ValueError, match=r"c\[0, 1\]=0.5 is not an integer"):
        EvalData.from_arrays([[1, 2]], [[1, 0.5]])
    with pytest.raises(ValueError, match="c=3 > n=2"):
        EvalData.from_arrays([[1, 2]], [[1, 3]])


# --------------------------------------------------------------- files
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".jsonl", ".parquet"])
def test_read_counts_round_trip(tmp_path, suffix):
    data = EvalData.from_frame(counts_frame())
    path = tmp_path / f"counts{suffix}"
    frame = data.to_frame()
    if suffix.startswith(".csv"):
        frame.to_csv(path, index=False)
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    assert read_counts(path).equals(data)


def test_read_counts_single_system_id_n_c_jsonl(tmp_path):
    path = tmp_path / "mymodel.jsonl"
    path.write_text('{"id": "q1", "n": 3, "c": 1}\n{"id": "q2", "n": 3, "c": 3}\n')
    data = read_counts(path)
    assert data.systems == ["mymodel"] and data.tasks == ["q1", "q2"]
    assert read_counts(path, system_name="other").systems == ["other"]


def test_read_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"system": ["A"], "task": ["t"], "n": [1], "c": [2]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"bad.csv: line 2 .*c=2 > n=1"):
        read_counts(path)
    (tmp_path / "bad.txt").write_text("system,task,n,c\n")
    with pytest.raises(ValueError, match="unknown table format"):
        read_counts(tmp_path / "bad.txt")


def test_read_trials_csv(tmp_path):
    path = tmp_path / "trials.csv"
    pd.DataFrame({"system": ["A", "A"], "task": ["t", "t"], "success": [1, 0]}).to_csv(
        path, index=False
    )
    data = read_trials(path)
    assert (data.n.item(), data.c.item()) == (2, 1)
