"""Graded scores: :class:`ScoreData`, the input of the graded-outcome models.

Binary evaluations are counts (``EvalData``: ``c`` of ``n``). A graded evaluation gives each
(system, task[, grader][, trial]) a *score*: an integer rating on an ordered scale (a 0-10
judge rating, rubric categories ``F < D < C < B < A``) or a bounded continuous score in
``[0, 1]`` (partial credit). Such scores are not counts, so they get their own container: a
long table with one row per score, validated once here, that the models of
:mod:`evalbayes.models.graded` read.

Every builder raises :class:`~evalbayes.data.DataError` (``from_frame``) or a ``ValueError``
naming the file and line (``read_scores``) and the rule that failed; nothing is dropped,
clipped or coerced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from evalbayes.data import DataError
from evalbayes.io._common import check_labels
from evalbayes.io._tables import line_of, read_table

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = ["ScoreData", "read_scores", "scores_from_inspect"]

ScoreKind = Literal["ordinal", "continuous"]
_MAX_LEVELS = 101  # an ordinal scale with more levels is a continuous score


@dataclass(frozen=True, eq=False)
class ScoreData:
    """Graded scores in long form: one row per (system, task[, grader][, trial]) score.

    Attributes
    ----------
    frame : pandas.DataFrame
        Columns ``system``, ``task``, ``score`` (float; ordinal scores are the level index
        ``0..max_score``), ``grader`` (``"-"`` when the data have no grader) and ``trial``
        (``0`` when none), in input order.
    kind : {"ordinal", "continuous"}
        ``"ordinal"``: integer levels ``0..max_score``; ``"continuous"``: scores in ``[0, 1]``.
    max_score : int or None
        The top level of an ordinal scale (``K``; the levels are ``0..K``); None if continuous.
    levels : tuple of str
        The levels' names (``"0".."K"`` or the given categories), empty if continuous.
    has_grader : bool
        Whether a grader column was given.
    source : str
        Where the scores came from (a path or ``"<frame>"``).
    """

    frame: pd.DataFrame
    kind: ScoreKind
    max_score: int | None
    levels: tuple[str, ...]
    has_grader: bool
    source: str = "<frame>"

    # ----------------------------------------------------------------- builders
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        system: str = "system",
        task: str = "task",
        score: str = "score",
        grader: str | None = None,
        trial: str | None = None,
        kind: ScoreKind | None = None,
        max_score: int | None = None,
        levels: Sequence[Any] | None = None,
        source: str = "<frame>",
    ) -> ScoreData:
        """Validate a long table of scores.

        Parameters
        ----------
        df : pandas.DataFrame
            One row per score.
        system, task, score, grader, trial : str
            Column names (``grader`` and ``trial`` optional).
        kind : {"ordinal", "continuous"}, optional
            Default: ``"ordinal"`` when every score is an integer (or ``levels`` is given),
            else ``"continuous"``.
        max_score : int, optional
            The top of an ordinal scale ``0..max_score`` (default: the largest score seen; give
            it when the top levels were never used, e.g. 10 for a 0-10 rating).
        levels : sequence, optional
            Ordered category labels, lowest first (``["F", "D", "C", "B", "A"]``); each score
            must be one of them and becomes its position.

        Raises
        ------
        DataError
            Naming the 0-based row(s) and the rule: a missing column, a missing label or score,
            a score that is not a number (or not a level), a non-integer or negative ordinal
            score, a score above ``max_score``, a continuous score outside ``[0, 1]``, a
            repeated (system, task, grader, trial).
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"from_frame expects a pandas DataFrame, got {type(df).__name__}")
        columns = {"system": system, "task": task, "score": score}
        if grader is not None:
            columns["grader"] = grader
        if trial is not None:
            columns["trial"] = trial
        for role, col in columns.items():
            if col not in df.columns:
                raise DataError(f"no {role} column {col!r}; columns: {list(map(str, df.columns))}")
        if len(df) == 0:
            raise DataError("no scores: the table has no rows")
        out = pd.DataFrame(index=np.arange(len(df)))
        for role in ("system", "task", "grader"):
            if role not in columns:
                continue
            values = df[columns[role]].reset_index(drop=True)
            bad = np.flatnonzero(values.isna().to_numpy())
            if len(bad):
                raise DataError(f"{role} is missing", _first(bad), _where(df, bad[0], system, task))
            out[role] = values.astype(str).to_numpy()
        if "grader" not in out:
            out["grader"] = "-"
        if trial is not None:
            values = df[trial].reset_index(drop=True)
            bad = np.flatnonzero(values.isna().to_numpy())
            if len(bad):
                raise DataError("trial is missing", _first(bad), _where(df, bad[0], system, task))
            out["trial"] = values.astype(str).to_numpy()
        else:
            out["trial"] = "0"
        raw = df[score].reset_index(drop=True)
        missing = np.flatnonzero(raw.isna().to_numpy())
        if len(missing):
            raise DataError("score is missing (drop unscored rows or score them)", _first(missing),
                            _where(df, missing[0], system, task))
        if levels is not None:
            names = [str(v) for v in levels]
            if len(set(names)) != len(names) or len(names) < 2:
                raise DataError(f"levels must be at least two distinct labels, got {names}")
            if kind == "continuous":
                raise DataError("levels= makes ordinal scores; kind='continuous' contradicts it")
            position = {name: i for i, name in enumerate(names)}
            text = raw.astype(str).str.strip()
            unknown = np.flatnonzero(~text.isin(position).to_numpy())
            if len(unknown):
                raise DataError(f"score {text.iloc[unknown[0]]!r} is not one of the levels "
                                f"{names}", _first(unknown), _where(df, unknown[0], system, task))
            out["score"] = text.map(position).to_numpy(dtype=float)
            kind, top, labels = "ordinal", len(names) - 1, tuple(names)
            if max_score is not None and max_score != top:
                raise DataError(f"max_score={max_score} but {len(names)} levels give {top}")
        else:
            numbers = pd.to_numeric(raw, errors="coerce")
            bad = np.flatnonzero(numbers.isna().to_numpy() | ~np.isfinite(numbers.to_numpy(
                dtype=float, na_value=np.nan)))
            if len(bad):
                raise DataError(f"score {raw.iloc[bad[0]]!r} is not a finite number (letter "
                                "grades: pass levels=[...] lowest first)", _first(bad),
                                _where(df, bad[0], system, task))
            values = numbers.to_numpy(dtype=float)
            integral = bool(np.all(values == np.round(values)))
            if kind is None:
                kind = "ordinal" if integral else "continuous"
            if kind == "ordinal":
                fractional = np.flatnonzero(values != np.round(values))
                if len(fractional):
                    raise DataError(f"ordinal score {values[fractional[0]]!r} is not an integer",
                                    _first(fractional), _where(df, fractional[0], system, task))
                negative = np.flatnonzero(values < 0)
                if len(negative):
                    raise DataError(f"ordinal score {values[negative[0]]!r} is negative (the "
                                    "levels are 0..max_score)", _first(negative),
                                    _where(df, negative[0], system, task))
                top = int(values.max()) if max_score is None else _check_max(max_score)
                above = np.flatnonzero(values > top)
                if len(above):
                    raise DataError(f"ordinal score {values[above[0]]!r} is above max_score="
                                    f"{top}", _first(above), _where(df, above[0], system, task))
                if top < 1:
                    raise DataError("an ordinal scale needs at least two levels (every score "
                                    "is 0; pass max_score=)")
                if top + 1 > _MAX_LEVELS:
                    raise DataError(f"{top + 1} levels: more than {_MAX_LEVELS}; rescale to "
                                    "[0, 1] and use kind='continuous'")
                labels = tuple(str(i) for i in range(top + 1))
            elif kind == "continuous":
                if max_score is not None:
                    raise DataError("max_score applies to ordinal scores; continuous scores "
                                    "lie in [0, 1]")
                outside = np.flatnonzero((values < 0) | (values > 1))
                if len(outside):
                    raise DataError(f"continuous score {values[outside[0]]!r} is outside "
                                    "[0, 1] (rescale it: score / max)", _first(outside),
                                    _where(df, outside[0], system, task))
                top, labels = None, ()
            else:
                raise DataError(f"kind must be 'ordinal' or 'continuous', got {kind!r}")
            out["score"] = values
        key = ["system", "task", "grader", "trial"]
        twice = np.flatnonzero(out.duplicated(key, keep="first").to_numpy())
        if len(twice) and trial is not None:
            raise DataError("this (system, task, grader, trial) appears twice", _first(twice),
                            _where(df, twice[0], system, task))
        if len(twice):  # repeated ratings without a trial column: number them
            out["trial"] = out.groupby(key[:3]).cumcount().astype(str)
        out = out[["system", "task", "score", "grader", "trial"]]
        return cls(out, kind, top, labels, grader is not None, source)

    def to_dataset(self) -> xr.Dataset:
        """The scores as a Dataset that survives NetCDF (the ``observed_data`` group of a saved
        score fit): the frame's columns along dim ``row`` (labels as str), the level names
        along dim ``level`` (empty for continuous scores) and ``has_grader`` (0 or 1).
        :meth:`from_dataset` inverts it."""
        import xarray as xr

        columns = {name: ("row", self.frame[name].to_numpy(dtype=str))
                   for name in ("system", "task", "grader", "trial")}
        return xr.Dataset({
            **columns,
            "score": ("row", self.frame["score"].to_numpy(dtype=float)),
            "level_name": ("level", np.asarray(self.levels, dtype=str)),
            "has_grader": ((), np.int64(self.has_grader)),
        })

    @classmethod
    def from_dataset(cls, ds: xr.Dataset, source: str = "<dataset>") -> ScoreData:
        """Rebuild (and re-validate, through :meth:`from_frame`) scores written by
        :meth:`to_dataset`; ``ValueError`` naming what is missing or wrong."""
        needed = ("system", "task", "grader", "trial", "score", "level_name", "has_grader")
        missing = [name for name in needed if name not in ds]
        if missing:
            raise ValueError(f"{source}: the scores lack {missing}")
        frame = pd.DataFrame({name: np.asarray(ds[name].values).astype(str)
                              for name in ("system", "task", "grader", "trial")})
        frame["score"] = np.asarray(ds["score"].values, dtype=float)
        levels = tuple(str(v) for v in np.asarray(ds["level_name"].values).ravel())
        kind: ScoreKind = "ordinal" if levels else "continuous"
        try:
            data = cls.from_frame(frame, grader="grader", trial="trial", kind=kind,
                                  max_score=len(levels) - 1 if levels else None,
                                  source=source)
        except DataError as err:
            raise ValueError(f"{source}: the stored scores are not valid ({err})") from err
        return replace(data, levels=levels, has_grader=bool(int(ds["has_grader"].values)))

    # ----------------------------------------------------------------- views
    @property
    def systems(self) -> list[str]:
        """System labels in order of first appearance."""
        return list(pd.unique(self.frame["system"]))

    @property
    def tasks(self) -> list[str]:
        """Task labels in order of first appearance."""
        return list(pd.unique(self.frame["task"]))

    @property
    def graders(self) -> list[str]:
        """Grader labels in order of first appearance (``["-"]`` without a grader column)."""
        return list(pd.unique(self.frame["grader"]))

    def codes(self, column: str) -> np.ndarray:
        """Each row's position in :attr:`systems` / :attr:`tasks` / :attr:`graders`."""
        labels = {"system": self.systems, "task": self.tasks, "grader": self.graders}[column]
        return pd.Categorical(self.frame[column], categories=labels).codes.astype(np.int64)

    @property
    def scores(self) -> np.ndarray:
        """The scores (level indices for ordinal data), float."""
        return self.frame["score"].to_numpy(dtype=float)

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        scale = (f"ordinal 0..{self.max_score}" if self.kind == "ordinal" else "continuous [0, 1]")
        return (f"ScoreData({len(self)} scores, {len(self.systems)} systems x "
                f"{len(self.tasks)} tasks x {len(self.graders)} graders, {scale})")

    def observed_mean(self) -> pd.Series:
        """Each system's mean score (level index for ordinal data), the raw average."""
        return self.frame.groupby("system", sort=False)["score"].mean()


