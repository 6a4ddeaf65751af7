"""Fingerprints of a fit: hashes over everything that determines its results.

A saved fit stores one SHA-256 digest per group (``posterior``, ``sample_stats``,
``observed_data``, ...) over its variables' names, dims, values and coordinates, one over the
model configuration and one over the sampler settings. :func:`evalbayes.load` recomputes
them and refuses a file whose draws, sample statistics, coordinates, counts, configuration or
sampler seed were edited, naming what changed. The digests detect accidental and careless
edits; they are not a signature (anyone can recompute them).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import xarray as xr

from evalbayes.inference import config_hash

__all__ = ["dataset_hash", "fit_fingerprint", "mismatches"]


def _canonical_bytes(values: np.ndarray) -> bytes | memoryview:
    """Values in a dtype that survives a NetCDF round trip: int64, float64 or JSON text
    (numbers as a view of their contiguous buffer: the same bytes, no copy)."""
    kind = values.dtype.kind
    if kind in "biu":
        return memoryview(np.ascontiguousarray(values, dtype=np.int64)).cast("B")
    if kind == "f":
        return memoryview(np.ascontiguousarray(values, dtype=np.float64)).cast("B")
    return json.dumps([str(v) for v in values.ravel().tolist()]).encode()


def dataset_hash(ds: xr.Dataset) -> str:
    """SHA-256 (16 hex digits) over a Dataset's variables and coordinates, order-free."""
    digest = hashlib.sha256()
    for kind, mapping in (("coord", ds.coords), ("var", ds.data_vars)):
        for name in sorted(mapping, key=str):
            var = mapping[name]
            header = json.dumps([kind, str(name), list(map(str, var.dims)), list(var.shape)])
            digest.update(header.encode())
            digest.update(_canonical_bytes(np.asarray(var.values)))
    return digest.hexdigest()[:16]


def fit_fingerprint(
    groups: dict[str, xr.Dataset], model_config: dict[str, Any], sampler: dict[str, Any]
) -> dict[str, str]:
    """Digests of each group plus ``model_config`` and ``sampler``."""
    out = {f"group:{name}": dataset_hash(ds) for name, ds in sorted(groups.items())}
    out["model_config"] = config_hash(model_config)
    out["sampler"] = config_hash(sampler)
    return out


def mismatches(stored: dict[str, str], current: dict[str, str]) -> list[str]:
    """What differs between two fingerprints, in words (empty when they agree)."""
    problems = []
    for key in sorted(set(stored) | set(current)):
        label = key.removeprefix("group:")
        if key not in current:
            problems.append(f"the {label!r} group is missing")
        elif key not in stored:
            problems.append(f"the {label!r} group was added")
        elif stored[key] != current[key]:
            what = "group" if key.startswith("group:") else "settings"
            problems.append(f"the {label!r} {what} changed")
    return problems
