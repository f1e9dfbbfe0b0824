"""Issue 26, item 2: a resolve and an undo released at the same moment on one Google Sheet,
in every rule system, through the fake Sheets API and the real gspread client.

Both steps read before either writes (a barrier after ``read_ranges``); the writes then
land in a fixed order, each order tried.  Whichever State stands, the next step must report
the lost one ("ran at the same moment"), put its rows right, and the step after it go on:
no turn is replayed and no order typed for the next turn is consumed unreported.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from fake_sheets_api import FakeSheetsServer, fake_client
from test_state_collisions import _Together

from sheetsync.app.gsheet_cli import init_spreadsheet
from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.core.errors import BattleStateError
from sheetsync.core.registry import find_system
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import RangeUpdate
from sheetsync.systems.exalted.tracker import steps as exalted_tracker
from sheetsync.systems.hexwar.tracker import steps as hexwar_tracker


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as srv:
        yield srv


def _fresh(server: FakeSheetsServer, key: str) -> GSheetsBackend:
    return GSheetsBackend(fake_client(server.url), key, sleep=lambda s: None)


def _hexwar(server: FakeSheetsServer) -> str:
    """A hex tracker with turn 1 resolved and one move typed for turn 2 (pending)."""
    system = find_system("hexwar")
    battle = system.load(yaml.safe_load(system.example_data()))
    cap = hexwar_tracker.capacity_for(battle)
    key = server.create_spreadsheet("Hex")
    init_spreadsheet(_fresh(server, key), system="hexwar", capacity=cap)
    hexwar_tracker.load_into(_fresh(server, key), battle, cap)
    steps.run("resolve", _fresh(server, key))
    _fresh(server, key).write_ranges([RangeUpdate("Moves!B7:C7", [["Caliph's Horses", "0404"]])])
    return key


def _exalted(server: FakeSheetsServer) -> str:
    """An Exalted tracker with long tick 0 resolved and the orders of later ticks pending."""
    system = find_system("exalted")
    battle = system.load(yaml.safe_load(system.example_data()))
    cap = exalted_tracker.capacity_for(battle)
    key = server.create_spreadsheet("Exalted")
    init_spreadsheet(_fresh(server, key), system="exalted", capacity=cap)
    exalted_tracker.load_into(_fresh(server, key), battle, cap)
    steps.run("build", _fresh(server, key))
    steps.run("resolve", _fresh(server, key))
    return key


def _stamps(server: FakeSheetsServer, key: str, system: str, where: str) -> list[Any]:
    """The stamp (turn or long tick) of the first five order rows."""
    block_name, column = where.split(".")
    block = find_system(system).layout(None).block(block_name)
    letter = block.letter(column)
    a1 = f"{block.sheet}!{letter}{block.first_row}:{letter}{block.first_row + 4}"
    return [row[0] if row else None for row in _fresh(server, key).read_ranges([a1])[0]]


SYSTEMS: dict[str, tuple[Callable[[FakeSheetsServer], str], str]] = {
    "hexwar": (_hexwar, "Moves_Table.turn"),
    "exalted": (_exalted, "Orders_Table.resolved"),
}
"""Each system's tracker ready for the pair, and the cells that stamp its orders."""


def _collide(server: FakeSheetsServer, key: str, first: str, second: str) -> list[Any]:
    """``first`` and ``second`` from the same read, released together; ``first`` lands first."""
    barrier = threading.Barrier(2)
    go, first_done, second_done = threading.Event(), threading.Event(), threading.Event()
    go.set()
    laptops = [_Together(_fresh(server, key), barrier, go, first_done),
               _Together(_fresh(server, key), barrier, first_done, second_done)]
    results: list[Any] = [None, None]

    def run(i: int, action: str) -> None:
        try:
            results[i] = steps.run(action, laptops[i])  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - handed to the test
            results[i] = exc
            laptops[i].done.set()

    threads = [threading.Thread(target=run, args=(0, first)), threading.Thread(target=run, args=(1, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


@pytest.mark.parametrize("system", sorted(SYSTEMS))
@pytest.mark.parametrize("first, second", [("resolve", "undo"), ("undo", "resolve")])
def test_issue26_2_a_resolve_and_an_undo_at_once_are_never_lost_unreported(
        server: FakeSheetsServer, system: str, first: str, second: str) -> None:
    make, stamp_cells = SYSTEMS[system]
    key = make(server)
    before = _stamps(server, key, system, stamp_cells)
    results = _collide(server, key, first, second)
    assert all(not isinstance(r, Exception) for r in results), results  # both ran and landed
    resolved, undone = results[(first, second).index("resolve")], results[(first, second).index("undo")]
    with pytest.raises(BattleStateError, match="ran at the same moment") as err:
        steps.run("resolve", _fresh(server, key))
    assert "was lost: run it again" in str(err.value)
    after_repair = _stamps(server, key, system, stamp_cells)
    if second == "undo":  # the undo landed last and stands: the resolve was lost
        assert "Undo" in str(err.value).split(" stands")[0].split("; ")[-1]
        assert all(s is None for s in after_repair), after_repair  # its stamps are gone, the undo's rows pending
        again = steps.run("resolve", _fresh(server, key))
        assert again.phase == undone.phase  # the turn undone is resolved again, not shown as a later one
    else:  # the resolve stands: the undo was lost
        # the rows the lost undo made pending are stamped again; the resolve that stands stamped more
        assert after_repair[:len(before)] == before and None not in after_repair[len(before):]
        assert len(after_repair) > len(before)
        report = steps.run("undo", _fresh(server, key))
        assert report.phase == resolved.phase  # undo takes back the turn the standing resolve resolved


def test_issue26_2_the_battalion_check_is_the_shared_one() -> None:
    """Every system reports a lost step through the one check of the State journal."""
    from sheetsync.systems.bbn.tracker import journal as sj

    log = [["1:aa:build:0:1"], ["2:bb:resolve:1:1"], ["2:cc:undo:1"], ["2:cc:undo:1"], ["3:dd:resolve:2"]]
    lost, twice = sj.find_lost([(1, "aa"), (2, "bb"), (3, "dd")], [], 0, log)
    assert [(x.key, x.action, x.phase, x.rows) for x in lost] == [("2:cc", "undo", 1, (2, 3))]
    assert twice == []
    assert sj.find_lost([(1, "aa"), (2, "bb"), (3, "dd")], ["2:cc"], 0, log) == ([], [])
