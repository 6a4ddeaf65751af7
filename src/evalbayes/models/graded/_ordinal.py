"""Ordered-logistic model of graded scores on a scale ``0..K`` (0-10 judge ratings, rubric
categories).

For a score ``y`` in ``0..K`` of system ``s`` on task ``t`` by grader ``j``, with the linear
predictor ``eta`` of :mod:`evalbayes.models.graded._linear` (system, task, grader and grader x
system effects) and ordered cut points ``c_1 < ... < c_K``::

    P(y >= k | eta) = logistic(eta - c_k),   k = 1..K
    P(y = k | eta)  = logistic(eta - c_k) - logistic(eta - c_{k+1})   (c_0 = -inf, c_{K+1} = inf)
    c ~ Normal(0, cut_scale) restricted to c_1 < ... < c_K   (PyMC's ordered transform)

the cumulative-logit (proportional-odds) model (P. McCullagh, "Regression models for ordinal
data", JRSS B 42, 1980, 109-142; A. Agresti, *Analysis of Ordinal Categorical Data*, 2nd ed.,
Wiley 2010, ch. 3). The restricted Normal prior on the cut points is the distribution of K
sorted iid ``N(0, cut_scale)`` draws, which is how :meth:`prior_sample` draws it. The mean
score is ``E[y] = sum_{k=1..K} P(y >= k)``.
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

__all__ = ["OrdinalModel"]


@dataclass(frozen=True)
class OrdinalModel(ScoreModel):
    """Ordered-logistic (cumulative logit) model of scores on ``0..K``.

    Parameters
    ----------
    cut_scale : float
        Prior sd of the cut points (Normal(0, cut_scale), ordered).
    system_scale : float
        Prior sd of the system effects (zero-sum; logit scale).
    task_scale : float
        HalfNormal scale of the task effects' sd.
    grader_scale : float
        Prior sd of the grader effects (zero-sum), with two or more graders.
    grader_system_scale : float
        HalfNormal scale of the grader x system effects' sd.
    """

    name: ClassVar[str] = "ordinal"
    kind: ClassVar[str] = "ordinal"

    cut_scale: float = 4.0
    system_scale: float = 2.0
    task_scale: float = 1.5
    grader_scale: float = 1.0
    grader_system_scale: float = 0.5

    def __post_init__(self) -> None:
        for key in ("cut_scale", "system_scale", "task_scale", "grader_scale",
                    "grader_system_scale"):
            value = getattr(self, key)
            if isinstance(value, bool) or not np.isfinite(value) or value <= 0:
                raise ValueError(f"{key} must be a positive number, got {value!r}")

    # --------------------------------------------------------------- thresholds
    def default_thresholds(self, data: ScoreData) -> np.ndarray:
        assert data.max_score is not None
        return np.arange(1, data.max_score + 1, dtype=float)

    def check_thresholds(self, data: ScoreData, values: np.ndarray) -> None:
        assert data.max_score is not None
        bad = values[(values != np.round(values)) | (values < 1) | (values > data.max_score)]
        if len(bad):
            raise ValueError(f"threshold {bad[0]:g} is not a level 1..{data.max_score} of the "
                             f"scale (P(score >= 0) is 1)")

    # --------------------------------------------------------------- PyMC
    def inputs(self, data: ScoreData) -> ModelInputs:
        values, size = _linear.row_values(data)
        pad = size - len(data)
        values["row_y"] = np.concatenate([data.scores, np.zeros(pad)]).astype(np.int64)
        assert data.max_score is not None
        shape = (len(data.systems), len(data.tasks), len(data.graders), size, data.max_score)
        return ModelInputs(values, shape_key=shape)

    def build(self, inputs: ModelInputs) -> Any:
        import pymc as pm
        from pymc.distributions.transforms import ordered

        n_s, n_t, n_g, size, top = inputs.shape_key
        coords = {"system": np.arange(n_s), "task": np.arange(n_t), "grader": np.arange(n_g),
                  "cutpoint": np.arange(1, top + 1), "row": np.arange(size)}
        with pm.Model(coords=coords) as model:
            data = {name: pm.Data(name, value, dims="row")
                    for name, value in inputs.values.items()}
            cutpoints = pm.Normal("cutpoints", 0.0, self.cut_scale, dims="cutpoint",
                                  transform=ordered,
                                  initval=np.linspace(-2.0, 2.0, top))
            eta = _linear.linear_predictor(self, data, n_g)
            logp = pm.logp(pm.OrderedLogistic.dist(eta=eta, cutpoints=cutpoints),
                           data["row_y"])
            pm.Potential("likelihood", (logp * data["row_mask"]).sum())
        return model

    def posterior_vars(self, data: ScoreData) -> list[str]:
        return ["cutpoints", *_linear.effect_vars(len(data.graders))]

    def prior_sample(self, data: ScoreData, draws: int,
                     rng: np.random.Generator) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        assert data.max_score is not None
        out = _linear.prior_effects(self, data, draws, rng)
        cut = np.sort(rng.normal(0.0, self.cut_scale, (draws, data.max_score)), axis=1)
        out["cutpoints"] = (("draw", "cutpoint"), cut)
        return out

    # --------------------------------------------------------------- quantities
    def exceedance_draws(self, posterior: xr.Dataset, data: ScoreData, thresholds: np.ndarray,
                         estimand: str) -> np.ndarray:
        from scipy.special import expit  # imported when used (issue 26)

        cut = posterior["cutpoints"].transpose("chain", "draw", ...).values
        chosen = cut[..., thresholds.astype(int) - 1]  # (C, D, threshold)

        def f(x: np.ndarray, block: slice) -> np.ndarray:
            c = chosen[:, block, None, None, None, :]
            return expit(x[..., None] - c)

        return _linear.average(posterior, estimand, f, len(thresholds))

    def mean_draws(self, posterior: xr.Dataset, data: ScoreData, estimand: str) -> np.ndarray:
        from scipy.special import expit  # imported when used (issue 26)

        cut = posterior["cutpoints"].transpose("chain", "draw", ...).values

        def f(x: np.ndarray, block: slice) -> np.ndarray:
            c = cut[:, block, None, None, None, :]
            return expit(x[..., None] - c).sum(axis=-1, keepdims=True)

        return _linear.average(posterior, estimand, f, 1)[..., 0]
