"""SplitMix64 as counter-based random streams for the compiled kernels of several model
families (the Beta-Binomial's conjugate draws, the rate grid's node counts).

Word ``i`` of stream ``key`` is ``mix(key + i * GOLDEN)``: any word is computed from its
position alone, so draws split over threads, blocks or rows give the same numbers whatever the
split, and a stream is keyed by mixing a seed with the row's indices. A word's top 53 bits
give a uniform in the open interval (0, 1): ``((word >> S11) + 1/2) * TWO_M53``.

References
----------
Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable pseudorandom number
generators. *OOPSLA 2014*, 453-472 (SplitMix64, its constants and output function).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["GOLDEN", "S11", "TWO_M53", "mix", "word"]

#: The stream's increment (the golden ratio's 64-bit fraction).
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
#: ``word >> S11`` keeps a word's top 53 bits.
S11 = np.uint64(11)
#: ``2 ** -53``.
TWO_M53 = 1.0 / 9007199254740992.0


@njit(cache=True, inline="always")
def mix(z: np.uint64) -> np.uint64:
    """SplitMix64's output function (a bijective 64-bit mixer)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def word(key: np.uint64, index: int) -> np.uint64:
    """Word ``index`` of the counter-based stream ``key`` (SplitMix64 at that position)."""
    return mix(key + np.uint64(index) * GOLDEN)
