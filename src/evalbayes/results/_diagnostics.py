"""MCMC convergence checks: R-hat, effective sample size, divergences.

The bars are the usual ones (Vehtari et al. 2021, "Rank-normalization, folding, and
localization"; Stan's defaults): R-hat <= 1.01, bulk and tail ESS >= 400, no divergent
transitions. A failed check emits a :class:`ConvergenceWarning` that names what failed; the
CLI's ``--strict`` turns it into a non-zero exit code.

R-hat and ESS are computed here in NumPy, vectorised over parameters (:func:`rank_rhat`,
:func:`ess_bulk`, :func:`ess_tail`), with ArviZ's definitions (``arviz.rhat``,
``arviz.ess(method="bulk" | "tail")``, equal to 1e-8 in ``tests/results/``): importing ArviZ
costs ~2 s, more than a whole small fit.

* Rank-normalised split R-hat: split each chain in halves; replace the draws by the normal
  quantiles of their fractional ranks ``(r - 3/8) / (N + 1/4)`` (Blom) over all chains; the
  classic ``sqrt(((n - 1) / n W + B / n) / W)``; the larger of that for the draws and for
  their distances to the median (the folded draws).
* Bulk ESS: Geyer's initial monotone sequence estimator (``N / tau``, ``tau = -1 + 2 sum_t
  rho_t`` over the positive, then monotone, pair sums of the autocorrelations, computed by
  FFT and combined across chains as in Stan) on the rank-normalised split chains, with
  ``tau >= 1 / log10(N)``.
* Tail ESS: the smaller ESS of the indicators ``x <= q`` at the 0.055 and 0.945 quantiles
  (ArviZ 1.x's default ``ci_prob`` 0.89; Vehtari et al. use 0.05 and 0.95).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.ranks import average_ranks
from evalbayes._core.rendering import Rendered, frame_text, jsonable

__all__ = [
    "ConvergenceWarning",
    "Diagnostics",
    "convergence_diagnostics",
    "ess_bulk",
    "ess_tail",
    "rank_rhat",
    "rhat_ess",
]

RHAT_MAX = 1.01
ESS_MIN = 400


class ConvergenceWarning(UserWarning):
    """The sampler did not converge by the usual bars; numbers may be wrong."""


@dataclass(frozen=True)
class Diagnostics(Rendered):
    """Convergence summary of one fit.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per scalar parameter: ``rhat``, ``ess_bulk``, ``ess_tail``.
    rhat_max, ess_bulk_min, ess_tail_min : float
        Worst values over parameters.
    divergences : int
        Divergent transitions after warm-up (0 when the sampler reports none).
    draws : int
        Total posterior draws (chains x draws).
    problems : tuple of str
        Human-readable failures; empty when every check passed.
    """

    table: pd.DataFrame
    rhat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    draws: int
    problems: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """True when R-hat, ESS and divergences all pass."""
        return not self.problems

    def __str__(self) -> str:
        status = "passed" if self.passed else "FAILED: " + "; ".join(self.problems)
        return (
            f"R-hat max {self.rhat_max:.4f}, ESS bulk min {self.ess_bulk_min:.0f}, "
            f"ESS tail min {self.ess_tail_min:.0f}, divergences {self.divergences} "
            f"({self.draws} draws) -> {status}"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per scalar parameter: ``parameter, rhat, ess_bulk, ess_tail``."""
        return self.table

    def settings(self) -> dict[str, Any]:
        """The bars every parameter is held to."""
        return {"rhat_bar": RHAT_MAX, "ess_bar": ESS_MIN}

    def title(self) -> str:
        """The one-line verdict (the same as ``str(diagnostics)``)."""
        return str(self)

    def to_text(self) -> str:
        """The verdict line and the per-parameter table."""
        return f"{self}\n{frame_text(self.table)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary, the bars (``settings``) and the per-parameter records."""
        out: dict[str, Any] = {
            "rhat_max": self.rhat_max,
            "ess_bulk_min": self.ess_bulk_min,
            "ess_tail_min": self.ess_tail_min,
            "divergences": self.divergences,
            "draws": self.draws,
            "passed": self.passed,
            "problems": list(self.problems),
        }
        out.update(super().to_dict())
        return jsonable(out)