def _first(rows: np.ndarray) -> list[int]:
    """The first five offending rows, as ints (``DataError`` names them)."""
    return [int(r) for r in rows[:5]]


def _check_max(value: Any) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < 1:
        raise DataError(f"max_score must be a positive integer, got {value!r}")
    return int(value)


def _where(df: pd.DataFrame, pos: int, system: str, task: str) -> str:
    row = df.iloc[int(pos)]
    return f"(system {row[system]!r}, task {row[task]!r})"


def read_scores(
    path: str | Path,
    *,
    system: str = "system",
    task: str = "task",
    score: str = "score",
    grader: str | None = None,
    trial: str | None = None,
    kind: ScoreKind | None = None,
    max_score: int | None = None,
    levels: Sequence[Any] | None = None,
) -> ScoreData:
    """Read a table of scores into :class:`ScoreData` (options as in
    :meth:`ScoreData.from_frame`) through :func:`~evalbayes.io._tables.read_table`, the guarded
    loader of every table (CSV/TSV, ``.gz``, Parquet, JSON Lines; a FIFO refused before it
    opens, duplicate keys and deep nesting refused), labels read as written and checked
    (:func:`~evalbayes.io._common.check_labels`). Errors name the file and its line."""
    labels = tuple(c for c in (system, task, grader, trial) if c)
    frame = read_table(path, labels=labels)
    check_labels(frame, path, columns=labels)
    try:
        return ScoreData.from_frame(frame, system=system, task=task, score=score, grader=grader,
                                    trial=trial, kind=kind, max_score=max_score, levels=levels,
                                    source=str(path))
    except DataError as err:
        if not err.rows:
            raise ValueError(f"{path}: {err.rule}") from None
        lines = ", ".join(line_of(path, r) for r in err.rows)
        raise ValueError(f"{path}, {lines} {err.where}: {err.rule}".replace("  ", " ")
                         ) from None


