"""A hex wargame tracker in a Google Sheet: the generic Sheets-API renderer
(``backends/gsheets_draw.py``) through the real gspread client against the fake Sheets API,
the tracker's mark read at no request of its own, and the hex steps at one read and one
write each (H1-H12)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from fake_sheets_api import FakeSheetsServer, fake_client

from sheetsync.app.gsheet_cli import house_rule_rows_of, init_spreadsheet
from sheetsync.backends.gsheets import NAMED_READ_FIELDS, READ_SLOTS, GSheetsBackend, read_slot_name
from sheetsync.backends.gsheets_draw import init_requests_for
from sheetsync.core.errors import BackendError, BattleStateError
from sheetsync.core.registry import Mark
from sheetsync.sheets import marks as steps
from sheetsync.systems.hexwar.system import SYSTEM
from sheetsync.systems.hexwar.tracker.layout import layout

LAY = layout()


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as srv:
        yield srv


def _fresh(server: FakeSheetsServer, key: str) -> GSheetsBackend:
    return GSheetsBackend(fake_client(server.url), key, sleep=lambda s: None)


def _hex_tracker(server: FakeSheetsServer) -> str:
    key = server.create_spreadsheet("Hex battle")
    init_spreadsheet(_fresh(server, key), system="hexwar")
    return key


def _grid(sheet_id: int, a1: str) -> dict[str, int]:
    from sheetsync.sheets.backend import parse_range

    rng = parse_range(f"X!{a1}")
    return {"sheetId": sheet_id, "startRowIndex": rng.row1 - 1, "endRowIndex": rng.row2 or rng.row1,
            "startColumnIndex": rng.col1 - 1, "endColumnIndex": rng.col2}


# -- init -------------------------------------------------------------------------------


def test_h1_init_is_one_batch_the_fake_accepts_whole(server: FakeSheetsServer) -> None:
    key = server.create_spreadsheet("Hex battle")
    backend = _fresh(server, key)
    server.clear_requests()
    n = init_spreadsheet(backend, system="hex")  # an alias names the system too
    api = server.api_requests()
    assert [(r.method, r.status) for r in api] == [("GET", 200), ("POST", 200)]  # metadata, one batch
    assert server.errors == []
    kinds = set(api[1].kinds)
    assert len(api[1].kinds) == n
    assert {"addSheet", "updateCells", "repeatCell", "setDataValidation", "addNamedRange",
            "addConditionalFormatRule", "addProtectedRange", "updateDimensionProperties",
            "updateBorders", "deleteSheet"} <= kinds
    book = server.spreadsheet(key)
    assert [s.title for s in book.sheets] == LAY.sheets  # Sheet1 removed, the layout's order
    hidden = {s.title for s in book.sheets if s.properties.get("hidden")}
    assert hidden == set(LAY.hidden)


def test_h1_the_mark_reads_back_hexwar_1_with_its_capacity(server: FakeSheetsServer) -> None:
    key = _hex_tracker(server)
    assert server.entered(key, "State!B1:B2") == [[{"stringValue": "hexwar@1"}],
                                                  [{"stringValue": steps.mark_updates(SYSTEM, LAY.capacity)[0].values[1][0]}]]
    tracker = steps.detect(_fresh(server, key))
    assert tracker.mark == Mark("hexwar", 1)
    assert tracker.system is SYSTEM
    assert tracker.capacity == LAY.capacity


def test_h1_a_bigger_capacity_is_drawn_and_recorded(server: FakeSheetsServer) -> None:
    key = server.create_spreadsheet("Big")
    init_spreadsheet(_fresh(server, key), system="hexwar", capacity={"units": 100})
    big = layout({"units": 100})
    assert steps.detect(_fresh(server, key)).capacity["units"] == 100
    book = server.spreadsheet(key)
    names = {n["name"]: n["range"] for n in book.named_ranges}
    units = big.block("Units_Table")
    assert names["Unit_Names"]["endRowIndex"] == units.last_row == 102
    assert book.sheet("Units").row_count >= units.last_row


def test_init_refuses_a_spreadsheet_that_has_tracker_sheets(server: FakeSheetsServer) -> None:
    key = _hex_tracker(server)
    before = server.snapshot(key)
    with pytest.raises(BattleStateError, match="already has tracker sheets"):
        init_spreadsheet(_fresh(server, key), system="hexwar")
    assert server.snapshot(key) == before


def test_battalion_init_keeps_its_own_initializer(server: FakeSheetsServer) -> None:
    key = server.create_spreadsheet("Battalion")
    init_spreadsheet(_fresh(server, key), system="battalion")
    titles = [s.title for s in server.spreadsheet(key).sheets]
    assert "Cohorts" in titles and "Units" not in titles
    assert steps.detect(_fresh(server, key)).mark.system == "bbn"


# -- what the tracker holds --------------------------------------------------------------


def _cell(server: FakeSheetsServer, key: str, a1: str) -> dict[str, Any]:
    return server.cell(key, a1)


def test_h2_named_ranges_of_blocks_cells_lists_and_names(server: FakeSheetsServer) -> None:
    key = _hex_tracker(server)
    book = server.spreadsheet(key)
    names = {n["name"]: n["range"] for n in book.named_ranges}
    ids = {s.title: s.sheet_id for s in book.sheets}
    assert {"Units_Table", "Moves_Table", "Attacks_Table", "Log_Table", "Battle_Turn", "Battle_Seed",
            "Map_Grid", "List_Sizes", "List_YesNo"} <= set(names)
    assert names["Unit_Names"] == _grid(ids["Units"], "A3:A42")
    assert names["Side_Names"] == _grid(ids["Battle"], "A15:A20")
    assert names["Battle_MapColumns"] == _grid(ids["Battle"], "B9:B9")
    assert names["List_Sizes"] == _grid(ids["Lists"], "B2:B4")
    assert server.entered(key, "Lists!B2:B4") == [[{"stringValue": v}] for v in ("battalion", "squadron", "company")]


def test_h1_h8_validations_dropdowns_bounds_and_checkboxes(server: FakeSheetsServer) -> None:
    key = _hex_tracker(server)
    moves_unit = _cell(server, key, "Moves!B3")["dataValidation"]
    assert moves_unit["condition"] == {"type": "ONE_OF_RANGE", "values": [{"userEnteredValue": "=Units!$A$3:$A$42"}]}
    assert moves_unit["strict"] is False  # the system checks the name (a unit typed before it is listed)
    assert _cell(server, key, "Attacks!H42")["dataValidation"]["condition"]["type"] == "ONE_OF_RANGE"
    size = _cell(server, key, "Units!E3")["dataValidation"]
    assert size["condition"]["values"] == [{"userEnteredValue": "=Lists!$B$2:$B$4"}] and size["strict"] is True
    roll = _cell(server, key, "Attacks!I3")["dataValidation"]["condition"]  # H8: a typed d100
    assert roll == {"type": "NUMBER_BETWEEN", "values": [{"userEnteredValue": "1"}, {"userEnteredValue": "100"}]}
    cols = _cell(server, key, "Battle!B9")["dataValidation"]["condition"]  # H2: the map's width
    assert cols["values"] == [{"userEnteredValue": "1"}, {"userEnteredValue": "20"}]
    initiative = _cell(server, key, "'House Rules'!B3")["dataValidation"]["condition"]  # H3
    assert initiative == {"type": "ONE_OF_LIST", "values": [{"userEnteredValue": "set"}, {"userEnteredValue": "contest"}]}
    flag = _cell(server, key, "'House Rules'!B7")["dataValidation"]["condition"]  # H10: a flag
    assert [v["userEnteredValue"] for v in flag["values"]] == ["Yes", "No"]
    assert "dataValidation" not in _cell(server, key, "Units!G3")  # computed: no dropdown
    buttons = LAY.block("Battle_Buttons")
    for i, step in enumerate(SYSTEM.steps):
        row = buttons.first_row + i
        assert server.entered(key, f"Battle!E{row}:F{row}") == [[{"stringValue": step.caption}, {"boolValue": False}]]
        assert _cell(server, key, f"Battle!F{row}")["dataValidation"]["condition"] == {"type": "BOOLEAN"}


def test_h11_live_formulas_and_the_house_rules_rows(server: FakeSheetsServer) -> None:
    key = _hex_tracker(server)
    attacks = LAY.block("Attacks_Table")
    for target in ("Attacks_Table.chance", "Attacks_Table.expected", "Calc_Moves.key"):
        block_name, _, col = target.partition(".")
        block = LAY.block(block_name)
        for offset in (0, (block.rows or 1) - 1):
            row = block.first_row + offset
            assert _cell(server, key, f"{block.sheet}!{block.letter(col)}{row}")["userEnteredValue"] == \
                {"formulaValue": LAY.formulas[target](LAY, row)}
    assert "userEnteredValue" not in _cell(server, key, f"Attacks!{attacks.letter('chance')}{attacks.last_row + 1}")
    rows = server.entered(key, "'House Rules'!A3:D7")
    assert [r[0]["stringValue"] for r in rows] == [r["key"] for r in house_rule_rows_of(SYSTEM)]
    assert rows[0][1] == {"stringValue": "set"} and rows[4][1] == {"stringValue": "Yes"}
    assert _cell(server, key, "Units!C2")["note"].startswith("H1")  # a header's note


def test_h1_colours_conditional_formats_at_google(server: FakeSheetsServer) -> None:
    key = _hex_tracker(server)
    book = server.spreadsheet(key)
    moves = book.sheet("Moves").conditional_formats
    refused = [r for r in moves if r["booleanRule"]["condition"] == {"type": "TEXT_EQ", "values": [{"userEnteredValue": "refused"}]}]
    assert len(refused) == 1 and refused[0]["ranges"] == [_grid(book.sheet("Moves").sheet_id, "H3:H82")]
    assert refused[0]["booleanRule"]["format"]["backgroundColor"]["red"] == pytest.approx(1.0)
    # a side's colour compares with a cell of the Battle sheet: through INDIRECT at Google
    side = [r["booleanRule"]["condition"] for r in book.sheet("Units").conditional_formats]
    assert side[0] == {"type": "CUSTOM_FORMULA",
                       "values": [{"userEnteredValue": '=AND(B3<>"",B3=INDIRECT("Battle!$A$15"))'}]}
    on_map = [r["booleanRule"]["condition"] for r in book.sheet("Map").conditional_formats]
    assert {"type": "TEXT_CONTAINS", "values": [{"userEnteredValue": "impassable"}]} in on_map
    assert len(on_map) == 7
    assert sum(1 for s in book.sheets for _ in s.conditional_formats) == \
        sum(len(c.colours) for c in LAY.colours)


def test_h1_protection_warns_and_leaves_the_inputs_open(server: FakeSheetsServer) -> None:
    key = _hex_tracker(server)
    book = server.spreadsheet(key)
    units = book.sheet("Units")
    assert len(units.protected_ranges) == 1
    protected = units.protected_ranges[0]
    assert protected["range"] == {"sheetId": units.sheet_id} and protected["warningOnly"] is True
    open_cols = {(g["startColumnIndex"], g["endColumnIndex"]) for g in protected["unprotectedRanges"]}
    block = LAY.block("Units_Table")
    inputs = {(block.first_col - 1 + i, block.first_col + i) for i, c in enumerate(block.columns) if c.is_input}
    assert open_cols == inputs and (6, 7) not in open_cols  # G, "Hex now", is computed
    battle = book.sheet("Battle").protected_ranges[0]["unprotectedRanges"]
    assert _grid(book.sheet("Battle").sheet_id, "F3:F6") in battle  # the tick boxes
    assert _grid(book.sheet("Battle").sheet_id, "B9:B9") in battle
    assert {s.title for s in book.sheets if s.protected_ranges} == set(LAY.protected)


def test_the_renderer_keeps_other_sheets_and_their_ids() -> None:
    """A spreadsheet with a sheet of its own: kept, its id not reused; a lone default
    Sheet1 is removed, last, after everything that refers to the new sheets."""
    from sheetsync.backends.gsheets_layout import SHEET_ID_BASE

    reqs = init_requests_for(LAY, {"Notes": SHEET_ID_BASE}, house_rules=[("initiative", "set", "set", "H3")])
    added = [r["addSheet"]["properties"]["sheetId"] for r in reqs if "addSheet" in r]
    assert SHEET_ID_BASE not in added and len(set(added)) == len(LAY.sheets)
    assert not any("deleteSheet" in r for r in reqs)
    house = next(r["updateCells"] for r in reqs if "updateCells" in r
                 and r["updateCells"]["start"]["sheetId"] == added[LAY.sheets.index("House Rules")])
    assert house["rows"][-1]["values"][:2] == [{"userEnteredValue": {"stringValue": "initiative"}},
                                               {"userEnteredValue": {"stringValue": "set"}}]
    assert "deleteSheet" in init_requests_for(LAY, {"Sheet1": 0})[-1]


# -- the fake is as strict as Google ------------------------------------------------------


@pytest.mark.parametrize(("request_", "message"), [
    ({"repeatCell": {"range": {"sheetId": 0}, "cell": {"userEnteredFormat": {"bold": True}},
                     "fields": "userEnteredFormat.bold"}}, "Unknown name \"bold\""),
    ({"repeatCell": {"range": {"sheetId": 0}, "cell": {"userEnteredFormat": {"horizontalAlignment": "MIDDLE"}},
                     "fields": "userEnteredFormat.horizontalAlignment"}}, "Invalid value"),
    ({"repeatCell": {"range": {"sheetId": 0}, "cell": {"userEnteredFormat": {"wrapStrategy": "WRAP"}},
                     "fields": "userEnteredFormat.wrap"}}, "field mask"),
    ({"setDataValidation": {"range": {"sheetId": 0}, "rule": {"condition": {"type": "TEXT_STARTS_WITH",
                                                                           "values": [{"userEnteredValue": "a"}]}}}},
     "not supported by data validation"),
    ({"setDataValidation": {"range": {"sheetId": 0}, "rule": {"condition": {"type": "NUMBER_BETWEEN",
                                                                           "values": [{"userEnteredValue": "1"}]}}}},
     "exactly two values"),
    ({"setDataValidation": {"range": {"sheetId": 0}, "rule": {"condition": {
        "type": "ONE_OF_RANGE", "values": [{"userEnteredValue": "=Nowhere!A1:A3"}]}}}}, "Unable to parse range"),
    ({"addConditionalFormatRule": {"index": 0, "rule": {"ranges": [{"sheetId": 0}], "booleanRule": {
        "condition": {"type": "ONE_OF_LIST", "values": [{"userEnteredValue": "a"}]},
        "format": {"backgroundColor": {"red": 1}}}}}}, "not supported by conditional formatting"),
    ({"addConditionalFormatRule": {"index": 0, "rule": {"ranges": [{"sheetId": 0}], "booleanRule": {
        "condition": {"type": "CUSTOM_FORMULA", "values": [{"userEnteredValue": "=A1=Other!$A$1"}]},
        "format": {"backgroundColor": {"red": 1}}}}}}, "use INDIRECT"),
    ({"addConditionalFormatRule": {"index": 0, "rule": {"ranges": [{"sheetId": 0}], "booleanRule": {
        "condition": {"type": "TEXT_EQ", "values": [{"userEnteredValue": "a"}]},
        "format": {"numberFormat": {"type": "PERCENT"}}}}}}, "conditional formatting can't set"),
    ({"addProtectedRange": {"protectedRange": {"range": _grid(0, "A1:B2"), "warningOnly": True,
                                               "unprotectedRanges": [_grid(0, "A1:A1")]}}}, "protected sheet"),
    ({"addProtectedRange": {"protectedRange": {"range": {"sheetId": 0}, "warningOnly": True,
                                               "editors": {"users": ["a@b.c"]}}}}, "warningOnly"),
    ({"updateDimensionProperties": {"range": {"sheetId": 0, "dimension": "COLUMNS", "startIndex": 0, "endIndex": 1},
                                    "properties": {"pixelSize": 50}, "fields": "width"}}, "field mask"),
    ({"addSheet": {"properties": {"title": "X", "gridProperties": {"rowCount": 5, "frozenRowCount": 5}}}},
     "frozenRowCount"),
])
def test_the_fake_refuses_what_google_refuses_and_changes_nothing(server: FakeSheetsServer, request_: dict[str, Any],
                                                                   message: str) -> None:
    key = server.create_spreadsheet("Strict", ["Sheet1", "Other"])
    before = server.snapshot(key)
    backend = _fresh(server, key)
    ok = {"updateCells": {"start": {"sheetId": 0, "rowIndex": 0, "columnIndex": 0},
                          "rows": [{"values": [{"userEnteredValue": {"stringValue": "x"}}]}], "fields": "userEnteredValue"}}
    with pytest.raises(BackendError, match="400") as caught:
        backend.spreadsheet_batch_update([ok, request_])
    assert message in str(caught.value)
    assert server.snapshot(key) == before  # the batch is whole or nothing
    assert server.errors == []


# -- the mark at no request of its own -----------------------------------------------------


def test_detect_is_one_get_of_the_read_ranges_and_the_step_read_is_free(server: FakeSheetsServer) -> None:
    """The mark's GET asks for the mark and the tracker's named read ranges (not the whole
    spreadsheet); it serves the step's read, once; a range outside them is asked for."""
    key = _hex_tracker(server)
    plan = SYSTEM.tracker_steps(None).read_plan("resolve")
    other = [LAY.block("Log_Table").range(), "'House Rules'!A3:D7"]
    expected = _fresh(server, key).read_ranges(plan)  # a ranged read, for comparison
    expected_other = _fresh(server, key).read_ranges(other)
    backend = _fresh(server, key)
    server.clear_requests()
    assert steps.detect(backend).mark == Mark("hexwar", 1)
    (get,) = server.api_requests()
    assert get.method == "GET" and get.query["ranges"] == [steps.HEAD_RANGE, *(read_slot_name(i)
                                                                                 for i in range(READ_SLOTS))]
    assert get.query["includeGridData"] == ["true"] and get.query["fields"] == [NAMED_READ_FIELDS]
    assert backend.read_ranges(plan) == expected
    assert len(server.api_requests()) == 1  # served from the snapshot
    assert backend.read_ranges(plan) == expected
    assert len(server.api_requests()) == 2  # the snapshot was one-shot
    backend = _fresh(server, key)
    steps.detect(backend)
    server.clear_requests()
    assert backend.read_ranges(other) == expected_other
    assert len(server.api_requests()) == 1  # not among the read ranges: asked for


