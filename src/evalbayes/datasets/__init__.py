"""Bundled example datasets: ``load(name)``, ``names()`` and ``table()``.

Only data whose licence allows redistribution are bundled; each entry records its
provenance and licence, shown by :func:`table` (licence texts in ``data/ATTRIBUTION.md``).

- ``tinyagent``: the counts printed in chapter 17 of the seeds (worked examples).
- ``tau_bench_airline``: tau-bench gpt-4o airline trials, 50 tasks x 4 trials (MIT); the
  pass^k example (README table: 0.420, 0.273, 0.220, 0.200 at k = 1..4).
- ``chembench``: 22 LLMs x 2,854 ChemBench questions, 0/1 (MIT); the IRT example, with the
  task coordinate ``difficulty_class``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import pandas as pd

from evalbayes.data import EvalData

__all__ = ["DatasetInfo", "load", "load_frame", "names", "table"]


@dataclass(frozen=True)
class DatasetInfo:
    """Registry entry of a bundled dataset."""

    name: str
    filename: str
    description: str
    source: str
    licence: str
    level: str  # "counts" or "trials"
    defaults: tuple[tuple[str, Any], ...] = ()
    options: tuple[tuple[str, Any], ...] = ()  # keyword arguments of the EvalData builder


_REGISTRY: dict[str, DatasetInfo] = {
    "tinyagent": DatasetInfo(
        name="tinyagent",
        filename="tinyagent_counts.csv",
        description=(
            "Per-task success counts printed in chapter 17 'Evaluation' (seeds 000/003): ten "
            "held-out bug-fixing tasks, RL base agent and GRPO checkpoints. Select one "
            "experiment (sec17.1, sec17.5, sec17.7) and harness (training, greedy); the default "
            "is sec17.7 (64 episodes per task, RL base / GRPO 20 / GRPO 80)."
        ),
        source="chapter 17 of the seeds (figures quoted from the text)",
        licence="figures quoted from the documents, bundled as a worked example",
        level="counts",
        defaults=(("experiment", "sec17.7"), ("harness", "training")),
    ),
    "tau_bench_airline": DatasetInfo(
        name="tau_bench_airline",
        filename="tau_bench_airline_gpt4o_trials.csv",
        description=(
            "tau-bench airline domain, gpt-4o tool-calling agent: 50 tasks x 4 trials, one row "
            "per trial (reward 0/1 in column c). The pass^k example: mean over tasks of "
            "C(c,k)/C(n,k) gives 0.420, 0.273, 0.220, 0.200 at k = 1..4 (tau-bench README)."
        ),
        source=(
            "sierra-research/tau-bench historical_trajectories/gpt-4o-airline.json @ "
            "7362a1708d720a4d697d042f21fd8637ea144c3b"
        ),
        licence="MIT (Copyright (c) 2024 Sierra)",
        level="trials",
        options=(("success", "c"),),
    ),
    "chembench": DatasetInfo(
        name="chembench",
        filename="chembench_binary_irt_on_bench.csv.gz",
        description=(
            "ChemBench: 22 LLMs x 2,854 questions, one attempt each (metric all_correct), with "
            "the question's difficulty_class (easy / intermediate / hard) as a task "
            "coordinate. The item response theory example."
        ),
        source=(
            "lamalab-org/irt-on-bench results/binary_matrix.csv + data/difficulty_dict.json @ "
            "a914cea87f9577dafdc9381b1cbfa685007ccbeb"
        ),
        licence="MIT (Copyright (c) 2025 irt-on-bench maintainers)",
        level="counts",
        options=(("task_coords", ("difficulty_class",)), ("extra", "ignore")),
    ),
}


def names() -> list[str]:
    """Names of the bundled datasets (what :func:`load` and ``dataset:NAME`` take)."""
    return [*_REGISTRY]


def table() -> pd.DataFrame:
    """Table of bundled datasets with provenance and licence."""
    rows = [
        {
            "name": info.name,
            "level": info.level,
            "description": info.description,
            "source": info.source,
            "licence": info.licence,
            "file": info.filename,
        }
        for info in _REGISTRY.values()
    ]
    return pd.DataFrame(rows)


def _info(name: str) -> DatasetInfo:
    if name not in _REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; bundled: {names()}")
    return _REGISTRY[name]


def load_frame(name: str) -> pd.DataFrame:
    """The raw bundled table of dataset ``name`` (all experiments, all columns).

    System and task labels are read as text; ``.csv.gz`` files are decompressed.
    """
    info = _info(name)
    compression = "gzip" if info.filename.endswith(".gz") else None
    labels = dict.fromkeys(("system", "task", "task_id"), str)
    with resources.files("evalbayes.datasets").joinpath("data", info.filename).open("rb") as fh:
        return pd.read_csv(fh, compression=compression, dtype=labels)


def load(name: str, **filters: Any) -> EvalData:
    """Load a bundled dataset as :class:`EvalData`.

    Parameters
    ----------
    name : str
        A name from :func:`names`.
    **filters
        Column values to select rows, e.g. ``experiment="sec17.1"``; the dataset's defaults
        apply to columns not given. Pass ``column=None`` to keep every value of a default.
    """
    info = _info(name)
    frame = load_frame(name)
    selection = dict(info.defaults)
    selection.update(filters)
    for col, value in selection.items():
        if value is None:
            continue
        if col not in frame.columns:
            raise ValueError(f"dataset {name!r} has no column {col!r}")
        values = value if isinstance(value, (list, tuple)) else [value]
        known = sorted(frame[col].astype(str).unique())
        unknown = [v for v in values if str(v) not in known]
        if unknown:
            raise ValueError(f"dataset {name!r}: {col} has no value {unknown}; known: {known}")
        frame = frame[frame[col].astype(str).isin([str(v) for v in values])]
    options: dict[str, Any] = {
        key: (list(v) if isinstance(v, tuple) else v) for key, v in info.options
    }
    if info.level == "trials":
        return EvalData.from_trials(frame.reset_index(drop=True), **options)
    return EvalData.from_frame(frame.reset_index(drop=True), **options)
