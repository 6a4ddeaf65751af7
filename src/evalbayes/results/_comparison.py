"""Posterior comparisons of systems: ``compare(posterior) -> Comparison``.

For every ordered pair (system ``B``, baseline ``A``) and every ``k``, from the joint posterior
draws of a metric ``f`` (pass@k or pass^k, :meth:`Posterior.curve`):

* ``p_superior`` = P(f_B > f_A), the share of draws in which B is strictly ahead;
* ``p_tie`` = P(f_B = f_A) (zero for continuous posteriors; curves that saturate at exactly
  1.0 in floating point, e.g. pass@k at very large k, can tie);
* ``diff_mean`` and ``diff_lower``/``diff_upper``: posterior mean and credible interval of
  ``f_B - f_A`` (:func:`evalbayes._core.intervals.credible_interval`);
* ``p_rope`` = P(|f_B - f_A| < rope), the region of practical equivalence (Kruschke 2018);
* ``expected_loss`` = E[max(f_A - f_B, 0)], what choosing B over A costs in expectation
  (the loss function of Bayesian A/B testing, e.g. Stucchio 2015).

The draws of all systems come from one joint posterior, so a comparison is paired whenever the
model makes it so (shared tasks, shared parameters); nothing assumes independence between
systems. Miller (2024) explains why paired comparisons are the right ones; the per-task view
(:meth:`Comparison.task_contributions`) locates a difference in the tasks that produce it.

Every result names its estimand (Miller 2024): ``"tasks"`` (these tasks) or ``"population"``
(tasks like these).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.intervals import credible_interval, interval_rows
from evalbayes._core.names import (
    ESTIMAND_TEXT,
    SAMPLE_DIMS,
    IntervalKind,
    check_ci_prob,
    check_estimand,
    check_interval_kind,
    check_k,
    check_metric,
    check_systems,
    default_estimand,
)
from evalbayes._core.rendering import Rendered, jsonable
from evalbayes.results._posterior import Posterior

__all__ = ["FEW_SHARED_TASKS", "Comparison", "compare", "shared_task_note", "shared_tasks"]
STAT_NAMES = (
    "p_superior",
    "p_tie",
    "diff_mean",
    "diff_lower",
    "diff_upper",
    "p_rope",
    "expected_loss",
)
def _k_label(k: float) -> int | float:
    return int(k) if float(k).is_integer() else float(k)


def _check_settings(rope: float, ci_prob: float, kind: str) -> None:
    if not np.isfinite(rope) or rope < 0:
        raise ValueError(f"rope must be a finite number >= 0, got {rope!r}")
    check_ci_prob(ci_prob)
    check_interval_kind(kind)


def _check_draws(draws: xr.DataArray) -> xr.DataArray:
    if not isinstance(draws, xr.DataArray):
        raise TypeError(f"draws must be an xarray.DataArray, got {type(draws).__name__}")
    units = [d for d in draws.dims if d not in (*SAMPLE_DIMS, "k")]
    if len(draws.dims) != 4 or len(units) != 1 or "k" not in draws.dims or any(
        d not in draws.dims for d in SAMPLE_DIMS
    ):
        raise ValueError(
            "draws need the dims (chain, draw, <unit>, k) with one unit dim such as 'system', "
            f"got {tuple(draws.dims)} (per-task draws: use Comparison.task_contributions)"
        )
    for name in ("metric", "estimand"):
        if name not in draws.attrs:
            raise ValueError(
                f"draws.attrs has no {name!r}; use Posterior.curve / pass_at_k, which set it"
            )
    draws = draws.transpose(*SAMPLE_DIMS, units[0], "k")
    for dim in (units[0], "k"):
        labels = draws[dim].values.tolist()
        repeated = sorted({str(v) for v in labels if labels.count(v) > 1})
        if repeated:
            raise ValueError(f"draws have repeated {dim} labels {repeated}")
    bad = ~np.isfinite(draws.values)
    if bad.any():
        s = int(np.argwhere(bad)[0][2])
        raise ValueError(
            f"draws of {units[0]} {str(draws[units[0]].values[s])!r} contain NaN or infinite "
            "values"
        )
    return draws


#: :func:`_pair_stats` runs its rows on threads from this many (system x draw) values
_THREADED_CELLS = 200_000


def _pair_stats(
    draws: xr.DataArray, rope: float, ci_prob: float, kind: IntervalKind
) -> xr.Dataset:
    """Statistics of f_B - f_A for every (system B, baseline A, k), one B at a time.

    Each k's draws are laid out one system per row, the draws contiguous, and the
    differences of a row against its baselines ``(baseline, draw)`` are reduced along the
    draws: every count, sum and selection reads contiguous memory (1.6x less time than
    reducing a ``(draw, baseline)`` array, 0.49 -> 0.31 s on SWE-bench Verified's 7,503
    pairs, 4000 draws; ``benchmarks/speed/derived.md``). Memory: one ``(baseline, draw)``
    difference array per row at a time, never the (system, system, draw) cube.

    With equal-tailed intervals each unordered pair is computed once, as B - A for the
    baselines after B, and A - B is read off it: ``A - B = -(B - A)`` draw by draw (IEEE
    negation is exact), so P(A > B) counts the draws with ``B - A < 0``, the tie and ROPE
    shares and the mean (negated) are the same numbers, the expected loss of A is
    ``E[max(B - A, 0)] = E[B - A] + E[max(A - B, 0)]`` and the equal-tailed bounds of
    ``A - B`` are minus the swapped bounds of ``B - A`` (the quantile at ``1 - q`` of ``-x``
    is minus the quantile at ``q`` of ``x``, to rounding: within 1e-14 of computing them
    anew, and exactly antisymmetric). Half the selections, which are most of the time.
    Highest-density intervals are computed for every ordered pair (a tie between equally
    narrow windows may break differently for ``-x``).
    """
    values = draws.values
    unit = str(draws.dims[2])
    systems = draws[unit].values
    n_chain, n_draw, n_sys, n_k = values.shape
    m = n_chain * n_draw
    out = {name: np.full((n_sys, n_sys, n_k), np.nan) for name in STAT_NAMES}
    mirrored = kind == "eti"

    def system_row(rows: np.ndarray, i: int, j: int) -> None:
        """The pairs of system ``i`` as B at the ``j``-th k: its own cells of ``out`` (and,
        mirrored, the cells of the pairs seen from the baselines after it), no other
        row's."""
        first = i + 1 if mirrored else 0
        if first >= n_sys:
            return
        cols = slice(first, None)  # the baselines computed here
        diff = rows[i] - rows[cols]  # (baseline, draw)
        above = np.count_nonzero(diff > 0, axis=1)
        tied = np.count_nonzero(diff == 0, axis=1)
        total = diff.sum(axis=1)
        shortfall = 0.0 - np.minimum(diff, 0.0).sum(axis=1)  # sum of max(A - B, 0); 0.0, not -0.0
        inside = np.count_nonzero(np.abs(diff) < rope, axis=1)
        lower, upper = interval_rows(diff, ci_prob, kind)  # reorders diff: last
        out["p_superior"][i, cols, j] = above / m
        out["p_tie"][i, cols, j] = tied / m
        out["diff_mean"][i, cols, j] = total / m
        out["p_rope"][i, cols, j] = inside / m
        out["expected_loss"][i, cols, j] = shortfall / m
        out["diff_lower"][i, cols, j] = lower
        out["diff_upper"][i, cols, j] = upper
        if mirrored:  # the pairs (A = i, B after it) as seen from B: A - B = -(B - A)
            out["p_superior"][cols, i, j] = (m - above - tied) / m
            out["p_tie"][cols, i, j] = tied / m
            out["diff_mean"][cols, i, j] = -total / m
            out["p_rope"][cols, i, j] = inside / m
            out["expected_loss"][cols, i, j] = (total + shortfall) / m
            out["diff_lower"][cols, i, j] = -upper
            out["diff_upper"][cols, i, j] = -lower

    # the rows write disjoint cells and NumPy's selections and ufuncs release the GIL: rows
    # on threads give the same numbers in less time (pairs of many systems only)
    workers = min(os.cpu_count() or 1, 4) if n_sys * m >= _THREADED_CELLS else 1
    for j in range(n_k):
        rows = values[..., j].reshape(m, n_sys).T.copy()  # (system, draw), contiguous
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(lambda i, rows=rows, j=j: system_row(rows, i, j), range(n_sys)))
        else:
            for i in range(n_sys):
                system_row(rows, i, j)
    own = np.arange(n_sys)
    for name in STAT_NAMES:
        out[name][own, own] = np.nan  # a system against itself
    coords = {unit: systems, "baseline": systems.copy(), "k": draws["k"].values}
    return xr.Dataset(
        {name: ((unit, "baseline", "k"), arr) for name, arr in out.items()}, coords=coords
    )


