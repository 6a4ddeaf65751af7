"""Graded outcomes: ordinal scores (``OrdinalModel``, ``ordinal``) and partial credit in
[0, 1] (``PartialCreditModel``, ``partial-credit``), on their own small template
(:class:`ScoreModel`, a sibling of the c-of-n :class:`~evalbayes.models.Model`) and data
container (:class:`~evalbayes.io.ScoreData`)."""

from evalbayes.models.graded._base import ScoreModel
from evalbayes.models.graded._ordinal import OrdinalModel
from evalbayes.models.graded._partial_credit import PartialCreditModel
from evalbayes.models.graded._posterior import ScorePosterior, ScorePriorPredictive

__all__ = [
    "OrdinalModel",
    "PartialCreditModel",
    "ScoreModel",
    "ScorePosterior",
    "ScorePriorPredictive",
]
