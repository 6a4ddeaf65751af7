"""The report at leaderboard size (110 systems): collapsed tables, readable figures, and the
browser check when headless Chromium is installed."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest
from browser import (
    check_layout_at_1280,
    console_lines,
    needs_chromium,
    probe,
    probe_copy,
    run_chromium,
)

from evalbayes.data import EvalData
from evalbayes.models.beta_binomial._model import BetaBinomialModel
from evalbayes.report import write_report
from evalbayes.report._systems import TABLE_TOP


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = np.ones((110, 60), int)
    c = rng.binomial(1, np.linspace(0.05, 0.8, 110)[:, None] * np.ones((1, 60)))
    data = EvalData.from_arrays(n, c)
    fit = BetaBinomialModel(pooling="complete").fit(data, draws=100, chains=2, seed=0)
    folder = tmp_path_factory.mktemp("leaderboard")
    return write_report(data, fit=fit, output=folder / "report.html"), data


def test_long_tables_are_collapsed(report):
    path, data = report
    html = path.read_text(encoding="utf-8")
    per_system = re.search(r'<table[^>]*id="per-system".*?</table>', html, re.S)
    assert per_system is not None
    rows = per_system.group(0).count("<tr") - 1
    assert TABLE_TOP <= rows < len(data.systems) // 2
    assert f"top {TABLE_TOP} of {len(data.systems)} systems" in html


def test_figures_decode_and_forest_is_present(report, tmp_path):
    path, _ = report
    html = path.read_text(encoding="utf-8")
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(images) >= 5
    for i, img in enumerate(images):
        png = base64.b64decode(img)
        assert png.startswith(b"\x89PNG")
        (tmp_path / f"fig{i}.png").write_bytes(png)
    assert "ordered by posterior mean" in html or "best first" in html


@needs_chromium
def test_leaderboard_report_in_browser(report, tmp_path):
    path, _ = report
    page = probe_copy(path.read_text(encoding="utf-8"), tmp_path / "probe.html")
    result = run_chromium(page, tmp_path / "profile", "--virtual-time-budget=5000",
                          "--dump-dom")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    found = probe(result.stdout)
    assert found["errors"] == []
    for width, height, complete in found["images"]:
        assert complete and width > 200 and height > 100
    assert console_lines(result.stderr) == []


@needs_chromium
def test_at_1280_px_no_table_overflows_and_long_tables_are_collapsed(report, tmp_path):
    path, data = report
    found = check_layout_at_1280(path, tmp_path, must_fit=("per-system", "pairs"))
    long = [t for t in found["layout"] if t["rows"] >= len(data.systems)]
    assert long, "the 110-system report has tables listing every system"
    assert all(t["collapsed"] for t in long)
    html = path.read_text(encoding="utf-8")
    assert html.count("<summary>show all ") == html.count("<details")
