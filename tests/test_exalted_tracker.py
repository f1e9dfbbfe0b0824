"""The Exalted tracker workbook over the seam: a blank tracker typed in (Characters, Units,
Orders), Build Units, Next Tick, Undo Tick, End Battle on the memory backend and on a real
openpyxl workbook file with the same cells and the engine's own results; bad cells named by
address with nothing written."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from fake_sheets_api import FakeSheetsServer, fake_client

from sheetsync.app.gsheet_cli import copy_tracker, house_rule_rows_of, tracker_ranges
from sheetsync.app.usecases import check_steps, export_steps, load_steps, run_steps
from sheetsync.backends.excel import ExcelBackend
from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.backends.gsheets_draw import init_requests_for
from sheetsync.backends.xlwings_backend import XlwingsBackend
from sheetsync.backends.xlwings_remote import apply_actions, payload_from_openpyxl, remote_book
from sheetsync.core.errors import BattleStateError, InputError
from sheetsync.core.registry import find_system
from sheetsync.sheets import marks as steps
from sheetsync.sheets import session as ss
from sheetsync.sheets.backend import Formula, MemoryBackend, RangeUpdate
from sheetsync.sheets.draw import draw_workbook
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.rules.battle import resolve
from sheetsync.systems.exalted.rules.breakdowns import aftermath_json
from sheetsync.systems.exalted.tracker import steps as et
from sheetsync.systems.exalted.tracker.cells import aftermath_rows
from sheetsync.systems.exalted.tracker.layout import DieCell, house_rule_rows, layout

LAY = layout(None)
SYSTEM = find_system("exalted")
SUBJECT = et.ExaltedSteps(LAY.capacity)

CHARACTERS: list[dict[str, Any]] = [
    {"name": "Cathak Reyen", "role": "commander", "dexterity": 4, "strength": 3, "stamina": 3, "charisma": 4,
     "wits": 3, "essence": 2, "valor": 3, "willpower": 7, "abilities": "Melee 4, Archery 3, War 4, Dodge 3, Awareness 3",
     "mortal": "No", "close_weapon": "Straight sword", "close_accuracy": 1, "close_damage": 3,
     "close_damage_type": "Lethal", "close_defense": 1, "close_speed": 4, "ranged_weapon": "Long bow",
     "ranged_ability": "Archery", "ranged_accuracy": 1, "ranged_damage": 3, "ranged_damage_type": "Lethal",
     "ranged_speed": 5, "shield_dv": 1, "armor_soak": 5},
    {"name": "Talon Sergeant", "role": "relay", "charisma": 3, "wits": 3, "abilities": "War 3, Melee 3"},
    {"name": "Red Harrow", "role": "commander", "dexterity": 3, "strength": 3, "stamina": 3, "charisma": 3,
     "wits": 2, "valor": 3, "abilities": "Melee 3, War 2, Dodge 1, Awareness 2", "close_weapon": "Axe",
     "close_accuracy": 0, "close_damage": 4, "close_damage_type": "Lethal", "close_defense": 0},
    {"name": "Mara the Thatcher", "role": "member", "wits": 3, "willpower": 4},
]
UNITS: list[dict[str, Any]] = [
    {"name": "Cathak Talon", "side": "Realm", "commander": "Cathak Reyen", "extras": 24, "formation": "Close",
     "drill": 4, "might": 1, "avg_dexterity": 3, "avg_strength": 3, "avg_stamina": 3, "avg_valor": 3,
     "close_ability": 3, "close_accuracy": 1, "close_damage": 3, "ranged_weapons": "Yes", "ranged_ability": 3,
     "ranged_accuracy": 1, "ranged_damage": 3, "avg_lethal_soak": 5, "avg_fatigue": 1, "shields": "Yes",
     "relays": "Talon Sergeant", "join_war": "9 7 10 2 4"},
    {"name": "Bandit Mob", "side": "Bandits", "commander": "Red Harrow", "extras": 119, "formation": "Unordered",
     "drill": 1, "avg_dexterity": 2, "avg_strength": 2, "avg_stamina": 2, "avg_valor": 3, "close_ability": 2,
     "close_damage": 3, "avg_lethal_soak": 2, "named_members": "Mara the Thatcher"},
]
ORDERS: list[dict[str, Any]] = [
    {"tick": 0, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Ranged"},
    {"tick": 4, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon", "option": "Close",
     "weather": "Hot"},
    {"tick": 5, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Close"},
]
SEED = 6

FILE: dict[str, Any] = {
    "system": "exalted", "seed": SEED,
    "characters": [
        {"name": "Cathak Reyen", "role": "commander", "dexterity": 4, "strength": 3, "stamina": 3, "charisma": 4,
         "wits": 3, "essence": 2, "valor": 3, "willpower": 7, "mortal": False,
         "abilities": {"Melee": 4, "Archery": 3, "War": 4, "Dodge": 3, "Awareness": 3},
         "close_weapon": {"name": "Straight sword", "accuracy": 1, "damage": 3, "damage_type": "Lethal",
                          "defense": 1, "speed": 4},
         "ranged_weapon": {"name": "Long bow", "ability": "Archery", "accuracy": 1, "damage": 3,
                           "damage_type": "Lethal", "speed": 5, "ranged": True},
         "shield_dv": 1, "armor_soak": 5},
        {"name": "Talon Sergeant", "role": "relay", "charisma": 3, "wits": 3, "abilities": {"War": 3, "Melee": 3}},
        {"name": "Red Harrow", "role": "commander", "dexterity": 3, "strength": 3, "stamina": 3, "charisma": 3,
         "wits": 2, "valor": 3, "abilities": {"Melee": 3, "War": 2, "Dodge": 1, "Awareness": 2},
         "close_weapon": {"name": "Axe", "accuracy": 0, "damage": 4, "damage_type": "Lethal", "defense": 0}},
        {"name": "Mara the Thatcher", "role": "member", "wits": 3, "willpower": 4},
    ],
    "units": [
        {"name": "Cathak Talon", "side": "Realm", "commander": "Cathak Reyen", "members": [{"kind": "Extra",
                                                                                              "count": 24}],
         "drill": 4, "might": 1, "formation": "Close", "avg_dexterity": 3, "avg_strength": 3, "avg_stamina": 3,
         "avg_valor": 3, "close_ability": 3, "close_accuracy": 1, "close_damage": 3, "ranged_weapons": True,
         "ranged_ability": 3, "ranged_accuracy": 1, "ranged_damage": 3, "avg_lethal_soak": 5, "avg_fatigue": 1,
         "shields": True, "special_characters": {"relays": ["Talon Sergeant"]}, "join_war": "9 7 10 2 4"},
        {"name": "Bandit Mob", "side": "Bandits", "commander": "Red Harrow", "members": [{"kind": "Extra",
                                                                                           "count": 119}],
         "drill": 1, "formation": "Unordered", "avg_dexterity": 2, "avg_strength": 2, "avg_stamina": 2,
         "avg_valor": 3, "close_ability": 2, "close_damage": 3, "avg_lethal_soak": 2,
         "named_members": ["Mara the Thatcher"]},
    ],
    "orders": [
        {"tick": 0, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Ranged"},
        {"tick": 4, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon", "option": "Close",
         "weather": "Hot"},
        {"tick": 5, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Close"},
    ],
}
"""The battle typed above, as a battle file: the engine's reference."""


