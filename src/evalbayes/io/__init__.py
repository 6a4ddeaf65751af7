"""Readers that turn tables and eval-harness logs into :class:`~evalbayes.EvalData`.

:func:`read` is the entry point for every format (detected by default); the per-format
readers take the same options. Each format is an options dataclass plus a record parser
(:class:`Reader`, :class:`LogOptions`, :func:`option`: the reader author's kit, with
:func:`load_json`, :func:`read_jsonl` and :class:`LogError`), listed in one registry;
:func:`reader_options` lists every format's options. See ``docs/io.md`` for the input rules
and the error catalogue.
"""

from evalbayes.io._auto import (
    FORMATS,
    OneTaskWarning,
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
from evalbayes.io._common import LogError, LogWarning
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
