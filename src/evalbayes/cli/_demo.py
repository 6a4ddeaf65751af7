"""``evalbayes demo``: the main job on the bundled TinyAgent counts, end to end."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalbayes._core.files import atomic_path
from evalbayes._core.names import ESTIMANDS
from evalbayes.cli._common import (
    CLIError,
    add_seed_arg,
)
from evalbayes.cli._types import (
    positive_int,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output-dir", default="evalbayes-demo", help="where to write files")
    parser.add_argument("--draws", type=positive_int, default=1000, help="draws per chain")
    add_seed_arg(parser, 1)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Fit the bundled TinyAgent counts; print tables; write the pass@k band plot."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np
    import pandas as pd

    from evalbayes import plots
    from evalbayes.datasets import load
    from evalbayes.frequentist import pass_curve
    from evalbayes.models import default_model
    from evalbayes.results._comparison import compare

    out_dir = Path(args.output_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise CLIError(f"--output-dir {out_dir}: is a file, not a folder; give a folder name")
    out_dir.mkdir(parents=True, exist_ok=True)
    data = load("tinyagent", experiment="sec17.7")
    print("TinyAgent worked example (bundled dataset `tinyagent`, experiment sec17.7): "
          "3 systems x 10 tasks x 64 episodes")
    print(data.to_frame().pivot(index="task", columns="system", values="c")
          [data.systems].to_string())
    model = default_model(data)  # rate-grid: more than one system
    posterior = model.fit(
        data, draws=args.draws, tune=args.draws, chains=4, seed=args.seed,
        progressbar=not args.quiet,
    )
    print(f"\nfit: {posterior.label}; diagnostics: {posterior.diagnostics(warn=False)}")
    ks = [1, 2, 4, 8, 16, 32, 64, 128]
    unbiased = pass_curve(data, [k for k in ks if k <= 64], metric="pass@k")
    rows = []
    for estimand in ESTIMANDS:
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
          "(task sampling too; Miller 2024). The unbiased estimator exists only for k <= n = 64.")
    comparison = compare(posterior, metric="pass@k", k=[1, 32], estimand="tasks")
    print("\n" + comparison.summary())
    contributions = comparison.task_contributions("GRPO 80", "RL base", k=32)
    print("\ntasks driving GRPO 80 - RL base at k = 32 (the worked example: zero/speed):")
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
    figure = ax.get_figure(root=True)
    assert figure is not None  # an Axes drawn by plot_pass_at_k has a figure
    with atomic_path(path) as temp:
        figure.savefig(temp, dpi=150, bbox_inches="tight")
    print(f"\nwrote {path}")
    fit_path = posterior.save(out_dir / f"tinyagent-{model.name}.nc")
    print(f"wrote {fit_path} (try: evalbayes summary {fit_path})")
    return 0