def blank() -> MemoryBackend:
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    backend.write_ranges(steps.mark_updates(SYSTEM, LAY.capacity))
    house = LAY.block("HouseRules_Table")
    backend.write_ranges([RangeUpdate(house.range(), [list(r) for r in house_rule_rows()])])
    return backend


def typed_rows(block_name: str, rows: list[dict[str, Any]], offset: int = 0) -> RangeUpdate:
    """Rows as a Tracker types them: the raw cell values, column by column."""
    block = LAY.block(block_name)
    return RangeUpdate(block.row_range(offset, len(rows)), [[r.get(c.key) for c in block.columns] for r in rows])


def type_battle(backend: Any) -> None:
    backend.write_ranges([typed_rows("Characters_Table", CHARACTERS), typed_rows("Units_Table", UNITS),
                          typed_rows("Orders_Table", ORDERS), RangeUpdate("Battle!B6", [[SEED]])])


def cell(backend: MemoryBackend, ref: str) -> Any:
    sheet, _, addr = ref.partition("!")
    letters = addr.rstrip("0123456789")
    col = 0
    for ch in letters:
        col = col * 26 + ord(ch) - 64
    return backend.sheets[sheet].get((int(addr[len(letters):]), col))


def visible(backend: MemoryBackend) -> dict[str, dict[tuple[int, int], Any]]:
    """Every sheet but the Log and the State, and not the Battle sheet's Last action."""
    out = {name: dict(cells) for name, cells in backend.sheets.items() if name not in ("Log", "State")}
    out["Battle"].pop((5, 2), None)
    return copy.deepcopy(out)


