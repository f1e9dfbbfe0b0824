"""XlwingsBackend driven through xlwings' remote engine, with openpyxl playing the client.

Each round trip is what a button press does with xlwings Server: the client's payload
(:func:`payload_from_openpyxl`), ``xw.Book(json=payload)``, the backend, and the returned
actions applied to the workbook (:func:`apply_actions`) the way the client applies them.
"""

from __future__ import annotations

import copy
import datetime as dt
import io
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import libreoffice as lo
import openpyxl
import pytest

from sheetsync.backends.xlwings_backend import XlwingsBackend, alert
from sheetsync.backends.xlwings_remote import (
    CLIENTS,
    apply_actions,
    payload_from_openpyxl,
    remote_book,
    simulate_request,
    supported_actions,
)
from sheetsync.core.errors import BackendError
from sheetsync.sheets.backend import CellValue, Formula, RangeUpdate


@pytest.fixture(autouse=True)
def noncommercial_license(monkeypatch: pytest.MonkeyPatch) -> None:
    # xlwings' remote engine is part of xlwings PRO, free for noncommercial use.
    monkeypatch.setenv("XLWINGS_LICENSE_KEY", "noncommercial")


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def battle_workbook() -> openpyxl.Workbook:
    wb = openpyxl.Workbook()
    log = wb.active
    log.title = "Log"
    log.append(["Phase", "Cohort", "Roll", "Note"])
    log.append([1, "Iron Wolves", 7, "charge"])
    log.append([1, "Red Hand", 3.5, None])
    log.append([2, "Iron Wolves", True, "rout?"])
    log["D6"] = "late entry"  # after an empty row
    rules = wb.create_sheet("House Rules")
    rules["A1"] = "Rule"
    rules["B1"] = "On"
    rules["A2"] = "Flanking"
    rules["B2"] = False
    wb.create_sheet("Empty")
    return wb


def press(
    wb: openpyxl.Workbook,
    client: str,
    action: Callable[[XlwingsBackend], Any],
    **payload_options: Any,
) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    """One button press: returns what ``action`` returned, the actions, and the alerts."""
    book = remote_book(payload_from_openpyxl(wb, client, **payload_options))
    backend = XlwingsBackend(book)
    result = action(backend)
    answer = book.json()
    alerts: list[dict[str, Any]] = []
    apply_actions(wb, answer, client=client, alerts=alerts)
    return result, answer, alerts


def reloaded(wb: openpyxl.Workbook) -> openpyxl.Workbook:
    buf = io.BytesIO()
    wb.save(buf)
    buf.seek(0)
    return openpyxl.load_workbook(buf)


# -- reading ----------------------------------------------------------------------------


def test_reads_values_block_by_block(client: str) -> None:
    wb = battle_workbook()
    backend_holder: list[XlwingsBackend] = []

    def read(backend: XlwingsBackend) -> Any:
        backend_holder.append(backend)
        return backend.read_ranges(["Log!A2:D4", "Log!B1:B1", "Log!A20:B25"])

    grids, answer, _ = press(wb, client, read)
    assert grids == [
        [[1, "Iron Wolves", 7, "charge"], [1, "Red Hand", 3.5, None], [2, "Iron Wolves", True, "rout?"]],
        [["Cohort"]],
        [],  # all empty: trailing empty rows are dropped
    ]
    backend = backend_holder[0]
    assert (backend.reads, backend.range_reads) == (1, 3)  # one xlwings read per block
    assert answer == {"actions": []}  # reading changes nothing


def test_open_ended_range_reads_to_the_end_of_the_used_range(client: str) -> None:
    wb = battle_workbook()
    grids, _, _ = press(wb, client, lambda b: b.read_ranges(["Log!A2:D", "Empty!A1:C", "Log!C4:E"]))
    assert grids[0] == [
        [1, "Iron Wolves", 7, "charge"],
        [1, "Red Hand", 3.5, None],
        [2, "Iron Wolves", True, "rout?"],
        [None, None, None, None],  # the empty row inside the range stays
        [None, None, None, "late entry"],
    ]
    assert grids[1] == []
    assert grids[2] == [[True, "rout?", None], [None, None, None], [None, "late entry", None]]


