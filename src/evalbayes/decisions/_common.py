"""Shared helpers of the decision modules: design grids and draws of a difference."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from evalbayes._core.names import check_count

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.results._comparison import Comparison
    from evalbayes.results._posterior import Posterior


def check_grid(values: Any, name: str, low: int = 1) -> list[int]:
    """A design grid: one integer or a non-empty sequence of integers ``>= low``, returned
    sorted without repeats (:func:`~evalbayes._core.names.check_count` on each)."""
    items = [values] if np.ndim(values) == 0 else list(values)
    if not items:
        raise ValueError(f"{name} must not be empty")
    return sorted({check_count(v, name, low) for v in items})


def difference_draws(
    source: Posterior | Comparison,
    candidate: str,
    baseline: str,
    *,
    metric: str = "pass@k",
    k: Any = 1,
    estimand: str | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Flat draws of ``f_candidate - f_baseline`` from a Posterior or a Comparison.

    ``estimand`` defaults to :func:`~evalbayes.results.compare`'s (``"population"`` where the
    model has it); a Comparison keeps its own, and naming another is an error.

    Returns the draws and a description (metric, k, estimand, label, approximate).
    """
    from evalbayes.results._comparison import Comparison, compare

    if not isinstance(source, Comparison):
        source = compare(
            source, metric=metric, k=k, estimand=estimand, systems=[baseline, candidate]
        )
    elif estimand is not None and estimand != source.estimand:
        raise ValueError(f"the comparison is of estimand {source.estimand!r}, not "
                         f"{estimand!r}; compare again with estimand={estimand!r}")
    for role, name in (("candidate", candidate), ("baseline", baseline)):
        if name not in source.systems:
            raise ValueError(f"unknown {role} {name!r}; systems: {source.systems}")
    if candidate == baseline:
        raise ValueError(f"candidate and baseline are both {candidate!r}")
    ks = [float(v) for v in source.draws["k"].values]
    if len(ks) == 1:
        kk = ks[0]
    elif np.ndim(k) == 0 and float(k) in ks:
        kk = float(k)
    else:
        raise ValueError(f"k={k!r} is not one of the compared k {source.k}")
    draws = source.draws.sel(k=kk)
    diff = (draws.sel(system=candidate) - draws.sel(system=baseline)).values.ravel()
    info = {
        "metric": source.metric,
        "k": int(kk) if float(kk).is_integer() else float(kk),
        "estimand": source.estimand,
        "label": source.label,
        "approximate": source.approximate,
    }
    return diff, info
