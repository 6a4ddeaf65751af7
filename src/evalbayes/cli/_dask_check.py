"""xarray's check for dask arrays without importing dask: for the commands that read a fit.

Every ``xarray.Variable`` that xarray builds asks whether its data is a dask array
(``isinstance(data, array_type("dask"))`` in ``as_compatible_data``), and the first such
question imports ``dask.array`` whenever dask is installed (0.4 CPU-s, measured on this
machine: a fifth of what ``evalbayes summary`` + ``compare`` may cost). No object can be a dask
array while ``dask.array`` has not been imported, so until it is the answer is "no" without
importing it; once something imports it, the real answer is given (xarray's own entry for
dask, built on first use of anything but the array type).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["defer_dask_import"]


class _DeferredDask:
    """Stands in for xarray's ``DuckArrayModule("dask")`` until dask is imported."""

    @property
    def type(self) -> tuple[type, ...]:
        module = sys.modules.get("dask.array")
        return () if module is None else (module.Array,)

    def __getattr__(self, name: str) -> Any:  # module, version, available: the real entry
        from xarray.namedarray import pycompat

        real = pycompat.DuckArrayModule("dask")
        pycompat._cached_duck_array_modules["dask"] = real
        return getattr(real, name)


def defer_dask_import() -> None:
    """Answer xarray's "is this a dask array?" without importing dask until something else
    does; a no-op where xarray's internals differ from what this expects."""
    try:
        from xarray.namedarray import pycompat

        cache = pycompat._cached_duck_array_modules
    except (ImportError, AttributeError):
        return
    if isinstance(cache, dict) and "dask" not in cache:
        cache["dask"] = _DeferredDask()  # type: ignore[assignment]  # duck-typed stand-in
