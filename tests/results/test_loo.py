"""Stacking weights against brute-force maximisation over the simplex (Yao et al. 2018)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from evalbayes.results._loo import stacking_weights


def _objective(lp: np.ndarray, w: np.ndarray) -> np.ndarray:
    """sum_i log sum_k w_k p_ik for each row of weights w (grid, models)."""
    with np.errstate(divide="ignore"):
        return logsumexp(lp[None, :, :] + np.log(w)[:, None, :], axis=2).sum(axis=1)


def _cells(seed: int, models: int, cells: int = 300) -> np.ndarray:
    # each model predicts a different subset of cells well: an interior optimum
    rng = np.random.default_rng(seed)
    lp = rng.normal(-1.0, 0.4, (cells, models))
    for k in range(models):
        lp[k::models, k] += 1.5
    return lp


def test_two_models_match_a_fine_grid():
    lp = _cells(0, 2)
    grid = np.linspace(0.0, 1.0, 20_001)
    w_grid = np.column_stack([grid, 1 - grid])
    best = w_grid[np.argmax(_objective(lp, w_grid))]
    w = stacking_weights(lp)
    assert w == pytest.approx(best, abs=2e-4)
    assert 0.05 < w[0] < 0.95  # interior: both models carry weight


def test_three_models_reach_the_simplex_grid_maximum():
    lp = _cells(1, 3)
    step = np.linspace(0.0, 1.0, 401)
    a, b = np.meshgrid(step, step, indexing="ij")
    keep = a + b <= 1.0
    w_grid = np.column_stack([a[keep], b[keep], np.clip(1.0 - a[keep] - b[keep], 0.0, 1.0)])
    values = _objective(lp, w_grid)
    w = stacking_weights(lp)
    assert w.sum() == pytest.approx(1.0) and (w >= 0).all()
    assert _objective(lp, w[None])[0] >= values.max() - 1e-9
    assert w == pytest.approx(w_grid[np.argmax(values)], abs=5e-3)


def test_a_dominated_model_gets_no_weight_and_one_model_gets_all():
    lp = _cells(2, 2)
    lp[:, 1] = lp[:, 0] - 0.5  # worse on every cell
    assert stacking_weights(lp) == pytest.approx([1.0, 0.0], abs=1e-4)
    assert stacking_weights(lp[:, :1]).tolist() == [1.0]
    with pytest.raises(ValueError, match="non-finite"):
        stacking_weights(np.array([[0.0, np.nan]]))
