"""Plan an evaluation: how many tasks x trials per task reach a target.

Two answers side by side, for a candidate B against a baseline A on pass@1:

frequentist power / MDE
    the per-task difference has variance
    ``sigma_d^2 = Var(p_B - p_A) + E[p_A (1 - p_A)] / n + E[p_B (1 - p_B)] / n``
    (law of total variance over tasks and trials; Miller 2024, "Adding error bars to evals",
    arXiv 2411.00640, eqs. for clustered and paired designs), so the population mean
    difference ``delta`` is estimated with standard error ``sigma_d / sqrt(N)`` and
    :func:`~evalbayes.frequentist.required_units` / :func:`~evalbayes.frequentist.
    minimum_detectable_effect` give N and the MDE. For the ``"tasks"`` estimand (these N
    tasks) only the trial terms remain. Unpaired designs evaluate each system on its own N
    tasks and drop the covariance (``Var(p_B - p_A) -> Var(p_A) + Var(p_B)``).

Bayesian assurance
    the probability that the posterior *will be* decisive, ``P(P(B > A | data) > threshold)``
    (or that the posterior interval will be narrower than ``width``), averaged over data sets
    simulated from the (posterior) predictive of a pilot: "assurance", the expected power
    under a design prior (O'Hagan & Stevens 2001, "Bayesian assessment of sample size for
    clinical trials of cost-effectiveness", Med. Decis. Making 21(3); Spiegelhalter, Abrams &
    Myles 2004, *Bayesian Approaches to Clinical Trials and Health-Care Evaluation*, §6.5).
    With a fitted Posterior, each simulated evaluation first draws the population parameters
    from the posterior; with fixed parameters assurance reduces to Bayesian power.

The task population (:class:`Population`) gives each system Beta marginals of per-task
rates, ``p_s ~ Beta(mu_s kappa_s, (1 - mu_s) kappa_s)`` with intra-task correlation
``rho_s = 1 / (1 + kappa_s)`` (so ``Var(p_s) = rho_s mu_s (1 - mu_s)``; Kish 1965),
coupled across systems on a shared task by a Gaussian copula with correlation ``r`` (tasks
hard for one system are hard for the other).

Fast posterior in the simulation loop (validated against full fits in
``benchmarks/decisions/decisions_plan.py``; numbers in ``benchmarks/decisions/``):

``"tasks"`` estimand
    a conjugate ``Beta(a0 + c, b0 + n - c)`` per task and system, with ``a0, b0`` an
    empirical-Bayes estimate of the system's task population (a stand-in for the partial
    pooling of ``BetaBinomialModel``; ``tasks_pooling="none"``: ``Beta(1, 1)``, the exact
    posterior of ``BetaBinomialModel(pooling="none")``); the task average of ``p_B - p_A``
    is approximated by a Normal with the summed Beta means and variances.
``"population"`` estimand
    the observed per-task rates ``c / n`` are treated as Normal draws around the population
    mean: paired, ``d_t = c_B / n - c_A / n`` gives the Student-t posterior
    ``t_{N-1}(mean d, s_d / sqrt(N))`` of the mean difference under the reference prior
    (Gelman et al., *Bayesian Data Analysis*, 3rd ed., §3.2); unpaired, the two means with
    a Welch-Satterthwaite t. Both include trial noise in ``s_d``.

The lesson of clustered evals (Miller 2024) comes out of the table: more trials per task shrink
only the trial terms, so the ``"tasks"`` assurance keeps rising with trials while the
``"population"`` assurance levels off at a value set by the number of tasks.

Simulated designs share random numbers: each simulated evaluation draws the largest task set
once and smaller designs use its first N tasks, and counts at more trials extend those at
fewer (``c(n2) = c(n1) + Bin(n2 - n1, p)``), so differences between designs are not
Monte Carlo noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import special, stats

from evalbayes._core.names import check_count, check_nonnegative, check_prob
from evalbayes.decisions._common import check_grid

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.data import EvalData
    from evalbayes.results._posterior import Posterior

__all__ = [
    "PlanResult",
    "Population",
    "design_sd",
    "fast_population_posterior",
    "fast_tasks_posterior",
    "plan",
    "prob_superior",
    "task_moments",
]

ESTIMANDS = ("tasks", "population")


# ----------------------------------------------------------------------------- population
@dataclass(frozen=True)
class Population:
    """Task population of a baseline A and a candidate B (module docstring).

    Attributes
    ----------
    mean_a, mean_b : float
        Population mean pass rates ``mu``.
    icc_a, icc_b : float
        Intra-task correlations ``rho = Var(p) / (mu (1 - mu))`` in [0, 1).
    correlation : float
        Gaussian-copula correlation of the two systems' rates on one task, in (-1, 1).
    draws : numpy.ndarray or None
        Optional ``(m, 4)`` draws of ``(mean_a, mean_b, icc_a, icc_b)`` from a posterior: the
        design prior of the assurance. None: the fixed values above.
    baseline, candidate : str
        Names, for reports.
    """

    mean_a: float
    mean_b: float
    icc_a: float
    icc_b: float
    correlation: float = 0.0
    draws: np.ndarray | None = field(default=None, repr=False)
    baseline: str = "A"
    candidate: str = "B"

    def __post_init__(self) -> None:
        for name in ("mean_a", "mean_b"):
            check_prob(getattr(self, name), name)
        for name in ("icc_a", "icc_b"):
            check_prob(getattr(self, name), name, open_low=False)
        if not -1.0 < float(self.correlation) < 1.0:
            raise ValueError(f"correlation must lie in (-1, 1), got {self.correlation!r}")
        if self.draws is not None:
            d = np.asarray(self.draws, dtype=np.float64)
            if d.ndim != 2 or d.shape[1] != 4 or d.shape[0] == 0:
                raise ValueError(f"draws must have shape (m, 4), got {d.shape}")
            if np.any((d[:, :2] <= 0) | (d[:, :2] >= 1) | (d[:, 2:] < 0) | (d[:, 2:] >= 1)):
                raise ValueError("draws: means must lie in (0, 1) and iccs in [0, 1)")

    @property
    def effect(self) -> float:
        """Population difference ``mean_b - mean_a``."""
        return self.mean_b - self.mean_a

    @classmethod
    def from_data(cls, data: EvalData, baseline: str, candidate: str) -> Population:
        """Moment estimates from pilot counts.

        ``mu`` and ``rho`` per system from :func:`~evalbayes.frequentist.
        intra_task_correlation` (``rho`` clamped to ``[0.001, 0.999]`` so the Beta exists);
        the copula correlation from Spearman's rank correlation ``r_s`` of the two systems'
        per-task rates on shared tasks, ``r = 2 sin(pi r_s / 6)`` (the Gaussian-copula
        relation; trial noise attenuates it, so paired plans are conservative).
        """
        from evalbayes.frequentist import intra_task_correlation

        systems = list(data.systems)
        for role, name in (("baseline", baseline), ("candidate", candidate)):
            if name not in systems:
                raise ValueError(f"unknown {role} {name!r}; the data have {systems}")
        n, c = data.n.values, data.c.values
        ia, ib = systems.index(baseline), systems.index(candidate)
        out = {}
        for key, i in (("a", ia), ("b", ib)):
            seen = n[i] > 0
            if seen.sum() < 2:
                raise ValueError(f"system {systems[i]!r} needs at least 2 observed tasks")
            itc = intra_task_correlation(n[i][seen], c[i][seen])
            mean = float(np.clip(itc.mean, 1e-3, 1 - 1e-3))
            rho = itc.rho if np.isfinite(itc.rho) else 0.5
            out[key] = (mean, float(np.clip(rho, 1e-3, 0.999)))
        both = (n[ia] > 0) & (n[ib] > 0)
        corr = 0.0
        if both.sum() >= 3:
            ra, rb = c[ia][both] / n[ia][both], c[ib][both] / n[ib][both]
            if np.ptp(ra) > 0 and np.ptp(rb) > 0:
                r_s = stats.spearmanr(ra, rb).statistic
                corr = float(np.clip(2 * np.sin(np.pi * r_s / 6), -0.99, 0.99))
        return cls(
            mean_a=out["a"][0], mean_b=out["b"][0], icc_a=out["a"][1], icc_b=out["b"][1],
            correlation=corr, baseline=baseline, candidate=candidate,
        )  # fmt: skip

    @classmethod
    def from_posterior(
        cls,
        posterior: Posterior,
        baseline: str,
        candidate: str,
        correlation: float | None = None,
    ) -> Population:
        """Design prior from a Beta-Binomial (``pooling="partial"``) or a formula fit.

        Each posterior draw of ``(mu, kappa)`` per system gives ``(mean, rho = 1 / (1 +
        kappa))``; point values are the posterior means. The copula correlation is not a
        model parameter (systems are independent in that model): it is given, or estimated
        from the fit's data as in :meth:`from_data`.
        """
        post = posterior.posterior
        if getattr(posterior.model, "name", None) == "formula":
            return cls._from_formula(posterior, baseline, candidate, correlation)
        if "mu" not in post or "kappa" not in post:
            raise ValueError(
                "from_posterior needs a fit with population parameters mu and kappa per "
                f"system (BetaBinomialModel, pooling='partial'); got {posterior.label}"
            )
        systems = [str(s) for s in post["system"].values]
        for role, name in (("baseline", baseline), ("candidate", candidate)):
            if name not in systems:
                raise ValueError(f"unknown {role} {name!r}; the fit has {systems}")
        mu = post["mu"].transpose("chain", "draw", "system").values.reshape(-1, len(systems))
        kappa = post["kappa"].transpose("chain", "draw", "system").values
        rho = 1.0 / (1.0 + kappa.reshape(-1, len(systems)))
        ia, ib = systems.index(baseline), systems.index(candidate)
        eps = 1e-6
        draws = np.column_stack(
            [
                np.clip(mu[:, ia], eps, 1 - eps), np.clip(mu[:, ib], eps, 1 - eps),
                np.clip(rho[:, ia], 0.0, 1 - eps), np.clip(rho[:, ib], 0.0, 1 - eps),
            ]
        )  # fmt: skip
        return cls._from_draws(posterior, baseline, candidate, draws, correlation)

    @classmethod
    def _from_draws(
        cls,
        posterior: Posterior,
        baseline: str,
        candidate: str,
        draws: np.ndarray,
        correlation: float | None,
    ) -> Population:
        """The design prior of ``(size, 4)`` draws of (mean_a, mean_b, icc_a, icc_b), with the
        data's paired correlation where none is given."""
        if correlation is None:
            correlation = cls.from_data(posterior.data, baseline, candidate).correlation
        means = draws.mean(axis=0)
        return cls(
            mean_a=float(means[0]), mean_b=float(means[1]), icc_a=float(means[2]),
            icc_b=float(means[3]), correlation=float(correlation), draws=draws,
            baseline=baseline, candidate=candidate,
        )  # fmt: skip

    @classmethod
    def _from_formula(
        cls,
        posterior: Posterior,
        baseline: str,
        candidate: str,
        correlation: float | None,
    ) -> Population:
        """Design prior from a formula fit: the Beta with the same first two moments as each
        system's distribution of per-task rates on a new task (the "population" estimand).

        Per draw, ``m1 = pass@1`` and ``m2 = pass^2 = E[p^2]`` of a new task give the mean
        ``m1`` and ``rho = (m2 - m1^2) / (m1 (1 - m1))`` (the Beta's intra-class correlation
        ``1 / (1 + kappa)``; method of moments, Johnson, Kotz and Balakrishnan, *Continuous
        Univariate Distributions* 2, 2nd ed., 1995, §25.4). Terms integrated as noise (runs)
        are folded into the per-task spread, so a run's shift of every task at once is not
        simulated: plans from a fit with a run term understate run-to-run noise.
        """
        systems = [str(s) for s in posterior.data.systems]
        for role, name in (("baseline", baseline), ("candidate", candidate)):
            if name not in systems:
                raise ValueError(f"unknown {role} {name!r}; the fit has {systems}")
        pair = [baseline, candidate]
        pass1 = posterior.curve("pass@k", [1], estimand="population").sel(system=pair, k=1)
        pass2 = posterior.curve("pass^k", [2], estimand="population").sel(system=pair, k=2)
        m1 = pass1.transpose("chain", "draw", "system").values.reshape(-1, 2)
        m2 = pass2.transpose("chain", "draw", "system").values.reshape(-1, 2)
        eps = 1e-6
        mean = np.clip(m1, eps, 1 - eps)
        rho = np.clip((m2 - m1**2) / (mean * (1 - mean)), 0.0, 1 - eps)
        draws = np.column_stack([mean[:, 0], mean[:, 1], rho[:, 0], rho[:, 1]])
        return cls._from_draws(posterior, baseline, candidate, draws, correlation)

    def parameters(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``(size, 4)`` parameter sets: posterior draws (with replacement) or the point."""
        if self.draws is None:
            point = [self.mean_a, self.mean_b, self.icc_a, self.icc_b]
            return np.tile(np.asarray(point, dtype=np.float64), (size, 1))
        pick = rng.integers(0, len(self.draws), size=size)
        return np.asarray(self.draws, dtype=np.float64)[pick]

    def sample_rates(
        self,
        rng: np.random.Generator,
        params: np.ndarray,
        n_tasks: int,
        paired: bool = True,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per-task rates ``(p_A, p_B)``, each ``(len(params), n_tasks)``.

        Paired: both systems on the same tasks (copula correlation); unpaired: independent
        task sets.
        """
        corr = self.correlation if paired else 0.0
        z1 = rng.standard_normal((len(params), n_tasks))
        z2 = corr * z1 + math.sqrt(1.0 - corr**2) * rng.standard_normal(z1.shape)
        pa = _beta_quantile(special.ndtr(z1), params[:, 0:1], params[:, 2:3])
        pb = _beta_quantile(special.ndtr(z2), params[:, 1:2], params[:, 3:4])
        return pa, pb


def _beta_quantile(u: np.ndarray, mean: np.ndarray, icc: np.ndarray) -> np.ndarray:
    """Quantile of ``Beta(mean kappa, (1 - mean) kappa)``, ``kappa = 1 / icc - 1``.

    ``icc = 0`` is the point mass at ``mean``.
    """
    mean = np.broadcast_to(mean, u.shape)
    icc = np.broadcast_to(icc, u.shape)
    out = np.array(mean, dtype=np.float64)
    spread = icc > 0
    kappa = 1.0 / icc[spread] - 1.0
    out[spread] = special.betaincinv(mean[spread] * kappa, (1 - mean[spread]) * kappa, u[spread])
    return out


def task_moments(population: Population, paired: bool, size: int = 100_000,
                 seed: int = 12345) -> tuple[float, float]:
    """``(Var(p_B - p_A), E[p_A (1 - p_A)] + E[p_B (1 - p_B)])`` at the point values.

    By Monte Carlo over ``size`` tasks of the population (unpaired: independent tasks, so
    the covariance drops out).
    """
    rng = np.random.default_rng(seed)
    params = np.array([[population.mean_a, population.mean_b, population.icc_a,
                        population.icc_b]])
    pa, pb = population.sample_rates(rng, params, size, paired=paired)
    pa, pb = pa[0], pb[0]
    return float(np.var(pb - pa)), float(np.mean(pa * (1 - pa)) + np.mean(pb * (1 - pb)))


def design_sd(population: Population, trials: int, estimand: str, paired: bool) -> float:
    """Per-task standard deviation ``sigma_d`` of the observed difference (module docstring).

    ``"population"``: ``sqrt(Var(p_B - p_A) + E[p_A(1 - p_A)]/n + E[p_B(1 - p_B)]/n)``, the
    task moments from :func:`task_moments`; ``"tasks"``: only the trial terms.
    """
    var_diff, binvar = task_moments(population, paired)
    return _sd(var_diff, binvar, trials, estimand)


def _sd(var_diff: float, binvar: float, trials: int, estimand: str) -> float:
    trial = binvar / trials
    return float(math.sqrt(trial if estimand == "tasks" else var_diff + trial))


# ----------------------------------------------------------------------------- fast posteriors
def _pooled_prior(c: np.ndarray, n: float) -> tuple[np.ndarray, np.ndarray]:
    """Empirical-Bayes Beta prior per row from the rows' task counts (last axis).

    ``mu = mean(c / n)`` and the moment estimate of the intra-task correlation of
    :func:`~evalbayes.frequentist.intra_task_correlation`, clamped to ``[0.01, 0.99]``;
    with one trial per task the correlation is not identified and ``kappa = e`` (the
    median of the Beta-Binomial model's ``log kappa ~ Normal(1, 1.5)`` prior) is used.
    """
    r = c / n
    n_tasks = r.shape[-1]
    mu = np.clip(r.mean(axis=-1), 0.5 / (n_tasks * n), 1 - 0.5 / (n_tasks * n))
    if n >= 2 and n_tasks >= 2:
        task_var = r.var(axis=-1, ddof=1) - (r * (1 - r)).mean(axis=-1) / (n - 1)
        rho = np.clip(task_var / (mu * (1 - mu)), 0.01, 0.99)
        kappa = 1.0 / rho - 1.0
    else:
        kappa = np.full(mu.shape, math.e)
    return (mu * kappa)[..., None], ((1 - mu) * kappa)[..., None]


def fast_tasks_posterior(
    ca: np.ndarray, cb: np.ndarray, n: int, pooling: str = "partial"
) -> tuple[np.ndarray, np.ndarray]:
    """Normal approximation to the posterior of the task-average ``p_B - p_A``.

    Tasks on the last axis. Per task and system a conjugate ``Beta(a0 + c, b0 + n - c)``:
    ``pooling="partial"`` (default) takes ``a0, b0`` from :func:`_pooled_prior`, an
    empirical-Bayes stand-in for the Beta-Binomial hierarchy (Casella 1985, "An
    introduction to empirical Bayes data analysis", Am. Stat. 39(2)); ``"none"`` uses
    ``Beta(1, 1)``, the exact posterior of ``BetaBinomialModel(pooling="none")``. Returns
    the mean and standard deviation of ``(1/N) sum_t (p_B,t - p_A,t)``.
    """
    if pooling not in ("partial", "none"):
        raise ValueError(f"pooling must be 'partial' or 'none', got {pooling!r}")
    ca, cb = np.asarray(ca, np.float64), np.asarray(cb, np.float64)
    n_tasks = ca.shape[-1]

    def moments(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a0, b0 = _pooled_prior(c, float(n)) if pooling == "partial" else (1.0, 1.0)
        a, b = a0 + c, b0 + n - c
        return a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1.0))

    ma, va = moments(ca)
    mb, vb = moments(cb)
    mean = (mb - ma).mean(axis=-1)
    sd = np.sqrt((va + vb).sum(axis=-1)) / n_tasks
    return mean, sd


