"""X28-X34: the attack, its odds before rolling, and the track cycling into Magnitude loss."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules import (
    AttackKind,
    Character,
    DamageType,
    Formation,
    UnitSpec,
    Weapon,
    apply_levels,
    attack_odds,
    attack_pool,
    bonus_successes,
    called_shot_penalty,
    cover_dv,
    damage_dice,
    magnitude_difference,
    plan_attack,
    resolve_attack,
)
from sheetsync.systems.exalted.rules.dice import count_successes

SWORD = Weapon(name="Sword", damage=5, damage_type=DamageType.LETHAL)
GENERAL = Character(name="General", dexterity=3, strength=3, essence=2, abilities={"Melee": 5, "War": 4},
                    close_weapon=SWORD)
SERGEANT = Character(name="Sergeant", dexterity=2, stamina=2, abilities={"Melee": 2, "Dodge": 1, "War": 2})


def talon(**kw: Any) -> UnitSpec:
    # 1 + 80 extras = 81: Magnitude 3; Close Rating floor((3 + 4 + 1)/2) = 4; Damage ceil((3 + 5)/3) = 3
    base: dict[str, Any] = {"name": "Talon", "commander": GENERAL, "members": [{"count": 80}], "drill": 3,
                            "relays": 3, "avg_dexterity": 3, "close_ability": 4, "close_accuracy": 1,
                            "avg_strength": 3, "close_damage": 5}
    base.update(kw)
    return UnitSpec.model_validate(base)


def scale(**kw: Any) -> UnitSpec:
    # 1 + 20 extras = 21: Magnitude 2; Close Rating floor((2 + 2)/2) = 2; Armor ceil(3/3) = 1
    base: dict[str, Any] = {"name": "Scale", "commander": SERGEANT, "members": [{"count": 20}], "drill": 1,
                            "avg_dexterity": 2, "close_ability": 2, "avg_lethal_soak": 3}
    base.update(kw)
    return UnitSpec.model_validate(base)


def test_x28_war_caps_the_pool_worked_example() -> None:
    # Dex 3 + min(Melee 5, War 4) + Accuracy 0 = 7
    pool = attack_pool(GENERAL, SWORD)
    assert pool.value == 7
    assert pool.breakdown[1].amount == 4 and "capped by War 4" in pool.breakdown[1].source
    # a solo unit has no War cap: 3 + 5 = 8
    assert attack_pool(GENERAL, SWORD, solo=True).value == 8


def test_x28_rating_capped_by_war_doubled_in_close_worked_example() -> None:
    # War 3, Close Rating 4: min(4, 3) = 3; Close formation: min(8, 6) = 6
    assert bonus_successes(4, 3, 0).value == 3
    assert bonus_successes(4, 3, 0, doubled=True).value == 6


def test_x28_dragon_blooded_archers_worked_example() -> None:
    # Ranged Rating 5, War 4: 4, + Might 2 = 6
    assert bonus_successes(5, 4, 2).value == 6


def test_x30_magnitude_difference_capped_at_3_with_formation_multipliers() -> None:
    relaxed = Formation.RELAXED
    assert magnitude_difference(5, 1, AttackKind.CLOSE, relaxed, relaxed).value == 3
    assert magnitude_difference(1, 5, AttackKind.CLOSE, relaxed, relaxed).value == -3
    assert magnitude_difference(3, 2, AttackKind.CLOSE, relaxed, relaxed).value == 1
    # ranged on a Close unit: 2 x 2 - 2 = 2; close on it: 0
    assert magnitude_difference(2, 2, AttackKind.RANGED, relaxed, Formation.CLOSE).value == 2
    assert magnitude_difference(2, 2, AttackKind.CLOSE, relaxed, Formation.CLOSE).value == 0
    # close on Skirmish: 2 x 2 - 3 = 1; from Close formation 2 x 3 - 3 = 3
    assert magnitude_difference(2, 3, AttackKind.CLOSE, relaxed, Formation.SKIRMISH).value == 1
    assert magnitude_difference(2, 3, AttackKind.CLOSE, Formation.CLOSE, Formation.SKIRMISH).value == 3


def test_x32_called_shot_penalty_worked_example() -> None:
    # Drill 4, Magnitude 2: Relaxed takes the higher 4 -> 2; Unordered the lower 2 -> 1
    assert called_shot_penalty(4, 2, unordered=False).value == 2
    assert called_shot_penalty(4, 2, unordered=True).value == 1
    # a sorcerer doubles the Magnitude first: max(1, 6) = 6 -> 3
    assert called_shot_penalty(1, 3, unordered=False, sorcerer=True).value == 3


def test_x16_cover_takes_the_largest_entry_not_above() -> None:
    assert [cover_dv(p) for p in (0, 24, 25, 60, 89, 90, 100)] == [0, 0, 1, 2, 3, 4, 4]


def test_x33_e9_damage_dice_minimum_and_hardness() -> None:
    assert damage_dice(10, 4, 3, 0) == 6
    assert damage_dice(5, 4, 3, 0) == 3  # minimum (Magnitude 3)
    assert damage_dice(5, 4, 1, 5) == 0  # Hardness 5 >= raw 5: no effect


def test_x34_multi_dot_loss_worked_example() -> None:
    # H 7, 5 marked, 12 levels: 17 // 7 = 2 dots, 17 mod 7 = 3 marked
    loss = apply_levels(5, 12, 7, 4)
    assert (loss.dots_lost, loss.marked, loss.magnitude, loss.rout_check) == (2, 3, 2, True)


def test_x34_magnitude_0_discards_the_rest_and_checks_no_rout() -> None:
    # Magnitude 1, 6 marked, 10 levels: 16 // 7 = 2 >= 1: Magnitude 0, nothing marked
    loss = apply_levels(6, 10, 7, 1)
    assert (loss.dots_lost, loss.marked, loss.magnitude, loss.rout_check) == (1, 0, 0, False)


def test_x34_no_dot_lost_no_rout_check() -> None:
    loss = apply_levels(2, 4, 7, 3)
    assert (loss.dots_lost, loss.marked, loss.rout_check) == (0, 6, False)


def test_x28_x34_full_close_attack_by_hand() -> None:
    # pool 3 + min(5, 4) + 0 = 7; bonus min(CR floor((3+4+1)/2) = 4, War 4) = 4 + Might 0;
    # X30: 3 - 2 = +1 -> automatic 5.  DV: Parry floor((2 + 2 + 0)/2) = 2 + floor(CR 2 / 2) = 3
    # vs Dodge floor((2+1+1)/2) = 2 -> 3.  Dice 7 3 10 2 1 8 4 -> 4; net 9; threshold 6.
    # Raw 3 + 5 + Damage Rating ceil(8/3) = 3 + 6 = 17; soak floor(2/2) 1 + Armor 1 = 2: 15 dice.
    # Typed 5 damage successes; 5 marked + 5 = 10: 1 dot, 3 marked, Magnitude 2 -> 1.
    plan = plan_attack(talon(), scale(), AttackKind.CLOSE)
    assert (plan.dice, plan.automatic, plan.external.value, plan.dv.value) == (7, 5, 0, 3)
    ev = resolve_attack(plan, ScriptedRoller([]), marked=5, attack_dice="7 3 10 2 1 8 4", damage_dice_typed="5s")
    assert (ev.successes, ev.threshold, ev.raw_damage, ev.soak, ev.damage_dice, ev.levels) == (4, 6, 17, 2, 15, 5)
    assert (ev.magnitude_lost, ev.loss.marked, ev.loss.magnitude, ev.loss.rout_check) == (1, 3, 1, True)
    # odds: need 3 + 1 - 5 < 1: a sure hit; levels 0.4 x (11 + S), E[S] = 3.5: 5.8
    odds = attack_odds(plan)
    assert (odds.p_hit, odds.expected_levels) == (Fraction(1), Fraction(29, 5))


def test_e7_successes_equal_to_the_dv_miss() -> None:
    # automatic 5 + 0 dice successes = 5 against DV 5 (cover 90% = 4, x1; Parry 3 - 2 action DV): miss
    plan = plan_attack(talon(), scale(), AttackKind.CLOSE, cover=90, defender_action_dv=2)
    assert plan.dv.value == 5
    ev = resolve_attack(plan, ScriptedRoller([]), attack_dice="1 2 3 4 5 6 6")
    assert not ev.hit and ev.damage_dice == 0 and ev.damage_roll is None and ev.levels == 0


def test_x4_endurance_0_is_2_internal_on_the_attack() -> None:
    assert plan_attack(talon(), scale(), AttackKind.CLOSE, attacker_endurance=0).dice == 5


def test_x31_ranged_attack_without_a_ranged_weapon_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no ranged weapon"):
        plan_attack(talon(), scale(), AttackKind.RANGED)


def test_x29_x14_skirmish_plus_3_and_doubled_shield_against_ranged() -> None:
    bow = Weapon(name="Bow", ability="Archery", accuracy=1, damage=3, ranged=True)
    archers = talon(commander=GENERAL.model_copy(update={"ranged_weapon": bow}), ranged_weapons=True,
                    ranged_ability=3)
    shielded = scale(commander=SERGEANT.model_copy(update={"shield_dv": 1}), shields=True,
                     formation=Formation.SKIRMISH)
    # Parry 2 + 1 + shield 1 x 2 = 5 vs Dodge 2; + Skirmish 3 = 8
    assert plan_attack(archers, shielded, AttackKind.RANGED).dv.value == 8


def _brute(plan: Any) -> tuple[Fraction, Fraction]:
    hits, levels, n = 0, Fraction(0), 0
    for faces in itertools.product(range(1, 11), repeat=plan.dice):
        n += 1
        net = max(0, count_successes(faces) + plan.automatic - plan.external.value)
        t = net - plan.dv.value
        if t >= 1:
            hits += 1
            levels += Fraction(2, 5) * plan.dice_for(t)
    return Fraction(hits, n), levels / n


def test_e1_e7_odds_exact_hit_chance_and_expected_levels_match_enumeration() -> None:
    # solo: Dex 2 + Melee 1 = 3 dice, no bonus; X30 0 - 2 = -2 external; DV 3: needs 6 = three 10s
    solo = UnitSpec(name="Lone", commander=Character(name="Lone", abilities={"Melee": 1}), solo=True)
    plan = plan_attack(solo, scale(), AttackKind.CLOSE)
    assert (plan.dice, plan.automatic, plan.external.value, plan.dv.value) == (3, 0, 2, 3)
    odds = attack_odds(plan)
    assert odds.p_hit == Fraction(1, 1000)
    assert (odds.p_hit, odds.expected_levels) == _brute(plan)
    # the talon at Endurance 0 (7 - 2 = 5 dice, 100,000 faces), automatic 5, external 4, DV 3 + cover 4 = 7
    plan2 = plan_attack(talon(), scale(), AttackKind.CLOSE, cover=90, extra_external=4, attacker_endurance=0)
    assert (plan2.dice, plan2.automatic, plan2.external.value, plan2.dv.value) == (5, 5, 4, 7)
    assert 0 < attack_odds(plan2).p_hit < 1
    assert (attack_odds(plan2).p_hit, attack_odds(plan2).expected_levels) == _brute(plan2)


def test_e1_bad_typed_attack_and_damage_dice_name_their_cells() -> None:
    plan = plan_attack(talon(), scale(), AttackKind.CLOSE)
    with pytest.raises(InputError, match=r"Orders!L7: die 2: 11 is not a d10 face"):
        resolve_attack(plan, ScriptedRoller([]), attack_dice="7 11 10 2 1 8 4", attack_where="Orders!L7")
    # the hit above gives 15 damage dice (at most 15 successes on damage): 16 is refused
    with pytest.raises(InputError, match=r"Orders!M7: 16 successes is more than a 15-die pool"):
        resolve_attack(plan, ScriptedRoller([]), attack_dice="7 3 10 2 1 8 4", damage_dice_typed="16s",
                       damage_where="Orders!M7")


def test_x33_solo_attacker_minimum_is_essence_and_hardness_makes_it_1() -> None:
    solo = UnitSpec(name="Lone", commander=GENERAL, solo=True)
    assert plan_attack(solo, scale(), AttackKind.CLOSE).minimum == 2  # Essence 2
    assert plan_attack(talon(), scale(), AttackKind.CLOSE).minimum == 3  # Magnitude 3
    hard = scale(hardness_avg=2, hardness_min=2)
    assert plan_attack(talon(), hard, AttackKind.CLOSE).minimum == 1


def test_x29_e9_soak_by_damage_type() -> None:
    # Sergeant Stamina 2: bashing 2, lethal 1, aggravated 0; + Armor 1 each
    for dtype, soak in (("Bashing", 3), ("Lethal", 2), ("Aggravated", 1)):
        attacker = talon(close_damage_type=dtype)
        assert plan_attack(attacker, scale(), AttackKind.CLOSE).soak.value == soak, dtype
