"""Frequentist cross-checks for evaluation counts.

Pure NumPy/SciPy estimators (no PyMC, PyTensor or ArviZ) that sit beside every Bayesian
number: unbiased pass@k and pass^k, binomial intervals, task/cluster/paired bootstraps, the
intra-task correlation, paired tests, power, multiple comparisons, the ship-or-hold gate and
judge calibration, prediction-powered inference, ANOVA variance components and
training-seed noise. :func:`pass_curve` and :func:`pass_rates` wrap them for
:class:`~evalbayes.EvalData`. Formulas and sources are in each function's docstring and in
``docs/frequentist.md``.
"""

from evalbayes.frequentist._bootstrap import (
    BootstrapResult,
    bootstrap_ci,
    episode_bootstrap_ci,
    paired_bootstrap_ci,
    task_bootstrap_ci,
)
from evalbayes.frequentist._correlation import IntraTaskCorrelation, intra_task_correlation
from evalbayes.frequentist._gate import (
    GateCounts,
    GateResult,
    gate_counts,
    ship_gate,
    smallest_clean_win,
)
from evalbayes.frequentist._intervals import Interval, clopper_pearson_interval, wilson_interval
from evalbayes.frequentist._judge import KappaResult, RoganGladenResult, cohen_kappa, rogan_gladen
from evalbayes.frequentist._multiple import MultipleTestResult, benjamini_hochberg, holm
from evalbayes.frequentist._paired import (
    McNemarResult,
    NonInferiorityResult,
    PairedComparison,
    PairedOutcomes,
    SignFlipResult,
    majority_outcome,
    mcnemar,
    non_inferiority,
    paired_comparison,
    paired_outcomes,
    paired_verdict,
    sign_flip_test,
)
from evalbayes.frequentist._passk import (
    mean_pass_at_k,
    mean_pass_hat_k,
    mean_pass_rate,
    pass_at_k,
    pass_at_k_plugin,
    pass_hat_k,
    pass_hat_k_plugin,
    pooled_pass_rate,
)
from evalbayes.frequentist._power import (
    McNemarMDE,
    difference_se,
    mcnemar_mde,
    mcnemar_power,
    minimum_detectable_effect,
    required_units,
    two_proportion_sample_size,
)
from evalbayes.frequentist._ppi import PPIResult, ppi_lambda, ppi_mean
from evalbayes.frequentist._summary import pass_curve, pass_rates
from evalbayes.frequentist._training_seeds import (
    RecipeDifference,
    TrainingNoise,
    recipe_difference,
    recipe_difference_se,
    training_noise,
)
from evalbayes.frequentist._variance_components import (
    AnovaComponents,
    empirical_logit,
    factorial_anova,
    satterthwaite_interval,
    two_way_components,
)

__all__ = [
    "AnovaComponents",
    "BootstrapResult",
    "GateCounts",
    "GateResult",
    "Interval",
    "IntraTaskCorrelation",
    "KappaResult",
    "McNemarMDE",
    "McNemarResult",
    "MultipleTestResult",
    "NonInferiorityResult",
    "PPIResult",
    "PairedComparison",
    "PairedOutcomes",
    "RecipeDifference",
    "RoganGladenResult",
    "SignFlipResult",
    "TrainingNoise",
    "benjamini_hochberg",
    "bootstrap_ci",
    "clopper_pearson_interval",
    "cohen_kappa",
    "difference_se",
    "empirical_logit",
    "episode_bootstrap_ci",
    "factorial_anova",
    "gate_counts",
    "holm",
    "intra_task_correlation",
    "majority_outcome",
    "mcnemar",
    "mcnemar_mde",
    "mcnemar_power",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "mean_pass_rate",
    "minimum_detectable_effect",
    "non_inferiority",
    "paired_bootstrap_ci",
    "paired_comparison",
    "paired_outcomes",
    "paired_verdict",
    "pass_at_k",
    "pass_at_k_plugin",
    "pass_curve",
    "pass_hat_k",
    "pass_hat_k_plugin",
    "pass_rates",
    "pooled_pass_rate",
    "ppi_lambda",
    "ppi_mean",
    "recipe_difference",
    "recipe_difference_se",
    "required_units",
    "rogan_gladen",
    "satterthwaite_interval",
    "ship_gate",
    "sign_flip_test",
    "smallest_clean_win",
    "task_bootstrap_ci",
    "training_noise",
    "two_proportion_sample_size",
    "two_way_components",
    "wilson_interval",
]
