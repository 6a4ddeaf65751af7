"""Design matrices of a formula over the (system, task) cells of an EvalData.

The formula's right-hand side is read by ``formulae`` (the formula engine of bambi; T. Capretto
et al., "Bambi: a simple interface for fitting Bayesian linear models in Python", *Journal of
Statistical Software* 103, 2022): common terms become a dense matrix ``X`` and each
group-specific term ``expr | factor`` a level index per cell and the values of ``expr``
(``lme4`` notation; D. Bates et al., "Fitting linear mixed-effects models using lme4", *Journal
of Statistical Software* 67, 2015). Every cell of the grid gets a row (observed or not), so the
rates of unobserved cells come from the same design; the likelihood keeps the observed ones.
formulae splits ``(1 + x | g)`` into the terms ``1|g`` and ``x|g``; the terms one such
parenthesis wrote are kept together as a correlated block (``FormulaDesign.blocks``), as in
lme4 and brms, unless it is written ``(1 + x || g)``.

The variables a formula can name are ``system``, ``task`` and every system and task
coordinate of the data (readers' metadata and trial-table columns): string coordinates are
categorical, numeric ones continuous, datetimes become decimal years.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalbayes.data import EvalData

__all__ = ["TERM_KINDS", "FormulaDesign", "GroupTerm", "design", "group_blocks", "split_formula"]

#: How a group-specific term enters the two estimands (by its grouping factor): ``"task"``
#: (the factor involves the task or a task coordinate: conditioned on for "tasks", drawn anew
#: for "population"), ``"noise"`` (the factor involves a noise variable such as ``run``: drawn
#: anew for both) and ``"system"`` (any other factor: conditioned on for both).
TERM_KINDS: tuple[str, ...] = ("system", "task", "noise")

_BRMS = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\|\s*trials\(\s*([A-Za-z_][\w.]*)\s*\)\s*$")
_PROPORTION = re.compile(r"^\s*p\(\s*([A-Za-z_][\w.]*)\s*,\s*([A-Za-z_][\w.]*)\s*\)\s*$")


def split_formula(formula: str) -> str:
    """The right-hand side of ``formula``, after checking its response.

    Accepted spellings: ``"c | trials(n) ~ rhs"`` (brms), ``"p(c, n) ~ rhs"`` (bambi /
    formulae) and ``"~ rhs"`` or ``"rhs"`` (the response implied). The response is always the
    data's successes ``c`` of ``n`` trials per cell, whatever the names on the left.
    """
    if not isinstance(formula, str) or not formula.strip():
        raise ValueError("the formula model needs a formula, e.g. "
                         "'c | trials(n) ~ harness + (1 | task)'")
    if formula.count("~") > 1:
        raise ValueError(f"formula {formula!r} has more than one '~'")
    lhs, _, rhs = formula.rpartition("~") if "~" in formula else ("", "", formula)
    if lhs.strip() and not (_BRMS.match(lhs) or _PROPORTION.match(lhs)):
        raise ValueError(
            f"formula {formula!r}: the response must be 'c | trials(n)' (brms) or 'p(c, n)' "
            "(bambi): binomial successes of trials per (system, task) cell"
        )
    if not rhs.strip():
        raise ValueError(f"formula {formula!r} has no terms right of '~'")
    return rhs.strip()


@dataclass(frozen=True)
class GroupTerm:
    """One group-specific term ``expr | factor`` over the grid's rows.

    ``level`` (row,) is each row's level of the factor (``levels`` names them), ``expr`` (row,
    columns) the values of the term's expression (ones for ``1 | factor``); the term adds
    ``sum_j expr[r, j] u[level[r], j]`` to row ``r``'s logit, ``u ~ N(0, sd^2)`` independently
    (jointly normal with the other terms of its block, :attr:`FormulaDesign.blocks`).
    """

    name: str
    kind: str
    factor: tuple[str, ...]
    levels: tuple[str, ...]
    columns: tuple[str, ...]
    level: np.ndarray
    expr: np.ndarray


@dataclass(frozen=True)
class FormulaDesign:
    """Fixed design ``X`` (row, coef) with its column names, the group terms and each row's
    cell; rows run over the grid, system-major (``row = s * n_tasks + t``)."""

    rhs: str
    X: np.ndarray
    coefs: tuple[str, ...]
    terms: tuple[GroupTerm, ...]
    n_systems: int
    n_tasks: int
    #: Correlated blocks: the indices (into ``terms``) of the terms one ``(1 + x | g)`` wrote,
    #: two or more, each of one numeric column; their effects of a level are jointly normal
    #: with an LKJ correlation (:mod:`._correlated`).
    blocks: tuple[tuple[int, ...], ...] = ()

    def rows(self, s_idx: Any, t_idx: Any) -> np.ndarray:
        """Grid rows of cells ``(s_idx, t_idx)``."""
        return np.asarray(s_idx) * self.n_tasks + np.asarray(t_idx)

    @property
    def intercept(self) -> int | None:
        """Index of the intercept column, or None."""
        return self.coefs.index("Intercept") if "Intercept" in self.coefs else None


def _as_column(values: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if np.issubdtype(arr.dtype, np.datetime64):
        stamp = pd.DatetimeIndex(arr.astype("datetime64[ns]"))
        return (stamp.year + (stamp.day_of_year - 1) / 365.25).to_numpy(float)
    if arr.dtype.kind in "biuf":
        out = arr.astype(float)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"coordinate {name!r} has missing or infinite values; a formula "
                             "needs a value for every system and task")
        return out
    out = arr.astype(object)
    if pd.isna(pd.Series(out)).any():
        raise ValueError(f"coordinate {name!r} has missing values; a formula needs a value for "
                         "every system and task")
    return out.astype(str)


def grid_frame(data: EvalData) -> pd.DataFrame:
    """One row per (system, task) cell, system-major, with ``system``, ``task`` and every
    system and task coordinate as columns (the variables a formula can name)."""
    n_sys, n_task = data.shape
    columns: dict[str, np.ndarray] = {
        "system": np.repeat(np.asarray(data.systems, dtype=str), n_task),
        "task": np.tile(np.asarray(data.tasks, dtype=str), n_sys),
    }
    for name, values in data.system_coords.items():
        if name in columns:
            raise ValueError(f"coordinate {name!r} clashes with a name the formula reserves")
        columns[name] = np.repeat(_as_column(values, name), n_task)
    for name, values in data.task_coords.items():
        if name in columns:
            raise ValueError(f"task coordinate {name!r} has the name of a system coordinate; "
                             "rename one")
        columns[name] = np.tile(_as_column(values, name), n_sys)
    return pd.DataFrame(columns)


def _kind(factor: tuple[str, ...], task_vars: set[str], noise: tuple[str, ...]) -> str:
    if task_vars & set(factor):
        return "task"
    if set(noise) & set(factor):
        return "noise"
    return "system"


@dataclass(frozen=True)
class GroupBlock:
    """One parenthesised group term ``(expr | factor)`` of a right-hand side as written:
    ``text`` (with its parentheses), ``expr`` and ``factor``; ``independent`` for lme4's
    ``(expr || factor)``."""

    text: str
    expr: str
    factor: str
    independent: bool


def group_blocks(rhs: str) -> list[GroupBlock]:
    """The parenthesised group terms of ``rhs`` (outermost parentheses whose content has a
    ``|`` outside any inner parentheses), in order.

    ``(x - 1 | g)`` (lme4's slope without intercept) is read as ``(0 + x | g)`` and
    ``(expr || g)`` as independent effects, spellings formulae itself does not parse.
    """
    blocks, depth, start = [], 0, 0
    for i, ch in enumerate(rhs):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                inner = rhs[start + 1:i]
                bar = _top_level_bar(inner)
                if bar is not None:
                    double = inner[bar + 1:bar + 2] == "|"
                    expr = inner[:bar].strip()
                    factor = inner[bar + (2 if double else 1):].strip()
                    no_intercept = re.search(r"(?<=\S)\s*-\s*1(?![\w.])", expr)
                    if no_intercept:
                        rest = expr[:no_intercept.start()] + expr[no_intercept.end():]
                        expr = f"0 + {rest.strip()}"
                    blocks.append(GroupBlock(rhs[start:i + 1], expr, factor, double))
    return blocks


def _top_level_bar(inner: str) -> int | None:
    depth = 0
    for i, ch in enumerate(inner):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "|" and depth == 0:
            return i
    return None


def _normalised(rhs: str, blocks: list[GroupBlock]) -> str:
    """``rhs`` with each group term written as formulae reads it (``(expr|factor)``)."""
    for block in blocks:
        rhs = rhs.replace(block.text, f"({block.expr}|{block.factor})", 1)
    return rhs


def _correlated_blocks(formula: str, blocks: list[GroupBlock],
                       terms: list[GroupTerm]) -> tuple[tuple[int, ...], ...]:
    """Indices of the terms each correlated group term wrote (two or more terms; lme4 /
    brms: ``(1 + x | g)`` correlates the intercept and the slope, ``(x || g)`` does not)."""
    from formulae import model_description

    index = {t.name: i for i, t in enumerate(terms)}
    seen: dict[str, str] = {}
    out = []
    for block in blocks:
        names = [str(t.name) for t in
                 model_description(f"({block.expr}|{block.factor})").group_terms]
        for name in names:
            if name in seen:
                raise ValueError(
                    f"formula {formula!r}: the group term {name!r} is written twice "
                    f"({seen[name]} and {block.text}); write each effect once")
            seen[name] = block.text
        if block.independent or len(names) < 2:
            continue
        members = tuple(index[name] for name in names)
        for i in members:
            if len(terms[i].columns) != 1:
                raise ValueError(
                    f"formula {formula!r}: term {terms[i].name!r} of {block.text} has "
                    f"{len(terms[i].columns)} columns ({', '.join(terms[i].columns)}); "
                    "correlated effects take numeric covariates (one column each). Write "
                    f"({block.expr} || {block.factor}) for independent effects")
        out.append(members)
    return tuple(out)


def _evaluate(_rhs: str, _frame: pd.DataFrame) -> Any:
    """``formulae.design_matrices`` called from a frame whose only names are these two (the
    formula's functions are looked up in the caller's frame) and NumPy as ``np``."""
    from formulae import design_matrices

    return design_matrices(_rhs, _frame, na_action="error", extra_namespace={"np": np})


def design(data: EvalData, formula: str, noise: tuple[str, ...] = ("run",)) -> FormulaDesign:
    """Design matrices of ``formula`` over ``data``'s grid (module docstring).

    ``noise`` names the variables whose group terms are integrated as noise (kind
    ``"noise"``, :data:`TERM_KINDS`).
    """
    from formulae.parser import ParseError
    from formulae.scanner import ScanError

    rhs = split_formula(formula)
    frame = grid_frame(data)
    known = set(frame.columns)
    blocks = group_blocks(rhs)
    try:
        dm = _evaluate(_normalised(rhs, blocks), frame)
    except (ParseError, ScanError, TypeError) as err:
        raise ValueError(f"formula {formula!r}: {err}") from None
    except (KeyError, NameError) as err:
        raise ValueError(
            f"formula {formula!r} names {err}, which is not a variable of the data; known: "
            f"{sorted(known)} (system and task coordinates, 'system', 'task')"
        ) from None
    common = dm.common
    coefs: tuple[str, ...]
    if common is None:
        X, coefs = np.zeros((len(frame), 0)), ()
    else:
        X = np.asarray(common.design_matrix, dtype=float)
        coefs = tuple(str(c) for c in common.as_dataframe().columns)
    task_vars = {"task", *data.task_coords}
    terms = []
    for name, term in (dm.group.terms.items() if dm.group is not None else ()):
        factor_name = name.split("|", 1)[1]
        factor = tuple(sorted(str(v) for v in term.factor.var_names))
        indicator = _evaluate(f"(1|{factor_name})", frame)
        z1 = indicator.group[f"1|{factor_name}"].tocsr()
        if not np.all(np.diff(z1.indptr) == 1):
            raise ValueError(f"term {name!r}: every cell needs one level of {factor_name!r}")
        level = z1.indices.astype(np.int64)
        levels = tuple(str(g) for g in term.groups)
        if tuple(str(g) for g in indicator.group.terms[f"1|{factor_name}"].groups) != levels:
            raise ValueError(f"term {name!r}: formulae ordered the levels differently")
        z = dm.group[name].tocsr()
        width = z.shape[1] // len(levels)
        cols = level[:, None] * width + np.arange(width)[None, :]
        expr = np.asarray(z[np.arange(len(frame))[:, None], cols].todense(), dtype=float)
        labels = [str(lab).split("|", 1)[0] for lab in term.labels[:width]]
        terms.append(GroupTerm(name=name, kind=_kind(factor, task_vars, noise), factor=factor,
                               levels=levels, columns=tuple(labels), level=level, expr=expr))
    return FormulaDesign(rhs=rhs, X=X, coefs=coefs, terms=tuple(terms),
                         n_systems=data.shape[0], n_tasks=data.shape[1],
                         blocks=_correlated_blocks(formula, blocks, terms))


def coef_scales(design: FormulaDesign, observed: np.ndarray, scale: float) -> np.ndarray:
    """Prior sd of each common coefficient: ``scale / sd(x_j)`` over the observed rows (the
    autoscaling of bambi and of rstanarm's weakly-informative priors; A. Gelman et al., "A
    weakly informative default prior distribution for logistic and other regression models",
    *Annals of Applied Statistics* 2, 2008, 1360-1383), ``scale`` where a column does not
    vary; the intercept's is set by the caller."""
    x = design.X[observed]
    sd = x.std(axis=0) if len(x) else np.zeros(design.X.shape[1])
    return np.where(sd > 0, scale / np.where(sd > 0, sd, 1.0), scale)


def summary_of_terms(design: FormulaDesign) -> list[dict[str, Any]]:
    """One dict per group term: name, kind, factor, levels, columns (for messages)."""
    return [{"term": t.name, "kind": t.kind, "factor": ":".join(t.factor),
             "levels": len(t.levels), "columns": len(t.columns)} for t in design.terms]
