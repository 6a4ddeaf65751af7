"""Helpers for testing models: simulation-based calibration and simulated data.

Simulation-based calibration (Talts et al. 2018, arXiv:1804.06788): simulate parameters from
the prior, data from the model, fit, and record the rank of each true value among ``L``
posterior draws. For a correct sampler and model the ranks are uniform on
``0..L``; a chi-square test on binned ranks checks it. Draws are thinned evenly to ``L`` so that
autocorrelation does not make the ranks look over-dispersed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.special import expit

from evalbayes._core.rendering import Rendered
from evalbayes.data import EvalData

__all__ = ["RankTest", "rank_statistics", "rank_uniformity", "simulate_irt"]


def rank_statistics(truth: np.ndarray, draws: np.ndarray, n_ranks: int = 99) -> np.ndarray:
    """Rank of each true value among ``n_ranks`` evenly thinned posterior draws.

    Parameters
    ----------
    truth : array, shape (R,)
        True parameter value of each replicate.
    draws : array, shape (S, R)
        Posterior draws (chains stacked) of each replicate.
    n_ranks : int
        Number of thinned draws L; ranks lie in 0..L.
    """
    truth = np.asarray(truth, dtype=float)
    draws = np.asarray(draws, dtype=float)
    if draws.ndim != 2 or draws.shape[1] != truth.shape[0]:
        raise ValueError(f"draws must be (S, R) with R = {truth.shape[0]}, got {draws.shape}")
    if draws.shape[0] < n_ranks:
        raise ValueError(f"need at least {n_ranks} draws, got {draws.shape[0]}")
    idx = np.linspace(0, draws.shape[0] - 1, n_ranks).round().astype(int)
    return (draws[idx] < truth[None, :]).sum(axis=0)


@dataclass(frozen=True)
class RankTest(Rendered):
    """Chi-square test of uniform SBC ranks."""

    statistic: float
    pvalue: float
    counts: np.ndarray
    n_replicates: int

    def to_frame(self) -> Any:
        """One row per rank bin: ``bin``, observed ``count`` and the ``expected`` count."""
        import pandas as pd

        counts = np.asarray(self.counts)
        return pd.DataFrame(
            {
                "bin": np.arange(counts.size),
                "count": counts,
                "expected": np.full(counts.size, self.n_replicates / counts.size),
            }
        )

    def settings(self) -> dict[str, Any]:
        """The test's statistic, p-value and number of replicates."""
        return {
            "statistic": float(self.statistic),
            "pvalue": float(self.pvalue),
            "n_replicates": int(self.n_replicates),
        }

    def title(self) -> str:
        """E.g. ``SBC rank uniformity: chi-square 7.2, p 0.62 (100 replicates)``."""
        return (
            f"SBC rank uniformity: chi-square {self.statistic:.3g}, p {self.pvalue:.3g} "
            f"({self.n_replicates} replicates)"
        )


def rank_uniformity(ranks: np.ndarray, n_ranks: int = 99, bins: int = 10) -> RankTest:
    """Chi-square goodness of fit of ranks in ``0..n_ranks`` to the discrete uniform.

    ``n_ranks + 1`` must be divisible by ``bins`` so that every bin has equal probability.
    """
    ranks = np.asarray(ranks)
    if (n_ranks + 1) % bins:
        raise ValueError(f"n_ranks + 1 = {n_ranks + 1} is not divisible by bins = {bins}")
    if ranks.min() < 0 or ranks.max() > n_ranks:
        raise ValueError(f"ranks must lie in 0..{n_ranks}")
    counts = np.bincount(ranks * bins // (n_ranks + 1), minlength=bins)
    result = stats.chisquare(counts)
    return RankTest(float(result.statistic), float(result.pvalue), counts, int(ranks.size))


def simulate_irt(
    theta: ArrayLike,
    b: ArrayLike,
    a: ArrayLike | None = None,
    guess: ArrayLike | None = None,
    trials: ArrayLike = 1,
    seed: int = 0,
) -> EvalData:
    """Counts from an item response model with known parameters.

    ``c[s, t] ~ Binomial(n[s, t], g[t] + (1 - g[t]) sigmoid(a[t] (theta[s] - b[t])))``
    (Birnbaum 1968): ``a`` defaults to 1 (1PL), ``guess`` to 0 (no floor), ``trials`` is a
    number or a ``(system, task)`` array (0 marks a missing cell). Deterministic given ``seed``.
    The one simulator of the IRT tests and benchmarks; :meth:`IRTModel.simulate_prior
    <evalbayes.models.irt.IRTModel.simulate_prior>` draws the parameters from the prior.
    """
    theta = np.asarray(theta, dtype=float)
    b = np.asarray(b, dtype=float)
    a = np.ones_like(b) if a is None else np.asarray(a, dtype=float)
    g = np.zeros_like(b) if guess is None else np.asarray(guess, dtype=float)
    p = g + (1.0 - g) * expit(a * (theta[:, None] - b))
    n = np.broadcast_to(np.asarray(trials), p.shape).astype(np.int64)
    c = np.random.default_rng(seed).binomial(n, p)
    return EvalData.from_arrays(n, c)
