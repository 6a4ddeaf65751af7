"""``read(..., where=...)``: rows are selected before any check across rows (issue 28).

A multi-benchmark table repeats task ids across benchmarks, so its (system, task) pairs are
duplicated until one benchmark is chosen; the filter must run first, and errors must still
name the line of the original file.
"""

from __future__ import annotations

import pandas as pd
import pytest

from evalbayes.io import read, read_trials_frame


@pytest.fixture
def two_benchmarks(tmp_path):
    path = tmp_path / "suite.csv"
    pd.DataFrame({
        "benchmark": ["a"] * 4 + ["b"] * 4,
        "system": ["S", "S", "T", "T"] * 2,
        "task_id": ["1", "2"] * 4,
        "n": [3] * 8,
        "c": [0, 1, 2, 3, 3, 2, 1, 0],
    }).to_csv(path, index=False)  # fmt: skip
    return path


def test_without_a_filter_the_repeated_task_ids_are_duplicates(two_benchmarks):
    with pytest.raises(ValueError, match="duplicate"):
        read(two_benchmarks)


def test_where_selects_one_benchmark_before_the_duplicate_check(two_benchmarks):
    data = read(two_benchmarks, where={"benchmark": "b"})
    assert data.shape == (2, 2)
    assert int(data.c.sel(system="S", task="1")) == 3
    assert int(data.c.sel(system="T", task="2")) == 0
    both = read(two_benchmarks, where={"benchmark": ["a"], "system": ["T"]})
    assert both.systems == ["T"] and int(both.c.sum()) == 5


@pytest.mark.filterwarnings("ignore::evalbayes.io.OneTaskWarning")
def test_where_on_a_reader_made_coordinate_runs_afterwards(two_benchmarks):
    data = read(two_benchmarks, where={"benchmark": "a", "task": "2"})
    assert list(data.tasks) == ["2"] and int(data.c.sum()) == 1 + 3


def test_where_errors_name_the_known_values(two_benchmarks):
    with pytest.raises(ValueError, match=r"no value \['c'\].*known: \['a', 'b'\]"):
        read(two_benchmarks, where={"benchmark": "c"})
    with pytest.raises(ValueError, match="no such column"):
        read(two_benchmarks, where={"benchmark": "a", "harness": "x"})


def test_an_error_after_filtering_names_the_line_of_the_file(tmp_path):
    path = tmp_path / "suite.csv"
    pd.DataFrame({"benchmark": ["a", "a", "b", "b"], "system": ["S"] * 4,
                  "task_id": ["1", "2", "1", "2"], "n": [3] * 4,
                  "c": [1, 1, 1, 4]}).to_csv(path, index=False)  # fmt: skip
    with pytest.raises(ValueError, match="line 5"):  # header is line 1: the 4th row
        read(path, where={"benchmark": "b"})


def test_where_filters_trial_rows(tmp_path):
    path = tmp_path / "trials.csv"
    pd.DataFrame({"benchmark": ["a", "a", "b"], "system": ["S"] * 3, "task": ["1"] * 3,
                  "success": [1, 0, 1]}).to_csv(path, index=False)  # fmt: skip
    frame = read_trials_frame(path, where={"benchmark": "a"})
    assert len(frame) == 2
    with pytest.raises(ValueError, match="no such column"):
        read_trials_frame(path, where={"split": "x"})


@pytest.mark.parametrize(
    ("name", "column", "value"),
    [
        ("noise_highk_temp0.7.csv.gz", "benchmark", "aime2024_cot"),
        ("eval_arena_main.csv.gz", "benchmark", "humaneval"),
        ("livecodebench_site_per_problem.csv.gz", "snapshot", "2025-01-15"),
    ],
)
def test_one_benchmark_of_a_real_multi_benchmark_table(shared_data, name, column, value):
    raw = pd.read_csv(shared_data / name, dtype={"task_id": str})
    if name.startswith("livecodebench"):
        raw = raw[raw["scenario"] == "codegen"]
        where = {column: value, "scenario": "codegen"}
    else:
        where = {column: value}
    with pytest.raises(ValueError):
        read(shared_data / name)  # the point: unreadable as a whole
    data = read(shared_data / name, where=where, extra="ignore")
    rows = raw[raw[column].astype(str) == value]
    assert data.shape == (rows["system"].nunique(), rows["task_id"].nunique())
    # the counts, independently: per system, the sums of the selected rows
    expected = rows.groupby("system")[["n", "c"]].sum()
    for column in ("n", "c"):
        got = getattr(data, column).sum("task").to_series()
        assert {str(k): int(v) for k, v in got.items()} == {
            str(k): int(v) for k, v in expected[column].items()
        }
