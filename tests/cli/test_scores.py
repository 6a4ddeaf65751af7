"""``evalbayes fit`` and ``prior-check`` with a graded-outcome model (``--model ordinal``):
scores read from a CSV table with ``--score`` / ``--grader``, errors naming file and line; a
saved score fit read by ``summary``, ``compare`` and ``report`` (numbers checked against
NumPy references computed from the file's own draws), and the options that do not apply to
a score fit refused by name."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from score_fits import TOP, exceedance_reference, file_draws, handmade_fit

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
                        "--grader", "judge", "--max-score", "10", "--threshold", "5",
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


def test_fit_of_a_graded_model_refuses_the_readers_threshold(ratings, tmp_path, capsys):
    code, _, err = run(["fit", str(ratings), "--model", "ordinal", "--score", "rating",
                        "--max-score", "10", "--threshold", "5", "-o",
                        str(tmp_path / "fit.nc")], capsys)
    assert code == 2
    assert "success rule (scores >= T count as successes)" in err
    assert "a graded model fits the scores" in err
    assert not (tmp_path / "fit.nc").exists()
    code, _, err = run(["prior-check", str(ratings), "--model", "ordinal", "--score", "rating",
                        "--max-score", "10", "--reader-threshold", "5"], capsys)
    assert code == 2 and "a graded model fits the scores" in err


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
    assert tree.attrs["format"] == "evalbayes-scores/2"
    assert set(tree["posterior"].to_dataset().data_vars) >= {"cutpoints", "system_effect",
                                                              "grader_effect"}
    assert tree["observed_data"].to_dataset().sizes["row"] == 32
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit.nc", "ratings.csv"]  # no temp left
    # and the fit reads back: summary, compare and report of the saved file
    code, out, err = run(["summary", str(out_path), "--format", "csv"], capsys)
    assert code == 0, err
    summary = pd.read_csv(io.StringIO(out))
    assert len(summary) == 2 * 11  # 2 systems x (mean score + P(score >= 1..10))
    code, out, err = run(["compare", str(out_path), "A", "B"], capsys)
    assert code == 0, err
    assert "B vs A: P(B > A) of the mean score" in out
    code, _, err = run(["report", str(out_path), "-o", str(tmp_path / "r.html")], capsys)
    assert code == 0, err
    assert "P(score &gt;= t)" in (tmp_path / "r.html").read_text()


# --------------------------------------------------------------------------- saved score fits
@pytest.fixture(scope="module")
def score_fit(tmp_path_factory):
    path = tmp_path_factory.mktemp("scorefit") / "fit.nc"
    handmade_fit().save(path)
    return path


def test_summary_of_a_score_fit_matches_the_files_draws(score_fit, capsys):
    code, out, err = run(["summary", str(score_fit), "--format", "csv"], capsys)
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out)).set_index(["system", "quantity"])
    reference = exceedance_reference(file_draws(score_fit), "population")  # (C, D, S, K)
    for s, system in enumerate(("A", "B", "C")):
        for k in range(1, TOP + 1):
            draws = reference[:, :, s, k - 1].ravel()
            row = table.loc[(system, f"P(score >= {k})")]
            # the package integrates a new task by 24-node Gauss-Hermite, the reference by a
            # 4,001-point trapezoid rule
            assert row["mean"] == pytest.approx(draws.mean(), abs=1e-6)
            assert row["lower"] == pytest.approx(np.quantile(draws, 0.025), abs=1e-6)
        mean = reference[:, :, s].sum(-1).ravel()
        assert table.loc[(system, "mean score"), "mean"] == pytest.approx(mean.mean(), abs=4e-6)


def test_summary_text_shows_parameters_and_diagnostics(score_fit, capsys):
    code, out, _ = run(["summary", str(score_fit), "--threshold", "2", "4"], capsys)
    assert code == 0
    assert "P(score >= 2)" in out and "P(score >= 3)" not in out
    assert "cutpoints[1]" in out and "grader_effect[j1]" in out
    assert "diagnostics: R-hat" in out


def test_compare_of_a_score_fit_matches_the_files_draws(score_fit, capsys):
    code, out, err = run(["compare", str(score_fit), "A", "C", "--estimand", "tasks",
                          "--format", "csv"], capsys)
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out)).set_index("quantity")
    reference = exceedance_reference(file_draws(score_fit), "tasks")
    diff = reference[:, :, 2].sum(-1) - reference[:, :, 0].sum(-1)
    assert table.loc["mean score", "P(candidate > baseline)"] == pytest.approx(np.mean(diff > 0))
    assert table.loc["mean score", "difference"] == pytest.approx(diff.mean())
    for k in range(1, TOP + 1):
        d = reference[:, :, 2, k - 1] - reference[:, :, 0, k - 1]
        assert table.loc[f"P(score >= {k})", "P(candidate > baseline)"] == pytest.approx(
            np.mean(d > 0))


def test_compare_all_pairs_of_a_score_fit(score_fit, capsys):
    code, out, _ = run(["compare", str(score_fit), "--threshold", "3"], capsys)
    assert code == 0
    for pair in ("B vs A", "C vs A", "C vs B"):
        assert f"{pair}: P(B > A) of the mean score" in out


def test_report_of_a_score_fit(score_fit, tmp_path, capsys):
    from html import unescape

    out_path = tmp_path / "report.html"
    code, _, err = run(["report", str(score_fit), "-o", str(out_path)], capsys)
    assert code == 0, err
    html = unescape(out_path.read_text())
    for text in ("Scores: mean and P(score >= t) per system", "Comparisons: P(B > A)",
                 "MCMC diagnostics", "Diagnostics passed", "cutpoints[1]", "data:image/png",
                 "P(score >= t) against the threshold t per system"):
        assert text in html, text
    reference = exceedance_reference(file_draws(score_fit), "population")
    diff = reference[:, :, 1].sum(-1) - reference[:, :, 0].sum(-1)
    # the B vs A row of the mean-score table: the difference and P(B > A), as formatted
    assert f"{diff.mean():+.3f}" in html and f"{np.mean(diff > 0):.4f}" in html


def test_report_of_an_unconverged_score_fit_warns(tmp_path, capsys):
    from html import unescape

    path = tmp_path / "bad.nc"
    handmade_fit(converged=False).save(path)
    out_path = tmp_path / "report.html"
    code, _, err = run(["report", str(path), "-o", str(out_path), "--strict"], capsys)
    assert code == 1
    assert "did not converge" in err
    html = unescape(out_path.read_text())
    assert "The fit did not converge: its numbers may be wrong" in html
    code, _, _ = run(["summary", str(path), "--strict"], capsys)
    assert code == 1


def test_markdown_report_of_a_score_fit(score_fit, tmp_path, capsys):
    code, _, err = run(["report", str(score_fit), "-o", str(tmp_path / "r.html"), "--md"],
                       capsys)
    assert code == 0, err
    assert (tmp_path / "r_files" / "score-curves.png").stat().st_size > 1000
    assert "P\\(B &gt; A\\)" in (tmp_path / "r.md").read_text()


@pytest.mark.parametrize(("args", "named"), [
    (["summary", "--k", "2"], "--k (pass@k needs c-of-n counts"),
    (["compare", "--k", "2"], "--k (pass@k needs c-of-n counts"),
    (["compare", "--metric", "pass^k"], "--metric (pass@k / pass^k are c-of-n metrics"),
    (["compare", "--rope", "0.05"], "--rope (the region of practical equivalence"),
    (["summary", "--threshold", "7"], "--threshold: threshold 7 is not a level 1..4"),
    (["compare", "A", "Z"], "system 'Z' is not in the fit"),
])
def test_options_that_do_not_apply_to_a_score_fit(score_fit, capsys, args, named):
    code, _, err = run([args[0], str(score_fit), *args[1:]], capsys)
    assert code == 2
    assert named in err


@pytest.mark.parametrize("command", [["pass-at-k"], ["plot"], ["items"]])
def test_count_commands_refuse_a_score_fit(score_fit, capsys, command):
    code, _, err = run([command[0], str(score_fit)], capsys)
    assert code == 2
    assert "is a graded-score fit (ordinal)" in err and "summary, compare, report" in err


def test_threshold_on_a_count_fit_is_refused(tmp_path, capsys):
    path = tmp_path / "tau.nc"
    assert run(["fit", "dataset:tau_bench_airline", "-o", str(path), "--quiet"], capsys)[0] == 0
    code, _, err = run(["summary", str(path), "--threshold", "3"], capsys)
    assert code == 2
    assert "--threshold applies to graded-score fits" in err and "use --k" in err


def test_report_of_score_data_points_to_the_fit(ratings, tmp_path, capsys):
    code, _, err = run(["report", str(ratings), "--model", "ordinal", "-o",
                        str(tmp_path / "r.html")], capsys)
    assert code == 2
    assert "graded scores are reported from their fit" in err
