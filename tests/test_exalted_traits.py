"""X1-X11: derived unit traits and their breakdowns, with the rulings' worked examples."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from sheetsync.systems.exalted.rules import (
    Character,
    HouseRules,
    Mount,
    RangedKind,
    UnitSpec,
    derive_traits,
    magnitude_for_headcount,
    row_minimum,
)
from sheetsync.systems.exalted.rules.traits import communication_failure

CAPTAIN = Character(name="Captain", valor=3, stamina=3, shield_dv=1, abilities={"War": 4})


def unit(**kw: Any) -> UnitSpec:
    base: dict[str, Any] = {"name": "Talon", "commander": CAPTAIN, "members": [{"count": 80}]}
    base.update(kw)
    return TypeAdapter(UnitSpec).validate_python(base)  # pydantic, as the battle-file edge validates


@pytest.mark.parametrize(("count", "mag"), [(1, 0), (10, 1), (11, 2), (75, 2), (76, 3), (5000, 8),
                                            (10001, 10), (20001, 11)])
def test_x2_magnitude_rows_worked_example(count: int, mag: int) -> None:
    assert magnitude_for_headcount(count) == mag


def test_x2_row_edges_and_minimums() -> None:
    # 10,000 is row 9; row 10 ends at 20,000, row 11 at 40,000
    assert [magnitude_for_headcount(n) for n in (2, 150, 151, 10000, 20000, 40000, 40001)] == [1, 3, 4, 9, 10, 11, 12]
    assert [row_minimum(m) for m in (0, 1, 2, 3, 9, 10, 11)] == [1, 2, 11, 76, 5001, 10001, 20001]
    for m in range(0, 14):
        assert magnitude_for_headcount(row_minimum(m)) == m


def test_x2_heroic_members_weighted_worked_example() -> None:
    # commander 1 + 25 heroic mortals x ceil(7/3) = 3 -> 76: Magnitude 3
    heroes = unit(members=[{"kind": "Heroic Mortal", "count": 25, "health_levels": 7}])
    t = derive_traits(heroes)
    assert (t.headcount.value, t.magnitude.value) == (76, 3)
    assert [e.amount for e in t.headcount.breakdown] == [1, 75]
    assert "25 × Heroic Mortal (7 health levels → 3)" in t.headcount.breakdown[1].source
    # exact: 1 + 25 x 7/3 = 59.33, rounded up 60: Magnitude 2
    exact = derive_traits(heroes, HouseRules(heroic_weight="exact"))
    assert (exact.headcount.value, exact.magnitude.value) == (60, 2)


def test_x2_typed_weight_counts_as_given() -> None:
    # commander 1 + 9 extras + 2 x weight 5 = 20: Magnitude 2
    t = derive_traits(unit(members=[{"count": 9}, {"kind": "God-Blood", "count": 2, "weight": 5}]))
    assert (t.headcount.value, t.magnitude.value) == (20, 2)


def test_x1_solo_unit_is_magnitude_0_drill_0_no_unit_bonus() -> None:
    solo = unit(solo=True, drill=3, might=2, close_ability=5, avg_lethal_soak=9,
                commander=CAPTAIN.model_copy(update={"abilities": {"Resistance": 2}}))
    t = derive_traits(solo)
    assert (t.magnitude.value, t.drill.value, t.might.value, t.close_rating.value, t.armor.value) == (0, 0, 0, 0, 0)
    # X4 solo: Stamina 3 + Resistance 2
    assert t.endurance.value == 5


def test_x3_x11_communication_failure_costs_2_drill_floor_0() -> None:
    # 80 extras + commander = 81: Magnitude 3, 2 relays < 3
    t = derive_traits(unit(drill=3, relays=2))
    assert t.communication_failure and t.drill.value == 1
    assert derive_traits(unit(drill=1, relays=0)).drill.value == 0
    assert derive_traits(unit(drill=3, relays=3)).drill.value == 3
    assert not communication_failure(unit(members=[{"count": 20}]), 2)


def test_x4_endurance_worked_example() -> None:
    # Drill 3 + Stamina 2 - fatigue 1 (unrested) = 4
    t = derive_traits(unit(drill=3, relays=3, avg_stamina=2, avg_fatigue=1, rested=False))
    assert t.endurance.value == 4
    assert [e.amount for e in t.endurance.breakdown] == [3, 2, -1]
    assert derive_traits(unit(drill=3, relays=3, avg_stamina=2, avg_fatigue=1)).endurance.value == 5


def test_x4_endurance_averages_round_down_and_floor_0() -> None:
    # Drill 0 + floor(1.9) 1 - floor(2.5) 2 = -1 -> 0
    t = derive_traits(unit(avg_stamina=1.9, avg_fatigue=2.5, rested=False))
    assert t.endurance.value == 0
    assert derive_traits(unit(drill=2, relays=3), HouseRules(endurance_stamina="commander")).endurance.value == 5


def test_x5_might_adds_the_best_equipment_bonus() -> None:
    assert derive_traits(unit(might=2, might_bonus=1)).might.value == 3


def test_x6_close_rating_worked_example() -> None:
    # floor((Dex 3 + Melee 4 + Accuracy 1) / 2) = 4
    t = derive_traits(unit(avg_dexterity=3, close_ability=4, close_accuracy=1))
    assert t.close_rating.value == 4


def test_x6_ratings_keep_averages_exact_until_the_halving() -> None:
    # exact: (2.5 + 3.5 + 0) / 2 = 3; rounding each average first would give (2 + 3) / 2 -> 2
    assert derive_traits(unit(avg_dexterity=2.5, close_ability=3.5)).close_rating.value == 3


def test_x6_no_close_weapons_no_close_rating_and_mixed_accuracy() -> None:
    assert derive_traits(unit(close_weapons=False, close_ability=5)).close_rating.value == 0
    mixed = unit(avg_dexterity=3, close_ability=4, close_accuracy=1, mixed_weapons=True)
    assert derive_traits(mixed).close_rating.value == 4
    assert derive_traits(mixed, HouseRules(mixed_accuracy="none")).close_rating.value == 3


def test_x7_damage_rating_worked_example() -> None:
    # ceil((Strength 3 + 5) / 3) = ceil(8/3) = 3
    assert derive_traits(unit(avg_strength=3, close_damage=5)).close_damage.value == 3


def test_x7_archery_adds_no_strength_thrown_does() -> None:
    # Archery: ceil(3/3) = 1; Thrown: ceil((3 + 3)/3) = 2
    bows = unit(avg_strength=3, ranged_weapons=True, ranged_damage=3)
    assert derive_traits(bows).ranged_damage.value == 1
    javelins = bows.model_copy(update={"ranged_kind": RangedKind.THROWN})
    assert derive_traits(javelins).ranged_damage.value == 2


def test_x8_armor_mobility_and_hardness() -> None:
    # ceil(7/3) = 3; mobility floor(1.5) = 1
    t = derive_traits(unit(avg_lethal_soak=7, avg_mobility=1.5, hardness_avg=2.6, hardness_min=2))
    assert (t.armor.value, t.mobility.value, t.hardness.value) == (3, 1, 2)
    patchy = unit(hardness_avg=3, hardness_min=1)
    assert derive_traits(patchy).hardness.value == 0
    assert derive_traits(patchy, HouseRules(hardness_fallback="minimum")).hardness.value == 1


def test_x9_shield_counts_only_if_most_members_carry_one() -> None:
    assert derive_traits(unit(shields=True)).shield.value == 1
    assert derive_traits(unit(shields=False)).shield.value == 0


def test_x10_morale_is_the_lowest_valor_and_the_steeds() -> None:
    # members 2.8 -> 2, commander 3: 2
    assert derive_traits(unit(avg_valor=2.8)).morale.value == 2
    # members 4, commander 3, simhata 4: 3; horse 2: 2
    assert derive_traits(unit(avg_valor=4, mount=Mount.SIMHATA)).morale.value == 3
    assert derive_traits(unit(avg_valor=4, mount=Mount.HORSE)).morale.value == 2
    assert derive_traits(unit(avg_valor=4, mount=Mount.HORSE, steed_valor=5)).morale.value == 3


def test_x3_drill_above_5_is_refused() -> None:
    with pytest.raises(ValidationError):
        unit(drill=6)
