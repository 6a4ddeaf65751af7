"""Rank histograms of the graded SBC runs (``sbc.py``): one panel per quantity, 10 bins, with
the 99 % band of a uniform histogram (binomial(reps, 0.1) quantiles), to ``results/sbc_ranks.png``.

    PYTHONPATH=src python benchmarks/graded/plot_sbc.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

RESULTS = Path(__file__).resolve().parent / "results"
RUNS = (("ordinal 2x400", "sbc_ordinal.csv"), ("ordinal 2x1000", "sbc_ordinal_long.csv"),
        ("partial-credit 2x400", "sbc_partial_credit.csv"))


def main() -> int:
    runs = [(name, pd.read_csv(RESULTS / file)) for name, file in RUNS
            if (RESULTS / file).exists()]
    ncols = max(frame["quantity"].nunique() for _, frame in runs)
    fig, axes = plt.subplots(len(runs), ncols, figsize=(2.1 * ncols, 2.2 * len(runs)),
                             squeeze=False, layout="constrained")
    for row, (name, frame) in enumerate(runs):
        for col, (quantity, group) in enumerate(frame.groupby("quantity", sort=False)):
            ax = axes[row, col]
            bins = np.histogram(group["rank"], bins=10, range=(0, group["n_ranks"].iloc[0]))[0]
            low, high = stats.binom.ppf([0.005, 0.995], len(group), 0.1)
            ax.axhspan(low, high, color="0.85")
            ax.bar(np.arange(10), bins, width=0.9, color="C0")
            p = stats.chisquare(bins).pvalue
            ax.set_title(f"{name}\n{quantity}\nchi2 p {p:.2f}", fontsize=7)
            ax.set_xticks([])
            ax.tick_params(labelsize=6)
        for col in range(frame["quantity"].nunique(), ncols):
            axes[row, col].set_visible(False)
    fig.savefig(RESULTS / "sbc_ranks.png", dpi=90)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
