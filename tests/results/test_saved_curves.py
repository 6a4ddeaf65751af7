"""A saved fit keeps its k = 1 curve draws (the ``curves`` group, ``Posterior.save``): load
reads them back instead of drawing them again, and they are the very numbers a fresh
computation on the loaded draws gives."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import evalbayes
from evalbayes import EvalData
from evalbayes._core.names import METRICS
from evalbayes.models import BetaBinomialModel, RateGridModel


@pytest.fixture(scope="module")
def small_data():
    rng = np.random.default_rng(3)
    n = np.full((3, 12), 4)
    c = rng.binomial(4, rng.beta(1.0, 1.5, size=(3, 12)))
    return EvalData.from_arrays(n, c, systems=["a", "b", "c"])


def _fit(kind, data):
    if kind == "beta-binomial":
        return BetaBinomialModel().fit(data, seed=7)
    return RateGridModel().fit(data, seed=7)


@pytest.mark.parametrize("kind", ["beta-binomial", "rate-grid"])
def test_saved_curves_are_read_back_and_equal_a_fresh_computation(tmp_path, small_data,
                                                                   kind, monkeypatch):
    fit = _fit(kind, small_data)
    path = fit.save(tmp_path / "fit.nc")
    fresh = evalbayes.load(path)
    fresh._memo.clear()  # what a reader without the saved draws would compute
    expected = {e: fresh.curves(METRICS, 1, estimand=e) for e in fresh.model.estimands()}
    restored = evalbayes.load(path)
    assert "curves" not in restored.tree.children  # kept as the curves memo, not as data

    def refuse(*args, **kwargs):
        raise AssertionError("a saved fit's k = 1 curves were drawn again")

    monkeypatch.setattr(type(restored.model), "curves", refuse)
    for estimand, drawn in expected.items():
        got = restored.curves(METRICS, 1, estimand=estimand)
        for metric in METRICS:
            xr.testing.assert_identical(got[metric], drawn[metric])
            assert got[metric].attrs == drawn[metric].attrs
    # the summary and comparison read them too
    restored.summary(metrics=METRICS)
    evalbayes.compare(restored)


def test_curves_of_the_fit_itself_are_the_saved_ones(tmp_path, small_data):
    """Saving draws what the fit's own ``curves`` gives (no second stream), and saving a
    loaded fit again writes the same draws."""
    fit = _fit("beta-binomial", small_data)
    before = {e: fit.curves(METRICS, 1, estimand=e) for e in fit.model.estimands()}
    again = evalbayes.load(evalbayes.load(fit.save(tmp_path / "a.nc")).save(tmp_path / "b.nc"))
    for estimand, drawn in before.items():
        for metric in METRICS:
            np.testing.assert_array_equal(
                again.curves(METRICS, 1, estimand=estimand)[metric].values,
                drawn[metric].values)


def test_a_curves_group_of_the_wrong_shape_is_refused(tmp_path, small_data):
    """A file whose ``curves`` group was rewritten with consistent fingerprints (by another
    writer) still has to hold one variable per metric and estimand at k = 1."""
    from evalbayes.results._fingerprint import fit_fingerprint

    fit = _fit("beta-binomial", small_data)
    tree = xr.open_datatree(fit.save(tmp_path / "fit.nc"), engine="h5netcdf").load()
    curves = tree["curves"].to_dataset()
    tree["curves"] = xr.DataTree(curves.drop_vars("curve_0"))
    groups = {name: node.to_dataset() for name, node in tree.children.items()}
    import json

    tree.attrs["fingerprint"] = json.dumps(fit_fingerprint(
        groups, json.loads(tree.attrs["model_config"]), json.loads(tree.attrs["sampler"])),
        sort_keys=True)
    out = tmp_path / "short.nc"
    tree.to_netcdf(out, engine="h5netcdf")
    with pytest.raises(ValueError, match="'curves' group does not hold"):
        evalbayes.load(out)


@pytest.fixture(autouse=True)
def _keep_small_fits_curves(monkeypatch):
    """These fits are small (below the sizes that keep their curves): keep them anyway."""
    from evalbayes.results import _posterior

    monkeypatch.setattr(_posterior, "SAVED_CURVES_CELL_DRAWS", (0, 1e9))
    monkeypatch.setattr(_posterior, "SAVED_CURVES_MAX_ROW_DRAWS", 1e9)


@pytest.mark.parametrize("outside", ["above", "below", "rows"])
def test_a_fit_outside_the_sizes_is_saved_without_them(tmp_path, small_data, monkeypatch,
                                                         outside):
    from evalbayes.results import _posterior

    fit = _fit("beta-binomial", small_data)
    sizes = fit.posterior.sizes
    draws = sizes["chain"] * sizes["draw"]
    cell_draws = draws * int((small_data.n.values > 0).sum())
    # distinct (system, n, c) rows, counted independently of the code under test
    rows = len({(s, int(n), int(c)) for s in range(3)
                for n, c in zip(small_data.n.values[s], small_data.c.values[s], strict=True)})
    limits = {"above": (0, cell_draws - 1), "below": (cell_draws + 1, 1e9)}.get(outside,
                                                                                (0, 1e9))
    monkeypatch.setattr(_posterior, "SAVED_CURVES_CELL_DRAWS", limits)
    if outside == "rows":
        monkeypatch.setattr(_posterior, "SAVED_CURVES_MAX_ROW_DRAWS", draws * rows - 1)
    assert not fit.saves_curves()
    path = fit.save(tmp_path / "big.nc")
    assert "curves" not in xr.open_datatree(path, engine="h5netcdf").children
    restored = evalbayes.load(path)
    drawn = restored.curves(METRICS, 1, estimand="tasks")  # drawn when asked, same numbers
    np.testing.assert_array_equal(drawn["pass@k"].values,
                                  fit.curves(METRICS, 1, estimand="tasks")["pass@k"].values)
    monkeypatch.setattr(_posterior, "SAVED_CURVES_CELL_DRAWS", (cell_draws, cell_draws))
    monkeypatch.setattr(_posterior, "SAVED_CURVES_MAX_ROW_DRAWS", draws * rows)
    assert fit.saves_curves()
    assert "curves" in xr.open_datatree(fit.save(tmp_path / "at.nc"), engine="h5netcdf").children


@pytest.mark.parametrize("keep", [True, False])
def test_the_fit_command_says_whether_the_file_holds_them(tmp_path, small_data, monkeypatch,
                                                          capsys, keep):
    """`evalbayes fit` names the pass@1 / pass^1 draws in its `wrote` line only when the
    file holds them (an IRT fit, or one outside the sizes, is written without them)."""
    import pandas as pd

    from evalbayes.cli import main
    from evalbayes.results import _posterior

    table = tmp_path / "counts.csv"
    pd.DataFrame([(s, t, int(small_data.n.values[i, j]), int(small_data.c.values[i, j]))
                  for i, s in enumerate(small_data.systems)
                  for j, t in enumerate(small_data.tasks)],
                 columns=["system", "task", "n", "c"]).to_csv(table, index=False)
    monkeypatch.setattr(_posterior, "SAVED_CURVES_CELL_DRAWS", (0, 1e12 if keep else 0))
    monkeypatch.setattr(_posterior, "SAVED_CURVES_MAX_ROW_DRAWS", 1e12)
    out = tmp_path / "fit.nc"
    assert main(["fit", str(table), "--model", "beta-binomial", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"wrote {out} (" in err
    assert ("pass@1 and pass^1 draws" in err) is keep
    assert ("curves" in xr.open_datatree(out, engine="h5netcdf").children) is keep
