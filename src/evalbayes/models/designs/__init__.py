"""Experimental designs as models on the same template: the factorial model x harness design
with variance components, training-seed hierarchies (run-to-run noise of a recipe) and the
judge-error-aware likelihood, with the helpers that build their data and read their results.
"""

from evalbayes.models.designs._factorial import (
    FactorialModel,
    FactorialPosterior,
    add_factors,
    factors_from_system_names,
    harness_curves,
    rank_flips,
    variance_components,
)
from evalbayes.models.designs._judge_error import (
    JudgeErrorModel,
    JudgeErrorPosterior,
    gold_accuracy,
    judge_accuracy,
    judge_crosscheck,
    judge_data,
    true_pass_rate,
)
from evalbayes.models.designs._training_seeds import (
    TrainingSeedsModel,
    TrainingSeedsPosterior,
    design_assurance,
    noise_components,
    recipe_difference,
)

__all__ = [
    "FactorialModel",
    "FactorialPosterior",
    "JudgeErrorModel",
    "JudgeErrorPosterior",
    "TrainingSeedsModel",
    "TrainingSeedsPosterior",
    "add_factors",
    "design_assurance",
    "factors_from_system_names",
    "gold_accuracy",
    "harness_curves",
    "judge_accuracy",
    "judge_crosscheck",
    "judge_data",
    "noise_components",
    "rank_flips",
    "recipe_difference",
    "true_pass_rate",
    "variance_components",
]
