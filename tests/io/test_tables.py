"""Tables on disk and the generic entry points: round trips, detection, directories, globs.

Round trips must be exact (``EvalData.equals`` = ``xarray.Dataset.identical``): counts -> file
-> counts and trials -> file -> counts, for CSV, gzip CSV, Parquet and JSON Lines.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbayes import EvalData
from evalbayes.io import (
    FORMATS,
    convert,
    detect_format,
    read,
    read_counts,
    read_inspect,
    read_trials_frame,
    write_table,
)
from paths import FIXTURES

DATA = FIXTURES
EVAL = DATA / "inspect_ai" / "log_streaming_epochs2.eval"
EXTENSIONS = ["csv", "csv.gz", "parquet", "jsonl"]


@pytest.fixture
def counts() -> EvalData:
    frame = pd.DataFrame(
        {
            "system": ["A", "A", "A", "B", "B"],
            "task": ["007", "7", "x/1", "007", "x/1"],
            "n": [4, 2, 10, 4, 3],
            "c": [1, 2, 0, 4, 3],
            "family": ["f1", "f2", "f3", "f1", "f3"],
        }
    )
    return EvalData.from_frame(frame)


@pytest.fixture
def trials() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = 300
    return pd.DataFrame(
        {
            "system": rng.choice(["gpt", "claude", "007"], rows),
            "task": rng.choice([f"{i:03d}" for i in range(40)], rows),
            "success": rng.integers(0, 2, rows).astype(bool),
        }
    )


@pytest.mark.parametrize("ext", EXTENSIONS)
def test_counts_round_trip(tmp_path, counts, ext):
    path = write_table(counts.to_frame(), tmp_path / f"counts.{ext}")
    back = read(path)
    assert back.equals(counts)
    assert read(path, format="counts").equals(counts)
    assert back.tasks == ["007", "7", "x/1"]  # labels stay text


@pytest.mark.parametrize("ext", EXTENSIONS)
def test_trials_round_trip(tmp_path, trials, ext):
    expected = EvalData.from_trials(trials)
    path = write_table(trials, tmp_path / f"trials.{ext}")
    assert read(path).equals(expected)
    assert read(path, format="trials").equals(expected)
    # independent reference: plain counting
    for (system, task), group in trials.groupby(["system", "task"]):
        assert int(expected.n.sel(system=system, task=task)) == len(group)
        assert int(expected.c.sel(system=system, task=task)) == int(group["success"].sum())


@pytest.mark.parametrize("ext", EXTENSIONS)
def test_log_convert_round_trip(tmp_path, ext):
    data = read_inspect(EVAL)
    out = convert(EVAL, tmp_path / f"counts.{ext}")
    assert read(out).equals(data)
    trials_out = convert(EVAL, tmp_path / f"trials.{ext}", level="trials")
    assert read(trials_out, task_coords=["benchmark"]).equals(data)
    frame = read_trials_frame(trials_out)
    assert frame["success"].astype(int).tolist() == [0, 1, 1, 1]


def test_id_n_c_jsonl(tmp_path):
    path = tmp_path / "my-model.jsonl"
    path.write_text(
        "".join(
            json.dumps(r) + "\n" for r in [{"id": "t1", "n": 5, "c": 2}, {"id": 2, "n": 5, "c": 5}]
        )
    )
    assert detect_format(path) == "counts"
    data = read(path)
    assert data.systems == ["my-model"]
    assert data.tasks == ["t1", "2"]
    assert data.c.values[0].tolist() == [2, 5]
    assert read(path, system="renamed").systems == ["renamed"]
    assert read_counts(path, system_name="other").systems == ["other"]


def test_several_single_system_files(tmp_path):
    for name, c in (("alpha", 1), ("beta", 3)):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({"id": "t", "n": 4, "c": c}) + "\n")
    data = read(tmp_path)
    assert data.systems == ["alpha", "beta"]
    assert data.c.values[:, 0].tolist() == [1, 3]
    glob_data = read(str(tmp_path / "*.jsonl"), system={"alpha.jsonl": "A"})
    assert glob_data.systems == ["A", "beta"]


def test_same_cell_in_two_counts_files(tmp_path, counts):
    write_table(counts.to_frame(), tmp_path / "a.csv")
    write_table(counts.to_frame(), tmp_path / "b.csv")
    with pytest.raises(
        ValueError, match=r"\(system 'A', task '007'\) is in both .*a\.csv and .*b\.csv"
    ):
        read(tmp_path)


def test_system_mapping_renames_table_systems(tmp_path, counts):
    path = write_table(counts.to_frame(), tmp_path / "c.csv")
    assert read(path, system={"A": "alpha"}).systems == ["alpha", "B"]
    with pytest.raises(ValueError, match="pass a mapping"):
        read(path, system="one")


def test_formats_and_detection(tmp_path):
    assert FORMATS == (
        "auto",
        "inspect",
        "lm-eval",
        "helm",
        "terminal-bench",
        "swe-bench",
        "counts",
        "trials",
    )
    assert detect_format(EVAL) == "inspect"
    assert detect_format(DATA / "inspect_ai" / "popularity_json_format_epochs1.json") == "inspect"
    assert detect_format(DATA / "helm" / "mmlu_philosophy_gpt2_per_instance_stats.json") == "helm"
    lm = next((DATA / "lm_eval").glob("samples_*.jsonl"))
    assert detect_format(lm) == "lm-eval"
    assert (
        detect_format(DATA / "inspect_ai" / "log_streaming_epochs2_expected_counts.csv") == "counts"
    )
    assert detect_format(DATA / "helm" / "mmlu_philosophy_gpt2_run_spec.json") is None


def test_unknown_explicit_file_and_mixed_formats(tmp_path):
    other = tmp_path / "notes.json"
    other.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="cannot detect a log format"):
        read(other)
    lm_results = next((DATA / "lm_eval").glob("results_*.json"))
    with pytest.raises(ValueError, match="lm-eval results file: pass its samples"):
        read(lm_results)
    with pytest.raises(ValueError, match="the inputs mix formats"):
        read([EVAL, DATA / "helm" / "mmlu_philosophy_gpt2_per_instance_stats.json"])
    with pytest.raises(ValueError, match="format must be one of"):
        read(EVAL, format="zip")


def test_directory_with_unrelated_files(tmp_path):
    shutil.copy(EVAL, tmp_path / "a.eval")
    (tmp_path / "README.md").write_text("notes")
    (tmp_path / "logs.json").write_text(json.dumps({"a.eval": {}}))
    assert read(tmp_path).equals(read_inspect(EVAL))


def test_corrupt_json_in_a_directory_is_not_skipped(tmp_path):
    shutil.copy(EVAL, tmp_path / "a.eval")
    (tmp_path / "b.json").write_text('{"version": 2, "eval": {')
    with pytest.raises(ValueError, match=r"b\.json: not valid JSON"):
        read(tmp_path)


def test_unknown_option_names_the_valid_ones():
    with pytest.raises(TypeError, match=r"format 'inspect' takes no option \['metric'\]"):
        read(EVAL, metric="acc")


def test_missing_paths(tmp_path):
    with pytest.raises(FileNotFoundError):
        read(tmp_path / "nope.eval")
    with pytest.raises(FileNotFoundError, match="matches no file"):
        read(str(tmp_path / "*.eval"))
    with pytest.raises(ValueError, match="a counts table has no trial level"):
        read_trials_frame(DATA / "inspect_ai" / "log_streaming_epochs2_expected_counts.csv")


@pytest.mark.skipif(
    not Path("/work/shared/data/terminal_bench_core011_trials.csv").exists(),
    reason="shared data folder not present",
)
def test_real_trial_table_matches_its_counts_table():
    shared = Path("/work/shared/data")
    data = read(
        shared / "terminal_bench_core011_trials.csv", format="trials", success="is_resolved"
    )
    expected = pd.read_csv(shared / "terminal_bench_core011_counts.csv", dtype={"task_id": str})
    assert int(data.n.sum()) == int(expected["n"].sum()) == 5200
    for row in expected.itertuples():
        cell = data.dataset.sel(system=row.system, task=row.task_id)
        assert (int(cell.n), int(cell.c)) == (row.n, row.c)
