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

from evalbayes.report._html import CSP

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
      errors: errors
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
