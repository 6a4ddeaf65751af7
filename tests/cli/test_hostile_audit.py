"""Hostile audit (reliability issue, bad 9 and weak items; docs/hostile_audit.md).

Each test reproduces one hostile input that ended badly before its fix.
"""

from __future__ import annotations

import json
import warnings

import matplotlib
import numpy as np
import pytest

from paths import ROOT

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.text import Text

import evalbayes as eb
from evalbayes._core.names import LABEL_WIDTH, display_label
from evalbayes.cli import main
from evalbayes.plots import (
    plot_comparison,
    plot_pass_at_k,
    plot_superiority_matrix,
    plot_system_forest,
)
from evalbayes.plots._common import MAX_LINE

LONG_A = "X" * 100_000 + "a"
LONG_B = "X" * 100_000 + "b"
DOLLAR = "$\\alpha$_sys"


def hostile_data() -> eb.EvalData:
    rng = np.random.default_rng(5)
    c = rng.integers(0, 11, size=(4, 8))
    return eb.EvalData.from_arrays(
        np.full((4, 8), 10), c, systems=[LONG_A, LONG_B, DOLLAR, "tab\tand\nnewline"]
    )


@pytest.fixture(scope="module")
def fit():
    return eb.BetaBinomialModel(pooling="none").fit(hostile_data(), seed=1, draws=50, chains=2)


def texts(ax) -> list[str]:
    ax.figure.canvas.draw()
    found = [t.get_text() for t in ax.figure.findobj(Text)]
    for axes in ax.figure.axes:
        found += [t.get_text() for t in axes.get_yticklabels() + axes.get_xticklabels()]
    return found


# ---------------------------------------------------------------------------- labels
def test_display_label_is_short_printable_and_keeps_long_names_apart():
    a, b = display_label(LONG_A), display_label(LONG_B)
    assert len(a) <= LABEL_WIDTH and len(b) <= LABEL_WIDTH
    assert a != b and "…" in a
    head_twins = display_label("Y" * 50 + "1" + "Y" * 50), display_label("Y" * 50 + "2" + "Y" * 50)
    assert head_twins[0] != head_twins[1]  # differ only in the middle: the digest tells
    assert display_label("gpt-4o") == "gpt-4o"
    assert display_label("a\nb\x1b[31m") == "a\\nb\\x1b[31m"


def test_plots_shorten_long_names_and_print_dollars_as_written(fit, tmp_path):
    curves = fit.pass_at_k([1, 2, 4])
    for ax in (plot_pass_at_k(curves), plot_system_forest(curves)):
        shown = texts(ax)
        assert max(len(line) for t in shown for line in t.split("\n")) <= MAX_LINE
        assert any("\\$\\alpha\\$" in t for t in shown)  # escaped: mathtext prints it as is
        ax.figure.savefig(tmp_path / "hostile.png")
        plt.close(ax.figure)
    comparison = eb.compare(fit, k=1)
    for ax in (plot_comparison(comparison), plot_superiority_matrix(comparison)):
        shown = texts(ax)
        assert max(len(line) for t in shown for line in t.split("\n")) <= MAX_LINE
        plt.close(ax.figure)


def test_report_of_a_100k_character_name_is_written(tmp_path, fit):
    from evalbayes.report import write_report

    path = write_report(fit.data, fit=fit, output=tmp_path / "r.html", seed=0)
    html = path.read_text()
    assert display_label(LONG_A) in html or LONG_A in html


