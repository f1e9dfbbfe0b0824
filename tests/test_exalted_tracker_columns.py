"""Issue 10 follow-ups on the Exalted tracker's sheets: the Orders ``Target dice`` column
(X23, X24: the second unit's command roll), a merged unit's status (X24), and the typed
health track, extra flag (E1, E10) and unit Hardness (X8) columns.  Each bad cell is named
and nothing is written; a battle file with these keys loads into a tracker and back."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_exalted_loop_actions import MERGE, SPLIT
from test_exalted_loop_actions import _data as loop_data
from test_exalted_tracker import LAY, SUBJECT, blank, type_battle

from sheetsync.app.usecases import export_steps, load_steps, run_steps
from sheetsync.errors import InputError
from sheetsync.rules.exalted.battle import resolve, units_json
from sheetsync.rules.exalted.loader import load_battle
from sheetsync.rules.exalted.sheet import TRACK
from sheetsync.rules.exalted.traits import derive_traits
from sheetsync.sheets.backend import MemoryBackend, RangeUpdate

ORDERS, UNITS, CHARS = LAY.block("Orders_Table"), LAY.block("Units_Table"), LAY.block("Characters_Table")


def _get(backend: MemoryBackend, block: Any, offset: int, key: str) -> Any:
    return backend.sheets[block.sheet].get((block.first_row + offset, block.first_col + block.index(key)))


def _merge_battle() -> Any:
    data = loop_data(reserve=True)
    data["orders"] = [dict(MERGE)]
    return load_battle(data)


def test_x24_orders_target_dice_is_read_into_the_merge_order_and_the_merged_unit_says_so() -> None:
    """The Merge order's Target dice ``7 1 1 1 1 1`` (Cathak Dano's 6 dice, one success at
    difficulty max(1, 1 - 2) = 1) is written to its cell on load and read back on Next Tick:
    the tracker's events are the battle file's.  Afterwards the Talon Reserve's status is
    "merged into Cathak Talon", not "disbanded"."""
    backend = blank()
    load_steps(SUBJECT, backend, _merge_battle())
    assert _get(backend, ORDERS, 0, "target_dice") == "7 1 1 1 1 1"
    report = run_steps(SUBJECT, "resolve", backend)
    events = report.to_json()["events"]
    assert events == resolve(_merge_battle()).to_json()["events"]
    merge = next(e for e in events if e["kind"] == "Merge Units")
    assert merge["merged"] is True
    assert merge["commands"]["target"]["roll"]["faces"] == [7, 1, 1, 1, 1, 1]
    assert merge["commands"]["target"]["roll"]["source"] == "typed faces"
    names = [u.name for u in _merge_battle().units]
    reserve = names.index("Talon Reserve")
    assert _get(backend, UNITS, reserve, "status") == "merged into Cathak Talon"


def test_x24_target_dice_typed_as_successes_and_a_bad_face_named_at_its_cell() -> None:
    backend = blank()
    type_battle(backend)
    cell = ORDERS.cell(0, "target_dice")
    backend.write_ranges([RangeUpdate(cell, [["7 11"]]), RangeUpdate(ORDERS.cell(1, "dice"), [["0 3"]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "build", backend)
    where = {p.where: p.message for p in err.value.problems}
    assert "11 is not a d10 face" in where[cell]
    assert "0 is not a d10 face" in where[ORDERS.cell(1, "dice")]  # every bad cell at once
    assert backend.sheets == before
    backend.write_ranges([RangeUpdate(cell, [[2]]), RangeUpdate(ORDERS.cell(1, "dice"), [[None]])])
    run_steps(SUBJECT, "build", backend)
    orders = export_steps(SUBJECT, backend)["battle"]["orders"]
    assert orders[0]["target_dice"] == 2


def test_e10_health_track_codec_reads_penalties_and_names_bad_ones() -> None:
    assert TRACK.decode("0 -1 -1 -2 -2 -4") == (0, -1, -1, -2, -2, -4)
    assert TRACK.decode("-1, -3") == (-1, -3)
    assert TRACK.decode(0) == (0,)
    assert TRACK.encode((0, -1, -4)) == "0 -1 -4"
    with pytest.raises(ValueError, match="level 2: -5 is not a wound penalty"):
        TRACK.decode("0 -5")
    with pytest.raises(ValueError, match="not a health track"):
        TRACK.decode("0 -1 x")


def _typed_extras(backend: MemoryBackend) -> None:
    type_battle(backend)
    backend.write_ranges([RangeUpdate(CHARS.cell(2, "health_track"), [["0 -1 -2 -4"]]),
                          RangeUpdate(CHARS.cell(1, "extra"), [["Yes"]]),
                          RangeUpdate(UNITS.cell(1, "hardness_avg"), [[2]]),
                          RangeUpdate(UNITS.cell(1, "hardness_min"), [[2]])])


def test_e10_x8_typed_health_track_extra_and_unit_hardness_reach_the_battle_and_the_odds() -> None:
    """Red Harrow's typed track 0 -1 -2 -4 has 5 levels (E10); Talon Sergeant is an extra
    (E1); every bandit has Hardness 2, so the Bandit Mob has Hardness 2 (X8) and the Talon's
    attack on it shows Hardness 2 with a damage minimum of 1 (E9) on the Orders sheet."""
    backend = blank()
    _typed_extras(backend)
    run_steps(SUBJECT, "build", backend)
    battle = load_battle(export_steps(SUBJECT, backend)["battle"])
    harrow, sergeant = battle.character("Red Harrow"), battle.character("Talon Sergeant")
    assert harrow is not None and sergeant is not None
    assert harrow.health_track == (0, -1, -2, -4) and harrow.health_levels == 5
    assert sergeant.extra and not harrow.extra
    mob = battle.unit("Bandit Mob")
    assert mob is not None and derive_traits(mob.spec, battle.house_rules).hardness.value == 2
    assert _get(backend, UNITS, 1, "t_hardness") == 2
    assert (_get(backend, ORDERS, 0, "hardness"), _get(backend, ORDERS, 0, "min_dice")) == (2, 1)
    assert _get(backend, ORDERS, 0, "tens") == 2  # Cathak Reyen is no extra


def test_e10_x8_bad_track_and_hardness_cells_are_all_named_and_nothing_is_written() -> None:
    backend = blank()
    type_battle(backend)
    backend.write_ranges([RangeUpdate(CHARS.cell(0, "health_track"), [["0 -1 x"]]),
                          RangeUpdate(CHARS.cell(1, "extra"), [["maybe"]]),
                          RangeUpdate(UNITS.cell(0, "hardness_min"), [[-1]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "build", backend)
    where = {p.where for p in err.value.problems}
    assert {CHARS.cell(0, "health_track"), CHARS.cell(1, "extra"), UNITS.cell(0, "hardness_min")} <= where
    assert backend.sheets == before


def test_e10_x8_a_battle_file_with_track_extra_and_hardness_loads_into_the_tracker_and_back() -> None:
    backend = blank()
    _typed_extras(backend)
    run_steps(SUBJECT, "build", backend)
    data = export_steps(SUBJECT, backend)["battle"]
    again = blank()
    load_steps(SUBJECT, again, load_battle(copy.deepcopy(data)))
    assert _get(again, CHARS, 2, "health_track") == "0 -1 -2 -4"
    assert _get(again, CHARS, 1, "extra") == "Yes"
    assert (_get(again, UNITS, 1, "hardness_avg"), _get(again, UNITS, 1, "hardness_min")) == (2, 2)
    back = load_battle(export_steps(SUBJECT, again)["battle"])
    assert back.characters == load_battle(data).characters and back.units == load_battle(data).units


def _split_battle(fillers: int = 0) -> Any:
    data = loop_data()
    data["orders"] = [dict(SPLIT)]
    for i in range(fillers):  # X2: 1 + 1 extra = Magnitude 1; typed Join War 0
        data["characters"].append({"name": f"Scout {i}", "role": "commander"})
        data["units"].append({"name": f"Scouts {i}", "side": "Realm", "commander": f"Scout {i}",
                              "members": [{"kind": "Extra", "count": 1}], "drill": 1, "join_war": 0})
    return load_battle(data)


def test_x23_split_unit_on_the_tracker_takes_the_next_free_units_row_and_undo_frees_it() -> None:
    """The split of test_exalted_loop_actions (Talon Left: Peleps Ama leads 10, Talon
    Sergeant follows, Magnitude 1) plays on the tracker as in the battle file, and Talon
    Left is written into the first free Units row (the third): its commander, its 9 members
    as extras, its relay, and its standing from the State.  The next tick reads it as a
    unit Build Units placed; Undo Tick frees the row again."""
    backend = blank()
    load_steps(SUBJECT, backend, _split_battle())
    events = run_steps(SUBJECT, "resolve", backend).to_json()["events"]
    engine = resolve(_split_battle())
    assert events == engine.to_json()["events"]
    split = next(e for e in events if e["kind"] == "Split Unit")
    assert split["new_unit"] == "Talon Left"
    assert [_get(backend, UNITS, 2, k) for k in ("name", "side", "commander", "extras", "relays")] == [
        "Talon Left", "Realm", "Peleps Ama", 9, "Talon Sergeant"]
    left = {u["name"]: u for u in units_json(engine.battle)}["Talon Left"]
    assert (_get(backend, UNITS, 2, "magnitude_now"), _get(backend, UNITS, 2, "formation_now")) == (
        left["magnitude"], left["formation"])
    assert "hesitating" in _get(backend, UNITS, 2, "status")
    assert export_steps(SUBJECT, backend)["battle"]["units"][2]["split_from"] == "Cathak Talon"
    second = run_steps(SUBJECT, "resolve", backend)  # the row is the unit's now: no "added after" refusal
    assert second.phase > 0
    run_steps(SUBJECT, "undo", backend)
    run_steps(SUBJECT, "undo", backend)
    assert all(_get(backend, UNITS, 2, c.key) is None for c in UNITS.columns)
    assert len(export_steps(SUBJECT, backend)["battle"]["units"]) == 2
    assert run_steps(SUBJECT, "resolve", backend).to_json()["events"] == events  # and again, the same


def test_x23_split_unit_on_a_full_tracker_is_refused_naming_it() -> None:
    """20 units fill the tracker's 20 Units rows: the split is refused by name before any
    roll, and the battle goes on without it."""
    battle = _split_battle(fillers=(UNITS.rows or 0) - 2)
    assert len(battle.units) == UNITS.rows
    backend = blank()
    load_steps(SUBJECT, backend, battle)
    report = run_steps(SUBJECT, "resolve", backend)
    (refused,) = [e for e in report.to_json()["events"] if e["kind"] == "refused"]
    assert "no free row for Talon Left" in refused["reason"] and refused["rule_ref"] == "X23"
    assert "no free row for Talon Left" in _get(backend, ORDERS, 0, "result")
    assert len(export_steps(SUBJECT, backend)["battle"]["units"]) == UNITS.rows


def test_x23_the_engine_allows_as_many_new_units_as_it_is_given_rows() -> None:
    """``new_units`` as a number: the free rows; 0 refuses the split by name, 1 plays it."""
    full = resolve(_split_battle(), new_units=0)
    (refused,) = [e for e in full.events if e["kind"] == "refused"]
    assert "no free row for Talon Left" in refused["reason"] and len(full.battle.units) == 2
    room = resolve(_split_battle(), new_units=1)
    assert [u.name for u in room.battle.units][-1] == "Talon Left"
    assert room.to_json() == resolve(_split_battle()).to_json()
