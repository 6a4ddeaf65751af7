"""Benchmark the 2PL IRT fit: nutpie vs PyMC NUTS vs ADVI, and the identification choice.

Every run is a fresh subprocess with a wall-clock limit (so a compile is always counted and a
hung size cannot block the others). Data are simulated from the 2PL with
``theta ~ N(0, 1)``, ``b ~ N(0, 1.5)``, ``log a ~ N(0, 0.3)``, ``n`` trials per cell.

Per run it prints wall time (including compilation), sampling-only time where the sampler
reports it, min bulk ESS, min bulk ESS per second of wall time, max R-hat, divergences and the
recovery error of ``b`` (RMSE and correlation of posterior means with the truth), then ratios
against nutpie at the same size.

Usage::

    python benchmarks/irt/bench_irt.py methods --sizes 10x100,50x500 --n 1,8 \
        --methods nutpie,pymc,advi --timeout 600
    python benchmarks/irt/bench_irt.py identification --sizes 20x200,50x500 --timeout 900
    python benchmarks/irt/bench_irt.py realdata --timeout 1200

``--out FILE`` appends one JSON line per run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"  # beside the repository
REAL = {
    "chembench": DATA / "chembench_binary_irt_on_bench.csv",
    "terminal_bench": DATA / "terminal_bench_core011_counts.csv",
}


def simulate(n_sys: int, n_task: int, n: int, seed: int) -> tuple:
    from evalbayes.testing import simulate_irt

    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n_sys)
    b = rng.normal(0.0, 1.5, n_task)
    a = np.exp(rng.normal(0.0, 0.3, n_task))
    return simulate_irt(theta, b, a, trials=n, seed=seed + 1), theta, b, a


def _summary(post, wall: float, truth_b: np.ndarray | None) -> dict:
    diag = post.diagnostics(warn=False)
    row = {
        "wall_s": round(wall, 1),
        "rhat_max": round(diag.rhat_max, 4),
        "ess_bulk_min": round(diag.ess_bulk_min, 1),
        "ess_tail_min": round(diag.ess_tail_min, 1),
        "ess_per_s": round(diag.ess_bulk_min / wall, 2),
        "divergences": diag.divergences,
        "worst": diag.table.loc[diag.table["ess_bulk"].idxmin(), "parameter"],
    }
    stats = post.sample_stats
    if stats is not None and "step_size" in stats:
        row["step_size"] = round(float(stats["step_size"].mean()), 4)
    if truth_b is not None:
        b_mean = post.posterior["b"].mean(("chain", "draw")).values
        row["b_rmse"] = round(float(np.sqrt(np.mean((b_mean - truth_b) ** 2))), 4)
        row["b_corr"] = round(float(np.corrcoef(b_mean, truth_b)[0, 1]), 4)
    return row


def run_one(spec: dict) -> dict:
    """Run one benchmark case in this process (called in a subprocess)."""
    warnings.simplefilter("ignore")
    from evalbayes.models.irt import IRTModel

    if spec["case"] == "realdata":
        from evalbayes.io import read_counts

        path = REAL[spec["dataset"]]
        data = read_counts(path)
        truth_b = None
    else:
        data, _, truth_b, _ = simulate(spec["systems"], spec["tasks"], spec["n"], spec["seed"])
    if spec.get("variant") == "free_mu_b":
        return _free_mu_b(data, truth_b, spec)
    model = IRTModel(kind=spec.get("kind", "2pl"), parameterization=spec.get("param", "auto"))
    t0 = time.perf_counter()
    post = model.fit(
        data,
        method=spec["method"],
        draws=spec["draws"],
        tune=spec["tune"],
        chains=spec["chains"],
        seed=spec["seed"],
        check=False,
    )
    wall = time.perf_counter() - t0
    if spec["method"] in ("advi", "pathfinder"):
        b_mean = post.posterior["b"].mean(("chain", "draw")).values
        row = {"wall_s": round(wall, 1), "approximate": True}
        if truth_b is not None:
            row["b_rmse"] = round(float(np.sqrt(np.mean((b_mean - truth_b) ** 2))), 4)
            row["b_corr"] = round(float(np.corrcoef(b_mean, truth_b)[0, 1]), 4)
        return row
    row = _summary(post, wall, truth_b)
    if spec["case"] == "realdata":
        for label, call in (
            ("items_s", post.items),
            ("abilities_s", post.abilities),
            ("population_pass1_s", lambda: post.pass_at_k(1, estimand="population")),
        ):
            t1 = time.perf_counter()
            result = call()
            row[label] = round(time.perf_counter() - t1, 1)
            if label == "items_s":
                flags = ["never_solved", "always_solved", "low_discrimination",
                         "negative_discrimination"]
                row["flags"] = {f: int(result[f].fillna(False).sum()) for f in flags}
    return row


def _free_mu_b(data, truth_b, spec: dict) -> dict:
    """The textbook 2PL: theta ~ N(0, 1) and a free mean of b and of log a (non-centred)."""
    import nutpie
    import pymc as pm
    import pytensor.tensor as pt

    from evalbayes.inference import SamplerConfig
    from evalbayes.models.irt import IRTModel

    n, c = data.n.values, data.c.values
    s_idx, t_idx = np.nonzero(n > 0)
    t0 = time.perf_counter()
    with pm.Model(coords={"system": data.systems, "task": data.tasks}) as model:
        theta = pm.Normal("theta", 0.0, 1.0, dims="system")
        mu_b = pm.Normal("mu_b", 0.0, 2.0)
        sigma_b = pm.HalfNormal("sigma_b", 2.0)
        b = pm.Deterministic("b", mu_b + sigma_b * pm.Normal("b_z", dims="task"), dims="task")
        mu_a = pm.Normal("mu_a", 0.0, 0.5)
        sigma_a = pm.HalfNormal("sigma_a", 0.5)
        a = pm.Deterministic(
            "a", pt.exp(mu_a + sigma_a * pm.Normal("a_z", dims="task")), dims="task"
        )
        eta = a[t_idx] * (theta[s_idx] - b[t_idx])
        pm.Binomial("c", n=n[s_idx, t_idx], logit_p=eta, observed=c[s_idx, t_idx])
    compiled = nutpie.compile_pymc_model(model)
    tree = nutpie.sample(
        compiled, draws=spec["draws"], tune=spec["tune"], chains=spec["chains"],
        seed=spec["seed"], progress_bar=False, target_accept=0.9,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    posterior = tree["posterior"].to_dataset()[["theta", "b", "a", "mu_b", "sigma_b", "mu_a",
                                                "sigma_a"]]
    groups = {"posterior": posterior, "sample_stats": tree["sample_stats"].to_dataset()}
    sampler = SamplerConfig(draws=spec["draws"], tune=spec["tune"], chains=spec["chains"])
    post = IRTModel().posterior_class.from_groups(IRTModel(), data, sampler, groups)
    return _summary(post, wall, truth_b)


def launch(spec: dict, timeout: float) -> dict:
    """Run ``spec`` in a subprocess; a run past ``timeout`` is reported as timed out."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "_one", json.dumps(spec)],
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {**spec, "status": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {**spec, "status": "failed", "error": proc.stderr.strip().splitlines()[-1:]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**spec, **result, "status": "ok", "process_s": round(time.perf_counter() - t0, 1)}


def _sizes(text: str) -> list[tuple[int, int]]:
    return [tuple(int(v) for v in item.split("x")) for item in text.split(",")]  # type: ignore[misc]


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_one":
        print(json.dumps(run_one(json.loads(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", choices=["methods", "identification", "param", "realdata"])
    parser.add_argument("--sizes", default="10x100,50x500")
    parser.add_argument("--n", default="1,8")
    parser.add_argument("--methods", default="nutpie,pymc,advi")
    parser.add_argument("--datasets", default="terminal_bench,chembench")
    parser.add_argument("--kinds", default="1pl,2pl", help="IRT kinds for realdata")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    base = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "seed": args.seed}
    specs = []
    if args.study == "realdata":
        for name in args.datasets.split(","):
            for kind in args.kinds.split(","):
                specs.append({**base, "case": "realdata", "dataset": name, "kind": kind,
                              "method": "nutpie"})
    else:
        for n_sys, n_task in _sizes(args.sizes):
            for n in (int(v) for v in args.n.split(",")):
                common = {**base, "case": args.study, "systems": n_sys, "tasks": n_task, "n": n}
                if args.study == "methods":
                    specs += [{**common, "method": m} for m in args.methods.split(",")]
                elif args.study == "identification":
                    specs += [{**common, "method": "nutpie", "variant": v}
                              for v in ("free_mu_b", "irt_default")]
                else:
                    specs += [{**common, "method": "nutpie", "param": p}
                              for p in ("centered", "noncentered")]
    rows = []
    for spec in specs:
        row = launch(spec, args.timeout)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    baseline = {
        (r.get("systems"), r.get("tasks"), r.get("n")): r
        for r in rows
        if r.get("method") == "nutpie" and r["status"] == "ok" and "ess_per_s" in r
    }
    print("\nratios against nutpie at the same size (wall time, ESS/s):")
    for r in rows:
        ref = baseline.get((r.get("systems"), r.get("tasks"), r.get("n")))
        if ref is None or r is ref or r["status"] != "ok":
            continue
        ess = (r["ess_per_s"] / ref["ess_per_s"]) if "ess_per_s" in r else float("nan")
        tag = r.get("variant") or r.get("param") or ""
        print(f"  {r.get('systems')}x{r.get('tasks')} n={r.get('n')} {r['method']} {tag}: "
              f"wall x{r['wall_s'] / ref['wall_s']:.2f}, ESS/s x{ess:.2f}")


if __name__ == "__main__":
    main()
