"""read_groups reads a fit file exactly as ``xr.open_datatree(..., engine="h5netcdf")`` does
(the reference here), or declines (None) and leaves the file to xarray."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import evalbayes
from evalbayes._core.netcdf import read_groups


def _same_value(a, b) -> bool:
    if isinstance(a, (float, np.floating, np.ndarray)) or isinstance(b, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    return a == b


def assert_read_as_xarray_does(path) -> None:
    """Groups identical to xarray's (values, dims, coordinates, indexes, attributes), with
    the same dtypes, element types, attribute types and encodings, in the same order."""
    read = read_groups(path)
    assert read is not None
    attrs, groups = read
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    expected = {name: node.to_dataset() for name, node in tree.children.items()}
    assert list(groups) == list(expected)
    assert list(attrs) == list(tree.attrs)
    for key, value in tree.attrs.items():
        assert type(attrs[key]) is type(value) and _same_value(attrs[key], value), key
    for name, want in expected.items():
        got = groups[name]
        xr.testing.assert_identical(got, want)
        assert list(got.variables) == list(want.variables)
        assert list(got.coords) == list(want.coords)
        assert set(got.xindexes) == set(want.xindexes)
        for var in want.variables:
            assert got[var].dtype == want[var].dtype, (name, var)
            if want[var].size:
                assert type(got[var].values.flat[0]) is type(want[var].values.flat[0])
            for key, value in want[var].attrs.items():
                assert type(got[var].attrs[key]) is type(value), (name, var, key)
            assert list(got[var].encoding) == list(want[var].encoding), (name, var)
            for key, value in want[var].encoding.items():
                mine = got[var].encoding[key]
                assert type(mine) is type(value) and _same_value(mine, value), (var, key)


def everything_tree() -> xr.DataTree:
    """A tree with each structure a fit file holds: text, boolean, integer and float
    variables (NaN included), a 0-d variable, a coordinate along a dimension that is not its
    own (``benchmark``), dimensions without coordinates, Unicode text, and attributes of
    each kind on the root, the groups and the variables."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=(2, 3, 4))
    values[0, 0, 0] = np.nan
    posterior = xr.Dataset(
        {
            "theta": (("chain", "draw", "system"), values, {"note": "é ✓", "scale": 2.5}),
            "kappa": ((), np.float64(3.0)),
            "flag": (("chain", "draw"), rng.random((2, 3)) > 0.5),
            "count": (("chain", "draw"), rng.integers(0, 9, (2, 3)).astype(np.int32)),
            "small": (("system",), np.arange(4, dtype=np.uint8)),
            "single": (("chain", "draw"), rng.random((2, 3)).astype(np.float32)),
            "bare": (("cell",), np.arange(5.0)),
        },
        coords={"chain": [0, 1], "draw": [0, 1, 2],
                "system": np.array(["a", "b ü", "=c", "d"], dtype=object)},
        attrs={"group_note": "posterior", "created": 3},
    )
    observed = xr.Dataset(
        {"n": (("system", "task"), np.full((4, 2), 8)),
         "c": (("system", "task"), rng.integers(0, 9, (4, 2)))},
        coords={"system": np.array(["a", "b ü", "=c", "d"], dtype=object),
                "task": np.array(["t1", "t2"], dtype=object),
                "benchmark": ("task", np.array(["x", "y"], dtype=object))},
    )
    tree = xr.DataTree.from_dict({"posterior": posterior, "observed_data": observed})
    tree.attrs.update(format="test", number=7, ratio=0.5, ints=[1, 2, 3], flag=1,
                      words=["one", "two"], empty="")
    return tree


def test_every_structure_is_read_as_xarray_reads_it(tmp_path):
    path = tmp_path / "tree.nc"
    everything_tree().to_netcdf(path, engine="h5netcdf")
    assert_read_as_xarray_does(path)


def test_saved_fits_are_read_as_xarray_reads_them(tmp_path, tinyagent_fit, tinyagent):
    """A Beta-Binomial fit by NUTS (sample statistics, convergence group), an exact one of
    two systems, a rate-grid fit (SMC statistics; its curves kept or not) and a graded-score
    fit: the groups that every model's fits are made of."""
    from score_fits import handmade_fit

    from evalbayes.models import BetaBinomialModel, RateGridModel

    fits = {
        "nuts": tinyagent_fit,
        "exact": BetaBinomialModel().fit(tinyagent, seed=1),
        "rate_grid": RateGridModel().fit(tinyagent, seed=1),
        "scores": handmade_fit(),
    }
    for name, fit in fits.items():
        path = fit.save(tmp_path / f"{name}.nc")
        assert_read_as_xarray_does(path)


def _compressed(path, out):
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    encoding = {f"/{name}": {var: {"zlib": True} for var in node.data_vars}
                for name, node in tree.children.items()}
    tree.to_netcdf(out, engine="h5netcdf", encoding=encoding)


def _nested(path, out):
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    tree["posterior/inner"] = xr.DataTree(xr.Dataset({"z": ("i", [1.0])}))
    tree.to_netcdf(out, engine="h5netcdf")


def _root_variable(path, out):
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    tree.dataset = xr.Dataset({"z": ("i", [1.0])}, attrs=tree.attrs)
    tree.to_netcdf(out, engine="h5netcdf")


def _fixed_width_text(path, out):
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    observed = tree["observed_data"].to_dataset()
    tree["observed_data"] = xr.DataTree(observed.assign(label=("task", ["ab", "cd"])))
    tree.to_netcdf(out, engine="h5netcdf", encoding={"/observed_data": {"label": {"dtype": "S1"}}})


@pytest.mark.parametrize("edit", [_compressed, _nested, _root_variable, _fixed_width_text])
def test_what_it_does_not_read_is_left_to_xarray(tmp_path, edit):
    """Compressed variables, nested groups, root variables, character arrays: None, and
    ``load`` of such a fit file gives the fit that xarray's reader gives."""
    path = tmp_path / "tree.nc"
    everything_tree().to_netcdf(path, engine="h5netcdf")
    out = tmp_path / "edited.nc"
    edit(path, out)
    assert read_groups(out) is None


def test_a_compressed_fit_still_loads(tmp_path, tinyagent):
    from evalbayes.models import BetaBinomialModel

    fit = BetaBinomialModel().fit(tinyagent, seed=1)
    path = fit.save(tmp_path / "fit.nc")
    out = tmp_path / "compressed.nc"
    _compressed(path, out)
    assert read_groups(out) is None
    restored = evalbayes.load(out)
    xr.testing.assert_identical(restored.posterior, evalbayes.load(path).posterior)


def test_no_hdf5_file_is_none(tmp_path):
    text = tmp_path / "text.nc"
    text.write_text("hello")
    assert read_groups(text) is None
