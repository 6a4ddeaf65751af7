"""Tempered sequential Monte Carlo for the rate grid, one small run per system.

Without broken tasks the rate grid's systems share no parameter: the posterior is the
product over systems of ``p(coef_s | data_s) propto L_s(coef_s) N(coef_s | 0, sd_s^2 I)``
(``sd_s`` the system's prior sd),
each a 13-dimensional density (by default) whose likelihood is a sum over the system's
distinct ``(n, c)`` rows. Each factor is sampled alone by an adaptive tempered SMC sampler
(P. Del Moral, A. Doucet and A. Jasra, "Sequential Monte Carlo samplers", *JRSS B* 68, 2006,
411-436; N. Chopin and O. Papaspiliopoulos, *An Introduction to Sequential Monte Carlo*,
Springer 2020, ch. 17):

1. ``P = chains x draws`` particles from the prior, ``beta_0 = 0``.
2. The next inverse temperature ``beta'`` is the one at which the effective sample size of
   the incremental weights ``w_i = L(x_i)^(beta' - beta)`` is ``P / 2`` (found by bisection;
   ``beta' = 1`` when that already keeps half); the particles are resampled by systematic
   resampling in proportion to ``w``.
3. Each particle moves by ``moves`` sweeps (``final_moves`` at ``beta = 1``) of generalised
   elliptical slice sampling, which leave ``L^beta N(0, prior_sd^2 I)`` invariant, with a
   Student-t fitted to the cloud (:mod:`._smc_kernel`).
4. Until ``beta = 1``. The product of the mean incremental weights estimates the marginal
   likelihood (kept as ``log_marginal_likelihood``).

The ``P`` particles at ``beta = 1`` are the draws: split, in the order of the last
resampling (so that copies of one ancestor are neighbours), into ``chains`` pseudo-chains of
``draws``. Their rank R-hat and ESS are then a check on the particle population: ancestors
shared across pseudo-chains or copies that did not move apart show as R-hat above 1 and ESS
below ``P``. A system that misses the bars (R-hat <= 1.01, bulk and tail ESS >= 400) gets
further sweeps at ``beta = 1`` (``extra_moves`` at a time, at most ``max_extra_rounds``
times); the fit's diagnostics then report (and warn about) whatever is left.

Systems run on a thread pool (one thread per core): the kernels release the GIL. Or, given a
Dask client or a number of local worker processes, in chunks of consecutive systems on the
cluster (``fit(data, client="tcp://host:8786")`` / ``n_workers=4``): the systems share
nothing, so the map is embarrassingly parallel, and the draws are the same.
Random streams: each system's generator is ``SeedSequence([seed, h])`` with ``h`` the
64-bit BLAKE2b hash of the system's label, so a system's draws depend on the seed and its
own label and data only: fitting a subset of the systems gives those systems the same draws.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, closing
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from evalbayes.results._diagnostics import ESS_MIN, RHAT_MAX, rhat_ess

__all__ = ["SMCSettings", "SystemRows", "smc_posterior", "smc_system", "smc_systems",
           "system_seed"]

#: Bisection steps for the next temperature (the ESS is monotone in ``beta'``).
_BISECTION_STEPS = 60
#: Stages before giving up (each at least halves the ESS, so this is never reached on
#: finite likelihoods).
_MAX_STAGES = 1000


@dataclass(frozen=True)
class SMCSettings:
    """The sampler's settings.

    Attributes
    ----------
    moves, final_moves : int
        Slice-sampling sweeps per particle after each resampling, and at ``beta = 1``. One
        and two (2 and 4 before 2026-12-06: 1.9x the likelihood evaluations on SWE-bench
        Verified for the same posterior; a system whose pseudo-chains then miss the bars
        gets ``extra_moves`` more until they pass, benchmarks/speed/default_fit.md).
    ess_fraction : float
        Each step keeps this fraction of the particles' effective sample size.
    dof : float
        Degrees of freedom of the Student-t fitted to the cloud (heavier tails than a normal
        fit, so the ellipses reach the tails of the tempered posterior).
    extra_moves, max_extra_rounds : int
        Sweeps per extra round at ``beta = 1`` for a system whose pseudo-chains miss the bars,
        and the most such rounds.
    """

    moves: int = 1
    final_moves: int = 2
    ess_fraction: float = 0.5
    dof: float = 5.0
    extra_moves: int = 2
    max_extra_rounds: int = 50


@dataclass(frozen=True)
class SystemRows:
    """One system's distinct ``(n, c)`` rows as the kernel reads them: row ``r``'s pairs are
    ``row_start[r]:row_start[r + 1]``, consecutive nodes from ``pair_node[row_start[r]]`` on,
    each a node ``pair_node`` with its binomial
    log-likelihood relative to the row's best node ``pair_ll`` (>= -prune) and ``exp`` of it
    ``pair_lik``; ``row_w`` the number of cells with those counts; ``offset`` the constant
    ``sum_r w_r max_j log Binomial(c_r | n_r, p_j)`` the relative log-likelihoods leave out."""

    row_start: np.ndarray
    pair_node: np.ndarray
    pair_ll: np.ndarray
    pair_lik: np.ndarray
    row_w: np.ndarray
    offset: float = 0.0

    @classmethod
    def from_loglik(cls, loglik: np.ndarray, weight: np.ndarray, prune: float) -> SystemRows:
        """From ``log Binomial(c_r | n_r, p_j)`` (row, node) and the rows' cell counts."""
        best = loglik.max(axis=1, keepdims=True)
        rel = loglik - best
        # Each row keeps the run of nodes from its first to its last node within ``prune``
        # of its best: the binomial log-likelihood is unimodal in ``p`` (concave in logit,
        # the atoms at the ends), so the run is exactly the nodes within ``prune`` and the
        # kernel reads it as one contiguous slice of ``g``.
        kept = rel > -prune
        lo = np.argmax(kept, axis=1)
        hi = kept.shape[1] - np.argmax(kept[:, ::-1], axis=1)
        length = hi - lo
        row_start = np.concatenate([[0], np.cumsum(length)]).astype(np.int64)
        row = np.repeat(np.arange(len(loglik)), length)
        node = np.arange(row_start[-1]) - np.repeat(row_start[:-1] - lo, length)
        pair_ll = np.ascontiguousarray(rel[row, node])
        weight = np.ascontiguousarray(weight, dtype=float)
        return cls(row_start, node.astype(np.int64), pair_ll, np.exp(pair_ll), weight,
                   float(weight @ best[:, 0]))

    def log_likelihood(self, x: np.ndarray, basis: np.ndarray) -> np.ndarray:
        """Log-likelihood of each particle (row of ``x``), up to the rows' constants."""
        from evalbayes.models.rate_grid._smc_kernel import log_likelihoods  # numba, when used

        return log_likelihoods(np.ascontiguousarray(x), basis, self.row_start, self.pair_node,
                               self.pair_lik, self.pair_ll, self.row_w)


