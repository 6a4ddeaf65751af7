"""inspect_ai logs (``.eval`` zip archives and ``.json`` documents), read without inspect_ai.

Format (``/work/shared/data/FORMATS.md`` §1, inspect_ai ``log/_log.py`` and
``log/_recorders/eval.py``): an ``EvalLog`` with ``eval`` (task, model, ``config.epochs``),
``results`` (per-scorer metrics), and one ``EvalSample`` per (sample id, epoch). A ``.eval``
archive stores the header in ``header.json``, the light per-record summaries in
``summaries.json`` (read first) and the full samples in ``samples/{id}_epoch_{k}.json``
(read when there is no ``summaries.json``); a ``.json`` log holds all of it in one document.

One (sample id, epoch) record is one trial: ``n`` for a sample is the number of its records
and ``c`` the number whose score passes the success rule.
"""

from __future__ import annotations

import json
import warnings
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io._common import (
    CHECK_ATOL,
    Check,
    Errors,
    LogError,
    LogWarning,
    SystemOption,
    as_label,
    build,
    check_choice,
    check_mapping_used,
    finish_frame,
    mapping_keys,
    report,
    resolve_system,
    success_of,
    value_to_float,
)
from evalbayes.io._sources import PathsLike, Source, collect

__all__ = ["inspect_trials", "read_inspect"]


def read_inspect(
    paths: PathsLike,
    *,
    system: SystemOption = None,
    scorer: str | None = None,
    value_key: str | None = None,
    threshold: float | None = None,
    errors: Errors = "failure",
    check: Check = "raise",
    task_prefix: bool | None = None,
) -> EvalData:
    """Read inspect_ai logs into :class:`~evalbayes.EvalData`.

    Parameters
    ----------
    paths : path, glob, directory, or a list of them
        ``.eval`` and ``.json`` logs. Several logs (one per model) become several systems.
    system : str or mapping, optional
        System names. Default: the log's ``eval.model``. A string names every log's system; a
        mapping renames by file path, file name or model name (other logs keep theirs).
    scorer : str, optional
        Which scorer's value decides success. Required when the log has several scorers.
    value_key : str, optional
        For dict-valued scores, the key to read.
    threshold : float, optional
        Success rule for non-binary values. Scores are mapped as inspect_ai does (``C`` 1,
        ``I`` 0, ``P`` 0.5, ``N`` 0, yes/true 1, no/false 0, numbers as they are). Without a
        threshold only 0/1 values are accepted and anything else raises; with one, a trial
        succeeds when its value is ``>= threshold``.
    errors : {"failure", "drop", "raise"}
        Records with an ``error`` (the sample crashed and was not scored). ``"failure"``
        (default) counts them as failed trials, ``"drop"`` leaves them out of ``n``,
        ``"raise"`` refuses the log.
    check : {"raise", "warn", "off"}
        What to do when the log's own numbers disagree with the records: the ``mean``
        reduction of each sample must equal the mean of its epoch scores (``c/n`` for binary
        scores), the header ``accuracy`` must equal the mean of those per-sample means, and a
        log with status ``"success"`` must hold ``results.total_samples`` records.
    task_prefix : bool, optional
        Task labels are the sample ids; when logs of several tasks (benchmarks) are read
        together they become ``"<task>/<id>"`` (``None``, default). ``True``/``False`` force
        either.

    Raises
    ------
    LogError
        A truncated or corrupt archive, a missing field, mixed or out-of-range epochs, a
        duplicate (sample id, epoch), or a score the success rule cannot read; the message
        names the file and the record.
    """
    frame = inspect_trials(
        paths,
        system=system,
        scorer=scorer,
        value_key=value_key,
        threshold=threshold,
        errors=errors,
        check=check,
        task_prefix=task_prefix,
    )
    return build(frame)


def inspect_trials(
    paths: PathsLike,
    *,
    system: SystemOption = None,
    scorer: str | None = None,
    value_key: str | None = None,
    threshold: float | None = None,
    errors: Errors = "failure",
    check: Check = "raise",
    task_prefix: bool | None = None,
) -> pd.DataFrame:
    """Trial-level frame of inspect_ai logs (options as in :func:`read_inspect`).

    Columns: ``system, task, trial, success, benchmark, sample, file, epoch, scorer, score``
    (the logged value), ``value`` (as a float; NaN for errored records), ``error`` (bool).
    """
    return _trials(
        collect(paths, "inspect"),
        system=system,
        scorer=scorer,
        value_key=value_key,
        threshold=threshold,
        errors=errors,
        check=check,
        task_prefix=task_prefix,
    )


def _trials(
    sources: list[Source],
    *,
    system: SystemOption = None,
    scorer: str | None = None,
    value_key: str | None = None,
    threshold: float | None = None,
    errors: Errors = "failure",
    check: Check = "raise",
    task_prefix: bool | None = None,
) -> pd.DataFrame:
    check_choice("errors", errors, ("failure", "drop", "raise"))
    check_choice("check", check, ("raise", "warn", "off"))
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for src in sources:
        header, records, reductions = _load(src.path, src.doc)
        default = _field(src.path, header, "eval", "model")
        keys += mapping_keys(src.path, default)
        rows += _rows(
            src.path,
            header,
            records,
            reductions,
            system=resolve_system(default, src.path, system),
            scorer=scorer,
            value_key=value_key,
            threshold=threshold,
            errors=errors,
            check=check,
        )
    check_mapping_used(system, keys)
    return finish_frame(rows, task_prefix=task_prefix)


