"""Section "Items" for IRT fits: abilities, hard / saturated / suspect items, the items that
best separate the systems, a difficulty forest and a Wright map (item response theory:
Birnbaum 1968; :mod:`evalbayes.models.irt._items`). Other models get a pointer to the IRT fit."""

from __future__ import annotations

import sys
from typing import Any

import pandas as pd

from evalbayes.plots._items import FLAG_COLUMNS, plot_item_difficulty, plot_wright_map
from evalbayes.report._context import ReportContext
from evalbayes.report._document import Block, Callout, Code, Figure, Section, Table, paragraph
from evalbayes.report._figures import draw_png, new_figure, report_style
from evalbayes.report._format import fmt, fmt_interval

__all__ = ["ITEM_ROWS", "SELECT_ITEMS", "items_section"]

ITEM_ROWS = 40  # list every item up to this many; above, the hardest, easiest and flagged
SELECT_ITEMS = 10
EXTREME_ROWS = 10
FLAG_LABEL = {
    "never_solved": "never solved",
    "always_solved": "always solved",
    "low_discrimination": "low discrimination",
    "negative_discrimination": "negative discrimination (suspect)",
    "high_information": "high information",
}


def _flags(row: pd.Series) -> str:
    names = [
        FLAG_LABEL[f] for f in (*FLAG_COLUMNS, "high_information")
        if f in row.index and not pd.isna(row[f]) and bool(row[f])
    ]  # fmt: skip
    return ", ".join(names) or "-"


def _item_rows(items: pd.DataFrame) -> list[list[str]]:
    rows = []
    for _, r in items.iterrows():
        row = [str(r["task"]), fmt(r["solve_rate"]), fmt(r["b_mean"], 2),
               fmt_interval(r["b_lower"], r["b_upper"], 2)]  # fmt: skip
        if "a_mean" in items:
            row += [fmt(r["a_mean"], 2), fmt_interval(r["a_lower"], r["a_upper"], 2)]
        if "g_mean" in items:
            row.append(fmt(r["g_mean"], 2))
        row += [fmt(r["information"], 2), _flags(r)]
        rows.append(row)
    return rows


def _item_table(key: str, items: pd.DataFrame, caption: str, ci: str) -> Table:
    columns = ["task", "solve rate", "difficulty b", f"b {ci}"]
    if "a_mean" in items:
        columns += ["discrimination a", f"a {ci}"]
    if "g_mean" in items:
        columns.append("floor g")
    columns += ["information", "flags"]
    numeric = [False] + [True] * (len(columns) - 2) + [False]
    return Table.build(key, columns, _item_rows(items), caption=caption, numeric=numeric)


