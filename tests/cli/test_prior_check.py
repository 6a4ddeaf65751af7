"""``evalbayes prior-check --threshold``: the thresholds ``t`` of ``P(score >= t)`` for a
graded-score model (the name ``summary`` / ``compare`` of a score fit and
``prior_predictive(thresholds=)`` use), ``--k`` refused there; for a c-of-n model one
``--threshold``, the log readers' success rule as in ``fit``, several refused.

References: the observed ``P(score >= t)`` is the share of the table's rows at or above
``t`` (pandas on the CSV); the success rule is checked on 0/1 inspect_ai scores, where
``threshold = 2`` makes every trial a failure (observed pass@1 0)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from evalbayes.cli import main

RATINGS = Path(__file__).resolve().parents[1] / "fixtures" / "scores" / "ratings.csv"
LOG = Path(__file__).resolve().parents[1] / "fixtures" / "inspect_ai" / "log_streaming_epochs2.eval"
ORDINAL = ["prior-check", str(RATINGS), "--model", "ordinal", "--score", "rating",
           "--max-score", "10", "--draws", "200", "--format", "csv"]


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_thresholds_of_a_graded_model(capsys):
    code, out, err = run([*ORDINAL, "--threshold", "5", "8"], capsys)
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    ratings = pd.read_csv(RATINGS)
    for t in (5, 8):
        rows = table[table["quantity"] == f"P(score >= {t})"].set_index("system")
        share = (ratings["rating"] >= t).groupby(ratings["system"]).mean()
        assert sorted(rows.index) == sorted(share.index)
        assert rows["observed"].to_numpy() == pytest.approx(share[rows.index].to_numpy())
    assert set(table["quantity"]) == {"mean score", "P(score >= 5)", "P(score >= 8)"}


def test_default_thresholds_are_every_level(capsys):
    code, out, err = run(ORDINAL, capsys)
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    assert set(table["quantity"]) == {"mean score", *(f"P(score >= {t})" for t in range(1, 11))}


@pytest.mark.parametrize(("extra", "named"), [
    (["--k", "7"], "--k is pass@k, which needs c-of-n counts"),
    (["--threshold", "12"], "--threshold: threshold 12 is not a level 1..10"),
])
def test_graded_model_refusals(capsys, extra, named):
    code, _, err = run([*ORDINAL, *extra], capsys)
    assert code == 2
    assert named in err
    if "--k" in extra:
        assert "use --threshold" in err


def test_several_thresholds_for_a_count_model_are_refused(capsys):
    code, _, err = run(["prior-check", "dataset:tinyagent", "--threshold", "5", "7"], capsys)
    assert code == 2
    assert "for graded-score models (--model ordinal | partial-credit)" in err
    assert "--k for pass@k" in err


def test_one_threshold_for_a_count_model_without_scores_says_what_it_is(tmp_path, capsys):
    counts = tmp_path / "counts.csv"
    pd.DataFrame({"system": ["A", "A"], "task": ["t1", "t2"], "n": [4, 4],
                  "c": [1, 3]}).to_csv(counts, index=False)
    code, _, err = run(["prior-check", str(counts), "--threshold", "7"], capsys)
    assert code == 2
    assert "takes no option [--threshold]" in err
    assert "P(score >= t) needs a graded-score model" in err


def test_one_threshold_is_the_log_readers_success_rule(capsys):
    base = ["prior-check", str(LOG), "--draws", "200", "--format", "csv", "--k", "1"]
    code, plain, err = run(base, capsys)
    assert code == 0, err
    assert pd.read_csv(io.StringIO(plain))["observed pass@1"].gt(0).all()  # 0/1 scores
    code, flag, err = run([*base, "--threshold", "2"], capsys)
    assert code == 0, err
    assert (pd.read_csv(io.StringIO(flag))["observed pass@1"] == 0).all()  # no score >= 2
    code, reader, err = run([*base, "--reader-threshold", "2"], capsys)
    assert code == 0, err
    assert reader == flag
    code, _, err = run([*base, "--threshold", "2", "--reader-threshold", "2"], capsys)
    assert code == 2 and "give one" in err


# ----------------------------------------------------------------------- every registered model
DESIGNS = Path(__file__).resolve().parents[1] / "fixtures" / "designs"
TINY = ["dataset:tinyagent", "--where", "experiment=sec17.1"]
#: The command-line inputs of each registered model's prior check (the design models read
#: their design tables, the formula model its formula, the graded models a score table).
EVERY_MODEL = {
    "rate-grid": [*TINY, "--model", "rate-grid"],
    "beta-binomial": [*TINY, "--model", "beta-binomial"],
    "irt-1pl": [*TINY, "--model", "irt-1pl"],
    "irt-2pl": [*TINY, "--model", "irt-2pl"],
    "irt-3pl": [*TINY, "--model", "irt-3pl"],
    "factorial": [str(DESIGNS / "factorial_counts.csv"), "--factors",
                  str(DESIGNS / "factors.csv")],
    "training-seeds": [str(DESIGNS / "seeds_counts.csv"), "--recipes",
                       str(DESIGNS / "recipes.csv")],
    "judge-error": [str(DESIGNS / "judge_counts.csv"), "--gold", str(DESIGNS / "judge_gold.csv")],
    "formula": [*TINY, "--formula", "c | trials(n) ~ system + (1 | task)"],
    "ordinal": [str(RATINGS), "--model", "ordinal", "--score", "rating", "--max-score", "10"],
    "partial-credit": ["CREDIT", "--model", "partial-credit", "--score", "credit"],
}


def test_every_registered_model_is_listed():
    from evalbayes.models import REGISTRY

    assert sorted(EVERY_MODEL) == sorted(entry.name for entry in REGISTRY)


@pytest.mark.parametrize("name", sorted(EVERY_MODEL))
def test_prior_check_of_every_registered_model(name, capsys, tmp_path):
    credit = tmp_path / "credit.csv"  # partial credit in (0, 1): the ratings rescaled
    frame = pd.read_csv(RATINGS)
    frame.assign(credit=(frame["rating"] + 0.5) / 11).to_csv(credit, index=False)
    inputs = [str(credit) if item == "CREDIT" else item for item in EVERY_MODEL[name]]
    code, out, err = run(["prior-check", *inputs, "--draws", "200", "--seed", "1",
                          "--format", "csv"], capsys)
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    assert len(table) > 0 and table.notna().any().all()
    quantiles = table.filter(regex=r"^q\d")
    assert ((quantiles >= 0).all().all() and (quantiles <= 1).all().all()) or name in (
        "ordinal", "partial-credit")  # a graded model's mean score is on the score's scale
