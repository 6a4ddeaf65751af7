"""HELM ``per_instance_stats.json``, read without HELM.

Format (``/work/shared/data/FORMATS.md`` §4; HELM ``benchmark/metrics/metric.py``
``PerInstanceStats``): a list of ``{instance_id, train_trial_index, stats, [perturbation]}``
where ``stats`` is a list of ``Stat`` objects ``{name: {name, split, [perturbation]}, count,
sum, mean, ...}``. HELM's repeat axis is ``train_trial_index`` (a fresh draw of in-context
examples): each (instance, train trial) is one trial, its success read from the chosen
metric (``exact_match`` by default). ``run_spec.json`` in the same directory names the model
and the scenario.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from evalbayes.data import EvalData
from evalbayes.io._common import (
    LogError,
    SystemOption,
    as_label,
    build,
    check_mapping_used,
    finish_frame,
    mapping_keys,
    resolve_system,
    success_of,
)
from evalbayes.io._sources import PathsLike, Source, collect

__all__ = ["helm_trials", "read_helm"]


def read_helm(
    paths: PathsLike,
    *,
    system: SystemOption = None,
    metric: str = "exact_match",
    split: str | None = None,
    perturbation: str | None = None,
    threshold: float | None = None,
    task_prefix: bool | None = None,
) -> EvalData:
    """Read HELM ``per_instance_stats.json`` files into :class:`~evalbayes.EvalData`.

    Parameters
    ----------
    paths : path, glob, directory, or a list of them
        ``per_instance_stats.json`` files or HELM run directories.
    system : str or mapping, optional
        System names. Default: ``adapter_spec.model`` of the ``run_spec.json`` next to the
        file, else the ``model=`` part of the run directory name, else the directory name.
    metric : str
        The per-instance stat deciding success (default ``"exact_match"``; e.g.
        ``"quasi_exact_match"``).
    split : str, optional
        Keep instances of one split (``"test"``, ``"valid"``). Default: all, with the split
        as the task coordinate ``split``.
    perturbation : str, optional
        Read the records of this perturbation (by its ``name``). Default: the unperturbed
        records only (perturbed copies of an instance are other data, never mixed in).
    threshold : float, optional
        Success rule for non-binary metric values (``value >= threshold``); without it only
        0/1 values are accepted.
    task_prefix : bool, optional
        Task labels are the ``instance_id``; ``"<scenario>/<instance_id>"`` when several
        scenarios are read together (default ``None``).
    """
    return build(
        helm_trials(
            paths,
            system=system,
            metric=metric,
            split=split,
            perturbation=perturbation,
            threshold=threshold,
            task_prefix=task_prefix,
        ),
        task_coords=("benchmark", "split"),
    )


def helm_trials(
    paths: PathsLike,
    *,
    system: SystemOption = None,
    metric: str = "exact_match",
    split: str | None = None,
    perturbation: str | None = None,
    threshold: float | None = None,
    task_prefix: bool | None = None,
) -> pd.DataFrame:
    """Trial-level frame of HELM logs (options as in :func:`read_helm`).

    Columns: ``system, task, trial, success, benchmark, sample, file, split, metric, value``.
    """
    return _trials(
        collect(paths, "helm"),
        system=system,
        metric=metric,
        split=split,
        perturbation=perturbation,
        threshold=threshold,
        task_prefix=task_prefix,
    )


def _trials(
    sources: list[Source],
    *,
    system: SystemOption = None,
    metric: str = "exact_match",
    split: str | None = None,
    perturbation: str | None = None,
    threshold: float | None = None,
    task_prefix: bool | None = None,
) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    keys: list[str] = []
    for src in sources:
        records = src.doc if src.doc is not None else _load(src.path)
        default, benchmark = _names(src.path)
        keys += mapping_keys(src.path, default)
        rows += _rows(
            src.path,
            records,
            system=resolve_system(default, src.path, system),
            benchmark=benchmark,
            metric=metric,
            split=split,
            perturbation=perturbation,
            threshold=threshold,
        )
    check_mapping_used(system, keys)
    if not rows:
        raise ValueError(f"no HELM record matches split={split!r}, perturbation={perturbation!r}")
    return finish_frame(rows, task_prefix=task_prefix)


def _load(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return json.load(fh)
    except json.JSONDecodeError as err:
        raise LogError(
            path, f"not valid JSON (truncated?): {err.msg} at line {err.lineno}"
        ) from None


def _names(path: Path) -> tuple[str, str]:
    """(model, scenario) from the run spec or the HELM run directory name.

    The run spec is ``run_spec.json`` next to the file (``<prefix>run_spec.json`` for a file
    named ``<prefix>per_instance_stats.json``); the scenario is the run name without its
    ``model=`` argument, so runs of several models on one scenario share task labels.
    """
    run_name = path.parent.name
    prefix_name = path.name.removesuffix("per_instance_stats.json")
    spec_path = path.with_name(prefix_name + "run_spec.json")
    model = None
    if spec_path.is_file():
        spec = _load(spec_path)
        if isinstance(spec, Mapping):
            model = (spec.get("adapter_spec") or {}).get("model")
            run_name = str(spec.get("name") or run_name)
    prefix, _, args = run_name.partition(":")
    parts = [p for p in args.split(",") if p] if args else []
    model_parts = [p for p in parts if p.startswith("model=")]
    if model is None and model_parts:
        model = model_parts[0].removeprefix("model=")
    rest = [p for p in parts if not p.startswith("model=")]
    scenario = prefix + (":" + ",".join(rest) if rest else "") if args else run_name
    return str(model or path.parent.name), scenario


def _perturbation_name(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return str(value.get("name"))
    return str(value)


def _rows(
    path: Path,
    records: Any,
    *,
    system: str,
    benchmark: str,
    metric: str,
    split: str | None,
    perturbation: str | None,
    threshold: float | None,
) -> list[dict[str, Any]]:
    if not isinstance(records, list):
        raise LogError(path, "not a HELM per_instance_stats file (expected a JSON list)")
    rows: list[dict[str, Any]] = []
    for i, rec in enumerate(records):
        where = f"record {i}"
        if not isinstance(rec, Mapping):
            raise LogError(path, "the record is not a JSON object", where)
        for field in ("instance_id", "train_trial_index", "stats"):
            if field not in rec:
                raise LogError(path, f"missing field {field!r}", where)
        if _perturbation_name(rec.get("perturbation")) != perturbation:
            continue
        instance = as_label(rec["instance_id"], path, where, "instance_id")
        trial = rec["train_trial_index"]
        if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
            raise LogError(
                path, f"train_trial_index {trial!r} is not a non-negative integer", where
            )
        where = f"record {i} (instance {instance!r}, train trial {trial})"
        stat = _find_stat(path, where, rec["stats"], metric, perturbation)
        stat_split = (stat.get("name") or {}).get("split")
        if split is not None and stat_split != split:
            continue
        count = stat.get("count")
        if not isinstance(count, int) or count < 1:
            raise LogError(path, f"stat {metric!r} has count {count!r}: no value recorded", where)
        mean = stat.get("mean")
        value = float(mean) if isinstance(mean, (int, float)) else float(stat["sum"]) / count
        rows.append(
            {
                "system": system,
                "sample": instance,
                "trial": trial,
                "success": success_of(value, threshold, path, where),
                "benchmark": benchmark,
                "file": str(path),
                "split": stat_split,
                "metric": metric,
                "value": value,
            }
        )
    return rows


def _find_stat(
    path: Path, where: str, stats: Any, metric: str, perturbation: str | None
) -> Mapping[str, Any]:
    if not isinstance(stats, list):
        raise LogError(path, "'stats' is not a list", where)
    found = [
        s
        for s in stats
        if isinstance(s, Mapping)
        and isinstance(s.get("name"), Mapping)
        and s["name"].get("name") == metric
        and _perturbation_name(s["name"].get("perturbation")) == perturbation
    ]
    if not found:
        names = sorted(
            {s["name"].get("name") for s in stats if isinstance(s, Mapping) and "name" in s}
        )
        raise LogError(path, f"missing field: no stat {metric!r} (stats: {names[:12]})", where)
    if len(found) > 1:
        raise LogError(path, f"stat {metric!r} appears {len(found)} times", where)
    return found[0]
