"""Compiled kernel: exact draws of the task sums of ``q^k`` for conjugate Beta rates.

For one posterior draw ``(a, b)`` of a system and each of its observed tasks ``t``, the
latent rate is ``p_t ~ Beta(a + c_t, b + n_t - c_t)``; the kernel draws every ``p_t`` and
returns ``S_k = sum_t x_t^k`` per k, with ``x = 1 - p`` (pass@k) or ``x = p`` (pass^k).
It is the same computation as drawing all rates into an array and averaging
``exp(k log x)`` (``BaseModel._tasks_curve``), fused into one pass per (draw, system) row:

* **Beta draws** as ``x = G_x / (G_x + G_y)`` from two Gamma variates (Marsaglia & Tsang's
  method for shape >= 1 on ziggurat normals, and the boost ``G(s) = G(s + 1) U^{1/s}`` for
  shape < 1; with ``n > 0`` at most one of the two shapes is below 1, so an underflowing
  boosted variate gives ``x = 0`` or ``1``, never ``0 / 0``); the Gamma constants are computed
  once per cell and draw, not per task.
* **Gamma variates a system at a time, vectorised** (``_gamma_batch``): every task's first
  proposal (a ziggurat normal ``z`` and a uniform ``u`` from two counter-indexed words) is
  computed in one branch-free loop that the compiler turns into SIMD code, and accepted there
  when the ziggurat's fast path holds and ``u`` passes a squeeze; the few others (3-8 %) are
  finished one by one by the scalar algorithm, continuing the same proposal (the ziggurat's
  wedge or tail test, then the exact ``log`` test with the same ``u``) before any fresh one, so
  every variate has exactly the scalar algorithm's distribution. Besides Marsaglia & Tsang's
  squeeze ``u < 1 - 0.0331 z^4`` the loop uses a second one, tighter for larger shapes: with
  ``t = z / sqrt(9 d)`` the exact test ``log u < z^2 / 2 + d (1 - v + log v)``,
  ``v = (1 + t)^3``, reads ``log u < 3 d r(t)``, ``r(t) = log(1 + t) - t + t^2/2 - t^3/3``; and
  ``r(t) >= -t^4 / 4`` for ``t >= 0`` (the derivative of ``log(1 + t)`` minus its quartic
  Taylor polynomial is ``t^4 / (1 + t) >= 0``), ``r(t) >= -t^4 / (4 (1 + t))`` for
  ``-1 < t < 0`` (the series ``-sum_{j >= 4} |t|^j / j`` bounded geometrically); with
  ``log u <= u - 1`` this accepts when ``u (1 + t^-) < (1 + t^-) - 3 d t^4 / 4``,
  ``t^- = min(t, 0)``, without a ``log`` or a division. The boost's ``U^{1/s}`` is vectorised
  too (``_boost``: ``log`` and ``exp`` by range reduction and series, to rounding).
* **Powers by repeated squaring** when every k is an integer: ``x, x^2, x^4, ...`` once per
  task, and each ``x^k`` a product over the set bits of ``k`` (on the usual grid 1, 2, 4, ...,
  1024 the sums of the squares themselves), instead of one ``exp`` per task and k. A system's
  draws go to a buffer and are squared together, so the compiler vectorises the squaring
  (a chain of 10 dependent multiplications per task otherwise). Squares below 1e-300 are set
  to 0: a change below 1e-300 in a task average, and it keeps the arithmetic out of slow
  denormal numbers.
* **Counter-based streams**: row ``(draw, system)`` has its own SplitMix64 stream keyed by
  hashing ``(seed, system, draw)`` and read by position (word ``j`` is the mix of
  ``key + j * golden``, so a loop can read its words in any order). The numbers do not
  depend on the number of threads or on which thread runs which block of rows (blocks run in
  parallel), and the same seed gives the same draws.

References
----------
Marsaglia, G. & Tsang, W. W. (2000). A simple method for generating gamma variables.
*ACM Transactions on Mathematical Software* 26(3), 363-372.
Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable pseudorandom number
generators. *OOPSLA 2014* (SplitMix64).
Marsaglia, G. & Tsang, W. W. (2000). The ziggurat method for generating random variables.
*Journal of Statistical Software* 5(8).
Cody, W. J. & Waite, W. (1980). *Software Manual for the Elementary Functions*. Prentice-Hall
(the two-part ln 2 of the range reduction).
Doornik, J. A. (2005). An improved ziggurat method to generate normal random samples.
Technical note, University of Oxford (the ZIGNOR tables and the independent layer index).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from evalbayes.models._splitmix import GOLDEN, S11, TWO_M53, mix, word

__all__ = ["task_power_sums"]

_NEGLIGIBLE = 1e-300  # squares below this are set to 0
_ROWS_PER_BLOCK = 64  # (draw, system) rows that share one set of scratch buffers
_FIX_UP = np.uint64(0xD1B54A32D192ED03)  # keys the fresh stream of a proposal finished alone


@njit(cache=True, inline="always")
def _uniform(state: np.uint64) -> tuple[float, np.uint64]:
    """A uniform in the open interval (0, 1) and the advanced state."""
    state = state + GOLDEN
    return (float(mix(state) >> S11) + 0.5) * TWO_M53, state


def _ziggurat_tables(layers: int = 128) -> tuple[np.ndarray, np.ndarray]:
    """Layer edges ``x`` and acceptance ratios ``x[i + 1] / x[i]`` of the normal ziggurat.

    Doornik's construction (ZIGNOR) for 128 layers of equal area ``V`` under
    ``exp(-x^2 / 2)``, with the base layer's edge at ``R`` and its tail beyond.
    """
    r, area = 3.442619855899, 9.91256303526217e-3
    x = np.zeros(layers + 1)
    f = math.exp(-0.5 * r * r)
    x[0], x[1] = area / f, r
    for i in range(2, layers):
        x[i] = math.sqrt(-2.0 * math.log(area / x[i - 1] + f))
        f = math.exp(-0.5 * x[i] * x[i])
    return x, x[1:] / x[:-1]


_ZIG_X, _ZIG_RATIO = _ziggurat_tables()
_ZIG_R = 3.442619855899
_LOW7 = np.uint64(0x7F)


@njit(cache=True, inline="always")
def _ziggurat_slow(layer: int, u: float, state: np.uint64) -> tuple[float, bool, np.uint64]:
    """The ziggurat's slow path for a proposal ``(layer, u)`` that missed the fast test:
    the tail beyond R (Marsaglia 1964) for the base layer, else the wedge test. Returns the
    normal, whether it was accepted (a rejected wedge needs a fresh proposal) and the state."""
    if layer == 0:
        while True:
            v1, state = _uniform(state)
            v2, state = _uniform(state)
            x = math.log(v1) / _ZIG_R
            if -2.0 * math.log(v2) >= x * x:
                return (x - _ZIG_R if u < 0.0 else _ZIG_R - x), True, state
    x = u * _ZIG_X[layer]
    f0 = math.exp(-0.5 * (_ZIG_X[layer] * _ZIG_X[layer] - x * x))
    f1 = math.exp(-0.5 * (_ZIG_X[layer + 1] * _ZIG_X[layer + 1] - x * x))
    v, state = _uniform(state)
    return x, f1 + v * (f0 - f1) < 1.0, state


@njit(cache=True, inline="always")
def _normal(state: np.uint64) -> tuple[float, np.uint64]:
    """A standard normal (the ziggurat of Marsaglia & Tsang, 128 layers) and the new state.

    One 64-bit output gives the layer (low 7 bits) and a uniform in (-1, 1) (high 53 bits);
    about 99 % of calls return at the first comparison.
    """
    while True:
        state = state + GOLDEN
        z = mix(state)
        i = int(z & _LOW7)
        u = 2.0 * (float(z >> S11) + 0.5) * TWO_M53 - 1.0
        if abs(u) < _ZIG_RATIO[i]:
            return u * _ZIG_X[i], state
        x, accepted, state = _ziggurat_slow(i, u, state)
        if accepted:
            return x, state


@njit(cache=True, inline="always")
def _gamma_accepts(d: float, v: float, z: float, uniform: float) -> bool:
    """Marsaglia & Tsang's acceptance of ``d v`` (``v = (1 + z / sqrt(9 d))^3 > 0``): their
    squeeze, then the exact ``log`` test."""
    z2 = z * z
    if uniform < 1.0 - 0.0331 * z2 * z2:
        return True
    return math.log(uniform) < 0.5 * z2 + d * (1.0 - v + math.log(v))


@njit(cache=True, inline="always")
def _gamma_unit(d: float, scale: float, state: np.uint64) -> tuple[float, np.uint64]:
    """Gamma(d + 1/3) for d + 1/3 >= 1 (Marsaglia & Tsang), ``scale = 1 / sqrt(9 d)``."""
    while True:
        z, state = _normal(state)
        v = 1.0 + scale * z
        if v <= 0.0:
            continue
        v = v * v * v
        u, state = _uniform(state)
        if _gamma_accepts(d, v, z, u):
            return d * v, state


@njit(cache=True, inline="always")
def _proposal(key: np.uint64, i: int) -> tuple[int, float, float]:
    """Task ``i``'s first proposal: ziggurat layer and uniform in (-1, 1) from word ``2i + 1``,
    a uniform in (0, 1) from word ``2i + 2`` (53-bit, via a signed conversion that SIMD has)."""
    w1 = word(key, 2 * i + 1)
    w2 = word(key, 2 * i + 2)
    u = 2.0 * (float(np.int64(w1 >> S11)) + 0.5) * TWO_M53 - 1.0
    return int(w1 & _LOW7), u, (float(np.int64(w2 >> S11)) + 0.5) * TWO_M53


@njit(cache=True)
def _gamma_finish(d: float, scale: float, layer: int, u: float, uniform: float,
                  state: np.uint64) -> tuple[float, np.uint64]:
    """Finish a first proposal that the vectorised loop did not accept, exactly as the scalar
    algorithm would: the ziggurat's wedge / tail test on ``(layer, u)``, then Marsaglia &
    Tsang's tests with the unused ``uniform``; fresh proposals from ``state`` after a reject."""
    if abs(u) < _ZIG_RATIO[layer]:
        z = u * _ZIG_X[layer]
    else:
        z, accepted, state = _ziggurat_slow(layer, u, state)
        if not accepted:  # a rejected wedge: the scalar normal generator starts afresh
            z, state = _normal(state)
    v = 1.0 + scale * z
    if v > 0.0:
        v = v * v * v
        if _gamma_accepts(d, v, z, uniform):
            return d * v, state
    return _gamma_unit(d, scale, state)


