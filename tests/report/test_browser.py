"""The report in a real browser: headless Chromium loads it offline with no console errors,
every image decodes, the tables are there; a screenshot is saved.

Chromium is driven from the command line (``--dump-dom``, ``--screenshot``), with no Python
browser package. The report has no script; to check the images, a TEST COPY of the page gets a
small inline probe that writes each image's decoded size into the DOM, which ``--dump-dom``
returns. Console messages (errors, blocked loads) appear in Chromium's stderr log as
``CONSOLE`` lines. A negative control (a broken image and an external load) shows that the
harness does catch both. Set ``EVALBAYES_SCREENSHOT=path.png`` to keep the screenshot.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
from pathlib import Path

import pytest
from browser import (
    check_layout_at_1280,
    console_lines,
    needs_chromium,
    probe,
    probe_copy,
    run_chromium,
)

import evalbayes as eb
from evalbayes.report import write_report

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    data = eb.datasets.load("tinyagent", experiment="sec17.7")
    meta = folder / "protocol.toml"
    meta.write_text(
        'harness = "TinyAgent gym, training configuration (seed 000 ch. 17.1)"\n'
        "episodes_per_task = 64\ntemperature = 1.0\n"
        'success = "submitted and every hidden test passed"\n',
        encoding="utf-8",
    )
    fit = eb.BetaBinomialModel().fit(data, draws=300, seed=0, check=False)
    return write_report(data, fit=fit, output=folder / "report.html", meta=meta)


def test_report_loads_without_console_errors(report, tmp_path):
    result = run_chromium(report, tmp_path / "profile", "--virtual-time-budget=5000",
                          "--dump-dom")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert console_lines(result.stderr) == []
    dom = result.stdout
    source = report.read_text(encoding="utf-8")
    assert dom.count("<table") == source.count("<table") >= 10
    for key in ("data", "systems", "curves", "comparisons", "items", "checks", "protocol",
                "guide", "reproduce"):  # fmt: skip
        assert f'<section id="{key}">' in dom


def test_every_image_decodes_and_tables_are_present(report, tmp_path):
    page = probe_copy(report.read_text(encoding="utf-8"), tmp_path / "probe.html")
    result = run_chromium(page, tmp_path / "profile", "--virtual-time-budget=5000",
                          "--dump-dom")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    found = probe(result.stdout)
    assert len(found["images"]) == 5
    for width, height, complete in found["images"]:
        assert complete and width > 200 and height > 100
    assert found["tables"] >= 10
    assert found["errors"] == []
    assert console_lines(result.stderr) == []


def test_the_harness_catches_broken_images_and_external_loads(report, tmp_path):
    """Negative control: the same checks fail on a page with a broken image and a blocked
    external load, so the passing tests above are not vacuous."""
    html = report.read_text(encoding="utf-8")
    broken = re.sub(r'src="data:image/png;base64,[^"]+"', 'src="data:image/png;base64,AAAA"',
                    html, count=1)  # fmt: skip
    broken = broken.replace("</main>", '<img src="https://example.invalid/x.png" alt=""></main>')
    page = probe_copy(broken, tmp_path / "broken.html")
    result = run_chromium(page, tmp_path / "profile", "--virtual-time-budget=5000",
                          "--dump-dom")  # fmt: skip
    found = probe(result.stdout)
    widths = [w for w, _, _ in found["images"]]
    assert widths[0] == 0 and widths[-1] == 0
    assert console_lines(result.stderr), "the blocked external load was not logged"


def test_screenshot(report, tmp_path):
    shot = tmp_path / "report.png"
    result = run_chromium(report, tmp_path / "profile", "--window-size=1280,2000",
                          f"--screenshot={shot}")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1280, 2000)
    assert len(png) > 50_000  # a rendered page, not a blank one
    keep = os.environ.get("EVALBAYES_SCREENSHOT")
    if keep:
        Path(keep).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, keep)


def test_at_1280_px_the_verdict_tables_fit(report, tmp_path):
    """The comparisons tables (Bayesian verdict beside the frequentist half and the MDE)
    fit the page at 1280 px: nothing clipped, no table wider than its box."""
    found = check_layout_at_1280(report, tmp_path, must_fit=("pairs", "per-system",
                                                             "pairs-bayes", "pairs-frequentist"))
    ids = {t["id"] for t in found["layout"]}
    assert {"pairs", "per-system", "pass-at-k"} <= ids
