"""Restoring saved fits: ``load(path)`` checks a file's fingerprints and rebuilds its model.

Above the models in the layering (it looks the model up in the registry); the writing half is
:meth:`evalbayes.results.Posterior.save`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from evalbayes._version import __version__
from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig
from evalbayes.io._json import loads
from evalbayes.io._sources import check_regular, missing_path_message
from evalbayes.models import model_from_config
from evalbayes.results._fingerprint import fit_fingerprint, mismatches
from evalbayes.results._posterior import FIT_FORMAT, Posterior

__all__ = ["load"]


def _restore_strings(ds: xr.Dataset) -> xr.Dataset:
    """NetCDF returns string coordinates as fixed-width or bytes; restore Python str."""
    updates = {}
    for name, coord in ds.coords.items():
        if coord.dtype.kind in "USO":
            updates[name] = (coord.dims, np.array([str(v) for v in coord.values], dtype=object))
    return ds.assign_coords(updates)


def _json_attr(path: Path, attrs: Mapping[Any, Any], key: str) -> dict[str, Any]:
    """A JSON-object attribute of a fit (model_config, sampler, fingerprint), or why not."""
    if key not in attrs:
        raise ValueError(f"{path}: evalbayes fit without its {key!r} attribute")
    try:
        value = loads(attrs[key])
    except RecursionError:
        raise ValueError(f"{path}: the {key!r} attribute is nested too deeply") from None
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: the {key!r} attribute is not valid JSON ({err})") from err
    if not isinstance(value, dict):
        raise ValueError(f"{path}: the {key!r} attribute must be a JSON object, got "
                         f"{type(value).__name__} (edited or corrupted; refit the data)")
    return value


def load(path: str | Path) -> Posterior:
    """Restore a fit written by :meth:`Posterior.save`, exactly, or say why not.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        The file is not an evalbayes fit, or any of its draws, sample statistics, counts,
        coordinates, model configuration or sampler settings no longer match the
        fingerprints stored when it was saved (the message names what changed).
    """
    path = check_regular(path)  # a FIFO would block HDF5
    if not path.exists():
        raise FileNotFoundError(missing_path_message(path))
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a fit file")
    try:
        tree = xr.open_datatree(path, engine="h5netcdf").load()
    except Exception as err:  # h5py/netCDF raise many types for a foreign file
        raise ValueError(f"{path}: not a NetCDF file written by evalbayes ({err})") from err
    attrs = dict(tree.attrs)
    if attrs.get("format") != FIT_FORMAT:
        raise ValueError(
            f"{path}: not an evalbayes fit of this version (format attribute "
            f"{attrs.get('format')!r}, expected {FIT_FORMAT!r}); refit the data"
        )
    for group in ("posterior", "observed_data"):
        if group not in tree.children:
            raise ValueError(f"{path}: evalbayes fit without a {group!r} group")
    config = _json_attr(path, attrs, "model_config")
    sampler_settings = _json_attr(path, attrs, "sampler")
    stored = _json_attr(path, attrs, "fingerprint")
    groups = {
        name: _restore_strings(node.to_dataset()) for name, node in tree.children.items()
    }
    problems = mismatches(stored, fit_fingerprint(groups, config, sampler_settings))
    if problems:
        raise ValueError(
            f"{path}: the file no longer matches the fingerprints stored when it was saved: "
            + "; ".join(problems)
            + " (edited or corrupted; refit the data)"
        )
    saved_version = attrs.get("evalbayes_version")
    if saved_version != __version__:
        warnings.warn(
            f"{path} was written by evalbayes {saved_version}, this is {__version__}",
            UserWarning,
            stacklevel=2,
        )
    try:
        model = model_from_config(config)
        sampler = SamplerConfig(**sampler_settings)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: {err}") from err
    data = EvalData.from_dataset(groups["observed_data"])
    rebuilt = xr.DataTree.from_dict(groups)
    rebuilt.attrs.update(attrs)
    posterior = model.posterior_class(model=model, data=data, sampler=sampler, tree=rebuilt)
    posterior.warn_if_unconverged(f"load({str(path)!r})")
    return posterior
