"""Hostile audit (reliability issue, bad 9 and weak items; docs/hostile_audit.md).

Each test reproduces one hostile input that ended badly before its fix.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.text import Text

import evalbayes as eb
from evalbayes.cli import main
from evalbayes.names import LABEL_WIDTH, display_label
from evalbayes.plots import (
    plot_comparison,
    plot_pass_at_k,
    plot_superiority_matrix,
    plot_system_forest,
)
from evalbayes.plots._common import MAX_LINE

ROOT = Path(__file__).resolve().parents[1]
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
    assert LONG_A not in out and display_label(LONG_A) in out
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
