"""Per-system smooth distribution of task success rates on a logit grid (g-modeling).

Each system ``s`` has its own distribution ``g_s`` of per-task success rates, supported on a
fixed grid of rates and smooth on the logit scale, with point masses at ``p = 0`` (tasks the
system never solves) and ``p = 1`` (tasks it always solves)::

    p[s, t] ~ g_s,   g_s(p_j) = softmax_j( sum_d coef[s, d] Q[j, d] )
    Q: Legendre polynomials in logit (the shape), local bumps in both tails, one column per atom
    c[s, t] ~ Binomial(n[s, t], p[s, t])
    coef[s, d] ~ N(0, sd_s^2),  sd_s = 1.25 if every task of s has one trial, else 3
    broken=True: task t broken (p[s, t] = 0 for every s), probability pi0 ~ Beta(*broken_prior)

Nodes: ``p_j = sigmoid(x_j)``, ``x_j`` evenly spaced on ``[-grid_limit, grid_limit]``
(default 57 nodes on [-14, 14], steps of 0.5 on the logit scale: rates from 8e-7 to
1 - 8e-7), plus the two atoms. The log-weights of the interior nodes are a polynomial in
``x`` (Legendre polynomials of degree 1..``degree`` in ``x / grid_limit``) plus
``tail_terms`` Gaussian bumps per tail (default 3, centred at ``x = +-4, +-7, +-10``, sd 1.5:
rates near 2e-2, 1e-3, 5e-5 and their mirror images); each atom has its own coefficient.
The polynomial is global, so without the bumps the mass a system puts between ``0`` and
``1 / n`` (or between ``1 - 1 / n`` and 1) is an extrapolation of its bulk, and a system whose
rates sit in a narrow bulk got none there: its own atom at ``p = 0`` absorbed every task it
never solved, and pass@k beyond ``n`` read too low with confidence (``benchmarks/validity/``:
HumanEval+ m = 64, k = 256-1024 covered 0.85-0.86 without the bumps). The bumps give each decade of
the tails its own weight, which the ``n`` trials constrain only through ``c = 0`` (or
``c = n``), so the intervals beyond ``k = n`` stay as wide as the data leave them.
This is Efron's g-modeling (B. Efron, "Empirical Bayes deconvolution
estimates", *Biometrika* 103, 2016, 1-20: a discrete prior on a grid with an exponential
family of log-weights spanned by a smooth basis, there fitted by penalised maximum
likelihood) with the penalty read as a Normal prior and the coefficients sampled: by default
by tempered sequential Monte Carlo, one system at a time (the systems are independent a
posteriori without broken tasks; :mod:`~evalbayes.models.rate_grid._smc`), by NUTS with
``method="nutpie"`` (the reference) and with broken tasks, which couple the systems.

Why: the Beta of :class:`~evalbayes.models.beta_binomial.BetaBinomialModel` and a
logit-normal of task effects (the retired task-effects model) fix the shape of the
rate distribution below ``1 / n``, and pass@k far beyond ``k = n`` is decided by that shape.
On real benchmarks neither shape holds (``benchmarks/validity/``): weak systems never solve
most tasks at any difficulty, rare-but-solvable tasks spread over decades of ``p``. A
smooth histogram lets the system's own trials decide the shape, and leaves the part they
cannot see (mass between ``0`` and ``1 / n``) as wide as the smoothness allows.

Likelihood (collapsed: the per-task rate is summed out exactly)::

    L[s, t] = sum_j g_s(p_j) Binomial(c[s, t] | n[s, t], p_j)

Cells of one system with the same ``(n, c)`` have the same likelihood, so the model sums
over distinct ``(s, n, c)`` rows with their counts as weights: the graph's size is the number
of distinct counts, not of cells. Inside the graph each row sums only over the nodes whose
binomial likelihood is within ``e^-200`` of the row's best node (with ~1100 trials a row
sees ~11 of the 59 nodes on average: on HumanEval+ 56k of 290k pairs and 7x faster gradients,
``benchmarks/speed/bench_rate_grid_gradient.py``). The nodes
left out carry at most ``e^-200`` of the likelihood in total, so the relative error of a row's
likelihood is at most ``e^-200 / g_s(p*)`` (``p*`` its best node): below double precision
unless ``log g_s`` at the row's best node falls below about -160 nats, a region the row's own
likelihood keeps the posterior out of.

Broken tasks (``broken=True``, off by default; two or more systems) are shared by the systems
and marginalised per task (BDA3 sec. 5; :mod:`~evalbayes.models.rate_grid._broken`)::

    L[t] = pi0 1[c[s, t] = 0 for every observed s] + (1 - pi0) prod_s L[s, t]

A task with a success adds ``log(1 - pi0)`` and its rows; only the cells of tasks without any
success are gathered into the per-task mixture. Every system's failures on a task are then
evidence that it is broken, which a system's own atom at ``p = 0`` cannot use.

Derived quantities
------------------
``"tasks"``: with broken tasks, each task is broken with its conditional probability given the
draw (:meth:`RateGridModel.broken_probability`); otherwise each cell's rate is drawn from its exact
conditional posterior given a draw of ``g_s``: ``P(p = p_j | c, n) proportional to
g_s(p_j) Binomial(c | n, p_j)``; ``f(p)`` is averaged over the system's tasks.

``"population"`` (tasks like these), three choices:

* ``population="independent"``: a new task, broken with probability ``pi0`` (0 without broken
  tasks), else drawn from ``g_s``: ``pi0 f(0) + (1 - pi0) sum_j g_s(p_j) f(p_j)``, exact per
  draw. Each system's ``g_s`` is estimated alone, so a difference of two systems ignores that
  they ran the same tasks (unpaired: 1.58x the paired bootstrap's width on Terminal-Bench).
* ``population="bayesian-bootstrap"``: the task population is the Bayesian bootstrap of the
  observed tasks (Rubin 1981): per draw, weights ``w ~ Dirichlet(1, ..., 1)`` over the tasks,
  the same for every system, and pass@k is ``sum_t w_t f(p[s, t])`` over the system's
  observed tasks with the rate draws above. A new task is one of the observed tasks *with all
  its systems' rates together*, so a difference moves with the weights by the per-task
  differences: paired. With few tasks it covers like the task bootstrap (too narrow at
  10-30 tasks on real data, ``benchmarks/validity/``).
* ``population="paired"`` (default): each system's draws are the ``"independent"`` draws,
  reordered per ``(system, k)`` to the ranks of a Bayesian bootstrap of the tasks' posterior
  means ``E[(1 - P(t broken)) E[f(p[s, t]) | g_s, n, c] | data]`` (``P = 0`` without)
  (:meth:`RateGridModel.row_expectations`, :attr:`RateGridModel.pairing_reference`;
  the Schaake shuffle, :func:`~evalbayes.models._base.couple_to_reference`): each system's
  interval is the grid's, and the systems move together as their results on the shared tasks
  do, so differences are paired. One draw's values at different ``k`` are then not one curve
  (quantiles per ``k`` are unaffected). The bootstrap carries ``unseen_tasks`` (default 4)
  tasks' weight of unseen ones on which the systems are independent (a Dirichlet-process
  posterior of the task population, :func:`~evalbayes.models._base.unseen_task_reference`):
  the pairing's correlation is the observed tasks' times ``N / (N + 4)``, so with 10-20 tasks
  the difference's interval widens toward the unpaired one (the Bayesian bootstrap of 10
  tasks understates how different the next tasks can be), and with hundreds it is unchanged.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import xarray as xr
from numpy.polynomial import legendre

from evalbayes._core.names import (
    METRICS,
    SAMPLER_DEFAULTS,
    Method,
    check_count,
    check_coupling,
    check_metric,
    check_nonnegative,
    check_population,
)
from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig, padded_size
from evalbayes.metrics._pass import prob_curve
from evalbayes.models._base import (
    Model,
    ModelInputs,
    RowExpectations,
    binomial_log_choose,
    population_pairing_of,
    require_observed,
)
from evalbayes.models.rate_grid._broken import (
    add_broken_task_mixture,
    all_zero_tasks,
    broken_log_odds,
    cell_pieces,
    check_broken_prior,
    task_log_likelihood,
)
from evalbayes.models.rate_grid._smc import SystemRows, smc_posterior

__all__ = ["REPEATED_TRIAL_COEF_PRIOR", "SINGLE_TRIAL_COEF_PRIOR", "RateGridBase",
           "RateGridModel", "auto_coef_prior", "grid_log_likelihood"]

_WORK = 8_000_000  # numbers per temporary (draws x cells x nodes) array
_BLOCK = 131_072  # numbers per block of the passes over log g_s (1 MiB: in cache)
#: Numbers of ``g`` per call of the "tasks" kernel (32 MiB; at least 64 draws): each call
#: starts its threads anew, 10 ms a call on a loaded machine, so a few calls, not one per block.
_KERNEL_BLOCK = 4_194_304
#: Nodes whose binomial likelihood is below ``e^-_PRUNE`` of the row's best are left out of the
#: graph's sums (module docstring: relative error at most ``e^-_PRUNE / g_s(p*)``).
_PRUNE = 200.0
#: ``coef_prior="auto"``: the prior sd of a system with exactly one trial on every observed
#: task (the implied prior of its mean rate uniform to within 0.01 at every decile), and of
#: any other system (``RateGridBase``'s ``coef_prior`` gives the figures).
SINGLE_TRIAL_COEF_PRIOR = 1.25
REPEATED_TRIAL_COEF_PRIOR = 3.0


def auto_coef_prior(n: np.ndarray) -> np.ndarray:
    """Per-system prior sd of the rate grid's coefficients under ``coef_prior="auto"``.

    ``n`` is the trials per cell, shape (system, task), 0 where unobserved. A system whose
    observed cells all have ``n = 1`` gets :data:`SINGLE_TRIAL_COEF_PRIOR` (1.25): its data
    inform only its mean rate, and at 1.25 the implied prior of that mean is about uniform.
    Any other system (one cell with ``n >= 2`` is enough) gets
    :data:`REPEATED_TRIAL_COEF_PRIOR` (3). Returns shape (system,).
    """
    n = np.asarray(n)
    if n.ndim != 2:
        raise ValueError(f"n must be a (system, task) array, got shape {n.shape}")
    single = ((n == 1) | (n == 0)).all(axis=1) & (n == 1).any(axis=1)
    return np.where(single, SINGLE_TRIAL_COEF_PRIOR, REPEATED_TRIAL_COEF_PRIOR)


def grid_log_likelihood(n: np.ndarray, c: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """``log Binomial(c | n, p_j)`` for every cell and node, shape ``(*n.shape, len(rates))``.

    Exact at the atoms: ``p = 0`` gives 0 for ``c = 0`` and ``-inf`` otherwise, ``p = 1``
    gives 0 for ``c = n`` and ``-inf`` otherwise (no ``0 * log 0``).
    """
    n = np.asarray(n, dtype=float)[..., None]
    c = np.asarray(c, dtype=float)[..., None]
    p = np.asarray(rates, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        success = np.where(c > 0, c * np.log(p), 0.0)
        failure = np.where(n - c > 0, (n - c) * np.log1p(-p), 0.0)
    return binomial_log_choose(n, c) + success + failure


def log_normalise(logits: np.ndarray) -> np.ndarray:
    """``logits - logsumexp(logits, axis=-1, keepdims=True)``, in place in ``logits``.

    The same arithmetic as :func:`scipy.special.logsumexp` (SciPy >= 1.15: the largest
    term ``a_max`` of each row taken out of the sum, ``lse = log1p(s / m) + log(m) + a_max``
    with ``s`` the sum of ``exp(a - a_max)`` over the other terms and ``m`` how many terms
    equal ``a_max``), so the same numbers to the bit (tested), without its copies and
    generic masking: four passes over the array instead of about a dozen (Blanchard, Higham
    & Higham 2021, *IMA J. Numer. Anal.* 41(4), on the shifted log-sum-exp). Rows of finite
    numbers only (the rate grid's ``Q c``).

    A C-contiguous array is taken in blocks of :data:`_BLOCK` numbers, each done before the
    next, so the passes run in cache and the temporaries are the block's, not the array's
    (SWE-bench Verified's ``log g_s``, 4000 x 123 x 59 = 29M numbers: 232 MB per full-size
    temporary). Every step is elementwise or per row, so the numbers do not depend on the
    blocks.
    """
    support = logits.shape[-1] if logits.ndim else 1
    if not logits.flags.c_contiguous or logits.size <= _BLOCK or support == 0:
        return _log_normalise_rows(logits)
    rows = logits.reshape(-1, support)  # a view: the blocks write into logits
    width = max(1, _BLOCK // support)
    buffer = np.empty((width, support))
    for start in range(0, rows.shape[0], width):
        block = rows[start:start + width]
        _log_normalise_rows(block, buffer[: block.shape[0]])
    return logits


def _log_normalise_rows(logits: np.ndarray, shifted: np.ndarray | None = None) -> np.ndarray:
    """:func:`log_normalise` of every row at once, in place; ``shifted``: scratch of
    ``logits``' shape (allocated when None)."""
    a_max = logits.max(axis=-1, keepdims=True)
    at_max = logits == a_max
    m = at_max.sum(axis=-1, keepdims=True, dtype=float)
    shifted = np.subtract(logits, a_max, out=shifted)
    np.exp(shifted, out=shifted)
    np.putmask(shifted, at_max, 0.0)  # SciPy sets these terms to -inf before the exp
    total = shifted.sum(axis=-1, keepdims=True)
    total = np.where(total == 0, total, total / m)
    logits -= np.log1p(total) + np.log(m) + a_max
    return logits


#: Within :func:`shared_log_weights`: ``id(model) -> (coef array, log g_s, model)``.
_SHARED_LOG_WEIGHTS: ContextVar[dict[Any, tuple[Any, ...]] | None] = ContextVar(
    "rate_grid_shared_log_weights", default=None
)


@contextlib.contextmanager
def shared_log_weights() -> Iterator[None]:
    """Within the block, :meth:`RateGridBase.log_weights` of one posterior is computed once.

    A summary asks for ``log g_s`` five times (the "tasks" draws, and per metric the
    population curve and the rows' conditional expectations of the pairing), each a
    ``(chain, draw, system, support)`` softmax (0.2 CPU-s on SWE-bench Verified's 4000 x 123
    x 59, in cache-sized blocks; 1.2 CPU-s as whole-array passes); the block keeps the first
    and hands it out read-only. ``g_s = exp(log g_s)`` is not kept: its users take it a block
    of draws at a time, in cache, where a kept copy would be another 232 MB of fresh pages
    (which cost more system time than the ``exp``). The rows' conditional
    expectations (:meth:`RateGridBase.row_expectations`) are kept too, computed for every
    metric from one pass over the rows' conditionals (their exps are most of the cost; each
    metric's numbers are those of a call for it alone). Nested blocks share the outermost
    one; the arrays are released when it ends.
    """
    if _SHARED_LOG_WEIGHTS.get() is not None:
        yield
        return
    token = _SHARED_LOG_WEIGHTS.set({})
    try:
        yield
    finally:
        _SHARED_LOG_WEIGHTS.reset(token)


@dataclass(frozen=True)
class RateGridBase(Model):
    """The logit grid and smooth per-system rate distribution ``g_s`` that the rate-grid models
    share (fields, ``g_s`` draws, the data check and the sampling hook); the models add their
    likelihood and derived quantities.

    Parameters
    ----------
    degree : int
        Degree of the polynomial log-density on the logit scale (default 5: Efron's choice of
        five degrees of freedom). Higher degrees allow more modes.
    coef_prior : float or "auto"
        Prior sd of every coefficient of ``log g_s``: a positive number for every system, or
        ``"auto"`` (default), which picks it per system from the trials per task
        (:meth:`system_coef_prior`): ``1.25`` for a system with exactly one trial on every
        task it was observed on, ``3`` for any other (one task with two trials or more is
        enough). The trials per task are the design, not the outcomes, so the prior does not
        look at the results.

        Why two values. With ``3`` the log-weights may vary by tens of nats over the grid,
        so a system whose rates all sit near one value is reachable; but the implied prior of
        the system's mean rate is U-shaped (24.5 % below 0.05 and as much above 0.95). With
        one trial per task the data show only that mean (the spread of the tasks' rates
        around it is unidentified), so the U-shape is all the prior contributes, and at
        10-20 tasks it shows: a system that solved 10 of 10 got a population pass@1 interval
        ``[0.84, 1]`` (Wilson ``[0.72, 1]``), and on the real-data paired protocol
        (``benchmarks/validity/README.md``, SWE-bench Verified, MBPP+, OpenCompass and
        CRUXEval, 10 tasks, 7,920 pairs) ``P(B > A)`` had ECE 0.020 and 2.5x the expected
        wrong sign at ``P > 0.975``, single-system coverage 0.924. ``1.25`` makes the mean's
        prior uniform to within 0.01 at every decile (4 % below 0.05); 10 of 10 solved then
        gives ``[0.71, 0.99]``, and this default on the same protocol (15,840 pairs at 10
        tasks, two sets of draws) gave ECE 0.012 (0.008 and 0.017 on the two sets), wrong
        sign 1.3x expected, single-system coverage 0.944, pair coverage 0.96-0.97 at 10-100
        tasks at 1.04-1.16x the paired bootstrap's width. With many trials per task the
        data do show the shape, and there ``1.25``'s flatter shape prior pulls the
        population estimand toward a flat logit grid (MATH500, 10 tasks x 16-64 trials,
        population pass@k coverage 0.72-0.89 against 0.86-1.00 at ``3``), so repeated trials
        keep ``3``.

        Mixed designs (some tasks with one trial, some with more) take ``3``. Tasks with
        two trials or more are the only evidence on the spread of the rates, and where there
        is such evidence only ``3`` has held the population estimand; ``1.25`` was measured
        only where every task has one trial, and the rule keeps to what was measured (a
        mixed design was not). A system run mostly once per task with a few repeats can set
        ``coef_prior=1.25`` by hand.
    grid_limit : float
        The grid spans ``[-grid_limit, grid_limit]`` on the logit scale (default 14).
    grid_nodes : int
        Interior nodes (default 57: steps of 0.5 logits).
    atoms : bool
        Point masses at ``p = 0`` and ``p = 1`` (default True).
    tail_terms : int
        Gaussian bumps in the log-weights per tail (default 3; 0: the polynomial alone), centred
        at ``+-grid_limit * (2/7 ... 5/7)`` on the logit scale (``+-4, 7, 10`` for the default
        grid) with sd ``grid_limit * 3 / 28`` (1.5): each decade of the tails gets its own
        weight instead of the bulk's extrapolation (module docstring).
    """

    degree: int = 5
    coef_prior: float | str = "auto"
    grid_limit: float = 14.0
    grid_nodes: int = 57
    atoms: bool = True
    tail_terms: int = 3

    def __post_init__(self) -> None:
        if not (isinstance(self.coef_prior, str) and self.coef_prior == "auto"):
            value = self.coef_prior
            if (isinstance(value, (bool, str)) or not isinstance(value, (int, float, np.number))
                    or not (np.isfinite(value) and value > 0)):
                raise ValueError(f'coef_prior must be a positive number or "auto", got '
                                 f"{value!r}")
        value = self.grid_limit
        if isinstance(value, bool) or not (np.isfinite(value) and value > 0):
            raise ValueError(f"grid_limit must be a positive number, got {value!r}")
        if isinstance(self.degree, bool) or int(self.degree) != self.degree or self.degree < 1:
            raise ValueError(f"degree must be an integer >= 1, got {self.degree!r}")
        if (isinstance(self.tail_terms, bool) or int(self.tail_terms) != self.tail_terms
                or self.tail_terms < 0):
            raise ValueError(f"tail_terms must be an integer >= 0, got {self.tail_terms!r}")
        if (isinstance(self.grid_nodes, bool) or int(self.grid_nodes) != self.grid_nodes
                or self.grid_nodes <= self.degree):
            raise ValueError(
                f"grid_nodes must be an integer > degree ({self.degree}), got {self.grid_nodes!r}"
            )

    def system_coef_prior(self, n: np.ndarray) -> np.ndarray:
        """Each system's prior sd of its coefficients, shape (system,), from the trials per
        cell ``n`` (system, task; 0 where unobserved): ``coef_prior`` for every system when
        it is a number; with ``"auto"``, :func:`auto_coef_prior` (``1.25`` for a system with
        one trial on every observed task, ``3`` otherwise; ``coef_prior`` above says why)."""
        n = np.asarray(n)
        if isinstance(self.coef_prior, str):
            return auto_coef_prior(n)
        return np.full(n.shape[0], float(self.coef_prior))

    # ------------------------------------------------------------------ the grid
    @property
    def logits(self) -> np.ndarray:
        """Interior nodes on the logit scale."""
        return np.linspace(-self.grid_limit, self.grid_limit, int(self.grid_nodes))

    @property
    def rates_grid(self) -> np.ndarray:
        """Support of every ``g_s``: ``[0,] sigmoid(logits) [, 1]``."""
        from scipy.special import expit  # imported when used (issue 26)
        inner = expit(self.logits)
        return np.concatenate([[0.0], inner, [1.0]]) if self.atoms else inner

    @property
    def tail_centres(self) -> np.ndarray:
        """Logit centres of the tail bumps, low tail then high tail (empty without)."""
        if self.tail_terms == 0:
            return np.zeros(0)
        upper = self.grid_limit * np.linspace(2 / 7, 5 / 7, int(self.tail_terms))
        return np.concatenate([-upper[::-1], upper])

    @property
    def basis(self) -> np.ndarray:
        """``Q``, shape (support, coefficients): Legendre polynomials of degree 1..degree in
        ``logit / grid_limit`` on the interior, then the tail bumps
        ``exp(-(logit - centre)^2 / (2 sd^2))`` (both 0 at the atoms), then one indicator
        column per atom. No constant column: the softmax absorbs it."""
        x = self.logits
        z = x / self.grid_limit
        poly = [legendre.legval(z, np.eye(d + 1)[d]) for d in range(1, self.degree + 1)]
        sd = self.grid_limit * 3 / 28
        bumps = [np.exp(-0.5 * ((x - centre) / sd) ** 2) for centre in self.tail_centres]
        inner = np.stack(poly + bumps, axis=1)
        if not self.atoms:
            return inner
        basis = np.zeros((len(x) + 2, inner.shape[1] + 2))
        basis[1:-1, : inner.shape[1]] = inner
        basis[0, -2] = 1.0
        basis[-1, -1] = 1.0
        return basis

    def log_weights(self, posterior: xr.Dataset) -> np.ndarray:
        """``log g_s(p_j)`` per draw, shape (chain, draw, system, support).

        Inside :func:`shared_log_weights` the array is computed once per posterior and
        model and handed out read-only to every later call (the same numbers: it is the
        same computation, not repeated); elsewhere a fresh array per call.
        """
        coef = posterior["coef"].transpose("chain", "draw", "system", "term").values
        memo = _SHARED_LOG_WEIGHTS.get()
        if memo is not None:
            kept = memo.get(id(self))
            if kept is not None and kept[0] is coef:
                return kept[1]
        # Q^T contiguous: the per-draw products skip a transposed read (3x faster, same numbers)
        out = log_normalise(coef @ np.ascontiguousarray(self.basis.T))
        if memo is not None:
            out.setflags(write=False)  # shared: no caller may change it in place
            memo[id(self)] = (coef, out, self)  # the model and coef are kept alive with it
        return out

    def curve(self, *args: Any, **kwargs: Any) -> xr.DataArray:
        """:meth:`Model.curve`, with ``log g_s`` computed once (:func:`shared_log_weights`)."""
        with shared_log_weights():
            return super().curve(*args, **kwargs)

    def curves(self, *args: Any, **kwargs: Any) -> dict[str, xr.DataArray]:
        """:meth:`Model.curves`, with ``log g_s`` computed once (:func:`shared_log_weights`)."""
        with shared_log_weights():
            return super().curves(*args, **kwargs)

    def sharing(self) -> contextlib.AbstractContextManager[None]:
        """A block within which derived quantities share ``log g_s`` and the rows'
        conditional expectations (:func:`shared_log_weights`): what a summary of several
        estimands opens around its curves."""
        return shared_log_weights()

    def rate_distribution(self, posterior: xr.Dataset) -> xr.DataArray:
        """Posterior draws of each system's rate distribution ``g_s`` (probabilities summing to
        1 over ``rate``), dims (chain, draw, system, rate): what the fit believes about how its
        tasks' success rates are spread, including the atoms at 0 and 1."""
        return xr.DataArray(
            np.exp(self.log_weights(posterior)),
            dims=("chain", "draw", "system", "rate"),
            coords={
                "chain": posterior["chain"].values,
                "draw": posterior["draw"].values,
                "system": posterior["system"].values,
                "rate": self.rates_grid,
            },
            name="g",
        )

    # ------------------------------------------------------------------ data
    @staticmethod
    def check_data(data: EvalData) -> None:
        """Every system observed at least once."""
        require_observed(data)

    # ------------------------------------------------------------------ inference
    def sample(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """Sequential Monte Carlo per system (``method="smc"``, :mod:`._smc`) or the
        template's NUTS run, after warning when every cell has at most one trial."""
        if data.n.values.max() <= 1:
            warnings.warn(_SINGLE_TRIAL_TEXT.format(name=self.name), UserWarning, stacklevel=4)
        if sampler.method == "smc":
            groups = self._sample_smc(data, sampler)
        else:
            groups = super().sample(data, sampler)
        groups["posterior"] = groups["posterior"].assign_coords(
            term=np.arange(self.basis.shape[1])
        )
        return groups

    def _sample_smc(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """Each system's coefficients by tempered SMC on its distinct ``(n, c)`` rows (their
        ``(row, node)`` pairs pruned as in the graph), ``chains x draws`` particles split
        into pseudo-chains (:func:`~._smc.smc_posterior`)."""
        n, c = data.n.values, data.c.values
        rows, row_of_cell = _row_table(n, c)
        weight = np.bincount(row_of_cell[row_of_cell >= 0], minlength=len(rows))
        loglik = grid_log_likelihood(rows[:, 1], rows[:, 2], self.rates_grid)
        bounds = np.searchsorted(rows[:, 0], np.arange(n.shape[0] + 1))
        per_system = [
            SystemRows.from_loglik(loglik[lo:hi], weight[lo:hi], _PRUNE)
            for lo, hi in itertools.pairwise(bounds)
        ]
        labels = list(data.dataset["system"].values)
        groups = smc_posterior(per_system, labels, self.basis, self.system_coef_prior(n),
                               sampler.chains, sampler.draws, sampler.seed,
                               client=sampler.client, n_workers=sampler.n_workers)
        groups["posterior"] = self.label_dims(groups["posterior"], data)
        groups["sample_stats"] = groups["sample_stats"].assign_coords(system=labels)
        return groups


@dataclass(frozen=True)
class RateGridModel(RateGridBase):
    """Per-system smooth rate distribution on a logit grid, optionally with tasks broken for
    every system (module docstring; maths in models/README.md).

    Parameters
    ----------
    degree, coef_prior, grid_limit, grid_nodes, atoms, tail_terms
        The grid (:class:`RateGridBase`): polynomial degree of ``log g_s`` (default 5), prior
        sd of its coefficients (``"auto"``: 1.25 for a system with one trial on every task, 3
        otherwise; the same per-system value on every sampling path, with ``broken=True``,
        and in :meth:`prior_draws` / :meth:`simulate_prior`), logit span (14), interior nodes
        (57), atoms at 0 and 1, bumps per tail (3).
    population : {"paired", "independent", "bayesian-bootstrap"}
        What "tasks like these" means (module docstring): each system's ``g_s`` with the
        systems paired through the shared tasks (default), ``g_s`` alone (unpaired), or the
        Bayesian bootstrap of the observed tasks (paired).
    unseen_tasks : float
        ``population="paired"``: the weight, in tasks, of the tasks not yet seen in the
        pairing (the concentration ``alpha >= 0`` of a Dirichlet-process posterior of the task
        population, :func:`~evalbayes.models._base.unseen_task_reference`). The systems are
        paired through the ``N`` observed tasks and independent on the unseen ones, so the
        correlation of their draws is the observed tasks' times ``N / (N + alpha)``: looser
        with 10 tasks, unchanged with hundreds. 0 is the Bayesian bootstrap (too tight at
        10-20 tasks). Default 4, chosen on real benchmarks (``benchmarks/validity/``, paired
        comparisons: coverage of the pass@1 difference at 10 / 20 / 50 tasks 0.85 / 0.93 /
        0.94 with 0, 0.91 / 0.96 / 0.95 with 4, width 1.21 / 1.09 / 1.05x the paired
        bootstrap's). With ``coupling="copula"``: the copula's prior weight, in
        tasks, of uncorrelated results (> 0).
    coupling : {"dirichlet", "copula", "dirichlet-copula"}
        ``population="paired"``: what the pairing's ranks come from. ``"dirichlet"``
        (default): the Dirichlet-process reference above, the unseen tasks independent.
        ``"copula"``: a Gaussian copula of the systems' task values (normal scores of each
        task's posterior mean) whose correlation matrix is drawn per draw from its posterior
        given the observed tasks (:func:`~evalbayes.models._base.copula_reference`): the
        coupling carries its own uncertainty, wide with few tasks, the observed one with
        many. ``"dirichlet-copula"``: the Dirichlet-process reference with its unseen tasks
        coupled by that copula. ``benchmarks/validity/`` compares them.
    broken : bool
        A task is broken (``p = 0`` for every system) with probability ``pi0``, marginalised
        per task, so that every system's failures on it count (default False; with one system
        it is left out: a broken task and the system's own atom at 0 are then the same thing).
        Off by default because the systems' rate distributions are independent: a task hard
        for every system, which real benchmarks have, looks to this model like a broken one,
        and with few trials or systems the mixture declares such tasks broken and pass@k far
        beyond ``n`` too low (``benchmarks/validity/``, broken tasks). With many systems and trials
        (HumanEval+: 49 x ~1100) it finds the broken tasks exactly.
    broken_prior : (float, float)
        Beta prior of ``pi0``. Default Beta(1, 9) (mean 0.1).
    """

    name: ClassVar[str] = "rate-grid"
    keeps_curves: ClassVar[bool] = True

    population: str = "paired"
    unseen_tasks: float = 4.0
    coupling: str = "dirichlet"
    broken: bool = False
    broken_prior: tuple[float, float] = (1.0, 9.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_population(self.population)
        check_nonnegative(self.unseen_tasks, "unseen_tasks")
        check_coupling(self.coupling)
        if self.coupling == "copula" and self.unseen_tasks == 0:
            raise ValueError("coupling='copula' needs unseen_tasks > 0: there it is the prior "
                             "weight, in tasks, of uncorrelated results in the copula")
        if not isinstance(self.broken, bool):
            raise ValueError(f"broken must be true or false, got {self.broken!r}")
        check_broken_prior(self.broken_prior)

    def has_broken(self, n_system: int) -> bool:
        """Whether the fit has the broken-task mixture (``broken=True`` and two or more
        systems)."""
        return self.broken and n_system >= 2

    @property
    def default_method(self) -> Method:
        """``"smc"`` (tempered sequential Monte Carlo, one small run per system: the systems
        are independent a posteriori), or nutpie with broken tasks, which couple them."""
        return SAMPLER_DEFAULTS["method"] if self.broken else "smc"

    def sample(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """:meth:`RateGridBase.sample`; ``method="smc"`` needs systems that share nothing."""
        if sampler.method == "smc" and self.has_broken(data.n.shape[0]):
            raise ValueError(
                "method='smc' samples each system alone; with broken=True the shared broken "
                "tasks couple the systems: use method='nutpie'"
            )
        return super().sample(data, sampler)

    @property
    def population_pairing(self) -> str:
        """``"coupled"``, ``"none"`` or ``"bootstrap"`` for ``population`` ``"paired"``,
        ``"independent"`` or ``"bayesian-bootstrap"``."""
        return population_pairing_of(self.population)

    @property
    def pairing_concentration(self) -> float:
        """``unseen_tasks`` (the template's :meth:`Model.pairing_concentration`)."""
        return float(self.unseen_tasks)

    @property
    def pairing_coupling(self) -> str:
        """``coupling`` (the template's :meth:`Model.pairing_coupling`)."""
        return self.coupling

    @property
    def pairing_reference(self) -> str:
        """``"posterior-mean"``: the pairing's ranks weigh each task's posterior mean
        ``E[f(p[s, t]) | data]`` (:func:`~evalbayes.models._base.posterior_mean_rows`), as the
        Beta-Binomial's do. A draw's conditional means also move with that system's own
        ``g_s``, which no other system shares: ranked, that noise loosened the coupling, most
        where it is strongest (paired simulation, 40 tasks, correlation 0.9: 1.22x the paired
        task bootstrap's width with per-draw ranks, 1.11x with posterior means; real
        benchmarks at 10-100 tasks: coverage within 0.006 of per-draw ranks, 0.01-0.02x
        narrower, calibration of P(B > A) alike; ``benchmarks/validity/``, 2026-12-07)."""
        return "posterior-mean"

    @property
    def description(self) -> str:
        """Name, population choice and broken tasks."""
        return f"{self.name} (population={self.population}, broken={self.broken})"

    def inputs(self, data: EvalData) -> ModelInputs:
        """Distinct ``(system, n, c)`` rows with their cell counts as weights, and the
        ``(row, node)`` pairs of each row's sum with their log-likelihoods (relative to the
        row's best node; pairs below ``-200`` left out, module docstring). Rows are padded to
        :func:`padded_size` (``row_real`` 0, weight 0), pairs too (on the last pad row, of
        which there is always one).

        With broken tasks the weights count only the cells of tasks with a success; the cells
        of tasks without any (``zero_*``: the row of each, its task among those, padded) enter
        the per-task mixture."""
        self.check_data(data)
        n, c = data.n.values, data.c.values
        rows, row_of_cell = _row_table(n, c)
        broken = self.has_broken(n.shape[0])
        counted = (row_of_cell >= 0)
        zero_tasks = np.flatnonzero(all_zero_tasks(n, c)) if broken else np.zeros(0, int)
        counted[:, zero_tasks] = False
        weight = np.bincount(row_of_cell[counted], minlength=len(rows)).astype(float)
        size = padded_size(len(rows) + 1)
        pad = size - len(rows)
        loglik = grid_log_likelihood(rows[:, 1], rows[:, 2], self.rates_grid)
        loglik -= loglik.max(axis=1, keepdims=True)
        pair_row, pair_node = np.nonzero(loglik > -_PRUNE)
        pairs = padded_size(len(pair_row))
        support = len(self.rates_grid)
        values: dict[str, Any] = {
            "row_w": np.concatenate([weight, np.zeros(pad)]),
            "row_real": np.concatenate([np.ones(len(rows)), np.zeros(pad)]),
            "pair_row": np.pad(pair_row, (0, pairs - len(pair_row)),
                               constant_values=size - 1).astype(np.int64),
            # (system, node) of each pair, flat: one 1-d gather of log g and its scatter-add
            "pair_g": np.pad(rows[pair_row, 0] * support + pair_node,
                             (0, pairs - len(pair_row))).astype(np.int64),
            "pair_ll": np.pad(loglik[pair_row, pair_node], (0, pairs - len(pair_row))),
        }
        # the prior sds: one constant in the graph when the systems share one (so a fit with
        # coef_prior="auto" and every system at 3 compiles the graph of coef_prior=3), else a
        # pm.Data vector, swapped like the counts
        sds = self.system_coef_prior(n)
        prior_key: float | str = float(sds[0]) if np.all(sds == sds[0]) else "per-system"
        if prior_key == "per-system":
            values["coef_sd"] = sds
        key = (n.shape[0], size, pairs, prior_key)
        if not broken:
            return ModelInputs(values=values, shape_key=key)
        zero_s, zero_j = np.nonzero(row_of_cell[:, zero_tasks] >= 0)
        n_cells, n_zero = padded_size(max(1, len(zero_s))), padded_size(max(1, len(zero_tasks)))
        # Pads: weight 0 in tasks flagged all-zero with no cells, whose mixture term is
        # log(pi0 + (1 - pi0)) = 0.
        values.update(
            zero_row=np.pad(row_of_cell[zero_s, zero_tasks[zero_j]], (0, n_cells - len(zero_s))),
            zero_task=np.pad(zero_j, (0, n_cells - len(zero_s))).astype(np.int64),
            zero_w=np.pad(np.ones(len(zero_s)), (0, n_cells - len(zero_s))),
            solved_tasks=np.asarray(float(((n > 0).any(axis=0)).sum() - len(zero_tasks))),
        )
        return ModelInputs(values=values, shape_key=(*key, n_cells, n_zero))

    # ------------------------------------------------------------------ the PyMC model
    def build(self, inputs: ModelInputs) -> Any:
        """Coefficients per system, the collapsed grid likelihood (each row's sum over its
        ``(row, node)`` pairs) and, with broken tasks, the per-task mixture of the tasks
        without a success."""
        import pymc as pm
        import pytensor.tensor as pt

        n_sys, size, pairs, prior_key = inputs.shape_key[:4]
        basis = self.basis
        v = inputs.values
        coords = {"system": np.arange(n_sys), "term": np.arange(basis.shape[1]),
                  "row": np.arange(size), "pair": np.arange(pairs)}
        with pm.Model(coords=coords) as model:
            row_w = pm.Data("row_w", v["row_w"], dims="row")
            row_real = pm.Data("row_real", v["row_real"], dims="row")
            pair_row = pm.Data("pair_row", v["pair_row"], dims="pair")
            pair_g = pm.Data("pair_g", v["pair_g"], dims="pair")
            pair_ll = pm.Data("pair_ll", v["pair_ll"], dims="pair")
            if prior_key == "per-system":
                sigma = pm.Data("coef_sd", v["coef_sd"], dims="system")[:, None]
            else:
                sigma = prior_key
            coef = pm.Normal("coef", 0.0, sigma, dims=("system", "term"))
            logits = pt.dot(coef, basis.T)
            log_g = logits - pt.logsumexp(logits, axis=1, keepdims=True)
            # No max-shift is needed: log g <= 0 and each row's best node has pair_ll = 0.
            terms = pt.exp(pair_ll + log_g.reshape((-1,))[pair_g])
            row_sum = pt.inc_subtensor(pt.zeros(size)[pair_row], terms)
            ll = pt.log(pt.switch(row_real > 0, row_sum, 1.0))
            if len(inputs.shape_key) == 4:
                pm.Potential("loglik", (row_w * ll).sum())
            else:
                zero_row = pm.Data("zero_row", v["zero_row"])
                zero_w = pm.Data("zero_w", v["zero_w"])
                zero_task = pm.Data("zero_task", v["zero_task"])
                solved = pm.Data("solved_tasks", v["solved_tasks"])
                n_zero = inputs.shape_key[5]
                add_broken_task_mixture(
                    ll[zero_row], zero_w, zero_task, n_zero, np.ones(n_zero),
                    self.broken_prior, solved_ll=(row_w * ll).sum(), solved_tasks=solved,
                )
        return model

    def posterior_vars(self, data: EvalData) -> list[str]:
        """The coefficients (``g_s`` follows from them and the basis) and ``pi0``."""
        return ["coef", "pi0"] if self.has_broken(data.n.shape[0]) else ["coef"]

    def simulate_prior(
        self, systems: int, tasks: int, trials: int, seed: int
    ) -> tuple[EvalData, dict[str, Any]]:
        """Coefficients from the prior (each system's sd :meth:`system_coef_prior` of the
        simulated design, ``trials`` per cell), broken tasks with ``pi0 ~ Beta(*broken_prior)``
        (when :meth:`has_broken`), rates from ``g_s``, counts (for SBC and recovery).

        Returns the data (``trials`` per cell) and the truth: ``coef`` (S, D), ``g`` (S,
        support), ``pi0``, ``broken`` (T, bool) and ``p`` (S, T).
        """
        from scipy.special import logsumexp  # imported when used (issue 26)
        rng = np.random.default_rng(seed)
        sds = self.system_coef_prior(np.full((systems, tasks), int(trials)))
        coef = rng.normal(0.0, 1.0, (systems, self.basis.shape[1])) * sds[:, None]
        logits = coef @ self.basis.T
        g = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
        grid = self.rates_grid
        p = np.stack([rng.choice(grid, tasks, p=g_s) for g_s in g])
        pi0 = rng.beta(*self.broken_prior) if self.has_broken(systems) else 0.0
        broken = rng.random(tasks) < pi0
        p = np.where(broken[None, :], 0.0, p)
        n = np.full((systems, tasks), int(trials))
        truth = {"coef": coef, "g": g, "pi0": pi0, "broken": broken, "p": p}
        return EvalData.from_arrays(n, rng.binomial(n, p)), truth

    # ------------------------------------------------------------------ broken tasks
    @staticmethod
    def _pi0(posterior: xr.Dataset) -> np.ndarray | None:
        """``pi0`` per draw (chain, draw), or None for a fit without broken tasks."""
        if "pi0" not in posterior:
            return None
        return posterior["pi0"].transpose("chain", "draw").values

    def _row_marginals(self, log_g: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``log L = log sum_j g_s(p_j) Binomial(c | n, p_j)`` per draw and row, (chain, draw,
        row)."""
        from scipy.special import logsumexp  # imported when used (issue 26)
        loglik = grid_log_likelihood(rows[:, 1], rows[:, 2], self.rates_grid)
        chains, draws, n_sys, support = log_g.shape
        out = np.empty((chains, draws, len(rows)))
        flat, flat_out = log_g.reshape(chains * draws, n_sys, support), out.reshape(-1, len(rows))
        width = max(1, _WORK // max(1, chains * draws * support))
        for start in range(0, len(rows), width):
            block = slice(start, start + width)
            system, lik = rows[block, 0], loglik[block]
            for draw in _draw_blocks(len(flat), len(system) * support):  # in cache, per row
                terms = np.take(flat[draw], system, axis=1)
                terms += lik
                flat_out[draw, block] = logsumexp(terms, axis=-1)
        return out

    def _cell_ll_of(self, log_g: np.ndarray, n: np.ndarray, c: np.ndarray) -> Any:
        """``sl -> log L[s, t]`` on a chunk of tasks, (chain, draw, system, chunk), 0 on
        unobserved cells (from the distinct rows, each computed once)."""
        rows, row_of_cell = _row_table(n, c)
        marginal = self._row_marginals(log_g, rows)

        def cell_ll_of(sl: slice) -> np.ndarray:
            index = row_of_cell[:, sl]
            return np.where(index >= 0, marginal[..., np.maximum(index, 0)], 0.0)

        return cell_ll_of

    def _broken_log_odds(
        self, log_g: np.ndarray, pi0: np.ndarray, data: EvalData, tasks: slice
    ) -> np.ndarray:
        """``log P(broken) - log P(solvable)`` given each draw, (chain, draw, chunk); ``-inf``
        on tasks with a success (:func:`~evalbayes.models.rate_grid._broken.broken_log_odds`)."""
        n, c = data.n.values[:, tasks], data.c.values[:, tasks]
        zero = np.flatnonzero(all_zero_tasks(n, c))
        out = np.full((*pi0.shape, n.shape[1]), -np.inf)
        if len(zero):
            cell_ll = self._cell_ll_of(log_g, n[:, zero], c[:, zero])(slice(None))
            out[..., zero] = broken_log_odds(pi0, cell_ll, np.ones(len(zero), dtype=bool))
        return out

    def broken_probability(self, posterior: xr.Dataset, data: EvalData) -> xr.DataArray:
        """Posterior draws of ``P(task broken | parameters, data)``, dims (chain, draw, task)
        (Rao-Blackwellised: the mean over draws is the posterior probability that the task is
        broken). 0 for any task with a success, and everywhere without broken tasks."""
        from scipy.special import expit  # imported when used (issue 26)
        pi0 = self._pi0(posterior)
        shape = (posterior.sizes["chain"], posterior.sizes["draw"], data.n.shape[1])
        values = np.zeros(shape)
        if pi0 is not None:
            values = expit(self._broken_log_odds(self.log_weights(posterior), pi0, data,
                                                 slice(None)))
        return xr.DataArray(
            values,
            dims=("chain", "draw", "task"),
            coords={"chain": posterior["chain"].values, "draw": posterior["draw"].values,
                    "task": data.dataset["task"].values},
            name="p_broken",
        )

    # ------------------------------------------------------------------ template hooks
    def rates(
        self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice
    ) -> np.ndarray:
        """Per-cell rate draws, shape (chain, draw, system, chunk): each task broken (``p = 0``
        for every system) with its conditional probability given the draw, otherwise each
        cell's rate from the exact conditional posterior over the grid given ``g_s``;
        unobserved cells from ``g_s``.

        Cells of a system with the same counts share one conditional (computed once per
        draw); one uniform per cell and draw picks the node by inversion. Deterministic given
        ``seed`` and the chunk's start.
        """
        from scipy.special import expit  # imported when used (issue 26)
        log_g = self.log_weights(posterior)
        grid = self.rates_grid
        n, c = data.n.values, data.c.values
        start, stop, _ = tasks.indices(n.shape[1])
        rng = np.random.default_rng([int(seed), 11, start])
        chains, draws, n_sys, support = log_g.shape
        out = np.empty((chains, draws, n_sys, stop - start))
        u = rng.random(out.shape)
        width = 1 << support.bit_length()  # each row's cdf padded with +inf: a power of two
        for s in range(n_sys):
            counts = np.stack([n[s, start:stop], c[s, start:stop]], axis=1)
            unique, inverse = np.unique(counts, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            loglik = grid_log_likelihood(unique[:, 0], unique[:, 1], grid)
            post = log_g[:, :, s, None, :] + loglik  # (chain, draw, unique, support)
            post -= post.max(axis=-1, keepdims=True)  # in place: the same numbers
            np.exp(post, out=post)
            cdf = np.full((chains, draws, len(unique), width), np.inf)  # +inf: never below u
            np.cumsum(post, axis=-1, out=cdf[..., :support])
            cdf[..., :support] /= cdf[..., support - 1 : support]
            # each cell's node: how many of its row's cdf values lie below its uniform
            first = (np.arange(chains * draws)[:, None] * len(unique) + inverse) * width
            node = _count_below(cdf.reshape(-1), first,
                                u[:, :, s].reshape(chains * draws, -1), width)
            out[:, :, s] = grid[np.minimum(node, support - 1)].reshape(chains, draws, -1)
        pi0 = self._pi0(posterior)
        if pi0 is not None:
            prob = expit(self._broken_log_odds(log_g, pi0, data, slice(start, stop)))
            broken = np.random.default_rng([int(seed), 13, start]).random(prob.shape) < prob
            out = np.where(broken[..., None, :], 0.0, out)
        return out

    def _tasks_curves(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metrics: tuple[str, ...],
        per_task: bool,
        seed: int,
        weights: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        """The "tasks" estimand from how many of each row's cells fall on each node.

        Given a draw of ``g_s``, the rates of the ``w`` cells that share a distinct
        ``(system, n, c)`` row are independent draws from the row's exact conditional
        ``P(p_j | n, c) proportional to g_s(p_j) Binomial(c | n, p_j)`` (:meth:`rates`), so
        the numbers of them on each node are ``N ~ Multinomial(w, P(. | n, c))`` and a
        system's task average is ``sum over its rows of sum_j N_j f(p_j)``, divided by its
        tasks: the same posterior as drawing every cell's rate (one categorical per cell and
        draw), at the cost of one multinomial per row and draw, and one set of draws for
        every metric and k (Johnson, Kotz & Balakrishnan 1997, *Discrete Multivariate
        Distributions*, ch. 35: the counts of iid categorical draws), drawn by the compiled
        :func:`~._tasks_kernel.row_node_sums` (inversion of each cell's uniform, draws in
        parallel on counter-based streams keyed by ``(seed, row, draw)``: the same numbers
        whatever the thread count; 2.9x less CPU than numpy's conditional-binomial
        multinomial on SWE-bench Verified, another stream of the same law). Per-task draws,
        the Bayesian bootstrap's task weights and fits with broken tasks (a task's cells
        share one broken indicator) take the per-cell draws of :meth:`rates`.
        """
        if per_task or weights is not None or self._pi0(posterior) is not None:
            return super()._tasks_curves(posterior, data, k, metrics, per_task, seed, weights)
        from evalbayes.models.rate_grid._tasks_kernel import (
            row_node_sums,  # numba: imported when used
        )

        log_g = self.log_weights(posterior)
        grid = self.rates_grid
        rows, row_of_cell = _row_table(data.n.values, data.c.values)
        cells = np.bincount(row_of_cell[row_of_cell >= 0], minlength=len(rows))
        loglik = grid_log_likelihood(rows[:, 1], rows[:, 2], grid)
        k = np.asarray(k, dtype=float)
        values = np.concatenate([prob_curve(grid, k, check_metric(m)) for m in metrics],
                                axis=1)  # (support, metrics x K): f at the nodes
        chains, draws, n_sys, support = log_g.shape
        flat_log_g = np.ascontiguousarray(log_g.reshape(chains * draws, n_sys, support))
        row_system, row_cells = rows[:, 0].astype(np.int64), cells.astype(np.int64)
        row_lik = np.exp(loglik - loglik.max(axis=1, keepdims=True))
        loglik, values = np.ascontiguousarray(loglik), np.ascontiguousarray(values)
        # g = exp(log g) a block of draws at a time (no full-size copy of g); the kernel's
        # streams are keyed by the draw's index in the posterior, so blocks change no number
        sums = np.empty((chains * draws, n_sys, values.shape[1]))
        width = max(64, _KERNEL_BLOCK // max(1, n_sys * support))
        g = np.empty((min(width, len(flat_log_g)), n_sys, support))
        for start in range(0, len(flat_log_g), width):
            block = slice(start, min(start + width, len(flat_log_g)))
            used = g[: block.stop - start]
            np.exp(flat_log_g[block], out=used)
            sums[block] = row_node_sums(used, flat_log_g[block], row_system, row_cells,
                                        row_lik, loglik, values, int(seed), start)
        sums = sums.reshape(chains, draws, n_sys, len(metrics), len(k))
        tasks = (data.n.values > 0).sum(axis=1)[None, None, :, None]
        return {m: sums[:, :, :, i] / tasks for i, m in enumerate(metrics)}

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """pass@k / pass^k of a new task, ``pi0 f(0) + (1 - pi0) sum_j g_s(p_j) f(p_j)``
        (``pi0 = 0`` without broken tasks), (chain, draw, system, k): the ``"independent"``
        population, and the marginals of ``"paired"``."""
        log_g = self.log_weights(posterior)
        k = np.asarray(k, dtype=float)
        metric = check_metric(metric)
        f = prob_curve(self.rates_grid, k, metric)
        # g @ f, g = exp(log g) a block of draws at a time: no full-size copy of g
        chains, draws, n_sys, support = log_g.shape
        flat = log_g.reshape(chains * draws, n_sys, support)
        values = np.empty((chains * draws, n_sys, f.shape[1]))
        scratch = np.empty((min(len(flat), _draws_per_block(n_sys * support)), n_sys, support))
        for block in _draw_blocks(len(flat), n_sys * support):
            g = np.exp(flat[block], out=scratch[: block.stop - block.start])
            values[block] = g @ f  # per draw the product of the whole array: the same numbers
        values = values.reshape(chains, draws, n_sys, f.shape[1])
        pi0 = self._pi0(posterior)
        if pi0 is None:
            return values
        f0 = prob_curve(np.zeros(1), k, metric)[0]
        return (1.0 - pi0)[..., None, None] * values + pi0[..., None, None] * f0

    def prior_draws(self, data: EvalData, draws: int = 1000, seed: int = 0) -> xr.Dataset:
        """Prior draws in NumPy: ``coef[s, d] ~ N(0, sd_s^2)`` with each system's sd of the
        fit (:meth:`system_coef_prior` of ``data``'s trials), with broken tasks
        ``pi0 ~ Beta(*broken_prior)``; one chain (the template's prior predictive)."""
        rng = np.random.default_rng(seed)
        n_sys = len(data.systems)
        shape = (1, check_count(draws, "draws"), n_sys, self.basis.shape[1])
        sds = self.system_coef_prior(data.n.values)
        out = xr.Dataset(
            {"coef": (("chain", "draw", "system", "term"),
                      rng.normal(0.0, 1.0, size=shape) * sds[:, None])},
            coords={"chain": [0], "draw": np.arange(shape[1]),
                    "system": data.dataset["system"].values, "term": np.arange(shape[3])},
        )
        if self.has_broken(n_sys):
            out["pi0"] = (("chain", "draw"), rng.beta(*self.broken_prior, size=shape[:2]))
        return out

    def population_rates(self, posterior: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
        """The support of ``g_s`` and a new task's rate distribution per draw,
        ``pi0 [p = 0] + (1 - pi0) g_s`` (``pi0 = 0`` without broken tasks), (chain, draw,
        system, rate): the template's population g-pass@k."""
        g = np.exp(self.log_weights(posterior))
        rates = self.rates_grid
        pi0 = self._pi0(posterior)
        if pi0 is None:
            return rates, g
        if not self.atoms:
            rates = np.concatenate([[0.0], rates])
            g = np.concatenate([np.zeros((*g.shape[:-1], 1)), g], axis=-1)
        g = (1.0 - pi0)[..., None, None] * g
        g[..., 0] += pi0[..., None]
        return rates, g

    def row_expectations(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> RowExpectations:
        """``E[f(p) | g_s, n, c] = sum_j P(p_j | c, n) f(p_j)`` with the exact discrete
        conditional, per draw and distinct ``(system, n, c)``, for the paired population's
        ranks (template hook); with broken tasks, each task's factor ``1 - P(broken | draw,
        data)`` (``f(0) = 0``)."""
        from scipy.special import expit  # imported when used (issue 26)
        log_g = self.log_weights(posterior)
        metric = check_metric(metric)
        k = np.asarray(k, dtype=float)
        pi0 = self._pi0(posterior)
        memo = _SHARED_LOG_WEIGHTS.get()
        key = ("rows", id(self))
        kept = memo.get(key) if memo is not None and pi0 is None else None
        if kept is not None and kept[0] is log_g and np.array_equal(kept[1], k):
            return kept[2][metric]
        rows, row_of_cell = _row_table(data.n.values, data.c.values)
        loglik = grid_log_likelihood(rows[:, 1], rows[:, 2], self.rates_grid)
        # within a sharing block every metric (the rows' exps are the cost), else this one
        metrics = METRICS if memo is not None and pi0 is None else (metric,)
        f = {m: prob_curve(self.rates_grid, k, check_metric(m)) for m in metrics}
        chains, draws, n_sys, support = log_g.shape
        values = {m: np.empty((chains, draws, len(rows), len(k))) for m in metrics}
        flat = log_g.reshape(chains * draws, n_sys, support)
        flat_values = {m: values[m].reshape(chains * draws, len(rows), len(k)) for m in metrics}
        width = max(1, _WORK // max(1, chains * draws * support))
        for start in range(0, len(rows), width):
            block = slice(start, start + width)
            system, lik = rows[block, 0], loglik[block]
            # a block of draws at a time, in cache; the products are per draw as before
            # (``width`` rows by ``support``), so the numbers are those of the whole block
            for draw in _draw_blocks(len(flat), len(system) * support):
                post = np.take(flat[draw], system, axis=1)
                post += lik
                post -= post.max(axis=-1, keepdims=True)  # in place: the same numbers
                np.exp(post, out=post)
                total = post.sum(axis=-1, keepdims=True)
                for m in metrics:
                    flat_values[m][draw, block] = (post @ f[m]) / total
        if pi0 is None:
            out = {m: RowExpectations(values[m], row_of_cell) for m in metrics}
            if memo is not None:
                for m in metrics:
                    values[m].setflags(write=False)  # shared: no caller may change them
                memo[key] = (log_g, k, out, self)
            return out[metric]
        # P(solvable | draw, data) per task; a broken task's f(0) is 0 (pass@k, pass^k, k >= 1)
        solvable = expit(-self._broken_log_odds(log_g, pi0, data, slice(None)))
        return RowExpectations(values[metric], row_of_cell, solvable)

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """``log sum_j g_s(p_j) Binomial(c | n, p_j)`` per cell and draw, (chain, draw, cell);
        with broken tasks plus an equal share of its task's mixture term
        (:func:`~evalbayes.models.rate_grid._broken.cell_pieces`: the pieces sum to the task
        log-likelihood; :meth:`task_log_likelihood` is the exact PSIS-LOO unit)."""
        log_g = self.log_weights(posterior)
        pi0 = self._pi0(posterior)
        cell_ll_of = self._cell_ll_of(log_g, data.n.values, data.c.values)
        if pi0 is None:
            return cell_ll_of(slice(None))[..., s_idx, t_idx]
        return cell_pieces(cell_ll_of, pi0, data.n.values, data.c.values, pi0.shape,
                           s_idx, t_idx)

    def task_log_likelihood(self, posterior: xr.Dataset, data: EvalData) -> np.ndarray:
        """Log-likelihood of each task (all its cells, broken mixture included), shape
        (chain, draw, task)."""
        log_g = self.log_weights(posterior)
        cell_ll_of = self._cell_ll_of(log_g, data.n.values, data.c.values)
        return task_log_likelihood(cell_ll_of, self._pi0(posterior),
                                   data.n.values, data.c.values, log_g.shape[:2])


def _draws_per_block(per_draw: int) -> int:
    """Draws per block of :data:`_BLOCK` numbers, ``per_draw`` numbers a draw (at least 1)."""
    return max(1, _BLOCK // max(1, per_draw))


def _draw_blocks(n_draws: int, per_draw: int) -> Iterator[slice]:
    """Consecutive slices of ``n_draws`` draws, :func:`_draws_per_block` draws each."""
    width = _draws_per_block(per_draw)
    for start in range(0, n_draws, width):
        yield slice(start, min(start + width, n_draws))


def _count_below(values: np.ndarray, first: np.ndarray, u: np.ndarray, size: int) -> np.ndarray:
    """``#{j < size : values[first + j] < u}`` elementwise, for nondecreasing runs ``values[first
    : first + size]`` (cumulative sums), ``size`` a power of two and each run ending in
    ``+inf`` (a shorter run padded), which no ``u`` exceeds: a binary search in every run at
    once, ``log2(size)`` gathers per element instead of ``size`` comparisons, with the same
    comparisons' answer (Knuth, *TAOCP* vol. 3, sec. 6.2.1, the uniform binary search: no
    bounds to check)."""
    if size & (size - 1):
        raise ValueError(f"size must be a power of two, got {size}")
    base = np.array(np.broadcast_arrays(first, u)[0], dtype=np.int64)  # first + the count
    index = np.empty_like(base)
    probe = np.empty(base.shape)
    below = np.empty(base.shape, dtype=bool)
    step = size >> 1
    while step:
        np.add(base, step - 1, out=index)
        np.take(values, index, out=probe, mode="clip")  # in bounds: clip is the fast path
        np.less(probe, u, out=below)
        base += np.multiply(below, step, out=index)
        step >>= 1
    base -= first
    return base


def _row_table(n: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct observed ``(system, n, c)`` rows, (row, 3), and each cell's row (system, task),
    -1 where unobserved."""
    s_idx, t_idx = np.nonzero(n > 0)
    keys = np.stack([s_idx, n[s_idx, t_idx], c[s_idx, t_idx]], axis=1)
    rows, inverse = np.unique(keys, axis=0, return_inverse=True)
    row_of_cell = np.full(n.shape, -1, dtype=np.int64)
    row_of_cell[s_idx, t_idx] = inverse.reshape(-1)
    return rows, row_of_cell


_SINGLE_TRIAL_TEXT = (
    "{name}: every cell has at most one trial (n <= 1), so the data show each system's "
    "mean rate and nothing of how its tasks' rates spread around it: the shape of the rate "
    "distribution, and with it pass@k for k > 1 and pass^k, is its prior. Collect repeated "
    "trials, or use a model whose shape is fixed (beta-binomial, irt-1pl)."
)
