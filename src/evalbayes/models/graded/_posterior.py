"""The fitted result of a graded-outcome model and its prior predictive check.

:class:`ScorePosterior` holds the model, the scores, the sampler settings and the draws
(``posterior``, dims ``chain, draw`` and ``system`` / ``task`` / ``grader`` /
``cutpoint``), and derives what graded evaluations report:

* the exceedance curve ``P(score >= t)`` per system over thresholds ``t`` (dims ``chain,
  draw, system, threshold``);
* the mean score per system (``chain, draw, system``);
* comparisons of two systems: ``P(candidate > baseline)`` of the mean score and of each
  ``P(score >= t)``, with the difference (candidate minus baseline) and its interval.

Both estimands of the package are offered: ``"tasks"`` (the average over the data's tasks and
graders: how well on these tasks) and ``"population"`` (a new task drawn from the task
population, averaged over the data's graders: how well on tasks like these); comparisons
default to ``"population"`` (:func:`~evalbayes._core.names.default_estimand`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.files import write_bytes
from evalbayes._core.intervals import credible_interval
from evalbayes._core.names import check_ci_prob, default_estimand
from evalbayes._core.rendering import Rendered
from evalbayes._version import __version__
from evalbayes.inference import SamplerConfig
from evalbayes.io._scores import ScoreData
from evalbayes.models.graded._linear import label_posterior
from evalbayes.results import Diagnostics, convergence_diagnostics
from evalbayes.results._diagnostics import ConvergenceWarning
from evalbayes.results._fingerprint import fit_fingerprint

__all__ = ["SCORE_FIT_FORMAT", "ScorePosterior", "ScorePriorPredictive"]

#: The ``format`` attribute of a saved score fit (:meth:`ScorePosterior.save`); version 1
#: (before fingerprints) is refused by :func:`evalbayes.load` with a request to refit.
SCORE_FIT_FORMAT = "evalbayes-scores/2"

#: A prior that puts less than this share of its mass at or beyond the observed value (on
#: either side, give or take ``REACH`` of the scale) is too tight to cover the data.
TIGHT = 0.01
#: The slack, as a share of the scale (0..K for a mean score, 0..1 for a probability): an
#: observed value at the edge of the scale (every score the top level) is reached by a prior
#: with mass near that edge.
REACH = 0.05


def _threshold_coord(values: np.ndarray) -> np.ndarray:
    return values.astype(int) if np.all(values == np.round(values)) else values


@dataclass(frozen=True, eq=False)
class ScorePosterior:
    """The posterior of a graded-outcome model (``ScoreModel.fit``).

    Attributes
    ----------
    model : ScoreModel
        The fitted model (settings; typed ``Any`` here, as ``ScoreModel``'s module imports
        this one).
    data : ScoreData
        The scores.
    sampler : SamplerConfig
        How it was sampled.
    posterior : xarray.Dataset
        Parameter draws, dims ``(chain, draw, ...)``.
    sample_stats : xarray.Dataset or None
        The sampler's statistics (divergences), MCMC only.
    """

    model: Any  # a ScoreModel (its module imports this one)
    data: ScoreData
    sampler: SamplerConfig
    posterior: xr.Dataset
    sample_stats: xr.Dataset | None = None

    def _estimand(self, estimand: str | None) -> str:
        chosen = default_estimand(self.model.estimands()) if estimand is None else estimand
        return self.model.check_estimand(chosen)

    # --------------------------------------------------------------- quantities
    def exceedance(self, thresholds: Any = None, estimand: str | None = None) -> xr.DataArray:
        """Draws of ``P(score >= t)`` per system, dims ``(chain, draw, system, threshold)``.

        ``thresholds`` default to the levels ``1..K`` of an ordinal scale and ``0.1, ...,
        0.9`` of a continuous one; ``estimand`` "tasks" or "population" (default).
        """
        estimand = self._estimand(estimand)
        ts = self.model.thresholds(self.data, thresholds)
        values = self.model.exceedance_draws(self.posterior, self.data, ts, estimand)
        return xr.DataArray(values, dims=("chain", "draw", "system", "threshold"),
                            coords={"chain": self.posterior["chain"].values,
                                    "draw": self.posterior["draw"].values,
                                    "system": np.asarray(self.data.systems, dtype=object),
                                    "threshold": _threshold_coord(ts)},
                            name="P(score >= t)", attrs={"estimand": estimand})

    def mean_score(self, estimand: str | None = None) -> xr.DataArray:
        """Draws of each system's mean score (the level index ``0..K`` of an ordinal scale),
        dims ``(chain, draw, system)``."""
        estimand = self._estimand(estimand)
        values = self.model.mean_draws(self.posterior, self.data, estimand)
        return xr.DataArray(values, dims=("chain", "draw", "system"),
                            coords={"chain": self.posterior["chain"].values,
                                    "draw": self.posterior["draw"].values,
                                    "system": np.asarray(self.data.systems, dtype=object)},
                            name="mean score", attrs={"estimand": estimand})

    # --------------------------------------------------------------- tables
    def summary(self, thresholds: Any = None, estimand: str | None = None,
                ci_prob: float = 0.95) -> pd.DataFrame:
        """Per system and quantity (``mean score``, ``P(score >= t)``): the posterior mean and
        the equal-tailed ``ci_prob`` interval, beside the raw observed value."""
        ci_prob = check_ci_prob(ci_prob)
        mean = self.mean_score(estimand)
        exceed = self.exceedance(thresholds, estimand)
        observed_mean = self.data.observed_mean()
        scores = self.data.frame
        rows = []
        for system in mean["system"].values:
            rows.append(_row(system, "mean score", mean.sel(system=system), ci_prob,
                             float(observed_mean[system])))
            own = scores.loc[scores["system"] == system, "score"].to_numpy()
            for t in exceed["threshold"].values:
                rows.append(_row(system, f"P(score >= {t})",
                                 exceed.sel(system=system, threshold=t), ci_prob,
                                 float(np.mean(own >= t))))
        return pd.DataFrame(rows)

    def compare(self, *, baseline: str, candidate: str, thresholds: Any = None,
                estimand: str | None = None, ci_prob: float = 0.95) -> pd.DataFrame:
        """``candidate`` against ``baseline``: per quantity (the mean score, each ``P(score >=
        t)``), the posterior mean of the difference (candidate minus baseline), its
        ``ci_prob`` interval, ``P(candidate > baseline)`` and ``P(tie)``, the share of draws
        with no difference at all (1 for ``P(score >= 1)`` of partial credit when no score is
        exactly 1: both are 0), from the same draws (paired through the shared parameters:
        cut points, task and grader effects)."""
        ci_prob = check_ci_prob(ci_prob)
        for role, system in (("baseline", baseline), ("candidate", candidate)):
            if system not in self.data.systems:
                raise ValueError(f"{role} {system!r} is not a system of the data; systems: "
                                 f"{self.data.systems}")
        if baseline == candidate:
            raise ValueError(f"baseline and candidate are the same system {baseline!r}")
        quantities = [("mean score", self.mean_score(estimand))]
        exceed = self.exceedance(thresholds, estimand)
        quantities += [(f"P(score >= {t})", exceed.sel(threshold=t))
                       for t in exceed["threshold"].values]
        rows = []
        for label, draws in quantities:
            diff = draws.sel(system=candidate) - draws.sel(system=baseline)
            low, high = credible_interval(diff, ci_prob)
            rows.append({"quantity": label, "baseline": baseline, "candidate": candidate,
                         "difference": float(diff.mean()), "lower": float(low),
                         "upper": float(high), "P(candidate > baseline)": float((diff > 0).mean()),
                         "P(tie)": float((diff == 0).mean())})
        return pd.DataFrame(rows)

    def parameters(self, ci_prob: float = 0.95) -> pd.DataFrame:
        """Every parameter's posterior mean and ``ci_prob`` interval (cut points, system,
        task and grader effects, scales), one row per element."""
        ci_prob = check_ci_prob(ci_prob)
        rows = []
        for name, draws in self.posterior.data_vars.items():
            low, high = credible_interval(draws, ci_prob)
            mean = draws.mean(("chain", "draw"))
            extra = [d for d in draws.dims if d not in ("chain", "draw")]
            stacked = [(name, mean, low, high)] if not extra else None
            if stacked is not None:
                rows.append({"parameter": name, "mean": float(mean), "lower": float(low),
                             "upper": float(high)})
                continue
            flat = mean.stack(_i=extra)
            lows, highs = low.stack(_i=extra), high.stack(_i=extra)
            for i in range(flat.sizes["_i"]):
                label = ", ".join(str(flat[d].values[i]) for d in extra)
                rows.append({"parameter": f"{name}[{label}]", "mean": float(flat.values[i]),
                             "lower": float(lows.values[i]), "upper": float(highs.values[i])})
        return pd.DataFrame(rows)

    def diagnostics(self, warn: bool = True) -> Diagnostics:
        """R-hat, ESS and divergences (warns loudly when a bar is missed)."""
        return convergence_diagnostics(self.posterior, self.sample_stats, warn=warn)

    def warn_if_unconverged(self, context: str) -> bool:
        """Warn (:class:`~evalbayes.results.ConvergenceWarning`) when an MCMC fit failed its
        diagnostics, as :meth:`evalbayes.results.Posterior.warn_if_unconverged` does: a
        reused fit (``load``) stays loud. Returns whether it passed."""
        if self.approximate or not self.is_mcmc:
            return True
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diag = self.diagnostics(warn=False)
        if not diag.passed:
            warnings.warn(
                f"{context}: {self.label} failed its convergence diagnostics "
                f"({'; '.join(diag.problems)}); its numbers may be wrong (refit with more "
                "draws/tune)", ConvergenceWarning, stacklevel=3)
        return diag.passed

    # --------------------------------------------------------------- fit file
    @property
    def approximate(self) -> bool:
        """True when the draws came from variational inference (approximate intervals)."""
        return self.sampler.approximate

    @property
    def is_mcmc(self) -> bool:
        """True when the draws come from MCMC and need convergence diagnostics."""
        return self.sampler.mcmc

    @property
    def label(self) -> str:
        """Short description: model, inference method, chains x draws, and APPROXIMATE where
        it applies."""
        return self.sampler.describe(self.model.name)

    def groups(self) -> dict[str, xr.Dataset]:
        """The fit's groups as written to a file: ``posterior`` (float draws),
        ``sample_stats`` (its numeric per-draw statistics, MCMC only) and ``observed_data``
        (:meth:`ScoreData.to_dataset`), labels as str."""
        out = {"posterior": _plain(self.posterior.astype({v: float for v in self.posterior}))}
        if self.sample_stats is not None:
            keep = [name for name, var in self.sample_stats.data_vars.items()
                    if var.dtype.kind in "biuf" and set(var.dims) <= {"chain", "draw"}]
            out["sample_stats"] = _plain(self.sample_stats[keep])
        out["observed_data"] = self.data.to_dataset()
        return out

    def save(self, path: Any) -> Path:
        """Write the fit to NetCDF and return the path: groups ``posterior``,
        ``sample_stats``, ``observed_data`` (:meth:`groups`); attributes ``format``
        (:data:`SCORE_FIT_FORMAT`), ``model_config`` and ``sampler`` (JSON), the evalbayes
        version, the scores' source and the fingerprints of every group and setting
        (:func:`evalbayes.results._fingerprint.fit_fingerprint`), which
        :func:`evalbayes.load` checks. Built in memory and written through a temporary file
        renamed over ``path`` (:func:`evalbayes._core.files.write_bytes`): a crash never
        leaves a truncated file."""
        import json

        path = Path(path)
        if path.is_dir():
            raise ValueError(f"{path}: is a directory; give a file name such as fit.nc")
        path.parent.mkdir(parents=True, exist_ok=True)
        groups = self.groups()
        config, sampler = self.model.to_config(), self.sampler.to_dict()
        tree = xr.DataTree.from_dict({f"/{k}": v for k, v in groups.items()})
        tree.attrs = {"format": SCORE_FIT_FORMAT, "evalbayes_version": __version__,
                      "model_config": json.dumps(config, sort_keys=True),
                      "sampler": json.dumps(sampler, sort_keys=True),
                      "source": self.data.source,
                      "fingerprint": json.dumps(fit_fingerprint(groups, config, sampler),
                                                sort_keys=True)}
        view = tree.to_netcdf(engine="h5netcdf")  # in memory, then one atomic write
        content = bytes(view)  # copied out and released at once, as Posterior.save does
        if isinstance(view, memoryview):
            view.release()
        del view
        return write_bytes(path, content)

    @classmethod
    def from_groups(cls, model: Any, sampler: SamplerConfig, groups: dict[str, xr.Dataset],
                    source: str = "<file>") -> ScorePosterior:
        """The inverse of :meth:`groups` (used by :func:`evalbayes.load`): the scores
        re-validated, the draws' labels restored from the scores."""
        data = ScoreData.from_dataset(groups["observed_data"], source=source)
        posterior = groups["posterior"]
        for dim, labels in (("system", data.systems), ("task", data.tasks),
                            ("grader", data.graders)):
            if dim in posterior.dims and posterior.sizes[dim] != len(labels):
                raise ValueError(f"{source}: the draws have {posterior.sizes[dim]} {dim}s, "
                                 f"the scores {len(labels)}")
        return cls(model, data, sampler, label_posterior(posterior, data),
                   groups.get("sample_stats"))

    def __repr__(self) -> str:
        return (f"ScorePosterior({self.model.name}, {self.data!r}, "
                f"{self.posterior.sizes['chain']} chains x {self.posterior.sizes['draw']} draws)")


