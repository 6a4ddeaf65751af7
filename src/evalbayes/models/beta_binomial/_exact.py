"""Exact posterior of the independent Beta-Binomial hierarchy by deterministic quadrature.

With ``pooling="partial"`` and ``hyperprior="independent"`` the systems are independent a
posteriori and each one's collapsed posterior is a density on the plane
``(x, y) = (logit mu, log kappa)``::

    log pi(x, y) = a0 log sigmoid(x) + b0 log sigmoid(-x) - (y - m)^2 / (2 s^2)
                   + sum_cells w [log B(a + c, b + n - c) - log B(a, b)] + const,

    a = e^y sigmoid(x),  b = e^y sigmoid(-x),

(the prior ``mu ~ Beta(a0, b0)`` written on the logit scale, ``log kappa ~ Normal(m, s)``;
the same density the NUTS model of :mod:`evalbayes.models.beta_binomial._model` samples). A 2-D
density needs no Markov chain: it is integrated on a grid, as in the "grid approximation"
of Gelman et al., *Bayesian Data Analysis* (3rd ed., 2013), sec. 3.7, and the adaptive
rotated grids of INLA's hyperparameter step (Rue, Martino & Chopin, *JRSS B* 71, 2009,
sec. 6.5).

Method
------
1. **Mode and curvature.** The mode ``theta*`` is found by BFGS; the Hessian ``H`` of
   ``-log pi`` at the mode by central differences. The grid lives in the standardised,
   rotated coordinates ``z`` with ``theta = theta* + L z``, ``L L^T = H^{-1}`` (a constant
   Jacobian, so the density in ``z`` is proportional to the density in ``theta``).
2. **Extent.** A box in ``z`` starts at ``[-6, 6]^2``; each side is pushed out until the log
   density on that edge is more than ``EDGE_DROP = 30`` nats below the maximum (mass beyond
   it < e^-30 relative), so skewed posteriors (``log kappa`` with few tasks, all-fail systems)
   are covered on their long side.
3. **Resolution.** Tensor grids of ``N = 33, 65, 129, ...`` nodes per axis are nested; the
   posterior means and sds of ``x`` and ``y`` (trapezoid rule, which converges faster than
   any power of the spacing for smooth, rapidly decaying integrands: Trefethen & Weideman,
   *SIAM Review* 56, 2014) are compared between successive grids and refinement stops when
   they agree to ``tol`` (default 1e-6) in units of the posterior sd.
4. **Draws.** The density on the final grid is interpolated bilinearly in ``z`` and
   candidates are drawn *exactly from that interpolant*, with no jitter: ``z1`` from its
   marginal, which is piecewise linear with node values ``g_i = trapezoid_j F[i, j]``, then
   ``z2`` from its conditional given ``z1``, piecewise linear with node values
   ``(1 - t) F[i, j] + t F[i + 1, j]``. Each step picks a segment with probability equal to
   its mass and inverts the quadratic CDF inside it,
   ``u = 2 r / (f0 + sqrt(f0^2 + 2 (f1 - f0) r / h))`` (a numerically stable root).
   The interpolant alone is O(h^2) off (linear interpolation widens a peak: at the grid
   spacing that makes the *moments* converge, sds came out ~1.5 % too large), so each
   candidate is then accepted with probability ``pi(theta) / (M q(theta))`` (rejection
   sampling; von Neumann 1951): the exact density is evaluated at the candidate, ``q`` is
   the interpolant, and the envelope constant ``M`` is the largest ratio at the cell centres
   (where bilinear interpolation errs most) times 1.01. Should a candidate ever show a
   larger ratio, ``M`` is raised and the draws restart, so every returned draw is an exact
   posterior draw. Acceptance is ~0.95-0.99.

Draws are independent, so the effective sample size equals the number of draws. Each
system uses its own random stream ``default_rng([seed, system])``.

The log likelihood is evaluated through the finite sums of
:func:`evalbayes.models.beta_binomial._model._log_beta_binomial_ratio` aggregated over cells,
``sum_i A_i log(mu + i/kappa) + sum_j B_j log(1 - mu + j/kappa) - sum_l C_l log(1 + l/kappa)``
with ``A_i = sum_cells w [c > i]``, ``B_j = sum_cells w [n - c > j]``,
``C_l = sum_cells w [n > l]``: exact for any kappa (no cancellation of ``gammaln``
differences), O(max n) per grid node whatever the number of tasks. Cells of more than
``LARGE_CELL_N`` trials use ``betaln`` instead (O(1) per cell; see :func:`_large_cells`), so
``n = 10^9`` costs no more memory than ``n = 10``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

    from evalbayes.data import EvalData

__all__ = [
    "GridPosterior",
    "exact_posterior",
    "grid_draws",
    "grid_posterior",
    "log_density",
    "sample_grid",
]

EDGE_DROP = 30.0
# Cells with more trials than this use betaln (O(1) per cell) instead of the finite sums,
# whose cost and memory grow with n (10^9 trials would need gigabytes per grid node);
# past log kappa = 16 they use the Binomial limit, as the NUTS model does.
LARGE_CELL_N = 1 << 14
LARGE_CELL_LOG_KAPPA_LIMIT = 16.0
START_NODES = 33
MAX_NODES = 1025


def _suffix_counts(n: np.ndarray, c: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """``A_i = sum w [c > i]``, ``B_j = sum w [n - c > j]``, ``C_l = sum w [n > l]``."""
    n_max = int(n.max()) if len(n) else 0

    def counts(v: np.ndarray) -> np.ndarray:
        # sum of w over cells with v > i, for i = 0..n_max-1
        hist = np.bincount(v, weights=w, minlength=n_max + 1)
        return (hist[::-1].cumsum()[::-1])[1:]

    return counts(c), counts(n - c), counts(n)


def _large_cells(
    x: np.ndarray,
    y: np.ndarray,
    log_mu: np.ndarray,
    log_1mu: np.ndarray,
    n: np.ndarray,
    c: np.ndarray,
    w: np.ndarray,
) -> np.ndarray:
    """``sum_cells w [log B(a + c, b + n - c) - log B(a, b)]`` for cells with many trials.

    ``betaln`` (Cephes, with its asymptotic expansion for large arguments) costs O(1) per
    cell and node whatever ``n``; its terms are of order ``n`` and ``kappa``, so the
    rounding error is about ``1e-16 (n + kappa)`` nats, 1e-7 at ``n = 10^9``. Past
    ``log kappa = 16`` the Binomial limit ``c log mu + (n - c) log(1 - mu)`` is used instead
    (the limit as kappa -> infinity; the prior of ``log kappa`` puts no mass there).
    """
    from scipy.special import betaln, expit  # imported when used (issue 26)

    a = np.exp(y) * expit(x)
    b = np.exp(y) * expit(-x)
    limit = y > LARGE_CELL_LOG_KAPPA_LIMIT
    total = np.zeros(x.shape)
    for n_i, c_i, w_i in zip(n.astype(float), c.astype(float), w, strict=True):
        exact = betaln(a + c_i, b + n_i - c_i) - betaln(a, b)
        binomial = c_i * log_mu + (n_i - c_i) * log_1mu
        total += w_i * np.where(limit, binomial, exact)
    return total


def log_density(
    x: np.ndarray,
    y: np.ndarray,
    n: np.ndarray,
    c: np.ndarray,
    weights: np.ndarray,
    mu_prior: tuple[float, float] = (1.0, 1.0),
    log_kappa_prior: tuple[float, float] = (1.0, 1.5),
) -> np.ndarray:
    """Unnormalised log posterior of one system at ``(x, y) = (logit mu, log kappa)``.

    Parameters
    ----------
    x, y : array
        Points (broadcast together).
    n, c, weights : 1-D arrays
        The system's unique cells: trials, successes and how many tasks share them.
    mu_prior : (a0, b0)
        Beta prior of ``mu``.
    log_kappa_prior : (m, s)
        Normal prior of ``log kappa``.
    """
    from scipy.special import expit, log_expit  # imported when used (issue 26)

    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    n = np.asarray(n, np.int64)
    c = np.asarray(c, np.int64)
    w = np.asarray(weights, float)
    a0, b0 = mu_prior
    m, s = log_kappa_prior
    log_mu, log_1mu = log_expit(x), log_expit(-x)
    out = a0 * log_mu + b0 * log_1mu - 0.5 * ((y - m) / s) ** 2
    large = n > LARGE_CELL_N
    if large.any():
        out = out + _large_cells(x, y, log_mu, log_1mu, n[large], c[large], w[large])
        n, c, w = n[~large], c[~large], w[~large]
    if len(n) == 0:
        return out
    big_a, big_b, big_c = _suffix_counts(n, c, w)
    mu, one_mu = expit(x), expit(-x)
    inv_kappa = np.exp(-y)
    # i = 0 terms: log mu and log(1 - mu), kept on the log scale (exact next to 0 and 1).
    if len(big_a):
        out = out + big_a[0] * log_mu + big_b[0] * log_1mu
    idx = np.arange(1, len(big_a))
    if out.size * len(idx) <= 2_000_000:  # vectorised over i
        ia, ib, ic = (idx[v[1:] > 0] for v in (big_a, big_b, big_c))
        e = inv_kappa[..., None]
        out = out + np.log(mu[..., None] + ia * e) @ big_a[ia]
        out = out + np.log(one_mu[..., None] + ib * e) @ big_b[ib]
        out = out - np.log1p(ic * e) @ big_c[ic]
        return out
    for i in idx:
        if big_a[i]:
            out = out + big_a[i] * np.log(mu + i * inv_kappa)
        if big_b[i]:
            out = out + big_b[i] * np.log(one_mu + i * inv_kappa)
        if big_c[i]:
            out = out - big_c[i] * np.log1p(i * inv_kappa)
    return out


@dataclass(frozen=True)
class GridPosterior:
    """A system's posterior on a rotated tensor grid (see the module docstring).

    Attributes
    ----------
    centre : (2,) array
        The mode ``(logit mu, log kappa)``.
    scale : (2, 2) array
        ``L`` with ``theta = centre + L z``.
    z1, z2 : 1-D arrays
        Node positions per axis in ``z``.
    log_density : (len(z1), len(z2)) array
        Log density at the nodes, shifted so that its maximum is 0.
    mean, sd : (2,) arrays
        Posterior means and sds of ``(logit mu, log kappa)`` (trapezoid rule).
    corr : float
        Their posterior correlation.
    envelope : float
        Rejection constant ``M`` (see step 4 of the module docstring).
    log_max : float
        The maximum log density (the shift of ``log_density``).
    cells : tuple
        ``(n, c, weights, mu_prior, log_kappa_prior)``: what the exact density needs.
    """

    centre: np.ndarray
    scale: np.ndarray
    z1: np.ndarray
    z2: np.ndarray
    log_density: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    corr: float
    envelope: float
    log_max: float
    cells: tuple

    def exact_log_density(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The exact log density at ``(x, y)``, shifted like :attr:`log_density`."""
        n, c, w, mu_prior, log_kappa_prior = self.cells
        return log_density(x, y, n, c, w, mu_prior, log_kappa_prior) - self.log_max

    def nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(x, y)`` of every node, each of shape ``(len(z1), len(z2))``."""
        return _to_theta(self.centre, self.scale, self.z1, self.z2)


def _to_theta(
    centre: np.ndarray, scale: np.ndarray, z1: np.ndarray, z2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    g1, g2 = np.meshgrid(z1, z2, indexing="ij")
    x = centre[0] + scale[0, 0] * g1 + scale[0, 1] * g2
    y = centre[1] + scale[1, 0] * g1 + scale[1, 1] * g2
    return x, y


def _moments(x: np.ndarray, y: np.ndarray, logd: np.ndarray) -> np.ndarray:
    """Trapezoid-rule mean/sd of x and y, and their correlation (uniform grid in z)."""
    w = np.exp(logd - logd.max())
    w[0, :] *= 0.5
    w[-1, :] *= 0.5
    w[:, 0] *= 0.5
    w[:, -1] *= 0.5
    w /= w.sum()
    mx, my = (w * x).sum(), (w * y).sum()
    vx, vy = (w * (x - mx) ** 2).sum(), (w * (y - my) ** 2).sum()
    cxy = (w * (x - mx) * (y - my)).sum()
    return np.array([mx, my, np.sqrt(vx), np.sqrt(vy), cxy / np.sqrt(vx * vy)])


def grid_posterior(
    n: np.ndarray,
    c: np.ndarray,
    weights: np.ndarray,
    mu_prior: tuple[float, float] = (1.0, 1.0),
    log_kappa_prior: tuple[float, float] = (1.0, 1.5),
    *,
    tol: float = 1e-6,
    max_nodes: int = MAX_NODES,
) -> GridPosterior:
    """Adaptive quadrature grid of one system's posterior of ``(logit mu, log kappa)``.

    Parameters
    ----------
    n, c, weights : 1-D arrays
        Unique cells of the system (trials, successes, number of tasks); may be empty
        (the posterior is then the prior).
    mu_prior, log_kappa_prior
        As in :class:`~evalbayes.models.beta_binomial.BetaBinomialModel`.
    tol : float
        Refine until the means and sds of successive nested grids agree to ``tol``
        posterior sds.
    max_nodes : int
        Largest number of nodes per axis (a ValueError if not converged by then).

    Returns
    -------
    GridPosterior

    References
    ----------
    Rue, Martino & Chopin (2009), JRSS B 71:319-392, sec. 6.5 (grid exploration of a
    low-dimensional posterior in standardised, rotated coordinates).
    """
    n = np.asarray(n, np.int64)
    c = np.asarray(c, np.int64)
    w = np.asarray(weights, float)
    if np.any(c < 0) or np.any(c > n):
        raise ValueError("cells must satisfy 0 <= c <= n")

    def logp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return log_density(x, y, n, c, w, mu_prior, log_kappa_prior)

    # 1. mode and curvature
    from scipy.optimize import minimize  # ~0.1 CPU-s: not on the path of summary / compare

    rate = (float((w * c).sum()) + 0.5) / (float((w * n).sum()) + 1.0)
    start = np.array([np.log(rate / (1 - rate)), log_kappa_prior[0]])
    result = minimize(lambda t: -float(logp(t[0], t[1])), start, method="BFGS")
    centre = np.asarray(result.x, float)
    hess = np.empty((2, 2))
    step = 1e-3
    f0 = -float(logp(centre[0], centre[1]))
    for i in range(2):
        for j in range(2):
            ei, ej = np.eye(2)[i] * step, np.eye(2)[j] * step
            if i == j:
                fp = -float(logp(*(centre + ei)))
                fm = -float(logp(*(centre - ei)))
                hess[i, i] = (fp - 2 * f0 + fm) / step**2
            else:
                vals = [-float(logp(*(centre + si * ei + sj * ej)))
                        for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1))]
                hess[i, j] = (vals[0] - vals[1] - vals[2] + vals[3]) / (4 * step**2)
    eigval, eigvec = np.linalg.eigh(0.5 * (hess + hess.T))
    eigval = np.maximum(np.abs(eigval), 1e-6)
    scale = eigvec @ np.diag(1 / np.sqrt(eigval))  # L with L L^T = H^-1

    # 2. extent: push each side out until its edge is EDGE_DROP nats below the maximum
    lo, hi = np.array([-6.0, -6.0]), np.array([6.0, 6.0])
    for _ in range(40):
        z1 = np.linspace(lo[0], hi[0], START_NODES)
        z2 = np.linspace(lo[1], hi[1], START_NODES)
        ld = logp(*_to_theta(centre, scale, z1, z2))
        top = ld.max()
        edges = [ld[0, :].max(), ld[:, 0].max(), ld[-1, :].max(), ld[:, -1].max()]
        grew = False
        for (axis, side), edge in zip(((0, 0), (1, 0), (0, 1), (1, 1)), edges, strict=True):
            if edge > top - EDGE_DROP:
                width = hi[axis] - lo[axis]
                if side == 0:
                    lo[axis] -= 0.5 * width
                else:
                    hi[axis] += 0.5 * width
                grew = True
        if not grew:
            break

    # 3. resolution: nested grids until the moments agree
    nodes = START_NODES
    prev = _moments(*_to_theta(centre, scale, z1, z2), ld)
    while True:
        nodes = 2 * nodes - 1
        if nodes > max_nodes:
            raise ValueError(
                f"grid_posterior did not converge to tol={tol} within {max_nodes} nodes per axis"
            )
        z1 = np.linspace(lo[0], hi[0], nodes)
        z2 = np.linspace(lo[1], hi[1], nodes)
        x, y = _to_theta(centre, scale, z1, z2)
        ld = logp(x, y)
        cur = _moments(x, y, ld)
        sds = cur[2:4]
        gap = float(np.max(np.abs(cur[:4] - prev[:4]) / np.tile(sds, 2)))
        prev = cur
        if gap < tol:
            break
    # 4. rejection envelope: largest exact / bilinear ratio at the cell centres
    dens = np.exp(ld - ld.max())
    q_mid = 0.25 * (dens[:-1, :-1] + dens[1:, :-1] + dens[:-1, 1:] + dens[1:, 1:])
    mid1 = 0.5 * (z1[:-1] + z1[1:])
    mid2 = 0.5 * (z2[:-1] + z2[1:])
    p_mid = np.exp(logp(*_to_theta(centre, scale, mid1, mid2)) - ld.max())
    ok = q_mid > 1e-300
    envelope = 1.01 * max(1.0, float(np.max(p_mid[ok] / q_mid[ok])))
    return GridPosterior(
        centre=centre,
        scale=scale,
        z1=z1,
        z2=z2,
        log_density=ld - ld.max(),
        mean=cur[:2],
        sd=cur[2:4],
        corr=float(cur[4]),
        envelope=envelope,
        log_max=float(ld.max()),
        cells=(n, c, w, tuple(mu_prior), tuple(log_kappa_prior)),
    )


def _linear_segment_draw(f0: np.ndarray, f1: np.ndarray, r: np.ndarray, h: float) -> np.ndarray:
    """Position ``u`` in ``[0, h]`` where the mass of the linear density ``f0 -> f1`` is r."""
    disc = np.maximum(f0 * f0 + 2.0 * (f1 - f0) * r / h, 0.0)
    denom = f0 + np.sqrt(disc)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(denom > 0, 2.0 * r / denom, 0.0)
    return np.clip(u, 0.0, h)


def _propose(
    grid: GridPosterior, dens: np.ndarray, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``size`` draws ``(z1, z2)`` from the bilinear interpolant, and its value there."""
    h1 = grid.z1[1] - grid.z1[0]
    h2 = grid.z2[1] - grid.z2[0]
    # marginal of z1: node values are trapezoid sums over z2
    g = h2 * (dens.sum(axis=1) - 0.5 * (dens[:, 0] + dens[:, -1]))
    seg1 = 0.5 * h1 * (g[:-1] + g[1:])
    cum1 = np.cumsum(seg1)
    r1 = rng.random(size) * cum1[-1]
    i = np.minimum(np.searchsorted(cum1, r1, side="right"), len(seg1) - 1)
    r_in = r1 - (cum1[i] - seg1[i])
    u1 = _linear_segment_draw(g[i], g[i + 1], r_in, h1)
    t = (u1 / h1)[:, None]
    # conditional of z2 given z1: linear between the two neighbouring columns
    col = (1.0 - t) * dens[i] + t * dens[i + 1]  # (size, N2)
    seg2 = 0.5 * h2 * (col[:, :-1] + col[:, 1:])
    cum2 = np.cumsum(seg2, axis=1)
    r2 = rng.random(size) * cum2[:, -1]
    j = np.minimum((cum2 <= r2[:, None]).sum(axis=1), seg2.shape[1] - 1)
    rows = np.arange(size)
    r_in2 = r2 - (cum2[rows, j] - seg2[rows, j])
    u2 = _linear_segment_draw(col[rows, j], col[rows, j + 1], r_in2, h2)
    t2 = u2 / h2
    q = (1.0 - t2) * col[rows, j] + t2 * col[rows, j + 1]
    return grid.z1[i] + u1, grid.z2[j] + u2, q


