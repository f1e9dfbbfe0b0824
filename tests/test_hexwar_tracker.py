"""The hex tracker's steps over the seam (build, resolve, undo, end): the same results as
the engine on the battle file, undo restoring every cell, refusals naming their cells."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sheetsync.backends.excel import ExcelBackend
from sheetsync.core.errors import BattleStateError, InputError, SheetFormatError
from sheetsync.core.registry import find_system
from sheetsync.sheets import marks as steps
from sheetsync.sheets import session as ss
from sheetsync.sheets.backend import Formula, MemoryBackend, RangeUpdate
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.rules import aftermath, example_battle_data, resolve_turn
from sheetsync.systems.hexwar.tracker import steps as ht
from sheetsync.systems.hexwar.tracker.layout import layout

LAY = layout(None)


def example_data() -> dict[str, Any]:
    return yaml.safe_load(example_battle_data())


def tracker() -> MemoryBackend:
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    backend.write_ranges(steps.mark_updates(find_system("hexwar"), LAY.capacity))
    return backend


def loaded(data: dict[str, Any] | None = None) -> MemoryBackend:
    backend = tracker()
    ht.load_into(backend, load_battle(data or example_data()), LAY.capacity)
    return backend


def cell(backend: MemoryBackend, ref: str) -> Any:
    sheet, _, addr = ref.partition("!")
    col = ord(addr[0]) - 64
    return backend.sheets[sheet].get((int(addr[1:]), col))


def put(backend: MemoryBackend, ref: str, value: Any) -> None:
    backend.write_ranges([RangeUpdate(ref, [[value]])])


def stored_battle(backend: MemoryBackend) -> dict[str, Any] | None:
    blob = LAY.block("State_Blob").range()
    grids = backend.read_ranges(ss.read_ranges(blob))
    return ss.parse(grids[0], grids[1], blob_range=blob).battle


def visible(backend: MemoryBackend) -> dict[str, dict[tuple[int, int], Any]]:
    """Every sheet but the Log and the State, and not Battle's Last action cell."""
    out = {name: dict(cells) for name, cells in backend.sheets.items() if name not in ("Log", "State")}
    out["Battle"].pop((6, 2), None)
    return copy.deepcopy(out)


def test_h8_tracker_resolve_matches_the_engine() -> None:
    backend = loaded()
    report = steps.run("resolve", backend)
    engine = resolve_turn(load_battle(example_data())).to_json()
    got = report.to_json()
    assert got["events"] == engine["events"]
    assert got["units"] == engine["units"]
    assert report.phase == 1 and cell(backend, "Battle!B3") == 2
    # the taken rows are stamped, rolled dice written into Roll, the Log has one row per event
    assert [cell(backend, f"Moves!A{r}") for r in range(3, 7)] == [1, 1, 1, 1]
    first = engine["events"][4]
    assert cell(backend, "Attacks!I3") == first["roll"] and cell(backend, "Attacks!Q3") == "Rolled"
    assert cell(backend, "Attacks!O3") == first["casualties"] and "H7" in cell(backend, "Attacks!P3")
    kinds = [v for (r, c), v in backend.sheets["Log"].items() if c == 3]
    assert kinds.count("move") == 4 and kinds.count("attack") == 2
    # Units computed and the map follow the engine
    assert cell(backend, "Units!G4") == "0605"  # Church Knights charged through the pass
    assert cell(backend, "Units!H9") == first["casualties"]  # 1st Fist


def test_h8_a_second_resolve_takes_only_new_rows() -> None:
    backend = loaded()
    steps.run("resolve", backend)
    with pytest.raises(BattleStateError, match="no pending moves or attacks for turn 2"):
        steps.run("resolve", backend)


def test_undo_restores_every_cell_and_resolves_again_the_same() -> None:
    backend = loaded()
    before = visible(backend)
    state_before = stored_battle(backend)
    first = steps.run("resolve", backend).to_json()
    assert visible(backend) != before
    report = steps.run("undo", backend)
    assert report.phase == 1
    assert visible(backend) == before
    assert stored_battle(backend) == state_before
    assert cell(backend, "Battle!B6") == "Undo Turn 1"
    assert "Undo Turn 1" in backend.sheets["Log"].values()
    again = steps.run("resolve", backend).to_json()
    assert again["events"] == first["events"] and again["units"] == first["units"]


