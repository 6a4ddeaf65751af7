"""One entry point for every format: :func:`read`, :func:`read_trials_frame`, :func:`convert`.

``format="auto"`` detects the format of each file (``.eval`` archives, the JSON shape of
``.json`` files, the first line of JSON Lines files, the columns of tables); the inputs of
one call must share one format. Options are passed to that format's options dataclass; an
option the format does not take raises :class:`UnknownOptionError` (a ``TypeError`` and a
``ValueError``) listing the ones it does.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io._common import OneTaskWarning, check_choice
from evalbayes.io._helm import HelmOptions
from evalbayes.io._inspect_ai import InspectOptions
from evalbayes.io._lm_eval import LmEvalOptions
from evalbayes.io._protocol import (
    Reader,
    Where,
    check_where,
    gather,
    public_reader,
    select_data,
)
from evalbayes.io._registry import READERS, get_reader
from evalbayes.io._sources import PathsLike, Source, collect, sniff
from evalbayes.io._swe_bench import SweBenchOptions
from evalbayes.io._tables import write_table
from evalbayes.io._terminal_bench import TerminalBenchOptions

#: Names accepted by ``format=``.
FORMATS = ("auto", *READERS)


def detect_format(path: str | Path) -> str | None:
    """The format name of one file (one of :data:`FORMATS`), or None when it is not a log."""
    kind, _ = sniff(Path(path))
    if kind == "terminal-bench-trial":
        return "terminal-bench"
    return kind if kind in ("auto", *READERS) else None


def _detectors() -> dict[str, Any]:
    readers = {name: get_reader(name) for name in READERS}
    return {name: r.detect for name, r in readers.items() if r.detect is not None}


def implied_format(options: Mapping[str, Any]) -> str | None:
    """The one format that takes every given option, or None (several or none do).

    ``success="passed"`` is an option of trial tables only, so it names the format: a
    trial table whose outcome column is not called ``success`` (which detection does not
    recognise) is read with that option alone, without ``format="trials"``. Used only where
    detection finds no format; a detected format that does not take an option still says so.
    """
    if not options:
        return None
    takers = [
        name
        for name in READERS
        if set(options) <= {f.name for f in dataclasses.fields(get_reader(name).options)}
    ]
    return takers[0] if len(takers) == 1 else None


def _prepare(
    paths: PathsLike, fmt: str, options: dict[str, Any]
) -> tuple[Reader, Any, list[Source]]:
    check_choice("format", fmt, ("auto", *READERS))
    try:
        sources = collect(paths, fmt, _detectors())
    except ValueError:
        # no file of a known format: an option only one format takes names the format
        # (success= for a trial table whose outcome column is not called 'success')
        implied = implied_format(options) if fmt == "auto" else None
        if implied is None:
            raise
        sources = collect(paths, implied, _detectors())
    reader = get_reader(sources[0].kind or fmt)
    return reader, reader.make_options(options), sources


def _warn_one_task(data: EvalData) -> EvalData:
    if data.shape[1] == 1:
        warnings.warn(
            f"the data hold one task ({data.tasks[0]!r}): an interval for the task population "
            "rests on that one task (the spread between tasks cannot be estimated); the "
            "'tasks' estimand describes this task only",
            OneTaskWarning,
            stacklevel=3,
        )
    return data


def read(
    paths: PathsLike, format: str = "auto", *, where: Where | None = None, **options: Any
) -> EvalData:
    """Read evaluation logs or tables into :class:`~evalbayes.EvalData`.

    Parameters
    ----------
    paths : path, glob, directory, or a list of them
        Log files, directories (walked recursively) or glob patterns (``**`` recurses).
    format : str
        One of :data:`FORMATS`; ``"auto"`` (default) detects it.
    where : mapping, optional
        ``{column: value or [values]}``: keep the rows (tasks, systems) whose column holds
        one of the values, compared as text (``where={"benchmark": "aime2024_cot"}``). A
        column of the file is filtered row by row before anything else is checked, so one
        benchmark of a table that holds several is read although task ids repeat across
        benchmarks; a coordinate made by the reader (``task``) is filtered afterwards. An
        unknown column or value is an error listing the known ones.
    **options
        The options of the format (its options dataclass; listed by
        :func:`~evalbayes.io.reader_options` and in ``docs/io.md``).

    Raises
    ------
    ValueError
        Input that breaks a rule, naming the file, the line or record, and the rule
        (:class:`~evalbayes.io.LogError` for logs); an unknown option
        (:class:`~evalbayes.io.UnknownOptionError`).

    Warns
    -----
    OneTaskWarning
        The data hold a single task.

    Examples
    --------
    >>> from evalbayes.io import read
    >>> data = read("logs/", scorer="match")          # doctest: +SKIP
    >>> data = read("results.csv", format="counts")   # doctest: +SKIP
    """
    reader, opts, sources = _prepare(paths, format, options)
    filters = check_where(where)
    frame = gather(sources, reader, opts, where=filters)
    data = reader.to_data(frame, opts)
    later = {k: v for k, v in filters.items() if k not in frame.columns}
    return _warn_one_task(select_data(data, later) if later else data)


def read_trials_frame(
    paths: PathsLike, format: str = "auto", *, where: Where | None = None, **options: Any
) -> pd.DataFrame:
    """Trial-level table of the logs: one row per attempt (options as in :func:`read`; ``where``
    filters on the table's own columns).

    Columns start ``system, task, trial, success, benchmark, sample, file``, then the
    format's own (inspect: ``epoch, scorer, score, value, error``; Terminal-Bench: ``run,
    attempt, is_resolved, failure_mode``; ...). Raises :class:`ValueError` for inputs without
    a trial level (counts tables; lm-eval pass@k logs).
    """
    reader, opts, sources = _prepare(paths, format, options)
    if reader.to_trials is None:
        raise ValueError(f"a {reader.name} table has no trial level; read it with read() instead")
    filters = check_where(where)
    frame = gather(sources, reader, opts, where=filters)
    unknown = [k for k in filters if k not in frame.columns]
    if unknown:
        raise ValueError(
            f"where {unknown[0]}=...: no such column in the trial rows; known: "
            f"{sorted(c for c in map(str, frame.columns) if not c.startswith('_'))}"
        )
    return reader.to_trials(frame, opts)


def convert(
    paths: PathsLike,
    output: str | Path,
    format: str = "auto",
    level: Literal["counts", "trials"] = "counts",
    **options: Any,
) -> Path:
    """Read logs and write them as a tidy table (CSV, ``.csv.gz``, Parquet or JSON Lines).

    ``level="counts"`` writes ``system, task, n, c`` plus coordinate columns
    (:meth:`EvalData.to_frame`); ``level="trials"`` writes :func:`read_trials_frame`. The
    table format follows the extension of ``output``. Returns the path written.
    """
    check_choice("level", level, ("counts", "trials"))
    if level == "counts":
        frame = read(paths, format, **options).to_frame()
    else:
        frame = read_trials_frame(paths, format, **options)
    return write_table(frame, output)


def read_counts(path: str | Path, *, system_name: str | None = None, **options: Any) -> EvalData:
    """Read a tidy counts table (``system, task, n, c``) into :class:`EvalData`.

    CSV/TSV (optionally gzip), Parquet or JSON Lines. An ``{"id", "n", "c"}`` JSONL file
    (one system) is accepted: ``id`` is the task and the system is ``system_name`` (default:
    the file stem). ``**options``: the ``counts`` options (:func:`reader_options`).
    """
    return read(path, "counts", system=system_name, **options)


def read_trials(path: str | Path, *, system_name: str | None = None, **options: Any) -> EvalData:
    """Read a trial-level table (``system, task, success``) into :class:`EvalData`.

    ``**options``: the ``trials`` options (``success=``, ``missing=``, ``trial=``, ...).
    """
    return read(path, "trials", system=system_name, **options)


read_inspect = public_reader("inspect", "data", read, InspectOptions)
inspect_trials = public_reader("inspect", "trials", read_trials_frame, InspectOptions)
read_lm_eval = public_reader("lm-eval", "data", read, LmEvalOptions)
lm_eval_trials = public_reader("lm-eval", "trials", read_trials_frame, LmEvalOptions)
read_helm = public_reader("helm", "data", read, HelmOptions)
helm_trials = public_reader("helm", "trials", read_trials_frame, HelmOptions)
read_terminal_bench = public_reader("terminal-bench", "data", read, TerminalBenchOptions)
terminal_bench_trials = public_reader(
    "terminal-bench", "trials", read_trials_frame, TerminalBenchOptions
)
read_swe_bench = public_reader("swe-bench", "data", read, SweBenchOptions)
swe_bench_trials = public_reader("swe-bench", "trials", read_trials_frame, SweBenchOptions)
