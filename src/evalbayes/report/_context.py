"""Numbers every report section shares, computed once: the fit, the frequentist
cross-check, and the posterior pass@k / pass^k draws over one grid of k."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from evalbayes._core.intervals import credible_interval
from evalbayes._core.names import METRICS
from evalbayes.data import EvalData
from evalbayes.frequentist.crosscheck import CrosscheckReport, crosscheck

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.results._posterior import Posterior

__all__ = ["CI_PROB", "MAX_K", "ROPE", "ReportContext", "k_grid", "make_context"]

CI_PROB = 0.95
ROPE = 0.01  # region of practical equivalence for P(|B - A| < rope), as `evalbayes compare`
MAX_K = 1024
N_RESAMPLES = 10_000


def k_grid(data: EvalData) -> tuple[int, ...]:
    """Powers of two from 1 to twice the largest ``n`` (at least 8, at most 1024).

    The posterior curves extend past ``n``; the unbiased estimator stops at the smallest
    ``n`` (Chen et al. 2021), which the tables and plots show as missing.
    """
    n_max = int(data.n.values.max())
    top = min(MAX_K, max(8, 2 * n_max))
    return tuple(2**i for i in range(int(math.log2(top)) + 1))


@dataclass(frozen=True)
class ReportContext:
    """Inputs and shared results of one report.

    Attributes
    ----------
    data : EvalData
        The counts.
    posterior : Posterior
        The fit the Bayesian numbers come from.
    crosscheck : CrosscheckReport
        Frequentist numbers (:func:`evalbayes.frequentist.crosscheck.crosscheck`, same seed).
    ks : tuple of int
        The k grid of every curve, table and plot.
    curves : mapping (metric, estimand) -> xarray.DataArray
        Posterior draws ``(chain, draw, system, k)`` from :meth:`Posterior.curve`.
    seed : int
        Seed of the bootstraps, sign-flip tests and predictive replicates.
    ci_prob, rope : float
        Interval probability and ROPE half-width used throughout.
    """

    data: EvalData
    posterior: Posterior
    crosscheck: CrosscheckReport
    ks: tuple[int, ...]
    curves: Mapping[tuple[str, str], xr.DataArray]
    seed: int
    ci_prob: float = CI_PROB
    rope: float = ROPE
    #: (metric, estimand, k) -> :meth:`summary`, computed once for all sections
    _summaries: dict[tuple[str, str, int], dict[str, tuple[float, float, float]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def estimands(self) -> tuple[str, ...]:
        """Estimands the fitted model provides (``"tasks"`` and usually ``"population"``)."""
        return tuple(self.posterior.model.estimands())

    @property
    def systems(self) -> list[str]:
        """Systems in data order."""
        return list(self.data.systems)

    def curve(self, metric: str, estimand: str) -> xr.DataArray | None:
        """Draws of ``metric`` for ``estimand``; None when the model lacks the estimand."""
        return self.curves.get((metric, estimand))

    def draws(self, metric: str, estimand: str) -> xr.DataArray:
        """Draws of ``metric`` for an ``estimand`` the model has (else ValueError)."""
        curve = self.curve(metric, estimand)
        if curve is None:
            raise ValueError(f"the fit has no {estimand!r} estimand of {metric}")
        return curve

    def summary(self, metric: str, estimand: str, k: int) -> dict[str, tuple[float, float, float]]:
        """Per system: posterior mean, lower and upper ``ci_prob`` equal-tailed bound at k."""
        key = (metric, estimand, k)
        if key in self._summaries:
            return dict(self._summaries[key])
        draws = self.curve(metric, estimand)
        if draws is None:
            return {}
        sel = draws.sel(k=float(k)).transpose("chain", "draw", "system")
        lower, upper = credible_interval(sel, self.ci_prob, "eti")
        mean = sel.mean(("chain", "draw")).values
        self._summaries[key] = {
            str(s): (float(m), float(lo), float(hi))
            for s, m, lo, hi in zip(sel["system"].values, mean, lower.values, upper.values,
                                    strict=True)
        }
        return dict(self._summaries[key])

    def ranking(self) -> list[str]:
        """Systems by posterior mean pass@1 (these tasks), best first; ties in data order."""
        means = self.summary("pass@k", "tasks", 1)
        order = np.argsort([-means[s][0] for s in self.systems], kind="stable")
        return [self.systems[i] for i in order]

    def unbiased(self, metric: str) -> xr.DataArray:
        """Unbiased estimates ``(system, k)`` on the grid (NaN where k exceeds a system's n)."""
        attr = "pass_at_k" if metric == "pass@k" else "pass_hat_k"
        values = np.array(
            [
                [getattr(s, attr).get(k, float("nan")) for k in self.ks]
                for s in self.crosscheck.systems
            ],
            dtype=float,
        )
        return xr.DataArray(
            values,
            dims=("system", "k"),
            coords={"system": self.systems, "k": np.asarray(self.ks, dtype=float)},
            name=metric,
        )


def make_context(data: EvalData, posterior: Posterior, seed: int) -> ReportContext:
    """Compute the cross-check and the posterior curves once for all sections."""
    ks = k_grid(data)
    # unbiased estimates up to each system's smallest n (crosscheck leaves NaN beyond it)
    n = data.n.values
    reach = max(int(row[row > 0].min()) for row in n if (row > 0).any())
    check = crosscheck(
        data,
        k=[k for k in ks if k <= reach],
        n_resamples=N_RESAMPLES,
        seed=seed,
        ci_prob=CI_PROB,
    )
    curves = {
        (metric, estimand): draws
        for estimand in posterior.model.estimands()
        for metric, draws in posterior.curves(METRICS, list(ks), estimand=estimand).items()
    }
    return ReportContext(
        data=data, posterior=posterior, crosscheck=check, ks=ks, curves=curves, seed=seed
    )
