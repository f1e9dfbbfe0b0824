"""A Google Sheets step reads only the ranges it uses: its one GET asks for the mark and
the tracker's named read ranges (``sheetsync_read_01`` ..), never the whole spreadsheet,
and still one GET and one POST per step; the cells it writes are the same as when the
step reads the whole spreadsheet; a tracker made before the read ranges gets them added
once, in its next step's write.  For every system: the battalion one (R13, a Resolve
Phase), the hex wargame (H3, a turn) and Exalted (E4, a tick)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from battles import make_battle
from fake_sheets_api import FakeSheetsServer, fake_client
from test_gsheets_hexwar import _fresh
from test_gsheets_hexwar import server as server  # the fake Sheets API, one per test

from sheetsync.app import usecases
from sheetsync.app.gsheet_cli import init_spreadsheet
from sheetsync.backends.gsheets import (
    NAMED_READ_FIELDS,
    READ_SLOTS,
    SNAPSHOT_FIELDS,
    GSheetsBackend,
    read_slot_name,
)
from sheetsync.sheets import marks
from sheetsync.sheets.marks import HEAD_RANGE

SLOTS = [read_slot_name(i) for i in range(READ_SLOTS)]
NEXT = [read_slot_name(i, "next") for i in range(READ_SLOTS)]
"""The named ranges of the next Resolve's read (issue 23)."""




class WholeRead(GSheetsBackend):
    """The step reading the whole spreadsheet, as before the read ranges: the reference."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._named_read = False


def _bbn(server: FakeSheetsServer, key: str) -> None:
    from sheetsync.systems.bbn.files.loader import load_battle

    init_spreadsheet(_fresh(server, key))
    usecases.load_battle_into(_fresh(server, key), load_battle(make_battle(4)))


def _hexwar(server: FakeSheetsServer, key: str) -> None:
    from sheetsync.systems.hexwar.system import SYSTEM
    from sheetsync.systems.hexwar.tracker import steps as hexwar_tracker

    init_spreadsheet(_fresh(server, key), system="hexwar")
    hexwar_tracker.load_into(_fresh(server, key), SYSTEM.load(yaml.safe_load(SYSTEM.example_data())))


def _exalted(server: FakeSheetsServer, key: str) -> None:
    from sheetsync.systems.exalted.system import SYSTEM
    from sheetsync.systems.exalted.tracker import steps as exalted_tracker

    battle = SYSTEM.load(yaml.safe_load(SYSTEM.example_data()))
    capacity = exalted_tracker.capacity_for(battle)
    init_spreadsheet(_fresh(server, key), system="exalted", capacity=capacity)
    exalted_tracker.load_into(_fresh(server, key), battle, capacity)


SYSTEMS: dict[str, Callable[[FakeSheetsServer, str], None]] = {"bbn": _bbn, "hexwar": _hexwar, "exalted": _exalted}
STEPS = ("build", "resolve", "undo", "resolve", "undo", "resolve", "end")


def _tracker(server: FakeSheetsServer, system: str) -> str:
    key = server.create_spreadsheet(f"{system} battle")
    SYSTEMS[system](server, key)
    return key


def _cells(server: FakeSheetsServer, key: str) -> dict[str, Any]:
    """Every sheet's user-entered values, without the named ranges."""
    ss = server.spreadsheet(key)
    return {sheet.title: {at: cell.get("userEnteredValue") for at, cell in sheet.cells.items()
                          if cell.get("userEnteredValue") is not None} for sheet in ss.sheets}


def _drop_read_ranges(server: FakeSheetsServer, key: str) -> None:
    """The tracker as it was made before the read ranges."""
    ss = server.spreadsheet(key)
    ss.named_ranges = [n for n in ss.named_ranges if not n["name"].startswith(("sheetsync_read_", "sheetsync_next_"))]