def _plain(ds: xr.Dataset) -> xr.Dataset:
    """Object-dtype labels as str (NetCDF writes no Python objects)."""
    return ds.assign_coords({name: ds[name].values.astype(str) for name in ds.coords
                             if ds[name].dtype == object}).map(
        lambda v: v.astype(str) if v.dtype == object else v)


def _row(system: str, quantity: str, draws: xr.DataArray, ci_prob: float,
         observed: float) -> dict[str, Any]:
    low, high = credible_interval(draws, ci_prob)
    return {"system": system, "quantity": quantity, "mean": float(draws.mean()),
            "lower": float(low), "upper": float(high), "observed": observed}


def too_tight(draws: np.ndarray, observed: float, slack: float) -> bool:
    """Whether prior ``draws`` barely reach ``observed``: less than :data:`TIGHT` of them at
    or below ``observed + slack``, or at or above ``observed - slack``."""
    low = float(np.mean(draws <= observed + slack))
    high = float(np.mean(draws >= observed - slack))
    return bool(low < TIGHT or high < TIGHT)


@dataclass(frozen=True)
class ScorePriorPredictive(Rendered):
    """Prior predictive check of a graded-outcome model on a data set's shape.

    Attributes
    ----------
    model : str
        The model's name.
    table : pandas.DataFrame
        Per system and quantity (``mean score``, ``P(score >= t)`` of a new task): prior
        quantiles (5, 50, 95 %), the observed value (raw mean; share of scores at or above
        ``t``), the prior probability of a value at most the observed one, and ``too tight``
        when less than 1 % of the prior lies at or beyond the observed value on either side,
        give or take 5 % of the scale (:func:`too_tight`: the prior barely reaches the data).
    draws : int
        Prior draws.
    """

    _settings_fields = ("model", "draws")

    model: str
    table: pd.DataFrame
    draws: int

    @classmethod
    def build(cls, model: Any, data: ScoreData, prior: xr.Dataset,
              thresholds: np.ndarray) -> ScorePriorPredictive:
        """Push prior draws (one chain) through the model's population estimand."""
        mean = model.mean_draws(prior, data, "population")[0]  # (draw, system)
        exceed = model.exceedance_draws(prior, data, thresholds, "population")[0]
        scores = data.frame
        rows = []
        for s, system in enumerate(data.systems):
            own = scores.loc[scores["system"] == system, "score"].to_numpy()
            scale = float(data.max_score) if data.max_score is not None else 1.0
            items = [("mean score", mean[:, s], float(own.mean()), scale)]
            items += [(f"P(score >= {t:g})", exceed[:, s, j], float(np.mean(own >= t)), 1.0)
                      for j, t in enumerate(thresholds)]
            for label, x, observed, width in items:
                rows.append({"system": system, "quantity": label,
                             "q05": float(np.quantile(x, 0.05)),
                             "q50": float(np.quantile(x, 0.5)),
                             "q95": float(np.quantile(x, 0.95)), "observed": observed,
                             "prior P(<= observed)": float(np.mean(x <= observed)),
                             "too tight": too_tight(x, observed, REACH * width)})
        return cls(model.description, pd.DataFrame(rows), int(mean.shape[0]))

    def to_frame(self) -> pd.DataFrame:
        """One row per (system, quantity)."""
        return self.table

    def title(self) -> str:
        """E.g. ``Prior predictive (ordinal, 1000 draws): 0 of 12 observed values outside the
        prior's reach``."""
        tight = int(self.table["too tight"].sum())
        return (f"Prior predictive ({self.model}, {self.draws} draws): {tight} of "
                f"{len(self.table)} observed values where the prior barely reaches (under "
                f"{TIGHT:.0%} of it on one side, give or take {REACH:.0%} of the scale)")
