"""Nothing lost, ever (issue 28, hostile-input audit items 1 and 2; docs/hostile_audit.md).

Each test reproduces a harm of the audit: an output that is one of the inputs (same file by
device and inode: hard links, symlinks, ``./x``, a file inside an input folder or glob) used
to be overwritten with exit 0; a full disk or a file-size limit left a truncated file, a
traceback or an HDF5 segfault (exit 139); a kill during a save left a 96-byte file where
the previous fit was. Now every writer refuses an input as output, before any work, and
writes through a temporary file renamed over the target (``evalbayes._core.files``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import evalbayes as eb
from evalbayes._core.files import TEMP_PREFIX, atomic_path, write_bytes, write_text
from evalbayes.cli import main
from paths import ROOT

OK = "system,task,n,c\nA,t1,10,3\nA,t2,10,5\nA,t3,10,4\nB,t1,10,7\nB,t2,10,6\nB,t3,10,8\n"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A counts table, a saved exact fit of it, a spec and a meta file."""
    root = tmp_path_factory.mktemp("safe")
    table = root / "ok.csv"
    table.write_text(OK)
    data = eb.EvalData.from_arrays(np.full((2, 3), 10), [[3, 5, 4], [7, 6, 8]],
                                   systems=["A", "B"], tasks=["t1", "t2", "t3"])
    fit = root / "fit.nc"
    eb.BetaBinomialModel(pooling="none").fit(data, seed=1, draws=100, chains=2).save(fit)
    spec = root / "spec.toml"
    spec.write_text('model = "beta-binomial"\npooling = "none"\n')
    meta = root / "meta.toml"
    meta.write_text('harness = "h"\n')
    return {"table": table, "fit": fit, "spec": spec, "meta": meta}


def _snapshot(paths) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in paths}


# ---------------------------------------------------------------------------- output = input
#: (command line with {table} / {fit} / {spec} / {meta}, the input that -o names)
SAME = [
    ("fit {table}", "table"),
    ("fit {table} --spec {spec}", "spec"),
    ("crosscheck {table}", "table"),
    ("crosscheck {table} --format csv", "table"),
    ("convert {table}", "table"),
    ("report {table} --draws 50", "table"),
    ("report {fit} --meta {meta}", "meta"),
    ("report {fit}", "fit"),
    ("report {fit} --md", "fit"),
    ("summary {fit}", "fit"),
    ("pass-at-k {fit}", "fit"),
    ("compare {fit}", "fit"),
    ("items {fit}", "fit"),
    ("plot {fit}", "fit"),
    ("compare-models {fit} {fit2}", "fit"),
    ("plan --fit {fit} --baseline A --candidate B --sims 10", "fit"),
    ("plan {table} --baseline A --candidate B --sims 10", "table"),
    ("gate {table} --baseline A --candidate B", "table"),
    ("gate --fit {fit} --baseline A --candidate B", "fit"),
]


def _argv(line: str, files: dict[str, Path], fit2: Path) -> list[str]:
    return line.format(**{k: str(v) for k, v in files.items()}, fit2=str(fit2)).split()


@pytest.mark.parametrize(("line", "which"), SAME)
@pytest.mark.parametrize("spelling", ["same", "dot", "hardlink", "symlink"])
def test_an_input_is_never_an_output(files, tmp_path, capsys, line, which, spelling):
    fit2 = tmp_path / "fit2.nc"
    fit2.write_bytes(files["fit"].read_bytes())
    target = files[which]
    if spelling == "same":
        output = str(target)
    elif spelling == "dot":
        output = os.path.join(str(target.parent), ".", target.name)
    else:
        output = str(tmp_path / f"alias{target.suffix}")
        (os.link if spelling == "hardlink" else os.symlink)(target, output)
    before = _snapshot([*files.values(), fit2])
    code = main([*_argv(line, files, fit2), "-o", output])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "is also an input" in err and "refusing to overwrite" in err
    assert "Traceback" not in err
    assert _snapshot([*files.values(), fit2]) == before