def test_undo_keeps_a_typed_roll_and_refuses_at_turn_1() -> None:
    backend = loaded()
    with pytest.raises(BattleStateError, match="nothing to undo"):
        steps.run("undo", backend)
    put(backend, "Attacks!I3", 5)
    steps.run("resolve", backend)
    assert cell(backend, "Attacks!Q3") is None and cell(backend, "Attacks!Q4") == "Rolled"
    steps.run("undo", backend)
    assert cell(backend, "Attacks!I3") == 5 and cell(backend, "Attacks!I4") is None
    assert isinstance(cell(backend, "Attacks!J3"), Formula)  # the live odds are back


def test_h12_end_writes_the_report() -> None:
    backend = loaded()
    res = steps.run("resolve", backend)
    report = steps.run("end", backend)
    expected = aftermath(res.result.battle)
    assert report.to_json()["units"] == expected.to_json()["units"]
    rows = [[cell(backend, f"Report!{c}{r}") for c in "ABCD"] for r in range(3, 3 + len(expected.units))]
    assert rows == [[u.side, u.name, u.casualties, u.losses] for u in expected.units]
    assert cell(backend, "Battle!B5").startswith("Battle over")
    with pytest.raises(BattleStateError, match="the battle has ended"):
        steps.run("resolve", backend)
    steps.run("undo", backend)  # reopens it
    assert cell(backend, "Report!A3") is None and cell(backend, "Battle!B3") == 2


def test_h1_h2_bad_input_is_listed_all_at_once_with_cells() -> None:
    backend = loaded()
    put(backend, "Units!C3", "3+ - x - 4")  # Caliph's Horses
    put(backend, "Units!D5", "9999")  # Human Footmen: no such hex on a 12x10 map
    put(backend, "Moves!B3", "Nobody")
    put(backend, "Attacks!B4", "Ghost")
    writes = backend.writes
    with pytest.raises(InputError) as err:
        steps.run("build", backend)
    where = {p.where: p.message for p in err.value.problems}
    assert set(where) == {"Units!C3", "Units!D5", "Moves!B3", "Attacks!B4"}, where
    assert "'3+ - x - 4' is not a counter" in where["Units!C3"]
    assert "'9999' is not a hex on this 12x10 map" in where["Units!D5"]
    assert "'Nobody' is not a unit" in where["Moves!B3"] and "'Ghost' is not a unit" in where["Attacks!B4"]
    assert backend.writes == writes
    assert "Units!C3: '3+ - x - 4' is not a counter" in str(err.value)


def test_formula_in_an_input_cell_is_refused_naming_it() -> None:
    backend = loaded()
    put(backend, "Attacks!I3", Formula("=RANDBETWEEN(1,100)"))
    put(backend, "Units!F4", Formula("=1+1"))
    writes = backend.writes
    with pytest.raises(InputError) as err:
        steps.run("resolve", backend)
    assert [p.where for p in err.value.problems] == ["Attacks!I3"]
    with pytest.raises(InputError) as err:
        steps.run("build", backend)
    assert {p.where for p in err.value.problems} == {"Units!F4", "Attacks!I3"}
    assert backend.writes == writes


def test_h4_h7_refused_rows_give_the_reason_and_cost_nothing() -> None:
    data = example_data()
    data["turn"]["moves"] += [{"unit": "Human Footmen", "to": "0604"},  # 2 hexes, moves 1
                              {"unit": "Caliph's Horses", "to": "0603"}]  # impassable
    data["turn"]["attacks"].append({"defender": "2nd Fist", "attackers": ["Church Knights"]})  # attacks twice
    backend = loaded(data)
    report = steps.run("resolve", backend)
    assert [cell(backend, f"Moves!H{r}") for r in (7, 8)] == ["refused", "refused"]
    assert "takes 2 hexes and Human Footmen moves 1" in cell(backend, "Moves!I7")
    assert "0603 is impassable" in cell(backend, "Moves!I8") and "5.1" in cell(backend, "Moves!I8")
    assert cell(backend, "Attacks!O5") is None and cell(backend, "Attacks!P5").startswith("refused: Church Knights "
                                                                                           "already joined")
    assert cell(backend, "Attacks!I5") is None  # no die was rolled for it
    plain = resolve_turn(load_battle(example_data())).to_json()
    assert report.to_json()["units"] == plain["units"]


