"""An Exalted mass-combat tracker in a Google Sheet, through the real gspread client against
the fake Sheets API: laid out in one batch, its steps (Build Units, Next Tick, Undo Tick,
End Battle) at one read and one write each (E4-E6, X28-X37), and the watcher running a
ticked box on it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from fake_sheets_api import FakeSheetsServer, fake_client

from sheetsync.app.gsheet_cli import init_spreadsheet
from sheetsync.app.watch import WatchState, poll_once
from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.core.errors import BattleStateError
from sheetsync.core.registry import Mark
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import RangeUpdate, col_letter
from sheetsync.systems.exalted.system import SYSTEM
from sheetsync.systems.exalted.tracker import steps as exalted_tracker


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as srv:
        yield srv


def _fresh(server: FakeSheetsServer, key: str) -> GSheetsBackend:
    return GSheetsBackend(fake_client(server.url), key, sleep=lambda s: None)


def _example() -> Any:
    return SYSTEM.load(yaml.safe_load(SYSTEM.example_data()))


def _tracker(server: FakeSheetsServer) -> tuple[str, Any]:
    """A spreadsheet laid out as an Exalted tracker with room for the example battle, and
    the example loaded into it; returns its key and its layout."""
    battle = _example()
    capacity = exalted_tracker.capacity_for(battle)
    key = server.create_spreadsheet("Exalted battle")
    init_spreadsheet(_fresh(server, key), system="exalted", capacity=capacity)
    exalted_tracker.load_into(_fresh(server, key), battle, capacity)
    return key, SYSTEM.layout(capacity)


def test_e4_init_is_one_batch_and_the_mark_reads_exalted_1(server: FakeSheetsServer) -> None:
    key = server.create_spreadsheet("Exalted battle")
    backend = _fresh(server, key)
    server.clear_requests()
    n = init_spreadsheet(backend, system="ex2e")  # an alias names the system too
    api = server.api_requests()
    assert [(r.method, r.status) for r in api] == [("GET", 200), ("POST", 200)]
    assert len(api[1].kinds) == n and server.errors == []
    lay = SYSTEM.layout(None)
    assert [s.title for s in server.spreadsheet(key).sheets] == lay.sheets
    tracker = steps.detect(_fresh(server, key))
    assert tracker.mark == Mark("exalted", 1)
    assert tracker.system is SYSTEM


def test_e4_e6_x28_x37_each_step_is_one_get_and_one_post(server: FakeSheetsServer) -> None:
    """Build, then Next Tick, Undo, Next Tick and End, each on a fresh backend (so nothing is
    remembered between them, as between two presses of a button): one GET and one POST."""
    key, lay = _tracker(server)
    ticks = []
    for action in ("build", "resolve", "undo", "resolve", "end"):
        fresh = _fresh(server, key)
        server.clear_requests()
        report = steps.run(action, fresh)
        api = server.api_requests()
        assert [(r.method, r.status) for r in api] == [("GET", 200), ("POST", 200)], action
        assert fresh.request_count == 2
        ticks.append(report.phase)
    assert server.errors == []
    assert ticks[1] == ticks[3], "the tick undone is the tick resolved again (same seed, same tick)"
    log_block = lay.block("Log_Table")
    log = _fresh(server, key).read_ranges([log_block.range()])[0]
    kinds = [row[log_block.index("kind")] for row in log if row[log_block.index("kind")]]
    assert kinds, "the ticks were logged"


def test_e5_a_refused_undo_costs_one_read_and_writes_nothing(server: FakeSheetsServer) -> None:
    key, _lay = _tracker(server)
    fresh = _fresh(server, key)
    server.clear_requests()
    with pytest.raises(BattleStateError):
        steps.run("undo", fresh)
    assert [r.method for r in server.api_requests()] == ["GET"]


def test_e5_the_watcher_runs_a_ticked_next_tick_box_and_clears_it(server: FakeSheetsServer) -> None:
    """The watcher finds the Exalted system from the mark read with the boxes (one request),
    runs Next Tick for the ticked box at the step's one read and one write, and that write
    clears the box."""
    key, lay = _tracker(server)
    steps.run("build", _fresh(server, key))
    block = lay.block("Battle_Buttons")
    col = col_letter(block.first_col + block.index("tick"))
    tick_cell = f"{block.sheet}!{col}{block.first_row + 1}"  # the first step's box: Next Tick
    assert not exalted_tracker.export(_fresh(server, key))["battle"].get("started")
    _fresh(server, key).write_ranges([RangeUpdate(tick_cell, [[True]])])
    backend = _fresh(server, key)
    state = WatchState()
    server.clear_requests()
    assert poll_once(backend, state) == "resolve"
    assert state.tracker is not None and state.tracker.system is SYSTEM
    # the look at the boxes (with the mark), then the step's own read and its one write
    assert [r.method for r in server.api_requests()] == ["GET", "GET", "POST"]
    assert server.cell(key, tick_cell)["userEnteredValue"] == {"boolValue": False}
    assert state.steps == 1 and state.phase is not None
    assert exalted_tracker.export(_fresh(server, key))["battle"]["started"] is True, "Join War and tick 0 ran"
