"""What a Tracker types on a hex tracker between turns: House Rules are read at every
resolve (H10 as typed now); the map and the dice seed are the ones built, and a change to
them is named in a warning rather than silently used or dropped (H2, H8)."""

from __future__ import annotations

from test_hexwar_tracker import LAY, cell, example_data, loaded, put

from sheetsync.sheets import marks as steps
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.rules import resolve_turn


def _house_row(key: str) -> int:
    block = LAY.block("HouseRules_Table")
    backend = loaded()
    for i in range(block.rows or 0):
        if cell(backend, f"House Rules!A{block.first_row + i}") == key:
            return block.first_row + i
    raise AssertionError(key)


def _out_and_round() -> dict:
    """Caliph's Horses ride a path of two new hexes and end next to where they began."""
    data = example_data()
    data["turn"]["moves"].append({"unit": "Caliph's Horses", "path": ["0303", "0204"]})
    return data


def test_h5_house_rules_typed_after_build_apply_at_the_next_resolve() -> None:
    backend = loaded(_out_and_round())
    put(backend, f"'House Rules'!B{_house_row('charge_by')}", "path")
    report = steps.run("resolve", backend)
    data = _out_and_round()
    data["house_rules"] = {"charge_by": "path"}
    engine = resolve_turn(load_battle(data)).to_json()
    assert report.to_json()["events"] == engine["events"]
    horses = [e for e in engine["events"] if e.get("unit") == "Caliph's Horses"]
    assert horses[0]["charge"] is True  # by the distance reading it would not be a charge
    assert not [e for e in resolve_turn(load_battle(_out_and_round())).events
                if getattr(e, "unit", "") == "Caliph's Horses" and e.charge]
    assert report.warnings == []


def test_h2_a_map_changed_after_build_is_named_and_the_built_map_kept() -> None:
    backend = loaded()
    put(backend, "Battle!B11", "0101")
    put(backend, "Battle!B7", 99)
    report = steps.run("resolve", backend)
    assert report.to_json()["events"] == resolve_turn(load_battle(example_data())).to_json()["events"]
    joined = " ".join(report.warnings)
    assert "Battle!B11 (Impassable hexes) was changed after Build Units" in joined
    assert "Battle!B7 (Dice seed)" in joined and len(report.warnings) == 2
