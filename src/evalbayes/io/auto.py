"""One entry point for every format: :func:`read`, :func:`read_trials_frame`, :func:`convert`.

``format="auto"`` detects the format of each file (``.eval`` archives, the JSON shape of
``.json`` files, the first line of JSON Lines files, the columns of tables); the inputs of
one call must share one format. Options are passed to that format's reader; an option the
format does not take raises :class:`TypeError` listing the ones it does.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io import helm, inspect_ai, lm_eval, swe_bench, terminal_bench
from evalbayes.io._common import build, check_choice
from evalbayes.io._sources import PathsLike, Source, collect, sniff
from evalbayes.io.tables import read_table_files, table_frame, write_table

__all__ = ["FORMATS", "convert", "detect_format", "read", "read_trials_frame"]

#: Names accepted by ``format=``.
FORMATS = ("auto", "inspect", "lm-eval", "helm", "terminal-bench", "swe-bench", "counts", "trials")

_TRIALS: dict[str, Callable[..., pd.DataFrame]] = {
    "inspect": inspect_ai._trials,
    "lm-eval": lm_eval._trials,
    "helm": helm._trials,
    "terminal-bench": terminal_bench._trials,
    "swe-bench": swe_bench._trials,
}
_PUBLIC: dict[str, Callable[..., Any]] = {
    "inspect": inspect_ai.read_inspect,
    "lm-eval": lm_eval.read_lm_eval,
    "helm": helm.read_helm,
    "terminal-bench": terminal_bench.read_terminal_bench,
    "swe-bench": swe_bench.read_swe_bench,
}
_TABLE_OPTIONS = (
    "system",
    "system_column",
    "task",
    "n",
    "c",
    "success",
    "missing",
    "task_coords",
    "system_coords",
    "extra",
    "fill_missing",
)


def detect_format(path: str | Path) -> str | None:
    """The format name of one file (one of :data:`FORMATS`), or None when it is not a log."""
    kind, _ = sniff(Path(path))
    if kind == "terminal-bench-trial":
        return "terminal-bench"
    return kind if kind in FORMATS else None


def _check_options(kind: str, options: dict[str, Any]) -> None:
    if kind in ("counts", "trials"):
        allowed = list(_TABLE_OPTIONS)
    else:
        params = inspect.signature(_PUBLIC[kind]).parameters
        allowed = [name for name, p in params.items() if p.kind is p.KEYWORD_ONLY]
    unknown = [name for name in options if name not in allowed]
    if unknown:
        raise TypeError(f"format {kind!r} takes no option {unknown}; its options are {allowed}")


def _sources(paths: PathsLike, fmt: str, options: dict[str, Any]) -> tuple[str, list[Source]]:
    check_choice("format", fmt, FORMATS)
    sources = collect(paths, fmt)
    kind = sources[0].kind or fmt
    _check_options(kind, options)
    return kind, sources


def read(paths: PathsLike, format: str = "auto", **options: Any) -> EvalData:
    """Read evaluation logs or tables into :class:`~evalbayes.EvalData`.

    Parameters
    ----------
    paths : path, glob, directory, or a list of them
        Log files, directories (walked recursively) or glob patterns (``**`` recurses).
    format : str
        One of :data:`FORMATS`; ``"auto"`` (default) detects it.
    **options
        The options of the format's reader: :func:`~evalbayes.io.read_inspect`,
        :func:`~evalbayes.io.read_lm_eval`, :func:`~evalbayes.io.read_helm`,
        :func:`~evalbayes.io.read_terminal_bench`, :func:`~evalbayes.io.read_swe_bench`;
        for ``counts``/``trials`` tables: ``system`` (name of single-system files or a
        renaming mapping), ``system_column``, and the column/coordinate options of
        :meth:`EvalData.from_frame` / :meth:`EvalData.from_trials`.

    Examples
    --------
    >>> from evalbayes.io import read
    >>> data = read("logs/", scorer="match")          # doctest: +SKIP
    >>> data = read("results.csv", format="counts")   # doctest: +SKIP
    """
    kind, sources = _sources(paths, format, options)
    if kind in ("counts", "trials"):
        return read_table_files([s.path for s in sources], kind, **options)
    if kind == "lm-eval":
        frame = lm_eval._frame(sources, **options)
        return lm_eval._build_counts(frame) if "n" in frame.columns else build(frame)
    frame = _TRIALS[kind](sources, **options)
    coords = ("benchmark", "split") if kind == "helm" else ("benchmark",)
    return build(frame, task_coords=coords)


def read_trials_frame(paths: PathsLike, format: str = "auto", **options: Any) -> pd.DataFrame:
    """Trial-level table of the logs: one row per attempt (options as in :func:`read`).

    Columns start ``system, task, trial, success, benchmark, sample, file``, then the
    format's own (inspect: ``epoch, scorer, score, value, error``; Terminal-Bench: ``run,
    attempt, is_resolved, failure_mode``; ...). Raises :class:`ValueError` for inputs without
    a trial level (counts tables; lm-eval pass@k logs).
    """
    kind, sources = _sources(paths, format, options)
    if kind == "counts":
        raise ValueError("a counts table has no trial level; read it with read() instead")
    if kind == "trials":
        return table_frame([s.path for s in sources], "trials", **options)
    return _TRIALS[kind](sources, **options)


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
