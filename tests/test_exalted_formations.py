"""X12-X16: formations and the Drill they need, X14's modifiers, movement by formation and by
mount, and terrain."""

from __future__ import annotations

from typing import Any

import pytest

from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules import (
    AttackKind,
    Character,
    Formation,
    HouseRules,
    Mount,
    Terrain,
    UnitSpec,
    best_cover,
    check_formation,
    cover_dv,
    dash_yards,
    derive_traits,
    drawn_yards,
    effects,
    formation_after_drill_change,
    formation_refusal,
    magnitude_difference,
    move_yards,
)
from sheetsync.systems.exalted.rules.formations import magnitude_multiplier, shield_cover_factor


def foot(**kw: Any) -> UnitSpec:
    # 1 + 80 extras = 81: Magnitude 3; 3 relays, so no communication failure
    base: dict[str, Any] = {"name": "Foot", "commander": Character(name="Cathak Meru", dexterity=4),
                            "members": [{"count": 80}], "drill": 2, "relays": 3, "avg_dexterity": 3,
                            "avg_mobility": 1}
    base.update(kw)
    return UnitSpec.model_validate(base)


@pytest.mark.parametrize(("formation", "need"), [(Formation.UNORDERED, 0), (Formation.SKIRMISH, 1),
                                                 (Formation.RELAXED, 1), (Formation.CLOSE, 2)])
def test_x13_each_formation_needs_its_effective_drill(formation: Formation, need: int) -> None:
    assert formation_refusal(formation, need) is None
    if need:
        why = formation_refusal(formation, need - 1)
        assert why == f"{formation.value} needs effective Drill {need}, the unit has {need - 1} (X13)"


def test_x13_a_formation_the_drill_cannot_hold_is_refused_with_the_reason_and_cell() -> None:
    unit = foot(drill=1, formation="Close")
    t = derive_traits(unit)
    with pytest.raises(InputError) as err:
        check_formation(unit, t.drill.value, communication_failure=t.communication_failure, where="Units!K4")
    assert str(err.value) == "Units!K4: Foot: Close needs effective Drill 2, the unit has 1 (X13)"
    check_formation(foot(drill=2, formation="Close"), 2, where="Units!K4")  # Drill 2 holds Close


def test_x11_x13_communication_failure_holds_only_unordered() -> None:
    # Magnitude 3 with 2 relays: communication failure, effective Drill 4 - 2 = 2 (still enough for Close)
    unit = foot(drill=4, relays=2, formation="Close")
    t = derive_traits(unit)
    assert t.communication_failure and t.drill.value == 2
    with pytest.raises(InputError, match=r"Units!K5: Foot: Close is refused: the unit is in communication failure"):
        check_formation(unit, t.drill.value, communication_failure=True, where="Units!K5")
    assert formation_refusal(Formation.UNORDERED, 0, communication_failure=True) is None


def test_x1_a_solo_unit_has_no_formation_to_check() -> None:
    solo = UnitSpec(name="Lone", commander=Character(name="Lone"), solo=True, formation=Formation.CLOSE)
    check_formation(solo, 0, where="Units!K6")  # nothing raised


def test_x13_falling_below_the_need_unorders_the_unit_unless_the_house_rule_says_not() -> None:
    assert formation_after_drill_change(Formation.CLOSE, 1) is Formation.UNORDERED
    assert formation_after_drill_change(Formation.CLOSE, 2) is Formation.CLOSE
    assert formation_after_drill_change(Formation.RELAXED, 3, communication_failure=True) is Formation.UNORDERED
    keep = HouseRules(drill_loss_unorders=False)
    assert formation_after_drill_change(Formation.CLOSE, 0, rules=keep) is Formation.CLOSE


def test_x14_every_modifier_of_each_formation() -> None:
    close, relaxed, skirmish, unordered = (effects(f) for f in (Formation.CLOSE, Formation.RELAXED,
                                                                 Formation.SKIRMISH, Formation.UNORDERED))
    assert (close.close_rating_factor, close.shield_cover_close, close.shield_cover_ranged, close.ranged_dv,
            close.ranged_attacker_magnitude, close.close_attacker_magnitude, close.rout) == (2, 2, 1, 0, 2, 1, -2)
    assert (relaxed.close_rating_factor, relaxed.shield_cover_close, relaxed.shield_cover_ranged,
            relaxed.ranged_dv, relaxed.rout) == (1, 1, 2, 0, 0)
    assert (skirmish.shield_cover_close, skirmish.shield_cover_ranged, skirmish.ranged_dv,
            skirmish.close_attacker_magnitude, skirmish.rout) == (2, 2, 3, 2, 2)
    assert (unordered.shield_cover_close, unordered.shield_cover_ranged, unordered.rout) == (1, 1, 2)
    assert shield_cover_factor(Formation.CLOSE, ranged=False) == 2 and shield_cover_factor(Formation.CLOSE, True) == 1


