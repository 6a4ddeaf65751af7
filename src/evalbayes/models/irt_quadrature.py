"""Quadrature over the IRT item population: E over a new item of f(p(theta, item)).

The "population" estimand of the IRT models (seed 000 ch. 17.3, "tasks like these") is, per
posterior draw and system,

    E_item[f(p)],  p = g + (1 - g) * sigmoid(a * (theta - b)),
    b = sigma_b * z_b,  log a = sigma_a * z_a,  z_b, z_a ~ N(0, 1),  g ~ Beta(alpha, beta),

with ``f(p) = 1 - (1 - p)^k`` (pass@k) or ``p^k`` (pass^k). Three one-dimensional rules make
up a product rule:

* ``z_b``: the trapezoid rule on a uniform grid, ``sum_i h * phi(z_i) * F(z_i)``. For an
  integrand analytic in a strip ``|Im z| < d`` it converges like ``exp(-2 pi d / h)``
  (Trefethen & Weideman, SIAM Review 56, 2014, sec. 5). The logistic in ``z_b`` has its
  nearest pole at ``d = pi / (a sigma_b)``, so ``h = 1 / max(a sigma_b)`` gives an error
  below ``exp(-2 pi^2) = 2.7e-9`` whatever the sharpness of the item. Gauss-Hermite, by
  contrast, spreads its nodes for polynomials and misses sharp items: with
  ``a sigma_b = 8`` it was off by 1e-2 at 40 nodes and 5e-4 at 160 (measured against
  ``scipy.integrate.quad``, tests/test_irt_quadrature.py).
* ``z_a``: Gauss-Hermite (probabilists'), 24 nodes: ``sigmoid(exp(sigma_a z) x)`` is smooth
  in ``z`` on the scale ``1 / sigma_a``.
* ``g``: Gauss-Jacobi for a Beta weight, 16 nodes (exact for polynomials of degree < 32 in
  ``g``, so exact for pass@k and pass^k with integer ``k <= 31``); one node at the value when
  the floor is known.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, roots_jacobi

__all__ = [
    "NodeSet",
    "beta_nodes",
    "item_population_curve",
    "normal_hermite_nodes",
    "normal_trapezoid_nodes",
]

HERMITE_NODES = 24
JACOBI_NODES = 16
TRAPEZOID_HALF_WIDTH = 8.5  # N(0, 1) mass beyond |z| > 8.5 is 1.9e-17
TRAPEZOID_MAX_STEP = 0.25


@dataclass(frozen=True)
class NodeSet:
    """Nodes and weights of a one-dimensional rule (weights sum to 1 up to the rule's error)."""

    nodes: NDArray[np.float64]
    weights: NDArray[np.float64]


def normal_hermite_nodes(size: int = HERMITE_NODES) -> NodeSet:
    """Gauss-Hermite rule for E[F(z)], z ~ N(0, 1) (probabilists' weight exp(-z^2 / 2))."""
    z, w = np.polynomial.hermite_e.hermegauss(size)
    return NodeSet(z, w / np.sqrt(2.0 * np.pi))


def normal_trapezoid_nodes(sharpness: float) -> NodeSet:
    """Trapezoid rule for E[F(z)], z ~ N(0, 1), with step ``h = min(0.25, 1 / sharpness)``.

    ``sharpness`` is the largest slope of the logistic in ``z`` (``max a * sigma_b``); see the
    module docstring for the error bound.
    """
    if not np.isfinite(sharpness) or sharpness < 0:
        raise ValueError(f"sharpness must be finite and >= 0, got {sharpness}")
    h = min(TRAPEZOID_MAX_STEP, 1.0 / max(sharpness, 1e-12))
    half = int(np.ceil(TRAPEZOID_HALF_WIDTH / h))
    z = h * np.arange(-half, half + 1)
    return NodeSet(z, h * np.exp(-0.5 * z**2) / np.sqrt(2.0 * np.pi))


def beta_nodes(alpha: float, beta: float, size: int = JACOBI_NODES) -> NodeSet:
    """Gauss-Jacobi rule for E[F(g)], g ~ Beta(alpha, beta), on [0, 1].

    ``roots_jacobi(n, beta - 1, alpha - 1)`` integrates against ``(1 - x)^(beta - 1)
    (1 + x)^(alpha - 1)`` on [-1, 1]; ``g = (1 + x) / 2`` turns that into the Beta density.
    """
    if alpha <= 0 or beta <= 0:
        raise ValueError(f"Beta parameters must be positive, got ({alpha}, {beta})")
    x, w = roots_jacobi(size, beta - 1.0, alpha - 1.0)
    return NodeSet((1.0 + x) / 2.0, w / w.sum())


def item_population_curve(
    theta: NDArray[np.float64],
    sigma_b: NDArray[np.float64],
    sigma_a: NDArray[np.float64] | None,
    guess: NodeSet,
    k: NDArray[np.float64],
    metric: str,
    chunk: int = 4_000_000,
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
    sharp = float(np.max(a_nodes.max(axis=1) * sigma_b))
    b_rule = normal_trapezoid_nodes(sharp)
    out = np.empty((draws, systems, len(k)))
    per_draw = len(b_rule.nodes) * len(a_rule.nodes) * len(guess.nodes)
    step = max(1, chunk // per_draw)
    g = guess.nodes[None, None, None, :]
    weights = (
        b_rule.weights[:, None, None] * a_rule.weights[None, :, None] * guess.weights[None, None]
    )
    for start in range(0, draws, step):
        sl = slice(start, min(draws, start + step))
        b = sigma_b[sl, None, None, None] * b_rule.nodes[None, :, None, None]
        a = a_nodes[sl, None, :, None]
        for s in range(systems):
            p_core = expit(a * (theta[sl, s, None, None, None] - b))
            p = g + (1.0 - g) * p_core  # (d, n_b, n_a, n_g)
            for j, kj in enumerate(k):
                if metric == "pass@k":
                    with np.errstate(divide="ignore"):
                        vals = -np.expm1(kj * np.log1p(-np.minimum(p, 1.0)))
                else:
                    vals = p**kj
                out[sl, s, j] = np.tensordot(vals, weights, axes=3)
    return out
