"""The ``evalbayes crosscheck`` report: frequentist numbers for every system, and a pair.

:func:`crosscheck` collects, per system, pass@1 two ways (task average and pooled), a
Wilson interval, a task-bootstrap interval, unbiased pass@k (Chen et al. 2021) and pass^k
(Yao et al. 2024), the intra-task correlation with its design effect, and flags (flaky
tasks, saturated suite, small suite); with ``compare=(A, B)`` it adds the paired block
(difference B - A, paired bootstrap, sign-flip and McNemar tests, verdict, minimum
detectable effect, non-inferiority). It imports no PyMC, PyTensor or ArviZ.

Modules: :mod:`.report` (the result classes and their rendering), :mod:`.build` (the
computation). ``evalbayes.frequentist`` does not import this package (it sits above the
estimators); import it as ``from evalbayes.frequentist.crosscheck import crosscheck``.
"""

from evalbayes.frequentist.crosscheck._build import crosscheck
from evalbayes.frequentist.crosscheck._report import (
    SATURATED_SHARE,
    SMALL_SUITE,
    ComparisonCrosscheck,
    CrosscheckReport,
    SystemCrosscheck,
)

__all__ = [
    "SATURATED_SHARE",
    "SMALL_SUITE",
    "ComparisonCrosscheck",
    "CrosscheckReport",
    "SystemCrosscheck",
    "crosscheck",
]
