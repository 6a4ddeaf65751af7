"""Write the synthetic design examples of this folder (deterministic; run from the repo root):

    python tests/data/designs/make_examples.py

factorial_counts.csv   3 models x 2 harnesses (systems "<harness>__<model>"), 24 tasks x 4 trials
factors.csv            system, model, harness of those systems
seeds_counts.csv       recipes A and B, 3 training runs each ("<recipe>-seed<i>"), 10 tasks x 4
recipes.csv            system, recipe of those runs
judge_counts.csv       2 systems, 30 tasks x 2 trials graded by a judge (sens 0.85, spec 0.90)
judge_gold.csv         system, task, judge, human: the first trial of 12 tasks per system
                       labelled by hand
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

HERE = Path(__file__).resolve().parent


def main() -> None:
    rng = np.random.default_rng(20250101)
    models, harnesses = ("alpha", "beta", "gamma"), ("agentx", "plain")
    eff_m = dict(zip(models, rng.normal(0, 0.6, 3), strict=True))
    eff_h = dict(zip(harnesses, (0.4, -0.4), strict=True))
    task = rng.normal(0, 1.2, 24)
    rows = []
    for m in models:
        for h in harnesses:
            inter = rng.normal(0, 0.4)
            for t in range(24):
                p = expit(eff_m[m] + eff_h[h] + inter + task[t])
                rows.append({"system": f"{h}__{m}", "task": f"task{t:02d}", "n": 4,
                             "c": int(rng.binomial(4, p))})
    pd.DataFrame(rows).to_csv(HERE / "factorial_counts.csv", index=False)
    pd.DataFrame([{"system": f"{h}__{m}", "model": m, "harness": h}
                  for m in models for h in harnesses]).to_csv(HERE / "factors.csv", index=False)

    task = rng.normal(0, 1.0, 10)
    rows, runs = [], []
    for recipe, level in (("A", -0.2), ("B", 0.5)):
        for i in range(3):
            run = level + rng.normal(0, 0.25)
            runs.append({"system": f"{recipe}-seed{i}", "recipe": recipe})
            for t in range(10):
                p = expit(run + task[t] + rng.normal(0, 0.3))
                rows.append({"system": f"{recipe}-seed{i}", "task": f"task{t:02d}", "n": 4,
                             "c": int(rng.binomial(4, p))})
    pd.DataFrame(rows).to_csv(HERE / "seeds_counts.csv", index=False)
    pd.DataFrame(runs).to_csv(HERE / "recipes.csv", index=False)

    rows, gold = [], []
    for system, level in (("judged_a", -0.3), ("judged_b", 0.6)):
        for t in range(30):
            p = expit(level + rng.normal(0, 1.2))
            human = rng.random(2) < p
            judge = np.where(human, rng.random(2) < 0.85, rng.random(2) > 0.90)
            rows.append({"system": system, "task": f"task{t:02d}", "n": 2, "c": int(judge.sum())})
            if t < 12:
                gold.append({"system": system, "task": f"task{t:02d}", "judge": int(judge[0]),
                             "human": int(human[0])})
    pd.DataFrame(rows).to_csv(HERE / "judge_counts.csv", index=False)
    pd.DataFrame(gold).to_csv(HERE / "judge_gold.csv", index=False)


if __name__ == "__main__":
    main()
