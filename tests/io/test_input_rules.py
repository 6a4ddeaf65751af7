"""Hostile inputs to the readers (issue: reliability): each ends in a clear ValueError naming
the file, the line or record, and the rule -- or in the correct result."""

from __future__ import annotations

import gzip
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbayes import EvalData
from evalbayes.data import MAX_COUNT
from evalbayes.io import (
    FORMATS,
    LogError,
    LogWarning,
    OneTaskWarning,
    UnknownOptionError,
    read,
    read_counts,
    read_trials,
    reader_options,
)
from paths import FIXTURES, ROOT

DATA = FIXTURES
pytestmark = pytest.mark.filterwarnings("ignore::evalbayes.io.OneTaskWarning")


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------- tables
def test_extra_field_on_every_row_is_an_error(tmp_path):
    path = _write(tmp_path / "t.csv", "system,task,n,c\nA,t1,4,2,x\nB,t1,4,3,y\n")
    with pytest.raises(ValueError, match=r"t\.csv: line 2: 5 fields where the header has 4"):
        read(path)


def test_extra_field_on_one_row_names_its_line(tmp_path):
    path = _write(tmp_path / "t.csv", "system,task,n,c\nA,t1,4,2\nA,t2,4,3,9\n")
    with pytest.raises(ValueError, match=r"t\.csv: line 3: 5 fields"):
        read(path)


def test_rows_are_named_by_line_number(tmp_path):
    path = _write(tmp_path / "t.csv", "system,task,n,c\nA,t1,4,2\nA,t2,4,5\n")
    with pytest.raises(ValueError, match=r"t\.csv: line 3 \(system 'A', task 't2'\): c=5 > n=4"):
        read(path)
    jl = _write(
        tmp_path / "t.jsonl", '{"id": "a", "n": 2, "c": 1}\n\n{"id": "b", "n": 2, "c": 3}\n'
    )
    with pytest.raises(ValueError, match=r"t\.jsonl: line 3 .*c=3 > n=2"):
        read(jl)


@pytest.mark.parametrize(
    ("cell", "rule"),
    [
        ("inf", "n=inf is infinite"),
        ("1e30", r"n=1e\+30 is above 2\^53"),
        ("99999999999999999999", r"n=99999999999999999999 is above 2\^53"),
        (str(2**53 + 1), r"n=9007199254740993 is above 2\^53"),
        ("-3", "n=-3 is negative"),
        ("2.5", "n=2.5 is not an integer"),
    ],
)
def test_overflow_and_precision(tmp_path, cell, rule):
    path = _write(tmp_path / "t.csv", f"system,task,n,c\nA,t1,4,2\nA,t2,{cell},1\n")
    with pytest.raises(ValueError, match=rf"t\.csv: line 3 \(system 'A', task 't2'\): {rule}"):
        read(path)


def test_c_above_2_53_is_never_rounded(tmp_path):
    big = 2**53
    path = _write(tmp_path / "t.csv", f"system,task,n,c\nA,t1,{big},{big + 1}\nA,t2,3,1\n")
    with pytest.raises(ValueError, match=r"line 2 .*c=9007199254740993 is above 2\^53"):
        read(path)
    jl = _write(tmp_path / "t.jsonl", f'{{"id": "a", "n": {big}, "c": {big + 1}}}\n')
    with pytest.raises(ValueError, match=r"t\.jsonl: line 1 .*c=9007199254740993"):
        read(jl)
    mixed = _write(
        tmp_path / "m.jsonl",
        f'{{"id": "a", "n": {big + 1}, "c": 1}}\n{{"id": "b", "n": 2.0, "c": 1}}\n',
    )
    with pytest.raises(ValueError, match=r"m\.jsonl: line 1 .*n=9007199254740993"):
        read(mixed)
    assert (
        read(_write(tmp_path / "ok.csv", f"system,task,n,c\nA,t,{big},{big}\nA,u,1,0\n")).n.max()
        == big
    )


def test_huge_n_costs_constant_memory(tmp_path):
    path = _write(tmp_path / "t.csv", "system,task,n,c\nA,t1,1000000000,5\nA,t2,1000000000,7\n")
    data = read(path)
    assert data.n.values.tolist() == [[10**9, 10**9]]
    assert data.dataset.nbytes < 10_000
    assert data.to_frame()["n"].tolist() == [10**9, 10**9]


