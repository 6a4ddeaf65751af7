"""Many fits in parallel on a 2-worker local Dask cluster (tiny conjugate fits)."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from evalbayes._persist import load
from evalbayes.data import EvalData
from evalbayes.models.beta_binomial._model import BetaBinomialModel
from evalbayes.suite import fit_suite, seed_for, split_benchmarks


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for bench, n_sys, n_task in (("alpha", 3, 5), ("beta", 2, 7), ("gamma", 4, 3)):
        for s in range(n_sys):
            for t in range(n_task):
                rows.append({"benchmark": bench, "system": f"m{s}", "task_id": f"{bench}/{t}",
                             "n": 2, "c": int(rng.integers(0, 3))})
    return pd.DataFrame(rows)


def test_seed_for_is_stable_and_distinct():
    assert seed_for(0, "alpha") == seed_for(0, "alpha")
    assert len({seed_for(0, name) for name in ("alpha", "beta", "gamma")}) == 3
    assert seed_for(0, "alpha") != seed_for(1, "alpha")
    with pytest.raises(ValueError):
        seed_for(-1, "alpha")


def test_split_benchmarks_shapes():
    sets = split_benchmarks(_frame())
    assert sorted(sets) == ["alpha", "beta", "gamma"]
    assert sets["beta"].shape == (2, 7)
    with pytest.raises(ValueError, match="no 'suite' column"):
        split_benchmarks(_frame(), "suite")


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    with Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.slow  # starting a 2-process cluster takes 10-60 s on a loaded 2-core machine
def test_fit_suite_matches_sequential_fits(client, tmp_path):
    sets = split_benchmarks(_frame())
    model = BetaBinomialModel(pooling="none")
    out = fit_suite(sets, model, client, draws=20, chains=2, seed=3)
    assert list(out) == list(sets)
    for name, data in sets.items():
        ref = model.fit(data, draws=20, chains=2, seed=seed_for(3, name))
        np.testing.assert_array_equal(out[name].posterior["p"].values,
                                      ref.posterior["p"].values)
        assert isinstance(out[name].data, EvalData)
    paths = fit_suite(sets, model, client, draws=20, chains=2, seed=3, output_dir=tmp_path)
    for name, path in paths.items():
        np.testing.assert_array_equal(load(path).posterior["p"].values,
                                      out[name].posterior["p"].values)


@pytest.mark.slow
def test_cli_module_run(client, tmp_path, capsys):
    from evalbayes.cli import _fit_suite as command

    table = tmp_path / "suite.csv"
    _frame().to_csv(table, index=False)
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args([
        str(table), "--model", "beta-binomial", "--set", "pooling=none",
        "--draws", "10", "--chains", "1", "--target-accept", "0.95",
        "--benchmarks", "alpha", "gamma", "--scheduler", client.scheduler.address,
        "--output-dir", str(tmp_path / "fits"), "--format", "csv",
    ])
    assert command.run(args) == 0
    printed = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert printed["benchmark"].tolist() == ["alpha", "gamma"]
    assert all((tmp_path / "fits" / f"{b}.nc").exists() for b in ("alpha", "gamma"))
    sampler = load(tmp_path / "fits" / "alpha.nc").sampler
    # the flags given, and the model's own default method (exact draws), as `evalbayes fit`
    assert (sampler.target_accept, sampler.draws, sampler.chains) == (0.95, 10, 1)
    assert sampler.method == "exact"
    bad = parser.parse_args([str(table), "--benchmarks", "nope", "--output-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="unknown benchmarks"):
        command.run(bad)
