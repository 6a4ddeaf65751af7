"""The reader protocol: a format is an options dataclass plus a record parser.

A format module defines

* an **options dataclass** (frozen; one typed field per option, its help text in
  ``field(metadata={"help": ...})``; ``Literal`` types list the allowed values and are
  checked) -- the one place the options are declared: :func:`read`'s keyword interface,
  the per-format functions' signatures and docstrings, :func:`reader_options` (for the
  CLI) and ``docs/io.md`` are all derived from it;
* a **parser** ``parse(source, options) -> Parsed``: the records of one file;
* a :class:`Reader` tying them together, listed by name in ``evalbayes.io._registry``.

:func:`gather` is the one loop over files: it parses every file, names systems
(``system=``), checks the mapping, refuses files with no records and hands the records to
the reader's ``finish`` step. See ``docs/io.md`` ("Adding a format").
"""

from __future__ import annotations

import builtins
import dataclasses
import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io._common import (
    LogError,
    SystemOption,
    build,
    check_labels,
    check_mapping_used,
    finish_frame,
    mapping_keys,
    resolve_system,
)
from evalbayes.io._sources import Source

__all__ = [
    "OptionSpec",
    "Options",
    "Parsed",
    "Reader",
    "UnknownOptionError",
    "Where",
    "check_where",
    "gather",
    "option",
    "option_specs",
    "select_data",
    "select_rows",
]


class UnknownOptionError(TypeError, ValueError):
    """An option name the format does not take (a ``TypeError`` and a ``ValueError``)."""


def option(default: Any, help: str) -> Any:
    """A dataclass field with its help text (the one declaration of a reader option)."""
    return field(default=default, metadata={"help": help})


def check_option(what: str) -> Any:
    """The ``check`` option: what to do when ``what`` (the log's own numbers) disagree."""
    return option("raise", f"cross-check: {what}; 'raise' refuses the log, 'warn' or 'off' read it")


def errors_option(what: str) -> Any:
    """The ``errors`` option: how records of failed runs (``what``) count."""
    return option(
        "failure",
        f"{what}: 'failure' counts them as failed trials, 'drop' leaves them out of n, "
        "'raise' refuses them",
    )


@dataclass(frozen=True)
class Options:
    """Options every format takes."""

    system: SystemOption = option(
        None,
        "system name of every file, or a mapping renaming systems by file path, file name or "
        "the name read from the file (a key matching nothing raises)",
    )

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            choices = _choices(hints[f.name])
            value = getattr(self, f.name)
            if choices is not None and value not in choices:
                raise ValueError(f"{f.name} must be one of {list(choices)}, got {value!r}")


@dataclass(frozen=True)
class LogOptions(Options):
    """Options of every log format (task labels)."""

    task_prefix: bool | None = option(
        None,
        "label tasks '<benchmark>/<id>' (True), '<id>' (False), or the former only when "
        "several benchmarks are read together (None)",
    )


@dataclass
class Parsed:
    """The records of one file.

    ``rows``: one dict (or one frame row) per record. ``system``: the file's default system
    name (renamed by ``system=``), or None when the rows carry their own ``system`` column
    (then a mapping renames by system name).
    """

    rows: list[dict[str, Any]] | pd.DataFrame
    system: str | None


@dataclass(frozen=True)
class Reader:
    """One format: its options, its per-file parser and how records become data.

    Attributes
    ----------
    name : str
        The ``format=`` name.
    options : type
        The options dataclass.
    parse : callable
        ``parse(source, options) -> Parsed`` for one file.
    to_data : callable
        ``to_data(records, options) -> EvalData`` from the gathered records (default: count
        the canonical trial frame, :func:`~evalbayes.io._common.build`).
    to_trials : callable, optional
        ``to_trials(records, options) -> DataFrame``: the trial frame (default: the records
        as they are; None: the format has no trial level).
    finish : callable, optional
        ``finish(frame, options) -> frame`` run once on the gathered records (default:
        :func:`~evalbayes.io._common.finish_frame`: task labels, order, duplicate trials).
    detect : callable, optional
        ``detect(path, doc) -> bool``: does this parsed JSON document (``doc``; None for
        other files) belong to the format? Only needed for formats that
        ``evalbayes.io._sources`` does not know.
    empty : str
        Said when the files hold no record.
    """

    name: str
    options: type[Options]
    parse: Callable[[Source, Any], Parsed]
    to_data: Callable[[pd.DataFrame, Any], EvalData] = lambda frame, opts: build(frame)
    to_trials: Callable[[pd.DataFrame, Any], pd.DataFrame] | None = lambda frame, opts: frame
    finish: Callable[[pd.DataFrame, Any], pd.DataFrame] | None = lambda frame, opts: finish_frame(
        frame, task_prefix=opts.task_prefix
    )
    detect: Callable[[Path, Any], bool] | None = None
    empty: str = "the logs hold no trials"

    def make_options(self, options: Mapping[str, Any]) -> Any:
        """Build (and check) the options dataclass from keyword options."""
        allowed = [f.name for f in dataclasses.fields(self.options)]
        unknown = [name for name in options if name not in allowed]
        if unknown:
            raise UnknownOptionError(
                f"format {self.name!r} takes no option {unknown}; its options are {allowed}"
            )
        return self.options(**options)


