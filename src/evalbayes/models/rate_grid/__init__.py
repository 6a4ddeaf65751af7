"""The rate-grid family (the default for two or more systems): each system's own smooth
distribution of per-task success rates on a logit grid with atoms at 0 and 1 (Efron's
g-modeling), collapsed over distinct ``(n, c)`` rows, optionally with tasks broken for every
system, and population comparisons paired through the shared tasks.
"""

from evalbayes.models.rate_grid._model import RateGridModel, grid_log_likelihood

__all__ = ["RateGridModel", "grid_log_likelihood"]
