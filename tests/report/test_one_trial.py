"""One trial per task (SWE-bench-like): pass@k for k > 1 is the prior's, and every output
that shows it says so beside the numbers (issue 28), not only the fit-time warning."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalbayes.cli import main
from evalbayes.data import EvalData
from evalbayes.models.beta_binomial._model import BetaBinomialModel
from evalbayes.report._build import build_report
from evalbayes.report._document import Callout
from evalbayes.results._extrapolation import one_trial_note


def _data(n_trials):
    rng = np.random.default_rng(1)
    n = np.full((3, 20), n_trials)
    n[2] = 4  # the third system ran repeated trials
    return EvalData.from_arrays(n, rng.binomial(n, 0.4), systems=["A", "B", "C"])


def test_the_note_names_the_one_trial_systems_only_for_k_above_one():
    data = _data(1)
    assert one_trial_note(data, [1]) is None
    note = one_trial_note(data, [1, 8])
    assert note is not None and note.startswith("2 of 3 systems (A, B)")
    assert one_trial_note(_data(2), [1, 8]) is None  # two trials: k = 2 is observed
    every = EvalData.from_arrays(np.ones((2, 5), int), np.zeros((2, 5), int))
    assert one_trial_note(every, [2]).startswith("every system")


@pytest.fixture(scope="module")
def fit(tmp_path_factory):
    data = _data(1)
    with pytest.warns(UserWarning):
        posterior = BetaBinomialModel().fit(data, seed=0)
    path = tmp_path_factory.mktemp("one") / "fit.nc"
    posterior.save(path)
    return data, posterior, path


def test_report_says_it_beside_the_curves_and_the_table(fit):
    data, posterior, _ = fit
    doc = build_report(data, posterior)
    callouts = [b for s in doc.sections for b in s.blocks if isinstance(b, Callout)]
    titles = [c.title for c in callouts]
    assert "pass@k for k > 1 is the prior's here" in titles
    curves = doc.section("curves").blocks
    assert isinstance(curves[1], Callout)  # right after the opening paragraph, above the plots
    assert "2 of 3 systems (A, B) ran one trial per task" in doc.tables()["pass-at-k"].caption


@pytest.mark.parametrize("command", [["pass-at-k"], ["summary", "--k", "1", "8"]])
def test_cli_tables_carry_the_note(fit, capsys, command):
    _, _, path = fit
    assert main([command[0], str(path), *command[1:]]) == 0
    out = capsys.readouterr().out
    assert "NOTE: 2 of 3 systems (A, B) ran one trial per task" in out
    assert main([command[0], str(path), *command[1:], "--format", "json"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)  # the machine output stays pure; the note goes to stderr
    assert "NOTE: 2 of 3 systems" in captured.err
    assert main([command[0], str(path), "--k", "1"]) == 0
    assert "NOTE" not in capsys.readouterr().out
