"""Seed handling shared by every random path of :mod:`evalbayes.frequentist`."""

from __future__ import annotations

import numpy as np

__all__ = ["Seed", "as_generator"]

Seed = int | np.random.Generator | None


def as_generator(seed: Seed) -> np.random.Generator:
    """Return a NumPy generator for ``seed``.

    Parameters
    ----------
    seed : int, numpy.random.Generator or None
        An int seeds a fresh PCG64 generator (same seed, same numbers); a generator is used
        as is (its state advances); ``None`` draws fresh OS entropy (not reproducible).

    Raises
    ------
    ValueError
        If ``seed`` is a negative int or of another type (bools are refused too).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(
            f"seed must be an int, a numpy.random.Generator or None, got {type(seed).__name__}"
        )
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return np.random.default_rng(int(seed))
