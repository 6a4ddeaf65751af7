"""lm-eval ``--log_samples`` reader: the real fixture, filters, repeats, pass@k recovery, bad logs.

The real fixture (FORMATS.md §2) logs ``exact_match`` = 0.0 for all 10 documents of
``math_perturbed_full``; the test re-reads the raw JSON lines for the reference. pass@k values
of the synthetic logs are computed here with ``math.comb`` (Chen et al. 2021 unbiased
estimator, FORMATS.md §2), independently of the reader.
"""

from __future__ import annotations

import json
import warnings
from math import comb
from pathlib import Path

import pytest

from evalbayes.io import (
    LmEvalRepeatsWarning,
    LogError,
    LogWarning,
    lm_eval_trials,
    read,
    read_lm_eval,
)
from paths import FIXTURES

DATA = FIXTURES / "lm_eval"
DATE = "2026-01-21T03-44-18.458309"
SAMPLES = DATA / f"samples_math_perturbed_full_{DATE}.jsonl"
RESULTS = DATA / f"results_{DATE}.json"


def _passk(n: int, c: int, k: int) -> float:
    return 1.0 - comb(n - c, k) / comb(n, k)


def _write(
    folder: Path,
    lines: list[dict],
    *,
    task: str = "toy",
    repeats: int = 1,
    model: str = "org/model",
    aggregate: dict | None = None,
    docs: int | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_{task}_{DATE}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    n_docs = docs if docs is not None else len({line["doc_id"] for line in lines})
    results = {
        "results": {task: {"alias": task, **(aggregate or {})}},
        "configs": {task: {"task": task, "repeats": repeats}},
        "n-samples": {task: {"original": n_docs, "effective": n_docs}},
        "versions": {task: 1.0},
        "model_name": model,
    }
    (folder / f"results_{DATE}.json").write_text(json.dumps(results))
    return path


def _line(doc: int, filt: str = "none", **metrics) -> dict:
    return {"doc_id": doc, "filter": filt, "metrics": list(metrics), **metrics}


# ---------------------------------------------------------------------------- real fixture
def test_real_fixture_counts():
    raw = [json.loads(line) for line in SAMPLES.read_text().splitlines() if line.strip()]
    model = json.loads(RESULTS.read_text())["model_name"]
    with pytest.warns(LogWarning, match="holds 10 documents but the results file reports 5000"):
        data = read_lm_eval(SAMPLES)
    assert data.systems == [model]
    assert data.tasks == [str(line["doc_id"]) for line in raw]
    assert data.n.values[0].tolist() == [1] * len(raw)
    assert data.c.values[0].tolist() == [int(line["exact_match"]) for line in raw]
    assert set(data.dataset["benchmark"].values.tolist()) == {"math_perturbed_full"}


def test_real_fixture_by_directory_and_auto():
    with pytest.warns(LogWarning):
        by_dir = read(DATA)
    with pytest.warns(LogWarning):
        by_file = read_lm_eval(SAMPLES)
    assert by_dir.equals(by_file)


# ---------------------------------------------------------------------------- options
def test_filter_and_metric_selection(tmp_path):
    lines = [
        _line(0, "strict-match", exact_match=1.0),
        _line(0, "flexible-extract", exact_match=0.0),
        _line(1, "strict-match", exact_match=0.0),
        _line(1, "flexible-extract", exact_match=1.0),
    ]
    path = _write(
        tmp_path,
        lines,
        aggregate={"exact_match,strict-match": 0.5, "exact_match,flexible-extract": 0.5},
    )
    with pytest.raises(LogError, match=r"several filters \['strict-match', 'flexible-extract'\]"):
        read_lm_eval(path)
    strict = read_lm_eval(path, filter="strict-match")
    flexible = read_lm_eval(path, filter="flexible-extract")
    assert strict.n.values[0].tolist() == [1, 1]  # each doc once, never once per filter
    assert strict.c.values[0].tolist() == [1, 0]
    assert flexible.c.values[0].tolist() == [0, 1]
    with pytest.raises(LogError, match="no filter 'none'"):
        read_lm_eval(path, filter="none")


def test_several_metrics_need_metric(tmp_path):
    lines = [_line(0, acc=1.0, acc_norm=0.0), _line(1, acc=0.0, acc_norm=0.0)]
    path = _write(tmp_path, lines)
    with pytest.raises(LogError, match=r"several metrics \['acc', 'acc_norm'\]; pass metric="):
        read_lm_eval(path)
    assert read_lm_eval(path, metric="acc").c.values[0].tolist() == [1, 0]
    assert read_lm_eval(path, metric="acc_norm").c.values[0].tolist() == [0, 0]


def test_repeats_warn_that_per_repeat_correctness_is_not_logged(tmp_path):
    path = _write(tmp_path, [_line(0, exact_match=1.0), _line(1, exact_match=0.0)], repeats=8)
    with pytest.warns(LmEvalRepeatsWarning, match=r"repeats=8.*not per repeat.*n = 1"):
        data = read_lm_eval(path)
    assert data.n.values[0].tolist() == [1, 1]


def test_non_binary_metric_needs_threshold(tmp_path):
    path = _write(tmp_path, [_line(0, f1=0.8), _line(1, f1=0.2)])
    with pytest.raises(LogError, match=r"line 1 \(doc_id 0, filter 'none'\): score 0\.8 is not"):
        read_lm_eval(path)
    assert read_lm_eval(path, threshold=0.5).c.values[0].tolist() == [1, 0]


def test_aggregate_cross_check(tmp_path):
    lines = [_line(0, acc=1.0), _line(1, acc=1.0), _line(2, acc=0.0)]
    good = _write(tmp_path / "good", lines, aggregate={"acc,none": 2 / 3})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_lm_eval(good).c.values[0].tolist() == [1, 1, 0]
    bad = _write(tmp_path / "bad", lines, aggregate={"acc,none": 0.5})
    with pytest.raises(LogError, match=r"differs from the results file's 'acc,none' = 0\.5"):
        read_lm_eval(bad)
    with pytest.warns(LogWarning):
        read_lm_eval(bad, check="warn")


def test_system_name_from_results_and_override(tmp_path):
    path = _write(tmp_path, [_line(0, acc=1.0)], model="org/m1")
    assert read_lm_eval(path).systems == ["org/m1"]
    assert read_lm_eval(path, system="mine").systems == ["mine"]


def test_two_tasks_get_prefixed_labels(tmp_path):
    a = _write(tmp_path, [_line(0, acc=1.0)], task="taska")
    b = tmp_path / f"samples_taskb_{DATE}.jsonl"
    b.write_text(json.dumps(_line(0, acc=0.0)) + "\n")
    results = json.loads((tmp_path / f"results_{DATE}.json").read_text())
    results["configs"]["taskb"] = {"repeats": 1}
    (tmp_path / f"results_{DATE}.json").write_text(json.dumps(results))
    data = read_lm_eval([a, b])
    assert data.tasks == ["taska/0", "taskb/0"]
    assert data.c.values[0].tolist() == [1, 0]


# ---------------------------------------------------------------------------- pass@k
def test_pass_at_k_recovers_c_exactly(tmp_path):
    n, truth = 16, [0, 1, 5, 9, 14]
    lines = [
        _line(doc, **{f"pass@{k}": _passk(n, c, k) for k in (2, 8)}) for doc, c in enumerate(truth)
    ]
    path = _write(tmp_path, lines, repeats=n)
    data = read_lm_eval(path)
    assert data.n.values[0].tolist() == [n] * len(truth)
    assert data.c.values[0].tolist() == truth
    with pytest.raises(ValueError, match="no trial-level table"):
        lm_eval_trials(path)


def test_pass_at_k_ambiguous_at_the_top(tmp_path):
    n = 16  # pass@2 = 1 for c = 15 and c = 16
    path = _write(tmp_path, [_line(0, **{"pass@2": _passk(n, 15, 2)})], repeats=n)
    with pytest.raises(LogError, match=r"fits every c in \[15, 16\]"):
        read_lm_eval(path)
    assert read_lm_eval(path, ambiguous="min").c.values[0].tolist() == [15]


def test_pass_at_k_value_that_fits_no_c(tmp_path):
    path = _write(tmp_path, [_line(0, **{"pass@2": 0.123})], repeats=16)
    with pytest.raises(LogError, match=r"pass@2=0\.123 fits no c in 0\.\.16"):
        read_lm_eval(path)


def test_pass_at_k_needs_repeats(tmp_path):
    path = tmp_path / f"samples_code_{DATE}.jsonl"
    path.write_text(json.dumps(_line(0, **{"pass@2": 1.0})) + "\n")
    with pytest.raises(LogError, match="pass repeats="):
        read_lm_eval(path)
    assert read_lm_eval(path, repeats=4, ambiguous="min").c.values[0].tolist() == [3]


# ---------------------------------------------------------------------------- bad logs
def test_duplicate_doc_id(tmp_path):
    path = _write(tmp_path, [_line(0, acc=1.0), _line(0, acc=0.0)], docs=1)
    with pytest.raises(LogError, match=r"line 2 \(doc_id 0, filter 'none'\): duplicate doc_id"):
        read_lm_eval(path)


def test_truncated_line(tmp_path):
    path = _write(tmp_path, [_line(0, acc=1.0), _line(1, acc=0.0)])
    text = path.read_text()
    path.write_text(text[: len(text) - 10])
    with pytest.raises(LogError, match=r"line 2: not valid JSON"):
        read_lm_eval(path)


def test_missing_metric_on_a_line(tmp_path):
    lines = [_line(0, acc=1.0), {"doc_id": 1, "filter": "none", "metrics": ["acc"]}]
    path = _write(tmp_path, lines)
    with pytest.raises(LogError, match=r"line 2 \(doc_id 1, filter 'none'\): missing field 'acc'"):
        read_lm_eval(path)


def test_missing_doc_id(tmp_path):
    path = _write(tmp_path, [_line(0, acc=1.0), {"filter": "none", "acc": 1.0}], docs=2)
    with pytest.raises(LogError, match="line 2: doc_id is missing"):
        read_lm_eval(path, metric="acc")


def test_unreadable_metric_value(tmp_path):
    path = _write(tmp_path, [_line(0, acc="yes please")])
    with pytest.raises(LogError, match="acc='yes please' is not a number"):
        read_lm_eval(path, metric="acc")
