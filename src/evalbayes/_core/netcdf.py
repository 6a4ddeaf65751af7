"""Reading the groups of a NetCDF-4 file that xarray wrote, by h5py, in one pass.

``xr.open_datatree(path, engine="h5netcdf").load()`` resolves every variable's dimensions
through h5netcdf's dimension objects, a few hundred HDF5 lookups per file (917 on the
Beta-Binomial fit of SWE-bench Verified, 1,123 on the rate grid's), and reads the arrays
through xarray's lazy wrappers. :func:`read_groups` reads the same file in one pass: each
group's datasets straight into NumPy, the dimension names from each variable's
``DIMENSION_LIST``, the attributes as h5netcdf decodes them (its own
:class:`h5netcdf.attrs.Attributes`, then bytes to text as xarray's h5netcdf backend does),
and the variables decoded by xarray's own CF decoder
(:func:`xarray.conventions.decode_cf_variables`: fill values, booleans, the
``coordinates`` attribute), the Dataset built as xarray's store backend builds it; a float
variable whose fill value is NaN skips the decoder's mask, which would change nothing. The
groups are ``identical`` to xarray's, attributes, dtypes and encodings included (tested on
every structure a fit file holds and on saved fits of each kind: exact and NUTS
Beta-Binomial, rate grid, graded scores), in 0.05-0.08 s where xarray's reader took 0.13-0.25 s
(SWE-bench Verified's two fits, warm; ``benchmarks/speed/derived.md``).

It reads what xarray's ``DataTree.to_netcdf(engine="h5netcdf")`` writes: a root group of
attributes and one level of groups, each of contiguous, unfiltered datasets of numbers,
booleans or variable-length text, every dimension a dimension scale. For anything else it
returns None and the caller opens the file with xarray, so no file is read differently.
"""

from __future__ import annotations

from os import PathLike
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["read_groups"]

#: The dimension-scale name h5netcdf gives a dimension that has no coordinate variable.
_BARE_DIMENSION = b"This is a netCDF dimension but not a netCDF variable"

#: The filter settings xarray's h5netcdf backend records for a contiguous dataset (h5netcdf's
#: ``Variable.filters()``: a contiguous dataset has none).
_NO_FILTERS = {"zlib": False, "szip": False, "bzip2": False, "blosc": False, "zstd": False,
               "shuffle": False, "fletcher32": False}


def _attributes(h5attrs: Any, h5py: Any) -> dict[str, Any]:
    """An HDF5 object's attributes as xarray's h5netcdf backend returns them."""
    from h5netcdf.attrs import Attributes

    out = {}
    for key, value in Attributes(h5attrs, None, h5py).items():
        if key not in ("_FillValue", "missing_value") and isinstance(value, bytes):
            value = value.decode("utf-8")  # a UnicodeDecodeError: xarray's reader warns
        out[key] = value
    return out


def _group(group: Any, h5py: Any, source: str) -> xr.Dataset | None:
    """One group as xarray's store backend builds it, or None where it holds anything
    :func:`read_groups` does not read."""
    from xarray.conventions import decode_cf_variables

    variables: dict[str, xr.Variable] = {}
    for name, item in group.items():
        if not isinstance(item, h5py.Dataset) or item.chunks is not None:
            return None  # a subgroup, a chunked or filtered dataset
        is_scale = item.attrs.get("CLASS") == b"DIMENSION_SCALE"
        if is_scale and bytes(item.attrs.get("NAME", b"")).startswith(_BARE_DIMENSION):
            continue  # a dimension without a coordinate variable
        if is_scale:
            if item.ndim != 1:
                return None
            dims: tuple[str, ...] = (name,)
        elif item.ndim == 0:
            dims = ()
        else:
            references = item.attrs.get("DIMENSION_LIST")
            if references is None or len(references) != item.ndim:
                return None  # phony dimensions
            dims = tuple(
                group.file[ref[0]].name.rsplit("/", 1)[-1] if len(ref) == 1 else ""
                for ref in references
            )
            if "" in dims:
                return None
        text = h5py.check_string_dtype(item.dtype)
        if text is not None:
            if text.length is not None:
                return None  # fixed-width text: xarray joins characters
            values = item.asstr()[()]
            encoding: dict[str, Any] = {"dtype": str}
        elif (item.dtype.kind in "fiub" and item.dtype.isnative
              and h5py.check_enum_dtype(item.dtype) is None):
            values = item[()]
            encoding = {"dtype": item.dtype}
        else:
            return None
        encoding.update(contiguous=True, chunksizes=None, **_NO_FILTERS, source=source,
                        original_shape=item.shape)
        attrs = _attributes(item.attrs, h5py)
        fill = attrs.get("_FillValue")
        if (item.dtype.kind == "f" and "missing_value" not in attrs
                and isinstance(fill, float | np.floating) and np.isnan(fill)):
            # NaN marks missing floats as NaN: the decoder's mask (a pass over the array
            # and a copy, 0.1 s for the rate grid's 51 MB of draws) changes nothing
            encoding["_FillValue"] = attrs.pop("_FillValue")
        variables[name] = xr.Variable(dims, np.asarray(values), attrs, encoding)
    decoded, group_attrs, coord_names = decode_cf_variables(
        variables, _attributes(group.attrs, h5py)
    )
    coords = {n: v for n, v in decoded.items() if n in coord_names or v.dims == (n,)}
    data = {n: v for n, v in decoded.items() if n not in coords}
    return xr.Dataset(data, coords=coords, attrs=group_attrs)


def read_groups(
    path: str | PathLike[str],
) -> tuple[dict[str, Any], dict[str, xr.Dataset]] | None:
    """The root attributes and the groups of a NetCDF-4 file, as
    ``xr.open_datatree(path, engine="h5netcdf").load()`` gives them (``tree.attrs`` and
    ``{name: node.to_dataset()}``), or None where the file holds anything this reader does
    not read exactly so (see the module's docstring) or cannot be opened by h5py: open it
    with xarray then, which says what is wrong with it."""
    import h5py

    try:
        handle = h5py.File(path, "r")
    except OSError:
        return None
    with handle:
        root = handle["/"]
        attrs = _attributes(root.attrs, h5py)
        groups: dict[str, xr.Dataset] = {}
        for name, item in root.items():
            if not isinstance(item, h5py.Group):
                return None  # variables in the root group
            dataset = _group(item, h5py, str(path))
            if dataset is None:
                return None
            groups[name] = dataset
    return attrs, groups
