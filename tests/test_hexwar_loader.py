"""Hex battle files: the issue's contract loads, every problem is listed with its path, and
a battle written out reads back the same (H1, H2, H4, H7, H8)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sheetsync.core.errors import BattleStateError, InputError
from sheetsync.systems.hexwar.files.loader import battle_to_file, load_battle
from sheetsync.systems.hexwar.rules import example_battle_data, resolve_turn
from sheetsync.systems.hexwar.rules.models import HouseRules


def contract() -> dict[str, Any]:
    """The battle file of the issue, with the units its orders name."""
    return {
        "system": "hexwar", "seed": 7, "house_rules": {"proportional_reduction": True},
        "map": {"columns": 12, "rows": 10, "impassable": ["0603", "0604"]},
        "units": [
            {"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0405"},
            {"name": "Caliph's Horses", "side": "Party", "counter": "3+ - 2 - 4 - 1", "hex": "0301"},
            {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0506", "men": 670},
            {"name": "2nd Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0406", "men": 670},
        ],
        "turn": {
            "initiative": "Party",
            "moves": [{"unit": "1st Fist", "to": "0505"},
                      {"unit": "Caliph's Horses", "path": ["0302", "0303", "0304"]}],
            "attacks": [{"defender": "Sun Knights", "attackers": ["1st Fist", "2nd Fist"], "roll": 37}],
        },
    }


def _problems(data: Any) -> list[str]:
    with pytest.raises(InputError) as exc:
        load_battle(data, "battle.yaml")
    return [str(p) for p in exc.value.problems]


def test_hexwar_the_issues_battle_file_loads_and_resolves() -> None:
    battle = load_battle(contract())
    assert battle.seed == 7 and battle.map.impassable == ("0603", "0604")
    out = resolve_turn(battle).to_json()
    assert set(out) >= {"system", "turn", "events", "units"} and out["system"] == "hexwar"
    move, *_ = out["events"]
    assert set(move) >= {"unit", "from", "to", "outcome", "reason", "charge"}
    attack = out["events"][-1]
    assert set(attack) >= {"defender", "attackers", "strength", "defense", "chance", "roll", "roll_source",
                           "casualties", "outcome", "rule_ref"}
    # 6.2.1: 8 / 11 = 72%, the typed 37: 35% on the Knights
    assert (attack["chance"], attack["roll"], attack["roll_source"], attack["casualties"]) == (72, 37, "entered", 35)
    assert {"name", "side", "hex", "casualties", "destroyed"} <= set(out["units"][0])


def test_hexwar_battle_file_round_trips_through_a_resolved_turn() -> None:
    battle = load_battle(contract())
    after = resolve_turn(battle).battle
    for b in (battle, after):
        assert load_battle(yaml.safe_load(yaml.safe_dump(battle_to_file(b)))) == b


def test_h1_h2_every_problem_is_listed_with_its_path() -> None:
    data = contract()
    data["units"][2]["counter"] = "3+ - x - 4"
    data["units"][3]["hex"] = "1312"
    data["turn"]["moves"][0]["to"] = "9999"
    data["turn"]["moves"][1]["unit"] = "Caliph's Horse"
    data["turn"]["attacks"].append({"defender": "Moon Knights", "attackers": ["Sun Knights"], "roll": 101})
    problems = _problems(data)
    assert problems == [
        "units[2].counter: '3+ - x - 4' is not a counter (expected attack - defense - movement - range, such as "
        "3+ - 2 - 4 - 1, 4 - 4 - 1 - 2(2) or 4 - 3 - 1 - 2(--)) (H1)",
        "units[3].hex: '1312' is not a hex on this 12x10 map (H2)",
        "turn.moves[0].to: '9999' is not a hex on this 12x10 map (H2)",
        "turn.moves[1].unit: \"Caliph's Horse\" is not a unit (expected one of Sun Knights, Caliph's Horses)",
        "turn.attacks[1].defender: 'Moon Knights' is not a unit (expected one of Sun Knights, Caliph's Horses)",
        "turn.attacks[1].roll: 101 is not a d100 roll (1 to 100; 00 means 100) (H8)",
    ]


def test_h1_a_malformed_unit_is_not_reported_again_where_orders_name_it() -> None:
    data = contract()
    data["units"][2]["counter"] = "nonsense"
    assert [p.split(":")[0] for p in _problems(data)] == ["units[2].counter"]


def test_h7_attack_rows_need_known_attackers_once_each() -> None:
    data = contract()
    data["turn"]["attacks"] = [{"defender": "Sun Knights", "attackers": ["1st Fist", "1st Fist", "3rd Fist"]},
                               {"defender": "Sun Knights", "attackers": []}]
    assert _problems(data) == [
        "turn.attacks[0].attackers[2]: '3rd Fist' is not a unit (expected one of Sun Knights, Caliph's Horses, "
        "1st Fist, 2nd Fist)",
        "turn.attacks[0].attackers[1]: '1st Fist' is in this attack twice",
        "turn.attacks[1].attackers: must list at least one attacking unit (H7)",
    ]


def test_h4_positions_must_respect_stacking_and_sides_and_terrain() -> None:
    data = contract()
    data["units"][1]["hex"] = "0405"  # Horses join the Knights: 2, the limit
    data["units"].append({"name": "Footmen", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0405"})
    data["units"].append({"name": "Scout", "side": "Enemy", "counter": "1 - 1 - 4 - 1", "hex": "0405",
                          "size": "company"})
    data["units"].append({"name": "Goat", "side": "Enemy", "counter": "1 - 1 - 4 - 1", "hex": "0603"})
    assert _problems(data) == [
        "units[6].hex: 0603 is impassable (5.1, H2)",
        "units: 0405 holds 3 battalions of Party; the limit is 2 (5.0, H4)",
        "units: 0405 holds units of Enemy and Party; enemies never share a hex (H4)",
    ]


def test_h4_a_move_names_a_destination_or_a_path() -> None:
    data = contract()
    data["turn"]["moves"] = [{"unit": "Sun Knights"}, {"unit": "Sun Knights", "to": "0404", "path": ["0404"]},
                             {"unit": "Sun Knights", "path": []}, {"unit": "Sun Knights", "to": "0404", "speed": 2}]
    assert _problems(data) == [
        "turn.moves[0]: give the destination (to) or the path, one of the two (H4)",
        "turn.moves[1]: give the destination (to) or the path, one of the two (H4)",
        "turn.moves[2].path: must be a list of the hexes entered, in order (H4)",
        "turn.moves[3].speed: is not a key sheetsync knows (check its spelling)",
    ]


def test_h3_initiative_names_a_side_and_is_needed_when_units_move() -> None:
    data = contract()
    data["turn"]["initiative"] = "Orcs"
    assert _problems(data) == [
        "turn.initiative: 'Orcs' is not a side (expected one of Party, Enemy) (H3)",
    ]
    data["turn"].pop("initiative")
    assert _problems(data) == [
        "turn.initiative: is required when units move: the side that has initiative this turn "
        "(expected one of Party, Enemy) (H3)",
    ]
    data["turn"]["initiative"] = "Party"
    data["house_rules"] = {"initiative": "contest"}
    data["generals"] = {"Party": 12}
    assert _problems(data) == ["generals.Enemy: is required: Enemy's general's Military Science, for the "
                               "initiative contest (H3)"]


def test_hexwar_top_level_shape_problems() -> None:
    assert _problems([]) == ["the file must hold a mapping with 'map' and 'units'"]
    assert _problems({"system": "bbn", "map": {"columns": 0, "rows": 10}, "units": [], "turns": 1,
                      "house_rules": {"stack_limit": 0, "charge": "x"}, "seed": 1.5}) == [
        "turns: is not a key sheetsync knows (check its spelling)",
        "system: 'bbn' is not the hex wargame (system: hexwar)",
        "seed: 1.5 is not a whole number or text",
        "house_rules.stack_limit: 0 is out of range (input should be greater than 0)",
        "house_rules.charge: is not a key sheetsync knows (check its spelling)",
        "map.columns: 0 is out of range (input should be greater than or equal to 1)",
        "units: must be a list of at least one unit",
    ]


def test_h1_one_value_per_key_and_sizes_by_name() -> None:
    data = contract()
    data["units"][0] = {"name": "Sun Knights", "side": "Party", "attack": 3, "defense": 3, "movement": 1,
                        "range": "1", "hex": "0405", "size": "Squadron"}
    battle = load_battle(data)
    assert str(battle.unit("Sun Knights").counter) == "3 - 3 - 1 - 1" and battle.unit("Sun Knights").size == 1
    data["units"][0].pop("range")
    assert _problems(data) == ["units[0].range: is required (or give the whole counter, H1)"]


def test_h8_typed_00_and_text_rolls() -> None:
    data = contract()
    data["turn"]["attacks"][0]["roll"] = "00"
    assert load_battle(data).orders.attacks[0].roll == 100
    data["turn"]["attacks"][0]["roll"] = 0  # YAML reads 00 as 0
    assert load_battle(data).orders.attacks[0].roll == 100
    data["turn"]["attacks"][0]["roll"] = " 37 "
    assert load_battle(data).orders.attacks[0].roll == 37


def test_hexwar_house_rules_default_to_the_rulings() -> None:
    rules = HouseRules()
    assert (rules.initiative, rules.stack_limit, rules.charge_by, rules.stack_defense,
            rules.proportional_reduction) == ("set", 2, "distance", "single", True)
    described = HouseRules.describe()
    assert described["proportional_reduction"][1:] == (True, [True, False])
    assert described["charge_by"][2] == ["distance", "path"]


def test_hexwar_embedded_example_loads_from_the_texts_unit_list() -> None:
    battle = load_battle(yaml.safe_load(example_battle_data()), "example.yaml")
    counters = {u.name: str(u.counter) for u in battle.units}
    # 7.0's list
    assert counters["Caliph's Horses"] == "3+ - 2 - 4 - 1"
    assert counters["Church Knights"] == "4++ - 4 - 3 - 1"
    assert counters["Drow Infantry"] == "4 - 3 - 1 - 2(3)"
    assert counters["Human Footmen"] == "3 - 3 - 1 - 1"
    assert counters["Human Irregular Footmen"] == "3+ - 2 - 2 - 1"
    assert counters["Elite Fist"] == "5 - 4 - 1 - 2(2)"
    assert battle.unit("1st Fist").men == 670
    assert len(battle.map.impassable) >= 10


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**4), st.floats(allow_nan=False), st.text(max_size=6),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [path] + [p for k, v in node.items() for p in _leaves(v, (*path, k))]
    if isinstance(node, list):
        return [path] + [p for i, v in enumerate(node) for p in _leaves(v, (*path, i))]
    return [path]


@settings(max_examples=300, deadline=None, database=None)
@given(st.data())
def test_hexwar_loader_turns_any_bad_value_into_input_error(data: st.DataObject) -> None:
    """No foreign exception leaves the loader: any value anywhere is loaded or listed."""
    battle = contract()
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_leaves(battle)[1:]))
        node: Any = battle
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = data.draw(JUNK)
    try:
        loaded = load_battle(battle)
    except InputError as exc:
        assert exc.problems and all(str(p) for p in exc.problems)
        return
    try:
        resolve_turn(loaded)
    except BattleStateError:
        pass  # a file with one side left is over (H12): a SheetSyncError, said in words