def test_messages_name_the_file(tmp_path):
    empty = _write(tmp_path / "empty.csv", "")
    with pytest.raises(ValueError, match=r"empty\.csv: empty file"):
        read(empty, format="counts")
    header_only = _write(tmp_path / "header.csv", "system,task,n,c\n")
    with pytest.raises(ValueError, match=r"header\.csv: empty table"):
        read(header_only)
    gz = tmp_path / "zipped.csv"
    gz.write_bytes(gzip.compress(b"system,task,n,c\nA,t,1,1\n"))
    with pytest.raises(ValueError, match=r"zipped\.csv: the file is gzip-compressed"):
        read(gz)
    parquet = tmp_path / "bad.parquet"
    parquet.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(ValueError, match=r"bad\.parquet: not a readable Parquet file"):
        read(parquet)
    with pytest.raises(ValueError, match=r"bad\.parquet: not a readable Parquet file"):
        read(parquet, format="counts")


@pytest.mark.parametrize(
    ("header", "found"),
    [
        ("system,task,n,k", "the counts column c .* is missing"),
        ("System,Task,N,C", "case-sensitive"),
        ("system,task,passed", "success='passed'"),
    ],
)
def test_cannot_detect_says_what_was_expected_and_found(tmp_path, header, found):
    path = _write(tmp_path / "t.csv", f"{header}\nA,t,1,1\n"[: len(header) + 8])
    with pytest.raises(
        ValueError, match=rf"cannot detect a log format \(expected .*found columns .*{found}"
    ):
        read(path)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab_delimiters_are_read(tmp_path, sep):
    path = _write(
        tmp_path / "t.csv",
        f"system{sep}task{sep}n{sep}c\nA{sep}t1{sep}4{sep}2\nA{sep}t2{sep}3{sep}3\n",
    )
    data = read(path)
    assert data.n.values.tolist() == [[4, 3]] and data.c.values.tolist() == [[2, 3]]


def test_capitalised_columns_with_format_say_so(tmp_path):
    path = _write(tmp_path / "t.csv", "system,task,N,C\nA,t,1,1\nA,u,1,0\n")
    with pytest.raises(ValueError, match=r"t\.csv: no column for n.*case-sensitive: found 'N'"):
        read(path, format="counts")
    assert read(path, format="counts", n="N", c="C").n.values.tolist() == [[1, 1]]


def test_counts_as_strings_in_jsonl_and_parquet(tmp_path):
    jl = _write(
        tmp_path / "t.jsonl", '{"id": "a", "n": "5", "c": 1}\n{"id": "b", "n": 5, "c": 1}\n'
    )
    with pytest.raises(
        ValueError, match=r"t\.jsonl: line 1 .*n='5' is not a number \(a count stored as text\)"
    ):
        read(jl)
    pq = tmp_path / "t.parquet"
    pd.DataFrame(
        {"system": ["A", "A"], "task": ["a", "b"], "n": ["5", "5"], "c": [1, 2]}
    ).to_parquet(pq)
    with pytest.raises(ValueError, match=r"t\.parquet: row 1 .*n='5' is not a number"):
        read(pq)


def test_booleans_as_counts(tmp_path):
    jl = _write(
        tmp_path / "t.jsonl", '{"id": "a", "n": true, "c": false}\n{"id": "b", "n": 2, "c": 1}\n'
    )
    with pytest.raises(ValueError, match=r"t\.jsonl: line 1 .*is a boolean, not a count"):
        read(jl)
    path = _write(tmp_path / "b.csv", "system,task,n,c\nA,t,True,False\nA,u,True,True\n")
    with pytest.raises(ValueError, match=r"b\.csv: line 2 .*is a boolean"):
        read(path)


def test_second_n_header(tmp_path):
    path = _write(tmp_path / "t.csv", "system,task,n,c,n\nA,t,4,2,5\n")
    with pytest.raises(ValueError, match=r"t\.csv: line 1: the header names column 'n' twice"):
        read(path)


