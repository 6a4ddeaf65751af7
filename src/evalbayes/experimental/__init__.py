"""Models under evaluation. This namespace does not change the stable models; its interfaces
are experimental and may change or go without notice.

A model starts here, outside the registry (:func:`evalbayes.models.model_names`, the CLI's
``--model`` and the README table do not list it), and graduates into
:mod:`evalbayes.models` together with the validity page that measured it
(``CONTRIBUTING.md``). Importing this package warns once.

Retired here after measurement (results kept in ``benchmarks/experimental/``): the joint
task-effects model (logit-normal with shared task effects) and the task grid (shared
difficulties on the rate grid); both were narrower than the truth beyond ``k = n`` on real
benchmarks and the task grid did not mix on Terminal-Bench.
"""

import warnings

warnings.warn(
    "evalbayes.experimental holds models under evaluation: their interfaces and results may "
    "change without notice",
    FutureWarning,
    stacklevel=2,
)

__all__: list[str] = []
