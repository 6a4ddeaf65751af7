"""Compare fits of the same data by PSIS-LOO: ``compare_models({"bb": post1, "irt": post2})``.

Each fit's pointwise log-likelihood is per observed cell (``Posterior.log_likelihood``), so
the leave-one-out target is the same for every model: the count of one ``(system, task)``
cell given all other cells. The table follows Vehtari, Gelman & Gabry (2017, "Practical
Bayesian model evaluation using leave-one-out cross-validation and WAIC", sec. 5.2):
``elpd_loo`` with its standard error ``sqrt(N var(elpd_i))``, and the difference to the best
model with the standard error of the *pointwise* differences, ``sqrt(N var(d_i))``.

Stacking weights (Yao, Vehtari, Simpson and Gelman 2018, "Using stacking to average Bayesian
predictive distributions", Bayesian Analysis 13(3), eq. 4) combine the fits instead of
choosing one: with ``p_ik = exp(elpd_i,k)`` the LOO predictive density of cell ``i`` under
model ``k``, the weights maximise ``sum_i log sum_k w_k p_ik`` over the simplex. A model that
is best on some cells and worst on others can carry weight; a model dominated everywhere gets
weight 0. :func:`stacking_weights` computes them; :func:`compare_models` reports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.results._posterior import Posterior

__all__ = ["compare_models", "stacking_weights"]

PARETO_K_BAD = 0.7


def stacking_weights(elpd_pointwise: np.ndarray) -> np.ndarray:
    """Stacking weights from pointwise LOO log densities (module docstring).

    Parameters
    ----------
    elpd_pointwise : array, shape (cells, models)
        ``log p(y_i | y_-i, model k)``, e.g. ``Posterior.loo().elpd_i`` per model.

    Returns
    -------
    numpy.ndarray, shape (models,)
        Non-negative weights summing to 1 that maximise ``sum_i log sum_k w_k p_ik``
        (Yao et al. 2018, eq. 4); the objective is concave in ``w``, solved by BFGS on the
        softmax parameterisation ``w = softmax(z)``, ``z_0 = 0``.
    """
    from scipy.special import logsumexp, softmax  # imported when used (issue 26)

    lp = np.asarray(elpd_pointwise, dtype=np.float64)
    if lp.ndim != 2 or lp.shape[1] < 1 or lp.shape[0] < 1:
        raise ValueError(f"elpd_pointwise must have shape (cells, models), got {lp.shape}")
    if not np.all(np.isfinite(lp)):
        raise ValueError("elpd_pointwise has non-finite values")
    n_models = lp.shape[1]
    if n_models == 1:
        return np.ones(1)

    def objective(free: np.ndarray) -> tuple[float, np.ndarray]:
        z = np.concatenate([[0.0], free])
        w = softmax(z)
        mix = logsumexp(lp + np.log(np.maximum(w, 1e-300)), axis=1)  # log sum_k w_k p_ik
        resp = np.exp(lp + np.log(np.maximum(w, 1e-300)) - mix[:, None])  # w_k p_ik / mix
        grad_w = resp.sum(axis=0)  # d/dw_k of sum_i log mix_i, times w_k
        grad_z = grad_w - w * grad_w.sum()  # chain rule through the softmax
        return -float(mix.sum()), -grad_z[1:]

    from scipy.optimize import minimize  # ~0.1 CPU-s: not on the path of every fit command

    start = np.zeros(n_models - 1)
    result = minimize(objective, start, jac=True, method="BFGS", options={"gtol": 1e-10})
    weights = softmax(np.concatenate([[0.0], result.x]))
    return weights / weights.sum()


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
        ``elpd_diff`` (best minus this, >= 0), ``se_diff``, ``stacking_weight``
        (:func:`stacking_weights`), ``n_bad_k`` (cells with Pareto k > 0.7, where PSIS is
        unreliable), ``approximate``, ``label``.

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
    weights = stacking_weights(np.column_stack([pointwise[name] for name in names]))
    table["stacking_weight"] = [float(weights[names.index(name)]) for name in table.index]
    table = table.sort_values("elpd_loo", ascending=False)
    table.insert(0, "rank", np.arange(len(table)))
    return table[
        ["rank", "elpd_loo", "se", "p_loo", "elpd_diff", "se_diff", "stacking_weight",
         "n_bad_k", "approximate", "label"]
    ]
