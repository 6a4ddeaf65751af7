"""``Posterior``: the immutable result of fitting a model, and ``load`` to restore one.

A posterior holds the model configuration, the data, the sampler settings and an
:class:`xarray.DataTree` with the groups ``posterior``, ``sample_stats`` (MCMC only) and
``observed_data`` (the counts). Derived quantities are xarray objects with the fixed dims
``chain, draw, system, task, k``.

Two estimands are always named (the distinction of conditional and population inference
in hierarchical models, Gelman et al. 2013, *Bayesian Data Analysis*, ch. 5; for
evaluations, Miller 2024, "Adding error bars to evals"):

``"tasks"``
    how well on *these* tasks: the average over the observed tasks of each task's pass@k,
    uncertain only through trial noise;
``"population"``
    how well on *tasks like these*: the pass@k of a new task drawn from the population,
    uncertain through task sampling too (wider, often several times).
"""

from __future__ import annotations

import contextlib
import html
import itertools
import json
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.files import write_bytes
from evalbayes._core.intervals import credible_interval
from evalbayes._core.lazy_dask import dask_detection_deferred
from evalbayes._core.names import (
    METRICS,
    UNSET,
    IntervalKind,
    Unset,
    check_k,
    check_metric,
    check_seed,
    pick_seed,
)
from evalbayes._core.rendering import Rendered, frame_html, frame_text, jsonable
from evalbayes._version import __version__
from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig, config_hash
from evalbayes.io._common import OneTaskWarning
from evalbayes.metrics._attempts import g_pass_m
from evalbayes.results._diagnostics import (
    ConvergenceWarning,
    Diagnostics,
    convergence_diagnostics,
    warn_unconverged,
)
from evalbayes.results._extrapolation import extrapolated
from evalbayes.results._fingerprint import fit_fingerprint

__all__ = ["FIT_FORMAT", "FittedModel", "Posterior", "PosteriorPredictiveCheck"]

FIT_FORMAT = "evalbayes-posterior/2"
#: the saved fit's group of per-parameter R-hat and ESS (:meth:`Posterior.save`), and its
#: ``statistic`` coordinate
CONVERGENCE_GROUP = "convergence"
CONVERGENCE_STATISTICS = ("rhat", "ess_bulk", "ess_tail")
#: the saved fit's group of curve draws at :data:`SAVED_CURVE_K` (:meth:`Posterior.save`)
SAVED_CURVES_GROUP = "curves"
#: the attempts whose pass@k and pass^k draws a saved fit keeps, every estimand: what
#: ``summary`` and ``compare`` show by default, read back instead of drawn again
SAVED_CURVE_K = (1,)
#: the sizes of the fits that keep their curve draws, in draws (chains x draws) x observed
#: cells, measured on 2 cores against the fit without them (2026-12-07, same runs): from 1e7
#: (below, e.g. Terminal-Bench's 4000 x 1,040, a reader draws them in under a second, most
#: of it loading the compiled kernel, and saving them cost the fit as much, 1.4 -> 2.4 s)
#: through SWE-bench Verified's 4000 x 61,500 = 2.5e8 (~5 CPU-s of exact Beta variates that
#: every summary paid) up to 1e9 (a 1,000 x 2,000 leaderboard's 8e9: minutes at save)
SAVED_CURVES_CELL_DRAWS = (1e7, 1e9)
#: ... and at most this many draws x distinct (system, n, c) rows: the work that is per row
#: (each row's conditional over the rate grid, the pairing's row expectations) does not get
#: cheaper for being kept, and HumanEval+'s 4000 x 8,036 rows = 3.2e7 doubled its fit
#: (18.9 -> 35.7 s); SWE-bench Verified has 4000 x 246 = 1e6
SAVED_CURVES_MAX_ROW_DRAWS = 1e7
PPC_MAX_COUNT_BINS = 100  # Posterior.ppc: count bins up to this n, rate bins above


class FittedModel(Protocol):
    """What a posterior needs of the model that produced it (models implement it)."""

    @property
    def name(self) -> str: ...

    @property
    def needs_mcmc(self) -> bool: ...

    def to_config(self) -> dict[str, Any]: ...

    def estimands(self) -> tuple[str, ...]: ...

    def curve(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metric: str,
        estimand: str,
        per_task: bool,
        seed: int = 0,
    ) -> xr.DataArray: ...

    def g_pass_curve(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        m: np.ndarray,
        estimand: str,
        seed: int = 0,
    ) -> np.ndarray: ...

    def success_prob(self, posterior: xr.Dataset, data: EvalData, seed: int) -> xr.DataArray: ...

    def log_likelihood(self, posterior: xr.Dataset, data: EvalData) -> xr.DataArray: ...

    def posterior_predictive(
        self, posterior: xr.Dataset, data: EvalData, seed: int
    ) -> xr.DataArray: ...



