"""``evalbayes fit DATA``: fit a model and save the posterior (NetCDF)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalbayes.cli._common import (
    DATASET_PREFIX,
    CLIError,
    add_data_args,
    check_no_output_format,
    read_data,
    refuse_output_format,
    warn,
)
from evalbayes.cli._designs import (
    add_design_args,
    apply_designs,
    design_model,
    formula_settings,
)
from evalbayes.cli._output import check_fit, check_output_path
from evalbayes.cli._progress import heartbeat_every, progress
from evalbayes.cli._sampler import add_sampler_args, model_help, sampler_options
from evalbayes.cli._scores import add_score_args, is_score_model, run_scores
from evalbayes.cli._types import count

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.data import EvalData
    from evalbayes.models._base import Model

DEFAULT_FIT_DIR = Path("models") / "fits"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_args(parser)
    refuse_output_format(parser, "fit writes a NetCDF fit (-o)")
    parser.add_argument("--model", default=None,
                        help=model_help())
    parser.add_argument("--spec", default=None, help="model spec TOML (see models/*.toml)")
    parser.add_argument("-o", "--output", default=None,
                        help=f"fit file (default {DEFAULT_FIT_DIR}/<data>-<model>.nc)")
    add_sampler_args(parser, spec=True)
    cluster = parser.add_argument_group(
        "Dask (the rate grid's SMC maps its systems over a cluster; same draws as on threads)")
    where = cluster.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="address of a running Dask scheduler, e.g. tcp://host:8786")
    where.add_argument("--workers", type=count(1, 1024), default=None, metavar="N",
                       help="a local Dask cluster of N worker processes for this fit "
                       "(default: threads in this process)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when R-hat, ESS or divergences fail the usual bars")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_design_args(parser)
    add_score_args(parser)


def read_spec(path: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Model settings and sampler settings from a TOML spec (``[sampler]`` table optional)."""
    if path is None:
        return {}, {}
    import tomllib

    from evalbayes.io._sources import check_regular

    check_regular(path)  # a FIFO would block
    try:
        with open(path, "rb") as fh:
            spec = tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise CLIError(f"{path}: not valid TOML ({err})") from err
    except RecursionError:
        raise CLIError(f"{path}: nested too deeply to read") from None
    except UnicodeDecodeError as err:
        raise CLIError(f"{path}: not UTF-8 text ({err.reason})") from None
    sampler = spec.pop("sampler", {})
    spec.pop("description", None)
    return spec, sampler


def make_model(args: argparse.Namespace, settings: dict[str, Any], data: EvalData) -> Model:
    """The named model (``--model``, the spec), else the default for ``data``
    (:func:`~evalbayes.models.default_model`: rate-grid for two or more systems)."""
    from evalbayes.models import default_model, get_model, model_from_config

    if (args.model or settings.get("model")) == "formula":
        if getattr(args, "formula", None) is not None:  # --formula over the spec's
            settings = {**settings, "formula": args.formula}
        elif "formula" not in settings:
            formula_settings(args, "formula")  # raises: the formula model needs one
    if not settings:
        return get_model(args.model) if args.model else default_model(data)
    if args.model and settings.get("model") not in (None, args.model):
        raise CLIError(f"--model {args.model} conflicts with the spec's {settings['model']!r}")
    return model_from_config({"model": args.model, **settings})


def default_fit_path(args: argparse.Namespace, model_name: str) -> Path:
    source = args.data[0]
    stem = source[len(DATASET_PREFIX):] if source.startswith(DATASET_PREFIX) else Path(source).name
    return DEFAULT_FIT_DIR / f"{stem.split('.')[0] or 'data'}-{model_name}.nc"


def run(args: argparse.Namespace) -> int:
    check_no_output_format(args)
    settings, sampler = read_spec(args.spec)
    if is_score_model(args.model or settings.get("model")):
        return run_scores(args, settings, sampler)
    implied = design_model(args, args.model or settings.get("model"))
    if args.model is None and "model" not in settings:
        args.model = implied
    data = read_data(args)
    model = make_model(args, settings, data)
    options = sampler_options(args, sampler, model)
    data = apply_designs(args, data, model)
    if (args.scheduler is not None or args.workers is not None) and options["method"] != "smc":
        flag = "--scheduler" if args.scheduler is not None else "--workers"
        raise CLIError(f"{flag} maps the systems of method smc (the rate grid's default) over "
                       f"a Dask cluster; {model.name} with method {options['method']} samples "
                       "every system in one run")
    path = Path(args.output) if args.output else default_fit_path(args, model.name)
    check_output_path(path, args, create=True)  # before sampling; -o was checked in main
    start = (f"fitting {model.name} to {data!r} with {options['method']} "
             f"({options['chains']} chains x {options['draws']} draws)")
    with progress(start, "fitting", every=heartbeat_every(args.quiet)):
        posterior = model.fit(data, **options, progressbar=not args.quiet, check=False,
                              client=args.scheduler, n_workers=args.workers)
    saving = time.perf_counter()
    posterior.save(path)  # with the k = 1 curve draws where it pays (saves_curves)
    what = (" with the pass@1 and pass^1 draws that summary and compare read"
            if posterior.saves_curves() else "")
    warn(f"wrote {path} ({time.perf_counter() - saving:.1f} s{what})")
    return check_fit(posterior, args.strict, quiet_pass=False)
