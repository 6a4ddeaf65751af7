"""Tidy tables on disk: counts (``system, task, n, c``) and trials (``system, task, success``).

CSV/TSV (optionally gzip-compressed), Parquet and JSON Lines are read and written by
extension. System and task labels are read as text, exactly as written (a task ``007``
stays ``"007"``, a system ``NA`` stays ``"NA"``); JSON Lines and Parquet values keep their
types (a count stored as text is refused, never converted). Errors name the file, the line
(1-based; the row for Parquet) and the rule.
"""

from __future__ import annotations

import csv
import gzip
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalbayes._core.files import atomic_path
from evalbayes.data import DataError, EvalData
from evalbayes.io._common import BAD_LABEL, LogError
from evalbayes.io._json import read_jsonl
from evalbayes.io._protocol import Options, Parsed, Reader, option
from evalbayes.io._sources import Source, check_regular, csv_header, gzip_check, open_text

__all__ = [
    "COUNTS",
    "TRIALS",
    "CountsOptions",
    "TrialsOptions",
    "read_table",
    "write_table",
]

_CSV = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
_PARQUET = (".parquet", ".pq")
_JSONL = (".jsonl", ".ndjson", ".jsonl.gz")
_LABELS = ("system", "task", "task_id", "id")
_COUNTS = ("n", "c", "trials", "successes")
#: Hidden columns: the file of each row and its position in that file (for messages).
_FILE, _POS = "_file", "_pos"


@dataclass(frozen=True)
class TableOptions(Options):
    """Options of counts and trial tables."""

    system_column: str = option("system", "the system column")
    task: str | None = option(
        None, "the task column (default 'task' or 'task_id'; 'id' in single-system files)"
    )
    task_coords: Sequence[str] | None = option(
        None, "columns kept as task coordinates (constant within a task)"
    )
    system_coords: Sequence[str] | None = option(
        None, "columns kept as system coordinates (constant within a system)"
    )
    run_column: str | None = option(
        None, "a column of run ids: each (system, run) becomes a system 'SYSTEM/RUN' with "
        "the system coordinates 'agent' (the system) and 'run' ('SYSTEM/RUN'), for a formula's "
        "(1 | run) term"
    )


@dataclass(frozen=True)
class CountsOptions(TableOptions):
    """Counts tables, one row per (system, task): ``system, task, n, c`` (or ``trials``,
    ``successes``); an ``{"id", "n", "c"}`` JSON Lines file is one system named by the file
    stem. The same (system, task) in two files raises naming both."""

    n: str | None = option(None, "the trials column (default 'n' or 'trials')")
    c: str | None = option(None, "the successes column (default 'c' or 'successes')")
    extra: Literal["coords", "ignore"] = option(
        "coords",
        "other columns: 'coords' keeps each as a task (else system) coordinate when constant "
        "within tasks (systems) and raises otherwise; 'ignore' leaves them out",
    )
    fill_missing: bool = option(
        True, "a (system, task) pair without a row is a missing cell (n = 0); False raises"
    )


@dataclass(frozen=True)
class TrialsOptions(TableOptions):
    """Trial tables, one row per attempt: ``system, task, success``; an optional ``trial``
    (attempt id) column makes a repeated (system, task, trial) an error. Two files with the
    same rows raise (every count would be doubled)."""

    success: str = option(
        "success", "the outcome column: booleans, 0/1, true/false, pass/fail, yes/no, C/I"
    )
    missing: Literal["error", "failure"] = option(
        "error", "a missing outcome: 'error' raises, 'failure' counts it as a failed trial"
    )
    extra: Literal["coords", "ignore"] = option(
        "ignore", "other columns: 'ignore' (default) or 'coords' (as for counts tables)"
    )
    trial: str | None = option(
        None, "the attempt-id column (default: a column named 'trial' when there is one)"
    )


