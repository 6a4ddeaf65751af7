"""The rate grid's SMC at leaderboard size: each row's kept nodes as one contiguous run (the
kernel's layout), and the map of the systems over a Dask cluster (``fit(client=...)``,
``n_workers``, ``evalbayes fit --scheduler / --workers``): the same draws as the thread pool,
since each system's stream is keyed by its label."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from evalbayes import EvalData
from evalbayes.cli import main
from evalbayes.inference import SamplerConfig
from evalbayes.models import BetaBinomialModel, RateGridModel
from evalbayes.models.rate_grid._model import _PRUNE, grid_log_likelihood
from evalbayes.models.rate_grid._smc import SystemRows

# Five systems, twelve tasks, three trials: small enough for a 2-process cluster to be quick.
N = np.full((5, 12), 3)
C = np.array([[0, 0, 1, 2, 3, 3, 0, 0, 1, 0, 0, 0],
              [3, 3, 2, 3, 3, 1, 3, 2, 3, 3, 0, 3],
              [1, 0, 2, 2, 1, 0, 1, 3, 0, 1, 2, 1],
              [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
              [3, 2, 3, 3, 3, 3, 3, 3, 3, 2, 3, 3]])
OPTIONS = {"draws": 60, "chains": 2, "seed": 11, "check": False}


def test_row_runs_are_exactly_the_nodes_within_the_prune_bound():
    """Every row's pairs are consecutive nodes, and the same set as a direct threshold of
    ``log Binomial(c | n, p_j) - max_j`` at ``-prune`` (unimodality in ``p``)."""
    model = RateGridModel()
    n = np.array([1, 1, 4, 16, 16, 16, 64, 1100, 1100, 1100, 7])
    c = np.array([0, 1, 2, 0, 8, 16, 3, 0, 550, 1099, 7])
    loglik = grid_log_likelihood(n, c, model.rates_grid)
    rows = SystemRows.from_loglik(loglik, np.ones(len(n)), _PRUNE)
    rel = loglik - loglik.max(axis=1, keepdims=True)
    for r in range(len(n)):
        nodes = rows.pair_node[rows.row_start[r]:rows.row_start[r + 1]]
        assert np.array_equal(nodes, np.flatnonzero(rel[r] > -_PRUNE))
        assert np.all(np.diff(nodes) == 1)
        np.testing.assert_array_equal(rows.pair_ll[rows.row_start[r]:rows.row_start[r + 1]],
                                      rel[r, nodes])


def test_cluster_settings_are_checked_and_not_recorded():
    with pytest.raises(ValueError, match="method='smc'"):
        SamplerConfig(method="nutpie", n_workers=2)
    with pytest.raises(ValueError, match="n_workers"):
        SamplerConfig(method="smc", n_workers=0)
    with pytest.raises(ValueError, match="n_workers"):
        SamplerConfig(method="smc", n_workers=2.0)
    config = SamplerConfig(method="smc", client="tcp://127.0.0.1:1", n_workers=None)
    assert "client" not in config.to_dict() and "n_workers" not in config.to_dict()
    assert config == SamplerConfig(method="smc")  # where, not what
    data = EvalData.from_arrays(N[:2, :4], C[:2, :4])
    with pytest.raises(ValueError, match="method='smc'"):
        BetaBinomialModel().fit(data, n_workers=2)


def test_cli_cluster_flags_are_refused_cleanly(capsys, tmp_path):
    out = str(tmp_path / "fit.nc")
    assert main(["fit", "dataset:tinyagent", "--model", "beta-binomial", "--workers", "2",
                 "-o", out]) != 0
    assert "--workers maps the systems of method smc" in capsys.readouterr().err
    for flags in (["--workers", "0"], ["--workers", "2.5"],
                  ["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"]):
        assert main(["fit", "dataset:tinyagent", *flags, "-o", out]) == 2  # usage error
        assert "argument --" in capsys.readouterr().err


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    with Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.slow  # starting a 2-process cluster takes 10-60 s on a loaded 2-core machine
def test_dask_map_gives_the_thread_pools_draws(client):
    """Threads, a 2-worker cluster (a Client, and its address) and a 1-worker local cluster
    (``n_workers=1``) give the same draws and per-system statistics, bit for bit."""
    data = EvalData.from_arrays(N, C, systems=[f"s{i}" for i in range(5)])
    model = RateGridModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 60 draws: pseudo-chains may miss the ESS bar
        threads = model.fit(data, **OPTIONS)
        fits = [model.fit(data, client=client, **OPTIONS),
                model.fit(data, client=client.scheduler.address, **OPTIONS),
                model.fit(data, n_workers=1, **OPTIONS)]
    for fit in fits:
        np.testing.assert_array_equal(fit.posterior["coef"].values,
                                      threads.posterior["coef"].values)
        assert fit.sample_stats.equals(threads.sample_stats)
        assert fit.sampler == threads.sampler and fit.sampler.client is None