def _slots(action: str) -> list[str]:
    """The named ranges a step's GET asks for: a Resolve's, from where the step before left
    its tables (issue 23); every other step's, its whole plan."""
    return NEXT if action == "resolve" else SLOTS


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_r13_h3_e4_a_step_gets_the_mark_and_the_read_ranges_only(server: FakeSheetsServer, system: str) -> None:
    key = _tracker(server, system)
    names = {n["name"] for n in server.spreadsheet(key).named_ranges}
    assert set(SLOTS) <= names, "a new tracker carries its read ranges"
    for action in STEPS:
        server.clear_requests()
        backend = _fresh(server, key)
        marks.run(action, backend)
        get, post = server.api_requests()
        assert (get.method, get.status, post.method, post.status) == ("GET", 200, "POST", 200), action
        assert get.query["ranges"] == [HEAD_RANGE, *_slots(action)], action
        assert get.query["includeGridData"] == ["true"] and get.query["fields"] == [NAMED_READ_FIELDS]
        assert backend.request_count == 2
    assert server.errors == []


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_r13_h3_e4_the_cells_written_are_those_of_the_whole_read(server: FakeSheetsServer, system: str) -> None:
    named, whole = _tracker(server, system), _tracker(server, system)
    assert _cells(server, named) == _cells(server, whole)
    for action in STEPS:
        marks.run(action, _fresh(server, named))
        reference = WholeRead(fake_client(server.url), whole, sleep=lambda s: None)
        server.clear_requests()
        marks.run(action, reference)
        assert server.api_requests()[0].query["fields"] == [SNAPSHOT_FIELDS]
        assert "ranges" not in server.api_requests()[0].query
        assert _cells(server, named) == _cells(server, whole), action


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_r13_h3_e4_an_old_tracker_gets_its_read_ranges_once(server: FakeSheetsServer, system: str) -> None:
    key = _tracker(server, system)
    _drop_read_ranges(server, key)
    server.clear_requests()
    marks.run("build", _fresh(server, key))
    api = server.api_requests()
    # the read of the read ranges is refused (they don't exist), the whole spreadsheet is
    # read instead, and the write adds them
    assert [(r.method, r.status) for r in api] == [("GET", 400), ("GET", 200), ("POST", 200)]
    assert "ranges" not in api[1].query
    added = [r["addNamedRange"]["namedRange"]["name"] for r in api[2].body["requests"] if "addNamedRange" in r]
    assert added == SLOTS + NEXT
    for action in ("resolve", "undo", "resolve"):
        server.clear_requests()
        marks.run(action, _fresh(server, key))
        get, post = server.api_requests()
        assert (get.status, post.status) == (200, 200)
        assert get.query["ranges"] == [HEAD_RANGE, *_slots(action)]
        assert not [r for r in post.body["requests"] if "addNamedRange" in r], "added once"


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_r13_h3_e4_two_requests_per_step_over_many_steps_on_one_backend(server: FakeSheetsServer,
                                                                         system: str) -> None:
    """Resolve and Undo in turn on one backend (the example battles type one phase of
    orders): every step one GET of the read ranges and one POST."""
    key = _tracker(server, system)
    backend = _fresh(server, key)
    marks.run("build", backend)
    for phase in range(8):
        before = backend.request_count
        server.clear_requests()
        action = "undo" if phase % 2 else "resolve"
        marks.run(action, backend)
        assert backend.request_count - before == 2, phase
        assert [r.query.get("ranges", [None])[1:] for r in server.api_requests() if r.method == "GET"] == [
            _slots(action)]
    assert server.errors == []


def test_update_named_range_is_checked_as_google_does(server: FakeSheetsServer) -> None:
    """The fake's ``updateNamedRange``: an unknown id, a missing ``fields`` mask, a field the
    mask names that ``NamedRange`` lacks and a name taken by another named range are each
    refused with 400 and change nothing; ``fields: "range"`` moves the range only."""
    key = _tracker(server, "hexwar")
    backend = _fresh(server, key)
    ss = server.spreadsheet(key)
    first = next(n for n in ss.named_ranges if n["name"] == SLOTS[0])
    sheet_id = first["range"]["sheetId"]
    moved = {"sheetId": sheet_id, "startRowIndex": 0, "endRowIndex": 1, "startColumnIndex": 0, "endColumnIndex": 1}

    def update(named: dict[str, Any], fields: str | None) -> None:
        request: dict[str, Any] = {"namedRange": named}
        if fields is not None:
            request["fields"] = fields
        backend.spreadsheet_batch_update([{"updateNamedRange": request}])

    from sheetsync.core.errors import BackendError

    bad: list[tuple[dict[str, Any], str | None]] = [
        ({"namedRangeId": "no-such-id", "range": moved}, "range"),
        ({"namedRangeId": first["namedRangeId"], "range": moved}, None),
        ({"namedRangeId": first["namedRangeId"], "range": moved}, "ranges"),
        ({"namedRangeId": first["namedRangeId"], "name": SLOTS[1]}, "name"),
        ({"namedRangeId": first["namedRangeId"], "name": "A1"}, "name"),
    ]
    for named, fields in bad:
        with pytest.raises(BackendError, match="400"):
            update(named, fields)
        assert next(n for n in server.spreadsheet(key).named_ranges if n["name"] == SLOTS[0]) == first
    update({"namedRangeId": first["namedRangeId"], "name": "ignored", "range": moved}, "range")
    now = next(n for n in server.spreadsheet(key).named_ranges if n["namedRangeId"] == first["namedRangeId"])
    assert now == {**first, "range": moved}


def test_r13_issue23_a_resolve_gets_only_the_rows_since_the_step_before(server: FakeSheetsServer) -> None:
    """A battalion battle played phase after phase on Google Sheets: each Resolve's one GET
    brings the Orders and Log rows from where the step before left them (the ``next``
    named ranges, moved by each step's write), so what it reads does not grow with the
    phases behind it; every step is still one GET and one POST."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_gsheets import Sized, Typist, _setup, _type_orders

    key = _setup(server, "bbn", 8)
    sizes: list[int] = []
    for phase in range(1, 8):
        if phase > 1:
            _type_orders(Typist(fake_client(server.url), key), phase)
        server.clear_requests()
        backend = Sized(fake_client(server.url), key)
        marks.run("resolve", backend)
        get, post = server.api_requests()
        assert (get.method, get.status, post.status) == ("GET", 200, 200)
        assert get.query["ranges"] == [HEAD_RANGE, *NEXT]
        sizes.append(backend.read_bytes)
    # the first Resolve reads the whole Orders table; from then on, one phase's rows
    assert max(sizes[2:]) <= sizes[1] * 1.02, sizes