@contextlib.contextmanager
def _without_distributed() -> Any:
    """xarray's writer asks which Dask scheduler is active by importing ``distributed``
    (dask's ``get_scheduler`` and xarray's lock both do; ~0.35 CPU-s, a fifth of a small
    fit's start-up); with ``distributed`` not imported no Dask client can exist in this
    process, so the answer is known: the import is answered "not installed"
    (``sys.modules[name] = None``, which both catch) for the write only. (Another thread
    that imports ``distributed`` during those milliseconds would be told the same; start
    a Dask client before saving from threads.) Where ``dask`` itself is not imported and
    xarray's Dask checks are deferred (:mod:`evalbayes._core.lazy_dask`, so that no "not
    installed" answer is cached), no Dask array or scheduler exists either: ``dask`` is
    answered the same (~0.1 CPU-s), and xarray writes under a thread lock, its choice for "no
    scheduler"."""
    names: tuple[str, ...] = ("distributed", "dask.distributed")
    if "dask" not in sys.modules and dask_detection_deferred():  # dask too: no answer is cached
        names = (*names, "dask")
    blocked = [name for name in names if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _local_writes() -> contextlib.AbstractContextManager[Any]:
    """Inside a Dask worker (``fit-suite``), xarray guards a write with a cluster-wide lock
    named by its target, which for an in-memory target the scheduler does not know ("Semaphore
    or Lock <BytesIO> not known"): the write is local to this process, so it runs with dask's
    synchronous scheduler, which takes no such lock. Without ``distributed`` imported, the
    write does not import it (:func:`_without_distributed`)."""
    if "distributed" not in sys.modules:
        return _without_distributed()
    import dask

    return dask.config.set(scheduler="synchronous")

@dataclass(frozen=True)
class PosteriorPredictiveCheck(Rendered):
    """Observed histogram of per-task counts against its posterior predictive distribution.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (system, bin): ``observed`` number of tasks in the bin, the replicated
        ``mean`` and ``lower``/``upper`` of its central interval, and ``outside`` when the
        observed count falls outside that interval.
    ci_prob : float
        Probability of the replicated interval.
    bins : str
        ``"count"`` (bins are c = 0..n, all tasks of a system share n) or ``"rate"`` (ten
        equal bins of c/n, used when n varies or exceeds ``PPC_MAX_COUNT_BINS``).
    """

    _settings_fields = ("ci_prob", "bins")

    table: pd.DataFrame
    ci_prob: float
    bins: str

    @property
    def outside_fraction(self) -> float:
        """Share of bins whose observed count lies outside the replicated interval."""
        return float(self.table["outside"].mean())

    def to_frame(self) -> pd.DataFrame:
        """One row per (system, bin); see the class docstring."""
        return self.table

    def title(self) -> str:
        """E.g. ``Posterior predictive check (90% intervals, count bins): 2 of 20 bins
        outside``."""
        outside = int(self.table["outside"].sum())
        return (
            f"Posterior predictive check ({self.ci_prob:.0%} intervals, {self.bins} bins): "
            f"{outside} of {len(self.table)} bins outside"
        )


@dataclass(frozen=True, eq=False)
class Posterior(Rendered):
    """Result of ``Model.fit``: draws plus everything needed to summarise them.

    Build it with ``model.fit(data)`` or :func:`load`; do not construct it by hand.
    """

    model: FittedModel
    data: EvalData
    sampler: SamplerConfig
    tree: xr.DataTree
    #: derived numbers computed once per fit (curve draws, diagnostics): a posterior is
    #: immutable and every Monte Carlo step is seeded, so a second request gives the same
    #: numbers without recomputing them
    _memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_groups(
        cls,
        model: FittedModel,
        data: EvalData,
        sampler: SamplerConfig,
        groups: dict[str, xr.Dataset],
    ) -> Posterior:
        """Assemble the DataTree (posterior, sample_stats, observed_data) and its attrs."""
        if "posterior" not in groups:
            raise ValueError("a fit must produce a 'posterior' group")
        tree_groups: dict[str, xr.Dataset] = {"posterior": groups["posterior"]}
        if "sample_stats" in groups:
            stats = groups["sample_stats"]
            keep = [
                name
                for name, var in stats.data_vars.items()
                if var.dtype.kind in "biuf" and set(var.dims) <= {"chain", "draw", "system"}
            ]
            tree_groups["sample_stats"] = stats[keep]
        for name, ds in groups.items():
            if name not in ("posterior", "sample_stats"):
                tree_groups[name] = ds
        tree_groups["observed_data"] = data.dataset
        tree = xr.DataTree.from_dict(tree_groups)
        config = model.to_config()
        tree.attrs.update(
            {
                "format": FIT_FORMAT,
                "evalbayes_version": __version__,
                "model_config": json.dumps(config, sort_keys=True),
                "config_hash": config_hash(config),
                "sampler": json.dumps(sampler.to_dict(), sort_keys=True),
                "approximate": int(sampler.approximate),
            }
        )
        return cls(model=model, data=data, sampler=sampler, tree=tree)

    # ------------------------------------------------------------------ access
    @property
    def posterior(self) -> xr.Dataset:
        """The ``posterior`` group as a Dataset (dims chain, draw, ...)."""
        return self.tree["posterior"].to_dataset()

    @property
    def sample_stats(self) -> xr.Dataset | None:
        """The ``sample_stats`` group, or None for exact (conjugate) draws."""
        if "sample_stats" in self.tree.children:
            return self.tree["sample_stats"].to_dataset()
        return None

    @property
    def is_mcmc(self) -> bool:
        """True when the draws come from MCMC and need convergence diagnostics (not exact
        or conjugate draws, not variational ones)."""
        return self.sampler.mcmc and bool(getattr(self.model, "needs_mcmc", True))

    @property
    def approximate(self) -> bool:
        """True when the posterior came from variational inference (approximate intervals)."""
        return self.sampler.approximate

    @property
    def label(self) -> str:
        """Short description: model, inference method, and APPROXIMATE where it applies."""
        return self.sampler.describe(self.model.name)

    def __repr__(self) -> str:
        return f"Posterior({self.label}, {self.data!r})"

    # ------------------------------------------------------------------ rendering
    def to_frame(self) -> pd.DataFrame:
        """The default :meth:`summary`: pass@1 of every system under every estimand."""
        return self.summary()

    def settings(self) -> dict[str, Any]:
        """Model, its configuration and the sampler settings."""
        return jsonable(
            {
                "model": self.model.name,
                "model_config": self.model.to_config(),
                "sampler": self.sampler.to_dict(),
                "approximate": self.approximate,
                "label": self.label,
            }
        )

    def title(self) -> str:
        """The fit's :attr:`label`."""
        return self.label

    def _diagnostics_line(self) -> str:
        if self.approximate:
            return "diagnostics: none for a variational fit; intervals are approximate"
        return f"diagnostics: {self.diagnostics(warn=False)}"

    def to_dict(self) -> dict[str, Any]:
        """Settings, convergence diagnostics and the :meth:`summary` records."""
        out = super().to_dict()
        if not self.approximate:
            diagnostics = self.diagnostics(warn=False).to_dict()
            out["diagnostics"] = {k: v for k, v in diagnostics.items() if k != "records"}
        return out

    def to_text(self) -> str:
        """Label, diagnostics line and the :meth:`summary` table."""
        return f"{self.label}\n{self._diagnostics_line()}\n{frame_text(self.summary())}"

    def _repr_html_(self) -> str:
        """Label, diagnostics line and the :meth:`summary` table as HTML (escaped)."""
        return (
            f"<div><p><strong>{html.escape(self.label)}</strong><br>"
            f"{html.escape(self._diagnostics_line())}</p>{frame_html(self.summary())}</div>"
        )

    # ------------------------------------------------------------------ derived
    def curve(
        self,
        metric: str,
        k: Any,
        *,
        estimand: str = "tasks",
        per_task: bool = False,
    ) -> xr.DataArray:
        """Posterior draws of pass@k or pass^k, dims ``(chain, draw, system, [task,] k)``.

        Parameters
        ----------
        metric : {"pass@k", "pass^k"}
            At least one of k attempts succeeds, or all k succeed.
        k : int or sequence of int
            Any positive k, also larger than the trials observed per task.
        estimand : {"tasks", "population"}
            These tasks, or tasks like these (see the module docstring).
        per_task : bool
            Keep the task dim (``estimand="tasks"`` only).

        Returns
        -------
        xarray.DataArray
            With a boolean coordinate ``extrapolated`` (dims ``system, k``) where a system's
            curve has units ``system``: True where ``k`` exceeds the most trials the system
            ran on any task (:func:`evalbayes.results.extrapolated`). There the value
            rests on the model's assumed shape of the rate distribution below ``1 / n``, not
            on observed repeats; plots draw that stretch hatched and tables mark it.
        """
        metric = check_metric(metric)
        if per_task:  # (chain, draw, system, task, k): large, so never kept
            out = self.model.curve(self.posterior, self.data, check_k(k), metric, estimand,
                                   per_task, seed=self.sampler.seed)
            return self._label_curve(out, metric, estimand)
        return self.curves((metric,), k, estimand=estimand)[metric]

    def curves(
        self, metrics: Any, k: Any, *, estimand: str = "tasks"
    ) -> dict[str, xr.DataArray]:
        """:meth:`curve` of several metrics, ``metric -> (chain, draw, system, k)`` draws.

        The "tasks" draws of every metric come from one set of latent-rate draws where the
        model allows (pass@k and pass^k are two functions of the same rates), and each metric's
        draws are exactly those :meth:`curve` gives for it. Draws are computed once per fit,
        metric, k and estimand, and reused (as copies) by later calls.
        """
        metrics = tuple(dict.fromkeys(check_metric(m) for m in (
            [metrics] if isinstance(metrics, str) else metrics)))
        ks = check_k(k)
        if estimand == "population" and self.one_task_systems():
            warnings.warn(
                f"{self.label}: population estimand of {self.one_task_systems()} rests on a "
                "single task: the spread between tasks cannot be estimated, so its interval "
                "reflects the prior, not tasks like these (add tasks, or use "
                "estimand='tasks')",
                OneTaskWarning,
                stacklevel=3,
            )
        return self._memo_curves(metrics, ks, estimand)

    def _memo_curves(
        self, metrics: tuple[str, ...], ks: np.ndarray, estimand: str
    ) -> dict[str, xr.DataArray]:
        """:meth:`curves` without its warnings: computed once per fit, metric, k and
        estimand (or read back from a saved fit, :meth:`_take_curves`), handed out as copies."""
        key = (tuple(ks.tolist()), estimand)
        missing = tuple(m for m in metrics if ("curve", m, *key) not in self._memo)
        if missing:
            if hasattr(self.model, "curves"):
                computed = self.model.curves(self.posterior, self.data, ks, missing, estimand,
                                             seed=self.sampler.seed)
            else:  # a model with the FittedModel protocol's curve only
                computed = {m: self.model.curve(self.posterior, self.data, ks, m, estimand,
                                                False, seed=self.sampler.seed)
                            for m in missing}
            for m in missing:
                self._memo[("curve", m, *key)] = self._label_curve(computed[m], m, estimand)
        return {m: self._memo[("curve", m, *key)].copy() for m in metrics}

    def _label_curve(self, out: xr.DataArray, metric: str, estimand: str) -> xr.DataArray:
        """Name, ``extrapolated`` flags and attrs of a model's curve draws."""
        out.name = metric
        if "system" in out.dims:
            flags = extrapolated(self.data, out["k"].values).sel(system=out["system"].values)
            out = out.assign_coords(extrapolated=(("system", "k"), flags.values))
        out.attrs.update({"metric": metric, "estimand": estimand, "model": self.model.name})
        if self.approximate:
            out.attrs["approximate"] = 1
        return out

    def pass_at_k(self, k: Any, *, estimand: str = "tasks", per_task: bool = False) -> xr.DataArray:
        """Draws of pass@k = E[1 - (1 - p)^k] (Chen et al. 2021), dims (chain, draw, system, k)."""
        return self.curve("pass@k", k, estimand=estimand, per_task=per_task)

    def pass_hat_k(
        self, k: Any, *, estimand: str = "tasks", per_task: bool = False
    ) -> xr.DataArray:
        """Draws of pass^k = E[p^k] (Yao et al. 2024), dims ``(chain, draw, system, k)``."""
        return self.curve("pass^k", k, estimand=estimand, per_task=per_task)

    def g_pass_at_k(
        self,
        k: Any,
        m: Any = None,
        *,
        tau: float | None = None,
        estimand: str = "tasks",
    ) -> xr.DataArray:
        """Draws of g-pass@k: at least ``m`` of ``k`` attempts succeed, dims ``(chain, draw,
        system, k)`` with a coordinate ``m`` per ``k``.

        ``G(p; k, m) = P(Bin(k, p) >= m) = I_p(m, k - m + 1)`` averaged over the tasks (Liu
        et al. 2024, "Are Your LLMs Capable of Stable Reasoning?", arXiv 2412.13147). Give
        ``m`` (one count for every ``k``) or Liu et al.'s threshold ``tau`` in ``(0, 1]``
        (``m = ceil(tau k)`` per ``k``). ``m = 1`` is pass@k, ``m = k`` pass^k.

        Parameters
        ----------
        k : int or sequence of int
            Attempts; beyond the trials observed per task the value rests on the model's
            rate distribution (coordinate ``extrapolated``, as for :meth:`curve`).
        m : int, optional
            Least number of successes, ``1 <= m <= k``.
        tau : float, optional
            Share of the ``k`` attempts that must succeed.
        estimand : {"tasks", "population"}
            These tasks (every model), or a new task from the population (models whose
            population is a distribution on a grid of rates: the rate grid). The population
            draws are each system's own (not paired through the shared tasks).
        """
        ks = check_k(k)
        if np.any(ks != np.round(ks)):
            raise ValueError(f"g-pass@k needs whole numbers of attempts, got k={ks.tolist()}")
        ms = np.array([g_pass_m(int(kj), m, tau) for kj in ks], dtype=float)
        values = self.model.g_pass_curve(
            self.posterior, self.data, ks, ms, estimand, seed=self.sampler.seed
        )
        out = xr.DataArray(
            values,
            dims=("chain", "draw", "system", "k"),
            coords={
                "chain": self.posterior["chain"].values,
                "draw": self.posterior["draw"].values,
                "system": self.data.dataset["system"].values,
                "k": ks,
                "m": ("k", ms.astype(int)),
            },
            name="g-pass@k",
        )
        flags = extrapolated(self.data, ks).sel(system=out["system"].values)
        out = out.assign_coords(extrapolated=(("system", "k"), flags.values))
        out.attrs.update({"metric": "g-pass@k", "estimand": estimand, "model": self.model.name})
        return out

    def success_prob(
        self, seed: int | None = None, *, random_seed: int | Unset | None = UNSET
    ) -> xr.DataArray:
        """Explicit draws of every cell's success probability, dims (chain, draw, system, task).

        For collapsed models these are drawn from the conjugate posterior; the default seed
        is the fit's, which gives the same draws that the "tasks" curves use.
        ``random_seed`` is PyMC's name for ``seed`` (give either).
        """
        seed = pick_seed(seed, random_seed, default=None)
        seed = self.sampler.seed if seed is None else check_seed(seed)
        return self.model.success_prob(self.posterior, self.data, seed)

    def log_likelihood(self) -> xr.DataArray:
        """Pointwise log-likelihood per observed cell, dims ``(chain, draw, cell)``."""
        return self.model.log_likelihood(self.posterior, self.data)

    def loo(self) -> Any:
        """PSIS-LOO (ArviZ) over observed cells; for comparing models fitted to the same data."""
        import arviz as az

        log_lik = self.log_likelihood()
        tree = xr.DataTree.from_dict(
            {
                "posterior": self.posterior,
                "log_likelihood": xr.Dataset({"c": log_lik}),
            }
        )
        return az.loo(tree, var_name="c", pointwise=True)

    def summary(
        self,
        k: Any = 1,
        *,
        metrics: tuple[str, ...] = ("pass@k",),
        estimands: tuple[str, ...] | None = None,
        ci_prob: float = 0.95,
        kind: IntervalKind = "eti",
        m: int | None = None,
        tau: float | None = None,
    ) -> pd.DataFrame:
        """Per-system table: posterior mean, sd and interval of each metric, k and estimand.

        Columns: ``system, metric, k, estimand, mean, sd, lower, upper, extrapolated,
        ci_prob``, plus ``approximate`` when the fit is variational. ``extrapolated`` is True
        where ``k`` exceeds the most trials the system ran on any task (the value rests on the
        model's assumed rate distribution below ``1 / n``). ``metrics`` may include
        ``"g-pass@k"`` (:meth:`g_pass_at_k`, with ``m`` or ``tau``); its rows name the metric
        ``g-pass@k (m=M)``.
        """
        estimands = estimands or self.model.estimands()
        # a model may share work between the estimands' curves (the rate grid: log g_s)
        sharing = getattr(self.model, "sharing", contextlib.nullcontext)
        with sharing():
            curves = {(metric, estimand): draws
                      for estimand in estimands
                      for metric, draws in self.curves(
                          tuple(m for m in metrics if m != "g-pass@k"), k, estimand=estimand
                      ).items()}
        frames = []
        for metric in metrics:
            for estimand in estimands:
                if metric == "g-pass@k":
                    draws = self.g_pass_at_k(k, m, tau=tau, estimand=estimand)
                else:
                    draws = curves[(metric, estimand)]
                lower, upper = credible_interval(draws, ci_prob, kind)
                frame = xr.Dataset(
                    {
                        "mean": draws.mean(("chain", "draw")),
                        "sd": draws.std(("chain", "draw"), ddof=1),
                        "lower": lower,
                        "upper": upper,
                    }
                ).to_dataframe().reset_index()
                if metric == "g-pass@k":
                    frame.insert(1, "metric", [f"g-pass@k (m={int(v)})" for v in frame["m"]])
                else:
                    frame.insert(1, "metric", metric)
                frame.insert(3, "estimand", estimand)
                if "extrapolated" not in frame:
                    frame["extrapolated"] = False
                frames.append(frame[["system", "metric", "k", "estimand", "mean", "sd",
                                     "lower", "upper", "extrapolated"]])
        table = pd.concat(frames, ignore_index=True)
        table["k"] = table["k"].astype(float).round().astype(int) if np.all(
            table["k"] == np.round(table["k"])
        ) else table["k"]
        table["ci_prob"] = ci_prob
        if self.approximate:
            table["approximate"] = True
        one_task = self.one_task_systems()
        if one_task and "population" in estimands:
            rests = (table["estimand"] == "population") & table["system"].isin(one_task)
            table["note"] = np.where(rests, "population interval rests on one task", "")
        return table

    @property
    def has_broken_tasks(self) -> bool:
        """Whether the fit has a broken-task mixture (a ``pi0``: rate-grid with
        ``broken=True``)."""
        return hasattr(self.model, "broken_probability") and "pi0" in self.posterior

    def broken_tasks(self) -> pd.DataFrame:
        """Per task, the posterior probability that it is broken (``p = 0`` for every system),
        beside what was observed: ``task``, ``systems`` (that ran it), ``trials``,
        ``successes``, ``p_broken``; most likely broken first.

        ``p_broken`` is the posterior mean of ``P(broken | parameters, data)``
        (Rao-Blackwellised): exactly 0 for a task with a success. Fits with a broken-task
        mixture only (:attr:`has_broken_tasks`).
        """
        if not self.has_broken_tasks:
            raise ValueError(
                f"{self.label} has no broken-task mixture (fit rate-grid with broken=True for "
                "one)"
            )
        draws = self.model.broken_probability(self.posterior, self.data)  # type: ignore[attr-defined]
        n, c = self.data.n.values, self.data.c.values
        table = pd.DataFrame({
            "task": self.data.tasks,
            "systems": (n > 0).sum(axis=0),
            "trials": n.sum(axis=0),
            "successes": c.sum(axis=0),
            "p_broken": draws.mean(("chain", "draw")).values,
        })  # fmt: skip
        return table.sort_values("p_broken", ascending=False, kind="stable").reset_index(drop=True)

    def one_task_systems(self) -> list[str]:
        """Systems observed on a single task (their population estimand rests on it)."""
        observed = (self.data.n.values > 0).sum(axis=1)
        return [s for s, count in zip(self.data.systems, observed, strict=True) if count == 1]

    def warn_if_unconverged(self, context: str) -> bool:
        """Warn (:class:`ConvergenceWarning`) when an MCMC fit failed its diagnostics.

        Used where a fit is reused (:func:`evalbayes.load`, :func:`evalbayes.compare`), so
        that a non-converged fit stays loud after it was saved. Returns whether it passed.
        """
        if self.approximate or not self.is_mcmc:
            return True
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diag = self.diagnostics(warn=False)
        if not diag.passed:
            warnings.warn(
                f"{context}: {self.label} failed its convergence diagnostics "
                f"({'; '.join(diag.problems)}); its numbers may be wrong (refit with more "
                "draws/tune)",
                ConvergenceWarning,
                stacklevel=3,
            )
        return diag.passed

    def _take_diagnostics(self, known: dict[str, np.ndarray]) -> None:
        """Keep the R-hat and ESS a sampler already computed on these very draws
        (:func:`~evalbayes.results.convergence_diagnostics`' ``known``), so that
        :meth:`diagnostics` does not compute them again. Used by the model's ``fit`` only."""
        self._memo["known diagnostics"] = known

    def _curves_dataset(self) -> xr.Dataset:
        """The pass@k and pass^k draws at :data:`SAVED_CURVE_K` under every estimand, as
        :meth:`save` stores them in the ``curves`` group: one variable per metric and
        estimand (attributes ``metric``, ``estimand``), the model's draws without the labels
        that :meth:`curves` adds (they follow from the data)."""
        ks = check_k(SAVED_CURVE_K)
        out: dict[str, xr.DataArray] = {}
        for estimand in self.model.estimands():
            drawn = self._memo_curves(METRICS, ks, estimand)
            for metric in METRICS:
                draws = drawn[metric].drop_vars("extrapolated", errors="ignore")
                draws.attrs = {"metric": metric, "estimand": estimand}
                out[f"curve_{len(out)}"] = draws.rename(None)
        return xr.Dataset(out)

    def saves_curves(self) -> bool:
        """Whether :meth:`save` stores the pass@1 and pass^1 draws (the ``curves`` group that
        ``summary`` and ``compare`` read back): the model ``keeps_curves`` and the fit is of
        the sizes where that pays (:data:`SAVED_CURVES_CELL_DRAWS`,
        :data:`SAVED_CURVES_MAX_ROW_DRAWS`)."""
        if not getattr(self.model, "keeps_curves", False):
            return False
        sizes = self.posterior.sizes
        draws = sizes["chain"] * sizes["draw"]
        n, c = self.data.n.values, self.data.c.values
        observed = n > 0
        low, high = SAVED_CURVES_CELL_DRAWS
        if not low <= draws * int(observed.sum()) <= high:
            return False
        system = np.broadcast_to(np.arange(n.shape[0])[:, None], n.shape)[observed]
        rows = np.unique(np.stack([system, n[observed], c[observed]]), axis=1).shape[1]
        return draws * rows <= SAVED_CURVES_MAX_ROW_DRAWS

    def _take_curves(self, saved: xr.Dataset) -> None:
        """Keep the curve draws a saved fit carries (:meth:`_curves_dataset`), so that no
        command draws them again: the same numbers, since every draw is seeded by the fit's
        sampler seed. Used by :func:`evalbayes.load` only."""
        ks = check_k(SAVED_CURVE_K)
        for var in saved.data_vars.values():
            metric, estimand = str(var.attrs["metric"]), str(var.attrs["estimand"])
            draws = var.copy()
            draws.attrs = {}
            key = ("curve", metric, tuple(ks.tolist()), estimand)
            self._memo[key] = self._label_curve(draws, metric, estimand)

    def _convergence_dataset(self) -> xr.Dataset:
        """Each posterior variable's R-hat, bulk and tail ESS (dims ``statistic`` and the
        variable's own), as :meth:`save` stores them in the ``convergence`` group: the
        layout :func:`~evalbayes.results.convergence_diagnostics`' ``known`` takes back."""
        table = self.diagnostics(warn=False).table
        posterior = self.posterior
        out, start = {}, 0
        for name in posterior.data_vars:
            dims = [d for d in posterior[name].dims if d not in ("chain", "draw")]
            shape = tuple(posterior.sizes[d] for d in dims)
            size = int(np.prod(shape, dtype=int))
            block = table.iloc[start:start + size][list(CONVERGENCE_STATISTICS)].to_numpy()
            start += size
            out[str(name)] = (("statistic", *dims), block.T.reshape(3, *shape))
        return xr.Dataset(out, coords={"statistic": list(CONVERGENCE_STATISTICS)})

    def diagnostics(self, *, warn: bool = True) -> Diagnostics:
        """R-hat, ESS and divergences; warns (:class:`ConvergenceWarning`) on failure.

        Exact conjugate draws (``pooling="none"``/``"complete"``) pass trivially; a
        variational fit has no MCMC diagnostics and says so.
        """
        if self.approximate:
            if warn:
                warnings.warn(
                    f"{self.label}: approximate fits have no MCMC convergence diagnostics; "
                    "intervals are approximate",
                    UserWarning,
                    stacklevel=2,
                )
        if "diagnostics" not in self._memo:  # R-hat and ESS of every parameter: once per fit
            self._memo["diagnostics"] = convergence_diagnostics(
                self.posterior, self.sample_stats, warn=False,
                known=self._memo.get("known diagnostics"),
            )
        result = self._memo["diagnostics"]
        if warn and not self.approximate:
            warn_unconverged(result, stacklevel=3)
        return result

    def posterior_predictive(
        self, seed: int = 0, *, random_seed: int | Unset = UNSET
    ) -> xr.DataArray:
        """Replicated counts on the observed cells, dims ``(chain, draw, system, task)``.

        ``random_seed`` is PyMC's name for ``seed`` (give either).
        """
        seed = check_seed(pick_seed(seed, random_seed))
        return self.model.posterior_predictive(self.posterior, self.data, seed)

    def ppc(
        self, seed: int = 0, ci_prob: float = 0.9, *, random_seed: int | Unset = UNSET
    ) -> PosteriorPredictiveCheck:
        """Check the per-task count histogram against replicated data.

        For each system, the number of tasks with each count ``c`` (or rate bin) is compared
        with the same statistic of the posterior predictive replicates. A well-specified
        model puts about ``ci_prob`` of the observed bins inside the replicated intervals;
        a model without task heterogeneity (``pooling="complete"``) misses the U shape of
        agent benchmarks badly. The bins are the counts ``0..n`` when every task of a system
        ran the same ``n <= PPC_MAX_COUNT_BINS`` trials, ten bins of the pass rate otherwise.
        ``random_seed`` is PyMC's name for ``seed`` (give either).
        """
        rep = self.posterior_predictive(pick_seed(seed, random_seed))
        n = self.data.n.values
        c = self.data.c.values
        rows = []
        # one bin per count only for a few trials per task: n = 10^9 would need 10^9 bins
        equal_n = all(
            len(set(n[s][n[s] > 0])) == 1 and n[s].max() <= PPC_MAX_COUNT_BINS
            for s in range(n.shape[0])
        )
        bins_kind = "count" if equal_n else "rate"
        rep_values = rep.stack(sample=("chain", "draw")).transpose("sample", ...).values
        for s, system in enumerate(self.data.systems):
            obs_mask = n[s] > 0
            if equal_n:
                n_s = int(n[s][obs_mask][0])
                edges = np.arange(n_s + 2) - 0.5
                labels = [str(v) for v in range(n_s + 1)]
                obs_stat = c[s][obs_mask]
                rep_stat = rep_values[:, s, obs_mask]
            else:
                edges = np.linspace(0, 1, 11)
                edges[-1] = 1.0 + 1e-12
                labels = [f"{lo:.1f}-{hi:.1f}" for lo, hi in itertools.pairwise(edges)]
                obs_stat = c[s][obs_mask] / n[s][obs_mask]
                rep_stat = rep_values[:, s, obs_mask] / n[s][obs_mask]
            observed_hist = np.histogram(obs_stat, bins=edges)[0]
            idx = np.clip(np.digitize(rep_stat, edges) - 1, 0, len(edges) - 2)
            # one histogram per replicate: bin b of replicate r counted at r * bins + b
            bins = len(edges) - 1
            offset = (np.arange(idx.shape[0]) * bins)[:, None]
            rep_hist = np.bincount((idx + offset).ravel(),
                                   minlength=idx.shape[0] * bins).reshape(idx.shape[0], bins)
            lower = np.quantile(rep_hist, (1 - ci_prob) / 2, axis=0)
            upper = np.quantile(rep_hist, (1 + ci_prob) / 2, axis=0)
            for j, label in enumerate(labels):
                rows.append(
                    {
                        "system": system,
                        "bin": label,
                        "observed": int(observed_hist[j]),
                        "mean": float(rep_hist[:, j].mean()),
                        "lower": float(lower[j]),
                        "upper": float(upper[j]),
                        "outside": bool(
                            observed_hist[j] < lower[j] or observed_hist[j] > upper[j]
                        ),
                    }
                )
        return PosteriorPredictiveCheck(pd.DataFrame(rows), ci_prob, bins_kind)

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | Path) -> Path:
        """Write the fit to NetCDF (h5netcdf) with config, data, version and fingerprints.

        The fingerprints (:mod:`evalbayes.results._fingerprint`) cover the draws, sample statistics,
        counts, coordinates, model configuration and sampler settings; :func:`evalbayes.load`
        refuses a file in which any of them changed.

        With the draws the file keeps what every reader would otherwise compute again: the
        R-hat and ESS of each parameter (``convergence``) and the pass@k and pass^k draws at
        k = 1 under every estimand (``curves``, :data:`SAVED_CURVE_K`: what ``summary`` and
        ``compare`` show by default; on SWE-bench Verified the "tasks" draws are 246 million
        Beta variates, seconds per command). They are the numbers :meth:`curves` gives (its
        draws are seeded by the sampler seed), drawn once here and read back by
        :func:`evalbayes.load`. Only where the model ``keeps_curves`` (the Beta-Binomial and
        the rate grid) and the fit is of the sizes where that pays
        (:data:`SAVED_CURVES_CELL_DRAWS`, :data:`SAVED_CURVES_MAX_ROW_DRAWS`: SWE-bench
        Verified); other fits are saved without them and they are drawn when asked (cheaply
        for a small fit; a leaderboard's, HumanEval+'s per-row work and the 2PL's population
        quadrature would cost the fit more than they save).

        The file is built in memory, then written to a temporary file beside ``path`` and
        renamed over it (:func:`evalbayes._core.files.atomic_path`): a full disk, a file-size
        limit or a kill during the write leaves the previous file as it was, never a truncated
        one, and HDF5 never writes to the disk itself. Missing folders are created.
        """
        path = Path(path)
        if path.is_dir():
            raise ValueError(f"{path}: is a directory; give a file name such as fit.nc")
        path.parent.mkdir(parents=True, exist_ok=True)
        tree = self.tree.copy()
        if self.is_mcmc:  # read back by load, so that no command computes them again
            tree[CONVERGENCE_GROUP] = xr.DataTree(self._convergence_dataset())
        if self.saves_curves():
            tree[SAVED_CURVES_GROUP] = xr.DataTree(self._curves_dataset())
        groups = {name: node.to_dataset() for name, node in tree.children.items()}
        fingerprint = fit_fingerprint(
            groups, json.loads(tree.attrs["model_config"]), json.loads(tree.attrs["sampler"])
        )
        tree.attrs["fingerprint"] = json.dumps(fingerprint, sort_keys=True)
        try:
            with _local_writes():
                view = tree.to_netcdf(engine="h5netcdf")  # in memory: a view of the bytes
        except (ValueError, TypeError, UnicodeError) as err:
            raise ValueError(f"{path}: the fit cannot be written as NetCDF ({err})") from err
        # copied out and released at once: a view outliving its buffer crashes the
        # interpreter when an exception later unwinds through here (measured: exit 139)
        content = bytes(view)
        if isinstance(view, memoryview):
            view.release()
        del view
        return write_bytes(path, content)
