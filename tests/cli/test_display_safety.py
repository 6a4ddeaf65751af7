"""Display (issue 28, hostile-input audit item 6).

Before: CSV exports wrote names such as ``=HYPERLINK(...)`` as live spreadsheet formulas;
bidi overrides and look-alike names (zero-width, homoglyph, NFC/NFD) were neither shown nor
warned in the HTML report; a valid n = 10^9 fit's report aborted on a negative error bar
("'xerr' must not contain negative values").
"""

from __future__ import annotations

import csv
import io as textio
import json
import unicodedata
import warnings

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import evalbayes as eb
from evalbayes._core.names import hidden_characters, lookalike_names, name_skeleton
from evalbayes.cli import main
from evalbayes.cli._output import formula_safe
from evalbayes.plots import plot_system_forest
from evalbayes.plots._common import ROUNDING, error_arms
from evalbayes.report import write_report
from evalbayes.report._html import escape

FORMULA = '=HYPERLINK("http://evil.example","x")'


def test_csv_exports_neutralise_formulas(tmp_path, capsys):
    table = tmp_path / "f.csv"
    rows = [(FORMULA, "t1", 3), (FORMULA, "t2", 5), ("+B", "t1", 7), ("+B", "t2", 6),
            ("@C", "t1", 1), ("@C", "t2", 2), ("-D", "t1", 4), ("-D", "t2", 9),
            ("\tE", "t1", 4), ("\tE", "t2", 5), ("plain", "t1", 2), ("plain", "t2", 2)]
    with table.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["system", "task", "n", "c"])
        writer.writerows((s, t, 10, c) for s, t, c in rows)
    assert main(["crosscheck", str(table), "--format", "csv"]) == 0
    out = list(csv.DictReader(textio.StringIO(capsys.readouterr().out)))
    systems = [r["system"] for r in out]
    assert systems == ["'" + FORMULA, "'+B", "'@C", "'-D", "'\tE", "plain"]
    assert all(not s.startswith(("=", "+", "-", "@", "\t")) for s in systems)
    # JSON keeps the names verbatim, and numbers (negative ones too) stay numbers
    assert main(["crosscheck", str(table), "--format", "json"]) == 0
    names = [r["system"] for r in json.loads(capsys.readouterr().out)["systems"]]
    assert names[0] == FORMULA
    frame = formula_safe(__import__("pandas").DataFrame({"d": [-0.05, 0.1], "s": ["-x", "y"]}))
    assert frame["d"].tolist() == [-0.05, 0.1] and frame["s"].tolist() == ["'-x", "y"]


def test_lookalike_and_hidden_names_are_found():
    nfc = unicodedata.normalize("NFC", "café")
    nfd = unicodedata.normalize("NFD", "café")
    groups = lookalike_names(["GPT-4", "G\u0420\u0422-4", nfc, nfd, "a\u200bb", "ab", "x"])
    assert groups == [("GPT-4", "G\u0420\u0422-4"), (nfc, nfd), ("a\u200bb", "ab")]
    assert name_skeleton("Ｏpus") == name_skeleton("opus")  # full-width letters (NFKC)
    assert hidden_characters("gpt\u202e4") == ["U+202E"]
    assert hidden_characters("tab\tand\nnewline") == []
    assert lookalike_names(["a", "b", "A1", "a1 "]) == []


def test_html_shows_hidden_characters_visibly():
    out = escape("evil\u202egnp.exe \u200b<b>")
    assert "\u202e" not in out and "\u200b" not in out
    assert "⟨U+202E⟩" in out and "⟨U+200B⟩" in out and "&lt;b&gt;" in out
    assert escape("plain & simple") == "plain &amp; simple"


def test_report_warns_on_lookalike_and_bidi_names(tmp_path):
    systems = ["GPT-4", "G\u0420\u0422-4", "evil\u202eexe.txt"]
    data = eb.EvalData.from_arrays(np.full((3, 4), 10), [[3, 5, 4, 6], [7, 6, 8, 5],
                                                         [2, 2, 3, 1]], systems=systems)
    fit = eb.BetaBinomialModel(pooling="none").fit(data, seed=1, draws=100, chains=2)
    with pytest.warns(UserWarning, match="look-alike or hidden-character names"):
        path = write_report(data, fit=fit, output=tmp_path / "r.html")
    html = path.read_text()
    assert "\u202e" not in html  # never raw: the name cannot read backwards
    assert "⟨U+202E⟩" in html
    assert "Names that look alike or hide characters" in html
    assert "GPT-4" in html and "\\u0420" in html  # the pair listed with escapes
    with warnings.catch_warnings(), pytest.warns(UserWarning):
        md = write_report(data, fit=fit, output=tmp_path / "r.md", markdown=True).read_text()
    assert "\u202e" not in md and "⟨U\\+202E⟩" in md  # Markdown escapes the +


def test_error_arms_clip_rounding_only():
    centre = np.array([0.3 + 1e-17, 0.5])
    arms = error_arms(centre, [0.3 + 2e-17, 0.4], [0.3 + 3e-17, 0.6])
    assert (arms >= 0).all()
    np.testing.assert_allclose(arms[:, 1], [0.1, 0.1])
    with pytest.raises(ValueError, match="does not contain its centre"):
        error_arms([0.5], [0.6], [0.7])
    tiny = 0.5 * ROUNDING
    assert error_arms([0.5], [0.5 + tiny], [0.6])[0, 0] == 0.0


def test_a_billion_trials_fit_draws_its_forest_plot():
    """n = 10^9 per cell: the exact posterior's draws agree to ~10^-5, and the mean fell a
    rounding error outside the equal-tailed interval (the report aborted)."""
    n = np.full((2, 3), 10**9)
    c = np.array([[3, 5, 4], [7, 6, 8]]) * 10**8
    data = eb.EvalData.from_arrays(n, c, systems=["A", "B"])
    fit = eb.BetaBinomialModel(pooling="none").fit(data, seed=1, draws=500, chains=2)
    ax = plot_system_forest(fit.pass_at_k([1, 2]))
    assert ax.figure is not None
