"""Trial tables whose outcome column is not ``success`` (issue 28): detected by their 0/1
columns, and the hint reads the file as written."""

from __future__ import annotations

import shlex

import pandas as pd
import pytest

from evalbayes.cli import main
from evalbayes.io import read
from evalbayes.io._auto import implied_format


def _table(tmp_path, **columns):
    path = tmp_path / "t.csv"
    base = {"system": ["A", "A", "B", "B"], "task": ["t1", "t2", "t1", "t2"]}
    pd.DataFrame({**base, **columns}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("name", ["passed", "resolved", "is_resolved", "correct", "reward"])
def test_a_binary_outcome_column_is_named_in_the_hint(tmp_path, name):
    path = _table(tmp_path, **{name: [1, 0, 0, 0]})
    with pytest.raises(ValueError, match=f"format='trials', success='{name}'"):
        read(path)
    data = read(path, success=name)  # the option alone names the format
    assert data.c.sel(system="A", task="t1") == 1 and int(data.c.sum()) == 1


def test_booleans_and_empty_outcomes(tmp_path):
    path = _table(tmp_path, passed=["true", "false", "", "True"])
    with pytest.raises(ValueError, match=r"success='passed', missing='failure' \(1 empty"):
        read(path)
    assert int(read(path, success="passed", missing="failure").c.sum()) == 2


def test_a_non_binary_column_is_not_offered(tmp_path):
    path = _table(tmp_path, score=[0.5, 1, 0, 0])
    with pytest.raises(ValueError) as err:
        read(path)
    assert "success=" not in str(err.value)


def test_options_imply_their_only_format():
    assert implied_format({"success": "passed"}) == "trials"
    assert implied_format({"n": "trials"}) == "counts"
    assert implied_format({"system": "x"}) is None  # every format takes it
    assert implied_format({"threshold": 0.5}) is None  # inspect, lm-eval and HELM do
    assert implied_format({}) is None


@pytest.mark.parametrize(
    ("name", "outcome", "shape"),
    [("terminal_bench_core011_trials.csv", "is_resolved", (13, 80)),
     ("tau_bench_airline_gpt4o_trials.csv", "reward", (1, 50))],
)
def test_the_cli_hint_is_a_command_that_runs(shared_data, capsys, name, outcome, shape):
    path = shared_data / name
    assert main(["crosscheck", str(path), "--resamples", "100"]) == 2
    err = capsys.readouterr().err
    command = err.rsplit("(on the command line: ", 1)[1].rstrip().removesuffix(")")
    argv = shlex.split(command)
    assert argv[0] == "evalbayes" and argv[-4:] == ["--input-format", "trials", "--success",
                                                    outcome]
    assert main(argv[1:]) == 0, capsys.readouterr().err
    capsys.readouterr()
    data = read(path, success=outcome)
    assert data.shape == shape
    raw = pd.read_csv(path)
    assert int(data.c.sum()) == int(raw[outcome].sum())  # every trial counted once
    assert int(data.n.sum()) == len(raw)
