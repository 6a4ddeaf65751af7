"""What every model shares: configuration, sampler settings, and the inference back ends.

A model is a small immutable object holding configuration only (priors, pooling, kind).
``fit(data)`` builds a fresh PyMC model, runs inference and returns an immutable
:class:`~evalbayes.results.Posterior`. Derived quantities (pass@k curves, success
probabilities, posterior predictive draws, pointwise log-likelihood) are computed by the
model class from the posterior draws, in NumPy, so that a saved fit can be reloaded and
summarised without PyMC compiling anything.

PyMC, pytensor and nutpie are imported inside functions, never at module import.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
import xarray as xr

from evalbayes.data import EvalData

if TYPE_CHECKING:  # pragma: no cover
    from evalbayes.results import Posterior

__all__ = [
    "METHODS",
    "Model",
    "SamplerConfig",
    "cell_draws",
    "cell_log_likelihood",
    "config_hash",
    "padded_size",
    "run_inference",
]

Method = Literal["nutpie", "pymc", "numpyro", "advi", "pathfinder"]
METHODS: tuple[str, ...] = ("nutpie", "pymc", "numpyro", "advi", "pathfinder")
APPROXIMATE_METHODS = ("advi", "pathfinder")


@dataclass(frozen=True)
class SamplerConfig:
    """How to run inference.

    Parameters
    ----------
    method : {"nutpie", "pymc", "numpyro", "advi", "pathfinder"}
        ``nutpie`` (default, NUTS compiled with numba), ``pymc`` (PyMC's own NUTS, the
        fallback), ``numpyro`` (NUTS in JAX, optional extra ``evalbayes[jax]``; the route to
        GPUs), ``advi`` / ``pathfinder`` (variational, fast, *approximate*: labelled so in
        every output).
    draws, tune, chains : int
        Posterior draws per chain, warm-up iterations per chain, number of chains.
    seed : int
        Random seed; the same seed gives the same draws.
    target_accept : float
        NUTS target acceptance rate.
    progressbar : bool
        Show sampling progress.
    vi_iterations : int
        Optimisation steps for ``advi``.
    """

    method: Method = "nutpie"
    draws: int = 1000
    tune: int = 1000
    chains: int = 4
    seed: int = 0
    target_accept: float = 0.9
    progressbar: bool = False
    vi_iterations: int = 30_000

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        for name in ("draws", "chains"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.tune < 0:
            raise ValueError(f"tune must be >= 0, got {self.tune}")
        if not 0 < self.target_accept < 1:
            raise ValueError(f"target_accept must lie in (0, 1), got {self.target_accept}")

    @property
    def approximate(self) -> bool:
        """True for variational methods, whose intervals are not exact posterior intervals."""
        return self.method in APPROXIMATE_METHODS

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serialisable)."""
        return asdict(self)


def config_hash(config: dict[str, Any]) -> str:
    """Stable short hash of a JSON-serialisable configuration."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Model(ABC):
    """Base class of evalbayes models: configuration only, ``fit`` returns a Posterior."""

    name: ClassVar[str]
    approximate_ok: ClassVar[bool] = True
    _cache: ClassVar[dict[Hashable, Any]] = {}

    # --------------------------------------------------------------- configuration
    def to_config(self) -> dict[str, Any]:
        """The model's configuration as a JSON-serialisable dict (maps onto models/*.toml)."""
        config = {"model": self.name}
        for key, value in asdict(self).items():
            config[key] = list(value) if isinstance(value, tuple) else value
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Model:
        """Rebuild a model from :meth:`to_config` output (unknown keys raise)."""
        config = dict(config)
        name = config.pop("model", cls.name)
        if name != cls.name:
            raise ValueError(f"config is for model {name!r}, not {cls.name!r}")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(config) - known)
        if unknown:
            raise ValueError(f"unknown {cls.name} settings {unknown}; known: {sorted(known)}")
        kwargs = {
            key: tuple(value) if isinstance(value, list) else value for key, value in config.items()
        }
        return cls(**kwargs)

    # --------------------------------------------------------------- fitting
    def fit(
        self,
        data: EvalData,
        *,
        method: Method = "nutpie",
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 4,
        seed: int = 0,
        target_accept: float = 0.9,
        progressbar: bool = False,
        check: bool = True,
    ) -> Posterior:
        """Fit the model to ``data`` and return an immutable :class:`Posterior`.

        Parameters
        ----------
        data : EvalData
            Counts; missing cells (``n = 0``) are skipped.
        method, draws, tune, chains, seed, target_accept, progressbar
            See :class:`SamplerConfig`.
        check : bool
            Run :meth:`Posterior.diagnostics` after sampling, warning loudly on failure.
        """
        from evalbayes.results import Posterior

        if not isinstance(data, EvalData):
            raise TypeError(f"fit expects EvalData, got {type(data).__name__}")
        sampler = SamplerConfig(
            method=method,
            draws=draws,
            tune=tune,
            chains=chains,
            seed=seed,
            target_accept=target_accept,
            progressbar=progressbar,
        )
        if sampler.approximate and not self.approximate_ok:
            raise ValueError(f"{self.name} does not support method={method!r}")
        posterior_groups = self._fit(data, sampler)
        result = Posterior.from_groups(self, data, sampler, posterior_groups)
        if check and not sampler.approximate and self.needs_mcmc:
            result.diagnostics(warn=True)
        return result

    @property
    def needs_mcmc(self) -> bool:
        """False when the posterior is drawn exactly (conjugate), so no MCMC diagnostics."""
        return True

    @abstractmethod
    def _fit(self, data: EvalData, sampler: SamplerConfig) -> dict[str, xr.Dataset]:
        """Run inference; return DataTree groups (at least ``posterior``)."""

    # --------------------------------------------------------------- derived quantities
    @abstractmethod
    def curve(
        self,
        posterior: xr.Dataset,
        data: EvalData,
        k: np.ndarray,
        metric: str,
        estimand: str,
        per_task: bool,
        seed: int = 0,
    ) -> xr.DataArray:
        """pass@k / pass^k draws, dims ``(chain, draw, system, [task,] k)``.

        ``seed`` drives any Monte Carlo step (e.g. drawing latent rates of a collapsed
        model), so the same fit and seed give the same numbers.
        """

    @abstractmethod
    def success_prob(self, posterior: xr.Dataset, data: EvalData, seed: int) -> xr.DataArray:
        """Draws of the per-cell success probability, dims ``(chain, draw, system, task)``."""

    @abstractmethod
    def log_likelihood(self, posterior: xr.Dataset, data: EvalData) -> xr.DataArray:
        """Pointwise log-likelihood per observed cell, dims ``(chain, draw, cell)``."""

    def posterior_predictive(
        self, posterior: xr.Dataset, data: EvalData, seed: int
    ) -> xr.DataArray:
        """Replicated counts ``c_rep ~ Binomial(n, p)`` on the observed cells.

        Dims ``(chain, draw, system, task)``; missing cells are 0.
        """
        p = self.success_prob(posterior, data, seed)
        rng = np.random.default_rng([seed, 1])
        n = np.broadcast_to(data.n.values, p.shape)
        c_rep = rng.binomial(n, np.clip(p.values, 0.0, 1.0))
        return xr.DataArray(c_rep, dims=p.dims, coords=p.coords, name="c")

    def estimands(self) -> tuple[str, ...]:
        """Estimands this model can report."""
        return ("tasks", "population")


