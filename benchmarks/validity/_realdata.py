"""Helpers shared by the real-data scripts: the data sets by name, nutpie's cost per gradient,
and the pairing variants of a fitted model (``COUPLING[:UNSEEN_TASKS[:REFERENCE]]``).

Used by ``validity/realdata_fits.py``, ``validity/paired_realdata.py``,
``validity/paired_simulation.py`` and ``speed/bench_rate_grid_gradient.py`` (which put this
folder on ``sys.path``). Not a benchmark itself.

The raw files live in ``shared/data`` beside the repository checkout (not vendored; TinyAgent
is bundled with the package): ``tau_bench_airline_gpt4o_trials.csv``,
``terminal_bench_core011_counts.csv``, ``noise_highk_temp0.7.csv.gz`` (HumanEval+) and
``swebench_verified_binary.csv``.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pandas as pd

from evalbayes import EvalData, datasets

# benchmarks/validity/_realdata.py -> parents[2] is the repository, parents[3] holds shared/
DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")

NAMES = ("tinyagent", "tau-bench", "terminal-bench", "humaneval+", "swe-bench")


def frame(path: str, benchmark: str | None = None) -> EvalData:
    """Counts of one file of ``DATA`` (trial-level files are counted per system and task)."""
    d = pd.read_csv(DATA / path)
    if benchmark is not None:
        d = d[d.benchmark == benchmark]
    if "n" not in d.columns:  # trial level
        d = d.groupby(["system", "task_id"], as_index=False).agg(n=("c", "size"), c=("c", "sum"))
    d = d.rename(columns={"task_id": "task"})[["system", "task", "n", "c"]]
    return EvalData.from_frame(d)


def load(name: str) -> EvalData:
    """One of :data:`NAMES`."""
    if name == "tinyagent":
        return datasets.load("tinyagent")
    if name == "tau-bench":
        return frame("tau_bench_airline_gpt4o_trials.csv")
    if name == "terminal-bench":
        return frame("terminal_bench_core011_counts.csv")
    if name == "humaneval+":
        return frame("noise_highk_temp0.7.csv.gz", "human_eval_plus")
    if name == "swe-bench":
        return frame("swebench_verified_binary.csv")
    raise ValueError(f"unknown data {name!r}; one of {NAMES}")


def nutpie_cost(pm_model, iterations: int) -> tuple[float, float, int]:
    """nutpie (numba) compile seconds, seconds per gradient and gradients of one chain of
    ``iterations`` warm-up + ``iterations`` draws, seed 0."""
    import nutpie

    t0 = time.perf_counter()
    compiled = nutpie.compile_pymc_model(pm_model)
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    trace = nutpie.sample(compiled, draws=iterations, tune=iterations, chains=1, seed=0,
                          progress_bar=False)
    seconds = time.perf_counter() - t0
    steps = int(trace["sample_stats"]["n_steps"].sum())
    return compile_s, seconds / max(steps, 1), steps


REFERENCES = ("draws", "posterior-mean")


def with_reference(model, reference: str):
    """``model`` with its :attr:`~evalbayes.models.Model.pairing_reference` replaced by
    ``reference`` (``"draws"`` or ``"posterior-mean"``): a subclass with the same settings,
    since the reference is a property of the model class, not a setting."""
    if reference not in REFERENCES:
        raise ValueError(f"unknown pairing reference {reference!r}; one of {REFERENCES}")
    cls = type(type(model).__name__, (type(model),),
               {"pairing_reference": property(lambda self: reference)})
    return cls(**{f.name: getattr(model, f.name) for f in dataclasses.fields(model)})


def pairing_variant(model, text: str):
    """``model`` paired as ``text`` says: ``"COUPLING[:UNSEEN_TASKS[:REFERENCE]]"``, e.g.
    ``"dirichlet:4"`` (``coupling="dirichlet"``, ``unseen_tasks=4``, the model's own
    reference), ``"copula"`` (the model's own ``unseen_tasks``) or
    ``"dirichlet:4:posterior-mean"`` (ranks on each task's posterior mean,
    :func:`with_reference`). The posterior is the same; only the derived pairing changes."""
    coupling, _, rest = text.partition(":")
    alpha, _, reference = rest.partition(":")
    if reference:
        model = with_reference(model, reference)
    return dataclasses.replace(model, coupling=coupling, unseen_tasks=float(
        alpha if alpha else model.unseen_tasks))
