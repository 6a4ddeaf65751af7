"""Running inference: sampler settings, the compiled-model cache and ``run_inference``.

Below the models and the results in the layering: a model builds a PyMC model and hands it
here; the results record the :class:`SamplerConfig` that produced them. PyMC, pytensor and
nutpie are imported inside :func:`run_inference` only, so importing this module is cheap.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.names import (
    APPROXIMATE_METHODS,
    APPROXIMATION_KIND,
    MCMC_METHODS,
    NUTS_METHODS,
    SAMPLER_DEFAULTS,
    UNSET,
    Method,
    check_count,
    check_method,
    check_seed,
    pick_seed,
)

__all__ = [
    "COMPILED_MODELS",
    "SamplerConfig",
    "config_hash",
    "laplace_draws",
    "padded_size",
    "register_jax_softplus",
    "resolve_seed",
    "run_inference",
    "sample_log_density",
]

#: Compiled nutpie models kept for the life of the process, keyed by model config and shape.
COMPILED_MODELS: dict[Hashable, Any] = {}


#: Upper bound on draws x chains of one fit (memory of the posterior and its curves).
MAX_TOTAL_DRAWS = 10_000_000

@dataclass(frozen=True)
class SamplerConfig:
    """How to run inference.

    Parameters
    ----------
    method : str
        One of :data:`~evalbayes._core.names.METHODS`. ``nutpie`` (default, NUTS compiled
        with numba; Hoffman & Gelman 2014), ``pymc`` (PyMC's own NUTS, the fallback),
        ``numpyro`` (NUTS in JAX, optional extra ``evalbayes[jax]``; the route to GPUs),
        ``smc`` (tempered sequential Monte Carlo, one small run per system, for models whose
        systems are independent a posteriori: the rate grid's default; ``chains x draws``
        particles; Del Moral, Doucet & Jasra 2006), ``exact`` (independent draws from the exact
        posterior where a model has a low-dimensional one, e.g. the independent
        Beta-Binomial by quadrature), ``advi`` / ``pathfinder`` (variational,
        fast, *approximate*: labelled so in every output; Kucukelbir et al. 2017, Zhang et
        al. 2022), ``laplace`` (a normal at the posterior mode on the unconstrained space,
        covariance the inverse negative Hessian; *approximate*, labelled so; Tierney & Kadane
        1986 / Gelman et al., BDA3 ch. 4.1; :func:`laplace_draws`).
    draws, tune, chains : int
        Posterior draws per chain, warm-up iterations per chain, number of chains.
    seed : int
        Random seed (PyMC calls it ``random_seed``); the same seed gives the same draws.
    target_accept : float
        NUTS target acceptance rate.
    progressbar : bool
        Show sampling progress.
    vi_iterations : int
        Optimisation steps for ``advi``.
    client : None, str or distributed.Client
        ``method="smc"`` only: map the systems over a Dask cluster (each system's run is its
        own, so the draws are the same as on threads): a running scheduler's address
        (``"tcp://host:8786"``) or a :class:`~distributed.Client`. ``None`` (default): a
        thread pool in this process, or the local cluster of ``n_workers``.
    n_workers : int, optional
        ``method="smc"`` only: a :class:`~distributed.LocalCluster` of this many
        single-threaded worker processes for this fit (``client`` and ``n_workers`` follow
        :func:`~evalbayes.suite.fit_suite`). Neither is recorded in the fit: they change
        where the numbers are computed, not the numbers.
    """

    method: Method = SAMPLER_DEFAULTS["method"]
    draws: int = SAMPLER_DEFAULTS["draws"]
    tune: int = SAMPLER_DEFAULTS["tune"]
    chains: int = SAMPLER_DEFAULTS["chains"]
    seed: int = SAMPLER_DEFAULTS["seed"]
    target_accept: float = SAMPLER_DEFAULTS["target_accept"]
    progressbar: bool = False
    vi_iterations: int = 30_000
    client: Any = field(default=None, compare=False, repr=False)
    n_workers: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        check_method(self.method)
        if self.n_workers is not None:
            check_count(self.n_workers, "n_workers")
        if (self.client is not None or self.n_workers is not None) and self.method != "smc":
            raise ValueError(
                "client / n_workers map the systems of method='smc' over a Dask cluster; "
                f"method={self.method!r} samples every system in one run"
            )
        check_count(self.draws, "draws")
        check_count(self.chains, "chains")
        # NUTS needs warm-up to adapt its step size; other methods ignore tune.
        check_count(self.tune, "tune", minimum=1 if self.method in NUTS_METHODS else 0)
        check_seed(self.seed)
        check_count(self.vi_iterations, "vi_iterations")
        if self.draws * self.chains > MAX_TOTAL_DRAWS:
            raise ValueError(
                f"draws x chains = {self.draws:,} x {self.chains:,} exceeds "
                f"{MAX_TOTAL_DRAWS:,}: every derived curve stores one value per draw and cell "
                "(gigabytes before any result); 1000 draws x 4 chains are plenty"
            )
        if not 0 < self.target_accept < 1:
            raise ValueError(f"target_accept must lie in (0, 1), got {self.target_accept}")

    @property
    def mcmc(self) -> bool:
        """True for Monte Carlo samplers (NUTS, SMC), whose draws need convergence
        diagnostics."""
        return self.method in MCMC_METHODS

    @property
    def approximate(self) -> bool:
        """True for variational methods, whose intervals are not exact posterior intervals."""
        return self.method in APPROXIMATE_METHODS

    @property
    def approximation_kind(self) -> str:
        """What kind of approximation an ``approximate`` method is (``"variational"``,
        ``"Laplace"``, ...), as every output labels it."""
        return APPROXIMATION_KIND.get(self.method, "variational")

    def describe(self, model_name: str) -> str:
        """A fit's short label: ``"model (method, chains x draws)"``, with ``[APPROXIMATE:
        kind]`` after it where the method is approximate."""
        text = f"{model_name} ({self.method}, {self.chains}x{self.draws})"
        return text + f" [APPROXIMATE: {self.approximation_kind}]" if self.approximate else text

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serialisable), without ``client`` and ``n_workers`` (where the
        draws were computed, not what they are)."""
        out = asdict(replace(self, client=None))
        del out["client"], out["n_workers"]
        return out


