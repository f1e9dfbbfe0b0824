"""X35-X37, X39: rout checks on every trigger, hesitation, exhaustion and Mob Rule."""

from __future__ import annotations

from typing import Any

import pytest

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules import (
    Character,
    Formation,
    HouseRules,
    RoutTrigger,
    Weather,
    command_pool,
    engagement_trigger,
    exhaustion_check,
    exhaustion_difficulty,
    leaderless,
    mob_rule_check,
    relays_kept,
    rout_check,
    trigger_modifier,
)

NO_DICE = ScriptedRoller([])


def rout(triggers: list[RoutTrigger], typed: Any = None, **kw: Any) -> Any:
    base: dict[str, Any] = {"morale": 3, "magnitude": 3, "drill": 1, "formation": Formation.RELAXED,
                            "roller": NO_DICE, "typed": typed, "where": "Orders!P7"}
    base.update(kw)
    return rout_check("Foot", triggers, **base)


@pytest.mark.parametrize(("trigger", "modifier"), [
    (RoutTrigger.MAGNITUDE_LOSS, 0), (RoutTrigger.FIRST_RANGED, 0), (RoutTrigger.FLAME_RANGED, 1),
    (RoutTrigger.SPELL, 1), (RoutTrigger.ENGAGED, 0), (RoutTrigger.ENGAGED_SUPERIOR, 1),
    (RoutTrigger.ENGAGED_OVERWHELMING, 2), (RoutTrigger.DISENGAGED, 1), (RoutTrigger.DUEL_MEDDLING, 2),
    (RoutTrigger.KNOCKDOWN, 0), (RoutTrigger.SPREAD_UNDER_FIRE, 0)])
def test_x35_every_trigger_of_the_table_and_its_modifier(trigger: RoutTrigger, modifier: int) -> None:
    assert trigger_modifier(trigger) == modifier
    # Relaxed adds nothing: difficulty 1 + modifier
    assert rout([trigger], "7,").difficulty.value == 1 + modifier


def test_x35_a_spell_is_plus_1_per_circle() -> None:
    assert trigger_modifier(RoutTrigger.SPELL, circle=3) == 3
    assert rout([RoutTrigger.SPELL], "7,", circle=2).difficulty.value == 3


def test_x35_engagement_tier_by_magnitude_and_might_unless_typed() -> None:
    assert engagement_trigger(2, 2, 0) is RoutTrigger.ENGAGED
    assert engagement_trigger(2, 3, 0) is RoutTrigger.ENGAGED_SUPERIOR
    assert engagement_trigger(2, 5, 0) is RoutTrigger.ENGAGED_OVERWHELMING
    assert engagement_trigger(4, 2, 1) is RoutTrigger.ENGAGED_OVERWHELMING
    assert engagement_trigger(2, 5, 0, typed_tier=0) is RoutTrigger.ENGAGED


def test_x35_pool_is_morale_less_magnitude_less_drill_or_plus_with_bonus() -> None:
    assert rout([RoutTrigger.FIRST_RANGED], "7,").pool.value == 1  # 3 - (3 - 1)
    bonus = rout([RoutTrigger.FIRST_RANGED], "7 8 9 1 2", rules=HouseRules(rout_dice="bonus"))
    assert bonus.pool.value == 5  # 3 + (3 - 1)
    assert rout([RoutTrigger.FIRST_RANGED], "7 8 9 2 2", drill=5).pool.value == 5  # Drill above Magnitude adds dice
    assert rout([RoutTrigger.FIRST_RANGED], "7 2 2", endurance=0, morale=5, drill=3).pool.value == 3  # X4: -2


def test_x35_x14_difficulty_adds_the_formation_and_takes_the_highest_trigger() -> None:
    assert rout([RoutTrigger.FLAME_RANGED], "7,", formation=Formation.SKIRMISH).difficulty.value == 4  # 1+1+2
    assert rout([RoutTrigger.ENGAGED], "7,", formation=Formation.UNORDERED).difficulty.value == 3  # 1+0+2
    close = rout([RoutTrigger.ENGAGED], "7,", formation=Formation.CLOSE).difficulty
    assert close.value == 0 and [e.amount for e in close.breakdown] == [1, 0, -2, 1]  # floor 0
    both = rout([RoutTrigger.FIRST_RANGED, RoutTrigger.FLAME_RANGED], "7,").difficulty
    assert both.value == 2 and "Flame" in both.breakdown[1].source


def test_x35_a_pass_changes_nothing() -> None:
    ev = rout([RoutTrigger.FIRST_RANGED], "7,", marked=4, relays=3)
    assert ev.checked and ev.passed and not ev.hesitating
    assert (ev.magnitude, ev.dots_lost, ev.marked, ev.relays) == (3, 0, 4, 3)


def test_x36_failure_hesitates_loses_at_least_one_dot_and_empties_the_track() -> None:
    ev = rout([RoutTrigger.FIRST_RANGED], "3,", marked=4, relays=3)
    assert ev.hesitating and not ev.passed
    assert (ev.magnitude, ev.dots_lost, ev.marked) == (2, 1, 0)  # max(1, 1 - 0) = 1
    # Skirmish + flame = difficulty 4; Morale 5 - (3 - 1) = 3 dice, "7 2 2" = 1: lose 4 - 1 = 3 dots, capped at 3
    worse = rout([RoutTrigger.FLAME_RANGED], "7 2 2", morale=5, formation=Formation.SKIRMISH)
    assert (worse.dots_lost, worse.magnitude) == (3, 0)