def scores_from_inspect(
    paths: Any,
    *,
    scorer: str | None = None,
    value_key: str | None = None,
    kind: ScoreKind | None = None,
    max_score: int | None = None,
    levels: Sequence[Any] | None = None,
) -> ScoreData:
    """The scores of inspect_ai logs (``.eval`` / ``.json``) as :class:`ScoreData`: one row per
    (sample, epoch), system = the log's model, task = the sample id, trial = the epoch.

    Numeric score values are kept as they are (a 0-10 model-graded rating, a partial-credit
    fraction); with ``levels`` the raw values (letter grades) are mapped to their positions;
    otherwise inspect_ai's letter values are mapped as inspect_ai maps them (``C`` 1, ``I`` 0,
    ``P`` 0.5, ``N`` 0). Errored samples are refused (the trial reader's rule).
    """
    from evalbayes.io._auto import inspect_trials

    options: dict[str, Any] = {"scorer": scorer, "value_key": value_key}
    trials = inspect_trials(paths, **{k: v for k, v in options.items() if v is not None})
    column = "score" if levels is not None else "value"
    return ScoreData.from_frame(trials, system="system", task="task", score=column,
                                trial="trial", kind=kind, max_score=max_score, levels=levels,
                                source=", ".join(map(str, np.atleast_1d(paths))))