def resolve_seed(seed: int | None, random_seed: int | None) -> int:
    """The seed from either spelling (``seed`` or PyMC's ``random_seed``); default 0."""
    value = pick_seed(seed, UNSET if random_seed is None else random_seed, default=None)
    return SAMPLER_DEFAULTS["seed"] if value is None else check_seed(value)


def config_hash(config: Any) -> str:
    """Stable short hash (SHA-256, 16 hex digits) of a JSON-serialisable object."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def padded_size(size: int) -> int:
    """Padded length for compiled-model reuse: the next power of two, at least 16.

    Data of similar size share one compiled model (``run_inference`` caches by shape).
    """
    return max(16, 1 << (int(size) - 1).bit_length())


def _nutpie_sample(nutpie: Any, compiled: Any, sampler: SamplerConfig) -> Any:
    """``nutpie.sample`` of a compiled model with the sampler's settings (both nutpie paths:
    a PyMC graph and a hand-written log density)."""
    return nutpie.sample(
        compiled,
        draws=sampler.draws,
        tune=sampler.tune,
        chains=sampler.chains,
        seed=sampler.seed,
        progress_bar=sampler.progressbar,
        target_accept=sampler.target_accept,
    )


def run_inference(
    build: Callable[[], Any],
    sampler: SamplerConfig,
    cache_key: Hashable | None = None,
    data_updates: dict[str, np.ndarray] | None = None,
) -> xr.DataTree:
    """Run the configured inference method on the PyMC model returned by ``build()``.

    With nutpie and a ``cache_key``, the compiled model is kept for the life of the process
    (:data:`COMPILED_MODELS`) and later calls with the same key only swap the data
    (``with_data``), skipping the 5-20 s numba compile. ``data_updates`` are the ``pm.Data``
    values for this call. Variational fits come back with ``chain`` and ``draw`` dims
    (``chains`` x ``draws`` draws, reshaped), like MCMC fits, so every summary works.
    """
    method = sampler.method
    if method == "exact":
        raise ValueError("method='exact' is available only for models with an exact "
                         "posterior (the independent Beta-Binomial); use nutpie")
    if method == "smc":
        raise ValueError("method='smc' is available only for models whose systems are "
                         "independent a posteriori (the rate grid without broken tasks); "
                         "use nutpie")
    if method == "nutpie":
        import nutpie

        compiled = COMPILED_MODELS.get(cache_key) if cache_key is not None else None
        if compiled is None:
            compiled = nutpie.compile_pymc_model(build())
            if cache_key is not None:
                COMPILED_MODELS[cache_key] = compiled
        if data_updates:
            compiled = compiled.with_data(**data_updates)
        return _nutpie_sample(nutpie, compiled, sampler)
    if method == "numpyro":
        _require("numpyro", "method='numpyro' needs the optional JAX extra: "
                 "pip install 'evalbayes[jax]'")
        if "jax" not in sys.modules:  # XLA reads the flag once, when JAX starts
            os.environ["XLA_FLAGS"] = host_device_flags(
                os.environ.get("XLA_FLAGS", ""), sampler.chains
            )
        register_jax_softplus()
        return _run_pymc(build, sampler, data_updates)
    with reproducible_numba():
        return _run_pymc(build, sampler, data_updates)


def sample_log_density(
    logp_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
    expand: Callable[[np.ndarray], dict[str, np.ndarray]],
    initial_point: Callable[[int], np.ndarray],
    n_dim: int,
    shapes: dict[str, tuple[int, ...]],
    dims: dict[str, tuple[str, ...]],
    coords: dict[str, np.ndarray],
    sampler: SamplerConfig,
) -> xr.DataTree:
    """NUTS by nutpie on a log density given as a Python function (``method="nutpie"``).

    For models that write their log density and gradient by hand (compiled with numba and
    cached on disk) instead of as a PyMC graph: nutpie's sampler is the same (Hoffman &
    Gelman 2014 with nutpie's mass-matrix adaptation), but no pytensor graph is compiled,
    so nothing is compiled per process. ``logp_grad(x)`` returns the log density at the
    unconstrained point ``x`` (length ``n_dim``) and its gradient; ``expand(x)`` the named
    parameters stored as draws (``shapes``, ``dims``, ``coords``); ``initial_point(seed)``
    a starting point per chain.
    """
    import nutpie
    from nutpie.compiled_pyfunc import from_pyfunc

    names = list(shapes)

    def make_logp_fn() -> Callable[..., tuple[float, np.ndarray]]:
        return lambda x, **_: logp_grad(x)

    def make_expand_fn(*_: Any) -> Callable[..., dict[str, np.ndarray]]:
        return lambda x, **_: expand(x)

    def make_initial_point(seed: int) -> np.ndarray:
        return initial_point(seed)

    compiled = from_pyfunc(
        ndim=n_dim,
        make_logp_fn=make_logp_fn,
        make_expand_fn=make_expand_fn,
        make_initial_point_fn=make_initial_point,
        expanded_dtypes=[np.dtype("float64")] * len(names),
        expanded_shapes=[shapes[name] for name in names],
        expanded_names=names,
        dims=dims,
        coords=coords,
    )
    return _nutpie_sample(nutpie, compiled, sampler)


def reproducible_numba() -> Any:
    """A context in which pytensor compiles its numba functions without ``fastmath``.

    With ``fastmath`` (pytensor's default), a function compiled in this process and the same
    function loaded from pytensor's on-disk cache by another process give results that differ
    in the last bits (measured on the rate-grid gradient: 4.4e-16; ADVI draws: 2.7e-15), so
    the same seed gave different numbers on the first run (cold cache) and later ones; NUTS
    amplifies such differences into different draws. Without ``fastmath`` a cold and a warm
    cache agree exactly (``tests/inference/test_reproducible.py``). Used for the PyMC-compiled
    methods (``pymc``, ``advi``, ``pathfinder``, ``laplace``); nutpie and numpyro compile
    their own way.
    """
    import contextlib

    import pytensor

    if not hasattr(pytensor.config, "numba__fastmath"):  # pragma: no cover - older pytensor
        return contextlib.nullcontext()
    return pytensor.config.change_flags(numba__fastmath=False)


def _run_pymc(build: Callable[[], Any], sampler: SamplerConfig,
              data_updates: dict[str, np.ndarray] | None) -> xr.DataTree:
    """Every method but nutpie: PyMC's NUTS or numpyro, ADVI, pathfinder, Laplace."""
    method = sampler.method
    if method == "laplace":
        import pymc as pm

        model = build()
        if data_updates:
            with model:
                pm.set_data(data_updates)
        return laplace_draws(model, sampler.chains, sampler.draws, sampler.seed)
    if method == "pathfinder":
        _require("pymc_extras", "method='pathfinder' needs pymc-extras: "
                 "pip install pymc-extras (or use method='advi')")
    import pymc as pm

    model = build()
    if data_updates:
        with model:
            pm.set_data(data_updates)
    with model:
        if method in ("pymc", "numpyro"):
            return pm.sample(
                draws=sampler.draws,
                tune=sampler.tune,
                chains=sampler.chains,
                cores=1 if method == "pymc" else None,
                random_seed=sampler.seed,
                target_accept=sampler.target_accept,
                progressbar=sampler.progressbar,
                nuts_sampler=method,
                compute_convergence_checks=False,
            )
        if method == "advi":
            approx = pm.fit(
                n=sampler.vi_iterations,
                method="advi",
                random_seed=sampler.seed,
                progressbar=sampler.progressbar,
            )
            tree = approx.sample(sampler.draws * sampler.chains, random_seed=sampler.seed)
        else:
            import pymc_extras as pmx

            tree = pmx.fit(
                method="pathfinder",
                num_draws=sampler.draws * sampler.chains,
                random_seed=sampler.seed,
            )
    return _as_chains(tree, sampler.chains, sampler.draws)


def laplace_draws(model: Any, chains: int, draws: int, seed: int) -> xr.DataTree:
    """Laplace approximation of a PyMC model's posterior, as ``chains x draws`` draws.

    On the unconstrained space ``x`` (PyMC's value variables: logs of scales, zero-sum
    coordinates), with ``log p(x)`` the log density including the Jacobians::

        x* = argmax log p(x)            (L-BFGS-B, scipy; the mode *with* the Jacobian,
                                         i.e. on the unconstrained space, not pm.find_MAP's)
        P  = -d^2 log p / dx^2 at x*    (pytensor's exact Hessian)
        x ~ N(x*, P^-1),  drawn as x* + L^-T z with P = L L^T, z ~ N(0, I)

    then every free variable and deterministic is computed from each draw (so positive
    parameters stay positive and zero-sum ones sum to zero). The normal is exact for a
    Gaussian posterior and asymptotically right as the data grow (Bernstein-von Mises); in
    hierarchies with few observations per parameter it is not (the mode of a scale is not its
    mean), which is why the result is labelled approximate (Tierney & Kadane 1986; Gelman et
    al., *Bayesian Data Analysis*, 3rd ed., sec. 4.1 and 13.3). The Hessian is dense,
    ``dim^2`` numbers, so this is for models up to a few thousand parameters.

    Raises
    ------
    ValueError
        When the negative Hessian at the mode is not positive definite (no normal
        approximation there: the mode is on a ridge or not a maximum).
    """
    import pytensor
    from pymc.blocking import DictToArrayBijection
    from pymc.pytensorf import join_nonshared_inputs
    from scipy.optimize import minimize

    value_vars = model.value_vars
    initial = model.initial_point()
    start = {v.name: np.asarray(initial[v.name], dtype=float) for v in value_vars}
    [logp], flat = join_nonshared_inputs(start, [model.logp(jacobian=True)], value_vars)
    grad = pytensor.gradient.grad(logp, flat)
    value_and_grad = pytensor.function([flat], [logp, grad])  # type: ignore[list-item]

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = value_and_grad(x)
        return -float(value), -np.asarray(grad, dtype=float)

    x0 = DictToArrayBijection.map(start).data
    fit = minimize(objective, x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 10_000, "maxfun": 20_000, "gtol": 1e-6})
    x_mode = fit.x
    hessian = pytensor.function([flat], pytensor.gradient.hessian(logp, flat))(x_mode)
    precision = -np.asarray(hessian, dtype=float)
    precision = (precision + precision.T) / 2
    try:
        chol = np.linalg.cholesky(precision)
    except np.linalg.LinAlgError as err:
        raise ValueError(
            "method='laplace': the Hessian of the log density at the mode is not negative "
            "definite, so there is no normal approximation there; use NUTS (nutpie)"
        ) from err
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((chains * draws, x_mode.size))
    # x = x* + L^-T z has covariance L^-T L^-1 = P^-1
    x = x_mode + np.linalg.solve(chol.T, z.T).T
    names = [v.name for v in model.free_RVs] + [v.name for v in model.deterministics]
    outputs = model.replace_rvs_by_values([model[name] for name in names])
    outs, flat_in = join_nonshared_inputs(start, outputs, value_vars)
    forward = pytensor.function([flat_in], outs, on_unused_input="ignore")
    columns = [forward(row) for row in x]
    variables = {}
    for i, name in enumerate(names):
        values = np.stack([col[i] for col in columns]).reshape(
            chains, draws, *np.shape(columns[0][i])
        )
        dims = ("chain", "draw", *(model.named_vars_to_dims.get(name) or
                                   tuple(f"{name}_dim_{j}" for j in range(values.ndim - 2))))
        variables[name] = (dims, values)
    posterior = xr.Dataset(variables, coords={"chain": np.arange(chains),
                                              "draw": np.arange(draws)})
    return xr.DataTree.from_dict({"posterior": posterior})


