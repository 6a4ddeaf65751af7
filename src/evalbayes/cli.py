"""Command line: ``evalbayes <command> ...``.

Exit codes: 0 success; 1 a check failed (``--strict`` diagnostics, a non-better verdict with
``--fail-on``, a held ship gate); 2 bad input or usage (the message names the file, row and
rule). PyMC is imported only by commands that fit or read fits, so ``crosscheck``,
``convert`` and ``datasets`` start fast.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalbayes.data import EvalData
    from evalbayes.results import Posterior

OUTPUT_FORMATS = ("table", "csv", "json")
INPUT_FORMATS = (
    "auto",
    "inspect",
    "lm-eval",
    "helm",
    "terminal-bench",
    "swe-bench",
    "counts",
    "trials",
)
DEFAULT_FIT_DIR = Path("models") / "fits"
DATASET_PREFIX = "dataset:"


class CLIError(Exception):
    """A user-facing error: printed without a traceback, exit code 2."""


# --------------------------------------------------------------------------- helpers
def _formats(args: argparse.Namespace) -> tuple[str, str]:
    """Split ``--format`` into (output, input): the two vocabularies do not overlap."""
    output, input_format = "table", getattr(args, "input_format", None) or "auto"
    value = getattr(args, "format", None)
    if value in OUTPUT_FORMATS:
        output = value
    elif value in INPUT_FORMATS:
        input_format = value
    elif value is not None:
        raise CLIError(
            f"unknown --format {value!r}; output: {OUTPUT_FORMATS}, input: {INPUT_FORMATS}"
        )
    return output, input_format


def _parse_filters(items: Sequence[str] | None) -> dict[str, str]:
    filters: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise CLIError(f"--where expects COLUMN=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        filters[key] = value
    return filters


def load_data(
    source: str | Sequence[str], input_format: str = "auto", where: Any = None
) -> EvalData:
    """Read DATA: a bundled dataset (``dataset:NAME``), a counts/trials table or harness logs."""
    from evalbayes.data import EvalData  # noqa: F401 - cheap, keeps typing honest

    sources = [source] if isinstance(source, str) else list(source)
    filters = _parse_filters(where)
    if len(sources) == 1 and sources[0].startswith(DATASET_PREFIX):
        from evalbayes.datasets import load

        return load(sources[0][len(DATASET_PREFIX) :], **filters)
    from evalbayes import io

    data = io.read(sources if len(sources) > 1 else sources[0], format=input_format)
    if filters:
        data = data.subset(**filters)
    return data


def _emit(frame: pd.DataFrame, output: str, path: str | None, title: str | None = None) -> None:
    """Write a table as text, CSV or JSON to stdout or a file."""
    if output == "csv":
        text = frame.to_csv(index=False)
    elif output == "json":
        text = frame.to_json(orient="records", indent=2)
    else:
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_columns", 50,
                               "display.max_rows", 500):
            text = (f"{title}\n" if title else "") + frame.to_string(
                index=False, float_format=lambda v: f"{v:.4f}"
            )
        text += "\n"
    if path:
        Path(path).write_text(text)
        print(f"wrote {path}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def _ks(values: Sequence[float] | None, default: Sequence[int]) -> list[float]:
    ks = list(values) if values else list(default)
    return [int(k) if float(k).is_integer() else float(k) for k in ks]


def _load_fit(path: str) -> Posterior:
    from evalbayes.persist import load

    return load(path)


def _read_spec(path: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Model settings and sampler settings from a TOML spec (``[sampler]`` table optional)."""
    if path is None:
        return {}, {}
    import tomllib

    try:
        with open(path, "rb") as fh:
            spec = tomllib.load(fh)
    except FileNotFoundError as err:
        raise CLIError(f"{path}: no such spec file") from err
    except tomllib.TOMLDecodeError as err:
        raise CLIError(f"{path}: not valid TOML ({err})") from err
    sampler = spec.pop("sampler", {})
    spec.pop("description", None)
    return spec, sampler


# --------------------------------------------------------------------------- commands
def cmd_crosscheck(args: argparse.Namespace) -> int:
    from evalbayes.crosscheck import crosscheck

    output, input_format = _formats(args)
    data = load_data(args.data, input_format, args.where)
    report = crosscheck(
        data,
        k=tuple(_ks(args.k, ())) or None,
        compare=tuple(args.compare) if args.compare else None,
        n_resamples=args.resamples,
        seed=args.seed,
    )
    if output == "json":
        text = json.dumps(report.to_dict(), indent=2)
        _write_text(text + "\n", args.output)
    elif output == "csv":
        _emit(report.to_frame(), "csv", args.output)
    else:
        _write_text(report.format_table() + "\n", args.output)
    return 0


