"""Hand-made graded-score fits for the save / load / summary / compare / report tests: draws
built in NumPy (no sampling, so the tests take seconds), and independent references of what
the outputs must show, computed from the draws as read back from the file with xarray."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit

from evalbayes.inference import SamplerConfig
from evalbayes.io import ScoreData
from evalbayes.models.graded import OrdinalModel, ScorePosterior

SYSTEMS, TASKS, GRADERS, TOP = ("A", "B", "C"), 6, ("j1", "j2"), 4
CHAINS, DRAWS = 2, 500


def score_data() -> ScoreData:
    rng = np.random.default_rng(5)
    rows = [(s, f"t{t}", int(rng.integers(0, TOP + 1)), j)
            for s in SYSTEMS for t in range(TASKS) for j in GRADERS]
    frame = pd.DataFrame(rows, columns=["system", "task", "rating", "judge"])
    return ScoreData.from_frame(frame, score="rating", grader="judge", max_score=TOP,
                                source="ratings.csv")


def handmade_fit(converged: bool = True, seed: int = 0) -> ScorePosterior:
    """An ordinal fit with iid draws (passes R-hat / ESS) or with chains that disagree
    (``converged=False``: the second chain's system effects are shifted, R-hat fails)."""
    rng = np.random.default_rng(seed)
    data = score_data()
    shape = (CHAINS, DRAWS)
    n_s, n_g = len(SYSTEMS), len(GRADERS)
    b = rng.normal([-0.6, 0.0, 0.6], 0.3, (*shape, n_s))
    b -= b.mean(axis=-1, keepdims=True)
    if not converged:
        b[1] += np.array([1.5, 0.0, -1.5])
    g = rng.normal(0.0, 0.2, (*shape, n_g))
    g -= g.mean(axis=-1, keepdims=True)
    task_sd = np.abs(rng.normal(0.8, 0.1, shape))
    gs_sd = np.abs(rng.normal(0.2, 0.05, shape))
    posterior = xr.Dataset({
        "cutpoints": (("chain", "draw", "cutpoint"),
                      np.sort(rng.normal([-2.0, -0.7, 0.7, 2.0], 0.2, (*shape, TOP)), axis=-1)),
        "system_effect": (("chain", "draw", "system"), b),
        "task_sd": (("chain", "draw"), task_sd),
        "task_effect": (("chain", "draw", "task"),
                        task_sd[..., None] * rng.normal(size=(*shape, TASKS))),
        "grader_effect": (("chain", "draw", "grader"), g),
        "grader_system_sd": (("chain", "draw"), gs_sd),
        "grader_system_effect": (("chain", "draw", "grader", "system"),
                                 gs_sd[..., None, None] * rng.normal(size=(*shape, n_g, n_s))),
    }, coords={"chain": np.arange(CHAINS), "draw": np.arange(DRAWS),
               "cutpoint": np.arange(1, TOP + 1)})
    posterior = posterior.assign_coords(system=np.array(SYSTEMS, dtype=object),
                                        task=np.array(data.tasks, dtype=object),
                                        grader=np.array(GRADERS, dtype=object))
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros(shape, dtype=bool))},
                       coords={"chain": np.arange(CHAINS), "draw": np.arange(DRAWS)})
    sampler = SamplerConfig(method="nutpie", draws=DRAWS, tune=DRAWS, chains=CHAINS, seed=seed)
    return ScorePosterior(OrdinalModel(), data, sampler, posterior, stats)


def file_draws(path) -> dict[str, np.ndarray]:
    """The draws as stored in a saved fit, read with xarray alone (chain, draw first)."""
    post = xr.open_datatree(path, engine="h5netcdf")["posterior"].to_dataset().load()
    return {
        "cut": post["cutpoints"].transpose("chain", "draw", "cutpoint").values,
        "b": post["system_effect"].transpose("chain", "draw", "system").values,
        "u": post["task_effect"].transpose("chain", "draw", "task").values,
        "tau": post["task_sd"].transpose("chain", "draw").values,
        "g": post["grader_effect"].transpose("chain", "draw", "grader").values,
        "h": post["grader_system_effect"].transpose("chain", "draw", "grader", "system").values,
    }


def exceedance_reference(d: dict[str, np.ndarray], estimand: str) -> np.ndarray:
    """Per draw, system and level k = 1..K: P(score >= k), ``(chain, draw, system, K)``.

    ``"tasks"``: the plain average over the data's tasks and graders of
    ``logistic(b_s + u_t + g_j + h_js - c_k)``. ``"population"``: the task effect integrated
    over ``N(0, tau)`` by the trapezoid rule on 4,001 points of ``z`` in [-10, 10] (not the
    package's Gauss-Hermite nodes), averaged over graders."""
    base = d["b"][:, :, :, None] + d["g"][:, :, None, :] + np.swapaxes(d["h"], 2, 3)  # C D S J
    cut = d["cut"]
    if estimand == "tasks":
        x = base[..., None] + d["u"][:, :, None, None, :]  # C D S J T
        p = expit(x[..., None] - cut[:, :, None, None, None, :])
        return p.mean(axis=(3, 4))
    z = np.linspace(-10.0, 10.0, 4001)
    w = np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi)
    out = np.zeros((*base.shape[:3], cut.shape[-1]))
    for k in range(cut.shape[-1]):
        x = base[..., None] + d["tau"][:, :, None, None, None] * z - cut[:, :, None, None, k, None]
        out[..., k] = np.trapezoid(expit(x) * w, z, axis=-1).mean(axis=-1)
    return out
