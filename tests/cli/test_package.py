"""The CLI package: a lazy registry, one module per command, small modules, one error exit."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

from evalbayes.cli import COMMANDS, main
from paths import ROOT

PACKAGE = ROOT / "src" / "evalbayes" / "cli"


def test_every_command_is_one_module_with_add_arguments_and_run():
    for name, (module_name, help_text) in COMMANDS.items():
        assert module_name == "evalbayes.cli._" + name.replace("-", "_")
        module = importlib.import_module(module_name)
        assert callable(module.add_arguments) and callable(module.run) and help_text


def test_modules_are_small():
    sizes = {p.name: len(p.read_text().splitlines()) for p in PACKAGE.glob("*.py")}
    assert max(sizes.values()) < 250, sizes


def test_input_formats_match_the_readers():
    from evalbayes.cli._common import INPUT_FORMATS
    from evalbayes.io import FORMATS

    assert tuple(INPUT_FORMATS) == tuple(FORMATS)


def test_choices_come_from_names():
    """No module of the package restates a method, estimand or metric list."""
    from evalbayes._core import names

    lists = {names.METHODS, names.ESTIMANDS, names.METRICS}
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts):
                assert tuple(e.value for e in node.elts) not in lists, (path.name, node.lineno)


def _imported_after(code: str) -> list[str]:
    script = (
        "import sys, io, contextlib\n"
        "from evalbayes.cli import main\n"
        "quiet = io.StringIO()\n"
        "with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):\n"
        f"    {code}\n"
        "heavy = ('pymc', 'pytensor', 'arviz', 'nutpie', 'matplotlib')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy "
        "or m.startswith('evalbayes.cli.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


def test_help_imports_no_command_module():
    loaded = _imported_after("\n    try:\n        main(['--help'])\n    except SystemExit:\n"
                             "        pass")
    assert loaded == [], loaded


@pytest.mark.parametrize("argv", [
    ["datasets"],
    ["convert", "tests/fixtures/inspect_ai/log_streaming_epochs2.eval", "-o", "{tmp}/c.csv"],
    ["crosscheck", "dataset:tinyagent", "--k", "1"],
])  # fmt: skip
def test_fast_commands_never_import_pymc(argv, tmp_path):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    loaded = _imported_after(f"assert main({argv!r}) == 0")
    module = "evalbayes.cli._" + argv[0]
    heavy = [m for m in loaded if not m.startswith("evalbayes.cli.")]
    assert not heavy, heavy
    assert module in loaded and "evalbayes.cli._fit" not in loaded


def test_reading_a_fit_imports_no_scipy():
    """Issue 26: the modules that load and summarise a fit import no SciPy (each model imports
    it where a computation needs it), no compiler, sampler or plotting library, and the
    version is a literal (``importlib.metadata`` costs ~0.05-0.1 s; xarray imports it itself,
    so it is checked on ``import evalbayes`` alone)."""
    script = (
        "import sys\n"
        "import evalbayes\n"
        "assert 'importlib.metadata' not in sys.modules\n"
        "import evalbayes._persist, evalbayes.cli._summary, evalbayes.cli._compare\n"
        "import evalbayes.cli._pass_at_k, evalbayes.cli._output\n"
        "heavy = ('scipy', 'numba', 'pymc', 'pytensor', 'arviz', 'matplotlib', 'statsmodels',\n"
        "         'formulae')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert ast.literal_eval(result.stdout.strip().splitlines()[-1]) == []


def test_version_is_the_single_source():
    import tomllib

    from evalbayes import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "evalbayes._version.__version__"
    assert __version__.count(".") == 2 and all(p.isdigit() for p in __version__.split("."))


def test_module_entry_point_and_version():
    result = subprocess.run([sys.executable, "-m", "evalbayes.cli", "--version"],
                            capture_output=True, text=True, check=True)
    from evalbayes import __version__

    assert result.stdout.strip() == f"evalbayes {__version__}"


def test_input_errors_exit_2_at_one_place(capsys, tmp_path):
    assert main(["crosscheck", str(tmp_path / "nope.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalbayes: error:") and "nope.csv" in err
    spec_dir = tmp_path / "spec.toml"
    spec_dir.mkdir()
    assert main(["fit", "dataset:tinyagent", "--spec", str(spec_dir)]) == 2
    assert "spec.toml" in capsys.readouterr().err
    binary = tmp_path / "latin1.csv"
    binary.write_bytes("system,task,n,c\n\xe9,t,2,1\n".encode("latin-1"))
    code = main(["crosscheck", str(binary), "--input-format", "counts"])
    assert code in (0, 2)  # decoded or refused, never a traceback


def test_output_format_is_output_only(capsys):
    code = main(["crosscheck", "dataset:tinyagent", "--k", "1", "--format", "csv"])
    assert code == 0 and capsys.readouterr().out.startswith("system")
    assert main(["datasets", "--format", "counts"]) == 2
    assert "invalid choice: 'counts'" in capsys.readouterr().err


def test_an_input_format_under_format_is_refused(capsys, tmp_path):
    """--format is the output format only; an input format there names the choices."""
    table = tmp_path / "t.csv"
    table.write_text("system,task,n,c\nA,t1,4,1\nA,t2,4,3\n")
    assert main(["crosscheck", str(table), "--format", "counts", "--k", "1"]) == 2
    assert "invalid choice: 'counts'" in capsys.readouterr().err
    assert main(["convert", str(table), "--format", "counts", "-o", str(tmp_path / "o.csv")]) == 2


def test_seed_and_random_seed_are_one_option(capsys):
    assert main(["crosscheck", "dataset:tinyagent", "--k", "1", "--format", "json",
                 "--random-seed", "7", "--resamples", "200"]) == 0
    a = capsys.readouterr().out
    assert main(["crosscheck", "dataset:tinyagent", "--k", "1", "--format", "json",
                 "--seed", "7", "--resamples", "200"]) == 0
    assert capsys.readouterr().out == a


def test_reader_flags_are_generated_from_the_readers_options():
    """Every option of io.reader_options() is a flag of the commands that read data; a
    command's own flag of the same name wins and the reader's becomes --reader-<name>."""
    import argparse

    from evalbayes.cli import build_parser
    from evalbayes.cli._readers import add_reader_args, reader_options
    from evalbayes.io import reader_options as io_reader_options

    names = {spec.name for specs in io_reader_options().values() for spec in specs}
    parser = build_parser("crosscheck")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = sub.choices["crosscheck"]
    strings = set(command._option_string_actions)
    for name in names:
        assert "--" + name.replace("_", "-") in strings, name
    args = parser.parse_args(["crosscheck", "x.json", "--errors", "drop", "--no-task-prefix",
                              "--threshold", "0.5", "--task-coords", "a", "b"])
    assert reader_options(args) == {"errors": "drop", "task_prefix": False, "threshold": 0.5,
                                    "task_coords": ["a", "b"]}
    with pytest.raises(SystemExit):
        parser.parse_args(["crosscheck", "x.json", "--errors", "maybe"])
    own = argparse.ArgumentParser()
    own.add_argument("--metric")
    add_reader_args(own)
    args = own.parse_args(["--metric", "pass@k", "--reader-metric", "acc"])
    assert args.metric == "pass@k" and reader_options(args) == {"metric": "acc"}


def test_default_fit_imports_neither_scipy_stats_nor_dask(tmp_path):
    """`evalbayes fit` of the default model pays for neither scipy.stats (~0.5 CPU-s: the
    diagnostics rank ties themselves) nor distributed (~0.35 CPU-s: xarray's writer asks
    for it to find the Dask scheduler) nor dask (~0.3 CPU-s: xarray asks whether each array
    is a Dask array; evalbayes._core.lazy_dask), and the save leaves no blocked import
    behind."""
    script = (
        "import sys, io, contextlib\n"
        "from evalbayes.cli import main\n"
        "quiet = io.StringIO()\n"
        "with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):\n"
        f"    assert main(['fit', 'dataset:tinyagent', '-o', {str(tmp_path / 'f.nc')!r}]) == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('distributed', 'dask')\n"
        "             or m.startswith('scipy.stats') or sys.modules[m] is None))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert ast.literal_eval(result.stdout.strip().splitlines()[-1]) == []
    assert (tmp_path / "f.nc").stat().st_size > 0


@pytest.mark.parametrize("model", ["beta-binomial", "rate-grid"])
def test_summary_and_compare_of_a_saved_fit_compute_nothing_heavy(tmp_path, model,
                                                                   monkeypatch):
    """Issue 26: a fit that keeps its k = 1 curve draws (``Posterior.save``) is summarised
    and compared without SciPy, numba (the "tasks" kernels) or the log readers: what is
    left is reading the file and the pairs' arithmetic."""
    import evalbayes as eb
    from evalbayes.results import _posterior

    monkeypatch.setattr(_posterior, "SAVED_CURVES_CELL_DRAWS", (0, 1e9))  # a small fit
    data = eb.datasets.load("tinyagent", experiment="sec17.7")
    path = eb.get_model(model).fit(data, seed=1).save(tmp_path / "fit.nc")
    for command in ("summary", "compare"):
        script = (
            "import sys, io, contextlib\n"
            "from evalbayes.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main({[command, str(path)]!r}) == 0\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'numba', "
            "'matplotlib') or m == 'evalbayes.io._auto'))\n"
        )
        result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                                text=True, check=True)
        assert ast.literal_eval(result.stdout.strip().splitlines()[-1]) == [], command