def test_the_mark_is_remembered_until_the_state_sheet_is_written(server: FakeSheetsServer) -> None:
    key = _hex_tracker(server)
    backend = _fresh(server, key)
    steps.detect(backend)
    server.clear_requests()
    assert steps.detect(backend).mark == Mark("hexwar", 1)
    assert server.api_requests() == []
    from sheetsync.sheets.backend import RangeUpdate

    backend.write_ranges([RangeUpdate("State!C1", [["x"]])])
    server.clear_requests()
    steps.detect(backend)
    assert len(server.api_requests()) == 1


def test_a_tracker_from_before_the_mark_reads_as_empty(server: FakeSheetsServer) -> None:
    key = server.create_spreadsheet("Old", ["Battle", "State"])  # State sheet, no State!B1
    assert _fresh(server, key).read_mark("State!B1:B2") == []
    assert steps.detect(_fresh(server, key)).mark == Mark("bbn", 0)
    bare = server.create_spreadsheet("Bare")  # no State sheet at all
    assert steps.detect(_fresh(server, bare)).mark == Mark("bbn", 0)


def test_a_read_of_a_sheet_the_snapshot_lacks_asks_google(server: FakeSheetsServer) -> None:
    """The step's read names a sheet the spreadsheet lacks: Google's own refusal, as today."""
    key = server.create_spreadsheet("Bare")
    backend = _fresh(server, key)
    steps.detect(backend)
    server.clear_requests()
    with pytest.raises(BackendError, match="Unable to parse range"):
        backend.read_ranges(["Cohorts!A3:D5"])
    assert len(server.api_requests()) == 1


