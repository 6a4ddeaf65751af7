"""Plots at leaderboard size: grey field with highlights, forest, ordered P(B > A) matrix."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import xarray as xr

from evalbayes import plots
from evalbayes.results._comparison import Comparison


def _draws(n_sys: int = 30, seed: int = 0) -> xr.DataArray:
    rng = np.random.default_rng(seed)
    rate = np.sort(rng.uniform(0.05, 0.9, n_sys))
    p = np.clip(rate + rng.normal(0, 0.02, (2, 50, n_sys)), 0.001, 0.999)
    k = np.array([1.0, 2.0, 4.0, 8.0])
    vals = 1 - (1 - p[..., None]) ** k
    return xr.DataArray(vals, dims=("chain", "draw", "system", "k"),
                        coords={"system": [f"sys{i:03d}" for i in range(n_sys)], "k": k},
                        name="pass@k", attrs={"estimand": "tasks", "metric": "pass@k"})


def test_many_systems_grey_field_and_outside_legend():
    ax = plots.plot_pass_at_k(_draws(30))
    legend = ax.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert "25 other systems (median)" in texts
    assert legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1  # outside
    # the top 5 by median at the largest k are highlighted: the last five systems
    assert {f"sys{i:03d}" for i in range(25, 30)} <= set(texts)
    with pytest.raises(ValueError, match="unknown systems"):
        plots.plot_pass_at_k(_draws(30), highlight=["nope"])


def test_few_systems_keep_every_band():
    ax = plots.plot_pass_at_k(_draws(3))
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not any("other systems" in t for t in texts)


def test_system_forest_orders_by_posterior_mean():
    draws = _draws(12)
    ax = plots.plot_system_forest(draws, [1, 8], highlight=["sys011"])
    labels = [t.get_text() for t in ax.get_yticklabels()]
    means = draws.sel(k=1.0).mean(("chain", "draw")).to_series()
    assert labels == list(means.sort_values(ascending=False).index)
    with pytest.raises(ValueError, match="not in the draws"):
        plots.plot_system_forest(draws, [3])


def test_superiority_matrix_ordered_and_unannotated_when_large():
    draws = _draws(40)
    shuffled = draws.isel(system=np.random.default_rng(1).permutation(40))
    comparison = Comparison.from_draws(shuffled, rope=0.0)
    ax = plots.plot_superiority_matrix(comparison, k=1.0)
    assert len(ax.texts) == 0  # no per-cell text above 25 systems
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) <= 40
    assert labels[0] == "sys039"  # best first
    small = Comparison.from_draws(draws.isel(system=slice(0, 4)), rope=0.0)
    ax = plots.plot_superiority_matrix(small, k=1.0)
    assert len(ax.texts) == 16