def test_h2_the_map_shows_hexes_units_and_impassable() -> None:
    backend = loaded()
    area = LAY.areas["Map_Grid"]
    grid = backend.read_ranges([area.range()])[0]
    from sheetsync.systems.hexwar.tracker.layout import map_cell

    top, col = map_cell(4, 5)
    assert grid[top][col] == "0405"
    assert grid[top + 1][col] == "Sun Knights (Party)\nFirst Archer Company (Party)"
    top, col = map_cell(6, 1)
    assert grid[top + 1][col] == "impassable"
    top, col = map_cell(13, 1)  # outside the 12x10 map
    assert all(row[col] is None for row in grid if col < len(row))


def test_h12_state_write_does_not_grow_with_the_turns() -> None:
    data = example_data()
    data["turn"] = {"initiative": "Party", "moves": [{"unit": "Caliph's Horses", "to": "0204"}], "attacks": []}
    backend = loaded(data)
    sizes = []
    real = backend.write_ranges

    def counting(updates: list[RangeUpdate]) -> None:
        sizes.append(sum(len(str(v)) for u in updates if u.range.startswith("State!")
                         for row in u.values for v in row if v is not None))
        real(updates)

    backend.write_ranges = counting  # type: ignore[method-assign]
    for turn in range(1, 11):
        if turn > 1:
            put(backend, f"Moves!B{2 + turn}", "Caliph's Horses")
            put(backend, f"Moves!C{2 + turn}", "0204" if turn % 2 else "0304")
        steps.run("resolve", backend)
    resolves = [s for s in sizes if s > 100]
    assert len(resolves) == 10
    assert resolves[-1] <= 1.2 * resolves[0], resolves
    assert cell(backend, "Battle!B3") == 11


def test_a_unit_renamed_after_build_is_refused_with_its_cell() -> None:
    backend = loaded()
    put(backend, "Units!A7", "Moon Knights")
    with pytest.raises(InputError, match="Units!A7: holds 'Moon Knights', not 'Sun Knights'.*Build Units again"):
        steps.run("resolve", backend)


def test_a_battle_larger_than_the_tracker_is_refused() -> None:
    data = example_data()
    data["map"] = {"columns": 40, "rows": 10, "impassable": []}
    backend = tracker()
    with pytest.raises(InputError, match="the tracker holds 20 map columns; this battle has 40"):
        ht.load_into(backend, load_battle(data), LAY.capacity)
    data = example_data()
    data["units"] = [{"name": f"U{i}", "side": "A" if i % 2 else "B", "counter": "1 - 1 - 1 - 1",
                      "hex": f"{1 + i % 12:02d}{1 + i // 12:02d}"} for i in range(55)]
    data["map"] = {"columns": 12, "rows": 10, "impassable": []}
    data.pop("turn")
    with pytest.raises(InputError, match="the tracker holds 40 units; this battle has 55: make a new tracker"):
        ht.load_into(backend, load_battle(data), LAY.capacity)
    assert backend.writes == 1  # only the mark


def test_build_after_a_resolved_turn_is_refused() -> None:
    backend = loaded()
    steps.run("resolve", backend)
    with pytest.raises(BattleStateError, match="Undo Turn back to turn 1"):
        steps.run("build", backend)


def test_export_gives_a_battle_file_that_undoes() -> None:
    backend = loaded()
    steps.run("resolve", backend)
    out = ht.export(backend)
    battle = load_battle(out["battle"])
    assert out["turn"] == 2 and len(battle.history) == 1
    from sheetsync.systems.hexwar.rules import undo

    assert undo(battle).units == load_battle(example_data()).units


def test_excel_backend_load_resolve_undo(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name in LAY.sheets:
        wb.create_sheet(name)
    path = tmp_path / "hex.xlsx"
    wb.save(path)
    backend = ExcelBackend(path)
    backend.write_ranges(steps.mark_updates(find_system("hexwar"), LAY.capacity))
    ht.load_into(backend, load_battle(example_data()))
    engine = resolve_turn(load_battle(example_data())).to_json()
    assert steps.run("resolve", ExcelBackend(path)).to_json()["units"] == engine["units"]
    fresh = ExcelBackend(path)
    assert fresh.read_ranges(["Moves!A3:A3"])[0] == [[1]]
    steps.run("undo", ExcelBackend(path))
    again = ExcelBackend(path)
    assert again.read_ranges(["Moves!A3:A6", "Battle!B3:B3"]) == [[], [[1]]]
    assert steps.run("resolve", again).to_json()["events"] == engine["events"]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), rolls=st.lists(st.one_of(st.none(), st.integers(1, 100)), min_size=2,
                                                    max_size=2))
