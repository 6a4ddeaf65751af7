"""Beta-Binomial hierarchy of per-task success rates.

For system ``s`` and task ``t`` (tasks drawn from a population; Gelman et al. 2013, ch. 5)::

    p[s, t] ~ Beta(mu[s] * kappa[s], (1 - mu[s]) * kappa[s])
    c[s, t] ~ Binomial(n[s, t], p[s, t])

``mu[s]`` is the mean success rate over the population of tasks, ``kappa[s]`` the
concentration (``kappa < 2`` allows U-shaped task distributions, common in agent benchmarks:
most tasks nearly always or nearly never solved).

The model is sampled *collapsed*: ``p`` is integrated out, so the likelihood of a cell is
``BetaBinomial(c | n, mu kappa, (1 - mu) kappa)``, and identical ``(n, c)`` cells of a system
are aggregated into weights, so one gradient costs O(unique cells) whatever the number of
tasks. The latent rates are recovered exactly afterwards from their conjugate posterior,
``p[s, t] | mu, kappa, data ~ Beta(mu kappa + c, (1 - mu) kappa + n - c)``, and pass@k /
pass^k are computed per draw in closed form (Rao-Blackwellised, :mod:`evalbayes.metrics._pass`).

Pooling
-------
``"partial"`` (default)
    The hierarchy above.
``"none"``
    Independent ``p[s, t] ~ Beta(a0, b0)`` per task (default Beta(1, 1)): the analytic
    per-question posterior of "Don't Pass@k" (Hariri et al. 2025). Only the
    ``"tasks"`` estimand exists: there is no model of new tasks.
``"complete"``
    One ``p[s] ~ Beta(a0, b0)`` per system shared by all its tasks (every trial exchangeable:
    the episode-level view that is too narrow for the population; Miller 2024).

Priors (``pooling="partial"``)
------------------------------
``hyperprior="independent"`` (default): per system ``mu ~ Beta(1, 1)`` and
``log kappa ~ Normal(1, 1.5)``; ``mu`` is sampled on the logit scale with the exactly
transformed Beta density, so that ``(1 - mu) kappa`` stays accurate next to 0 and 1.
The prior on ``log kappa`` puts 16 % of its mass below ``kappa = 0.6`` (U-shaped
populations) and 10 % above ``kappa = 18`` (tight ones); it was chosen by the frequentist
calibration study in ``benchmarks/calibration/calibration_beta_binomial.py`` (results in
``benchmarks/README.md``).

``hyperprior="shared"``: systems borrow strength, ``logit mu[s] ~ Normal(m_mu, s_mu)`` and
``log kappa[s] ~ Normal(m_k, s_k)`` (non-centred) with ``m_mu ~ Normal(0, 1.5)``,
``s_mu ~ HalfNormal(1)``, ``m_k ~ Normal(log_kappa_prior)``, ``s_k ~ HalfNormal(1)``.
Useful with many systems on few tasks.

Population comparisons (``population``, ``pooling="partial"``)
----------------------------------------------------------------
Systems have their own ``mu, kappa``, so the population estimand's draws of two systems are
independent, while both ran the same tasks. ``population="paired"`` (default) keeps each
system's draws of the closed-form population curve and reorders them, per system and ``k``,
to the ranks of a Dirichlet-process posterior of the shared tasks (the same weights for every
system on the observed tasks, Rubin 1981; independent on ``unseen_tasks`` tasks' weight of
unseen ones, Ferguson 1973; :func:`~evalbayes.models._base.unseen_task_reference`) over each
task's posterior mean ``E[f(p) | data]`` (the draws' mean of the conjugate
:meth:`BetaBinomialModel.row_expectations`; :attr:`BetaBinomialModel.pairing_reference`):
each system's interval is unchanged, differences are paired (Terminal-Bench top two: 1.62x
the paired task bootstrap's width unpaired; ``benchmarks/validity/`` for the paired
figures). ``"independent"``: the draws as they are. ``"bayesian-bootstrap"``: the bootstrap
itself. Template: :meth:`Model.curve`, :func:`~evalbayes.models._base.couple_to_reference`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import xarray as xr

from evalbayes._core.names import (
    SAMPLER_DEFAULTS,
    UNSET,
    Method,
    Unset,
    check_count,
    check_coupling,
    check_metric,
    check_nonnegative,
    check_population,
    check_seed,
    pick_seed,
)
from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig, padded_size
from evalbayes.metrics._pass import beta_curve, prob_curve
from evalbayes.models._base import (
    Model,
    ModelInputs,
    RowExpectations,
    binomial_log_choose,
    population_pairing_of,
)
from evalbayes.models.beta_binomial._exact import exact_posterior

__all__ = ["BetaBinomialModel"]

Pooling = Literal["partial", "none", "complete"]
Hyperprior = Literal["independent", "shared"]


@dataclass(frozen=True)
class _Cells:
    """Unique (system, n, c) cells of observed data with their multiplicities."""

    system: np.ndarray  # system index per unique cell
    n: np.ndarray
    c: np.ndarray
    weight: np.ndarray  # number of tasks with this (system, n, c)
    task_cell: np.ndarray  # (system, task) -> index into the unique cells, -1 if missing


def _unique_cells(data: EvalData) -> _Cells:
    n = data.n.values
    c = data.c.values
    n_sys, n_task = n.shape
    sys_idx = np.repeat(np.arange(n_sys), n_task)
    flat_n, flat_c = n.ravel(), c.ravel()
    observed = flat_n > 0
    keys = np.stack([sys_idx[observed], flat_n[observed], flat_c[observed]], axis=1)
    uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    task_cell = np.full(n_sys * n_task, -1, dtype=np.int64)
    task_cell[observed] = inverse.ravel()
    return _Cells(
        system=uniq[:, 0],
        n=uniq[:, 1],
        c=uniq[:, 2],
        weight=counts.astype(np.float64),
        task_cell=task_cell.reshape(n_sys, n_task),
    )


PRODUCT_MAX_TRIALS = 256
LOG_KAPPA_LIMIT = 16.0


def _log_beta_binomial_ratio(
    n: Any, c: Any, mu_logit: Any, log_kappa: Any, n_max: int
) -> Any:
    """``log B(a + c, b + n - c) - log B(a, b)`` with ``a = mu kappa``, ``b = (1 - mu) kappa``.

    The Beta-Binomial log pmf without its constant ``log C(n, c)``, as the finite sums

        sum_{i<c} log(mu + i/kappa) + sum_{j<n-c} log(1 - mu + j/kappa)
        - sum_{l<n} log(1 + l/kappa)

    (the ``log kappa`` terms cancel). Unlike differences of ``gammaln``, which lose all
    precision once kappa is large (at kappa ~ 1e17 the error is O(10) nats, enough to send a
    chain into a region of noise where its step size collapses), every term here stays
    accurate for any kappa, and the limit kappa -> infinity is the Binomial. Cost: O(n_max)
    per cell, so it is used for cells of up to 256 trials.
    """
    import pytensor.tensor as pt

    i = pt.arange(n_max)[None, :]
    inv_kappa = pt.exp(-log_kappa)[:, None]
    mu = pt.sigmoid(mu_logit)[:, None]
    one_minus_mu = pt.sigmoid(-mu_logit)[:, None]
    c_col, n_col = c[:, None], n[:, None]
    successes = pt.switch(i < c_col, pt.log(mu + i * inv_kappa), 0.0)
    failures = pt.switch(i < n_col - c_col, pt.log(one_minus_mu + i * inv_kappa), 0.0)
    trials = pt.switch(i < n_col, pt.log1p(i * inv_kappa), 0.0)
    return successes.sum(axis=1) + failures.sum(axis=1) - trials.sum(axis=1)


FAST_CURVE_MIN_TASK_DRAWS = 5_000_000
"""Draws x observed cells from which the "tasks" curve uses the compiled kernel."""


@dataclass(frozen=True)
class BetaBinomialModel(Model):
    """Beta-Binomial hierarchy over tasks, sampled collapsed (see module docstring).

    Parameters
    ----------
    pooling : {"partial", "none", "complete"}
        Hierarchy over tasks (default), independent tasks, or one rate per system.
    hyperprior : {"independent", "shared"}
        Whether systems' ``mu`` and ``kappa`` have fixed priors (default) or a shared
        hierarchical prior. Only for ``pooling="partial"``.
    mu_prior : (float, float)
        Beta prior of ``mu`` (independent hyperprior). Default Beta(1, 1).
    log_kappa_prior : (float, float)
        Normal(mean, sd) prior of ``log kappa``. Default Normal(1, 1.5).
    task_prior : (float, float)
        Beta(a0, b0) prior of each rate for ``pooling="none"`` / ``"complete"``.
    population : {"paired", "independent", "bayesian-bootstrap"}
        How the population estimand links systems that ran the same tasks (module
        docstring); ``pooling="partial"`` only.
    unseen_tasks : float
        ``population="paired"``: the weight, in tasks, of the tasks not yet seen in the
        pairing (Dirichlet-process concentration ``alpha >= 0``,
        :func:`~evalbayes.models._base.unseen_task_reference`; 0: the Bayesian bootstrap of
        the observed tasks). Default 4 (``benchmarks/validity/``, paired comparisons: at
        10 / 20 / 50 / 100 tasks coverage 0.96 / 0.95 / 0.96 / 0.96, width 1.11 / 1.06 /
        1.02 / 1.01x the paired task bootstrap's; with 0, 0.86 / 0.91 / 0.95 / 0.96).
        With ``coupling="copula"``: the copula's prior weight, in
        tasks, of uncorrelated results (> 0).
    coupling : {"dirichlet", "copula", "dirichlet-copula"}
        ``population="paired"``: the pairing's reference, as the rate grid's ``coupling``
        (:class:`~evalbayes.models.RateGridModel`): the Dirichlet-process reference with
        independent unseen tasks (default), a Gaussian copula of posterior correlation, or
        the former with its unseen tasks coupled by the latter.
    """

    name: ClassVar[str] = "beta-binomial"
    keeps_curves: ClassVar[bool] = True

    pooling: Pooling = "partial"
    hyperprior: Hyperprior = "independent"
    mu_prior: tuple[float, float] = (1.0, 1.0)
    log_kappa_prior: tuple[float, float] = (1.0, 1.5)
    task_prior: tuple[float, float] = (1.0, 1.0)
    population: str = "paired"
    unseen_tasks: float = 4.0
    coupling: str = "dirichlet"

    def __post_init__(self) -> None:
        check_population(self.population)
        check_nonnegative(self.unseen_tasks, "unseen_tasks")
        check_coupling(self.coupling)
        if self.coupling == "copula" and self.unseen_tasks == 0:
            raise ValueError("coupling='copula' needs unseen_tasks > 0: there it is the prior "
                             "weight, in tasks, of uncorrelated results in the copula")
        if self.pooling not in ("partial", "none", "complete"):
            raise ValueError(
                f"pooling must be 'partial', 'none' or 'complete', got {self.pooling!r}"
            )
        if self.hyperprior not in ("independent", "shared"):
            raise ValueError(
                f"hyperprior must be 'independent' or 'shared', got {self.hyperprior!r}"
            )
        for label, pair in (("mu_prior", self.mu_prior), ("task_prior", self.task_prior)):
            if len(pair) != 2 or min(pair) <= 0:
                raise ValueError(f"{label} must be two positive numbers, got {pair!r}")
        if len(self.log_kappa_prior) != 2 or self.log_kappa_prior[1] <= 0:
            raise ValueError(f"log_kappa_prior must be (mean, sd > 0), got {self.log_kappa_prior}")

    # ------------------------------------------------------------------ simulation
    def simulate_prior(
        self,
        systems: int,
        tasks: int,
        trials: int,
        seed: int = 0,
        *,
        random_seed: int | Unset = UNSET,
    ) -> tuple[EvalData, dict[str, np.ndarray]]:
        """Draw hyperparameters from the prior and counts from the model (for SBC).

        Returns the data (``systems x tasks`` cells of ``trials`` trials) and the true
        ``mu`` and ``kappa`` per system. ``pooling="partial"`` with independent hyperpriors.
        ``random_seed`` is PyMC's name for ``seed`` (give either).
        """
        seed = check_seed(pick_seed(seed, random_seed))
        if self.pooling != "partial" or self.hyperprior != "independent":
            raise ValueError("simulate_prior needs pooling='partial', hyperprior='independent'")
        rng = np.random.default_rng(seed)
        mu = rng.beta(*self.mu_prior, size=systems)
        kappa = np.exp(rng.normal(*self.log_kappa_prior, size=systems))
        a = (mu * kappa)[:, None]
        b = ((1 - mu) * kappa)[:, None]
        # Beta draws with tiny parameters can underflow to NaN; they are then a point mass at
        # 0 or 1 with probabilities mu and 1 - mu.
        p = rng.beta(a, b, size=(systems, tasks))
        bad = np.isnan(p)
        p[bad] = rng.random(bad.sum()) < np.broadcast_to(mu[:, None], p.shape)[bad]
        n = np.full((systems, tasks), trials)
        return EvalData.from_arrays(n, rng.binomial(n, p)), {"mu": mu, "kappa": kappa}

    # ------------------------------------------------------------------ inference
    @property
    def needs_mcmc(self) -> bool:
        return self.pooling == "partial"

    def estimands(self) -> tuple[str, ...]:
        return ("tasks",) if self.pooling == "none" else ("tasks", "population")

    @property
    def population_pairing(self) -> str:
        """The ``population`` setting's pairing with partial pooling; none otherwise (one rate
        per system, or no population)."""
        return population_pairing_of(self.population) if self.pooling == "partial" else "none"

    @property
    def pairing_concentration(self) -> float:
        """``unseen_tasks`` (the template's :meth:`Model.pairing_concentration`)."""
        return float(self.unseen_tasks)

    @property
    def pairing_coupling(self) -> str:
        """``coupling`` (the template's :meth:`Model.pairing_coupling`)."""
        return self.coupling

    @property
    def pairing_reference(self) -> str:
        """``"posterior-mean"``: the pairing's ranks weigh each task's posterior mean
        ``E[f(p[s, t]) | data]`` (:func:`~evalbayes.models._base.posterior_mean_rows`).
        The per-draw means ``(mu kappa + c) / (kappa + 1)`` (pass@1) move with each system's
        own ``(mu, kappa)``, which with few trials per task the data barely pin down; ranked,
        that noise decoupled the systems, and the paired interval was 1.21-1.25x the paired
        task bootstrap's at every N (real benchmarks, ``benchmarks/validity/``), against
        0.99-1.06x with the posterior means."""
        return "posterior-mean"

    @property
    def description(self) -> str:
        return f"{self.name} with pooling={self.pooling!r}"

    @property
    def has_exact_posterior(self) -> bool:
        """Partial pooling with independent hyperpriors: a 2-D posterior per system, drawn
        exactly by quadrature (``method="exact"``, :mod:`.beta_binomial_grid`)."""
        return self.pooling == "partial" and self.hyperprior == "independent"

    @property
    def default_method(self) -> Method:
        """``"exact"`` where the posterior is drawn exactly (conjugate for ``pooling="none"``
        and ``"complete"``, quadrature for the independent hierarchy), else nutpie."""
        exact = self.pooling != "partial" or self.has_exact_posterior
        return "exact" if exact else SAMPLER_DEFAULTS["method"]

    def sample(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """Partial pooling: exact quadrature draws (``method="exact"``) or MCMC on the
        collapsed hierarchy; otherwise exact conjugate draws."""
        if self.pooling != "partial":
            return self._sample_conjugate(data, sampler)
        one_trial = [str(s) for s, n_max in zip(data.systems, data.n.values.max(axis=1),
                                                strict=True) if n_max <= 1]
        if one_trial:
            # shared hyperprior: kappa[s] still borrows from the systems with repeated trials
            source = ("its prior" if self.hyperprior == "independent" else
                      "what the shared hyperprior learns from the other systems' repeated "
                      "trials (its prior when none has any)")
            warnings.warn(
                f"{self.name}: {one_trial} ran at most one trial per task, so their own data "
                "cannot inform their concentration kappa (with n = 1, BetaBinomial(c | 1, "
                "mu kappa, (1 - mu) kappa) = Bernoulli(mu) for every kappa): its posterior is "
                f"{source}. pass@1 is unaffected; pass@k for k > 1, pass^k and the population "
                "interval rest on that. Collect repeated trials to learn it.",
                UserWarning,
                stacklevel=3,  # sample <- Model.fit <- the caller of fit
            )
        if sampler.method != "exact":
            return super().sample(data, sampler)
        if not self.has_exact_posterior:
            raise ValueError("method='exact' needs pooling='partial' with "
                             "hyperprior='independent' (the shared hyperprior couples the "
                             "systems); use nutpie")
        return exact_posterior(data, self.mu_prior, self.log_kappa_prior,
                               draws=sampler.draws, chains=sampler.chains, seed=sampler.seed)

    def prior_draws(self, data: EvalData, draws: int = 1000, seed: int = 0) -> xr.Dataset:
        """Prior draws in NumPy where PyMC cannot forward-sample the graph (the independent
        hyperprior's ``mu`` is a flat variable with its Beta density as a potential):
        ``mu ~ Beta(*mu_prior)``, ``log kappa ~ N(*log_kappa_prior)`` per system; complete
        pooling ``p ~ Beta(*task_prior)``. The shared hyperprior uses the template."""
        if self.pooling == "partial" and self.hyperprior == "shared":
            return super().prior_draws(data, draws, seed)
        rng = np.random.default_rng(seed)
        shape = (1, check_count(draws, "draws"), len(data.systems))
        coords = {"chain": [0], "draw": np.arange(shape[1]),
                  "system": data.dataset["system"].values}
        dims = ("chain", "draw", "system")
        if self.pooling != "partial":
            return xr.Dataset({"p": (dims, rng.beta(*self.task_prior, size=shape))},
                              coords=coords)
        mu = rng.beta(*self.mu_prior, size=shape)
        log_kappa = rng.normal(*self.log_kappa_prior, size=shape)
        return xr.Dataset(
            {"mu": (dims, mu), "mu_logit": (dims, np.log(mu) - np.log1p(-mu)),
             "kappa": (dims, np.exp(log_kappa)), "log_kappa": (dims, log_kappa)},
            coords=coords,
        )

    def _sample_conjugate(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """Exact posterior draws for ``pooling="none"`` and ``"complete"``."""
        rng = np.random.default_rng(sampler.seed)
        a0, b0 = self.task_prior
        shape = (sampler.chains, sampler.draws)
        n, c = data.n.values, data.c.values
        coords = {"chain": np.arange(shape[0]), "draw": np.arange(shape[1])}
        if self.pooling == "none":
            p = rng.beta(a0 + c, b0 + n - c, size=(*shape, *n.shape))
            da = xr.DataArray(
                p,
                dims=("chain", "draw", "system", "task"),
                coords={**coords, "system": data.dataset["system"].values,
                        "task": data.dataset["task"].values},
            )
        else:
            ct, nt = c.sum(axis=1), n.sum(axis=1)
            p = rng.beta(a0 + ct, b0 + nt - ct, size=(*shape, n.shape[0]))
            da = xr.DataArray(
                p,
                dims=("chain", "draw", "system"),
                coords={**coords, "system": data.dataset["system"].values},
            )
        return {"posterior": xr.Dataset({"p": da})}

    def inputs(self, data: EvalData) -> ModelInputs:
        """Unique ``(system, n, c)`` cells with weights, padded to a cached size."""
        cells = _unique_cells(data)
        size = padded_size(len(cells.n))
        pad = size - len(cells.n)
        values = {
            "cell_n": np.concatenate([cells.n, np.zeros(pad, np.int64)]),
            "cell_c": np.concatenate([cells.c, np.zeros(pad, np.int64)]),
            "cell_w": np.concatenate([cells.weight, np.zeros(pad)]),
            "cell_s": np.concatenate([cells.system, np.zeros(pad, np.int64)]),
        }
        n_max = padded_size(int(cells.n.max()))
        return ModelInputs(values, (len(data.systems), size, n_max))

    def posterior_vars(self, data: EvalData) -> list[str]:
        keep = ["mu", "mu_logit", "kappa", "log_kappa"]
        if self.hyperprior == "shared":
            keep += ["mu_logit_loc", "mu_logit_scale", "log_kappa_loc", "log_kappa_scale"]
        return keep

    def build(self, inputs: ModelInputs) -> Any:
        import pymc as pm
        import pytensor.tensor as pt

        n_systems, size, n_max = inputs.shape_key
        values = inputs.values
        coords = {"system": [f"s{i}" for i in range(n_systems)], "cell": np.arange(size)}
        with pm.Model(coords=coords) as model:
            cell_n = pm.Data("cell_n", values["cell_n"], dims="cell")
            cell_c = pm.Data("cell_c", values["cell_c"], dims="cell")
            cell_w = pm.Data("cell_w", values["cell_w"], dims="cell")
            cell_s = pm.Data("cell_s", values["cell_s"], dims="cell")
            k_mean, k_sd = self.log_kappa_prior
            if self.hyperprior == "independent":
                # mu ~ Beta(a0, b0), sampled as x = logit(mu) with the exactly transformed
                # density a0 log sigmoid(x) + b0 log sigmoid(-x) (+ const). Working on x keeps
                # mu kappa and (1 - mu) kappa = kappa sigmoid(-x) accurate when mu is within
                # 1e-16 of 0 or 1, where 1 - mu underflows and the logp turned NaN (seen as a
                # chain whose step size collapsed, every draw divergent).
                a0, b0 = self.mu_prior
                mu_logit = pm.Flat("mu_logit", dims="system")
                pm.Potential(
                    "mu_prior", -(a0 * pt.softplus(-mu_logit) + b0 * pt.softplus(mu_logit))
                )
                log_kappa = pm.Normal("log_kappa", k_mean, k_sd, dims="system")
            else:
                mu_loc = pm.Normal("mu_logit_loc", 0.0, 1.5)
                mu_scale = pm.HalfNormal("mu_logit_scale", 1.0)
                mu_z = pm.Normal("mu_logit_z", 0.0, 1.0, dims="system")
                mu_logit = pm.Deterministic("mu_logit", mu_loc + mu_scale * mu_z, dims="system")
                k_loc = pm.Normal("log_kappa_loc", k_mean, k_sd)
                k_scale = pm.HalfNormal("log_kappa_scale", 1.0)
                k_z = pm.Normal("log_kappa_z", 0.0, 1.0, dims="system")
                log_kappa = pm.Deterministic("log_kappa", k_loc + k_scale * k_z, dims="system")
            pm.Deterministic("mu", pt.sigmoid(mu_logit), dims="system")
            kappa = pm.Deterministic("kappa", pt.exp(log_kappa), dims="system")
            if n_max <= PRODUCT_MAX_TRIALS:
                logp = _log_beta_binomial_ratio(
                    cell_n, cell_c, mu_logit[cell_s], log_kappa[cell_s], n_max
                )
            else:
                # Many trials per cell: the O(n) sums would dominate, so use gammaln
                # differences, and past kappa = e^16 (where they lose precision and the prior
                # has no mass) the Binomial limit, which keeps the gradient pointing home.
                alpha = (kappa * pt.sigmoid(mu_logit))[cell_s]
                beta = (kappa * pt.sigmoid(-mu_logit))[cell_s]
                exact = pm.logp(pm.BetaBinomial.dist(n=cell_n, alpha=alpha, beta=beta), cell_c)
                limit = pm.logp(pm.Binomial.dist(n=cell_n, p=pt.sigmoid(mu_logit)[cell_s]), cell_c)
                logp = pt.switch(log_kappa[cell_s] > LOG_KAPPA_LIMIT, limit, exact)
            pm.Potential("loglik", (cell_w * logp).sum())
        return model

    # ------------------------------------------------------------------ derived
    def _ab(self, posterior: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
        """Beta parameters ``(mu kappa, (1 - mu) kappa)`` per draw, from logit(mu)."""
        from scipy.special import expit  # imported when used (issue 26)

        x = posterior["mu_logit"].transpose("chain", "draw", "system").values
        kappa = posterior["kappa"].transpose("chain", "draw", "system").values
        return kappa * expit(x), kappa * expit(-x)

    def _tasks_curves(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metrics: tuple[str, ...],
        per_task: bool,
        seed: int,
        weights: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """The "tasks" estimand; large partial-pooling grids go to the compiled kernel.

        With ``pooling="partial"``, no per-task output and at least
        :data:`FAST_CURVE_MIN_TASK_DRAWS` (draws x observed cells), the task average is drawn
        by :func:`~._tasks_curve.tasks_curves_fast`: the same exact conjugate draws of
        every rate, fused into one compiled pass (no rates array; 14x faster on 4000 draws x
        100 systems x 500 tasks x 11 k on an idle 2-core machine, ``benchmarks/speed/scale.md``),
        from its own per-(draw, system) streams, pass@k and pass^k from the same rate draws.
        Smaller grids keep the NumPy path, which needs no compilation (the kernel's first use
        compiles for several seconds, then comes from numba's on-disk cache). Task
        ``weights`` (the population's Bayesian bootstrap) take the NumPy path.
        """
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        size = chains * draws * int((data.n.values > 0).sum())
        if (per_task or weights is not None or self.pooling != "partial"
                or size < FAST_CURVE_MIN_TASK_DRAWS):
            return super()._tasks_curves(posterior, data, k, metrics, per_task, seed, weights)
        from evalbayes.models.beta_binomial._tasks_curve import (
            tasks_curves_fast,  # numba: imported when needed
        )

        a, b = self._ab(posterior)
        cells = _unique_cells(data)
        return tasks_curves_fast(a, b, cells.system, cells.n, cells.c, cells.weight, k,
                                 metrics, seed)

    def rates(
        self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice
    ) -> np.ndarray:
        """Draws of ``p[s, t]`` for a slice of tasks, ``(chain, draw, system, task)``.

        Partial pooling: exact conjugate draws ``p ~ Beta(a + c, b + n - c)`` given each
        hyperparameter draw (a missing cell, ``n = 0``, gets a draw from the population
        Beta), seeded per system and chunk (``[seed, system, first task]``). The estimand
        "these tasks" is a function of the latent rates, so its posterior needs their draws:
        a per-draw conditional expectation (:meth:`expected_curve`) has the right mean but
        leaves out the trial noise, which is all the uncertainty this estimand has.
        """
        n, c = data.n.values[:, tasks], data.c.values[:, tasks]
        if self.pooling == "none":
            return posterior["p"].transpose("chain", "draw", "system", "task").values[..., tasks]
        if self.pooling == "complete":
            p = posterior["p"].transpose("chain", "draw", "system").values
            return np.broadcast_to(p[..., None], (*p.shape, n.shape[1])).copy()
        a, b = self._ab(posterior)
        out = np.empty((*a.shape, n.shape[1]))
        for s in range(a.shape[2]):
            rng = np.random.default_rng([seed, s, tasks.start])
            out[:, :, s] = rng.beta(a[..., s, None] + c[s], b[..., s, None] + (n[s] - c[s]))
        return out

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """Closed form over the population Beta, ``1 - B(a, b + k) / B(a, b)`` (pass@k)."""
        if self.pooling == "complete":
            return prob_curve(
                posterior["p"].transpose("chain", "draw", "system").values, k, check_metric(metric)
            )
        a, b = self._ab(posterior)
        return beta_curve(a, b, k, check_metric(metric))

    def row_expectations(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> RowExpectations | None:
        """Conjugate ``E[f(p) | mu, kappa, n, c] = 1 - B(a + c, b + n - c + k) / B(a + c,
        b + n - c)`` (pass@k; ``B(a + c + k, b + n - c) / B(a + c, b + n - c)`` for pass^k)
        per draw and distinct ``(system, n, c)``, for the paired population's ranks (template
        hook); partial pooling only."""
        if self.pooling != "partial":
            return None
        a, b = self._ab(posterior)
        cells = _unique_cells(data)
        a_post = a[..., cells.system] + cells.c
        b_post = b[..., cells.system] + (cells.n - cells.c)
        return RowExpectations(beta_curve(a_post, b_post, k, check_metric(metric)),
                               cells.task_cell)

    def expected_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> xr.DataArray:
        """Rao-Blackwellised E[average of f(p_t) | mu, kappa, data] per draw (closed form).

        ``1 - B(a + c, b + n - c + k) / B(a + c, b + n - c)`` (pass@k) averaged over observed
        tasks, computed over unique ``(n, c)`` cells (memory: draws x unique cells). Its mean
        over draws is the posterior mean of the "tasks" estimand without Monte Carlo error
        from p; its spread is *not* that estimand's posterior spread (the trial noise is
        integrated out). ``pooling="partial"`` only.
        """
        expected = self.row_expectations(posterior, data, k, metric)
        if expected is None:
            raise ValueError("expected_curve is defined for pooling='partial'")
        values = expected.values
        cells = _unique_cells(data)
        n_sys = data.n.shape[0]
        out = np.empty((*values.shape[:2], n_sys, len(k)))
        for s in range(n_sys):
            mine = cells.system == s
            w_s = cells.weight[mine]
            out[..., s, :] = np.einsum("cdrk,r->cdk", values[:, :, mine], w_s) / w_s.sum()
        return xr.DataArray(
            out,
            dims=("chain", "draw", "system", "k"),
            coords={
                "chain": posterior["chain"].values,
                "draw": posterior["draw"].values,
                "system": data.dataset["system"].values,
                "k": k,
            },
            name=metric,
        )

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Pointwise log-likelihood of each observed cell.

        ``pooling="partial"``: the collapsed Beta-Binomial pmf (the predictive density of a
        cell's count given the hyperparameters); otherwise the Binomial pmf of the drawn p.
        """
        from scipy.special import betaln  # imported when used (issue 26)

        n, c = data.n.values[s_idx, t_idx], data.c.values[s_idx, t_idx]
        log_choose = binomial_log_choose(n, c)
        if self.pooling == "partial":
            a, b = self._ab(posterior)
            a_c, b_c = a[..., s_idx], b[..., s_idx]
            values = log_choose + betaln(a_c + c, b_c + n - c) - betaln(a_c, b_c)
        else:
            if self.pooling == "none":
                p_all = posterior["p"].transpose("chain", "draw", "system", "task").values
                p = p_all[..., s_idx, t_idx]
            else:
                p = posterior["p"].transpose("chain", "draw", "system").values[..., s_idx]
            with np.errstate(divide="ignore"):
                values = log_choose + c * np.log(p) + (n - c) * np.log1p(-p)
        return values
