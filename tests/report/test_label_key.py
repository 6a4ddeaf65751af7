"""The report lists every figure label it shortens beside the full name (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest

from evalbayes._core.names import display_label
from evalbayes.data import EvalData
from evalbayes.models.beta_binomial._model import BetaBinomialModel
from evalbayes.report._build import build_report


def _document(names):
    rng = np.random.default_rng(0)
    n = np.full((len(names), 8), 3)
    c = rng.binomial(3, 0.5, n.shape)
    data = EvalData.from_arrays(n, c, systems=names)
    fit = BetaBinomialModel(pooling="complete").fit(data, draws=50, chains=2, seed=0)
    return build_report(data, fit)


@pytest.mark.filterwarnings("ignore")
def test_long_names_get_a_key_beside_the_figures():
    names = ["20250906_orchestrator_claude-4.1-opus", "short", "20240620_sweagent_claude3.5sonnet"]
    doc = _document(names)
    key = doc.tables()["label-key"]
    assert [row[1] for row in key.rows] == [names[0], names[2]]
    assert [row[0] for row in key.rows] == [display_label(names[0]), display_label(names[2])]
    assert names[0] in [row[0] for row in doc.tables()["per-system"].rows]  # full in tables


@pytest.mark.filterwarnings("ignore")
def test_no_key_when_every_name_fits():
    assert "label-key" not in _document(["A", "B"]).tables()
