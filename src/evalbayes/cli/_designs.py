"""Design inputs of ``fit`` and ``report``: what the factorial, training-seeds and judge-error
models need beside the counts. ``--factors FILE`` / ``--factors-pattern REGEX``
(:func:`evalbayes.models.designs.factors_from_system_names`) give the factorial model's
system coordinates, ``--recipes FILE`` / ``--recipe-pattern REGEX`` the training-seeds
recipe, ``--gold FILE`` the judge-error gold counts (:func:`evalbayes.models.designs.judge_data`),
``--formula "..."`` the formula model's formula (:class:`evalbayes.models.formula.FormulaModel`).

Tables are read by :func:`evalbayes.io.read_table` (CSV/TSV, ``.gz``, Parquet, JSON Lines).
A design flag implies its model when ``--model`` is not given; with another model it is an
error. Every input error is a :class:`~evalbayes.cli._common.CLIError` naming the file and
line (exit 2). Nothing here imports PyMC.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from evalbayes.cli._common import CLIError, warn
from evalbayes.cli._design_tables import mapped_labels, read_columns, table_line

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.data import EvalData
    from evalbayes.models._base import Model

__all__ = ["DESIGN_FLAGS", "add_design_args", "apply_designs", "design_model",
           "formula_settings", "given_flags"]

#: model name -> the flags (argparse dests) that feed it
DESIGN_FLAGS: dict[str, tuple[str, ...]] = {
    "factorial": ("factors", "factors_pattern"),
    "training-seeds": ("recipes", "recipe_pattern"),
    "judge-error": ("gold",),
    "formula": ("formula",),
}


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def add_design_args(parser: argparse.ArgumentParser) -> None:
    """The design flags, in a group of their own."""
    group = parser.add_argument_group("designs (each flag implies its model without --model)")
    group.add_argument("--factors", metavar="FILE",
                       help="factorial: table with columns system, model, harness")
    group.add_argument("--factors-pattern", metavar="REGEX",
                       help="factorial: regular expression with named groups (?P<model>...) and "
                       "(?P<harness>...) matched against each system name, e.g. "
                       "'^\\d{8}_(?P<harness>[^_]+)_(?P<model>.+)$'")
    group.add_argument("--drop-unmatched", action="store_true",
                       help="with --factors-pattern: leave out the systems whose names do not "
                       "match (they are listed on stderr) instead of failing")
    group.add_argument("--recipes", metavar="FILE",
                       help="training-seeds: table with columns system, recipe (each run's "
                       "training recipe)")
    group.add_argument("--recipe-pattern", metavar="REGEX",
                       help="training-seeds: regular expression with the named group "
                       "(?P<recipe>...) matched against each system (run) name")
    group.add_argument("--gold", metavar="FILE",
                       help="judge-error: table with columns system, task, judge, human (0/1), "
                       "one row per hand-labelled trial (the counts are judge verdicts)")
    group.add_argument("--formula", metavar="FORMULA",
                       help="formula: a binomial GLMM in brms/bambi notation over system, task "
                       "and the data's system/task coordinates, e.g. "
                       "'c | trials(n) ~ harness + (1 | task) + (1 | run)' (docs/formulas.md)")


def given_flags(args: argparse.Namespace) -> dict[str, list[str]]:
    """Model name -> the design flags given for it."""
    found: dict[str, list[str]] = {}
    for name, dests in DESIGN_FLAGS.items():
        given = [_flag(d) for d in dests if getattr(args, d, None) is not None]
        if given:
            found[name] = given
    return found


def design_model(args: argparse.Namespace, model_name: str | None) -> str | None:
    """The model the design flags imply (``model_name`` when given and consistent)."""
    found = given_flags(args)
    if getattr(args, "drop_unmatched", False) and args.factors_pattern is None:
        raise CLIError("--drop-unmatched works with --factors-pattern only")
    if len(found) > 1:
        listed = "; ".join(f"{', '.join(v)} ({k})" for k, v in found.items())
        raise CLIError(f"design flags of different models: {listed}; give one design")
    if not found:
        return model_name
    (implied, flags), = found.items()
    if model_name is not None and model_name != implied:
        verb = "is" if len(flags) == 1 else "are"
        raise CLIError(f"{', '.join(flags)} {verb} for --model {implied}, not --model {model_name}")
    for dests in (("factors", "factors_pattern"), ("recipes", "recipe_pattern")):
        if all(getattr(args, d, None) is not None for d in dests):
            raise CLIError(f"give {_flag(dests[0])} or {_flag(dests[1])}, not both")
    return implied


def formula_settings(args: argparse.Namespace, name: str | None) -> dict[str, Any]:
    """The formula model's ``formula`` setting from ``--formula`` (empty for other models);
    ``--model formula`` without it is an error."""
    formula = getattr(args, "formula", None)
    if name != "formula":
        return {}
    if formula is None:
        raise CLIError("--model formula needs --formula, e.g. "
                       "--formula 'c | trials(n) ~ harness + (1 | task)'")
    return {"formula": formula}


def apply_designs(args: argparse.Namespace, data: EvalData, model: Model) -> EvalData:
    """``data`` with the design inputs the flags give (coordinates or gold counts).

    Also checks, before any fitting, that a design model has what it needs, so that the
    message names the flag to use.
    """
    name = model.name
    if name == "factorial":
        data = _factors(args, data, model)
    elif name == "training-seeds":
        data = _recipes(args, data, model)
    elif name == "judge-error":
        data = _gold(args, data)
    return data


def _compile(pattern: str, flag: str, groups: tuple[str, ...]) -> re.Pattern[str]:
    try:
        regex = re.compile(pattern)
    except re.error as err:
        raise CLIError(f"{flag} {pattern!r}: not a regular expression ({err})") from None
    missing = [g for g in groups if g not in regex.groupindex]
    if missing:
        need = " and ".join(f"(?P<{g}>...)" for g in groups)
        raise CLIError(f"{flag} {pattern!r} needs the named group(s) {need}")
    return regex


# ---------------------------------------------------------------------------- the designs
def _factors(args: argparse.Namespace, data: EvalData, model: Any) -> EvalData:
    from evalbayes.models.designs._factorial import add_factors, factors_from_system_names

    names = (model.model_coord, model.harness_coord)
    if args.factors is not None:
        columns = ("system", "model", "harness")
        table = read_columns(args.factors, columns, columns)
        labels = mapped_labels(args.factors, table, data, ("model", "harness"))
        return add_factors(data, labels["model"], labels["harness"], names=names)
    if args.factors_pattern is not None:
        _compile(args.factors_pattern, "--factors-pattern", ("model", "harness"))
        try:
            parsed = factors_from_system_names(data, args.factors_pattern,
                                               drop_unmatched=bool(args.drop_unmatched))
        except ValueError as err:
            raise CLIError(f"--factors-pattern: {err} (--drop-unmatched leaves it out)") from None
        if dropped := [s for s in data.systems if s not in set(parsed.systems)]:
            warn(f"--drop-unmatched: left out {len(dropped)} system(s) whose names do not "
                 f"match {args.factors_pattern!r}: {dropped}")
        coords = parsed.system_coords
        return add_factors(parsed, list(coords["model"]), list(coords["harness"]), names=names)
    missing = [c for c in names if c not in data.system_coords]
    if missing:
        raise CLIError(
            f"--model factorial needs each system's model and harness: the data have no "
            f"system coordinate {', '.join(map(repr, missing))}; give --factors FILE "
            "(system,model,harness), --factors-pattern REGEX, or columns model and harness "
            "in the counts table"
        )
    return data


def _recipes(args: argparse.Namespace, data: EvalData, model: Any) -> EvalData:
    import numpy as np

    from evalbayes.data import EvalData

    coord = model.recipe_coord
    if args.recipes is not None:
        table = read_columns(args.recipes, ("system", "recipe"), ("system", "recipe"))
        labels = mapped_labels(args.recipes, table, data, ("recipe",))["recipe"]
    elif args.recipe_pattern is not None:
        regex = _compile(args.recipe_pattern, "--recipe-pattern", ("recipe",))
        labels = []
        for system in data.systems:
            match = regex.match(system)
            if match is None or not match.group("recipe"):
                raise CLIError(f"--recipe-pattern {args.recipe_pattern!r}: system {system!r} "
                               "does not match (or names no recipe)")
            labels.append(match.group("recipe"))
    else:
        if coord not in data.system_coords:
            raise CLIError(
                f"--model training-seeds needs each run's recipe: the data have no system "
                f"coordinate {coord!r}; give --recipes FILE (system,recipe), --recipe-pattern "
                "REGEX, or a column recipe in the counts table"
            )
        return data
    ds = data.dataset.assign_coords({coord: ("system", np.asarray(labels, dtype=object))})
    return EvalData(ds)


def _gold(args: argparse.Namespace, data: EvalData) -> EvalData:
    from evalbayes.models.designs._judge_error import GOLD_VARS, judge_data

    if args.gold is None:
        if all(name in data.dataset for name in GOLD_VARS):
            return data
        raise CLIError("--model judge-error needs the human labels of a gold subset: give "
                       "--gold FILE (columns system, task, judge, human; one row per trial)")
    gold = read_columns(args.gold, ("system", "task", "judge", "human"), ("system", "task"))
    try:
        return judge_data(data, gold)
    except ValueError as err:
        message = str(err)
        match = re.match(r"gold row (\d+): (.*)", message, re.S)
        if match:
            message = f"{table_line(args.gold, int(match[1]))} (gold row {match[1]}): {match[2]}"
        raise CLIError(f"{args.gold}: {message}") from None
