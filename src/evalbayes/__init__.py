"""evalbayes: Bayesian hierarchical models of AI evaluation counts.

The face of the package: the data, the readers, the default and the named models, fitted
results and their comparison, and one sub-package per concern (``io``, ``datasets``,
``frequentist``, ``metrics``, ``models``, ``results``, ``decisions``, ``plots``, ``report``).
Every name is imported on first attribute access (the data layer brings pandas and xarray,
the models SciPy, the fits PyMC only when they sample), so ``import evalbayes``,
``evalbayes --help`` and the frequentist CLI commands start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalbayes._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes import (
        datasets,
        decisions,
        frequentist,
        io,
        metrics,
        models,
        plots,
        report,
        results,
    )
    from evalbayes._persist import load
    from evalbayes.data import EvalData, PairedData
    from evalbayes.io import read, read_counts, read_trials
    from evalbayes.models import (
        BetaBinomialModel,
        FormulaModel,
        IRTModel,
        RateGridModel,
        default_model,
        get_model,
        model_names,
    )
    from evalbayes.results import Comparison, Posterior, compare, compare_models

#: name -> the module it lives in (sub-packages map to themselves)
_LAZY = {
    "EvalData": "evalbayes.data",
    "PairedData": "evalbayes.data",
    "read": "evalbayes.io",
    "read_counts": "evalbayes.io",
    "read_trials": "evalbayes.io",
    "BetaBinomialModel": "evalbayes.models",
    "FormulaModel": "evalbayes.models",
    "IRTModel": "evalbayes.models",
    "RateGridModel": "evalbayes.models",
    "default_model": "evalbayes.models",
    "get_model": "evalbayes.models",
    "model_names": "evalbayes.models",
    "Posterior": "evalbayes.results",
    "Comparison": "evalbayes.results",
    "compare": "evalbayes.results",
    "compare_models": "evalbayes.results",
    "load": "evalbayes._persist",
}
_SUBPACKAGES = ("datasets", "decisions", "frequentist", "io", "metrics", "models", "plots",
                "report", "results")

__all__ = [
    "BetaBinomialModel",
    "Comparison",
    "EvalData",
    "FormulaModel",
    "IRTModel",
    "PairedData",
    "Posterior",
    "RateGridModel",
    "__version__",
    "compare",
    "compare_models",
    "datasets",
    "decisions",
    "default_model",
    "frequentist",
    "get_model",
    "io",
    "load",
    "metrics",
    "model_names",
    "models",
    "plots",
    "read",
    "read_counts",
    "read_trials",
    "report",
    "results",
]


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        value = importlib.import_module(f"evalbayes.{name}")
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'evalbayes' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
