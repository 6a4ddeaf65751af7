"""The linear predictor the graded models share, in PyMC (to fit) and in NumPy (to derive).

For a score of system ``s`` on task ``t`` given by grader ``j``::

    eta = b[s] + u[t] + g[j] + h[j, s]
    b ~ ZeroSumNormal(system_scale)                 system effects (sum to zero)
    u[t] = tau_task z[t],  z ~ N(0, 1),  tau_task ~ HalfNormal(task_scale)
    g ~ ZeroSumNormal(grader_scale)                 grader effects (with two or more graders)
    h[j, s] = tau_gs w[j, s],  w ~ N(0, 1),  tau_gs ~ HalfNormal(grader_system_scale)

Task effects and grader x system interactions are random effects, non-centred (Papaspiliopoulos,
Roberts & Skold, "A general framework for the parametrization of hierarchical models",
Statistical Science 22, 2007); system and grader effects are fixed effects constrained to sum
to zero, so that the overall level lives in the model's own intercept (the cut points of the
ordinal model, ``alpha`` of the Beta model) and the posterior is proper without a reference
system. A model's quantity ``f(eta)`` (``P(score >= t)``, the mean score) is then averaged:

* ``"tasks"``: over the data's tasks (their ``u[t]``) and graders, uniformly;
* ``"population"``: over a new task ``u ~ N(0, tau_task)`` (Gauss-Hermite, 24 nodes,
  :func:`~evalbayes.models._quadrature.normal_hermite_nodes`) and the data's graders.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import xarray as xr

from evalbayes.inference import padded_size
from evalbayes.io._scores import ScoreData
from evalbayes.models._quadrature import normal_hermite_nodes

__all__ = ["average", "effect_vars", "label_posterior", "linear_predictor", "prior_effects",
           "row_values"]

#: Numbers per temporary array of :func:`average`.
_WORK = 4_000_000


def row_values(data: ScoreData) -> tuple[dict[str, np.ndarray], int]:
    """Each score's system, task and (with two or more graders) grader index and a mask,
    padded to
    :func:`~evalbayes.inference.padded_size` (padding rows repeat row 0 with mask 0)."""
    size = padded_size(len(data))
    pad = size - len(data)

    def padded(values: np.ndarray) -> np.ndarray:
        return np.concatenate([values, np.repeat(values[:1], pad)])

    values = {
        "row_s": padded(data.codes("system")),
        "row_t": padded(data.codes("task")),
        "row_mask": np.concatenate([np.ones(len(data)), np.zeros(pad)]),
    }
    if len(data.graders) > 1:  # one grader: no grader terms, no row_g in the graph
        values["row_g"] = padded(data.codes("grader"))
    return values, size


def effect_vars(n_graders: int) -> list[str]:
    """The effect variables kept in a posterior."""
    names = ["system_effect", "task_sd", "task_effect"]
    if n_graders > 1:
        names += ["grader_effect", "grader_system_sd", "grader_system_effect"]
    return names


def linear_predictor(settings: Any, values: dict[str, Any], n_graders: int) -> Any:
    """Inside a ``pm.Model`` with coords ``system``, ``task``, ``grader``: the effects of the
    module docstring and ``eta`` per row (a PyTensor vector). ``settings`` has
    ``system_scale``, ``task_scale``, ``grader_scale``, ``grader_system_scale``."""
    import pymc as pm

    b = pm.ZeroSumNormal("system_effect", sigma=settings.system_scale, dims="system")
    tau = pm.HalfNormal("task_sd", sigma=settings.task_scale)
    z = pm.Normal("task_z", 0.0, 1.0, dims="task")
    u = pm.Deterministic("task_effect", tau * z, dims="task")
    eta = b[values["row_s"]] + u[values["row_t"]]
    if n_graders > 1:
        g = pm.ZeroSumNormal("grader_effect", sigma=settings.grader_scale, dims="grader")
        tau_gs = pm.HalfNormal("grader_system_sd", sigma=settings.grader_system_scale)
        w = pm.Normal("grader_system_z", 0.0, 1.0, dims=("grader", "system"))
        h = pm.Deterministic("grader_system_effect", tau_gs * w, dims=("grader", "system"))
        eta = eta + g[values["row_g"]] + h[values["row_g"], values["row_s"]]
    return eta


def prior_effects(settings: Any, data: ScoreData, draws: int,
                  rng: np.random.Generator) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
    """Prior draws of :func:`effect_vars` (``ZeroSumNormal(sigma)``: iid ``N(0, sigma)``
    minus their mean, as PyMC draws it)."""
    n_s, n_t, n_g = len(data.systems), len(data.tasks), len(data.graders)

    def zero_sum(sigma: float, size: int) -> np.ndarray:
        x = rng.normal(0.0, sigma, (draws, size))
        return x - x.mean(axis=1, keepdims=True)

    tau = np.abs(rng.normal(0.0, settings.task_scale, draws))
    out: dict[str, tuple[tuple[str, ...], np.ndarray]] = {
        "system_effect": (("draw", "system"), zero_sum(settings.system_scale, n_s)),
        "task_sd": (("draw",), tau),
        "task_effect": (("draw", "task"), tau[:, None] * rng.normal(size=(draws, n_t))),
    }
    if n_g > 1:
        tau_gs = np.abs(rng.normal(0.0, settings.grader_system_scale, draws))
        out["grader_effect"] = (("draw", "grader"), zero_sum(settings.grader_scale, n_g))
        out["grader_system_sd"] = (("draw",), tau_gs)
        out["grader_system_effect"] = (("draw", "grader", "system"),
                                       tau_gs[:, None, None] * rng.normal(size=(draws, n_g, n_s)))
    return out


def label_posterior(posterior: xr.Dataset, data: ScoreData) -> xr.Dataset:
    """Give the ``system``, ``task`` and ``grader`` dims of draws the data's labels."""
    labels = {"system": data.systems, "task": data.tasks, "grader": data.graders}
    return posterior.assign_coords(
        {dim: np.asarray(values, dtype=object) for dim, values in labels.items()
         if dim in posterior.dims}
    )


