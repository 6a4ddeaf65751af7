"""Hostile CLI inputs (reliability issue): each ends in a clear error or a correct result."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

import evalbayes as eb
from evalbayes.cli import main
from evalbayes.models import RateGridModel
from paths import ROOT

EXACT = ROOT / "models" / "beta_binomial_no_pooling.toml"  # conjugate: exact draws, fast
SHORT = ["--where", "experiment=sec17.1", "--quiet"]


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def usage_error(args: list[str], capsys) -> str:
    """argparse rejects: exit code 2 (``main`` returns it); returns stderr."""
    assert main([str(a) for a in args]) == 2
    return capsys.readouterr().err


@pytest.fixture
def no_sampling(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("sampling started")

    monkeypatch.setattr(eb.BetaBinomialModel, "fit", refuse)
    monkeypatch.setattr(RateGridModel, "fit", refuse)  # the default for several systems


# --------------------------------------------------------------------------- counts and seeds
@pytest.mark.parametrize(("flag", "value"), [
    ("--draws", "0"), ("--chains", "0"), ("--seed", "-1"), ("--random-seed", "-1"),
    ("--draws", "x"),
])  # fmt: skip
def test_fit_rejects_bad_sampler_numbers(flag, value, capsys, no_sampling):
    err = usage_error(["fit", "dataset:tinyagent", flag, value], capsys)
    assert flag in err or "--seed" in err


def test_items_select_zero_is_rejected(capsys):
    assert "--select" in usage_error(["items", "x.nc", "--select", "0"], capsys)


def test_tune_zero_with_nuts_is_refused_before_sampling(capsys, no_sampling):
    code, _, err = run(["fit", "dataset:tinyagent", "--method", "nutpie", "--tune", "0"], capsys)
    assert code == 2 and "--tune must be >= 1" in err and "Traceback" not in err


def test_output_directory_is_refused_before_sampling(capsys, tmp_path, no_sampling):
    code, _, err = run(["fit", "dataset:tinyagent", "-o", tmp_path], capsys)
    assert code == 2 and "is a directory" in err


def test_pathfinder_without_its_package(capsys, monkeypatch, no_sampling):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pymc_extras" else real(name, *a))
    code, _, err = run(["fit", "dataset:tinyagent", "--method", "pathfinder"], capsys)
    assert code == 2 and "pymc-extras" in err


def test_fit_has_no_output_format(capsys, no_sampling):
    code, _, err = run(["fit", "dataset:tinyagent", "--format", "json"], capsys)
    assert code == 2 and "--input-format" in err


# --------------------------------------------------------------------------- ADVI
@pytest.mark.slow  # compiles a PyMC/nutpie graph or runs mypy: the slow tier
def test_advi_one_chain_saves_a_fit_that_summary_reads(capsys, tmp_path):
    path = tmp_path / "advi.nc"
    code, _, err = run(["fit", "dataset:tinyagent", *SHORT, "--method", "advi", "--chains", "1",
                        "--draws", "50", "-o", path], capsys)
    assert code == 0 and path.exists(), err
    for fmt in ("table", "csv", "json"):
        code, out, err = run(["summary", path, "--format", fmt], capsys)
        assert code == 0 and "RL base" in out, err
        assert "variational" in err
    code, _, _ = run(["summary", path, "--strict"], capsys)
    assert code == 1  # no MCMC diagnostics to pass


# --------------------------------------------------------------------------- --where
@pytest.fixture
def table(tmp_path) -> Path:
    path = tmp_path / "counts.csv"
    pd.DataFrame({
        "system": ["A", "A", "A", "B", "B", "B"], "task": ["t1", "t2", "t3"] * 2,
        "n": [4] * 6, "c": [1, 2, 3, 2, 3, 4], "round": [1, 2, 3] * 2,
        "split": ["x", "y", "z"] * 2,
    }).to_csv(path, index=False)  # fmt: skip
    return path


def test_where_matches_an_integer_column(table, capsys):
    code, out, err = run(["crosscheck", table, "--where", "round=2", "--format", "json"], capsys)
    assert code == 0, err
    assert {row["n_tasks"] for row in json.loads(out)["systems"]} == {1}


def test_repeated_where_keys_mean_any_of(table, tmp_path, capsys):
    out = tmp_path / "sel.csv"
    code, _, err = run(["convert", table, "-o", out, "--where", "split=x", "--where",
                        "split=z"], capsys)
    assert code == 0, err
    assert sorted(set(pd.read_csv(out)["task"])) == ["t1", "t3"]
    code, _, err = run(["crosscheck", table, "--where", "split=w"], capsys)
    assert code == 2 and "no value ['w']" in err


def test_where_selects_one_benchmark_of_a_multi_benchmark_table(shared_data, capsys):
    # task ids repeat across benchmarks: the filter must run before the duplicate check
    path = shared_data / "noise_highk_temp0.7.csv.gz"
    code, out, err = run(["crosscheck", path, "--where", "benchmark=aime2024_cot",
                          "--resamples", "200", "--format", "json"], capsys)
    assert code == 0, err
    raw = pd.read_csv(path)
    rows = raw[raw["benchmark"] == "aime2024_cot"]
    report = json.loads(out)["systems"]
    assert len(report) == rows["system"].nunique()
    assert {r["n_tasks"] for r in report} == {rows["task_id"].nunique()}


# --------------------------------------------------------------------------- convert
def test_convert_format_json_is_honoured_or_refused(table, tmp_path, capsys):
    jsonl = tmp_path / "c.jsonl"
    assert run(["convert", table, "--format", "json", "-o", jsonl], capsys)[0] == 0
    assert len(pd.read_json(jsonl, lines=True)) == 6
    code, _, err = run(["convert", table, "--format", "json", "-o", tmp_path / "c.csv"], capsys)
    assert code == 2 and ".jsonl" in err and not (tmp_path / "c.csv").exists()
    code, _, err = run(["convert", table, "--format", "table", "-o", tmp_path / "c.csv"], capsys)
    assert code == 2


def test_convert_refuses_to_overwrite_its_input(table, capsys):
    before = table.read_bytes()
    code, _, err = run(["convert", table, "-o", table], capsys)
    assert code == 2 and "also an input" in err and table.read_bytes() == before


# --------------------------------------------------------------------------- reader flags
def _swe(folder: Path) -> Path:
    path = folder / "results" / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"resolved": ["b"], "applied": ["b"]}))
    return path


def test_swe_bench_from_the_cli_with_universe(tmp_path, capsys):
    logs = _swe(tmp_path / "sysA")
    code, _, err = run(["crosscheck", logs], capsys)
    assert code == 2 and "--universe" in err  # the message names the CLI flag
    ids = tmp_path / "ids.txt"
    ids.write_text("a\nb\nc\n")
    code, out, err = run(["crosscheck", logs, "--universe", ids, "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["systems"][0]["n_tasks"] == 3


def test_missing_outcomes_flag(tmp_path, capsys):
    trials = tmp_path / "trials.csv"
    trials.write_text("system,task,success\nA,t1,1\nA,t1,\nA,t2,0\n")
    code, _, err = run(["crosscheck", trials, "--input-format", "trials"], capsys)
    assert code == 2 and "--missing" in err
    out = tmp_path / "c.csv"
    code, _, err = run(["convert", trials, "--input-format", "trials", "--missing", "failure",
                        "-o", out], capsys)
    assert code == 0, err
    assert pd.read_csv(out).set_index("task").loc["t1", "n"] == 2


def test_a_reader_option_the_format_does_not_take(table, capsys):
    code, _, err = run(["crosscheck", table, "--universe", "x.txt"], capsys)
    assert code == 2 and "--universe" in err
    code, _, err = run(["crosscheck", "dataset:tinyagent", "--threshold", "0.5"], capsys)
    assert code == 2 and "--threshold" in err


# --------------------------------------------------------------------------- reused fits
@pytest.fixture(scope="module")
def short_fit(tmp_path_factory) -> Path:
    """A fit that fails its diagnostics (far too few draws)."""
    path = tmp_path_factory.mktemp("short") / "short.nc"
    main(["fit", "dataset:tinyagent", *SHORT, "--method", "nutpie", "--draws", "20", "--tune",
          "5", "--chains", "2", "-o", str(path)])
    return path


@pytest.mark.parametrize("command", [
    ["summary"], ["summary", "--format", "csv"], ["summary", "--format", "json"],
    ["pass-at-k", "--format", "csv"], ["compare", "--format", "json"],
])  # fmt: skip
def test_a_failed_fit_warns_when_reused(command, short_fit, capsys):
    code, out, err = run([command[0], short_fit, *command[1:]], capsys)
    assert code == 0 and out and "did not converge" in err
    code, _, err = run([command[0], short_fit, *command[1:], "--strict"], capsys)
    assert code == 1 and "did not converge" in err


@pytest.fixture(scope="module")
def exact_fits(tmp_path_factory) -> list[Path]:
    """Two exact (conjugate) fits saved under the same file name in two folders."""
    root = tmp_path_factory.mktemp("exact")
    paths = []
    for folder in ("a", "b"):
        (root / folder).mkdir()
        path = root / folder / "fit.nc"
        assert main(["fit", "dataset:tinyagent", "--spec", str(EXACT), "-o", str(path),
                     "--quiet"]) == 0
        paths.append(path)
    return paths


def test_compare_models_with_the_same_file_name(exact_fits, capsys):
    code, out, err = run(["compare-models", *exact_fits, "--format", "csv"], capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert set(frame["name"]) == {str(p) for p in exact_fits}
    code, _, err = run(["compare-models", exact_fits[0], exact_fits[0]], capsys)
    assert code == 2 and "twice" in err


def test_ppc_plot_of_a_multi_system_fit(exact_fits, capsys, tmp_path):
    png = tmp_path / "ppc.png"
    code, _, err = run(["plot", exact_fits[0], "--kind", "ppc", "-o", png], capsys)
    assert code == 0 and png.stat().st_size > 10_000, err
    code, _, err = run(["plot", exact_fits[0], "--kind", "ppc", "--system", "RL base", "-o",
                        png], capsys)
    assert code == 0, err
    code, _, err = run(["plot", exact_fits[0], "--kind", "ppc", "--system", "nope"], capsys)
    assert code == 2 and "nope" in err
    code, _, err = run(["plot", exact_fits[0], "--kind", "rates"], capsys)
    assert code == 2 and "needs a rate-grid fit" in err
