"""X17-X27: the actions other than the attack, each with its roll, difficulty and modifiers."""

from __future__ import annotations

from typing import Any

import pytest

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules import (
    Character,
    Entry,
    Formation,
    HouseRules,
    RallyKind,
    RoutTrigger,
    aim_bonus,
    change_formation,
    command_difficulty,
    dash_allowed,
    disengage,
    duel_needs_called_shot,
    merge_units,
    move_allowed,
    rally,
    rally_pool_for,
    signal_units,
    split_unit,
    spread_under_fire,
    turn,
)

NO_DICE = ScriptedRoller([])
CMDR = Character(name="Cmdr", charisma=3, wits=3, abilities={"War": 3})     # command pool 6
RELAY = Character(name="Bugler", charisma=4, abilities={"War": 3})          # 7: the best relay
HERO = Character(name="Hero", charisma=2, abilities={"War": 2})             # 4


def test_x18_command_difficulty_is_at_least_1_plus_modifiers() -> None:
    assert command_difficulty(3, 1).value == 2
    assert command_difficulty(2, 3).value == 1
    assert command_difficulty(2, 3, [Entry("engaged", 2, "X20")]).value == 3


def test_x17_x18_who_may_move_or_dash() -> None:
    assert move_allowed(engaged=False, hesitating=False) is None
    assert "hesitating" in (move_allowed(engaged=False, hesitating=True) or "")
    assert "Disengage" in (move_allowed(engaged=True, hesitating=False) or "")
    assert dash_allowed(Formation.UNORDERED, solo=False, engaged=False, hesitating=False) == \
        "an Unordered unit cannot Dash (X18)"
    assert dash_allowed(Formation.UNORDERED, solo=True, engaged=False, hesitating=False) is None
    assert dash_allowed(Formation.RELAXED, solo=False, engaged=False, hesitating=False) is None


def test_x19_aim_adds_a_die_per_long_tick_at_most_3() -> None:
    assert [aim_bonus(t) for t in range(6)] == [0, 1, 2, 3, 3, 3]


def test_x20_change_formation_refuses_what_the_drill_cannot_hold_before_rolling() -> None:
    with pytest.raises(InputError, match=r"Orders!E5: Foot: Close needs effective Drill 2, the unit has 1"):
        change_formation("Foot", Formation.RELAXED, Formation.CLOSE, commander=CMDR, magnitude=3, drill=1,
                         roller=NO_DICE, where="Orders!E5")


def test_x20_change_formation_difficulty_and_the_best_relay() -> None:
    # Magnitude 3 - Drill 2 = 1; engaged +2 (instead of +1 for attacked): 3; the relay's 7 dice
    kw: dict[str, Any] = {"commander": CMDR, "relays": [RELAY], "magnitude": 3, "drill": 2, "roller": NO_DICE}
    plain = change_formation("Foot", Formation.RELAXED, Formation.CLOSE, typed="7 2 2 2 2 2 2", **kw)
    assert plain.roll.difficulty.value == 1 and plain.roll.pool.value == 7 and plain.formation is Formation.CLOSE
    attacked = change_formation("Foot", Formation.RELAXED, Formation.CLOSE, attacked_since=True,
                                typed="7 2 2 2 2 2 2", **kw)
    assert attacked.roll.difficulty.value == 2 and attacked.formation is Formation.RELAXED
    engaged = change_formation("Foot", Formation.RELAXED, Formation.CLOSE, attacked_since=True, engaged=True,
                               typed="7 7 7 2 2 2 2", **kw)
    assert engaged.roll.difficulty.value == 3 and engaged.formation is Formation.CLOSE


def test_x20_spreading_out_under_fire_gives_skirmish_and_a_rout_check() -> None:
    # Magnitude 3 - Drill 2 = 1, +1 attacked: 2; commander's 6 dice "7 7 2 2 2 2" = 2
    ok = spread_under_fire("Foot", Formation.CLOSE, commander=CMDR, magnitude=3, drill=2, roller=NO_DICE,
                           typed="7 7 2 2 2 2")
    assert ok.formation is Formation.SKIRMISH and ok.rout_trigger is RoutTrigger.SPREAD_UNDER_FIRE
    no = spread_under_fire("Foot", Formation.CLOSE, commander=CMDR, magnitude=3, drill=2, roller=NO_DICE,
                           typed="7 2 2 2 2 2")
    assert no.formation is Formation.CLOSE and no.rout_trigger is None


