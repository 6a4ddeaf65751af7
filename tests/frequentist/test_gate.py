"""The ship-or-hold gate of seed 001."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalbayes.frequentist import GateCounts, gate_counts, ship_gate, smallest_clean_win


def test_smallest_clean_win_is_8_at_the_defaults():
    """Seed 001: '8 wins with no losses at the defaults' (lambda 2, alpha 0.05)."""
    assert smallest_clean_win() == 8
    assert (2 / 3) ** 7 >= 0.05 > (2 / 3) ** 8


@pytest.mark.parametrize(("lam", "alpha"), [(1, 0.05), (2, 0.01), (3, 0.1), (0.5, 0.2)])
def test_smallest_clean_win_closed_form(lam, alpha):
    """Smallest integer w > log(alpha) / log(lam/(1+lam)) (no value sits on the boundary)."""
    bound = math.log(alpha) / math.log(lam / (1 + lam))
    assert smallest_clean_win(lam, alpha) == math.floor(bound) + 1


def test_clean_win_ships_and_one_fewer_holds():
    """With no losses, the gate ships at exactly smallest_clean_win wins."""
    ship = ship_gate(8, 0, 40)
    assert ship.decision == "ship" and ship.exit_code == 0
    assert ship.headline == "Ship it: B wins 8 cases, loses 0"
    hold = ship_gate(7, 0, 40)
    assert hold.decision == "hold" and hold.exit_code == 1
    assert hold.headline.startswith("Hold: not enough evidence (")
    assert hold.headline.endswith(")")
    assert not hold.significant and hold.net_gain_ok and hold.breakage_ok


def test_significance_is_a_one_sided_binomial_test():
    for wins, losses in [(12, 2), (20, 5), (9, 1), (30, 12)]:
        got = ship_gate(wins, losses, 100)
        ref = stats.binomtest(wins, wins + losses, 2 / 3, alternative="greater").pvalue
        assert got.p_value == pytest.approx(ref, rel=1e-10)
        ref_loss = stats.binomtest(losses, wins + losses, 0.5, alternative="greater").pvalue
        assert got.loss_p_value == pytest.approx(ref_loss, rel=1e-10)


def test_dont_ship_when_losses_beat_chance():
    got = ship_gate(1, 9, 50)
    assert got.decision == "dont_ship" and got.exit_code == 1
    assert got.headline == "Don't ship: B breaks 9 cases A solved"


def test_breakage_blocks_shipping():
    got = ship_gate(40, 3, 20)  # 3/20 = 0.15 > tau 0.10
    assert got.net_gain_ok and got.significant and not got.breakage_ok
    assert got.decision == "hold" and "breakage 3/20" in got.headline
    assert ship_gate(40, 3, 20, tau=0.2).decision == "ship"


def test_net_gain_condition():
    got = ship_gate(10, 5, 100)  # 10 - 2 x 5 = 0, not > 0
    assert not got.net_gain_ok and got.decision == "hold" and "net gain" in got.headline
    assert got.net_gain == 0.0


def test_no_changed_cases():
    got = ship_gate(0, 0, 0)
    assert got.decision == "hold" and got.p_value == 1.0 and got.breakage == 0.0


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 40))
def test_reduces_to_wins_exceed_losses(wins, losses, extra):
    """Seed 001: with --lambda 1 --gate-alpha 1 --tau 1, ship when wins exceed losses."""
    got = ship_gate(wins, losses, losses + extra, lam=1, alpha=1, tau=1)
    assert (got.decision == "ship") == (wins > losses)


def test_gate_counts_from_majority_outcomes():
    # per case (n, c): A passes cases 0, 1, 4; B passes 1, 2, 3 (case 4 is a 2/4 tie: fail)
    n_a, c_a = [3, 3, 3, 3, 4], [3, 2, 0, 1, 3]
    n_b, c_b = [3, 3, 3, 3, 4], [0, 3, 2, 2, 2]
    counts = gate_counts(n_a, c_a, n_b, c_b)
    assert counts == GateCounts(wins=2, losses=2, solved=3, unchanged=1)


def test_bad_inputs():
    with pytest.raises(ValueError, match="losses=5 > solved=3"):
        ship_gate(1, 5, 3)
    with pytest.raises(ValueError, match="wins=-1 is negative"):
        ship_gate(-1, 0, 3)
    with pytest.raises(ValueError, match="not an integer"):
        ship_gate(1.5, 0, 3)
    with pytest.raises(ValueError, match="single count"):
        ship_gate([1, 2], 0, 3)
    with pytest.raises(ValueError, match="lam"):
        ship_gate(1, 0, 3, lam=0)
    with pytest.raises(ValueError, match="alpha"):
        ship_gate(1, 0, 3, alpha=0)
    with pytest.raises(ValueError, match="tau"):
        ship_gate(1, 0, 3, tau=-0.1)
    with pytest.raises(ValueError, match="alpha"):
        smallest_clean_win(2, 1.5)
