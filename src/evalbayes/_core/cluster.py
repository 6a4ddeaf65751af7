"""The Dask client of a call that maps work over a cluster (``fit_suite``, the rate grid's SMC
per system): one convention for what ``client`` and ``n_workers`` mean.

``client`` is ``None`` (with ``n_workers``: start a :class:`~distributed.LocalCluster` of
``n_workers`` single-threaded worker processes for this call and close it afterwards), a
string (the address of a running scheduler, ``"tcp://host:8786"``: connect for this call) or
a :class:`~distributed.Client` (used as is, left open). ``dask[distributed]`` is imported
only here, when a cluster is asked for (the optional extra ``evalbayes[suite]``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from evalbayes._core.names import check_count

__all__ = ["open_client"]


@contextmanager
def open_client(client: Any, n_workers: int | None) -> Iterator[Any]:
    """The :class:`~distributed.Client` that ``client`` / ``n_workers`` name (module
    docstring); a client or cluster started here is closed on exit.

    ``n_workers`` without ``client`` is a local cluster of that many processes; ``client``
    given with ``n_workers`` too is an error (the cluster's size is the cluster's own).
    """
    if client is not None and n_workers is not None:
        raise ValueError("give client (a scheduler address or Client) or n_workers (a local "
                         "cluster of that many processes), not both")
    if client is None and n_workers is None:
        raise ValueError("a Dask map needs client (a scheduler address or Client) or "
                         "n_workers (a local cluster of that many processes)")
    if client is not None and not isinstance(client, str) and not hasattr(client, "submit"):
        raise TypeError("client must be a scheduler address such as 'tcp://host:8786' or a "
                        f"distributed.Client, got {type(client).__name__}")
    try:
        from distributed import Client, LocalCluster
    except ImportError as err:  # pragma: no cover - optional extra
        raise ImportError("a Dask cluster needs the optional extra: pip install "
                          "'evalbayes[suite]'") from err
    cluster = None
    own = None
    if client is None:
        cluster = LocalCluster(n_workers=check_count(n_workers, "n_workers"),
                               threads_per_worker=1, processes=True, dashboard_address=None)
        own = Client(cluster)
    elif isinstance(client, str):
        own = Client(client)
    try:
        yield client if own is None else own
    finally:
        if own is not None:
            own.close()
        if cluster is not None:
            cluster.close()
