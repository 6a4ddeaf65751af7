"""The template of the graded-outcome models: a sibling of :class:`evalbayes.models.Model`.

The c-of-n template is built on counts: its hooks return success probabilities per (system,
task) cell, and every derived quantity (pass@k, pass^k, the posterior predictive of counts,
PSIS-LOO over cells) is a function of them. A graded score has no success probability; its
model gives a distribution over a scale, and the quantities users report are the exceedance
curve ``P(score >= t)`` over thresholds ``t`` and the mean score. Bending the c-of-n template
around that would leave most of its template methods meaningless, so the graded models have
their own small template with the same shape: a frozen dataclass of settings, ``fit(data)``
owned by the template (validation, sampling with the compile cache of
:func:`~evalbayes.inference.run_inference`, a typed posterior), and hooks:

``inputs(data) -> ModelInputs`` and ``build(inputs) -> pymc.Model``
    The PyMC model (observations padded to :func:`~evalbayes.inference.padded_size` and
    masked, so that data of a similar size reuse one compiled model).
``prior_sample(data, draws, rng) -> dict``
    Draws of the parameters from their prior, in NumPy (the prior predictive check; PyMC's
    forward sampling would not order the cut points of an ordered transform).
``exceedance_draws(posterior, data, thresholds, estimand) -> ndarray (chain, draw, system,
threshold)`` and ``mean_draws(posterior, data, estimand) -> (chain, draw, system)``
    The two reported quantities, for both estimands: ``"tasks"`` (the average over the
    data's tasks and graders) and ``"population"`` (a new task from the task population,
    averaged over the data's graders).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from evalbayes._core.names import (
    ESTIMANDS,
    SAMPLER_DEFAULTS,
    Method,
    check_count,
    check_estimand,
    check_seed,
)
from evalbayes.inference import SamplerConfig, config_hash, resolve_seed, run_inference
from evalbayes.io._scores import ScoreData
from evalbayes.models._base import Configured, ModelInputs
from evalbayes.models.graded._linear import label_posterior

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.models.graded._posterior import ScorePosterior, ScorePriorPredictive

__all__ = ["ScoreModel"]


@dataclass(frozen=True)
class ScoreModel(Configured, ABC):
    """Base class of the graded-outcome models: configuration only; ``fit`` returns a
    :class:`~evalbayes.models.graded.ScorePosterior`."""

    name: ClassVar[str]
    kind: ClassVar[str]  # the ScoreData kind the model fits: "ordinal" or "continuous"

    @property
    def default_method(self) -> Method:
        """Inference method used when ``fit`` is not given one (nutpie)."""
        return SAMPLER_DEFAULTS["method"]

    @property
    def description(self) -> str:
        """The model's name."""
        return self.name

    def estimands(self) -> tuple[str, ...]:
        """Both: ``"tasks"`` (these tasks) and ``"population"`` (a new task)."""
        return ESTIMANDS

    def check_data(self, data: ScoreData) -> None:
        """Refuse data of the other kind (ordinal scores to a continuous model and back)."""
        if not isinstance(data, ScoreData):
            raise TypeError(f"{self.name} fits ScoreData (graded scores), got "
                            f"{type(data).__name__}; build it with ScoreData.from_frame or "
                            "read_scores")
        if data.kind != self.kind:
            other = "partial-credit" if self.kind == "ordinal" else "ordinal"
            raise ValueError(f"{self.name} fits {self.kind} scores; these are {data.kind} "
                             f"({data!r}): use the {other} model")

    # --------------------------------------------------------------- fitting
    def fit(
        self,
        data: ScoreData,
        *,
        method: Method | None = None,
        draws: int = SAMPLER_DEFAULTS["draws"],
        tune: int = SAMPLER_DEFAULTS["tune"],
        chains: int = SAMPLER_DEFAULTS["chains"],
        seed: int | None = None,
        random_seed: int | None = None,
        target_accept: float = SAMPLER_DEFAULTS["target_accept"],
        progressbar: bool = False,
        check: bool = True,
    ) -> ScorePosterior:
        """Fit the model to graded scores and return a :class:`ScorePosterior` (arguments as
        :meth:`evalbayes.models.Model.fit`)."""
        from evalbayes.models.graded._posterior import ScorePosterior

        self.check_data(data)
        sampler = SamplerConfig(
            method=SAMPLER_DEFAULTS["method"] if method is None else method,
            draws=draws, tune=tune, chains=chains, seed=resolve_seed(seed, random_seed),
            target_accept=target_accept, progressbar=progressbar,
        )
        inputs = self.inputs(data)
        key = (self.name, config_hash(self.to_config()), inputs.shape_key)
        tree = run_inference(lambda: self.build(inputs), sampler, key, data_updates=inputs.values)
        names = self.posterior_vars(data)
        posterior = label_posterior(tree["posterior"].to_dataset()[names], data)
        stats = tree["sample_stats"].to_dataset() if "sample_stats" in tree.children else None
        result = ScorePosterior(self, data, sampler, posterior, stats)
        if check and sampler.mcmc:
            result.diagnostics(warn=True)
        return result

    def prior_predictive(
        self, data: ScoreData, thresholds: Any = None, draws: int = 1000, seed: int = 0
    ) -> ScorePriorPredictive:
        """What the prior implies, before fitting: per system, the prior of the population
        mean score and of ``P(score >= t)`` for a new task, beside the data's observed mean
        and share at or above ``t`` (:class:`ScorePriorPredictive`; Gabry et al. 2019,
        "Visualization in Bayesian workflow", JRSS A 182)."""
        from evalbayes.models.graded._posterior import ScorePriorPredictive

        self.check_data(data)
        draws = check_count(draws, "draws")
        rng = np.random.default_rng([check_seed(seed), 23])
        values = self.prior_sample(data, draws, rng)
        prior = label_posterior(xr.Dataset(
            {name: (("chain", *dims), value[None]) for name, (dims, value) in values.items()}
        ), data)
        return ScorePriorPredictive.build(self, data, prior, self.thresholds(data, thresholds))

    # --------------------------------------------------------------- thresholds
    def thresholds(self, data: ScoreData, thresholds: Any = None) -> np.ndarray:
        """The thresholds ``t`` of ``P(score >= t)``: default every level ``1..K`` of an
        ordinal scale, ``0.1, 0.2, ..., 0.9`` of a continuous one; given ones are checked."""
        if thresholds is None:
            return self.default_thresholds(data)
        values = np.atleast_1d(np.asarray(thresholds, dtype=float))
        if values.ndim != 1 or len(values) == 0 or not np.all(np.isfinite(values)):
            raise ValueError(f"thresholds must be finite numbers, got {thresholds!r}")
        self.check_thresholds(data, values)
        return values

    @abstractmethod
    def default_thresholds(self, data: ScoreData) -> np.ndarray:
        """The default thresholds (hook)."""

    @abstractmethod
    def check_thresholds(self, data: ScoreData, values: np.ndarray) -> None:
        """Raise ``ValueError`` for thresholds outside the scale (hook)."""

    # --------------------------------------------------------------- hooks
    @abstractmethod
    def inputs(self, data: ScoreData) -> ModelInputs:
        """``pm.Data`` values and the shape key of :meth:`build` (hook)."""

    @abstractmethod
    def build(self, inputs: ModelInputs) -> Any:
        """The PyMC model (hook)."""

    @abstractmethod
    def posterior_vars(self, data: ScoreData) -> list[str]:
        """Variables kept in the posterior (hook)."""

    @abstractmethod
    def prior_sample(
        self, data: ScoreData, draws: int, rng: np.random.Generator
    ) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        """Prior draws of :meth:`posterior_vars`: ``name -> (dims, values)`` with a leading
        ``draw`` dim (hook)."""

    @abstractmethod
    def exceedance_draws(
        self, posterior: xr.Dataset, data: ScoreData, thresholds: np.ndarray, estimand: str
    ) -> np.ndarray:
        """Draws of ``P(score >= t)``, ``(chain, draw, system, threshold)`` (hook)."""

    @abstractmethod
    def mean_draws(self, posterior: xr.Dataset, data: ScoreData, estimand: str) -> np.ndarray:
        """Draws of the mean score, ``(chain, draw, system)`` (hook)."""

    def check_estimand(self, estimand: str) -> str:
        """The estimand, checked against :meth:`estimands`."""
        return check_estimand(estimand, self.estimands(), self.description)
