"""Evaluation counts: ``EvalData``, the one input every estimator and model takes.

The raw data of an evaluation are counts (Miller 2024): for system ``s`` and task
``t``, ``n[s, t]`` trials of which ``c[s, t]`` succeeded. ``EvalData`` holds them as an
:class:`xarray.Dataset` with dims ``(system, task)`` and integer variables ``n`` and ``c``. A
cell that was never run has ``n = 0`` (and ``c = 0``); estimators and models skip it. Task
metadata (family, split, ...) and system metadata (model, harness, ...) are coordinates.

Every builder validates its input and raises :class:`ValueError` naming the row and the rule
that failed; nothing is silently dropped, clipped or coerced.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.lazy_dask import defer_dask_detection

# every dataset built here would otherwise import Dask (~0.3 CPU-s) to learn it holds none
defer_dask_detection()

__all__ = ["MAX_COUNT", "DataError", "EvalData", "PairedData"]

#: The largest count accepted: 2^53, the largest integer below which every integer is exact
#: in float64 (the models and estimators compute rates in floating point). Larger counts, and
#: counts beyond int64, raise instead of being rounded.
MAX_COUNT = 2**53

_N_ALIASES = ("n", "trials")
_C_ALIASES = ("c", "successes")
_TASK_ALIASES = ("task", "task_id")
_SUCCESS_TRUE = {"1", "true", "t", "yes", "y", "pass", "passed", "c", "correct"}
_SUCCESS_FALSE = {"0", "false", "f", "no", "n", "fail", "failed", "i", "incorrect"}


class DataError(ValueError):
    """Input that breaks a rule of the data layer, with the rows (0-based positions in the
    table) it concerns, so that a file reader can name the file and line instead.

    Attributes
    ----------
    rule : str
        What is wrong, without the location.
    rows : tuple of int
        Positions of the offending rows (empty when the error is not about rows).
    where : str
        The labels of the first row, e.g. ``"(system 'A', task 't')"`` (may be empty).
    """

    def __init__(self, rule: str, rows: Sequence[int] = (), where: str = "") -> None:
        self.rule = rule
        self.rows = tuple(int(r) for r in rows)
        self.where = where
        if not self.rows:
            text = rule
        else:
            label = "row" if len(self.rows) == 1 else "rows"
            place = f"{label} {', '.join(str(r) for r in self.rows)}"
            text = f"{place} {where}: {rule}" if where else f"{place}: {rule}"
        super().__init__(text)


def _pick_column(df: pd.DataFrame, given: str | None, aliases: Sequence[str], role: str) -> str:
    """Return the column for ``role``: the one given, else the first alias present."""
    if given is not None:
        if given not in df.columns:
            raise ValueError(
                f"unknown column {given!r} for {role}: the table has columns {list(df.columns)}"
            )
        return given
    for alias in aliases:
        if alias in df.columns:
            return alias
    raise ValueError(
        f"no column for {role}: expected one of {list(aliases)} (or pass {role}=...), "
        f"the table has columns {list(df.columns)}"
    )


def _where(df: pd.DataFrame, pos: int, system_col: str, task_col: str) -> str:
    row = df.iloc[pos]
    return f"(system {row[system_col]!r}, task {row[task_col]!r})"


def _row_error(
    df: pd.DataFrame, pos: int | Sequence[int], system_col: str, task_col: str, rule: str
) -> DataError:
    rows = [pos] if isinstance(pos, (int, np.integer)) else list(pos)
    return DataError(rule, rows, _where(df, int(rows[0]), system_col, task_col))


_TOO_LARGE = (
    "is above 2^53 = 9007199254740992, the largest count handled exactly (rates are computed "
    "in float64); such a count is almost certainly a corrupt value"
)


def _count_rule(col: str, value: Any) -> tuple[int, str | None]:
    """``(exact integer, None)`` for a valid count, else ``(0, the rule it breaks)``.

    Rules, in order: a count is present (not NaN/None), a number (not text, not a
    boolean), finite, integral, non-negative and at most :data:`MAX_COUNT`. Integers are
    checked exactly (a Python or NumPy int is never converted to float first).
    """
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return 0, f"{col} is missing (NaN)"
    if isinstance(value, (bool, np.bool_)):
        return 0, f"{col}={value!r} is a boolean, not a count (write the number of trials)"
    if isinstance(value, (int, np.integer)):
        exact = int(value)
    elif isinstance(value, (float, np.floating)):
        number = float(value)
        if number != number:
            return 0, f"{col} is missing (NaN)"
        if number in (float("inf"), float("-inf")):
            return 0, f"{col}={number} is infinite"
        if not number.is_integer():
            return 0, f"{col}={number:g} is not an integer"
        if abs(number) > MAX_COUNT:
            return 0, f"{col}={number:g} {_TOO_LARGE}"
        exact = int(number)
    elif isinstance(value, str):
        return 0, f"{col}={value!r} is not a number (a count stored as text)"
    else:
        return 0, f"{col}={value!r} is not a number ({type(value).__name__})"
    if exact < 0:
        return 0, f"{col}={exact} is negative"
    if exact > MAX_COUNT:
        return 0, f"{col}={exact} {_TOO_LARGE}"
    return exact, None


def _as_count_array(df: pd.DataFrame, col: str, system_col: str, task_col: str) -> np.ndarray:
    """Validate one count column -> int64 (rules in :func:`_count_rule`)."""
    values = df[col]
    dtype = values.dtype
    if pd.api.types.is_integer_dtype(dtype) and not values.isna().any():
        arr = values.to_numpy()
        bad = (arr < 0) | (arr > MAX_COUNT) if arr.dtype.kind == "i" else arr > MAX_COUNT
    elif pd.api.types.is_float_dtype(dtype) and not pd.api.types.is_extension_array_dtype(dtype):
        arr = values.to_numpy()
        bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (arr < 0) | (arr > MAX_COUNT)
    else:
        arr = None
        bad = None
    if arr is not None and bad is not None and not bad.any():
        return arr.astype(np.int64)
    # slow path: per value, exact, in row order (finds the first offending row and its rule)
    out = np.zeros(len(values), dtype=np.int64)
    found: list[tuple[int, int, str]] = []
    for pos, value in enumerate(values.tolist() if arr is None else arr.tolist()):
        exact, rule = _count_rule(col, value)
        if rule is not None:
            found.append((_RULE_ORDER.index(_rule_kind(rule)), pos, rule))
            continue
        out[pos] = exact
    if found:
        _, pos, rule = min(found)
        raise _row_error(df, pos, system_col, task_col, rule)
    return out


#: The order in which count rules are reported when several rows break different ones.
_RULE_ORDER = ("type", "missing", "integer", "negative", "large")


def _rule_kind(rule: str) -> str:
    if "missing" in rule:
        return "missing"
    if "not an integer" in rule:
        return "integer"
    if "negative" in rule:
        return "negative"
    if "2^53" in rule or "infinite" in rule:
        return "large"
    return "type"


def _check_labels(df: pd.DataFrame, col: str, system_col: str, task_col: str) -> None:
    values = df[col]
    missing = values.isna().to_numpy()
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise DataError(f"{col} label is missing (NaN)", [pos])
    if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
        # checked on the distinct labels (few) rather than on every row
        blank = [u for u in pd.unique(values) if isinstance(u, str) and not u.strip()]
        if blank:
            pos = int(np.flatnonzero(values.isin(blank).to_numpy())[0])
            raise DataError(f"{col} label is empty", [pos])
    del system_col, task_col


def _twin_columns(
    df: pd.DataFrame,
    given: str | None,
    aliases: Sequence[str],
    col: str,
    values: np.ndarray,
    labels: tuple[str, str],
) -> list[str]:
    """Other alias columns of a count role (``trials`` next to ``n``), checked to agree.

    When a table has two aliases of one role and no column was named, they must hold the
    same counts on every row; a disagreement raises (nothing wins silently). Returns the
    twins, which are then not kept as metadata.
    """
    if given is not None:
        return []
    twins = [a for a in aliases if a in df.columns and a != col]
    for other in twins:
        other_values = _as_count_array(df, other, *labels)
        differ = other_values != values
        if differ.any():
            pos = int(np.flatnonzero(differ)[0])
            raise _row_error(
                df,
                pos,
                *labels,
                f"{col}={int(values[pos])} but {other}={int(other_values[pos])}: the table has "
                f"two columns for the same count and they disagree; drop one or pass "
                f"{col if col in ('n', 'c') else other}='<column>' to choose",
            )
    return twins


def _split_metadata(
    df: pd.DataFrame,
    extra: Sequence[str],
    system_col: str,
    task_col: str,
    task_coords: Sequence[str] | None,
    system_coords: Sequence[str] | None,
) -> tuple[dict[str, pd.Series], dict[str, pd.Series]]:
    """Sort extra columns into task-level and system-level coordinates.

    A column named in ``task_coords`` (``system_coords``) must be constant within each task
    (system). Undeclared extra columns are classified automatically: constant within tasks ->
    task coordinate, else constant within systems -> system coordinate, else an error that
    names the column (pass ``extra="ignore"`` to leave such columns out explicitly).
    """
    task_meta: dict[str, pd.Series] = {}
    system_meta: dict[str, pd.Series] = {}

    def per_group(col: str, key: str) -> pd.Series | None:
        grouped = df.groupby(key, sort=False)[col]
        if (grouped.nunique(dropna=False) <= 1).all():
            return grouped.first()
        return None

    declared_task = list(task_coords or [])
    declared_system = list(system_coords or [])
    for col in declared_task + declared_system:
        if col not in df.columns:
            raise ValueError(f"unknown column {col!r}: the table has columns {list(df.columns)}")
    for col in declared_task:
        series = per_group(col, task_col)
        if series is None:
            raise ValueError(f"task coordinate {col!r} varies within a task")
        task_meta[col] = series
    for col in declared_system:
        series = per_group(col, system_col)
        if series is None:
            raise ValueError(f"system coordinate {col!r} varies within a system")
        system_meta[col] = series
    for col in extra:
        if col in task_meta or col in system_meta:
            continue
        series = per_group(col, task_col)
        if series is not None:
            task_meta[col] = series
            continue
        series = per_group(col, system_col)
        if series is not None:
            system_meta[col] = series
            continue
        raise ValueError(
            f"column {col!r} varies within both tasks and systems, so it is neither task nor "
            "system metadata; filter the table first (e.g. one experiment or harness at a "
            "time) or pass extra='ignore' to leave it out"
        )
    return task_meta, system_meta


@dataclass(frozen=True)
class PairedData:
    """Two systems aligned on the tasks both ran (``n > 0`` for both).

    Attributes
    ----------
    baseline, system : str
        The two systems; differences are ``system - baseline`` (B - A).
    tasks : tuple of str
        Shared tasks, in data order.
    n_a, c_a, n_b, c_b : numpy.ndarray
        Counts of the baseline (A) and the other system (B) on the shared tasks.
    dropped : tuple of str
        Tasks that only one of the two systems ran (left out of every paired statistic).
    """

    baseline: str
    system: str
    tasks: tuple[str, ...]
    n_a: np.ndarray
    c_a: np.ndarray
    n_b: np.ndarray
    c_b: np.ndarray
    dropped: tuple[str, ...]

    @property
    def rates_a(self) -> np.ndarray:
        """Per-task pass rate ``c/n`` of the baseline."""
        return self.c_a / self.n_a

    @property
    def rates_b(self) -> np.ndarray:
        """Per-task pass rate ``c/n`` of the other system."""
        return self.c_b / self.n_b

    @property
    def differences(self) -> np.ndarray:
        """Per-task differences of pass rates, B - A."""
        return self.rates_b - self.rates_a


@dataclass(frozen=True, eq=False)
class EvalData:
    """Per-task success counts of one or more systems.

    Parameters
    ----------
    dataset : xarray.Dataset
        Dims ``(system, task)``, integer variables ``n`` (trials) and ``c`` (successes),
        ``0 <= c <= n``; ``n = 0`` marks a cell that was not run. Use the builders
        (:meth:`from_frame`, :meth:`from_trials`, :meth:`from_arrays`) rather than building
        the dataset by hand; the constructor validates it either way.
    """

    dataset: xr.Dataset

    def __post_init__(self) -> None:
        _validate_dataset(self.dataset)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        system: str = "system",
        task: str | None = None,
        n: str | None = None,
        c: str | None = None,
        task_coords: Sequence[str] | None = None,
        system_coords: Sequence[str] | None = None,
        extra: Literal["coords", "ignore"] = "coords",
        fill_missing: bool = True,
    ) -> EvalData:
        """Build from a tidy counts table, one row per (system, task).

        Parameters
        ----------
        df : pandas.DataFrame
            Columns for the system, the task, trials and successes. Default names are
            ``system``; ``task`` or ``task_id``; ``n`` or ``trials``; ``c`` or ``successes``.
        system, task, n, c : str, optional
            Column names, overriding the defaults.
        task_coords, system_coords : sequence of str, optional
            Metadata columns to keep as task / system coordinates. Each must be constant
            within its task (system).
        extra : {"coords", "ignore"}
            What to do with the remaining columns. ``"coords"`` (default) keeps each as a
            task coordinate when constant within tasks, else as a system coordinate when
            constant within systems, else raises. ``"ignore"`` leaves them out.
        fill_missing : bool
            A (system, task) pair absent from the table becomes a missing cell (``n = 0``).
            With ``False`` an absent pair raises instead.

        Raises
        ------
        ValueError
            Naming the row and the rule: empty table, unknown column, NaN label or count,
            non-numeric, non-integer or negative count, ``c > n``, duplicate (system, task).
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if len(df) == 0:
            raise ValueError("empty table: no (system, task) rows")
        twice = df.columns[df.columns.duplicated()].unique().tolist()
        if twice:
            raise ValueError(
                f"the table names column(s) {twice} twice; remove or rename one (a reader "
                "would refuse the same header)"
            )
        system_col = _pick_column(df, system, ("system",), "system")
        task_col = _pick_column(df, task, _TASK_ALIASES, "task")
        n_col = _pick_column(df, n, _N_ALIASES, "n")
        c_col = _pick_column(df, c, _C_ALIASES, "c")
        df = df.reset_index(drop=True)
        for col in (system_col, task_col):
            _check_labels(df, col, system_col, task_col)
        labels = (system_col, task_col)
        n_arr = _as_count_array(df, n_col, *labels)
        c_arr = _as_count_array(df, c_col, *labels)
        twins = _twin_columns(df, n, _N_ALIASES, n_col, n_arr, labels)
        twins += _twin_columns(df, c, _C_ALIASES, c_col, c_arr, labels)
        over = c_arr > n_arr
        if over.any():
            pos = int(np.flatnonzero(over)[0])
            raise _row_error(
                df,
                pos,
                *labels,
                f"c={c_arr[pos]} > n={n_arr[pos]} (successes cannot exceed trials)",
            )
        systems_lab = df[system_col].astype(str)
        tasks_lab = df[task_col].astype(str)
        dup = pd.DataFrame({"s": systems_lab, "t": tasks_lab}).duplicated(keep=False)
        if dup.any():
            rows = np.flatnonzero(dup.to_numpy())
            first = rows[0]
            same = rows[
                (systems_lab.iloc[rows] == systems_lab.iloc[first]).to_numpy()
                & (tasks_lab.iloc[rows] == tasks_lab.iloc[first]).to_numpy()
            ]
            raise DataError(
                f"duplicate (system, task) = ({systems_lab.iloc[first]!r}, "
                f"{tasks_lab.iloc[first]!r}); aggregate them first or keep one",
                same,
            )
        work = df.assign(**{system_col: systems_lab, task_col: tasks_lab})
        used = {system_col, task_col, n_col, c_col, *twins}
        extra_cols = [col for col in df.columns if col not in used] if extra == "coords" else []
        if extra not in ("coords", "ignore"):
            raise ValueError(f"extra must be 'coords' or 'ignore', got {extra!r}")
        task_meta, system_meta = _split_metadata(
            work, extra_cols, system_col, task_col, task_coords, system_coords
        )
        s_idx, system_index = pd.factorize(systems_lab)  # first-appearance order
        t_idx, task_index = pd.factorize(tasks_lab)
        systems, tasks = list(system_index), list(task_index)
        n_mat = np.zeros((len(systems), len(tasks)), dtype=np.int64)
        c_mat = np.zeros_like(n_mat)
        n_mat[s_idx, t_idx] = n_arr
        c_mat[s_idx, t_idx] = c_arr
        if not fill_missing:
            present = np.zeros(n_mat.shape, dtype=bool)
            present[s_idx, t_idx] = True
            if not present.all():
                si, ti = np.argwhere(~present)[0]
                raise ValueError(
                    f"(system {systems[si]!r}, task {tasks[ti]!r}) has no row and "
                    "fill_missing=False"
                )
        return cls.from_arrays(
            n_mat,
            c_mat,
            systems=systems,
            tasks=tasks,
            task_coords={k: v.reindex(tasks).to_numpy() for k, v in task_meta.items()},
            system_coords={k: v.reindex(systems).to_numpy() for k, v in system_meta.items()},
        )

    @classmethod
    def from_trials(
        cls,
        df: pd.DataFrame,
        *,
        system: str = "system",
        task: str | None = None,
        success: str = "success",
        missing: Literal["error", "failure"] = "error",
        task_coords: Sequence[str] | None = None,
        system_coords: Sequence[str] | None = None,
        extra: Literal["coords", "ignore"] = "ignore",
        trial: str | None = None,
    ) -> EvalData:
        """Build from a trial-level table, one row per attempt.

        Parameters
        ----------
        df : pandas.DataFrame
            Columns for the system, the task and the outcome of the attempt.
        success : str
            Outcome column: booleans, 0/1, or the strings true/false, pass/fail, yes/no,
            C/I (inspect_ai codes). Any other value raises.
        missing : {"error", "failure"}
            A missing outcome (NaN/None, e.g. an errored trial) raises by default;
            ``"failure"`` counts it as a failed trial, explicitly.
        task_coords, system_coords : sequence of str, optional
            Metadata columns to keep (constant within task / system).
        extra : {"ignore", "coords"}
            Trial tables usually carry per-trial columns (timestamps, tokens), so the default
            leaves undeclared columns out; ``"coords"`` classifies them as in
            :meth:`from_frame`.
        trial : str, optional
            Attempt-id column (default: a column named ``trial`` when there is one). The
            same (system, task, trial) twice raises: the attempt would be counted twice.

        Raises
        ------
        ValueError
            Empty table, unknown column, NaN label, unreadable or missing outcome, a
            duplicate (system, task, trial).
        """
        if len(df) == 0:
            raise ValueError("empty table: no trials")
        system_col = _pick_column(df, system, ("system",), "system")
        task_col = _pick_column(df, task, _TASK_ALIASES, "task")
        success_col = _pick_column(df, success, ("success",), "success")
        df = df.reset_index(drop=True)
        for col in (system_col, task_col):
            _check_labels(df, col, system_col, task_col)
        trial_col = (
            _pick_column(df, trial, ("trial",), "trial")
            if (trial is not None or "trial" in df.columns)
            else None
        )
        if trial_col is not None:
            _check_unique_trials(df, system_col, task_col, trial_col)
        outcome = _parse_success(df, success_col, system_col, task_col, missing)
        if not task_coords and not system_coords and extra == "ignore":
            s_idx, system_index = pd.factorize(df[system_col].astype(str))
            t_idx, task_index = pd.factorize(df[task_col].astype(str))
            n_task = len(task_index)
            size = len(system_index) * n_task
            flat = s_idx * n_task + t_idx
            n_mat = np.bincount(flat, minlength=size).reshape(len(system_index), n_task)
            c_mat = np.bincount(flat, weights=outcome, minlength=size).reshape(n_mat.shape)
            return cls.from_arrays(
                n_mat, c_mat.astype(np.int64), systems=list(system_index), tasks=list(task_index)
            )
        work = pd.DataFrame(
            {
                "system": df[system_col].astype(str),
                "task": df[task_col].astype(str),
                "c": outcome,
            }
        )
        keep = list(dict.fromkeys([*(task_coords or []), *(system_coords or [])]))
        if extra == "coords":
            keep += [
                col
                for col in df.columns
                if col not in {system_col, task_col, success_col, trial_col} and col not in keep
            ]
        for col in keep:
            if col not in df.columns:
                raise ValueError(
                    f"unknown column {col!r}: the table has columns {list(df.columns)}"
                )
            work[col] = df[col]
        grouped = work.groupby(["system", "task"], sort=False)
        counts = grouped["c"].agg(["size", "sum"]).rename(columns={"size": "n", "sum": "c"})
        counts = counts.reset_index()
        if keep:
            meta = grouped[keep].first().reset_index(drop=True)
            varying = [col for col in keep if (grouped[col].nunique(dropna=False) > 1).any()]
            if varying:
                raise ValueError(
                    f"column {varying[0]!r} varies between trials of one (system, task); "
                    "it cannot be a task or system coordinate"
                )
            counts = pd.concat([counts, meta], axis=1)
        return cls.from_frame(
            counts,
            system="system",
            task="task",
            n="n",
            c="c",
            task_coords=task_coords,
            system_coords=system_coords,
            extra="coords",
        )

    @classmethod
    def from_arrays(
        cls,
        n: Any,
        c: Any,
        *,
        systems: Sequence[Hashable] | None = None,
        tasks: Sequence[Hashable] | None = None,
        task_coords: Mapping[str, Any] | None = None,
        system_coords: Mapping[str, Any] | None = None,
    ) -> EvalData:
        """Build from 2-D arrays ``n[system, task]`` and ``c[system, task]``.

        1-D arrays are taken as one system. Names default to ``system_0, ...`` and
        ``task_0, ...``. Values must be integral, ``0 <= c <= n``.
        """
        n_arr = np.asarray(n)
        c_arr = np.asarray(c)
        if n_arr.ndim == 1:
            n_arr = n_arr[None, :]
        if c_arr.ndim == 1:
            c_arr = c_arr[None, :]
        if n_arr.shape != c_arr.shape or n_arr.ndim != 2:
            raise ValueError(
                f"n and c must be 2-D arrays of one shape (system, task), got {n_arr.shape} "
                f"and {c_arr.shape}"
            )
        n_int = _integral_array(n_arr, "n")
        c_int = _integral_array(c_arr, "c")
        n_sys, n_task = n_int.shape
        systems = [f"system_{i}" for i in range(n_sys)] if systems is None else list(systems)
        tasks = [f"task_{j}" for j in range(n_task)] if tasks is None else list(tasks)
        coords: dict[str, Any] = {
            "system": np.asarray([str(s) for s in systems], dtype=object),
            "task": np.asarray([str(t) for t in tasks], dtype=object),
        }
        for name, values in (task_coords or {}).items():
            coords[name] = ("task", np.asarray(values))
        for name, values in (system_coords or {}).items():
            coords[name] = ("system", np.asarray(values))
        ds = xr.Dataset(
            {"n": (("system", "task"), n_int), "c": (("system", "task"), c_int)}, coords=coords
        )
        return cls(ds)

    @classmethod
    def from_dataset(cls, ds: xr.Dataset) -> EvalData:
        """Wrap (and validate) an existing dataset with dims ``(system, task)``."""
        return cls(ds)

    # ------------------------------------------------------------------ access
    @property
    def n(self) -> xr.DataArray:
        """Trials per cell, dims ``(system, task)``; 0 where the cell was not run."""
        return self.dataset["n"]

    @property
    def c(self) -> xr.DataArray:
        """Successes per cell, dims ``(system, task)``."""
        return self.dataset["c"]

    @property
    def systems(self) -> list[str]:
        """System names in data order."""
        return [str(s) for s in self.dataset["system"].values]

    @property
    def tasks(self) -> list[str]:
        """Task names in data order."""
        return [str(t) for t in self.dataset["task"].values]

    @property
    def shape(self) -> tuple[int, int]:
        """``(number of systems, number of tasks)``."""
        return int(self.dataset.sizes["system"]), int(self.dataset.sizes["task"])

    @property
    def observed(self) -> xr.DataArray:
        """Boolean mask of cells that were run (``n > 0``)."""
        return self.n > 0

    @property
    def rates(self) -> xr.DataArray:
        """Per-cell pass rate ``c / n``; NaN where the cell was not run."""
        return (self.c / self.n.where(self.n > 0)).rename("rate")

    @property
    def task_coords(self) -> dict[str, np.ndarray]:
        """Task-level coordinates other than the task name."""
        return {
            str(name): coord.values
            for name, coord in self.dataset.coords.items()
            if coord.dims == ("task",) and name != "task"
        }

    @property
    def system_coords(self) -> dict[str, np.ndarray]:
        """System-level coordinates other than the system name."""
        return {
            str(name): coord.values
            for name, coord in self.dataset.coords.items()
            if coord.dims == ("system",) and name != "system"
        }

    def __repr__(self) -> str:
        n_sys, n_task = self.shape
        missing = int((~self.observed).sum())
        trials = int(self.n.sum())
        return (
            f"EvalData({n_sys} systems x {n_task} tasks, {trials} trials, {missing} missing cells)"
        )

    def equals(self, other: EvalData) -> bool:
        """True when counts, names and coordinates are identical."""
        return isinstance(other, EvalData) and self.dataset.identical(other.dataset)

    # ------------------------------------------------------------------ views
    def to_frame(self, *, include_missing: bool = False) -> pd.DataFrame:
        """Tidy table ``system, task, n, c`` plus coordinate columns, one row per cell.

        Missing cells (``n = 0``) are left out unless ``include_missing=True``.
        """
        frame = self.dataset[["n", "c"]].to_dataframe().reset_index()
        if not include_missing:
            frame = frame[frame["n"] > 0].reset_index(drop=True)
        cols = ["system", "task", "n", "c"]
        rest = [col for col in frame.columns if col not in cols]
        return frame[cols + rest]

    def subset(
        self,
        systems: Iterable[str] | str | None = None,
        tasks: Iterable[str] | str | None = None,
        **coords: Any,
    ) -> EvalData:
        """Select systems, tasks, or tasks by a coordinate value (e.g. ``split="test"``).

        Unknown names raise :class:`ValueError`; an empty result raises too.
        """
        ds = self.dataset
        if systems is not None:
            wanted = [systems] if isinstance(systems, str) else list(systems)
            unknown = [s for s in wanted if s not in self.systems]
            if unknown:
                raise ValueError(f"unknown systems {unknown}; known: {self.systems}")
            ds = ds.sel(system=wanted)
        if tasks is not None:
            wanted = [tasks] if isinstance(tasks, str) else list(tasks)
            unknown = [t for t in wanted if t not in self.tasks]
            if unknown:
                raise ValueError(f"unknown tasks {unknown[:5]}; {len(unknown)} not in the data")
            ds = ds.sel(task=wanted)
        for name, value in coords.items():
            if name not in ds.coords:
                raise ValueError(f"unknown coordinate {name!r}; known: {list(ds.coords)}")
            dim = ds.coords[name].dims[0]
            values: list[Any] = [value] if np.isscalar(value) else list(value)
            ds = ds.isel({dim: np.isin(ds.coords[name].values, values)})
        if ds.sizes["system"] == 0 or ds.sizes["task"] == 0:
            raise ValueError("the selection is empty")
        return EvalData(ds)

    def paired(self, a: str, b: str) -> PairedData:
        """Align systems ``a`` (baseline) and ``b`` on the tasks both ran.

        Tasks that only one of them ran are reported in ``PairedData.dropped``.
        """
        for name in (a, b):
            if name not in self.systems:
                raise ValueError(f"unknown system {name!r}; known: {self.systems}")
        if a == b:
            raise ValueError(f"a paired comparison needs two systems, got {a!r} twice")
        n_a = self.n.sel(system=a).values
        n_b = self.n.sel(system=b).values
        both = (n_a > 0) & (n_b > 0)
        either = (n_a > 0) | (n_b > 0)
        tasks = np.asarray(self.tasks, dtype=object)
        if not both.any():
            raise ValueError(f"systems {a!r} and {b!r} share no task")
        return PairedData(
            baseline=a,
            system=b,
            tasks=tuple(tasks[both]),
            n_a=n_a[both],
            c_a=self.c.sel(system=a).values[both],
            n_b=n_b[both],
            c_b=self.c.sel(system=b).values[both],
            dropped=tuple(tasks[either & ~both]),
        )


