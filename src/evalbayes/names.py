"""Shared names: estimands, metrics, interval kinds, sampler methods and defaults.

A minimal version for the CLI branch; the integrator's ``names.py`` supersedes it.
"""

from __future__ import annotations

from typing import Any

ESTIMANDS: tuple[str, ...] = ("tasks", "population")
METRICS: tuple[str, ...] = ("pass@k", "pass^k")
INTERVAL_KINDS: tuple[str, ...] = ("eti", "hdi")
METHODS: tuple[str, ...] = ("nutpie", "pymc", "numpyro", "advi", "pathfinder")
SAMPLER_DEFAULTS: dict[str, Any] = {
    "method": "nutpie",
    "draws": 1000,
    "tune": 1000,
    "chains": 4,
    "seed": 0,
    "target_accept": 0.9,
}
