"""Joint task-effects model: shared task difficulty, a per-cell residual, broken tasks.

For system ``s`` and task ``t`` with ``n[s, t]`` trials and ``c[s, t]`` successes::

    logit p[s, t] = a[s] (theta[s] - b[t]) + e[s, t],     e[s, t] ~ N(0, sigma_e)
                    (a = 1 unless discrimination="system")
    c[s, t]       ~ Binomial(n[s, t], p[s, t])
    task t broken (p[s, t] = 0 for every s) with probability pi0

Tasks carry effects shared by every system (difficulty ``b[t]``; being broken), so every
system's trials on a task are evidence about it, comparisons of systems are paired through
the shared task effects, and pass@k beyond a system's own ``n`` rests on what the other
systems saw. ``e`` lets rates spread over decades of ``p`` around the additive
(Rasch / 1PL) structure; ``sigma_e = 0`` is the 1PL IRT model plus broken tasks.

Likelihood (collapsed: the parameters are ``theta`` (S), ``b`` (T) and four scalars)
---------------------------------------------------------------------------------
The residual is integrated out per cell (a logit-normal-binomial,
:func:`evalbayes.models.logit_normal.log_marginal`)::

    L[s, t] = integral Binomial(c | n, sigmoid(theta_s - b_t + e)) N(e | 0, sigma_e) de,

and the broken indicator per task (BDA3 sec. 5 hierarchical mixture, marginalised)::

    L[t] = pi0 * 1[c[s, t] = 0 for all observed s] + (1 - pi0) * prod_s L[s, t].

Priors (weakly informative on the logit scale)
----------------------------------------------
::

    theta[s] ~ N(0, theta_prior)                (default 2)
    b[t]     ~ N(0, sigma_b),  sigma_b ~ HalfNormal(sigma_b_prior)   (default 2.5)
    sigma_e  ~ HalfNormal(sigma_e_prior)        (default 1.5), or fixed
    pi0      ~ Beta(*broken_prior)              (default Beta(1, 9): mean 0.1)

Identification as :mod:`evalbayes.models.irt`: the logit sees only ``theta - b``; the item
population fixes the location (median difficulty 0, no free mean of ``b``), and the sampler
sees ``theta`` and ``b`` as means plus zero-sum deviations with the two means rotated into
their gap and a prior-only level. The scale is the logit's own (no discrimination).

Derived quantities
------------------
``"tasks"`` estimand: draws of every cell's rate from its exact conditional posterior given a
draw of ``(theta, b, sigma_e, pi0)`` and the cell's counts: the task is broken with
probability ``pi0 Z_t / (pi0 Z_t + (1 - pi0) prod_s L[s, t])`` (``Z_t`` = all counts zero),
else ``e[s, t]`` is drawn from its 1-D conditional (:func:`conditional_logit_draws`);
``f(p)`` is averaged over the system's observed tasks.
``"population"`` estimand: pass@k of a new task, ``(1 - pi0) E[f(sigmoid(a (theta - b) + e))]``,
``-a b + e ~ N(0, a^2 sigma_b^2 + sigma_e^2)``, one 1-D integral per draw and system; the same task
distribution of the same draw for every system makes differences paired.

See models/README.md for the full write-up, references and validation.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import xarray as xr
from scipy.special import expit, gammaln

from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig, padded_size
from evalbayes.models.base import Model, ModelInputs, require_observed
from evalbayes.models.broken_tasks import (
    add_broken_task_mixture,
    all_zero_tasks,
    broken_log_odds,
    broken_probability_draws,
    cell_pieces,
    check_broken_prior,
    task_log_likelihood,
)
from evalbayes.models.logit_normal import (
    NEWTON_CAP,
    QUADRATURE_NODES,
    SPAN,
    conditional_logit_draws,
    log_marginal,
    population_curve,
)

__all__ = ["TaskEffectsInputs", "TaskEffectsModel", "uninformed_parameters"]

Parameterization = Literal["auto", "centered", "noncentered"]
Discrimination = Literal["none", "system"]
ResidualScale = Literal["shared", "system"]
RESIDUAL_SCALES: tuple[str, ...] = ("shared", "system")
DISCRIMINATIONS: tuple[str, ...] = ("none", "system")
MIN_SYSTEMS_FOR_DISCRIMINATION = 3
PARAMETERIZATIONS: tuple[str, ...] = ("auto", "centered", "noncentered")
AUTO_CENTER_TRIALS = 10.0
# ... and only with this many systems: TinyAgent (3 systems x 10 tasks, 64 trials per cell),
# centred: 3 / 2 / 0 divergences in 4 x (1000 + 1000) over seeds 1-3, bulk ESS 288-522;
# non-centred: none, ESS 636-941 (benchmarks/validity.md)
AUTO_CENTER_SYSTEMS = 4
_WORK = 8_000_000  # numbers per temporary (draws x systems x tasks x nodes) array
GRAPH_NEWTON_STEPS = 4  # the grid spans 10 Laplace scales: a mode off by << s is harmless


def uninformed_parameters(data: EvalData, sigma_e: float | str = "estimate") -> list[str]:
    """Parameters whose posterior the data cannot move away from the prior.

    With at most one trial per cell (``n <= 1`` everywhere, e.g. SWE-bench) a cell's residual
    ``e`` is not identified: ``P(c = 1) = E[sigmoid(theta - b + e)]`` is (to a close
    approximation) ``sigmoid((theta - b) / sqrt(1 + pi sigma_e^2 / 8))``, a rescaling of
    ``theta - b`` that ``theta`` and ``b`` absorb. ``sigma_e`` then keeps its prior, and so
    does everything that depends on it: pass@k for k > 1 and pass^k (the spread of a cell's
    rate around its mean is exactly what repeated trials would measure).
    """
    n = data.n.values
    if sigma_e == "estimate" and n.max() <= 1 and n.shape[0] > 1:
        return ["sigma_e"]
    return []


@dataclass(frozen=True)
class TaskEffectsInputs(ModelInputs):
    """What :meth:`TaskEffectsModel.build` needs: data arrays (``values``, swapped as
    ``pm.Data``), the static shape (``shape_key``) that a compiled model depends on, and the
    sizes the graph is built for."""

    n_system: int = 0
    n_task: int = 0
    n_cell: int = 0
    centered: bool = False
    cells: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskEffectsModel(Model):
    """Joint task-effects model (module docstring; maths in models/README.md).

    Parameters
    ----------
    theta_prior : float
        Prior sd of the abilities ``theta`` (logit scale). Default 2.
    sigma_b_prior : float
        Scale of the HalfNormal prior of ``sigma_b``, the spread of task difficulties.
    sigma_e : "estimate" or float >= 0
        The per-cell residual sd: learned (default), fixed, or 0 (no residual: 1PL plus
        broken tasks).
    sigma_e_prior : float
        Scale of the HalfNormal prior of ``sigma_e`` when it is estimated. Default 1.5.
    broken : bool
        Include the broken-task point mass at ``p = 0`` (default True).
    broken_prior : (float, float)
        Beta prior of ``pi0``, the probability that a task is broken. Default Beta(1, 9).
    parameterization : {"auto", "centered", "noncentered"}
        How the difficulty deviations are sampled; "auto" centres them when tasks carry at
        least 10 trials on average (as :class:`~evalbayes.models.irt.IRTModel`) from at least
        4 systems (with 3 systems the centred form diverged on TinyAgent).
    quadrature_nodes : int
        Nodes of the per-cell quadrature (:mod:`evalbayes.models.logit_normal`). Default 20.
    discrimination : {"none", "system"}
        ``"none"`` (default): one common slope. ``"system"``: ``logit p = a[s] (theta[s] -
        b[t]) + e`` with ``log a[s] ~ N(0, sigma_a)``, how steeply a system's rate falls with
        task difficulty. Tried on HumanEval+ (6 systems, m = 16): it barely moved the weak
        system's over-estimate at k >= 64 and mixed badly (the scale of ``b`` against the
        slopes: R-hat 1.15, bulk ESS 12 for ``sigma_b``; benchmarks/validity.md), so it is
        off by default. Used with at least 3 systems; with fewer, ``a = 1``.
    dead_cells : bool
        Add a per-cell point mass at ``p = 0`` with a per-system probability
        ``zeta[s] ~ Beta(*dead_prior)``: system ``s`` cannot solve task ``t`` at all, while
        other systems can (a mixture residual: logit-normal or dead). Marginalised per cell.
        Experimental, off by default (benchmarks/validity.md).
    dead_prior : (float, float)
        Beta prior of ``zeta[s]``. Default Beta(1, 9).
    residual_scale : {"shared", "system"}
        One residual spread ``sigma_e`` for all systems (default) or one per system,
        ``sigma_e[s] ~ HalfNormal(sigma_e_prior)`` independently (how far a system's rates
        scatter around the additive structure: a reasoning model with many mid-range rates
        against a model whose rates sit near 0 or 1).
    sigma_a : float
        Spread of ``log a`` (fixed; default 0.5: 95 % of systems' slopes within 0.38-2.7).
    """

    name: ClassVar[str] = "task-effects"

    theta_prior: float = 2.0
    sigma_b_prior: float = 2.5
    sigma_e: float | str = "estimate"
    sigma_e_prior: float = 1.5
    broken: bool = True
    broken_prior: tuple[float, float] = (1.0, 9.0)
    parameterization: Parameterization = "auto"
    quadrature_nodes: int = QUADRATURE_NODES
    discrimination: Discrimination = "none"
    sigma_a: float = 0.5
    dead_cells: bool = False
    dead_prior: tuple[float, float] = (1.0, 9.0)
    residual_scale: ResidualScale = "shared"

    def __post_init__(self) -> None:
        for label in ("theta_prior", "sigma_b_prior", "sigma_e_prior"):
            value = getattr(self, label)
            if isinstance(value, bool) or not (np.isfinite(value) and value > 0):
                raise ValueError(f"{label} must be a positive number, got {value!r}")
        if isinstance(self.sigma_e, str):
            if self.sigma_e != "estimate":
                raise ValueError(
                    f"sigma_e must be 'estimate' or a number >= 0, got {self.sigma_e!r}"
                )
        elif isinstance(self.sigma_e, bool) or not (
            np.isfinite(self.sigma_e) and self.sigma_e >= 0
        ):
            raise ValueError(f"sigma_e must be 'estimate' or a number >= 0, got {self.sigma_e!r}")
        check_broken_prior(self.broken_prior)
        if self.parameterization not in PARAMETERIZATIONS:
            raise ValueError(
                f"parameterization must be one of {PARAMETERIZATIONS}, "
                f"got {self.parameterization!r}"
            )
        if len(self.dead_prior) != 2 or min(self.dead_prior) <= 0:
            raise ValueError(f"dead_prior must be two positive numbers, got {self.dead_prior!r}")
        if self.residual_scale not in RESIDUAL_SCALES:
            raise ValueError(
                f"residual_scale must be one of {RESIDUAL_SCALES}, got {self.residual_scale!r}"
            )
        if self.discrimination not in DISCRIMINATIONS:
            raise ValueError(
                f"discrimination must be one of {DISCRIMINATIONS}, got {self.discrimination!r}"
            )
        if isinstance(self.sigma_a, bool) or not (np.isfinite(self.sigma_a) and self.sigma_a > 0):
            raise ValueError(f"sigma_a must be a positive number, got {self.sigma_a!r}")
        if int(self.quadrature_nodes) < 8:
            raise ValueError(f"quadrature_nodes must be >= 8, got {self.quadrature_nodes}")

    # ------------------------------------------------------------------ data
    @staticmethod
    def check_data(data: EvalData) -> None:
        """Every system and every task observed at least once (``n > 0`` somewhere)."""
        require_observed(data)

    def uses_discrimination(self, n_system: int) -> bool:
        """Whether systems get their own slope ``a[s]`` (``discrimination="system"`` and at
        least ``MIN_SYSTEMS_FOR_DISCRIMINATION`` systems)."""
        return self.discrimination == "system" and n_system >= MIN_SYSTEMS_FOR_DISCRIMINATION

    def residual(self, n_system: int) -> float | str:
        """The residual setting used with ``n_system`` systems: ``sigma_e``, except that with
        one system the cell residual is off (0): each task has one cell, so ``e[s, t]`` and
        ``b[t]`` are the same thing and only their sum is identified (a single-system fit with
        both mixed badly: tau-bench R-hat 1.05, ESS 89)."""
        return 0.0 if n_system == 1 else self.sigma_e

    @property
    def has_residual(self) -> bool:
        """False when ``sigma_e`` is fixed at 0."""
        return self.sigma_e == "estimate" or float(self.sigma_e) > 0

    def centered(self, data: EvalData) -> bool:
        """Whether the difficulty deviations are sampled centred for these data."""
        if self.parameterization == "auto":
            trials_per_task = float(data.n.values.sum()) / data.n.shape[1]
            return (trials_per_task >= AUTO_CENTER_TRIALS
                    and data.n.shape[0] >= AUTO_CENTER_SYSTEMS)
        return self.parameterization == "centered"

    def inputs(self, data: EvalData) -> TaskEffectsInputs:
        """Observed cells in long format, padded to :func:`padded_size` (weight 0 on pads),
        and the per-task all-zero indicator."""
        self.check_data(data)
        n, c = data.n.values, data.c.values
        s_idx, t_idx = np.nonzero(n > 0)
        size = padded_size(len(s_idx))
        pad = size - len(s_idx)
        zeros = np.zeros(pad, np.int64)
        all_zero = ((c * (n > 0)).sum(axis=0) == 0).astype(float)
        values = {
            "cell_s": np.concatenate([s_idx, zeros]).astype(np.int64),
            "cell_t": np.concatenate([t_idx, zeros]).astype(np.int64),
            "cell_n": np.concatenate([n[s_idx, t_idx], zeros]).astype(float),
            "cell_c": np.concatenate([c[s_idx, t_idx], zeros]).astype(float),
            "cell_w": np.concatenate([np.ones(len(s_idx)), np.zeros(pad)]),
            "task_zero": all_zero,
        }
        n_sys, n_task = n.shape
        centered = self.centered(data)
        return TaskEffectsInputs(
            values=values,
            shape_key=(n_sys, n_task, size, centered),
            n_system=n_sys,
            n_task=n_task,
            n_cell=size,
            centered=centered,
        )

    # ------------------------------------------------------------------ the PyMC model
    def build(self, inputs: ModelInputs) -> Any:
        """The PyMC model: priors, identification, and the collapsed task likelihood."""
        import pymc as pm
        import pytensor.tensor as pt

        if not isinstance(inputs, TaskEffectsInputs):
            raise TypeError("TaskEffectsModel.build needs the TaskEffectsInputs of inputs()")
        n_sys, n_task, size = inputs.n_system, inputs.n_task, inputs.n_cell
        values = inputs.values
        coords = {"system": np.arange(n_sys), "task": np.arange(n_task), "cell": np.arange(size)}
        with pm.Model(coords=coords) as model:
            cell_s = pm.Data("cell_s", values["cell_s"], dims="cell")
            cell_t = pm.Data("cell_t", values["cell_t"], dims="cell")
            cell_n = pm.Data("cell_n", values["cell_n"], dims="cell")
            cell_c = pm.Data("cell_c", values["cell_c"], dims="cell")
            cell_w = pm.Data("cell_w", values["cell_w"], dims="cell")
            task_zero = pm.Data("task_zero", values["task_zero"], dims="task")
            sigma_b = pm.HalfNormal("sigma_b", self.sigma_b_prior)
            var_theta = self.theta_prior**2 / n_sys  # Var(mean theta)
            var_b = sigma_b**2 / n_task  # Var(mean b)
            total = var_theta + var_b
            gap = pm.Normal("location_gap_z", 0.0, 1.0) * pt.sqrt(total)
            level = pm.Normal("location_level_z", 0.0, 1.0) * pt.sqrt(var_theta * var_b / total)
            theta_mean = level + gap * var_theta / total
            if n_sys > 1:
                theta_dev = pm.ZeroSumNormal("theta_dev", sigma=self.theta_prior, dims="system")
                theta = pm.Deterministic("theta", theta_mean + theta_dev, dims="system")
            else:
                theta = pm.Deterministic("theta", pt.stack([theta_mean]), dims="system")
            if inputs.centered:
                b_dev = pm.ZeroSumNormal("b_dev", sigma=sigma_b, dims="task")
            else:
                b_dev = sigma_b * pm.ZeroSumNormal("b_dev_z", sigma=1.0, dims="task")
            b = pm.Deterministic("b", level - gap * var_b / total + b_dev, dims="task")
            mu = theta[cell_s] - b[cell_t]
            if self.uses_discrimination(n_sys):
                log_a_z = pm.Normal("log_a_z", 0.0, 1.0, dims="system")
                a = pm.Deterministic("a", pt.exp(self.sigma_a * log_a_z), dims="system")
                mu = a[cell_s] * mu
            residual = self.residual(n_sys)
            if residual == "estimate":
                if self.residual_scale == "system":
                    sigma_e = pm.HalfNormal("sigma_e", self.sigma_e_prior, dims="system")[cell_s]
                else:
                    sigma_e = pm.HalfNormal("sigma_e", self.sigma_e_prior)
            else:
                sigma_e = pt.as_tensor_variable(float(residual))
            if residual == "estimate" or float(residual) > 0:
                ll = _pt_log_marginal(mu, sigma_e, cell_n, cell_c, int(self.quadrature_nodes))
            else:
                ll = cell_c * -pt.softplus(-mu) + (cell_n - cell_c) * -pt.softplus(mu)
            if self.dead_cells:
                zeta = pm.Beta("zeta", *self.dead_prior, dims="system")
                alive = pt.log1p(-zeta)[cell_s] + ll
                ll = pt.switch(pt.eq(cell_c, 0), pt.logaddexp(pt.log(zeta)[cell_s], alive), alive)
            add_broken_task_mixture(ll, cell_w, cell_t, n_task, task_zero,
                                    self.broken_prior if self.broken else None)
        return model

    def posterior_vars(self, data: EvalData) -> list[str]:
        """Variables kept in the posterior group."""
        keep = ["theta", "b", "sigma_b"]
        if self.uses_discrimination(data.n.shape[0]):
            keep.append("a")
        if self.residual(data.n.shape[0]) == "estimate":
            keep.append("sigma_e")
        if self.broken:
            keep.append("pi0")
        if self.dead_cells:
            keep.append("zeta")
        return keep

    def simulate_prior(
        self, systems: int, tasks: int, trials: int, seed: int
    ) -> tuple[EvalData, dict[str, Any]]:
        """Draw parameters from the prior and counts from the model (for SBC and recovery).

        Returns the data (``trials`` per cell) and the true values: ``theta`` (S), ``b`` (T),
        ``sigma_b``, ``sigma_e``, ``pi0``, ``broken`` (T, bool) and ``p`` (S, T).
        """
        rng = np.random.default_rng(seed)
        sigma_b = abs(rng.normal(0.0, self.sigma_b_prior))
        residual = self.residual(systems)
        sigma_e = (
            abs(rng.normal(0.0, self.sigma_e_prior))
            if residual == "estimate"
            else float(residual)
        )
        pi0 = rng.beta(*self.broken_prior) if self.broken else 0.0
        theta = rng.normal(0.0, self.theta_prior, systems)
        b = rng.normal(0.0, sigma_b, tasks)
        broken = rng.random(tasks) < pi0
        a = (
            np.exp(self.sigma_a * rng.normal(0.0, 1.0, systems))
            if self.uses_discrimination(systems)
            else np.ones(systems)
        )
        e = rng.normal(0.0, 1.0, (systems, tasks)) * sigma_e
        x = a[:, None] * (theta[:, None] - b[None, :]) + e
        p = np.where(broken[None, :], 0.0, expit(x))
        n = np.full((systems, tasks), int(trials))
        data = EvalData.from_arrays(n, rng.binomial(n, p))
        truth = {"theta": theta, "a": a, "b": b, "sigma_b": sigma_b, "sigma_e": sigma_e, "pi0": pi0,
                 "broken": broken, "p": p}
        return data, truth

    # ------------------------------------------------------------------ inference
    def sample(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """The template's NUTS run, after warning about parameters the data cannot inform."""
        for name in uninformed_parameters(data, self.sigma_e):
            warnings.warn(_UNINFORMED_TEXT[name], UserWarning, stacklevel=4)
        return super().sample(data, sampler)

    # ------------------------------------------------------------------ template hooks
    def _params(self, posterior: xr.Dataset) -> dict[str, np.ndarray]:
        theta = posterior["theta"].transpose("chain", "draw", "system").values
        b = posterior["b"].transpose("chain", "draw", "task").values
        shape = theta.shape[:2]
        if "sigma_e" in posterior and "system" in posterior["sigma_e"].dims:
            sigma_e = posterior["sigma_e"].transpose("chain", "draw", "system").values
        elif "sigma_e" in posterior:
            sigma_e = np.repeat(
                posterior["sigma_e"].transpose("chain", "draw").values[..., None],
                theta.shape[-1], axis=-1,
            )
        else:  # fixed, or off with one system
            residual = self.residual(theta.shape[-1])
            sigma_e = np.full(theta.shape, 0.0 if residual == "estimate" else float(residual))
        pi0 = posterior["pi0"].transpose("chain", "draw").values if self.broken else np.zeros(
            shape
        )
        sigma_b = posterior["sigma_b"].transpose("chain", "draw").values
        if "a" in posterior:
            a = posterior["a"].transpose("chain", "draw", "system").values
        else:
            a = np.ones_like(theta)
        if "zeta" in posterior:
            zeta = posterior["zeta"].transpose("chain", "draw", "system").values
        else:
            zeta = np.zeros_like(theta)
        return {"theta": theta, "b": b, "sigma_e": sigma_e, "pi0": pi0, "sigma_b": sigma_b,
                "a": a, "zeta": zeta}

    @staticmethod
    def _mu(params: dict[str, np.ndarray], tasks: slice) -> np.ndarray:
        """``a[s] (theta[s] - b[t])`` for the chunk, shape (chain, draw, system, chunk)."""
        diff = params["theta"][..., :, None] - params["b"][..., None, tasks]
        return params["a"][..., :, None] * diff

    def _cell_ll(
        self, params: dict[str, np.ndarray], n: np.ndarray, c: np.ndarray, tasks: slice,
        alive_only: bool = False,
    ) -> np.ndarray:
        """Log marginal likelihood (with ``log C(n, c)``) of cells ``(:, tasks)``, per draw:
        shape (chain, draw, system, chunk); 0 on unobserved cells. With ``dead_cells`` the
        per-cell mixture ``zeta 1[c = 0] + (1 - zeta) L`` unless ``alive_only``."""
        out = self._alive_ll(params, n, c, tasks)
        if self.dead_cells and not alive_only:
            zeta = params["zeta"][..., :, None]
            with np.errstate(divide="ignore"):
                alive = np.log1p(-zeta) + out
                mixed = np.where(c[:, tasks] == 0, np.logaddexp(np.log(zeta), alive), alive)
            out = np.where(n[:, tasks] > 0, mixed, 0.0)
        return out

    def _alive_ll(
        self, params: dict[str, np.ndarray], n: np.ndarray, c: np.ndarray, tasks: slice
    ) -> np.ndarray:
        """The logit-normal-binomial part alone (:func:`log_marginal`), 0 on unobserved cells."""
        mu = self._mu(params, tasks)
        n_t, c_t = n[:, tasks], c[:, tasks]
        if params["sigma_e"].max() > 0:
            sigma = params["sigma_e"][..., :, None]
            out = np.empty(mu.shape)
            width = max(1, _WORK // max(1, mu[..., :1].size * self.quadrature_nodes))
            for j in range(0, mu.shape[-1], width):
                sl = slice(j, j + width)
                out[..., sl] = log_marginal(
                    mu[..., sl], sigma, n_t[:, sl], c_t[:, sl], int(self.quadrature_nodes)
                )
        else:
            log_choose = gammaln(n_t + 1.0) - gammaln(c_t + 1.0) - gammaln(n_t - c_t + 1.0)
            out = log_choose + c_t * -np.logaddexp(0.0, -mu) + (n_t - c_t) * -np.logaddexp(0.0, mu)
        return np.where(n_t > 0, out, 0.0)

    def rates(
        self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice
    ) -> np.ndarray:
        """Per-cell rate draws ``p[s, t]`` for a chunk of tasks, shape (chain, draw, system,
        chunk), from the exact conditional posterior given each parameter draw.

        Per task: broken with probability ``sigmoid(log odds)`` (:func:`broken_log_odds`),
        then ``p = 0`` for every system; otherwise ``p = sigmoid(x)`` with ``x`` drawn from the
        cell's 1-D conditional (:func:`conditional_logit_draws`; the prior ``N(mu, sigma_e)``
        for unobserved cells). Deterministic given ``seed`` and the chunk's start.
        """
        params = self._params(posterior)
        n, c = data.n.values.astype(float), data.c.values.astype(float)
        n_task = n.shape[1]
        start, stop, _ = tasks.indices(n_task)
        rng = np.random.default_rng([int(seed), 7, start])
        mu = self._mu(params, slice(start, stop))
        n_t, c_t = n[:, start:stop], c[:, start:stop]
        if params["sigma_e"].max() > 0:
            sigma = params["sigma_e"][..., :, None]
            x = np.empty(mu.shape)
            width = max(1, _WORK // max(1, mu[..., :1].size * 64))
            u = rng.random(mu.shape)
            v = rng.random(mu.shape)
            for j in range(0, mu.shape[-1], width):
                sl = slice(j, j + width)
                x[..., sl] = conditional_logit_draws(
                    mu[..., sl], sigma, n_t[:, sl], c_t[:, sl], u[..., sl], v[..., sl]
                )
        else:
            x = mu
        p = expit(x)
        if self.dead_cells:
            # dead given alive-likelihood: zeta 1[c = 0] / (zeta 1[c = 0] + (1 - zeta) L)
            zeta = params["zeta"][..., :, None]
            alive_ll = self._cell_ll(params, n, c, slice(start, stop), alive_only=True)
            with np.errstate(divide="ignore"):
                odds = np.log(zeta) - np.log1p(-zeta) - alive_ll
            prob_dead = np.where(c_t == 0, expit(odds), 0.0)
            p = np.where(rng.random(p.shape) < prob_dead, 0.0, p)
        if self.broken:
            all_zero = all_zero_tasks(n_t, c_t)
            cell_ll = self._cell_ll(params, n, c, slice(start, stop))
            prob = expit(broken_log_odds(params["pi0"], cell_ll, all_zero))
            broken = rng.random(prob.shape) < prob
            p = np.where(broken[..., None, :], 0.0, p)
        return p

    def broken_probability(self, posterior: xr.Dataset, data: EvalData) -> xr.DataArray:
        """Posterior draws of ``P(task broken | parameters, data)``, dims (chain, draw, task).

        Rao-Blackwellised: its mean over draws is the posterior probability that the task is
        broken. 0 for any task with a success.
        """
        params = self._params(posterior)
        n, c = data.n.values.astype(float), data.c.values.astype(float)
        out = np.zeros((*params["pi0"].shape, n.shape[1]))
        if self.broken:
            out = broken_probability_draws(
                lambda sl: self._cell_ll(params, n, c, sl), params["pi0"], n, c
            )
        return xr.DataArray(
            out,
            dims=("chain", "draw", "task"),
            coords={
                "chain": posterior["chain"].values,
                "draw": posterior["draw"].values,
                "task": data.dataset["task"].values,
            },
            name="p_broken",
        )

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """pass@k / pass^k of a new task, shape (chain, draw, system, k):
        ``(1 - pi0) E[f(sigmoid(theta - b + e))]``, ``-b + e ~ N(0, sigma_b^2 + sigma_e^2)``
        (:func:`evalbayes.models.logit_normal.population_curve`)."""
        params = self._params(posterior)
        chains, draws, n_sys = params["theta"].shape
        flat = chains * draws
        a = params["a"].reshape(flat, n_sys)
        spread = np.sqrt(
            (a * params["sigma_b"].reshape(flat, 1)) ** 2
            + params["sigma_e"].reshape(flat, n_sys) ** 2
        )
        values = population_curve(
            a * params["theta"].reshape(flat, n_sys),
            spread,
            params["pi0"].reshape(flat),
            np.asarray(k, dtype=float),
            metric,
        )
        values *= 1.0 - params["zeta"].reshape(flat, n_sys)[..., None]
        return values.reshape(chains, draws, n_sys, len(k))

    def task_log_likelihood(self, posterior: xr.Dataset, data: EvalData) -> np.ndarray:
        """Log-likelihood of each task (all its cells, broken mixture included), shape
        (chain, draw, task): the natural unit for PSIS-LOO in this model (tasks are
        conditionally independent given the parameters; cells of a task are not, through the
        broken indicator)."""
        params = self._params(posterior)
        n, c = data.n.values.astype(float), data.c.values.astype(float)
        return task_log_likelihood(
            lambda sl: self._cell_ll(params, n, c, sl), params["pi0"] if self.broken else None,
            n, c, params["pi0"].shape,
        )

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Per-cell pieces of the task log-likelihood, shape (chain, draw, cell).

        Cell ``(s, t)`` gets its own ``log L[s, t]`` plus an equal share of the task's
        mixture term ``log L[t] - sum_s log L[s, t]`` (0 unless the task has no success), so
        the pieces sum exactly to the task log-likelihood and the total elpd is right.
        Cells of one task are not conditionally independent (the broken indicator couples
        them), so PSIS-LOO over cells is an approximation; :meth:`task_log_likelihood` gives
        the exact task-level unit.
        """
        params = self._params(posterior)
        n, c = data.n.values.astype(float), data.c.values.astype(float)
        return cell_pieces(
            lambda sl: self._cell_ll(params, n, c, sl), params["pi0"] if self.broken else None,
            n, c, params["pi0"].shape, s_idx, t_idx,
        )


_UNINFORMED_TEXT = {
    "sigma_e": (
        "task-effects: every cell has at most one trial (n <= 1), so the data cannot inform "
        "sigma_e, the spread of a system's rate on a task around theta - b: its posterior is "
        "its prior. pass@1 and rankings are unaffected (theta and b absorb the scale), but "
        "pass@k for k > 1 and pass^k rest on the prior of sigma_e; fix it (sigma_e=0 gives "
        "the 1PL) or collect repeated trials to learn it."
    )
}


def _pt_log_marginal(mu: Any, sigma: Any, n: Any, c: Any, nodes: int) -> Any:
    """PyTensor twin of :func:`evalbayes.models.logit_normal.log_marginal` (without the
    binomial coefficient). The mode, scale and grid are computed by the same safeguarded
    Newton and held constant for the gradient (``disconnected_grad``): the rule's value
    does not depend on where its nodes sit, up to the quadrature error, so the gradient of the
    fixed-node sum is the gradient of the integral to the same accuracy."""
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    sigma = sigma * pt.ones_like(mu)  # a scalar or one value per cell
    mu_c, sigma_c = disconnected_grad(mu), disconnected_grad(sigma)
    prec = 1.0 / sigma_c**2
    x_emp = pt.switch(pt.gt(n, 0), pt.log(c) - pt.log(n - c), mu_c)  # n = 0: the prior
    lo = pt.maximum(mu_c + sigma_c**2 * (c - n), pt.minimum(mu_c, x_emp))
    hi = pt.minimum(mu_c + sigma_c**2 * c, pt.maximum(mu_c, x_emp))
    q = (c + 0.5) / (n + 1.0)
    prec_data = n * q * (1.0 - q)
    x = (prec_data * pt.log(q / (1.0 - q)) + prec * mu_c) / (prec_data + prec)
    x = pt.clip(x, lo, hi)
    for _ in range(GRAPH_NEWTON_STEPS):
        p = pt.sigmoid(x)
        grad = c - n * p - (x - mu_c) * prec
        curv = n * p * (1.0 - p) + prec
        up = pt.gt(grad, 0)
        lo = pt.switch(up, x, lo)
        hi = pt.switch(up, hi, x)
        x_new = x + pt.clip(grad / curv, -NEWTON_CAP, NEWTON_CAP)
        x = pt.switch(
            pt.lt(x_new, lo), 0.5 * (x + lo), pt.switch(pt.gt(x_new, hi), 0.5 * (x + hi), x_new)
        )
    p = pt.sigmoid(x)
    scale = 1.0 / pt.sqrt(n * p * (1.0 - p) + prec)
    # fixed nodes in t: x_j = x* + s sinh(t_j), weight s cosh(t_j) h (sinh_grid)
    span = np.arcsinh(SPAN)
    t = np.linspace(-span, span, nodes)
    log_w = np.log(np.cosh(t) * (t[1] - t[0]))
    xs = disconnected_grad(x[:, None] + scale[:, None] * np.sinh(t)[None, :])
    log_s = disconnected_grad(pt.log(scale))
    g = (
        c[:, None] * xs
        - n[:, None] * pt.softplus(xs)
        - 0.5 * ((xs - mu[:, None]) / sigma[:, None]) ** 2
    )
    return pt.logsumexp(g + log_w[None, :], axis=1) + log_s - pt.log(sigma) - 0.5 * np.log(
        2.0 * np.pi
    )
