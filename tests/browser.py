"""Headless Chromium for the report tests: run a page, inject a probe, read console lines.

Chromium is driven from the command line (``--dump-dom``, ``--screenshot``), with no Python
browser package. The report has no script; to check the images, a TEST COPY of the page gets a
small inline probe that writes each image's decoded size into the DOM, which ``--dump-dom``
returns. Console messages (errors, blocked loads) appear in Chromium's stderr log as
``CONSOLE`` lines.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from evalbayes.report._html import COLLAPSE_ROWS, CSP

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium; CI installs "
    "it in .ci/run)",
)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
)
CONSOLE = re.compile(r"CONSOLE[:(]")
PROBE = """<script>
(function () {
  var errors = [];
  window.addEventListener('error', function (e) {
    var t = e.target || {};
    errors.push(String(t.tagName || 'window') + ':' + String(t.src || e.message));
  }, true);
  window.addEventListener('load', function () {
    var images = Array.prototype.map.call(document.images, function (img) {
      return [img.naturalWidth, img.naturalHeight, img.complete];
    });
    var out = document.createElement('pre');
    out.id = 'evalbayes-probe';
    out.textContent = JSON.stringify({
      images: images,
      tables: document.querySelectorAll('table').length,
      sections: Array.prototype.map.call(document.querySelectorAll('section'),
                                         function (s) { return s.id; }),
      errors: errors,
      viewport: window.innerWidth,
      page_width: document.documentElement.scrollWidth,
      layout: Array.prototype.map.call(document.querySelectorAll('table'), function (t) {
        var box = t.parentElement;
        return {id: t.id, rows: t.tBodies.length ? t.tBodies[0].rows.length : 0,
                collapsed: !!t.closest('details'),
                width: t.getBoundingClientRect().width, box: box.clientWidth,
                box_overflow: getComputedStyle(box).overflowX,
                box_right: box.getBoundingClientRect().right};
      })
    });
    document.body.appendChild(out);
  });
})();
</script>"""


def run_chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def probe_copy(html: str, path: Path) -> Path:
    """A copy of the page that runs the probe (its CSP allows this one inline script)."""
    assert html.count(CSP) == 1
    relaxed = html.replace(CSP, CSP + "; script-src 'unsafe-inline'")
    head = relaxed.index("<style>")
    path.write_text(relaxed[:head] + PROBE + relaxed[head:], encoding="utf-8")
    return path


def probe(dom: str) -> dict:
    match = re.search(r'<pre id="evalbayes-probe">(.*?)</pre>', dom, re.S)
    assert match, "the probe did not run (no result in the dumped DOM)"
    return json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE.search(line)]


def check_layout_at_1280(page: Path, tmp_path: Path, must_fit: tuple[str, ...] = ()) -> dict:
    """Load a probe copy of ``page`` at 1280 px and check that nothing is clipped: the page is
    no wider than the window, every table either fits its box or scrolls inside it (its own
    horizontal scroll bar; the tables of ``must_fit`` must fit), no box reaches past the
    window, and every table of more than COLLAPSE_ROWS rows is under a closed "show all"
    element."""
    copy = probe_copy(page.read_text(encoding="utf-8"), tmp_path / "probe1280.html")
    result = run_chromium(copy, tmp_path / "profile", "--window-size=1280,900",
                          "--virtual-time-budget=5000", "--dump-dom")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    found = probe(result.stdout)
    assert found["viewport"] == 1280
    assert found["page_width"] <= 1280
    for table in found["layout"]:
        if table["collapsed"]:
            continue  # not rendered until opened (its box has no width)
        assert table["box_right"] <= 1280, table
        assert table["rows"] <= COLLAPSE_ROWS, table
        if table["id"] in must_fit:
            assert table["width"] <= table["box"] + 0.5, table
        elif table["width"] > table["box"] + 0.5:
            assert table["box_overflow"] in ("auto", "scroll"), table
    return found