def test_conflicting_n_and_trials(tmp_path):
    path = _write(
        tmp_path / "t.csv", "system,task,n,c,trials,successes\nA,t,4,2,4,2\nA,u,4,2,5,2\n"
    )
    with pytest.raises(ValueError, match=r"t\.csv: line 3 .*n=4 but trials=5"):
        read(path)
    same = _write(tmp_path / "s.csv", "system,task,n,c,trials\nA,t,4,2,4\nA,u,3,1,3\n")
    data = read(same)
    assert "trials" not in data.dataset.coords and data.n.values.tolist() == [[4, 3]]


@pytest.mark.parametrize("label", ["NA", "null", "None", "NaN", "nan", "N/A"])
def test_labels_that_look_missing_are_names(tmp_path, label):
    path = _write(tmp_path / "t.csv", f"system,task,n,c\n{label},t1,2,1\nB,{label},2,2\n")
    data = read(path)
    assert data.systems == [label, "B"] and label in data.tasks
    trials = _write(tmp_path / "r.csv", f"system,task,success\n{label},{label},1\n{label},x,0\n")
    assert read_trials(trials).systems == [label]


def test_empty_label_is_an_error(tmp_path):
    path = _write(tmp_path / "t.csv", "system,task,n,c\nA,,2,1\nA,u,1,1\n")
    with pytest.raises(ValueError, match=r"t\.csv: line 2.*task label is empty"):
        read(path)


def test_duplicate_trial_ids(tmp_path):
    path = _write(
        tmp_path / "t.csv",
        "system,task,trial,success\nA,t,1,1\nA,t,2,0\nA,t,1,1\nA,u,1,1\n",
    )
    with pytest.raises(
        ValueError,
        match=r"t\.csv: lines 2, 4: duplicate \(system, task, trial\) = \('A', 't', '1'\)",
    ):
        read(path)
    ok = _write(tmp_path / "ok.csv", "system,task,trial,success\nA,t,1,1\nA,t,2,0\nA,u,1,1\n")
    assert read(ok).n.values.tolist() == [[2, 1]]


def test_two_copies_of_a_trial_table(tmp_path):
    text = "system,task,success\nA,t,1\nA,t,0\nA,u,1\n"
    _write(tmp_path / "a.csv", text)
    _write(tmp_path / "b.csv", text)
    with pytest.raises(ValueError, match=r"b\.csv holds the same trials as .*a\.csv"):
        read(tmp_path)


def test_one_task_warns(tmp_path):
    path = _write(tmp_path / "one.csv", "system,task,n,c\nA,t,3,1\nB,t,3,2\n")
    with pytest.warns(OneTaskWarning, match="rests on that one task"):
        read_counts(path)


# ---------------------------------------------------------------------------- logs in directories
def test_damaged_inspect_log_in_a_directory_is_not_skipped(tmp_path):
    shutil.copy(DATA / "inspect_ai" / "log_streaming_epochs2.eval", tmp_path / "a.eval")
    doc = json.loads((DATA / "inspect_ai" / "popularity_json_format_epochs1.json").read_text())
    del doc["version"]
    _write(tmp_path / "b.json", json.dumps(doc))
    with pytest.raises(
        ValueError, match=r"b\.json: looks like a log but cannot be read: an inspect_ai log needs"
    ):
        read(tmp_path)


def test_damaged_helm_record_in_a_directory_is_not_skipped(tmp_path):
    src = DATA / "helm" / "mmlu_philosophy_gpt2_per_instance_stats.json"
    records = json.loads(src.read_text())
    del records[0]["instance_id"]
    run = tmp_path / "run"
    run.mkdir()
    _write(run / "per_instance_stats.json", json.dumps(records))
    with pytest.raises(ValueError, match=r"per_instance_stats\.json: looks like a log .*HELM"):
        read(tmp_path)


def test_unrelated_json_in_a_directory_is_skipped_with_a_warning(tmp_path):
    shutil.copy(DATA / "inspect_ai" / "log_streaming_epochs2.eval", tmp_path / "a.eval")
    _write(tmp_path / "notes.json", json.dumps({"hello": 1}))
    with pytest.warns(LogWarning, match=r"skipped 1 files .*notes\.json"):
        read(tmp_path)


def test_terminal_bench_missing_field_is_not_swe_bench(tmp_path):
    doc = {
        "results": [{"task_id": "hello", "trial_name": "hello.1-of-1.run"}],
        "resolved_ids": [],
        "n_resolved": 0,
    }
    path = _write(tmp_path / "results.json", json.dumps(doc))
    with pytest.raises(LogError, match=r"results\.json: trial 0: missing field 'is_resolved'"):
        read(path)