def _draws(posterior: xr.Dataset, name: str, *dims: str) -> np.ndarray:
    return posterior[name].transpose("chain", "draw", *dims).values


def average(
    posterior: xr.Dataset,
    estimand: str,
    f: Callable[[np.ndarray, slice], np.ndarray],
    width: int,
    offset: np.ndarray | None = None,
) -> np.ndarray:
    """``f(eta)`` averaged over tasks (or the task population) and graders, ``(chain, draw,
    system, width)``.

    ``f(x, draws)`` takes ``x`` of shape ``(chain, draws, system, grader, m)`` (the chains and
    the slice ``draws`` of the draws) and returns ``(chain, draws, system, grader, m, width)``;
    ``offset`` (chain, draw) is added to every ``eta`` (an intercept).
    """
    b = _draws(posterior, "system_effect", "system")  # (C, D, S)
    chains, n_draws, n_s = b.shape
    base = b[:, :, :, None]  # (C, D, S, J)
    if "grader_effect" in posterior:
        g = _draws(posterior, "grader_effect", "grader")
        h = _draws(posterior, "grader_system_effect", "grader", "system")
        base = base + g[:, :, None, :] + np.swapaxes(h, 2, 3)
    if offset is not None:
        base = base + offset[:, :, None, None]
    if estimand == "tasks":
        shifts = _draws(posterior, "task_effect", "task")  # (C, D, T)
        weights = np.full(shifts.shape[-1], 1.0 / shifts.shape[-1])
    else:
        z, weights = normal_hermite_nodes()
        shifts = _draws(posterior, "task_sd")[..., None] * z  # (C, D, Q)
    n_j, n_m = base.shape[3], shifts.shape[-1]
    out = np.zeros((chains, n_draws, n_s, width))
    per_draw = max(1, chains * n_s * n_j * n_m * width)
    step = max(1, _WORK // per_draw)
    for start in range(0, n_draws, step):
        block = slice(start, min(n_draws, start + step))
        x = base[:, block, :, :, None] + shifts[:, block, None, None, :]
        values = f(x, block)  # (C, d, S, J, M, width)
        out[:, block] = np.einsum("cdsjmw,m->cdsw", values, weights) / n_j
    return out