def test_resolve_then_undo_round_trips_the_state(seed: int, rolls: list[int | None]) -> None:
    data = example_data()
    data["seed"] = seed
    for attack, roll in zip(data["turn"]["attacks"], rolls, strict=True):
        if roll is not None:
            attack["roll"] = roll
    backend = loaded(data)
    before, sheets = stored_battle(backend), visible(backend)
    steps.run("resolve", backend)
    steps.run("undo", backend)
    assert stored_battle(backend) == before
    assert visible(backend) == sheets


def test_undo_of_a_turn_from_the_battle_file_types_its_orders_again() -> None:
    played = resolve_turn(load_battle(example_data())).battle
    backend = tracker()
    ht.load_into(backend, played, LAY.capacity)
    assert cell(backend, "Battle!B3") == 2 and cell(backend, "Moves!B3") is None
    steps.run("undo", backend)
    assert stored_battle(backend) == stored_battle(loaded())
    assert [cell(backend, f"Moves!B{r}") for r in range(3, 7)] == ["1st Fist", "2nd Fist", "Drow Infantry",
                                                                   "Church Knights"]
    assert cell(backend, "Attacks!C4") == "1st Fist" and cell(backend, "Attacks!D4") == "Drow Infantry"


def _drawn(tmp_path: Path) -> Path:
    from sheetsync.sheets.draw import draw_workbook
    from sheetsync.systems.hexwar.tracker.formulas import house_rule_rows

    system = find_system("hexwar")
    wb = draw_workbook(LAY, captions=[s.caption for s in system.steps], house_rules=house_rule_rows())
    path = tmp_path / "drawn.xlsx"
    wb.save(path)
    return path


def test_a_drawn_workbook_keeps_its_headers_through_the_steps(tmp_path: Path) -> None:
    path = _drawn(tmp_path)
    before = openpyxl.load_workbook(path)
    heads = {name: [c.value for c in before[name][1] if c.value is not None] for name in ("State", "Log")}
    ht.load_into(ExcelBackend(path), load_battle(example_data()))
    steps.run("resolve", ExcelBackend(path))
    steps.run("undo", ExcelBackend(path))
    after = openpyxl.load_workbook(path)
    assert {name: [c.value for c in after[name][1] if c.value is not None] for name in ("State", "Log")} == heads
    assert after["Attacks"]["J3"].data_type == "f"  # the live S is back on the row undone


@pytest.mark.libreoffice
def test_h11_live_odds_of_a_loaded_tracker_match_the_engine_in_libreoffice(tmp_path: Path) -> None:
    from libreoffice import error_cells, recalc_and_convert, require_libreoffice

    from sheetsync.systems.hexwar.rules import preview_attacks

    require_libreoffice()
    path = _drawn(tmp_path)
    ht.load_into(ExcelBackend(path), load_battle(example_data()))
    steps.run("resolve", ExcelBackend(path))
    steps.run("undo", ExcelBackend(path))  # the rows are pending again: formulas back over the values
    assert error_cells(path) == []
    calc = openpyxl.load_workbook(recalc_and_convert(path, tmp_path / "calc"), data_only=True)["Attacks"]
    preview = preview_attacks(load_battle(example_data()))
    got = [[calc[f"{c}{3 + i}"].value for c in "JKL"] for i in range(len(preview))]
    assert got == [[p.strength, p.defense, p.chance] for p in preview]


def test_google_sheets_resolve_is_one_read_and_one_write() -> None:
    from fake_sheets_api import FakeSheetsServer, fake_client

    from sheetsync.backends.gsheets import GSheetsBackend

    with FakeSheetsServer() as server:
        key = server.create_spreadsheet("Hex", sheets=LAY.sheets)
        backend = GSheetsBackend(fake_client(server.url), key, sleep=lambda _s: None)
        backend.write_ranges(steps.mark_updates(find_system("hexwar"), LAY.capacity))
        ht.load_into(backend, load_battle(example_data()))
        engine = resolve_turn(load_battle(example_data())).to_json()
        for action in ("resolve", "undo", "resolve"):
            before = backend.request_count
            report = steps.run(action, backend)
            assert backend.request_count - before == 2, action
        assert report.to_json()["events"] == engine["events"]
        again = GSheetsBackend(fake_client(server.url), key)
        assert again.read_ranges(["Moves!A3:A6"])[0] == [[1], [1], [1], [1]]


