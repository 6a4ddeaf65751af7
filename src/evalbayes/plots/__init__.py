"""Plots of evalbayes results (matplotlib).

Every function takes numbers that were already computed (posterior draws, a
:class:`~evalbayes.results.Comparison`, a posterior predictive check), never samples, and
returns the :class:`matplotlib.axes.Axes` it drew on. Pass ``ax=`` to draw into an existing
figure. Titles name the metric and the estimand, and say APPROXIMATE for variational fits.
"""

from evalbayes.plots._assurance import plot_assurance
from evalbayes.plots._comparison import plot_comparison, plot_superiority_matrix
from evalbayes.plots._curves import plot_pass_at_k, plot_pass_hat_k
from evalbayes.plots._designs import plot_interaction, plot_variance_components
from evalbayes.plots._forest import plot_system_forest
from evalbayes.plots._items import plot_item_curves, plot_item_difficulty, plot_wright_map
from evalbayes.plots._ppc import plot_ppc
from evalbayes.plots._rates import plot_rate_distribution

__all__ = [
    "plot_assurance",
    "plot_comparison",
    "plot_interaction",
    "plot_item_curves",
    "plot_item_difficulty",
    "plot_pass_at_k",
    "plot_pass_hat_k",
    "plot_ppc",
    "plot_rate_distribution",
    "plot_superiority_matrix",
    "plot_system_forest",
    "plot_variance_components",
    "plot_wright_map",
]