# ---------------------------------------------------------------------------- loading
def _load(path: Path, doc: Any = None) -> tuple[dict[str, Any], list[Any], Any]:
    """``(header, records, reductions)`` of one log."""
    if path.name.lower().endswith(".eval"):
        return _load_eval(path)
    if doc is None:
        try:
            with path.open("rb") as fh:
                doc = json.load(fh)
        except json.JSONDecodeError as err:
            raise LogError(
                path, f"not valid JSON (truncated?): {err.msg} at line {err.lineno}"
            ) from None
    if not isinstance(doc, dict) or "eval" not in doc:
        raise LogError(path, "not an inspect_ai log: no 'eval' field")
    records = doc.get("samples")
    if records is None:
        raise LogError(
            path,
            "the log has no 'samples' (written with log_samples=False?): per-sample counts "
            "cannot be recovered from it",
        )
    if not isinstance(records, list):
        raise LogError(path, "'samples' is not a list")
    header = {k: v for k, v in doc.items() if k not in ("samples", "reductions")}
    return header, records, doc.get("reductions")


def _member(path: Path, archive: zipfile.ZipFile, name: str) -> Any:
    try:
        raw = archive.read(name)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
        raise LogError(path, f"archive member {name!r} is corrupt or truncated ({err})") from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as err:
        raise LogError(path, f"archive member {name!r} is not valid JSON: {err.msg}") from None


def _load_eval(path: Path) -> tuple[dict[str, Any], list[Any], Any]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise LogError(
            path, f"not a readable .eval archive: truncated or corrupt zip ({err})"
        ) from None
    with archive:
        names = archive.namelist()
        if "header.json" in names:
            header = _member(path, archive, "header.json")
        elif "_journal/start.json" in names:
            header = _member(path, archive, "_journal/start.json")
            header.setdefault("status", "started")
        else:
            raise LogError(path, "the archive has neither header.json nor _journal/start.json")
        sample_files = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        if "summaries.json" in names:
            records = _member(path, archive, "summaries.json")
            if not isinstance(records, list):
                raise LogError(path, "summaries.json is not a list")
            if sample_files and len(sample_files) != len(records):
                raise LogError(
                    path,
                    f"summaries.json lists {len(records)} records but the archive holds "
                    f"{len(sample_files)} sample files",
                )
        elif sample_files:
            records = [_member(path, archive, name) for name in sample_files]
        else:
            raise LogError(
                path, "the archive has no summaries.json and no samples/: no per-sample records"
            )
        reductions = (
            _member(path, archive, "reductions.json") if "reductions.json" in names else None
        )
    return header, records, reductions


def _field(path: Path, header: Mapping[str, Any], *keys: str) -> Any:
    node: Any = header
    for i, key in enumerate(keys):
        if not isinstance(node, Mapping) or node.get(key) is None:
            raise LogError(path, f"missing field {'.'.join(keys[: i + 1])!r} in the log header")
        node = node[key]
    return node


# ---------------------------------------------------------------------------- records
def _scorer_names(records: list[Any]) -> list[str]:
    names: dict[str, None] = {}
    for rec in records:
        scores = rec.get("scores") if isinstance(rec, Mapping) else None
        if isinstance(scores, Mapping):
            names.update(dict.fromkeys(scores))
    return list(names)


def _pick_scorer(path: Path, records: list[Any], scorer: str | None) -> str | None:
    names = _scorer_names(records)
    if scorer is not None:
        if names and scorer not in names:
            raise LogError(path, f"no scorer {scorer!r} in the log; its scorers are {names}")
        return scorer
    if len(names) > 1:
        raise LogError(path, f"the log has several scorers {names}; pass scorer= to choose one")
    return names[0] if names else None


def _epoch(path: Path, rec: Mapping[str, Any], where: str, declared: int) -> int:
    epoch = rec.get("epoch")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise LogError(path, f"epoch {epoch!r} is missing or not a positive integer", where)
    if epoch > declared:
        raise LogError(
            path,
            f"mixed epochs: epoch {epoch} is outside 1..{declared} declared in eval.config.epochs",
            where,
        )
    return epoch


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        return str(error.get("message", error))
    return str(error)


