"""The reference fits in models/reference/ (made by make_reference.py) are current and sane.

Each default model has one; its recorded configuration is the registry default (a changed
default asks for a new reference); its table covers every k, metric, estimand and system; and
its "these tasks" pass@1 agrees with the data's own task-average success rate, which 64 trials
per cell pin down (independent of the model).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalbayes as eb
from evalbayes.models import default_model_name, get_model
from paths import ROOT

FOLDER = ROOT / "models" / "reference"
PREFIX = "- model configuration: "
KS = [1, 2, 4, 8, 16, 32, 64, 128]
DEFAULTS = sorted({default_model_name(1), default_model_name(2)})


def recorded_config(name: str) -> dict:
    text = (FOLDER / f"tinyagent_{name.replace('-', '_')}.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith(PREFIX))
    return json.loads(line[len(PREFIX):].strip("`"))


@pytest.mark.parametrize("name", DEFAULTS)
def test_reference_is_of_the_current_default_configuration(name):
    assert recorded_config(name) == get_model(name).to_config()


@pytest.mark.parametrize("name", DEFAULTS)
def test_reference_table_is_complete_and_agrees_with_the_data(name):
    table = pd.read_csv(FOLDER / f"tinyagent_{name.replace('-', '_')}.csv")
    for experiment, part in table.groupby("experiment"):
        data = eb.datasets.load("tinyagent", experiment=experiment)
        assert sorted(part["system"].unique()) == sorted(data.systems)
        assert sorted(part["k"].unique()) == KS
        assert set(part["metric"]) == {"pass@k", "pass^k"}
        assert set(part["estimand"]) == {"tasks", "population"}
        assert len(part) == len(data.systems) * len(KS) * 2 * 2
        assert (part["lower"] <= part["upper"]).all()  # (a skewed mean may lie outside)
        rate = (data.c / data.n).mean("task").to_series()
        tasks = part[(part["metric"] == "pass@k") & (part["k"] == 1)
                     & (part["estimand"] == "tasks")].set_index("system")
        np.testing.assert_allclose(tasks["mean"], rate.loc[tasks.index], atol=0.01)
