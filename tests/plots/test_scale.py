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


# ------------------------------------------------------------- issue 28: readable at scale
def test_comparison_forest_draws_the_largest_differences_and_says_how_many_are_left_out():
    """13 systems are 78 pairs: the forest draws the 30 with the largest |posterior mean of
    B - A| (computed here from the draws), the title counts the 48 left out; max_pairs=None
    draws all 78."""
    import matplotlib.pyplot as plt

    comparison = Comparison.from_draws(_draws(13).sel(k=[1.0]), rope=0.0)
    ax = plots.plot_comparison(comparison)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 30 and len(ax.texts) == 30
    assert "the 30 of 78 pairs with the largest |B − A|; 48 left out" in ax.get_title()
    means = _draws(13).sel(k=1.0).mean(("chain", "draw")).to_series()
    sizes = sorted((abs(means[b] - means[a]), f"{b} − {a}")
                   for i, a in enumerate(means.index) for b in means.index[i + 1:])
    assert set(labels) == {name for _, name in sizes[-30:]}
    height = ax.figure.get_size_inches()[1] * ax.figure.dpi
    plt.close(ax.figure)
    assert height < 1600  # before: 78 rows, 4,372 px at the CLI's dpi
    ax = plots.plot_comparison(comparison, max_pairs=None)
    assert len(ax.get_yticklabels()) == 78 and "left out" not in ax.get_title()
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="max_pairs"):
        plots.plot_comparison(comparison, max_pairs=0)


def test_rate_distribution_has_a_legend_at_any_number_of_systems():
    rates = np.concatenate([[0.0], 1 / (1 + np.exp(-np.linspace(-6, 6, 13))), [1.0]])
    for n_sys in (3, 20):
        g = np.random.default_rng(0).dirichlet(np.ones(15), size=(2, 10, n_sys))
        g = xr.DataArray(g, dims=("chain", "draw", "system", "rate"),
                         coords={"system": [f"s{i}" for i in range(n_sys)], "rate": rates})
        ax = plots.plot_rate_distribution(g)
        legend = ax.get_legend()
        assert legend is not None
        assert [t.get_text() for t in legend.get_texts()] == [f"s{i}" for i in range(n_sys)]


def _items(n: int):
    import pandas as pd

    b = np.random.default_rng(1).normal(0, 1.5, n)
    return pd.DataFrame({"task": [f"item{i:03d}" for i in range(n)], "b_mean": b,
                         "b_lower": b - 0.5, "b_upper": b + 0.5})


@pytest.mark.parametrize("n", [12, 500])
def test_item_difficulty_labels_items(n):
    """Up to 40 items every item is labelled, in difficulty order; beyond, every m-th item
    by difficulty (m = ceil(n / 40)) and the axis label says so."""
    items = _items(n)
    ax = plots.plot_item_difficulty(items)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    ordered = items.sort_values("b_mean")["task"].tolist()
    step = -(-n // 40)
    assert labels == ordered[::step]
    assert len(labels) <= 40 and (step == 1) == ("one label in" not in ax.get_ylabel())


def _overlaps(ax) -> int:
    from matplotlib.text import Text

    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]  # the text, not the arrow
    return sum(boxes[i].overlaps(boxes[j]) for i in range(len(boxes))
               for j in range(i + 1, len(boxes)))


@pytest.mark.parametrize("n_sys", [8, 25, 90])
def test_wright_map_labels_do_not_overlap(n_sys):
    """Systems with nearly equal abilities (the crowded case): no two labels' boxes overlap
    once drawn; beyond 30 systems every m-th is labelled."""
    import pandas as pd

    theta = np.sort(np.random.default_rng(2).normal(0, 0.3, n_sys))
    abilities = pd.DataFrame({"system": [f"system-{i:02d}" for i in range(n_sys)],
                              "theta_mean": theta, "theta_lower": theta - 0.4,
                              "theta_upper": theta + 0.4})
    ax = plots.plot_wright_map(abilities, _items(60))
    assert len(ax.texts) == min(n_sys, len(range(0, n_sys, -(-n_sys // 30))))
    assert _overlaps(ax) == 0