# ---------------------------------------------------------------------------- reading files
def read_table(path: str | Path, *, labels: Sequence[str] = _LABELS) -> pd.DataFrame:
    """Read a CSV/TSV (optionally ``.gz``), Parquet or JSON Lines file into a DataFrame.

    Parameters
    ----------
    path : str or Path
        The file; the format follows the extension. CSV files whose header holds no comma
        but semicolons or tabs are read with that delimiter.
    labels : sequence of str
        Columns read as text exactly as written (default: the usual system and task column
        names; names absent from the file are ignored).

    Raises
    ------
    LogError
        An empty, truncated, corrupt or mis-named file, a row with more fields than the
        header, a repeated column name; the message names the file (and the line).
    """
    path = check_regular(path)  # a FIFO would block
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    name = path.name.lower()
    if name.endswith(_CSV):
        frame = _read_csv(path, labels)
    elif name.endswith(_PARQUET):
        frame = _read_parquet(path)
    elif name.endswith(_JSONL):
        frame = _read_jsonl(path)
    else:
        raise ValueError(
            f"{path}: unknown table format; expected one of {_CSV + _PARQUET + _JSONL}"
        )
    if len(frame) == 0:
        raise LogError(path, "empty table: a header but no rows")
    return frame


def _read_csv(path: Path, labels: Sequence[str]) -> pd.DataFrame:
    """CSV with the label columns as text, exact integers, and strict field counts.

    The file is parsed as usual (``dtype=str`` up front is about 3x slower on a million
    rows); label columns are then read again as text without NA parsing.
    """
    header, sep = csv_header(path)
    seen = pd.Index(header)
    if seen.has_duplicates:
        twice = seen[seen.duplicated()][0]
        raise LogError(
            path, f"the header names column {twice!r} twice; remove or rename one", "line 1"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(path, sep=sep, index_col=False, skipinitialspace=False)
        frame.columns = [str(c).strip() for c in frame.columns]
        present = [c for c in labels if c in frame.columns]
        if present:
            text = pd.read_csv(
                path,
                sep=sep,
                usecols=present,
                dtype=dict.fromkeys(present, str),
                keep_default_na=False,
                index_col=False,
            )
            for col in present:
                frame[col] = text[col].to_numpy()
    except pd.errors.ParserWarning:
        raise _field_count_error(path, sep, len(header)) from None
    except pd.errors.ParserError as err:
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(err))
        if match:
            raise LogError(
                path,
                f"{match[3]} fields where the header has {match[1]}: a row may not have more "
                "fields than the header (a stray delimiter?)",
                f"line {match[2]}",
            ) from None
        raise LogError(path, f"not a readable CSV file ({err})") from None
    except pd.errors.EmptyDataError:
        raise LogError(path, "empty file: no header line") from None
    except UnicodeDecodeError as err:
        raise LogError(path, f"not UTF-8 text ({err.reason})") from None
    except (OSError, EOFError) as err:
        raise LogError(path, f"cannot be read: truncated or corrupt ({err})") from None
    for col in _COUNTS:
        if col in frame.columns and frame[col].dtype == object:
            frame[col] = [_csv_number(v) for v in frame[col]]
    return frame


_INT = re.compile(r"^[+-]?\d+$")


def _csv_number(value: Any) -> Any:
    """A CSV cell of a count column: integers exactly, other numbers as floats, else as is."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if _INT.match(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return value


def _field_count_error(path: Path, sep: str, width: int) -> LogError:
    """Locate the first row whose field count differs from the header's."""
    with open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep)
        next(reader, None)
        for row in reader:
            if len(row) > width:
                return LogError(
                    path,
                    f"{len(row)} fields where the header has {width}: a row may not have more "
                    "fields than the header (an unnamed index column or a stray delimiter?)",
                    f"line {reader.line_num}",
                )
    return LogError(path, f"rows do not match the {width} columns of the header")


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as err:  # pyarrow raises ArrowInvalid, OSError, ... for corrupt files
        raise LogError(
            path, f"not a readable Parquet file (corrupt or truncated?): {err}"
        ) from None