def _rows(
    path: Path,
    header: Mapping[str, Any],
    records: list[Any],
    reductions: Any,
    *,
    system: str,
    scorer: str | None,
    value_key: str | None,
    threshold: float | None,
    errors: Errors,
    check: Check,
) -> list[dict[str, Any]]:
    benchmark = str(_field(path, header, "eval", "task"))
    config = header["eval"].get("config") or {}
    declared = config.get("epochs") or 1
    chosen = _pick_scorer(path, records, scorer)
    rows: list[dict[str, Any]] = []
    epochs: dict[str, list[int]] = defaultdict(list)
    values: dict[str, list[float]] = defaultdict(list)
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise LogError(path, "the record is not a JSON object", f"record {i}")
        sample = as_label(rec.get("id"), path, f"record {i}", "sample id")
        epoch = _epoch(path, rec, f"record {i} (sample {sample!r})", declared)
        where = f"sample {sample!r} epoch {epoch}"
        if epoch in epochs[sample]:
            raise LogError(path, "duplicate sample id: this (id, epoch) appears twice", where)
        epochs[sample].append(epoch)
        row = {
            "system": system,
            "sample": sample,
            "trial": epoch,
            "benchmark": benchmark,
            "file": str(path),
            "epoch": epoch,
            "scorer": chosen,
        }
        error = rec.get("error")
        if error:
            if errors == "raise":
                raise LogError(
                    path,
                    f"the sample errored ({_error_text(error)[:200]}); pass errors='failure' "
                    "to count errored samples as failures or errors='drop' to leave them out",
                    where,
                )
            if errors == "failure":
                rows.append(
                    row | {"success": 0, "score": None, "value": float("nan"), "error": True}
                )
            continue
        scores = rec.get("scores")
        if chosen is None or not isinstance(scores, Mapping) or chosen not in scores:
            raise LogError(path, f"missing field: no score for scorer {chosen!r}", where)
        score = scores[chosen]
        if not isinstance(score, Mapping) or "value" not in score:
            raise LogError(path, f"missing field: score {chosen!r} has no 'value'", where)
        raw = score["value"]
        value = value_to_float(raw, path, where, value_key)
        values[sample].append(value)
        success = success_of(value, threshold, path, where)
        rows.append(row | {"success": success, "score": raw, "value": value, "error": False})
    status = header.get("status", "started")
    incomplete = {s: e for s, e in epochs.items() if sorted(e) != list(range(1, declared + 1))}
    if status == "success":
        if incomplete:
            sample, got = next(iter(incomplete.items()))
            raise LogError(
                path,
                f"mixed epochs: sample {sample!r} has epochs {sorted(got)} but the log declares "
                f"epochs={declared} and finished with status 'success'",
            )
        total = (header.get("results") or {}).get("total_samples")
        if total is not None and total != len(records):
            report(
                check,
                path,
                f"the header says total_samples={total} but the log holds {len(records)} records",
            )
    else:
        note = (
            f"; {len(incomplete)} samples have fewer than {declared} epochs" if incomplete else ""
        )
        warnings.warn(
            f"{path}: log status is {status!r}, not 'success': the counts cover the "
            f"{len(records)} records present{note}",
            LogWarning,
            stacklevel=4,
        )
    _check_reductions(path, reductions, chosen, values, value_key, check)
    _check_accuracy(path, header, chosen, values, check)
    return rows


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _check_reductions(
    path: Path,
    reductions: Any,
    scorer: str | None,
    values: Mapping[str, list[float]],
    value_key: str | None,
    check: Check,
) -> None:
    """The ``mean`` reduction of every sample must equal the mean of its epoch scores."""
    if not isinstance(reductions, list) or check == "off":
        return
    for red in reductions:
        if not isinstance(red, Mapping) or red.get("scorer") != scorer:
            continue
        if red.get("reducer") not in (None, "mean"):
            continue
        for entry in red.get("samples") or []:
            sample = as_label(entry.get("sample_id"), path, "reductions", "sample_id")
            if not values.get(sample):
                continue
            where = f"sample {sample!r} (reductions)"
            logged = value_to_float(entry.get("value"), path, where, value_key)
            expected = _mean(values[sample])
            if abs(logged - expected) > CHECK_ATOL:
                report(
                    check,
                    path,
                    f"the mean reduction {logged!r} differs from the mean of the epoch scores "
                    f"{expected!r} (= c/n for binary scores)",
                    where,
                )


def _check_accuracy(
    path: Path,
    header: Mapping[str, Any],
    scorer: str | None,
    values: Mapping[str, list[float]],
    check: Check,
) -> None:
    """The header ``accuracy`` must equal the mean over samples of the per-sample means."""
    scores = (header.get("results") or {}).get("scores") or []
    sample_means = [_mean(v) for v in values.values() if v]
    if check == "off" or not sample_means:
        return
    for entry in scores:
        if not isinstance(entry, Mapping):
            continue
        if scorer not in (entry.get("scorer"), entry.get("name")):
            continue
        if entry.get("reducer") not in (None, "mean"):
            continue
        metric = (entry.get("metrics") or {}).get("accuracy")
        if not isinstance(metric, Mapping) or metric.get("value") is None:
            return
        logged = float(metric["value"])
        expected = _mean(sample_means)
        if abs(logged - expected) > CHECK_ATOL:
            report(
                check,
                path,
                f"header accuracy {logged!r} for scorer {scorer!r} differs from the mean of the "
                f"per-sample scores {expected!r}",
            )
        return