def test_undo_skips_the_record_of_a_step_whose_state_write_was_overwritten() -> None:
    backend = loaded()
    twin = MemoryBackend(copy.deepcopy(backend.sheets))
    put(twin, "Attacks!I3", 1)  # the other Tracker typed a different die for the same turn
    steps.run("resolve", backend)
    other = steps.run("resolve", twin)
    backend.write_ranges(other.updates)  # its write lands last: its State stands, both records are there
    records = [v for (r, c), v in backend.sheets["State"].items() if c == 4]
    assert len(records) == 2 and records[0] != records[1]
    # issue 26, item 2: the next step reports the lost resolve once, then the undo goes ahead
    with pytest.raises(BattleStateError, match="ran at the same moment"):
        steps.run("undo", backend)
    steps.run("undo", backend)
    undone = {r for (r, c), v in backend.sheets["State"].items() if c == 6 and v == "undone"}
    tokens = {r: v for (r, c), v in backend.sheets["State"].items() if c == 4}
    assert [tokens[r] for r in undone] == [records[1]]  # the step that stands
    assert stored_battle(backend) == stored_battle(loaded())


def test_session_accepts_only_records_of_steps_in_its_journal() -> None:
    session = ss.Session(rev=3, steps=[[1, "aa"], [2, "bb"], [3, "cc"]], records=[
        ss.Record(3, 2, "2:bb:resolve:1", {"turn": 1}),
        ss.Record(4, 3, "3:cc:resolve:2", {"turn": 2}),
        ss.Record(5, 3, "3:zz:resolve:2", {"turn": 2}),  # its blob write was overwritten
        ss.Record(6, 4, "4:dd:resolve:3", {"turn": 3}),  # newer than the blob
    ])
    assert session.undo_record() == session.records[1]
    assert session.undo_record(turn=1) == session.records[0]
    assert session.undo_record(turn=3) is None
    old = ss.Session(rev=30, steps=[[r, f"s{r}"] for r in range(11, 31)],
                     records=[ss.Record(3, 5, "5:s5:resolve:2", {"turn": 2})])
    assert old.undo_record() == old.records[0]  # older than the journal's window


def test_session_blob_round_trips_in_pieces() -> None:
    big = {"units": ["x" * 1000] * 70}  # 70,000 characters: three pieces
    done = ss.commit(ss.Session(), mark="hexwar@1", action="build", turn=1, battle=big, extra={"ended": False})
    pieces = [row[0] for row in done.update.values if row[0] is not None]
    assert len(pieces) == 3 and len(done.update.values) == 400
    back = ss.parse([[p] for p in pieces], [], mark="hexwar@1")
    assert back.battle == big and back.rev == 1 and back.steps == [[1, done.step]] and back.extra == {"ended": False}
    with pytest.raises(SheetFormatError, match="not 'bbn@1'"):
        ss.parse([[p] for p in pieces], [], mark="bbn@1")


def test_table_locates_paths_and_writes_only_the_columns_asked() -> None:
    from sheetsync.sheets import table

    where = {"units[3]": "Units!A6", "turn.moves[0].path": "Moves!D3"}
    assert table.locate("units[3].counter", where) == "Units!A6"
    assert table.locate("turn.moves[0].path[2]", where) == "Moves!D3"
    assert table.locate("map.rows", where) is None
    units = LAY.block("Units_Table")
    update = table.block_update(units, [{"hex": "0405", "status": "in the field"}], 2, keys=["hex", "status"])
    assert update.range == "Units!G5:N5" and update.values == [["0405"] + [None] * 6 + ["in the field"]]
    with pytest.raises(KeyError, match="'name' is outside"):
        table.block_update(units, [{"name": "X"}], 0, keys=["hex", "status"])
    with pytest.raises(ValueError, match="holds 40 rows"):
        table.block_update(units, [{}] * 2, 39)
    problems: list = []
    rows = table.read_block(units, [[None] * 6, ["A", "B", "junk", "0405", "corps", "many"]], problems)
    assert [r.offset for r in rows] == [1]
    assert [p.where for p in problems] == ["Units!C4", "Units!E4", "Units!F4"]
