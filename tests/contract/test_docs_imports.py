"""Every import of evalbayes in the README, the docs, the notebooks and the benchmarks uses a
public path (no part starting with ``_``) and a name that path exports (its ``__all__``).

Those are what users copy; a private path there would pin an implementation detail. A
benchmark that must measure a private kernel says so on the import line (``# white-box``).
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import warnings
from pathlib import Path

import pytest

from paths import ROOT

FENCE = re.compile(r"```(?:python|py)\n(.*?)```", re.S)
IMPORT_LINE = re.compile(r"^\s*(from\s+evalbayes\S*\s+import\s+.*|import\s+evalbayes\S*.*)$", re.M)


def sources() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "models" / "README.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    files += sorted((ROOT / "notebooks").glob("*.ipynb"))
    files += sorted((ROOT / "benchmarks").rglob("*.py"))
    files += sorted((ROOT / "benchmarks").rglob("*.md"))
    return [f for f in files if f.exists()]


def code_of(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return [text]
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return FENCE.findall(text)


def imports_in(code: str) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every evalbayes import (``names`` empty for ``import x``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:  # a snippet with placeholders: read the import lines alone
        lines = IMPORT_LINE.findall(code.replace("(\n", "(").replace(",\n", ", "))
        tree = ast.parse("\n".join(line.strip().rstrip("\\") for line in lines) or "pass")
    found = []
    lines = code.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and "white-box" in lines[node.lineno - 1]:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "evalbayes":
                found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] == "evalbayes"]
    return found


CASES = [(path, module, names) for path in sources() for code in code_of(path)
         for module, names in imports_in(code)]


def _id(case: tuple[Path, str, list[str]]) -> str:
    return f"{case[0].relative_to(ROOT)}:{case[1]}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_documented_imports_are_public(case: tuple[Path, str, list[str]]) -> None:
    path, module_name, names = case
    private = [p for p in module_name.split(".") if p.startswith("_")]
    assert not private, f"{path.name} imports the private path {module_name}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = importlib.import_module(module_name)
    exported = set(getattr(module, "__all__", dir(module)))
    for name in names:
        submodule = f"{module_name}.{name}"
        is_public_package = (ROOT / "src" / Path(*submodule.split("."))).joinpath(
            "__init__.py").exists() and not name.startswith("_")
        assert name in exported or is_public_package, (
            f"{path.name}: `from {module_name} import {name}`: {name} is not in "
            f"{module_name}.__all__"
        )


def test_the_scan_finds_the_readme_tour() -> None:
    """Negative control: the README's tour imports evalbayes, so the scan must see it."""
    assert any(c[0].name == "README.md" and c[1] == "evalbayes" for c in CASES)
    assert imports_in("from evalbayes.models._base import Model") == [
        ("evalbayes.models._base", ["Model"])]
