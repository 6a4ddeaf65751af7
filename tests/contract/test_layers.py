"""The import-layers contract: no module imports a higher layer, not even inside a function,
and the module graph has no cycles.

Every ``import`` / ``from ... import`` statement of every module under ``src/evalbayes`` is
parsed (module level, functions, ``TYPE_CHECKING`` blocks alike) and the imported evalbayes
module is mapped to its layer. A package's ``__init__`` may re-export its own submodules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from paths import ROOT

SRC = ROOT / "src"
PACKAGE = SRC / "evalbayes"

# Bottom to top: folders are floors. The most specific prefix wins; a prefix matches a module
# and its children. A new top-level module gets a line here and in CONTRIBUTING.md.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("evalbayes._version", "evalbayes._core", "evalbayes.metrics")),
    ("data", ("evalbayes.data", "evalbayes.io", "evalbayes.datasets", "evalbayes.testing")),
    ("frequentist", ("evalbayes.frequentist",)),
    ("inference", ("evalbayes.inference",)),
    ("results", ("evalbayes.results",)),
    ("models", ("evalbayes.models",)),
    ("experimental", ("evalbayes.experimental",)),
    ("analyses", ("evalbayes._persist", "evalbayes.decisions", "evalbayes.suite")),
    ("face", ("evalbayes.plots", "evalbayes.report", "evalbayes.cli",
              "evalbayes.frequentist.crosscheck", "evalbayes.__main__")),
    ("top", ("evalbayes",)),  # the package root re-exports lazily
]
#: The model families: sub-packages of evalbayes.models that never import each other.
FAMILIES = ("beta_binomial", "rate_grid", "irt", "designs", "formula", "graded")
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str:
    if module == "evalbayes":
        return "top"
    best, best_len = None, -1
    for name, prefixes in LAYERS[:-1]:  # "top" is the package root alone
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = name, len(prefix)
    if best is None:
        raise AssertionError(f"module {module} is in no layer: add it to LAYERS")
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every evalbayes module imported anywhere in the file (absolute or relative)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # "from evalbayes.io import helm" imports the submodule evalbayes.io._helm
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if (SRC / Path(*candidate.split("."))).with_suffix(".py").exists() or (
                    SRC / Path(*candidate.split(".")) / "__init__.py"
                ).exists():
                    found.add(candidate)
                else:
                    found.add(target)
    return {m for m in found if m == "evalbayes" or m.startswith("evalbayes.")}


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
GRAPH = {name: imports_of(path) & set(MODULES) for name, path in MODULES.items()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_imports(module: str) -> None:
    own = RANK[layer_of(module)]
    path = MODULES[module]
    upward = []
    for target in sorted(GRAPH[module]):
        if path.name == "__init__.py" and target.startswith(module + "."):
            continue  # a package re-exports its own submodules
        if RANK[layer_of(target)] > own:
            upward.append(f"{target} ({layer_of(target)})")
    assert not upward, f"{module} ({layer_of(module)}) imports a higher layer: {upward}"


def test_no_import_cycles() -> None:
    """Depth-first search for a cycle among evalbayes modules (package inits excluded as
    targets of their own submodules, which Python resolves without a cycle)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def edges(module: str) -> list[str]:
        out = []
        for target in GRAPH[module]:
            if target == module:
                continue
            # a submodule importing its parent package __init__ for a name is how Python
            # packages work when that __init__ only re-exports: ignore parent links
            if module.startswith(target + "."):
                continue
            out.append(target)
        return sorted(out)

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in edges(module):
            if state.get(target) == 1:
                cycle = [*stack[stack.index(target):], target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module)


def test_the_contract_catches_an_upward_import(tmp_path: Path) -> None:
    """Negative control: a results-layer file importing a model is reported."""
    fake = tmp_path / "fake.py"
    fake.write_text("def f():\n    from evalbayes.models.irt import IRTModel\n")
    found = {m for m in imports_of_text(fake.read_text())}
    assert "evalbayes.models.irt" in found
    assert RANK[layer_of("evalbayes.models.irt")] > RANK[layer_of("evalbayes.results._posterior")]


def imports_of_text(text: str) -> set[str]:
    tree = ast.parse(text)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_every_module_is_in_a_layer() -> None:
    """A new module must be placed in LAYERS (the package root is the only 'top' module)."""
    for module in MODULES:
        assert layer_of(module) != "top" or module == "evalbayes", module


def family_of(module: str) -> str | None:
    """The model family a module belongs to (``evalbayes.models.<family>...``), else None."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[:2] == ["evalbayes", "models"] and parts[2] in FAMILIES:
        return parts[2]
    return None


@pytest.mark.parametrize("module", sorted(m for m in MODULES if family_of(m)))
def test_families_import_no_other_family(module: str) -> None:
    """A family imports the shared numerics (``evalbayes.models._*``) and lower floors, never
    another family nor the registry (``evalbayes.models`` itself)."""
    own = family_of(module)
    bad = [t for t in sorted(GRAPH[module])
           if t == "evalbayes.models" or (family_of(t) not in (None, own))]
    assert not bad, f"{module} (family {own}) imports {bad}"


def test_every_family_is_a_folder() -> None:
    models = PACKAGE / "models"
    for family in FAMILIES:
        assert (models / family / "__init__.py").exists(), family
    loose = sorted(p.name for p in models.glob("*.py")
                   if p.name != "__init__.py" and not p.name.startswith("_"))
    assert not loose, f"models/ holds public modules outside a family folder: {loose}"


def test_nothing_stable_imports_experimental() -> None:
    bad = sorted(m for m, targets in GRAPH.items()
                 if not m.startswith("evalbayes.experimental")
                 and any(t.startswith("evalbayes.experimental") for t in targets))
    assert not bad, f"stable modules import evalbayes.experimental: {bad}"


def test_the_family_rule_catches_a_crossing() -> None:
    """Negative control: a rate-grid module importing the IRT family is caught."""
    assert family_of("evalbayes.models.rate_grid._model") == "rate_grid"
    assert family_of("evalbayes.models.irt._items") == "irt"
    assert family_of("evalbayes.models._base") is None
