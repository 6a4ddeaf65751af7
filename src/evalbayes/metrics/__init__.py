"""Closed forms of the attempt metrics, for one task's success probability ``p`` or a
Beta-distributed ``p``: pass@k, pass^k, g-pass@k (at least ``m`` of ``k``) and maj@k.

Pure NumPy/SciPy. The unbiased estimators from counts live in :mod:`evalbayes.frequentist`;
posterior curves of a fit in :meth:`evalbayes.Posterior.pass_at_k` and its siblings.
"""

from evalbayes.metrics._attempts import (
    beta_g_pass_at_k,
    g_pass_at_k,
    g_pass_m,
    maj_at_k,
    mean_g_pass_at_k,
    mean_maj_at_k,
    mg_pass_at_k,
    posterior_maj_at_k,
    prob_g_pass_at_k,
    prob_maj_at_k,
)
from evalbayes.metrics._pass import (
    beta_curve,
    beta_pass_at_k,
    beta_pass_hat_k,
    prob_curve,
    prob_pass_at_k,
    prob_pass_hat_k,
)

__all__ = [
    "beta_curve",
    "beta_g_pass_at_k",
    "beta_pass_at_k",
    "beta_pass_hat_k",
    "g_pass_at_k",
    "g_pass_m",
    "maj_at_k",
    "mean_g_pass_at_k",
    "mean_maj_at_k",
    "mg_pass_at_k",
    "posterior_maj_at_k",
    "prob_curve",
    "prob_g_pass_at_k",
    "prob_maj_at_k",
    "prob_pass_at_k",
    "prob_pass_hat_k",
]
