"""The winner's curse: the best of many checkpoints, picked on the same data.

Picking ``argmax_i y_i`` among ``m`` noisy estimates and reporting ``y_winner`` overstates the
winner's true value: for ``m`` equal checkpoints with noise ``sigma`` the expected excess is
``sigma E[max_i Z_i]`` (1.42 sigma for m = 8; the TinyAgent worked example measured 0.03
to 0.04). The correction used here is Bayesian shrinkage: the estimates are partially pooled
with a normal-normal hierarchy (:mod:`evalbayes.decisions._normal_hierarchy`, ``tau``
estimated), and the selected checkpoint is reported with its posterior mean, which is not
biased by the selection when the hierarchy holds, because Bayesian posteriors condition on
the data that drove the choice (Dawid 1994, "Selection paradoxes of Bayesian inference";
Efron 2011, "Tweedie's formula and selection bias", JASA 106(496)). Frequentist corrections
of the same problem: Zöllner & Pritchard 2007 (Am. J. Hum. Genet. 80(4)) and Andrews,
Kitagawa & McCloskey 2024, "Inference on winners" (Q. J. Econ. 139(1)).

``P(winner is truly best)`` is the share of joint posterior draws of ``theta`` in which the
selected checkpoint is the largest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalbayes._core.names import check_count
from evalbayes.decisions._normal_hierarchy import fit_normal_hierarchy

__all__ = ["WinnerEstimate", "select_winner", "winners_curse_study"]


@dataclass(frozen=True)
class WinnerEstimate:
    """The selected checkpoint with a naive and a shrunken estimate.

    Attributes
    ----------
    index : int
        Position of the selected (largest) estimate.
    label : object
        Its label.
    naive : float
        The selected estimate ``y_winner``.
    shrunk_mean, shrunk_sd : float
        Posterior mean and sd of ``theta_winner`` under the hierarchy.
    lower, upper : float
        Central ``ci_prob`` interval from the joint draws.
    p_truly_best : float
        ``P(theta_winner = max_i theta_i | y)``.
    tau : float
        Posterior mean of the between-checkpoint sd.
    """

    index: int
    label: Any
    naive: float
    shrunk_mean: float
    shrunk_sd: float
    lower: float
    upper: float
    p_truly_best: float
    tau: float


def select_winner(
    estimates: Any,
    standard_errors: Any,
    labels: Any = None,
    *,
    ci_prob: float = 0.9,
    draws: int = 20_000,
    seed: int = 0,
) -> WinnerEstimate:
    """Pick the largest estimate and report it with shrinkage (module docstring).

    Parameters
    ----------
    estimates, standard_errors : array_like
        One estimate per checkpoint (e.g. pass@1 on the same test tasks) and its standard
        error (e.g. the task-level standard error).
    labels : sequence, optional
        Checkpoint names.
    ci_prob : float
        Probability of the interval.
    draws : int
        Joint posterior draws for the interval and ``p_truly_best``.
    seed : int
        Seed of the draws.
    """
    fit = fit_normal_hierarchy(estimates, standard_errors)
    theta = fit.sample(check_count(draws, "draws"), seed=seed)
    win = int(np.argmax(fit.y))
    lo, hi = np.quantile(theta[:, win], [(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    labels = list(range(fit.y.size)) if labels is None else list(labels)
    if len(labels) != fit.y.size:
        raise ValueError(f"{len(labels)} labels for {fit.y.size} estimates")
    return WinnerEstimate(
        index=win,
        label=labels[win],
        naive=float(fit.y[win]),
        shrunk_mean=float(fit.mean[win]),
        shrunk_sd=float(fit.sd[win]),
        lower=float(lo),
        upper=float(hi),
        p_truly_best=float(np.mean(np.argmax(theta, axis=1) == win)),
        tau=fit.tau_mean,
    )


def winners_curse_study(
    m: int = 8,
    sigma: float = 0.03,
    tau: float = 0.0,
    n_sims: int = 500,
    seed: int = 0,
    draws: int = 2000,
) -> pd.DataFrame:
    """Bias of the naive and the shrunken estimate of the selected checkpoint, by simulation.

    Each replicate: true values ``theta_i ~ N(0, tau^2)`` (``tau = 0``: equally good checkpoints, as
    in the TinyAgent worked example), estimates ``y_i ~ N(theta_i, sigma^2)``; select the
    largest. Returns one row per estimator with the mean error ``estimate - theta_winner``
    (bias), its Monte Carlo s.e. and the RMSE; and the calibration of ``p_truly_best`` (mean
    predicted vs the share of replicates in which the winner is truly best; with ``tau = 0``
    every checkpoint ties, so it is reported only for ``tau > 0``).
    """
    m = check_count(m, "m", 2)
    n_sims = check_count(n_sims, "n_sims")
    rng = np.random.default_rng(seed)
    errors: dict[str, list[float]] = {"naive": [], "shrunk": []}
    predicted, hit = [], []
    for r in range(n_sims):
        theta = rng.normal(0.0, tau, m) if tau > 0 else np.zeros(m)
        y = theta + rng.normal(0.0, sigma, m)
        res = select_winner(y, np.full(m, sigma), draws=draws, seed=seed + r)
        errors["naive"].append(res.naive - theta[res.index])
        errors["shrunk"].append(res.shrunk_mean - theta[res.index])
        predicted.append(res.p_truly_best)
        hit.append(float(np.argmax(theta) == res.index))
    rows = []
    for name, err in errors.items():
        e = np.asarray(err)
        rows.append({"estimator": name, "bias": e.mean(),
                     "bias_se": e.std(ddof=1) / np.sqrt(n_sims),
                     "rmse": float(np.sqrt(np.mean(e**2)))})
    out = pd.DataFrame(rows)
    out.attrs["p_truly_best_predicted"] = float(np.mean(predicted))
    out.attrs["p_truly_best_observed"] = float(np.mean(hit)) if tau > 0 else float("nan")
    return out
