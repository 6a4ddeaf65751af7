"""Terminal-Bench reader on synthetic ``results.json`` files of the harness's structure.

The real example (``/work/shared/data/formats/terminal_bench``) carries no licence, so it is
not vendored: a test reads it when the shared folder exists and checks it against the run's
own ``n_resolved``/``n_unresolved`` fields.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evalbayes.io import LogError, LogWarning, read, read_terminal_bench, terminal_bench_trials

SHARED = Path("/work/shared/data/formats/terminal_bench")


def _trial(task: str, run: str, resolved: bool | None, k: int = 1, of: int = 1) -> dict:
    return {
        "id": f"{task}-{run}-{k}",
        "trial_name": f"{task}.{k}-of-{of}.{run}",
        "task_id": task,
        "instruction": "do it",
        "is_resolved": resolved,
        "failure_mode": "unset" if resolved is not None else "agent_timeout",
        "parser_results": {},
    }


def _run(folder: Path, run: str, outcomes: dict[str, list[bool | None]]) -> Path:
    """A run-level results.json in <folder>/<run>/ with K attempts per task."""
    trials = [
        _trial(task, run, resolved, k + 1, len(values))
        for task, values in outcomes.items()
        for k, resolved in enumerate(values)
    ]
    n_resolved = sum(t["is_resolved"] is True for t in trials)
    doc = {
        "id": run,
        "results": trials,
        "pass_at_k": {},
        "n_resolved": n_resolved,
        "n_unresolved": len(trials) - n_resolved,
        "resolved_ids": [],
        "unresolved_ids": [],
        "accuracy": n_resolved / len(trials),
    }
    path = folder / run / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    for trial in trials:  # per-trial copies, as the harness writes them
        copy = folder / run / trial["task_id"] / trial["trial_name"] / "results.json"
        copy.parent.mkdir(parents=True)
        copy.write_text(json.dumps(trial))
    return path


@pytest.fixture
def submission(tmp_path: Path) -> Path:
    """Two runs of one agent: 3 tasks, null = error/timeout."""
    folder = tmp_path / "20250101_agent_model"
    _run(folder, "run_a", {"hello": [True], "maze": [False], "kernel": [None]})
    _run(folder, "run_b", {"hello": [True], "maze": [True], "kernel": [False]})
    return folder


def test_runs_times_trials(submission):
    data = read(submission)  # per-trial copies are skipped: the run-level files are there
    assert data.systems == ["20250101_agent_model"]  # run directories = the runs of one system
    assert data.tasks == ["hello", "kernel", "maze"]
    assert data.n.values[0].tolist() == [2, 2, 2]
    assert data.c.values[0].tolist() == [2, 0, 1]


def test_null_is_failure_by_default_drop_and_raise(submission):
    dropped = read_terminal_bench(submission, errors="drop")
    assert dropped.n.values[0].tolist() == [2, 1, 2]
    assert dropped.c.values[0].tolist() == [2, 0, 1]
    with pytest.raises(LogError, match=r"kernel\.1-of-1\.run_a\): is_resolved is null"):
        read_terminal_bench(submission, errors="raise")


def test_trial_frame(submission):
    frame = terminal_bench_trials(submission)
    assert len(frame) == 6
    assert set(frame["run"]) == {"run_a", "run_b"}
    assert frame["is_resolved"].isna().sum() == 1
    assert frame.loc[frame["is_resolved"].isna(), "failure_mode"].tolist() == ["agent_timeout"]


def test_one_run_with_attempts(tmp_path):
    path = _run(
        tmp_path / "sub", "2025-09-02__10-00-00", {"a": [True, False, True], "b": [None] * 3}
    )
    data = read_terminal_bench(path)
    assert data.systems == ["sub"]
    assert data.n.values[0].tolist() == [3, 3]
    assert data.c.values[0].tolist() == [2, 0]
    assert terminal_bench_trials(path)["attempt"].tolist() == [1, 2, 3, 1, 2, 3]


def test_per_trial_copies_alone(tmp_path):
    _run(tmp_path / "sub", "r1", {"a": [True], "b": [False]})
    (tmp_path / "sub" / "r1" / "results.json").unlink()
    data = read(tmp_path / "sub")
    assert data.systems == ["sub"]
    assert data.c.values[0].tolist() == [1, 0]


def test_run_counts_cross_check(tmp_path):
    path = _run(tmp_path / "sub", "r1", {"a": [True], "b": [False]})
    doc = json.loads(path.read_text())
    doc["n_resolved"] = 2
    path.write_text(json.dumps(doc))
    with pytest.raises(LogError, match="n_resolved=2 but 1 trials have is_resolved true"):
        read_terminal_bench(path)
    with pytest.warns(LogWarning):
        read_terminal_bench(path, check="warn")


def test_duplicate_run(tmp_path):
    first = _run(tmp_path / "sub", "r1", {"a": [True]})
    second = tmp_path / "copy" / "results.json"
    second.parent.mkdir()
    second.write_text(first.read_text())
    with pytest.raises(LogError, match=r"duplicate record.*trial 'a\.1-of-1\.r1' appears 2 times"):
        read_terminal_bench([first, second], system="agent")


def test_missing_is_resolved(tmp_path):
    path = _run(tmp_path / "sub", "r1", {"a": [True], "b": [False]})
    doc = json.loads(path.read_text())
    del doc["results"][1]["is_resolved"]
    path.write_text(json.dumps(doc))
    with pytest.raises(LogError, match=r"trial 1: missing field 'is_resolved'"):
        read_terminal_bench(path)


def test_unreadable_is_resolved(tmp_path):
    path = _run(tmp_path / "sub", "r1", {"a": [True]})
    doc = json.loads(path.read_text())
    doc["results"][0]["is_resolved"] = "maybe"
    path.write_text(json.dumps(doc))
    with pytest.raises(LogError, match="is_resolved='maybe' is not true, false or null"):
        read_terminal_bench(path)


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared Terminal-Bench example not present")
def test_shared_example_structure():
    path = SHARED / "droid_gpt-5_run1_results.json"
    doc = json.loads(path.read_text())
    data = read_terminal_bench(path, system="droid_gpt-5")
    tasks = Counter(t["task_id"] for t in doc["results"])
    assert data.shape == (1, len(tasks)) == (1, 80)
    assert set(data.n.values[0].tolist()) == {1}
    assert int(data.c.sum()) == doc["n_resolved"] == 39
    nulls = sum(t["is_resolved"] is None for t in doc["results"])
    assert int(read_terminal_bench(path, errors="drop").n.sum()) == 80 - nulls
    # the directory also holds one per-trial copy, skipped next to the run-level file
    assert read(SHARED, system="droid_gpt-5").equals(data)
