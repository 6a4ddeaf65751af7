"""The code blocks of README.md and docs/*.md run as written (issue 28).

Python blocks of one file share a namespace, in order (a later block uses what an earlier
one made); bash blocks run their ``evalbayes ...`` lines through :func:`evalbayes.cli.main`.
Both run in a scratch folder that sees the repository's ``tests``/``models``/``docs`` and
``../shared/data`` where the docs expect them, so nothing is written into the checkout.

Blocks that fit a model are marked ``slow``; blocks that cannot run as written (a
placeholder file, a fit the block does not make) are listed in ``NOT_RUNNABLE`` with the
reason, so the list of what is left to fix is here, not hidden.
"""

from __future__ import annotations

import re
import shlex
import sys
import types
import warnings
from pathlib import Path

import pytest

from paths import ROOT, SHARED_DATA

FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
FILES = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]

#: (file, language, index among that file's blocks of the language): why it is not run.
NOT_RUNNABLE = {
    ("docs/decisions.md", "python", 1): "uses seeds_fit, a training-seeds fit it does not make",
    ("docs/decisions.md", "python", 2): "uses fit, a posterior it does not make",
    ("docs/decisions.md", "python", 3): "uses bank_fit, an IRT item bank it does not make",
    ("docs/cli.md", "bash", 0): "the Terminal-Bench factorial: 11 CPU-minutes, too long for the "
    "suite (measured by hand: R-hat 1.0047, bulk ESS 593, no divergences)",
    ("docs/report.md", "bash", 0): "a list of forms with the reader's own files (counts.csv, "
    "protocol.toml, gold.csv)",
    ("docs/cli.md", "bash", 1): "the design fits of README.md's design block (run there) plus "
    "the same factorial from a table: ~8 minutes on 2 cores; tests/cli/test_designs.py fits "
    "and reports each design",
}
#: Command lines too long for the suite (the rest of their block runs): a word of the line ->
#: why, with what was measured by hand.
SLOW_LINES = {
    "dataset:chembench": "the 2PL on ChemBench (22 x 2,854 items) takes ~15 minutes on 2 cores; "
    "the same commands run on a small IRT fixture in tests/cli/test_cli.py",
    "chem.nc": "reads the ChemBench fit of the line above",
}
#: Files a doc shows as a block and then names: (doc, file name) -> (language, index).
SAVED_BLOCKS = {("docs/report.md", "protocol.toml"): ("toml", 0)}
#: Blocks that fit a model (minutes on a loaded machine): the slow tier.
SLOW_PYTHON = {
    "README.md": {0},
    "docs/compare_and_plots.md": "all",
    "docs/irt.md": "all",
    "docs/new_model.md": "all",
    "docs/decisions.md": {0},
    "docs/formulas.md": "all",
    "docs/report.md": "all",
    "docs/graded.md": {0, 2},
}
#: ``evalbayes`` command lines that are fast (no fit); every other command line is slow.
FAST_COMMANDS = ("crosscheck", "datasets", "convert")
#: Command lines with placeholder inputs (the reader's own files): shown, not run.
PLACEHOLDERS = ("logs/", "swe-results/", "fit-bb.nc", "fit-irt.nc", "evalbayes COMMAND")


def blocks(file: str, language: str) -> list[str]:
    text = (ROOT / file).read_text(encoding="utf-8")
    wanted = {"python": ("python", "py"), "bash": ("bash", "sh", "shell")}.get(
        language, (language,))
    return [code for lang, code in FENCE.findall(text) if lang in wanted]


def _slow(file: str, index: int) -> bool:
    chosen = SLOW_PYTHON.get(file, set())
    return chosen == "all" or index in chosen


def python_cases() -> list:
    cases = []
    for file in FILES:
        for i, _ in enumerate(blocks(file, "python")):
            marks = [pytest.mark.slow] if _slow(file, i) else []
            cases.append(pytest.param(file, i, marks=marks, id=f"{file}:py{i}"))
    return cases


def commands(code: str) -> list[list[str]]:
    """The ``evalbayes`` invocations of a bash block, with ``$D``-style variables expanded
    and ``&&`` chains split; other lines (``make``, ``python ...``) are not ours to run."""
    joined = code.replace("\\\n", " ")
    variables: dict[str, str] = {}
    out = []
    for line in joined.splitlines():
        line = line.split("  #")[0].strip()
        match = re.fullmatch(r"(\w+)=(\S+)", line)
        if match:
            variables[match[1]] = match[2]
            continue
        for part in line.split("&&"):
            for name, value in variables.items():
                part = part.replace(f"${name}", value)
            words = shlex.split(part, comments=True)
            if words[:1] == ["evalbayes"] and not any(p in part for p in PLACEHOLDERS):
                out.append(words[1:])
    return out


