"""Logistic-normal quadrature shared by the model families: ``E[f(g + (1 - g) sigmoid(u))]``
for ``u ~ N(c, v^2)``, with Gauss-Hermite and Gauss-Jacobi rules for the outer integrals.

Used by the IRT population estimand (:mod:`evalbayes.models.irt._population`: a new item's
``u = a (theta - b)`` with ``b ~ N(0, sigma_b)``, ``log a ~ N(0, sigma_a)`` and a floor
``g ~ Beta``) and by the design models' logit-normal rate curves (:func:`normal_rate_curve`).
For the IRT item population the product rule is, per posterior draw and system,

    E_item[F(q)],  q = sigmoid(u),  u = a (theta - b),  F(q) = f(g + (1 - g) q),
    b ~ N(0, sigma_b),  log a ~ N(0, sigma_a),  g ~ Beta(alpha, beta) (or known),

with ``f(p) = 1 - (1 - p)^k`` (pass@k) or ``p^k`` (pass^k). It is a product rule:

* ``g``: Gauss-Jacobi for the Beta weight, 16 nodes (exact for polynomials of degree < 32 in
  ``g``: exact for pass@k and pass^k with integer ``k <= 31``); one node when ``g`` is known.
* ``log a``: Gauss-Hermite (probabilists'), 24 nodes; the integrand is smooth in ``log a``.
* ``b``: given ``a``, ``u ~ N(c, v)`` with ``c = a theta`` and ``v = a sigma_b``. The smooth
  part is split off exactly: with ``G(u) = F(0) + (F(1) - F(0)) Phi(u / s)``, ``s = 1.702``,
  ``E[G(u)] = F(0) + (F(1) - F(0)) Phi(c / sqrt(s^2 + v^2))`` in closed form, and the
  remainder ``F(sigmoid(u)) - G(u)``, which vanishes at both ends, is integrated by the
  trapezoid rule. The trapezoid rule converges like ``exp(-2 pi d / h)`` for integrands
  analytic in a strip ``|Im| < d`` (Trefethen & Weideman, SIAM Review 56, 2014, sec. 5), so
  the step follows the sharper of the two factors:

  - ``v <= 4``: in ``z = b / sigma_b``, 101 nodes on ``[-8.5, 8.5]`` (``h = 0.17``); the
    logistic's nearest pole is at ``|Im z| = pi / v >= pi / 4``: error ``~ exp(-2 pi (pi / v)
    / h) <= 3e-13``.
  - ``v > 4`` (a sharp item against the spread of difficulties): in ``u``, 101 nodes on
    ``[-40, 40]`` (``h = 0.8``); the pole is at ``Im u = pi``, where the normal density grows
    by at most ``exp(pi^2 / 32)``: error ``~ exp(-2 pi^2 / 0.8) = 2e-11`` times a constant
    that grows with k; beyond ``|u| = 40`` the remainder is below ``e^-40``.

  Measured against ``scipy.integrate.quad`` over ``c`` in [-30, 25], ``v`` in [0.01, 500],
  ``k`` up to 10: largest error 2e-8 (81 nodes gave 1.4e-6); the log a rule
  with 24 nodes is within 3e-6 of ``quad`` up to ``sigma_a = 1.5``
  (tests/models/irt/test_quadrature.py).

  Gauss-Hermite in ``z`` alone was off by 1e-2 at 40 nodes for ``a sigma_b = 8``
  (tests/models/irt/test_quadrature.py measures both against ``scipy.integrate.quad``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "NodeSet",
    "beta_nodes",
    "check_hermite_size",
    "logistic_normal_mean",
    "logit_normal_cell_loglik",
    "normal_hermite_nodes",
    "normal_rate_curve",
]

HERMITE_NODES = 24
JACOBI_NODES = 16
GRID_NODES = 101
Z_HALF_WIDTH = 8.5  # N(0, 1) mass beyond 8.5 is 1e-17
U_HALF_WIDTH = 40.0
PROBIT_SCALE = 1.702  # sigmoid(u) ~ Phi(u / 1.702)
SHARP_THRESHOLD = 4.0  # v = a sigma_b above which the grid is laid in u

_Z = np.linspace(-Z_HALF_WIDTH, Z_HALF_WIDTH, GRID_NODES)
_Z_WEIGHTS = (_Z[1] - _Z[0]) * np.exp(-0.5 * _Z**2) / np.sqrt(2.0 * np.pi)
_U = np.linspace(-U_HALF_WIDTH, U_HALF_WIDTH, GRID_NODES)
_U_STEP = _U[1] - _U[0]


@dataclass(frozen=True)
class NodeSet:
    """Nodes and weights of a one-dimensional rule (weights sum to 1)."""

    nodes: NDArray[np.float64]
    weights: NDArray[np.float64]

    def __iter__(self) -> Iterator[NDArray[np.float64]]:
        """``x, w = rule``: nodes, then weights."""
        return iter((self.nodes, self.weights))


def check_hermite_size(value: int, label: str = "quadrature_nodes") -> int:
    """A Gauss-Hermite rule size in [4, 100] (fewer nodes lose the tails; more overflow
    ``hermegauss``), else a ValueError naming ``label``."""
    if isinstance(value, bool) or int(value) != value or not 4 <= int(value) <= 100:
        raise ValueError(f"{label} must be an integer in [4, 100], got {value!r}")
    return int(value)


def normal_hermite_nodes(size: int = HERMITE_NODES) -> NodeSet:
    """Gauss-Hermite rule for E[F(z)], z ~ N(0, 1) (probabilists' weight exp(-z^2 / 2))."""
    z, w = np.polynomial.hermite_e.hermegauss(size)
    return NodeSet(z, w / np.sqrt(2.0 * np.pi))


def beta_nodes(alpha: float, beta: float, size: int = JACOBI_NODES) -> NodeSet:
    """Gauss-Jacobi rule for E[F(g)], g ~ Beta(alpha, beta), on [0, 1].

    ``roots_jacobi(n, beta - 1, alpha - 1)`` integrates against ``(1 - x)^(beta - 1)
    (1 + x)^(alpha - 1)`` on [-1, 1]; ``g = (1 + x) / 2`` turns that into the Beta density.
    """
    from scipy.special import roots_jacobi  # imported when used (issue 26)

    if alpha <= 0 or beta <= 0:
        raise ValueError(f"Beta parameters must be positive, got ({alpha}, {beta})")
    x, w = roots_jacobi(size, beta - 1.0, alpha - 1.0)
    return NodeSet((1.0 + x) / 2.0, w / w.sum())


def _f(p: NDArray[np.float64], k: float, metric: str) -> NDArray[np.float64]:
    if metric == "pass@k":
        with np.errstate(divide="ignore"):
            return -np.expm1(k * np.log1p(-np.minimum(p, 1.0)))
    return p**k


def logistic_normal_mean(
    c: NDArray[np.float64],
    v: NDArray[np.float64],
    g: NDArray[np.float64],
    ks: NDArray[np.float64],
    metric: str,
) -> NDArray[np.float64]:
    """``E[f(g + (1 - g) sigmoid(u))]`` for ``u ~ N(c, v)``, broadcasting ``c, v, g``.

    The rule of the module docstring; ``ks`` becomes the last axis of the result.
    """
    from scipy.special import expit, ndtr  # imported when used (issue 26)

    c, v, g = np.broadcast_arrays(
        np.asarray(c, float), np.asarray(v, float), np.asarray(g, float)
    )
    c, v, g = c[..., None], v[..., None], g[..., None]
    flat = v <= SHARP_THRESHOLD
    u = np.where(flat, c - v * _Z, _U)
    with np.errstate(divide="ignore", invalid="ignore"):
        w_sharp = _U_STEP * np.exp(-0.5 * ((_U - c) / v) ** 2) / (np.sqrt(2.0 * np.pi) * v)
    w = np.where(flat, _Z_WEIGHTS, w_sharp)
    p = g + (1.0 - g) * expit(u)
    smooth = ndtr(u / PROBIT_SCALE)
    exact = ndtr(c[..., 0] / np.sqrt(PROBIT_SCALE**2 + v[..., 0] ** 2))
    out = np.empty((*c.shape[:-1], len(ks)))
    for j, kj in enumerate(ks):
        f0, f1 = _f(g[..., 0], kj, metric), _f(np.ones_like(g[..., 0]), kj, metric)
        remainder = _f(p, kj, metric) - (f0[..., None] + (f1 - f0)[..., None] * smooth)
        out[..., j] = f0 + (f1 - f0) * exact + (w * remainder).sum(axis=-1)
    return out


def normal_rate_curve(
    center: ArrayLike,
    spread: ArrayLike,
    k: ArrayLike,
    metric: str,
    chunk: int = 65_536,
) -> NDArray[np.float64]:
    """``E[f(sigmoid(u))]`` for ``u ~ N(center, spread^2)``, every k, any leading shape.

    ``center`` and ``spread`` broadcast against each other; ``k`` becomes the last axis of
    the result. ``f(p) = 1 - (1 - p)^k`` (pass@k; Chen et al. 2021) or ``p^k`` (pass^k).
    The split-off trapezoid rule of
    :func:`logistic_normal_mean` (error < 1e-7 against
    ``scipy.integrate.quad`` at every k, where a fixed Gauss-Hermite rule loses digits once
    ``k`` is large and the spread wide). The one home of the logit-normal curve: the
    design models (factorial, training seeds, judge error) use it.
    """
    center, spread = np.broadcast_arrays(np.asarray(center, float), np.asarray(spread, float))
    ks = np.atleast_1d(np.asarray(k, float))
    flat_c, flat_s = center.reshape(-1), spread.reshape(-1)
    out = np.empty((flat_c.size, len(ks)))
    for start in range(0, flat_c.size, chunk):
        sl = slice(start, start + chunk)
        out[sl] = logistic_normal_mean(flat_c[sl], flat_s[sl], np.zeros(1), ks, metric)
    return out.reshape(*center.shape, len(ks))


def logit_normal_cell_loglik(
    eta: Any, cell_n: Any, cell_c: Any, residual_sd: Any = None, nodes: int = HERMITE_NODES
) -> Any:
    """PyTensor graph of each cell's log-likelihood (binomial coefficient left out):
    ``c log sigmoid(eta) + (n - c) log(1 - sigmoid(eta))``, or, with a cell residual
    ``e ~ N(0, residual_sd)``, its Gauss-Hermite average
    ``log sum_j w_j Binomial(c | n, sigmoid(eta + residual_sd x_j))`` (:func:`normal_hermite_nodes`,
    ``nodes`` of them). ``log sigmoid(eta) = -softplus(-eta)`` and ``log(1 - sigmoid(eta)) =
    -softplus(eta)`` keep both tails exact. Padding cells with ``n = c = 0`` contribute 0.
    The design models (factorial, training seeds) share it.
    """
    import pytensor.tensor as pt

    if residual_sd is None:
        return cell_c * (-pt.softplus(-eta)) + (cell_n - cell_c) * (-pt.softplus(eta))
    x, w = normal_hermite_nodes(int(nodes))
    eta_q = eta[:, None] + residual_sd * pt.as_tensor_variable(x)[None, :]
    log_lik = (cell_c[:, None] * (-pt.softplus(-eta_q))
               + (cell_n - cell_c)[:, None] * (-pt.softplus(eta_q))
               + pt.as_tensor_variable(np.log(w))[None, :])
    return pt.logsumexp(log_lik, axis=1)