def test_unknown_json_says_what_was_found(tmp_path):
    path = _write(tmp_path / "x.json", json.dumps({"scores": [1, 2]}))
    with pytest.raises(
        ValueError,
        match=r"cannot detect a log format \(expected an inspect_ai log.*found a JSON object "
        r"with keys \['scores'\]",
    ):
        read(path)


def test_jsonl_errors_give_line_numbers_not_byte_offsets(tmp_path):
    path = _write(tmp_path / "t.jsonl", '{"id": "a", "n": 2, "c": 1}\n{"id": "b", "n": 2,\n')
    with pytest.raises(LogError, match=r"t\.jsonl: line 2: not valid JSON"):
        read(path)
    json_path = _write(tmp_path / "j.json", '{"version": 2, "eval": {\n "task": 1,\n')
    with pytest.raises(LogError, match=r"j\.json: not valid JSON .* line 3"):
        read(json_path)


# ---------------------------------------------------------------------------- options
def test_reader_options_lists_every_format():
    specs = reader_options()
    assert set(specs) == set(FORMATS) - {"auto"}
    inspect_opts = {o.name: o for o in specs["inspect"]}
    assert inspect_opts["errors"].choices == ("failure", "drop", "raise")
    assert inspect_opts["errors"].default == "failure"
    assert inspect_opts["threshold"].kind is float
    assert inspect_opts["threshold"].convert("0.5") == 0.5
    assert inspect_opts["threshold"].convert("none") is None
    assert inspect_opts["task_prefix"].convert("true") is True
    assert all(o.help for spec in specs.values() for o in spec)
    with pytest.raises(ValueError, match="must be one of"):
        inspect_opts["errors"].convert("sometimes")
    trials = {o.name for o in reader_options("trials")}
    assert {"success", "missing", "trial", "system"} <= trials


def test_unknown_option_is_a_value_error_listing_valid_ones():
    with pytest.raises(
        ValueError, match=r"takes no option \['bogus'\]; its options are \['system'"
    ):
        read(DATA / "inspect_ai" / "log_streaming_epochs2.eval", bogus=1)
    assert issubclass(UnknownOptionError, TypeError)


def test_per_format_functions_keep_their_signatures():
    import inspect

    from evalbayes.io import read_helm, read_inspect

    params = inspect.signature(read_inspect).parameters
    assert list(params)[:3] == ["paths", "system", "task_prefix"]
    assert params["errors"].default == "failure"
    assert "threshold" in (read_helm.__doc__ or "")


def test_from_arrays_refuses_counts_beyond_2_53():
    with pytest.raises(ValueError, match=r"above 2\^53"):
        EvalData.from_arrays(np.array([[2**62]]), np.array([[1]]))
    with pytest.raises(ValueError, match="infinite"):
        EvalData.from_arrays(np.array([[np.inf]]), np.array([[1.0]]))
    assert MAX_COUNT == 2**53


def test_warning_class_is_a_log_warning():
    assert issubclass(OneTaskWarning, LogWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read(DATA / "inspect_ai" / "log_streaming_epochs2.eval")


def test_docs_worked_example_adds_a_format_with_one_module_and_one_line(tmp_path, monkeypatch):
    import re
    import sys

    from evalbayes.io import _registry as registry

    text = (ROOT / "docs" / "io.md").read_text()
    section = text[text.index("## The reader protocol") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)[1]
    (tmp_path / "my_format.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.READERS, "my-format", ("my_format", "READER"))
    run = _write(
        tmp_path / "run.json",
        json.dumps({"model": "m", "results": {"a": [True, False], "b": [True]}}),
    )
    data = read(run)
    assert data.systems == ["m"] and data.n.values.tolist() == [[2, 1]]
    assert data.c.values.tolist() == [[1, 1]]
    assert read(run, format="my-format", benchmark="x").dataset["benchmark"].values.tolist() == [
        "x",
        "x",
    ]
    assert [o.name for o in reader_options("my-format")] == ["system", "task_prefix", "benchmark"]
    sys.modules.pop("my_format", None)
