"""``evalbayes fit`` and ``prior-check`` with a graded-outcome model (``--model ordinal``):
scores read from a CSV table with ``--score`` / ``--grader``, errors naming file and line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from evalbayes.cli import main


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def ratings(tmp_path):
    rng = np.random.default_rng(0)
    rows = [(s, f"t{t}", int(rng.integers(0, 11)) if s == "A" else int(rng.integers(4, 11)), j)
            for s in ("A", "B") for t in range(8) for j in ("j1", "j2")]
    path = tmp_path / "ratings.csv"
    pd.DataFrame(rows, columns=["system", "task", "rating", "judge"]).to_csv(path, index=False)
    return path


def test_prior_check_of_the_ordinal_model(ratings, capsys):
    code, out, _ = run(["prior-check", str(ratings), "--model", "ordinal", "--score", "rating",
                        "--grader", "judge", "--max-score", "10", "--k", "5",
                        "--draws", "200", "--format", "csv"], capsys)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].startswith("system,quantity,q05")
    assert any(line.startswith("A,P(score >= 5)") for line in lines)


def test_bad_score_names_file_and_line(ratings, tmp_path, capsys):
    frame = pd.read_csv(ratings)
    frame.loc[3, "rating"] = 12
    bad = tmp_path / "bad.csv"
    frame.to_csv(bad, index=False)
    code, _, err = run(["prior-check", str(bad), "--model", "ordinal", "--score", "rating",
                        "--max-score", "10"], capsys)
    assert code != 0
    assert "bad.csv, line 5" in err and "above max_score=10" in err


@pytest.mark.slow
def test_fit_ordinal_from_a_table(ratings, tmp_path, capsys):
    out_path = tmp_path / "fit.nc"
    code, out, err = run(["fit", str(ratings), "--model", "ordinal", "--score", "rating",
                          "--grader", "judge", "--max-score", "10", "--draws", "200",
                          "--tune", "200", "--chains", "2", "--quiet", "-o", str(out_path)],
                         capsys)
    assert code == 0, err
    assert "mean score" in out and "P(score >= 10)" in out
    tree = xr.open_datatree(out_path)
    assert tree.attrs["format"] == "evalbayes-scores/1"
    assert set(tree["posterior"].to_dataset().data_vars) >= {"cutpoints", "system_effect",
                                                              "grader_effect"}
    assert tree["observed_data"].to_dataset().sizes["row"] == 32
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit.nc", "ratings.csv"]  # no temp left