Where = Mapping[str, Sequence[str]]


def check_where(where: Where | None) -> dict[str, list[str]]:
    """``where={column: [value, ...]}`` as a dict of lists of text (a lone string is one value)."""
    if where is None:
        return {}
    if not isinstance(where, Mapping):
        raise TypeError(f"where must be a mapping column -> values, got {type(where).__name__}")
    filters: dict[str, list[str]] = {}
    for column, values in where.items():
        chosen = [values] if isinstance(values, str) else list(values)
        if not chosen:
            raise ValueError(f"where: no value given for column {column!r}")
        filters[str(column)] = [str(v) for v in chosen]
    return filters


def select_rows(frame: pd.DataFrame, filters: Mapping[str, list[str]]) -> pd.DataFrame:
    """The rows whose value (as text) in each filtered column is one of that column's values.

    Columns the frame does not hold are left to :func:`select_data` (coordinates made after
    the rows, e.g. the ``task`` of a ``task_id`` column). A value no row holds is an error
    listing the values there are, so a typo never selects nothing silently.
    """
    keep = pd.Series(True, index=frame.index)
    for column, wanted in filters.items():
        if column not in frame.columns:
            continue
        text = frame[column].astype(str)
        known = pd.unique(text)
        missing = [w for w in wanted if w not in set(known)]
        if missing:
            raise ValueError(
                f"where {column}: no value {missing} in any row; known: "
                f"{sorted(known.tolist())[:20]}"
            )
        keep &= text.isin(wanted)
    if not keep.any():
        raise ValueError(f"where {dict(filters)}: no row matches every filter")
    return frame if keep.all() else frame[keep.to_numpy()].reset_index(drop=True)


def select_data(data: EvalData, filters: Mapping[str, list[str]]) -> EvalData:
    """Keep the tasks / systems whose coordinate (compared as text) is one of the values."""
    import numpy as np

    selection: dict[str, list[Any]] = {}
    for column, wanted in filters.items():
        if column not in data.dataset.coords:
            raise ValueError(
                f"where {column}=...: no such column; known: "
                f"{sorted(map(str, data.dataset.coords))}"
            )
        values = np.unique(data.dataset.coords[column].values)
        missing = [w for w in wanted if w not in {str(v) for v in values}]
        if missing:
            raise ValueError(
                f"where {column}: no value {missing}; known: {[str(v) for v in values][:20]}"
            )
        selection[column] = [v for v in values if str(v) in wanted]
    return data.subset(**selection)


def gather(
    sources: Sequence[Source], reader: Reader, opts: Any, where: Where | None = None
) -> pd.DataFrame:
    """The one loop over files: parse each, name its system, concatenate the records.

    ``where`` keeps the rows whose columns hold the given values (:func:`select_rows`)
    before the reader's ``finish`` step and before any check across rows, so one benchmark
    of a table that holds several can be read although its tasks repeat across benchmarks.

    Raises
    ------
    ValueError
        A ``system`` mapping key that matches no file or system, or no record at all.
    """
    frames: list[pd.DataFrame] = []
    keys: list[str] = []
    system = opts.system
    for src in sources:
        parsed = reader.parse(src, opts)
        try:
            frame = (parsed.rows if isinstance(parsed.rows, pd.DataFrame)
                     else pd.DataFrame(parsed.rows))
        except UnicodeEncodeError:  # pandas' text columns cannot hold a lone surrogate
            raise LogError(src.path, "a label or value holds a lone surrogate (a \\ud800-style "
                           "escape that is not UTF-8 text); fix it") from None
        if len(frame) == 0:
            continue
        if parsed.system is not None:
            keys += mapping_keys(src.path, parsed.system)
            frame["system"] = resolve_system(parsed.system, src.path, system)
        elif isinstance(system, Mapping):
            names = frame["system"].astype(str)
            keys += [str(src.path), src.path.name, *pd.unique(names)]
            frame["system"] = [str(system.get(s, s)) for s in names]
        check_labels(frame, src.path)  # NUL / lone surrogates: now, not at save time
        frames.append(frame)
    check_mapping_used(system, keys)
    if not frames:
        raise ValueError(f"{reader.empty} (files: {[str(s.path) for s in sources][:5]})")
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    if where:
        frame = select_rows(frame, check_where(where))
    return reader.finish(frame, opts) if reader.finish is not None else frame


