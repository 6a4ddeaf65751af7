"""The public API: each public package's ``__all__`` (and nothing else) is its API.

``public_api.txt`` lists every public name as ``package: name``. A name that appears or
disappears without that list changing fails here: update the list in the same change (and
say so in the change's notes), so the API never moves by accident. Public packages are
``evalbayes`` and every ``evalbayes.<...>`` package whose path has no part starting with
``_``; their modules are private (``_name.py``), except the few top-level modules listed in
``PUBLIC_MODULES``.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings

import pytest

import evalbayes
from paths import ROOT

SNAPSHOT = ROOT / "tests" / "contract" / "public_api.txt"
#: top-level modules that are public (everything else public is a package)
PUBLIC_MODULES = ("evalbayes.data", "evalbayes.inference", "evalbayes.suite", "evalbayes.testing")


def public_packages() -> list[str]:
    """``evalbayes``, its public sub-packages (files, not imports: ``experimental`` warns on
    import and is not part of the stable API) and :data:`PUBLIC_MODULES`."""
    src = ROOT / "src"
    names = list(PUBLIC_MODULES)
    for init in (src / "evalbayes").rglob("__init__.py"):
        parts = init.parent.relative_to(src).parts
        if any(p.startswith("_") for p in parts) or "experimental" in parts:
            continue
        names.append(".".join(parts))
    return sorted(names)


def current_api() -> list[str]:
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in public_packages():
            module = importlib.import_module(name)
            rows += [f"{name}: {item}" for item in sorted(getattr(module, "__all__", []))]
    return rows


def test_public_api_matches_the_snapshot() -> None:
    stored = [line for line in SNAPSHOT.read_text().splitlines() if line and line[0] != "#"]
    now = current_api()
    added = sorted(set(now) - set(stored))
    removed = sorted(set(stored) - set(now))
    assert not added and not removed, (
        f"the public API changed: added {added}, removed {removed}; if intended, regenerate "
        f"{SNAPSHOT.name} (python -c 'import sys; sys.path.insert(0, \"tests\"); "
        "from contract.test_public_api import write; write()') and say so in the change"
    )


@pytest.mark.parametrize("package", public_packages())
def test_every_listed_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in getattr(module, "__all__", []) if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ lists names it does not have: {missing}"


@pytest.mark.parametrize("package", [p for p in public_packages() if p not in PUBLIC_MODULES])
def test_packages_keep_their_modules_private(package: str) -> None:
    """A public package's modules are private (``_name.py``) or public sub-packages."""
    module = importlib.import_module(package)
    loose = [info.name for info in pkgutil.iter_modules(module.__path__)
             if not info.name.startswith("_") and not info.ispkg
             and f"{package}.{info.name}" not in PUBLIC_MODULES]
    assert not loose, f"{package} has public-named modules {loose}: make them _private"


def test_the_face_carries_the_default_model() -> None:
    assert evalbayes.RateGridModel.__name__ == "RateGridModel"
    assert evalbayes.decisions.__all__
    assert "rate-grid" in evalbayes.model_names()


def write() -> None:
    """Regenerate the snapshot from the code."""
    head = "# evalbayes public API: package: name (tests/contract/test_public_api.py)\n"
    SNAPSHOT.write_text(head + "\n".join(current_api()) + "\n")
