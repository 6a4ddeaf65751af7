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

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "evalbayes"

# Bottom to top. The most specific prefix wins; a prefix matches a module and its children.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("maths", ("evalbayes._version", "evalbayes.names", "evalbayes.metrics",
               "evalbayes.intervals", "evalbayes.sbc", "evalbayes.rendering",
               "evalbayes.attempt_metrics", "evalbayes.curves_fast",
               "evalbayes.curves_kernel")),
    ("data", ("evalbayes.data", "evalbayes.io", "evalbayes.datasets", "evalbayes.extrapolation")),
    ("frequentist", ("evalbayes.frequentist",)),
    ("inference", ("evalbayes.inference", "evalbayes.fingerprint")),
    ("results", ("evalbayes.results", "evalbayes.diagnostics")),
    ("models", ("evalbayes.models", "evalbayes.items")),
    ("persist", ("evalbayes.persist",)),
    ("analyses", ("evalbayes.comparison", "evalbayes.model_comparison",
                  "evalbayes.decisions", "evalbayes.suite")),
    ("face", ("evalbayes.plots", "evalbayes.report", "evalbayes.cli",
              "evalbayes.frequentist.crosscheck", "evalbayes.crosscheck")),
    ("top", ("evalbayes",)),  # the package root re-exports lazily
]
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
            # "from evalbayes.io import helm" imports the submodule evalbayes.io.helm
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
    assert RANK[layer_of("evalbayes.models.irt")] > RANK[layer_of("evalbayes.results")]


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