def test_cli_table_shows_labels_and_csv_keeps_full_names(tmp_path, fit, capsys):
    saved = fit.save(tmp_path / "fit.nc")
    assert main(["summary", str(saved), "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert LONG_A not in out and display_label(LONG_A, 80) in out
    assert "\x1b" not in out and "\\n" in out
    assert main(["summary", str(saved), "--k", "1", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["system"] for r in rows} >= {LONG_A, LONG_B}


def test_plot_cli_with_mathtext_names(tmp_path, fit):
    saved = fit.save(tmp_path / "fit2.nc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["plot", str(saved), "--k", "1", "2", "-o", str(tmp_path / "p.png")])
    assert code == 0 and (tmp_path / "p.png").stat().st_size > 0


# ------------------------------------------------------------- one task, non-converged
def test_population_estimand_of_one_task_warns_and_summary_notes_it():
    from evalbayes.io import OneTaskWarning

    data = eb.EvalData.from_arrays([[10], [10]], [[3], [7]], systems=["A", "B"], tasks=["only"])
    fit = eb.BetaBinomialModel().fit(data, seed=0, draws=100, chains=2)
    with pytest.warns(OneTaskWarning, match="single task"):
        fit.pass_at_k(1, estimand="population")
    with pytest.warns(OneTaskWarning):
        table = fit.summary(k=1)
    population = table[table["estimand"] == "population"]
    assert (population["note"] == "population interval rests on one task").all()
    assert (table.loc[table["estimand"] == "tasks", "note"] == "").all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", OneTaskWarning)
        fit.pass_at_k(1)  # the tasks estimand describes this task: no warning


@pytest.fixture(scope="module")
def unconverged(tmp_path_factory):
    data = eb.EvalData.from_arrays(np.full((2, 6), 5), [[0, 1, 2, 3, 4, 5], [1, 1, 2, 2, 5, 5]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = eb.BetaBinomialModel().fit(data, method="nutpie", seed=0, draws=50, tune=50,
                                         chains=2, check=False)
    assert not fit.diagnostics(warn=False).passed  # 100 draws: ESS far below the bar
    return fit.save(tmp_path_factory.mktemp("fits") / "unconverged.nc")


def test_loading_a_non_converged_fit_warns_once_and_compare_warns(unconverged):
    from evalbayes.results._diagnostics import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = eb.load(unconverged)
    loud = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(loud) == 1 and "failed its convergence diagnostics" in str(loud[0].message)
    with pytest.warns(ConvergenceWarning, match="compare"):
        eb.compare(fit, k=1)


# ------------------------------------------------------------------- audit fixes
def test_draws_of_a_billion_are_refused_before_sampling(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("system,task,n,c\nA,t1,10,3\nA,t2,10,5\n")
    with pytest.raises(ValueError, match="draws x chains"):
        eb.BetaBinomialModel(pooling="none").fit(eb.EvalData.from_arrays([10], [3]),
                                                 draws=10**9)
    code = main(["fit", str(table), "--draws", str(10**9), "-o", str(tmp_path / "f.nc")])
    assert code == 2 and "draws x chains" in capsys.readouterr().err


def test_cli_warnings_read_as_messages_and_tables_keep_short_notes(tmp_path):
    data = eb.EvalData.from_arrays([[10], [10]], [[3], [7]], systems=["A", "B"])
    fit = eb.BetaBinomialModel().fit(data, seed=0, draws=100, chains=2)
    saved = fit.save(tmp_path / "one.nc")
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", "evalbayes.cli", "summary", str(saved)],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0
    assert "evalbayes: warning (OneTaskWarning):" in done.stderr
    assert "results.py" not in done.stderr
    assert "population interval rests on one task" in done.stdout


def test_from_frame_with_a_duplicated_column_is_a_value_error():
    import pandas as pd

    frame = pd.DataFrame([["A", "t", 10, 3, 4]], columns=["system", "task", "n", "c", "c"])
    with pytest.raises(ValueError, match=r"\['c'\] twice"):
        eb.EvalData.from_frame(frame)


def test_crosscheck_table_shortens_long_names_but_keeps_them_apart():
    import pandas as pd

    from evalbayes import EvalData
    from evalbayes.frequentist.crosscheck import crosscheck

    names = ["x" * 100_000 + "a", "x" * 100_000 + "b"]
    frame = pd.DataFrame({"system": names, "task": ["t", "t"], "n": [5, 5], "c": [2, 3]})
    report = crosscheck(EvalData.from_frame(frame))
    lines = report.format_table().splitlines()
    assert max(len(line) for line in lines) < 200
    rows = [line for line in lines if line.startswith("xxx")]
    assert len(set(rows)) == len(rows) >= 2
    assert {s["system"] for s in report.to_dict()["records"]} == set(names)


def test_symlink_loops_and_broken_links_are_named(tmp_path):
    import evalbayes as eb
    from evalbayes.cli import main

    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    broken = tmp_path / "broken.nc"
    broken.symlink_to(tmp_path / "nowhere.nc")
    with pytest.raises(FileNotFoundError, match="symbolic link loop"):
        eb.read(loop)
    with pytest.raises(FileNotFoundError, match="broken symbolic link"):
        eb.load(broken)
    assert main(["crosscheck", str(loop)]) == 2


def test_boolean_arrays_are_not_counts():
    import numpy as np

    from evalbayes import EvalData

    solved = np.array([[True, False], [True, True]])
    with pytest.raises(ValueError, match="boolean array"):
        EvalData.from_arrays(np.ones((2, 2), int), solved)
    data = EvalData.from_arrays(np.ones((2, 2), int), solved.astype(int))
    assert int(data.c.values.sum()) == 3
