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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalbayes.io._common import (
    LogError,
    as_label,
    build,
    success_of,
)
from evalbayes.io._json import load_json
from evalbayes.io._protocol import LogOptions, Parsed, Reader, option
from evalbayes.io._sources import Source

__all__ = ["READER", "HelmOptions"]


@dataclass(frozen=True)
class HelmOptions(LogOptions):
    """HELM ``per_instance_stats.json`` files or run directories: each (instance, train
    trial) is one trial. ``run_spec.json`` next to the file names the model (the default
    system; else ``model=`` of the run directory name) and the scenario (the benchmark).
    """

    metric: str = option(
        "exact_match", "the per-instance stat deciding success (e.g. 'quasi_exact_match')"
    )
    split: str | None = option(
        None,
        "keep the instances of one split ('test', 'valid'); default all, with the split "
        "as the task coordinate 'split'",
    )
    perturbation: str | None = option(
        None,
        "read the records of this perturbation (by name); default the unperturbed records "
        "only (perturbed copies are other data, never mixed in)",
    )
    threshold: float | None = option(
        None,
        "success rule for non-binary stats (value >= threshold); without it only 0/1 values "
        "are accepted",
    )


def _parse(src: Source, opts: HelmOptions) -> Parsed:
    records = src.doc if src.doc is not None else load_json(src.path)
    default, benchmark = _names(src.path)
    return Parsed(_rows(src.path, records, benchmark, opts), default)


READER = Reader(
    name="helm",
    options=HelmOptions,
    parse=_parse,
    to_data=lambda frame, opts: build(frame, task_coords=("benchmark", "split")),
    empty="no HELM record matches the split= and perturbation= options",
)


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
        spec = load_json(spec_path)
        if isinstance(spec, Mapping):
            adapter = spec.get("adapter_spec")
            model = adapter.get("model") if isinstance(adapter, Mapping) else None
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


def _rows(path: Path, records: Any, benchmark: str, opts: HelmOptions) -> list[dict[str, Any]]:
    metric, split, perturbation = opts.metric, opts.split, opts.perturbation
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
        stat_split = stat["name"].get("split")
        if stat_split is not None and not isinstance(stat_split, str):
            raise LogError(path, f"split {stat_split!r} is not a string", where)
        if split is not None and stat_split != split:
            continue
        count = stat.get("count")
        if not isinstance(count, int) or count < 1:
            raise LogError(path, f"stat {metric!r} has count {count!r}: no value recorded", where)
        mean, total = stat.get("mean"), stat.get("sum")
        if isinstance(mean, (int, float)):
            value = float(mean)
        elif isinstance(total, (int, float)):
            value = float(total) / count
        else:
            raise LogError(path, f"stat {metric!r} has no numeric 'mean' or 'sum'", where)
        rows.append(
            {
                "sample": instance,
                "trial": trial,
                "success": success_of(value, opts.threshold, path, where),
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
            {
                str(s["name"].get("name"))
                for s in stats
                if isinstance(s, Mapping) and isinstance(s.get("name"), Mapping)
            }
        )
        raise LogError(path, f"missing field: no stat {metric!r} (stats: {names[:12]})", where)
    if len(found) > 1:
        raise LogError(path, f"stat {metric!r} appears {len(found)} times", where)
    return found[0]
