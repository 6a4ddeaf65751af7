"""ScoreData: validation of graded scores, the CSV reader's errors (file, line, rule) and the
inspect_ai score reader."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from evalbayes.data import DataError
from evalbayes.io import ScoreData, read_scores, scores_from_inspect
from paths import SHARED_DATA


def _frame(**changes):
    df = pd.DataFrame({"system": ["A", "A", "B", "B"], "task": ["t1", "t2", "t1", "t2"],
                       "score": [0, 7, 10, 3], "judge": ["j1", "j2", "j1", "j2"]})
    for key, value in changes.items():
        df[key] = value
    return df


def test_ordinal_scores_and_labels():
    data = ScoreData.from_frame(_frame(), grader="judge", max_score=10)
    assert data.kind == "ordinal" and data.max_score == 10 and len(data.levels) == 11
    assert data.systems == ["A", "B"] and data.tasks == ["t1", "t2"]
    assert data.graders == ["j1", "j2"] and data.has_grader
    np.testing.assert_array_equal(data.codes("system"), [0, 0, 1, 1])
    np.testing.assert_array_equal(data.scores, [0, 7, 10, 3])
    assert data.observed_mean().to_dict() == {"A": 3.5, "B": 6.5}


def test_max_score_defaults_to_the_largest_seen():
    assert ScoreData.from_frame(_frame(score=[0, 1, 2, 1])).max_score == 2


def test_letter_levels_map_to_positions():
    data = ScoreData.from_frame(_frame(score=["F", "C", "A", "B"]),
                                levels=["F", "D", "C", "B", "A"])
    np.testing.assert_array_equal(data.scores, [0, 2, 4, 3])
    assert data.max_score == 4 and data.levels == ("F", "D", "C", "B", "A")


def test_continuous_scores():
    data = ScoreData.from_frame(_frame(score=[0.0, 0.25, 1.0, 0.5]))
    assert data.kind == "continuous" and data.max_score is None


def test_repeated_ratings_without_trial_are_numbered():
    df = pd.concat([_frame(), _frame()], ignore_index=True)
    data = ScoreData.from_frame(df, grader="judge")
    assert sorted(data.frame["trial"].unique()) == ["0", "1"]


@pytest.mark.parametrize(("changes", "options", "rule", "row"), [
    ({"score": [0, 7, np.nan, 3]}, {}, "score is missing", 2),
    ({"score": [0, 7.5, 10, 3]}, {"kind": "ordinal"}, "not an integer", 1),
    ({"score": [0, -1, 10, 3]}, {}, "negative", 1),
    ({"score": [0, 11, 10, 3]}, {"max_score": 10}, "above max_score=10", 1),
    ({"score": [0.1, 1.5, 0.2, 0.3]}, {"kind": "continuous"}, "outside [0, 1]", 1),
    ({"score": ["0", "x", "3", "1"]}, {}, "not a finite number", 1),
    ({"score": ["F", "Q", "A", "B"]}, {"levels": ["F", "B", "A"]}, "not one of the levels", 1),
    ({"system": ["A", None, "B", "B"]}, {}, "system is missing", 1),
])
def test_bad_rows_are_named(changes, options, rule, row):
    with pytest.raises(DataError) as info:
        ScoreData.from_frame(_frame(**changes), **options)
    assert rule in str(info.value)
    assert info.value.rows[0] == row


def test_bad_tables():
    with pytest.raises(DataError, match="no score column 'points'"):
        ScoreData.from_frame(_frame(), score="points")
    with pytest.raises(DataError, match="no rows"):
        ScoreData.from_frame(_frame().iloc[:0])
    with pytest.raises(DataError, match="at least two levels"):
        ScoreData.from_frame(_frame(score=[0, 0, 0, 0]))
    with pytest.raises(DataError, match="appears twice"):
        ScoreData.from_frame(_frame(trial=[1, 1, 1, 1], task=["t", "t", "u", "u"]),
                             trial="trial")
    with pytest.raises(TypeError, match="DataFrame"):
        ScoreData.from_frame({"system": ["A"]})


def test_read_scores_names_file_and_line(tmp_path):
    path = tmp_path / "ratings.csv"
    _frame(score=[0, 7, 12, 3]).to_csv(path, index=False)
    with pytest.raises(ValueError) as info:
        read_scores(path, grader="judge", max_score=10)
    text = str(info.value)
    assert str(path) in text and "line 4" in text and "above max_score=10" in text
    assert "system 'B', task 't1'" in text
    _frame().to_csv(path, index=False)
    data = read_scores(path, grader="judge")
    assert len(data) == 4 and data.source == str(path)
    with pytest.raises(FileNotFoundError, match=r"absent\.csv: no such file"):
        read_scores(tmp_path / "absent.csv")  # as every table reader (io.read_table)
    fifo = tmp_path / "scores.csv.fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"not a regular file|FIFO"):
        read_scores(fifo)  # refused before it is opened: reading a FIFO would block
    nul = tmp_path / "nul.csv"
    nul.write_text("system,task,score\nA\x00B,t1,3\nA,t2,4\n")
    with pytest.raises(ValueError, match="NUL"):
        read_scores(nul, kind="ordinal", max_score=10)


LOG = SHARED_DATA / "formats" / "inspect_ai" / "log_streaming_epochs2.eval"


@pytest.mark.skipif(not LOG.exists(), reason="needs ../shared/data")
def test_inspect_scores_match_the_expected_trials():
    """The real epochs=2 log against its expected-trials file (written independently of this
    package): one score per (sample, epoch), the C/I values as 1/0."""
    log = LOG
    expected = pd.read_csv(log.with_name("log_streaming_epochs2_expected_trials.csv"))
    data = scores_from_inspect(log)
    assert len(data) == len(expected)
    got = data.frame.assign(trial=data.frame["trial"].astype(int))
    merged = got.merge(expected.astype({"task_id": str}), left_on=["task", "trial"],
                       right_on=["task_id", "epoch"])
    assert len(merged) == len(expected)
    np.testing.assert_array_equal(merged["score"].to_numpy(), merged["value_float"].to_numpy())
    lettered = scores_from_inspect(log, levels=["I", "C"])
    np.testing.assert_array_equal(lettered.scores, data.scores)
