"""Issue 10 follow-ups on the Exalted tracker's sheets: the Orders ``Target dice`` column
(X23, X24: the second unit's command roll), a merged unit's status (X24), and the typed
health track, extra flag (E1, E10), unit Hardness (X8), ammunition and fortified position
(X31) and cover (X16) columns.  Each bad cell is named and nothing is written; a battle
file with these keys loads into a tracker and back."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_exalted_loop_actions import MERGE, SPLIT
from test_exalted_loop_actions import _data as loop_data
from test_exalted_tracker import FILE, LAY, SUBJECT, blank, type_battle

from sheetsync.app.usecases import export_steps, load_steps, run_steps
from sheetsync.core.errors import InputError
from sheetsync.sheets.backend import MemoryBackend, RangeUpdate
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.rules.battle import resolve, units_json
from sheetsync.systems.exalted.rules.traits import derive_traits
from sheetsync.systems.exalted.tracker.cells import unit_rows
from sheetsync.systems.exalted.tracker.layout import TRACK

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
    backend.write_ranges([RangeUpdate(cell, [["2s"]]), RangeUpdate(ORDERS.cell(1, "dice"), [[None]])])
    run_steps(SUBJECT, "build", backend)
    orders = export_steps(SUBJECT, backend)["battle"]["orders"]
    assert orders[0]["target_dice"] == "2s"


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


# --- X16 cover, X31 ammunition and fortified position on the Units sheet ---------------------

def _terrain_file(**units: dict[str, Any]) -> dict[str, Any]:
    """test_exalted_tracker's battle file with keys added to its units by name."""
    data = copy.deepcopy(FILE)
    for unit in data["units"]:
        unit.update(units.get(unit["name"].split()[0], {}))
    return data


def _units_equal_engine(backend: MemoryBackend, engine_battle: Any) -> None:
    """Every computed Units cell is the engine's own (sheet_views over the engine's battle)."""
    expected = unit_rows(engine_battle)
    outputs = [c.key for c in UNITS.columns if not c.is_input]
    for i, row in enumerate(expected):
        assert {k: _get(backend, UNITS, i, k) for k in outputs} == {k: row.get(k) for k in outputs}


def test_x31_typed_ammunition_and_fortified_load_spend_a_volley_and_export_back() -> None:
    """The Talon carries 6 arrows (typed): its ranged Attack on long tick 0 spends a volley
    of 3, so 3 are left, on the Units sheet as in the battle file.  Typed as fortified with
    no ammunition, it starts with 7 volleys = 21 arrows and keeps 18."""
    for talon, start, left in (({"ammunition": 6}, 6, 3), ({"fortified": True}, 21, 18)):
        data = _terrain_file(Cathak=talon)
        backend = blank()
        load_steps(SUBJECT, backend, load_battle(copy.deepcopy(data)))
        assert _get(backend, UNITS, 0, "ammunition") == talon.get("ammunition")
        assert _get(backend, UNITS, 0, "fortified") == ("Yes" if talon.get("fortified") else "No")
        assert _get(backend, UNITS, 0, "ammunition_now") == start
        assert _get(backend, UNITS, 1, "ammunition_now") is None  # the mob has no bows
        report = run_steps(SUBJECT, "resolve", backend)
        engine = resolve(load_battle(copy.deepcopy(data)))
        assert report.to_json()["events"] == engine.to_json()["events"]
        volley = next(e for e in engine.events if e["kind"] == "Attack")
        assert (volley["unit"], volley["attack"]) == ("Cathak Talon", "Ranged")
        state = engine.battle.state_of("Cathak Talon")
        assert state is not None and state.ammunition == left
        assert _get(backend, UNITS, 0, "ammunition_now") == left
        _units_equal_engine(backend, engine.battle)
        exported = export_steps(SUBJECT, backend)["battle"]["units"][0]
        assert {k: exported.get(k) for k in talon} == talon
        assert load_battle(export_steps(SUBJECT, backend)["battle"]).units == engine.battle.units


def test_x31_a_unit_out_of_arrows_is_refused_on_the_orders_sheet() -> None:
    data = _terrain_file(Cathak={"ammunition": 2})
    backend = blank()
    load_steps(SUBJECT, backend, load_battle(copy.deepcopy(data)))
    report = run_steps(SUBJECT, "resolve", backend)
    refused = [e for e in report.to_json()["events"] if e["kind"] == "refused"]
    assert refused and refused[0]["rule_ref"] == "X31" and "2 arrows left" in refused[0]["reason"]
    assert report.to_json()["events"] == resolve(load_battle(copy.deepcopy(data))).to_json()["events"]
    assert "2 arrows left" in _get(backend, ORDERS, 0, "result")
    assert _get(backend, UNITS, 0, "ammunition_now") == 2


def test_x16_cover_on_the_units_sheet_adds_to_the_dv_of_an_attack_on_the_unit() -> None:
    """The Bandit Mob stands in 60% cover: the largest entry not above is 50% = DV 2 (X16),
    so the Talon's volley meets the mob's DV with +2, in its event and in the Orders DV
    cell; the result is the battle file's."""
    data = _terrain_file(Bandit={"cover": 60})
    plain = resolve(load_battle(copy.deepcopy(FILE)))
    backend = blank()
    load_steps(SUBJECT, backend, load_battle(copy.deepcopy(data)))
    assert _get(backend, UNITS, 1, "cover") == 60
    dv_cell = _get(backend, ORDERS, 0, "dv")
    report = run_steps(SUBJECT, "resolve", backend)
    engine = resolve(load_battle(copy.deepcopy(data)))
    assert report.to_json()["events"] == engine.to_json()["events"]
    attack = next(e for e in engine.events if e["kind"] == "Attack")
    before = next(e for e in plain.events if e["kind"] == "Attack")
    assert {"source": "cover 60%", "amount": 2, "rule": "X16"} in attack["dv"]["breakdown"]
    assert attack["dv"]["value"] == before["dv"]["value"] + 2 == dv_cell
    _units_equal_engine(backend, engine.battle)
    assert export_steps(SUBJECT, backend)["battle"]["units"][1]["cover"] == 60