def _write_text(text: str, path: str | None) -> None:
    if path:
        Path(path).write_text(text)
        print(f"wrote {path}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def _fit(args: argparse.Namespace, data: EvalData) -> Posterior:
    from evalbayes.models import get_model, model_from_config

    settings, sampler = _read_spec(args.spec)
    if settings:
        if args.model and settings.get("model") not in (None, args.model):
            raise CLIError(f"--model {args.model} conflicts with the spec's {settings['model']!r}")
        model = model_from_config({"model": args.model, **settings})
    else:
        model = get_model(args.model or "beta-binomial")
    options = {
        "method": args.method or sampler.get("method", "nutpie"),
        "draws": args.draws or sampler.get("draws", 1000),
        "tune": args.tune if args.tune is not None else sampler.get("tune", 1000),
        "chains": args.chains or sampler.get("chains", 4),
        "seed": args.seed if args.seed is not None else sampler.get("seed", 0),
        "progressbar": not args.quiet,
    }
    if "target_accept" in sampler:
        options["target_accept"] = sampler["target_accept"]
    print(
        f"fitting {model.name} to {data!r} with {options['method']} "
        f"({options['chains']} chains x {options['draws']} draws)",
        file=sys.stderr,
    )
    return model.fit(data, **options)


def _default_fit_path(args: argparse.Namespace, model_name: str) -> Path:
    source = args.data[0] if isinstance(args.data, list) else args.data
    stem = source[len(DATASET_PREFIX) :] if source.startswith(DATASET_PREFIX) else Path(source).name
    stem = stem.split(".")[0] or "data"
    return DEFAULT_FIT_DIR / f"{stem}-{model_name}.nc"


def cmd_fit(args: argparse.Namespace) -> int:
    _, input_format = _formats(args)
    data = load_data(args.data, input_format, args.where)
    posterior = _fit(args, data)
    path = Path(args.output) if args.output else _default_fit_path(args, posterior.model.name)
    posterior.save(path)
    print(f"wrote {path}", file=sys.stderr)
    return _report_diagnostics(posterior, args.strict)


def _report_diagnostics(posterior: Posterior, strict: bool) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diag = posterior.diagnostics(warn=False)
    if posterior.approximate:
        print(f"{posterior.label}: no MCMC diagnostics (variational)", file=sys.stderr)
        return 1 if strict else 0
    if not posterior.model.needs_mcmc:
        print("exact conjugate posterior: no MCMC diagnostics needed", file=sys.stderr)
        return 0
    print(f"diagnostics: {diag}", file=sys.stderr)
    if not diag.passed:
        print("WARNING: the fit did not converge; its numbers may be wrong", file=sys.stderr)
        return 1 if strict else 0
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    posterior = _load_fit(args.fit)
    table = posterior.summary(
        k=_ks(args.k, (1,)), metrics=("pass@k", "pass^k"), ci_prob=args.ci_prob
    )
    output, _ = _formats(args)
    _emit(table, output, args.output, title=f"{posterior.label}\n{posterior.data!r}")
    if output == "table":
        print(f"diagnostics: {posterior.diagnostics(warn=False)}")
    return 0


def cmd_pass_at_k(args: argparse.Namespace) -> int:
    posterior = _load_fit(args.fit)
    ks = _ks(args.k, (1, 2, 4, 8, 16, 32))
    table = posterior.summary(
        k=ks, metrics=(args.metric,), estimands=(args.estimand,), ci_prob=args.ci_prob
    )
    output, _ = _formats(args)
    _emit(table, output, args.output, title=f"{args.metric} ({args.estimand}) - {posterior.label}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from evalbayes.comparison import compare

    posterior = _load_fit(args.fit)
    systems = list(args.systems) if args.systems else None
    if systems is not None and len(systems) != 2:
        raise CLIError("compare takes either no systems (all pairs) or exactly two: A B")
    comparison = compare(
        posterior,
        metric=args.metric,
        k=_ks(args.k, (1,)),
        estimand=args.estimand,
        rope=args.rope,
        ci_prob=args.ci_prob,
        systems=systems,
    )
    table = comparison.to_frame()
    if systems is not None:
        baseline, system = systems
        table = table[(table["system"] == system) & (table["baseline"] == baseline)]
    output, _ = _formats(args)
    if output == "table":
        _write_text(comparison.summary() + "\n", None)
    _emit(table, output, args.output)
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from evalbayes import plots

    posterior = _load_fit(args.fit)
    ks = _ks(args.k, (1, 2, 4, 8, 16, 32, 64))
    kind = args.kind
    if kind in ("pass-at-k", "pass-hat-k"):
        metric = "pass@k" if kind == "pass-at-k" else "pass^k"
        draws = posterior.curve(metric, ks, estimand=args.estimand)
        unbiased = _unbiased_points(posterior.data, ks, metric)
        plot = plots.plot_pass_at_k if metric == "pass@k" else plots.plot_pass_hat_k
        ax = plot(draws, unbiased=unbiased if args.estimand == "tasks" else None)
    elif kind in ("comparison", "matrix"):
        from evalbayes.comparison import compare

        comparison = compare(posterior, metric=args.metric, k=ks[:1], estimand=args.estimand)
        ax = (plots.plot_comparison if kind == "comparison" else plots.plot_superiority_matrix)(
            comparison
        )
    elif kind == "ppc":
        ax = plots.plot_ppc(posterior.ppc())
    elif kind in ("items", "wright"):
        from evalbayes.items import IRTPosterior

        if not isinstance(posterior, IRTPosterior):
            raise CLIError(f"--kind {kind} needs an IRT fit, this is {posterior.model.name}")
        if kind == "items":
            ax = plots.plot_item_difficulty(posterior.items())
        else:
            ax = plots.plot_wright_map(posterior.abilities(), posterior.items())
    else:  # pragma: no cover - argparse restricts choices
        raise CLIError(f"unknown plot kind {kind!r}")
    out = Path(args.output or f"{Path(args.fit).stem}-{kind}.png")
    ax.figure.savefig(out, dpi=150, bbox_inches="tight")
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _unbiased_points(data: EvalData, ks: Sequence[float], metric: str) -> Any:
    """Unbiased estimates (system, k) where k <= every observed n; NaN elsewhere."""
    import numpy as np

    from evalbayes.frequentist import pass_curve

    n_min = int(data.n.values[data.n.values > 0].min())
    valid = [k for k in ks if float(k).is_integer() and k <= n_min]
    if not valid:
        return None
    points = pass_curve(data, valid, metric=metric)
    return points.reindex(k=np.asarray(ks, dtype=float))


def cmd_items(args: argparse.Namespace) -> int:
    from evalbayes.items import IRTPosterior

    posterior = _load_fit(args.fit)
    if not isinstance(posterior, IRTPosterior):
        raise CLIError(f"items needs an IRT fit (--model irt-2pl), this is {posterior.model.name}")
    output, _ = _formats(args)
    if args.select:
        table = posterior.select_items(args.select)
        title = f"the {args.select} items that best separate the systems - {posterior.label}"
    else:
        table = posterior.items()
        title = f"items - {posterior.label}"
    _emit(table, output, args.output, title=title)
    return 0


def cmd_compare_models(args: argparse.Namespace) -> int:
    from evalbayes.model_comparison import compare_models

    if len(args.fits) < 2:
        raise CLIError("compare-models needs at least two fits of the same data")
    posteriors = {Path(path).stem: _load_fit(path) for path in args.fits}
    table = compare_models(posteriors)
    output, _ = _formats(args)
    _emit(table, output, args.output, title="PSIS-LOO model comparison (higher elpd is better)")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from evalbayes import io

    _, input_format = _formats(args)
    path = io.convert(args.logs, args.output, format=input_format, level=args.level)
    print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_datasets(args: argparse.Namespace) -> int:
    from evalbayes.datasets import list as list_datasets

    output, _ = _formats(args)
    _emit(list_datasets(), output, args.output)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from evalbayes.report import write_report

    source = args.source
    fit = None
    if len(source) == 1 and source[0].endswith(".nc"):
        fit = _load_fit(source[0])
        data = fit.data
    else:
        _, input_format = _formats(args)
        data = load_data(source, input_format, args.where)
    path = write_report(
        data,
        fit=fit,
        output=args.output,
        markdown=args.md,
        meta=args.meta,
        draws=args.draws,
        seed=args.seed or 0,
    )
    print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Fit the bundled TinyAgent counts; print tables; write the pass@k band plot."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np
    import pandas as pd

    from evalbayes import plots
    from evalbayes.comparison import compare
    from evalbayes.datasets import load
    from evalbayes.frequentist import pass_curve
    from evalbayes.models import BetaBinomialModel

    out_dir = Path(args.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data = load("tinyagent", experiment="sec17.7")
    print("TinyAgent held-out counts (seed 000, ch. 17.7): 3 systems x 10 tasks x 64 episodes")
    print(data.to_frame().pivot(index="task", columns="system", values="c")
          [data.systems].to_string())
    posterior = BetaBinomialModel().fit(
        data, draws=args.draws, tune=args.draws, chains=4, seed=args.seed,
        progressbar=not args.quiet,
    )
    print(f"\nfit: {posterior.label}; diagnostics: {posterior.diagnostics(warn=False)}")
    ks = [1, 2, 4, 8, 16, 32, 64, 128]
    unbiased = pass_curve(data, [k for k in ks if k <= 64], metric="pass@k")
    rows = []
    for estimand in ("tasks", "population"):
        summary = posterior.summary(k=ks, estimands=(estimand,))
        for _, row in summary.iterrows():
            rows.append(
                {
                    "system": row["system"],
                    "k": int(row["k"]),
                    "estimand": estimand,
                    "posterior mean": row["mean"],
                    "95% interval": f"[{row['lower']:.3f}, {row['upper']:.3f}]",
                    "unbiased": float(unbiased.sel(system=row["system"], k=row["k"]))
                    if row["k"] <= 64
                    else np.nan,
                }
            )
    table = pd.DataFrame(rows)
    table = table[table["k"].isin([1, 8, 32, 128])]
    print("\npass@k per system: posterior (both estimands) beside the unbiased estimator")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print("\n'tasks' = these ten tasks (trial noise only); 'population' = tasks like these "
          "(task sampling too, ch. 17.3). The unbiased estimator exists only for k <= n = 64.")
    comparison = compare(posterior, metric="pass@k", k=[1, 32], estimand="tasks")
    print("\n" + comparison.summary())
    contributions = comparison.task_contributions("GRPO 80", "RL base", k=32)
    print("\ntasks driving GRPO 80 - RL base at k = 32 (ch. 17.7: zero/speed):")
    columns = ["task", "contribution", "lower", "upper", "system_value", "baseline_value"]
    print(contributions[columns].head(3).to_string(index=False,
                                                   float_format=lambda v: f"{v:+.4f}"))
    draws = posterior.pass_at_k(ks)
    ax = plots.plot_pass_at_k(
        draws,
        unbiased=unbiased.reindex(k=np.asarray(ks, dtype=float)),
        reference=lambda k: 1 - 0.8**k,
        reference_label="uniform guess among five ops, 1 - 0.8^k",
    )
    path = out_dir / "tinyagent_pass_at_k.png"
    ax.figure.savefig(path, dpi=150, bbox_inches="tight")
    print(f"\nwrote {path}")
    fit_path = posterior.save(out_dir / "tinyagent-beta-binomial.nc")
    print(f"wrote {fit_path} (try: evalbayes summary {fit_path})")
    return 0


# --------------------------------------------------------------------------- parser
def _add_data_args(parser: argparse.ArgumentParser, nargs: str = "+") -> None:
    parser.add_argument(
        "data",
        nargs=nargs,
        help="counts/trials table, harness log(s), directory or glob, or dataset:NAME "
        "(bundled, see `evalbayes datasets`)",
    )
    parser.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default=None,
        help="how to read DATA (default: detect from the file)",
    )
    parser.add_argument(
        "--where",
        nargs="*",
        metavar="COLUMN=VALUE",
        help="keep only tasks/systems whose coordinate has this value, e.g. experiment=sec17.1",
    )


def _add_output_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        default=None,
        help=f"output {OUTPUT_FORMATS} (default table); for commands that read DATA, an input "
        f"format {INPUT_FORMATS} is also accepted here",
    )
    parser.add_argument("-o", "--output", default=None, help="write to this file")


def build_parser() -> argparse.ArgumentParser:
    from evalbayes._version import __version__

    parser = argparse.ArgumentParser(
        prog="evalbayes",
        description="Bayesian hierarchical models of AI evaluation counts, with frequentist "
        "cross-checks.",
    )
    parser.add_argument("--version", action="version", version=f"evalbayes {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("crosscheck", help="frequentist estimates (no PyMC): pass@k, intervals")
    _add_data_args(p)
    _add_output_args(p)
    p.add_argument("--k", type=float, nargs="+", help="k values (default: powers of two <= n)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="paired block for B - A")
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_crosscheck)

    p = sub.add_parser("fit", help="fit a model and save the posterior (NetCDF)")
    _add_data_args(p)
    p.add_argument("--format", default=None, help=f"input format {INPUT_FORMATS}")
    p.add_argument("--model", default=None,
                   help="beta-binomial (default), irt-1pl, irt-2pl, irt-3pl")
    p.add_argument("--spec", default=None, help="model spec TOML (see models/*.toml)")
    p.add_argument("-o", "--output", default=None,
                   help=f"fit file (default {DEFAULT_FIT_DIR}/<data>-<model>.nc)")
    p.add_argument("--method", default=None,
                   choices=("nutpie", "pymc", "numpyro", "advi", "pathfinder"))
    p.add_argument("--draws", type=int, default=None)
    p.add_argument("--tune", type=int, default=None)
    p.add_argument("--chains", type=int, default=None)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when R-hat, ESS or divergences fail the usual bars")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("summary", help="per-system posterior summary of a fit")
    p.add_argument("fit")
    _add_output_args(p)
    p.add_argument("--k", type=float, nargs="+")
    p.add_argument("--ci-prob", type=float, default=0.95)
    p.set_defaults(func=cmd_summary)

    p = sub.add_parser("pass-at-k", help="posterior pass@k / pass^k curves of a fit")
    p.add_argument("fit")
    _add_output_args(p)
    p.add_argument("--k", type=float, nargs="+")
    p.add_argument("--metric", choices=("pass@k", "pass^k"), default="pass@k")
    p.add_argument("--estimand", choices=("tasks", "population"), default="tasks")
    p.add_argument("--ci-prob", type=float, default=0.95)
    p.set_defaults(func=cmd_pass_at_k)

    p = sub.add_parser("compare", help="P(B > A), B - A, rope and expected loss")
    p.add_argument("fit")
    p.add_argument("systems", nargs="*", metavar="SYSTEM", help="A B (default: all pairs)")
    _add_output_args(p)
    p.add_argument("--k", type=float, nargs="+")
    p.add_argument("--metric", choices=("pass@k", "pass^k"), default="pass@k")
    p.add_argument("--estimand", choices=("tasks", "population"), default="tasks")
    p.add_argument("--rope", type=float, default=0.01)
    p.add_argument("--ci-prob", type=float, default=0.95)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("plot", help="plots of a fit")
    p.add_argument("fit")
    p.add_argument("--kind", default="pass-at-k",
                   choices=("pass-at-k", "pass-hat-k", "comparison", "matrix", "ppc", "items",
                            "wright"))
    p.add_argument("--k", type=float, nargs="+")
    p.add_argument("--metric", choices=("pass@k", "pass^k"), default="pass@k")
    p.add_argument("--estimand", choices=("tasks", "population"), default="tasks")
    p.add_argument("-o", "--output", default=None, help="PNG/SVG/PDF file")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("items", help="item difficulty table of an IRT fit")
    p.add_argument("fit")
    _add_output_args(p)
    p.add_argument("--select", type=int, default=None, metavar="M",
                   help="the M items that best separate the systems")
    p.set_defaults(func=cmd_items)

    p = sub.add_parser("compare-models", help="PSIS-LOO comparison of fits of the same data")
    p.add_argument("fits", nargs="+")
    _add_output_args(p)
    p.set_defaults(func=cmd_compare_models)

    p = sub.add_parser("convert", help="harness logs -> tidy counts (or trials) table")
    p.add_argument("logs", nargs="+")
    p.add_argument("-o", "--output", required=True, help="counts.csv / .parquet / .jsonl")
    p.add_argument("--format", default=None, help=f"input format {INPUT_FORMATS}")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default=None)
    p.add_argument("--level", choices=("counts", "trials"), default="counts")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("datasets", help="list the bundled datasets with provenance and licence")
    _add_output_args(p)
    p.set_defaults(func=cmd_datasets)

    p = sub.add_parser("report", help="self-contained HTML (or Markdown) report")
    p.add_argument("source", nargs="+", help="DATA or a fit (.nc)")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default=None)
    p.add_argument("--format", default=None, help=f"input format {INPUT_FORMATS}")
    p.add_argument("--where", nargs="*", metavar="COLUMN=VALUE")
    p.add_argument("-o", "--output", default="report.html")
    p.add_argument("--md", action="store_true", help="write Markdown instead of HTML")
    p.add_argument("--meta", default=None, help="TOML/JSON/text file: harness and protocol")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("demo", help="the main job on bundled TinyAgent counts")
    p.add_argument("--output-dir", default="evalbayes-demo")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalbayes`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (CLIError, ValueError, FileNotFoundError, KeyError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"evalbayes {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
