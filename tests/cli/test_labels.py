"""Long names (issue 28): full in text tables, and every label a figure shortens is listed
with its full name, so plot labels and table rows can be matched."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest

from evalbayes import load
from evalbayes._core.names import display_label, label_key
from evalbayes.cli import main
from evalbayes.cli._plot import _draw
from paths import ROOT

EXACT = ROOT / "models" / "beta_binomial_no_pooling.toml"  # exact draws: fast
NAMES = [f"2025090{i}_orchestrator_claude-4.1-opus-variant-{i}" for i in range(10)]


def run(args, capsys):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def long_fit(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("labels")
    rng = np.random.default_rng(3)
    rows = [{"system": name, "task": f"t{j}", "n": 4, "c": int(rng.binomial(4, 0.1 + 0.08 * i))}
            for i, name in enumerate(NAMES) for j in range(12)]
    counts = tmp / "counts.csv"
    pd.DataFrame(rows).to_csv(counts, index=False)
    fit = tmp / "fit.nc"
    assert main(["fit", str(counts), "--spec", str(EXACT), "-o", str(fit), "--quiet"]) == 0
    return fit


def test_label_key_lists_exactly_the_shortened_names():
    names = ["short", "x" * 32, "y" * 33, "y" * 33, NAMES[0]]
    key = label_key(names)
    assert [full for _, full in key] == ["y" * 33, NAMES[0]]
    assert all(label == display_label(full) and len(label) <= 32 for label, full in key)


def test_crosscheck_table_shows_full_names(shared_data, capsys):
    path = shared_data / "terminal_bench_core011_counts.csv"
    code, out, err = run(["crosscheck", path, "--resamples", "100"], capsys)
    assert code == 0, err
    names = set(pd.read_csv(path)["system"])
    assert max(map(len, names)) > 32
    assert "…" not in out
    for name in names:  # a row per system in each block, under its full name
        assert sum(line.startswith(name + " ") for line in out.splitlines()) >= 3


def test_plot_prints_the_key_of_shortened_labels(long_fit, tmp_path, capsys):
    png = tmp_path / "passk.png"
    code, out, err = run(["plot", long_fit, "-o", png], capsys)
    assert code == 0 and png.exists(), err
    for name in NAMES:
        assert f"  {display_label(name)} = {name}" in out.splitlines()


def _legend(fit, **options):
    posterior = load(fit)
    args = argparse.Namespace(kind="pass-at-k", estimand="tasks", metric="pass@k",
                              system=None, all_pairs=False, **options)
    figure = _draw(posterior, args, [1, 2, 4, 8, 16, 32, 64])
    return [t.get_text() for t in figure.axes[0].get_legend().get_texts()]


def test_plot_system_highlights_those_systems(long_fit):
    chosen = [NAMES[0], NAMES[3]]
    posterior = load(long_fit)
    texts = _legend(long_fit)
    # default: 10 systems > 8, the five best at k = 1: by the observed share of successes
    rate = (posterior.data.c.sum("task") / posterior.data.n.sum("task")).to_series()
    best = list(rate.sort_values(ascending=False).index[:5])
    assert {display_label(n) for n in best} <= set(texts)
    assert not {display_label(n) for n in NAMES if n not in best} & set(texts)
    args = argparse.Namespace(kind="pass-at-k", estimand="tasks", metric="pass@k",
                              system=chosen, all_pairs=False)
    figure = _draw(posterior, args, [1, 2, 4, 8])
    texts = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert {display_label(n) for n in chosen} <= set(texts)
    assert "8 other systems (median)" in texts
    assert not {display_label(n) for n in NAMES if n not in chosen} & set(texts)


def test_plot_system_errors(long_fit, capsys):
    code, _, err = run(["plot", long_fit, "--system", "nope"], capsys)
    assert code == 2 and "nope" in err
    code, _, err = run(["plot", long_fit, "--kind", "matrix", "--system", NAMES[0]], capsys)
    assert code == 2 and "--system applies to" in err
