"""Invariants of the Exalted engine (hypothesis): the Magnitude rows are monotone and each
row's minimum lands in it (X2), damage never raises Magnitude and keeps the track inside
its levels (X34), every distribution sums to 1 (E1), and a hit's odds never exceed 1."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sheetsync.rules.exalted import (
    apply_levels,
    at_least,
    magnitude_for_headcount,
    row_minimum,
    success_distribution,
)

SETTINGS = settings(max_examples=200, deadline=None, database=None)


@SETTINGS
@given(st.integers(min_value=1, max_value=10**7), st.integers(min_value=0, max_value=10**6))
def test_x2_magnitude_never_falls_as_the_headcount_grows(n: int, more: int) -> None:
    assert magnitude_for_headcount(n) <= magnitude_for_headcount(n + more)
    m = magnitude_for_headcount(n)
    assert row_minimum(m) <= n and magnitude_for_headcount(row_minimum(m)) == m


@SETTINGS
@given(st.integers(0, 20), st.integers(0, 60), st.integers(1, 12), st.integers(0, 12))
def test_x34_damage_never_raises_magnitude_and_keeps_the_track_in_bounds(
        marked: int, levels: int, health: int, magnitude: int) -> None:
    marked = marked % health
    loss = apply_levels(marked, levels, health, magnitude)
    assert 0 <= loss.magnitude <= magnitude
    assert loss.dots_lost == magnitude - loss.magnitude
    assert 0 <= loss.marked < health or (magnitude == 0 and loss.marked <= health)
    assert loss.rout_check == (loss.dots_lost > 0 and loss.magnitude > 0)


@SETTINGS
@given(st.integers(-3, 30), st.booleans(), st.booleans(), st.integers(-5, 70))
def test_e1_every_distribution_sums_to_1_and_odds_stay_in_0_1(dice: int, damage: bool, doubled: bool,
                                                            k: int) -> None:
    assert sum(success_distribution(dice, damage=damage, double_tens=doubled)) == 1
    p = at_least(dice, k, damage=damage, double_tens=doubled)
    assert 0 <= p <= 1
    assert at_least(dice, k + 1, damage=damage, double_tens=doubled) <= p