def test_x36_x11_excess_relays_fade_but_heroes_and_sorcerers_stay() -> None:
    # Unordered, engaged: difficulty 1 + 0 + 2 = 3; pool 3 - (4 - 3) = 2 dice, "2 3" = 0 successes:
    # lose 3 dots, Magnitude 4 -> 1; the limit is 2 x 1 = 2, less 1 hero: 1 relay of 4 stays
    ev = rout([RoutTrigger.ENGAGED], "2 3", magnitude=4, drill=3, formation=Formation.UNORDERED, relays=4,
              heroes=1)
    assert ev.dots_lost == 3 and ev.magnitude == 1 and ev.relays == 1  # limit 2 x 1 - 1 hero = 1
    assert relays_kept(2, 5, heroes=1, sorcerers=1) == 2
    assert relays_kept(1, 3, heroes=2) == 0


def test_x35_perfect_morale_and_magnitude_0_make_no_check() -> None:
    perfect = rout([RoutTrigger.ENGAGED_OVERWHELMING], None, perfect_morale=True)
    assert not perfect.checked and perfect.passed and perfect.roll is None
    gone = rout([RoutTrigger.MAGNITUDE_LOSS], None, magnitude=0)
    assert not gone.checked and gone.dots_lost == 0


def test_x35_a_typed_rout_die_outside_1_to_10_names_its_cell() -> None:
    with pytest.raises(InputError, match=r"Orders!P7: die 1: 0 is not a d10 face"):
        rout([RoutTrigger.FIRST_RANGED], "0,")


def test_x37_difficulty_table() -> None:
    assert exhaustion_difficulty(2, morale=1).value == 2
    assert exhaustion_difficulty(2, morale=3).value == 1
    assert exhaustion_difficulty(2.9, morale=3, perfect_morale=True).value == 1  # 2 - 2 = 0, minimum 1
    hard = exhaustion_difficulty(2, morale=1, engaged=True, charged_last=True,
                                 weather=[Weather.HOT, Weather.DESERT])
    assert hard.value == 7 and [e.amount for e in hard.breakdown] == [2, 2, 1, 2]
    assert exhaustion_difficulty(0, morale=1, weather=[Weather.EXTREME]).value == 3
    assert exhaustion_difficulty(0, morale=4, weather=[Weather.MILD]).value == 1


def test_x37_a_failed_exhaustion_roll_costs_one_endurance_never_below_0() -> None:
    pool = command_pool(Character(name="C", charisma=3, abilities={"War": 2}))
    diff = exhaustion_difficulty(2, morale=1)
    kept = exhaustion_check("Foot", pool, diff, 3, NO_DICE, typed="7 8 1 1 1")
    assert kept.outcome.success and kept.endurance == 3
    lost = exhaustion_check("Foot", pool, diff, 3, NO_DICE, typed="7 1 1 1 1")
    assert lost.endurance == 2 and lost.endurance_lost == 1
    floor = exhaustion_check("Foot", pool, diff, 0, NO_DICE, typed="1 2 3")  # X4: 5 - 2 = 3 dice
    assert floor.roll.dice == 3 and floor.endurance == 0 and "X4" in floor.rule_ref


def test_x20_x37_the_best_relays_command_pool_stands_in() -> None:
    c = Character(name="C", charisma=2, abilities={"War": 2})
    relay = Character(name="Drummer", charisma=3, abilities={"War": 3})
    pool = command_pool(c, [relay])
    assert pool.value == 6 and "best relay Drummer" in pool.breakdown[0].source
    assert command_pool(c, [Character(name="Weak", charisma=1)]).value == 4


def test_x39_a_leaderless_unit_is_unordered_under_an_average_member() -> None:
    mob = leaderless("Foot")
    assert (mob.disbanded, mob.formation, mob.health_levels, mob.marked, mob.relays, mob.sorcerers,
            mob.called_shots_allowed) == (False, Formation.UNORDERED, 3, 0, 0, 0, False)
    assert leaderless("Foot", member_health_levels=7).health_levels == 7
    assert leaderless("Foot", rules=HouseRules(mob_rule=False)).disbanded


def test_x39_the_leaderless_check_difficulty_counts_earlier_checks_perfect_rolls_5() -> None:
    first = mob_rule_check("Foot", morale=3, magnitude=3, drill=1, earlier_checks=0, roller=NO_DICE, typed="2,")
    assert first.difficulty.value == 0 and first.passed  # difficulty 0: only a botch fails
    third = mob_rule_check("Foot", morale=3, magnitude=3, drill=1, earlier_checks=2, roller=NO_DICE, typed="7,")
    assert third.hesitating and third.dots_lost == 1 and third.magnitude == 2  # max(1, 2 - 1)
    perfect = mob_rule_check("Foot", morale=9, magnitude=3, drill=1, earlier_checks=1, roller=NO_DICE,
                             perfect_morale=True, typed="1 2 3 4 5")
    assert perfect.pool.value == 5 and perfect.checked and perfect.hesitating
