"""Loaders guarded like the log readers (issue 28, hostile-input audit item 5).

Before: deep nesting in ``--meta`` / ``--spec`` ended in a RecursionError traceback, a
non-object ``fingerprint`` attribute in a TypeError, duplicate JSON keys were resolved
silently (last wins), NUL and lone surrogates in labels failed only when the fit was saved
(after the sampling), and a FIFO as input blocked forever.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import evalbayes as eb
from evalbayes import io
from evalbayes.cli import main
from evalbayes.io._common import LogError
from evalbayes.io._json import DuplicateKeyError, loads
from evalbayes.report._meta import read_meta
from paths import ROOT


@pytest.fixture(scope="module")
def fit_file(tmp_path_factory):
    data = eb.EvalData.from_arrays(np.full((2, 3), 10), [[3, 5, 4], [7, 6, 8]],
                                   systems=["A", "B"])
    path = tmp_path_factory.mktemp("fit") / "fit.nc"
    eb.BetaBinomialModel(pooling="none").fit(data, seed=1, draws=50, chains=2).save(path)
    return path


def test_deep_meta_and_spec_are_clear_errors(tmp_path, fit_file, capsys):
    deep_json = tmp_path / "deep.json"
    deep_json.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    deep_toml = tmp_path / "deep.toml"
    deep_toml.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ValueError, match="nested too deeply"):
        read_meta(deep_json)
    assert main(["report", str(fit_file), "--meta", str(deep_json), "-o",
                 str(tmp_path / "r.html")]) == 2
    assert main(["fit", "dataset:tinyagent", "--spec", str(deep_toml)]) == 2
    err = capsys.readouterr().err
    assert err.count("nested too deeply") == 2 and "Traceback" not in err


def test_duplicate_json_keys_name_the_key_and_the_file(tmp_path):
    with pytest.raises(DuplicateKeyError, match="'model' twice"):
        loads('{"model": "x", "nested": {"k": 1}, "model": "y"}')
    with pytest.raises(DuplicateKeyError, match="'k' twice"):
        loads('{"nested": {"k": 1, "k": 2}}')
    assert loads('{"a": 1, "b": {"a": 2}}') == {"a": 1, "b": {"a": 2}}  # other objects: fine
    meta = tmp_path / "meta.json"
    meta.write_text('{"harness": "a", "harness": "b"}')
    with pytest.raises(ValueError, match=r"meta\.json: .*'harness' twice"):
        read_meta(meta)
    rows = tmp_path / "counts.jsonl"
    rows.write_text('{"system": "A", "task": "t", "n": 3, "c": 1, "c": 2}\n')
    with pytest.raises(LogError, match=r"counts\.jsonl: line 1: .*'c' twice"):
        io.read(rows)


def test_a_non_object_fingerprint_is_a_clear_error(tmp_path, fit_file):
    tree = xr.open_datatree(fit_file, engine="h5netcdf").load()
    for i, value in enumerate(("[1, 2]", "3", '"text"')):
        tree.attrs["fingerprint"] = value
        edited = tmp_path / f"edited{i}.nc"
        tree.to_netcdf(edited, engine="h5netcdf")
        with pytest.raises(ValueError, match="'fingerprint' attribute must be a JSON object"):
            eb.load(edited)


@pytest.mark.parametrize(("text", "what"), [
    ("system,task,n,c\nA\x00x,t1,10,3\nB,t1,10,4\n", "NUL"),
    ("system,task,n,c\nA,t1,10,3\nB,t\x00,10,4\n", "NUL"),
])  # fmt: skip
def test_nul_in_a_label_is_refused_when_read(tmp_path, text, what):
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(LogError, match=f"labels.csv: data row .*{what}"):
        io.read(path)


def test_lone_surrogates_are_refused_when_read(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"system": "A", "task": "t\\ud800", "n": 3, "c": 1}\n')
    with pytest.raises(LogError, match=r"labels\.jsonl: line 1: 'task' holds a lone surrogate"):
        io.read(path)


def test_deeply_nested_json_lines_table_is_a_clear_error(tmp_path):
    """A counts table in JSON Lines nested 100,000 levels deep: before, pyarrow's JSON
    parser (which recurses without a limit) crashed the process with a segmentation fault;
    now the line-by-line reader refuses it naming the line. In a subprocess so that a
    regression fails this test instead of killing the test worker."""
    path = tmp_path / "deep.jsonl"
    path.write_text('{"system": "A", "task": "t", "n": 3, "c": 1}\n'
                    '{"system": "B", "task": "t", "n": 3, "c": ' + "[" * 100_000
                    + "]" * 100_000 + "}\n")
    code = ("from evalbayes import io\n"
            f"try:\n    io.read_table({str(path)!r})\n"
            "except ValueError as err:\n    print(err)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"{path}: line 2: JSON nested too deeply to read"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("argv", [
    ["crosscheck", "{fifo}"],
    ["summary", "{fifo}"],
    ["fit", "dataset:tinyagent", "--spec", "{fifo}"],
    ["report", "dataset:tinyagent", "--meta", "{fifo}"],
    ["plan", "--fit", "{fifo}", "--baseline", "A", "--candidate", "B"],
])  # fmt: skip
def test_a_fifo_is_refused_and_never_blocks(tmp_path, argv):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run(
        [sys.executable, "-m", "evalbayes.cli", *[a.format(fifo=fifo) for a in argv]],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # before the fix: blocked until the timeout
    assert done.returncode == 2
    assert "named pipe (FIFO), not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_library_readers_refuse_a_fifo(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for call in (lambda: io.read(fifo), lambda: io.read_table(fifo), lambda: eb.load(fifo),
                 lambda: read_meta(fifo)):
        with pytest.raises(ValueError, match="named pipe"):
            call()


def test_a_json_lines_object_broken_over_two_lines_is_refused(tmp_path):
    """JSON Lines is one value per line. pyarrow's reader takes values separated by any
    whitespace, so ``"n": 10000<newline>, "c": 0}`` was read as one row (found by the long
    fuzz run); now it is refused, naming the line and the column on it."""
    path = tmp_path / "broken.jsonl"
    path.write_text('{"system": "a", "task": "t1", "n": 10000\n, "c": 0}\n'
                    '{"system": "a", "task": "t2", "n": 1, "c": 0}\n')
    with pytest.raises(ValueError, match=r"line 1: not valid JSON .* at column 41"):
        io.read(path, format="counts")
    path.write_text('{"system": "a", "task": "t1", "n": 10000, "c": 0}\n\n  \r\n'
                    '{"system": "a", "task": "t2", "n": 1, "c": 0}')  # blank lines, no end
    assert io.read(path, format="counts").n.values.tolist() == [[10000, 1]]


@pytest.mark.parametrize("seed", range(20))
def test_line_profile_counts_lines_with_content_across_chunks(tmp_path, seed):
    """_line_profile's count of lines holding anything but JSON whitespace, and its deepest
    line, against a plain split of the bytes; chunks of 1-7 bytes, so that lines and runs of
    whitespace straddle them."""
    from evalbayes.io._tables import _line_profile

    rng = np.random.default_rng(seed)
    raw = bytes(rng.choice(list(b" \t\r\n\n\n{[x"), size=int(rng.integers(0, 200))))
    path = tmp_path / "t.jsonl"
    path.write_bytes(raw)
    lines = raw.split(b"\n")
    expected = (max((line.count(b"{") + line.count(b"[") for line in lines), default=0),
                sum(1 for line in lines if line.strip(b" \t\r\n")))
    for chunk in (1, 2, 3, 7, 1 << 23):
        assert _line_profile(path, chunk=chunk) == expected, chunk
