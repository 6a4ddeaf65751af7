"""Judge error: true success rates and the judge's sensitivity / specificity, jointly.

When trials are graded by an LLM judge, the counts ``c`` are judge passes, not true passes.
A small gold subset of trials also carries a human label. Data (one :class:`EvalData`, built
by :func:`judge_data`): ``n[s, t]`` judged trials and ``c[s, t]`` judge passes per cell
(the gold trials included), plus four gold count variables per cell::

    gold_tp  judge pass, human pass      gold_fp  judge pass, human fail
    gold_fn  judge fail, human pass      gold_tn  judge fail, human fail

Model (Hui and Walter 1980; Joseph, Gyorkos and Coupal 1995, "Bayesian estimation of disease
prevalence and the parameters of diagnostic tests in the absence of a gold standard", with a
partial gold standard), for system ``s`` and task ``t``::

    logit p[s, t] = m[s] + sigma[s] z[s, t],   z ~ N(0, 1)      (true success rate)
    q1 ~ Beta(sens_prior)   sensitivity  P(judge pass | true pass)
    q0 ~ Beta(spec_prior)   specificity  P(judge fail | true fail)
    unlabelled trial:  judge pass ~ Bernoulli(q1 p + (1 - q0)(1 - p))
    gold trial:        human ~ Bernoulli(p),  judge | human ~ Bernoulli(q1 or 1 - q0)
    m[s] ~ N(m_prior),  sigma[s] ~ HalfNormal(sigma_prior)

``z`` is integrated out per cell by Gauss-Hermite quadrature, so the sampler sees ``2 S + 2``
parameters. The priors on ``q0, q1`` (default Beta(3, 1): mean 0.75, P(q < 0.5) = 0.125)
say the judge is better than chance, which also breaks the label-switching symmetry
``p -> 1 - p, q1 -> 1 - q0`` that a model without gold labels has.

Beside it: the frequentist Rogan-Gladen correction and PPI / PPI++
(:mod:`evalbayes.frequentist._judge`, :mod:`evalbayes.frequentist._ppi`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit, gammaln, log_expit, logsumexp

from evalbayes.data import EvalData
from evalbayes.inference import padded_size
from evalbayes.models._base import Model, ModelInputs
from evalbayes.models._quadrature import (
    check_hermite_size,
    normal_hermite_nodes,
    normal_rate_curve,
)
from evalbayes.results._posterior import Posterior

__all__ = [
    "GOLD_VARS",
    "JudgeErrorModel",
    "gold_accuracy",
    "judge_accuracy",
    "judge_crosscheck",
    "judge_data",
    "true_pass_rate",
]

GOLD_VARS: tuple[str, ...] = ("gold_tp", "gold_fn", "gold_fp", "gold_tn")


def judge_data(counts: EvalData | pd.DataFrame, gold: pd.DataFrame, **kwargs: Any) -> EvalData:
    """Judge counts plus a gold subset, as one :class:`EvalData` with the gold variables.

    Parameters
    ----------
    counts : EvalData or pandas.DataFrame
        Judge verdicts per (system, task): ``n`` judged trials, ``c`` judge passes, the gold
        trials included. A frame goes through :meth:`EvalData.from_frame` with ``kwargs``.
    gold : pandas.DataFrame
        One row per gold trial: columns ``system``, ``task``, ``judge`` (0/1, the judge's
        verdict on that trial) and ``human`` (0/1, the label).

    Raises
    ------
    ValueError
        Naming the gold row: unknown system or task, verdict or label not 0/1, more gold trials
        in a cell than judged trials, or gold judge passes (fails) exceeding the cell's ``c``
        (``n - c``).
    """
    data = counts if isinstance(counts, EvalData) else EvalData.from_frame(counts, **kwargs)
    missing = [col for col in ("system", "task", "judge", "human") if col not in gold.columns]
    if missing:
        raise ValueError(f"gold table lacks columns {missing}; it has {list(gold.columns)}")
    sys_pos = {name: i for i, name in enumerate(data.systems)}
    task_pos = {name: i for i, name in enumerate(data.tasks)}
    shape = data.shape
    tables = {name: np.zeros(shape, np.int64) for name in GOLD_VARS}
    for row, rec in enumerate(gold.itertuples(index=False)):
        s, t = sys_pos.get(str(rec.system)), task_pos.get(str(rec.task))
        if s is None or t is None:
            raise ValueError(f"gold row {row}: (system {rec.system!r}, task {rec.task!r}) is not "
                             "in the counts")
        j, h = rec.judge, rec.human
        if j not in (0, 1, True, False) or h not in (0, 1, True, False):
            raise ValueError(f"gold row {row}: judge={j!r}, human={h!r} must be 0/1")
        key = {(1, 1): "gold_tp", (0, 1): "gold_fn", (1, 0): "gold_fp", (0, 0): "gold_tn"}
        tables[key[(int(j), int(h))]][s, t] += 1
    n, c = data.n.values, data.c.values
    total = sum(tables.values())
    judged_pass = tables["gold_tp"] + tables["gold_fp"]
    for bad, rule in ((total > n, "more gold trials than judged trials"),
                      (judged_pass > c, "more gold judge passes than judge passes c"),
                      (total - judged_pass > n - c, "more gold judge fails than n - c")):
        if bad.any():
            s, t = np.argwhere(bad)[0]
            raise ValueError(f"gold rows for (system {data.systems[s]!r}, task "
                             f"{data.tasks[t]!r}): {rule}")
    ds = data.dataset.assign({k: (("system", "task"), v) for k, v in tables.items()})
    return EvalData(ds)


def _gold(data: EvalData) -> dict[str, np.ndarray]:
    for name in GOLD_VARS:
        if name not in data.dataset:
            raise ValueError(f"the judge-error model needs the gold counts {list(GOLD_VARS)}; "
                             "build the data with evalbayes.models.designs._judge_error.judge_data")
    return {name: data.dataset[name].values for name in GOLD_VARS}


@dataclass(frozen=True, eq=False)
class JudgeErrorPosterior(Posterior):
    """Posterior of a :class:`JudgeErrorModel` fit: the judge's accuracy and the true rates."""

    def judge_accuracy(self, ci_prob: float = 0.95) -> pd.DataFrame:
        """Sensitivity and specificity; see :func:`judge_accuracy`."""
        return judge_accuracy(self, ci_prob=ci_prob)

    def true_pass_rate(self, ci_prob: float = 0.95) -> pd.DataFrame:
        """Pass rates corrected for judge error; see :func:`true_pass_rate`."""
        return true_pass_rate(self, ci_prob=ci_prob)


