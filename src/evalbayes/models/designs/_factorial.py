"""Factorial model x harness design: main effects, interaction and task effects on the logit scale.

The same models (LLMs) run under several harnesses (agents, scaffolds, prompts). Each system
of :class:`~evalbayes.EvalData` is one (model, harness) combination, named by the system
coordinates ``model`` and ``harness``. For system ``s = (i, j)`` and task ``t``::

    logit p[s, t] = mu + alpha[i] + beta[j] + gamma[s] + b[t] + e[s, t]
    c[s, t]       ~ Binomial(n[s, t], p[s, t])
    alpha[i] ~ N(0, sigma_model),  beta[j] ~ N(0, sigma_harness),
    gamma[s] ~ N(0, sigma_interaction),  b[t] ~ N(0, sigma_task),  e[s, t] ~ N(0, sigma_cell)
    mu ~ N(mu_prior),  sigma_* ~ HalfNormal(sigma_prior),  sigma_task ~ HalfNormal(sigma_task_prior)

The sampler sees the same prior written as means plus zero-sum deviations (an iid normal
vector is its mean plus independent zero-sum deviations): the stored ``alpha``, ``beta``,
``gamma`` are the deviations from their means over the design's levels and ``mu`` holds
``mu + mean(alpha) + mean(beta) + mean(gamma)``, so ``mu + alpha[i] + beta[j] + gamma[s]`` is
unchanged; the shared location and the mean task effect are drawn as their sum and a split
that is independent of it a priori (as in the IRT model), which removes the location ridge.

the random-effects two-way design of Montgomery ("Design and Analysis of Experiments", §13.3)
on the logit scale of a binomial GLMM (Breslow and Clayton 1993), with crossed task effects
and a per-cell residual (the system x task interaction). The cell residual ``e`` is
integrated out of the likelihood by Gauss-Hermite quadrature,
``P(c | eta) = sum_q w_q Binomial(c | n, expit(eta + sigma_cell x_q))``, so the sampler sees
only the effects and the five scales.

Outputs beside the pass@k curves: :func:`variance_components` (the four scales and the cell
residual, with intervals and shares), :func:`rank_flips` (the posterior probability that two
models' order differs between two harnesses, for every pair of models run under both, and that
any such order differs) and :func:`harness_curves` (per-(model, harness) pass@k of a new task).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar, Literal

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

__all__ = [
    "FactorialModel",
    "add_factors",
    "factors_from_system_names",
    "harness_curves",
    "rank_flips",
    "variance_components",
]

COMPONENTS: tuple[str, ...] = ("model", "harness", "interaction", "task", "cell")
CENTERED_TRIALS_PER_TASK = 10.0  # "auto": centred task deviations from this many trials on


# ---------------------------------------------------------------------------- data helpers
def add_factors(
    data: EvalData, model: Sequence[Any], harness: Sequence[Any], *, names: tuple[str, str] = (
        "model", "harness")
) -> EvalData:
    """Copy of ``data`` with one model and one harness label per system as coordinates."""
    model_arr, harness_arr = np.asarray(model, dtype=object), np.asarray(harness, dtype=object)
    n_sys = data.shape[0]
    for arr, label in ((model_arr, "model"), (harness_arr, "harness")):
        if arr.shape != (n_sys,):
            raise ValueError(f"{label} needs one label per system ({n_sys}), got {arr.shape}")
    ds = data.dataset.assign_coords(
        {names[0]: ("system", model_arr.astype(str)), names[1]: ("system", harness_arr.astype(str))}
    )
    return EvalData(ds)


def factors_from_system_names(
    data: EvalData,
    pattern: str,
    *,
    normalise: Callable[[str], str] | None = None,
    drop_unmatched: bool = False,
) -> EvalData:
    """Model and harness coordinates parsed from system names by a regular expression.

    ``pattern`` has the named groups ``model`` and ``harness``, e.g. for Terminal-Bench
    submissions ``"20250923_droid_gpt-5"``: ``r"^\\d{8}_(?P<harness>[^_]+)_(?P<model>.+)$"``.
    ``normalise`` maps a parsed model name to a canonical one (``"claude-4-1-opus"`` ->
    ``"claude-4.1-opus"``). A system that does not match raises, or is dropped with
    ``drop_unmatched=True``.
    """
    regex = re.compile(pattern)
    if not {"model", "harness"} <= set(regex.groupindex):
        raise ValueError("pattern needs the named groups (?P<model>...) and (?P<harness>...)")
    keep, models, harnesses = [], [], []
    for name in data.systems:
        match = regex.match(name)
        if match is None:
            if drop_unmatched:
                continue
            raise ValueError(f"system {name!r} does not match pattern {pattern!r}")
        keep.append(name)
        model = match.group("model")
        models.append(normalise(model) if normalise else model)
        harnesses.append(match.group("harness"))
    if not keep:
        raise ValueError(f"no system matches pattern {pattern!r}")
    return add_factors(data.subset(systems=keep), models, harnesses)


@dataclass(frozen=True)
class Factors:
    """Integer codes of each system's model and harness, and the level names."""

    model_idx: np.ndarray
    harness_idx: np.ndarray
    models: list[str]
    harnesses: list[str]


