"""GSheetsBackend with the real gspread client against the fake Sheets API on 127.0.0.1."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import gspread
import pytest
import requests
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from fake_sheets_api import FakeSheetsServer, fake_client, route_to_fake, service_account_info
from hypothesis import given, settings
from hypothesis import strategies as st

from sheetsync.backends.gsheets import METADATA_FIELDS, READ_FIELDS, GSheetsBackend
from sheetsync.core.errors import BackendError, SheetSyncError
from sheetsync.sheets.backend import Formula, RangeUpdate, SheetBackend, trim_grid

SHEETS = ["Orders", "Log", "House Rules", "Characters"]


class FakeClock:
    """A clock that only moves when ``sleep`` is called; ``sleeps`` records the delays."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as fake:
        yield fake
    assert fake.errors == []  # the fake itself never crashed


@pytest.fixture
def client(server: FakeSheetsServer) -> Iterator[gspread.Client]:
    gc = fake_client(server.url)
    yield gc
    gc.http_client.session.close()


@pytest.fixture
def key(server: FakeSheetsServer) -> str:
    return server.create_spreadsheet("Battle of Fells Point", SHEETS)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def backend(client: gspread.Client, key: str, clock: FakeClock) -> GSheetsBackend:
    return GSheetsBackend(client, key, sleep=clock.sleep, clock=clock)


def sheet_id(server: FakeSheetsServer, key: str, title: str) -> int:
    return server.spreadsheet(key).sheet(title).sheet_id


# -- the seam ---------------------------------------------------------------------------


def test_constructor_does_no_io_and_meets_the_seam(
    server: FakeSheetsServer, client: gspread.Client, key: str
) -> None:
    backend = GSheetsBackend(client, key)
    assert isinstance(backend, SheetBackend)
    assert server.requests == []
    assert backend.request_count == 0


def test_a_gspread_spreadsheet_gives_its_key(
    server: FakeSheetsServer, client: gspread.Client, key: str
) -> None:
    spreadsheet = client.open_by_key(key)  # gspread itself fetches metadata here
    server.clear_requests()
    backend = GSheetsBackend(spreadsheet)
    assert server.requests == []
    backend.write_ranges([RangeUpdate("Orders!B2", [["Ada"]])])
    assert backend.key == key
    assert server.entered(key, "Orders!B2") == [[{"stringValue": "Ada"}]]


