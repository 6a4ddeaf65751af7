"""The extrapolation helper: k beyond the largest n a system ran on any task."""

import numpy as np

from evalbayes import EvalData
from evalbayes.extrapolation import extrapolated, max_trials


def test_max_trials_and_extrapolated_flags():
    n = np.array([[5, 0, 3], [1, 1, 1]])
    data = EvalData.from_arrays(n, np.zeros_like(n), systems=["a", "b"])
    np.testing.assert_array_equal(max_trials(data).values, [5, 1])
    flags = extrapolated(data, [1, 5, 6])
    assert flags.dims == ("system", "k")
    np.testing.assert_array_equal(flags.values, [[False, False, True], [False, True, True]])


def _fit():
    from evalbayes.models import BetaBinomialModel

    # system a ran at most 4 trials per task, system b 16 (ragged)
    n = np.array([[4, 4, 4], [16, 2, 2]])
    data = EvalData.from_arrays(n, np.array([[1, 2, 0], [3, 1, 2]]), systems=["a", "b"])
    return BetaBinomialModel().fit(data)  # exact posterior: no sampler


def test_curves_and_summaries_mark_k_beyond_the_trials_run():
    post = _fit()
    ks = [1, 4, 8, 16, 32]
    for estimand in ("tasks", "population"):
        flags = post.pass_at_k(ks, estimand=estimand).coords["extrapolated"]
        assert flags.dims == ("system", "k")
        # k > max n per system: a ran 4, b ran 16
        np.testing.assert_array_equal(flags.sel(system="a").values, [k > 4 for k in ks])
        np.testing.assert_array_equal(flags.sel(system="b").values, [k > 16 for k in ks])
    table = post.summary(ks).set_index(["system", "estimand", "k"])
    assert table.loc[("a", "tasks", 8), "extrapolated"]
    assert not table.loc[("b", "tasks", 8), "extrapolated"]
    assert table.loc[("b", "population", 32), "extrapolated"]
    assert not table.loc[("a", "tasks", 4), "extrapolated"]


def test_band_plot_hatches_only_the_extrapolated_stretch():
    import matplotlib

    matplotlib.use("Agg")
    from evalbayes.plots import plot_pass_at_k

    post = _fit()
    ax = plot_pass_at_k(post.pass_at_k([1, 2, 4]))  # k <= 4: nothing extrapolated
    assert not any(coll.get_hatch() for coll in ax.collections)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not any("extrapolated" in label for label in labels)
    ax = plot_pass_at_k(post.pass_at_k([1, 2, 4, 8, 16, 32]), ci_probs=(0.95,))
    hatched = [coll for coll in ax.collections if coll.get_hatch()]
    assert len(hatched) == 2  # one band per system beyond its n
    # a's hatched band starts at its boundary k = 4; b's at k = 16
    starts = sorted(float(coll.get_paths()[0].vertices[:, 0].min()) for coll in hatched)
    assert starts == [4.0, 16.0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "k > trials run: extrapolated" in labels