def _check_unique_trials(df: pd.DataFrame, system_col: str, task_col: str, trial_col: str) -> None:
    """The same (system, task, trial) twice would count one attempt twice: raise."""
    key = pd.DataFrame(
        {
            k: df[col].astype(str)
            for k, col in (("s", system_col), ("t", task_col), ("a", trial_col))
        }
    )
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        first = key.iloc[rows[0]]
        same = rows[(key.iloc[rows] == first).all(axis=1).to_numpy()]
        raise DataError(
            f"duplicate ({system_col}, {task_col}, {trial_col}) = ({first['s']!r}, "
            f"{first['t']!r}, {first['a']!r}): one attempt listed {len(same)} times would be "
            "counted twice; remove the copies",
            same,
        )


def _integral_array(arr: np.ndarray, name: str) -> np.ndarray:
    if arr.dtype == bool:
        raise ValueError(
            f"{name} is a boolean array: counts must be integers (a 0/1 success matrix is "
            f"one trial per cell: pass n=np.ones_like(c, dtype=int), c=c.astype(int))"
        )
    if not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.integer):
        big = (arr > MAX_COUNT) | (arr < -MAX_COUNT)
        if big.any():
            idx = tuple(int(i) for i in np.argwhere(big)[0])
            raise ValueError(f"{name}{list(idx)}={int(arr[idx])} {_TOO_LARGE}")
        return arr.astype(np.int64)
    as_float = arr.astype(np.float64)
    if not np.isfinite(as_float[~np.isnan(as_float)]).all():
        idx = tuple(int(i) for i in np.argwhere(np.isinf(as_float))[0])
        raise ValueError(f"{name}{list(idx)} is infinite")
    if (np.abs(as_float) > MAX_COUNT).any():
        idx = tuple(int(i) for i in np.argwhere(np.abs(as_float) > MAX_COUNT)[0])
        raise ValueError(f"{name}{list(idx)}={float(as_float[idx]):g} {_TOO_LARGE}")
    if np.isnan(as_float).any():
        idx = tuple(int(i) for i in np.argwhere(np.isnan(as_float))[0])
        raise ValueError(f"{name}{list(idx)} is NaN")
    if (as_float != np.round(as_float)).any():
        idx = tuple(int(i) for i in np.argwhere(as_float != np.round(as_float))[0])
        raise ValueError(f"{name}{list(idx)}={float(as_float[idx]):g} is not an integer")
    return as_float.astype(np.int64)


