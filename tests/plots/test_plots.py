"""Tests of evalbayes.plots: structure of what is drawn, bands around the median, bad input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

import evalbayes as eb
from evalbayes.plots import (
    plot_comparison,
    plot_pass_at_k,
    plot_pass_hat_k,
    plot_ppc,
    plot_rate_distribution,
    plot_superiority_matrix,
)

KS = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
SYSTEMS = ["base", "tuned", "big"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def synthetic_draws(metric: str = "pass@k", **attrs) -> xr.DataArray:
    """pass@k = 1 - (1 - p)^k (or p^k) of Beta draws of p: curves with a known shape."""
    rng = np.random.default_rng(0)
    p = rng.beta([2, 8, 14], [18, 12, 6], size=(2, 300, 3))
    values = 1 - (1 - p[..., None]) ** KS if metric == "pass@k" else p[..., None] ** KS
    return xr.DataArray(
        values,
        dims=("chain", "draw", "system", "k"),
        coords={"system": SYSTEMS, "k": KS},
        attrs={"metric": metric, "estimand": "tasks", **attrs},
    )


@pytest.fixture(scope="module")
def tiny_fit():
    data = eb.datasets.load("tinyagent")
    return eb.BetaBinomialModel().fit(data, draws=300, chains=2, seed=4)


def band_ranges(collection) -> dict[float, tuple[float, float]]:
    """x -> (min y, max y) of the vertices of a fill_between polygon."""
    vertices = np.concatenate([path.vertices for path in collection.get_paths()])
    out = {}
    for x in KS:
        ys = vertices[np.isclose(vertices[:, 0], x), 1]
        out[float(x)] = (float(ys.min()), float(ys.max()))
    return out


# ---------------------------------------------------------------- curves


def test_pass_at_k_structure(tmp_path):
    draws = synthetic_draws()
    unbiased = draws.mean(("chain", "draw"))
    ax = plot_pass_at_k(draws, unbiased=unbiased, reference=lambda k: 1 - 0.8**k,
                        reference_label="uniform guess")
    assert isinstance(ax, matplotlib.axes.Axes)
    assert len(ax.collections) == 3 * 2  # two bands per system
    assert len(ax.lines) == 3 + 3 + 1  # medians, unbiased points, reference
    assert ax.get_xscale() == "log"
    assert ax.xaxis.get_transform().base == 2
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    for label in [*SYSTEMS, "uniform guess", "unbiased estimate", "50% interval",
                  "95% interval"]:
        assert label in labels
    reference = next(line for line in ax.lines if line.get_label() == "uniform guess")
    assert reference.get_linestyle() == "--"
    assert "tasks" in ax.get_title() and "APPROXIMATE" not in ax.get_title()
    path = tmp_path / "passk.png"
    ax.figure.savefig(path)
    assert path.stat().st_size > 1000


def test_bands_contain_the_median_and_nest():
    draws = synthetic_draws()
    ax = plot_pass_at_k(draws, ci_probs=(0.5, 0.95))
    medians = [line for line in ax.lines if line.get_label() in SYSTEMS]
    for s, median_line in enumerate(medians):
        wide, narrow = ax.collections[2 * s], ax.collections[2 * s + 1]  # drawn widest first
        wide_r, narrow_r = band_ranges(wide), band_ranges(narrow)
        for x, y in zip(median_line.get_xdata(), median_line.get_ydata(), strict=True):
            lo, hi = narrow_r[float(x)]
            assert lo <= y <= hi
            assert wide_r[float(x)][0] <= lo and hi <= wide_r[float(x)][1]
        # the median is the 50 % quantile of the draws (independent of credible_interval)
        ref = np.quantile(draws.isel(system=s).values.reshape(-1, len(KS)), 0.5, axis=0)
        np.testing.assert_allclose(median_line.get_ydata(), ref)


def test_unbiased_nan_skipped_and_reference_dataarray():
    draws = synthetic_draws()
    unbiased = draws.mean(("chain", "draw")).copy()
    unbiased.loc[{"k": [16.0, 32.0]}] = np.nan  # k > n: the estimator does not exist
    reference = xr.DataArray(1 - 0.8**KS, dims="k", coords={"k": KS}, name="guess")
    ax = plot_pass_at_k(draws, unbiased=unbiased, reference=reference, systems=["tuned"])
    points = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(points) == 1 and len(points[0].get_xdata()) == 4
    assert any(line.get_label() == "guess" for line in ax.lines)
    assert len(ax.collections) == 2


def test_pass_hat_k_and_approximate_title():
    ax = plot_pass_hat_k(synthetic_draws("pass^k", approximate=1, estimand="population"))
    title = ax.get_title()
    assert "pass^k" in title and "population" in title and "APPROXIMATE" in title


def test_curve_from_a_posterior(tiny_fit, tmp_path):
    data = tiny_fit.data
    ax = plot_pass_at_k(
        tiny_fit.pass_at_k([1, 2, 4, 8, 16, 32, 64, 128]),
        unbiased=eb.frequentist.pass_curve(data, [1, 2, 4, 8, 16, 32, 64]),
        reference=lambda k: 1 - 0.8**k,
    )
    # per system: solid median, open points, and a dashed median beyond its largest n
    beyond = int((data.n.max(dim="task").values < 128).sum())
    assert len(ax.lines) == 3 + 3 + 1 + beyond
    assert sum(line.get_linestyle() == "--" and line.get_label() == "_nolegend_"
               for line in ax.lines) == beyond
    ax.figure.savefig(tmp_path / "tiny.png")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.isel(k=0, drop=True), "missing"),
        (lambda d: d.expand_dims(task=["t0"]), "task"),
        (lambda d: d.expand_dims(extra=[0]), "unexpected"),
        (lambda d: d.assign_attrs(metric="pass^k"), "pass\\^k"),
        (lambda d: d.assign_coords(k=KS - 1), "positive"),
    ],
)
def test_bad_draws(change, match):
    with pytest.raises(ValueError, match=match):
        plot_pass_at_k(change(synthetic_draws()))


def test_bad_options():
    draws = synthetic_draws()
    with pytest.raises(ValueError, match="ci_probs"):
        plot_pass_at_k(draws, ci_probs=(0.5, 1.2))
    with pytest.raises(ValueError, match="unknown systems"):
        plot_pass_at_k(draws, systems=["nope"])
    with pytest.raises(ValueError, match="dims"):
        plot_pass_at_k(draws, unbiased=draws.mean("chain"))
    with pytest.raises(ValueError, match="one value per k"):
        plot_pass_at_k(draws, reference=lambda k: 0.5)
    with pytest.raises(TypeError, match="DataArray"):
        plot_pass_at_k(draws.values)


# ---------------------------------------------------------------- comparison plots


@pytest.fixture(scope="module")
def comparison():
    return eb.Comparison.from_draws(synthetic_draws(), rope=0.02)


def test_comparison_forest(comparison, tmp_path):
    ax = plot_comparison(comparison, k=1)
    assert len(ax.texts) == 3  # one P(B>A) per unordered pair
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["tuned − base", "big − base", "big − tuned"]
    p = comparison.matrix(k=1).loc["big", "tuned"]
    assert f"P(B>A) = {p:.3f}" in [t.get_text() for t in ax.texts]
    assert "tasks" in ax.get_title()
    ax.figure.savefig(tmp_path / "forest.png")
    ax = plot_comparison(comparison, k=8, baseline="big")
    assert len(ax.texts) == 2
    with pytest.raises(ValueError, match="unknown baseline"):
        plot_comparison(comparison, k=1, baseline="nope")
    with pytest.raises(ValueError, match="choose one"):
        plot_comparison(comparison)
    with pytest.raises(TypeError, match="Comparison"):
        plot_comparison(comparison.to_frame())


def test_superiority_matrix(comparison, tmp_path):
    ax = plot_superiority_matrix(comparison, k=2, order=None)
    assert len(ax.images) == 1
    assert len(ax.texts) == 9
    mat = comparison.matrix(k=2)
    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
             for t in ax.texts}
    assert texts[(2, 0)] == f"{mat.iloc[2, 0]:.2f}"
    assert texts[(1, 1)] == "–"
    # the cells sit inside the axes: the layout measures the labels around the matrix only
    assert not any(t.get_in_layout() for t in ax.texts)
    ax.figure.savefig(tmp_path / "matrix.png")
    with pytest.raises(ValueError, match="not one of"):
        plot_superiority_matrix(comparison, k=3)


# ---------------------------------------------------------------- posterior predictive check


def test_ppc_count_bins(tiny_fit, tmp_path):
    check = tiny_fit.ppc(seed=1)
    ax = plot_ppc(check, system="GRPO 80")
    assert len(ax.patches) == 65  # c = 0..64
    assert "GRPO 80" in ax.get_title()
    ax.figure.savefig(tmp_path / "ppc.png")
    with pytest.raises(ValueError, match="choose one"):
        plot_ppc(check)
    with pytest.raises(ValueError, match="unknown system"):
        plot_ppc(check, system="nope")
    with pytest.raises(TypeError, match="PosteriorPredictiveCheck"):
        plot_ppc(check.table)


def test_ppc_rate_bins_and_outside_marks():
    # unequal n -> ten rate bins; complete pooling misses the U shape (bins outside)
    n = np.array([[10, 20, 30, 40, 10, 20, 30, 40, 10, 20, 30, 40]])
    c = np.array([[0, 0, 0, 0, 0, 0, 10, 40, 10, 20, 30, 40]])
    data = eb.EvalData.from_arrays(n, c, systems=["only"])
    fit = eb.BetaBinomialModel(pooling="complete").fit(data, draws=500, chains=2, seed=0)
    check = fit.ppc(seed=0)
    assert check.bins == "rate"
    ax = plot_ppc(check)
    assert len(ax.patches) == 10
    outside = [line for line in ax.lines if line.get_marker() == "v"]
    assert len(outside) == 1
    assert len(outside[0].get_xdata()) == int(check.table["outside"].sum()) > 0


def test_plot_rate_distribution_draws_mean_density_atoms_and_the_trials_mark():
    """Lines are the posterior mean mass per node divided by the node spacing (0.5 logits
    here); each atom is a point at its mean mass; 1/n is marked; bad input is refused."""
    from evalbayes.models import RateGridModel

    model = RateGridModel(degree=2, grid_nodes=15, grid_limit=7.0)
    coef = np.random.default_rng(0).normal(0, 1.5, (2, 50, 2, model.basis.shape[1]))
    posterior = xr.Dataset(
        {"coef": (("chain", "draw", "system", "term"), coef)},
        coords={"chain": [0, 1], "draw": np.arange(50), "system": ["A", "B"],
                "term": np.arange(model.basis.shape[1])},
    )
    g = model.rate_distribution(posterior)
    ax = plot_rate_distribution(g, trials=16)
    mean = g.mean(("chain", "draw")).values  # (system, rate)
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 15]
    assert len(lines) == 2
    for s, line in enumerate(lines):
        assert np.allclose(line.get_ydata(), mean[s, 1:-1] / 1.0)  # spacing 14 / 14 = 1 logit
    points = [c for c in ax.containers if hasattr(c, "lines")]
    assert len(points) == 4  # two atoms per system
    assert np.isclose(points[0].lines[0].get_ydata()[0], mean[0, 0])
    assert np.isclose(points[1].lines[0].get_ydata()[0], mean[0, -1])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "p = 0" and labels[-1] == "p = 1"
    assert any(np.isclose(line.get_xdata()[0], np.log(1 / 15)) for line in ax.get_lines()
               if len(line.get_xdata()) == 2)  # the 1/n mark: logit(1/16) = log(1/15)
    with pytest.raises(ValueError, match="dims"):
        plot_rate_distribution(g.isel(chain=0))
    with pytest.raises(ValueError, match="evenly spaced"):
        plot_rate_distribution(g.isel(rate=[0, 1, 2, 4, 16]))
    with pytest.raises(ValueError, match="ci_prob"):
        plot_rate_distribution(g, ci_prob=1.0)


# ---------------------------------------------------------------- the last pass over texts


def test_finish_shortens_every_panel_and_walks_each_axes_a_bounded_number_of_times():
    from matplotlib.figure import Figure

    from evalbayes.plots._common import MAX_LINE, finish

    figure = Figure()
    axes = figure.subplots(1, 3).ravel()
    figure.suptitle("s" * 500)
    walks = {id(ax): 0 for ax in axes}
    for ax in axes:
        original = ax.findobj

        def counted(*args, _ax=ax, _original=original, **kwargs):
            walks[id(_ax)] += 1
            return _original(*args, **kwargs)

        ax.findobj = counted
    for i, ax in enumerate(axes):
        ax.set_title(f"panel {i} " + "x" * 500)
        ax.set_xlabel("tab\there")
        finish(ax)
    for ax in axes:
        assert len(ax.get_title()) <= MAX_LINE
        assert ax.get_xlabel() == "tab\\there"
    assert len(figure.get_suptitle()) <= MAX_LINE
    # the first call walks every axes not yet seen, later calls their own: 2 m - 1 walks for
    # m panels (each call walked the whole figure before: m ** 2)
    assert [walks[id(ax)] for ax in axes] == [1, 2, 2]