def _shown_items(items: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    by_b = items.sort_values("b_mean", ascending=False)
    if len(items) <= ITEM_ROWS:
        return by_b, "every item, hardest first"
    flagged = items[items["negative_discrimination"].fillna(False).astype(bool)
                    | items["low_discrimination"].fillna(False).astype(bool)]
    parts = [by_b.head(EXTREME_ROWS), flagged.head(ITEM_ROWS - 2 * EXTREME_ROWS),
             by_b.tail(EXTREME_ROWS)]  # fmt: skip
    shown = pd.concat(parts).drop_duplicates("task").sort_values("b_mean", ascending=False)
    return shown, (
        f"the {EXTREME_ROWS} hardest and {EXTREME_ROWS} easiest items and up to "
        f"{ITEM_ROWS - 2 * EXTREME_ROWS} flagged ones, hardest first"
    )


def _ability_table(abilities: pd.DataFrame, ci: str) -> Table:
    rows = [
        [str(r["system"]), fmt(r["theta_mean"], 2),
         fmt_interval(r["theta_lower"], r["theta_upper"], 2),
         f"{r['rank_mean']:.1f} [{int(r['rank_lower'])}, {int(r['rank_upper'])}]",
         fmt(r["p_best"]), fmt(r["solve_rate"])]
        for _, r in abilities.sort_values("theta_mean", ascending=False).iterrows()
    ]  # fmt: skip
    return Table.build(
        "abilities",
        ["system", "ability θ", f"θ {ci}", f"rank [{ci}]", "P(best)", "solve rate"],
        rows,
        caption="System abilities on the logit scale of the items",
        numeric=[False, True, True, True, True, True],
    )


def _broken_blocks(ctx: ReportContext) -> tuple[Block, ...]:
    """Tasks likely broken for every system, for fits with the broken-task mixture."""
    posterior = ctx.posterior
    if not posterior.has_broken_tasks:
        return ()
    table = posterior.broken_tasks()
    likely = table[table["p_broken"] >= 0.5]
    text = (
        f"{posterior.label} lets a task be broken (no system can solve it: a wrong reference, "
        f"a harness bug), judged from every system's results on it together. "
        f"{len(likely)} of {len(table):,} tasks are more likely broken than not"
    )
    if likely.empty:
        return (paragraph(text + "."),)
    shown = likely.head(ITEM_ROWS)
    rows = [[str(r["task"]), f"{int(r['systems'])}", f"{int(r['trials']):,}",
             f"{r['p_broken']:.3f}"] for _, r in shown.iterrows()]
    more = "" if len(likely) <= ITEM_ROWS else f" (the {ITEM_ROWS} most likely shown)"
    return (
        paragraph(text + ": check them. The model holds their rates at 0 for every system, "
                  "so they cap pass@k below 1 at every k; if they are fixable, the curves "
                  "far beyond the trials run are too low."),
        Table(
            "broken-tasks",
            ("task", "systems", "trials", "P(broken)"),
            tuple(tuple(row) for row in rows),
            f"Tasks likely broken{more}: no success in any trial",
            (False, True, True, True),
        ),
    )


def _is_irt(posterior: Any) -> bool:
    """Whether ``posterior`` is an :class:`~evalbayes.models.irt._items.IRTPosterior`, without
    importing the IRT models (numba, ~0.4 s) for the fits of other models: an IRT posterior
    exists only once its module has been imported (by the fit or its loader)."""
    module = sys.modules.get("evalbayes.models.irt._items")
    return module is not None and isinstance(posterior, module.IRTPosterior)


def items_section(ctx: ReportContext) -> Section:
    """Item analysis of an IRT fit, or a note saying how to get one."""
    posterior: Any = ctx.posterior  # an IRTPosterior past _is_irt (not imported: see there)
    if not _is_irt(posterior):
        return Section(
            "items",
            "Items",
            (
                *_broken_blocks(ctx),
                paragraph(
                    "No item model was fitted. Item difficulty, discrimination and the items "
                    "that best separate systems need an IRT fit: ",
                    Code("evalbayes fit DATA --model irt-2pl -o fit.nc"),
                    " then ",
                    Code("evalbayes report fit.nc"),
                    ".",
                ),
            ),
        )
    items = posterior.items()
    abilities = posterior.abilities()
    selected = posterior.select_items(min(SELECT_ITEMS, len(items)))
    ci = f"{float(items['ci_prob'].iloc[0]):.0%}"
    counts = [
        f"{int(items[f].fillna(False).astype(bool).sum())} {FLAG_LABEL[f]}"
        for f in (*FLAG_COLUMNS, "high_information") if f in items
    ]  # fmt: skip
    shown, how = _shown_items(items)
    blocks: list[Block] = [
        paragraph(
            f"{posterior.label}: logit p = a (θ - b); higher b = harder item. Of "
            f"{len(items):,} items: " + "; ".join(counts) + ". Never / always solved items "
            "cannot separate systems; an item whose solve rate falls as ability rises "
            "(negative discrimination) often has a wrong reference answer.",
        ),
        _ability_table(abilities, ci),
        _item_table("item-table", shown, f"Items: {how}", ci),
        _item_table(
            "items-selected",
            items.set_index("task").loc[selected["task"]].reset_index(),
            f"The {len(selected)} items that best separate these systems (Fisher information)",
            ci,
        ),
    ]
    suspect = int(items["negative_discrimination"].fillna(False).astype(bool).sum())
    if suspect:
        blocks.insert(
            1,
            Callout(
                "warning",
                f"{suspect} suspect items (negative discrimination)",
                ("Stronger systems fail them more often than the model can explain; check "
                 "their reference answers before trusting scores that include them.",),
            ),
        )
    forest = shown if len(shown) <= ITEM_ROWS else shown.head(ITEM_ROWS)
    with report_style():
        figure, axes = new_figure(12.0, max(3.5, 0.2 * len(forest) + 1.2), 1, 2)
        plot_item_difficulty(forest, ax=axes[0, 0])
        plot_wright_map(abilities, items, ax=axes[0, 1])
        png = draw_png(figure)
    blocks.append(
        Figure(
            name="items",
            png=png,
            alt="item difficulty forest and Wright map",
            caption=(f"Left: difficulty b with {ci} intervals ({how}); flagged items marked. "
                     "Right: Wright map, systems' abilities against the items' difficulties."),
        )
    )
    return Section("items", "Items (IRT)", tuple(blocks))
