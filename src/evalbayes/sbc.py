"""Simulation-based calibration (Talts et al. 2018, arXiv:1804.06788).

Simulate parameters from the prior, data from the model, fit, and record the rank of each true
value among ``L`` posterior draws. For a correct sampler and model the ranks are uniform on
``0..L``; a chi-square test on binned ranks checks it. Draws are thinned evenly to ``L`` so that
autocorrelation does not make the ranks look over-dispersed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from evalbayes.rendering import Rendered

__all__ = ["RankTest", "rank_statistics", "rank_uniformity"]


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
