"""Readers that turn tables and eval-harness logs into :class:`~evalbayes.EvalData`.

:func:`read` is the entry point for every format (detected by default); the per-format
readers take the same options with their own docstrings. See ``docs/io.md``.
"""

from evalbayes.io._common import LogError, LogWarning
from evalbayes.io.auto import FORMATS, convert, detect_format, read, read_trials_frame
from evalbayes.io.helm import helm_trials, read_helm
from evalbayes.io.inspect_ai import inspect_trials, read_inspect
from evalbayes.io.lm_eval import LmEvalRepeatsWarning, lm_eval_trials, read_lm_eval
from evalbayes.io.swe_bench import read_swe_bench, read_universe, swe_bench_trials
from evalbayes.io.tables import read_counts, read_table, read_trials, write_table
from evalbayes.io.terminal_bench import read_terminal_bench, terminal_bench_trials

__all__ = [
    "FORMATS",
    "LmEvalRepeatsWarning",
    "LogError",
    "LogWarning",
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
    "swe_bench_trials",
    "terminal_bench_trials",
    "write_table",
]