def bash_cases() -> list:
    cases = []
    for file in FILES:
        for i, code in enumerate(blocks(file, "bash")):
            cmds = commands(code)
            if not cmds:
                continue
            slow = any(c[0] not in FAST_COMMANDS for c in cmds)
            cases.append(pytest.param(file, i, marks=[pytest.mark.slow] if slow else [],
                                      id=f"{file}:bash{i}"))
    return cases


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """``<tmp>/work`` with the repository's folders linked in, ``<tmp>/shared`` = ../shared."""
    top = tmp_path_factory.mktemp("docs")
    work = top / "work"
    work.mkdir()
    for name in ("tests", "models", "docs", "notebooks"):
        (work / name).symlink_to(ROOT / name)
    if SHARED_DATA.exists():
        (top / "shared").symlink_to(SHARED_DATA.parent)
    return work


def _save_named_blocks(file: str, code: str, folder: Path) -> None:
    """Write the blocks of ``file`` that ``code`` names as files (:data:`SAVED_BLOCKS`)."""
    for (doc, name), (language, number) in SAVED_BLOCKS.items():
        if doc == file and name in code:
            (folder / name).write_text(blocks(file, language)[number], encoding="utf-8")


#: One module per file: its blocks run in its namespace, in order (dataclasses defined in a
#: block need their module in ``sys.modules``).
MODULES: dict[str, types.ModuleType] = {}
#: The blocks of each file already run in this process.
DONE: dict[str, set[int]] = {}


@pytest.mark.parametrize(("file", "index"), python_cases())
def test_python_block_runs(file, index, scratch, monkeypatch):
    if (file, "python", index) in NOT_RUNNABLE:
        pytest.skip(NOT_RUNNABLE[file, "python", index])
    if (not SHARED_DATA.exists()
            and any("../shared/" in code for code in blocks(file, "python")[: index + 1])):
        pytest.skip("../shared/data is not available")  # this block or one it runs after
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(scratch)
    _save_named_blocks(file, blocks(file, "python")[index], scratch)
    name = "docs_block_" + re.sub(r"\W", "_", file)
    module = MODULES.setdefault(file, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, name, module)
    done = DONE.setdefault(file, set())
    # earlier blocks first where this worker has not run them (pytest-xdist may send a file's
    # blocks to different workers): a block sees what the blocks above it made, as a reader does
    for earlier in range(index + 1):
        if earlier in done or (file, "python", earlier) in NOT_RUNNABLE:
            continue
        _save_named_blocks(file, blocks(file, "python")[earlier], scratch)
        code = blocks(file, "python")[earlier]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the blocks' own warnings are what they document
            exec(compile(code, f"{file}:python block {earlier}", "exec"), module.__dict__)
        done.add(earlier)


@pytest.mark.parametrize(("file", "index"), bash_cases())
def test_bash_block_runs(file, index, scratch, monkeypatch, capsys):
    if (file, "bash", index) in NOT_RUNNABLE:
        pytest.skip(NOT_RUNNABLE[file, "bash", index])
    if "../shared/" in blocks(file, "bash")[index] and not SHARED_DATA.exists():
        pytest.skip("../shared/data is not available")
    from evalbayes.cli import main

    monkeypatch.chdir(scratch)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    _save_named_blocks(file, blocks(file, "bash")[index], scratch)
    for argv in commands(blocks(file, "bash")[index]):
        if any(word in argv for word in SLOW_LINES):
            continue
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 0, f"evalbayes {shlex.join(argv)} exited {code}: {err[-2000:]}"
        assert "did not converge" not in err, f"evalbayes {shlex.join(argv)}: {err[-2000:]}"


def test_the_extraction_sees_the_documented_commands():
    """Negative control: the README's command block is found and split as a user types it."""
    found = [c for i, _ in enumerate(blocks("README.md", "bash"))
             for c in commands(blocks("README.md", "bash")[i])]
    assert ["crosscheck", "dataset:tinyagent", "--where", "experiment=sec17.1", "--compare",
            "RL base", "GRPO 80"] in found
    assert ["fit", "tests/fixtures/designs/seeds_counts.csv", "--recipes",
            "tests/fixtures/designs/recipes.csv", "-o", "seeds.nc"] in found
    assert not any("logs/" in " ".join(c) for c in found)