def test_open_ended_range_past_the_last_row_is_empty(client: str) -> None:
    grids, _, _ = press(battle_workbook(), client, lambda b: b.read_ranges(["Log!A50:J"]))
    assert grids == [[]]


def test_quoted_sheet_names_read_and_write(client: str) -> None:
    wb = battle_workbook()
    wb.create_sheet("O'Brien's Notes")["A1"] = "note"

    def step(backend: XlwingsBackend) -> Any:
        grids = backend.read_ranges(["'House Rules'!A1:B", "'O''Brien''s Notes'!A1"])
        backend.write_ranges([
            RangeUpdate("'House Rules'!A3:B3", [["Ambush", True]]),
            RangeUpdate("'O''Brien''s Notes'!B2", [["seen"]]),
        ])
        return grids

    grids, _, _ = press(wb, client, step)
    assert grids == [[["Rule", "On"], ["Flanking", False]], [["note"]]]
    assert [c.value for c in wb["House Rules"][3]] == ["Ambush", True]
    assert wb["O'Brien's Notes"]["B2"].value == "seen"


def test_dates_and_errors_read_as_text(client: str) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    ws["A1"] = dt.datetime(2024, 3, 5)
    ws["B1"] = dt.datetime(2024, 3, 5, 14, 30)
    ws["C1"] = "=1/0"
    cached = openpyxl.Workbook()
    cached.active.title = "S"
    cached["S"]["C1"] = "#DIV/0!"
    grids, _, _ = press(wb, client, lambda b: b.read_ranges(["S!A1:C1"]), cached_values=cached)
    assert grids == [[["2024-03-05", "2024-03-05 14:30:00", "#DIV/0!"]]]


def test_formula_cells_read_as_their_values_remotely(client: str) -> None:
    # The payload carries values only: a formula cell can't be told from a value there.
    wb = battle_workbook()
    wb["Log"]["E2"] = "=C2*2"
    cached = copy.deepcopy(wb)
    cached["Log"]["E2"] = 14
    payload = payload_from_openpyxl(wb, client, cached_values=cached)
    assert "formula" not in repr(payload).lower()
    assert payload["sheets"][0]["values"][1][4] == 14
    grids, _, _ = press(wb, client, lambda b: b.read_ranges(["Log!E2"]), cached_values=cached)
    assert grids == [[[14]]]


def test_desktop_api_reads_formulas_as_formula() -> None:
    """On desktop Excel, ``.formula`` tells formula cells apart (a stand-in for the COM API)."""

    class Block:
        def __init__(self, values: list[list[Any]], formulas: list[list[str]]) -> None:
            self._values, self.formula = values, tuple(tuple(r) for r in formulas)

        def options(self, **kwargs: Any) -> Block:
            assert kwargs == {"ndim": 2, "err_to_str": True}
            return self

        @property
        def value(self) -> list[list[Any]]:
            return self._values

    class Sheet:
        name = "Battle"

        def range(self, first: tuple[int, int], last: tuple[int, int]) -> Block:
            assert (first, last) == ((1, 1), (1, 4))
            return Block(
                [[2.0, "=not a formula", 7.0, "=x"]],
                [["=1+1", "=not a formula", "7", '=""&"=x"']],
            )

    class App:
        class engine:  # noqa: N801 - mirrors xlwings' attribute
            name = "excel"

    class Book:
        app = App()
        sheets = [Sheet()]

    backend = XlwingsBackend(Book())  # type: ignore[arg-type]
    assert backend.read_formulas
    assert backend.read_ranges(["Battle!A1:D1"]) == [
        [[Formula("=1+1"), "=not a formula", 7, Formula('=""&"=x"')]]
    ]


# -- writing ----------------------------------------------------------------------------


