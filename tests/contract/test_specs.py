"""Every model spec in models/*.toml maps one-to-one onto its model's ``to_config()``."""

from __future__ import annotations

import tomllib

import pytest

from evalbayes.models import model_from_config
from paths import ROOT

SPECS = sorted((ROOT / "models").glob("*.toml"))


def test_there_are_specs():
    assert any(path.name == "beta_binomial.toml" for path in SPECS)


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_spec_round_trips_through_the_model(path):
    spec = tomllib.loads(path.read_text())
    spec.pop("sampler", None)
    model = model_from_config(spec)
    config = model.to_config()
    assert set(config) == set(spec), f"{path.name}: keys differ from to_config()"
    for key, value in spec.items():
        if key == "model":
            continue
        assert config[key] == value, f"{path.name}: {key}"


def test_default_spec_is_the_default_model():
    from evalbayes.models import BetaBinomialModel

    spec = tomllib.loads((SPECS[0].parent / "beta_binomial.toml").read_text())
    spec.pop("sampler")
    assert model_from_config(spec) == BetaBinomialModel()


def test_default_model_by_number_of_systems():
    """rate-grid (its spec as shipped) for two or more systems, the Beta-Binomial for one."""
    import numpy as np

    from evalbayes import EvalData
    from evalbayes.models import RateGridModel, default_model, default_model_name

    assert default_model_name(1) == "beta-binomial"
    assert default_model_name(2) == default_model_name(123) == "rate-grid"
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="n_systems"):
            default_model_name(bad)
    one = EvalData.from_arrays(np.array([[4, 4]]), np.array([[1, 2]]))
    two = EvalData.from_arrays(np.array([[4, 4], [4, 4]]), np.array([[1, 2], [0, 4]]))
    assert default_model(one).name == "beta-binomial"
    assert default_model(two) == RateGridModel()
    spec = tomllib.loads((SPECS[0].parent / "rate_grid.toml").read_text())
    spec.pop("sampler")
    assert model_from_config(spec) == RateGridModel()
