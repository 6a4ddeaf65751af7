"""Values taken strictly on the command line (issue 28, hostile-input audit item 3).

Before: ``crosscheck --k 2.9`` silently became k = 2, ``--k inf`` a traceback,
``--threshold nan`` counted every trial a failure with exit 0, ``--resamples`` / ``--tasks``
had no upper bound (petabytes allocated), ``--seed 2**64`` failed after the work, messages
named internal parameters (``n_sim``), and the column-flag hint fired on data errors
(``c=-1 ... (on the command line: --c)``). Every numeric flag is now parsed by one of the
argparse types of ``evalbayes.cli._common``: a usage error naming the flag, exit 2, before
any file is read.
"""

from __future__ import annotations

import json

import pytest

from evalbayes._core.names import MAX_SEED, check_seed
from evalbayes.cli import cli_hint, main
from evalbayes.io._common import success_of

OK = "system,task,n,c\nA,t1,10,3\nA,t2,10,5\nB,t1,10,7\nB,t2,10,6\n"


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text(OK)
    return str(path)


BAD = [
    (["crosscheck", "{t}", "--k", "2.9"], "--k", "integer"),
    (["crosscheck", "{t}", "--k", "inf"], "--k", "integer"),
    (["crosscheck", "{t}", "--k", "0"], "--k", "integer"),
    (["crosscheck", "{t}", "--resamples", str(10**12)], "--resamples", "1,000,000"),
    (["crosscheck", "{t}", "--resamples", "0"], "--resamples", "integer"),
    (["crosscheck", "{t}", "--seed", str(2**64)], "--seed", "4,294,967,295"),
    (["crosscheck", "{t}", "--seed", "-1"], "--seed", "integer"),
    (["crosscheck", "{t}", "--threshold", "nan"], "--threshold", "finite"),
    (["fit", "{t}", "--threshold", "inf"], "--threshold", "finite"),
    (["fit", "{t}", "--target-accept", "nan"], "--target-accept", "finite"),
    (["fit", "{t}", "--draws", "2.5"], "--draws", "integer"),
    (["summary", "x.nc", "--k", "nan"], "--k", "finite"),
    (["summary", "x.nc", "--ci-prob", "1"], "--ci-prob", "(0, 1)"),
    (["compare", "x.nc", "--rope", "inf"], "--rope", "finite"),
    (["plan", "--population", "0.5", "0.6", "0.1", "0.1", "--tasks", str(10**9)],
     "--tasks", "100,000"),
    (["plan", "--population", "0.5", "0.6", "0.1", "0.1", "--sims", "0"], "--sims", "integer"),
    (["plan", "--population", "0.5", "0.6", "0.1", "0.1", "--trials", "1e3"], "--trials",
     "integer"),
    (["plan", "--population", "nan", "0.6", "0.1", "0.1"], "--population", "finite"),
    (["gate", "{t}", "--baseline", "A", "--candidate", "B", "-k", "2.5"], "-k", "integer"),
    (["gate", "{t}", "--baseline", "A", "--candidate", "B", "--draws", str(10**12)],
     "--draws", "10,000,000"),
    (["gate", "{t}", "--baseline", "A", "--candidate", "B", "--ship-prob", "nan"],
     "--ship-prob", "finite"),
]


@pytest.mark.parametrize(("argv", "flag", "says"), BAD)
def test_a_bad_value_is_a_usage_error_naming_the_flag(table, capsys, argv, flag, says):
    code = main([a.format(t=table) for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    assert f"argument {flag}" in err and says in err, err
    assert "Traceback" not in err and "n_sim" not in err and "n_resamples" not in err


def test_whole_k_still_works_and_is_an_integer(table, capsys):
    assert main(["crosscheck", table, "--k", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["k"] == [2]


def test_seed_rule_is_one_validator():
    assert check_seed(MAX_SEED) == MAX_SEED
    with pytest.raises(ValueError, match="2\\^32"):
        check_seed(MAX_SEED + 1)


def test_nan_threshold_is_refused_by_the_library_too():
    assert success_of(0.7, 0.5, "log.json", "sample 1") == 1
    with pytest.raises(ValueError, match="finite"):
        success_of(0.7, float("nan"), "log.json", "sample 1")


def test_the_column_flag_hint_fires_on_hints_not_on_data(tmp_path, capsys):
    assert cli_hint("neg.csv: line 2: c=-1 is negative") == "neg.csv: line 2: c=-1 is negative"
    assert "--c" not in cli_hint("line 2: n='ten' is not a number")
    assert cli_hint("rename them or pass n=, c=").endswith("(on the command line: --n, --c)")
    bad = tmp_path / "neg.csv"
    bad.write_text("system,task,n,c\nA,t1,10,-1\n")
    assert main(["crosscheck", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "c=-1 is negative" in err and "on the command line" not in err