@dataclass(frozen=True)
class JudgeErrorModel(Model):
    """True pass rates and judge error from judge counts and a gold subset (module docstring).

    Parameters
    ----------
    sens_prior, spec_prior : (float, float)
        Beta priors of the judge's sensitivity ``q1`` and specificity ``q0``. Default (3, 1).
    m_prior : (float, float)
        Normal prior (mean, sd) of each system's median logit ``m[s]``.
    sigma_prior : float
        HalfNormal scale of each system's spread of task logits. Default 1.5.
    quadrature_nodes : int
        Gauss-Hermite nodes for the task logits. Default 20.
    """

    name: ClassVar[str] = "judge-error"
    posterior_class: ClassVar[type[Posterior]] = JudgeErrorPosterior

    sens_prior: tuple[float, float] = (3.0, 1.0)
    spec_prior: tuple[float, float] = (3.0, 1.0)
    m_prior: tuple[float, float] = (0.0, 1.5)
    sigma_prior: float = 1.5
    quadrature_nodes: int = 20

    def __post_init__(self) -> None:
        for label in ("sens_prior", "spec_prior"):
            value = getattr(self, label)
            if len(value) != 2 or min(value) <= 0:
                raise ValueError(f"{label} must be two positive numbers, got {value!r}")
        if len(self.m_prior) != 2 or not self.m_prior[1] > 0:
            raise ValueError(f"m_prior must be (mean, sd > 0), got {self.m_prior!r}")
        if not self.sigma_prior > 0:
            raise ValueError(f"sigma_prior must be positive, got {self.sigma_prior!r}")
        check_hermite_size(self.quadrature_nodes)

    def check_data(self, data: EvalData) -> None:
        """Gold variables present; at least one gold trial."""
        gold = _gold(data)
        if sum(int(v.sum()) for v in gold.values()) == 0:
            raise ValueError("the gold subset is empty: label some trials by hand")

    # ------------------------------------------------------------------ hooks
    def inputs(self, data: EvalData) -> ModelInputs:
        """Distinct cells only: cells with the same system and counts share one likelihood
        term, weighted by how many there are (with one judged trial per task, a few hundred
        cells collapse to at most six per system)."""
        s_idx, t_idx = np.nonzero(data.n.values > 0)
        cells = self._cell_counts(data, s_idx, t_idx, gold=True)
        unique, weight = np.unique(np.column_stack(list(cells.values())), axis=0,
                                   return_counts=True)
        size = padded_size(len(unique))
        pad = np.zeros(size - len(unique))
        values = {key: np.concatenate([col, pad]) for key, col in zip(cells, unique.T,
                                                                      strict=True)}
        values["cell_s"] = values["cell_s"].astype(np.int64)
        values["weight"] = np.concatenate([weight, pad]).astype(float)
        return ModelInputs(values, (data.shape[0], size))

    def build(self, inputs: ModelInputs) -> Any:
        import pymc as pm
        import pytensor.tensor as pt

        n_sys, size = inputs.shape_key
        v = inputs.values
        with pm.Model(coords={"system": np.arange(n_sys), "cell": np.arange(size)}) as model:
            d = {key: pm.Data(key, v[key], dims="cell") for key in v}
            q1 = pm.Beta("sensitivity", *self.sens_prior)
            q0 = pm.Beta("specificity", *self.spec_prior)
            m = pm.Normal("m", *self.m_prior, dims="system")
            sigma = pm.HalfNormal("sigma", self.sigma_prior, dims="system")
            x, w = normal_hermite_nodes(int(self.quadrature_nodes))
            eta = m[d["cell_s"]][:, None] + sigma[d["cell_s"]][:, None] * pt.as_tensor_variable(x)
            log_p, log_1mp = -pt.softplus(-eta), -pt.softplus(eta)
            pi = q1 * pt.exp(log_p) + (1 - q0) * pt.exp(log_1mp)  # P(judge pass)
            ll = (d["u_c"][:, None] * pt.log(pi) + (d["u_n"] - d["u_c"])[:, None] * pt.log1p(-pi)
                  + d["h_pass"][:, None] * log_p + d["h_fail"][:, None] * log_1mp
                  + pt.as_tensor_variable(np.log(w))[None, :])
            pm.Potential("loglik", (d["weight"] * pt.logsumexp(ll, axis=1)).sum())
            gold_judge = (d["gold_tp"] * pt.log(q1) + d["gold_fn"] * pt.log1p(-q1)
                          + d["gold_tn"] * pt.log(q0) + d["gold_fp"] * pt.log1p(-q0))
            pm.Potential("gold_judge", (d["weight"] * gold_judge).sum())
        return model

    def posterior_vars(self, data: EvalData) -> list[str]:
        return ["sensitivity", "specificity", "m", "sigma"]

    # ------------------------------------------------------------------ draws
    def _arrays(self, posterior: xr.Dataset) -> dict[str, np.ndarray]:
        post = posterior.transpose("chain", "draw", ...)
        return {k: post[k].values for k in ("sensitivity", "specificity", "m", "sigma")}

    def _cell_counts(
        self, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray, gold: bool = False
    ) -> dict[str, np.ndarray]:
        """Per requested cell: its system ``cell_s``, unlabelled trials ``u_n`` and judge
        passes ``u_c`` among them, gold human passes / fails; with ``gold`` also the four gold
        counts (for the judge terms). The one place cells' counts are derived."""
        g = {k: v[s_idx, t_idx].astype(float) for k, v in _gold(data).items()}
        n = data.n.values[s_idx, t_idx].astype(float)
        c = data.c.values[s_idx, t_idx].astype(float)
        cells = {"cell_s": np.asarray(s_idx, float), "u_n": n - sum(g.values()),
                 "u_c": c - g["gold_tp"] - g["gold_fp"], "h_pass": g["gold_tp"] + g["gold_fn"],
                 "h_fail": g["gold_fp"] + g["gold_tn"]}
        return {**cells, **g} if gold else cells

    def _node_loglik(
        self, a: dict[str, np.ndarray], cells: dict[str, np.ndarray], x: np.ndarray
    ) -> np.ndarray:
        """Log-likelihood of each cell's data at each node (chain, draw, cell, node), without
        the gold judge terms (they do not depend on the node)."""
        s_idx = cells["cell_s"].astype(np.int64)
        u_n, u_c = cells["u_n"], cells["u_c"]
        eta = a["m"][..., s_idx, None] + a["sigma"][..., s_idx, None] * x
        log_p, log_1mp = log_expit(eta), log_expit(-eta)
        q1 = a["sensitivity"][..., None, None]
        q0 = a["specificity"][..., None, None]
        pi = q1 * np.exp(log_p) + (1 - q0) * np.exp(log_1mp)
        with np.errstate(divide="ignore", invalid="ignore"):
            ll = (np.where(u_c[:, None] > 0, u_c[:, None] * np.log(pi), 0.0)
                  + np.where((u_n - u_c)[:, None] > 0, (u_n - u_c)[:, None] * np.log1p(-pi), 0.0)
                  + cells["h_pass"][:, None] * log_p + cells["h_fail"][:, None] * log_1mp)
        return ll

    def _distinct_node_loglik(
        self, a: dict[str, np.ndarray], data: EvalData, x: np.ndarray,
        s_idx: np.ndarray, t_idx: np.ndarray,
    ) -> np.ndarray:
        """:meth:`_node_loglik` computed once per distinct cell and spread back to all."""
        cells = self._cell_counts(data, s_idx, t_idx)
        table = np.column_stack(list(cells.values()))
        unique, inverse = np.unique(table, axis=0, return_inverse=True)
        distinct = dict(zip(cells, unique.T, strict=True))
        return self._node_loglik(a, distinct, x)[..., inverse.ravel(), :]

    def rates(self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice) -> np.ndarray:
        """Draws of the TRUE success probability ``p[s, t]``, from each cell's conditional
        posterior on ``2 * quadrature_nodes`` nodes (deterministic given ``seed``)."""
        a = self._arrays(posterior)
        x, w = normal_hermite_nodes(2 * int(self.quadrature_nodes))
        n_sys = data.shape[0]
        n_task = len(range(*tasks.indices(data.shape[1])))
        s_idx = np.repeat(np.arange(n_sys), n_task)
        t_idx = np.tile(np.arange(data.shape[1])[tasks], n_sys)
        lp = np.log(w) + self._distinct_node_loglik(a, data, x, s_idx, t_idx)
        lp -= logsumexp(lp, axis=-1, keepdims=True)
        cum = np.cumsum(np.exp(lp), axis=-1)
        rng = np.random.default_rng([int(seed), 13, int(tasks.start or 0)])
        pick = np.minimum((cum < rng.random(lp.shape[:-1])[..., None]).sum(axis=-1), len(x) - 1)
        eta = a["m"][..., s_idx] + a["sigma"][..., s_idx] * x[pick]
        return expit(eta).reshape((*eta.shape[:2], n_sys, n_task))

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """True pass@k of a new task per system: ``E[f(expit(m + sigma Z))]``."""
        a = self._arrays(posterior)
        return normal_rate_curve(a["m"], a["sigma"], k, metric)

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Log-likelihood of each cell's judge counts and gold rows (task logit integrated
        out; gold judge terms included; binomial constants of the unlabelled trials)."""
        a = self._arrays(posterior)
        x, w = normal_hermite_nodes(int(self.quadrature_nodes))
        ll = logsumexp(np.log(w) + self._distinct_node_loglik(a, data, x, s_idx, t_idx), axis=-1)
        cell = self._cell_counts(data, s_idx, t_idx, gold=True)
        q1 = a["sensitivity"][..., None]
        q0 = a["specificity"][..., None]
        ll += (cell["gold_tp"] * np.log(q1) + cell["gold_fn"] * np.log1p(-q1)
               + cell["gold_tn"] * np.log(q0) + cell["gold_fp"] * np.log1p(-q0))
        n, c = cell["u_n"], cell["u_c"]
        return ll + gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1)


# ---------------------------------------------------------------------------- outputs
def _judge(posterior: Any) -> JudgeErrorModel:
    if not isinstance(posterior.model, JudgeErrorModel):
        raise ValueError(f"needs a judge-error posterior, got {posterior.model.name!r}")
    return posterior.model


def judge_accuracy(posterior: Any, *, ci_prob: float = 0.95) -> pd.DataFrame:
    """Posterior mean and central interval of the judge's sensitivity and specificity."""
    _judge(posterior)
    tail = (1 - ci_prob) / 2
    rows = {}
    for name in ("sensitivity", "specificity"):
        v = posterior.posterior[name].values.ravel()
        rows[name] = {"mean": float(v.mean()), "lower": float(np.quantile(v, tail)),
                      "upper": float(np.quantile(v, 1 - tail))}
    return pd.DataFrame(rows).T


