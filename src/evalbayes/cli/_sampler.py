"""The sampler flags of the commands that fit (``fit``, ``fit-suite``, ``report DATA``) and
the options they resolve to."""

from __future__ import annotations

import argparse
import importlib.util
from typing import TYPE_CHECKING, Any

from evalbayes._core.names import METHODS, NUTS_METHODS, SAMPLER_DEFAULTS
from evalbayes.cli._common import (
    CLIError,
    add_seed_arg,
)
from evalbayes.cli._types import (
    non_negative_int,
    positive_int,
    probability,
)

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.models._base import Model


def add_sampler_args(parser: argparse.ArgumentParser, spec: bool = False) -> None:
    """--method, --draws, --tune, --chains, --seed; defaults from ``names.SAMPLER_DEFAULTS``
    (``spec``: the command reads a spec whose ``[sampler]`` table comes first)."""
    d = SAMPLER_DEFAULTS
    first = "a spec's [sampler] table, then " if spec else ""
    group = parser.add_argument_group(f"sampler (defaults: {first}these)")
    group.add_argument("--method", choices=METHODS, default=None,
                       help=f"inference method (default: the model's own: {d['method']}, "
                       "exact where it draws its posterior exactly, smc for the rate grid "
                       "without broken tasks)")
    group.add_argument("--draws", type=positive_int, default=None,
                       help=f"draws per chain (default {d['draws']})")
    group.add_argument("--tune", type=non_negative_int, default=None,
                       help=f"warm-up iterations per chain, >= 1 for NUTS (default {d['tune']})")
    group.add_argument("--chains", type=positive_int, default=None,
                       help=f"number of chains (default {d['chains']})")
    group.add_argument("--target-accept", type=probability, default=None,
                       help=f"NUTS target acceptance (default {d['target_accept']})")
    add_seed_arg(group, None, shown=d["seed"])


def sampler_options(args: argparse.Namespace, spec: dict[str, Any], model: Model
                    ) -> dict[str, Any]:
    """Flags, then the spec's ``[sampler]`` table, then the model's default method and
    ``names.SAMPLER_DEFAULTS``; checked."""
    options = {}
    defaults = {**SAMPLER_DEFAULTS, "method": model.default_method}
    for key, default in defaults.items():
        value = getattr(args, key, None)
        options[key] = value if value is not None else spec.get(key, default)
    if options["method"] in NUTS_METHODS and options["tune"] < 1:
        raise CLIError(f"--tune must be >= 1 with NUTS (method {options['method']}), got "
                       f"{options['tune']}: the sampler needs warm-up to adapt its step size")
    if options["method"] == "pathfinder" and importlib.util.find_spec("pymc_extras") is None:
        raise CLIError("--method pathfinder needs the package pymc-extras: "
                       "pip install pymc-extras (or choose another --method)")
    if options["method"] == "numpyro" and importlib.util.find_spec("numpyro") is None:
        raise CLIError("--method numpyro needs the JAX extra: pip install 'evalbayes[jax]'")
    return options


def model_help(purpose: str = "") -> str:
    """``--model`` help, read from the registry (:data:`evalbayes.models.REGISTRY`)."""
    from evalbayes.models import REGISTRY

    names = ", ".join(entry.name for entry in REGISTRY)
    return (f"{purpose}default: rate-grid for two or more systems, beta-binomial for one; "
            f"known: {names} (a design flag implies its model)")
