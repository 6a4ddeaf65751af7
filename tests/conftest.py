"""Shared fixtures. Fits are session-scoped so that a PyMC/nutpie compile is paid once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paths import SHARED_DATA

os.environ.setdefault("MPLBACKEND", "Agg")



@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The project's shared real-data folder (../shared/data); skip when absent."""
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not available")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tinyagent():
    """TinyAgent sec17.7 counts (64 episodes per task, three systems)."""
    from evalbayes.datasets import load

    return load("tinyagent")


@pytest.fixture(scope="session")
def tinyagent_171():
    """TinyAgent sec17.1 counts (32 episodes per task, RL base and GRPO 80)."""
    from evalbayes.datasets import load

    return load("tinyagent", experiment="sec17.1")


@pytest.fixture(scope="session")
def tinyagent_fit(tinyagent_171):
    """Partial-pooling Beta-Binomial fit of TinyAgent sec17.1 by NUTS (4 chains x 1000 draws;
    NUTS rather than the exact default so that sample statistics exist)."""
    from evalbayes.models import BetaBinomialModel

    return BetaBinomialModel().fit(
        tinyagent_171, method="nutpie", draws=1000, tune=1000, chains=4, seed=1
    )