def true_pass_rate(posterior: Any, *, ci_prob: float = 0.95) -> pd.DataFrame:
    """Per system: the judge's raw pass rate and the corrected true pass rate on these tasks.

    Columns ``judge_rate`` (pooled ``c / n``), ``mean``, ``lower``, ``upper`` (posterior of the
    task average of the true ``p[s, t]``, i.e. pass@1 for the "tasks" estimand).
    """
    _judge(posterior)
    data = posterior.data
    draws = posterior.curve("pass@k", 1).sel(k=1).transpose("chain", "draw", "system").values
    flat = draws.reshape(-1, data.shape[0])
    tail = (1 - ci_prob) / 2
    return pd.DataFrame(
        {
            "judge_rate": data.c.values.sum(axis=1) / data.n.values.sum(axis=1),
            "mean": flat.mean(axis=0),
            "lower": np.quantile(flat, tail, axis=0),
            "upper": np.quantile(flat, 1 - tail, axis=0),
        },
        index=pd.Index(data.systems, name="system"),
    )


# ---------------------------------------------------------------------------- frequentist twins
#: PPI++ builds one 0/1 array of the unlabelled verdicts per system; above this many trials
#: the cross-check is left out (NaN) rather than allocating gigabytes.
PPI_MAX_TRIALS = 20_000_000