def _validate_dataset(ds: xr.Dataset) -> None:
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"expected an xarray.Dataset, got {type(ds).__name__}")
    for var in ("n", "c"):
        if var not in ds:
            raise ValueError(f"dataset has no variable {var!r}")
        if ds[var].dims != ("system", "task"):
            raise ValueError(f"{var} must have dims ('system', 'task'), got {ds[var].dims}")
        if not np.issubdtype(ds[var].dtype, np.integer):
            raise ValueError(f"{var} must be an integer array, got dtype {ds[var].dtype}")
    if ds.sizes["system"] == 0 or ds.sizes["task"] == 0:
        raise ValueError("empty data: no systems or no tasks")
    n = ds["n"].values
    c = ds["c"].values
    systems = ds["system"].values
    tasks = ds["task"].values
    for arr, name in ((n, "n"), (c, "c")):
        if (arr < 0).any():
            si, ti = np.argwhere(arr < 0)[0]
            raise ValueError(
                f"cell (system {systems[si]!r}, task {tasks[ti]!r}): {name}={arr[si, ti]} "
                "is negative"
            )
    if (n > MAX_COUNT).any():
        si, ti = np.argwhere(n > MAX_COUNT)[0]
        raise ValueError(
            f"cell (system {systems[si]!r}, task {tasks[ti]!r}): n={n[si, ti]} {_TOO_LARGE}"
        )
    if (c > n).any():
        si, ti = np.argwhere(c > n)[0]
        raise ValueError(
            f"cell (system {systems[si]!r}, task {tasks[ti]!r}): c={c[si, ti]} > n={n[si, ti]}"
        )
    for dim, labels in (("system", systems), ("task", tasks)):
        seen = pd.Index(labels)
        if seen.has_duplicates:
            raise ValueError(f"duplicate {dim} label {seen[seen.duplicated()][0]!r}")
    if not (n > 0).any():
        raise ValueError("empty data: every cell has n = 0")