@njit(cache=True, fastmath={"contract"})
def _gamma_batch(d: np.ndarray, scale: np.ndarray, key: np.uint64, count: int,
                 out: np.ndarray, pending: np.ndarray) -> np.uint64:
    """``out[i]`` ~ Gamma(d[i] + 1/3), ``scale[i] = 1 / sqrt(9 d[i])``, independent, for
    ``i < count``, from stream ``key``; returns the key past its words.

    The first loop is branch-free (SIMD); ``pending`` marks the proposals it did not accept,
    which the second loop finishes with the scalar algorithm (module docstring). A whole
    system's tasks go through one call (each with its cell's constants), so cells of a few
    tasks cost no loop overhead of their own.
    """
    for i in range(count):
        layer, u, uniform = _proposal(key, i)
        z = u * _ZIG_X[layer]
        t = scale[i] * z
        v = 1.0 + t
        t4 = (t * t) * (t * t)
        z2 = z * z
        below = 1.0 + min(t, 0.0)
        squeezed = ((uniform * below < below - 0.75 * d[i] * t4)
                    | (uniform < 1.0 - 0.0331 * z2 * z2))
        out[i] = d[i] * (v * v * v)
        pending[i] = not ((abs(u) < _ZIG_RATIO[layer]) & (v > 0.0) & squeezed)
    for i in range(count):
        if pending[i]:
            layer, u, uniform = _proposal(key, i)
            state = mix(word(key, 2 * i + 1) ^ _FIX_UP)
            out[i], state = _gamma_finish(d[i], scale[i], layer, u, uniform, state)
    return key + np.uint64(2 * count + 1) * GOLDEN


