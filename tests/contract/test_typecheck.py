"""The package type-checks: ``mypy src/evalbayes`` with the settings of ``[tool.mypy]``.

``py.typed`` ships with the package (PEP 561), so users' type checkers read these hints; this
test keeps them true. Skipped, with the reason, where mypy is not installed (it is in the
``test`` extra).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from paths import ROOT


def test_package_ships_py_typed():
    assert (ROOT / "src" / "evalbayes" / "py.typed").exists()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install -e '.[test]')")
@pytest.mark.slow  # compiles a PyMC/nutpie graph or runs mypy: the slow tier
def test_mypy_is_clean(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy_cache"), str(ROOT / "src" / "evalbayes")],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
