"""Sequential evaluation: after each batch, stop or continue, and what to sample next.

Two systems on paired tasks (pass@1, the ``"population"`` estimand): after each batch of new
tasks the posterior of ``Delta = mu_B - mu_A`` is the paired Student-t of
:func:`evalbayes.decisions._plan.fast_population_posterior`. Stop when

* ``P(Delta > 0) >= threshold`` (B better) or ``P(Delta < 0) >= threshold`` (A better), or
* ``P(|Delta| < rope) >= rope_prob`` (practically equivalent; Kruschke 2018, AMPPS 1(2)),

else continue until ``max_tasks``. Many systems (:func:`next_allocation`): stop when one
system's ``P(best) >= threshold``; otherwise sample the two systems most likely to be best
next (top-two sampling, Russo 2020, "Simple Bayesian algorithms for best-arm
identification", Oper. Res. 68(6)).

Optional stopping: a posterior probability stays a valid posterior probability whatever the
stopping rule (the likelihood principle; Berger & Wolpert 1988; Rouder 2014, Psychon. Bull.
Rev. 21(2)), but its *frequentist* false-decision rate under ``Delta = 0`` grows with the
number of looks, as for any repeated significance test (Armitage, McPherson & Rowe 1969,
"Repeated significance tests on accumulating data", JRSS A 132(2)).
:func:`operating_characteristics` measures both: false-decision rate and expected tasks of
the Bayesian rule, a fixed design with the same rule at ``max_tasks``, and naive peeking at
a paired t-test p-value after each batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evalbayes._core.names import check_count, check_nonnegative, check_prob
from evalbayes.decisions._plan import Population, fast_population_posterior

__all__ = [
    "SequentialDecision",
    "next_allocation",
    "operating_characteristics",
    "sequential_decision",
]

ACTIONS = ("b_better", "a_better", "equivalent", "continue")


@dataclass(frozen=True)
class SequentialDecision:
    """What to do after a batch.

    Attributes
    ----------
    action : str
        ``"b_better"``, ``"a_better"``, ``"equivalent"`` or ``"continue"``.
    p_superior : float
        ``P(mu_B > mu_A | data)``.
    p_rope : float
        ``P(|mu_B - mu_A| < rope | data)``.
    n_tasks : int
        Tasks so far.
    next : str
        What to sample next: ``"stop"`` or ``"both systems on new tasks"``.
    """

    action: str
    p_superior: float
    p_rope: float
    n_tasks: int
    next: str


def _t_probs(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, rope: float
             ) -> tuple[np.ndarray, np.ndarray]:
    scale = np.maximum(scale, 1e-12)
    p_sup = stats.t.cdf(loc / scale, df)
    p_rope = stats.t.cdf((rope - loc) / scale, df) - stats.t.cdf((-rope - loc) / scale, df)
    return p_sup, p_rope


def _actions(p_sup: np.ndarray, p_rope: np.ndarray, threshold: float, rope_prob: float
             ) -> np.ndarray:
    out = np.full(p_sup.shape, 3)
    out = np.where(p_rope >= rope_prob, 2, out)
    out = np.where(1 - p_sup >= threshold, 1, out)
    return np.where(p_sup >= threshold, 0, out)


def sequential_decision(
    c_a: Any,
    c_b: Any,
    trials: int,
    *,
    threshold: float = 0.95,
    rope: float = 0.0,
    rope_prob: float = 0.95,
    min_tasks: int = 3,
) -> SequentialDecision:
    """Decide after a batch from the paired per-task counts so far (module docstring).

    ``c_a``, ``c_b``: successes per task of A and B, ``trials`` trials each. No decision
    before ``min_tasks`` tasks. ``rope = 0`` disables the equivalence stop.
    """
    ca = np.asarray(c_a, dtype=np.float64)
    cb = np.asarray(c_b, dtype=np.float64)
    if ca.ndim != 1 or ca.shape != cb.shape:
        raise ValueError("c_a and c_b must be 1-D with one count per task")
    trials = check_count(trials, "trials")
    if np.any((ca < 0) | (ca > trials) | (cb < 0) | (cb > trials)):
        raise ValueError(f"counts must lie in 0..{trials}")
    threshold = check_prob(threshold, "threshold")
    rope = check_nonnegative(rope, "rope")
    min_tasks = check_count(min_tasks, "min_tasks", 2)
    loc, scale, df = fast_population_posterior(ca[None], cb[None], trials, paired=True)
    p_sup, p_rope = _t_probs(loc, scale, df, rope)
    action = 3 if ca.size < min_tasks else int(_actions(p_sup, p_rope, threshold, rope_prob)[0])
    return SequentialDecision(
        action=ACTIONS[action],
        p_superior=float(p_sup[0]),
        p_rope=float(p_rope[0]) if rope > 0 else float("nan"),
        n_tasks=int(ca.size),
        next="stop" if action < 3 else "both systems on new tasks",
    )


def next_allocation(draws: Any, systems: Any = None, threshold: float = 0.95) -> dict[str, Any]:
    """Stop or name the two systems to sample next, from joint draws ``(samples, system)``.

    Returns ``{"stop": bool, "best": name, "p_best": {...}, "sample": [two names]}``.
    """
    d = np.asarray(draws, dtype=np.float64)
    if d.ndim != 2 or d.shape[1] < 2:
        raise ValueError("draws must have shape (samples, systems >= 2)")
    names = list(range(d.shape[1])) if systems is None else list(systems)
    best = np.argmax(d, axis=1)
    p_best = np.bincount(best, minlength=d.shape[1]) / d.shape[0]
    order = np.argsort(-p_best, kind="stable")
    stop = bool(p_best[order[0]] >= check_prob(threshold, "threshold"))
    return {
        "stop": stop,
        "best": names[order[0]],
        "p_best": {names[i]: float(p_best[i]) for i in range(d.shape[1])},
        "sample": [] if stop else [names[order[0]], names[order[1]]],
    }


def operating_characteristics(
    population: Population,
    *,
    batch: int = 5,
    max_tasks: int = 50,
    trials: int = 4,
    threshold: float = 0.95,
    rope: float = 0.0,
    rope_prob: float = 0.95,
    alpha: float = 0.05,
    n_sims: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Simulated false-decision rate, power and expected tasks of three procedures.

    Each simulated evaluation draws ``max_tasks`` paired tasks from ``population`` (its
    point values) and looks after every ``batch`` tasks:

    ``bayes-sequential``
        :func:`sequential_decision` at each look;
    ``bayes-fixed``
        the same rule once, at ``max_tasks``;
    ``peeking-t``
        stop as soon as the two-sided paired t-test gives ``p < alpha`` (declare the sign of
        the mean difference), a naive frequentist who peeks at every look;
    ``fixed-t``
        the t-test once at ``max_tasks``.

    Returns one row per procedure: ``p_b_better``, ``p_a_better``, ``p_equivalent``,
    ``false_decision`` (declared a direction opposite to, or, when ``mean_b == mean_a``,
    any direction for, the true difference), ``mean_tasks`` and their Monte Carlo s.e.
    """
    batch = check_count(batch, "batch", 2)
    max_tasks = check_count(max_tasks, "max_tasks", batch)
    n_sims = check_count(n_sims, "n_sims", 10)
    rng = np.random.default_rng(seed)
    params = population.parameters(rng, n_sims)
    pa, pb = population.sample_rates(rng, params, max_tasks, paired=True)
    ca, cb = rng.binomial(trials, pa), rng.binomial(trials, pb)
    looks = list(range(batch, max_tasks + 1, batch))
    if looks[-1] != max_tasks:
        looks.append(max_tasks)
    effect = population.mean_b - population.mean_a
    out = {}
    for name in ("bayes-sequential", "bayes-fixed", "peeking-t", "fixed-t"):
        action = np.full(n_sims, 3)
        stopped_at = np.full(n_sims, max_tasks)
        open_ = np.ones(n_sims, dtype=bool)
        use = looks if name in ("bayes-sequential", "peeking-t") else [max_tasks]
        for n_t in use:
            loc, scale, df = fast_population_posterior(ca[:, :n_t], cb[:, :n_t], trials, True)
            if name.startswith("bayes"):
                p_sup, p_rope = _t_probs(loc, scale, df, rope)
                if rope <= 0:
                    p_rope = np.zeros_like(p_sup)
                act = _actions(p_sup, p_rope, threshold, rope_prob)
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    tstat = np.where(scale > 0, loc / scale, 0.0)
                p = 2 * stats.t.sf(np.abs(tstat), df)
                act = np.where(p < alpha, np.where(loc > 0, 0, 1), 3)
            newly = open_ & (act < 3)
            action[newly] = act[newly]
            stopped_at[newly] = n_t
            open_ &= ~newly
        if effect > 0:
            false = action == 1
        elif effect < 0:
            false = action == 0
        else:
            false = action < 2
        out[name] = {
            "p_b_better": np.mean(action == 0),
            "p_a_better": np.mean(action == 1),
            "p_equivalent": np.mean(action == 2),
            "false_decision": np.mean(false),
            "false_decision_se": np.sqrt(np.mean(false) * (1 - np.mean(false)) / n_sims),
            "mean_tasks": np.mean(stopped_at),
            "mean_tasks_se": np.std(stopped_at, ddof=1) / np.sqrt(n_sims),
        }
    frame = pd.DataFrame(out).T.reset_index(names="procedure")
    frame.attrs.update({"effect": effect, "looks": looks, "trials": trials,
                        "threshold": threshold, "alpha": alpha})
    return frame