def _rank_probabilities(values: np.ndarray) -> np.ndarray:
    """P(rank = r) per system and k from draws ``(chain, draw, system, k)``; rank 1 = best.

    Tied systems (equal values in one draw) share the ranks they occupy equally: a group of
    ``m`` systems tied behind ``g`` better ones gives each of them mass ``1/m`` on ranks
    ``g + 1, ..., g + m``. Every system's row and every rank's column then sum to 1.

    Each draw's systems are sorted once; a system's ``g`` (how many are better) and ``m``
    (how many share its value) are read off the runs of equal values in the sorted draw,
    and the masses of all systems are summed by one weighted ``bincount`` (SWE-bench
    Verified, 123 systems x 4000 draws: 0.10 -> 0.02 s against comparing every system with
    every other, the same numbers to the bit: each bin adds its draws in the same order).
    Returns shape ``(system, k, rank)``.
    """
    n_sys, n_k = values.shape[2], values.shape[3]
    flat = values.reshape(-1, n_sys, n_k)
    n_draws = flat.shape[0]
    out = np.zeros((n_sys, n_k, n_sys))
    position = np.arange(n_sys)
    for j in range(n_k):
        x = flat[:, :, j]
        order = np.argsort(x, axis=1, kind="stable")  # ascending, per draw
        ordered = np.take_along_axis(x, order, axis=1)
        new = ordered[:, 1:] != ordered[:, :-1]
        starts = np.ones((n_draws, n_sys), dtype=bool)
        starts[:, 1:] = new
        ends = np.ones((n_draws, n_sys), dtype=bool)
        ends[:, :-1] = new
        first = np.maximum.accumulate(np.where(starts, position, 0), axis=1)
        last = np.minimum.accumulate(np.where(ends, position, n_sys)[:, ::-1], axis=1)[:, ::-1]
        better = np.empty((n_draws, n_sys), dtype=np.intp)
        tied = np.empty((n_draws, n_sys), dtype=np.intp)
        np.put_along_axis(better, order, n_sys - 1 - last, axis=1)
        np.put_along_axis(tied, order, last - first + 1, axis=1)
        weight = (1.0 / tied).ravel()
        key = position * (n_sys + 1)  # system s's bins: s (n + 1) + rank - 1
        size = n_sys * (n_sys + 1)
        start = np.bincount((key + better).ravel(), weights=weight, minlength=size)
        stop = np.bincount((key + better + tied).ravel(), weights=weight, minlength=size)
        mass = np.cumsum((start - stop).reshape(n_sys, n_sys + 1), axis=1)
        out[:, j] = mass[:, :n_sys] / n_draws
    return out