def fast_population_posterior(
    ca: np.ndarray, cb: np.ndarray, n: int, paired: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Student-t approximation to the posterior of ``mu_B - mu_A`` (module docstring).

    Returns location, scale and degrees of freedom (tasks on the last axis, ``N >= 2``).
    """
    ra, rb = np.asarray(ca, np.float64) / n, np.asarray(cb, np.float64) / n
    n_tasks = ra.shape[-1]
    if n_tasks < 2:
        raise ValueError("the population estimand needs at least 2 tasks")
    if paired:
        d = rb - ra
        loc = d.mean(axis=-1)
        scale = d.std(axis=-1, ddof=1) / math.sqrt(n_tasks)
        df = np.full(loc.shape, n_tasks - 1.0)
        return loc, scale, df
    va = ra.var(axis=-1, ddof=1) / n_tasks
    vb = rb.var(axis=-1, ddof=1) / n_tasks
    loc = rb.mean(axis=-1) - ra.mean(axis=-1)
    scale = np.sqrt(va + vb)
    with np.errstate(invalid="ignore", divide="ignore"):
        df = (va + vb) ** 2 / ((va**2 + vb**2) / (n_tasks - 1))
    df = np.where(np.isfinite(df), np.maximum(df, 1.0), n_tasks - 1.0)
    return loc, scale, df


def prob_superior(loc: np.ndarray, scale: np.ndarray, df: np.ndarray | None = None) -> np.ndarray:
    """``P(D > 0)`` for ``D ~ loc + scale T_df`` (Normal when ``df`` is None).

    A zero scale gives 1, 0.5 or 0 by the sign of ``loc``.
    """
    loc, scale = np.asarray(loc, np.float64), np.asarray(scale, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(scale > 0, loc / scale, np.sign(loc) * np.inf)
    z = np.where(np.isnan(z), 0.0, z)
    if df is None:
        return special.ndtr(z)
    return stats.t.cdf(z, df)


# ----------------------------------------------------------------------------- planner
@dataclass(frozen=True)
class PlanResult:
    """Assurance and power over a grid of designs.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (estimand, tasks, trials): ``assurance`` (share of simulated evaluations
        whose posterior is decisive) and its Monte Carlo ``assurance_se``;
        ``correct`` / ``wrong`` (decisive and the simulated truth agrees / disagrees);
        ``power`` of the one-sided z-test at level ``1 - threshold`` for the population
        effect, ``mde`` at 80 % power, ``sd_d`` the per-task sd used, ``tasks_80`` the tasks
        needed for 80 % power at these trials (:func:`~evalbayes.frequentist.
        required_units`).
    population : Population
        The population simulated.
    threshold, target, width, paired, n_sims, seed
        Settings.
    """

    table: pd.DataFrame
    population: Population
    threshold: float
    target: str
    width: float | None
    paired: bool
    n_sims: int
    seed: int

    def tasks_needed(self, estimand: str, trials: int, assurance: float = 0.8,
                     column: str = "assurance") -> int | None:
        """Smallest tasks in the grid with ``column >= assurance`` (None if none reaches it)."""
        rows = self.table[(self.table["estimand"] == estimand) & (self.table["trials"] == trials)]
        if rows.empty:
            raise ValueError(f"no rows for estimand={estimand!r}, trials={trials}")
        hit = rows[rows[column] >= assurance]
        return None if hit.empty else int(hit["tasks"].min())

    def summary(self, assurance: float = 0.8) -> str:
        """Readable table plus the tasks needed per estimand and trials."""
        pop = self.population
        claim = (f"P({pop.candidate} > {pop.baseline}) > {self.threshold:g}"
                 if self.target == "superiority" else f"interval width < {self.width:g}")
        lines = [
            f"Plan: {pop.candidate} (B) vs {pop.baseline} (A), pass@1, "
            f"{'paired' if self.paired else 'unpaired'} tasks; decisive = {claim}",
            f"population: mean A {pop.mean_a:.3f}, B {pop.mean_b:.3f}, icc A {pop.icc_a:.3f}, "
            f"B {pop.icc_b:.3f}, copula r {pop.correlation:.2f}"
            + (f"; design prior: {len(pop.draws)} posterior draws" if pop.draws is not None
               else "; fixed parameters (Bayesian power)"),
            f"{self.n_sims} simulated evaluations per design (Monte Carlo s.e. in brackets)",
            "",
        ]
        with pd.option_context("display.width", 200, "display.max_rows", 500):
            cols = ["estimand", "tasks", "trials", "assurance", "assurance_se", "power", "mde"]
            lines.append(self.table[cols].to_string(index=False, float_format="{:.3f}".format))
        lines.append("")
        for est in self.table["estimand"].unique():
            for tr in sorted(self.table["trials"].unique()):
                need = self.tasks_needed(est, int(tr), assurance)
                text = f">{self.table['tasks'].max()} (not in grid)" if need is None else need
                lines.append(f"{est:>10}, {tr} trials/task: {text} tasks for "
                             f"{assurance:.0%} assurance")
        return "\n".join(lines)


def plan(
    source: EvalData | Posterior | Population,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    tasks: Sequence[int] | int = (5, 10, 20, 50, 100),
    trials: Sequence[int] | int = (1, 4, 16),
    estimands: Sequence[str] = ESTIMANDS,
    paired: bool = True,
    threshold: float = 0.95,
    target: str = "superiority",
    width: float | None = None,
    n_sims: int = 400,
    seed: int = 0,
    tasks_pooling: str = "partial",
) -> PlanResult:
    """Assurance and frequentist power of every (tasks, trials) design (module docstring).

    Parameters
    ----------
    source : EvalData, Posterior or Population
        Pilot counts (moment estimates, fixed parameters), a Beta-Binomial fit (its posterior
        draws are the design prior) or a stated population.
    baseline, candidate : str
        System names (A and B) for pilot data or a fit.
    tasks, trials : int or sequence of int
        The designs: tasks ``N`` (>= 2) and trials per task ``n`` (>= 1).
    estimands : sequence of {"tasks", "population"}
        Which posteriors to simulate.
    paired : bool
        Both systems on the same tasks (default) or on separate task sets.
    threshold : float
        Decisive means ``P(B > A | data) > threshold`` (``target="superiority"``).
    target : {"superiority", "width"}
        Or: the central ``threshold`` interval of ``B - A`` is narrower than ``width``.
    n_sims : int
        Simulated evaluations per design.
    seed : int
        Seed of every random draw.
    tasks_pooling : {"partial", "none"}
        Fast posterior of the ``"tasks"`` estimand (:func:`fast_tasks_posterior`).
    """
    from evalbayes.data import EvalData
    from evalbayes.frequentist import minimum_detectable_effect, required_units
    from evalbayes.results._posterior import Posterior

    if isinstance(source, Population):
        population = source
    elif isinstance(source, Posterior | EvalData):
        if baseline is None or candidate is None:
            raise ValueError("name the baseline and the candidate systems")
        if isinstance(source, Posterior):
            population = Population.from_posterior(source, baseline, candidate)
        else:
            population = Population.from_data(source, baseline, candidate)
    else:
        raise TypeError(f"source must be EvalData, Posterior or Population, got {type(source)}")
    task_grid = check_grid(tasks, "tasks", 2)
    trial_grid = check_grid(trials, "trials", 1)
    estimands = list(estimands)
    for est in estimands:
        if est not in ESTIMANDS:
            raise ValueError(f"estimand must be one of {ESTIMANDS}, got {est!r}")
    threshold = check_prob(threshold, "threshold")
    if target not in ("superiority", "width"):
        raise ValueError(f"target must be 'superiority' or 'width', got {target!r}")
    if target == "width" and (width is None or check_nonnegative(width, "width") == 0):
        raise ValueError("target='width' needs width > 0")
    n_sims = check_count(n_sims, "n_sims", 10)

    rng = np.random.default_rng(seed)
    params = population.parameters(rng, n_sims)
    n_max = task_grid[-1]
    pa, pb = population.sample_rates(rng, params, n_max, paired=paired)
    z_half = special.ndtri((1 + threshold) / 2)
    var_diff, binvar = task_moments(population, paired)
    rows = []
    ca = np.zeros(pa.shape, dtype=np.int64)
    cb = np.zeros(pb.shape, dtype=np.int64)
    done = 0
    for n in trial_grid:
        ca = ca + rng.binomial(n - done, pa)
        cb = cb + rng.binomial(n - done, pb)
        done = n
        for n_tasks in task_grid:
            sa, sb = ca[:, :n_tasks], cb[:, :n_tasks]
            truth_tasks = (pb[:, :n_tasks] - pa[:, :n_tasks]).mean(axis=1)
            truth_pop = params[:, 1] - params[:, 0]
            for est in estimands:
                if est == "tasks":
                    loc, scale = fast_tasks_posterior(sa, sb, n, tasks_pooling)
                    df = None
                    truth = truth_tasks
                else:
                    loc, scale, df = fast_population_posterior(sa, sb, n, paired)
                    truth = truth_pop
                if target == "superiority":
                    decisive = prob_superior(loc, scale, df) > threshold
                    correct = decisive & (truth > 0)
                else:
                    q = z_half if df is None else stats.t.ppf((1 + threshold) / 2, df)
                    decisive = 2 * q * scale < width
                    correct = decisive & (np.abs(truth - loc) <= q * scale)
                sd_d = _sd(var_diff, binvar, n, est)
                effect = abs(population.effect)
                alpha = 2 * (1 - threshold)  # two-sided level of the one-sided test
                z_a = special.ndtri(threshold)
                se = sd_d / math.sqrt(n_tasks)
                power = float(special.ndtr(effect / se - z_a)) if effect > 0 else float("nan")
                a_hat = float(decisive.mean())
                rows.append(
                    {
                        "estimand": est,
                        "tasks": n_tasks,
                        "trials": n,
                        "assurance": a_hat,
                        "assurance_se": math.sqrt(a_hat * (1 - a_hat) / n_sims),
                        "correct": float(correct.mean()),
                        "wrong": float((decisive & ~correct).mean()),
                        "power": power,
                        "mde": minimum_detectable_effect(se, alpha=alpha, power=0.8),
                        "sd_d": sd_d,
                        "tasks_80": (required_units(sd_d, effect, alpha=alpha, power=0.8)
                                     if effect > 0 else None),
                    }
                )
    table = pd.DataFrame(rows).sort_values(["estimand", "trials", "tasks"], ignore_index=True)
    return PlanResult(
        table=table, population=population, threshold=threshold, target=target,
        width=None if width is None else float(width), paired=paired, n_sims=n_sims, seed=seed,
    )  # fmt: skip
