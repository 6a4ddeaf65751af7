"""Regenerate the reference fits in this folder.

    python models/reference/make_reference.py [MODEL ...]

Fits each default model (``beta-binomial``, the default for one system; ``rate-grid``, the
default for two or more) with its registry defaults to the bundled TinyAgent counts (sec17.7
and sec17.1) with fixed sampler settings and seed, and writes ``tinyagent_<model>.md``
(settings, package versions, convergence checks, pass@1 / pass@32 / pass^8 by estimand) and
``tinyagent_<model>.csv`` (every k of ``KS``, both metrics and estimands). Given MODEL names,
only those are regenerated. ``tests/contract/test_reference_fits.py`` checks that each file's model
configuration is still the registry default, so a changed default asks for a new reference.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import platform
import sys
from pathlib import Path

import pandas as pd

import evalbayes as eb
from evalbayes.models import get_model

HERE = Path(__file__).resolve().parent
MODELS = ("beta-binomial", "rate-grid")
EXPERIMENTS = ("sec17.7", "sec17.1")
SETTINGS = {"draws": 2000, "tune": 1000, "chains": 4, "seed": 2026}
KS = [1, 2, 4, 8, 16, 32, 64, 128]
CONFIG_PREFIX = "- model configuration: "


def stem(name: str) -> str:
    """File stem of a model's reference fit."""
    return f"tinyagent_{name.replace('-', '_')}"


def make(name: str) -> str:
    """Fit, write ``<stem>.csv`` and ``<stem>.md``; return the Markdown."""
    model = get_model(name)
    frames, checks, labels = [], [], []
    for experiment in EXPERIMENTS:
        data = eb.datasets.load("tinyagent", experiment=experiment)
        post = model.fit(data, **SETTINGS)
        diag = post.diagnostics(warn=True)
        summary = post.summary(k=KS, metrics=("pass@k", "pass^k"))
        summary.insert(0, "experiment", experiment)
        frames.append(summary)
        checks.append((experiment, diag))
        labels.append(post.label)
    table = pd.concat(frames, ignore_index=True)
    columns = ["experiment", "system", "metric", "k", "estimand", "mean", "sd", "lower",
               "upper", "ci_prob"]
    extra = [c for c in table.columns if c not in columns]
    table = table[columns + extra]
    table.to_csv(HERE / f"{stem(name)}.csv", index=False, float_format="%.6f")
    versions = {lib: md.version(lib) for lib in
                ("evalbayes", "pymc", "pytensor", "nutpie", "arviz", "numpy", "scipy", "xarray")}
    lines = [
        f"# Reference: the {name} model's fit of the bundled TinyAgent counts",
        "",
        "Made by `python models/reference/make_reference.py` (do not edit by hand).",
        "",
        f"{CONFIG_PREFIX}`{json.dumps(model.to_config(), sort_keys=True)}`",
        f"- inference: {labels[0]}; {SETTINGS['tune']} tuning iterations per chain where "
        f"it samples, seed {SETTINGS['seed']}; intervals 95 % equal-tailed",
        f"- versions: Python {platform.python_version()}, "
        + ", ".join(f"{k} {v}" for k, v in versions.items()),
        "- data: `evalbayes.datasets.load('tinyagent', experiment=...)` (TinyAgent worked example)",
        "",
        "## Convergence checks",
        "",
        "| experiment | R-hat max | ESS bulk min | ESS tail min | divergences | passed |",
        "|---|---|---|---|---|---|",
    ]
    for experiment, diag in checks:
        lines.append(
            f"| {experiment} | {diag.rhat_max:.4f} | {diag.ess_bulk_min:.0f} | "
            f"{diag.ess_tail_min:.0f} | {diag.divergences} | {diag.passed} |"
        )
    lines += ["", "## pass@1, pass@32 and pass^8 by estimand", ""]
    pick = table[
        ((table["metric"] == "pass@k") & table["k"].isin([1, 32]))
        | ((table["metric"] == "pass^k") & (table["k"] == 8))
    ]
    lines.append("| experiment | system | metric | k | estimand | mean | sd | 95 % interval |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for _, row in pick.iterrows():
        lines.append(
            f"| {row['experiment']} | {row['system']} | {row['metric']} | {row['k']} | "
            f"{row['estimand']} | {row['mean']:.4f} | {row['sd']:.4f} | "
            f"[{row['lower']:.4f}, {row['upper']:.4f}] |"
        )
    lines += ["", "The full table (k = " + ", ".join(map(str, KS)) + ", both metrics) is in "
              f"`{stem(name)}.csv`.", ""]
    text = "\n".join(lines)
    (HERE / f"{stem(name)}.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help=f"any of {', '.join(MODELS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.models) - set(MODELS))
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {', '.join(MODELS)}")
    for name in args.models or MODELS:
        print(make(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
