"""E4-E6, E11: Join War, the Speed and DV penalty of each action, who acts on which long
tick, and orders on the same tick."""

from __future__ import annotations

import pytest

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules import (
    Action,
    Character,
    HouseRules,
    UnitSpec,
    act,
    acting_on,
    defence_penalty,
    join_war,
    join_war_pool,
    same_tick_batches,
    start_timeline,
    suffer_attack,
    timing,
)
from sheetsync.systems.exalted.rules.timeline import Clock, Timeline

GENERAL = Character(name="General", wits=3, abilities={"War": 4, "Awareness": 1})
SCOUT = Character(name="Scout", wits=3, abilities={"War": 1, "Awareness": 2})
TALON = UnitSpec.model_validate({"name": "Talon", "commander": GENERAL, "members": [{"count": 80}], "drill": 3,
                                 "relays": 3})  # 81: Magnitude 3
MOB = UnitSpec.model_validate({"name": "Mob", "commander": GENERAL, "members": [{"count": 20}]})  # 21: Magnitude 2
LONE = UnitSpec(name="Lone", commander=SCOUT, solo=True)


@pytest.mark.parametrize(("action", "speed", "dv"), [
    (Action.MOVE, 0, 0), (Action.DASH, 3, 2), (Action.GUARD, 3, 0), (Action.AIM, 3, 1),
    (Action.MISCELLANEOUS, 5, 1), (Action.CHANGE_FORMATION, 5, 1), (Action.DISENGAGE, 0, 0),
    (Action.TURN, 3, 1), (Action.SPLIT, 3, 1), (Action.EXPEL, 0, 0), (Action.MERGE, 3, 1),
    (Action.SIGNAL, 3, 0), (Action.RALLY, 4, 1), (Action.CAST, 5, 2)])
def test_e11_x17_x27_each_actions_speed_and_dv_penalty(action: Action, speed: int, dv: int) -> None:
    t = timing(action)
    assert (t.speed, t.dv_penalty, t.fixed_dv) == (speed, dv, None)
    assert t.reflexive == (speed == 0)


def test_e11_an_attack_takes_its_weapons_speed_and_inactive_sets_dv_0() -> None:
    assert (timing(Action.ATTACK, weapon_speed=4).speed, timing(Action.ATTACK).dv_penalty) == (4, 1)
    assert timing(Action.ATTACK).speed == 5
    assert timing(Action.DUEL, weapon_speed=6).speed == 6  # X27: a duel counts as an attack
    inactive = timing(Action.INACTIVE)
    assert (inactive.speed, inactive.fixed_dv) == (5, 0)
    assert timing(Action.INACTIVE, rules=HouseRules(inactive_dv=1)).fixed_dv == 1


def test_e11_speed_and_dv_house_rules_override_by_label() -> None:
    rules = HouseRules(speed={"Attack": 4, "Rally": 3}, dv={"Guard": 1})
    assert timing(Action.ATTACK, weapon_speed=6, rules=rules).speed == 4
    assert timing(Action.RALLY, rules=rules).speed == 3
    assert timing(Action.GUARD, rules=rules).dv_penalty == 1


def test_e4_join_war_pool_is_wits_plus_war_less_magnitude_solo_wits_plus_awareness() -> None:
    assert join_war_pool(TALON, 3).value == 4  # 3 + 4 - 3
    assert [e.amount for e in join_war_pool(TALON, 3).breakdown] == [3, 4, -3]
    assert join_war_pool(LONE, 0).value == 5  # 3 + 2


def test_e4_most_successes_acts_on_tick_0_the_rest_best_less_own_capped_at_6() -> None:
    # Talon "10 9 8 2" = 4; Mob (pool 3 + 4 - 2 = 5) "7 1 2 3 4" = 1; Lone typed 0 successes
    joined = join_war([(TALON, 3), (MOB, 2), (LONE, 0)], ScriptedRoller([]),
                      ["10 9 8 2", "7 1 2 3 4", 0])
    assert [(r.unit, r.roll.successes, r.tick) for r in joined.rolls] == [("Talon", 4, 0), ("Mob", 1, 3),
                                                                            ("Lone", 0, 4)]
    # best 8 (typed), other 0: min(6, 8) = 6
    far = join_war([(TALON, 3), (LONE, 0)], ScriptedRoller([]), ["8s", 0])
    assert [r.tick for r in far.rolls] == [0, 6]


def test_e4_bad_join_war_dice_are_all_named_at_once() -> None:
    with pytest.raises(InputError) as err:
        join_war([(TALON, 3), (LONE, 0)], ScriptedRoller([]), ["11 2 3 4", "99s"], where=["Units!M2", "Units!M3"])
    text = str(err.value)
    assert "Units!M2: die 1: 11 is not a d10 face" in text and "Units!M3: 99 successes is more than" in text


def test_e5_a_unit_acts_only_on_its_tick_and_next_on_tick_plus_speed() -> None:
    tl = start_timeline(join_war([(TALON, 3), (MOB, 2)], ScriptedRoller([]), ["10 9 8 2", "7 1 2 3 4"]))
    assert acting_on(tl, 0) == ("Talon",) and acting_on(tl, 3) == ("Mob",)
    with pytest.raises(InputError, match=r"Orders!C4: Mob acts on long tick 3, not 0: a unit acts only on its tick"):
        act(tl, "Mob", 0, Action.GUARD, where="Orders!C4")
    tl, ev = act(tl, "Talon", 0, Action.ATTACK, weapon_speed=5)
    assert ev.next_tick == 5 and tl.clock("Talon").next_tick == 5
    assert tl.advance().tick == 3


def test_e5_reflexive_actions_leave_the_timeline_and_move_is_once_a_tick() -> None:
    tl = Timeline(2, (Clock("Talon", 4),))
    tl, ev = act(tl, "Talon", 2, Action.DISENGAGE)
    assert ev.next_tick == 4 and tl.clock("Talon").next_tick == 4
    tl, _ = act(tl, "Talon", 2, Action.MOVE)
    with pytest.raises(InputError, match="already moved on long tick 2.*X17"):
        act(tl, "Talon", 2, Action.MOVE)
    act(tl, "Talon", 3, Action.MOVE)  # a new long tick: allowed
    with pytest.raises(InputError, match="the battle is at long tick 2"):
        act(tl, "Talon", 1, Action.MOVE)


def test_e5_dv_penalty_lasts_until_the_next_action_with_onslaught() -> None:
    tl = Timeline(0, (Clock("Talon", 0),))
    tl, _ = act(tl, "Talon", 0, Action.DASH)
    tl = suffer_attack(suffer_attack(tl, "Talon"), "Talon")
    assert defence_penalty(tl, "Talon").value == 4  # Dash 2 + 2 attacks
    assert defence_penalty(tl, "Talon", HouseRules(onslaught=False)).value == 2
    tl, _ = act(tl, "Talon", 3, Action.GUARD)
    assert defence_penalty(tl, "Talon").value == 0  # Guard -0, the count starts again
    tl, _ = act(tl, "Talon", 6, Action.INACTIVE)
    fixed = defence_penalty(tl, "Talon")
    assert fixed.name == "DV fixed" and fixed.value == 0


def test_e6_same_tick_orders_roll_together_or_one_by_one() -> None:
    orders = [(3, "a"), (0, "b"), (3, "c")]
    assert same_tick_batches(orders, lambda o: o[0]) == [[(0, "b")], [(3, "a"), (3, "c")]]
    one_by_one = same_tick_batches(orders, lambda o: o[0], HouseRules(same_tick="sheet_order"))
    assert one_by_one == [[(0, "b")], [(3, "a")], [(3, "c")]]
