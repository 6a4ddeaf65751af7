"""The prior predictive check: what a model believes about pass@k before it sees the data.

``Model.prior_predictive(data)`` draws the model's parameters from their prior (the data only
set the shapes: systems, tasks, trials) and pushes each draw through the model's own
population estimand, so the check shows what the prior implies for the numbers a user
reports: a new task's pass@k per system, and the difference of two systems' pass@1. Beside
it, the data's observed pass@1 per system, so a prior that puts its mass far from where the
data are (or piles it at 0 and 1) is seen before fitting (Gabry et al. 2019, "Visualization in
Bayesian workflow", JRSS A 182: prior predictive checks; Gelman et al. 2020, "Bayesian
workflow", sec. 2.4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.rendering import Rendered

__all__ = ["PriorPredictive", "prior_table"]

#: Quantiles of the prior predictive shown per system and k.
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
#: Below / above these a mean rate is "at the edge" (the share is reported).
EDGE = 0.05


def prior_table(curve: xr.DataArray, observed: pd.Series) -> pd.DataFrame:
    """Per system and ``k``: prior quantiles of the population pass@k, the prior share below
    ``EDGE`` and above ``1 - EDGE``, the observed pass@1 (the mean over tasks of ``c / n``) and
    the prior probability of a value at most that observed one (at ``k = 1``).

    ``curve`` has dims ``(draw, system, k)``; ``observed`` is indexed by system.
    """
    values = curve.transpose("draw", "system", "k").values
    rows = []
    for s, system in enumerate(curve["system"].values):
        for j, k in enumerate(curve["k"].values):
            x = values[:, s, j]
            row = {"system": system, "k": k}
            row.update({f"q{int(q * 100):02d}": float(np.quantile(x, q)) for q in QUANTILES})
            row["below 0.05"] = float(np.mean(x < EDGE))
            row["above 0.95"] = float(np.mean(x > 1 - EDGE))
            obs = float(observed[system])
            row["observed pass@1"] = obs
            row["prior P(<= observed)"] = float(np.mean(x <= obs)) if k == 1 else np.nan
            rows.append(row)
    table = pd.DataFrame(rows)
    table["k"] = table["k"].astype(float).round().astype(int) if np.all(
        table["k"] == np.round(table["k"])
    ) else table["k"]
    return table


@dataclass(frozen=True)
class PriorPredictive(Rendered):
    """Prior predictive check of a model on a data set's shape.

    Attributes
    ----------
    model : str
        The model's description.
    curve : xarray.DataArray
        Prior draws of the population pass@k (a new task), dims ``(draw, system, k)``.
    difference : xarray.DataArray
        Prior draws of ``pass@1[B] - pass@1[A]`` for the first two systems, dims ``(draw,)``
        (empty with one system): how far apart the prior lets two systems be.
    table : pandas.DataFrame
        :func:`prior_table`: quantiles, the shares at the edges and the observed pass@1.
    draws : int
        Prior draws.
    """

    _settings_fields = ("model", "draws")

    model: str
    curve: xr.DataArray
    difference: xr.DataArray
    table: pd.DataFrame
    draws: int

    def to_frame(self) -> pd.DataFrame:
        """One row per (system, k); see :func:`prior_table`."""
        return self.table

    def title(self) -> str:
        """E.g. ``Prior predictive (rate-grid, 1000 draws): pass@1 of a new task, 90 % of the
        prior in [0.01, 0.99]; observed pass@1 0.15-0.85``."""
        first = self.table[self.table["k"] == self.table["k"].min()]
        low, high = float(first["q05"].min()), float(first["q95"].max())
        observed = first["observed pass@1"]
        text = (f"Prior predictive ({self.model}, {self.draws} draws): population "
                f"pass@{first['k'].iloc[0]} 90 % of the prior in [{low:.2f}, {high:.2f}]; "
                f"observed pass@1 {observed.min():.2f}-{observed.max():.2f}")
        if self.difference.size:
            q = np.quantile(self.difference.values, [0.05, 0.95])
            text += f"; pass@1 difference of two systems 90 % in [{q[0]:.2f}, {q[1]:.2f}]"
        return text
