"""The item response theory family on binomial counts (1PL, 2PL, 3PL): system ability, item
difficulty, discrimination and guessing, with item tables, information and selection.
"""

from evalbayes.models.irt._items import (
    IRTDraws,
    IRTPosterior,
    ability_table,
    fisher_information,
    item_information,
    item_table,
    select_items,
)
from evalbayes.models.irt._model import IRTModel

__all__ = [
    "IRTDraws",
    "IRTModel",
    "IRTPosterior",
    "ability_table",
    "fisher_information",
    "item_information",
    "item_table",
    "select_items",
]