def test_an_output_inside_an_input_folder_or_glob_is_refused(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.csv").write_text(OK)
    before = (logs / "a.csv").read_bytes()
    for source in (str(logs), str(logs / "*.csv"), str(tmp_path / "**" / "*.csv")):
        assert main(["convert", source, "-o", str(logs / "a.csv")]) == 2
        assert "is also an input" in capsys.readouterr().err
    assert (logs / "a.csv").read_bytes() == before
    # a new file inside the input folder is no input yet: written
    assert main(["convert", str(logs), "-o", str(logs / "counts.csv")]) == 0


def test_missing_output_folder_and_a_file_as_output_dir(files, tmp_path, capsys):
    assert main(["convert", str(files["table"]), "-o", str(tmp_path / "nope" / "c.csv")]) == 2
    err = capsys.readouterr().err
    assert "the folder" in err and "does not exist" in err and "Traceback" not in err
    plain = tmp_path / "plain.txt"
    plain.write_text("keep")
    assert main(["demo", "--output-dir", str(plain)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert plain.read_text() == "keep"
    # fit creates the folder of -o (as Posterior.save does)
    out = tmp_path / "new" / "fit.nc"
    assert main(["fit", str(files["table"]), "--spec", str(files["spec"]), "-o", str(out),
                 "--quiet"]) == 0
    assert eb.load(out).data.systems == ["A", "B"]


# ---------------------------------------------------------------------------- atomic writes
def _temps(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX)]


def test_a_failed_write_keeps_the_previous_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("previous")
    os.chmod(target, 0o640)
    with pytest.raises(RuntimeError), atomic_path(target) as temp:
        temp.write_text("half of the new")
        raise RuntimeError("the writer failed")
    assert target.read_text() == "previous"
    assert _temps(tmp_path) == []
    write_text(target, "new")
    assert target.read_text() == "new"
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # permissions kept
    assert _temps(tmp_path) == []


def test_missing_folder_is_a_clear_oserror(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such folder"):
        write_bytes(tmp_path / "nope" / "x.bin", b"1")
    with pytest.raises(IsADirectoryError):
        write_bytes(tmp_path, b"1")


def test_concurrent_writers_both_complete_and_the_last_rename_wins(tmp_path):
    target = tmp_path / "shared.txt"
    payloads = {name: name * 200_000 for name in "ab"}
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            for _ in range(5):
                write_text(target, payloads[name])
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert target.read_text() in payloads.values()  # one complete file, never a mix
    assert _temps(tmp_path) == []


_LIMITED = """
import resource, sys
from evalbayes.cli import main
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("command", [
    ["fit", "{table}", "--spec", "{spec}"],
    ["crosscheck", "{table}", "--format", "json"],
    ["convert", "{table}"],
    ["convert", "{table}", "--level", "counts", "--format", "csv"],
    ["summary", "{fit}", "--format", "csv"],
    ["plot", "{fit}"],
    ["report", "{fit}"],
])  # fmt: skip
def test_a_file_size_limit_is_a_clear_error_and_keeps_the_old_file(files, tmp_path, command):
    """``ulimit -f``: the write fails with EFBIG (Python ignores SIGXFSZ)."""
    suffix = {"fit": ".nc", "plot": ".png", "report": ".html", "convert": ".csv.gz"}
    target = tmp_path / f"out{suffix.get(command[0], '.txt')}"
    target.write_bytes(b"previous")
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in command]
    done = subprocess.run(
        [sys.executable, "-c", _LIMITED, "20", *argv, "-o", str(target)],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=600,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert f"{target}: File too large" in done.stderr
    assert "previous file (if any) is unchanged" in done.stderr
    assert target.read_bytes() == b"previous"
    assert _temps(tmp_path) == []


def _tmpfs(path: Path) -> bool:
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return False
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(path)],
                          capture_output=True)
    return done.returncode == 0


def test_a_full_disk_never_segfaults_hdf5_nor_truncates(files, tmp_path):
    """``fit -o`` on a full file system: exit 2 and the previous fit kept (was exit 139)."""
    full = tmp_path / "full"
    if not _tmpfs(full):
        pytest.skip("needs root to mount a 64 KiB tmpfs")
    try:
        previous = files["fit"].read_bytes()[:30_000]
        (full / "fit.nc").write_bytes(previous)
        (full / "filler").write_bytes(b"\0" * 30_000)
        for argv in (["fit", str(files["table"]), "--spec", str(files["spec"]), "--quiet"],
                     ["report", str(files["fit"])]):
            target = full / ("fit.nc" if argv[0] == "fit" else "report.html")
            done = subprocess.run(
                [sys.executable, "-m", "evalbayes.cli", *argv, "-o", str(target)],
                capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=600,
            )
            assert done.returncode == 2, done.stderr[-2000:]
            assert "No space left on device" in done.stderr
            assert "Traceback" not in done.stderr
        assert (full / "fit.nc").read_bytes() == previous
        assert not (full / "report.html").exists()
        assert _temps(full) == []
    finally:
        subprocess.run(["umount", str(full)], capture_output=True)


_SLOW_SAVE = """
import sys, time
from evalbayes._core.files import atomic_path
with atomic_path(sys.argv[1]) as temp, open(temp, "w") as fh:
    fh.write("half")
    fh.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def test_a_kill_during_a_save_leaves_the_previous_file(tmp_path):
    target = tmp_path / "fit.nc"
    target.write_text("previous complete fit")
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_SAVE, str(target)],
                            stdout=subprocess.PIPE, text=True, env=_env())
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert target.read_text() == "previous complete fit"
    # the killed writer's hidden temporary is left beside it, never in the target's place
    assert len(_temps(tmp_path)) == 1


def test_posterior_save_is_atomic_under_a_size_limit(files, tmp_path):
    """The library's own save (not only the CLI) keeps the previous file on EFBIG."""
    target = tmp_path / "kept.nc"
    target.write_bytes(b"previous")
    script = (
        "import resource, sys\nimport evalbayes as eb\n"
        "fit = eb.load(sys.argv[1])\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))\n"
        "try:\n    fit.save(sys.argv[2])\n"
        "except OSError as err:\n    print('OSError', err.filename); sys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(files["fit"]), str(target)],
                          capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 3, done.stderr[-2000:]
    assert done.stdout.split() == ["OSError", str(target)]
    assert target.read_bytes() == b"previous"
    assert _temps(tmp_path) == []