# ---------------------------------------------------------------------------- option specs
@dataclass(frozen=True)
class OptionSpec:
    """One reader option, as a command line exposes it.

    ``type`` is the annotation as text; ``kind`` the scalar type a command-line value is
    converted to (``str``, ``int``, ``float``, ``bool``); ``choices`` the allowed values of a
    ``Literal`` option (else None); ``multiple`` is True for list-valued options.
    """

    name: str
    type: str
    default: Any
    help: str
    kind: builtins.type  # the field ``type`` (text) shadows the builtin in this class body
    choices: tuple[Any, ...] | None = None
    multiple: bool = False

    def convert(self, text: str) -> Any:
        """A command-line string as the option's value (``none`` -> None where allowed)."""
        if text.lower() in ("none", "null") and "None" in self.type:
            return None
        if self.kind is bool:
            low = text.lower()
            if low in ("true", "yes", "1"):
                return True
            if low in ("false", "no", "0"):
                return False
            raise ValueError(f"--{self.name}: expected true or false, got {text!r}")
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(
                f"--{self.name}: expected {self.kind.__name__}, got {text!r}"
            ) from None
        if self.kind is float and not math.isfinite(value):  # nan >= t is always False
            raise ValueError(f"--{self.name}: expected a finite number, got {text!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"--{self.name}: must be one of {list(self.choices)}, got {text!r}")
        return value


def _choices(hint: Any) -> tuple[Any, ...] | None:
    if typing.get_origin(hint) is Literal:
        return typing.get_args(hint)
    return None


def _kind(hint: Any) -> tuple[type, bool]:
    """(scalar type, list-valued) of an annotation."""
    if typing.get_origin(hint) is Literal:
        return type(typing.get_args(hint)[0]), False
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            if arg in (bool, int, float, str):
                return arg, False
        for arg in args:
            if typing.get_origin(arg) in (Sequence, list, tuple):
                return str, True
        return str, False
    if origin in (Sequence, list, tuple):
        return str, True
    return (hint, False) if hint in (bool, int, float, str) else (str, False)


def option_specs(options: type[Options]) -> list[OptionSpec]:
    """The options of an options dataclass: name, type, default, help, choices."""
    hints = typing.get_type_hints(options)
    raw = {f.name: f.type for f in dataclasses.fields(options)}
    specs = []
    for f in dataclasses.fields(options):
        kind, multiple = _kind(hints[f.name])
        specs.append(
            OptionSpec(
                name=f.name,
                type=str(raw[f.name]),
                default=f.default,
                help=str(f.metadata.get("help", "")),
                kind=kind,
                choices=_choices(hints[f.name]),
                multiple=multiple,
            )
        )
    return specs


def options_doc(options: type[Options]) -> str:
    """A numpydoc ``Parameters`` block for the options (used in reader docstrings)."""
    lines = ["Parameters", "----------", "paths : path, glob, directory, or a list of them"]
    lines.append("    Files, directories (walked recursively) or glob patterns.")
    for spec in option_specs(options):
        lines.append(f"{spec.name} : {spec.type}, default {spec.default!r}")
        lines.append(f"    {spec.help}")
    return "\n".join(lines)


def public_reader(
    name: str, level: Literal["data", "trials"], run: Callable[..., Any], options: type[Options]
) -> Callable[..., Any]:
    """A per-format function (``read_inspect``, ``inspect_trials``, ...) with the signature
    and docstring of its options dataclass, calling ``run(paths, name, **options)``."""

    def reader(paths: Any, **opts: Any) -> Any:
        return run(paths, name, **opts)

    params = [inspect.Parameter("paths", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default)
        for f in dataclasses.fields(options)
    ]
    reader.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    what = "EvalData" if level == "data" else "the trial-level frame (one row per attempt)"
    first = (options.__doc__ or "").strip().splitlines()[0] if options.__doc__ else name
    reader.__doc__ = f"Read {name} files into {what}. {first}\n\n{options_doc(options)}\n"
    return reader