#: Below this many tasks shared by a pair, the comparison's text says the interval rests on few
#: tasks (``benchmarks/validity/``, paired comparisons at 10-20 tasks).
FEW_SHARED_TASKS = 30


def shared_tasks(posterior: Posterior, systems: list[str]) -> int:
    """The fewest tasks that any pair of ``systems`` both ran (``n > 0``) in the fit's data."""
    index = [posterior.data.systems.index(s) for s in systems]
    seen = posterior.data.n.values[index] > 0
    both = seen.astype(int) @ seen.T.astype(int)
    return int(both[np.triu_indices(len(index), 1)].min())


def shared_task_note(posterior: Posterior, systems: list[str], estimand: str) -> list[str]:
    """How many tasks the comparison rests on and, below :data:`FEW_SHARED_TASKS`, why its
    population interval is wide (lines of text; empty for a single system)."""
    if len(systems) < 2:
        return []
    shared = shared_tasks(posterior, systems)
    lines = [f"rests on {shared} tasks shared by every pair" if len(systems) > 2
             else f"rests on {shared} shared tasks"]
    if shared < FEW_SHARED_TASKS:
        if estimand == "population":
            alpha = getattr(posterior.model, "pairing_concentration", 0.0)
            if getattr(posterior.model, "pairing_coupling", "dirichlet") == "copula":
                unseen = " and on how loosely so few tasks pin down the systems' pairing"
            else:
                unseen = (f" and allows for unseen tasks unlike these (weight {alpha:g} tasks)"
                          if alpha > 0 else "")
            lines.append(
                f"  fewer than {FEW_SHARED_TASKS} tasks: the interval leans on the model's "
                f"prior{unseen}, and is wider for that reason; a few more tasks narrow it most"
            )
        else:
            lines.append(
                f"  fewer than {FEW_SHARED_TASKS} tasks: estimand 'tasks' is about these tasks "
                "only; the whole benchmark can differ by more (estimand 'population')"
            )
    return lines


