"""Readers that turn tables and eval-harness logs into :class:`~evalbayes.EvalData`.

:func:`read` is the entry point for every format (detected by default); the per-format
readers take the same options. Each format is an options dataclass plus a record parser
(:class:`Reader`, :class:`LogOptions`, :func:`option`: the reader author's kit, with
:func:`load_json`, :func:`read_jsonl` and :class:`LogError`), listed in one registry;
:func:`reader_options` lists every format's options. See ``docs/io.md`` for the input rules
and the error catalogue.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.io._auto import (
        FORMATS,
        convert,
        detect_format,
        helm_trials,
        inspect_trials,
        lm_eval_trials,
        read,
        read_counts,
        read_helm,
        read_inspect,
        read_lm_eval,
        read_swe_bench,
        read_terminal_bench,
        read_trials,
        read_trials_frame,
        swe_bench_trials,
        terminal_bench_trials,
    )
    from evalbayes.io._common import LogError, LogWarning, OneTaskWarning
    from evalbayes.io._json import load_json, read_jsonl
    from evalbayes.io._lm_eval import LmEvalRepeatsWarning
    from evalbayes.io._protocol import (
        LogOptions,
        OptionSpec,
        Parsed,
        Reader,
        UnknownOptionError,
        option,
    )
    from evalbayes.io._registry import reader_options
    from evalbayes.io._scores import ScoreData, read_scores, scores_from_inspect
    from evalbayes.io._swe_bench import read_universe
    from evalbayes.io._tables import read_table, write_table

#: name -> the module it lives in: imported when first used, so that a command that only
#: reads a fit (``summary``, ``compare``) does not import every log reader (issue 26)
_LAZY = {
    "FORMATS": "evalbayes.io._auto",
    "LmEvalRepeatsWarning": "evalbayes.io._lm_eval",
    "LogError": "evalbayes.io._common",
    "LogOptions": "evalbayes.io._protocol",
    "LogWarning": "evalbayes.io._common",
    "OneTaskWarning": "evalbayes.io._common",
    "OptionSpec": "evalbayes.io._protocol",
    "Parsed": "evalbayes.io._protocol",
    "Reader": "evalbayes.io._protocol",
    "ScoreData": "evalbayes.io._scores",
    "UnknownOptionError": "evalbayes.io._protocol",
    "convert": "evalbayes.io._auto",
    "detect_format": "evalbayes.io._auto",
    "helm_trials": "evalbayes.io._auto",
    "inspect_trials": "evalbayes.io._auto",
    "lm_eval_trials": "evalbayes.io._auto",
    "load_json": "evalbayes.io._json",
    "option": "evalbayes.io._protocol",
    "read": "evalbayes.io._auto",
    "read_counts": "evalbayes.io._auto",
    "read_helm": "evalbayes.io._auto",
    "read_inspect": "evalbayes.io._auto",
    "read_jsonl": "evalbayes.io._json",
    "read_lm_eval": "evalbayes.io._auto",
    "read_scores": "evalbayes.io._scores",
    "read_swe_bench": "evalbayes.io._auto",
    "read_table": "evalbayes.io._tables",
    "read_terminal_bench": "evalbayes.io._auto",
    "read_trials": "evalbayes.io._auto",
    "read_trials_frame": "evalbayes.io._auto",
    "read_universe": "evalbayes.io._swe_bench",
    "reader_options": "evalbayes.io._registry",
    "scores_from_inspect": "evalbayes.io._scores",
    "swe_bench_trials": "evalbayes.io._auto",
    "terminal_bench_trials": "evalbayes.io._auto",
    "write_table": "evalbayes.io._tables",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'evalbayes.io' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "FORMATS",
    "LmEvalRepeatsWarning",
    "LogError",
    "LogOptions",
    "LogWarning",
    "OneTaskWarning",
    "OptionSpec",
    "Parsed",
    "Reader",
    "ScoreData",
    "UnknownOptionError",
    "convert",
    "detect_format",
    "helm_trials",
    "inspect_trials",
    "lm_eval_trials",
    "load_json",
    "option",
    "read",
    "read_counts",
    "read_helm",
    "read_inspect",
    "read_jsonl",
    "read_lm_eval",
    "read_scores",
    "read_swe_bench",
    "read_table",
    "read_terminal_bench",
    "read_trials",
    "read_trials_frame",
    "read_universe",
    "reader_options",
    "scores_from_inspect",
    "swe_bench_trials",
    "terminal_bench_trials",
    "write_table",
]
