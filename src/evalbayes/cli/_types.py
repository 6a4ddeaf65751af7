"""The argparse ``type=`` functions of every numeric flag, in one place.

Every numeric flag is parsed by one of these, so a bad value is a usage error naming the
flag (argparse: "argument --resamples: ..."), exit 2, before any file is read: integers are
integers (2.9 is refused, not truncated), numbers are finite, sizes have upper bounds.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from evalbayes._core.names import MAX_SEED, check_count

#: Upper bounds of the Monte Carlo and design sizes (each far above any useful value; they
#: stop a typo from allocating terabytes): bootstrap resamples, simulations, design tasks,
#: trials per task, training runs, k.
MAX_RESAMPLES = 1_000_000
MAX_SIMS = 100_000
MAX_TASKS = 100_000
MAX_TRIALS = 1_000_000
MAX_RUNS = 10_000
MAX_K = 2**53


def count(minimum: int = 1, maximum: int | None = None) -> Any:
    """argparse type: an integer in [minimum, maximum] (the rule of
    :func:`evalbayes._core.names.check_count`; ``2.9`` and ``1e3`` are refused)."""

    def parse(text: str) -> int:
        span = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum:,}]"
        try:
            value = check_count(int(text.strip()), "value", minimum=minimum)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {text!r}"
                                             ) from None
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {text!r}")
        return value

    parse.__name__ = "integer"
    return parse


positive_int = count(1)
non_negative_int = count(0)
seed_int = count(0, MAX_SEED)


def number(low: float = -math.inf, high: float = math.inf, *, open_low: bool = False,
           open_high: bool = False) -> Any:
    """argparse type: a finite number in the interval given (``nan`` and ``inf`` refused)."""
    left, right = "(" if open_low else "[", ")" if open_high else "]"
    span = "" if (low, high) == (-math.inf, math.inf) else f" in {left}{low:g}, {high:g}{right}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        ok = math.isfinite(value) and (value > low if open_low else value >= low) and (
            value < high if open_high else value <= high)
        if not ok:
            raise argparse.ArgumentTypeError(f"must be a finite number{span}, got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


finite = number()
probability = number(0, 1, open_low=True, open_high=True)  # names.check_prob's rule
non_negative = number(0)
positive = number(0, open_low=True)
k_value = number(0, MAX_K, open_low=True)  # a posterior curve's k: any positive real