def test_round_trip_keeps_types_formulas_and_literal_text(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    row = ["Ada", 3, 2.5, True, Formula("=SUM(B2:C2)"), '=IMPORTXML("http://x")', None, 4.0]
    backend.write_ranges([RangeUpdate("Orders!A2:H2", [row])])

    stored = server.entered(key, "Orders!A2:H2")[0]
    assert stored == [
        {"stringValue": "Ada"},
        {"numberValue": 3},
        {"numberValue": 2.5},
        {"boolValue": True},
        {"formulaValue": "=SUM(B2:C2)"},
        {"stringValue": '=IMPORTXML("http://x")'},  # text typed as a name stays text
        None,
        {"numberValue": 4.0},
    ]
    [grid] = backend.read_ranges(["Orders!A2:H2"])
    assert grid == [
        ["Ada", 3, 2.5, True, Formula("=SUM(B2:C2)"), '=IMPORTXML("http://x")', None, 4]
    ]
    assert type(grid[0][5]) is str and type(grid[0][1]) is int and type(grid[0][7]) is int


def test_none_clears_a_cell_and_keeps_its_format(
    server: FakeSheetsServer, client: gspread.Client, backend: GSheetsBackend, key: str
) -> None:
    server.set_values(key, "Log!A1:C1", [["x", 1, "y"]])
    client.open_by_key(key).worksheet("Log").format("B1", {"textFormat": {"bold": True}})
    backend.write_ranges([RangeUpdate("Log!A1:C1", [["x", None, ""]])])
    assert server.entered(key, "Log!A1:C1") == [[{"stringValue": "x"}, None, None]]
    assert server.cell(key, "Log!B1")["userEnteredFormat"] == {"textFormat": {"bold": True}}
    assert backend.read_ranges(["Log!A1:C1"]) == [[["x", None, None]]]


def test_formulas_typed_in_the_sheet_read_as_formula_and_raw_text_as_str(
    server: FakeSheetsServer, client: gspread.Client, backend: GSheetsBackend, key: str
) -> None:
    ws = client.open_by_key(key).worksheet("Characters")
    ws.update([["=1+1", "=A1*2"]], "A1", value_input_option="USER_ENTERED")
    ws.update([["=IMPORTXML(A1)", "12"]], "A2", value_input_option="RAW")
    assert backend.read_ranges(["Characters!A1:B2"]) == [
        [[Formula("=1+1"), Formula("=A1*2")], ["=IMPORTXML(A1)", "12"]]
    ]


def test_read_of_several_ranges_is_one_request(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    server.set_values(key, "Orders!A2:C4", [["Ada", 1], [], ["Bo", None, "x"]])
    server.set_values(key, "Log!A2:B3", [["phase 1", "roll"], ["phase 2"]])
    server.set_values(key, "'House Rules'!A1:B2", [["R1", True], ["R2", 0.5]])
    server.clear_requests()

    grids = backend.read_ranges(
        ["Orders!A2:C6", "Log!A2:J", "'House Rules'!A1:B", "Orders!C4", "Characters!A1:B"]
    )

    assert grids == [
        [["Ada", 1, None], [None, None, None], ["Bo", None, "x"]],  # trailing empty rows dropped
        [["phase 1", "roll"] + [None] * 8, ["phase 2"] + [None] * 9],
        [["R1", True], ["R2", 0.5]],
        [["x"]],
        [],
    ]
    [request] = server.requests
    assert request.method == "GET" and request.path == f"/v4/spreadsheets/{key}"
    assert request.query["includeGridData"] == ["true"]
    assert request.query["fields"] == [READ_FIELDS]
    assert request.query["ranges"] == [
        "Orders!A2:C6",
        "Log!A2:J",
        "'House Rules'!A1:B",
        "Orders!C4:C4",
        "Characters!A1:B",
    ]
    assert backend.request_count == 1


def test_write_is_one_batch_update_of_update_cells(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    backend.read_ranges(["Orders!A1:B1", "Log!A1:B1"])
    server.clear_requests()

    backend.write_ranges(
        [
            RangeUpdate("Orders!B3:C4", [["a", 1], [None, Formula("=B3")]]),
            RangeUpdate("Log!A7:J", [["event", 2]]),
        ]
    )

    [request] = server.requests
    assert (request.method, request.path) == ("POST", f"/v4/spreadsheets/{key}:batchUpdate")
    assert request.kinds == ["updateCells", "updateCells"]
    first, second = (r["updateCells"] for r in request.body["requests"])
    assert first["fields"] == second["fields"] == "userEnteredValue"
    assert first["start"] == {"sheetId": 0, "rowIndex": 2, "columnIndex": 1}
    assert second["start"] == {
        "sheetId": sheet_id(server, key, "Log"),
        "rowIndex": 6,
        "columnIndex": 0,
    }
    assert server.entered(key, "Orders!B3:C4") == [
        [{"stringValue": "a"}, {"numberValue": 1}],
        [None, {"formulaValue": "=B3"}],
    ]
    assert server.entered(key, "Log!A7:B7") == [[{"stringValue": "event"}, {"numberValue": 2}]]


def test_sheet_ids_come_from_the_read_and_are_not_fetched_again_across_steps(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    for step in range(3):
        [orders, log] = backend.read_ranges(["Orders!A1:B1", "Log!A2:C"])
        backend.write_ranges([RangeUpdate(f"Log!A{len(log) + 2}:C", [[f"step {step}", step]])])

    methods = [r.method for r in server.requests]
    assert methods == ["GET", "POST"] * 3  # one read and one write per step, no metadata calls
    assert all(r.query.get("fields") == [READ_FIELDS] for r in server.requests if r.method == "GET")
    assert backend.read_ranges(["Log!A2:B"]) == [[["step 0", 0], ["step 1", 1], ["step 2", 2]]]
    assert backend.request_count == 7


def test_a_write_before_any_read_fetches_sheet_ids_once(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    backend.write_ranges([RangeUpdate("'House Rules'!A1", [["R7"]])])
    backend.write_ranges([RangeUpdate("Characters!A1", [["Ada"]])])

    assert [(r.method, r.query.get("fields")) for r in server.requests] == [
        ("GET", [METADATA_FIELDS]),
        ("POST", None),
        ("POST", None),
    ]
    expected = {t: sheet_id(server, key, t) for t in SHEETS}
    assert backend.metadata() == expected
    assert len(server.requests) == 3  # metadata() answered from the cache
    assert server.entered(key, "'House Rules'!A1") == [[{"stringValue": "R7"}]]


def test_a_write_to_a_missing_sheet_sends_nothing(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    before = server.snapshot(key)
    with pytest.raises(BackendError, match="there is no sheet 'Nope'"):
        backend.write_ranges([RangeUpdate("Orders!A1", [["x"]]), RangeUpdate("Nope!A1", [["y"]])])
    assert server.count(":batchUpdate") == 0
    assert server.snapshot(key) == before


# -- retries ------------------------------------------------------------------------------


def test_429_twice_then_success_writes_after_backoff(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str, clock: FakeClock
) -> None:
    backend.read_ranges(["Orders!A1:A1"])
    server.clear_requests()
    server.fail_next(2, 429, path_contains=":batchUpdate")

    backend.write_ranges([RangeUpdate("Orders!A5:B5", [["Ada", 7]])])

    assert clock.sleeps == [1.0, 2.0]
    assert [r.status for r in server.requests] == [429, 429, 200]
    assert server.entered(key, "Orders!A5:B5") == [[{"stringValue": "Ada"}, {"numberValue": 7}]]
    assert backend.request_count == 4


def test_a_read_is_retried_too(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str, clock: FakeClock
) -> None:
    server.set_values(key, "Orders!A1", [["Ada"]])
    server.fail_next(1, 503)
    assert backend.read_ranges(["Orders!A1:B2"]) == [[["Ada", None]]]
    assert clock.sleeps == [1.0]
    assert [r.status for r in server.requests if r.path.startswith("/v4/")] == [503, 200]


def test_500_on_every_try_gives_up_after_max_tries_and_changes_nothing(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str, clock: FakeClock
) -> None:
    server.set_values(key, "Orders!A1:B1", [["old", 1]])
    backend.read_ranges(["Orders!A1:B1", "Log!A1"])
    before = server.snapshot(key)
    server.clear_requests()
    server.fail_next(100, 500)

    with pytest.raises(BackendError) as caught:
        backend.write_ranges(
            [RangeUpdate("Orders!A1:B1", [["new", 2]]), RangeUpdate("Log!A1", [["x"]])]
        )

    message = str(caught.value)
    assert "answered 500 (server error) 5 times over 15 s" in message
    assert "not confirmed" in message
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0]
    assert len(server.requests) == 5
    assert server.snapshot(key) == before


def test_a_failed_sheet_id_lookup_for_a_write_sends_no_write(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str, clock: FakeClock
) -> None:
    server.fail_next(100, 503)
    with pytest.raises(BackendError) as caught:
        backend.write_ranges([RangeUpdate("Orders!A1", [["x"]])])
    assert str(caught.value) == (
        "Google Sheets answered 503 (server error) 5 times over 15 s; nothing was written. "
        "Try again in a few minutes."
    )
    assert {r.query.get("fields")[0] for r in server.requests} == {METADATA_FIELDS}
    assert server.count(":batchUpdate") == 0


def test_429_message_says_what_happened_and_what_to_do(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    backend.read_ranges(["Orders!A1:A1"])
    server.fail_next(100, 429)
    with pytest.raises(BackendError) as caught:
        backend.write_ranges([RangeUpdate("Orders!A1", [["x"]])])
    assert str(caught.value) == (
        "Google Sheets answered 429 (quota) 5 times over 15 s; nothing was written. "
        "Wait a minute and try again."
    )
    assert server.entered(key, "Orders!A1") == [[None]]


def test_max_total_seconds_bounds_the_retries(
    server: FakeSheetsServer, client: gspread.Client, key: str, clock: FakeClock
) -> None:
    backend = GSheetsBackend(
        client, key, sleep=clock.sleep, clock=clock, max_tries=10, max_total_seconds=5
    )
    server.fail_next(100, 429)
    with pytest.raises(BackendError, match=r"429 \(quota\) 3 times over 3 s; nothing was read"):
        backend.read_ranges(["Orders!A1:B2"])
    assert clock.sleeps == [1.0, 2.0]  # a third wait of 4 s would pass the 5 s budget
    assert backend.request_count == 3


def test_delays_are_capped(server: FakeSheetsServer, client: gspread.Client, key: str) -> None:
    clock = FakeClock()
    backend = GSheetsBackend(
        client, key, sleep=clock.sleep, clock=clock, max_tries=7, max_total_seconds=600, max_delay=5
    )
    server.fail_next(100, 502)
    with pytest.raises(BackendError, match="502"):
        backend.read_ranges(["Orders!A1:B2"])
    assert clock.sleeps == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]


def test_a_dropped_connection_is_retried_then_reported(key: str) -> None:
    with FakeSheetsServer() as gone:
        url = gone.url
    gc = fake_client(url)  # nothing listens there any more
    clock = FakeClock()
    try:
        backend = GSheetsBackend(gc, key, sleep=clock.sleep, clock=clock, max_tries=3)
        with pytest.raises(BackendError, match=r"^can't reach Google Sheets: no network connection\? \(tried 3 times"):
            backend.read_ranges(["Orders!A1:B2"])
    finally:
        gc.http_client.session.close()
    assert clock.sleeps == [1.0, 2.0]


def test_a_400_is_not_retried_and_names_googles_reason(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str, clock: FakeClock
) -> None:
    backend.read_ranges(["Orders!A1:A1"])
    before = server.snapshot(key)
    with pytest.raises(BackendError) as caught:  # row 1001 is past the 1000-row grid
        backend.write_ranges(
            [RangeUpdate("Orders!A1", [["ok"]]), RangeUpdate("Orders!A1001", [["too far"]])]
        )
    assert "refused the request (400 INVALID_ARGUMENT)" in str(caught.value)
    assert "after last row in grid" in str(caught.value)
    assert clock.sleeps == []
    assert server.snapshot(key) == before  # the good update was not applied either


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (lambda b: b.read_ranges(["Nope!A1:B2"]), "Unable to parse range"),
        (lambda b: b.read_ranges(["A1:B2"]), "names no sheet"),
        (lambda b: b.write_ranges([RangeUpdate("Orders!A1", [[object()]])]), "Orders!A1"),
        (lambda b: b.write_ranges([RangeUpdate("Orders!A1", [[float("nan")]])]), "nan"),
    ],
)
def test_no_foreign_exception_leaks(backend: GSheetsBackend, action: object, match: str) -> None:
    with pytest.raises(BackendError, match=match):
        action(backend)  # type: ignore[operator]


def test_an_unknown_spreadsheet_key_is_a_backend_error(
    client: gspread.Client, clock: FakeClock
) -> None:
    backend = GSheetsBackend(client, "no-such-key", sleep=clock.sleep, clock=clock)
    with pytest.raises(SheetSyncError, match="404 NOT_FOUND.*Check the spreadsheet key"):
        backend.read_ranges(["Orders!A1:B2"])
    assert clock.sleeps == []


# -- property: what goes in comes out ------------------------------------------------------

cell_values = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.from_regex(r"=[A-Z]{1,3}\([0-9]{0,3}\)", fullmatch=True).map(Formula),
)


def test_round_trip_of_any_values(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.lists(cell_values, min_size=3, max_size=3), min_size=4, max_size=4))
    def check(rows: list[list[object]]) -> None:
        backend.write_ranges([RangeUpdate("Characters!B2:D5", rows)])  # type: ignore[arg-type]
        [grid] = backend.read_ranges(["Characters!B2:D5"])
        expected = [
            [int(v) if isinstance(v, float) and v.is_integer() else v for v in row] for row in rows
        ]
        assert grid == trim_grid(expected, 3)  # type: ignore[arg-type]

    check()
    assert server.count(":batchUpdate") >= 1


# -- the fake behaves like Google where it matters -----------------------------------------


def test_fake_batch_update_is_atomic_for_gspread_and_the_backend(
    server: FakeSheetsServer, client: gspread.Client, backend: GSheetsBackend, key: str
) -> None:
    server.set_values(key, "Orders!A1", [["before"]])
    before = server.snapshot(key)
    good_write = {
        "updateCells": {
            "start": {"sheetId": 0, "rowIndex": 0, "columnIndex": 0},
            "rows": [{"values": [{"userEnteredValue": {"stringValue": "after"}}]}],
            "fields": "userEnteredValue",
        }
    }
    add_sheet = {"addSheet": {"properties": {"title": "Aftermath"}}}
    bad = {"updateCells": {"start": {"sheetId": 424242}, "rows": [], "fields": "*"}}

    with pytest.raises(gspread.exceptions.APIError) as caught:
        client.open_by_key(key).batch_update({"requests": [good_write, add_sheet, bad]})
    assert caught.value.response.status_code == 400
    assert server.snapshot(key) == before

    with pytest.raises(BackendError, match="No grid with id: 424242"):
        backend.spreadsheet_batch_update([good_write, add_sheet, bad])
    assert server.snapshot(key) == before
    assert [s.title for s in server.spreadsheet(key).sheets] == SHEETS

    backend.spreadsheet_batch_update([good_write, add_sheet])  # the same without the bad one
    assert server.entered(key, "Orders!A1") == [[{"stringValue": "after"}]]
    assert [s.title for s in server.spreadsheet(key).sheets] == [*SHEETS, "Aftermath"]


def test_layout_requests_go_in_one_call_and_the_fake_stores_them(
    server: FakeSheetsServer, backend: GSheetsBackend, key: str
) -> None:
    assert backend.metadata() == {t: sheet_id(server, key, t) for t in SHEETS}
    server.clear_requests()
    log_id = sheet_id(server, key, "Log")
    status_col = {
        "sheetId": 0,
        "startRowIndex": 1,
        "endRowIndex": 50,
        "startColumnIndex": 3,
        "endColumnIndex": 4,
    }
    reply = backend.spreadsheet_batch_update(
        [
            {"addSheet": {"properties": {"title": "Roster", "index": 1, "tabColor": {"red": 1}}}},
            {
                "updateSheetProperties": {
                    "properties": {
                        "sheetId": log_id,
                        "title": "Battle Log",
                        "gridProperties": {"frozenRowCount": 1},
                    },
                    "fields": "title,gridProperties.frozenRowCount",
                }
            },
            {
                "setDataValidation": {
                    "range": status_col,
                    "rule": {
                        "condition": {
                            "type": "ONE_OF_LIST",
                            "values": [
                                {"userEnteredValue": "Ready"},
                                {"userEnteredValue": "Knocked Out"},
                            ],
                        },
                        "strict": True,
                        "showCustomUi": True,
                    },
                }
            },
            {
                "repeatCell": {
                    "range": {**status_col, "endRowIndex": 2},
                    "cell": {"userEnteredFormat": {"backgroundColor": {"green": 1}}},
                    "fields": "userEnteredFormat.backgroundColor",
                }
            },
            {
                "addProtectedRange": {
                    "protectedRange": {"range": {"sheetId": log_id}, "warningOnly": True}
                }
            },
            {
                "addConditionalFormatRule": {
                    "index": 0,
                    "rule": {
                        "ranges": [status_col],
                        "booleanRule": {
                            "condition": {
                                "type": "TEXT_EQ",
                                "values": [{"userEnteredValue": "Knocked Out"}],
                            },
                            "format": {"backgroundColor": {"red": 1}},
                        },
                    },
                }
            },
            {"addNamedRange": {"namedRange": {"name": "Statuses", "range": status_col}}},
            {
                "updateDimensionProperties": {
                    "range": {"sheetId": 0, "dimension": "COLUMNS", "startIndex": 0, "endIndex": 1},
                    "properties": {"pixelSize": 180},
                    "fields": "pixelSize",
                }
            },
            {
                "autoResizeDimensions": {
                    "dimensions": {
                        "sheetId": 0,
                        "dimension": "COLUMNS",
                        "startIndex": 1,
                        "endIndex": 3,
                    }
                }
            },
            {
                "addChart": {
                    "chart": {
                        "spec": {"title": "Health"},
                        "position": {
                            "overlayPosition": {"anchorCell": {"sheetId": 0, "rowIndex": 1}}
                        },
                    }
                }
            },
            {
                "updateSpreadsheetProperties": {
                    "properties": {"title": "Fells Point"},
                    "fields": "title",
                }
            },
        ]
    )

    assert len(server.requests) == 1
    ss = server.spreadsheet(key)
    roster = reply["replies"][0]["addSheet"]["properties"]
    assert [s.title for s in ss.sheets] == [
        "Orders",
        "Roster",
        "Battle Log",
        "House Rules",
        "Characters",
    ]
    assert ss.sheet("Battle Log").properties["gridProperties"] == {
        "rowCount": 1000,
        "columnCount": 26,
        "frozenRowCount": 1,
    }
    assert server.cell(key, "Orders!D2")["dataValidation"]["condition"]["type"] == "ONE_OF_LIST"
    assert "dataValidation" not in server.cell(key, "Orders!D51")
    assert server.cell(key, "Orders!D2")["userEnteredFormat"] == {"backgroundColor": {"green": 1}}
    assert ss.sheet(log_id).protected_ranges[0]["warningOnly"] is True
    assert ss.sheet(0).conditional_formats[0]["booleanRule"]["condition"]["type"] == "TEXT_EQ"
    assert [n["name"] for n in ss.named_ranges] == ["Statuses"]
    assert ss.sheet(0).column_metadata[0] == {"pixelSize": 180}
    assert ss.sheet(0).auto_resized == [{"dimension": "COLUMNS", "startIndex": 1, "endIndex": 3}]
    assert ss.sheet(0).charts[0]["spec"] == {"title": "Health"}
    assert ss.properties["title"] == "Fells Point"
    # the cache follows the new and renamed sheets, so no metadata request is needed
    ids = backend.metadata()
    assert ids["Roster"] == roster["sheetId"] and ids["Battle Log"] == log_id
    assert "Log" not in ids
    assert len(server.requests) == 1


def test_fake_records_requests_and_injects_faults_by_path(
    server: FakeSheetsServer, client: gspread.Client, key: str
) -> None:
    server.fail_next(1, 500, path_contains="values:batchGet")
    sh = client.open_by_key(key)  # not matched: goes through
    with pytest.raises(gspread.exceptions.APIError):
        sh.values_batch_get(["Orders!A1:B2"])
    assert sh.values_batch_get(["Orders!A1:B2"])["valueRanges"][0]["range"] == "Orders!A1:B2"
    assert [(r.method, r.status) for r in server.requests] == [
        ("GET", 200),
        ("GET", 500),
        ("GET", 200),
    ]
    server.clear_requests()
    assert server.requests == []


# -- the service-account path ------------------------------------------------------------------


def test_service_account_signs_in_through_the_token_endpoint(
    server: FakeSheetsServer, key: str, tmp_path: Path
) -> None:
    info, private_key = service_account_info(server.url)
    key_file = tmp_path / "service_account.json"
    key_file.write_text(json.dumps(info))
    gc = gspread.service_account(filename=key_file)
    route_to_fake(gc.http_client.session, server.url)  # the Sheets API calls
    try:
        backend = GSheetsBackend(gc, key, sleep=lambda s: None)
        backend.write_ranges([RangeUpdate("'House Rules'!A1:B1", [["R1", True]])])
        assert backend.read_ranges(["'House Rules'!A1:B"]) == [[["R1", True]]]
    finally:
        gc.http_client.session.close()

    [token] = [r for r in server.requests if r.path == "/token"]
    assert token.body["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    header, payload, signature = token.body["assertion"].split(".")
    private_key.public_key().verify(  # signed with the key from the file
        base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)),
        f"{header}.{payload}".encode(),
        padding.PKCS1v15(),
        hashes.SHA256(),
    )
    [claims] = server.token_claims
    assert claims["iss"] == "tracker@sheetsync-test.iam.gserviceaccount.com"
    assert "https://www.googleapis.com/auth/spreadsheets" in claims["scope"].split()
    api = server.api_requests()
    assert len(api) == 3  # metadata for the ids, the write, the read; one token for all
    assert all(r.headers.get("authorization") == "Bearer fake" for r in api)


def test_a_failing_token_endpoint_is_a_backend_error(
    server: FakeSheetsServer, key: str, tmp_path: Path
) -> None:
    info, _ = service_account_info(server.url)
    server.fail_next(100, 400, path_contains="/token")
    gc = gspread.service_account_from_dict(info)
    session: requests.Session = gc.http_client.session
    route_to_fake(session, server.url)
    try:
        backend = GSheetsBackend(gc, key, sleep=lambda s: None)
        with pytest.raises(BackendError, match="could not sign in to Google"):
            backend.read_ranges(["Orders!A1:B2"])
    finally:
        session.close()
    assert server.api_requests() == []
