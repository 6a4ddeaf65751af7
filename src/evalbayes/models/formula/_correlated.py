"""Correlated group effects of a formula: ``(1 + x | g)``, ``(x | g)``, ``(0 + x + w | g)``.

One parenthesised group term with ``p >= 2`` numeric columns (an intercept and slopes, or
several slopes) is a *block*: each of its columns is a term of :class:`._design.FormulaDesign`
with its own sd (``sd_a``, the HalfNormal prior of a ``(1 | g)`` term, ``sd_priors`` by term
name), and the ``p`` effects of one level are jointly normal::

    b_l        ~ MvNormal(0, Sigma),   Sigma = diag(sd) R diag(sd),   l = 1 .. J
    R          ~ LKJ(eta)                       (eta = ``lkj_eta``, default 2)
    b_l        = diag(sd) L z_l,   z_l ~ N(0, I_p),   R = L L'   (non-centred)

(D. Bates et al., "Fitting linear mixed-effects models using lme4", *Journal of Statistical
Software* 67, 2015, for the model; D. Lewandowski, D. Kurowicka and H. Joe, "Generating random
correlation matrices based on vines and extended onion method", *Journal of Multivariate
Analysis* 100, 2009, 1989-2001, for the LKJ prior). Under LKJ(eta) one correlation of a
``p x p`` matrix is ``2 Beta(eta - 1 + p / 2, eta - 1 + p / 2) - 1``: eta = 2 and ``p = 2``
give Beta(2, 2), zero density at +-1, which keeps a weakly identified correlation (few
levels, as two or three harnesses) off the boundary where lme4 reports singular fits; brms's
default ``lkj(1)`` is uniform there (the Stan User's Guide suggests eta = 2 as a weakly
informative default).

The PyMC side draws ``L`` from ``pm.LKJCorr`` (PyMC 6 returns the Cholesky factor) and takes
the sds of the block's terms as they are: the same prior as ``pm.LKJCholeskyCov`` with a
HalfNormal ``sd_dist`` of one scale per column, with the correlations' unconstrained
parameters apart from the sds'. The NumPy side gives the estimands what they need: the
covariance a new level adds to a row's logit (the population estimand) and fresh draws of a
noise block's effects (a new run).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalbayes.models.formula._design import FormulaDesign

__all__ = [
    "correlated_effects",
    "correlated_key",
    "cross_variance",
    "noise_block_effects",
    "pair_labels",
    "pairs",
]


def pairs(blocks: tuple[tuple[int, ...], ...]) -> list[tuple[int, int, int, int, int]]:
    """Every correlation of the blocks, in the order of the ``corr`` draws: ``(block, a, b,
    term_a, term_b)`` with ``a < b`` positions in the block, blocks in order."""
    return [(j, a, b, members[a], members[b])
            for j, members in enumerate(blocks)
            for a in range(len(members)) for b in range(a + 1, len(members))]


def pair_labels(d: FormulaDesign) -> list[str]:
    """Names of the correlations: ``"1|g, x|g"`` (the two terms' names)."""
    return [f"{d.terms[ta].name}, {d.terms[tb].name}" for _, _, _, ta, tb in pairs(d.blocks)]


def correlated_key(d: FormulaDesign) -> tuple[tuple[int, ...], ...]:
    """Each block's terms (what :meth:`FormulaModel.build` needs of the blocks)."""
    return tuple(d.blocks)


def correlated_effects(blocks: tuple[tuple[int, ...], ...], sds: list[Any],
                       n_levels: list[int], eta: float) -> dict[int, Any]:
    """Inside a ``pm.Model``: each block's effects ``(level, 1)`` per term index and the
    Deterministic ``corr`` (dim ``corr_pair``, :func:`pairs`); ``blocks`` from
    :func:`correlated_key`, ``sds`` the terms' sd variables, ``n_levels`` their level counts.

    The ``J`` rows ``b_l`` of a block, iid ``MvNormal(0, Sigma)``, are drawn as their mean
    and the deviations from it, which for iid normal rows are independent: ``b = 1 m' + (D
    - 1 mean(D)')``, ``m = C w / sqrt(J)``, ``D = Z C'``, ``C = diag(sd) L``, ``w, Z ~ N(0,
    1)`` (non-centred; the same prior). The mean, which trades off against the common
    coefficients, is then one vector ``w`` instead of a direction of every level's ``Z``
    (the split of the ``(1 | g)`` terms' means, :meth:`FormulaModel.location_block`).
    """
    import pymc as pm
    import pytensor.tensor as pt

    model = pm.modelcontext(None)
    effects: dict[int, Any] = {}
    corrs = []
    for j, members in enumerate(blocks):
        p = len(members)
        level_dim, column_dim = f"level_{members[0]}", f"block_column_{j}"
        model.add_coord(column_dim, np.arange(p))
        chol = pm.LKJCorr(f"corr_chol_{j}", n=p, eta=eta)
        sd = pt.stack([sds[i] for i in members])
        cov_chol = sd[:, None] * chol  # diag(sd) L
        z = pm.Normal(f"corr_z_{j}", 0.0, 1.0, dims=(level_dim, column_dim))
        w = pm.Normal(f"corr_mean_z_{j}", 0.0, 1.0, dims=column_dim)
        b = (cov_chol @ w / np.sqrt(n_levels[members[0]]))[None, :] + (
            (z - z.mean(axis=0)) @ cov_chol.T)
        for a, i in enumerate(members):
            assert n_levels[i] == n_levels[members[0]]
            effects[i] = b[:, a:a + 1]
        corr = chol @ chol.T
        corrs += [corr[a, c] for a in range(p) for c in range(a + 1, p)]
    if corrs:
        model.add_coord("corr_pair", np.arange(len(corrs)))
        pm.Deterministic("corr", pt.stack(corrs), dims="corr_pair")
    return effects


def _matrices(sd: np.ndarray, corr: np.ndarray, blocks: tuple[tuple[int, ...], ...],
              j: int) -> np.ndarray:
    """Covariance ``Sigma`` (..., p, p) of block ``j`` from sd draws (..., term) and
    correlation draws (..., pair)."""
    members = blocks[j]
    p = len(members)
    R = np.broadcast_to(np.eye(p), (*sd.shape[:-1], p, p)).copy()
    for k, (jj, a, b, _, _) in enumerate(pairs(blocks)):
        if jj == j:
            R[..., a, b] = R[..., b, a] = corr[..., k]
    s = sd[..., list(members)]
    return s[..., :, None] * R * s[..., None, :]


def cross_variance(sd: np.ndarray, corr: np.ndarray, d: FormulaDesign, rows: np.ndarray,
                   kinds: tuple[str, ...]) -> np.ndarray:
    """What the correlations add to the variance of a new level's effects at ``rows``,
    ``2 sum_{a<b} R_ab sd_a sd_b x_a x_b`` summed over the blocks of ``kinds``, (chain, draw,
    rows); ``sd`` (chain, draw, term), ``corr`` (chain, draw, pair). The terms' own
    ``sd_a^2 x_a^2`` are the caller's (as for independent terms): with them, ``x' Sigma x``."""
    out = np.zeros((*sd.shape[:2], len(rows)))
    for k, (_, _, _, ta, tb) in enumerate(pairs(d.blocks)):
        if d.terms[ta].kind in kinds:
            x = d.terms[ta].expr[rows, 0] * d.terms[tb].expr[rows, 0]
            out += (2.0 * corr[:, :, k] * sd[:, :, ta] * sd[:, :, tb])[:, :, None] * x
    return out


def noise_block_effects(sd: np.ndarray, corr: np.ndarray, d: FormulaDesign, rows: np.ndarray,
                        seed: int) -> np.ndarray:
    """A fresh draw of every noise block's effects (one per level, shared by its cells) at
    ``rows``, summed into the logit, (chain, draw, rows): ``b_l = C z_l`` with ``C`` the
    Cholesky factor of each draw's ``Sigma``, ``z`` from a stream of ``seed`` and the block's
    first term (the same draws for every chunk of rows)."""
    out = np.zeros((*sd.shape[:2], len(rows)))
    for j, members in enumerate(d.blocks):
        first = d.terms[members[0]]
        if first.kind != "noise":
            continue
        cov = _matrices(sd, corr, d.blocks, j)
        # a tiny ridge: Sigma is singular where a correlation is +-1 or an sd 0 in a draw
        cov = cov + 1e-12 * np.eye(len(members))
        chol = np.linalg.cholesky(cov)  # (chain, draw, p, p)
        rng = np.random.default_rng([int(seed), 29, members[0]])
        z = rng.standard_normal((*sd.shape[:2], len(first.levels), len(members)))
        b = np.einsum("cdab,cdlb->cdla", chol, z)  # (chain, draw, level, p)
        x = np.stack([d.terms[i].expr[rows, 0] for i in members], axis=-1)  # (rows, p)
        out += np.einsum("cdra,ra->cdr", b[:, :, first.level[rows]], x)
    return out
