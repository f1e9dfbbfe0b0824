"""Battle Aftermath and rulings R26-R30."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sheetsync.core.dice import ScriptedRoller
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import AftermathEntry, aftermath, aftermath_json
from sheetsync.systems.bbn.rules.aftermath import (
    LASTING_TABLES,
    aegis_halve,
    lasting_result,
    split_damage,
)


def entries(*cohorts: dict[str, Any], dice: tuple[int, ...] = (), **kw: Any) -> dict[str, AftermathEntry]:
    roller = ScriptedRoller(dice)
    out = aftermath(load_battle({"cohorts": list(cohorts)}), roller, **kw)
    assert roller.used == len(dice)
    return {e.name: e for e in out}


def cohort(health: int, size: int = 3, **extra: Any) -> dict[str, Any]:
    return {"name": "C", "members": [f"M{i}" for i in range(1, size + 1)], "health": health, **extra}


@pytest.mark.parametrize(("taken", "survivors", "each"), [
    (76, 5, 16), (78, 5, 16), (75, 5, 15), (48, 3, 16), (1, 5, 1), (0, 3, 0), (-5, 3, 0), (10, 0, 0),
])
def test_r26_damage_shared_equally_rounded_up(taken: int, survivors: int, each: int) -> None:
    assert split_damage(taken, survivors) == each


def test_aftermath_76_damage_over_5_members_is_16_each_5_aggravated_1_lethal() -> None:
    got = entries(cohort(25 - 76, 5))
    assert {(e.damage, e.aggravated, e.lethal) for e in got.values()} == {(16, 5, 1)}


@pytest.mark.parametrize(("damage", "aggravated", "lethal"), [(16, 5, 1), (40, 13, 1), (3, 1, 0), (2, 0, 2), (0, 0, 0), (24, 8, 0)])
def test_r26_three_damage_is_one_aggravated_the_rest_lethal(damage: int, aggravated: int, lethal: int) -> None:
    rolls = {"M1": 10, "M2": 10, "M3": 10}
    e = entries(cohort(15 - 3 * damage, lasting_rolls=rolls))["M1"]
    assert (e.damage, e.aggravated, e.lethal) == (damage, aggravated, lethal)


@pytest.mark.parametrize(("levels", "burns", "after"), [
    ((8, 0), 1, (4, 0)), ((8, 0), 2, (2, 0)), ((8, 0), 3, (1, 0)),
    ((13, 1), 1, (7, 1)), ((5, 2), 3, (1, 1)), ((1, 0), 3, (1, 0)), ((0, 0), 3, (0, 0)), ((0, 2), 2, (0, 1)),
])
def test_r27_aegis_halves_rounded_up_and_never_reaches_0(levels: tuple[int, int], burns: int, after: tuple[int, int]) -> None:
    assert aegis_halve(*levels, burns) == after


def test_r27_aegis_halves_8_to_4_to_2_to_1() -> None:
    got = entries(cohort(20 - 96, 4), aegis={"C": {"M1": 0, "M2": 1, "M3": 2, "M4": 3}})
    assert [got[m].aggravated for m in ("M1", "M2", "M3", "M4")] == [8, 4, 2, 1]
    assert [got[m].aegis for m in ("M1", "M2", "M3", "M4")] == [0, 1, 2, 3]


def test_r27_at_most_3_aegis_are_burned() -> None:
    got = entries(cohort(15 - 3 * 24), aegis={"C": {"M1": 7, "M2": -2}})
    assert (got["M1"].aegis, got["M1"].aggravated) == (3, 1)
    assert (got["M2"].aegis, got["M2"].aggravated) == (0, 8)


def test_r27_aegis_from_the_battle_file_and_the_argument_wins() -> None:
    c = cohort(15 - 3 * 24, aegis={"M1": 2})
    assert entries(c)["M1"].aggravated == 2
    assert entries(c, aegis={"C": {}})["M1"].aggravated == 8


def test_r27_past_the_health_levels_is_torpor_never_death() -> None:
    got = entries(cohort(15 - 3 * 24, lasting_rolls={"M1": 10, "M2": 10, "M3": 10}, members=[
        "M1", {"name": "M2", "health_levels": 8}, {"name": "M3", "health_levels": 7}]))
    # 24 each: 8 Aggravated
    assert (got["M1"].torpor, got["M1"].dead) == (True, False)
    assert got["M2"].torpor is False
    assert got["M3"].torpor is True


def test_r27_health_levels_house_rule() -> None:
    b = load_battle({"house_rules": {"health_levels": 10}, "cohorts": [cohort(15 - 3 * 24)]})
    assert all(not e.torpor for e in aftermath(b, ScriptedRoller([])))


@pytest.mark.parametrize(("band", "roll", "text"), [
    (25, 1, "up to 2 points of Flaws"), (25, 9, "up to 2 points of Flaws"), (25, 10, "no drawback"),
    (50, 1, "up to 4 points of Flaws"), (50, 5, "up to 4 points of Flaws"), (50, 6, "Derangement and up to 2"),
    (50, 9, "Derangement and up to 2"), (50, 10, "no drawback"),
    (75, 1, "Conscience/Conviction"), (75, 2, "point of Path/Humanity"), (75, 3, "point of Path/Humanity"),
    (75, 4, "up to 6 points of Flaws"), (75, 6, "up to 6 points of Flaws"), (75, 7, "Derangement and up to 4"),
    (75, 9, "Derangement and up to 4"), (75, 10, "no drawback"),
])
def test_r28_lasting_effect_tables(band: int, roll: int, text: str) -> None:
    assert text in lasting_result(band, roll)


def test_r28_every_d10_face_has_one_result_on_every_table() -> None:
    for band, table in LASTING_TABLES.items():
        faces = [f for span, _ in table for f in span]
        assert sorted(faces) == list(range(1, 11)), band
    with pytest.raises(ValueError):
        lasting_result(25, 11)


@pytest.mark.parametrize(("each", "band"), [(24, None), (25, 25), (49, 25), (50, 50), (74, 50), (75, 75), (120, 75)])
def test_r28_one_roll_on_the_highest_band_reached(each: int, band: int | None) -> None:
    dice = (5,) * 3 if band else ()
    got = entries(cohort(15 - 3 * each), dice=dice)
    effect = got["M1"].lasting_effect
    assert (effect.band if effect else None) == band
    if effect:
        assert (effect.roll, effect.source) == (5, "rolled")


def test_r28_the_band_is_taken_before_aegis() -> None:
    got = entries(cohort(15 - 3 * 50, aegis={"M1": 3}, lasting_rolls={"M1": 6, "M2": 6, "M3": 6}))
    assert got["M1"].lasting_effect is not None and got["M1"].lasting_effect.band == 50
    assert (got["M1"].aggravated, got["M1"].lethal) == (2, 1)
    assert got["M1"].lasting_effect.source == "entered"


def test_r29_temper_left_split_rounded_down_among_the_living() -> None:
    got = entries(cohort(15, 4, temper=11, states={"M4": "Dead"}))
    assert [got[m].temper_returned for m in ("M1", "M2", "M3", "M4")] == [3, 3, 3, 0]


def test_r30_dead_members_are_reported_dead_and_share_no_damage() -> None:
    got = entries(cohort(15 - 30, 3, states={"M3": "Dead", "M2": "Knocked Out"}))
    assert got["M3"].dead and got["M3"].damage == 0 and got["M3"].lasting_effect is None
    # 30 damage over the 2 not Dead (Knocked Out counts)
    assert (got["M1"].damage, got["M2"].damage) == (15, 15)
    assert not got["M2"].dead


def test_r30_a_cohort_all_dead() -> None:
    got = entries(cohort(-60, 3, temper=9, states={"M1": "Dead", "M2": "Dead", "M3": "Dead"}))
    assert all(e.dead and e.temper_returned == 0 and e.damage == 0 for e in got.values())


def test_aftermath_json_shape() -> None:
    b = load_battle({"cohorts": [cohort(15 - 75, 3, lasting_rolls={"M1": 3, "M2": 3, "M3": 3})]})
    data = json.loads(json.dumps(aftermath_json(aftermath(b, ScriptedRoller([])))))
    assert list(data) == ["characters"]
    keys = {"cohort", "name", "dead", "damage", "aggravated", "lethal", "aegis", "torpor", "lasting_effect", "temper_returned"}
    assert all(keys <= set(c) for c in data["characters"])
    assert [c["name"] for c in data["characters"]] == ["M1", "M2", "M3"]
    # 25 damage each: band 25, the typed 3
    assert data["characters"][0]["lasting_effect"]["band"] == 25