def test_x16_x31_typed_on_the_tracker_build_reads_them_into_the_battle() -> None:
    backend = blank()
    type_battle(backend)
    backend.write_ranges([RangeUpdate(UNITS.cell(0, "ammunition"), [[9]]),
                          RangeUpdate(UNITS.cell(0, "fortified"), [["Yes"]]),
                          RangeUpdate(UNITS.cell(1, "cover"), [[90]])])
    run_steps(SUBJECT, "build", backend)
    battle = load_battle(export_steps(SUBJECT, backend)["battle"])
    talon, mob = battle.units
    assert (talon.ammunition, talon.fortified, mob.cover) == (9, True, 90)
    assert _get(backend, UNITS, 0, "ammunition_now") == 9


def test_x16_x31_bad_cover_ammunition_and_fortified_cells_are_all_named_and_nothing_is_written() -> None:
    """Cover 130% is past 100 (the loader's own message, at the cell); -1 arrows, and a
    Fortified cell that is neither Yes nor No: every cell at once, nothing written."""
    backend = blank()
    type_battle(backend)
    cover, ammo, fort = UNITS.cell(1, "cover"), UNITS.cell(0, "ammunition"), UNITS.cell(0, "fortified")
    backend.write_ranges([RangeUpdate(cover, [[130]]), RangeUpdate(ammo, [[-1]]), RangeUpdate(fort, [["maybe"]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "build", backend)
    where = {p.where: p.message for p in err.value.problems}
    assert {cover, ammo, fort} <= set(where), where
    assert "less than or equal to 100" in where[cover]
    assert backend.sheets == before


TRAIT_KEYS: dict[str, dict[str, Any]] = {
    "Cathak": {"might_bonus": 1, "perfect_morale": True, "ranged_damage_type": "Bashing", "rested": False},
    "Bandit": {"close_damage_type": "Bashing", "mount": "Horse", "steed_valor": 1, "close_weapons": False},
    "Lone": {"solo": True},
}
"""X1, X4-X6, X10, E9: the UnitSpec keys that have a Units column since issue 10 (X16, X31)
(``mixed_weapons``, X6, still has none: test_exalted_tracker refuses it by name)."""


def _traits_file() -> dict[str, Any]:
    data = _terrain_file(**TRAIT_KEYS)
    data["characters"].append({"name": "Lone Blade", "role": "commander", "dexterity": 4, "charisma": 3})
    data["units"].append({"name": "Lone Blade", "side": "Realm", "commander": "Lone Blade", "solo": True})
    return data


def test_x1_x10_unit_keys_with_columns_load_resolve_and_export_back_unchanged() -> None:
    """Might bonus 1 (X5), Perfect Morale (X10), Bashing damage (E9), unrested (X4), a horse of Valor 1 (X10), no close weapons (X6) and a solo unit (X1) are
    typed on the Units sheet; the tracker's long tick and traits are the battle file's, and
    the export gives every key back."""
    data = _traits_file()
    battle = load_battle(copy.deepcopy(data))
    backend = blank()
    load_steps(SUBJECT, backend, battle)
    assert [_get(backend, UNITS, 0, k) for k in ("might_bonus", "perfect_morale", "ranged_damage_type",
                                                  "rested", "close_weapons")] == [1, "Yes", "Bashing", "No", "Yes"]
    assert [_get(backend, UNITS, 1, k) for k in ("close_damage_type", "mount", "steed_valor", "close_weapons")] == [
        "Bashing", "Horse", 1, "No"]
    assert (_get(backend, UNITS, 2, "solo"), _get(backend, UNITS, 2, "t_magnitude")) == ("Yes", 0)
    mob = battle.unit("Bandit Mob")
    assert mob is not None and _get(backend, UNITS, 1, "t_morale") == derive_traits(mob.spec).morale.value == 1
    assert _get(backend, UNITS, 0, "t_might") == 2  # Might 1 + bonus 1
    report = run_steps(SUBJECT, "resolve", backend)
    engine = resolve(load_battle(copy.deepcopy(data)))
    assert report.to_json()["events"] == engine.to_json()["events"]
    _units_equal_engine(backend, engine.battle)
    exported = export_steps(SUBJECT, backend)["battle"]["units"]
    for unit in exported:
        typed = TRAIT_KEYS[unit["name"].split()[0]]
        assert {k: unit.get(k) for k in typed} == typed
    assert load_battle(export_steps(SUBJECT, backend)["battle"]).units == engine.battle.units


def test_x6_x10_bad_damage_type_and_steed_valor_cells_are_named() -> None:
    backend = blank()
    type_battle(backend)
    kind, steed = UNITS.cell(0, "close_damage_type"), UNITS.cell(1, "steed_valor")
    backend.write_ranges([RangeUpdate(kind, [["Fire"]]), RangeUpdate(steed, [[-2]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "build", backend)
    assert {kind, steed} <= {p.where for p in err.value.problems}
    assert backend.sheets == before
