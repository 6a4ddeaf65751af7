"""Shared task effects with per-system rate grids: the task-effects structure, the rate-grid shape.

For system ``s`` and task ``t``::

    logit p[s, t] = x[s, t] - loading[s] b[t],     x[s, t] ~ g_s  (a rate grid)
    c[s, t]       ~ Binomial(n[s, t], p[s, t])
    task t broken (p[s, t] = 0 for every s) with probability pi0

``g_s`` is :class:`~evalbayes.models.rate_grid.RateGridModel`'s smooth distribution on a
logit grid with atoms (``x = -inf``: system ``s`` never solves the task; ``x = +inf``: always
solves it), now the distribution of the system's rate on a task *of average difficulty*;
``b[t]`` is the task's difficulty, shared by every system, and ``loading[s] >= 0`` how
strongly system ``s``'s rates follow it (0: a system whose rates do not depend on the
task's difficulty; the data show such systems, benchmarks/validity.md round 7).

It is :class:`~evalbayes.models.task_effects.TaskEffectsModel` with the logit-normal residual
replaced by a per-system rate grid (``theta[s] + e`` becomes ``x ~ g_s``, the slope
``a[s]`` becomes ``loading[s]``), so the shape of each system's rates below ``1 / n`` is
learned, not assumed, while every system's trials on a task still inform its ``b[t]`` and
its being broken, and comparisons are paired through the shared ``b``.

Priors::

    coef[s, d] ~ N(0, coef_prior)            (the grid's log-density, as RateGridModel)
    b[t]       ~ t_df(0, 1) centred, or N(0, 1) zero-sum  (the scale is carried by the loadings)
    loading[s] ~ HalfNormal(loading_prior)   (default 2.5)
    pi0        ~ Beta(*broken_prior)         (default Beta(1, 9))

Likelihood (collapsed: the grid node per cell and the broken indicator per task are summed
out)::

    L[s, t] = sum_j g_s(j) Binomial(c | n, sigmoid(x_j - loading[s] b[t]))  (atoms exact)
    L[t]    = pi0 1[c[s, t] = 0 for all s] + (1 - pi0) prod_s L[s, t]

Experimental (benchmarks/validity.md, round 7): its "tasks" intervals on the HumanEval+
protocol cover 0.83 at k = 64-256, short of RateGridModel's, and on Terminal-Bench (5 trials
per cell) its chains do not mix (R-hat 1.35).

Derived quantities: "tasks" draws each cell's node from its exact discrete conditional given
a parameter draw (after the task's broken indicator from its conditional, as the
task-effects model); "population" integrates over a new task,
``(1 - pi0) sum_j g_s(j) E_b[f(sigmoid(x_j - loading[s] b))]`` with ``b ~ N(0, 1)`` (one 1-D
integral per node: :func:`~evalbayes.models.logit_normal.normal_rate_curve`), plus the
atom at 1; the same new task for every system in a draw makes differences paired.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import xarray as xr
from scipy.special import expit, gammaln, log_expit, logsumexp

from evalbayes.data import EvalData
from evalbayes.inference import padded_size
from evalbayes.models.base import ModelInputs, binomial_log_choose
from evalbayes.models.broken_tasks import (
    add_broken_task_mixture,
    all_zero_tasks,
    broken_log_odds,
    broken_probability_draws,
    cell_pieces,
    check_broken_prior,
    task_log_likelihood,
)
from evalbayes.models.logit_normal import normal_rate_curve
from evalbayes.models.rate_grid import RateGridBase
from evalbayes.names import check_metric

__all__ = ["TaskGridModel", "student_t_log_scale_weights"]

Difficulty = Literal["normal", "student-t"]
DIFFICULTIES: tuple[str, ...] = ("normal", "student-t")

_WORK = 8_000_000  # numbers per temporary (draws x tasks x nodes) array
_FLOOR = -1e10  # log-likelihood of an impossible (cell, atom) pair inside the graph


@dataclass(frozen=True)
class TaskGridModel(RateGridBase):
    """Shared task difficulty and broken tasks, per-system rate grids (module docstring;
    maths in models/README.md).

    Parameters
    ----------
    degree, coef_prior, grid_limit, grid_nodes, atoms
        The rate grid, as :class:`~evalbayes.models.rate_grid.RateGridModel`.
    tail_terms : int
        Tail bumps of the grid's log-weights (default 0 here: this experimental model was
        measured with the polynomial alone, benchmarks/validity.md round 7).
    loading_prior : float
        Scale of the HalfNormal prior of each system's loading on the task difficulty
        (default 2.5, the task-effects model's prior scale of the difficulty spread).
    difficulty : {"student-t", "normal"}
        Distribution of the task difficulties ``b`` (unit scale; centred over the tasks).
        Student-t (default) has the heavy hard tail that real benchmarks show: tasks that
        every system missed in m trials but that strong systems solve now and then
        (benchmarks/validity.md round 7); normal is the IRT convention.
    difficulty_df : float
        Degrees of freedom of the Student-t difficulty (default 3).
    broken : bool
        Include the broken-task point mass (default True).
    broken_prior : (float, float)
        Beta prior of ``pi0``. Default Beta(1, 9).
    """

    name: ClassVar[str] = "task-grid"

    tail_terms: int = 0
    loading_prior: float = 2.5
    difficulty: Difficulty = "student-t"
    difficulty_df: float = 3.0
    broken: bool = True
    broken_prior: tuple[float, float] = (1.0, 9.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        value = self.loading_prior
        if isinstance(value, bool) or not (np.isfinite(value) and value > 0):
            raise ValueError(f"loading_prior must be a positive number, got {value!r}")
        if self.difficulty not in DIFFICULTIES:
            raise ValueError(f"difficulty must be one of {DIFFICULTIES}, got {self.difficulty!r}")
        df = self.difficulty_df
        if isinstance(df, bool) or not (np.isfinite(df) and df > 0):
            raise ValueError(f"difficulty_df must be a positive number, got {df!r}")
        check_broken_prior(self.broken_prior)

    # ------------------------------------------------------------------ data
    def inputs(self, data: EvalData) -> ModelInputs:
        """Observed cells in long format, padded to :func:`padded_size` (weight 0 on pads),
        each cell's log-likelihood at the two atoms, and the per-task all-zero indicator."""
        self.check_data(data)
        n, c = data.n.values, data.c.values
        s_idx, t_idx = np.nonzero(n > 0)
        size = padded_size(len(s_idx))
        pad = size - len(s_idx)
        zeros = np.zeros(pad, np.int64)
        cell_n = np.concatenate([n[s_idx, t_idx], zeros]).astype(float)
        cell_c = np.concatenate([c[s_idx, t_idx], zeros]).astype(float)
        atoms = np.stack([np.where(cell_c == 0, 0.0, _FLOOR),
                          np.where(cell_c == cell_n, 0.0, _FLOOR)], axis=1)
        values = {
            "cell_s": np.concatenate([s_idx, zeros]).astype(np.int64),
            "cell_t": np.concatenate([t_idx, zeros]).astype(np.int64),
            "cell_n": cell_n,
            "cell_c": cell_c,
            "cell_w": np.concatenate([np.ones(len(s_idx)), np.zeros(pad)]),
            "cell_atoms": atoms,
            "task_zero": ((c * (n > 0)).sum(axis=0) == 0).astype(float),
        }
        return ModelInputs(values=values, shape_key=(n.shape[0], n.shape[1], size))

    # ------------------------------------------------------------------ the PyMC model
    def build(self, inputs: ModelInputs) -> Any:
        """Grid coefficients and loadings per system, zero-sum difficulties, the collapsed
        cell and task likelihood."""
        import pymc as pm
        import pytensor.tensor as pt

        n_sys, n_task, size = inputs.shape_key
        values = inputs.values
        basis = self.basis
        coords = {"system": np.arange(n_sys), "term": np.arange(basis.shape[1]),
                  "task": np.arange(n_task), "cell": np.arange(size), "atom": [0, 1]}
        with pm.Model(coords=coords) as model:
            cell_s = pm.Data("cell_s", values["cell_s"], dims="cell")
            cell_t = pm.Data("cell_t", values["cell_t"], dims="cell")
            cell_n = pm.Data("cell_n", values["cell_n"], dims="cell")
            cell_c = pm.Data("cell_c", values["cell_c"], dims="cell")
            cell_w = pm.Data("cell_w", values["cell_w"], dims="cell")
            cell_atoms = pm.Data("cell_atoms", values["cell_atoms"], dims=("cell", "atom"))
            task_zero = pm.Data("task_zero", values["task_zero"], dims="task")
            coef = pm.Normal("coef", 0.0, self.coef_prior, dims=("system", "term"))
            logits = pt.dot(coef, basis.T)
            log_g = logits - pt.logsumexp(logits, axis=1, keepdims=True)
            loading = pm.HalfNormal("loading", self.loading_prior, dims="system")
            if self.difficulty == "normal":
                b = pm.ZeroSumNormal("b", sigma=1.0, dims="task")
            else:
                raw = pm.StudentT("b_raw", nu=self.difficulty_df, mu=0.0, sigma=1.0, dims="task")
                b = pm.Deterministic("b", raw - raw.mean(), dims="task")
            shift = loading[cell_s] * b[cell_t]
            eta = self.logits[None, :] - shift[:, None]
            inner = (-cell_c[:, None] * pt.softplus(-eta)
                     - (cell_n - cell_c)[:, None] * pt.softplus(eta))
            if self.atoms:
                inner = pt.concatenate([cell_atoms[:, :1], inner, cell_atoms[:, 1:]], axis=1)
            ll = pt.logsumexp(inner + log_g[cell_s], axis=1)
            add_broken_task_mixture(ll, cell_w, cell_t, n_task, task_zero,
                                    self.broken_prior if self.broken else None)
        return model

    def posterior_vars(self, data: EvalData) -> list[str]:
        """Coefficients, loadings, difficulties and (with broken tasks) ``pi0``."""
        return ["coef", "loading", "b", "pi0"] if self.broken else ["coef", "loading", "b"]

    def simulate_prior(
        self, systems: int, tasks: int, trials: int, seed: int
    ) -> tuple[EvalData, dict[str, Any]]:
        """Parameters from the prior, rates, counts (for SBC and recovery).

        Returns the data (``trials`` per cell) and the truth: ``coef``, ``g`` (S, support),
        ``loading`` (S), ``b`` (T), ``pi0``, ``broken`` (T) and ``p`` (S, T).
        """
        rng = np.random.default_rng(seed)
        coef = rng.normal(0.0, self.coef_prior, (systems, self.basis.shape[1]))
        logits = coef @ self.basis.T
        g = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
        loading = np.abs(rng.normal(0.0, self.loading_prior, systems))
        if self.difficulty == "normal":
            b = rng.normal(0.0, 1.0, tasks)
        else:
            b = rng.standard_t(self.difficulty_df, tasks)
        b -= b.mean()
        pi0 = rng.beta(*self.broken_prior) if self.broken else 0.0
        broken = rng.random(tasks) < pi0
        node = np.stack([rng.choice(len(g_s), tasks, p=g_s) for g_s in g])
        p = self._node_rates(node, loading[:, None] * b[None, :])
        p = np.where(broken[None, :], 0.0, p)
        n = np.full((systems, tasks), int(trials))
        data = EvalData.from_arrays(n, rng.binomial(n, p))
        truth = {"coef": coef, "g": g, "loading": loading, "b": b, "pi0": pi0,
                 "broken": broken, "p": p}
        return data, truth

    def _node_rates(self, node: np.ndarray, shift: np.ndarray) -> np.ndarray:
        """Rate of grid node ``node`` on a task with ``loading * b = shift`` (atoms exact)."""
        if not self.atoms:
            return expit(self.logits[node] - shift)
        inner = np.clip(node - 1, 0, len(self.logits) - 1)
        p = expit(self.logits[inner] - shift)
        return np.where(node == 0, 0.0, np.where(node == len(self.logits) + 1, 1.0, p))

    # ------------------------------------------------------------------ template hooks
    def _draws(self, posterior: xr.Dataset) -> dict[str, np.ndarray]:
        loading = posterior["loading"].transpose("chain", "draw", "system").values
        return {
            "log_g": self.log_weights(posterior),
            "loading": loading,
            "b": posterior["b"].transpose("chain", "draw", "task").values,
            "pi0": (posterior["pi0"].transpose("chain", "draw").values if self.broken
                    else np.zeros(loading.shape[:2])),
        }

    def _node_log_likelihood(
        self, draws: dict[str, np.ndarray], s: int, n: np.ndarray, c: np.ndarray, tasks: slice
    ) -> np.ndarray:
        """``log Binomial(c | n, p_j)`` of system ``s``'s cells ``tasks`` at every node, with
        ``log C(n, c)``: shape (chain, draw, len(tasks), support); 0 on unobserved cells."""
        n_t, c_t = n[s, tasks].astype(float), c[s, tasks].astype(float)
        shift = draws["loading"][:, :, s, None] * draws["b"][:, :, tasks]  # (C, D, chunk)
        eta = self.logits - shift[..., None]
        inner = c_t[:, None] * log_expit(eta) + (n_t - c_t)[:, None] * log_expit(-eta)
        if self.atoms:
            lead = inner.shape[:-1]
            with np.errstate(divide="ignore"):
                zero = np.broadcast_to(np.where(c_t == 0, 0.0, -np.inf), lead)[..., None]
                one = np.broadcast_to(np.where(c_t == n_t, 0.0, -np.inf), lead)[..., None]
            inner = np.concatenate([zero, inner, one], axis=-1)
        return inner + binomial_log_choose(n_t, c_t)[:, None]

    def _cell_ll(
        self, draws: dict[str, np.ndarray], n: np.ndarray, c: np.ndarray, tasks: slice
    ) -> np.ndarray:
        """``log L[s, t]`` per draw for cells ``(:, tasks)``, shape (chain, draw, system,
        chunk); 0 on unobserved cells."""
        log_g = draws["log_g"]
        start, stop, _ = tasks.indices(n.shape[1])
        out = np.empty((*log_g.shape[:3], stop - start))
        for s in range(n.shape[0]):
            ll = self._node_log_likelihood(draws, s, n, c, tasks)
            out[:, :, s] = logsumexp(ll + log_g[:, :, s, None, :], axis=-1)
        return np.where(n[:, tasks] > 0, out, 0.0)

    def rates(
        self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice
    ) -> np.ndarray:
        """Per-cell rate draws, shape (chain, draw, system, chunk): the task broken with its
        conditional probability (then ``p = 0`` for every system), else each cell's grid node
        from ``P(j | c, n) proportional to g_s(j) Binomial(c | n, sigmoid(x_j - loading b))``
        (``g_s`` alone for unobserved cells). Deterministic given ``seed`` and the chunk."""
        draws = self._draws(posterior)
        n, c = data.n.values, data.c.values
        start, stop, _ = tasks.indices(n.shape[1])
        rng = np.random.default_rng([int(seed), 13, start])
        log_g = draws["log_g"]
        chains, n_draws, n_sys, support = log_g.shape
        out = np.empty((chains, n_draws, n_sys, stop - start))
        cell_ll = np.empty_like(out)
        u = rng.random(out.shape)
        width = max(1, _WORK // max(1, chains * n_draws * support))
        for s in range(n_sys):
            for j in range(start, stop, width):
                sl = slice(j, min(stop, j + width))
                local = slice(sl.start - start, sl.stop - start)
                post = self._node_log_likelihood(draws, s, n, c, sl) + log_g[:, :, s, None, :]
                top = post.max(axis=-1, keepdims=True)
                weight = np.exp(post - top)
                cdf = np.cumsum(weight, axis=-1)
                cell_ll[:, :, s, local] = np.log(cdf[..., -1]) + top[..., 0]
                node = (cdf < u[:, :, s, local, None] * cdf[..., -1:]).sum(axis=-1)
                node = np.minimum(node, support - 1)
                shift = draws["loading"][:, :, s, None] * draws["b"][:, :, sl]
                out[:, :, s, local] = self._node_rates(node, shift)
        if self.broken:
            n_t, c_t = n[:, start:stop], c[:, start:stop]
            cell_ll = np.where(n_t > 0, cell_ll, 0.0)
            prob = expit(broken_log_odds(draws["pi0"], cell_ll, all_zero_tasks(n_t, c_t)))
            broken = rng.random(prob.shape) < prob
            out = np.where(broken[..., None, :], 0.0, out)
        return out

    def broken_probability(self, posterior: xr.Dataset, data: EvalData) -> xr.DataArray:
        """Posterior draws of ``P(task broken | parameters, data)``, dims (chain, draw, task)
        (Rao-Blackwellised; 0 for any task with a success)."""
        draws = self._draws(posterior)
        n, c = data.n.values, data.c.values
        out = np.zeros((*draws["pi0"].shape, n.shape[1]))
        if self.broken:
            out = broken_probability_draws(
                lambda sl: self._cell_ll(draws, n, c, sl), draws["pi0"], n, c
            )
        return xr.DataArray(
            out, dims=("chain", "draw", "task"),
            coords={"chain": posterior["chain"].values, "draw": posterior["draw"].values,
                    "task": data.dataset["task"].values},
            name="p_broken",
        )

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """pass@k / pass^k of a new task, (chain, draw, system, k): ``(1 - pi0) [sum_j g_s(j)
        E_b f(sigmoid(x_j - loading b)) + g_s(atom 1)]``, ``b ~ N(0, 1)`` or ``t_df`` (a scale
        mixture of normals), by the interpolated table of :class:`_NodeCurveTable`."""
        draws = self._draws(posterior)
        metric = check_metric(metric)
        k = np.asarray(k, dtype=float)
        g = np.exp(draws["log_g"])
        chains, n_draws, n_sys, _ = g.shape
        out = np.empty((chains, n_draws, n_sys, len(k)))
        inner = slice(1, -1) if self.atoms else slice(None)
        df = self.difficulty_df if self.difficulty == "student-t" else None
        table = _NodeCurveTable(self.logits, k, metric, df)
        block = max(1, _WORK // (len(self.logits) * len(k)))
        for s in range(n_sys):
            for d in range(0, n_draws, block):
                sl = slice(d, d + block)
                curve = table(draws["loading"][:, sl, s])  # E_b f, (C, D', J, K)
                out[:, sl, s] = np.einsum("cdj,cdjk->cdk", g[:, sl, s, inner], curve)
            if self.atoms:  # f(1) = 1 for both metrics; f(0) = 0
                out[:, :, s] += g[:, :, s, -1, None]
        return (1.0 - draws["pi0"])[..., None, None] * out

    def task_log_likelihood(self, posterior: xr.Dataset, data: EvalData) -> np.ndarray:
        """Log-likelihood of each task (its cells and the broken mixture), (chain, draw, task):
        the exact PSIS-LOO unit (cells of a task are coupled by the broken indicator)."""
        draws = self._draws(posterior)
        n, c = data.n.values, data.c.values
        return task_log_likelihood(
            lambda sl: self._cell_ll(draws, n, c, sl), draws["pi0"] if self.broken else None,
            n, c, draws["pi0"].shape,
        )

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Per-cell pieces of the task log-likelihood, (chain, draw, cell): ``log L[s, t]``
        plus an equal share of the task's mixture term, so the pieces sum to the task
        log-likelihood (as :meth:`TaskEffectsModel.cell_log_likelihood`)."""
        draws = self._draws(posterior)
        n, c = data.n.values, data.c.values
        return cell_pieces(
            lambda sl: self._cell_ll(draws, n, c, sl), draws["pi0"] if self.broken else None,
            n, c, draws["pi0"].shape, s_idx, t_idx,
        )


def student_t_log_scale_weights(df: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """The Student-t as a normal scale mixture on a log-scale lattice.

    ``T = S Z`` with ``Z ~ N(0, 1)`` and ``S = W^(-1/2)``, ``W ~ Gamma(df / 2, rate df / 2)``.
    With ``l = log S`` the mixing density is ``p(l) = 2 e^(-2 l) Gamma-pdf(e^(-2 l))``, smooth
    and decaying like ``e^(-df l)`` above and doubly exponentially below, so the trapezoid rule
    on a lattice ``l = m step`` converges exponentially (Trefethen & Weideman, *SIAM Review*
    56, 2014). Returns the integer offsets ``m`` (from ``l = -3`` to ``l = 9``) and weights
    ``p(m step) step`` normalised to 1 (the truncated mass is below 1e-10 for ``df >= 1``).
    """
    offsets = np.arange(int(np.floor(-3.0 / step)), int(np.ceil(9.0 / step)) + 1)
    ell = offsets * step
    w = np.exp(-2.0 * ell)
    log_pdf = (np.log(2.0) - 2.0 * ell + (df / 2.0) * np.log(df / 2.0) - gammaln(df / 2.0)
               + (df / 2.0 - 1.0) * np.log(w) - df * w / 2.0)
    weights = np.exp(log_pdf) * step
    return offsets, weights / weights.sum()


class _NodeCurveTable:
    """``E[f(sigmoid(x_j + spread B))]`` for the grid's nodes ``x_j``, any spread, and
    ``B ~ N(0, 1)`` or a Student-t: linear interpolation in ``log spread`` of a table on a
    lattice of step ``STEP`` from ``1e-4`` to ``1e4``.

    Normal: the table is :func:`~evalbayes.models.logit_normal.normal_rate_curve` (error
    < 1e-7). Student-t: the normal table mixed over the t's scale on the same lattice
    (:func:`student_t_log_scale_weights`), i.e. a discrete convolution along the table; spreads
    beyond the lattice take its last column (the curve's limit to ~1e-4 there). Interpolation
    error < 1e-5 (tests against ``scipy.integrate.quad``). Spreads below ``1e-4`` take the
    first column (``f(sigmoid(x_j))`` to within 1e-8)."""

    LOW, HIGH, STEP = np.log(1e-4), np.log(1e4), 0.0135

    def __init__(self, logits: np.ndarray, k: np.ndarray, metric: str,
                 df: float | None = None) -> None:
        points = int(np.ceil((self.HIGH - self.LOW) / self.STEP)) + 1
        self.points = points
        spread = np.exp(self.LOW + self.STEP * np.arange(points))
        # (J, points, K): the symmetric B makes the sign of the shift irrelevant
        values = normal_rate_curve(logits[:, None], spread[None, :], k, metric)
        if df is not None:
            offsets, weights = student_t_log_scale_weights(df, self.STEP)
            mixed = np.zeros_like(values)
            base = np.arange(points)
            for m, w in zip(offsets, weights, strict=True):
                mixed += w * values[:, np.clip(base + m, 0, points - 1)]
            values = mixed
        self.values = values

    def __call__(self, spread: np.ndarray) -> np.ndarray:
        """Values at ``spread`` (any shape ``A``): shape ``(*A, J, K)``."""
        where = (np.log(np.maximum(spread, 1e-300)) - self.LOW) / self.STEP
        where = np.clip(where, 0.0, self.points - 1.0)
        low = np.minimum(where.astype(int), self.points - 2)
        frac = (where - low)[..., None, None]
        below = np.moveaxis(self.values[:, low], 0, -2)  # (*A, J, K)
        above = np.moveaxis(self.values[:, low + 1], 0, -2)
        return below + frac * (above - below)
