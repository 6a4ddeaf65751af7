"""Readers that turn tables and eval-harness logs into :class:`~evalbayes.EvalData`.

:func:`read` is the entry point for every format (detected by default); the per-format
readers take the same options. Each format is an options dataclass plus a record parser
(``evalbayes.io._protocol``), listed in ``evalbayes.io.registry``; :func:`reader_options`
lists every format's options. See ``docs/io.md`` for the input rules and the error catalogue.
"""

from evalbayes.io._common import LogError, LogWarning
from evalbayes.io._protocol import OptionSpec, UnknownOptionError
from evalbayes.io.auto import (
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
from evalbayes.io.lm_eval import LmEvalRepeatsWarning
from evalbayes.io.registry import reader_options
from evalbayes.io.swe_bench import read_universe
from evalbayes.io.tables import read_table, write_table

__all__ = [
    "FORMATS",
    "LmEvalRepeatsWarning",
    "LogError",
    "LogWarning",
    "OneTaskWarning",
    "OptionSpec",
    "UnknownOptionError",
    "convert",
    "detect_format",
    "helm_trials",
    "inspect_trials",
    "lm_eval_trials",
    "read",
    "read_counts",
    "read_helm",
    "read_inspect",
    "read_lm_eval",
    "read_swe_bench",
    "read_table",
    "read_terminal_bench",
    "read_trials",
    "read_trials_frame",
    "read_universe",
    "reader_options",
    "swe_bench_trials",
    "terminal_bench_trials",
    "write_table",
]