_MANTISSA_BITS = np.int64(0x000FFFFFFFFFFFFF)
_ONE_BITS = np.int64(0x3FF0000000000000)  # the bits of 1.0
_LN2_HI = 6.93147180369123816490e-01  # ln 2 in two parts (Cody & Waite): e * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.4426950408889634
_SQRT2 = 1.4142135623730951
_INV_FACTORIAL = tuple(1.0 / math.factorial(j) for j in range(14))
_F2, _F3, _F4, _F5, _F6, _F7, _F8, _F9, _F10, _F11, _F12, _F13 = _INV_FACTORIAL[2:]


@njit(cache=True, fastmath={"contract"}, error_model="numpy")
def _boost(values: np.ndarray, count: int, shape: float, key: np.uint64,
           uniform: np.ndarray, scale: np.ndarray) -> np.uint64:
    """``values[:count] *= U^(1 / shape)`` (Gamma(shape + 1) -> Gamma(shape)); advanced key.

    ``U^(1/shape) = exp(log(U) / shape)`` in branch-free loops that vectorise (``uniform`` and
    ``scale`` are scratch of at least ``count``): ``U = 2^e m`` from its bits with
    ``m`` in ``[sqrt(1/2), sqrt(2))``; ``log m = 2 atanh(s)``, ``s = (m - 1) / (m + 1)``, by its
    series to ``s^23`` (``|s| < 0.172``: truncation below 1e-19); ``y = log(U) / shape``, split
    as ``y = j ln 2 + r`` (Cody & Waite), ``|r| <= ln(2) / 2``; ``exp(r)`` by its Taylor series to
    ``r^13`` (truncation below 1e-17); ``2^j`` from its bits. Relative error against
    ``math.exp(math.log(U) / shape)``: below ``|y| * 1e-15`` (the conditioning of the power;
    tests/models/beta_binomial/test_tasks_curve.py). A result below 2^-1022 (``j < -1022``) is
    set to 0: a Beta draw
    of exactly 0 or 1 instead of one within 1e-307 of it.
    """
    inv_shape = 1.0 / shape
    bits = uniform.view(np.int64)
    scale_bits = scale.view(np.int64)
    for i in range(count):
        uniform[i] = (float(np.int64(word(key, i + 1) >> S11)) + 0.5) * TWO_M53
    for i in range(count):  # U = 2^e m with m in [1, 2), read off the bits
        b = bits[i]
        scale[i] = float(((b >> 52) & 0x7FF) - 1023)
        bits[i] = (b & _MANTISSA_BITS) | _ONE_BITS
    for i in range(count):
        high = np.float64(uniform[i] > _SQRT2)  # m to [sqrt(1/2), sqrt(2))
        m = uniform[i] * (1.0 - 0.5 * high)
        e = scale[i] + high
        s = (m - 1.0) / (m + 1.0)
        s2 = s * s
        series = ((((((((((1.0 / 23.0 * s2 + 1.0 / 21.0) * s2 + 1.0 / 19.0) * s2 + 1.0 / 17.0)
                        * s2 + 1.0 / 15.0) * s2 + 1.0 / 13.0) * s2 + 1.0 / 11.0) * s2
                      + 1.0 / 9.0) * s2 + 1.0 / 7.0) * s2 + 1.0 / 5.0) * s2 + 1.0 / 3.0) * s2 + 1.0
        y = ((e * _LN2_HI + 2.0 * s * series) + e * _LN2_LO) * inv_shape
        j = max(math.floor(y * _INV_LN2 + 0.5), -1100.0)
        r = (y - j * _LN2_HI) - j * _LN2_LO
        uniform[i] = (((((((((((((_F13 * r + _F12) * r + _F11) * r + _F10) * r + _F9) * r + _F8)
                              * r + _F7) * r + _F6) * r + _F5) * r + _F4) * r + _F3) * r + _F2)
                       * r + 1.0) * r + 1.0)
        scale[i] = j
    for i in range(count):  # 2^j from its bits
        j = np.int64(scale[i])
        scale_bits[i] = (j + 1023) << 52 if j >= -1022 else np.int64(0)
    for i in range(count):
        values[i] *= scale[i] * uniform[i]
    return key + np.uint64(count + 1) * GOLDEN


