"""Deprecated location of :mod:`evalbayes.frequentist.crosscheck` (kept for one release)."""

import warnings

from evalbayes.frequentist.crosscheck import (
    SATURATED_SHARE,
    SMALL_SUITE,
    ComparisonCrosscheck,
    CrosscheckReport,
    SystemCrosscheck,
    crosscheck,
)

__all__ = [
    "SATURATED_SHARE",
    "SMALL_SUITE",
    "ComparisonCrosscheck",
    "CrosscheckReport",
    "SystemCrosscheck",
    "crosscheck",
]

warnings.warn(
    "evalbayes.crosscheck moved to evalbayes.frequentist.crosscheck; the old name goes in the "
    "next release",
    DeprecationWarning,
    stacklevel=2,
)
