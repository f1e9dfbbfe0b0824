"""Issue 23: a Resolve loads only its typed orders onto the stored battle it read
(``load_battle(data, known=stored)``).  Whatever the orders and house rules typed, the battle
and every problem must be those of loading the whole file: each case here is loaded both
ways and compared, battle for battle (by ``repr``, which tells ``2`` from ``2.0``) and
problem for problem."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from exalted_battles import make_exalted_battle
from hex_battles import make_hex_battle

from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.files import loader as exalted_loader
from sheetsync.systems.hexwar.files import loader as hex_loader


def _outcome(load: Any, data: dict[str, Any], **kw: Any) -> tuple[str, Any]:
    try:
        return "battle", repr(load(data, **kw))
    except InputError as err:
        return "problems", [(p.where, p.message) for p in err.problems]


def _both_ways(load: Any, stored: dict[str, Any], data: dict[str, Any]) -> tuple[str, Any]:
    known = load(copy.deepcopy(stored))
    whole = _outcome(load, copy.deepcopy(data))
    assert _outcome(load, copy.deepcopy(data), known=known) == whole
    return whole


def _hex_stored() -> dict[str, Any]:
    data = make_hex_battle(8)
    data["turn"] = {"number": 1, "moves": [], "attacks": []}
    return data


def _hex_case(name: str) -> dict[str, Any]:
    stored = _hex_stored()
    data = copy.deepcopy(stored)
    data["turn"] = copy.deepcopy(make_hex_battle(8)["turn"])
    turn = data["turn"]
    if name == "bad unit and hex":
        turn["moves"][0]["unit"] = "Party 99"
        turn["moves"][1]["to"] = "9999"
        turn["attacks"][0]["roll"] = 101
    elif name == "no initiative":
        del turn["initiative"]
    elif name == "lower stack limit":
        data["house_rules"] = {"stack_limit": 0.5}
    elif name == "contest without generals":
        data["house_rules"] = {"initiative": "contest"}
    elif name == "bad house rule":
        data["house_rules"] = {"stack_limit": "many"}
    elif name == "bad turn":
        data["turn"] = ["not", "a", "mapping"]
    elif name == "unknown key":
        data["turnn"] = {}
    return data


HEX_CASES = ["good", "bad unit and hex", "no initiative", "lower stack limit", "contest without generals",
             "bad house rule", "bad turn", "unknown key"]


@pytest.mark.parametrize("case", HEX_CASES)
def test_h3_h4_h7_issue23_hex_orders_loaded_onto_the_stored_battle_are_a_whole_load(case: str) -> None:
    kind, _ = _both_ways(hex_loader.load_battle, _hex_stored(), _hex_case(case))
    assert kind == ("battle" if case == "good" else "problems")


def _exalted_stored() -> dict[str, Any]:
    data = make_exalted_battle(4)
    data["orders"] = []
    data["house_rules"] = {"inactive_dv": 1}
    return data


def _exalted_case(name: str) -> dict[str, Any]:
    stored = _exalted_stored()
    data = copy.deepcopy(stored)
    data["orders"] = copy.deepcopy(make_exalted_battle(4)["orders"])
    if name == "bad target and tick":
        data["orders"][0]["target"] = "Nobody"
        data["orders"][1]["tick"] = "soon"
    elif name == "house rule changed":
        data["house_rules"] = {"inactive_dv": 1, "heroic_weight": "exact", "extras_double_tens": False}
    elif name == "house rule as float":
        data["house_rules"] = {"inactive_dv": 1.0}
    elif name == "house rules left out":
        del data["house_rules"]
    elif name == "bad house rule":
        data["house_rules"] = {"inactive_dv": "lots"}
    elif name == "orders not a list":
        data["orders"] = {"tick": 0}
    return data


EXALTED_CASES = ["good", "bad target and tick", "house rule changed", "house rule as float", "house rules left out",
                 "bad house rule", "orders not a list"]


@pytest.mark.parametrize("case", EXALTED_CASES)
def test_x17_issue23_exalted_orders_loaded_onto_the_stored_battle_are_a_whole_load(case: str) -> None:
    kind, _ = _both_ways(exalted_loader.load_battle, _exalted_stored(), _exalted_case(case))
    assert kind == ("problems" if case in ("bad target and tick", "bad house rule", "orders not a list")
                    else "battle")


def test_x17_issue23_only_the_same_house_rules_take_the_stored_units() -> None:
    """The stored battle's units are taken only under the house rules they were read with
    (a unit's checks depend on them, X2, X11); other house rules read them again."""
    known = exalted_loader.load_battle(_exalted_stored())
    assert exalted_loader.load_battle(_exalted_case("good"), known=known).units is known.units
    assert exalted_loader.load_battle(_exalted_case("house rule as float"), known=known).units is known.units
    for case in ("house rule changed", "house rules left out"):
        assert exalted_loader.load_battle(_exalted_case(case), known=known).units is not known.units