@njit(cache=True, fastmath={"reassoc", "contract"})
def _sum_then_square(values: np.ndarray, count: int) -> float:
    """Sum of ``values[:count]``, then square them in place (below 1e-300 set to 0).

    The flush keeps the arithmetic out of slow denormal numbers; it changes a task average by
    less than 1e-300. ``reassoc`` lets the compiler vectorise the sum.
    """
    total = 0.0
    for i in range(count):
        v = values[i]
        total += v
        square = v * v
        values[i] = square if square >= _NEGLIGIBLE else 0.0
    return total


@njit(cache=True)
def _multiply_into(target: np.ndarray, values: np.ndarray, count: int) -> None:
    """``target[:count] *= values[:count]``."""
    for i in range(count):
        target[i] *= values[i]


@njit(cache=True)
def _power_sums(x: np.ndarray, total: int, k: np.ndarray, integer_k: bool, top: int,
                composite: np.ndarray, has_bit: np.ndarray, bit_index: np.ndarray,
                bit_start: np.ndarray, products: np.ndarray, square_sums: np.ndarray,
                acc: np.ndarray) -> None:
    """``acc[i] = sum_t x[t]^k[i]`` over ``x[:total]`` (which it squares in place): by repeated
    squaring for integer k (``integer_k``; the plan of :func:`task_power_sums`), else
    ``exp(k log x)``. ``products`` and ``square_sums`` are scratch."""
    n_k = len(k)
    square_sums[:] = 0.0
    acc[:] = 0.0
    if integer_k:
        products[:, :total] = 1.0
        for j in range(top):  # x holds x^(2^j) at step j
            for ci in range(len(composite)):
                if has_bit[ci, j]:
                    _multiply_into(products[ci], x, total)
            square_sums[j] += _sum_then_square(x, total)
        for ci in range(len(composite)):
            acc[composite[ci]] += products[ci, :total].sum()
        for i in range(n_k):  # the sum of x^k for k = 2^j is the sum of the j-th squares
            if bit_start[i + 1] - bit_start[i] == 1:
                acc[i] = square_sums[bit_index[bit_start[i]]]
    else:
        for i in range(total):
            log_x = math.log(x[i]) if x[i] > 0.0 else -math.inf
            for kk in range(n_k):
                acc[kk] += math.exp(k[kk] * log_x)


