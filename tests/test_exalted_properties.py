"""Invariants of the Exalted engine (hypothesis): the Magnitude rows are monotone and each
row's minimum lands in it (X2), damage never raises Magnitude and keeps the track inside
its levels (X34), every distribution sums to 1 (E1), and a hit's odds never exceed 1; a unit
acts only on its tick (E5), Endurance stays between 0 and its start (X26, X37), and damage,
rout and Mob Rule never raise Magnitude (X34, X36, X39)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sheetsync.core.dice import RandomRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules import (
    Action,
    Character,
    Formation,
    RallyKind,
    RoutTrigger,
    act,
    apply_levels,
    at_least,
    command_pool,
    exhaustion_check,
    exhaustion_difficulty,
    magnitude_for_headcount,
    mob_rule_check,
    rally,
    rout_check,
    row_minimum,
    second_wind,
    split_unit,
    success_distribution,
    timing,
)
from sheetsync.systems.exalted.rules.timeline import Clock, Timeline

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


# --- E5, X26, X34-X37, X39: the timeline, Endurance and Magnitude over a battle ---------

_ACTIONS = list(Action)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 20), st.sampled_from(_ACTIONS)), max_size=40),
       st.lists(st.integers(0, 6), min_size=3, max_size=3))
def test_e5_a_unit_acts_only_on_its_tick(steps: list[tuple[int, int, Action]], starts: list[int]) -> None:
    tl = Timeline(0, tuple(Clock(f"U{i}", t) for i, t in enumerate(starts)))
    for who, tick, action in steps:
        name = f"U{who}"
        before = tl.clock(name)
        reflexive = timing(action).reflexive
        allowed = tick >= tl.tick and (reflexive or tick == before.next_tick) and not (
            action is Action.MOVE and before.moved_on == tick)
        try:
            tl, ev = act(tl, name, tick, action)
        except InputError:
            assert not allowed
            assert tl.clock(name) == before  # a refusal changes nothing
            continue
        assert allowed
        after = tl.clock(name)
        if reflexive:
            assert after.next_tick == before.next_tick
        else:
            assert tick == before.next_tick and after.next_tick == tick + timing(action).speed


@SETTINGS
@given(st.integers(0, 12), st.integers(0, 5), st.integers(0, 9), st.integers(0, 2**32),
       st.lists(st.sampled_from(["exhaust", "wind"]), max_size=30))
def test_x37_x26_endurance_stays_between_0_and_its_start(start: int, drill: int, magnitude: int, seed: int,
                                                         steps: list[str]) -> None:
    roller = RandomRoller(seed)
    pool = command_pool(Character(name="C", charisma=2, abilities={"War": 2}))
    endurance = start
    for step in steps:
        if step == "exhaust":
            endurance = exhaustion_check("U", pool, exhaustion_difficulty(2, morale=1), endurance, roller).endurance
        else:
            endurance = second_wind(endurance, drill, magnitude, start).value
        assert 0 <= endurance <= start


@SETTINGS
@given(st.integers(0, 9), st.integers(0, 5), st.integers(0, 5), st.integers(0, 2**32),
       st.lists(st.sampled_from(["damage", "rout", "mob", "split", "rally"]), max_size=20), st.integers(0, 30))
def test_x23_x26_x34_x36_x39_magnitude_never_rises_without_a_rally_or_merge(
        magnitude: int, drill: int, morale: int, seed: int, steps: list[str], levels: int) -> None:
    roller = RandomRoller(seed)
    marked, earlier = 0, 0
    for step in steps:
        before = magnitude
        if step == "damage":
            loss = apply_levels(marked, levels, 7, magnitude)
            magnitude, marked = loss.magnitude, loss.marked
        elif step == "rout":
            ev = rout_check("U", [RoutTrigger.FLAME_RANGED], morale=morale, magnitude=magnitude, drill=drill,
                            formation=Formation.SKIRMISH, roller=roller, marked=marked)
            magnitude, marked = ev.magnitude, ev.marked
        elif step == "mob":
            ev = mob_rule_check("U", morale=morale, magnitude=magnitude, drill=drill, earlier_checks=earlier,
                                roller=roller, marked=marked)
            earlier += 1
            magnitude, marked = ev.magnitude, ev.marked
        elif step == "split" and magnitude >= 1:
            count = row_minimum(magnitude) + levels
            split = split_unit("U", "V", parent_commander=Character(name="C"), hero=Character(name="H"),
                               parent_headcount=count, split_headcount=max(1, count // 3),
                               parent_magnitude=magnitude, parent_drill=drill, new_drill=drill,
                               parent_formation=Formation.RELAXED, roller=roller)
            assert split.parent_magnitude < before
            magnitude = split.parent_magnitude
        elif step == "rally" and magnitude >= 1:
            ev_r = rally("U", RallyKind.NUMBERS, Character(name="C"), magnitude=magnitude, drill=drill, relays=0,
                         special_characters=0, endurance=1, starting_endurance=1, formation=Formation.RELAXED,
                         pool_left=1, roller=roller)
            assert ev_r.magnitude in (before, before + 1)  # a rally for Numbers: the one way up, by 1
            magnitude = ev_r.magnitude
            continue
        assert 0 <= magnitude <= before
