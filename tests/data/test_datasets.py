"""Bundled datasets: registry, provenance, and the numbers their sources publish.

References: the tau-bench README pass^k table for gpt-4o airline (0.420 / 0.273 / 0.220 /
0.200 at k = 1..4, also in ``/work/shared/data/reference_outputs/expected_values.json``),
computed here with ``math.comb`` in exact arithmetic; the ChemBench matrix is compared with
the shared source table (and its SHA-256 in the shared MANIFEST) when that folder exists.
"""

from __future__ import annotations

import gzip
import hashlib
from fractions import Fraction
from importlib import resources
from math import comb
from pathlib import Path

import pandas as pd
import pytest

from evalbayes import datasets

SHARED = Path("/work/shared/data")


def test_list_shows_provenance_and_licence():
    table = datasets.table()
    assert {"tinyagent", "tau_bench_airline", "chembench"} <= set(table["name"])
    assert {"name", "level", "description", "source", "licence"} <= set(table.columns)
    rows = table.set_index("name")
    assert rows.loc["tau_bench_airline", "licence"].startswith("MIT")
    assert rows.loc["chembench", "licence"].startswith("MIT")
    assert "7362a1708d720a4d697d042f21fd8637ea144c3b" in rows.loc["tau_bench_airline", "source"]
    assert "a914cea87f9577dafdc9381b1cbfa685007ccbeb" in rows.loc["chembench", "source"]
    assert rows.loc["tau_bench_airline", "level"] == "trials"


def test_attribution_file_is_bundled():
    text = resources.files("evalbayes.datasets").joinpath("data", "ATTRIBUTION.md").read_text()
    assert "Copyright (c) 2024 Sierra" in text
    assert "Copyright (c) 2025 irt-on-bench maintainers" in text


def test_tau_bench_pass_hat_k_matches_readme():
    data = datasets.load("tau_bench_airline")
    assert data.shape == (1, 50)
    n = data.n.values[0]
    c = data.c.values[0]
    assert set(n.tolist()) == {4}
    readme = {
        1: Fraction("0.420"),
        2: Fraction("0.273"),
        3: Fraction("0.220"),
        4: Fraction("0.200"),
    }
    for k, expected in readme.items():
        pass_hat = sum(
            Fraction(comb(int(ci), k), comb(int(ni), k)) for ni, ci in zip(n, c, strict=True)
        )
        pass_hat /= len(n)
        assert abs(pass_hat - expected) <= Fraction(1, 2000), (k, float(pass_hat))


def test_tau_bench_frame_is_trial_level():
    frame = datasets.load_frame("tau_bench_airline")
    assert len(frame) == 200
    assert (frame["reward"] == frame["c"]).all()
    assert frame.groupby("task_id").size().eq(4).all()


def test_chembench_shape_and_difficulty():
    data = datasets.load("chembench")
    assert data.shape == (22, 2854)
    assert (data.n.values == 1).all()
    difficulty = pd.Series(data.dataset["difficulty_class"].values).value_counts().to_dict()
    # 43406 / 18898 / 484 question-model rows in the source = 1973 / 859 / 22 questions
    assert difficulty == {"intermediate": 1973, "easy": 859, "hard": 22}
    hard = datasets.load("chembench", difficulty_class="hard")
    assert hard.shape == (22, 22)


@pytest.mark.skipif(
    not (SHARED / "chembench_binary_irt_on_bench.csv").exists(),
    reason="shared data folder not present",
)
def test_chembench_equals_the_source_table():
    raw = (SHARED / "chembench_binary_irt_on_bench.csv").read_bytes()
    bundled = (
        resources.files("evalbayes.datasets")
        .joinpath("data", "chembench_binary_irt_on_bench.csv.gz")
        .read_bytes()
    )
    assert gzip.decompress(bundled) == raw
    manifest = (SHARED / "MANIFEST.sha256").read_text()
    assert f"{hashlib.sha256(raw).hexdigest()}  ./chembench_binary_irt_on_bench.csv" in manifest
    source = pd.read_csv(SHARED / "chembench_binary_irt_on_bench.csv")
    data = datasets.load("chembench")
    means = source.groupby("system")["c"].mean()
    for system in data.systems:
        assert float(data.c.sel(system=system).mean()) == pytest.approx(means[system], abs=1e-15)


def test_tinyagent_still_loads():
    data = datasets.load("tinyagent")
    assert data.shape == (3, 10)


def test_unknown_dataset():
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        datasets.load("nope")
