"""Plots at leaderboard size: grey field with highlights, forest, ordered P(B > A) matrix."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import xarray as xr

from evalbayes import plots
from evalbayes.plots._curves import rank_systems
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
    # the top 5 by median at k = 1 are highlighted: the last five systems (rates sorted)
    assert {f"sys{i:03d}" for i in range(25, 30)} <= set(texts)
    with pytest.raises(ValueError, match="unknown systems"):
        plots.plot_pass_at_k(_draws(30), highlight=["nope"])


def _crossing_draws(n_sys: int = 10) -> xr.DataArray:
    """Systems whose order at k = 1 is the reverse of their order at k = 64: p is high but
    the same on every task for the first ones (pass@k flat), low but spread for the last
    ones (pass@k climbs). Only k = 1, 2 are observed (n = 2 trials)."""
    k = np.array([1.0, 2.0, 8.0, 64.0])
    at1 = np.linspace(0.6, 0.2, n_sys)  # sys000 best at k = 1
    at64 = np.linspace(0.65, 0.99, n_sys)  # sys009 best at k = 64
    vals = np.empty((1, 4, n_sys, len(k)))
    for i in range(n_sys):
        vals[..., i, :] = np.interp(np.log2(k), [0, 6], [at1[i], at64[i]])
    return xr.DataArray(
        vals, dims=("chain", "draw", "system", "k"),
        coords={"system": [f"sys{i:03d}" for i in range(n_sys)], "k": k,
                "extrapolated": (("system", "k"), np.broadcast_to(k > 2, (n_sys, 4)))},
        name="pass@k", attrs={"estimand": "tasks", "metric": "pass@k"},
    )  # fmt: skip


def test_default_highlight_is_ranked_at_an_observed_k():
    # issue 28: ranked at the largest k (all extrapolated), the best at k = 1 went grey
    draws = _crossing_draws()
    assert rank_systems(draws)[:3] == ["sys000", "sys001", "sys002"]
    texts = [t.get_text() for t in plots.plot_pass_at_k(draws).get_legend().get_texts()]
    assert {f"sys{i:03d}" for i in range(5)} <= set(texts)
    assert not {f"sys{i:03d}" for i in range(5, 10)} & set(texts)
    # without k = 1 on the grid: the smallest k every system ran (k = 2 here)
    assert rank_systems(draws.sel(k=[2.0, 8.0, 64.0]))[0] == "sys000"


def test_chosen_systems_are_highlighted_the_others_grey():
    draws = _crossing_draws()
    texts = [t.get_text() for t in
             plots.plot_pass_at_k(draws, highlight=["sys009", "sys004"]).get_legend().get_texts()]
    assert {"sys009", "sys004", "8 other systems (median)"} <= set(texts)
    assert "sys000" not in texts


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
