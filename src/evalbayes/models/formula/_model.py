"""A binomial GLMM written as a formula: covariates, crossed and nested group effects.

For each (system, task) cell with ``c`` successes of ``n`` trials::

    c[s, t]       ~ Binomial(n[s, t], expit(eta[s, t]))
    eta[s, t]     = X[s, t] beta + sum_g sum_j Z_g[s, t, j] u_g[level_g(s, t), j]
    u_g[l, j]     = sd_g z_g[l, j],   z_g ~ N(0, 1)        (non-centred group effects)
    sd_g          ~ HalfNormal(sigma_task_prior)  for a term grouped by the task (or a task
                    coordinate), HalfNormal(sigma_prior) otherwise (``sd_priors`` overrides)
    beta_0        ~ N(intercept_prior)        (the intercept at the covariates' mean)
    beta_j        ~ N(0, coef_prior / sd(x_j))
    (u_a, u_b)[l] ~ MvNormal(0, diag(sd) R diag(sd)),  R ~ LKJ(lkj_eta): the terms of one
                    correlated ``(1 + x | g)`` (:mod:`._correlated`)

``X`` and the ``Z_g`` come from the formula's right-hand side in lme4 / brms / bambi notation
(``harness + date + (1 | task) + (1 | run)``) over the variables ``system``, ``task`` and every
system and task coordinate of the data (:mod:`._design`). This is the generalised linear mixed
model of N. E. Breslow and D. G. Clayton ("Approximate inference in generalized linear mixed
models", *JASA* 88, 1993, 9-25) with the weakly-informative logit-scale priors of A. Gelman et
al. (*Annals of Applied Statistics* 2, 2008) and the sd priors of A. Gelman ("Prior
distributions for variance parameters in hierarchical models", *Bayesian Analysis* 1, 2006);
continuous columns are centred for sampling (the stored ``beta`` is on the data's scale).

The estimands, by the grouping factor of each term (:data:`TERM_KINDS`):

* ``"tasks"`` (these tasks): each system's mean over its observed tasks, conditional on the
  fitted effects of terms grouped by the task or a task coordinate (``(1 | task)``, ``(1 |
  category)``, ``(1 | system:task)``) and of terms grouped by system-level factors (``(1 |
  model)``);
* ``"population"`` (new tasks like these): the task-grouped effects are drawn anew from their
  normal distributions (integrated by quadrature) and the common covariates of the tasks are
  averaged over the system's observed tasks;
* terms grouped by a ``noise`` variable (default ``run``) are integrated as noise in both: the
  answer is for a new run, so run-to-run spread widens the intervals and the comparisons.

pass@k beyond the trials per task (``k > n``) then rests on the normal shape of the task
effects, which the validity benchmarks (benchmarks/validity/) found weaker on real data than the
rate grid's learned distribution; the summary says so beside those rows.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit, log_expit

from evalbayes.data import EvalData
from evalbayes.models._base import Model, ModelInputs, binomial_log_choose
from evalbayes.models._quadrature import normal_rate_curve
from evalbayes.models.formula._correlated import (
    correlated_effects,
    correlated_key,
    cross_variance,
    noise_block_effects,
    pair_labels,
    pairs,
)
from evalbayes.models.formula._design import (
    TERM_KINDS,
    FormulaDesign,
    coef_scales,
    design,
    split_formula,
)
from evalbayes.results._posterior import Posterior

__all__ = ["EXTRAPOLATION_NOTE", "FormulaModel", "FormulaPosterior", "effects"]

#: The note beside pass@k / pass^k rows with k beyond the trials per task.
EXTRAPOLATION_NOTE = ("k > n: rests on the normal task effect (weaker on real data than the "
                      "rate grid; benchmarks/validity)")

_DESIGNS: OrderedDict[tuple[Any, ...], tuple[xr.Dataset, FormulaDesign]] = OrderedDict()


def _term_var(i: int) -> str:
    return f"u_{i}"


#: Most classes of cells (distinct rows of the common design) whose locations are drawn
#: jointly (:meth:`FormulaModel.location_block`); beyond it one class holds every cell.
MAX_LOCATION_CLASSES = 64


@dataclass(frozen=True)
class LocationBlock:
    """The identified locations of a formula's cells (:meth:`FormulaModel.location_block`).

    ``class_x`` (class, coef): each class's row of the centred common design; ``terms``: the
    intercept-only group terms, each with ``entry`` (its levels' index into its means) and
    ``counts`` (levels per mean); ``columns`` (class, mean): 1 where a mean enters a class's
    location. ``matrix`` = ``[class_x | columns]`` maps the coefficients and the means to
    the class locations.
    """

    class_x: np.ndarray
    terms: tuple[int, ...]
    entry: tuple[np.ndarray, ...]
    counts: tuple[np.ndarray, ...]
    columns: np.ndarray

    @property
    def matrix(self) -> np.ndarray:
        return np.concatenate([self.class_x, self.columns], axis=1)

    @property
    def widths(self) -> tuple[int, ...]:
        """Means per term."""
        return tuple(len(c) for c in self.counts)

    @property
    def spanned(self) -> bool:
        """Whether the coefficients alone move every class location (``class_x`` of full
        row rank): then no direction of the locations has a prior variance set by the group
        sds alone, and :meth:`FormulaModel.build` draws them centred; else non-centred."""
        return bool(np.linalg.matrix_rank(self.class_x) == len(self.class_x))


def _location_terms(d: FormulaDesign, observed: np.ndarray) -> tuple[int, ...]:
    """Intercept-only group terms (``(1 | g)``, more than one level; not the intercept of a
    correlated ``(1 + x | g)``)."""
    return tuple(i for i, t in enumerate(d.terms)
                 if len(t.columns) == 1 and np.all(t.expr[observed] == 1.0)
                 and len(t.levels) > 1 and not any(i in b for b in d.blocks))


def _block(d: FormulaDesign, terms: tuple[int, ...], class_x: np.ndarray,
           cls: np.ndarray) -> LocationBlock:
    """A :class:`LocationBlock` with grid rows in classes ``cls``: a term nested in the
    classes gets one mean per class it has levels in, any other one grand mean."""
    n_class = len(class_x)
    entries, counts, columns = [], [], []
    for i in terms:
        t = d.terms[i]
        pairs = np.unique(np.stack([t.level, cls]), axis=1)
        if n_class > 1 and pairs.shape[1] == len(np.unique(t.level)):
            level_class = np.zeros(len(t.levels), np.int64)
            level_class[pairs[0]] = pairs[1]
            present = np.unique(level_class)
            entry = np.searchsorted(present, level_class)
            col = np.zeros((n_class, len(present)))
            col[present, np.arange(len(present))] = 1.0
        else:
            entry = np.zeros(len(t.levels), np.int64)
            col = np.ones((n_class, 1))
        entries.append(entry)
        counts.append(np.bincount(entry, minlength=col.shape[1]).astype(float))
        columns.append(col)
    return LocationBlock(class_x=np.asarray(class_x, float), terms=tuple(terms),
                         entry=tuple(entries), counts=tuple(counts),
                         columns=np.concatenate(columns, axis=1))


def centred_levels(trials: np.ndarray, wins: np.ndarray) -> np.ndarray:
    """Which levels of a group term to centre: those the data inform more than the prior.

    A level's effect is centred when its likelihood precision exceeds the prior precision of
    the effects, ``I_j s^2 >= 1`` (M. Betancourt and M. Girolami, "Hamiltonian Monte Carlo
    for hierarchical models", 2015, arXiv 1312.0906: the centred form pays where the data
    dominate, the non-centred one where the prior does; O. Papaspiliopoulos, G. O. Roberts
    and M. Skold, *Statistical Science* 22, 2007, 59-73). ``I_j = n_j p_j (1 - p_j)``,
    ``p_j = (c_j + 1/2) / (n_j + 1)``, is the binomial information about the level's logit;
    ``s^2 = max(0, var_j(logit p_j) - mean_j(1 / I_j))`` the method-of-moments spread of the
    effects over the levels whose trials neither all fail nor all succeed (those carry one
    bound only and are never centred). Where the levels barely differ (``s^2`` near 0, the
    posterior of the sd reaches zero) no level is centred: a centred term would sit in a
    funnel with its sd.

    Parameters
    ----------
    trials, wins : numpy.ndarray
        Trials and successes per level.

    Returns
    -------
    numpy.ndarray
        Boolean, per level: centre it.
    """
    trials = np.asarray(trials, float)
    wins = np.asarray(wins, float)
    mixed = (wins > 0) & (wins < trials)
    if mixed.sum() < 2:
        return np.zeros(len(trials), bool)
    p = (wins[mixed] + 0.5) / (trials[mixed] + 1.0)
    info = trials[mixed] * p * (1.0 - p)
    spread = max(0.0, float(np.var(np.log(p / (1.0 - p)), ddof=1) - np.mean(1.0 / info)))
    out = np.zeros(len(trials), bool)
    out[np.flatnonzero(mixed)] = info * spread >= 1.0
    return out


@dataclass(frozen=True, eq=False)
class FormulaPosterior(Posterior):
    """Posterior of a :class:`FormulaModel` fit: :meth:`effects` and notes in the summary."""

    def effects(self, ci_prob: float = 0.95) -> pd.DataFrame:
        """Each coefficient and group sd with its interval; see :func:`effects`."""
        return effects(self, ci_prob)

    def model_note(self, k: Any = None) -> str | None:
        """What the estimands mean for this formula (one paragraph for outputs)."""
        model = self.model
        assert isinstance(model, FormulaModel)
        return model.estimand_note(self.data, k)

    def level_curve(self, variable: str, metric: str = "pass@k", k: Any = 1,
                    estimand: str | None = None) -> xr.DataArray:
        """pass@k / pass^k of each level of a system variable, (chain, draw, ``variable``, k).

        A level's value in each draw is the mean of :meth:`Posterior.curve` over the systems
        with that level of the system coordinate ``variable`` (``harness``, ``agent``, ...),
        every system weighted equally: ``f_L = (1 / |S_L|) sum_{s in S_L} f_s``. The draws
        stay joint, so a difference of two levels is paired (the same tasks, the same draws
        of every shared effect; Gelman et al., *Bayesian Data Analysis*, 3rd ed., 2013, §4.5).
        ``estimand`` defaults as in :func:`~evalbayes.results.compare`.
        """
        from evalbayes._core.names import default_estimand

        if estimand is None:
            estimand = default_estimand(self.model.estimands())
        data = self.data
        if variable in data.task_coords or variable == "task":
            raise ValueError(f"{variable!r} is a task variable; levels of a system variable "
                             "are compared (the tasks are averaged over in every level)")
        if variable == "system":
            values = np.asarray(data.systems, dtype=str)
        elif variable in data.system_coords:
            values = np.asarray(data.system_coords[variable]).astype(str)
        else:
            raise ValueError(f"{variable!r} is not a system coordinate of the fit's data; "
                             f"known: {sorted(['system', *data.system_coords])}")
        draws = self.curve(metric, k, estimand=estimand)
        grouped = draws.groupby(xr.DataArray(values, dims="system", name=variable)).mean(
            "system")
        out = grouped.transpose("chain", "draw", variable, "k")
        out.attrs = dict(draws.attrs)
        return out

    def compare_levels(self, variable: str, levels: Any = None, metric: str = "pass@k",
                       k: Any = 1, estimand: str | None = None, rope: float = 0.01,
                       ci_prob: float = 0.95) -> Any:
        """Paired P(B > A), B - A and expected loss of two (or more) levels of a system
        variable: :func:`~evalbayes.results.compare` on :meth:`level_curve` (two harnesses,
        two agents, two dates; a Comparison whose units are the levels)."""
        from evalbayes.results._comparison import Comparison

        self.warn_if_unconverged("compare_levels")
        draws = self.level_curve(variable, metric, k, estimand=estimand)
        if draws.sizes[variable] < 2:
            raise ValueError(f"{variable!r} has one level in the data; nothing to compare")
        return Comparison.from_draws(draws, rope=rope, ci_prob=ci_prob, systems=levels,
                                     label=f"{self.label}, levels of {variable}")

    def summary(self, k: Any = 1, **kwargs: Any) -> pd.DataFrame:
        """:meth:`Posterior.summary`, with :data:`EXTRAPOLATION_NOTE` in ``note`` where ``k``
        exceeds the trials per task."""
        table = super().summary(k, **kwargs)
        note = np.where(table["extrapolated"].astype(bool), EXTRAPOLATION_NOTE, "")
        if "note" in table:
            old = table["note"].astype(str)
            table["note"] = [("; ".join(x for x in (a, b) if x)) for a, b in zip(old, note,
                                                                                   strict=True)]
        else:
            table["note"] = note
        return table


@dataclass(frozen=True)
class FormulaModel(Model):
    """Binomial GLMM from a formula (module docstring).

    Parameters
    ----------
    formula : str
        ``"c | trials(n) ~ harness + (1 | task) + (1 | run)"`` (brms), ``"p(c, n) ~ ..."``
        (bambi) or the right-hand side alone. Variables: ``system``, ``task`` and the data's
        system and task coordinates; ``C(x)`` makes a numeric coordinate categorical, ``a:b``
        and ``a*b`` are interactions, ``(x | g)`` a varying slope, ``(1 | a:b)`` a nested
        group.
    noise : tuple of str
        Variables whose group terms are integrated as noise in both estimands (default
        ``("run",)``); ``()`` conditions on every fitted effect.
    intercept_prior : (float, float)
        Mean and sd of the normal prior of the intercept at the covariates' mean (logit).
    coef_prior : float
        Prior sd of a common coefficient times the sd of its column (logit per sd of x).
    sigma_prior, sigma_task_prior : float
        HalfNormal scales of the group sds (task-grouped terms take ``sigma_task_prior``).
    sd_priors : tuple of (str, float)
        Per-term HalfNormal scales, by term name as formulae writes it (``"1|system:task"``,
        ``"x|g"`` for the slope of ``(1 + x | g)``); given as a dict in specs and configs.
    lkj_eta : float
        LKJ shape of the correlation matrix of a correlated term ``(1 + x | g)`` (default 2:
        one correlation of two columns ~ 2 Beta(2, 2) - 1; :mod:`._correlated`).

    Notes
    -----
    The population integral over the task-grouped and noise terms is the split-off trapezoid
    rule of :func:`~evalbayes.models._quadrature.normal_rate_curve` (error < 1e-7). The
    intercept and slopes of one ``(1 + x | g)`` are correlated (lme4 / brms; ``(x || g)``
    keeps them independent), each with its own sd; bambi was not used because it requires
    ``pymc < 6`` (bambi 0.17.2).
    """

    name: ClassVar[str] = "formula"
    posterior_class: ClassVar[type[Posterior]] = FormulaPosterior

    formula: str = ""
    noise: tuple[str, ...] = ("run",)
    intercept_prior: tuple[float, float] = (0.0, 1.5)
    coef_prior: float = 1.0
    sigma_prior: float = 1.0
    sigma_task_prior: float = 2.0
    sd_priors: tuple[tuple[str, float], ...] = ()
    lkj_eta: float = 2.0

    def __post_init__(self) -> None:
        split_formula(self.formula)
        if isinstance(self.noise, str):
            object.__setattr__(self, "noise", (self.noise,))
        object.__setattr__(self, "noise", tuple(str(v) for v in self.noise))
        priors = self.sd_priors
        if isinstance(priors, dict):
            priors = tuple(priors.items())
        priors = tuple(sorted((str(a), float(b)) for a, b in priors))
        object.__setattr__(self, "sd_priors", priors)
        if len(self.intercept_prior) != 2 or not self.intercept_prior[1] > 0:
            raise ValueError(f"intercept_prior must be (mean, sd > 0), got {self.intercept_prior}")
        for label in ("coef_prior", "sigma_prior", "sigma_task_prior", "lkj_eta"):
            value = getattr(self, label)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{label} must be a positive number, got {value!r}")
        for term, value in priors:
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"sd_priors[{term!r}] must be a positive number, got {value!r}")

    # ------------------------------------------------------------------ configuration
    def to_config(self) -> dict[str, Any]:
        """As :meth:`Model.to_config`, with ``sd_priors`` a dict (a TOML table)."""
        config = super().to_config()
        config["sd_priors"] = dict(self.sd_priors)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Model:
        """As :meth:`Model.from_config`; ``sd_priors`` may be a dict."""
        config = dict(config)
        priors = config.pop("sd_priors", {})
        model = super().from_config(config)
        assert isinstance(model, FormulaModel)
        return replace(model, sd_priors=tuple(dict(priors).items()))

    @property
    def description(self) -> str:
        return f"{self.name} ({split_formula(self.formula)})"

    # ------------------------------------------------------------------ design
    def design(self, data: EvalData) -> FormulaDesign:
        """The formula's design over ``data`` (cached for the last few data sets)."""
        key = (self.formula, self.noise, id(data.dataset))
        hit = _DESIGNS.get(key)
        if hit is not None and hit[0] is data.dataset:
            _DESIGNS.move_to_end(key)
            return hit[1]
        value = design(data, self.formula, self.noise)
        _DESIGNS[key] = (data.dataset, value)
        while len(_DESIGNS) > 8:
            _DESIGNS.popitem(last=False)
        return value

    def check_data(self, data: EvalData) -> None:
        """The formula evaluates on the data; every system has an observed cell."""
        d = self.design(data)
        n = data.n.values
        empty = np.flatnonzero(n.sum(axis=1) == 0)
        if len(empty):
            raise ValueError(f"system {data.systems[empty[0]]!r} has no observed cell")
        known = {t.name for t in d.terms}
        unknown = sorted(set(dict(self.sd_priors)) - known)
        if unknown:
            raise ValueError(f"sd_priors names {unknown}, not terms of the formula; its terms: "
                             f"{sorted(known)}")
        if d.X.shape[1] == 0 and not d.terms:
            raise ValueError(f"formula {self.formula!r} has no terms")

    def term_prior(self, kind: str, name: str) -> float:
        """HalfNormal scale of a group term's sd."""
        given = dict(self.sd_priors)
        if name in given:
            return given[name]
        return self.sigma_task_prior if kind == "task" else self.sigma_prior

    def location_split(self, d: FormulaDesign, observed: np.ndarray) -> int | None:
        """The intercept-only group term (``(1 | g)``) whose mean has the widest prior,
        ``prior_scale^2 / levels``: the one whose deviations are centred where its levels
        carry many trials (:meth:`location_block`); None without an intercept."""
        if d.intercept is None:
            return None
        ones = [(self.term_prior(t.kind, t.name) ** 2 / len(t.levels), i)
                for i, t in enumerate(d.terms) if i in _location_terms(d, observed)]
        return max(ones)[1] if ones else None

    def location_block(self, d: FormulaDesign, observed: np.ndarray,
                       centre: np.ndarray) -> LocationBlock | None:
        """The locations the data identify, and how each group term's mean enters them.

        Cells are sorted into classes by their row of the common design ``X`` (for
        ``agent + ...``: one class per agent). An intercept-only term ``(1 | g)`` whose every
        level lies in one class (nested: ``(1 | agent:task)``, ``(1 | run)``) contributes one
        mean per class; any other (``(1 | task)``, crossing the classes) its grand mean. The
        class location ``l_c = x_c beta + sum_g m_g[c]`` is what the counts of a class pin
        down; :meth:`build` draws it and, given it, the split into coefficients and means from
        their conditional prior. With more than :data:`MAX_LOCATION_CLASSES` classes, or
        classes the coefficients and means cannot move independently (a rank-deficient map),
        one class holds every cell (the intercept and the grand means). None when no term is
        intercept-only.
        """
        terms = _location_terms(d, observed)
        if not terms:
            return None
        Xc = d.X - centre
        if d.X.shape[1]:
            rows, cls = np.unique(d.X, axis=0, return_inverse=True)
            class_x = rows - centre
        else:
            class_x, cls = np.zeros((1, 0)), np.zeros(len(d.X), np.int64)
        cls = np.asarray(cls).ravel()
        block = _block(d, terms, class_x, cls)
        if (len(class_x) > MAX_LOCATION_CLASSES
                or np.linalg.matrix_rank(block.matrix) < len(class_x)):
            block = _block(d, terms, Xc[observed].mean(axis=0, keepdims=True),
                           np.zeros(len(d.X), np.int64))
        return block

    # ------------------------------------------------------------------ template hooks
    def inputs(self, data: EvalData) -> ModelInputs:
        """Observed rows' design (padded to a power of two), counts and prior scales."""
        from evalbayes.inference import padded_size

        d = self.design(data)
        n, c = data.n.values, data.c.values
        s_idx, t_idx = np.nonzero(n > 0)
        rows = d.rows(s_idx, t_idx)
        size = padded_size(len(rows))
        pad = size - len(rows)
        padded = np.concatenate([rows, np.zeros(pad, np.int64)])
        observed = np.zeros(len(d.X), bool)
        observed[rows] = True
        scales = coef_scales(d, observed, self.coef_prior)
        X = d.X[padded]
        centre = np.zeros(d.X.shape[1])
        intercept = d.intercept
        if intercept is not None:
            centre = d.X[observed].mean(axis=0)
            centre[intercept] = 0.0
            scales[intercept] = self.intercept_prior[1]
        values: dict[str, np.ndarray] = {
            "X": X - centre,
            "centre": centre,
            "coef_scale": scales,
            "cell_n": np.concatenate([n[s_idx, t_idx], np.zeros(pad)]).astype(float),
            "cell_c": np.concatenate([c[s_idx, t_idx], np.zeros(pad)]).astype(float),
        }
        for i, term in enumerate(d.terms):
            values[f"cell_level_{i}"] = term.level[padded]
            values[f"cell_expr_{i}"] = term.expr[padded]
        block = self.location_block(d, observed, centre)
        split = self.location_split(d, observed)
        # that term's deviations centred where its levels carry many trials (as the factorial
        # model's "auto": Papaspiliopoulos, Roberts and Skold 2007), non-centred below; only
        # a term with one (grand) mean in the location block
        centered: tuple[int, int] | None = None  # (term, informative levels)
        if (split is not None and block is not None
                and block.widths[block.terms.index(split)] == 1
                and float(n.sum()) / len(d.terms[split].levels) >= 10.0):
            # per level, by its data: centred where the level's trials pin its effect down
            # more tightly than the effects spread (:func:`centred_levels`), else non-centred
            term = d.terms[split]
            level = term.level[rows]
            trials = np.bincount(level, n[s_idx, t_idx], len(term.levels))
            wins = np.bincount(level, c[s_idx, t_idx], len(term.levels))
            informative = centred_levels(trials, wins)
            # the levels reordered informative first, and back
            order = np.concatenate([np.flatnonzero(informative), np.flatnonzero(~informative)])
            values[f"location_order_{split}"] = np.argsort(order)
            centered = (split, int(informative.sum()))
        block_key = None
        if block is not None:
            values["location_x"] = block.class_x
            values["location_columns"] = block.columns
            for i, entry, counts in zip(block.terms, block.entry, block.counts, strict=True):
                if len(counts) > 1:  # a mean per class (one grand mean needs no index)
                    values[f"location_entry_{i}"] = entry
                values[f"location_count_{i}"] = counts
            block_key = (len(block.class_x), block.terms, block.widths, block.spanned)
        shape_key = (size, X.shape[1], intercept,
                     tuple((len(t.levels), len(t.columns), self.term_prior(t.kind, t.name))
                           for t in d.terms), block_key, correlated_key(d), centered)
        return ModelInputs(values, shape_key)

    def build(self, inputs: ModelInputs) -> Any:
        """The PyMC model: centred common design, non-centred group effects, binomial.

        The coefficients and the means of the intercept-only group terms enter the likelihood
        (nearly) only through the class locations ``l = A theta`` (:meth:`location_block`;
        ``theta`` = coefficients and means, prior ``N(mu, Sigma)`` with ``Sigma`` diagonal:
        ``coef_scale^2`` and ``sd_g^2 / levels`` per mean). The sampler draws ``l ~ N(A mu,
        A Sigma A')`` (or ``l = A mu + L z``, ``L L' = A Sigma A'``, ``z ~ N(0, I)``, see
        below) and, given it, ``theta = mu
        + v + Sigma A' (A Sigma A')^{-1} (l - A (mu + v))`` with ``v ~ N(0, Sigma)``: a draw
        of the conditional prior (Matheron's rule; Y. Hoffman and E. Ribak, "Constrained
        realizations of Gaussian fields", *ApJ* 380, 1991, L5), so ``theta ~ N(mu, Sigma)``
        exactly, and the directions the data do not identify (an agent's coefficient against
        the mean of its agent-by-task effects, the intercept against the mean task effect)
        are independent of the likelihood. Each term's effects are its means plus deviations
        that sum to zero within a class (a term's iid normal effects split into their mean
        and the rest: the same prior).

        Where the coefficients alone move every class location (:attr:`LocationBlock.spanned`:
        ``agent + ...``, one class per agent) every direction of ``l`` has their fixed prior
        variance, and ``l`` is drawn centred (``l ~ N(A mu, A Sigma A')``), which the data of
        a class pin down. Where there are more classes than the coefficients move (each run
        its own class in a ``harness * date`` design) some directions of ``l`` have prior sd
        set by the group sds alone, a funnel where the classes carry few trials (M.
        Betancourt and M. Girolami, "Hamiltonian Monte Carlo for hierarchical models", 2015,
        arXiv 1312.0906): there ``l`` is non-centred, ``z`` sampled.
        """
        import pymc as pm
        import pytensor.tensor as pt

        size, n_coef, intercept, term_shapes, block_key, blocks, centered = inputs.shape_key
        n_levels_of = [shape[0] for shape in term_shapes]
        v = inputs.values
        coords: dict[str, Any] = {"cell": np.arange(size), "coef": np.arange(n_coef),
                                  "term": np.arange(len(term_shapes))}
        for i, (n_levels, n_cols, _) in enumerate(term_shapes):
            coords[f"level_{i}"] = np.arange(n_levels)
            coords[f"column_{i}"] = np.arange(n_cols)
        if block_key is not None:
            n_class, block_terms, widths, spanned = block_key
            coords["location_class"] = np.arange(n_class)
            coords["location_mean"] = np.arange(sum(widths))
            coords["location_param"] = np.arange(n_coef + sum(widths))
        with pm.Model(coords=coords) as model:
            X = pm.Data("X", v["X"], dims=("cell", "coef"))
            centre = pm.Data("centre", v["centre"], dims="coef")
            scale = pm.Data("coef_scale", v["coef_scale"], dims="coef")
            cell_n = pm.Data("cell_n", v["cell_n"], dims="cell")
            cell_c = pm.Data("cell_c", v["cell_c"], dims="cell")
            loc = np.zeros(n_coef)
            if intercept is not None:
                loc[intercept] = self.intercept_prior[0]
            sds = [pm.HalfNormal(f"sd_{i}", prior) for i, (_, _, prior) in
                   enumerate(term_shapes)]
            means: dict[int, Any] = {}
            if block_key is None:
                beta_c = loc + scale * pm.Normal("beta_z", 0.0, 1.0, dims="coef")
            else:
                class_x = pm.Data("location_x", v["location_x"], dims=("location_class", "coef"))
                columns = pm.Data("location_columns", v["location_columns"],
                                  dims=("location_class", "location_mean"))
                counts = {i: pm.Data(f"location_count_{i}", v[f"location_count_{i}"])
                          for i in block_terms}
                var = pt.concatenate([scale ** 2] + [sds[i] ** 2 / counts[i]
                                                     for i in block_terms])
                mu = pt.concatenate([pt.as_tensor(loc), pt.zeros(sum(widths))])
                A = pt.concatenate([class_x, columns], axis=1)
                cov = (A * var[None, :]) @ A.T
                if spanned:
                    # every direction of l has the coefficients' fixed prior variance: the
                    # data pin the locations down, centred
                    located = pm.MvNormal("location", mu=A @ mu, cov=cov,
                                          dims="location_class")
                    prior = mu + pt.sqrt(var) * pm.Normal("location_split_z", 0.0, 1.0,
                                                          dims="location_param")
                    theta = prior + var * (A.T @ pt.linalg.solve(cov, located - A @ prior,
                                                                 assume_a="pos"))
                else:
                    # more classes than the coefficients move: in the other directions l's
                    # prior sd is the group sds' alone, a funnel if centred; l = A mu + chol z
                    chol = pt.linalg.cholesky(cov)
                    z_loc = pm.Normal("location_z", 0.0, 1.0, dims="location_class")
                    v_split = pt.sqrt(var) * pm.Normal("location_split_z", 0.0, 1.0,
                                                       dims="location_param")
                    # Sigma A' (A Sigma A')^-1 (l - A (mu + v)) with l - A mu = chol z
                    gap = z_loc - pt.linalg.solve_triangular(chol, A @ v_split, lower=True)
                    theta = mu + v_split + var * (
                        A.T @ pt.linalg.solve_triangular(chol.T, gap, lower=False))
                beta_c = theta[:n_coef]
                start = n_coef
                for i, width in zip(block_terms, widths, strict=True):
                    means[i] = theta[start:start + width]
                    start += width
            eta = X @ beta_c
            if intercept is not None:
                # the stored intercept is that of the uncentred design
                shift_c = (centre * beta_c).sum()
                pm.Deterministic("beta", pt.set_subtensor(
                    beta_c[intercept], beta_c[intercept] - shift_c), dims="coef")
            else:
                pm.Deterministic("beta", beta_c, dims="coef")
            # correlated terms, (1 + x | g): each block's effects jointly (._correlated)
            correlated = correlated_effects(blocks, sds, n_levels_of, self.lkj_eta)
            for i, sd in enumerate(sds):
                level = pm.Data(f"cell_level_{i}", v[f"cell_level_{i}"], dims="cell")
                expr = pm.Data(f"cell_expr_{i}", v[f"cell_expr_{i}"], dims=("cell", f"column_{i}"))
                if i in correlated:
                    effect = correlated[i]
                elif i not in means:
                    effect = sd * pm.Normal(f"z_{i}", 0.0, 1.0,
                                            dims=(f"level_{i}", f"column_{i}"))
                elif widths[block_terms.index(i)] == 1:
                    # one grand mean: iid N(0, sd) = the mean + zero-sum deviations
                    if centered is not None and i == centered[0]:
                        # iid N(0, sd) effects w: over the k informative levels, their mean
                        # a = sd / sqrt(k) N(0, 1) (non-centred) plus centred zero-sum
                        # deviations ~ ZeroSumNormal(sd); sd * N(0, 1) at the levels whose
                        # trials all fail or all succeed; less the mean of w (the term's mean
                        # is in the location block)
                        k = centered[1]
                        parts = []
                        if k:
                            a = sd / np.sqrt(k) * pm.Normal(f"mean_z_{i}", 0.0, 1.0)
                            parts.append(a + pm.ZeroSumNormal(f"dev_{i}", sd, shape=k)
                                         if k > 1 else a[None])
                        if k < n_levels_of[i]:
                            parts.append(sd * pm.Normal(f"z_{i}", 0.0, 1.0,
                                                        shape=n_levels_of[i] - k))
                        w = pt.concatenate(parts)[pm.Data(f"location_order_{i}",
                                                          v[f"location_order_{i}"])]
                        dev = w - w.mean()
                    else:
                        dev = sd * pm.ZeroSumNormal(f"z_{i}", 1.0, dims=f"level_{i}")
                    effect = (means[i][0] + dev)[:, None]
                else:
                    # one mean per class: deviations that sum to zero within each class
                    entry = pm.Data(f"location_entry_{i}", v[f"location_entry_{i}"],
                                    dims=f"level_{i}")
                    z = pm.Normal(f"z_{i}", 0.0, 1.0, dims=f"level_{i}")
                    sums = pt.inc_subtensor(pt.zeros(means[i].shape[0])[entry], z)
                    dev = z - (sums / counts[i])[entry]
                    effect = (means[i][entry] + sd * dev)[:, None]
                u = pm.Deterministic(_term_var(i), effect, dims=(f"level_{i}", f"column_{i}"))
                eta = eta + (expr * u[level]).sum(axis=-1)
            if sds:
                pm.Deterministic("sd", pm.math.stack(sds), dims="term")
            pm.Binomial("c", n=cell_n, logit_p=eta, observed=cell_c, dims="cell")
        return model

    def posterior_vars(self, data: EvalData) -> list[str]:
        """``beta`` (coef), ``sd`` (term), each term's effects ``u_i`` and the correlations
        ``corr`` (corr_pair) of correlated terms."""
        d = self.design(data)
        return ["beta"] + (["sd"] + [_term_var(i) for i in range(len(d.terms))]
                           if d.terms else []) + (["corr"] if d.blocks else [])

    def sample(self, data: EvalData, sampler: Any) -> dict[str, xr.Dataset]:
        """The template's sampling, with the coefficient, term and level names as coords."""
        groups = super().sample(data, sampler)
        groups["posterior"] = self.label_effects(groups["posterior"], data)
        return groups

    def label_effects(self, posterior: xr.Dataset, data: EvalData) -> xr.Dataset:
        """Name the ``coef``, ``term``, ``level_i`` and ``column_i`` dims of draws."""
        d = self.design(data)
        coords: dict[str, Any] = {"coef": list(d.coefs)}
        if d.terms:
            coords["term"] = [t.name for t in d.terms]
            coords["term_kind"] = ("term", [t.kind for t in d.terms])
        for i, t in enumerate(d.terms):
            coords[f"level_{i}"] = list(t.levels)
            coords[f"column_{i}"] = list(t.columns)
        if d.blocks:
            coords["corr_pair"] = pair_labels(d)
        return posterior.assign_coords({k: v for k, v in coords.items()
                                        if (v[0] if isinstance(v, tuple) else k)
                                        in posterior.dims})

    # ------------------------------------------------------------------ draws
    def _eta(self, posterior: xr.Dataset, d: FormulaDesign, rows: np.ndarray,
             kinds: tuple[str, ...]) -> np.ndarray:
        """``X beta`` plus the group terms of ``kinds`` at ``rows``, (chain, draw, rows)."""
        post = posterior.transpose("chain", "draw", ...)
        eta = np.einsum("cdj,rj->cdr", post["beta"].values, d.X[rows])
        for i, t in enumerate(d.terms):
            if t.kind in kinds:
                u = post[_term_var(i)].values  # (chain, draw, level, column)
                eta += np.einsum("cdrj,rj->cdr", u[:, :, t.level[rows]], t.expr[rows])
        return eta

    def rates(self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice) -> np.ndarray:
        """``p[s, t]`` draws for a chunk of tasks, (chain, draw, system, chunk): the fitted
        system- and task-grouped effects, a fresh draw of each noise term (one per level,
        shared by the level's cells, the same for every chunk given ``seed``)."""
        d = self.design(data)
        n_sys = d.n_systems
        t_idx = np.arange(d.n_tasks)[tasks]
        ss, tt = np.meshgrid(np.arange(n_sys), t_idx, indexing="ij")
        rows = d.rows(ss.ravel(), tt.ravel())
        eta = self._eta(posterior, d, rows, ("system", "task"))
        post = posterior.transpose("chain", "draw", ...)
        chains, draws = post.sizes["chain"], post.sizes["draw"]
        in_blocks = {i for b in d.blocks for i in b}
        for i, t in enumerate(d.terms):
            if t.kind == "noise" and i not in in_blocks:
                rng = np.random.default_rng([int(seed), 23, i])
                sd = post["sd"].values[:, :, i]
                u = sd[:, :, None, None] * rng.standard_normal(
                    (chains, draws, len(t.levels), len(t.columns)))
                eta += np.einsum("cdrj,rj->cdr", u[:, :, t.level[rows]], t.expr[rows])
        if d.blocks:  # correlated noise terms, drawn jointly (._correlated)
            eta += noise_block_effects(post["sd"].values, post["corr"].values, d, rows, seed)
        return expit(eta.reshape(chains, draws, n_sys, len(t_idx)))

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """pass@k / pass^k of a new task (and a new level of every noise term), (chain, draw,
        system, k): per system, the mean over its observed tasks' rows of
        ``E[f(expit(m_r + e))]``, ``e ~ N(0, sum_g sd_g^2 sum_j Z_g[r, j]^2)`` over the
        task-grouped and noise terms, ``m_r`` the common part and the system-grouped effects
        (rows with the same design are computed once)."""
        d = self.design(data)
        post = posterior.transpose("chain", "draw", ...)
        chains, draws = post.sizes["chain"], post.sizes["draw"]
        n = data.n.values
        out = np.empty((chains, draws, d.n_systems, len(k)))
        sd = post["sd"].values if d.terms else np.zeros((chains, draws, 0))
        for s in range(d.n_systems):
            rows = d.rows(s, np.flatnonzero(n[s] > 0))
            key = [d.X[rows]]
            for t in d.terms:
                key.append(t.expr[rows])
                if t.kind == "system":
                    key.append(t.level[rows][:, None].astype(float))
            _, first, inverse, counts = np.unique(np.concatenate(key, axis=1), axis=0,
                                                  return_index=True, return_inverse=True,
                                                  return_counts=True)
            del inverse
            unique_rows = rows[first]
            centre = self._eta(posterior, d, unique_rows, ("system",))
            var = np.zeros_like(centre)
            for i, t in enumerate(d.terms):
                if t.kind in ("task", "noise"):
                    var += sd[:, :, i, None] ** 2 * (t.expr[unique_rows] ** 2).sum(axis=1)
            if d.blocks:  # x' Sigma x of correlated terms: their covariances (._correlated)
                var += cross_variance(sd, post["corr"].values, d, unique_rows, ("task", "noise"))
            curve = normal_rate_curve(centre, np.sqrt(var), k, metric)  # (c, d, U, k)
            out[:, :, s] = np.einsum("cduk,u->cdk", curve, counts / counts.sum())
        return out

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Binomial log pmf of the cells given every fitted effect (noise terms included)."""
        d = self.design(data)
        eta = self._eta(posterior, d, d.rows(s_idx, t_idx), TERM_KINDS)
        n = data.n.values[s_idx, t_idx].astype(float)
        c = data.c.values[s_idx, t_idx].astype(float)
        return binomial_log_choose(n, c) + c * log_expit(eta) + (n - c) * log_expit(-eta)

    # ------------------------------------------------------------------ words
    def estimand_note(self, data: EvalData, k: Any = None) -> str:
        """Which terms each estimand conditions on and which it integrates, in words."""
        d = self.design(data)
        by_kind = {kind: [t.name for t in d.terms if t.kind == kind] for kind in TERM_KINDS}
        parts = ['"tasks": these tasks (conditional on the fitted '
                 + (", ".join(by_kind["task"]) or "common terms") + ")",
                 '"population": new tasks like these ('
                 + (", ".join(by_kind["task"]) + " drawn anew" if by_kind["task"]
                    else "the observed tasks' covariates averaged; no task effect to draw")
                 + ")"]
        if by_kind["noise"]:
            parts.append("integrated as noise in both (a new run): "
                         + ", ".join(by_kind["noise"]))
        note = "formula model: " + "; ".join(parts) + "."
        if k is not None and (np.atleast_1d(np.asarray(k)) > data.n.values.max()).any():
            note += (" pass@k beyond k = n rests on the normal task effect (weaker on real "
                     "data than the rate grid; benchmarks/validity).")
        return note


def effects(posterior: Any, ci_prob: float = 0.95) -> pd.DataFrame:
    """Each common coefficient and group sd of a formula fit, with its interval.

    Rows: ``kind`` ("coefficient" on the logit scale, "sd" of a group term: its spread on
    the logit scale, or "correlation" of two terms of one ``(1 + x | g)``, named ``"1|g,
    x|g"``), ``name``, ``term_kind`` (for sds and correlations: "task", "system" or "noise", as
    the estimands treat it), ``mean``, ``sd``, ``lower``, ``upper`` (central ``ci_prob``
    interval) and ``p_positive`` (posterior probability that the coefficient or correlation
    is > 0; NaN for sds).
    """
    model = posterior.model
    if not isinstance(model, FormulaModel):
        raise ValueError(f"needs a formula-model posterior, got {model.name!r}")
    post = posterior.posterior
    tail = (1.0 - ci_prob) / 2.0
    rows = []

    def row(kind: str, name: str, term_kind: str, draws: np.ndarray) -> None:
        rows.append({"kind": kind, "name": name, "term_kind": term_kind,
                     "mean": float(draws.mean()), "sd": float(draws.std(ddof=1)),
                     "lower": float(np.quantile(draws, tail)),
                     "upper": float(np.quantile(draws, 1.0 - tail)),
                     "p_positive": float((draws > 0).mean()) if kind != "sd"
                     else float("nan")})

    for coef in post["coef"].values:
        row("coefficient", str(coef), "", post["beta"].sel(coef=coef).values.ravel())
    if "sd" in post:
        d = model.design(posterior.data)
        for i, t in enumerate(d.terms):
            row("sd", t.name, t.kind, post["sd"].values[..., i].ravel())
        for k, (label, (_, _, _, ta, _)) in enumerate(zip(pair_labels(d), pairs(d.blocks),
                                                          strict=True)):
            row("correlation", label, d.terms[ta].kind, post["corr"].values[..., k].ravel())
    table = pd.DataFrame(rows)
    table.attrs["ci_prob"] = float(ci_prob)
    return table
