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

import warnings
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalbayes.io._common import (
    CHECK_ATOL,
    Check,
    Errors,
    LogError,
    LogWarning,
    as_label,
    dig,
    report,
    success_of,
    value_to_float,
)
from evalbayes.io._json import load_json
from evalbayes.io._protocol import (
    LogOptions,
    Parsed,
    Reader,
    check_option,
    errors_option,
    option,
)
from evalbayes.io._sources import Source

__all__ = ["READER", "InspectOptions"]


@dataclass(frozen=True)
class InspectOptions(LogOptions):
    """inspect_ai ``.eval`` archives and ``.json`` logs: one (sample id, epoch) record is one
    trial; several logs (one per model) become several systems (default name: ``eval.model``).

    Raises :class:`LogError` for a truncated or corrupt archive, a missing field, mixed or
    out-of-range epochs, a duplicate (sample id, epoch), or a score the success rule cannot
    read; the message names the file and the record.
    """

    scorer: str | None = option(
        None, "which scorer's value decides success; required when the log has several"
    )
    value_key: str | None = option(None, "for dict-valued scores, the key to read")
    threshold: float | None = option(
        None,
        "success rule for non-binary scores (mapped as inspect_ai does: C 1, I 0, P 0.5, N 0, "
        "yes/true 1, no/false 0): without it only 0/1 are accepted; with it a trial succeeds "
        "when its value is >= threshold",
    )
    errors: Errors = errors_option("records with an 'error' (the sample crashed, unscored)")
    check: Check = check_option(
        "the mean reduction of each sample equals the mean of its epoch scores, the header "
        "accuracy the mean of the per-sample means, and a finished log holds "
        "results.total_samples records"
    )


def _parse(src: Source, opts: InspectOptions) -> Parsed:
    header, records, reductions = _load(src.path, src.doc)
    default = _field(src.path, header, "eval", "model")
    return Parsed(_rows(src.path, header, records, reductions, opts), str(default))


READER = Reader(name="inspect", options=InspectOptions, parse=_parse)


# ---------------------------------------------------------------------------- loading
#: What a damaged zip archive raises (bad CRC, truncated stream, unsupported method, ...).
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    NotImplementedError,
    RuntimeError,
    ValueError,
)


def _load(path: Path, doc: Any = None) -> tuple[dict[str, Any], list[Any], Any]:
    """``(header, records, reductions)`` of one log."""
    if path.name.lower().endswith(".eval"):
        return _load_eval(path)
    if doc is None:
        doc = load_json(path)
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
    except _ZIP_ERRORS as err:
        raise LogError(path, f"archive member {name!r} is corrupt or truncated ({err})") from None
    return load_json(path, raw, member=name)


def _load_eval(path: Path) -> tuple[dict[str, Any], list[Any], Any]:
    try:
        archive = zipfile.ZipFile(path)
    except _ZIP_ERRORS as err:
        raise LogError(
            path, f"not a readable .eval archive: truncated or corrupt zip ({err})"
        ) from None
    with archive:
        names = archive.namelist()
        if "header.json" in names:
            header = _member(path, archive, "header.json")
        elif "_journal/start.json" in names:
            header = _member(path, archive, "_journal/start.json")
            if isinstance(header, dict):
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
    opts: InspectOptions,
) -> list[dict[str, Any]]:
    value_key, threshold, errors, check = opts.value_key, opts.threshold, opts.errors, opts.check
    benchmark = str(_field(path, header, "eval", "task"))
    config = dig(header, "eval", "config")
    declared = dig(config, "epochs") or 1
    if isinstance(declared, bool) or not isinstance(declared, int) or declared < 1:
        raise LogError(path, f"eval.config.epochs={declared!r} is not a positive integer")
    chosen = _pick_scorer(path, records, opts.scorer)
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
        total = dig(header, "results", "total_samples")
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
    scores = dig(header, "results", "scores")
    scores = scores if isinstance(scores, list) else []
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
        metric = dig(entry, "metrics", "accuracy")
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
