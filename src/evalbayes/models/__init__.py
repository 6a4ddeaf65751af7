"""Model registry: ``get_model(name)`` maps a name (as in ``models/*.toml``) to its class."""

from __future__ import annotations

import importlib
from typing import Any

from evalbayes.models.base import Model

__all__ = [
    "BetaBinomialModel",
    "FactorialModel",
    "IRTModel",
    "JudgeModel",
    "Model",
    "RateGridModel",
    "SeedModel",
    "TaskEffectsModel",
    "TaskGridModel",
    "default_model",
    "default_model_name",
    "get_model",
    "model_from_config",
    "model_names",
]

# name -> (module, class, fixed settings)
_REGISTRY: dict[str, tuple[str, str, dict[str, Any]]] = {
    "beta-binomial": ("evalbayes.models.beta_binomial", "BetaBinomialModel", {}),
    "irt-1pl": ("evalbayes.models.irt", "IRTModel", {"kind": "1pl"}),
    "irt-2pl": ("evalbayes.models.irt", "IRTModel", {"kind": "2pl"}),
    "irt-3pl": ("evalbayes.models.irt", "IRTModel", {"kind": "3pl"}),
    "factorial": ("evalbayes.models.factorial", "FactorialModel", {}),
    "training-seeds": ("evalbayes.models.training_seeds", "SeedModel", {}),
    "judge-error": ("evalbayes.models.judge", "JudgeModel", {}),
    "task-effects": ("evalbayes.models.task_effects", "TaskEffectsModel", {}),
    "rate-grid": ("evalbayes.models.rate_grid", "RateGridModel", {}),
    "task-grid": ("evalbayes.models.task_grid", "TaskGridModel", {}),
}


def default_model_name(n_systems: int) -> str:
    """The model fitted when none is named (``evalbayes fit`` / ``report`` without
    ``--model``, :func:`default_model`).

    Two or more systems: ``"rate-grid"``: each system's own smooth rate distribution (its
    pass@k intervals hold beyond ``k = n`` on real benchmarks; tasks broken for every system
    are an option, ``broken=True``), and population comparisons paired through the shared tasks
    (models/README.md, benchmarks/validity.md). One system: ``"beta-binomial"`` (partial
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
    return list(_REGISTRY)


def get_model(name: str, **settings: Any) -> Model:
    """A model instance by registry name, e.g. ``get_model("irt-2pl")``."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; known: {model_names()}")
    module, cls_name, fixed = _REGISTRY[name]
    cls = getattr(importlib.import_module(module), cls_name)
    return cls(**{**fixed, **settings})


def model_from_config(config: dict[str, Any]) -> Model:
    """Rebuild a model from its ``to_config()`` dict (or a TOML spec with a ``model`` key)."""
    if "model" not in config:
        raise ValueError("a model config needs a 'model' key, e.g. model = 'beta-binomial'")
    name = config["model"]
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; known: {model_names()}")
    module, cls_name, fixed = _REGISTRY[name]
    cls = getattr(importlib.import_module(module), cls_name)
    for key, value in fixed.items():
        if key in config and config[key] != value:
            raise ValueError(f"model {name!r} has {key}={value!r}, the config says {config[key]!r}")
    return cls.from_config({**config, **fixed, "model": cls.name})


def __getattr__(name: str) -> Any:
    if name == "BetaBinomialModel":
        from evalbayes.models.beta_binomial import BetaBinomialModel

        return BetaBinomialModel
    if name == "IRTModel":
        from evalbayes.models.irt import IRTModel

        return IRTModel
    lazy = {
        "FactorialModel": "evalbayes.models.factorial",
        "SeedModel": "evalbayes.models.training_seeds",
        "JudgeModel": "evalbayes.models.judge",
        "TaskEffectsModel": "evalbayes.models.task_effects",
        "RateGridModel": "evalbayes.models.rate_grid",
        "TaskGridModel": "evalbayes.models.task_grid",
    }
    if name in lazy:
        return getattr(importlib.import_module(lazy[name]), name)
    raise AttributeError(f"module 'evalbayes.models' has no attribute {name!r}")