def system_seed(seed: int, label: object) -> np.random.SeedSequence:
    """The seed sequence of one system: ``[seed, BLAKE2b-64(str(label))]``."""
    digest = hashlib.blake2b(str(label).encode(), digest_size=8).digest()
    return np.random.SeedSequence([int(seed), int.from_bytes(digest, "little")])


def _next_beta(ll: np.ndarray, beta: float, fraction: float) -> float:
    """The ``beta' in (beta, 1]`` whose incremental weights keep ``fraction`` of the ESS."""
    centred = ll - ll.max()

    def ess_ratio(step: float) -> float:
        w = np.exp(step * centred)
        return float(w.sum() ** 2 / (w * w).sum()) / len(ll)

    if ess_ratio(1.0 - beta) >= fraction:
        return 1.0
    lo, hi = 0.0, 1.0 - beta
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if ess_ratio(mid) >= fraction:
            lo = mid
        else:
            hi = mid
    return beta + max(lo, 1e-12)


def _systematic(weights: np.ndarray, u: float) -> np.ndarray:
    """Systematic resampling: ancestor indices, sorted (Kitagawa 1996)."""
    n = len(weights)
    edges = np.cumsum(weights)
    edges /= edges[-1]
    return np.minimum(np.searchsorted(edges, (u + np.arange(n)) / n), n - 1)


