"""Saved graded-score fits load back (``evalbayes.load``) as the ScorePosterior they were:
the same draws, scores and settings, quantities that match independent NumPy references
computed from the file's own draws, fingerprints that catch an edit, and clear refusals."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import xarray as xr
from score_fits import (
    TOP,
    exceedance_reference,
    file_draws,
    handmade_fit,
)

import evalbayes as eb
from evalbayes.io import ScoreData
from evalbayes.models.graded import ScorePosterior
from evalbayes.results import ConvergenceWarning


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    fit = handmade_fit()
    path = tmp_path_factory.mktemp("scores") / "fit.nc"
    assert fit.save(path) == path
    return fit, path


def test_load_returns_the_score_fit(saved):
    fit, path = saved
    back = eb.load(path)
    assert isinstance(back, ScorePosterior)
    assert back.model == fit.model and back.sampler == fit.sampler
    assert back.data.frame.equals(fit.data.frame)
    assert (back.data.kind, back.data.max_score, back.data.levels, back.data.has_grader) == (
        "ordinal", TOP, tuple(str(i) for i in range(TOP + 1)), True)
    for name, draws in fit.posterior.data_vars.items():
        np.testing.assert_array_equal(back.posterior[name].values, draws.values)
    assert list(back.posterior["system"].values) == ["A", "B", "C"]
    assert back.summary().equals(fit.summary())


@pytest.mark.parametrize("estimand", ["tasks", "population"])
def test_loaded_exceedance_matches_the_files_own_draws(saved, estimand):
    _, path = saved
    reference = exceedance_reference(file_draws(path), estimand)  # (C, D, S, K)
    back = eb.load(path)
    got = back.exceedance(estimand=estimand).transpose("chain", "draw", "system", "threshold")
    # "tasks" is a finite average (exact up to rounding); "population" is an integral:
    # 24-node Gauss-Hermite against a 4,001-point trapezoid rule
    tol = 1e-12 if estimand == "tasks" else 1e-6
    np.testing.assert_allclose(got.values, reference, atol=tol)
    # the mean score of a 0..K scale is the sum of P(score >= k), k = 1..K
    np.testing.assert_allclose(back.mean_score(estimand).values, reference.sum(axis=-1),
                               atol=tol * TOP)


def test_loaded_comparison_matches_the_files_own_draws(saved):
    _, path = saved
    reference = exceedance_reference(file_draws(path), "tasks")
    table = eb.load(path).compare(baseline="A", candidate="C", estimand="tasks")
    mean_diff = reference[:, :, 2].sum(-1) - reference[:, :, 0].sum(-1)
    row = table.set_index("quantity").loc["mean score"]
    assert row["P(candidate > baseline)"] == pytest.approx(float(np.mean(mean_diff > 0)))
    assert row["difference"] == pytest.approx(float(mean_diff.mean()))
    assert row["P(tie)"] == float(np.mean(mean_diff == 0))
    for k in (1, 3):
        diff = reference[:, :, 2, k - 1] - reference[:, :, 0, k - 1]
        row = table.set_index("quantity").loc[f"P(score >= {k})"]
        assert row["P(candidate > baseline)"] == pytest.approx(float(np.mean(diff > 0)))


def test_an_edited_draw_is_refused(saved, tmp_path):
    _, path = saved
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    post = tree["posterior"].to_dataset()
    post["task_sd"][0, 0] = post["task_sd"][0, 0] + 1.0
    tree["posterior"] = xr.DataTree(post)
    edited = tmp_path / "edited.nc"
    tree.to_netcdf(edited, engine="h5netcdf")
    with pytest.raises(ValueError, match="'posterior' group changed"):
        eb.load(edited)


def test_an_edited_score_is_refused(saved, tmp_path):
    _, path = saved
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    obs = tree["observed_data"].to_dataset()
    obs["score"][0] = (float(obs["score"][0]) + 1) % (TOP + 1)
    tree["observed_data"] = xr.DataTree(obs)
    edited = tmp_path / "edited.nc"
    tree.to_netcdf(edited, engine="h5netcdf")
    with pytest.raises(ValueError, match="'observed_data' group changed"):
        eb.load(edited)


def test_a_first_format_score_fit_asks_for_a_refit(saved, tmp_path):
    _, path = saved
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    tree.attrs["format"] = "evalbayes-scores/1"
    old = tmp_path / "old.nc"
    tree.to_netcdf(old, engine="h5netcdf")
    with pytest.raises(ValueError, match=r"before fingerprints.*refit the data"):
        eb.load(old)


def test_a_score_file_whose_model_is_a_count_model_is_refused(saved, tmp_path):
    _, path = saved
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    config = {"model": "beta-binomial"}
    tree.attrs["model_config"] = json.dumps(config)
    stored = json.loads(tree.attrs["fingerprint"])
    from evalbayes.inference import config_hash

    stored["model_config"] = config_hash(config)
    tree.attrs["fingerprint"] = json.dumps(stored)
    bad = tmp_path / "bad.nc"
    tree.to_netcdf(bad, engine="h5netcdf")
    with pytest.raises(ValueError, match="not a graded model"):
        eb.load(bad)


def test_an_unconverged_score_fit_warns_on_load(tmp_path):
    path = tmp_path / "bad.nc"
    handmade_fit(converged=False).save(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eb.load(path)
    assert any(issubclass(w.category, ConvergenceWarning) and "R-hat" in str(w.message)
               for w in caught)


def test_continuous_scores_round_trip_through_a_dataset():
    import pandas as pd

    frame = pd.DataFrame({"system": ["a", "a", "b", "b"], "task": ["x", "y", "x", "y"],
                          "score": [0.0, 0.25, 1.0, 0.5]})
    data = ScoreData.from_frame(frame)
    back = ScoreData.from_dataset(data.to_dataset())
    assert back.frame.equals(data.frame)
    assert (back.kind, back.max_score, back.levels, back.has_grader) == (
        "continuous", None, (), False)


def test_letter_grades_keep_their_names_through_a_dataset():
    import pandas as pd

    frame = pd.DataFrame({"system": ["a", "b"], "task": ["x", "x"], "grade": ["B", "F"]})
    data = ScoreData.from_frame(frame, score="grade", levels=["F", "D", "C", "B", "A"])
    back = ScoreData.from_dataset(data.to_dataset())
    assert back.levels == ("F", "D", "C", "B", "A") and back.max_score == 4
    assert back.frame.equals(data.frame)