def test_values_round_trip(client: str) -> None:
    wb = battle_workbook()
    row: list[CellValue] = [3, "Iron Wolves", 2.25, "rally", True, False, -4, None]
    _, answer, _ = press(wb, client, lambda b: b.write_ranges([RangeUpdate("Log!A7:H7", [row])]))
    assert len(answer["actions"]) == 1
    saved = reloaded(wb)
    assert [saved["Log"].cell(7, col).value for col in range(1, 9)] == row
    grids, _, _ = press(saved, client, lambda b: b.read_ranges(["Log!A7:H7"]))
    assert grids == [[row]]


def test_strings_starting_with_equals_stay_text(client: str) -> None:
    wb = battle_workbook()
    texts = ["=1+1", "=SUM(A1:A3)", "'quoted", "007", "1e3", "TRUE", "2024-01-01", "+5", "=", "@x"]
    _, answer, _ = press(wb, client, lambda b: b.write_ranges([RangeUpdate("Log!A8", [texts])]))
    (set_values,) = answer["actions"]
    assert set_values["func"] == "setValues"
    assert all(v.startswith("'") for v in set_values["values"][0])  # the apostrophe rule
    saved = reloaded(wb)
    cells = saved["Log"][8][: len(texts)]
    assert [c.value for c in cells] == texts
    assert {c.data_type for c in cells} == {"s"}
    grids, _, _ = press(saved, client, lambda b: b.read_ranges(["Log!A8:J8"]))
    assert grids == [[texts]]


def test_unprotected_text_would_have_become_a_formula() -> None:
    # The client-side emulation is strict enough to catch a backend that forgot the rule.
    wb = battle_workbook()
    apply_actions(wb, [{"func": "setValues", "args": [None], "values": [["=1+1", "007", "'=1+1"]],
                        "sheet_position": 0, "start_row": 9, "start_column": 0,
                        "row_count": 1, "column_count": 3}])
    assert [(c.value, c.data_type) for c in wb["Log"][10][:3]] == [
        ("=1+1", "f"), (7, "n"), ("=1+1", "s")
    ]


def test_formulas_are_written_as_formulas(client: str) -> None:
    wb = battle_workbook()
    update = RangeUpdate("Log!F2:G3", [[Formula("=C2*2"), "=C2*2"], [Formula("=SUM(C2:C3)"), None]])
    press(wb, client, lambda b: b.write_ranges([update]))
    log = reloaded(wb)["Log"]
    assert (log["F2"].value, log["F2"].data_type) == ("=C2*2", "f")
    assert (log["G2"].value, log["G2"].data_type) == ("=C2*2", "s")
    assert (log["F3"].value, log["F3"].data_type) == ("=SUM(C2:C3)", "f")
    assert log["G3"].value is None


@pytest.mark.libreoffice
def test_written_workbook_calculates_in_libreoffice(tmp_path: Path) -> None:
    lo.require_libreoffice()
    wb = battle_workbook()
    update = RangeUpdate("Log!F2:H2", [[Formula("=C2*2"), "=C2*2", "007"]])
    press(wb, "VBA", lambda b: b.write_ranges([update]))
    path = tmp_path / "written.xlsx"
    wb.save(path)
    values = lo.cell_values(path, ["Log!F2:H2"])
    assert values["Log!F2:H2"] == [[14.0, "=C2*2", "007"]]
    assert lo.error_cells(path) == []


def test_several_blocks_in_one_write(client: str) -> None:
    wb = battle_workbook()
    updates = [
        RangeUpdate("Log!A7:B7", [[3, "Red Hand"]]),
        RangeUpdate("Log!A8:B9", [[3, "Iron Wolves"], [4, None]]),
        RangeUpdate("'House Rules'!C1", [["Since"]]),
    ]
    holder: list[XlwingsBackend] = []

    def write(backend: XlwingsBackend) -> None:
        holder.append(backend)
        backend.write_ranges(updates)

    _, answer, _ = press(wb, client, write)
    assert [(a["func"], a["sheet_position"], a["start_row"], a["start_column"], a["row_count"],
             a["column_count"]) for a in answer["actions"]] == [
        ("setValues", 0, 6, 0, 1, 2),
        ("setValues", 0, 7, 0, 2, 2),
        ("setValues", 1, 0, 2, 1, 1),
    ]
    assert (holder[0].writes, holder[0].range_writes) == (1, 3)
    log = wb["Log"]
    assert [[c.value for c in row] for row in log["A7:B9"]] == [
        [3, "Red Hand"], [3, "Iron Wolves"], [4, None]
    ]
    assert wb["House Rules"]["C1"].value == "Since"


