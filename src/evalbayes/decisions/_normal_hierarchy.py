"""Normal-normal hierarchy for many noisy estimates (pure NumPy, exact 1-D quadrature).

``y_i ~ N(theta_i, s_i^2)`` with known ``s_i``, ``theta_i ~ N(mu, tau^2)``, flat prior on
``mu`` and a uniform prior on ``tau`` over a grid (Gelman et al., *Bayesian Data Analysis*,
3rd ed., §5.4 and §5.7, the eight-schools computation). Given ``tau``:

    V_mu = 1 / sum_i 1/(s_i^2 + tau^2),   mu_hat = V_mu sum_i y_i/(s_i^2 + tau^2)
    p(tau | y) ∝ p(tau) V_mu^(1/2) prod_i (s_i^2 + tau^2)^(-1/2)
                 exp(-(y_i - mu_hat)^2 / (2 (s_i^2 + tau^2)))
    theta_i | mu, tau, y ~ N((y_i/s_i^2 + mu/tau^2) / (1/s_i^2 + 1/tau^2),
                             1 / (1/s_i^2 + 1/tau^2))

Marginal moments of ``theta_i`` integrate ``mu | tau, y ~ N(mu_hat, V_mu)`` in closed form
and ``tau`` over the grid. ``mu`` can be fixed (``mu=0`` for effects centred on zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special


@dataclass(frozen=True)
class NormalHierarchy:
    """Posterior of the normal-normal hierarchy.

    Attributes
    ----------
    mean, sd : numpy.ndarray
        Posterior mean and sd of each ``theta_i``.
    tau_grid, tau_weight : numpy.ndarray
        Grid of ``tau`` and its posterior probabilities.
    mu_hat, mu_var : numpy.ndarray
        ``E[mu | tau, y]`` and ``Var(mu | tau, y)`` per grid point (``mu_var = 0`` when
        ``mu`` is fixed).
    y, s : numpy.ndarray
        The inputs.
    """

    mean: np.ndarray
    sd: np.ndarray
    tau_grid: np.ndarray
    tau_weight: np.ndarray
    mu_hat: np.ndarray
    mu_var: np.ndarray
    y: np.ndarray
    s: np.ndarray

    @property
    def tau_mean(self) -> float:
        """Posterior mean of the between-effect sd ``tau``."""
        return float(np.sum(self.tau_grid * self.tau_weight))

    def sample(self, draws: int, seed: int = 0) -> np.ndarray:
        """Joint draws of ``theta``, shape ``(draws, len(y))`` (tau, then mu, then theta)."""
        rng = np.random.default_rng(seed)
        g = rng.choice(len(self.tau_grid), size=draws, p=self.tau_weight)
        tau = self.tau_grid[g][:, None]
        mu = self.mu_hat[g][:, None] + np.sqrt(self.mu_var[g])[:, None] * rng.standard_normal(
            (draws, 1)
        )
        prec = 1.0 / self.s**2 + 1.0 / tau**2
        cond_mean = (self.y / self.s**2 + mu / tau**2) / prec
        return cond_mean + rng.standard_normal((draws, len(self.y))) / np.sqrt(prec)


def fit_normal_hierarchy(
    y: np.ndarray,
    s: np.ndarray,
    *,
    mu: float | None = None,
    tau_max: float | None = None,
    grid: int = 400,
) -> NormalHierarchy:
    """Posterior of the normal-normal hierarchy (module docstring) on a ``tau`` grid.

    Parameters
    ----------
    y, s : array_like
        Estimates and their standard errors (``s > 0``), same length ``>= 2``.
    mu : float, optional
        Fix the population mean (e.g. 0); default: flat prior.
    tau_max : float, optional
        Upper end of the uniform ``tau`` prior; default ``max(5 sd(y), 5 max(s))``.
    grid : int
        Grid points (midpoints of equal cells on ``(0, tau_max]``).
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    s = np.asarray(s, dtype=np.float64).ravel()
    if y.size < 2 or y.shape != s.shape:
        raise ValueError("y and s must have the same length >= 2")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(s)) and np.all(s > 0)):
        raise ValueError("y must be finite and s finite and > 0")
    if tau_max is None:
        tau_max = 5.0 * max(float(np.std(y)), float(s.max()))
    tau = (np.arange(grid) + 0.5) * tau_max / grid
    var = s[None, :] ** 2 + tau[:, None] ** 2  # (grid, m)
    w = 1.0 / var
    if mu is None:
        mu_var = 1.0 / w.sum(axis=1)
        mu_hat = mu_var * (w * y).sum(axis=1)
        log_post = 0.5 * np.log(mu_var)
    else:
        mu_var = np.zeros(grid)
        mu_hat = np.full(grid, float(mu))
        log_post = np.zeros(grid)
    log_post = log_post - 0.5 * np.log(var).sum(axis=1) - 0.5 * (
        (y - mu_hat[:, None]) ** 2 * w
    ).sum(axis=1)
    weight = np.exp(log_post - special.logsumexp(log_post))
    # theta_i | tau, y: shrink y_i toward mu_hat with B = s^2 / (s^2 + tau^2); the mu term
    # adds B^2 Var(mu) to the conditional variance
    shrink = s[None, :] ** 2 / var
    cond_mean = (1 - shrink) * y + shrink * mu_hat[:, None]
    cond_var = s[None, :] ** 2 * (1 - shrink) + shrink**2 * mu_var[:, None]
    mean = weight @ cond_mean
    second = weight @ (cond_var + cond_mean**2)
    sd = np.sqrt(np.maximum(second - mean**2, 0.0))
    return NormalHierarchy(
        mean=mean, sd=sd, tau_grid=tau, tau_weight=weight, mu_hat=mu_hat, mu_var=mu_var,
        y=y, s=s,
    )  # fmt: skip