def test_x14_x30_magnitude_multipliers() -> None:
    assert magnitude_multiplier(True, Formation.RELAXED, Formation.CLOSE) == 2
    assert magnitude_multiplier(False, Formation.RELAXED, Formation.CLOSE) == 1
    assert magnitude_multiplier(False, Formation.RELAXED, Formation.SKIRMISH) == 2
    assert magnitude_multiplier(False, Formation.CLOSE, Formation.SKIRMISH) == 3
    assert magnitude_multiplier(True, Formation.CLOSE, Formation.SKIRMISH) == 1
    # Magnitude 2 closing from Close on a Magnitude 4 Skirmish unit: 2 x 3 - 4 = +2
    assert magnitude_difference(2, 4, AttackKind.CLOSE, Formation.CLOSE, Formation.SKIRMISH).value == 2


@pytest.mark.parametrize(("formation", "yards"), [(Formation.UNORDERED, 60), (Formation.SKIRMISH, 200),
                                                  (Formation.RELAXED, 140), (Formation.CLOSE, 80)])
def test_x15_move_yards_by_formation(formation: Formation, yards: int) -> None:
    # (avg Dex 3 - avg mobility 1) = 2 x 30 / 100 / 70 / 40
    move = move_yards(foot(), formation=formation)
    assert move.value == yards
    assert [e.amount for e in move.breakdown][:2] == [3, -1]


def test_x15_averages_round_down_on_their_own() -> None:
    # floor(2.5) - floor(0.5) = 2; x 70 = 140
    assert move_yards(foot(avg_dexterity=2.5, avg_mobility=0.5)).value == 140


def test_x15_a_solo_unit_moves_100_yards_per_point_after_its_penalties() -> None:
    solo = UnitSpec(name="Lone", commander=Character(name="Lone", dexterity=4), solo=True, avg_mobility=1)
    assert move_yards(solo, wound_penalty=-1).value == 200  # (4 - 1 - 1) x 100


def test_x15_a_mount_gives_its_yards_in_any_formation() -> None:
    for formation in Formation:
        assert move_yards(foot(mount="Horse"), formation=formation).value == 200
    assert move_yards(foot(mount="Simhata")).value == 400
    assert move_yards(foot(mount="Elephant")).value == 100
    scaled = HouseRules(mount_formation_multiplier=True)
    assert move_yards(foot(mount="Horse"), formation=Formation.CLOSE, rules=scaled).value == 80  # 200 x 40/100


def test_x15_chariots_and_drawn_artillery_follow_their_team() -> None:
    assert drawn_yards(200) == 133  # 2/3 of 200, rounded down
    assert drawn_yards(200, artillery=True) == 100


def test_x16_difficult_terrain_halves_mounts_and_stops_wheels() -> None:
    assert move_yards(foot(), terrain=Terrain.DIFFICULT).value == 140
    assert move_yards(foot(mount=Mount.HORSE), terrain=Terrain.DIFFICULT).value == 100
    assert move_yards(foot(mount=Mount.ELEPHANT), terrain=Terrain.DIFFICULT).value == 50
    stopped = move_yards(foot(), terrain=Terrain.DIFFICULT, wheeled=True)
    assert stopped.value == 0 and "wheels cannot pass" in stopped.breakdown[-1].source


def test_x16_extreme_terrain_halves_infantry_and_stops_anything_larger() -> None:
    assert move_yards(foot(), terrain=Terrain.EXTREME).value == 70
    assert move_yards(foot(mount=Mount.HORSE), terrain=Terrain.EXTREME).value == 0
    assert move_yards(foot(mount=Mount.ELEPHANT), terrain=Terrain.EXTREME).value == 0


def test_x18_x16_dash_yards_and_no_dash_off_open_ground() -> None:
    assert dash_yards(foot()).value == 560  # (3 - 1 + 6) x 70
    assert dash_yards(foot(), formation=Formation.CLOSE).value == 320  # 8 x 40
    assert dash_yards(foot(mount=Mount.HORSE)).value == 400  # doubled mount
    assert dash_yards(foot(), terrain=Terrain.DIFFICULT).value == 0


def test_x16_only_the_best_cover_counts() -> None:
    assert cover_dv(10) == 0 and cover_dv(25) == 1 and cover_dv(49) == 1 and cover_dv(90) == 4
    assert best_cover([25, 60]) == 2
    assert best_cover([]) == 0