def test_x21_disengage_pool_and_difficulty_with_envelopment() -> None:
    # (Wits 3 + War 3 + Drill 2) - Magnitude 3 = 5 dice; enemy Drill 2 + 3 = 5
    ev = disengage("Foot", CMDR, drill=2, magnitude=3, enemy_drill=2, roller=NO_DICE, typed="10 10 9 2 2")
    assert (ev.pool.value, ev.difficulty.value, ev.disengaged) == (5, 5, True)
    assert ev.rout_trigger is RoutTrigger.DISENGAGED
    trapped = disengage("Foot", CMDR, drill=2, magnitude=3, enemy_drill=2, enveloped=True, roller=NO_DICE,
                        typed="10 10 9 2 2")
    assert trapped.difficulty.value == 8 and not trapped.disengaged and trapped.rout_trigger is None
    big = disengage("Foot", CMDR, drill=2, magnitude=3, enemy_drill=2, enveloping=True, roller=NO_DICE,
                    typed="10 10 9 2 2")
    assert big.difficulty.value == 6


def test_x22_turn_is_a_command_roll() -> None:
    ev = turn(CMDR, magnitude=4, drill=1, roller=NO_DICE, typed="7 7 7 2 2 2")
    assert ev.difficulty.value == 3 and ev.success


def test_x25_signal_reaches_one_unit_per_relay() -> None:
    assert signal_units("Foot", ["A", "B"], 2) == ("A", "B")
    with pytest.raises(InputError, match=r"Orders!F9: Foot can signal 2 unit\(s\), one per relay, not 3"):
        signal_units("Foot", ["A", "B", "C"], 2, where="Orders!F9")


def test_x27_an_unwilling_duel_target_needs_a_called_shot() -> None:
    assert duel_needs_called_shot(False) and not duel_needs_called_shot(True)


def test_x23_split_magnitudes_and_the_parent_drops_at_least_one() -> None:
    # 81 (Magnitude 3) splits 20 away: new 20 -> 2; parent 61 -> 2 = min(2, 3 - 1)
    kw: dict[str, Any] = {"parent_commander": CMDR, "hero": HERO, "parent_drill": 2, "new_drill": 1,
          "parent_formation": Formation.RELAXED, "roller": NO_DICE}
    ev = split_unit("Foot", "Band", parent_headcount=81, split_headcount=20, parent_magnitude=3,
                    typed=["7 2 2 2 2 2", "7 2 2 2"], **kw)
    assert (ev.parent_magnitude, ev.new_magnitude) == (2, 2)
    assert ev.parent_roll.difficulty.value == 1 and ev.new_roll.difficulty.value == 1  # max(1, 2 - 2), (2 - 1)
    assert (ev.parent_formation, ev.new_formation, ev.hesitating) == (Formation.RELAXED, Formation.RELAXED, ())
    # 5 away from 81: new 1; parent 76 is still row 3, but it drops one: 2.  Engaged: +2 each
    small = split_unit("Foot", "Band", parent_headcount=81, split_headcount=5, parent_magnitude=3, engaged=True,
                       typed=["7 7 2 2 2 2", "2 2 2 2"], **kw)
    assert (small.parent_magnitude, small.new_magnitude) == (2, 1)
    assert small.parent_roll.difficulty.value == 3 and small.new_roll.difficulty.value == 3
    assert small.hesitating == ("Foot", "Band") and small.new_formation is Formation.UNORDERED


def test_x23_split_needs_a_hero_and_room_for_followers() -> None:
    with pytest.raises(InputError, match="no hero to command the new unit"):
        split_unit("Foot", "Band", parent_commander=CMDR, hero=None, parent_headcount=81, split_headcount=20,
                   parent_magnitude=3, parent_drill=2, new_drill=1, parent_formation=Formation.RELAXED,
                   roller=NO_DICE)
    with pytest.raises(InputError, match=r"Band \(Magnitude 1\) can take 2 special character\(s\), not 3"):
        split_unit("Foot", "Band", parent_commander=CMDR, hero=HERO, parent_headcount=81, split_headcount=5,
                   parent_magnitude=3, parent_drill=2, new_drill=1, parent_formation=Formation.RELAXED,
                   followers=["a", "b", "c"], roller=NO_DICE)