def test_none_clears_and_ragged_rows_leave_other_cells_alone(client: str) -> None:
    wb = battle_workbook()
    update = RangeUpdate("Log!B2:D3", [["Gone", None], ["Red Hand", 9, "steady"]])
    _, answer, _ = press(wb, client, lambda b: b.write_ranges([update]))
    assert [a["row_count"] for a in answer["actions"]] == [1, 1]  # one block per row
    log = wb["Log"]
    assert [c.value for c in log[2]][:4] == [1, "Gone", None, "charge"]  # D2 untouched
    assert [c.value for c in log[3]][:4] == [1, "Red Hand", 9, "steady"]


def test_missing_sheet_raises_and_writes_nothing(client: str) -> None:
    wb = battle_workbook()
    book = remote_book(payload_from_openpyxl(wb, client))
    backend = XlwingsBackend(book)
    with pytest.raises(BackendError, match="there is no sheet 'Orders'"):
        backend.write_ranges([RangeUpdate("Log!A7", [[1]]), RangeUpdate("Orders!A1", [[1]])])
    assert book.json() == {"actions": []}
    with pytest.raises(BackendError, match="there is no sheet 'Orders'"):
        backend.read_ranges(["Orders!A1:B"])


def test_every_action_is_one_the_client_implements(client: str) -> None:
    wb = battle_workbook()

    def step(backend: XlwingsBackend) -> None:
        backend.write_ranges([RangeUpdate("Log!A7", [[Formula("=1"), "x", None]])])
        alert(backend.book, "Resolve Phase", "BattleStateError: already resolved")

    _, answer, _ = press(wb, client, step)
    used = {a["func"] for a in answer["actions"]}
    assert used == {"setValues", "alert"}
    assert used <= supported_actions(client)
    assert "setFormula" not in supported_actions(client)  # why formulas go via setValues


def test_alert_reaches_the_user(client: str) -> None:
    wb = battle_workbook()
    _, answer, alerts = press(
        wb, client, lambda b: alert(b.book, "Resolve Phase", "BattleStateError: phase 2 is done")
    )
    assert alerts == [{
        "prompt": "BattleStateError: phase 2 is done",
        "title": "Resolve Phase",
        "buttons": "ok",
        "mode": "critical",
        "callback": "",
    }]


def test_simulate_request_is_one_button_press() -> None:
    wb = battle_workbook()

    def handler(book: Any) -> None:
        backend = XlwingsBackend(book)
        (grid,) = backend.read_ranges(["Log!B2:B"])
        backend.write_ranges([RangeUpdate("Log!E1", [[f"{len(grid)} cohorts"]])])
        alert(book, "Build", "done", mode="info")

    alerts = simulate_request(wb, handler, client="Google Apps Script")
    assert wb["Log"]["E1"].value == "3 cohorts"
    assert [a["mode"] for a in alerts] == ["info"]


def test_apply_actions_follows_what_xlwings_emits_for_sheets(client: str) -> None:
    wb = battle_workbook()

    def step(backend: XlwingsBackend) -> None:
        book = backend.book
        book.sheets.add("Round 2", after=book.sheets[-1])
        book.sheets["Empty"].name = "Spare"
        book.sheets["Log"].range("A2:B3").clear_contents()
        book.sheets["Log"].range("C2").number_format = "0.00"

    _, answer, _ = press(wb, client, step)
    assert [a["func"] for a in answer["actions"]] == [
        "addSheet", "setSheetName", "rangeClearContents", "setNumberFormat"
    ]
    assert wb.sheetnames == ["Log", "House Rules", "Spare", "Round 2"]
    assert [[c.value for c in row] for row in wb["Log"]["A2:C3"]] == [[None, None, 7], [None, None, 3.5]]
    assert wb["Log"]["C2"].number_format == "0.00"


