"""The plan and gate command modules, run through their own argparse parsers."""

from __future__ import annotations

import argparse
import json

import pytest

from evalbayes.cli import _gate as gate_cmd
from evalbayes.cli import _plan as plan_cmd


def parse(module, argv):
    parser = argparse.ArgumentParser(prog=module.__name__)
    module.add_arguments(parser)
    return parser.parse_args(argv)


DATA = ["dataset:tinyagent", "--where", "experiment=sec17.7"]


def test_gate_ships_a_clear_improvement(capsys):
    args = parse(gate_cmd, [*DATA, "--baseline", "RL base", "--candidate", "GRPO 80",
                            "--mode", "superiority", "--draws", "1000"])
    assert gate_cmd.run(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("Ship it") and "frequentist gate" in out


def test_gate_holds_and_refuses(capsys):
    args = parse(gate_cmd, [*DATA, "--baseline", "GRPO 80", "--candidate", "GRPO 20",
                            "--draws", "1000", "--format", "json"])
    assert gate_cmd.run(args) == 1
    record = json.loads(capsys.readouterr().out)
    assert record["decision"] in ("hold", "dont_ship")
    assert record["frequentist_gate"]["decision"] != "ship"
    bad = parse(gate_cmd, [*DATA, "--baseline", "GRPO 80", "--candidate", "GRPO 99"])
    with pytest.raises(ValueError, match="unknown systems"):
        gate_cmd.run(bad)
    pop = parse(gate_cmd, [*DATA, "--baseline", "GRPO 80", "--candidate", "GRPO 20",
                           "--estimand", "population"])
    with pytest.raises(ValueError, match="needs --fit"):
        gate_cmd.run(pop)
    missing = parse(gate_cmd, ["nope.csv", "--baseline", "a", "--candidate", "b"])
    with pytest.raises(FileNotFoundError):
        gate_cmd.run(missing)


def test_plan_from_pilot_and_population(capsys, tmp_path):
    args = parse(plan_cmd, [*DATA, "--baseline", "GRPO 20", "--candidate", "GRPO 80",
                            "--tasks", "5", "20", "--trials", "1", "16", "--sims", "100",
                            "--format", "json"])
    assert plan_cmd.run(args) == 0
    record = json.loads(capsys.readouterr().out)
    assert {r["estimand"] for r in record["tasks_needed"]} == {"tasks", "population"}
    assert len(record["table"]) == 8
    from evalbayes.datasets import load
    from evalbayes.decisions._plan import Population

    pilot = load("tinyagent", experiment="sec17.7")
    estimated = Population.from_data(pilot, "GRPO 20", "GRPO 80").correlation
    assert record["population"]["correlation"] == pytest.approx(estimated)
    # a stated correlation replaces the pilot's estimate (it used to be ignored)
    args = parse(plan_cmd, [*DATA, "--baseline", "GRPO 20", "--candidate", "GRPO 80",
                            "--tasks", "5", "--trials", "1", "--sims", "20",
                            "--correlation", "0.25", "--format", "json"])
    assert plan_cmd.run(args) == 0
    assert json.loads(capsys.readouterr().out)["population"]["correlation"] == 0.25
    out = tmp_path / "plan.csv"
    args = parse(plan_cmd, ["--population", "0.5", "0.6", "0.2", "0.2", "--correlation", "0.5",
                            "--tasks", "10", "--sims", "50", "--format", "csv",
                            "-o", str(out)])
    assert plan_cmd.run(args) == 0
    assert out.read_text().startswith("estimand,tasks,trials,assurance")
    with pytest.raises(ValueError, match="baseline"):
        plan_cmd.run(parse(plan_cmd, DATA))
    with pytest.raises(ValueError, match="icc_a"):  # in [0, 1] for the flag, not for an ICC
        plan_cmd.run(parse(plan_cmd, ["--population", "0.5", "0.6", "1", "0.2"]))
    with pytest.raises(SystemExit):  # outside [0, 1]: a usage error naming --population
        parse(plan_cmd, ["--population", "0.5", "0.6", "1.5", "0.2"])
