"""E1 ``extras_double_tens``: with the key off, a 10 on an extra's pool counts once, in every
roll an extra makes (attacks, Join War, command rolls) and in the odds before the roll; a
character who is not an extra keeps 10s at two successes, and damage counts a 10 once anyway.

Every expected number is worked out by hand (the comments show the sums)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
import yaml

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.rules import (
    Character,
    HouseRules,
    UnitSpec,
    attack_odds,
    plan_attack,
    resolve_attack,
)
from sheetsync.systems.exalted.rules.actions import (
    command_difficulty,
    command_pool,
    command_roll,
    turn,
)
from sheetsync.systems.exalted.rules.attack import AttackKind
from sheetsync.systems.exalted.rules.battle import resolve
from sheetsync.systems.exalted.system import SYSTEM

OFF = HouseRules(extras_double_tens=False)

# Solo attacker: Dex 1 + Melee 1 + Unarmed 0 = 2 dice (X28 solo); no unit bonus; Magnitudes 0 - 0.
# Solo defender: Dex 1, Essence 1: Parry (1 + 0 + 0)/2 = 0, Dodge (1 + 0 + 1)/2 = 1: DV 1.
# A hit needs 1 + 1 = 2 successes.  Raw damage = Strength 2 + Unarmed 0 + threshold; soak =
# Stamina 2 (bashing); minimum = Essence 1: damage dice = max(threshold, 1) = threshold.
BRAWLER = {"name": "Brawler", "dexterity": 1, "abilities": {"Melee": 1}}
TARGET = UnitSpec(name="Target", solo=True, commander=Character(name="Target", dexterity=1))


def _attacker(extra: bool) -> UnitSpec:
    return UnitSpec(name="Brawler", solo=True, commander=Character(**BRAWLER, extra=extra))


def test_e1_extras_double_tens_off_counts_an_extras_ten_once_golden_odds() -> None:
    # Once: a die is a success 4/10; 2 successes on 2 dice = 0.4^2 = 4/25 (threshold 1, 1
    # damage die: 2/5 level): expected 4/25 * 2/5 = 8/125.
    odds = attack_odds(plan_attack(_attacker(True), TARGET, AttackKind.CLOSE, rules=OFF))
    assert (odds.dice, odds.needed) == (2, 2)
    assert odds.p_hit == Fraction(4, 25)
    assert odds.expected_levels == Fraction(8, 125)
    # Twice (the default, or a non-extra with the key off): 1 - 0.6^2 - 2*0.6*0.3 = 7/25;
    # P(2) = 2*0.6*0.1 + 0.3^2 = 21/100 (1 die), P(3) = 2*0.3*0.1 = 6/100 (2 dice),
    # P(4) = 1/100 (3 dice): expected 2/5 * (21 + 12 + 3)/100 = 18/125.
    for unit, rules in ((_attacker(True), HouseRules()), (_attacker(False), OFF)):
        odds = attack_odds(plan_attack(unit, TARGET, AttackKind.CLOSE, rules=rules))
        assert odds.p_hit == Fraction(7, 25)
        assert odds.expected_levels == Fraction(18, 125)


def test_e1_extras_double_tens_off_counts_an_extras_ten_once_typed_faces() -> None:
    # "10 3": once = 1 success, short of 2: a miss; twice = 2: a hit, threshold 1, 1 damage die.
    off = resolve_attack(plan_attack(_attacker(True), TARGET, AttackKind.CLOSE, rules=OFF), ScriptedRoller([]),
                         attack_dice="10 3", damage_dice_typed="10,")
    assert (off.successes, off.hit, off.levels) == (1, False, 0)
    on = resolve_attack(plan_attack(_attacker(True), TARGET, AttackKind.CLOSE), ScriptedRoller([]),
                        attack_dice="10 3", damage_dice_typed="10,")
    assert (on.successes, on.hit, on.damage_dice, on.levels) == (2, True, 1, 1)  # damage: a 10 is one


def test_e1_extras_double_tens_off_typed_successes_at_most_one_per_die() -> None:
    plan = plan_attack(_attacker(True), TARGET, AttackKind.CLOSE, rules=OFF)
    with pytest.raises(InputError) as err:
        resolve_attack(plan, ScriptedRoller([]), attack_dice="3s", attack_where="Orders!L7")
    assert err.value.problems[0].where == "Orders!L7"
    assert "0 to 2" in err.value.problems[0].message
    assert resolve_attack(plan, ScriptedRoller([]), attack_dice="2s", damage_dice_typed=0).hit


def test_e1_extras_double_tens_off_command_rolls_follow_who_rolls() -> None:
    extra = Character(name="Sergeant", charisma=1, extra=True, abilities={"War": 1})
    hero = Character(name="Hero", charisma=2, abilities={"War": 2})
    diff = command_difficulty(2, 0)  # max(1, 2 - 0) = 2
    # The extra alone rolls Charisma 1 + War 1 = 2 dice "10 2": 1 success < 2: failure.
    roll = command_roll(command_pool(extra), diff, ScriptedRoller([]), typed="10 2", double_tens=False)
    assert (roll.roll.successes, roll.success) == (1, False)
    # X22 Turn: the extra commander's relay Hero (2 + 2 = 4 > 2) rolls: "10 2 2 2" = 2: success.
    assert turn(extra, [hero], magnitude=2, drill=0, roller=ScriptedRoller([]), typed="10 2 2 2",
                rules=OFF).success
    assert not turn(extra, magnitude=2, drill=0, roller=ScriptedRoller([]), typed="10 2", rules=OFF).success
    assert turn(extra, magnitude=2, drill=0, roller=ScriptedRoller([]), typed="10 2").success


def _battle(extra: bool, rule: bool, join_war: Any) -> Any:
    data = yaml.safe_load(SYSTEM.example_data())
    for c in data["characters"]:
        if c["name"] == "Red Harrow":
            c["extra"] = extra
    data["units"][1]["join_war"] = join_war
    data["house_rules"] = {**data.get("house_rules", {}), "extras_double_tens": rule}
    data["orders"] = []
    return load_battle(data)


def test_e1_extras_double_tens_off_join_war_of_an_extra_commander() -> None:
    # The Talon rolls "9 7 10 2 4" = 4 (its commander is no extra); the mob's 1 die "10,":
    # once = 1 success, tick min(6, 4 - 1) = 3; twice = 2, tick 2 (E4).
    def mob_tick(extra: bool, rule: bool) -> int:
        ev = resolve(_battle(extra, rule, "10,")).events[0]
        assert ev["kind"] == "Join War"
        return {r["unit"]: r["tick"] for r in ev["rolls"]}["Bandit Mob"]

    assert mob_tick(True, False) == 3
    assert mob_tick(True, True) == 2
    assert mob_tick(False, False) == 2
    with pytest.raises(InputError) as err:
        resolve(_battle(True, False, 2))
    assert err.value.problems[0].where == "units[1].join_war"