def engine_ticks(count: int) -> list[Any]:
    battle = load_battle(copy.deepcopy(FILE))
    out = []
    for _ in range(count):
        result = resolve(battle)
        out.append(result)
        battle = result.battle
    return out


def run_battle(backend: Any) -> list[Any]:
    """build, three long ticks, undo, the last again, end: every report."""
    return [run_steps(SUBJECT, "build", backend), *(run_steps(SUBJECT, "resolve", backend) for _ in range(3)),
            run_steps(SUBJECT, "undo", backend), run_steps(SUBJECT, "resolve", backend),
            run_steps(SUBJECT, "end", backend)]


def test_e4_x17_typed_tracker_resolves_as_the_engine_does_on_the_battle_file() -> None:
    backend = blank()
    type_battle(backend)
    reports = run_battle(backend)
    engine = engine_ticks(3)
    for report, result in zip(reports[1:4], engine, strict=True):
        assert report.to_json()["events"] == result.to_json()["events"]
        assert report.to_json()["units"] == result.to_json()["units"]
    assert reports[5].to_json()["events"] == engine[2].to_json()["events"]  # undone, then the same again
    # the rows are stamped with their long tick, with the outcome the engine's
    orders = LAY.block("Orders_Table")
    assert [cell(backend, orders.cell(i, "resolved")) for i in range(3)] == [0, 4, 5]
    assert cell(backend, orders.cell(2, "outcome")) == ("hit" if engine[2].events[0]["hit"] else "miss")
    assert cell(backend, "Battle!B3") == 5
    # X40, X41: the Aftermath sheet holds the engine's aftermath
    after = aftermath_rows(aftermath_json(engine[2].battle))
    got = [{c.key: cell(backend, LAY.block("Aftermath_Table").cell(i, c.key))
            for c in LAY.block("Aftermath_Table").columns} for i in range(len(after))]
    assert got == after


def test_e1_x28_build_writes_the_engines_odds_and_traits() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    battle = load_battle(copy.deepcopy(FILE))
    odds = SYSTEM.pools_json(battle)["orders"][0]["odds"]
    orders = LAY.block("Orders_Table")
    assert cell(backend, orders.cell(0, "pool")) == odds["pool"]
    assert cell(backend, orders.cell(0, "dv")) == odds["dv"]
    assert cell(backend, orders.cell(0, "added")) == odds["successes_added"]
    assert cell(backend, orders.cell(0, "external")) == odds["external_penalty"]
    # the chance of a hit and the expected levels are live formulas over those cells
    row = orders.first_row
    for key in ("needed", "p_hit", "expected"):
        assert cell(backend, orders.cell(0, key)) == Formula(LAY.formulas[f"Orders_Table.{key}"](LAY, row))
    units = LAY.block("Units_Table")
    assert cell(backend, units.cell(1, "magnitude_now")) == 3  # X2: 120 people
    assert "X6" in cell(backend, units.cell(0, "breakdown"))
    assert cell(backend, "Ticks!A2") == "Tick" and cell(backend, "Ticks!B2") == "Cathak Talon"