def _t_fit(x: np.ndarray, dof: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Location, Cholesky factor of the scale and its inverse of a t with ``dof`` degrees of
    freedom whose covariance is the particles' (ridge of 1e-10 of the mean variance)."""
    mu = x.mean(axis=0)
    cov = np.cov(x, rowvar=False) * (dof - 2.0) / dof
    cov += np.eye(len(mu)) * 1e-10 * max(np.trace(cov) / len(mu), 1e-300)
    chol = np.linalg.cholesky(cov)
    return mu, chol, np.linalg.inv(chol)


@dataclass(frozen=True)
class SystemFit:
    """One system's particles ``(P, term)`` and what the run took."""

    coef: np.ndarray
    stages: int
    extra_rounds: int
    evaluations: int
    log_marginal: float
    passed: bool
    #: R-hat, bulk and tail ESS of each term of the final pseudo-chains, ``(3, term)``
    #: (None with fewer than 4 draws per chain)
    convergence: np.ndarray | None = None


def _bars_met(coef: np.ndarray, chains: int) -> tuple[bool, np.ndarray | None]:
    """Whether the pseudo-chains meet the bars, and their :func:`rhat_ess` ``(3, term)``."""
    draws = coef.reshape(chains, -1, coef.shape[1])
    if draws.shape[1] < 4:
        return True, None
    rhat, bulk, tail = rhat_ess(draws)
    stats = np.stack([rhat, bulk, tail])
    if chains >= 2 and not np.nanmax(rhat) <= RHAT_MAX:
        return False, stats
    return bool(np.nanmin(bulk) >= ESS_MIN and np.nanmin(tail) >= ESS_MIN), stats


def smc_system(rows: SystemRows, basis: np.ndarray, prior_sd: float, chains: int, draws: int,
               seed: np.random.SeedSequence, settings: SMCSettings = SMCSettings()
               ) -> SystemFit:
    """Adaptive tempered SMC for one system's coefficients (module docstring)."""
    from evalbayes.models.rate_grid._smc_kernel import move  # numba: imported when used

    rng = np.random.default_rng(seed)
    n_part = chains * draws
    basis = np.ascontiguousarray(basis, dtype=float)
    x = rng.normal(0.0, prior_sd, (n_part, basis.shape[1]))
    ll = rows.log_likelihood(x, basis)
    beta, stages, evaluations, log_marginal = 0.0, 0, n_part, rows.offset

    def sweep(n_moves: int) -> int:
        mu, chol, chol_inv = _t_fit(x, settings.dof)
        return int(move(x, ll, beta, float(prior_sd), mu, chol, chol_inv, settings.dof,
                        n_moves, int(rng.integers(2**31 - 1)), basis, rows.row_start,
                        rows.pair_node, rows.pair_lik, rows.pair_ll, rows.row_w))

    while beta < 1.0 and stages < _MAX_STAGES:
        new_beta = _next_beta(ll, beta, settings.ess_fraction)
        log_w = (new_beta - beta) * ll
        top = log_w.max()
        w = np.exp(log_w - top)
        log_marginal += top + float(np.log(w.mean()))
        ancestors = _systematic(w, float(rng.random()))
        x, ll = x[ancestors], ll[ancestors]
        beta = new_beta
        stages += 1
        evaluations += sweep(settings.final_moves if beta >= 1.0 else settings.moves)
    extra = 0
    passed, convergence = _bars_met(x, chains)
    while not passed and extra < settings.max_extra_rounds:
        evaluations += sweep(settings.extra_moves)
        extra += 1
        passed, convergence = _bars_met(x, chains)
    return SystemFit(x, stages, extra, evaluations, log_marginal, passed, convergence)


def smc_systems(items: Sequence[tuple[SystemRows, object, float]], basis: np.ndarray,
                chains: int, draws: int, seed: int,
                settings: SMCSettings = SMCSettings()) -> list[SystemFit]:
    """:func:`smc_system` for each ``(rows, label, prior_sd)`` in turn, each with its own
    stream (:func:`system_seed`): one Dask task of :func:`smc_posterior`'s map."""
    return [smc_system(rows, basis, prior_sd, chains, draws, system_seed(seed, label), settings)
            for rows, label, prior_sd in items]


#: Dask tasks per worker thread: enough that a slow chunk does not leave the others idle at
#: the end, few enough that scheduling (~ms per task) stays negligible.
_CHUNKS_PER_THREAD = 4


def _fits_on_dask(items: list[tuple[SystemRows, object, float]], basis: np.ndarray,
                  chains: int, draws: int, seed: int, settings: SMCSettings, client: Any,
                  n_workers: int | None) -> Generator[SystemFit, None, None]:
    """The systems' fits in order, computed in chunks of consecutive systems on a Dask cluster
    (:func:`~evalbayes._core.cluster.open_client`)."""
    from evalbayes._core.cluster import open_client

    with open_client(client, n_workers) as dask:
        threads = max(1, sum(dask.nthreads().values()))
        n_chunks = min(len(items), _CHUNKS_PER_THREAD * threads)
        bounds = np.linspace(0, len(items), n_chunks + 1).round().astype(int)
        futures = [
            dask.submit(smc_systems, items[lo:hi], basis, chains, draws, seed,
                        settings, pure=False)
            for lo, hi in itertools.pairwise(bounds)
        ]
        for future in futures:
            yield from future.result()
            future.release()


def smc_posterior(rows: Sequence[SystemRows], labels: Sequence[object], basis: np.ndarray,
                  prior_sd: float | Sequence[float] | np.ndarray, chains: int, draws: int,
                  seed: int, settings: SMCSettings = SMCSettings(), client: Any = None,
                  n_workers: int | None = None) -> dict[str, xr.Dataset]:
    """Every system's SMC run: ``posterior`` (``coef``, dims chain, draw, system, term),
    ``sample_stats`` (per system: ``smc_stages``, ``smc_extra_rounds``,
    ``smc_likelihood_evaluations``, ``log_marginal_likelihood``, ``smc_passed``) and
    ``convergence``: ``coef``'s R-hat, bulk and tail ESS (dims statistic, system, term), which
    the bars check computed on exactly these draws (each system's pseudo-chains are its
    columns of ``coef``), so that the fit's diagnostics need not compute them again (absent
    with fewer than 4 draws per chain).

    ``prior_sd`` is one prior sd for every system or one per system (the rate grid's
    ``coef_prior="auto"`` picks it from each system's trials per task); a system's draws
    depend on its own sd only. The systems run on a thread pool in this process, or, given
    ``client`` or ``n_workers``, in chunks on a Dask cluster
    (:class:`~evalbayes.inference.SamplerConfig`); each system's draws are the same either
    way (its stream is keyed by its label)."""
    def run(item: tuple[SystemRows, object, float]) -> SystemFit:
        return smc_system(item[0], basis, item[2], chains, draws, system_seed(seed, item[1]),
                          settings)

    sds = np.broadcast_to(np.asarray(prior_sd, dtype=float), (len(rows),))
    items = [(r, label, float(sd)) for r, label, sd in zip(rows, labels, sds, strict=True)]
    basis = np.ascontiguousarray(basis, dtype=float)
    coef = np.empty((chains, draws, len(items), basis.shape[1]))
    convergence: list[np.ndarray | None] = []
    stats: dict[str, list[Any]] = {name: [] for name in _STATS}
    with ExitStack() as stack:
        if client is not None or n_workers is not None:
            fits: Iterator[SystemFit] = stack.enter_context(closing(_fits_on_dask(
                items, basis, chains, draws, seed, settings, client, n_workers)))
        elif min(len(items), os.cpu_count() or 1) > 1:
            # the kernels release the GIL; each system's numbers are its own
            pool = stack.enter_context(ThreadPoolExecutor(min(len(items), os.cpu_count() or 1)))
            fits = pool.map(run, items)
        else:
            fits = map(run, items)
        for i, fit in enumerate(fits):  # each system's particles into place as they come
            coef[:, :, i] = fit.coef.reshape(chains, draws, -1)
            convergence.append(fit.convergence)
            for name, attribute in _STATS.items():
                stats[name].append(getattr(fit, attribute))
    posterior = xr.Dataset(
        {"coef": (("chain", "draw", "system", "term"), coef)},
        coords={"chain": np.arange(chains), "draw": np.arange(draws),
                "term": np.arange(basis.shape[1])},
    )
    sample_stats = xr.Dataset({name: ("system", np.array(values))
                               for name, values in stats.items()})
    groups = {"posterior": posterior, "sample_stats": sample_stats}
    known = [c for c in convergence if c is not None]
    if items and len(known) == len(items):
        groups["convergence"] = xr.Dataset(
            {"coef": (("statistic", "system", "term"), np.stack(known, axis=1))},
            coords={"statistic": ["rhat", "ess_bulk", "ess_tail"]})
    return groups


#: ``sample_stats`` variable -> :class:`SystemFit` attribute.
_STATS = {
    "smc_stages": "stages",
    "smc_extra_rounds": "extra_rounds",
    "smc_likelihood_evaluations": "evaluations",
    "log_marginal_likelihood": "log_marginal",
    "smc_passed": "passed",
}
