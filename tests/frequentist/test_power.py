"""Power, sample sizes and minimum detectable effects (seeds 000/003 §17.4, 004 §5.7, E5.1, 001)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from evalbayes.frequentist import (
    McNemarMDE,
    difference_se,
    mcnemar_mde,
    mcnemar_power,
    minimum_detectable_effect,
    required_units,
    two_proportion_sample_size,
)


def test_required_units_section_17_4_rows():
    """Seed 003 §17.4 table, printed from sds measured to more digits than shown
    (paired 0.072, per-task 0.291, seeds 0.007). Rows that the rounded sds determine
    are asserted exactly; every printed row must lie between the answers at the two ends of
    the sd's rounding interval [sd - 0.0005, sd + 0.0005]."""
    printed = {  # effect: (paired, unpaired per arm, seeds per arm)
        0.02: (103, 3326, 3),
        0.05: (17, 533, 1),
        0.10: (5, 134, 1),
    }
    sds = (0.072, math.sqrt(2) * 0.291, math.sqrt(2) * 0.007)
    half = (0.0005, math.sqrt(2) * 0.0005, math.sqrt(2) * 0.0005)
    for effect, row in printed.items():
        for value, sd, h in zip(row, sds, half, strict=True):
            low, high = required_units(sd - h, effect), required_units(sd + h, effect)
            assert low <= value <= high
    # exact from the rounded sds
    assert required_units(0.072, 0.05) == 17
    assert required_units(0.072, 0.10) == 5
    assert required_units(math.sqrt(2) * 0.007, 0.05) == 1
    assert required_units(math.sqrt(2) * 0.007, 0.10) == 1


def test_required_units_formula():
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    for sd, effect in [(0.3, 0.05), (1.0, 0.2), (0.07, 0.011)]:
        assert required_units(sd, effect) == math.ceil((z * sd / effect) ** 2)
    assert required_units(1.0, 0.5, alpha=0.01, power=0.9) == math.ceil(
        ((stats.norm.ppf(0.995) + stats.norm.ppf(0.9)) / 0.5) ** 2
    )


def test_two_proportion_section_5_7_2():
    """Seed 004 §5.7.2: 0.60 -> 0.63 at alpha 0.05, power 0.8 needs 'about 4,100' per arm.

    Pooled-variance formula (Fleiss 1981, no continuity correction), transcribed here.
    """
    p1, p2 = 0.60, 0.63
    pbar = (p1 + p2) / 2
    hand = (
        stats.norm.ppf(0.975) * math.sqrt(2 * pbar * (1 - pbar))
        + stats.norm.ppf(0.8) * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    ) ** 2 / (p2 - p1) ** 2
    got = two_proportion_sample_size(p1, p2)
    assert got == math.ceil(hand) == 4129
    assert round(got, -2) == 4100
    assert two_proportion_sample_size(p2, p1) == got  # symmetric


def test_exercise_e5_1():
    """Seed 004 S5.1: 65% on 200 tasks: unpaired SE 0.0477 and MDE 13.4 points; paired
    with rho 0.3: SE 0.0399 and MDE 11.2 points."""
    unpaired = difference_se(0.65, 200)
    paired = difference_se(0.65, 200, rho=0.3)
    assert round(unpaired, 4) == 0.0477
    assert round(paired, 4) == 0.0399
    assert round(100 * minimum_detectable_effect(unpaired), 1) == 13.4
    assert round(100 * minimum_detectable_effect(paired), 1) == 11.2


def test_exercise_e5_4_and_section_5_7_4():
    """S5.4: sqrt(0.25/500) = 0.0224 per arm, 0.0317 for the difference; §5.7.4: 0.040."""
    assert round(difference_se(0.5, 500), 4) == 0.0316  # sqrt(2) x 0.02236 = 0.03162
    assert round(difference_se(0.6, 300), 3) == 0.040


def _brute_force_power(n: int, pa: float, pb: float, alpha: float) -> float:
    """Sum the multinomial probability of every (only A, only B) outcome McNemar rejects."""
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            p_value = sm_mcnemar([[0, b], [c, 0]], exact=True).pvalue if b + c else 1.0
            if p_value < alpha:
                total += stats.multinomial.pmf([b, c, n - b - c], n, [pa, pb, 1 - pa - pb])
    return total


@pytest.mark.parametrize(("n", "pa", "pb"), [(12, 0.1, 0.4), (20, 0.05, 0.25), (25, 0.2, 0.2)])
def test_mcnemar_power_equals_enumeration(n, pa, pb):
    assert mcnemar_power(n, pa, pb) == pytest.approx(_brute_force_power(n, pa, pb, 0.05), abs=1e-10)


def test_mcnemar_mde_is_the_smallest_gap_with_80_percent_power():
    psi = 0.3
    got = mcnemar_mde(100, psi)
    assert isinstance(got, McNemarMDE) and got.effect is not None
    delta = got.effect

    def power(d):
        return _brute_force_power(100, (psi - d) / 2, (psi + d) / 2, 0.05)

    assert power(delta + 1e-6) >= 0.8 - 1e-9
    assert power(delta - 1e-3) < 0.8


def test_mcnemar_mde_none_when_suite_too_small():
    """Seed 001: 'A small suite may have none: no 80% power at this n'."""
    got = mcnemar_mde(5, 0.5)
    assert got.effect is None and got.message == "no 80% power at this n"
    assert mcnemar_mde(50, 0.0).effect is None


def test_mcnemar_power_monotone_in_gap():
    gaps = np.linspace(0, 0.4, 21)
    powers = [mcnemar_power(60, (0.4 - g) / 2, (0.4 + g) / 2) for g in gaps]
    assert np.all(np.diff(powers) >= -1e-12)
    assert powers[0] <= 0.05  # the exact test holds its level


def test_bad_inputs():
    with pytest.raises(ValueError, match="sd must be"):
        required_units(0, 0.1)
    with pytest.raises(ValueError, match="effect must be"):
        required_units(0.1, -0.1)
    with pytest.raises(ValueError, match="alpha"):
        required_units(0.1, 0.1, alpha=1.2)
    with pytest.raises(ValueError, match="power"):
        required_units(0.1, 0.1, power=1.0)
    with pytest.raises(ValueError, match="equal"):
        two_proportion_sample_size(0.5, 0.5)
    with pytest.raises(ValueError, match="p1"):
        two_proportion_sample_size(0.0, 0.5)
    with pytest.raises(ValueError, match="rho"):
        difference_se(0.5, 100, rho=1.0)
    with pytest.raises(ValueError, match="n_cases"):
        mcnemar_power(0, 0.1, 0.1)
    with pytest.raises(ValueError, match="sum <= 1"):
        mcnemar_power(10, 0.6, 0.6)
    with pytest.raises(ValueError, match="discordant_rate"):
        mcnemar_mde(10, 1.5)
    with pytest.raises(ValueError, match="must exceed alpha"):
        mcnemar_mde(10, 0.5, alpha=0.5, power=0.4)