def padded_size(size: int) -> int:
    """Padded length for compiled-model reuse: the next power of two, at least 16.

    Data of similar size share one compiled model (``run_inference`` caches by shape).
    """
    return max(16, 1 << (int(size) - 1).bit_length())


def cell_draws(
    values: np.ndarray, posterior: xr.Dataset, data: EvalData, name: str
) -> xr.DataArray:
    """Wrap per-cell draws ``(chain, draw, system, task)`` with the fit's coordinates."""
    return xr.DataArray(
        values,
        dims=("chain", "draw", "system", "task"),
        coords={
            "chain": posterior["chain"].values,
            "draw": posterior["draw"].values,
            "system": data.dataset["system"].values,
            "task": data.dataset["task"].values,
        },
        name=name,
    )


def cell_log_likelihood(
    values: np.ndarray,
    posterior: xr.Dataset,
    data: EvalData,
    s_idx: np.ndarray,
    t_idx: np.ndarray,
) -> xr.DataArray:
    """Wrap pointwise log-likelihood draws ``(chain, draw, cell)`` of the observed cells
    ``(s_idx[i], t_idx[i])`` with ``cell_system`` / ``cell_task`` coordinates."""
    return xr.DataArray(
        values,
        dims=("chain", "draw", "cell"),
        coords={
            "chain": posterior["chain"].values,
            "draw": posterior["draw"].values,
            "cell_system": ("cell", data.dataset["system"].values[s_idx]),
            "cell_task": ("cell", data.dataset["task"].values[t_idx]),
        },
        name="log_likelihood",
    )


def run_inference(
    build: Callable[[], Any],
    sampler: SamplerConfig,
    cache_key: Hashable | None = None,
    data_updates: dict[str, np.ndarray] | None = None,
) -> xr.DataTree:
    """Run the configured inference method on the PyMC model returned by ``build()``.

    With nutpie and a ``cache_key``, the compiled model is kept for the life of the process
    and later calls with the same key only swap the data (``with_data``), skipping the 5-20 s
    numba compile. ``data_updates`` are the ``pm.Data`` values for this call.
    """
    method = sampler.method
    if method == "nutpie":
        import nutpie

        compiled = Model._cache.get(cache_key) if cache_key is not None else None
        if compiled is None:
            compiled = nutpie.compile_pymc_model(build())
            if cache_key is not None:
                Model._cache[cache_key] = compiled
        if data_updates:
            compiled = compiled.with_data(**data_updates)
        return nutpie.sample(
            compiled,
            draws=sampler.draws,
            tune=sampler.tune,
            chains=sampler.chains,
            seed=sampler.seed,
            progress_bar=sampler.progressbar,
            target_accept=sampler.target_accept,
        )
    import pymc as pm

    model = build()
    if data_updates:
        with model:
            pm.set_data(data_updates)
    with model:
        if method in ("pymc", "numpyro"):
            if method == "numpyro":
                try:
                    import numpyro  # noqa: F401
                except ImportError as err:  # pragma: no cover - optional extra
                    raise ImportError(
                        "method='numpyro' needs the optional JAX extra: "
                        "pip install 'evalbayes[jax]'"
                    ) from err
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
            return approx.sample(sampler.draws * sampler.chains, random_seed=sampler.seed)
        if method == "pathfinder":
            import pymc_extras as pmx

            return pmx.fit(
                method="pathfinder",
                num_draws=sampler.draws * sampler.chains,
                random_seed=sampler.seed,
            )
    raise ValueError(f"unknown method {method!r}")  # pragma: no cover


def warn_approximate(method: str) -> None:
    """Warn that a variational fit's intervals are approximate."""
    warnings.warn(
        f"method={method!r} is variational inference: point estimates are usually close, "
        "but intervals are approximate (often too narrow). Use NUTS for reported intervals.",
        UserWarning,
        stacklevel=3,
    )