def _read_jsonl(path: Path) -> pd.DataFrame:
    """JSON Lines with the types JSON gives.

    pyarrow's reader (about 7x faster on a million rows, see
    ``benchmarks/speed/read_trials.md``) is used
    when it keeps every value exact: it infers timestamps from ISO-date strings (such columns
    are read again as text) and floats for columns mixing integers and decimals (a float
    column holding a value at or above 2^53 may have been rounded: the file is then read
    exactly, line by line). A file pyarrow refuses is read line by line too, so that errors
    name the line, and so is one where pyarrow's rows are not the file's non-blank lines:
    pyarrow reads JSON values separated by any whitespace, so an object broken over two lines
    (``"n": 10000<newline>, "c": 0}``) would be read, not refused.
    """
    gzip_check(path)
    try:
        import pyarrow as pa
        import pyarrow.json as pj
    except ImportError:  # pragma: no cover - pyarrow is a dependency of the test extra
        pa = None
    depth, filled = _line_profile(path) if pa is not None else (0, 0)
    if pa is not None and depth <= _ARROW_DEPTH:
        try:
            table = pj.read_json(path)
            if table.num_rows != filled:  # pyarrow reads values split over lines: refused
                raise ValueError("not one JSON value per line")
            dated = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
            if dated:
                schema = pa.schema([(name, pa.string()) for name in dated])
                options = pj.ParseOptions(explicit_schema=schema)
                table = pj.read_json(path, parse_options=options).select(table.schema.names)
            frame = table.to_pandas()
            if _exact(frame) and not any(isinstance(c, str) and c == "" for c in frame.columns):
                return frame
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError):
            pass
    lines = read_jsonl(path)
    values = [value for _, value in lines]
    try:
        frame = pd.DataFrame(values)
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") in a string: name its line
        for number, value in lines:
            for key, item in value.items():
                if any(isinstance(t, str) and BAD_LABEL.search(t) for t in (key, item)):
                    raise LogError(path, f"{key!r} holds a lone surrogate (not UTF-8 text); "
                                   "fix the value", f"line {number}") from None
        raise
    for col in frame.columns:
        if pd.api.types.is_float_dtype(frame[col].dtype) and not _exact(frame[[col]]):
            # keep the integers exact: a column mixing 2^53 + 1 and 2.0 stays objects
            frame[col] = pd.Series([v.get(col) for v in values], dtype=object)
    return frame


#: pyarrow's JSON parser recurses without a limit: about 20,000 nested brackets on a line
#: crash the process (a segmentation fault, not an exception; pyarrow 2x). Lines that could
#: nest deeper than this go to the line-by-line reader, which refuses them naming the line.
_ARROW_DEPTH = 1000


#: JSON's whitespace (RFC 8259, section 2) by byte value: space, tab, line feed, carriage
#: return.
_JSON_SPACE = np.zeros(256, dtype=bool)
_JSON_SPACE[[0x20, 0x09, 0x0A, 0x0D]] = True


