"""The command line of the designs: ``fit`` and ``report`` with --factors / --factors-pattern
(factorial), --recipes / --recipe-pattern (training seeds) and --gold (judge error).

The fits are short (2 chains x 100 draws, marked slow: each compiles a model); the input
errors exit 2 before any fitting, with a message naming the file and line or the flag, and
without importing PyMC.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from evalbayes import io
from evalbayes._persist import load as _load_fit
from evalbayes.cli import main
from evalbayes.decisions._plan_runs import plan_runs
from evalbayes.models.designs._factorial import FactorialPosterior
from evalbayes.models.designs._judge_error import GOLD_VARS, JudgeErrorPosterior, judge_data
from evalbayes.models.designs._training_seeds import TrainingSeedsPosterior
from paths import FIXTURES

SHORT = ["--draws", "100", "--tune", "100", "--chains", "2", "--quiet"]
PATTERN = r"^(?P<harness>[^_]+)__(?P<model>.+)$"


EXAMPLES = FIXTURES / "designs"


@pytest.fixture(scope="module")
def files():
    """The synthetic design examples of docs/cli.md (tests/fixtures/designs/make_examples.py)."""
    names = {"factorial": "factorial_counts.csv", "factors": "factors.csv",
             "seeds": "seeds_counts.csv", "recipes": "recipes.csv",
             "judge": "judge_counts.csv", "gold": "judge_gold.csv"}
    found = {key: str(EXAMPLES / name) for key, name in names.items()}
    found["gold_frame"] = pd.read_csv(EXAMPLES / "judge_gold.csv")
    return found


def _run(argv: list[str]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return main(argv)


def load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: the diagnostics fail, as expected
        return _load_fit(path)


def _sections(path) -> list[str]:
    html = path.read_text("utf-8")
    return [key for key in ("factorial", "training-seeds", "judge-error")
            if f'<section id="{key}">' in html]


# ---------------------------------------------------------------------------- fit, then report
@pytest.mark.slow
def test_drop_unmatched_leaves_out_and_lists_the_systems_a_pattern_misses(files, tmp_path,
                                                                          capsys):
    # like Terminal-Bench, where one submission names no model: *__gamma do not match
    fit = tmp_path / "f.nc"
    pattern = r"^(?P<harness>[^_]+)__(?P<model>alpha|beta)$"
    assert _run(["fit", files["factorial"], "--factors-pattern", pattern, "--drop-unmatched",
                 *SHORT, "-o", str(fit)]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "left out 2 system(s)" in err and "'agentx__gamma'" in err and "'plain__gamma'" in err
    systems = list(load(fit).data.systems)
    assert sorted(systems) == ["agentx__alpha", "agentx__beta", "plain__alpha", "plain__beta"]


def test_drop_unmatched_needs_a_pattern_and_is_suggested(files, capsys):
    err = _error(capsys, ["fit", files["factorial"], "--factors", files["factors"],
                          "--drop-unmatched"])
    assert "--drop-unmatched works with --factors-pattern only" in err
    err = _error(capsys, ["fit", files["factorial"], "--factors-pattern",
                          r"^(?P<harness>[^_]+)__(?P<model>alpha|beta)$"])
    assert "does not match" in err and "--drop-unmatched" in err


@pytest.mark.slow
def test_factorial_fit_from_a_name_pattern_then_report(files, tmp_path):
    fit = tmp_path / "f.nc"
    assert _run(["fit", files["factorial"], "--factors-pattern", PATTERN, *SHORT,
                 "-o", str(fit)]) == 0  # fmt: skip
    posterior = load(fit)
    assert isinstance(posterior, FactorialPosterior)
    coords = posterior.data.system_coords
    assert [f"{h}__{m}" for m, h in zip(coords["model"], coords["harness"], strict=True)] == list(
        posterior.data.systems)  # fmt: skip
    report = tmp_path / "r.html"
    assert _run(["report", str(fit), "-o", str(report)]) == 0
    assert _sections(report) == ["factorial"]


@pytest.mark.slow
def test_factorial_mapping_file_gives_the_same_coordinates(files, tmp_path):
    fit = tmp_path / "f.nc"
    assert _run(["fit", files["factorial"], "--factors", files["factors"], *SHORT,
                 "-o", str(fit)]) == 0  # fmt: skip
    coords = load(fit).data.system_coords
    factors = pd.read_csv(files["factors"]).set_index("system")
    systems = load(fit).data.systems
    assert list(coords["model"]) == list(factors.loc[systems, "model"])
    assert list(coords["harness"]) == list(factors.loc[systems, "harness"])


@pytest.mark.slow
def test_training_seeds_fit_then_report(files, tmp_path):
    fit = tmp_path / "s.nc"
    assert _run(["fit", files["seeds"], "--recipes", files["recipes"], *SHORT,
                 "-o", str(fit)]) == 0  # fmt: skip
    posterior = load(fit)
    assert isinstance(posterior, TrainingSeedsPosterior)
    assert list(posterior.data.system_coords["recipe"]) == ["A"] * 3 + ["B"] * 3
    report = tmp_path / "r.html"
    assert _run(["report", str(fit), "-o", str(report)]) == 0
    assert _sections(report) == ["training-seeds"]
    # the pattern gives the same recipes
    fit2 = tmp_path / "s2.nc"
    assert _run(["fit", files["seeds"], "--recipe-pattern", r"(?P<recipe>[^-]+)-", *SHORT,
                 "-o", str(fit2)]) == 0  # fmt: skip
    assert list(load(fit2).data.system_coords["recipe"]) == ["A"] * 3 + ["B"] * 3
    # plan from the fit: runs x tasks x trials per recipe, as the library computes it
    out = tmp_path / "plan.csv"
    assert _run(["plan", "--fit", str(fit), "--runs", "2", "3", "--tasks", "5", "--trials",
                 "1", "2", "--sims", "20", "--format", "csv", "-o", str(out)]) == 0  # fmt: skip
    ref = plan_runs(load(fit), baseline="A", candidate="B", runs=[2, 3], tasks=[5],
                    trials=[1, 2], n_sims=20, seed=0).table  # fmt: skip
    pd.testing.assert_frame_equal(pd.read_csv(out), ref, check_dtype=False)
    assert _run(["plan", "--fit", str(fit), "--width", "0.1"]) == 2


@pytest.mark.slow
def test_judge_fit_with_gold_then_report_and_report_from_data(files, tmp_path):
    fit = tmp_path / "j.nc"
    assert _run(["fit", files["judge"], "--gold", files["gold"], *SHORT, "-o", str(fit)]) == 0
    posterior = load(fit)
    assert isinstance(posterior, JudgeErrorPosterior)
    # the gold counts are those judge_data makes of the same rows
    reference = judge_data(io.read(files["judge"]), files["gold_frame"])
    for name in GOLD_VARS:
        np.testing.assert_array_equal(posterior.data.dataset[name].values,
                                      reference.dataset[name].values)
    report = tmp_path / "r.html"
    assert _run(["report", str(fit), "-o", str(report)]) == 0
    assert _sections(report) == ["judge-error"]
    # report straight from the counts: --gold implies the judge-error model
    direct = tmp_path / "d.html"
    assert _run(["report", files["judge"], "--gold", files["gold"], "--draws", "100",
                 "-o", str(direct)]) == 0  # fmt: skip
    assert _sections(direct) == ["judge-error"]


# ---------------------------------------------------------------------------- input errors
def _error(capsys, argv: list[str]) -> str:
    assert _run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalbayes: error:"), err
    return err


def test_bad_gold_rows_name_the_file_and_line(files, capsys, tmp_path):
    bad = tmp_path / "bad_gold.csv"
    bad.write_text("system,task,judge,human\njudged_a,task00,1,1\nzz,task01,0,0\n")
    err = _error(capsys, ["fit", files["judge"], "--gold", str(bad)])
    assert "bad_gold.csv: line 3 (gold row 1)" in err and "'zz'" in err
    bad.write_text("system,task,judge,human\njudged_a,task00,1,1\njudged_a,task01,2,0\n")
    err = _error(capsys, ["fit", files["judge"], "--gold", str(bad)])
    assert "line 3" in err and "must be 0/1" in err
    bad.write_text("system,task,verdict\njudged_a,task00,1\n")
    err = _error(capsys, ["fit", files["judge"], "--gold", str(bad)])
    assert "bad_gold.csv" in err and "'judge'" in err and "'human'" in err
    err = _error(capsys, ["fit", files["judge"], "--gold", str(tmp_path / "none.csv")])
    assert "none.csv" in err
    # more gold judge passes in a cell than judge passes: the cell is named
    counts = pd.read_csv(files["judge"])
    cell = counts[counts.c == 0].iloc[0]
    bad.write_text(f"system,task,judge,human\n{cell.system},{cell.task},1,1\n")
    err = _error(capsys, ["fit", files["judge"], "--gold", str(bad)])
    assert "bad_gold.csv" in err and repr(cell.task) in err and "judge passes" in err


def test_bad_mapping_files_name_the_file_and_line(files, capsys, tmp_path):
    bad = tmp_path / "bad_factors.csv"
    factors = pd.read_csv(files["factors"])
    factors.iloc[1:].to_csv(bad, index=False)
    err = _error(capsys, ["fit", files["factorial"], "--factors", str(bad)])
    assert "bad_factors.csv" in err and repr(factors.system[0]) in err
    twice = pd.concat([factors, factors.iloc[[0]].assign(harness="other")])
    twice.to_csv(bad, index=False)
    err = _error(capsys, ["fit", files["factorial"], "--factors", str(bad)])
    assert f"bad_factors.csv (line {len(factors) + 2})" in err and "mapped twice" in err
    factors.assign(harness=["", *factors.harness[1:]]).to_csv(bad, index=False)
    err = _error(capsys, ["fit", files["factorial"], "--factors", str(bad)])
    assert "bad_factors.csv (line 2)" in err and "empty harness" in err
    recipes = tmp_path / "bad_recipes.csv"
    recipes.write_text("system,run\nA-seed0,A\n")
    err = _error(capsys, ["fit", files["seeds"], "--recipes", str(recipes)])
    assert "bad_recipes.csv" in err and "'recipe'" in err


def test_bad_patterns_and_missing_design_inputs(files, capsys):
    err = _error(capsys, ["fit", files["factorial"], "--factors-pattern", "(?P<model>[a-z"])
    assert "--factors-pattern" in err and "not a regular expression" in err
    err = _error(capsys, ["fit", files["factorial"], "--factors-pattern", "(?P<model>.+)"])
    assert "(?P<harness>...)" in err
    err = _error(capsys, ["fit", files["factorial"], "--factors-pattern",
                          r"^(?P<harness>agentx)__(?P<model>.+)$"])  # fmt: skip
    assert "'plain__alpha'" in err and "does not match" in err
    err = _error(capsys, ["fit", files["seeds"], "--recipe-pattern", r"(?P<recipe>A)-"])
    assert "'B-seed0'" in err
    err = _error(capsys, ["fit", files["factorial"], "--model", "factorial"])
    assert "--factors FILE" in err and "--factors-pattern" in err
    err = _error(capsys, ["fit", files["seeds"], "--model", "training-seeds"])
    assert "--recipes FILE" in err
    err = _error(capsys, ["fit", files["judge"], "--model", "judge-error"])
    assert "--gold FILE" in err


def test_design_flags_must_agree_with_the_model(files, capsys, tmp_path):
    err = _error(capsys, ["fit", files["judge"], "--gold", files["gold"], "--model", "factorial"])
    assert "--gold is for --model judge-error" in err
    err = _error(capsys, ["fit", files["seeds"], "--recipes", files["recipes"],
                          "--gold", files["gold"]])  # fmt: skip
    assert "design flags of different models" in err
    err = _error(capsys, ["fit", files["seeds"], "--recipes", files["recipes"],
                          "--recipe-pattern", "(?P<recipe>.)"])  # fmt: skip
    assert "not both" in err
    err = _error(capsys, ["plan", "--population", "0.3", "0.4", "0.1", "0.1", "--runs", "2"])
    assert "--runs: only with a training-seeds --fit" in err
    fake = tmp_path / "fit.nc"
    fake.write_bytes(b"")
    err = _error(capsys, ["report", str(fake), "--gold", files["gold"]])
    assert "apply to DATA" in err


def test_design_input_errors_do_not_import_pymc(files):
    script = (
        "import sys, io, contextlib\n"
        "from evalbayes.cli import main\n"
        "with contextlib.redirect_stderr(io.StringIO()):\n"
        f"    code = main(['fit', {files['judge']!r}, '--gold', {files['factors']!r}])\n"
        "heavy = ('pymc', 'pytensor', 'arviz', 'nutpie')\n"
        "print([code, sorted(m for m in sys.modules if m.split('.')[0] in heavy)])\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    code, heavy = ast.literal_eval(result.stdout.strip().splitlines()[-1])
    assert code == 2 and heavy == []
