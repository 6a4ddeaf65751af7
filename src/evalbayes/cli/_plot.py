"""``evalbayes plot FIT``: pass@k bands, comparisons, posterior predictive checks, items, the
fitted rate distributions."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalbayes._core.files import atomic_path
from evalbayes._core.names import ESTIMANDS, METRICS, check_metric
from evalbayes.cli._common import (
    CLIError,
    ks,
    warn,
)
from evalbayes.cli._output import check_fit, check_output_path, load_fit
from evalbayes.cli._types import (
    k_value,
)

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.data import EvalData
    from evalbayes.results._posterior import Posterior

KINDS = ("pass-at-k", "pass-hat-k", "comparison", "matrix", "ppc", "items", "wright", "rates")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fit", help="a fit saved by `evalbayes fit` (NetCDF)")
    parser.add_argument("--kind", default="pass-at-k", choices=KINDS)
    parser.add_argument("--k", type=k_value, nargs="+", help="k values (default 1 2 4 ... 64)")
    parser.add_argument("--metric", choices=METRICS, default=METRICS[0])
    parser.add_argument("--estimand", choices=ESTIMANDS, default=ESTIMANDS[0])
    parser.add_argument("--system", action="append", default=None, metavar="NAME",
                        help="repeatable; --kind pass-at-k / pass-hat-k: these systems in "
                        "colour with bands, the others as grey medians (default: all up to 8 "
                        "systems, else the 5 best at k = 1); --kind ppc / rates: only these "
                        "systems (default: all)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when the fit failed its convergence diagnostics")
    parser.add_argument("--all-pairs", action="store_true",
                        help="--kind comparison: draw every pair (default: the 30 with the "
                        "largest |B - A|; the title says how many are left out)")
    parser.add_argument("-o", "--output", default=None, help="PNG/SVG/PDF file")


def run(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    out = Path(args.output or f"{Path(args.fit).stem}-{args.kind}.png")
    check_output_path(out, args)
    posterior = load_fit(args.fit)
    code = check_fit(posterior, args.strict)
    figure = _draw(posterior, args, ks(args.k, (1, 2, 4, 8, 16, 32, 64)))
    with atomic_path(out) as temp:  # the format follows the name, which temp keeps
        figure.savefig(temp, dpi=150, bbox_inches="tight")
    warn(f"wrote {out}")
    _print_key(posterior.data.systems)
    return code


def _print_key(systems: Sequence[str]) -> None:
    """The full name of every system whose label the figure shortens, on stdout."""
    import sys

    from evalbayes._core.names import LABEL_WIDTH, label_key

    key = label_key(systems)
    if key:
        print(f"names longer than {LABEL_WIDTH} characters are shortened in the figure "
              "(label = full name):")
        for label, full in key:
            sys.stdout.write(f"  {label} = {full}\n")


def _systems(posterior: Posterior, chosen: list[str] | None) -> list[str] | None:
    """``--system`` names, checked against the fit."""
    if chosen is None:
        return None
    known = list(posterior.data.systems)
    unknown = [s for s in chosen if s not in known]
    if unknown:
        raise CLIError(f"--system {unknown[0]!r} is not in the fit; systems: {', '.join(known)}")
    return list(dict.fromkeys(chosen))


def _draw(posterior: Posterior, args: argparse.Namespace, k: list[float]) -> Any:
    from evalbayes import plots

    kind = args.kind
    if args.all_pairs and kind != "comparison":
        raise CLIError(f"--all-pairs applies to --kind comparison, not {kind}")
    chosen = _systems(posterior, args.system)
    if chosen is not None and kind not in ("pass-at-k", "pass-hat-k", "ppc", "rates"):
        raise CLIError(f"--system applies to --kind pass-at-k, pass-hat-k, ppc and rates, not "
                       f"{kind}")
    if kind in ("pass-at-k", "pass-hat-k"):
        metric = "pass@k" if kind == "pass-at-k" else "pass^k"
        draws = posterior.curve(metric, k, estimand=args.estimand)
        unbiased = _unbiased_points(posterior.data, k, metric) if args.estimand == "tasks" else None
        plot = plots.plot_pass_at_k if metric == "pass@k" else plots.plot_pass_hat_k
        return plot(draws, unbiased=unbiased, highlight=chosen).figure
    if kind in ("comparison", "matrix"):
        from evalbayes.results._comparison import compare

        comparison = compare(posterior, metric=args.metric, k=k[:1], estimand=args.estimand)
        if kind == "comparison":
            from evalbayes.plots._comparison import PAIRS_MAX

            return plots.plot_comparison(
                comparison, max_pairs=None if args.all_pairs else PAIRS_MAX).figure
        return plots.plot_superiority_matrix(comparison).figure
    if kind == "ppc":
        return _ppc(posterior, chosen)
    if kind == "rates":
        return _rates(posterior, chosen)
    from evalbayes.models.irt._items import IRTPosterior

    if not isinstance(posterior, IRTPosterior):
        raise CLIError(f"--kind {kind} needs an IRT fit, this is {posterior.model.name}")
    if kind == "items":
        return plots.plot_item_difficulty(posterior.items()).figure
    return plots.plot_wright_map(posterior.abilities(), posterior.items()).figure


def _rates(posterior: Posterior, systems: list[str] | None) -> Any:
    """Each system's fitted rate distribution (models with ``rate_distribution``: rate-grid),
    or only those of ``systems``."""
    from evalbayes import plots

    if not hasattr(posterior.model, "rate_distribution"):
        raise CLIError(f"--kind rates needs a rate-grid fit (--model rate-grid), this is "
                       f"{posterior.model.name}")
    g = posterior.model.rate_distribution(posterior.posterior)
    if systems is not None:
        g = g.sel(system=systems)
    trials = int(posterior.data.n.values.max())
    return plots.plot_rate_distribution(g, trials=trials).figure


def _ppc(posterior: Posterior, chosen: list[str] | None) -> Any:
    """One panel per system (or per system of ``chosen``), stacked."""
    import matplotlib.pyplot as plt

    from evalbayes import plots

    systems = list(posterior.data.systems) if chosen is None else chosen
    check = posterior.ppc()
    figure, axes = plt.subplots(len(systems), 1, figsize=(7.0, 3.8 * len(systems)),
                                layout="constrained", squeeze=False)
    for name, ax in zip(systems, axes[:, 0], strict=True):
        plots.plot_ppc(check, system=name, ax=ax)
    return figure


def _unbiased_points(data: EvalData, k: Sequence[float], metric: str) -> Any:
    """Unbiased estimates (system, k) where k <= every observed n; None when there are none."""
    import numpy as np

    from evalbayes.frequentist import pass_curve

    n_min = int(data.n.values[data.n.values > 0].min())
    valid = [v for v in k if float(v).is_integer() and v <= n_min]
    if not valid:
        return None
    curve = pass_curve(data, valid, metric=check_metric(metric))
    return curve.reindex(k=np.asarray(k, dtype=float))
