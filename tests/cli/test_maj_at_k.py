"""``evalbayes maj-at-k``: the unbiased column against brute-force enumeration of k-subsets,
the posterior against a Dirichlet simulation written here, and the input errors."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from evalbayes.cli import main


def brute_maj(answers: list[str], reference: str, k: int) -> float:
    """Average over every k-subset of the trials: 1 if the reference is the unique plurality,
    1 / (ties + 1) if it ties, else 0."""
    total, count = Fraction(0), 0
    for subset in itertools.combinations(range(len(answers)), k):
        votes = Counter(answers[i] for i in subset)
        top = max(votes.values())
        winners = [a for a, v in votes.items() if v == top]
        total += Fraction(1, len(winners)) if reference in winners else 0
        count += 1
    return float(total / count)


@pytest.fixture
def table(tmp_path):
    rng = random.Random(3)
    rows = []
    for system in ("A", "B"):
        for task in range(4):
            for _ in range(7):
                rows.append({"system": system, "task": f"t{task}",
                             "answer": rng.choice("aabbc" if system == "A" else "aaabc"),
                             "reference": "a"})
    frame = pd.DataFrame(rows)
    path = tmp_path / "answers.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_unbiased_column_is_the_enumeration(table, capsys):
    frame, path = table
    assert main(["maj-at-k", str(path), "--k", "1", "3", "5", "--format", "csv"]) == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    for row in out.itertuples():
        tasks = frame[frame.system == row.system].groupby("task")
        expected = np.mean([brute_maj(g.answer.tolist(), "a", row.k) for _, g in tasks])
        assert row._4 == pytest.approx(expected, abs=1e-12)


def test_posterior_mean_matches_a_dirichlet_simulation(table, capsys):
    frame, path = table
    assert main(["maj-at-k", str(path), "--k", "3", "--draws", "4000", "--format", "csv"]) == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    rng = np.random.default_rng(0)
    for row in out.itertuples():
        per_task = []
        for _, g in frame[frame.system == row.system].groupby("task"):
            labels = sorted(set(g.answer) | {"a"})
            counts = np.array([(g.answer == lab).sum() for lab in labels], float)
            pis = rng.dirichlet(counts + 1.0, size=4000)
            votes = np.array([rng.multinomial(3, p) for p in pis])
            ref = labels.index("a")
            top = votes.max(axis=1)
            wins = (votes[:, ref] == top) / (votes == top[:, None]).sum(axis=1)
            per_task.append(wins.mean())
        assert row._5 == pytest.approx(np.mean(per_task), abs=0.02)
        assert row.lower < row._5 < row.upper


def test_input_errors(tmp_path, capsys):
    path = tmp_path / "a.csv"
    path.write_text("system,task,answer\nA,t,1\n")
    assert main(["maj-at-k", str(path)]) == 2
    assert "missing column(s) --reference-column (reference)" in capsys.readouterr().err
    path.write_text("system,task,answer,reference\nA,t,1,1\nA,t,,1\n")
    assert main(["maj-at-k", str(path), "--k", "1"]) == 2
    assert "row 3: empty 'answer'" in capsys.readouterr().err
    path.write_text("system,task,answer,reference\nA,t,1,1\nA,t,2,2\n")
    assert main(["maj-at-k", str(path), "--k", "1"]) == 2
    assert "more than one reference" in capsys.readouterr().err
    path.write_text("system,task,answer,reference\nA,t,1,1\n")
    assert main(["maj-at-k", str(path), "--k", "2"]) == 2
    assert "fewer than k=2 trials" in capsys.readouterr().err


def test_maj_at_k_does_not_import_pymc(table):
    import subprocess
    import sys

    _, path = table
    code = ("import sys, io, contextlib\nfrom evalbayes.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['maj-at-k', {str(path)!r}, '--k', '3'])\n"
            "assert 'pymc' not in sys.modules, 'pymc imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_answers_go_through_the_guarded_table_loader(tmp_path, capsys):
    """The answer table is read like every other table: a FIFO is refused before it is opened
    (it would block), a NUL in a label or an answer is refused naming the row, JSON Lines with
    a duplicate key or nested too deeply are refused naming the line."""
    import os
    import subprocess
    import sys

    from paths import ROOT

    fifo = tmp_path / "answers.csv"
    os.mkfifo(fifo)
    done = subprocess.run(  # in a subprocess: were the FIFO opened, the read would block
        [sys.executable, "-m", "evalbayes.cli", "maj-at-k", str(fifo)], capture_output=True,
        text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), timeout=120)
    assert done.returncode == 2
    assert "named pipe (FIFO), not a regular file" in done.stderr

    nul = tmp_path / "nul.csv"
    nul.write_text("system,task,answer,reference\nA,t1,a,a\nA\x00B,t1,a,a\n")
    assert main(["maj-at-k", str(nul), "--k", "1"]) == 2
    err = capsys.readouterr().err
    assert "system 'A\\x00B' holds a NUL character" in err and "data row 2" in err

    answer = tmp_path / "answer.csv"
    answer.write_text("system,task,answer,reference\nA,t1,a\x00,a\n")
    assert main(["maj-at-k", str(answer), "--k", "1"]) == 2
    assert "answer 'a\\x00' holds a NUL character" in capsys.readouterr().err

    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"system": "A", "task": "t", "answer": "a", "reference": "a"}\n'
                   '{"system": "A", "task": "t", "answer": "a", "answer": "b", "reference": "a"}\n')
    assert main(["maj-at-k", str(dup), "--k", "1"]) == 2
    err = capsys.readouterr().err
    assert "dup.jsonl" in err and "line 2" in err and "'answer'" in err

    deep = tmp_path / "deep.jsonl"  # 100,000 levels: pyarrow's parser crashed the process
    deep.write_text('{"system": "A", "task": "t", "answer": ' + "[" * 100_000 + "]" * 100_000
                    + ', "reference": "a"}\n')
    assert main(["maj-at-k", str(deep), "--k", "1"]) == 2
    assert "deep.jsonl: line 1: JSON nested too deeply" in capsys.readouterr().err


def test_answers_keep_labels_as_written(tmp_path, capsys):
    """Labels and answers are text as written: an answer ``007`` is not the number 7 and an
    answer ``NA`` is an answer, not a missing value (the guarded loader reads them as text)."""
    path = tmp_path / "answers.csv"
    path.write_text("system,task,answer,reference\nNA,t,007,007\nNA,t,7,007\nNA,t,NA,007\n")
    assert main(["maj-at-k", str(path), "--k", "1", "--format", "csv"]) == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out), keep_default_na=False)
    assert out["system"].tolist() == ["NA"]
    assert out["maj@k (unbiased)"].iloc[0] == pytest.approx(1 / 3, abs=1e-12)