@dataclass(frozen=True, eq=False)
class Comparison(Rendered):
    """Pairwise posterior comparisons of systems for one metric and estimand.

    Build it with :func:`compare` (from a posterior) or :meth:`from_draws`.

    Attributes
    ----------
    draws : xarray.DataArray
        Posterior draws of the metric, dims ``(chain, draw, system, k)`` (or another unit
        dim that the model declares instead of ``system``, e.g. ``recipe``).
    stats : xarray.Dataset
        Dims ``(system, baseline, k)`` (the unit dim first); variables ``p_superior, p_tie,
        diff_mean, diff_lower, diff_upper, p_rope, expected_loss`` for f_system - f_baseline
        (NaN on the diagonal).
    metric, estimand : str
        ``"pass@k"`` / ``"pass^k"`` and ``"tasks"`` / ``"population"``.
    rope, ci_prob, kind
        Settings used for ``stats``.
    approximate : bool
        True when the draws come from a variational fit.
    label : str
        Description of the fit the draws come from.
    posterior : Posterior or None
        The fit, kept for :meth:`task_contributions` (None when built from bare draws).
    """

    draws: xr.DataArray
    stats: xr.Dataset
    metric: str
    estimand: str
    rope: float
    ci_prob: float
    kind: IntervalKind
    approximate: bool
    label: str = ""
    posterior: Posterior | None = field(default=None, repr=False)

    _settings_fields = ("metric", "estimand", "rope", "ci_prob", "kind", "approximate", "label")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_draws(
        cls,
        draws: xr.DataArray,
        *,
        rope: float = 0.01,
        ci_prob: float = 0.95,
        kind: IntervalKind = "eti",
        systems: Any = None,
        label: str = "",
        posterior: Posterior | None = None,
    ) -> Comparison:
        """Compare systems from draws with dims ``(chain, draw, system, k)``.

        Any single unit dim may stand where ``system`` stands (``(chain, draw, recipe, k)``).

        ``draws.attrs`` must name ``metric`` and ``estimand`` (as :meth:`Posterior.curve`
        does); ``attrs["approximate"]`` marks variational draws.
        """
        _check_settings(rope, ci_prob, kind)
        draws = _check_draws(draws)
        unit = str(draws.dims[2])
        chosen = check_systems([str(s) for s in draws[unit].values], systems, minimum=2)
        draws = draws.sel({unit: chosen})
        metric = check_metric(str(draws.attrs["metric"]))
        estimand = check_estimand(str(draws.attrs["estimand"]))
        stats = _pair_stats(draws, rope, ci_prob, kind)
        approximate = bool(draws.attrs.get("approximate", 0))
        if posterior is not None:
            approximate = approximate or posterior.approximate
        return cls(
            draws=draws,
            stats=stats,
            metric=metric,
            estimand=estimand,
            rope=float(rope),
            ci_prob=float(ci_prob),
            kind=kind,
            approximate=approximate,
            label=label,
            posterior=posterior,
        )

    # ------------------------------------------------------------------ access
    @property
    def unit_dim(self) -> str:
        """The dim of the compared units: ``"system"`` unless the model declares another."""
        return str(self.draws.dims[2])

    @property
    def systems(self) -> list[str]:
        """Compared systems (units), in order."""
        return [str(s) for s in self.draws[self.unit_dim].values]

    @property
    def k(self) -> list[int | float]:
        """The k values compared."""
        return [_k_label(v) for v in self.draws["k"].values]

    def _select_k(self, k: Any) -> float:
        ks = self.draws["k"].values
        if k is None:
            if len(ks) != 1:
                raise ValueError(f"this comparison has several k {self.k}; choose one with k=")
            return float(ks[0])
        value = float(check_k(k)[0]) if np.ndim(k) == 0 else None
        if value is None or value not in ks:
            raise ValueError(f"k={k!r} is not one of the compared k {self.k}")
        return value

    def to_frame(self) -> pd.DataFrame:
        """Long table, one row per (system, baseline, k) with system != baseline.

        Columns: ``system, baseline, metric, k, estimand, p_superior, p_tie, diff_mean,
        diff_lower, diff_upper, p_rope, expected_loss, rope, ci_prob, kind``, plus
        ``approximate`` (True) when the fit is variational.
        """
        frame = self.stats.to_dataframe().reset_index()
        frame = frame[frame[self.unit_dim] != frame["baseline"]].reset_index(drop=True)
        frame["k"] = [_k_label(v) for v in frame["k"]]
        frame.insert(2, "metric", self.metric)
        frame.insert(4, "estimand", self.estimand)
        frame["rope"] = self.rope
        frame["ci_prob"] = self.ci_prob
        frame["kind"] = self.kind
        if self.approximate:
            frame["approximate"] = True
        return frame

    def matrix(self, k: Any = None, value: str = "p_superior") -> pd.DataFrame:
        """Square table of one statistic: rows ``system`` (B), columns ``baseline`` (A).

        ``k`` may be omitted when only one k was compared. The diagonal is NaN.
        """
        if value not in STAT_NAMES:
            raise ValueError(f"value must be one of {STAT_NAMES}, got {value!r}")
        kk = self._select_k(k)
        table = self.stats[value].sel(k=kk).to_pandas()
        table.index.name, table.columns.name = self.unit_dim, "baseline"
        return table

    def ranks(self) -> xr.DataArray:
        """P(rank = r) for each system and k, dims ``(system, k, rank)``; rank 1 = best.

        Ranks are taken within each joint draw among the compared systems; ties share their
        ranks equally (see :func:`_rank_probabilities`), so every system's probabilities and
        every rank's probabilities sum to 1.
        """
        probs = _rank_probabilities(self.draws.values)
        return xr.DataArray(
            probs,
            dims=(self.unit_dim, "k", "rank"),
            coords={
                self.unit_dim: self.draws[self.unit_dim].values,
                "k": self.draws["k"].values,
                "rank": np.arange(1, probs.shape[0] + 1),
            },
            name="rank_probability",
            attrs={"metric": self.metric, "estimand": self.estimand},
        )

    def p_best(self) -> xr.DataArray:
        """P(system is best) = P(rank = 1), dims ``(system, k)``; sums to 1 over systems."""
        best = self.ranks().sel(rank=1, drop=True)
        best.name = "p_best"
        return best

    def task_contributions(
        self,
        system: str,
        baseline: str,
        *,
        k: Any = None,
        ci_prob: float | None = None,
        kind: IntervalKind | None = None,
    ) -> pd.DataFrame:
        """Per-task share of the difference ``f_B - f_A`` (estimand ``"tasks"`` only).

        The "tasks" estimand is an average over observed tasks, ``f_B = sum_t f_B(t) / N_B``,
        so the difference splits exactly into per-task terms
        ``d_t = f_B(t) / N_B - f_A(t) / N_A`` (``(f_B(t) - f_A(t)) / N`` when both systems ran
        all N tasks; a task a system did not run contributes 0 for it). Each term's draws come
        from :meth:`Posterior.curve` with ``per_task=True`` on the same latent-rate draws as
        the comparison, so the terms sum to the difference draw by draw. In the TinyAgent
        worked example (bundled dataset ``tinyagent``, ``sec17.7``) one task (``zero/speed``)
        produces the whole pass@32 deficit of the 80-step checkpoint.

        Returns
        -------
        pandas.DataFrame
            One row per task, sorted by ``|contribution|`` (largest first): ``task,
            contribution, lower, upper, system_value, baseline_value`` (posterior means of
            f_B(t), f_A(t)), ``system, baseline, metric, k, estimand, ci_prob``.
        """
        if self.estimand != "tasks":
            raise ValueError(
                "task_contributions needs estimand='tasks': the population estimand is about "
                "new tasks and does not split over the observed ones"
            )
        if self.posterior is None:
            raise ValueError(
                "task_contributions needs the posterior; build the comparison with compare()"
            )
        for role, name in (("system", system), ("baseline", baseline)):
            if name not in self.systems:
                raise ValueError(f"unknown {role} {name!r}; compared systems: {self.systems}")
        if system == baseline:
            raise ValueError(f"system and baseline are both {system!r}")
        ci_prob = self.ci_prob if ci_prob is None else ci_prob
        kind = self.kind if kind is None else kind
        _check_settings(self.rope, ci_prob, kind)
        kk = self._select_k(k)
        per_task = self.posterior.curve(self.metric, [kk], estimand="tasks", per_task=True)
        per_task = per_task.sel(system=[system, baseline], k=kk, drop=True)
        values = per_task.transpose("chain", "draw", "system", "task").values
        observed = np.isfinite(values[0, 0])  # (2, task)
        counts = observed.sum(axis=1)
        shares = np.where(observed, values, 0.0) / counts[:, None]
        contribution = xr.DataArray(
            shares[:, :, 0] - shares[:, :, 1],
            dims=("chain", "draw", "task"),
            coords={"task": per_task["task"].values},
        )
        lower, upper = credible_interval(contribution, ci_prob, kind)
        filled = np.where(observed, values, 0.0)
        means = np.where(observed, filled.mean(axis=(0, 1)), np.nan)  # (2, task)
        frame = pd.DataFrame(
            {
                "task": [str(t) for t in per_task["task"].values],
                "contribution": contribution.mean(SAMPLE_DIMS).values,
                "lower": lower.values,
                "upper": upper.values,
                "system_value": means[0],
                "baseline_value": means[1],
            }
        )
        frame = frame.iloc[np.argsort(-np.abs(frame["contribution"].to_numpy()), kind="stable")]
        frame = frame.reset_index(drop=True)
        frame["system"] = system
        frame["baseline"] = baseline
        frame["metric"] = self.metric
        frame["k"] = _k_label(kk)
        frame["estimand"] = self.estimand
        frame["ci_prob"] = ci_prob
        return frame

    # ------------------------------------------------------------------ text
    def summary(self, max_pairs: int = 20) -> str:
        """Readable report: each pair once per k, oriented so that B has the higher mean.

        Lists P(B > A), B - A with its interval, P(|B - A| < rope) and the expected loss of
        choosing B, then P(best) per system. Names the estimand; says APPROXIMATE for
        variational fits.
        """
        kind_text = "equal-tailed" if self.kind == "eti" else "highest-density"
        systems = self.systems
        lines = []
        if self.approximate:
            lines.append("APPROXIMATE (variational fit): intervals and probabilities are "
                         "approximate, often overconfident")
        lines.append(
            f"Comparison of {self.metric}, estimand {self.estimand!r}: "
            f"{ESTIMAND_TEXT[self.estimand]}"
        )
        if self.label:
            lines.append(f"fit: {self.label}")
        if self.posterior is not None and self.unit_dim == "system":
            lines += shared_task_note(self.posterior, systems, self.estimand)
        lines.append(
            f"{len(systems)} "
            f"{'systems' if self.unit_dim == 'system' else 'levels of ' + self.unit_dim}; "
            f"ROPE |B - A| < {self.rope:g}; "
            f"{self.ci_prob:.0%} {kind_text} intervals; "
            f"{self.draws.sizes['chain'] * self.draws.sizes['draw']} draws"
        )
        width = max(len(s) for s in systems)
        p_best = self.p_best()
        for kk in self.draws["k"].values:
            lines.append("")
            lines.append(f"k = {_k_label(kk)}")
            lines.append(
                f"  {'B':<{width}}  {'A':<{width}}  P(B>A)    B - A  "
                f"{f'[{self.ci_prob:.0%} interval]':<16}  P(ROPE)  E[loss of B]"
            )
            stat = {name: self.stats[name].sel(k=kk).values for name in STAT_NAMES}
            means = self.draws.sel(k=kk).mean(SAMPLE_DIMS).values
            n_pairs = len(systems) * (len(systems) - 1) // 2
            pairs = (
                (i, j) if means[i] >= means[j] else (j, i)
                for i in range(len(systems)) for j in range(i + 1, len(systems))
            )
            for b, a in islice(pairs, max_pairs):
                row = {name: float(values[b, a]) for name, values in stat.items()}
                lines.append(
                    f"  {systems[b]:<{width}}  {systems[a]:<{width}}  "
                    f"{row['p_superior']:6.3f}  {row['diff_mean']:+7.3f}  "
                    f"[{row['diff_lower']:+.3f}, {row['diff_upper']:+.3f}]  "
                    f"{row['p_rope']:7.3f}  {row['expected_loss']:12.4f}"
                )
                if row["p_tie"] > 0:
                    lines[-1] += f"  (ties in {row['p_tie']:.1%} of draws)"
            if n_pairs > max_pairs:
                lines.append(f"  ... {n_pairs - max_pairs} more pairs: see to_frame()")
            best = p_best.sel(k=kk)
            order = np.argsort(-best.values, kind="stable")
            lines.append(
                "  P(best): "
                + ", ".join(f"{systems[s]} {best.values[s]:.3f}" for s in order)
            )
        return "\n".join(lines)

    def settings(self) -> dict[str, Any]:
        """Metric, estimand, k, ROPE, interval, approximate and the fit's label."""
        out = super().settings()
        out["k"] = jsonable(self.k)
        out["unit_dim"] = self.unit_dim
        return out

    def title(self) -> str:
        """E.g. ``Comparison of pass@k, estimand 'tasks' (ROPE 0.01, 95% eti)``."""
        approx = " [APPROXIMATE: variational]" if self.approximate else ""
        return (
            f"Comparison of {self.metric}, estimand {self.estimand!r} (ROPE {self.rope:g}, "
            f"{self.ci_prob:.0%} {self.kind}){approx}"
        )

    def to_text(self) -> str:
        """The readable :meth:`summary`."""
        return self.summary()

    def __repr__(self) -> str:
        approx = ", APPROXIMATE" if self.approximate else ""
        return (
            f"Comparison({self.metric}, estimand={self.estimand!r}, systems={self.systems}, "
            f"k={self.k}{approx})"
        )


