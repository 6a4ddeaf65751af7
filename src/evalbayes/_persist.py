"""Restoring saved fits: ``load(path)`` checks a file's fingerprints and rebuilds its model
and result: a c-of-n :class:`~evalbayes.results.Posterior` or a graded-score
:class:`~evalbayes.models.graded.ScorePosterior`, by the file's ``format`` (:data:`FORMATS`).

Above the models in the layering (it looks the model up in the registry); the writing half is
:meth:`evalbayes.results.Posterior.save`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from evalbayes._core.names import METRICS
from evalbayes._core.netcdf import read_groups
from evalbayes._version import __version__
from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig
from evalbayes.io._json import loads
from evalbayes.io._sources import check_regular, missing_path_message
from evalbayes.models import model_from_config
from evalbayes.models.graded import ScoreModel, ScorePosterior
from evalbayes.models.graded._posterior import SCORE_FIT_FORMAT
from evalbayes.results._fingerprint import fit_fingerprint, mismatches
from evalbayes.results._posterior import (
    CONVERGENCE_GROUP,
    FIT_FORMAT,
    SAVED_CURVE_K,
    SAVED_CURVES_GROUP,
    Posterior,
)

__all__ = ["FORMATS", "load"]


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


#: An older score-fit format: written before fingerprints, refused with a request to refit.
_RETIRED_FORMATS = {"evalbayes-scores/1": "a graded-score fit written before fingerprints"}


def _count_fit(path: Path, model: Any, sampler: SamplerConfig,
               groups: dict[str, xr.Dataset], attrs: dict[str, Any]) -> Posterior:
    """A c-of-n fit: the counts and the model's typed posterior (``model.posterior_class``)."""
    if isinstance(model, ScoreModel):
        raise ValueError(f"{path}: a c-of-n fit file whose model is the graded model "
                         f"{model.name!r} (edited or corrupted; refit the data)")
    data = EvalData.from_dataset(groups["observed_data"])
    groups = dict(groups)
    convergence = groups.pop(CONVERGENCE_GROUP, None)  # fingerprinted with the rest
    curves = groups.pop(SAVED_CURVES_GROUP, None)
    rebuilt = xr.DataTree.from_dict(groups)
    rebuilt.attrs.update(attrs)
    posterior = model.posterior_class(model=model, data=data, sampler=sampler, tree=rebuilt)
    if convergence is not None and posterior.is_mcmc:
        posterior._take_diagnostics({str(k): v.values for k, v in convergence.data_vars.items()})
    if curves is not None:
        _check_saved_curves(path, curves, posterior)
        posterior._take_curves(curves)
    return posterior


def _check_saved_curves(path: Path, curves: xr.Dataset, posterior: Posterior) -> None:
    """The saved curve draws are one per metric and estimand of the model, at
    :data:`SAVED_CURVE_K`, over the fit's chains, draws and systems, or say why not (the
    fingerprint already refuses edited values; this refuses a file written otherwise)."""
    expected = {(m, e) for m in METRICS for e in posterior.model.estimands()}
    found = {(str(v.attrs.get("metric")), str(v.attrs.get("estimand")))
             for v in curves.data_vars.values()}
    sizes = posterior.posterior.sizes
    shapes_ok = all(
        v.dims[:2] == ("chain", "draw") and v.shape[:2] == (sizes["chain"], sizes["draw"])
        and "k" in v.coords and v["k"].values.tolist() == list(map(float, SAVED_CURVE_K))
        for v in curves.data_vars.values()
    )
    if found != expected or len(curves.data_vars) != len(expected) or not shapes_ok:
        raise ValueError(f"{path}: the {SAVED_CURVES_GROUP!r} group does not hold the pass@k "
                         f"and pass^k draws at k = {list(SAVED_CURVE_K)} of every estimand of "
                         "this fit (edited or corrupted; refit the data)")


def _score_fit(path: Path, model: Any, sampler: SamplerConfig,
               groups: dict[str, xr.Dataset], attrs: dict[str, Any]) -> ScorePosterior:
    """A graded-score fit (:meth:`ScorePosterior.save`): the scores and the draws."""
    if not isinstance(model, ScoreModel):
        raise ValueError(f"{path}: a graded-score fit file whose model {model.name!r} is not "
                         "a graded model (edited or corrupted; refit the data)")
    return ScorePosterior.from_groups(model, sampler, groups,
                                      source=str(attrs.get("source", path)))


#: What ``load`` reads, by the file's ``format`` attribute: the one place a fit file kind is
#: listed (the model itself comes from the model registry, :func:`model_from_config`).
FORMATS: dict[str, Callable[..., Posterior | ScorePosterior]] = {
    FIT_FORMAT: _count_fit,
    SCORE_FIT_FORMAT: _score_fit,
}


def _read(path: Path) -> tuple[dict[str, Any], dict[str, xr.Dataset]]:
    """A fit file's root attributes and groups: by :func:`~evalbayes._core.netcdf.read_groups`
    (the same Datasets as xarray's reader, in a third to a half of its time), else, for a
    file that reader does not read, by ``xr.open_datatree``, which also says what is wrong
    with a file that is no NetCDF."""
    try:
        read = read_groups(path)
    except Exception:  # a file h5py opens but the fast reader trips on: xarray says why
        read = None
    if read is not None:
        return read
    try:
        tree = xr.open_datatree(path, engine="h5netcdf").load()
    except Exception as err:  # h5py/netCDF raise many types for a foreign file
        raise ValueError(f"{path}: not a NetCDF file written by evalbayes ({err})") from err
    attrs = {str(key): value for key, value in tree.attrs.items()}
    return attrs, {name: node.to_dataset() for name, node in tree.children.items()}


def load(path: str | Path) -> Posterior | ScorePosterior:
    """Restore a fit written by :meth:`Posterior.save` (counts) or
    :meth:`~evalbayes.models.graded.ScorePosterior.save` (graded scores), exactly, or say
    why not.

    The kind of fit is read from the file's ``format`` attribute (:data:`FORMATS`); the model
    from its stored configuration through the model registry.

    Returns
    -------
    Posterior or ScorePosterior
        The fit as it was saved.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        The file is not an evalbayes fit, or any of its draws, sample statistics, data,
        coordinates, model configuration or sampler settings no longer match the
        fingerprints stored when it was saved (the message names what changed).
    """
    path = check_regular(path)  # a FIFO would block HDF5
    if not path.exists():
        raise FileNotFoundError(missing_path_message(path))
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a fit file")
    attrs, children = _read(path)
    fmt = attrs.get("format")
    if fmt in _RETIRED_FORMATS:
        raise ValueError(f"{path}: {_RETIRED_FORMATS[fmt]} (format {fmt!r}); refit the data")
    if fmt not in FORMATS:
        raise ValueError(
            f"{path}: not an evalbayes fit of this version (format attribute "
            f"{fmt!r}, expected one of {sorted(FORMATS)}); refit the data"
        )
    for group in ("posterior", "observed_data"):
        if group not in children:
            raise ValueError(f"{path}: evalbayes fit without a {group!r} group")
    config = _json_attr(path, attrs, "model_config")
    sampler_settings = _json_attr(path, attrs, "sampler")
    stored = _json_attr(path, attrs, "fingerprint")
    groups = {name: _restore_strings(ds) for name, ds in children.items()}
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
    posterior = FORMATS[fmt](path, model, sampler, groups, attrs)
    posterior.warn_if_unconverged(f"load({str(path)!r})")
    return posterior