def _line_profile(path: Path, chunk: int = 1 << 23) -> tuple[int, int]:
    """The largest number of ``[`` and ``{`` on one line of the file (an upper bound of its
    nesting depth: brackets inside strings are counted too, so it never underestimates), and
    how many lines hold anything but JSON whitespace. Read in 8 MiB chunks with NumPy (about
    0.4 s per 100 MB, warm: 0.21 s for a 52 MB file of a million rows)."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    worst = carry = 0
    lines, pending = 0, False  # lines with content so far; the open line has content
    with opener(path, "rb") as fh:
        while block := fh.read(chunk):
            b = np.frombuffer(block, np.uint8)
            opens = np.cumsum((b == 0x5B) | (b == 0x7B), dtype=np.int64)
            newlines = np.flatnonzero(b == 0x0A)
            if newlines.size == 0:
                carry += int(opens[-1])
                worst = max(worst, carry)
                pending = pending or not _JSON_SPACE[b].all()
                continue
            at = opens[newlines]
            worst = max(worst, carry + int(at[0]), int(np.diff(at).max(initial=0)))
            carry = int(opens[-1] - at[-1])
            worst = max(worst, carry)
            lines += _filled_lines(b, newlines, pending)
            tail = b[newlines[-1] + 1 :]
            pending = not _JSON_SPACE[tail].all()
    return worst, lines + int(pending)


def _filled_lines(b: np.ndarray, newlines: np.ndarray, pending: bool) -> int:
    """How many of the lines ending at ``newlines`` in ``b`` hold anything but JSON whitespace
    (``pending``: the first one's part before ``b`` does). A line whose last byte before its
    line end is not whitespace holds something (nearly every line of a table, found without a
    pass over the bytes); only the others (blank lines, trailing spaces) are looked at whole."""
    starts = np.concatenate(([0], newlines[:-1] + 1))
    last = newlines - 1
    last = np.where((last >= starts) & (b[np.maximum(last, 0)] == 0x0D), last - 1, last)
    sure = (last >= starts) & ~_JSON_SPACE[b[np.maximum(last, 0)]]
    count = int(np.count_nonzero(sure))
    for i in np.flatnonzero(~sure).tolist():
        if (i == 0 and pending) or not _JSON_SPACE[b[starts[i] : newlines[i]]].all():
            count += 1
    return count


def _exact(frame: pd.DataFrame) -> bool:
    """No float column holds a value where float64 stops representing integers exactly."""
    for col in frame.columns:
        values = frame[col]
        if pd.api.types.is_float_dtype(values.dtype):
            if (np.abs(values.to_numpy(dtype=np.float64)) >= 2.0**53).any():
                return False
        elif (
            pd.api.types.is_struct_dtype(values.dtype)
            if hasattr(pd.api.types, "is_struct_dtype")
            else False
        ):
            return False
    return True


def line_of(path: str | Path, pos: int) -> str:
    """Where row ``pos`` (0-based, in file order) of a table stands: ``"line L"`` (1-based,
    counting the header) for CSV and JSON Lines, ``"row R"`` (1-based) for Parquet."""
    path = Path(path)
    name = path.name.lower()
    try:
        if name.endswith(_CSV):
            _, sep = csv_header(path)
            with open_text(path) as fh:
                reader = csv.reader(fh, delimiter=sep)
                next(reader, None)
                start = reader.line_num
                for i, _row in enumerate(reader):
                    if i == pos:
                        return f"line {start + 1}"
                    start = reader.line_num
        elif name.endswith(_JSONL):
            count = -1
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rb") as fh:
                for number, raw in enumerate(fh, start=1):
                    if raw.strip():
                        count += 1
                        if count == pos:
                            return f"line {number}"
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    return f"row {pos + 1}"


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` as CSV/TSV (``.gz`` compressed by name), Parquet or JSON Lines.

    Parquet needs one type per column: an object column mixing types (e.g. inspect scores
    ``"C"`` and ``0.5``) is written as text there.
    """
    path = Path(path)
    name = path.name.lower()
    if not name.endswith(_CSV + _PARQUET + _JSONL):
        raise ValueError(
            f"{path}: unknown table format; expected one of {_CSV + _PARQUET + _JSONL}"
        )
    # a temporary file beside path, renamed over it when complete (atomic_path): a full disk
    # or a kill leaves the previous file; the temporary name keeps the ending (.csv.gz ...)
    with atomic_path(path) as temp:
        if name.endswith(_CSV):
            frame.to_csv(temp, sep="\t" if ".tsv" in name else ",", index=False)
        elif name.endswith(_PARQUET):
            _parquet_safe(frame).to_parquet(temp, index=False)
        else:
            frame.to_json(temp, orient="records", lines=True, force_ascii=False)
    return path


def _parquet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object:
            types = {type(v) for v in out[col] if v is not None and v == v}
            if len(types) > 1:
                out[col] = [None if v is None or v != v else str(v) for v in out[col]]
    return out


# ---------------------------------------------------------------------------- the readers
def _label_columns(opts: TableOptions) -> list[str]:
    names = [opts.system_column, opts.task, opts.run_column, *_LABELS]
    return list(dict.fromkeys(n for n in names if n))


def _parse(src: Source, opts: TableOptions) -> Parsed:
    path = src.path
    frame = read_table(path, labels=_label_columns(opts))
    for hidden in (_FILE, _POS):
        if hidden in frame.columns:
            raise LogError(path, f"column name {hidden!r} is reserved; rename the column")
    if opts.task is None and "task" not in frame.columns and "task_id" not in frame.columns:
        if "id" in frame.columns:
            frame = frame.rename(columns={"id": "task"})
    frame[_FILE] = str(path)
    frame[_POS] = np.arange(len(frame))
    if opts.system_column in frame.columns:
        if isinstance(opts.system, str):
            raise ValueError(
                f"{path}: the table has a {opts.system_column!r} column; pass a mapping to "
                "rename systems, not one name"
            )
        frame = frame.rename(columns={opts.system_column: "system"})
        return Parsed(frame, None)
    return Parsed(frame, path.name.split(".")[0])


def _finish_counts(frame: pd.DataFrame, opts: CountsOptions) -> pd.DataFrame:
    """The same (system, task) in two files raises, naming both."""
    if frame[_FILE].nunique() > 1:
        task_col = opts.task or next((c for c in ("task", "task_id") if c in frame), None)
        if task_col is not None:
            system = frame["system"].astype(str)
            if opts.run_column is not None and opts.run_column in frame:
                system = system + "/" + frame[opts.run_column].astype(str)
            key = pd.DataFrame({"s": system, "t": frame[task_col].astype(str)})
            files = key.assign(f=frame[_FILE]).drop_duplicates()
            twice = files.duplicated(["s", "t"], keep=False).to_numpy()
            if twice.any():
                rows = files[twice]
                first = rows.iloc[0]
                both = rows[(rows["s"] == first["s"]) & (rows["t"] == first["t"])]["f"].tolist()
                raise ValueError(
                    f"(system {first['s']!r}, task {first['t']!r}) is in both {both[0]} and "
                    f"{both[1]}"
                )
    return frame


def _finish_trials(frame: pd.DataFrame, opts: TrialsOptions) -> pd.DataFrame:
    """Two files holding the same trials would double every count: raise."""
    if frame[_FILE].nunique() > 1:
        data = frame.drop(columns=[_FILE, _POS])
        hashes = pd.util.hash_pandas_object(data.astype(str), index=False)
        signature: dict[tuple[int, ...], str] = {}
        for file, group in hashes.groupby(frame[_FILE], sort=False):
            sig = tuple(sorted(group.tolist()))
            if sig in signature:
                raise ValueError(
                    f"{file} holds the same trials as {signature[sig]}: reading both would "
                    "count every trial twice; read one of them"
                )
            signature[sig] = str(file)
    return frame


def _place(frame: pd.DataFrame, pos: int) -> tuple[str, str]:
    file = str(frame[_FILE].iloc[pos])
    return file, line_of(file, int(frame[_POS].iloc[pos]))


def _locate(err: DataError, frame: pd.DataFrame) -> ValueError:
    """A data-layer error with row positions, as file and line."""
    places = [_place(frame, r) for r in err.rows[:10]]
    files = list(dict.fromkeys(f for f, _ in places))
    if len(files) == 1:
        where = ", ".join(p for _, p in places)
        if len(places) > 1:
            where = "lines " + ", ".join(p.split()[-1] for _, p in places)
        text = f"{where} {err.where}".strip()
        return LogError(files[0], err.rule, text)
    where = "; ".join(f"{f} {p}" for f, p in places)
    return LogError(files[0], f"{err.rule} ({where})", err.where or None)


#: The system coordinates ``run_column`` adds: the system as given, and its run.
RUN_COORDS = ("agent", "run")


def _split_runs(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Each (system, run) as a system ``"SYSTEM/RUN"`` with coordinates ``agent`` (the system)
    and ``run`` (``"SYSTEM/RUN"``: runs of different systems are different runs)."""
    if column not in frame.columns:
        raise ValueError(f"{_files(frame)}: run_column {column!r} is not a column; columns: "
                         f"{[c for c in frame.columns if c not in (_FILE, _POS)]}")
    clash = [c for c in RUN_COORDS if c in frame.columns and c != column]
    if clash:
        raise ValueError(f"{_files(frame)}: run_column makes the system coordinates "
                         f"{list(RUN_COORDS)}, but the table has a column {clash[0]!r}; "
                         "rename it")
    runs = frame[column]
    empty = np.flatnonzero((runs.isna() | (runs.astype(str).str.strip() == "")).to_numpy())
    if len(empty):
        file, where = _place(frame, int(empty[0]))
        raise LogError(file, f"run_column {column!r} has no run id", where)
    system = frame["system"].astype(str)
    run = system + "/" + runs.astype(str)
    return frame.assign(agent=system, run=run, system=run)


def _build(frame: pd.DataFrame, opts: TableOptions, level: str) -> EvalData:
    system_coords = opts.system_coords
    if opts.run_column is not None:
        frame = _split_runs(frame, opts.run_column)
        system_coords = [*(system_coords or ()), *(c for c in RUN_COORDS
                                                   if c not in (system_coords or ()))]
    data = frame.drop(columns=[_FILE, _POS])
    if opts.run_column is not None and opts.run_column not in RUN_COORDS:
        data = data.drop(columns=[opts.run_column])
    common = {
        "system": "system",
        "task": opts.task,
        "task_coords": opts.task_coords,
        "system_coords": system_coords,
        "extra": opts.extra,  # type: ignore[attr-defined]
    }
    try:
        if isinstance(opts, CountsOptions):
            return EvalData.from_frame(
                data, n=opts.n, c=opts.c, fill_missing=opts.fill_missing, **common
            )
        assert isinstance(opts, TrialsOptions)
        return EvalData.from_trials(
            data, success=opts.success, missing=opts.missing, trial=opts.trial, **common
        )
    except DataError as err:
        if err.rows:
            raise _locate(err, frame) from None
        raise ValueError(f"{_files(frame)}: {err}") from None
    except ValueError as err:
        raise ValueError(f"{_files(frame)}: {_hint(str(err), data, level)}") from None


def _files(frame: pd.DataFrame) -> str:
    files = list(dict.fromkeys(frame[_FILE]))
    return files[0] if len(files) == 1 else f"{len(files)} files ({', '.join(files[:3])}...)"


def _hint(message: str, frame: pd.DataFrame, level: str) -> str:
    lower = {str(c).lower(): c for c in frame.columns}
    for name in ("n", "c", "success", "task", "system", "trials", "successes"):
        if name not in frame.columns and name in lower:
            return (
                f"{message} (column names are case-sensitive: found {lower[name]!r}; rename "
                f"it or pass {name if name in ('n', 'c', 'success', 'task') else 'n'}="
                f"{lower[name]!r})"
            )
    return message


def _trial_frame(frame: pd.DataFrame, opts: TrialsOptions) -> pd.DataFrame:
    return frame.drop(columns=[_FILE, _POS]).rename(columns={"system": opts.system_column})


def _table_reader(name: str, options: type[TableOptions], finish: Any, trials: Any) -> Reader:
    return Reader(
        name=name,
        options=options,
        parse=_parse,
        finish=finish,
        to_data=lambda frame, opts: _build(frame, opts, name),
        to_trials=trials,
        empty="the tables hold no rows",
    )


COUNTS = _table_reader("counts", CountsOptions, _finish_counts, None)
TRIALS = _table_reader("trials", TrialsOptions, _finish_trials, _trial_frame)
# The registry names one Reader per module; tables provide two.
READER = COUNTS
__all__ += ["READER", "line_of"]