def test_x24_merge_adds_headcounts_and_excess_special_characters_leave() -> None:
    b_cmdr = Character(name="Other", charisma=2, abilities={"War": 1})  # 3 dice
    kw: dict[str, Any] = {"commanders": (CMDR, b_cmdr), "headcounts": (30, 50), "magnitudes": (2, 2), "drills": (1, 0),
          "roller": NO_DICE}
    ev = merge_units("A", "B", special_characters=list("abcdefg"), typed=["7 2 2 2 2 2", "7 7 2"],
                     **kw)
    # 30 + 50 = 80: Magnitude 3, limit 6: the 7th leaves; equal Magnitudes: A's commander leads
    assert (ev.merged, ev.headcount, ev.magnitude, ev.commander, ev.leaving) == (True, 80, 3, "Cmdr", ("g",))
    failed = merge_units("A", "B", typed=["7 2 2 2 2 2", "7 2 2"], **kw)
    assert not failed.merged and failed.hesitating == ("B",)  # B needed max(1, 2 - 0) = 2
    agreed = merge_units("A", "B", leader="Other", typed=["7 2 2 2 2 2", "7 7 2"], **kw)
    assert agreed.commander == "Other"
    solo = merge_units("A", "Lone", solo_joining=True, **kw)
    assert solo.merged and solo.rolls == (None, None)


def test_x26_rally_pool_is_charisma_plus_the_better_of_war_and_performance() -> None:
    bard = Character(name="Bard", charisma=3, abilities={"War": 2, "Performance": 4})
    ev = rally("Foot", RallyKind.ORGANIZATION, bard, magnitude=2, drill=1, relays=0, special_characters=1,
               endurance=3, starting_endurance=3, formation=Formation.RELAXED, roller=NO_DICE,
               typed="7 2 2 2 2 2 2")
    assert ev.roll.pool.value == 7 and ev.roll.difficulty.value == 1 and ev.relays == 1
    with pytest.raises(InputError, match=r"already has 4 special characters, its limit \(2 × Magnitude 2\)"):
        rally("Foot", RallyKind.ORGANIZATION, bard, magnitude=2, drill=1, relays=2, special_characters=4,
              endurance=3, starting_endurance=3, formation=Formation.RELAXED, roller=NO_DICE)


def test_x26_rally_for_numbers_needs_a_lost_dot_and_may_unorder() -> None:
    kw: dict[str, Any] = {"magnitude": 2, "drill": 1, "relays": 2, "special_characters": 2, "endurance": 3,
          "starting_endurance": 3, "formation": Formation.RELAXED, "roller": NO_DICE}
    with pytest.raises(InputError, match="no lost dot is left to rally for Numbers"):
        rally("Foot", RallyKind.NUMBERS, CMDR, pool_left=0, **kw)
    with pytest.raises(InputError, match="vetoed"):
        rally("Foot", RallyKind.NUMBERS, CMDR, pool_left=1, vetoed=True, **kw)
    ev = rally("Foot", RallyKind.NUMBERS, CMDR, pool_left=rally_pool_for(1, 0), typed="7 2 2 2 2 2",
               **kw)
    # Magnitude 2 -> 3 at the row's minimum, 76; 2 relays < 3: Unordered; the pool is spent
    assert (ev.magnitude, ev.headcount, ev.formation, ev.rally_pool) == (3, 76, Formation.UNORDERED, 0)
    free = rally("Foot", RallyKind.NUMBERS, CMDR, pool_left=0, typed="7 2 2 2 2 2",
                 rules=HouseRules(rally_pool=False), **kw)
    assert free.magnitude == 3


def test_x26_second_wind_by_rally_is_capped_at_magnitude() -> None:
    # the worked example: Drill 0, Endurance 2, Magnitude 2: stays 2
    ev = rally("Foot", RallyKind.SECOND_WIND, CMDR, magnitude=2, drill=0, relays=0, special_characters=0,
               endurance=2, starting_endurance=4, formation=Formation.RELAXED, roller=NO_DICE, typed="7 2 2 2 2 2")
    assert ev.roll.difficulty.value == 2 and ev.endurance == 2
    low = rally("Foot", RallyKind.SECOND_WIND, CMDR, magnitude=3, drill=0, relays=0, special_characters=0,
                endurance=0, starting_endurance=4, formation=Formation.RELAXED, roller=NO_DICE, typed="7 7 7 2")
    assert low.roll.roll.dice == 4 and low.endurance == 1  # X4: 6 - 2 dice at Endurance 0; + max(1, 0)
