"""The stable models and their registry: ``get_model(name)`` maps a name (as in
``models/*.toml`` and the CLI's ``--model``) to its class.

One table, :data:`REGISTRY`, is the only place a model is listed: :func:`model_names`,
:func:`get_model`, :func:`model_from_config`, this package's lazy attributes and ``__all__``,
and the CLI's ``--model`` help are all read from it. A model family is a sub-package
(``beta_binomial``, ``rate_grid``, ``irt``, ``designs``, ``formula``, ``graded``: scores,
not counts, on their own template ``graded.ScoreModel``); families never import each other,
and numerics two families share live in ``models/_<what it computes>.py``. Models under
evaluation are in :mod:`evalbayes.experimental`, not here.

Model authors build on :class:`Model`, :class:`ModelInputs` and the helpers exported here
(``docs/new_model.md``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from evalbayes.models._base import (
    Model,
    ModelInputs,
    RowExpectations,
    binomial_log_choose,
    observed_cells,
    population_pairing_of,
    require_observed,
)


@dataclass(frozen=True)
class ModelEntry:
    """One registry line: the name users type, where its class lives, the settings the name
    fixes (``irt-2pl`` is ``IRTModel(kind="2pl")``) and a line of help."""

    name: str
    package: str
    cls: str
    help: str
    fixed: dict[str, Any] = field(default_factory=dict)


#: The registry: one line per model name, in the order the CLI lists them.
REGISTRY: tuple[ModelEntry, ...] = (
    ModelEntry("rate-grid", "evalbayes.models.rate_grid", "RateGridModel",
               "per-system smooth rate distribution (default for 2+ systems)"),
    ModelEntry("beta-binomial", "evalbayes.models.beta_binomial", "BetaBinomialModel",
               "Beta-Binomial hierarchy (default for 1 system; exact, seconds)"),
    ModelEntry("irt-1pl", "evalbayes.models.irt", "IRTModel", "item response theory, 1PL",
               {"kind": "1pl"}),
    ModelEntry("irt-2pl", "evalbayes.models.irt", "IRTModel", "item response theory, 2PL",
               {"kind": "2pl"}),
    ModelEntry("irt-3pl", "evalbayes.models.irt", "IRTModel",
               "item response theory, 3PL (guessing floor)", {"kind": "3pl"}),
    ModelEntry("factorial", "evalbayes.models.designs", "FactorialModel",
               "model x harness factorial design"),
    ModelEntry("training-seeds", "evalbayes.models.designs", "TrainingSeedsModel",
               "recipes x training runs (run-to-run noise)"),
    ModelEntry("judge-error", "evalbayes.models.designs", "JudgeErrorModel",
               "pass rates through an imperfect judge"),
    ModelEntry("ordinal", "evalbayes.models.graded", "OrdinalModel",
               "graded scores 0..K (ordered logistic; grader effects)"),
    ModelEntry("partial-credit", "evalbayes.models.graded", "PartialCreditModel",
               "partial-credit scores in [0, 1] (zero-one-inflated Beta)"),
    ModelEntry("formula", "evalbayes.models.formula", "FormulaModel",
               "binomial GLMM from a formula (--formula): covariates, crossed and nested "
               "group effects"),
)  # fmt: skip

#: Names of models that were retired, with what to use instead (``load`` says so).
RETIRED: dict[str, str] = {
    "task-effects": "retired after measurement (benchmarks/experimental/); refit with "
    "'rate-grid' (the default) or 'irt-1pl'",
    "task-grid": "retired after measurement (benchmarks/experimental/); refit with "
    "'rate-grid' (broken = true for tasks broken for every system)",
}

_BY_NAME = {entry.name: entry for entry in REGISTRY}
_CLASSES = {entry.cls: entry.package for entry in REGISTRY}

__all__ = [
    "REGISTRY",
    "Model",
    "ModelEntry",
    "ModelInputs",
    "RowExpectations",
    *sorted(_CLASSES),
    "binomial_log_choose",
    "default_model",
    "default_model_name",
    "get_model",
    "model_from_config",
    "model_names",
    "observed_cells",
    "population_pairing_of",
    "require_observed",
]


def default_model_name(n_systems: int) -> str:
    """The model fitted when none is named (``evalbayes fit`` / ``report`` without
    ``--model``, :func:`default_model`).

    Two or more systems: ``"rate-grid"``: each system's own smooth rate distribution (its
    pass@k intervals hold beyond ``k = n`` on real benchmarks; tasks broken for every system
    are an option, ``broken=True``), and population comparisons paired through the shared tasks
    (models/README.md, benchmarks/validity/). One system: ``"beta-binomial"`` (partial
    pooling; conjugate, exact in seconds, and nothing to pair).
    """
    if isinstance(n_systems, bool) or int(n_systems) != n_systems or n_systems < 1:
        raise ValueError(f"n_systems must be a positive integer, got {n_systems!r}")
    return "rate-grid" if n_systems >= 2 else "beta-binomial"


def default_model(data: Any) -> Model:
    """The default model (:func:`default_model_name`) for ``data`` (an ``EvalData``), with its
    default settings."""
    return get_model(default_model_name(len(data.systems)))


def model_names() -> list[str]:
    """Names accepted by :func:`get_model` and the CLI's ``--model``."""
    return [entry.name for entry in REGISTRY]


def _entry(name: str) -> ModelEntry:
    if name in RETIRED:
        raise ValueError(f"model {name!r} was {RETIRED[name]}")
    if name not in _BY_NAME:
        raise ValueError(f"unknown model {name!r}; known: {model_names()}")
    return _BY_NAME[name]


def _class(entry: ModelEntry) -> type[Model]:
    cls: type[Model] = getattr(importlib.import_module(entry.package), entry.cls)
    return cls


def get_model(name: str, **settings: Any) -> Model:
    """A model instance by registry name, e.g. ``get_model("irt-2pl")``."""
    entry = _entry(name)
    return _class(entry)(**{**entry.fixed, **settings})


def model_from_config(config: dict[str, Any]) -> Model:
    """Rebuild a model from its ``to_config()`` dict (or a TOML spec with a ``model`` key)."""
    if "model" not in config:
        raise ValueError("a model config needs a 'model' key, e.g. model = 'beta-binomial'")
    entry = _entry(config["model"])
    for key, value in entry.fixed.items():
        if key in config and config[key] != value:
            raise ValueError(
                f"model {entry.name!r} has {key}={value!r}, the config says {config[key]!r}"
            )
    cls = _class(entry)
    return cls.from_config({**config, **entry.fixed, "model": entry.name})


def __getattr__(name: str) -> Any:
    """The model classes, imported on first use (``evalbayes.models.RateGridModel``)."""
    if name in _CLASSES:
        value = getattr(importlib.import_module(_CLASSES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalbayes.models' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
