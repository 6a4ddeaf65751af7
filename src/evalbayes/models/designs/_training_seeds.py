"""Training seeds vs evaluation noise: recipe -> training run -> task -> trial.

A claim about a training recipe ("recipe B beats recipe A") is about the distribution of
checkpoints the recipe produces; its unit of replication is the training run. Each system of
:class:`~evalbayes.EvalData` is one run (a checkpoint), named to its recipe by the system
coordinate ``recipe``; tasks are shared by all runs. For run ``r`` of recipe ``k(r)``::

    logit p[r, t] = m[k(r)] + u[r] + b[t] + e[r, t]
    c[r, t]       ~ Binomial(n[r, t], p[r, t])                       (evaluation noise)
    u[r] ~ N(0, sigma_run)       training noise (seed to seed)
    b[t] ~ N(0, sigma_task)      task difficulty, written as zero-sum deviations
    e[r, t] ~ N(0, sigma_cell)   run x task interaction, integrated out (Gauss-Hermite)
    m[k] ~ N(m_prior),  sigma_run, sigma_cell ~ HalfNormal(sigma_prior),
    sigma_task ~ HalfNormal(sigma_task_prior)

a three-level nested random-effects model (Gelman and Hill 2007, ch. 12-13, on the logit
scale). The task effects are sampled as zero-sum deviations, so ``m[k]`` is recipe ``k``'s
logit at the mean task effect of the observed tasks; a new task's effect relative to that mean
is ``N(0, sigma_task^2 (1 + 1/T))`` exactly (the mean of ``T`` iid effects and the deviations
from it are independent).

Outputs: :func:`recipe_difference` (the difference of two recipes on the logit scale and as
the pass rate of a new run on these tasks / on new tasks, with ``P(B > A)``),
:func:`noise_components` (``sigma_run``, ``sigma_task``, ``sigma_cell``) and
:func:`design_assurance` (how often a design of ``runs x tasks x trials`` per recipe resolves
the claim, simulated from the posterior: the assurance of O'Hagan and Stevens 2001).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit, gammaln, log_expit, logsumexp

from evalbayes.data import EvalData
from evalbayes.models._base import Model, ModelInputs, observed_cells
from evalbayes.models._quadrature import (
    check_hermite_size,
    logit_normal_cell_loglik,
    normal_hermite_nodes,
    normal_rate_curve,
)
from evalbayes.results._posterior import Posterior

__all__ = ["TrainingSeedsModel", "design_assurance", "noise_components", "recipe_difference"]


@dataclass(frozen=True, eq=False)
class TrainingSeedsPosterior(Posterior):
    """Posterior of a :class:`TrainingSeedsModel` fit, with the recipe-level summaries."""

    def recipe_difference(self, *args: Any, **kwargs: Any) -> Any:
        """Recipe B - A; see :func:`recipe_difference`."""
        return recipe_difference(self, *args, **kwargs)

    def noise_components(self, ci_prob: float = 0.95) -> pd.DataFrame:
        """Run-to-run, task and trial noise; see :func:`noise_components`."""
        return noise_components(self, ci_prob=ci_prob)

    def design_assurance(self, *args: Any, **kwargs: Any) -> Any:
        """How often new runs x tasks x trials settle the claim; see
        :func:`design_assurance`."""
        return design_assurance(self, *args, **kwargs)


@dataclass(frozen=True)
class TrainingSeedsModel(Model):
    """Recipe -> run -> task -> trial hierarchy (module docstring).

    Parameters
    ----------
    recipe_coord : str
        System coordinate naming each run's recipe.
    m_prior : (float, float)
        Normal prior (mean, sd) of each recipe's logit ``m[k]``.
    sigma_prior : float
        HalfNormal scale of ``sigma_run`` and ``sigma_cell`` (logits). Default 1.
    sigma_task_prior : float
        HalfNormal scale of ``sigma_task``. Default 2.
    cell_residual : bool
        Include the run x task residual (integrated out). Needs >= 2 tasks.
    quadrature_nodes : int
        Gauss-Hermite nodes. Default 20.
    """

    name: ClassVar[str] = "training-seeds"
    posterior_class: ClassVar[type[Posterior]] = TrainingSeedsPosterior

    recipe_coord: str = "recipe"
    m_prior: tuple[float, float] = (0.0, 1.5)
    sigma_prior: float = 1.0
    sigma_task_prior: float = 2.0
    cell_residual: bool = True
    quadrature_nodes: int = 20

    def __post_init__(self) -> None:
        if len(self.m_prior) != 2 or not self.m_prior[1] > 0:
            raise ValueError(f"m_prior must be (mean, sd > 0), got {self.m_prior!r}")
        for label in ("sigma_prior", "sigma_task_prior"):
            value = getattr(self, label)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{label} must be a positive number, got {value!r}")
        check_hermite_size(self.quadrature_nodes)

    # ------------------------------------------------------------------ data
    def recipes(self, data: EvalData) -> tuple[np.ndarray, list[str]]:
        """Each run's recipe code and the recipe names (first-appearance order)."""
        coords = data.system_coords
        if self.recipe_coord not in coords:
            raise ValueError(
                f"the training-seeds model needs the system coordinate {self.recipe_coord!r} "
                f"(each run's recipe); the data have {sorted(coords)}"
            )
        idx, names = pd.factorize(pd.Series(coords[self.recipe_coord]).astype(str))
        return idx, list(names)

    def check_data(self, data: EvalData) -> None:
        """Recipe coordinate present, every run observed, cell residual needs >= 2 tasks."""
        self.recipes(data)
        n = data.n.values
        empty = np.flatnonzero(n.sum(axis=1) == 0)
        if len(empty):
            raise ValueError(f"run {data.systems[empty[0]]!r} has no observed cell")
        if self.cell_residual and n.shape[1] < 2:
            raise ValueError("cell_residual=True needs >= 2 tasks (with one task the run x "
                             "task residual is the run effect); pass cell_residual=False")

    # ------------------------------------------------------------------ hooks
    def inputs(self, data: EvalData) -> ModelInputs:
        """Observed cells (padded) and each run's recipe code."""
        idx, names = self.recipes(data)
        values, size = observed_cells(data)
        values["run_recipe"] = idx.astype(np.int64)
        return ModelInputs(values, (*data.shape, size, len(names)))

    def build(self, inputs: ModelInputs) -> Any:
        """The PyMC model: recipe levels, non-centred run effects, zero-sum task effects."""
        import pymc as pm

        n_run, n_task, size, n_recipe = inputs.shape_key
        coords = {"system": np.arange(n_run), "task": np.arange(n_task),
                  "cell": np.arange(size), "recipe": np.arange(n_recipe)}
        v = inputs.values
        with pm.Model(coords=coords) as model:
            cell_s = pm.Data("cell_s", v["cell_s"], dims="cell")
            cell_t = pm.Data("cell_t", v["cell_t"], dims="cell")
            cell_n = pm.Data("cell_n", v["cell_n"], dims="cell")
            cell_c = pm.Data("cell_c", v["cell_c"], dims="cell")
            run_recipe = pm.Data("run_recipe", v["run_recipe"], dims="system")
            m = pm.Normal("m", *self.m_prior, dims="recipe")
            s_run = pm.HalfNormal("sigma_run", self.sigma_prior)
            u = pm.Deterministic("u", s_run * pm.Normal("u_z", 0, 1, dims="system"),
                                 dims="system")
            if n_task > 1:
                s_task = pm.HalfNormal("sigma_task", self.sigma_task_prior)
                b = pm.Deterministic("b", s_task * pm.ZeroSumNormal("b_z", 1.0, dims="task"),
                                     dims="task")
                eta = m[run_recipe][cell_s] + u[cell_s] + b[cell_t]
            else:
                eta = m[run_recipe][cell_s] + u[cell_s]
            s_cell = (pm.HalfNormal("sigma_cell", self.sigma_prior) if self.cell_residual
                      else None)
            cell_ll = logit_normal_cell_loglik(eta, cell_n, cell_c, s_cell,
                                               int(self.quadrature_nodes))
            pm.Potential("loglik", cell_ll.sum())
        return model

    def posterior_vars(self, data: EvalData) -> list[str]:
        keep = ["m", "sigma_run", "u"]
        if data.shape[1] > 1:
            keep += ["sigma_task", "b"]
        return keep + (["sigma_cell"] if self.cell_residual else [])

    # ------------------------------------------------------------------ draws
    def _arrays(self, posterior: xr.Dataset, data: EvalData) -> dict[str, np.ndarray]:
        post = posterior.transpose("chain", "draw", ...)
        idx, _ = self.recipes(data)
        shape = (post.sizes["chain"], post.sizes["draw"])
        zeros = np.zeros(shape)
        return {
            "run": post["m"].values[..., idx] + post["u"].values,  # (c, d, run)
            "m": post["m"].values,
            "b": post["b"].values if "b" in post else np.zeros((*shape, data.shape[1])),
            "sigma_run": post["sigma_run"].values,
            "sigma_task": post["sigma_task"].values if "sigma_task" in post else zeros,
            "sigma_cell": post["sigma_cell"].values if self.cell_residual else zeros,
        }

    def rates(self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice) -> np.ndarray:
        """Draws of ``p[r, t]``; the cell residual from its conditional posterior on
        ``2 * quadrature_nodes`` Gauss-Hermite nodes (deterministic given ``seed``)."""
        a = self._arrays(posterior, data)
        eta = a["run"][..., None] + a["b"][:, :, None, tasks]
        if not self.cell_residual:
            return expit(eta)
        rng = np.random.default_rng([int(seed), 11, int(tasks.start or 0)])
        x, w = normal_hermite_nodes(2 * int(self.quadrature_nodes))
        sigma = a["sigma_cell"][:, :, None, None]
        n = data.n.values[:, tasks].astype(float)
        c = data.c.values[:, tasks].astype(float)
        eta_q = eta[..., None] + sigma[..., None] * x
        lp = np.log(w) + c[..., None] * log_expit(eta_q) + (n - c)[..., None] * log_expit(-eta_q)
        lp -= logsumexp(lp, axis=-1, keepdims=True)
        cum = np.cumsum(np.exp(lp), axis=-1)
        pick = np.minimum((cum < rng.random(eta.shape)[..., None]).sum(axis=-1), len(x) - 1)
        return expit(eta + sigma * x[pick])

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """pass@k of a new task for each run.

        The new task's logit offset is ``N(0, sigma_task^2 (1 + 1/T) + sigma_cell^2)``.
        """
        a = self._arrays(posterior, data)
        n_task = data.shape[1]
        tau = np.sqrt(a["sigma_task"] ** 2 * (1 + 1 / n_task) + a["sigma_cell"] ** 2)
        return normal_rate_curve(a["run"], tau[..., None], k, metric)

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Binomial log pmf per cell with the run x task residual integrated out."""
        a = self._arrays(posterior, data)
        eta = a["run"][..., s_idx] + a["b"][..., t_idx]
        n = data.n.values[s_idx, t_idx].astype(float)
        c = data.c.values[s_idx, t_idx].astype(float)
        log_choose = gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1)
        if not self.cell_residual:
            return log_choose + c * log_expit(eta) + (n - c) * log_expit(-eta)
        x, w = normal_hermite_nodes(int(self.quadrature_nodes))
        eta_q = eta[..., None] + a["sigma_cell"][:, :, None, None] * x
        ll = np.log(w) + c[:, None] * log_expit(eta_q) + (n - c)[:, None] * log_expit(-eta_q)
        return log_choose + logsumexp(ll, axis=-1)


# ---------------------------------------------------------------------------- outputs
def _seed_model(posterior: Any) -> TrainingSeedsModel:
    if not isinstance(posterior.model, TrainingSeedsModel):
        raise ValueError(f"needs a training-seeds posterior, got {posterior.model.name!r}")
    return posterior.model


def _summary(draws: np.ndarray, ci_prob: float) -> dict[str, float]:
    tail = (1 - ci_prob) / 2
    return {"mean": float(draws.mean()), "lower": float(np.quantile(draws, tail)),
            "upper": float(np.quantile(draws, 1 - tail))}


def recipe_rates(posterior: Any, *, nodes: int = 40) -> dict[str, np.ndarray]:
    """Per-recipe pass-rate draws (flattened chain x draw) of a NEW run.

    ``"tasks"``: on these tasks, ``mean_t E_u,e[expit(m + u + b_t + e)]``;
    ``"population"``: on a new task too. Gauss-Hermite over the normal terms.
    """
    model = _seed_model(posterior)
    data = posterior.data
    a = model._arrays(posterior.posterior, data)
    n_task = data.shape[1]
    flat = a["m"].reshape(-1, a["m"].shape[-1])  # (draws, recipe)
    s_run = a["sigma_run"].ravel()[:, None]
    s_cell = a["sigma_cell"].ravel()[:, None]
    s_task = a["sigma_task"].ravel()[:, None]
    b = a["b"].reshape(-1, n_task)
    x, w = normal_hermite_nodes(nodes)
    tau_t = np.sqrt(s_run**2 + s_cell**2)  # (draws, 1)
    these = np.zeros(flat.shape)
    for t in range(n_task):
        eta = flat[..., None] + b[:, t, None, None] + tau_t[..., None] * x
        these += expit(eta) @ w
    these /= n_task
    tau_p = np.sqrt(tau_t**2 + s_task**2 * (1 + 1 / n_task))
    population = expit(flat[..., None] + tau_p[..., None] * x) @ w
    return {"tasks": these, "population": population}


def recipe_difference(
    posterior: Any, a: str, b: str, *, ci_prob: float = 0.95
) -> pd.DataFrame:
    """Recipe ``b`` minus recipe ``a``: logit ``m[b] - m[a]`` and the pass rate of a new run.

    Rows ``logit``, ``rate (these tasks)``, ``rate (new tasks)``; columns ``mean``, ``lower``,
    ``upper`` (central ``ci_prob`` interval) and ``p_b_better`` = P(difference > 0). The
    pass-rate rows integrate the run-to-run (training) noise: they are claims about the
    recipes, not about the observed checkpoints.
    """
    model = _seed_model(posterior)
    _, names = model.recipes(posterior.data)
    for name in (a, b):
        if name not in names:
            raise ValueError(f"unknown recipe {name!r}; known: {names}")
    ia, ib = names.index(a), names.index(b)
    m = posterior.posterior["m"].transpose("chain", "draw", ...).values.reshape(-1, len(names))
    rates = recipe_rates(posterior)
    rows = {
        "logit": m[:, ib] - m[:, ia],
        "rate (these tasks)": rates["tasks"][:, ib] - rates["tasks"][:, ia],
        "rate (new tasks)": rates["population"][:, ib] - rates["population"][:, ia],
    }
    return pd.DataFrame(
        {key: {**_summary(v, ci_prob), "p_b_better": float((v > 0).mean())}
         for key, v in rows.items()}
    ).T


def noise_components(posterior: Any, *, ci_prob: float = 0.95) -> pd.DataFrame:
    """Posterior of ``sigma_run`` (training noise), ``sigma_task`` and ``sigma_cell`` (logits)."""
    model = _seed_model(posterior)
    a = model._arrays(posterior.posterior, posterior.data)
    rows = {"run": a["sigma_run"], "task": a["sigma_task"], "cell": a["sigma_cell"]}
    return pd.DataFrame({k: _summary(v.ravel(), ci_prob) for k, v in rows.items()}).T


def design_assurance(
    posterior: Any,
    a: str,
    b: str,
    runs: Any,
    tasks: Any,
    trials: Any,
    *,
    n_sims: int = 400,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """How often a new experiment of ``runs x tasks x trials`` per recipe resolves ``b - a``.

    For each design and each of ``n_sims`` posterior draws, a new experiment is simulated from
    the model at that draw (new runs, new tasks shared by both recipes, new trials); the
    experiment is analysed with runs as the unit (Welch interval on per-run pass rates, the
    frequentist twin :func:`evalbayes.frequentist.recipe_difference`). Columns:
    ``runs, tasks, trials, cost`` (= 2 runs x tasks x trials evaluations), ``se`` (the
    standard error one experiment of this design will have: the root mean square of the
    simulated experiments' Welch standard errors), ``estimate_sd`` (the sd of the estimated
    difference across the simulations: ``se`` plus the posterior's uncertainty about the
    true difference, whose draws vary from simulation to simulation), ``assurance`` (share of
    simulations whose interval excludes 0 on the side of that draw's true difference) — the
    assurance of O'Hagan and Stevens (2001), i.e. power averaged over the posterior.
    """
    from evalbayes.frequentist._training_seeds import recipe_difference as welch

    model = _seed_model(posterior)
    _, names = model.recipes(posterior.data)
    ia, ib = names.index(a), names.index(b)
    arr = model._arrays(posterior.posterior, posterior.data)
    m = arr["m"].reshape(-1, len(names))
    s_run, s_task, s_cell = (arr[key].ravel() for key in ("sigma_run", "sigma_task", "sigma_cell"))
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, m.shape[0], n_sims)
    rows = []
    grid = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v)) for v in (runs, tasks, trials)))
    for r, t, n in zip(*(g.ravel() for g in grid), strict=True):
        r, t, n = int(r), int(t), int(n)
        if r < 2:
            raise ValueError(f"runs must be >= 2 per recipe for a run-level interval, got {r}")
        est, err, hit = [], [], []
        for d in pick:
            bt = rng.normal(0, s_task[d], t)
            scores = []
            for k in (ia, ib):
                eta = (m[d, k] + rng.normal(0, s_run[d], (r, 1)) + bt
                       + rng.normal(0, s_cell[d], (r, t)))
                scores.append(rng.binomial(n, expit(eta)).mean(axis=1) / n)
            res = welch(scores[0], scores[1], ci_prob=1 - alpha)
            truth = m[d, ib] - m[d, ia]
            est.append(res.estimate)
            err.append(res.se)
            hit.append(res.lower > 0 if truth > 0 else res.upper < 0)
        rows.append({"runs": r, "tasks": t, "trials": n, "cost": 2 * r * t * n,
                     "se": float(np.sqrt(np.mean(np.square(err)))),
                     "estimate_sd": float(np.std(est)), "assurance": float(np.mean(hit))})
    return pd.DataFrame(rows)