def _parse_success(
    df: pd.DataFrame, col: str, system_col: str, task_col: str, missing: str
) -> np.ndarray:
    """Outcome column -> int array of 0/1, raising on anything unreadable."""
    if missing not in ("error", "failure"):
        raise ValueError(f"missing must be 'error' or 'failure', got {missing!r}")
    values = df[col]
    out = np.zeros(len(values), dtype=np.int64)
    isna = values.isna().to_numpy()
    if isna.any() and missing == "error":
        pos = int(np.flatnonzero(isna)[0])
        raise _row_error(
            df,
            pos,
            system_col,
            task_col,
            f"{col} is missing; pass missing='failure' to count missing outcomes as failures",
        )
    present = values[~isna]
    if present.dtype == bool:
        out[~isna] = present.to_numpy(dtype=np.int64)
        return out
    numeric = pd.to_numeric(present, errors="coerce")
    if numeric.notna().all():
        ok = numeric.isin([0, 1]).to_numpy()
        parsed = numeric.to_numpy(dtype=np.float64)
    else:
        text = present.astype(str).str.strip().str.lower()
        parsed = np.full(len(text), np.nan)
        parsed[text.isin(_SUCCESS_TRUE).to_numpy()] = 1.0
        parsed[text.isin(_SUCCESS_FALSE).to_numpy()] = 0.0
        ok = ~np.isnan(parsed)
    if not ok.all():
        pos = int(np.flatnonzero(~isna)[np.flatnonzero(~ok)[0]])
        raise _row_error(
            df,
            pos,
            system_col,
            task_col,
            f"{col}={values.iloc[pos]!r} is not a success indicator (true/false, 1/0, "
            "pass/fail, C/I)",
        )
    out[~isna] = parsed.astype(np.int64)
    return out