def gold_accuracy(data: EvalData) -> dict[str, float]:
    """The judge's sensitivity and specificity counted on the gold trials (all systems).

    ``sensitivity = TP / (TP + FN)`` (judge passes among human passes), ``specificity =
    TN / (TN + FP)``, NaN when the gold subset has no human pass (fail); ``n_pos`` and
    ``n_neg`` are the human passes and fails they were counted on. Pooled over systems, as
    the model assumes one judge for all systems.
    """
    gold = {k: int(v.sum()) for k, v in _gold(data).items()}
    n_pos = gold["gold_tp"] + gold["gold_fn"]
    n_neg = gold["gold_tn"] + gold["gold_fp"]
    return {
        "sensitivity": gold["gold_tp"] / n_pos if n_pos else float("nan"),
        "specificity": gold["gold_tn"] / n_neg if n_neg else float("nan"),
        "n_pos": float(n_pos),
        "n_neg": float(n_neg),
    }


def judge_crosscheck(data: EvalData, *, ci_prob: float = 0.95) -> pd.DataFrame:
    """Frequentist twins of :func:`true_pass_rate`, per system, from the gold counts.

    Rogan-Gladen (Rogan and Gladen 1978): ``(p_hat + q0 - 1) / (q0 + q1 - 1)`` with ``p_hat``
    the system's judge pass rate ``c / n`` and ``q1, q0`` from :func:`gold_accuracy`
    (:func:`evalbayes.frequentist.rogan_gladen`, delta-method interval with ``n``, ``n_pos``,
    ``n_neg``); NaN when the gold subset lacks passes or fails or ``q0 + q1 <= 1``.

    PPI++ (Angelopoulos, Duchi and Zrnic 2023): the mean of the human label from the
    system's gold trials (labels ``y`` and the judge's verdicts ``f`` on them) and the
    judge's verdicts on its other trials (:func:`evalbayes.frequentist.ppi_mean` with the
    tuned ``lambda``); NaN with fewer than 2 gold or 2 other trials.

    Both estimate the mean over trials; with the same ``n`` in every task that is the task
    average the model's :func:`true_pass_rate` reports.

    Returns
    -------
    pandas.DataFrame
        Index ``system``; columns ``n``, ``judge_rate``, ``n_gold``, ``gold_rate`` (human
        passes / gold trials), ``rg``, ``rg_lower``, ``rg_upper``, ``ppi``, ``ppi_lower``,
        ``ppi_upper``, ``ppi_lambda``.
    """
    from evalbayes.frequentist._judge import rogan_gladen
    from evalbayes.frequentist._ppi import ppi_mean

    gold = {k: v.sum(axis=1).astype(np.int64) for k, v in _gold(data).items()}
    acc = gold_accuracy(data)
    n = data.n.values.sum(axis=1).astype(np.int64)
    c = data.c.values.sum(axis=1).astype(np.int64)
    rows = []
    for s, name in enumerate(data.systems):
        tp, fn, fp, tn = (int(gold[k][s]) for k in ("gold_tp", "gold_fn", "gold_fp", "gold_tn"))
        n_gold = tp + fn + fp + tn
        row: dict[str, Any] = {
            "system": name, "n": int(n[s]), "judge_rate": c[s] / n[s] if n[s] else np.nan,
            "n_gold": n_gold, "gold_rate": (tp + fn) / n_gold if n_gold else np.nan,
            "rg": np.nan, "rg_lower": np.nan, "rg_upper": np.nan,
            "ppi": np.nan, "ppi_lower": np.nan, "ppi_upper": np.nan, "ppi_lambda": np.nan,
        }  # fmt: skip
        if n[s] and acc["n_pos"] and acc["n_neg"]:
            try:
                rg = rogan_gladen(c[s] / n[s], acc["specificity"], acc["sensitivity"],
                                  n=int(n[s]), n_pos=int(acc["n_pos"]), n_neg=int(acc["n_neg"]),
                                  ci_prob=ci_prob)  # fmt: skip
                row.update(rg=rg.estimate, rg_lower=rg.lower, rg_upper=rg.upper)
            except ValueError:  # q0 + q1 <= 1: no better than chance, no correction
                pass
        u_n, u_c = int(n[s]) - n_gold, int(c[s]) - tp - fp
        if n_gold >= 2 and 2 <= u_n <= PPI_MAX_TRIALS:
            y = np.repeat([1.0, 1.0, 0.0, 0.0], [tp, fn, fp, tn])
            f_gold = np.repeat([1.0, 0.0, 1.0, 0.0], [tp, fn, fp, tn])
            f_rest = np.repeat([1.0, 0.0], [u_c, u_n - u_c])
            ppi = ppi_mean(y, f_gold, f_rest, ci_prob=ci_prob)
            row.update(ppi=ppi.estimate, ppi_lower=ppi.lower, ppi_upper=ppi.upper,
                       ppi_lambda=ppi.lam)
        rows.append(row)
    return pd.DataFrame(rows).set_index("system")