def compare(
    posterior: Posterior,
    metric: str = "pass@k",
    k: Any = 1,
    estimand: str | None = None,
    rope: float = 0.01,
    ci_prob: float = 0.95,
    kind: IntervalKind = "eti",
    systems: Any = None,
) -> Comparison:
    """Compare every pair of systems of a posterior on pass@k or pass^k.

    Parameters
    ----------
    posterior : Posterior
        A fit (``Model.fit``); its joint draws make the comparison paired.
    metric : {"pass@k", "pass^k"}
        Metric compared.
    k : int or sequence of int
        Attempts; one comparison per k.
    estimand : {"tasks", "population"}, optional
        These tasks or tasks like these; must be one the model provides. Default
        ``"population"`` where the model has it, else ``"tasks"``
        (:func:`~evalbayes._core.names.default_estimand`: judged against the whole benchmark,
        "tasks" intervals of a difference measured on 10-100 of its tasks cover 0.60-0.67).
    rope : float
        Half-width of the region of practical equivalence, ``>= 0``.
    ci_prob : float
        Probability of the interval of ``B - A``.
    kind : {"eti", "hdi"}
        Equal-tailed or highest-density interval.
    systems : sequence of str, optional
        Subset (and order) of systems; default all. At least two.

    Returns
    -------
    Comparison
        See the module docstring for the statistics.
    """
    if not isinstance(posterior, Posterior):
        raise TypeError(
            f"compare expects a Posterior (Model.fit), got {type(posterior).__name__}; "
            "for bare draws use Comparison.from_draws"
        )
    metric = check_metric(metric)
    if estimand is None:
        estimand = default_estimand(posterior.model.estimands())
    check_estimand(estimand, posterior.model.estimands(), posterior.label)
    _check_settings(rope, ci_prob, kind)
    posterior.warn_if_unconverged("compare")
    chosen = check_systems(posterior.data.systems, systems, minimum=2)
    draws = posterior.curve(metric, k, estimand=estimand)
    return Comparison.from_draws(
        draws,
        rope=rope,
        ci_prob=ci_prob,
        kind=kind,
        systems=chosen,
        label=posterior.label,
        posterior=posterior,
    )
