"""PayloadBackend: the seam read straight from an xlwings remote payload (issue 12) answers
what ``xw.Book(json=payload)`` under XlwingsBackend answers, action for action.

Each comparison runs the same thing both ways on the same payload: the direct path
(:class:`PayloadBackend`) and xlwings' own remote engine (``remote_book`` + XlwingsBackend),
and asserts the results and the ``actions`` lists are equal.  The trackers of the three rule
systems go through the real endpoint twice, once per engine (``create_app(engine=...)``),
for resolve, undo, a refused step and build.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import pytest
import yaml
from battles import make_battle
from hypothesis import given, settings
from hypothesis import strategies as st
from test_server import serving

from sheetsync.app.server import create_app
from sheetsync.app.workbook_cli import new_workbook, system_tracker_from
from sheetsync.backends.payload import WRITE_BUDGET, PayloadBackend
from sheetsync.backends.xlwings_backend import XlwingsBackend
from sheetsync.backends.xlwings_remote import (
    CLIENTS,
    apply_actions,
    close_book,
    payload_from_openpyxl,
    remote_book,
)
from sheetsync.core.errors import BackendError
from sheetsync.core.registry import find_system
from sheetsync.sheets.backend import Formula, RangeUpdate

KEY = "payload-key"
SYSTEMS = ("bbn", "hexwar", "exalted")


@pytest.fixture(scope="module", autouse=True)
def noncommercial_license() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:  # xlwings' remote engine: noncommercial use
        mp.setenv("XLWINGS_LICENSE_KEY", "noncommercial")
        yield


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def both(payload: dict[str, Any], fn: Callable[[Any], Any]) -> tuple[Any, dict[str, Any]]:
    """``fn(backend)`` on the direct path and on ``xw.Book(json=payload)``; asserts both give
    the same result (or the same error) and the same answer, and returns them."""

    def outcome(backend: Any, answer: Callable[[], dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
        try:
            result = fn(backend)
        except Exception as exc:  # compared as class and text
            result = (type(exc).__name__, str(exc))
        return result, copy.deepcopy(answer())

    original = copy.deepcopy(payload)
    direct = PayloadBackend(payload)
    got = outcome(direct, direct.json)
    assert payload == original  # the direct path reads the payload, never changes it
    book = remote_book(payload)
    try:
        want = outcome(XlwingsBackend(book), book.json)
    finally:
        close_book(book)
    assert got == want
    return got


def cells_workbook() -> openpyxl.Workbook:
    wb = openpyxl.Workbook()
    log = wb.active
    log.title = "Log"
    log.append(["Phase", "Cohort", "Roll", "Note", "When"])
    log.append([1, "Iron Wolves", 7, "typed", dt.datetime(2024, 5, 1, 10, 30)])
    log["D2"].value = "=1+1"
    log["D2"].data_type = "s"  # the text "=1+1", not a formula
    log.append([1.0, "Red Hand", 3.5, None, dt.date(2024, 5, 2)])
    log.append([2, "A name longer than nineteen", True, False, "2024-05-01"])
    log["D6"] = "late entry"
    log["F7"] = "#N/A"  # an error value (openpyxl keeps it as one)
    rules = wb.create_sheet("House Rules")
    rules["A1"] = "Rule"
    rules["B2"] = 0
    wb.create_sheet("Empty")
    return wb


# -- reads ----------------------------------------------------------------------------------


def test_issue12_reads_equal_xlwings_values_dates_errors_and_open_ranges(client: str) -> None:
    payload = payload_from_openpyxl(cells_workbook(), client)
    ranges = ["Log!A1:F7", "Log!A2:E", "Log!B3", "Log!C4:H9", "'House Rules'!A1:C", "Empty!A1:C",
              "Log!A40:B", "house rules!B2:B2"]
    grids, answer = both(payload, lambda b: b.read_ranges(ranges))
    assert answer == {"actions": []}
    log = grids[0]
    assert log[1] == [1, "Iron Wolves", 7, "=1+1", "2024-05-01 10:30:00", None]  # text, kept as text
    assert log[2][:5] == [1, "Red Hand", 3.5, None, "2024-05-02"]  # 1.0 is 1, a midnight date a date
    assert log[3][:5] == [2, "A name longer than nineteen", True, False, "2024-05-01"]
    assert log[6][5] == "#N/A"  # errors stay text
    assert grids[1][-1] == [None, None, None, "late entry", None]  # open-ended: to the used range's end
    assert grids[2] == [["Red Hand"]]
    assert grids[5] == [] and grids[6] == []
    assert grids[7] == [[0]]  # the sheet found whatever the case of its name


def test_issue12_a_date_time_without_z_fails_both_ways_alike(client: str) -> None:
    wb = cells_workbook()
    wb["Log"]["A2"] = "2024-05-01T10:30:00"  # a text cell xlwings takes for a date-time
    result, _ = both(payload_from_openpyxl(wb, client), lambda b: b.read_ranges(["Log!A2:A2"]))
    assert result[0] == "BackendError" and "could not read Log!A2:A2" in result[1]


def test_issue12_office_js_used_range_address_ends_open_ranges(client: str) -> None:
    payload = payload_from_openpyxl(cells_workbook(), client)
    payload["sheets"][0]["used_range_address"] = "$B$2:$D$3"
    payload["sheets"][2]["used_range_address"] = None  # an empty sheet, as Office.js says it
    grids, _ = both(payload, lambda b: b.read_ranges(["Log!A2:E", "Empty!A1:B"]))
    assert len(grids[0]) == 2 and grids[1] == []
    appended, answer = both(payload, lambda b: b.write_ranges([RangeUpdate("Log!A2:B", [["x", 1]], append=True)]))
    assert answer["actions"][0]["start_row"] == 3  # after the used range's last filled row (3)


def test_issue12_a_cell_that_is_no_value_is_a_backend_error(client: str) -> None:
    payload = payload_from_openpyxl(cells_workbook(), client)
    payload["sheets"][0]["values"][1][1] = ["not", "a", "cell"]
    for backend in (PayloadBackend(payload), XlwingsBackend(remote_book(payload))):
        with pytest.raises(BackendError, match="could not read Log!A2:C2"):
            backend.read_ranges(["Log!A2:C2"])


# -- writes ---------------------------------------------------------------------------------


def test_issue12_writes_queue_the_same_set_values_actions(client: str) -> None:
    payload = payload_from_openpyxl(cells_workbook(), client)
    updates = [
        RangeUpdate("Log!A10:F11", [[1, 2.5, True, False, None, ""], ["=1+1", "'quoted", "007", Formula("=A1*2"),
                                                                    "TRUE", "2024-05-01"]]),
        RangeUpdate("'House Rules'!B3", [["on"]]),
        RangeUpdate("Log!H1:J3", [[1, 2, 3], [4], [5, 6]]),  # ragged: row by row
        RangeUpdate("log!K1", [[None]]),
        RangeUpdate("Log!L1:M1", [[]]),  # nothing to write
    ]
    _, answer = both(payload, lambda b: b.write_ranges(updates))
    actions = answer["actions"]
    assert [a["func"] for a in actions] == ["setValues"] * 6
    assert actions[0] == {
        "func": "setValues", "args": [None], "sheet_position": 0, "start_row": 9, "start_column": 0,
        "row_count": 2, "column_count": 6,
        "values": [[1, 2.5, True, False, "", ""], ["'=1+1", "''quoted", "'007", "=A1*2", "'TRUE", "'2024-05-01"]],
    }
    assert actions[1]["sheet_position"] == 1 and actions[1]["values"] == [["'on"]]
    assert [(a["start_row"], a["values"]) for a in actions[2:5]] == [(0, [[1, 2, 3]]), (1, [[4]]), (2, [[5, 6]])]


def test_issue12_appends_start_after_the_last_filled_row_errors_counting_as_empty(client: str) -> None:
    wb = cells_workbook()
    wb["Log"]["F7"] = "#N/A"
    wb["Log"]["D6"] = None  # row 6 now empty, row 7 holds only an error
    payload = payload_from_openpyxl(wb, client)
    updates = [RangeUpdate("Log!A2:B", [["a", 1]], append=True), RangeUpdate("Log!A2:B", [["b", 2]], append=True),
               RangeUpdate("Empty!A3:A", [["first"]], append=True)]
    _, answer = both(payload, lambda b: b.write_ranges(updates))
    assert [(a["sheet_position"], a["start_row"]) for a in answer["actions"]] == [(0, 4), (0, 5), (2, 2)]


def test_issue12_a_block_over_the_write_budget_is_split_as_xlwings_splits_it() -> None:
    payload = payload_from_openpyxl(cells_workbook(), "VBA")
    rows = WRITE_BUDGET // 3 + 1000
    grid = [[i, None, "x"] for i in range(rows)]
    _, answer = both(payload, lambda b: b.write_ranges([RangeUpdate("Empty!B2:D", grid)]))
    chunks = [(a["start_row"], a["row_count"], a["column_count"]) for a in answer["actions"]]
    assert chunks == [(1, WRITE_BUDGET // 3, 3), (1 + WRITE_BUDGET // 3, 1000, 3)]
    assert answer["actions"][1]["values"][0] == [WRITE_BUDGET // 3, "", "'x"]


def test_issue12_a_missing_sheet_or_a_bad_value_queues_nothing(client: str) -> None:
    payload = payload_from_openpyxl(cells_workbook(), client)
    missing = [RangeUpdate("Log!A1", [[1]]), RangeUpdate("Nowhere!A1", [[2]])]
    result, answer = both(payload, lambda b: b.write_ranges(missing))
    assert result == ("BackendError", "there is no sheet 'Nowhere'") and answer == {"actions": []}
    result, answer = both(payload, lambda b: b.write_ranges([RangeUpdate("Log!A1:B1", [[1, float("nan")]])]))
    assert result == ("BackendError", "Log!B1: nan can't be stored in a spreadsheet cell")
    assert answer == {"actions": []}


# -- the three systems' trackers through the endpoint, both engines ------------------------------


@pytest.fixture(scope="module")
def trackers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("trackers")
    battle = tmp / "battle12.yaml"
    battle.write_text(yaml.safe_dump(make_battle(12), sort_keys=False), encoding="utf-8")
    out = {"bbn": tmp / "bbn.xlsx"}
    new_workbook(out["bbn"], battle)
    for sid in SYSTEMS[1:]:
        system = find_system(sid)
        out[sid] = tmp / f"{sid}.xlsx"
        system_tracker_from(out[sid], system, system.load(yaml.safe_load(system.example_data())))
    return out


@pytest.fixture(scope="module")
def endpoints() -> Iterator[dict[str, httpx.Client]]:
    with serving(create_app(api_key=KEY)) as direct, serving(create_app(api_key=KEY, engine="xlwings")) as xl, \
            httpx.Client(base_url=direct, headers={"Authorization": KEY}, timeout=120) as a, \
            httpx.Client(base_url=xl, headers={"Authorization": KEY}, timeout=120) as b:
        yield {"payload": a, "xlwings": b}


def post_both(endpoints: dict[str, httpx.Client], action: str, payload: dict[str, Any]) -> dict[str, Any]:
    answers = {}
    for engine, http in endpoints.items():
        response = http.post(f"/api/{action}", json=payload)
        assert response.status_code == 200, (engine, response.text)
        answers[engine] = response.json()
    assert answers["payload"] == answers["xlwings"], action
    return answers["payload"]


def funcs(answer: dict[str, Any]) -> list[str]:
    return [a["func"] for a in answer["actions"]]


def confirmed(answer: dict[str, Any]) -> list[str]:
    """The funcs of a step that went through, before its confirmation (issue 22.3: the
    answer ends with one information alert, the step's message)."""
    *rest, last = answer["actions"]
    assert last["func"] == "alert" and last["args"][3] == "info" and last["args"][0], last
    return [a["func"] for a in rest]


@pytest.mark.parametrize("system", SYSTEMS)
def test_issue12_endpoint_answers_equal_xlwings_for_resolve_undo_refusal_and_build(
    endpoints: dict[str, httpx.Client], trackers: dict[str, Path], system: str, client: str
) -> None:
    wb = openpyxl.load_workbook(trackers[system])
    fresh = payload_from_openpyxl(wb, client)

    refused = post_both(endpoints, "undo", fresh)  # nothing resolved yet
    assert funcs(refused) == ["alert"]  # the alert alone: nothing written
    prompt, title, _, mode, _ = refused["actions"][0]["args"]
    assert (title, mode) == ("sheetsync", "critical") and "undo" in prompt

    built = post_both(endpoints, "build", fresh)
    assert "setValues" in confirmed(built) and "alert" not in confirmed(built)

    resolved = post_both(endpoints, "resolve", fresh)
    assert set(confirmed(resolved)) == {"setValues"}
    alerts: list[dict[str, Any]] = []
    apply_actions(wb, resolved, client=client, alerts=alerts)
    after = payload_from_openpyxl(wb, client)
    assert after != fresh and [a["mode"] for a in alerts] == ["info"]  # the confirmation alone

    undone = post_both(endpoints, "undo", after)
    assert set(confirmed(undone)) == {"setValues"}  # the resolved step is undone, both ways alike
    assert post_both(endpoints, "noop", after) == {"actions": []}


CELLS = (None, None, None, "", 0, 7, -3, 2.0, 2.5, True, False, "x", "=SUM(A1:A2)", "'kept", "007",
         "#N/A", "#DIV/0!", "#SPILL!", "a text of more than nineteen characters", "2024-05-01T10:30:00.000Z",
         "2024-05-01T00:00:00.000Z", 1e300, 12345678901234567890)


def test_issue12_random_sheets_read_and_append_as_xlwings_does() -> None:
    """Forty random payloads (ragged rows, empty rows between and after, every kind of cell
    a client sends): every read, open-ended or not, short or long, and every append agrees."""
    import random

    rnd = random.Random(12)
    for _ in range(40):
        sheets = []
        for name in ("Log", "Other"):
            rows = [[rnd.choice(CELLS) for _ in range(rnd.randint(0, 7))] for _ in range(rnd.randint(0, 12))]
            empty = rnd.choice((None, ""))
            rows += [[empty] * rnd.randint(0, 7) for _ in range(rnd.randint(0, 3))]
            sheets.append({"name": name, "values": rows or [[]], "pictures": [], "tables": []})
        payload = {"client": "VBA", "version": __import__("xlwings").__version__,
                   "book": {"name": "Book.xlsx", "active_sheet_index": 0, "selection": "A1"},
                   "names": [], "sheets": sheets}
        ranges = []
        for _ in range(5):
            col1, row1 = rnd.randint(1, 8), rnd.randint(1, 16)
            col2, rows = col1 + rnd.randint(0, 4), rnd.choice((None, rnd.randint(0, 6)))
            end = "" if rows is None else str(row1 + rows)
            ranges.append(f"{rnd.choice(('Log', 'Other'))}!{chr(64 + col1)}{row1}:{chr(64 + col2)}{end}")
        # a long closed block (ends from its sheet's last filled row), before and after an open one
        ranges.insert(0, f"Other!B{rnd.randint(1, 4)}:D{rnd.randint(110, 130)}")
        ranges.append(f"Log!A{rnd.randint(1, 4)}:G{rnd.randint(110, 130)}")
        both(payload, lambda b, r=ranges: b.read_ranges(r))
        appends = [RangeUpdate(f"{rnd.choice(('Log', 'Other'))}!B{rnd.randint(1, 20)}:C", [[1, "a"]], append=True)
                   for _ in range(2)]
        both(payload, lambda b, u=appends: b.write_ranges(u))


_CELLS = st.sampled_from([None, "", "x", " ", 0, 1, False, 0.0])
_SEGMENTS = st.lists(
    st.tuples(st.one_of(st.lists(_CELLS, max_size=4), st.sampled_from([[None] * 3, [""] * 3, [None, ""], []])),
              st.integers(min_value=1, max_value=80)),
    max_size=6)


@settings(max_examples=400, deadline=None)
@given(_SEGMENTS)
def test_issue12_the_last_filled_row_is_the_last_row_with_a_value(segments: list[tuple[list[Any], int]]) -> None:
    """A payload sheet's trailing empty rows (every cell ``None`` or ``""``, as the clients
    send them) are dropped, and no row with a value, whatever runs of empty rows lie above
    or below it (the scan compares long runs at once)."""
    from sheetsync.backends.xlwings_backend import _filled_count

    rows = [list(row) for row, times in segments for _ in range(times)]
    expected = len(rows)
    while expected and all(v is None or v == "" for v in rows[expected - 1]):
        expected -= 1
    assert _filled_count(rows) == expected