def test_e5_undo_tick_restores_every_cell() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    run_steps(SUBJECT, "resolve", backend)
    before = visible(backend)
    run_steps(SUBJECT, "resolve", backend)
    assert visible(backend) != before
    run_steps(SUBJECT, "undo", backend)
    assert visible(backend) == before


def test_e1_openpyxl_workbook_file_holds_the_same_cells_as_the_memory_backend(tmp_path: Path) -> None:
    path = tmp_path / "exalted.xlsx"
    draw_workbook(LAY, captions=[s.caption for s in SYSTEM.steps], house_rules=house_rule_rows()).save(path)
    excel = ExcelBackend(path)
    type_battle(excel)
    memory = blank()
    type_battle(memory)
    got = [r.to_json() for r in run_battle(ExcelBackend(path))]
    want = [r.to_json() for r in run_battle(memory)]
    assert got == want
    wb = openpyxl.load_workbook(path)
    for name in ("Units", "Orders", "Aftermath", "Ticks", "Battle"):
        for (row, col), value in memory.sheets[name].items():
            if name == "Battle" and (row, col) == (5, 2):
                continue
            want = value.text if isinstance(value, Formula) else value  # openpyxl holds a formula as its text
            assert wb[name].cell(row=row, column=col).value == want, (name, row, col)


