"""Fitted results, below the models: the immutable :class:`Posterior` and what is derived from
it without any model code (comparisons of systems, PSIS-LOO comparisons of fits, convergence
diagnostics, the flag for k beyond the trials).

A posterior holds its model through the :class:`FittedModel` protocol, never by importing the
models package, as statsmodels' results hold ``self.model``.
"""

from evalbayes.results._comparison import Comparison, compare
from evalbayes.results._diagnostics import (
    ConvergenceWarning,
    Diagnostics,
    convergence_diagnostics,
)
from evalbayes.results._extrapolation import extrapolated, max_trials
from evalbayes.results._loo import compare_models, stacking_weights
from evalbayes.results._posterior import (
    FIT_FORMAT,
    FittedModel,
    Posterior,
    PosteriorPredictiveCheck,
)
from evalbayes.results._prior import PriorPredictive

__all__ = [
    "FIT_FORMAT",
    "Comparison",
    "ConvergenceWarning",
    "Diagnostics",
    "FittedModel",
    "Posterior",
    "PosteriorPredictiveCheck",
    "PriorPredictive",
    "compare",
    "compare_models",
    "convergence_diagnostics",
    "extrapolated",
    "max_trials",
    "stacking_weights",
]