def host_device_flags(xla_flags: str, chains: int) -> str:
    """``XLA_FLAGS`` with one CPU host device per chain, unless a device count is already set.

    numpyro runs chains in parallel only across devices, and JAX sees a single CPU device
    by default, so without this flag ``method="numpyro"`` samples the chains one after
    another on CPU (half the speed on 2 cores: SWE-bench Verified 2PL 4 x (1000 + 1000) took
    185 s with four host devices, ``benchmarks/irt/leaderboard.md``). The flag only shapes the
    CPU platform, so GPU runs are unaffected. It must be in the environment before JAX is
    first imported; :func:`run_inference` adds it then, and leaves a user's own setting alone.
    """
    if "xla_force_host_platform_device_count" in xla_flags:
        return xla_flags
    return f"{xla_flags} --xla_force_host_platform_device_count={chains}".strip()


def register_jax_softplus() -> None:
    """Translate pytensor's ``softplus`` to JAX as ``max(x, 0) + log1p(exp(-|x|))``.

    pytensor's own JAX translation evaluates three exponentials and a ``log1p`` per element
    inside nested ``where`` (every branch is computed), and ``softplus`` is the whole
    per-cell cost of the Bernoulli-logit likelihoods (IRT, task effects). The one-exponential
    form is the same function (stable in both tails: ``exp(x)`` for x -> -inf, ``x`` for
    x -> +inf) with derivative ``sigmoid(x)`` (given explicitly: JAX's derivative of the
    ``max`` / ``abs`` form is 0 at x = 0). Measured on the dense 2PL of SWE-bench Verified
    (61,500 cells), full NUTS 4 x (1000 + 1000) on 2 cores: 104 s instead of 185 s
    (``benchmarks/irt/leaderboard.md``). Registered in pytensor's ``jax_funcify`` dispatch
    for the process (idempotent); needs JAX.
    """
    import jax
    import jax.numpy as jnp
    from pytensor.link.jax.dispatch import jax_funcify
    from pytensor.scalar import Softplus

    @jax.custom_jvp
    def softplus(x: Any) -> Any:
        return jnp.maximum(x, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(x)))

    @softplus.defjvp
    def softplus_jvp(primals: Any, tangents: Any) -> Any:
        # derivative sigmoid(x) from the same exponential; exact at x = 0 too, where the
        # derivatives of max and abs would otherwise sum to 0 instead of 1/2
        (x,), (dx,) = primals, tangents
        e = jnp.exp(-jnp.abs(x))
        slope = jnp.where(x >= 0, 1.0, e) / (1.0 + e)
        return jnp.maximum(x, 0.0) + jnp.log1p(e), slope * dx

    jax_funcify.register(Softplus)(lambda op, **kwargs: softplus)


def _require(module: str, message: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ValueError(message)


def _as_chains(tree: xr.DataTree, chains: int, draws: int) -> xr.DataTree:
    """Reshape a variational fit's ``chains * draws`` draws into ``(chain, draw)``."""
    posterior = tree["posterior"].to_dataset()
    flat = posterior.stack(sample=("chain", "draw")).transpose("sample", ...)
    flat = flat.drop_vars(["sample", "chain", "draw"]).assign_coords(
        sample=np.arange(flat.sizes["sample"])
    )
    if flat.sizes["sample"] != chains * draws:
        return tree
    index = xr.Coordinates.from_pandas_multiindex(
        pd.MultiIndex.from_product([np.arange(chains), np.arange(draws)], names=["chain", "draw"]),
        "sample",
    )
    reshaped = flat.assign_coords(index).unstack("sample").transpose("chain", "draw", ...)
    return xr.DataTree.from_dict({"posterior": reshaped})
