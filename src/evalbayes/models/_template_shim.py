"""Bridge from the model-template hooks to today's ``Model`` abstract methods.

The design models (factorial, training-seeds, judge-error) are written against the template
hooks (``inputs`` / ``build`` / ``posterior_vars`` / ``rates`` / ``population_curve`` /
``cell_log_likelihood``). This shim implements the current base class's ``_fit``, ``curve``,
``success_prob`` and ``log_likelihood`` from those hooks, in the same way as the template's
base class, so that porting a model is: inherit from the template ``Model`` and delete this
module.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from evalbayes.data import EvalData
from evalbayes.models.base import (
    Model,
    SamplerConfig,
    cell_draws,
    cell_log_likelihood,
    config_hash,
    run_inference,
)

__all__ = ["CHUNK_NUMBERS", "ModelInputs", "TemplateModel", "task_chunks"]

CHUNK_NUMBERS = 4_000_000


@dataclass
class ModelInputs:
    """What ``build`` needs: ``pm.Data`` values and the shape that keys the compile cache."""

    values: dict[str, np.ndarray]
    shape_key: tuple[Hashable, ...]
    extra: dict[str, Any] = field(default_factory=dict)


def task_chunks(n_draws: int, n_units: int, n_tasks: int) -> list[slice]:
    """Task slices such that one chunk of draws x units x tasks holds ~CHUNK_NUMBERS numbers."""
    size = max(1, CHUNK_NUMBERS // max(1, n_draws * n_units))
    return [slice(i, min(n_tasks, i + size)) for i in range(0, n_tasks, size)]


@dataclass(frozen=True)
class TemplateModel(Model):
    """``Model`` whose abstract methods are thin wrappers around the template hooks."""

    # ------------------------------------------------------------------ hooks
    def check_data(self, data: EvalData) -> None:
        """Raise ``ValueError`` for data this model cannot fit (default: any data)."""

    def inputs(self, data: EvalData) -> ModelInputs:
        raise NotImplementedError

    def build(self, inputs: ModelInputs) -> Any:
        raise NotImplementedError

    def posterior_vars(self, data: EvalData) -> list[str]:
        raise NotImplementedError

    def rates(self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice) -> np.ndarray:
        raise NotImplementedError

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no population estimand")

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        raise NotImplementedError

    # ------------------------------------------------------------------ today's base class
    def _fit(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        self.check_data(data)
        inputs = self.inputs(data)
        key = (self.name, config_hash(self.to_config()), inputs.shape_key)
        tree = run_inference(lambda: self.build(inputs), sampler, key, data_updates=inputs.values)
        posterior = tree["posterior"].to_dataset()[self.posterior_vars(data)]
        coords = {
            dim: data.dataset[dim].values for dim in ("system", "task") if dim in posterior.dims
        }
        groups = {"posterior": posterior.assign_coords(coords)}
        if "sample_stats" in tree.children:
            groups["sample_stats"] = tree["sample_stats"].to_dataset()
        return groups

    def curve(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metric: str,
        estimand: str,
        per_task: bool,
        seed: int = 0,
    ) -> xr.DataArray:
        """pass@k / pass^k draws, dims ``(chain, draw, system, [task,] k)`` (template logic)."""
        if estimand not in self.estimands():
            raise ValueError(f"{self.name} reports estimands {self.estimands()}, not {estimand!r}")
        if per_task and estimand == "population":
            raise ValueError("per_task=True needs estimand='tasks' (population is over new tasks)")
        k = np.asarray(k)
        if estimand == "population":
            values = self.population_curve(posterior, data, k, metric)
        else:
            values = self._tasks_curve(posterior, data, k, metric, per_task, seed)
        dims = ("chain", "draw", "system", "task", "k") if per_task else (
            "chain", "draw", "system", "k"
        )
        coords = {
            "chain": posterior["chain"].values,
            "draw": posterior["draw"].values,
            "system": data.dataset["system"].values,
            "k": k,
        }
        if per_task:
            coords["task"] = data.dataset["task"].values
        return xr.DataArray(values, dims=dims, coords=coords, name=metric)

    def _tasks_curve(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metric: str,
        per_task: bool,
        seed: int,
    ) -> np.ndarray:
        observed = data.n.values > 0
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        n_sys, n_task = observed.shape
        if per_task:
            out = np.full((chains, draws, n_sys, n_task, len(k)), np.nan)
        else:
            out = np.zeros((chains, draws, n_sys, len(k)))
        for tasks in task_chunks(chains * draws, n_sys, n_task):
            p = self.rates(posterior, data, seed, tasks)
            seen = observed[:, tasks]
            with np.errstate(divide="ignore"):
                log_base = np.log1p(-p) if metric == "pass@k" else np.log(p)
            for j, kj in enumerate(k):
                scaled = kj * log_base
                f = -np.expm1(scaled) if metric == "pass@k" else np.exp(scaled)
                if per_task:
                    out[:, :, :, tasks, j] = np.where(seen, f, np.nan)
                else:
                    out[..., j] += np.einsum("cdst,st->cds", f, seen.astype(float))
        if not per_task:
            out /= observed.sum(axis=1)[None, None, :, None]
        return out

    def success_prob(self, posterior: xr.Dataset, data: EvalData, seed: int) -> xr.DataArray:
        """Draws of every cell's success probability, dims ``(chain, draw, system, task)``."""
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        n_sys, n_task = data.n.shape
        p = np.empty((chains, draws, n_sys, n_task))
        for tasks in task_chunks(chains * draws, n_sys, n_task):
            p[..., tasks] = self.rates(posterior, data, seed, tasks)
        return cell_draws(p, posterior, data, "p")

    def log_likelihood(self, posterior: xr.Dataset, data: EvalData) -> xr.DataArray:
        """Pointwise log-likelihood per observed cell, dims ``(chain, draw, cell)``."""
        s_idx, t_idx = np.nonzero(data.n.values > 0)
        values = self.cell_log_likelihood(posterior, data, s_idx, t_idx)
        return cell_log_likelihood(values, posterior, data, s_idx, t_idx)
