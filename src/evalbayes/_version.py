"""Package version: the single source (``pyproject.toml`` reads it as a dynamic attribute).

A literal, not ``importlib.metadata.version``: that import costs ~0.05-0.1 s on the path of
every command that reads a fit (``benchmarks/speed/results/import_floor_2026-12-07.txt``), and a
source tree run without installation reports the same version as an installed one.
"""

__version__ = "0.1.0"
