"""Cross-checks on real harness outputs in /work/shared/data (skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbayes.data import EvalData
from evalbayes.frequentist import mean_pass_at_k, mean_pass_hat_k, pass_curve
from paths import SHARED_DATA

DATA = SHARED_DATA
TERMINAL = DATA / "terminal_bench_core011_counts.csv"
TAU = DATA / "tau_bench_airline_gpt4o_trials.csv"
EXPECTED = DATA / "reference_outputs" / "expected_values.json"


def _need(*paths: Path) -> None:
    missing = [p.name for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"shared data not available: {missing}")


def test_terminal_bench_harness_pass_at_k():
    """The Terminal-Bench harness's own pass_at_k (results.json) from (n=5, c) per task."""
    _need(TERMINAL, EXPECTED)
    counts = pd.read_csv(TERMINAL)
    expected = json.loads(EXPECTED.read_text())["terminal_bench_core011_counts.csv"]
    systems = [name for name in expected if name != "description"]
    assert len(systems) == 3
    for system in systems:
        rows = counts[counts["system"] == system]
        assert len(rows) == 80
        ks = sorted(int(k) for k in expected[system])
        got = mean_pass_at_k(rows["n"].to_numpy(), rows["c"].to_numpy(), ks)
        want = [expected[system][str(k)] for k in ks]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_terminal_bench_through_evaldata():
    _need(TERMINAL, EXPECTED)
    data = EvalData.from_frame(pd.read_csv(TERMINAL), extra="ignore")
    expected = json.loads(EXPECTED.read_text())["terminal_bench_core011_counts.csv"]
    curve = pass_curve(data, [1, 2, 4, 5])
    assert curve.dims == ("system", "k")
    for system in (name for name in expected if name != "description"):
        want = [expected[system][str(k)] for k in (1, 2, 4, 5)]
        np.testing.assert_allclose(curve.sel(system=system).values, want, atol=1e-12)


def test_tau_bench_pass_hat_k():
    """tau-bench README (TC gpt-4o, airline): pass^1..4 = 0.420, 0.273, 0.220, 0.200."""
    _need(TAU)
    trials = pd.read_csv(TAU)
    # header: benchmark, system, task_id, trial, reward, c (0/1 success), n_messages
    assert {"task_id", "trial", "c"} <= set(trials.columns)
    assert set(trials["c"].unique()) <= {0, 1}
    per_task = trials.groupby("task_id")["c"].agg(["size", "sum"])
    assert len(per_task) == 50 and (per_task["size"] == 4).all()
    got = mean_pass_hat_k(per_task["size"].to_numpy(), per_task["sum"].to_numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(np.round(got, 3), [0.420, 0.273, 0.220, 0.200])
    if EXPECTED.exists():
        want = json.loads(EXPECTED.read_text())["tau_bench_airline_gpt4o_trials.csv"]["pass_hat_k"]
        np.testing.assert_allclose(got, [want[str(k)] for k in (1, 2, 3, 4)], atol=5e-4)
    data = EvalData.from_trials(trials.rename(columns={"c": "success"}))
    curve = pass_curve(data, [1, 2, 3, 4], metric="pass^k")
    np.testing.assert_allclose(curve.values[0], got, rtol=1e-13)
