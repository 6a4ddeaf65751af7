"""inspect_ai reader: the real fixtures, the success rule, errors, cross-checks, bad logs.

References: ``tests/fixtures/inspect_ai/log_streaming_epochs2_expected_{counts,trials}.csv``
(written by hand from the log by the data collector, FORMATS.md §1 "Real example with epochs
= 2") and the numbers the logs carry themselves (header accuracy, mean reductions), read here
with ``zipfile``/``json`` directly.
"""

from __future__ import annotations

import json
import shutil
import warnings
import zipfile
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

from evalbayes.io import LogError, LogWarning, inspect_trials, read, read_inspect
from paths import FIXTURES

DATA = FIXTURES / "inspect_ai"
EVAL = DATA / "log_streaming_epochs2.eval"
POPULARITY = DATA / "popularity_json_format_epochs1.json"
ARC = DATA / "eee_fixture_arc_easy_qwen2.5-0.5b.json"
MODEL = "azureai/Meta-Llama-3-1-405B-Instruct-jqf"


def _members(path: Path) -> dict[str, object]:
    with zipfile.ZipFile(path) as zf:
        return {name: json.loads(zf.read(name)) for name in zf.namelist()}


def _write_eval(path: Path, members: dict[str, object]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, obj in members.items():
            zf.writestr(name, json.dumps(obj))
    return path


def _variant(tmp_path: Path, name: str = "log.eval", **changes: object) -> Path:
    """A copy of the real .eval with members replaced (value) or removed (None)."""
    members = _members(EVAL)
    for member, obj in changes.items():
        key = member.replace("__", "/").replace("_json", ".json")
        if obj is None:
            members.pop(key)
        else:
            members[key] = obj
    return _write_eval(tmp_path / name, members)


# ---------------------------------------------------------------------------- real fixtures
def test_eval_epochs2_reproduces_expected_counts():
    expected = pd.read_csv(
        DATA / "log_streaming_epochs2_expected_counts.csv", dtype={"task_id": str}
    )
    data = read_inspect(EVAL)
    assert data.systems == [MODEL]
    assert data.tasks == list(expected["task_id"])
    assert data.n.values[0].tolist() == expected["n"].tolist()  # n = 2, 2
    assert data.c.values[0].tolist() == expected["c"].tolist()  # c = 1, 2
    assert data.dataset["benchmark"].values.tolist() == expected["benchmark"].tolist()


def test_eval_epochs2_trials_match_expected_trials():
    expected = pd.read_csv(DATA / "log_streaming_epochs2_expected_trials.csv")
    frame = inspect_trials(EVAL)
    assert frame["task"].tolist() == expected["task_id"].astype(str).tolist()
    assert frame["epoch"].tolist() == expected["epoch"].tolist()
    assert frame["scorer"].tolist() == expected["scorer"].tolist()
    assert frame["score"].tolist() == expected["value"].tolist()
    assert frame["value"].tolist() == expected["value_float"].tolist()
    assert frame["success"].tolist() == [int(v) for v in expected["value_float"]]


def test_header_accuracy_equals_pooled_rate_and_reductions():
    members = _members(EVAL)
    header = members["header.json"]
    accuracy = header["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    data = read_inspect(EVAL)
    pooled = Fraction(int(data.c.sum()), int(data.n.sum()))
    assert accuracy == 0.75
    assert pooled == Fraction(3, 4)
    reductions = {s["sample_id"]: s["value"] for s in members["reductions.json"][0]["samples"]}
    for task in data.tasks:
        cell = data.dataset.sel(system=MODEL, task=task)
        assert Fraction(int(cell.c), int(cell.n)) == Fraction(reductions[int(task)])


def test_json_logs():
    with pytest.warns(LogWarning, match="status is 'cancelled'"):
        popularity = read_inspect(POPULARITY)
    doc = json.loads(POPULARITY.read_text())
    assert popularity.systems == [doc["eval"]["model"]]
    values = [s["scores"]["match"]["value"] for s in doc["samples"]]
    assert values == ["C", "C", "I"]
    assert popularity.c.values[0].tolist() == [1, 1, 0]
    assert popularity.n.values[0].tolist() == [1, 1, 1]
    arc = read_inspect(ARC)
    doc = json.loads(ARC.read_text())
    assert arc.systems == ["ollama/qwen2.5:0.5b"]
    assert [s["scores"]["choice"]["value"] for s in doc["samples"]] == ["C", "I", "I"]
    assert arc.c.values[0].tolist() == [1, 0, 0]
    assert float(arc.c.sum()) / float(arc.n.sum()) == pytest.approx(
        doc["results"]["scores"][0]["metrics"]["accuracy"]["value"], abs=1e-15
    )


def test_several_logs_become_several_systems():
    with pytest.warns(LogWarning):
        data = read([EVAL, POPULARITY, ARC], format="inspect")
    assert data.systems == [MODEL, "openai/gpt-4o-mini", "ollama/qwen2.5:0.5b"]
    # two benchmarks read together: tasks are labelled "<task>/<id>"
    assert "popularity/1" in data.tasks and "inspect_evals/arc_easy/1" in data.tasks
    assert int(data.n.sel(system=MODEL, task="popularity/1")) == 2
    assert int(data.n.sel(system=MODEL, task="popularity/3")) == 0  # never run: missing cell


def test_two_models_same_task_share_task_labels(tmp_path):
    header = _members(EVAL)["header.json"]
    other = json.loads(json.dumps(header))
    other["eval"]["model"] = "openai/other"
    second = _variant(tmp_path, "other.eval", header_json=other)
    data = read_inspect([EVAL, second])
    assert data.systems == [MODEL, "openai/other"]
    assert data.tasks == ["1", "2"]


def test_system_override_and_mapping(tmp_path):
    assert read_inspect(EVAL, system="llama").systems == ["llama"]
    assert read_inspect(EVAL, system={MODEL: "llama"}).systems == ["llama"]
    assert read_inspect(EVAL, system={EVAL.name: "by-file"}).systems == ["by-file"]
    with pytest.raises(ValueError, match="match no log"):
        read_inspect(EVAL, system={"typo": "x"})


def test_summaries_fallback_to_sample_files(tmp_path):
    path = _variant(tmp_path, summaries_json=None, _journal__summaries__1_json=None)
    data = read_inspect(path)
    assert data.c.values[0].tolist() == [1, 2]
    assert data.n.values[0].tolist() == [2, 2]


# ---------------------------------------------------------------------------- success rule
def _with_values(tmp_path: Path, values: dict[tuple[int, int], object], **extra) -> Path:
    summaries = _members(EVAL)["summaries.json"]
    for rec in summaries:
        key = (rec["id"], rec["epoch"])
        if key in values:
            rec["scores"]["match"]["value"] = values[key]
    return _variant(tmp_path, summaries_json=summaries, **extra)


def test_partial_score_needs_a_threshold(tmp_path):
    path = _with_values(tmp_path, {(1, 1): "P"}, reductions_json=None)
    with pytest.raises(LogError, match=r"not binary.*threshold=") as err:
        read_inspect(path)
    assert "sample '1' epoch 1" in str(err.value) and str(path) in str(err.value)
    assert read_inspect(path, threshold=0.5, check="off").c.values[0].tolist() == [2, 2]
    assert read_inspect(path, threshold=1.0, check="off").c.values[0].tolist() == [1, 2]


def test_numeric_and_word_scores(tmp_path):
    path = _with_values(
        tmp_path, {(1, 1): 0.8, (1, 2): "yes", (2, 1): False, (2, 2): "1.0"}, reductions_json=None
    )
    data = read_inspect(path, threshold=0.75, check="off")
    assert data.c.values[0].tolist() == [2, 1]


def test_unreadable_score_raises(tmp_path):
    path = _with_values(tmp_path, {(2, 2): "maybe"})
    with pytest.raises(LogError, match=r"sample '2' epoch 2: score 'maybe' cannot be read"):
        read_inspect(path)


def test_dict_score_needs_value_key(tmp_path):
    path = _with_values(
        tmp_path,
        {(1, 1): {"acc": "I"}, (1, 2): {"acc": "C"}, (2, 1): {"acc": "C"}, (2, 2): {"acc": "C"}},
        reductions_json=None,
    )
    with pytest.raises(LogError, match="value_key"):
        read_inspect(path)
    assert read_inspect(path, value_key="acc").c.values[0].tolist() == [1, 2]


def test_several_scorers_need_scorer(tmp_path):
    summaries = _members(EVAL)["summaries.json"]
    for rec in summaries:
        rec["scores"]["judge"] = {"value": "C"}
    path = _variant(tmp_path, summaries_json=summaries)
    with pytest.raises(LogError, match=r"several scorers \['match', 'judge'\]"):
        read_inspect(path)
    assert read_inspect(path, scorer="match").c.values[0].tolist() == [1, 2]
    assert read_inspect(path, scorer="judge", check="off").c.values[0].tolist() == [2, 2]
    with pytest.raises(LogError, match="no scorer 'nope'"):
        read_inspect(path, scorer="nope")


# ---------------------------------------------------------------------------- errored samples
def _errored(tmp_path: Path) -> Path:
    summaries = _members(EVAL)["summaries.json"]
    for rec in summaries:
        if (rec["id"], rec["epoch"]) == (2, 1):
            rec.pop("scores")
            rec["error"] = "RuntimeError: sandbox died"
    return _variant(tmp_path, summaries_json=summaries)


def test_errored_sample_counts_as_failure_by_default(tmp_path):
    path = _errored(tmp_path)
    data = read_inspect(path)  # the mean reduction of sample 2 (1.0) covers its scored epoch
    assert data.n.values[0].tolist() == [2, 2]
    assert data.c.values[0].tolist() == [1, 1]
    frame = inspect_trials(path)
    assert frame["error"].tolist() == [False, False, True, False]


def test_errored_sample_drop_and_raise(tmp_path):
    path = _errored(tmp_path)
    dropped = read_inspect(path, errors="drop")
    assert dropped.n.values[0].tolist() == [2, 1]
    assert dropped.c.values[0].tolist() == [1, 1]
    with pytest.raises(LogError, match=r"sample '2' epoch 1: the sample errored \(RuntimeError"):
        read_inspect(path, errors="raise")
    with pytest.raises(ValueError, match="errors must be one of"):
        read_inspect(path, errors="ignore")


# ---------------------------------------------------------------------------- cross-checks
def test_reduction_mismatch_raises_or_warns(tmp_path):
    reductions = _members(EVAL)["reductions.json"]
    reductions[0]["samples"][0]["value"] = 0.75
    path = _variant(tmp_path, reductions_json=reductions)
    with pytest.raises(LogError, match=r"sample '1' \(reductions\): the mean reduction 0.75"):
        read_inspect(path)
    with pytest.warns(LogWarning, match="mean reduction"):
        data = read_inspect(path, check="warn")
    assert data.c.values[0].tolist() == [1, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_inspect(path, check="off")


def test_accuracy_mismatch_raises(tmp_path):
    header = _members(EVAL)["header.json"]
    header["results"]["scores"][0]["metrics"]["accuracy"]["value"] = 0.5
    path = _variant(tmp_path, header_json=header)
    with pytest.raises(LogError, match=r"header accuracy 0\.5"):
        read_inspect(path)


def test_total_samples_mismatch_raises(tmp_path):
    header = _members(EVAL)["header.json"]
    header["results"]["total_samples"] = 6
    path = _variant(tmp_path, header_json=header)
    with pytest.raises(LogError, match="total_samples=6 but the log holds 4 records"):
        read_inspect(path)


# ---------------------------------------------------------------------------- bad logs
def test_truncated_zip(tmp_path):
    raw = EVAL.read_bytes()
    path = tmp_path / "truncated.eval"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(LogError, match=r"truncated\.eval: not a readable \.eval archive"):
        read_inspect(path)


def test_corrupt_member(tmp_path):
    path = tmp_path / "corrupt.eval"
    shutil.copy(EVAL, path)
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(EVAL) as zf:
        info = zf.getinfo("summaries.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start, start + 40):
        raw[i] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(LogError, match=r"summaries\.json"):
        read_inspect(path)


def test_truncated_json_log(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(POPULARITY.read_text()[:5000])
    with pytest.raises(LogError, match=r"cut\.json: not valid JSON"):
        read_inspect(path)


def test_missing_model_field(tmp_path):
    header = _members(EVAL)["header.json"]
    del header["eval"]["model"]
    path = _variant(tmp_path, header_json=header)
    with pytest.raises(LogError, match=r"log\.eval: missing field 'eval\.model'"):
        read_inspect(path)


def test_missing_score_field(tmp_path):
    summaries = _members(EVAL)["summaries.json"]
    summaries[0]["scores"] = {}
    path = _variant(tmp_path, summaries_json=summaries)
    with pytest.raises(LogError, match=r"sample '2' epoch 2: missing field: no score"):
        read_inspect(path)


def test_missing_samples_in_json_log(tmp_path):
    doc = json.loads(POPULARITY.read_text())
    del doc["samples"]
    path = tmp_path / "nosamples.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LogError, match="no 'samples'"):
        read_inspect(path)


def test_mixed_epochs_in_a_finished_log(tmp_path):
    summaries = [r for r in _members(EVAL)["summaries.json"] if (r["id"], r["epoch"]) != (2, 2)]
    header = _members(EVAL)["header.json"]
    header["results"]["total_samples"] = 3
    path = _variant(
        tmp_path, summaries_json=summaries, samples__2_epoch_2_json=None, header_json=header
    )
    with pytest.raises(LogError, match=r"mixed epochs: sample '2' has epochs \[1\]"):
        read_inspect(path)


def test_incomplete_epochs_in_a_cancelled_log_warn(tmp_path):
    summaries = [r for r in _members(EVAL)["summaries.json"] if (r["id"], r["epoch"]) != (2, 2)]
    header = _members(EVAL)["header.json"]
    header["status"] = "cancelled"
    path = _variant(
        tmp_path, summaries_json=summaries, samples__2_epoch_2_json=None, header_json=header
    )
    with pytest.warns(LogWarning, match="1 samples have fewer than 2 epochs"):
        data = read_inspect(path)
    assert data.n.values[0].tolist() == [2, 1]


def test_epoch_outside_declared_range(tmp_path):
    summaries = _members(EVAL)["summaries.json"]
    summaries[0]["epoch"] = 3
    path = _variant(tmp_path, summaries_json=summaries)
    with pytest.raises(LogError, match=r"mixed epochs: epoch 3 is outside 1\.\.2"):
        read_inspect(path)


def test_duplicate_sample_id_in_a_log(tmp_path):
    summaries = _members(EVAL)["summaries.json"]
    summaries[1]["epoch"] = summaries[0]["epoch"]  # sample 2 epoch 2 twice
    path = _variant(tmp_path, summaries_json=summaries)
    with pytest.raises(LogError, match=r"sample '2' epoch 2: duplicate sample id"):
        read_inspect(path)


def test_duplicate_log_for_one_system(tmp_path):
    copy = tmp_path / "copy.eval"
    shutil.copy(EVAL, copy)
    pattern = r"duplicate record.*sample '\d', trial \d appears 2 times"
    with pytest.raises(LogError, match=pattern) as err:
        read_inspect([EVAL, copy])
    assert "copy.eval" in str(err.value) and EVAL.name in str(err.value)


def test_summaries_disagree_with_sample_files(tmp_path):
    summaries = _members(EVAL)["summaries.json"][:3]
    path = _variant(tmp_path, summaries_json=summaries)
    with pytest.raises(LogError, match=r"summaries\.json lists 3 records but the archive holds 4"):
        read_inspect(path)
