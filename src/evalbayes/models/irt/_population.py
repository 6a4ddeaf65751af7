"""The IRT models' population estimand: E over a new item of f(p(theta, item)).

Per posterior draw and system, ``E_item[F(q)]`` with ``q = sigmoid(a (theta - b))``,
``F(q) = f(g + (1 - g) q)``, ``b ~ N(0, sigma_b)``, ``log a ~ N(0, sigma_a)`` and the floor
``g`` by its own rule: a product of the Gauss-Hermite rule in ``log a``, the rule for ``g`` and
the split-off trapezoid rule in ``b`` of :func:`evalbayes.models._quadrature.logistic_normal_mean`
(error bounds in that module's docstring).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from evalbayes.models._quadrature import (
    GRID_NODES,
    NodeSet,
    logistic_normal_mean,
    normal_hermite_nodes,
)

__all__ = ["item_population_curve"]


def item_population_curve(
    theta: NDArray[np.float64],
    sigma_b: NDArray[np.float64],
    sigma_a: NDArray[np.float64] | None,
    guess: NodeSet,
    k: NDArray[np.float64],
    metric: str,
    chunk: int = 2_000_000,
) -> NDArray[np.float64]:
    """E over a new item of f(p(theta, item)) for every draw, system and k.

    Parameters
    ----------
    theta : array, shape (draws, systems)
        Ability draws.
    sigma_b : array, shape (draws,)
        Difficulty spread per draw (``b ~ N(0, sigma_b)``).
    sigma_a : array, shape (draws,), or None
        Spread of ``log a`` per draw; None for the 1PL (``a = 1``).
    guess : NodeSet
        Rule for the floor ``g`` (one node at 0 for 1PL/2PL).
    k : 1-D array
        Attempts.
    metric : {"pass@k", "pass^k"}

    Returns
    -------
    numpy.ndarray, shape (draws, systems, len(k))
    """
    draws, systems = theta.shape
    if sigma_a is None:
        a_rule = NodeSet(np.zeros(1), np.ones(1))
        sigma_a = np.zeros(draws)
    else:
        a_rule = normal_hermite_nodes()
    a_nodes = np.exp(sigma_a[:, None] * a_rule.nodes[None, :])  # (draws, n_a)
    n_a, n_g = len(a_rule.nodes), len(guess.nodes)
    weights = a_rule.weights[:, None] * guess.weights[None, :]  # (n_a, n_g)
    g = guess.nodes[None, None, :]
    step = max(1, chunk // (n_a * n_g * GRID_NODES))
    out = np.empty((draws, systems, len(k)))
    for start in range(0, draws, step):
        sl = slice(start, min(draws, start + step))
        a = a_nodes[sl, :, None]  # (d, n_a, 1)
        v = a * sigma_b[sl, None, None]
        for s in range(systems):
            c = a * theta[sl, s, None, None]
            vals = logistic_normal_mean(c, v, g, k, metric)  # (d, n_a, n_g, K)
            out[sl, s] = np.einsum("dagk,ag->dk", vals, weights)
    return out
