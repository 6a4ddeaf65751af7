"""Item response theory (IRT) hierarchies on binomial counts: 1PL, 2PL and 3PL.

For system ``s`` (ability ``theta[s]``) and task / item ``t`` (difficulty ``b[t]``,
discrimination ``a[t]``, floor ``g[t]``), on the observed cells only (``n = 0`` cells are not
in the likelihood; Birnbaum 1968 for the 2PL and the 3PL guessing floor)::

    logit q[s, t] = a[t] * (theta[s] - b[t])
    p[s, t]       = g[t] + (1 - g[t]) * q[s, t]        (1PL/2PL: g = 0)
    c[s, t]       ~ Binomial(n[s, t], p[s, t])

Conventions: **higher b = harder item**; ``theta ~ N(0, 1)``; a system with
``theta = b[t]`` solves item ``t`` with probability ``g + (1 - g) / 2``.

Priors and identification
-------------------------
::

    theta[s] ~ N(0, 1)
    b[t]     ~ N(0, sigma_b),      sigma_b ~ HalfNormal(sigma_b_prior)        (default 2)
    log a[t] ~ N(0, sigma_a),      sigma_a = 0.5 (default), or
                                   sigma_a ~ HalfNormal(sigma_a_prior) with sigma_a="estimate"
    g[t]     ~ Beta(*guess_prior)  (default Beta(2, 8), mean 0.2), or g = guess  (3PL)

The logit is unchanged by ``theta + d, b + d`` (location) and ``theta * m, b * m, a / m``
(scale). Both are fixed **once, by the item population**: its median difficulty is 0 and its
median discrimination 1 (no free mean of ``b`` or ``log a``). With ``T`` items the sample mean
of ``b`` is then pinned to within ``sigma_b / sqrt(T)`` of 0, so the shift direction has no
ridge; ``theta ~ N(0, 1)`` is the prior of abilities in those units. A free mean ``mu_b`` next
to ``theta ~ N(0, 1)`` leaves the shift pinned only by the ``S`` abilities' prior, and at
50 systems x 500 items it did not converge (R-hat 1.08-1.20, bulk ESS 15-40;
benchmarks/irt/ has the comparison).

The sampler sees the same prior written as means plus zero-sum deviations:
``theta = mean_theta + theta_dev`` with ``theta_dev ~ ZeroSumNormal(1)`` and
``mean_theta ~ N(0, 1/S)`` (independent: that is how ``S`` iid N(0, 1) decompose), likewise
``b = mean_b + b_dev``. The likelihood sees only the gap ``mean_theta - mean_b``, so the two
means are rotated into the gap and a level that is independent of it a priori and untouched
by the data. Without the rotation the shift direction moved all ``S + T`` coordinates at
once: on Terminal-Bench (13 systems, 80 tasks, 18 never solved, so ``sigma_b`` is large and
the items pin the shift weakly) the 1PL had R-hat 1.036 and bulk ESS 229 on every ability;
with it, R-hat 1.005 and ESS 488 (benchmarks/irt/).

``b_dev`` is sampled centred or non-centred (``parameterization``); ``"auto"`` centres it when
items carry at least ``AUTO_CENTER_TRIALS`` trials on average, where the centred form mixed
faster. ``log a`` is always non-centred: centred, it had R-hat 1.94 at 20 x 200
(benchmarks/irt/).

Layouts of the likelihood
-------------------------
The same model has two graphs for its likelihood (``layout``). ``"long"`` lists the observed
cells (``cell_s, cell_t, cell_n, cell_c``, padded to a power of two) and gathers
``theta[cell_s]``, ``b[cell_t]``: its cost grows with the observed cells, whatever the shape,
so it suits sparse data. ``"dense"`` keeps ``n`` and ``c`` as ``system x task`` matrices with
``n = 0`` (the mask) on missing cells and evaluates every cell by broadcasting, no gather; for
1PL/2PL it uses the one-softplus form of the Bernoulli-logit log-likelihood::

    c log sigmoid(eta) + (n - c) log(1 - sigmoid(eta)) = c eta - n softplus(eta)

and, when every cell holds at most one trial (leaderboards), the sign form
``-n softplus((1 - 2 c) eta)``, in which ``eta`` appears once: pytensor flattens
``c * (a * (theta - b))`` into one product, so in the first form ``eta`` is evaluated twice and
its gradient takes extra passes over the matrix; the sign form took one gradient of the 2PL on
SWE-bench Verified under JAX from 0.60 to 0.37 ms (benchmarks/irt/leaderboard.md). For the
2PL ``eta`` is written ``a theta - a b`` for the same reason. (3PL keeps the two-term form with
the floor). A missing cell has ``n = c = 0`` and adds
exactly 0. ``"auto"`` (default) takes the dense graph when at least ``DENSE_MIN_SHARE`` of the
cells are observed and the matrix has at least ``DENSE_MIN_CELLS`` cells; on SWE-bench
Verified (123 x 500, complete) one nutpie (numba) gradient of the dense graph cost 0.29x the
long graph's, and under JAX (``method="numpyro"``) 0.03x (benchmarks/irt/leaderboard.md).
Both graphs give the same log density to rounding (tests/models/irt/test_dense.py), so the choice
changes speed, never the posterior.

``"fused"`` (1PL and 2PL, ``method="nutpie"``) is no graph: the log density and its gradient
written by hand (:mod:`._fused`), on the same
unconstrained coordinates as the graph, sampled by nutpie's NUTS. It is cached on disk by
numba, so a fit compiles nothing, and one gradient makes four passes over the cells. ``"auto"``
takes it for the 1PL and 2PL under nutpie (the default method), so ``fit --model irt-2pl``
uses it without flags: one gradient on SWE-bench Verified costs 0.31 ms against 1.86 ms for
the dense graph under nutpie, and the whole 2PL command 94.5 CPU s against 403.6 (0.234x;
Terminal-Bench 0.38x), compile included (benchmarks/speed/irt_default.md). The
graphs stay the reference: ``layout="dense"`` or ``"long"`` with nutpie, or any other method
(PyMC's NUTS, numpyro, ADVI, ...), which always use a graph. Its log density and gradient
equal the graph's to rounding (tests/models/irt/test_fused.py).

Derived quantities (NumPy, from the stored draws)
-------------------------------------------------
``"tasks"`` estimand
    The average over the system's observed tasks of ``f(p[s, t])``, per draw, with
    ``f(p) = 1 - (1 - p)^k`` (pass@k) or ``p^k`` (pass^k).
``"population"`` estimand
    ``E[f(p(theta_s, item))]`` over a new item drawn from the item population (``b``,
    ``log a`` from their hierarchical normals at the draw's ``sigma_b, sigma_a``; ``g`` from
    its Beta prior, or the known floor), by quadrature (:mod:`evalbayes.models._quadrature`).
    Every system is integrated against the same item distribution of the same draw, so the
    difference of two systems is a *paired* comparison: it is not blurred by which items
    happened to be sampled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import xarray as xr
from scipy.special import log_expit

from evalbayes.data import EvalData
from evalbayes.inference import SamplerConfig, padded_size, sample_log_density
from evalbayes.models._base import Model, ModelInputs, binomial_log_choose, require_observed
from evalbayes.models._quadrature import NodeSet, beta_nodes
from evalbayes.models.irt import _fused
from evalbayes.models.irt._items import IRTDraws, IRTPosterior
from evalbayes.models.irt._population import item_population_curve
from evalbayes.testing import simulate_irt

__all__ = [
    "AUTO_CENTER_TRIALS",
    "DENSE_MIN_CELLS",
    "DENSE_MIN_SHARE",
    "KINDS",
    "LAYOUTS",
    "IRTDraws",
    "IRTModel",
]

Kind = Literal["1pl", "2pl", "3pl"]
Parameterization = Literal["auto", "centered", "noncentered"]
Layout = Literal["auto", "long", "dense", "fused"]
KINDS: tuple[str, ...] = ("1pl", "2pl", "3pl")
PARAMETERIZATIONS: tuple[str, ...] = ("auto", "centered", "noncentered")
AUTO_CENTER_TRIALS = 10.0
LAYOUTS: tuple[str, ...] = ("auto", "long", "dense", "fused")
#: ``layout="auto"`` goes dense at this observed share of the system x task cells ...
DENSE_MIN_SHARE = 0.5
#: ... when the matrix has at least this many cells (smaller fits keep the long graph, whose
#: padded size lets data of similar size share one compiled model).
DENSE_MIN_CELLS = 4096


@dataclass(frozen=True)
class IRTModel(Model):
    """IRT hierarchy on binomial counts (see the module docstring for the model).

    Parameters
    ----------
    kind : {"1pl", "2pl", "3pl"}
        1PL (``a = 1``), 2PL (item discriminations), 3PL (2PL plus a guessing floor ``g``).
    guess : "estimate" or float in (0, 1)
        3PL only. ``"estimate"``: a floor per item with prior ``Beta(*guess_prior)``; a
        number: a known floor shared by all items (``0.2`` when a blind guess among five
        options passes, as in the TinyAgent worked example). Must stay ``"estimate"`` for 1PL/2PL.
    guess_prior : (float, float)
        Beta prior of the floor (3PL with ``guess="estimate"``). Default Beta(2, 8).
    sigma_b_prior : float
        Scale of the HalfNormal prior of ``sigma_b``, the spread of difficulties. Default 2.
    sigma_a_prior : float
        Scale of the HalfNormal prior of ``sigma_a`` when ``sigma_a="estimate"``.
    sigma_a : float > 0 or "estimate"
        2PL/3PL: the spread of ``log a``. A number (default 0.5: median discrimination 1,
        95 % of items between 0.38 and 2.7) fixes it; ``"estimate"`` learns it with the
        HalfNormal(``sigma_a_prior``) prior. The learned spread was the slowest-mixing
        parameter of the 2PL (R-hat 1.064, bulk ESS 73 at 20 x 200, n = 1, where the fixed
        one gave R-hat 1.009, ESS 566; benchmarks/irt/).
    parameterization : {"auto", "centered", "noncentered"}
        How ``b`` and ``log a`` are sampled; ``"auto"`` centres when items have at least
        ``AUTO_CENTER_TRIALS`` trials on average.
    layout : {"auto", "long", "dense"}
        Graph of the likelihood (module docstring, "Layouts"): ``"long"`` over the observed
        cells, ``"dense"`` over the masked ``system x task`` matrix; ``"auto"`` picks dense
        when at least ``DENSE_MIN_SHARE`` of the cells are observed and there are at least
        ``DENSE_MIN_CELLS`` cells. Same posterior either way; only the speed differs.
    """

    posterior_class: ClassVar[type[IRTPosterior]] = IRTPosterior

    kind: Kind = "2pl"
    guess: float | str = "estimate"
    guess_prior: tuple[float, float] = (2.0, 8.0)
    sigma_b_prior: float = 2.0
    sigma_a_prior: float = 0.5
    sigma_a: float | str = 0.5
    parameterization: Parameterization = "auto"
    layout: Layout = "auto"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if isinstance(self.guess, str):
            if self.guess != "estimate":
                raise ValueError(
                    f"guess must be 'estimate' or a number in (0, 1), got {self.guess!r}"
                )
        else:
            if isinstance(self.guess, bool) or not isinstance(self.guess, int | float):
                raise ValueError(
                    f"guess must be 'estimate' or a number in (0, 1), got {self.guess!r}"
                )
            if not 0.0 < float(self.guess) < 1.0:
                raise ValueError(f"guess must lie strictly inside (0, 1), got {self.guess}")
            if self.kind != "3pl":
                raise ValueError(
                    f"guess={self.guess} is a guessing floor: use kind='3pl' (got {self.kind!r})"
                )
        if len(self.guess_prior) != 2 or min(self.guess_prior) <= 0:
            raise ValueError(f"guess_prior must be two positive numbers, got {self.guess_prior!r}")
        for label in ("sigma_b_prior", "sigma_a_prior"):
            value = getattr(self, label)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{label} must be a positive number, got {value!r}")
        if isinstance(self.sigma_a, str):
            if self.sigma_a != "estimate":
                raise ValueError(f"sigma_a must be 'estimate' or a positive number, got "
                                 f"{self.sigma_a!r}")
        elif (isinstance(self.sigma_a, bool) or not isinstance(self.sigma_a, int | float)
              or not (np.isfinite(self.sigma_a) and self.sigma_a > 0)):
            raise ValueError(f"sigma_a must be 'estimate' or a positive number, got "
                             f"{self.sigma_a!r}")
        if self.parameterization not in PARAMETERIZATIONS:
            raise ValueError(
                f"parameterization must be one of {PARAMETERIZATIONS}, "
                f"got {self.parameterization!r}"
            )
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {self.layout!r}")
        if self.layout == "fused" and self.kind == "3pl":
            raise ValueError("layout='fused' is written for the 1PL and 2PL; the 3PL uses "
                             "layout 'auto', 'long' or 'dense'")

    # ------------------------------------------------------------------ configuration
    @property
    def name(self) -> str:  # type: ignore[override]
        """The registry name, which carries the kind (``"irt-2pl"``), so configs round-trip."""
        return f"irt-{self.kind}"

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> IRTModel:
        """Rebuild from :meth:`to_config` output; ``model`` is ``irt-1pl/2pl/3pl``."""
        config = dict(config)
        name = config.pop("model", None)
        if name is not None:
            if name not in tuple(f"irt-{kind}" for kind in KINDS):
                raise ValueError(f"config is for model {name!r}, not an IRT model")
            kind = name.removeprefix("irt-")
            if config.setdefault("kind", kind) != kind:
                raise ValueError(f"model {name!r} has kind={kind!r}, the config says "
                                 f"{config['kind']!r}")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(config) - known)
        if unknown:
            raise ValueError(f"unknown IRT settings {unknown}; known: {sorted(known)}")
        settings: dict[str, Any] = {
            key: tuple(v) if isinstance(v, list) else v for key, v in config.items()
        }
        return cls(**settings)

    @property
    def has_discrimination(self) -> bool:
        """True for the 2PL and 3PL (items have their own ``a``)."""
        return self.kind != "1pl"

    @property
    def estimates_guess(self) -> bool:
        """True for the 3PL with ``guess="estimate"`` (a floor per item)."""
        return self.kind == "3pl" and self.guess == "estimate"

    def guess_rule(self) -> NodeSet:
        """Quadrature rule for the floor of a new item (a point mass when it is known)."""
        if self.kind != "3pl":
            return NodeSet(np.zeros(1), np.ones(1))
        if self.guess == "estimate":
            return beta_nodes(*self.guess_prior)
        return NodeSet(np.array([float(self.guess)]), np.ones(1))

    def centered(self, data: EvalData) -> bool:
        """Whether ``b`` and ``log a`` are sampled centred for these data."""
        if self.parameterization == "auto":
            trials_per_item = float(data.n.values.sum()) / data.n.shape[1]
            return trials_per_item >= AUTO_CENTER_TRIALS
        return self.parameterization == "centered"

    def fused(self, method: str) -> bool:
        """Whether a fit by ``method`` uses the hand-written compiled log density (``"fused"``
        layout: the 1PL and 2PL under nutpie)."""
        if self.layout == "auto":
            return self.kind != "3pl" and method == "nutpie"
        return self.layout == "fused"

    def dense(self, data: EvalData) -> bool:
        """Whether the likelihood uses the dense (masked ``system x task``) graph."""
        if self.layout in ("auto", "fused"):
            n = data.n.values
            cells = n.size
            return bool(cells >= DENSE_MIN_CELLS
                        and np.count_nonzero(n) >= DENSE_MIN_SHARE * cells)
        return self.layout == "dense"

    # ------------------------------------------------------------------ inference
    def simulate_prior(
        self, systems: int, tasks: int, trials: int, seed: int
    ) -> tuple[EvalData, dict[str, Any]]:
        """Parameters from the prior (module docstring) and counts from the model, for SBC and
        recovery: ``theta ~ N(0, 1)``, ``sigma_b ~ HalfNormal(sigma_b_prior)``, ``b ~ N(0,
        sigma_b)``, ``log a ~ N(0, sigma_a)`` (2PL/3PL; ``sigma_a ~ HalfNormal`` when
        estimated), ``g ~ Beta(*guess_prior)`` (3PL, when estimated), ``trials`` per cell
        (:func:`evalbayes.testing.simulate_irt`).

        Returns the data and the truth: ``theta``, ``b``, ``a``, ``g``, ``sigma_b`` and
        ``sigma_a``.
        """
        rng = np.random.default_rng(seed)
        theta = rng.normal(0.0, 1.0, systems)
        sigma_b = abs(rng.normal(0.0, self.sigma_b_prior))
        b = rng.normal(0.0, sigma_b, tasks)
        if isinstance(self.sigma_a, str):
            sigma_a = abs(rng.normal(0.0, self.sigma_a_prior))
        else:
            sigma_a = float(self.sigma_a)
        a = np.exp(rng.normal(0.0, sigma_a, tasks)) if self.has_discrimination else np.ones(tasks)
        if self.estimates_guess:
            g = rng.beta(*self.guess_prior, tasks)
        else:
            g = np.full(tasks, float(self.guess) if self.kind == "3pl" else 0.0)
        data = simulate_irt(theta, b, a, g, trials, seed=int(rng.integers(2**32)))
        truth = {"theta": theta, "b": b, "a": a, "g": g, "sigma_b": sigma_b, "sigma_a": sigma_a}
        return data, truth

    @staticmethod
    def check_data(data: EvalData) -> None:
        """At least 2 systems and 2 tasks, and every system and task observed at least once."""
        n = data.n.values
        if n.shape[0] < 2 or n.shape[1] < 2:
            raise ValueError(
                f"an IRT model needs at least 2 systems and 2 tasks, got {n.shape[0]} "
                f"system(s) x {n.shape[1]} task(s)"
            )
        require_observed(data)

    def inputs(self, data: EvalData) -> ModelInputs:
        """Observed cells in long format padded to a cached size, or the dense matrices."""
        n, c = data.n.values, data.c.values
        n_sys, n_task = n.shape
        if self.dense(data):
            values = {"obs_n": n.astype(float), "obs_c": c.astype(float)}
            binary = bool(n.max() <= 1)
            return ModelInputs(values, ("dense", n_sys, n_task, binary, self.centered(data)))
        s_idx, t_idx = np.nonzero(n > 0)
        size = padded_size(len(s_idx))
        pad = size - len(s_idx)
        values = {
            "cell_s": np.concatenate([s_idx, np.zeros(pad, np.int64)]).astype(np.int64),
            "cell_t": np.concatenate([t_idx, np.zeros(pad, np.int64)]).astype(np.int64),
            "cell_n": np.concatenate([n[s_idx, t_idx], np.zeros(pad, np.int64)]).astype(float),
            "cell_c": np.concatenate([c[s_idx, t_idx], np.zeros(pad, np.int64)]).astype(float),
        }
        return ModelInputs(values, ("long", n_sys, n_task, size, self.centered(data)))

    def build(self, inputs: ModelInputs) -> Any:
        import pymc as pm
        import pytensor.tensor as pt

        layout: Any
        n_sys: Any
        n_task: Any
        layout, n_sys, n_task, *rest = inputs.shape_key
        centered = rest[-1]
        values = inputs.values
        coords: dict[str, Any] = {"system": np.arange(n_sys), "task": np.arange(n_task)}
        if layout == "long":
            coords["cell"] = np.arange(rest[0])
        with pm.Model(coords=coords) as model:
            if layout == "long":
                cell_s = pm.Data("cell_s", values["cell_s"], dims="cell")
                cell_t = pm.Data("cell_t", values["cell_t"], dims="cell")
                cell_n = pm.Data("cell_n", values["cell_n"], dims="cell")
                cell_c = pm.Data("cell_c", values["cell_c"], dims="cell")
            else:
                obs_n = pm.Data("obs_n", values["obs_n"], dims=("system", "task"))
                obs_c = pm.Data("obs_c", values["obs_c"], dims=("system", "task"))
            sigma_b = pm.HalfNormal("sigma_b", self.sigma_b_prior)
            # theta ~ iid N(0, 1) and b ~ iid N(0, sigma_b), written as mean + zero-sum
            # deviations (the same prior; x - mean(x) is ZeroSumNormal and independent of
            # mean(x)). The two means enter the likelihood only through their gap, so they
            # are rotated into the gap and a prior-only level, independent a priori.
            theta_dev = pm.ZeroSumNormal("theta_dev", sigma=1.0, dims="system")
            if centered:
                b_dev = pm.ZeroSumNormal("b_dev", sigma=sigma_b, dims="task")
            else:
                b_dev = sigma_b * pm.ZeroSumNormal("b_dev_z", sigma=1.0, dims="task")
            var_theta = 1.0 / n_sys  # Var(mean theta)
            var_b = sigma_b**2 / n_task  # Var(mean b)
            total = var_theta + var_b
            gap = pm.Normal("location_gap_z", 0.0, 1.0) * pt.sqrt(total)
            level = pm.Normal("location_level_z", 0.0, 1.0) * pt.sqrt(var_theta * var_b / total)
            theta = pm.Deterministic(
                "theta", level + gap * var_theta / total + theta_dev, dims="system"
            )
            b = pm.Deterministic("b", level - gap * var_b / total + b_dev, dims="task")
            a = None
            if self.has_discrimination:
                if self.sigma_a == "estimate":
                    sigma_a = pm.HalfNormal("sigma_a", self.sigma_a_prior)
                else:
                    sigma_a = pt.as_tensor_variable(float(self.sigma_a))
                # always non-centred: centred log a had R-hat 1.94 (benchmarks/irt/)
                a_z = pm.Normal("log_a_z", 0.0, 1.0, dims="task")
                a = pm.Deterministic("a", pt.exp(sigma_a * a_z), dims="task")
            g = None
            if self.kind == "3pl":
                if self.guess == "estimate":
                    g = pm.Beta("g", *self.guess_prior, dims="task")
                else:
                    g = pt.as_tensor_variable(float(self.guess))
            if layout == "long":
                # gather the observed cells
                eta = theta[cell_s] - b[cell_t]
                if a is not None:
                    eta = a[cell_t] * eta
                if g is not None and g.ndim:
                    g = g[cell_t]
                loglik = _binomial_logit_loglik(pt, eta, cell_n, cell_c, g, fused=False)
            else:
                # every cell of the system x task matrix; n = c = 0 masks a missing cell
                if a is not None:  # not a * (theta - b): see "Layouts of the likelihood"
                    eta = a[None, :] * theta[:, None] - (a * b)[None, :]
                else:
                    eta = theta[:, None] - b[None, :]
                if g is not None and g.ndim:
                    g = g[None, :]
                binary = rest[0]
                if g is None and binary:
                    loglik = -(obs_n * pt.softplus((1.0 - 2.0 * obs_c) * eta)).sum()
                else:
                    loglik = _binomial_logit_loglik(pt, eta, obs_n, obs_c, g, fused=True)
            pm.Potential("loglik", loglik)
        return model

    def sample(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """NUTS on the fused log density (:meth:`fused`), or the graph (:meth:`Model.sample`)."""
        if not self.fused(sampler.method):
            return super().sample(data, sampler)
        if sampler.method != "nutpie":
            raise ValueError(f"layout='fused' is sampled by nutpie only (method={sampler.method!r} "
                             "needs a graph): use layout 'auto', 'dense' or 'long'")
        n, c = data.n.values, data.c.values
        n_sys, n_task = n.shape
        two_pl = self.kind == "2pl"
        estimate = self.sigma_a == "estimate"
        layout = _fused.FusedLayout(
            n_sys, n_task, two_pl, self.centered(data),
            0.5 if estimate else float(self.sigma_a), estimate, self.sigma_b_prior,
            self.sigma_a_prior)
        settings = layout.settings()
        if np.count_nonzero(n) >= DENSE_MIN_SHARE * n.size:
            arrays: tuple[np.ndarray, ...] = (np.ascontiguousarray(n, float),
                                              np.ascontiguousarray(c, float))
        else:
            s_idx, t_idx = np.nonzero(n > 0)
            arrays = (n[s_idx, t_idx].astype(float), c[s_idx, t_idx].astype(float),
                      s_idx.astype(np.int64), t_idx.astype(np.int64))
        start = np.zeros(layout.n_dim)
        start[0] = np.log(self.sigma_b_prior)

        def initial_point(seed: int) -> np.ndarray:
            # PyMC's and nutpie's start: U(-1, 1) jitter on the unconstrained coordinates
            return start + np.random.default_rng(seed).uniform(-1.0, 1.0, layout.n_dim)

        keep = self.posterior_vars(data)
        shapes = {"theta": (n_sys,), "b": (n_task,), "a": (n_task,), "sigma_b": (),
                  "sigma_a": ()}
        dims = {"theta": ("system",), "b": ("task",), "a": ("task",)}
        tree = sample_log_density(
            lambda x: _fused.logp_grad(x, settings, *arrays),
            lambda x: _fused.expand(x, settings),
            initial_point,
            layout.n_dim,
            {name: shapes[name] for name in keep},
            {name: dims[name] for name in keep if name in dims},
            {"system": np.arange(n_sys), "task": np.arange(n_task)},
            sampler,
        )
        posterior = tree["posterior"].to_dataset()[keep]
        groups = {"posterior": self.label_dims(posterior, data)}
        if "sample_stats" in tree.children:
            groups["sample_stats"] = tree["sample_stats"].to_dataset()
        return groups

    def posterior_vars(self, data: EvalData) -> list[str]:
        keep = ["theta", "b", "sigma_b"]
        if self.has_discrimination:
            keep += ["a", "sigma_a"] if self.sigma_a == "estimate" else ["a"]
        if self.estimates_guess:
            keep.append("g")
        return keep

    # ------------------------------------------------------------------ draws
    def draws(self, posterior: xr.Dataset) -> IRTDraws:
        """The parameter draws as arrays with leading dims (chain, draw)."""
        theta = posterior["theta"].transpose("chain", "draw", "system").values
        b = posterior["b"].transpose("chain", "draw", "task").values
        if self.has_discrimination:
            a = posterior["a"].transpose("chain", "draw", "task").values
            if self.sigma_a == "estimate":
                sigma_a = posterior["sigma_a"].transpose("chain", "draw").values
            else:
                sigma_a = np.full(b.shape[:2], float(self.sigma_a))
        else:
            a, sigma_a = np.ones_like(b), None
        if self.estimates_guess:
            g = posterior["g"].transpose("chain", "draw", "task").values
        elif self.kind == "3pl":
            g = np.full_like(b, float(self.guess))
        else:
            g = np.zeros_like(b)
        sigma_b = posterior["sigma_b"].transpose("chain", "draw").values
        return IRTDraws(theta=theta, b=b, a=a, g=g, sigma_b=sigma_b, sigma_a=sigma_a)

    # ------------------------------------------------------------------ derived
    def rates(
        self, posterior: xr.Dataset, data: EvalData, seed: int, tasks: slice
    ) -> np.ndarray:
        """Draws of ``p[s, t] = g + (1 - g) sigmoid(a (theta - b))`` (no Monte Carlo step)."""
        return self.draws(posterior).prob(tasks)

    def population_curve(
        self, posterior: xr.Dataset, data: EvalData, k: np.ndarray, metric: str
    ) -> np.ndarray:
        """``E[f(p(theta_s, item))]`` over a new item from the item population, by quadrature.

        Every system is integrated against the same item distribution of the same draw, so
        the difference of two systems is paired.
        """
        draws = self.draws(posterior)
        chains, n_draw, n_sys = draws.theta.shape
        flat = chains * n_draw
        return item_population_curve(
            draws.theta.reshape(flat, n_sys),
            draws.sigma_b.reshape(flat),
            None if draws.sigma_a is None else draws.sigma_a.reshape(flat),
            self.guess_rule(),
            k,
            metric,
        ).reshape(chains, n_draw, n_sys, len(k))

    def cell_log_likelihood(
        self, posterior: xr.Dataset, data: EvalData, s_idx: np.ndarray, t_idx: np.ndarray
    ) -> np.ndarray:
        """Binomial log pmf of each observed cell, dims ``(chain, draw, cell)``.

        ``log C(n, c) + c log p + (n - c) log(1 - p)``, with ``log p`` and ``log(1 - p)``
        from ``log_expit`` so that saturated cells keep their precision. Coordinates
        ``cell_system`` and ``cell_task`` name each cell (only ``n > 0`` cells appear).
        """
        draws = self.draws(posterior)
        n, c = data.n.values[s_idx, t_idx], data.c.values[s_idx, t_idx]
        eta = draws.a[..., t_idx] * (draws.theta[..., s_idx] - draws.b[..., t_idx])
        log_q, log_1mq = log_expit(eta), log_expit(-eta)
        if self.kind == "3pl":
            g = draws.g[..., t_idx]
            log_p = np.logaddexp(np.log(g), np.log1p(-g) + log_q)
            log_1mp = np.log1p(-g) + log_1mq
        else:
            log_p, log_1mp = log_q, log_1mq
        return binomial_log_choose(n, c) + c * log_p + (n - c) * log_1mp


def _binomial_logit_loglik(pt: Any, eta: Any, n: Any, c: Any, g: Any, *, fused: bool) -> Any:
    """Sum of ``c log p + (n - c) log(1 - p)`` with ``p = g + (1 - g) sigmoid(eta)`` (pytensor).

    Without a floor and with ``fused``, the one-softplus form ``c eta - n softplus(eta)``;
    otherwise ``log sigmoid(eta) = -softplus(-eta)`` and ``log(1 - sigmoid(eta)) =
    -softplus(eta)``, stable in both tails. The binomial coefficient is a constant and left out.
    """
    if g is None:
        if fused:
            return (c * eta - n * pt.softplus(eta)).sum()
        log_p, log_1mp = -pt.softplus(-eta), -pt.softplus(eta)
    else:
        log_q, log_1mq = -pt.softplus(-eta), -pt.softplus(eta)
        log_p = pt.logaddexp(pt.log(g), pt.log1p(-g) + log_q)
        log_1mp = pt.log1p(-g) + log_1mq
    return (c * log_p + (n - c) * log_1mp).sum()
