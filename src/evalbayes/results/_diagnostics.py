"""MCMC convergence checks: R-hat, effective sample size, divergences.

The bars are the usual ones (Vehtari et al. 2021, "Rank-normalization, folding, and
localization"; Stan's defaults): R-hat <= 1.01, bulk and tail ESS >= 400, no divergent
transitions. A failed check emits a :class:`ConvergenceWarning` that names what failed; the
CLI's ``--strict`` turns it into a non-zero exit code.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evalbayes._core.rendering import Rendered, frame_text, jsonable

__all__ = ["ConvergenceWarning", "Diagnostics", "convergence_diagnostics"]

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


def _per_parameter(posterior: xr.Dataset) -> pd.DataFrame:
    import arviz as az

    rhat = az.rhat(posterior)
    ess_bulk = az.ess(posterior, method="bulk")
    ess_tail = az.ess(posterior, method="tail")
    rows = []
    for name in posterior.data_vars:
        r = np.atleast_1d(np.asarray(rhat[name]))
        eb = np.atleast_1d(np.asarray(ess_bulk[name]))
        et = np.atleast_1d(np.asarray(ess_tail[name]))
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
    posterior: xr.Dataset, sample_stats: xr.Dataset | None, *, warn: bool = True
) -> Diagnostics:
    """Compute R-hat, ESS and divergences and warn loudly when a bar is missed."""
    table = _per_parameter(posterior)
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
