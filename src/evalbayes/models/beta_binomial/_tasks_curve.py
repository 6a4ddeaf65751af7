"""Fast draws of the "these tasks" pass@k / pass^k estimand of a Beta-Binomial posterior.

For a posterior draw ``(a, b) = (mu kappa, (1 - mu) kappa)`` of a system, the latent rates
of its ``T`` observed tasks are independent, ``p_t ~ Beta(a + c_t, b + n_t - c_t)``
(conjugacy), and the estimand is the task average ``Y_k = (1/T) sum_t f_k(p_t)`` with
``f_k(p) = 1 - (1 - p)^k`` (pass@k) or ``p^k`` (pass^k). Its posterior needs draws of the
rates (a per-draw conditional expectation leaves out the trial noise, which is all the
uncertainty this estimand has given ``(a, b)``).

:func:`tasks_curve_fast` draws exactly that, with no approximation: every task's rate from
its conjugate Beta, once per posterior draw, in the compiled kernel
:func:`~._kernel.task_power_sums` (tasks grouped by unique ``(n, c)`` cell so
the Gamma constants are computed once per cell and draw; powers by repeated squaring; rows
in parallel with counter-based streams, so the draws do not depend on the thread count).
Cost: ``O(draws x systems x tasks)`` Beta draws plus ``O(draws x systems x tasks x K)``
multiplications, no array of rates in memory. The draws follow the same distribution as
``BaseModel._tasks_curve`` (tested by two-sample tests and against closed-form means) but
come from another random stream, so for the same seed the two give different Monte Carlo
draws of the same posterior. :func:`tasks_curves_fast` gives pass@k and pass^k from one set
of rate draws (``1 - p`` and ``p`` of the same Beta variates), at the cost of one: the draws
of each metric are those that :func:`tasks_curve_fast` gives for it alone with the same seed.

References
----------
Gelman, A. et al. (2013). *Bayesian Data Analysis* (3rd ed.), section 5.3 (the
Beta-Binomial hierarchy and the conditional posterior of each rate).
"""

from __future__ import annotations

import numpy as np

from evalbayes._core.names import check_k, check_metric
from evalbayes.models.beta_binomial._kernel import task_power_sums

__all__ = ["tasks_curve_fast", "tasks_curves_fast"]


def _squaring_plan(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Set bits of each integer ``k`` (CSR), or empty arrays when some k is not an integer."""
    if not np.all(k == np.round(k)) or float(k.max()) >= 2.0**52:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    bits = [[j for j in range(int(kj).bit_length()) if int(kj) >> j & 1] for kj in k]
    start = np.cumsum([0] + [len(b) for b in bits])
    return np.asarray([j for b in bits for j in b], np.int64), start.astype(np.int64)


def tasks_curve_fast(
    a: np.ndarray,
    b: np.ndarray,
    cell_system: np.ndarray,
    cell_n: np.ndarray,
    cell_c: np.ndarray,
    cell_weight: np.ndarray,
    k: np.ndarray,
    metric: str,
    seed: int = 0,
) -> np.ndarray:
    """Draws of the task-average pass@k / pass^k, shape ``(chain, draw, system, k)``.

    ``Y_k = 1 - (1/T) sum_t (1 - p_t)^k`` (pass@k) or ``(1/T) sum_t p_t^k`` (pass^k) with
    ``p_t ~ Beta(a + c_t, b + n_t - c_t)`` drawn anew for every posterior draw.

    Parameters
    ----------
    a, b : (chain, draw, system) arrays
        ``mu kappa`` and ``(1 - mu) kappa`` per posterior draw.
    cell_system, cell_n, cell_c, cell_weight : (U,) arrays
        The observed tasks collapsed into unique ``(system, n, c)`` cells, sorted by system,
        and how many tasks share each (as the Beta-Binomial model collapses its data); a
        system without cells gets NaN.
    k : (K,) array
        Positive exponents (integers use repeated squaring; any real works).
    metric : {"pass@k", "pass^k"}
    seed : int
        Seeds the draws: row ``(draw, system)`` has its own stream derived from
        ``(seed, system, draw)``.

    Returns
    -------
    ndarray
        ``(chain, draw, system, K)``.
    """
    metric = check_metric(metric)
    return tasks_curves_fast(a, b, cell_system, cell_n, cell_c, cell_weight, k, (metric,),
                             seed)[metric]


def tasks_curves_fast(
    a: np.ndarray,
    b: np.ndarray,
    cell_system: np.ndarray,
    cell_n: np.ndarray,
    cell_c: np.ndarray,
    cell_weight: np.ndarray,
    k: np.ndarray,
    metrics: tuple[str, ...],
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """:func:`tasks_curve_fast` for several metrics from one set of rate draws: ``metric ->``
    draws ``(chain, draw, system, K)``.

    Every ``p_t`` is drawn once per posterior draw, as ``p = G_s / (G_s + G_f)`` from two
    Gamma variates with shapes ``a + c`` and ``b + n - c``; pass@k sums ``(1 - p)^k =
    (G_f / (G_s + G_f))^k`` and pass^k sums ``p^k``, both without cancellation. A metric's
    draws do not depend on which other metrics are asked for.
    """
    metrics = tuple(dict.fromkeys(check_metric(m) for m in metrics))
    if not metrics:
        raise ValueError("metrics must name at least one metric")
    k = check_k(k)
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    system, n, c, weight = (np.asarray(x, np.int64)
                            for x in (cell_system, cell_n, cell_c, cell_weight))
    if a.ndim != 3 or a.shape != b.shape:
        raise ValueError(f"a and b must be (chain, draw, system) arrays of one shape; got "
                         f"{a.shape} and {b.shape}")
    chains, draws, n_sys = a.shape
    if not (system.shape == n.shape == c.shape == weight.shape and system.ndim == 1):
        raise ValueError("the cell arrays must be 1-D and of one length")
    if np.any(np.diff(system) < 0) or np.any(system < 0) or np.any(system >= n_sys):
        raise ValueError(f"cell_system must be sorted system indices in [0, {n_sys})")
    if not (np.all(a > 0) and np.all(b > 0)):
        raise ValueError("a and b must be positive (Beta parameters)")
    if np.any(n < 1) or np.any(c < 0) or np.any(c > n) or np.any(weight < 1):
        raise ValueError("cells must satisfy n >= 1, 0 <= c <= n and weight >= 1")
    start = np.searchsorted(system, np.arange(n_sys + 1)).astype(np.int64)
    tasks = np.bincount(system, weights=weight, minlength=n_sys)
    # x = 1 - p ~ Beta(b + n - c, a + c) (pass@k) and y = 1 - x = p (pass^k), one draw of both
    a_rows = np.ascontiguousarray(a.reshape(chains * draws, n_sys))
    b_rows = np.ascontiguousarray(b.reshape(chains * draws, n_sys))
    bit_index, bit_start = _squaring_plan(k)
    want_x, want_y = "pass@k" in metrics, "pass^k" in metrics
    sums = task_power_sums(b_rows, a_rows, n - c, c, weight, start, k, bit_index, bit_start,
                           int(seed), want_x, want_y)
    out = {}
    with np.errstate(invalid="ignore"):  # a system with no observed task: NaN, as its mean
        mean = sums / tasks[None, :, None, None]
    if want_x:
        out["pass@k"] = (1.0 - mean[..., 0]).reshape(chains, draws, n_sys, len(k))
    if want_y:
        out["pass^k"] = mean[..., -1].reshape(chains, draws, n_sys, len(k))
    return {m: out[m] for m in metrics}
