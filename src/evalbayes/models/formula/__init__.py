"""Formula models: a binomial GLMM written in lme4 / brms / bambi notation, with covariates
from the data's system and task coordinates, on the same template as every model."""

from evalbayes.models.formula._design import TERM_KINDS, FormulaDesign, GroupTerm, design
from evalbayes.models.formula._model import (
    EXTRAPOLATION_NOTE,
    FormulaModel,
    FormulaPosterior,
    effects,
)

__all__ = [
    "EXTRAPOLATION_NOTE",
    "TERM_KINDS",
    "FormulaDesign",
    "FormulaModel",
    "FormulaPosterior",
    "GroupTerm",
    "design",
    "effects",
]
