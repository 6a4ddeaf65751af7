"""Beta regression of partial-credit scores in ``[0, 1]``, with exact 0 and 1 handled by
zero-one inflation.

For a score ``y`` of system ``s`` on task ``t`` by grader ``j``, with the linear predictor
``eta`` of :mod:`evalbayes.models.graded._linear` and an intercept ``alpha``::

    y = 0 with prob. pi0[s],  y = 1 with prob. pi1[s],  else y ~ Beta(mu phi, (1 - mu) phi)
    mu = logistic(alpha + eta),   alpha ~ Normal(0, 1.5),   log phi ~ Normal(*log_precision_prior)
    (pi_interior, pi0, pi1)[s] ~ Dirichlet(1, ..., 1)

the Beta regression of S. Ferrari and F. Cribari-Neto ("Beta regression for modelling rates and
proportions", J. Applied Statistics 31, 2004, 799-815) with the zero-one inflation of R. Ospina
and S. Ferrari ("Inflated beta distributions", Statistical Papers 51, 2010, 111-126; "A general
class of zero-or-one inflated beta regression models", CSDA 56, 2012, 1609-1623). The Beta
density is 0 or infinite at exact 0 and 1, so a score of exactly 0 (no credit) or 1 (full
credit) cannot come from it: with ``boundary="inflate"`` (default) each system has its own
probabilities of an exact 0 and an exact 1 (not depending on the task; a part absent from the
data is left out of the model), with ``boundary="error"`` such a score is refused with its row.
Then ``P(y >= t) = pi1 + pi_interior (1 - I_t(mu phi, (1 - mu) phi))`` for ``0 < t < 1``
(``I`` the regularised incomplete Beta function), ``P(y >= 1) = pi1``, and the mean score is
``pi1 + pi_interior mu``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from evalbayes.io._scores import ScoreData
from evalbayes.models._base import ModelInputs
from evalbayes.models.graded import _linear
from evalbayes.models.graded._base import ScoreModel

__all__ = ["PartialCreditModel"]

BOUNDARIES = ("inflate", "error")


def _parts(data: ScoreData) -> list[str]:
    y = data.scores
    parts = ["interior"]
    if np.any(y == 0):
        parts.append("zero")
    if np.any(y == 1):
        parts.append("one")
    return parts


@dataclass(frozen=True)
class PartialCreditModel(ScoreModel):
    """Zero-one-inflated Beta regression of scores in ``[0, 1]``.

    Parameters
    ----------
    boundary : {"inflate", "error"}
        Exact 0 and 1: modelled by per-system inflation probabilities, or refused.
    intercept_scale : float
        Prior sd of the intercept ``alpha`` (logit of the mean interior score).
    log_precision_prior : (float, float)
        Normal prior (mean, sd) of ``log phi``, the Beta precision.
    system_scale, task_scale, grader_scale, grader_system_scale : float
        As in :class:`~evalbayes.models.graded.OrdinalModel`.
    """

    name: ClassVar[str] = "partial-credit"
    kind: ClassVar[str] = "continuous"

    boundary: str = "inflate"
    intercept_scale: float = 1.5
    log_precision_prior: tuple[float, float] = (2.0, 1.0)
    system_scale: float = 1.5
    task_scale: float = 1.0
    grader_scale: float = 1.0
    grader_system_scale: float = 0.5

    def __post_init__(self) -> None:
        if self.boundary not in BOUNDARIES:
            raise ValueError(f"boundary must be one of {BOUNDARIES}, got {self.boundary!r}")
        for key in ("intercept_scale", "system_scale", "task_scale", "grader_scale",
                    "grader_system_scale"):
            value = getattr(self, key)
            if isinstance(value, bool) or not np.isfinite(value) or value <= 0:
                raise ValueError(f"{key} must be a positive number, got {value!r}")
        prior = self.log_precision_prior
        if len(prior) != 2 or not np.isfinite(prior[0]) or not prior[1] > 0:
            raise ValueError(f"log_precision_prior must be (mean, sd > 0), got {prior!r}")

    def check_data(self, data: ScoreData) -> None:
        super().check_data(data)
        y = data.scores
        edge = np.flatnonzero((y == 0) | (y == 1))
        if self.boundary == "error" and len(edge):
            row = data.frame.iloc[edge[0]]
            raise ValueError(
                f"{data.source}: row {edge[0]} (system {row['system']!r}, task "
                f"{row['task']!r}): score {y[edge[0]]:g} is exactly 0 or 1, which a Beta "
                "density cannot give; use boundary='inflate' (zero-one-inflated Beta)"
            )
        if len(edge) == len(y):
            raise ValueError(f"{data.source}: every score is exactly 0 or 1: these are binary "
                             "outcomes; fit them as counts (EvalData) with a c-of-n model")

    # --------------------------------------------------------------- thresholds
    def default_thresholds(self, data: ScoreData) -> np.ndarray:
        return np.round(np.arange(1, 10) / 10.0, 10)

    def check_thresholds(self, data: ScoreData, values: np.ndarray) -> None:
        bad = values[(values <= 0) | (values > 1)]
        if len(bad):
            raise ValueError(f"threshold {bad[0]:g} is outside (0, 1] (P(score >= 0) is 1)")

    # --------------------------------------------------------------- PyMC
    def inputs(self, data: ScoreData) -> ModelInputs:
        values, size = _linear.row_values(data)
        y = data.scores
        interior = (y > 0) & (y < 1)
        pad = size - len(data)
        values["row_y"] = np.concatenate([np.where(interior, y, 0.5), np.full(pad, 0.5)])
        values["row_mask"] = values["row_mask"] * np.concatenate([interior, np.zeros(pad)])
        parts = _parts(data)
        codes = data.codes("system")
        counts = np.zeros((len(data.systems), len(parts)))
        for j, part in enumerate(parts):
            chosen = {"interior": interior, "zero": y == 0, "one": y == 1}[part]
            counts[:, j] = np.bincount(codes[chosen], minlength=len(data.systems))
        shape = (len(data.systems), len(data.tasks), len(data.graders), size, tuple(parts))
        return ModelInputs(values, shape_key=shape, extra={"counts": counts})

    def build(self, inputs: ModelInputs) -> Any:
        import pymc as pm

        n_s, n_t, n_g, size, parts = inputs.shape_key
        coords = {"system": np.arange(n_s), "task": np.arange(n_t), "grader": np.arange(n_g),
                  "row": np.arange(size), "part": list(parts)}
        with pm.Model(coords=coords) as model:
            rows = {name: pm.Data(name, value, dims="row")
                    for name, value in inputs.values.items()}
            alpha = pm.Normal("intercept", 0.0, self.intercept_scale)
            phi = pm.LogNormal("precision", *self.log_precision_prior)
            mu = pm.math.sigmoid(alpha + _linear.linear_predictor(self, rows, n_g))
            logp = pm.logp(pm.Beta.dist(alpha=mu * phi, beta=(1.0 - mu) * phi), rows["row_y"])
            pm.Potential("likelihood", (logp * rows["row_mask"]).sum())
            if len(parts) > 1:
                counts = pm.Data("part_counts", inputs.extra["counts"], dims=("system", "part"))
                probs = pm.Dirichlet("part_prob", a=np.ones((n_s, len(parts))),
                                     dims=("system", "part"))
                pm.Potential("parts", (counts * pm.math.log(probs)).sum())
        return model

    def posterior_vars(self, data: ScoreData) -> list[str]:
        names = ["intercept", "precision", *_linear.effect_vars(len(data.graders))]
        return names + (["part_prob"] if len(_parts(data)) > 1 else [])

    def prior_sample(self, data: ScoreData, draws: int,
                     rng: np.random.Generator) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        out = _linear.prior_effects(self, data, draws, rng)
        out["intercept"] = (("draw",), rng.normal(0.0, self.intercept_scale, draws))
        out["precision"] = (("draw",), np.exp(rng.normal(*self.log_precision_prior, draws)))
        parts = _parts(data)
        if len(parts) > 1:
            probs = rng.dirichlet(np.ones(len(parts)), (draws, len(data.systems)))
            out["part_prob"] = (("draw", "system", "part"), probs)
        return out

    # --------------------------------------------------------------- quantities
    def _parts_draws(self, posterior: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
        """``(pi_interior, pi1)`` per draw and system, ``(chain, draw, system)``."""
        b = posterior["system_effect"].transpose("chain", "draw", "system").values
        if "part_prob" not in posterior:
            return np.ones_like(b), np.zeros_like(b)
        probs = posterior["part_prob"].transpose("chain", "draw", "system", "part")
        parts = list(np.asarray(probs["part"].values)) if "part" in probs.coords else None
        values = probs.values
        if parts is None or not isinstance(parts[0], str):
            parts = ["interior", "zero", "one"][: values.shape[-1]]
        interior = values[..., parts.index("interior")]
        one = values[..., parts.index("one")] if "one" in parts else np.zeros_like(interior)
        return interior, one

    def exceedance_draws(self, posterior: xr.Dataset, data: ScoreData, thresholds: np.ndarray,
                         estimand: str) -> np.ndarray:
        from scipy.special import betainc, expit  # imported when used (issue 26)

        alpha = posterior["intercept"].transpose("chain", "draw").values
        phi = posterior["precision"].transpose("chain", "draw").values
        inner = thresholds < 1

        def f(x: np.ndarray, block: slice) -> np.ndarray:
            mu = expit(x)[..., None]
            p = phi[:, block, None, None, None, None]
            sf = 1.0 - betainc(mu * p, (1.0 - mu) * p, thresholds[inner])
            out = np.zeros((*x.shape, len(thresholds)))
            out[..., inner] = sf
            return out

        beta_part = _linear.average(posterior, estimand, f, len(thresholds), offset=alpha)
        interior, one = self._parts_draws(posterior)
        return one[..., None] + interior[..., None] * beta_part

    def mean_draws(self, posterior: xr.Dataset, data: ScoreData, estimand: str) -> np.ndarray:
        from scipy.special import expit  # imported when used (issue 26)

        alpha = posterior["intercept"].transpose("chain", "draw").values

        def f(x: np.ndarray, block: slice) -> np.ndarray:
            return expit(x)[..., None]

        mu = _linear.average(posterior, estimand, f, 1, offset=alpha)[..., 0]
        interior, one = self._parts_draws(posterior)
        return one + interior * mu