def test_e1_bad_cells_are_all_named_and_nothing_is_written() -> None:
    backend = blank()
    type_battle(backend)
    units, chars, orders = LAY.block("Units_Table"), LAY.block("Characters_Table"), LAY.block("Orders_Table")
    backend.write_ranges([RangeUpdate(units.cell(0, "extras"), [["many"]]),
                          RangeUpdate(chars.cell(0, "dexterity"), [["x"]]),
                          RangeUpdate(orders.cell(1, "dice"), [["7 11 3"]]),
                          RangeUpdate(units.cell(1, "commander"), [["Nobody"]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "build", backend)
    where = {p.where for p in err.value.problems}
    assert {units.cell(0, "extras"), chars.cell(0, "dexterity"), orders.cell(1, "dice"),
            units.cell(1, "commander")} <= where
    assert any("11 is not a d10 face" in p.message for p in err.value.problems)
    assert backend.sheets == before


def test_e1_die_face_outside_1_to_10_typed_later_is_refused_at_its_cell() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    dice = LAY.block("Orders_Table").cell(0, "dice")
    backend.write_ranges([RangeUpdate(dice, [["3 0 7 7 7 7 7 7"]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "resolve", backend)
    assert [p.where for p in err.value.problems] == [dice]
    assert "0 is not a d10 face" in err.value.problems[0].message
    assert backend.sheets == before


@pytest.mark.parametrize(("typed", "says"), [
    (1, ['"1" could be one die\'s face or 1 success', '"1,"', '"faces: 1"', '"1s"']),
    ("5", ['"5" could be one die\'s face or 5 successes', '"5,"', '"5s"']),
    ("9" * 4301, ["4301 digits", "far too large"]),
])
def test_issue22_a_bare_number_or_a_huge_one_in_a_die_cell_is_refused_at_its_cell(typed: Any, says: list[str]) -> None:
    """Issue 22 (E1): a Tracker who rolled one die and got a 1 types 1; that could be the
    face (a botch) or one success, so the cell is refused naming it, showing both ways to
    type it, and nothing is written.  A 4,301-digit number is a cell error too."""
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    dice = LAY.block("Orders_Table").cell(0, "dice")
    backend.write_ranges([RangeUpdate(dice, [[typed]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "resolve", backend)
    assert [p.where for p in err.value.problems] == [dice]
    for part in says:
        assert part in err.value.problems[0].message
    assert backend.sheets == before


def test_e1_die_cell_codec_reads_faces_and_successes() -> None:
    codec = DieCell()
    assert codec.decode("7, 3 10") == "7 3 10" and codec.decode("4s") == "4s" and codec.decode("2 successes") == "2s"
    assert codec.decode("7,") == "7," and codec.decode(0) == 0
    with pytest.raises(ValueError, match="could be one die's face"):  # issue 22: a bare number is ambiguous
        codec.decode(4.0)
    with pytest.raises(ValueError, match="not a d10 face"):
        codec.decode("7 11")


def test_e5_rule_breaking_order_is_refused_with_its_reason() -> None:
    backend = blank()
    type_battle(backend)
    orders = LAY.block("Orders_Table")
    backend.write_ranges([typed_rows("Orders_Table", [{**ORDERS[0], "unit": "Bandit Mob", "target": "Cathak Talon",
                                                       "option": "Close"}])])
    run_steps(SUBJECT, "build", backend)
    report = run_steps(SUBJECT, "resolve", backend)
    assert cell(backend, orders.cell(0, "outcome")) == "refused"
    assert "E5" in cell(backend, orders.cell(0, "result"))
    assert "refused" in report.message


def test_e5_check_names_the_refused_orders_cell_and_writes_nothing() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    run_steps(SUBJECT, "resolve", backend)
    orders = LAY.block("Orders_Table")
    backend.write_ranges([typed_rows("Orders_Table", [{"tick": 4, "unit": "Cathak Talon", "action": "Attack",
                                                       "target": "Bandit Mob"}], offset=3)])
    before = copy.deepcopy(backend.sheets)
    report = check_steps(SUBJECT, backend)
    assert report.phase == 4 and [r.where for r in report.refusals] == [orders.cell(3, "unit")]
    assert "E5" in report.refusals[0].reason
    assert backend.sheets == before


def test_x40_end_then_resolve_is_refused_and_undo_reopens() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    run_steps(SUBJECT, "resolve", backend)
    run_steps(SUBJECT, "end", backend)
    with pytest.raises(BattleStateError, match="ended"):
        run_steps(SUBJECT, "resolve", backend)
    run_steps(SUBJECT, "undo", backend)
    assert run_steps(SUBJECT, "resolve", backend).phase == 4


def test_e4_build_after_a_resolved_tick_is_refused() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    run_steps(SUBJECT, "resolve", backend)
    with pytest.raises(BattleStateError, match="resolved already"):
        run_steps(SUBJECT, "build", backend)


def test_e4_battle_file_loaded_into_a_tracker_resolves_as_the_file_does() -> None:
    example = yaml.safe_load(SYSTEM.example_data())
    battle = load_battle(copy.deepcopy(example))
    backend = blank()
    load_steps(SUBJECT, backend, battle)
    report = run_steps(SUBJECT, "resolve", backend)
    assert report.to_json()["events"] == resolve(load_battle(copy.deepcopy(example))).to_json()["events"]
    data = export_steps(SUBJECT, backend)["battle"]
    assert load_battle(data).tick == report.phase


def test_e4_battle_with_a_key_the_tracker_has_no_column_for_is_refused_naming_it() -> None:
    data = copy.deepcopy(FILE)
    data["units"][0]["mixed_weapons"] = True
    backend = blank()
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        load_steps(SUBJECT, backend, load_battle(data))
    assert err.value.problems[0].where == "units[0].mixed_weapons"
    assert backend.sheets == before


def test_e4_state_blob_carries_the_exalted_mark() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    blob = LAY.block("State_Blob").range()
    grids = backend.read_ranges(ss.read_ranges(blob))
    assert ss.parse(grids[0], grids[1], blob_range=blob).mark == "exalted@1"
    assert cell(backend, "State!B1") == "exalted@1"


def test_e6_a_bad_house_rule_value_is_named_at_its_cell_and_nothing_is_written() -> None:
    backend = blank()
    type_battle(backend)
    house = LAY.block("HouseRules_Table")
    row = [r[0] for r in house_rule_rows()].index("same_tick")
    backend.write_ranges([RangeUpdate(house.cell(row, "value"), [["sometimes"]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "build", backend)
    assert [p.where for p in err.value.problems] == [house.cell(row, "value")]
    assert backend.sheets == before


def test_e5_a_unit_renamed_after_build_is_refused_at_its_cell() -> None:
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    name = LAY.block("Units_Table").cell(1, "name")
    backend.write_ranges([RangeUpdate(name, [["Bandit Horde"]])])
    before = copy.deepcopy(backend.sheets)
    with pytest.raises(InputError) as err:
        run_steps(SUBJECT, "resolve", backend)
    assert [p.where for p in err.value.problems] == [name]
    assert backend.sheets == before


def test_e5_a_tick_resolved_in_the_battle_file_can_be_undone_in_the_tracker() -> None:
    example = yaml.safe_load(SYSTEM.example_data())
    start = load_battle(copy.deepcopy(example))
    after = resolve(start).battle
    backend = blank()
    load_steps(SUBJECT, backend, load_battle(SYSTEM.dump(after)))
    assert cell(backend, LAY.block("Orders_Table").cell(0, "tick")) == 4  # the orders still to come
    run_steps(SUBJECT, "undo", backend)
    data = export_steps(SUBJECT, backend)["battle"]
    assert load_battle(data).state == start.state and not load_battle(data).started


def test_e1_capacity_is_recorded_beside_the_mark_and_read_back() -> None:
    data = copy.deepcopy(FILE)
    data["characters"] += [{"name": f"Boss {i}", "role": "commander"} for i in range(30)]
    data["units"] += [{**copy.deepcopy(data["units"][1]), "name": f"Mob {i}", "commander": f"Boss {i}",
                       "named_members": []} for i in range(30)]
    battle = load_battle(data)
    cap = et.capacity_for(battle)
    assert (cap["units"], cap["characters"], cap["orders"]) == (48, 60, 320)
    backend = MemoryBackend({name: {} for name in layout(cap).sheets})
    backend.write_ranges(steps.mark_updates(SYSTEM, cap))
    assert cell(backend, "State!B1") == "exalted@1"
    assert steps.detect(backend).capacity == cap
    load_steps(et.ExaltedSteps(cap), backend, battle)
    assert cell(backend, layout(cap).block("Units_Table").cell(31, "name")) == "Mob 29"


def _xlwings_step(path: Path, action: str) -> Any:
    wb = openpyxl.load_workbook(path)
    book = remote_book(payload_from_openpyxl(wb, "VBA"))
    report = run_steps(SUBJECT, action, XlwingsBackend(book))
    alerts: list[dict[str, Any]] = []
    apply_actions(wb, book.json(), client="VBA", alerts=alerts)
    assert alerts == [], alerts
    wb.save(path)
    return report


def test_e5_every_backend_leaves_the_same_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example battle file loaded into a workbook, then build, resolve, undo, resolve,
    end on the openpyxl file, an xlwings remote payload, a Google Sheet (gspread against
    the fake Sheets API) and the memory backend: the same messages and the same cells."""
    monkeypatch.setenv("XLWINGS_LICENSE_KEY", "noncommercial")  # xlwings' remote engine: noncommercial use
    battle = load_battle(yaml.safe_load(SYSTEM.example_data()))
    cap = et.capacity_for(battle)
    lay = layout(cap)
    subject = et.ExaltedSteps(cap)
    origin = tmp_path / "origin.xlsx"
    draw_workbook(lay, captions=[s.caption for s in SYSTEM.steps], house_rules=house_rule_rows()).save(origin)
    load_steps(subject, ExcelBackend(origin), battle)
    excel, remote = tmp_path / "excel.xlsx", tmp_path / "remote.xlsx"
    excel.write_bytes(origin.read_bytes())
    remote.write_bytes(origin.read_bytes())
    ranges = tracker_ranges(lay)
    with FakeSheetsServer() as server:
        key = server.create_spreadsheet("exalted")
        google = GSheetsBackend(fake_client(server.url), key, sleep=lambda s: None)
        google.spreadsheet_batch_update(init_requests_for(lay, google.metadata(),
                                                          captions=[s.caption for s in SYSTEM.steps],
                                                          house_rules=house_rule_rows_of(SYSTEM)))
        copy_tracker(ExcelBackend(origin), google, lay)
        memory = MemoryBackend({name: {} for name in lay.sheets})
        copy_tracker(ExcelBackend(origin), memory, lay)
        for action in ("build", "resolve", "undo", "resolve", "end"):
            messages = {
                "excel": run_steps(subject, action, ExcelBackend(excel)).message,
                "xlwings": _xlwings_step(remote, action).message,
                "google": run_steps(subject, action, GSheetsBackend(fake_client(server.url), key,
                                                                    sleep=lambda s: None)).message,
                "memory": run_steps(subject, action, memory).message,
            }
            assert len(set(messages.values())) == 1, (action, messages)
        expected = ExcelBackend(excel).read_ranges(ranges)
        for name, backend in (("xlwings", ExcelBackend(remote)), ("google", google), ("memory", memory)):
            for rng, a, b in zip(ranges, expected, backend.read_ranges(ranges), strict=True):
                assert a == b, (name, rng)
    assert "ended" in messages["excel"]


@pytest.mark.libreoffice
def test_e1_tracker_workbook_opens_in_libreoffice_with_no_error_value(tmp_path: Path) -> None:
    from libreoffice import error_cells, require_libreoffice

    require_libreoffice()
    path = tmp_path / "exalted.xlsx"
    draw_workbook(LAY, captions=[s.caption for s in SYSTEM.steps], house_rules=house_rule_rows()).save(path)
    type_battle(ExcelBackend(path))
    run_battle(ExcelBackend(path))
    assert error_cells(path) == []


@pytest.mark.parametrize("damage", [
    lambda r: r.__setitem__("states", 5), lambda r: r.__setitem__("tick", "x"), lambda r: r.__setitem__("zz", 1),
    # issue 23: a record keeps what the tick changed, unit by unit, under short keys, and its
    # orders as rows ("o")
    lambda r: next(iter(r["changed"].values())).__setitem__("m", "big"),
    lambda r: next(iter(r["changed"].values())).__setitem__("f", "Wedge"),
    lambda r: next(iter(r["changed"].values())).__setitem__("zz", 1), lambda r: r.__setitem__("changed", 5),
    lambda r: r.pop("o"), lambda r: r.__setitem__("o", "x"), lambda r: r.__setitem__("o", [list(range(20))]),
    lambda r: r.__setitem__("o", [[0, "Nobody", "Fly"]]),
])
def test_e5_issue24_a_damaged_undo_record_is_refused_at_its_cell(damage: Any) -> None:
    """Undo records are rebuilt from the State by the standard-library models
    (``UndoRecord.model_validate``); one sheetsync did not write is refused, naming its cell,
    by Undo Tick and by Next Tick alike."""
    import json

    from sheetsync.core.errors import SheetFormatError

    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    run_steps(SUBJECT, "resolve", backend)
    sheet = backend.sheets["State"]
    addr = next(a for a, v in sheet.items() if isinstance(v, str) and '"record"' in v)
    data = json.loads(sheet[addr])
    damage(data["record"])
    sheet[addr] = json.dumps(data)
    for step in ("undo", "resolve"):
        with pytest.raises(SheetFormatError) as exc:
            run_steps(SUBJECT, step, backend)
        row, col = addr
        assert str(exc.value) == f"State!{chr(64 + col)}{row}: this undo record is not sheetsync's: restore the previous copy"
