"""Section "Prior check": what the model believed about pass@1 and pass@k before the data.

The model's parameters are drawn from their prior on the data's shape and pushed through its
population estimand (:meth:`evalbayes.models.Model.prior_predictive`); per system the table
gives the prior's central 90 % of a new task's pass@1 and pass@k (k the report's largest),
beside the data's observed values (the mean over tasks of ``c / n``; of the unbiased pass@k
estimate ``1 - C(n - c, k) / C(n, k)`` over the cells with ``n >= k``, Chen et al. 2021,
arXiv 2107.03374). A system whose observed value the prior barely reaches (under 1 % of the
prior at or beyond it on one side, give or take 0.05: :func:`too_tight`) is flagged: with few
tasks such a prior, not the data, decides the answer (Gabry et al. 2019, "Visualization in
Bayesian workflow", JRSS A 182; Gelman et al. 2020, "Bayesian workflow", sec. 2.4).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from evalbayes.data import EvalData
from evalbayes.report._context import ReportContext
from evalbayes.report._document import Block, Callout, Code, Section, Table, paragraph
from evalbayes.report._format import fmt

__all__ = ["PRIOR_DRAWS", "prior_blocks", "prior_section", "too_tight"]

PRIOR_DRAWS = 1000
#: Under this share of the prior at or beyond an observed value (on either side) is too tight.
TIGHT = 0.01
#: Slack around the observed value, on the probability scale.
REACH = 0.05


def too_tight(draws: np.ndarray, observed: float, slack: float = REACH) -> bool:
    """Whether prior ``draws`` barely reach ``observed``: less than :data:`TIGHT` of them at
    or below ``observed + slack``, or at or above ``observed - slack``."""
    low = float(np.mean(draws <= observed + slack))
    high = float(np.mean(draws >= observed - slack))
    return bool(low < TIGHT or high < TIGHT)


def observed_pass_at_k(data: EvalData, k: int) -> np.ndarray:
    """Per system, the mean over cells with ``n >= k`` of the unbiased pass@k estimate
    ``1 - C(n - c, k) / C(n, k)`` (NaN where no cell has ``n >= k``)."""
    n, c = data.n.values.astype(float), data.c.values.astype(float)
    usable = n >= k
    with np.errstate(invalid="ignore", divide="ignore"):
        log_ratio = (gammaln(n - c + 1) - gammaln(n - c - k + 1)
                     - gammaln(n + 1) + gammaln(n - k + 1))
        fail_all = np.where(n - c >= k, np.exp(log_ratio), 0.0)
        value = np.where(usable, 1.0 - fail_all, 0.0)
        return value.sum(axis=1) / np.where(usable.any(axis=1), usable.sum(axis=1), np.nan)


def prior_blocks(model: object, data: EvalData, ks: tuple[int, ...], seed: int,
                 draws: int = PRIOR_DRAWS) -> list[Block]:
    """The section's blocks for ``model`` on ``data``: a callout (flagged systems, or none),
    the table, and how to rerun it; a note when the model has no prior check."""
    k = max(ks)
    try:
        check = model.prior_predictive(data, k=sorted({1, k}), draws=draws,  # type: ignore[attr-defined]
                                       seed=seed)
    except (ValueError, NotImplementedError, AttributeError) as err:
        return [Callout("note", "No prior check for this model", (str(err),))]
    curve = check.curve.transpose("draw", "system", "k")
    observed_k = observed_pass_at_k(data, k)
    observed_1 = check.table[check.table["k"] == 1].set_index("system")["observed pass@1"]
    rows, flagged = [], []
    for s, system in enumerate(curve["system"].values):
        cells = [str(system)]
        tight = False
        for kk, obs in ((1, float(observed_1[system])), (k, float(observed_k[s]))):
            x = curve.sel(k=kk).values[:, s]
            q05, q95 = np.quantile(x, [0.05, 0.95])
            cells += [f"{fmt(q05, 2)}-{fmt(q95, 2)}", "-" if np.isnan(obs) else fmt(obs, 3)]
            if not np.isnan(obs) and too_tight(x, obs):
                tight = True
            if kk == k and k == 1:
                break
        cells.append("TOO TIGHT" if tight else "covers")
        rows.append(cells)
        if tight:
            flagged.append(str(system))
    columns = ["system", "prior pass@1 (90 %)", "observed pass@1"]
    if k > 1:
        columns += [f"prior pass@{k} (90 %)", f"observed pass@{k}"]
    columns.append("prior vs data")
    blocks: list[Block] = []
    if flagged:
        blocks.append(Callout("warning", "The prior is too tight to cover the data", (
            f"For {', '.join(flagged)}, under {TIGHT:.0%} of the prior's pass@1 or pass@{k} "
            f"lies at or beyond the observed value (give or take {REACH}): with few tasks the "
            "prior, not the data, decides these numbers. Widen the prior (a spec, ",
            Code("--spec"), ") and refit.",
        )))
    else:
        blocks.append(Callout("ok", "The prior covers the data", (
            "Every system's observed pass@1 and pass@k lie where the prior puts mass.",)))
    blocks.append(Table.build("prior-check", columns, rows,
                              caption=f"{check.title()}",
                              numeric=[False] + [True] * (len(columns) - 2) + [False]))
    blocks.append(paragraph("The same check, with more k and the prior's share at 0 and 1: ",
                            Code("evalbayes prior-check DATA --model MODEL"), "."))
    return blocks


def prior_section(ctx: ReportContext) -> Section:
    """Section "Prior check" of the report."""
    blocks = prior_blocks(ctx.posterior.model, ctx.data, ctx.ks, ctx.seed)
    return Section("prior-check", "Prior check", tuple(blocks))
