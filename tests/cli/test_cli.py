"""The evalbayes command: outputs, exit codes, and a fast start for frequentist commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evalbayes.cli import main
from paths import ROOT

EXE = [sys.executable, "-m", "evalbayes.cli"]


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_crosscheck_does_not_import_pymc():
    code = (
        "import sys, io, contextlib\n"
        "from evalbayes.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['crosscheck', 'dataset:tinyagent', '--k', '1', '2'])\n"
        "bad = [m for m in ('pymc', 'pytensor', 'arviz', 'nutpie', 'matplotlib') "
        "if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_crosscheck_table_json_csv(capsys, tmp_path):
    args = ["crosscheck", "dataset:tinyagent", "--where", "experiment=sec17.1"]
    code, out, _ = run([*args, "--compare", "RL base", "GRPO 80"], capsys)
    assert code == 0
    assert "GRPO 80" in out and "20.4" in out and "better" in out
    code, out, _ = run([*args, "--format", "json"], capsys)
    payload = json.loads(out)
    assert code == 0 and payload
    target = tmp_path / "x.csv"
    code, _, err = run([*args, "--format", "csv", "-o", str(target)], capsys)
    assert code == 0 and f"wrote {target}" in err
    frame = pd.read_csv(target)
    assert set(frame["system"]) == {"RL base", "GRPO 80"}


def test_bad_input_exits_2_and_names_the_rule(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"system": ["A"], "task": ["t"], "n": [2], "c": [3]}).to_csv(bad, index=False)
    code, _, err = run(["crosscheck", str(bad)], capsys)
    assert code == 2
    assert "c=3 > n=2" in err and "line 2" in err
    code, _, err = run(["crosscheck", "dataset:nope"], capsys)
    assert code == 2 and "unknown dataset" in err
    code, _, err = run(["crosscheck", "dataset:tinyagent", "--format", "xml"], capsys)
    assert code == 2 and "invalid choice: 'xml'" in err


def test_datasets_lists_licences(capsys):
    code, out, _ = run(["datasets"], capsys)
    assert code == 0 and "tinyagent" in out and "MIT" in out


@pytest.fixture(scope="module")
def fit_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "fit.nc"
    code = main(
        ["fit", "dataset:tinyagent", "--where", "experiment=sec17.1", "-o", str(path),
         "--draws", "500", "--tune", "500", "--chains", "2", "--seed", "3", "--quiet"]
    )
    assert code == 0
    return path


def test_fit_summary_pass_at_k_compare_plot(fit_file, capsys, tmp_path):
    code, out, _ = run(["summary", str(fit_file), "--k", "1", "8"], capsys)
    assert code == 0 and "population" in out and "diagnostics" in out
    code, out, _ = run(
        ["pass-at-k", str(fit_file), "--k", "1", "128", "--metric", "pass^k",
         "--estimand", "population", "--format", "csv"],
        capsys,
    )
    table = pd.read_csv(__import__("io").StringIO(out))
    assert code == 0 and set(table["k"]) == {1, 128} and set(table["metric"]) == {"pass^k"}
    code, out, _ = run(["compare", str(fit_file), "RL base", "GRPO 80", "--format", "json",
                        "--estimand", "tasks"], capsys)
    rows = json.loads(out)
    assert code == 0 and rows[0]["system"] == "GRPO 80" and rows[0]["p_superior"] > 0.99
    code, out, _ = run(["compare", str(fit_file), "RL base", "GRPO 80", "--format", "json"],
                       capsys)
    rows = json.loads(out)  # default: tasks like these, the same direction
    assert code == 0 and rows[0]["estimand"] == "population" and rows[0]["p_superior"] > 0.5
    png = tmp_path / "bands.png"
    code, _, _ = run(["plot", str(fit_file), "-o", str(png)], capsys)
    assert code == 0 and png.stat().st_size > 10_000
    code, _, err = run(["compare", str(fit_file), "RL base"], capsys)
    assert code == 2 and "exactly two" in err


def test_fit_strict_fails_on_non_convergence(capsys, tmp_path):
    code, _, err = run(
        ["fit", "dataset:tinyagent", "--where", "experiment=sec17.1", "-o",
         str(tmp_path / "short.nc"), "--method", "nutpie", "--draws", "20", "--tune", "5",
         "--chains", "2", "--quiet", "--strict"],
        capsys,
    )
    assert code == 1
    assert "did not converge" in err


def test_fit_with_spec(capsys, tmp_path):
    spec = ROOT / "models" / "beta_binomial_no_pooling.toml"
    out = tmp_path / "none.nc"
    code, _, err = run(["fit", "dataset:tinyagent", "--spec", str(spec), "-o", str(out),
                        "--quiet"], capsys)
    assert code == 0 and "exact posterior draws" in err
    code, _, err = run(["fit", "dataset:tinyagent", "--spec", str(spec), "--model", "irt-2pl",
                        "-o", str(out)], capsys)
    assert code == 2 and "conflicts" in err


def test_help_runs():
    result = subprocess.run([*EXE, "--help"], capture_output=True, text=True, check=True)
    assert "crosscheck" in result.stdout and "demo" in result.stdout


def test_demo_writes_tables_and_the_band_plot(capsys, tmp_path):
    code, out, _ = run(["demo", "--draws", "300", "--output-dir", str(tmp_path), "--quiet"],
                       capsys)
    assert code == 0
    assert "population" in out and "P(B>A)" in out and "zero/speed" in out
    assert (tmp_path / "tinyagent_pass_at_k.png").stat().st_size > 10_000
    assert (tmp_path / "tinyagent-rate-grid.nc").exists()  # the default for 3 systems
    assert "fit: rate-grid" in out


def test_irt_fit_items_and_compare_models(fit_file, capsys, tmp_path):
    irt = tmp_path / "irt.nc"
    code, _, _ = run(
        ["fit", "dataset:tinyagent", "--where", "experiment=sec17.1", "--model", "irt-1pl",
         "-o", str(irt), "--draws", "300", "--tune", "300", "--chains", "2", "--quiet"],
        capsys,
    )
    assert code == 0
    code, out, _ = run(["items", str(irt), "--select", "3", "--format", "csv"], capsys)
    table = pd.read_csv(__import__("io").StringIO(out))
    assert code == 0 and len(table) == 3 and "task" in table.columns
    code, out, _ = run(["compare-models", str(irt), str(fit_file)], capsys)
    assert code == 0 and "elpd_loo" in out
    code, _, err = run(["items", str(fit_file)], capsys)  # rate-grid without broken tasks
    assert code == 2 and "needs an IRT fit" in err


def test_fit_without_model_uses_the_default_for_the_data(capsys, tmp_path):
    """One system (tau-bench): the Beta-Binomial; the fit file is named after it."""
    import evalbayes as eb

    code, _, err = run(["fit", "dataset:tau_bench_airline", "-o", str(tmp_path / "tau.nc"),
                        "--quiet"], capsys)
    assert code == 0, err
    assert "fitting beta-binomial" in err
    assert eb.load(tmp_path / "tau.nc").model.name == "beta-binomial"


def test_plot_rates_of_the_default_fit(fit_file, capsys, tmp_path):
    png = tmp_path / "rates.png"
    code, _, err = run(["plot", str(fit_file), "--kind", "rates", "-o", str(png)], capsys)
    assert code in (0, 1) and png.stat().st_size > 10_000, err
    code, _, err = run(["plot", str(fit_file), "--kind", "rates", "--system", "GRPO 80", "-o",
                        str(png)], capsys)
    assert code in (0, 1), err
    code, _, err = run(["plot", str(fit_file), "--kind", "rates", "--system", "nope"], capsys)
    assert code == 2 and "nope" in err
    code, _, err = run(["plot", str(fit_file), "--kind", "rates", "--all-pairs"], capsys)
    assert code == 2 and "--all-pairs applies to --kind comparison" in err
