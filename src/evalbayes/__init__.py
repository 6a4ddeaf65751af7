"""evalbayes: Bayesian hierarchical models of AI evaluation counts.

The data layer (:class:`EvalData`) and the frequentist cross-checks import only NumPy,
SciPy, pandas and xarray. Everything that needs PyMC (models, posteriors, comparisons) is
imported lazily on first attribute access, so ``import evalbayes`` and the frequentist CLI
commands start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalbayes._version import __version__
from evalbayes.data import EvalData, PairedData

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.comparison import Comparison, compare
    from evalbayes.io import read_counts, read_trials
    from evalbayes.models import BetaBinomialModel, IRTModel, default_model, get_model
    from evalbayes.persist import load
    from evalbayes.results import Posterior

_LAZY = {
    "read_counts": "evalbayes.io",
    "read_trials": "evalbayes.io",
    "read": "evalbayes.io",
    "BetaBinomialModel": "evalbayes.models",
    "IRTModel": "evalbayes.models",
    "get_model": "evalbayes.models",
    "default_model": "evalbayes.models",
    "Posterior": "evalbayes.results",
    "load": "evalbayes.persist",
    "compare": "evalbayes.comparison",
    "Comparison": "evalbayes.comparison",
    "frequentist": "evalbayes.frequentist",
    "datasets": "evalbayes.datasets",
    "plots": "evalbayes.plots",
}

_SUBMODULES = {"frequentist", "datasets", "plots"}

__all__ = [
    "BetaBinomialModel",
    "Comparison",
    "EvalData",
    "IRTModel",
    "PairedData",
    "Posterior",
    "__version__",
    "compare",
    "datasets",
    "default_model",
    "frequentist",
    "get_model",
    "load",
    "plots",
    "read",
    "read_counts",
    "read_trials",
]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'evalbayes' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    value = module if name in _SUBMODULES else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
