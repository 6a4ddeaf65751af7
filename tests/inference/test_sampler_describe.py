"""A fit's label, shared by binary and graded-score posteriors (SamplerConfig.describe)."""

from __future__ import annotations

import pytest

from evalbayes._core.names import APPROXIMATE_METHODS, APPROXIMATION_KIND
from evalbayes.inference import SamplerConfig


def test_exact_and_mcmc_fits_are_labelled_by_method_chains_and_draws():
    assert SamplerConfig(method="exact", chains=4, draws=1000).describe(
        "beta-binomial") == "beta-binomial (exact, 4x1000)"
    assert SamplerConfig(method="nutpie", chains=2, draws=300).describe("irt-2pl") == (
        "irt-2pl (nutpie, 2x300)")


@pytest.mark.parametrize("method", sorted(APPROXIMATE_METHODS))
def test_approximate_fits_say_so_with_their_kind(method):
    sampler = SamplerConfig(method=method, chains=1, draws=500)
    kind = APPROXIMATION_KIND.get(method, "variational")
    assert sampler.approximation_kind == kind
    assert sampler.describe("m") == f"m ({method}, 1x500) [APPROXIMATE: {kind}]"