def test_apply_actions_refuses_what_the_client_lacks() -> None:
    wb = battle_workbook()
    formula = {"func": "setFormula", "args": [None], "values": [["=1"]], "sheet_position": 0,
               "start_row": 0, "start_column": 0, "row_count": 1, "column_count": 1}
    with pytest.raises(ValueError, match="the VBA client has no action 'setFormula'"):
        apply_actions(wb, [formula], client="VBA")
    with pytest.raises(NotImplementedError, match="rangeSort"):
        apply_actions(wb, [{**formula, "func": "rangeSort", "args": [[1], True, True]}])


# -- the payload ------------------------------------------------------------------------


def test_payload_has_the_shape_each_client_sends() -> None:
    wb = battle_workbook()
    wb.defined_names["Phase"] = openpyxl.workbook.defined_name.DefinedName(
        "Phase", attr_text="Log!$A$2:$A$4"
    )
    vba = payload_from_openpyxl(wb, "VBA", name="battle.xlsm")
    gas = payload_from_openpyxl(wb, "Google Apps Script")
    import xlwings

    for payload in (vba, gas):
        assert list(payload) == ["client", "version", "book", "names", "sheets"]
        assert payload["version"] == xlwings.__version__
        assert payload["book"] == {
            "name": payload["book"]["name"], "active_sheet_index": 0, "selection": "A1"
        }
        assert [s["name"] for s in payload["sheets"]] == ["Log", "House Rules", "Empty"]
        assert payload["names"][0]["name"] == "Phase"
        assert payload["names"][0]["address"] == "A2:A4"
        assert payload["names"][0]["book_scope"] is True
    assert vba["book"]["name"] == "battle.xlsm"
    assert list(vba["sheets"][0]) == ["name", "pictures", "tables", "values"]  # Remote.bas
    assert list(gas["sheets"][0]) == ["name", "values", "pictures", "tables"]  # xlwings.js
    assert vba["sheets"][0]["values"][2][3] is None  # VBA-JSON: Empty -> null
    assert gas["sheets"][0]["values"][2][3] == ""  # getValues(): empty -> ""
    assert vba["sheets"][2]["values"] == [[]]  # an empty used range
    assert gas["sheets"][2]["values"] == [[""]]  # getRange(1, 1, 1, 1)


def test_excluded_sheets_send_no_values() -> None:
    payload = payload_from_openpyxl(battle_workbook(), "VBA", exclude=["Log"])
    assert payload["sheets"][0]["values"] == [[]]
    assert payload["sheets"][1]["values"][0] == ["Rule", "On"]


def test_client_version_must_match_the_server() -> None:
    payload = payload_from_openpyxl(battle_workbook(), "VBA", version="0.0.1")
    with pytest.raises(BackendError, match="version"):
        remote_book(payload)


def test_license_key_may_be_set_after_xlwings_is_imported(tmp_path: Path) -> None:
    # The remote engine is registered when xlwings is imported, and only with a key;
    # remote_book registers it later when the key came afterwards.
    script = textwrap.dedent(
        """
        import os
        import xlwings as xw
        from sheetsync.backends.xlwings_remote import payload_from_openpyxl, remote_book
        import openpyxl
        wb = openpyxl.Workbook()
        payload = payload_from_openpyxl(wb, "VBA")
        try:
            xw.Book(json=payload)
        except xw.LicenseError:
            print("refused without key")
        os.environ["XLWINGS_LICENSE_KEY"] = "noncommercial"
        print(remote_book(payload).sheets[0].name)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "XLWINGS_LICENSE_KEY"}
    env["HOME"] = str(tmp_path)  # no ~/.xlwings/xlwings.conf key either
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1]), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["refused without key", "Sheet"]
