"""The crosscheck report on the seeds' TinyAgent counts."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from evalbayes.data import EvalData
from evalbayes.datasets import load
from evalbayes.frequentist.crosscheck import CrosscheckReport, crosscheck


@pytest.fixture(scope="module")
def report() -> CrosscheckReport:
    return crosscheck(load("tinyagent", experiment="sec17.1"), compare=("RL base", "GRPO 80"))


def test_section_17_3_correlation_and_pass_rates(report):
    """Seed 003 §17.1/17.3: pass@1 0.144 / 0.819; rho 0.01 / 0.63, design effect 1.2 / 20.4."""
    base, grpo = report.systems
    assert (base.system, grpo.system) == ("RL base", "GRPO 80")
    assert f"{base.pass1_mean:.3f}" == "0.144" and f"{grpo.pass1_mean:.3f}" == "0.819"
    assert base.pass1_pooled == base.pass1_mean  # equal n
    assert f"{base.correlation.rho:.2f}" == "0.01"
    assert f"{base.correlation.design_effect:.1f}" == "1.2"
    assert f"{grpo.correlation.rho:.2f}" == "0.63"
    assert f"{grpo.correlation.design_effect:.1f}" == "20.4"
    assert report.k == (1, 2, 4, 8, 16, 32)  # powers of two up to n = 32
    assert base.pass_at_k[1] == pytest.approx(base.pass1_mean)
    assert grpo.task_bootstrap.lower < grpo.pass1_mean < grpo.task_bootstrap.upper
    assert base.small_suite and grpo.flaky == 9 and not grpo.saturated


def test_paired_block_is_better(report):
    comp = report.comparison
    assert comp.baseline == "RL base" and comp.system == "GRPO 80"
    assert comp.verdict == "better"
    assert comp.difference == pytest.approx((262 - 46) / 320)
    assert comp.interval.lower > 0
    assert comp.sign_flip.method == "exact" and comp.sign_flip.p_value == pytest.approx(4 / 1024)
    # majority outcomes: RL base passes no task, GRPO 80 passes 9 of 10 (speed: 1/32)
    assert (comp.outcomes.only_a, comp.outcomes.only_b) == (0, 9)
    assert comp.mcnemar.p_value == pytest.approx(2 * 0.5**9)
    assert comp.mde.effect is not None and comp.dropped == ()


def test_outputs(report):
    text = report.format_table()
    assert "RL base" in text and "GRPO 80" in text and "better" in text
    json.dumps(report.to_dict(), allow_nan=False)
    frame = report.to_frame()
    assert list(frame["system"]) == ["RL base", "GRPO 80"]
    assert {"pass@32", "pass^2", "rho", "design_effect", "wilson_lower"} <= set(frame.columns)
    comp = report.comparison_frame()
    assert comp.loc[0, "verdict"] == "better" and len(comp) == 1


def test_section_17_7_pass_at_k_in_report():
    report = crosscheck(load("tinyagent"), n_resamples=500)
    assert report.k == (1, 2, 4, 8, 16, 32, 64)
    values = [report.systems[0].pass_at_k[k] for k in report.k[:6]]
    np.testing.assert_array_equal(np.round(values, 3), [0.150, 0.279, 0.484, 0.742, 0.941, 0.998])
    assert report.comparison is None and report.comparison_frame().empty


def test_reproducible_with_seed():
    data = load("tinyagent", experiment="sec17.1")
    first = crosscheck(data, compare=("RL base", "GRPO 80"), n_resamples=300, seed=4)
    again = crosscheck(data, compare=("RL base", "GRPO 80"), n_resamples=300, seed=4)
    assert first.to_dict() == again.to_dict()
    other = crosscheck(data, compare=("RL base", "GRPO 80"), n_resamples=300, seed=5)
    assert first.to_dict() != other.to_dict()


def test_missing_cells_unequal_n_and_k_above_min_n():
    data = EvalData.from_arrays(
        [[4, 8, 0, 8], [8, 8, 8, 8]],
        [[1, 8, 0, 2], [3, 8, 5, 0]],
        systems=["A", "B"],
        tasks=["t1", "t2", "t3", "t4"],
    )
    report = crosscheck(data, k=[1, 2, 8], compare=("A", "B"), n_resamples=200)
    a, b = report.systems
    assert a.n_tasks == 3 and a.min_trials == 4
    assert np.isnan(a.pass_at_k[8]) and not np.isnan(b.pass_at_k[8])
    assert any("k = 8 not computed" in note for note in a.notes)
    assert any("not run" in note for note in a.notes)
    assert a.pass1_pooled == pytest.approx(11 / 20) and a.pass1_mean == pytest.approx(
        (0.25 + 1 + 0.25) / 3
    )
    assert report.comparison.dropped == ("t3",) and report.comparison.n_tasks == 3
    json.dumps(report.to_dict(), allow_nan=False)
    assert "k=8" in report.format_table()
    assert crosscheck(data, n_resamples=100).k == (1, 2, 4)  # default: up to min n = 4


def test_cluster_and_margin():
    data = load("tinyagent", experiment="sec17.1")
    report = crosscheck(
        data, compare=("RL base", "GRPO 80"), cluster="family", margin=0.05, n_resamples=500
    )
    assert report.systems[0].task_bootstrap.unit == "clusters"
    assert report.comparison.sign_flip.n_units == 5  # five bug families
    assert report.comparison.non_inferiority is not None
    assert "margin" in report.format_table()


def test_bad_inputs():
    data = load("tinyagent", experiment="sec17.1")
    with pytest.raises(ValueError, match="unknown system"):
        crosscheck(data, compare=("RL base", "nope"))
    with pytest.raises(ValueError, match="pair"):
        crosscheck(data, compare=("RL base",))
    with pytest.raises(ValueError, match="not a task coordinate"):
        crosscheck(data, cluster="nope")
    with pytest.raises(ValueError, match="margin needs compare"):
        crosscheck(data, margin=0.1)
    with pytest.raises(ValueError, match="k must be at least 1"):
        crosscheck(data, k=[0])
    with pytest.raises(TypeError, match="EvalData"):
        crosscheck({"n": 1})
    empty_system = EvalData.from_arrays([[0, 0], [3, 3]], [[0, 0], [1, 2]], systems=["A", "B"])
    with pytest.raises(ValueError, match="system 'A' has no observed task"):
        crosscheck(empty_system)


def test_import_does_not_pull_in_pymc():
    code = (
        "import sys, evalbayes.frequentist.crosscheck, evalbayes.frequentist; "
        "print(sorted(m for m in ('pymc', 'pytensor', 'arviz') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_one_trial_leaderboard_flags_are_said_once():
    # issue 28: SWE-bench Verified printed "0 flaky tasks" and the same note for all 123
    rng = np.random.default_rng(0)
    data = EvalData.from_arrays(np.ones((30, 25), int), rng.binomial(1, 0.4, (30, 25)))
    text = crosscheck(data, n_resamples=50, seed=0).format_table()
    flags = text.split("\nflags\n", 1)[1].splitlines()
    assert "flaky" not in " ".join(flags[:-1])
    assert flags[-1] == ("  every system: nothing else to flag (one trial per task: no task "
                         "can be flaky)")
    assert sum("intra-task correlation" in line for line in flags) == 1
    one = EvalData.from_arrays(np.ones((1, 25), int), rng.binomial(1, 0.4, (1, 25)))
    assert crosscheck(one, n_resamples=50, seed=0).format_table().startswith(
        "evalbayes crosscheck: 1 system;")
