"""The tutorial notebooks: committed executed (outputs and figures), with cell sources equal
to what ``notebooks/build_notebooks.py`` writes, and executable end to end (nbclient).

The committed files are rebuilt with ``notebooks/build_notebooks.py --execute [--quick]``.
The slow test executes each notebook again in quick mode (``EVALBAYES_NB_QUICK=1``,
``EVALBAYES_NB_DRAWS=300``) on a copy in a temporary folder, never overwriting the committed
file; the five notebooks together take several minutes on two cores. The assert cells inside
the notebooks check the numbers printed in the TinyAgent worked example.
"""

from __future__ import annotations

import importlib.util

import pytest

from paths import ROOT

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = ROOT / "notebooks"
NAMES = (
    "01_quickstart.ipynb",
    "02_item_difficulty.ipynb",
    "03_bayes_vs_bootstrap.ipynb",
    "04_cli_workflow.ipynb",
    "05_designs.ipynb",
    "06_formulas.ipynb",
)


def _generator():
    spec = importlib.util.spec_from_file_location(
        "build_notebooks", NOTEBOOKS / "build_notebooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_notebook_is_tested():
    assert set(_generator().NOTEBOOKS) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_notebook_matches_the_generator(name):
    on_disk = nbformat.read(NOTEBOOKS / name, as_version=4)
    built = _generator().build(name)
    assert [c.cell_type for c in on_disk.cells] == [c.cell_type for c in built.cells]
    assert [c.source for c in on_disk.cells] == [c.source for c in built.cells], (
        f"{name} differs from notebooks/build_notebooks.py; rebuild it with "
        "notebooks/build_notebooks.py --execute"
    )


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_committed_executed_without_errors(name):
    on_disk = nbformat.read(NOTEBOOKS / name, as_version=4)
    code = [c for c in on_disk.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    assert None not in counts, (
        f"{name}: cells {[c.get('id') for c in code if c.execution_count is None]} were not "
        "executed; rebuild with notebooks/build_notebooks.py --execute"
    )
    assert counts == sorted(counts), f"{name}: cells were executed out of order"
    assert _generator().errors(on_disk) == []
    mode = on_disk.metadata.get("evalbayes", {}).get("executed_mode")
    assert mode in ("quick", "full")


def test_every_notebook_is_listed_in_the_readme():
    readme = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert name in readme


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_executes(name, tmp_path):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    generator = _generator()
    notebook = generator.build(name)
    errors = generator.execute(notebook, quick=True, timeout=600)
    nbformat.write(notebook, tmp_path / name)  # the executed copy, for a look after a failure
    assert errors == [], f"{name}: executed copy in {tmp_path / name}"


def test_executed_outputs_lose_machine_paths():
    """Warnings and tracebacks name absolute files; the builder makes them relative."""
    generator = _generator()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x")])
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stderr", text=(
            "/work/rh/src/evalbayes/models/_base.py:295: ConvergenceWarning: R-hat 1.05\n"
            "/tmp/ipykernel_30142/3447723631.py:17: UserWarning: x\n"
            "/opt/venv/lib/python3.12/site-packages/pymc/sampling.py:1: FutureWarning\n")),
        nbformat.v4.new_output("execute_result", data={"text/plain": f"{ROOT}/fit.nc"}),
    ]
    assert generator.scrub_paths(nb) == []
    text = nb.cells[0].outputs[0]["text"]
    assert text.splitlines() == [
        "src/evalbayes/models/_base.py:295: ConvergenceWarning: R-hat 1.05",
        "<cell>:17: UserWarning: x",
        "<site-packages>/pymc/sampling.py:1: FutureWarning",
    ]
    assert nb.cells[0].outputs[1]["data"]["text/plain"] == "fit.nc"
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="/home/me/x")]
    left = generator.scrub_paths(nb)  # not a path it can make relative: reported
    assert len(left) == 1 and left[0].endswith(": /home/me/x")
