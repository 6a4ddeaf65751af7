"""lm-evaluation-harness ``--log_samples`` output, read without lm-eval.

Format (``/work/shared/data/FORMATS.md`` §2; lm-eval ``evaluator.py``,
``loggers/evaluation_tracker.py``): ``samples_<task>_<date>.jsonl`` holds one line per
(document, filter) with ``doc_id``, ``filter``, ``metrics`` and one key per metric holding the
per-document value; ``results_<date>.json`` next to it holds the model name, the task configs
(``repeats``) and the aggregate metrics ``"<metric>,<filter>"``.

**Per-repeat correctness is not logged.** With ``repeats: K`` lm-eval generates K outputs per
document but scores only the filtered response (``take_first``, majority vote, ...): one
value per document and filter (EleutherAI/lm-evaluation-harness#1232). So ``n = 1`` per
document, and a task run with ``repeats > 1`` gives a :class:`LmEvalRepeatsWarning`. The one
exception is code tasks that log unbiased pass@k values (``pass@2``, ``pass@8``, ...) over
``n = repeats`` samples: pass@k = 1 - C(n-c, k)/C(n, k) is strictly increasing in ``c`` for
``c <= n - k``, so ``c`` is recovered exactly where the logged values admit one ``c`` only.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io._common import (
    CHECK_ATOL,
    Check,
    LogError,
    LogWarning,
    as_label,
    build,
    dig,
    finish_frame,
    natural_key,
    report,
    success_of,
)
from evalbayes.io._json import load_json, read_jsonl
from evalbayes.io._protocol import LogOptions, Parsed, Reader, check_option, option
from evalbayes.io._sources import Source

__all__ = ["READER", "LmEvalOptions", "LmEvalRepeatsWarning"]

_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl$")
_PASS_AT = re.compile(r"^pass@(\d+)$")
_FIELDS = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
    }
)
PASS_AT_K = "pass@k"


class LmEvalRepeatsWarning(LogWarning):
    """lm-eval ran a task with ``repeats > 1`` but logged one score per document."""


@dataclass(frozen=True)
class LmEvalOptions(LogOptions):
    """lm-eval ``samples_<task>_<date>.jsonl`` files; ``results_<date>.json`` next to each
    supplies the model name (the default system: ``model_name``, else ``pretrained=``, else
    the directory), ``repeats`` and the aggregate for the cross-check. Per-repeat
    correctness is not logged: every document is one trial (``n = 1``) unless the metric is
    pass@k, where ``c`` out of ``n = repeats`` is recovered exactly from the pass@k values.
    """

    metric: str | None = option(
        None,
        "the metric deciding success (exact_match, acc, ...), required when a line has "
        "several; 'pass@k' selects pass@k recovery (automatic when only pass@K keys are "
        "logged)",
    )
    filter: str | None = option(
        None,
        "the filter ('none', 'strict-match', ...): each document appears once per filter; "
        "required when the file has several",
    )
    threshold: float | None = option(
        None,
        "success rule for non-binary values (value >= threshold); without it only 0/1 values "
        "are accepted",
    )
    repeats: int | None = option(
        None, "n for pass@k recovery when the results file gives none (else its 'repeats')"
    )
    ambiguous: Literal["raise", "min"] = option(
        "raise",
        "pass@k = 1 fits every c > n - k: 'raise' refuses such a document, 'min' takes the "
        "smallest consistent c (a lower bound)",
    )
    check: Check = check_option(
        "the mean of the per-document values equals the results file's '<metric>,<filter>' "
        "(when the samples file covers every document)"
    )


def _parse(src: Source, opts: LmEvalOptions) -> Parsed:
    task, results = _task_and_results(src.path)
    return Parsed(_rows(src.path, task, results, opts), _model_name(src.path, results))


def _finish(frame: pd.DataFrame, opts: LmEvalOptions) -> pd.DataFrame:
    if "n" in frame.columns and frame["n"].isna().any():
        raise ValueError("some files hold pass@k values and others 0/1 scores: read them apart")
    return finish_frame(frame, task_prefix=opts.task_prefix)


def _to_data(frame: pd.DataFrame, opts: LmEvalOptions) -> EvalData:
    return _build_counts(frame) if "n" in frame.columns else build(frame)


def _to_trials(frame: pd.DataFrame, opts: LmEvalOptions) -> pd.DataFrame:
    if "n" in frame.columns:
        raise ValueError(
            "these lm-eval logs hold pass@k values: c out of n is recovered per document, but "
            "the individual repeats are not logged, so there is no trial-level table"
        )
    return frame


READER = Reader(
    name="lm-eval",
    options=LmEvalOptions,
    parse=_parse,
    finish=_finish,
    to_data=_to_data,
    to_trials=_to_trials,
)


def _build_counts(frame: pd.DataFrame) -> EvalData:
    """EvalData from recovered (n, c) rows, ordered like :func:`build`."""
    systems = list(dict.fromkeys(frame["system"]))
    tasks = sorted(dict.fromkeys(frame["task"]), key=natural_key)
    table = frame[["system", "task", "n", "c", "benchmark"]]
    data = EvalData.from_frame(table, task_coords=["benchmark"])
    return data.subset(systems=systems, tasks=tasks)


# ---------------------------------------------------------------------------- files
def _task_and_results(path: Path) -> tuple[str, dict[str, Any] | None]:
    """Task name from the file name and the parsed ``results_<date>.json`` next to it."""
    match = _NAME.match(path.name)
    if match is None:
        stem = path.name.split(".")[0]
        return (stem.removeprefix("samples_"), None)
    results_path = path.with_name(f"results_{match['date']}.json")
    if not results_path.is_file():
        return match["task"], None
    results = load_json(results_path)
    if not isinstance(results, dict):
        raise LogError(results_path, "not an lm-eval results file (not a JSON object)")
    return match["task"], results


def _model_name(path: Path, results: Mapping[str, Any] | None) -> str:
    if results:
        if results.get("model_name"):
            return str(results["model_name"])
        args = dig(results, "config", "model_args")
        if isinstance(args, str):
            for part in args.split(","):
                key, _, value = part.partition("=")
                if key.strip() == "pretrained" and value:
                    return value.strip()
    return path.parent.name


def _read_lines(path: Path) -> list[dict[str, Any]]:
    return [obj | {"_line": number} for number, obj in read_jsonl(path)]


def _metric_keys(line: Mapping[str, Any]) -> list[str]:
    listed = line.get("metrics")
    if isinstance(listed, list):
        keys = [m for m in listed if isinstance(m, str) and m in line]
        keys += [k for k in line if _PASS_AT.match(str(k)) and k not in keys]
        return keys
    return [
        k
        for k, v in line.items()
        if k not in _FIELDS and not k.startswith("_") and isinstance(v, (int, float, bool))
    ]


def _pick(path: Path, options: list[str], given: str | None, what: str, hint: str) -> str:
    if given is not None:
        if given not in options:
            raise LogError(path, f"no {what} {given!r} in the file; it has {options}")
        return given
    if len(options) == 1:
        return options[0]
    raise LogError(path, f"the file has several {what}s {options}; pass {hint}= to choose one")


# ---------------------------------------------------------------------------- records
def _rows(
    path: Path,
    task: str,
    results: Mapping[str, Any] | None,
    opts: LmEvalOptions,
) -> list[dict[str, Any]]:
    metric, filter_name, threshold = opts.metric, opts.filter, opts.threshold
    repeats, ambiguous, check = opts.repeats, opts.ambiguous, opts.check
    lines = _read_lines(path)
    has_filter = ["filter" in line for line in lines]
    if any(has_filter) and not all(has_filter):
        line = lines[has_filter.index(False)]
        raise LogError(path, "missing field 'filter'", f"line {line['_line']}")
    filters = list(dict.fromkeys(str(line.get("filter", "none")) for line in lines))
    chosen_filter = _pick(path, filters, filter_name, "filter", "filter")
    lines = [line for line in lines if str(line.get("filter", "none")) == chosen_filter]
    keys = list(dict.fromkeys(k for line in lines for k in _metric_keys(line)))
    pass_keys = [k for k in keys if _PASS_AT.match(k)]
    if metric is not None and (metric == PASS_AT_K or _PASS_AT.match(metric)):
        if not pass_keys:
            raise LogError(path, f"no pass@k values in the file; its metrics are {keys}")
        chosen_metric = PASS_AT_K
    elif metric is None and pass_keys and len(pass_keys) == len(keys):
        chosen_metric = PASS_AT_K
    else:
        chosen_metric = _pick(path, keys, metric, "metric", "metric")
    task_repeats = dig(results, "configs", task, "repeats")
    if chosen_metric == PASS_AT_K:
        n = repeats if repeats is not None else task_repeats
        if not isinstance(n, int) or n < 1:
            raise LogError(
                path,
                "pass@k recovery needs the number of samples per document: the results file "
                f"gives no 'repeats' for task {task!r}; pass repeats=",
            )
    elif isinstance(task_repeats, int) and task_repeats > 1:
        warnings.warn(
            f"{path}: task {task!r} ran with repeats={task_repeats}, but lm-eval logs one "
            f"score per document and filter (metric {chosen_metric!r} of the "
            f"{chosen_filter!r}-filtered response), not per repeat: each document counts as "
            "n = 1 trial and the other outputs are unscored (lm-evaluation-harness#1232)",
            LmEvalRepeatsWarning,
            stacklevel=5,
        )
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for line in lines:
        where = f"line {line['_line']}"
        doc = as_label(line.get("doc_id"), path, where, "doc_id")
        where = f"line {line['_line']} (doc_id {doc}, filter {chosen_filter!r})"
        if doc in seen:
            raise LogError(
                path, f"duplicate doc_id: already on line {seen[doc]} for this filter", where
            )
        seen[doc] = line["_line"]
        base = {
            "sample": doc,
            "trial": 0,
            "benchmark": task,
            "file": str(path),
            "doc_id": line.get("doc_id"),
            "filter": chosen_filter,
            "metric": chosen_metric,
        }
        if chosen_metric == PASS_AT_K:
            n_c = _recover(path, where, line, pass_keys, n, ambiguous)
            rows.append(base | {"n": n, "c": n_c})
            continue
        if chosen_metric not in line:
            raise LogError(path, f"missing field {chosen_metric!r}", where)
        value = _number(path, where, line[chosen_metric], chosen_metric)
        rows.append(base | {"success": success_of(value, threshold, path, where), "value": value})
    _check_results(path, task, results, chosen_metric, chosen_filter, rows, check)
    return rows


def _number(path: Path, where: str, value: Any, name: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and value == value:
        return float(value)
    raise LogError(path, f"{name}={value!r} is not a number", where)


def pass_at_k(n: int, c: int, k: int) -> Fraction:
    """Unbiased pass@k (Chen et al. 2021) in exact arithmetic: ``1 - C(n-c, k)/C(n, k)``."""
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def _recover(
    path: Path, where: str, line: Mapping[str, Any], keys: list[str], n: int, ambiguous: str
) -> int:
    """The ``c`` in ``0..n`` whose pass@k values equal every logged ``pass@K`` of the line."""
    logged = {}
    for key in keys:
        if key not in line:
            raise LogError(path, f"missing field {key!r}", where)
        k = int(_PASS_AT.match(key)[1])  # type: ignore[index]
        if k > n:
            raise LogError(path, f"{key} logged but only n={n} samples per document", where)
        logged[k] = _number(path, where, line[key], key)
    fits = [
        c
        for c in range(n + 1)
        if all(abs(float(pass_at_k(n, c, k)) - v) <= CHECK_ATOL for k, v in logged.items())
    ]
    shown = ", ".join(f"pass@{k}={v!r}" for k, v in sorted(logged.items()))
    if not fits:
        raise LogError(path, f"{shown} fits no c in 0..{n} (n = repeats = {n})", where)
    if len(fits) > 1 and ambiguous == "raise":
        raise LogError(
            path,
            f"{shown} fits every c in {fits} (pass@k = 1 for all c > n - k): c is not "
            "recoverable exactly; pass ambiguous='min' to take the smallest (a lower bound)",
            where,
        )
    return fits[0]


def _check_results(
    path: Path,
    task: str,
    results: Mapping[str, Any] | None,
    metric: str,
    filter_name: str,
    rows: list[dict[str, Any]],
    check: Check,
) -> None:
    """Compare with the aggregate of the results file (document count, then the mean)."""
    if not results:
        return
    expected_docs = dig(results, "n-samples", task, "effective")
    if isinstance(expected_docs, int) and expected_docs != len(rows):
        warnings.warn(
            f"{path}: the samples file holds {len(rows)} documents but the results file "
            f"reports {expected_docs} for task {task!r}: the counts cover the logged documents "
            "only",
            LogWarning,
            stacklevel=5,
        )
        return
    if metric == PASS_AT_K:
        return
    aggregate = dig(results, "results", task, f"{metric},{filter_name}")
    if not isinstance(aggregate, (int, float)) or isinstance(aggregate, bool):
        return
    mean = sum(row["value"] for row in rows) / len(rows)
    if abs(mean - aggregate) > CHECK_ATOL:
        report(
            check,
            path,
            f"the mean of the per-document {metric!r} values ({mean!r}) differs from the "
            f"results file's '{metric},{filter_name}' = {aggregate!r}",
        )