#: Tail ESS quantiles: ArviZ 1.x's default (``ci_prob = 0.89``).
TAIL_PROB = 0.89


def _columns(values: np.ndarray) -> np.ndarray:
    """``(chain, draw, *rest)`` -> ``(column, chain, draw)``, float."""
    values = np.asarray(values, dtype=float)
    chains, draws = values.shape[:2]
    return np.moveaxis(values.reshape(chains, draws, -1), 2, 0)


def _split(values: np.ndarray) -> np.ndarray:
    """Each chain split in its first and last ``draws // 2`` draws: (column, 2 chain, half)."""
    half = values.shape[2] // 2
    return np.concatenate([values[:, :, :half], values[:, :, values.shape[2] - half:]], axis=1)


def _z_scale(values: np.ndarray) -> np.ndarray:
    """Normal scores of the average ranks over each column's chains and draws (Blom)."""
    from scipy.special import ndtri  # imported when used (issue 26)

    cols, chains, draws = values.shape
    size = chains * draws
    flat = values.reshape(cols, size)
    # ranks from one sort; columns with ties get average ranks
    order = np.argsort(flat, axis=1)
    rank = np.empty(flat.shape)
    np.put_along_axis(rank, order, np.arange(1.0, size + 1.0)[None, :], axis=1)
    tied = (np.diff(np.take_along_axis(flat, order, axis=1), axis=1) == 0).any(axis=1)
    for row in np.flatnonzero(tied):  # average ranks (scipy's rankdata "average") of ties
        rank[row] = average_ranks(flat[row])
    return ndtri((rank - 0.375) / (size + 0.25)).reshape(values.shape)  # norm.ppf's kernel


def _rhat_classic(values: np.ndarray) -> np.ndarray:
    """``sqrt((B / W + n - 1) / n)`` per column."""
    n = values.shape[2]
    between = n * np.var(values.mean(axis=2), axis=1, ddof=1)
    within = np.var(values, axis=2, ddof=1).mean(axis=1)
    return np.sqrt((between / within + n - 1) / n)


def rank_rhat(values: np.ndarray) -> np.ndarray:
    """Rank-normalised split R-hat (Vehtari et al. 2021) of draws ``(chain, draw, *rest)``,
    shape ``rest`` (module docstring; ArviZ's ``rhat``, method ``"rank"``). NaN with fewer
    than 2 chains or 4 draws."""
    values = np.asarray(values, dtype=float)
    rest = values.shape[2:]
    if values.shape[0] < 2 or values.shape[1] < 4:
        return np.full(rest, np.nan)
    split = _split(_columns(values))
    bulk = _rhat_classic(_z_scale(split))
    folded = np.abs(split - np.median(split.reshape(len(split), -1), axis=1)[:, None, None])
    tail = _rhat_classic(_z_scale(folded))
    return np.maximum(bulk, tail).reshape(rest)


#: Columns per block of :func:`rhat_ess`.
_BLOCK = 512