def test_a_write_drops_the_snapshot(server: FakeSheetsServer) -> None:
    from sheetsync.sheets.backend import RangeUpdate

    key = _hex_tracker(server)
    backend = _fresh(server, key)
    steps.detect(backend)
    backend.write_ranges([RangeUpdate("Battle!B7", [[42]])])
    server.clear_requests()
    assert backend.read_ranges(["Battle!B7"]) == [[[42]]]  # a new read, not the stale snapshot
    assert len(server.api_requests()) == 1


# -- the hex steps, each one GET and one POST on a fresh backend ----------------------------


def _example() -> Any:
    return SYSTEM.load(yaml.safe_load(SYSTEM.example_data()))


def test_h3_h9_h12_example_battle_steps_are_two_requests_each(server: FakeSheetsServer) -> None:
    """Needs ``sheetsync.systems.hexwar.tracker.steps`` (helper B): load the example battle, then
    resolve, undo, resolve, end, each on a fresh backend in exactly one GET and one POST."""
    from sheetsync.systems.hexwar.tracker import steps as hexwar_tracker

    key = _hex_tracker(server)
    backend = _fresh(server, key)
    server.clear_requests()
    hexwar_tracker.load_into(backend, _example())
    assert [r.method for r in server.api_requests()] == ["GET", "POST"]
    for action in ("resolve", "undo", "resolve", "end"):
        fresh = _fresh(server, key)
        server.clear_requests()
        report = steps.run(action, fresh)
        api = server.api_requests()
        assert [(r.method, r.status) for r in api] == [("GET", 200), ("POST", 200)], action
        assert fresh.request_count == 2
        assert report is not None
    assert server.errors == []
    log = _fresh(server, key).read_ranges([LAY.block("Log_Table").range()])[0]
    assert any(row[LAY.block("Log_Table").index("kind")] for row in log)