@njit(cache=True, parallel=True)
def task_power_sums(
    base_shape: np.ndarray,
    other_shape: np.ndarray,
    cell_offset: np.ndarray,
    cell_other: np.ndarray,
    cell_weight: np.ndarray,
    cell_start: np.ndarray,
    k: np.ndarray,
    bit_index: np.ndarray,
    bit_start: np.ndarray,
    seed: int,
    sum_x: bool = True,
    sum_y: bool = False,
) -> np.ndarray:
    """Draws of ``sum over tasks of x^k`` and of ``(1 - x)^k``, shape ``(draws, systems, K,
    sum_x + sum_y)``.

    Parameters
    ----------
    base_shape, other_shape : (D, S) float arrays
        Per draw and system, the population Beta parameter that goes with ``x``
        (``b`` for pass@k, where ``x = 1 - p``; ``a`` for pass^k) and the other one.
    cell_offset, cell_other : (U,) int arrays
        Per unique ``(n, c)`` cell, the count added to ``base_shape`` (``n - c`` for pass@k,
        ``c`` for pass^k) and to ``other_shape``; ``x ~ Beta(base + offset, other + other``
        ``count)``.
    cell_weight : (U,) int array
        Number of tasks in the cell.
    cell_start : (S + 1,) int array
        System ``s`` owns cells ``cell_start[s]:cell_start[s + 1]``.
    k : (K,) float array
        Positive exponents.
    bit_index, bit_start : int arrays
        Repeated squaring plan for integer k: ``x^k[i]`` is the product of ``x^(2^j)`` over
        ``j in bit_index[bit_start[i]:bit_start[i + 1]]`` (the set bits of ``k[i]``). An
        empty ``bit_start`` means real exponents: ``x^k = exp(k log x)``.
    seed : int
        Stream seed; row ``(draw d, system s)`` uses the stream hashed from ``(seed, s, d)``.
    sum_x, sum_y : bool
        Which sums to return, in this order along the last axis: of ``x^k`` and of
        ``y^k``, ``y = 1 - x`` computed as ``G_y / (G_x + G_y)`` from the same two Gamma
        variates (no cancellation near ``x = 1``). Both come from one set of draws: pass@k
        (``x = 1 - p``) and pass^k (``y = p``) of one posterior draw in one pass, and the
        sums of ``x^k`` do not depend on whether ``y`` is asked for (same stream, same
        arithmetic).
    """
    n_draws, n_sys = base_shape.shape
    n_k = len(k)
    n_out = int(sum_x) + int(sum_y)
    out = np.zeros((n_draws, n_sys, n_k, n_out))
    integer_k = len(bit_start) > 0
    top = bit_index.max() + 1 if len(bit_index) else 1
    # k with two or more set bits need per-task products of squares (powers of two are read
    # off the sums of squares); has_bit[i, j]: bit j is set in the i-th such k
    composite = np.array([i for i in range(n_k) if integer_k
                          and bit_start[i + 1] - bit_start[i] > 1], dtype=np.int64)
    has_bit = np.zeros((len(composite), top), dtype=np.bool_)
    for ci in range(len(composite)):
        for j in range(bit_start[composite[ci]], bit_start[composite[ci] + 1]):
            has_bit[ci, bit_index[j]] = True
    max_weight = 1  # most tasks of one system
    for s in range(n_sys):
        max_weight = max(max_weight, cell_weight[cell_start[s]:cell_start[s + 1]].sum())
    seed_mixed = mix(np.uint64(seed) + GOLDEN)
    n_rows = n_draws * n_sys
    n_blocks = (n_rows + _ROWS_PER_BLOCK - 1) // _ROWS_PER_BLOCK
    for block in prange(n_blocks):
        # scratch once per block of rows, not per row (allocation is not free, and each one
        # is traced when tracemalloc runs)
        x = np.empty(max_weight)  # a system's draws, then their squares in place
        gamma_y = np.empty(max_weight)
        d_x, scale_x = np.empty(max_weight), np.empty(max_weight)  # per task: its cell's
        d_y, scale_y = np.empty(max_weight), np.empty(max_weight)  # Gamma constants
        pending = np.empty(max_weight, dtype=np.bool_)
        boost_uniform = np.empty(max_weight)
        boost_scale = np.empty(max_weight)
        products = np.empty((len(composite), max_weight))
        square_sums = np.empty(top)
        acc = np.empty(n_k)
        for row in range(block * _ROWS_PER_BLOCK, min(n_rows, (block + 1) * _ROWS_PER_BLOCK)):
            d = row // n_sys
            s = row % n_sys
            key = mix(mix(seed_mixed + np.uint64(s)) + np.uint64(d))
            # Gamma constants (for shape, or shape + 1 when boosted) once per cell and draw,
            # spread over the cell's tasks; then every task of the system in one pass
            total = 0
            for u in range(cell_start[s], cell_start[s + 1]):
                w = cell_weight[u]
                shape_x = base_shape[d, s] + cell_offset[u]
                shape_y = other_shape[d, s] + cell_other[u]
                dx = shape_x + (1.0 if shape_x < 1.0 else 0.0) - 1.0 / 3.0
                dy = shape_y + (1.0 if shape_y < 1.0 else 0.0) - 1.0 / 3.0
                sx = 1.0 / math.sqrt(9.0 * dx)
                sy = 1.0 / math.sqrt(9.0 * dy)
                for i in range(total, total + w):
                    d_x[i], scale_x[i], d_y[i], scale_y[i] = dx, sx, dy, sy
                total += w
            key = _gamma_batch(d_x, scale_x, key, total, x, pending)
            key = _gamma_batch(d_y, scale_y, key, total, gamma_y, pending)
            # At most one shape is below 1 (n > 0), so the boosted variate may underflow to 0
            # without making 0 / 0.
            first = 0
            for u in range(cell_start[s], cell_start[s + 1]):
                w = cell_weight[u]
                shape_x = base_shape[d, s] + cell_offset[u]
                shape_y = other_shape[d, s] + cell_other[u]
                if shape_x < 1.0:
                    key = _boost(x[first:first + w], w, shape_x, key, boost_uniform,
                                 boost_scale)
                elif shape_y < 1.0:
                    key = _boost(gamma_y[first:first + w], w, shape_y, key, boost_uniform,
                                 boost_scale)
                first += w
            for i in range(total):
                denominator = x[i] + gamma_y[i]
                gamma_y[i] = gamma_y[i] / denominator  # y = 1 - x
                x[i] = x[i] / denominator
            column = 0
            if sum_x:
                _power_sums(x, total, k, integer_k, top, composite, has_bit, bit_index,
                            bit_start, products, square_sums, acc)
                for i in range(n_k):
                    out[d, s, i, column] = acc[i]
                column += 1
            if sum_y:
                _power_sums(gamma_y, total, k, integer_k, top, composite, has_bit, bit_index,
                            bit_start, products, square_sums, acc)
                for i in range(n_k):
                    out[d, s, i, column] = acc[i]
    return out
