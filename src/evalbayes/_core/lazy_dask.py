"""xarray's "is this a Dask array?" answered without importing Dask until one can exist.

xarray asks whether each array it wraps is a Dask array: ``Variable`` construction tests
``isinstance(data, array_type("dask"))`` and index creation calls ``is_dask_collection``. Where
Dask is installed, the first question imports ``dask.array`` and the second ``dask.base``
(with ``yaml``, ``jinja2``, ``psutil``, ``toolz``): ~0.3 CPU-s of every command that builds a
dataset (``evalbayes fit`` of a 3-system table included), though no Dask object exists.

Both questions have an exact answer that needs no import:

* an instance of ``dask.array.Array`` exists only once ``dask.array`` is imported (its class
  lives there), so before that ``array_type("dask")`` is ``()``, and after it the real class;
* ``dask.base.is_dask_collection(x)`` is ``False`` for any ``x`` without a ``__dask_graph__``
  attribute (its first test), so only objects that have one need Dask asked.

:func:`defer_dask_detection` installs these answers in xarray (idempotent; nothing is changed
where xarray's internals are not the ones described, so a future xarray only loses the
saving). Users who pass Dask arrays see no difference: by then ``dask.array`` is imported and
xarray gets the real class, version and module, every time it asks.

:func:`dask_detection_deferred` tells a writer that no Dask answer can be cached by blocking
the ``dask`` import for a moment (:meth:`evalbayes.results.Posterior.save`).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["dask_detection_deferred", "defer_dask_detection"]


def _lazy_module_class() -> type | None:
    """A subclass of xarray's ``DuckArrayModule`` whose ``dask`` answers are read on demand."""
    try:
        from xarray.namedarray import pycompat
    except ImportError:  # pragma: no cover - xarray reorganised
        return None
    base = getattr(pycompat, "DuckArrayModule", None)
    if not isinstance(base, type):  # pragma: no cover - xarray reorganised
        return None

    class LazyDaskModule(base):  # type: ignore[misc,valid-type]
        """``DuckArrayModule("dask")`` that imports nothing until asked for the module."""

        def __init__(self) -> None:  # the parent imports dask: nothing to do here
            pass

        @property
        def type(self) -> tuple[type, ...]:
            array = sys.modules.get("dask.array")
            cls = getattr(array, "Array", None)
            return (cls,) if isinstance(cls, type) else ()

        @property
        def module(self) -> Any:
            import dask

            return dask

        @property
        def version(self) -> Any:
            from packaging.version import Version

            return Version(self.module.__version__)

        @property
        def available(self) -> bool:
            from importlib.util import find_spec

            return find_spec("dask") is not None

    return LazyDaskModule


_LAZY_CLASS: type | None = None


def defer_dask_detection() -> bool:
    """Make xarray's Dask checks import Dask only once a Dask object can exist (module doc).

    Returns whether the deferral is in place: ``False`` where Dask is not installed (nothing
    to defer), xarray's internals differ, or xarray already asked (then Dask is imported).
    """
    global _LAZY_CLASS
    from importlib.util import find_spec

    if find_spec("dask") is None:
        return False
    try:
        from xarray.namedarray import pycompat, utils
    except ImportError:  # pragma: no cover - xarray reorganised
        return False
    cache = getattr(pycompat, "_cached_duck_array_modules", None)
    collection = getattr(utils, "is_dask_collection", None)
    if not isinstance(cache, dict) or not callable(collection):  # pragma: no cover
        return False
    if _LAZY_CLASS is None:
        _LAZY_CLASS = _lazy_module_class()
    if _LAZY_CLASS is None:  # pragma: no cover
        return False
    if "dask" not in cache:
        cache["dask"] = _LAZY_CLASS()
    if not getattr(collection, "_evalbayes_deferred", False):
        original = collection

        def is_dask_collection(x: object) -> bool:
            # dask.base.is_dask_collection's own first test, without importing dask.base
            if not hasattr(x, "__dask_graph__"):
                return False
            return bool(original(x))

        is_dask_collection._evalbayes_deferred = True  # type: ignore[attr-defined]
        is_dask_collection.__doc__ = original.__doc__
        setattr(utils, "is_dask_collection", is_dask_collection)  # noqa: B010 (typed a TypeGuard there)
    return dask_detection_deferred()


def dask_detection_deferred() -> bool:
    """Whether xarray's Dask checks are those of :func:`defer_dask_detection` (so that a
    moment with ``dask`` unimportable leaves no cached "not installed" answer behind)."""
    if _LAZY_CLASS is None:
        return False
    pycompat = sys.modules.get("xarray.namedarray.pycompat")
    utils = sys.modules.get("xarray.namedarray.utils")
    cache = getattr(pycompat, "_cached_duck_array_modules", {})
    return (isinstance(cache.get("dask"), _LAZY_CLASS)
            and getattr(getattr(utils, "is_dask_collection", None), "_evalbayes_deferred", False))