def rhat_ess(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`rank_rhat`, :func:`ess_bulk` and :func:`ess_tail` of draws ``(chain, draw,
    *rest)`` together (the bulk's rank normalisation computed once). Every statistic is per
    column, so many columns are taken in blocks of :data:`_BLOCK` (the same numbers; the FFT
    temporaries of 13,000 columns x 4000 draws took ~3.4 GB at once)."""
    values = np.asarray(values, dtype=float)
    rest = values.shape[2:]
    cols = int(np.prod(rest, dtype=np.int64))
    if cols > _BLOCK and values.shape[1] >= 4:
        flat = values.reshape(*values.shape[:2], cols)
        parts = [rhat_ess(flat[:, :, start:start + _BLOCK]) for start in range(0, cols, _BLOCK)]
        return tuple(  # type: ignore[return-value]
            np.concatenate([part[i] for part in parts]).reshape(rest) for i in range(3))
    if values.shape[1] < 4:
        nan = np.full(rest, np.nan)
        return nan, nan, nan
    split = _split(_columns(values))
    z = _z_scale(split)
    bulk = _ess(z).reshape(rest)
    tail = ess_tail(values)
    if values.shape[0] < 2:
        return np.full(rest, np.nan), bulk, tail
    folded = np.abs(split - np.median(split.reshape(len(split), -1), axis=1)[:, None, None])
    rhat = np.maximum(_rhat_classic(z), _rhat_classic(_z_scale(folded))).reshape(rest)
    return rhat, bulk, tail


def _ess(values: np.ndarray) -> np.ndarray:
    """Geyer's initial monotone sequence ESS of (column, chain, draw), combined over chains
    (module docstring)."""
    from scipy import fft  # imported when used (issue 26)

    cols, chains, n = values.shape
    out = np.full(cols, float(chains * n))
    spread = values.reshape(cols, -1).max(axis=1) - values.reshape(cols, -1).min(axis=1)
    live = ~(spread < np.finfo(float).resolution)
    if not live.any():
        return out
    x = values[live]
    centred = x - x.mean(axis=2, keepdims=True)
    size = fft.next_fast_len(2 * n)
    spec = np.fft.rfft(centred, n=size, axis=2)
    acov = np.fft.irfft(spec * np.conjugate(spec), n=size, axis=2)[:, :, :n] / n
    mean_var = acov[:, :, 0].mean(axis=1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if chains > 1:
        var_plus = var_plus + np.var(x.mean(axis=2), axis=1, ddof=1)
    rho = 1.0 - (mean_var[:, None] - acov.mean(axis=1)) / var_plus[:, None]
    rho[:, 0] = 1.0
    pairs = n // 2  # pair k = (rho[2k], rho[2k + 1])
    pair_sum = rho[:, 0:2 * pairs:2] + rho[:, 1:2 * pairs:2]
    k = np.arange(pairs)
    # K: the first pair that is not positive, or whose index reaches the end (2k + 1 >= n - 3)
    stop = (pair_sum <= 0) | (2 * k + 1 >= n - 3)[None, :]
    stop_k = np.where(stop.any(axis=1), stop.argmax(axis=1), pairs)
    tau = np.empty(len(x))
    for col in range(len(x)):
        kk = int(stop_k[col])
        mono = np.minimum.accumulate(pair_sum[col, :kk])  # Geyer's monotone sequence
        # ArviZ adds rho[2K] when it was kept (pair K non-negative) or is positive
        last = rho[col, 2 * kk]
        keep = kk == 0 or last > 0 or pair_sum[col, kk] >= 0
        tau[col] = -1.0 + 2.0 * mono.sum() + (last if keep else 0.0)
    bad = np.isnan(rho).any(axis=1)
    total = chains * n
    tau = np.maximum(tau, 1.0 / np.log10(total))
    ess = total / tau
    ess[bad] = np.nan
    out[live] = ess
    return out


def ess_bulk(values: np.ndarray) -> np.ndarray:
    """Bulk ESS (Vehtari et al. 2021) of draws ``(chain, draw, *rest)``, shape ``rest``:
    :func:`_ess` of the rank-normalised split chains (ArviZ's ``ess``, method ``"bulk"``)."""
    values = np.asarray(values, dtype=float)
    rest = values.shape[2:]
    if values.shape[1] < 4:
        return np.full(rest, np.nan)
    return _ess(_z_scale(_split(_columns(values)))).reshape(rest)


def ess_tail(values: np.ndarray, prob: float = TAIL_PROB) -> np.ndarray:
    """Tail ESS of draws ``(chain, draw, *rest)``, shape ``rest``: the smaller split-chain
    ESS of the indicators ``x <= q`` at the quantiles ``1 - prob`` and ``prob`` (ArviZ's
    ``ess``, method ``"tail"``, whose default ``prob`` is 0.89)."""
    values = np.asarray(values, dtype=float)
    rest = values.shape[2:]
    if values.shape[1] < 4:
        return np.full(rest, np.nan)
    cols = _columns(values)
    flat = cols.reshape(len(cols), -1)
    out = np.full(len(cols), np.inf)
    for p in sorted((prob, 1.0 - prob)):
        q = np.quantile(flat, p, axis=1, method="linear")
        out = np.minimum(out, _ess(_split((cols <= q[:, None, None]).astype(float))))
    return out.reshape(rest)


def _per_parameter(posterior: xr.Dataset,
                   known: Mapping[str, np.ndarray] | None = None) -> pd.DataFrame:
    rows = []
    for name in posterior.data_vars:
        draws = posterior[name].transpose("chain", "draw", ...).values
        given = None if known is None else known.get(str(name))
        if given is not None and given.shape == (3, *draws.shape[2:]):
            r, eb, et = (np.atleast_1d(v) for v in given)
        else:
            r, eb, et = (np.atleast_1d(v) for v in rhat_ess(draws))
        labels = _labels(posterior[name])
        for i, label in enumerate(labels):
            rows.append(
                {
                    "parameter": f"{name}{label}",
                    "rhat": float(r.ravel()[i]),
                    "ess_bulk": float(eb.ravel()[i]),
                    "ess_tail": float(et.ravel()[i]),
                }
            )
    return pd.DataFrame(rows)


def _labels(da: xr.DataArray) -> list[str]:
    extra = [d for d in da.dims if d not in ("chain", "draw")]
    if not extra:
        return [""]
    index = pd.MultiIndex.from_product([da[d].values for d in extra])
    return ["[" + ", ".join(str(v) for v in key) + "]" for key in index]


def _worst(table: pd.DataFrame, column: str, *, largest: bool) -> tuple[float, str]:
    """Worst value of ``column`` and its parameter; NaN and "undefined" when none is finite
    (one chain gives no R-hat; variational draws are one chain)."""
    values = table[column] if len(table) else pd.Series(dtype=float)
    if values.isna().all():
        return float("nan"), "undefined"
    index = values.idxmax() if largest else values.idxmin()
    return float(values[index]), str(table.loc[index, "parameter"])


def convergence_diagnostics(
    posterior: xr.Dataset, sample_stats: xr.Dataset | None, *, warn: bool = True,
    known: Mapping[str, np.ndarray] | None = None,
) -> Diagnostics:
    """Compute R-hat, ESS and divergences and warn loudly when a bar is missed.

    ``known`` maps a posterior variable to its :func:`rhat_ess` already computed on exactly
    these draws (stacked: R-hat, bulk ESS, tail ESS; shape ``(3, *dims less chain and
    draw)``, in the variable's dimension order), as a sampler that checks its own draws
    has them (the rate grid's SMC, :mod:`evalbayes.models.rate_grid._smc`): they are taken
    as they are instead of computed twice. Every other variable is computed.
    """
    table = _per_parameter(posterior, known)
    draws = int(posterior.sizes["chain"] * posterior.sizes["draw"])
    divergences = 0
    if sample_stats is not None and "diverging" in sample_stats:
        divergences = int(np.asarray(sample_stats["diverging"]).sum())
    rhat_max, rhat_worst = _worst(table, "rhat", largest=True)
    ess_bulk_min, bulk_worst = _worst(table, "ess_bulk", largest=False)
    ess_tail_min, tail_worst = _worst(table, "ess_tail", largest=False)
    problems = []
    if posterior.sizes["chain"] < 2:
        problems.append("R-hat needs at least 2 chains (one chain cannot show non-convergence)")
    elif not rhat_max <= RHAT_MAX:
        problems.append(f"R-hat {rhat_max:.3f} > {RHAT_MAX} (worst: {rhat_worst})")
    if not ess_bulk_min >= ESS_MIN:
        problems.append(f"bulk ESS {ess_bulk_min:.0f} < {ESS_MIN} (worst: {bulk_worst})")
    if not ess_tail_min >= ESS_MIN:
        problems.append(f"tail ESS {ess_tail_min:.0f} < {ESS_MIN} (worst: {tail_worst})")
    if divergences:
        problems.append(f"{divergences} divergent transitions")
    result = Diagnostics(
        table=table,
        rhat_max=rhat_max,
        ess_bulk_min=ess_bulk_min,
        ess_tail_min=ess_tail_min,
        divergences=divergences,
        draws=draws,
        problems=tuple(problems),
    )
    if warn and problems:
        warn_unconverged(result, stacklevel=4)
    return result


def warn_unconverged(diagnostics: Diagnostics, stacklevel: int = 3) -> None:
    """The :class:`ConvergenceWarning` of :func:`convergence_diagnostics` for a result that
    failed (nothing when it passed); ``stacklevel`` as :func:`warnings.warn` counts from the
    caller of this function."""
    if diagnostics.problems:
        warnings.warn(
            "the fit did not converge: " + "; ".join(diagnostics.problems) + ". Run longer "
            "chains (--draws/--tune), raise target_accept, or reparameterise before trusting "
            "it.",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )
