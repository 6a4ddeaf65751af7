"""HELM ``per_instance_stats.json`` reader: the real fixture and bad records.

Reference for the real fixture (FORMATS.md §4): per instance, c = sum over train trials of
the ``exact_match`` stat, n = number of train trials; extracted here straight from the JSON.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalbayes.io import LogError, helm_trials, read, read_helm
from paths import FIXTURES

DATA = FIXTURES / "helm"
STATS = DATA / "mmlu_philosophy_gpt2_per_instance_stats.json"
SPEC = DATA / "mmlu_philosophy_gpt2_run_spec.json"


def _reference() -> dict[str, tuple[int, int, str]]:
    out: dict[str, tuple[int, int, str]] = {}
    for rec in json.loads(STATS.read_text()):
        (stat,) = [s for s in rec["stats"] if s["name"]["name"] == "exact_match"]
        n, c, _ = out.get(rec["instance_id"], (0, 0, ""))
        out[rec["instance_id"]] = (n + 1, c + int(stat["sum"]), stat["name"]["split"])
    return out


def test_real_fixture_counts():
    reference = _reference()
    data = read_helm(STATS)
    assert data.systems == [json.loads(SPEC.read_text())["adapter_spec"]["model"]]  # openai/gpt2
    assert sorted(data.tasks) == sorted(reference)
    for task in data.tasks:
        n, c, split = reference[task]
        cell = data.dataset.sel(system=data.systems[0], task=task)
        assert (int(cell.n), int(cell.c), str(cell.split.values)) == (n, c, split)
    assert int(data.c.sum()) == 1 and int(data.n.sum()) == 10
    assert set(data.dataset["benchmark"].values.tolist()) == {
        "mmlu:subject=philosophy,method=multiple_choice_joint"
    }


def test_split_and_metric_options():
    test_only = read_helm(STATS, split="test")
    assert len(test_only.tasks) == 9
    assert set(test_only.dataset["split"].values.tolist()) == {"test"}
    quasi = read_helm(STATS, metric="quasi_exact_match")
    assert quasi.shape == (1, 10)


def test_run_directory_layout(tmp_path):
    run = tmp_path / "mmlu:subject=philosophy,method=multiple_choice_joint,model=openai_gpt2"
    run.mkdir()
    shutil.copy(STATS, run / "per_instance_stats.json")
    shutil.copy(SPEC, run / "run_spec.json")
    data = read(tmp_path)  # auto: run_spec.json is a companion, skipped
    assert data.equals(read_helm(STATS))
    (run / "run_spec.json").unlink()
    assert read_helm(run).systems == ["openai_gpt2"]  # from the run directory name


def _write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "per_instance_stats.json"
    path.write_text(json.dumps(records))
    return path


def _record(instance: str, trial: int, value: float, split: str = "test", **extra) -> dict:
    stat = {
        "name": {"name": "exact_match", "split": split},
        "count": 1,
        "sum": value,
        "mean": value,
    }
    return {"instance_id": instance, "train_trial_index": trial, "stats": [stat], **extra}


def test_train_trials_are_trials(tmp_path):
    path = _write(
        tmp_path, [_record("a", 0, 1), _record("a", 1, 0), _record("a", 2, 1), _record("b", 0, 0)]
    )
    data = read_helm(path, system="m")
    assert data.n.values[0].tolist() == [3, 1]
    assert data.c.values[0].tolist() == [2, 0]
    assert helm_trials(path, system="m")["trial"].tolist() == [0, 1, 2, 0]


def test_perturbed_records_are_kept_apart(tmp_path):
    pert = {"name": "typos", "robustness": True}
    perturbed = _record("a", 0, 0)
    perturbed["perturbation"] = pert
    perturbed["stats"][0]["name"]["perturbation"] = pert
    path = _write(tmp_path, [_record("a", 0, 1), perturbed])
    assert read_helm(path).c.values[0].tolist() == [1]
    assert read_helm(path, perturbation="typos").c.values[0].tolist() == [0]


def test_duplicate_instance(tmp_path):
    path = _write(tmp_path, [_record("a", 0, 1), _record("a", 0, 1)])
    with pytest.raises(LogError, match=r"duplicate record.*sample 'a', trial 0"):
        read_helm(path)


def test_missing_stat(tmp_path):
    record = _record("a", 0, 1)
    record["stats"][0]["name"]["name"] = "f1"
    path = _write(tmp_path, [record])
    with pytest.raises(LogError, match=r"record 0 \(instance 'a', train trial 0\): missing field"):
        read_helm(path)


def test_missing_instance_id(tmp_path):
    record = _record("a", 0, 1)
    del record["instance_id"]
    path = _write(tmp_path, [record])
    with pytest.raises(LogError, match="record 0: missing field 'instance_id'"):
        read_helm(path)


def test_non_binary_stat(tmp_path):
    path = _write(tmp_path, [_record("a", 0, 0.5)])
    with pytest.raises(LogError, match="not binary"):
        read_helm(path)
    assert read_helm(path, threshold=0.5).c.values[0].tolist() == [1]


def test_truncated_file(tmp_path):
    path = tmp_path / "per_instance_stats.json"
    path.write_text(STATS.read_text()[:1000])
    with pytest.raises(LogError, match="not valid JSON"):
        read_helm(path)
