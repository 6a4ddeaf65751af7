"""Compare fits of the same data by PSIS-LOO: ``compare_models({"bb": post1, "irt": post2})``.

Each fit's pointwise log-likelihood is per observed cell (``Posterior.log_likelihood``), so
the leave-one-out target is the same for every model: the count of one ``(system, task)``
cell given all other cells. The table follows Vehtari, Gelman & Gabry (2017, "Practical
Bayesian model evaluation using leave-one-out cross-validation and WAIC", sec. 5.2):
``elpd_loo`` with its standard error ``sqrt(N var(elpd_i))``, and the difference to the best
model with the standard error of the *pointwise* differences, ``sqrt(N var(d_i))``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.results import Posterior

__all__ = ["compare_models"]

PARETO_K_BAD = 0.7


def compare_models(posteriors: dict[str, Posterior]) -> pd.DataFrame:
    """LOO comparison table of fits of the same data, best model first.

    Parameters
    ----------
    posteriors : dict of str to Posterior
        At least two fits; all of the same data (same systems, tasks and counts).

    Returns
    -------
    pandas.DataFrame
        Index: the names. Columns ``rank`` (0 = best), ``elpd_loo``, ``se``, ``p_loo``,
        ``elpd_diff`` (best minus this, >= 0), ``se_diff``, ``n_bad_k`` (cells with Pareto
        k > 0.7, where PSIS is unreliable), ``approximate``, ``label``.

    Raises
    ------
    ValueError
        Fewer than two fits, or fits of different data.
    """
    if not isinstance(posteriors, dict) or len(posteriors) < 2:
        raise ValueError("compare_models needs a dict of at least two named posteriors")
    names = list(posteriors)
    first = posteriors[names[0]]
    reference = first.tree.attrs.get("data_hash")
    for name in names[1:]:
        post = posteriors[name]
        if post.tree.attrs.get("data_hash") != reference or not post.data.equals(first.data):
            raise ValueError(
                f"{name!r} and {names[0]!r} are fits of different data: LOO compares models "
                "only on the same cells (same systems, tasks, n and c)"
            )
    pointwise: dict[str, np.ndarray] = {}
    rows = []
    for name in names:
        post = posteriors[name]
        loo = post.loo()
        elpd_i = np.asarray(loo.elpd_i).ravel()
        pointwise[name] = elpd_i
        rows.append(
            {
                "name": name,
                "elpd_loo": float(elpd_i.sum()),
                "se": float(np.sqrt(len(elpd_i) * np.var(elpd_i, ddof=1))),
                "p_loo": float(loo.p),
                "n_bad_k": int((np.asarray(loo.pareto_k) > PARETO_K_BAD).sum()),
                "approximate": bool(post.approximate),
                "label": post.label,
            }
        )
    table = pd.DataFrame(rows).set_index("name")
    best = table["elpd_loo"].idxmax()
    diffs = {name: pointwise[best] - pointwise[name] for name in names}
    table["elpd_diff"] = [float(diffs[name].sum()) for name in table.index]
    table["se_diff"] = [
        0.0 if name == best else float(np.sqrt(len(d) * np.var(d, ddof=1)))
        for name, d in ((name, diffs[name]) for name in table.index)
    ]
    table = table.sort_values("elpd_loo", ascending=False)
    table.insert(0, "rank", np.arange(len(table)))
    return table[
        ["rank", "elpd_loo", "se", "p_loo", "elpd_diff", "se_diff", "n_bad_k", "approximate",
         "label"]
    ]