# ---------------------------------------------------------------------------- the model
@dataclass(frozen=True, eq=False)
class FactorialPosterior(Posterior):
    """Posterior of a :class:`FactorialModel` fit, with the design's own summaries."""

    def variance_components(self, ci_prob: float = 0.95) -> pd.DataFrame:
        """Variance components with intervals; see :func:`variance_components`."""
        return variance_components(self, ci_prob)

    def rank_flips(self) -> tuple[pd.DataFrame, float]:
        """P(the ranking of models differs between harnesses); see :func:`rank_flips`."""
        return rank_flips(self)

    def harness_curves(self, k: Any = (1,), metric: str = "pass@k") -> xr.DataArray:
        """Per-harness pass@k curves; see :func:`harness_curves`."""
        return harness_curves(self, k, metric)


@dataclass(frozen=True)
class FactorialModel(Model):
    """Model x harness x task hierarchy on binomial counts (module docstring).

    Parameters
    ----------
    model_coord, harness_coord : str
        The system coordinates naming each system's model and harness.
    mu_prior : (float, float)
        Mean and sd of the normal prior of the grand mean ``mu`` (logit scale).
    sigma_prior : float
        HalfNormal scale of ``sigma_model``, ``sigma_harness``, ``sigma_interaction`` and
        ``sigma_cell`` (logits). Default 1.
    sigma_task_prior : float
        HalfNormal scale of ``sigma_task``. Default 2 (benchmarks span decades of odds).
    cell_residual : bool
        Include the per-cell residual ``e[s, t]`` (integrated out). Default True.
    quadrature_nodes : int
        Gauss-Hermite nodes for the residual and the new-task integral. Default 20.
    task_parameterization : {"auto", "centered", "noncentered"}
        How the task deviations are sampled. ``"auto"`` (default): centred when the tasks
        carry at least :data:`CENTERED_TRIALS_PER_TASK` trials on average, non-centred below
        (Papaspiliopoulos, Roberts and Skold 2007). If a fit diverges where the task spread is
        small (few trials per cell, a large cell residual), try ``"noncentered"``: in the
        simulation-based calibration (5 systems x 12 tasks x 4 trials, 20 trials per task,
        so centred under "auto") it cut the divergent transitions of 300 replicates from 282
        to 49 and the fits with R-hat > 1.05 from 46 to 4, while on Terminal-Bench (12
        systems x 80 tasks x 5 trials, a wide task spread) the centred form mixed better
        (R-hat 1.009 against 1.015; benchmarks/designs/).
    """

    name: ClassVar[str] = "factorial"
    posterior_class: ClassVar[type[Posterior]] = FactorialPosterior

    model_coord: str = "model"
    harness_coord: str = "harness"
    mu_prior: tuple[float, float] = (0.0, 1.5)
    sigma_prior: float = 1.0
    sigma_task_prior: float = 2.0
    cell_residual: bool = True
    quadrature_nodes: int = 20
    task_parameterization: Literal["auto", "centered", "noncentered"] = "auto"

    def __post_init__(self) -> None:
        if self.task_parameterization not in ("auto", "centered", "noncentered"):
            raise ValueError("task_parameterization must be 'auto', 'centered' or "
                             f"'noncentered', got {self.task_parameterization!r}")
        if len(self.mu_prior) != 2 or not self.mu_prior[1] > 0:
            raise ValueError(f"mu_prior must be (mean, sd > 0), got {self.mu_prior!r}")
        for label in ("sigma_prior", "sigma_task_prior"):
            value = getattr(self, label)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{label} must be a positive number, got {value!r}")
        check_hermite_size(self.quadrature_nodes)

    # ------------------------------------------------------------------ data
    def factors(self, data: EvalData) -> Factors:
        """Each system's model and harness as integer codes (first-appearance order)."""
        coords = data.system_coords
        for coord in (self.model_coord, self.harness_coord):
            if coord not in coords:
                raise ValueError(
                    f"the factorial model needs the system coordinate {coord!r} (one label per "
                    f"system); the data have {sorted(coords)}. Add it with add_factors() or "
                    "factors_from_system_names()"
                )
        model_idx, models = pd.factorize(pd.Series(coords[self.model_coord]).astype(str))
        harness_idx, harnesses = pd.factorize(pd.Series(coords[self.harness_coord]).astype(str))
        return Factors(model_idx, harness_idx, list(models), list(harnesses))

    def check_data(self, data: EvalData) -> None:
        """Model and harness coordinates present; >= 2 levels of each; every system observed."""
        f = self.factors(data)
        if len(f.models) < 2 or len(f.harnesses) < 2:
            raise ValueError(
                f"a factorial design needs >= 2 models and >= 2 harnesses, got "
                f"{len(f.models)} model(s) and {len(f.harnesses)} harness(es)"
            )
        n = data.n.values
        empty = np.flatnonzero(n.sum(axis=1) == 0)
        if len(empty):
            raise ValueError(f"system {data.systems[empty[0]]!r} has no observed cell")

    # ------------------------------------------------------------------ template hooks
    def inputs(self, data: EvalData) -> ModelInputs:
        """Observed cells (padded to a power of two) and each system's factor codes."""
        f = self.factors(data)
        n = data.n.values
        values, size = observed_cells(data)
        values["sys_model"] = f.model_idx.astype(np.int64)
        values["sys_harness"] = f.harness_idx.astype(np.int64)
        if self.task_parameterization == "auto":
            centered = float(n.sum()) / n.shape[1] >= CENTERED_TRIALS_PER_TASK
        else:
            centered = self.task_parameterization == "centered"
        shape_key = (n.shape[0], n.shape[1], size, len(f.models), len(f.harnesses), centered)
        return ModelInputs(values, shape_key, {"centered_task": centered})

    def build(self, inputs: ModelInputs) -> Any:
        """The PyMC model: non-centred factor effects, task effects, quadrature likelihood."""
        import pymc as pm
        import pytensor.tensor as pt

        n_sys, n_task, size, n_model, n_harness, centered = inputs.shape_key
        coords = {
            "system": np.arange(n_sys),
            "task": np.arange(n_task),
            "cell": np.arange(size),
            "model": np.arange(n_model),
            "harness": np.arange(n_harness),
        }
        v = inputs.values
        with pm.Model(coords=coords) as model:
            cell_s = pm.Data("cell_s", v["cell_s"], dims="cell")
            cell_t = pm.Data("cell_t", v["cell_t"], dims="cell")
            cell_n = pm.Data("cell_n", v["cell_n"], dims="cell")
            cell_c = pm.Data("cell_c", v["cell_c"], dims="cell")
            sys_model = pm.Data("sys_model", v["sys_model"], dims="system")
            sys_harness = pm.Data("sys_harness", v["sys_harness"], dims="system")
            s_model = pm.HalfNormal("sigma_model", self.sigma_prior)
            s_harness = pm.HalfNormal("sigma_harness", self.sigma_prior)
            s_inter = pm.HalfNormal("sigma_interaction", self.sigma_prior)
            s_task = pm.HalfNormal("sigma_task", self.sigma_task_prior)
            # iid N(0, s) effects = their mean + zero-sum deviations (the same prior). The
            # likelihood sees the means only through their sum with mu, so the sampler draws
            # that sum and, given it, the split into "level" (mu + factor means) and the task
            # mean from its conditional prior: no ridge along the shared location.
            alpha = pm.Deterministic(
                "alpha", s_model * pm.ZeroSumNormal("alpha_z", 1.0, dims="model"), dims="model"
            )
            beta = pm.Deterministic(
                "beta", s_harness * pm.ZeroSumNormal("beta_z", 1.0, dims="harness"),
                dims="harness",
            )
            gamma = pm.Deterministic(
                "gamma", s_inter * pm.ZeroSumNormal("gamma_z", 1.0, dims="system"), dims="system"
            )
            var_level = (self.mu_prior[1] ** 2 + s_model**2 / n_model
                         + s_harness**2 / n_harness + s_inter**2 / n_sys)
            var_task = s_task**2 / n_task
            total = var_level + var_task
            shift = pm.Normal("location_z", 0.0, 1.0) * pt.sqrt(total)
            task_mean = shift * var_task / total + pm.Normal("split_z", 0.0, 1.0) * pt.sqrt(
                var_level * var_task / total
            )
            mu = pm.Deterministic("mu", self.mu_prior[0] + shift - task_mean)
            if centered:
                b_dev = pm.ZeroSumNormal("b_dev", s_task, dims="task")
            else:
                b_dev = s_task * pm.ZeroSumNormal("b_z", 1.0, dims="task")
            b = pm.Deterministic("b", task_mean + b_dev, dims="task")
            theta = mu + alpha[sys_model] + beta[sys_harness] + gamma
            eta = theta[cell_s] + b[cell_t]
            s_cell = (pm.HalfNormal("sigma_cell", self.sigma_prior) if self.cell_residual
                      else None)
            cell_ll = logit_normal_cell_loglik(eta, cell_n, cell_c, s_cell,
                                               int(self.quadrature_nodes))
            # padding cells have n = c = 0 and contribute log sum w = 0
            pm.Potential("loglik", cell_ll.sum())
        return model

    def posterior_vars(self, data: EvalData) -> list[str]:
        """Effects and scales kept in the posterior group."""
        keep = ["mu", "sigma_model", "sigma_harness", "sigma_interaction", "sigma_task",
                "alpha", "beta", "gamma", "b"]
        return keep + (["sigma_cell"] if self.cell_residual else [])

    # ------------------------------------------------------------------ draws
    def system_logit(self, posterior: xr.Dataset, data: EvalData) -> np.ndarray:
        """``mu + alpha[i] + beta[j] + gamma[s]`` draws, shape (chain, draw, system)."""
        f = self.factors(data)
        post = posterior.transpose("chain", "draw", ...)
        alpha = post["alpha"].values[..., f.model_idx]
        beta = post["beta"].values[..., f.harness_idx]
        return post["mu"].values[..., None] + alpha + beta + post["gamma"].values

    def _sigma_cell(self, posterior: xr.Dataset) -> np.ndarray:
        post = posterior.transpose("chain", "draw", ...)
        if self.cell_residual:
            return post["sigma_cell"].values
        return np.zeros((post.sizes["chain"], post.sizes["draw"]))

    def rates(self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice) -> np.ndarray:
        """Draws of ``p[s, t]`` for a chunk of tasks, shape (chain, draw, system, chunk).

        The cell residual is drawn from its conditional posterior given the cell's counts,
        discretised on ``2 * quadrature_nodes`` Gauss-Hermite nodes (an unobserved cell draws
        it from N(0, sigma_cell)); deterministic given ``seed`` and the chunk.
        """
        post = posterior.transpose("chain", "draw", ...)
        eta = self.system_logit(posterior, data)[..., None] + post["b"].values[:, :, None, tasks]
        if not self.cell_residual:
            return expit(eta)
        rng = np.random.default_rng([int(seed), 7, int(tasks.start or 0)])
        x, w = normal_hermite_nodes(2 * int(self.quadrature_nodes))
        sigma = self._sigma_cell(posterior)[:, :, None, None]
        n = data.n.values[:, tasks].astype(float)
        c = data.c.values[:, tasks].astype(float)
        eta_q = eta[..., None] + sigma[..., None] * x  # (c, d, s, t, q)
        log_post = np.log(w) + c[..., None] * log_expit(eta_q) + (n - c)[..., None] * log_expit(
            -eta_q
        )
        log_post -= logsumexp(log_post, axis=-1, keepdims=True)
        cum = np.cumsum(np.exp(log_post), axis=-1)
        u = rng.random(eta.shape)[..., None]
        pick = np.minimum((cum < u).sum(axis=-1), len(x) - 1)
        return expit(eta + sigma * x[pick])

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """pass@k / pass^k of a new task for each system, (chain, draw, system, k).

        ``E[f(expit(theta_s + u))]`` with ``u ~ N(0, sigma_task^2 + sigma_cell^2)``, by
        Gauss-Hermite quadrature with ``2 * quadrature_nodes`` nodes.
        """
        post = posterior.transpose("chain", "draw", ...)
        theta = self.system_logit(posterior, data)
        tau = np.sqrt(post["sigma_task"].values ** 2 + self._sigma_cell(posterior) ** 2)
        return normal_rate_curve(theta, tau[..., None], k, metric)

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Binomial log pmf of cells ``(s_idx, t_idx)`` with the cell residual integrated out."""
        post = posterior.transpose("chain", "draw", ...)
        eta = self.system_logit(posterior, data)[..., s_idx] + post["b"].values[..., t_idx]
        n = data.n.values[s_idx, t_idx].astype(float)
        c = data.c.values[s_idx, t_idx].astype(float)
        log_choose = gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1)
        if not self.cell_residual:
            return log_choose + c * log_expit(eta) + (n - c) * log_expit(-eta)
        x, w = normal_hermite_nodes(int(self.quadrature_nodes))
        eta_q = eta[..., None] + self._sigma_cell(posterior)[:, :, None, None] * x
        ll = np.log(w) + c[:, None] * log_expit(eta_q) + (n - c)[:, None] * log_expit(-eta_q)
        return log_choose + logsumexp(ll, axis=-1)


# ---------------------------------------------------------------------------- outputs
def _model_data(posterior: Any) -> tuple[FactorialModel, EvalData]:
    model = posterior.model
    if not isinstance(model, FactorialModel):
        raise ValueError(f"needs a factorial-model posterior, got {model.name!r}")
    return model, posterior.data


def variance_components(posterior: Any, ci_prob: float = 0.95) -> pd.DataFrame:
    """Posterior of the scales (logit sd) and their variance shares.

    Rows ``model, harness, interaction, task, cell``; columns ``mean``, ``median``, ``lower``,
    ``upper`` (central interval of the sd), ``var_mean`` (posterior mean of sd^2) and
    ``share`` (posterior mean of sd^2 / sum of the five sd^2; the binomial noise is not a
    component on the logit scale).
    """
    model, _ = _model_data(posterior)
    post = posterior.posterior
    names = {key: f"sigma_{key}" for key in COMPONENTS}
    if not model.cell_residual:
        names.pop("cell")
    draws = {key: post[var].values.ravel() for key, var in names.items()}
    total = sum(v**2 for v in draws.values())
    tail = (1.0 - ci_prob) / 2.0
    rows = {
        key: {
            "mean": float(v.mean()),
            "median": float(np.median(v)),
            "lower": float(np.quantile(v, tail)),
            "upper": float(np.quantile(v, 1 - tail)),
            "var_mean": float((v**2).mean()),
            "share": float((v**2 / total).mean()),
        }
        for key, v in draws.items()
    }
    table = pd.DataFrame(rows).T.rename_axis("component")
    table.attrs["ci_prob"] = float(ci_prob)
    return table


def _cells(model: FactorialModel, data: EvalData) -> dict[tuple[int, int], int]:
    f = model.factors(data)
    cells: dict[tuple[int, int], int] = {}
    for s, (i, j) in enumerate(zip(f.model_idx, f.harness_idx, strict=True)):
        cells.setdefault((int(i), int(j)), s)
    return cells


def rank_flips(posterior: Any) -> tuple[pd.DataFrame, float]:
    """P(two models' order differs between two harnesses), from the population logits.

    For every pair of harnesses ``(j, j')`` and pair of models ``(i, i')`` run under both
    (four systems), the order of ``theta[i, j] = mu + alpha_i + beta_j + gamma_ij`` (monotone in
    the pass@k of a new task) is compared: a flip when ``theta[i,j] - theta[i',j]`` and
    ``theta[i,j'] - theta[i',j']`` differ in sign. Returns the table (one row per
    comparison: ``model_a, model_b, harness_a, harness_b, diff_a, diff_b, p_flip``) and
    ``P(any flip)``, the posterior probability that the ranking of the models differs between
    at least two harnesses. Model pairs never run under a common pair of harnesses are absent
    (NaN ``P(any flip)`` when there is none).
    """
    model, data = _model_data(posterior)
    f = model.factors(data)
    theta = model.system_logit(posterior.posterior, data).reshape(-1, data.shape[0])
    cells = _cells(model, data)
    rows, flips = [], []
    for ja, jb in combinations(range(len(f.harnesses)), 2):
        shared = [i for i in range(len(f.models)) if (i, ja) in cells and (i, jb) in cells]
        for ia, ib in combinations(shared, 2):
            da = theta[:, cells[(ia, ja)]] - theta[:, cells[(ib, ja)]]
            db = theta[:, cells[(ia, jb)]] - theta[:, cells[(ib, jb)]]
            flip = np.sign(da) != np.sign(db)
            flips.append(flip)
            rows.append({
                "model_a": f.models[ia], "model_b": f.models[ib],
                "harness_a": f.harnesses[ja], "harness_b": f.harnesses[jb],
                "diff_a": float(da.mean()), "diff_b": float(db.mean()),
                "p_flip": float(flip.mean()),
            })
    table = pd.DataFrame(rows, columns=["model_a", "model_b", "harness_a", "harness_b",
                                        "diff_a", "diff_b", "p_flip"])
    p_any = float(np.any(np.stack(flips), axis=0).mean()) if flips else float("nan")
    return table, p_any


def harness_curves(posterior: Any, k: Any = (1,), metric: str = "pass@k") -> xr.DataArray:
    """pass@k / pass^k of a new task per (model, harness), dims (chain, draw, model, harness, k).

    Combinations that were not run are NaN (the model predicts them only through the prior of
    the interaction; see :func:`rank_flips` for comparisons within the design).
    """
    model, data = _model_data(posterior)
    f = model.factors(data)
    ks = np.atleast_1d(np.asarray(k, dtype=np.int64))
    curve = posterior.curve(metric, ks, estimand="population").transpose(
        "chain", "draw", "system", "k"
    ).values
    chains, draws = curve.shape[:2]
    out = np.full((chains, draws, len(f.models), len(f.harnesses), len(ks)), np.nan)
    for (i, j), s in _cells(model, data).items():
        out[:, :, i, j] = curve[:, :, s]
    return xr.DataArray(
        out,
        dims=("chain", "draw", "model", "harness", "k"),
        coords={"model": f.models, "harness": f.harnesses, "k": ks},
        name=metric,
    )