def sample_grid(
    grid: GridPosterior, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Exact posterior draws: bilinear-interpolant proposals, then rejection.

    Returns ``(logit mu, log kappa)`` arrays of length ``size`` (see the module docstring,
    step 4).
    """
    dens = np.exp(grid.log_density)
    envelope = grid.envelope
    while True:
        xs: list[np.ndarray] = []
        ys: list[np.ndarray] = []
        have = 0
        raised = False
        while have < size:
            batch = int(1.1 * envelope * (size - have)) + 16
            z1, z2, q = _propose(grid, dens, batch, rng)
            x = grid.centre[0] + grid.scale[0, 0] * z1 + grid.scale[0, 1] * z2
            y = grid.centre[1] + grid.scale[1, 0] * z1 + grid.scale[1, 1] * z2
            ratio = np.exp(grid.exact_log_density(x, y)) / q
            if ratio.max() > envelope:  # the envelope was not a bound: raise it, restart
                envelope = 1.01 * float(ratio.max())
                raised = True
                break
            keep = rng.random(batch) * envelope < ratio
            xs.append(x[keep])
            ys.append(y[keep])
            have += int(keep.sum())
        if not raised:
            return np.concatenate(xs)[:size], np.concatenate(ys)[:size]


def grid_draws(
    n: np.ndarray,
    c: np.ndarray,
    weights: np.ndarray,
    system: np.ndarray,
    n_systems: int,
    mu_prior: tuple[float, float] = (1.0, 1.0),
    log_kappa_prior: tuple[float, float] = (1.0, 1.5),
    *,
    draws: int = 1000,
    chains: int = 4,
    seed: int = 0,
    tol: float = 1e-6,
) -> dict[str, np.ndarray]:
    """Independent exact posterior draws for every system, in the NUTS fit's layout.

    Parameters
    ----------
    n, c, weights, system : 1-D arrays
        Unique ``(system, n, c)`` cells with their multiplicities (the ``_Cells`` of
        :mod:`evalbayes.models.beta_binomial._model`).
    n_systems : int
        Number of systems (a system without cells gets prior draws).
    draws, chains, seed
        ``chains * draws`` independent draws per system, shaped ``(chain, draw)``; system
        ``s`` uses ``numpy.random.default_rng([seed, s])``.

    Returns
    -------
    dict
        ``mu_logit``, ``log_kappa``, ``mu``, ``kappa``, each ``(chain, draw, system)``.
    """
    from scipy.special import expit  # imported when used (issue 26)

    if draws < 1 or chains < 1:
        raise ValueError(f"draws and chains must be >= 1, got {draws}, {chains}")
    system = np.asarray(system, np.int64)
    x = np.empty((chains, draws, n_systems))
    y = np.empty((chains, draws, n_systems))
    for s in range(n_systems):
        mine = system == s
        grid = grid_posterior(n[mine], c[mine], weights[mine], mu_prior, log_kappa_prior, tol=tol)
        xs, ys = sample_grid(grid, chains * draws, np.random.default_rng([seed, s]))
        x[..., s] = xs.reshape(chains, draws)
        y[..., s] = ys.reshape(chains, draws)
    return {"mu_logit": x, "log_kappa": y, "mu": expit(x), "kappa": np.exp(y)}


def exact_posterior(
    data: EvalData,
    mu_prior: tuple[float, float] = (1.0, 1.0),
    log_kappa_prior: tuple[float, float] = (1.0, 1.5),
    *,
    draws: int = 1000,
    chains: int = 4,
    seed: int = 0,
) -> dict[str, xr.Dataset]:
    """xarray wrapper of :func:`grid_draws`: ``{"posterior": Dataset}`` like a NUTS fit's
    posterior group (variables ``mu``, ``mu_logit``, ``kappa``, ``log_kappa`` with dims
    ``(chain, draw, system)``)."""
    import xarray as xr

    n_all, c_all = data.n.values, data.c.values
    n_sys, n_task = n_all.shape
    sys_idx = np.repeat(np.arange(n_sys), n_task)
    flat_n, flat_c = n_all.ravel(), c_all.ravel()
    seen = flat_n > 0
    keys = np.stack([sys_idx[seen], flat_n[seen], flat_c[seen]], axis=1)
    if len(keys):
        uniq, counts = np.unique(keys, axis=0, return_counts=True)
    else:
        uniq, counts = np.zeros((0, 3), np.int64), np.zeros(0, np.int64)
    values = grid_draws(
        uniq[:, 1], uniq[:, 2], counts.astype(float), uniq[:, 0], n_sys,
        mu_prior, log_kappa_prior, draws=draws, chains=chains, seed=seed,
    )
    dims = ("chain", "draw", "system")
    coords = {
        "chain": np.arange(chains),
        "draw": np.arange(draws),
        "system": data.dataset["system"].values,
    }
    posterior = xr.Dataset(
        {name: (dims, values[name]) for name in ("mu", "mu_logit", "kappa", "log_kappa")},
        coords=coords,
    )
    posterior.attrs["inference"] = "exact (adaptive quadrature grid, beta_binomial_grid)"
    return {"posterior": posterior}
