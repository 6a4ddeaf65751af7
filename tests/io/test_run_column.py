"""``run_column`` of the table readers (``--run-column``): each (system, run) becomes a system
``SYSTEM/RUN`` with the system coordinates ``agent`` and ``run``, for a formula's run term.
Counts are checked against a pandas groupby of the same rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbayes.cli import main
from evalbayes.io import read


@pytest.fixture
def trials(tmp_path):
    rng = np.random.default_rng(5)
    rows = [{"system": s, "run": f"r{r}", "task_id": f"t{t}", "attempt": a,
             "ok": int(rng.random() < 0.5)}
            for s in ("A", "B") for r in range(3 if s == "A" else 2) for t in range(4)
            for a in range(2)]
    frame = pd.DataFrame(rows)
    path = tmp_path / "trials.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_each_system_run_is_a_system_with_agent_and_run(trials):
    frame, path = trials
    data = read(path, format="trials", success="ok", task="task_id", run_column="run")
    expected = frame.groupby(["system", "run", "task_id"])["ok"].agg(["size", "sum"])
    assert len(data.systems) == 5 and sorted(data.system_coords) == ["agent", "run"]
    for i, name in enumerate(data.systems):
        agent, run = str(name).split("/")
        assert data.system_coords["agent"][i] == agent
        assert data.system_coords["run"][i] == name
        for j, task in enumerate(data.tasks):
            n, c = expected.loc[(agent, run, str(task))]
            assert (int(data.n.values[i, j]), int(data.c.values[i, j])) == (n, c)


def test_counts_tables_take_it_too(tmp_path):
    frame = pd.DataFrame({"system": ["A", "A", "A", "A"], "run": ["1", "1", "2", "2"],
                          "task": ["x", "y", "x", "y"], "n": [2, 2, 2, 2], "c": [0, 1, 2, 1]})
    path = tmp_path / "counts.csv"
    frame.to_csv(path, index=False)
    data = read(path, format="counts", run_column="run")
    assert list(map(str, data.systems)) == ["A/1", "A/2"]
    np.testing.assert_array_equal(data.c.values, [[0, 1], [2, 1]])


def test_bad_run_columns_name_the_file_and_rule(trials, tmp_path):
    frame, path = trials
    with pytest.raises(ValueError, match="run_column 'seed' is not a column"):
        read(path, format="trials", success="ok", task="task_id", run_column="seed")
    clash = tmp_path / "clash.csv"
    frame.assign(agent="x").to_csv(clash, index=False)
    with pytest.raises(ValueError, match="has a column 'agent'; rename it"):
        read(clash, format="trials", success="ok", task="task_id", run_column="run")
    empty = tmp_path / "empty.csv"
    frame.assign(run=lambda d: d["run"].where(d.index != 3, "")).to_csv(empty, index=False)
    with pytest.raises(ValueError, match=r"empty.csv: line 5: run_column 'run' has no run id"):
        read(empty, format="trials", success="ok", task="task_id", run_column="run")


def test_cli_flag(trials, tmp_path, capsys):
    _, path = trials
    out = tmp_path / "counts.csv"
    code = main(["convert", str(path), "--input-format", "trials", "--success", "ok", "--task",
                 "task_id", "--run-column", "run", "-o", str(out)])
    assert code == 0
    counts = pd.read_csv(out)
    assert set(counts["system"]) == {"A/r0", "A/r1", "A/r2", "B/r0", "B/r1"}
    assert set(counts["agent"]) == {"A", "B"} and (counts["run"] == counts["system"]).all()
