"""Section "Model checks": MCMC diagnostics (R-hat, ESS, divergences; a warning box when a
bar is missed) and the posterior predictive check of the per-task count histogram."""

from __future__ import annotations

import dataclasses
import math
import warnings

import xarray as xr

from evalbayes.plots import plot_ppc
from evalbayes.report._context import ReportContext
from evalbayes.report._document import Block, Callout, Code, Figure, Section, Table, paragraph
from evalbayes.report._figures import draw_png, new_figure, report_style
from evalbayes.report._format import fmt
from evalbayes.results._diagnostics import ESS_MIN, RHAT_MAX
from evalbayes.results._posterior import Posterior

__all__ = ["PPC_MAX_SYSTEMS", "PPC_MAX_VALUES", "checks_section"]

PPC_MAX_VALUES = 20_000_000  # draws x systems x tasks replicated at most (memory)
PPC_MAX_SYSTEMS = 6  # predictive-check panels drawn
PPC_CI_PROB = 0.9
PPC_OUTSIDE_NOTE = 0.25


def _diagnostics_blocks(posterior: Posterior) -> list[Block]:
    if posterior.approximate:
        return [
            Callout(
                "warning",
                "APPROXIMATE fit: no MCMC diagnostics",
                (
                    f"{posterior.label} is a variational fit. Its means are usually close, its "
                    "intervals often too narrow; refit with NUTS (",
                    Code("evalbayes fit DATA --method nutpie"),
                    ") before reporting intervals.",
                ),
            )
        ]
    if not posterior.is_mcmc:
        return [
            Callout(
                "ok",
                "Exact draws: no MCMC diagnostics needed",
                (f"{posterior.label} draws from the exact posterior directly (conjugate, "
                 "or by quadrature for method='exact').",),
            )
        ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diag = posterior.diagnostics(warn=False)
    rows = [
        ["R-hat, largest", fmt(diag.rhat_max, 4), f"<= {RHAT_MAX}",
         "pass" if diag.rhat_max <= RHAT_MAX else "FAIL"],
        ["bulk ESS, smallest", f"{diag.ess_bulk_min:.0f}", f">= {ESS_MIN}",
         "pass" if diag.ess_bulk_min >= ESS_MIN else "FAIL"],
        ["tail ESS, smallest", f"{diag.ess_tail_min:.0f}", f">= {ESS_MIN}",
         "pass" if diag.ess_tail_min >= ESS_MIN else "FAIL"],
        ["divergent transitions", str(diag.divergences), "0",
         "pass" if diag.divergences == 0 else "FAIL"],
        ["posterior draws", f"{diag.draws:,}", "", ""],
    ]  # fmt: skip
    blocks: list[Block] = [
        Table.build(
            "diagnostics",
            ["check", "value", "bar", "result"],
            rows,
            caption=f"MCMC diagnostics of {posterior.label}",
            numeric=[False, True, True, False],
        )
    ]
    if diag.passed:
        blocks.insert(0, Callout("ok", "Diagnostics passed",
                                 ("R-hat, ESS and divergences meet the usual bars.",)))
    else:
        blocks.insert(
            0,
            Callout(
                "warning",
                "The fit did not converge: its numbers may be wrong",
                (
                    "; ".join(diag.problems) + ". Run longer chains (",
                    Code("evalbayes fit DATA --draws 4000 --tune 2000"),
                    "), raise target_accept, or reparameterise before trusting any posterior "
                    "number in this report.",
                ),
            ),
        )
    worst = diag.table.sort_values("rhat", ascending=False).head(8)
    blocks.append(
        Table.build(
            "diagnostics-parameters",
            ["parameter", "R-hat", "bulk ESS", "tail ESS"],
            [
                [str(r.parameter), fmt(r.rhat, 4), f"{r.ess_bulk:.0f}", f"{r.ess_tail:.0f}"]
                for r in worst.itertuples()
            ],
            caption="Parameters with the largest R-hat",
            numeric=[False, True, True, True],
        )
    )
    return blocks


def _thinned(posterior: Posterior) -> tuple[Posterior, int]:
    """The posterior with every ``step``-th draw, so the replicates fit in memory."""
    data = posterior.data
    sizes = posterior.posterior.sizes
    total = sizes["chain"] * sizes["draw"] * len(data.systems) * len(data.tasks)
    step = max(1, math.ceil(total / PPC_MAX_VALUES))
    if step == 1:
        return posterior, 1
    groups = {}
    for name, node in posterior.tree.children.items():
        ds = node.to_dataset()
        groups[name] = ds.isel(draw=slice(None, None, step)) if "draw" in ds.dims else ds
    tree = xr.DataTree.from_dict(groups)
    tree.attrs.update(posterior.tree.attrs)
    return dataclasses.replace(posterior, tree=tree), step


def _ppc_blocks(ctx: ReportContext) -> list[Block]:
    posterior, step = _thinned(ctx.posterior)
    check = posterior.ppc(seed=ctx.seed, ci_prob=PPC_CI_PROB)
    table = check.table
    rows = []
    for system in ctx.systems:
        mine = table[table["system"] == system]
        rows.append(
            [system, str(len(mine)), str(int(mine["outside"].sum())),
             f"{mine['outside'].mean():.0%}"]
        )  # fmt: skip
    bins = "successes c = 0..n" if check.bins == "count" else "ten bins of c/n"
    blocks: list[Block] = [
        paragraph(
            "Posterior predictive check: for each system, the number of tasks with each "
            f"count ({bins}) against the same histogram of data replicated from the "
            f"posterior, with its central {PPC_CI_PROB:.0%} interval. A model that fits leaves "
            f"about {1 - PPC_CI_PROB:.0%} of the bins outside; a model without task "
            "heterogeneity misses the U shape of agent benchmarks.",
        ),
        Table.build(
            "ppc",
            ["system", "bins", "bins outside", "share outside"],
            rows,
            caption=f"Observed histogram bins outside the replicated {PPC_CI_PROB:.0%} interval",
            numeric=[False, True, True, True],
        ),
    ]
    if step > 1:
        blocks.append(paragraph(f"(Replicates from one posterior draw in {step}, to bound "
                                "memory.)"))
    poor = [r[0] for r in rows if float(r[3].rstrip("%")) / 100 > PPC_OUTSIDE_NOTE]
    if poor:
        blocks.append(
            Callout(
                "note",
                "The predictive check misses for: " + ", ".join(poor),
                (
                    f"More than {PPC_OUTSIDE_NOTE:.0%} of the bins fall outside the replicated "
                    "interval: the model may not capture the shape of these systems' task "
                    "distributions; compare models with ",
                    Code("evalbayes compare-models"),
                    ".",
                ),
            )
        )
    shown = ctx.systems[:PPC_MAX_SYSTEMS]
    ncols = min(3, len(shown))
    nrows = math.ceil(len(shown) / ncols)
    with report_style():
        figure, axes = new_figure(5.2 * ncols, 3.6 * nrows, nrows, ncols)
        flat = axes.ravel()
        for ax, system in zip(flat, shown, strict=False):
            plot_ppc(check, system, ax=ax)
        for ax in flat[len(shown):]:
            ax.set_visible(False)
        png = draw_png(figure)
    more = "" if len(ctx.systems) <= PPC_MAX_SYSTEMS else (
        f" The first {PPC_MAX_SYSTEMS} systems are drawn; the table covers all."
    )
    blocks.append(
        Figure(
            name="ppc",
            png=png,
            alt="observed task-count histograms with replicated intervals",
            caption=("Grey bars: observed number of tasks per bin; blue: replicated mean and "
                     f"{PPC_CI_PROB:.0%} interval; red triangles: bins outside." + more),
        )
    )
    return blocks


def checks_section(ctx: ReportContext) -> Section:
    """Diagnostics and the posterior predictive check."""
    blocks = _diagnostics_blocks(ctx.posterior) + _ppc_blocks(ctx)
    return Section("checks", "Model checks: diagnostics and predictive check", tuple(blocks))
