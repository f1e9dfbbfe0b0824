"""Exalted battle files (RULINGS-exalted.md "What the Tracker types"): every problem is
reported with its path, all at once, and a file written back reads the same."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.files.loader import battle_to_file, load_battle
from sheetsync.systems.exalted.rules.battle import resolve
from sheetsync.systems.exalted.system import SYSTEM


def _example() -> dict[str, Any]:
    data = yaml.safe_load(SYSTEM.example_data())
    assert isinstance(data, dict)
    return data


def _problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(InputError) as info:
        load_battle(data, "battle.yaml")
    return [str(p) for p in info.value.problems]


def test_example_battle_loads_with_its_derived_state() -> None:
    battle = load_battle(_example())
    talon, mob = battle.state
    assert (talon.name, talon.magnitude, talon.endurance, talon.formation.value) == ("Cathak Talon", 2, 7, "Close")
    assert talon.heroes == ("Peleps Ama",) and talon.relays == ("Talon Sergeant",)
    assert talon.ammunition == 12  # X31: four volleys of three arrows, mobile
    assert (mob.magnitude, mob.endurance, mob.ammunition) == (3, 3, None)
    assert [o.tick for o in battle.orders] == [0, 4, 5]


def test_a_battle_file_written_back_reads_the_same_before_and_after_a_tick() -> None:
    battle = load_battle(_example())
    assert load_battle(yaml.safe_load(yaml.safe_dump(battle_to_file(battle)))) == battle
    after = resolve(battle).battle
    assert load_battle(yaml.safe_load(yaml.safe_dump(battle_to_file(after)))) == after


def test_x13_formation_the_drill_cannot_hold_is_refused_with_the_reason() -> None:
    data = _example()
    data["units"][1]["formation"] = "Close"
    assert _problems(data) == ["units[1].formation: Bandit Mob: Close needs effective Drill 2, the unit has 1 (X13)"]


def test_x11_communication_failure_allows_only_unordered() -> None:
    data = _example()
    data["units"][1]["special_characters"] = {"relays": ["One-Eyed Pell"]}  # Magnitude 3, one relay
    (problem,) = _problems(data)
    assert problem.startswith("units[1].formation: Bandit Mob: Relaxed is refused: the unit is in communication "
                              "failure") and "(X11)" in problem


def test_e1_typed_die_outside_1_to_10_names_its_path() -> None:
    data = _example()
    data["orders"][0]["dice"] = "7 3 11 2 0 8 9 9"
    assert _problems(data) == ["orders[0].dice: die 3: 11 is not a d10 face (1 to 10, E1)",
                               "orders[0].dice: die 5: 0 is not a d10 face (1 to 10, E1)"]


def test_e1_a_die_cell_that_is_neither_faces_nor_successes_names_its_path() -> None:
    data = _example()
    data["units"][0]["join_war"] = "seven"
    (problem,) = _problems(data)
    assert problem.startswith("units[0].join_war: 'seven' is neither dice faces")


def test_every_problem_is_reported_at_once_with_its_path() -> None:
    data = _example()
    data["bogus"] = 1
    data["units"][0]["commander"] = "Nobody"
    data["units"][1]["formation"] = "Close"
    data["orders"][0]["dice"] = "7 3 11"
    data["orders"][1]["action"] = "Melee"
    data["orders"][2]["target"] = "Bandit Mobb"
    got = _problems(data)
    wheres = [p.split(":", 1)[0] for p in got]
    assert wheres == ["bogus", "units[0].commander", "units[1].formation", "orders[0].dice", "orders[1].action",
                      "orders[2].target"]
    assert "'Melee' is not one of 'Attack'" in got[4]
    assert "did you mean 'Bandit Mob'?" in got[5]


def test_x11_more_special_characters_than_twice_magnitude_is_refused() -> None:
    data = _example()
    data["units"][0]["members"] = [{"kind": "Extra", "count": 5}]  # 6 people: Magnitude 1, limit 2
    data["units"][0]["special_characters"] = {"heroes": ["Peleps Ama"], "relays": ["Talon Sergeant", "Ledaal Kes"]}
    data["units"][0]["named_members"] = []
    got = _problems(data)
    assert "units[0].special_characters: Cathak Talon has 3 special characters, more than 2 × its Magnitude 1 " \
           "(X11)" in got


def test_a_character_serves_in_one_unit_only() -> None:
    data = _example()
    data["units"][1]["named_members"] = ["Ledaal Kes"]
    assert _problems(data) == ["units[1]: 'Ledaal Kes' is already in unit 'Cathak Talon': a character serves in "
                               "one unit"]


def test_unknown_keys_and_bad_types_name_their_path() -> None:
    data = _example()
    data["units"][0]["drll"] = 3
    data["characters"][0]["dexterity"] = "lots"
    data["orders"][0]["tick"] = -1
    got = _problems(data)
    assert "characters[0].dexterity: 'lots' is not a whole number" in got
    assert "units[0].drll: is not a key sheetsync knows (check its spelling)" in got
    assert any(p.startswith("orders[0].tick: -1 is out of range") for p in got)


def test_x37_an_unknown_weather_names_its_path() -> None:
    data = _example()
    data["orders"][1]["weather"] = "Rainy"
    assert _problems(data) == ["orders[1].weather: 'Rainy' is not a weather (one of Mild, Hot, Snowy, Desert, "
                               "Blizzard, Extreme; X37)"]


def test_x31_no_arrows_typed_survives_a_round_trip_through_the_file() -> None:
    """X31: a unit typed with 0 arrows has none; written back to its file it must still say
    0, not leave the key out (which would give it the default 12 again)."""
    data = yaml.safe_load(SYSTEM.example_data())
    data["units"][0]["ammunition"] = 0
    out = battle_to_file(load_battle(data))
    assert out["units"][0]["ammunition"] == 0
    assert load_battle(out).units[0].ammunition == 0
    del data["units"][0]["ammunition"]  # none typed: the key stays out, the default applies
    assert "ammunition" not in battle_to_file(load_battle(data))["units"][0]
