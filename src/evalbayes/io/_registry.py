"""The registry of formats: ``format=`` name -> the module and attribute of its Reader.

Adding a format is one module (options dataclass, parser, ``READER``; see
``evalbayes.io._protocol`` and ``docs/io.md``) plus one line here.
"""

from __future__ import annotations

import importlib
from typing import Any

from evalbayes.io._protocol import OptionSpec, Reader, option_specs

__all__ = ["READERS", "get_reader", "reader_options"]

READERS: dict[str, tuple[str, str]] = {
    "inspect": ("evalbayes.io._inspect_ai", "READER"),
    "lm-eval": ("evalbayes.io._lm_eval", "READER"),
    "helm": ("evalbayes.io._helm", "READER"),
    "terminal-bench": ("evalbayes.io._terminal_bench", "READER"),
    "swe-bench": ("evalbayes.io._swe_bench", "READER"),
    "counts": ("evalbayes.io._tables", "COUNTS"),
    "trials": ("evalbayes.io._tables", "TRIALS"),
}


def get_reader(name: str) -> Reader:
    """The :class:`~evalbayes.io._protocol.Reader` of format ``name``."""
    if name not in READERS:
        raise ValueError(f"format must be one of {['auto', *READERS]}, got {name!r}")
    module, attr = READERS[name]
    reader: Reader = getattr(importlib.import_module(module), attr)
    return reader


def reader_options(format: str | None = None) -> Any:
    """The options of one format (a list of :class:`OptionSpec`: name, type, default, help,
    choices, and ``convert`` for command-line strings), or of every format (a dict).

    Examples
    --------
    >>> from evalbayes.io import reader_options
    >>> [o.name for o in reader_options("terminal-bench")]
    ['system', 'task_prefix', 'errors', 'check', 'benchmark']
    """
    if format is None:
        return {name: reader_options(name) for name in READERS}
    specs: list[OptionSpec] = option_specs(get_reader(format).options)
    return specs
