"""Fit every benchmark of a suite, in parallel on a Dask cluster.

``fit_suite({"HumanEval": data_a, "MBPP": data_b, ...}, model)`` submits one fit per
benchmark to a ``dask.distributed`` cluster -- a :class:`~distributed.LocalCluster` of
single-threaded worker processes by default, or an existing cluster given by its scheduler
address (``"tcp://host:8786"``) or a :class:`~distributed.Client` -- and gathers the
posteriors (or writes each to ``<output_dir>/<name>.nc`` on the worker and returns the paths,
which keeps large posteriors off the scheduler). Fits are independent, so this is
embarrassingly parallel: Dask only schedules and moves data (Rocklin, "Dask: Parallel
Computation with Blocked algorithms and Task Scheduling", *Proc. SciPy* 2015).

Seeds: benchmark ``name`` gets ``seed_for(seed, name)``, a stable function of the suite seed
and the name (CRC-32 of the UTF-8 name mixed by :class:`numpy.random.SeedSequence`), so a
benchmark's fit does not change when others are added, removed or reordered, and equals a
sequential ``model.fit(data, seed=seed_for(seed, name))``.

Needs the optional extra ``evalbayes[suite]`` (``dask[distributed]``).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalbayes.data import EvalData
    from evalbayes.models._base import Model
    from evalbayes.results._posterior import Posterior

__all__ = ["fit_one", "fit_suite", "seed_for", "split_benchmarks"]


def seed_for(seed: int, name: str) -> int:
    """Per-benchmark seed: a stable 31-bit function of ``(seed, name)``."""
    if int(seed) < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    mixed = np.random.SeedSequence([int(seed), zlib.crc32(name.encode("utf-8"))])
    return int(mixed.generate_state(1)[0] >> 1)


def split_benchmarks(frame: pd.DataFrame, column: str = "benchmark") -> dict[str, EvalData]:
    """One :class:`EvalData` per value of ``column`` of a long counts table."""
    from evalbayes.data import EvalData

    if column not in frame.columns:
        raise ValueError(f"the table has no {column!r} column; columns: {list(frame.columns)}")
    return {
        str(name): EvalData.from_frame(part.drop(columns=[column]))
        for name, part in frame.groupby(column, sort=True)
    }


def fit_one(
    name: str,
    data: EvalData,
    model_config: dict[str, Any],
    options: dict[str, Any],
    output_dir: str | None = None,
) -> Posterior | str:
    """Fit one benchmark (runs on a worker): the Posterior, or the path it was saved to."""
    from evalbayes.models import model_from_config

    model = model_from_config(model_config)
    posterior = model.fit(data, **options)
    if output_dir is None:
        return posterior
    path = Path(output_dir) / f"{_safe(name)}.nc"
    posterior.save(path)
    return str(path)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "benchmark"


def fit_suite(
    datasets: Mapping[str, EvalData],
    model: Model,
    client: Any = None,
    *,
    n_workers: int = 2,
    method: str = "nutpie",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    seed: int = 0,
    target_accept: float = 0.9,
    check: bool = True,
    output_dir: str | Path | None = None,
) -> dict[str, Posterior | Path]:
    """Fit ``model`` to every dataset of a suite on a Dask cluster.

    Parameters
    ----------
    datasets : mapping of str to EvalData
        Benchmark name -> counts (e.g. from :func:`split_benchmarks`).
    model : Model
        Any evalbayes model; shipped to the workers as its configuration.
    client : None, str or distributed.Client
        ``None``: start a LocalCluster of ``n_workers`` single-threaded processes for this
        call and close it afterwards; a string: the scheduler address of a running cluster;
        a Client: use it as is.
    n_workers : int
        Workers of the local cluster (``client=None`` only).
    method, draws, tune, chains, target_accept, check
        Passed to ``model.fit``.
    seed : int
        Suite seed; benchmark ``name`` is fitted with ``seed_for(seed, name)``.
    output_dir : path, optional
        Save each posterior as ``<output_dir>/<name>.nc`` (on the worker; the directory must
        be visible to the workers) and return paths instead of posteriors.

    Returns
    -------
    dict
        Benchmark name -> Posterior (or Path), in the order of ``datasets``.
    """
    if not datasets:
        raise ValueError("fit_suite needs at least one dataset")
    from evalbayes._core.cluster import open_client

    config = model.to_config()
    out_dir = None
    if output_dir is not None:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        out_dir = str(output_dir)
    with open_client(client, n_workers if client is None else None) as dask_client:
        futures = {}
        for name, data in datasets.items():
            options = {
                "method": method, "draws": draws, "tune": tune, "chains": chains,
                "seed": seed_for(seed, name), "target_accept": target_accept, "check": check,
            }
            futures[name] = dask_client.submit(
                fit_one, name, data, config, options, out_dir, key=f"fit-{_safe(name)}-{seed}",
                pure=False,
            )
        results = dask_client.gather(list(futures.values()))
    return {
        name: (Path(res) if isinstance(res, str) else res)
        for name, res in zip(futures, results, strict=True)
    }
