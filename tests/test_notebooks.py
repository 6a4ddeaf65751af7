"""The tutorial notebooks: committed without outputs, identical to what
``notebooks/build_notebooks.py`` writes, and executable end to end (nbclient).

Execution uses few draws (``EVALBAYES_NB_DRAWS=300``) and quick simulations
(``EVALBAYES_NB_QUICK=1``); the four notebooks together take a few minutes on two cores, so
the execution test is marked ``slow``. The assert cells inside the notebooks check the
numbers printed in seed 000.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = (
    "01_quickstart.ipynb",
    "02_item_difficulty.ipynb",
    "03_bayes_vs_bootstrap.ipynb",
    "04_cli_workflow.ipynb",
)


def _generator():
    spec = importlib.util.spec_from_file_location(
        "build_notebooks", NOTEBOOKS / "build_notebooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_stripped_and_matches_the_generator(name):
    on_disk = nbformat.read(NOTEBOOKS / name, as_version=4)
    for cell in on_disk.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{name}: cell {cell.get('id')} has outputs; regenerate with "
                "notebooks/build_notebooks.py"
            )
    built = _generator().build(name)
    assert [c.source for c in on_disk.cells] == [c.source for c in built.cells], (
        f"{name} differs from notebooks/build_notebooks.py; run it to regenerate"
    )
    assert [c.cell_type for c in on_disk.cells] == [c.cell_type for c in built.cells]


def test_every_notebook_is_listed_in_the_readme():
    readme = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert name in readme


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_executes(name, monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("EVALBAYES_NB_DRAWS", "300")
    monkeypatch.setenv("EVALBAYES_NB_QUICK", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert errors == []
