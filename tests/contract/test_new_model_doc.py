"""docs/new_model.md: its worked model runs on the template and matches the exact posterior."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy import stats

from paths import ROOT

DOC = ROOT / "docs" / "new_model.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def _model_module(tmp_path: Path) -> ModuleType:
    """The page's model block as a real module file (dataclasses need their module)."""
    path = tmp_path / "shared_rate_example.py"
    path.write_text(_blocks()[0])
    spec = importlib.util.spec_from_file_location("shared_rate_example", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["shared_rate_example"] = module
    spec.loader.exec_module(module)
    return module


def test_worked_model_fits_through_the_template_and_matches_the_conjugate_posterior(tmp_path):
    module = _model_module(tmp_path)
    namespace: dict = dict(vars(module))
    exec(compile(_blocks()[1], str(DOC), "exec"), namespace)
    post, data = namespace["post"], namespace["data"]
    n, c = data.n.values.sum(axis=1), data.c.values.sum(axis=1)
    p = post.posterior["p"].transpose("chain", "draw", "system").values.reshape(-1, len(n))
    exact = stats.beta(1 + c, 1 + n - c)
    # NUTS draws are autocorrelated: allow 5 MC standard errors with ESS >= draws / 4
    ess = p.shape[0] / 4
    error = np.abs(p.mean(axis=0) - exact.mean())
    np.testing.assert_array_less(error, 5 * exact.std() / np.sqrt(ess))
    # both estimands come from the hooks; for one shared rate they coincide
    tasks = post.pass_at_k([1, 8])
    population = post.pass_at_k([1, 8], estimand="population")
    np.testing.assert_allclose(tasks.values, population.values, rtol=1e-12)
    assert post.log_likelihood().sizes["cell"] == int((data.n.values > 0).sum())


def test_worked_model_refuses_what_the_template_refuses(tmp_path):
    namespace = vars(_model_module(tmp_path))
    import evalbayes as eb

    data = eb.datasets.load("tinyagent", experiment="sec17.1")
    with pytest.raises(ValueError, match="draws must be an integer >= 1"):
        namespace["SharedRateModel"]().fit(data, draws=0)
    with pytest.raises(ValueError, match="method='exact'"):
        namespace["SharedRateModel"]().fit(data, method="exact", draws=10, chains=1)
