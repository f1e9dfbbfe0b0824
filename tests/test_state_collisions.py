"""Two steps at the same moment on one Google Sheet (issue 8, item 2).

Each pair runs on two gspread backends against the fake Sheets API, in two threads that
both read before either writes (a barrier after ``read_ranges``); the writes then land in
a fixed order, and every pair is run in both orders.  The guarantees checked:

* the State always reads back whole, whichever write landed last;
* the next step refuses once, naming the step that stands and the one lost, repairs what
  the lost one left behind, and the following step goes ahead;
* the same step run twice at once is applied once, and is not reported as a loss.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from battles import make_battle
from fake_sheets_api import FakeSheetsServer, fake_client

from sheetsync.app import usecases
from sheetsync.app.gsheet_cli import init_spreadsheet
from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.core.errors import BattleStateError
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.tracker import journal as sj
from sheetsync.systems.bbn.tracker.layout import STATE_CHUNKS, layout

LAY = layout()
ORDERS = LAY.block("Orders_Table")
LOG = LAY.block("Log_Table")
STATE = LAY.block("State_Blob")


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def small_state_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of 2,000 characters, so a resolve's State takes more pieces than the Undo's
    that overwrites it: the case that left an unreadable State before."""
    monkeypatch.setattr(sj, "STATE_CHUNK_CHARS", 2000)


def _backend(server: FakeSheetsServer, key: str) -> GSheetsBackend:
    return GSheetsBackend(fake_client(server.url), key, sleep=lambda s: None)


def _battle_at_phase_2(server: FakeSheetsServer) -> GSheetsBackend:
    """A tracker with phase 1 resolved and phase 2's orders typed (pending)."""
    key = server.create_spreadsheet("Battle")
    backend = _backend(server, key)
    init_spreadsheet(backend)
    usecases.load_battle_into(backend, load_battle(make_battle(4)))
    usecases.resolve(backend)
    grid = _typed(backend.read_ranges([ORDERS.range()])[0])
    inputs = slice(ORDERS.index("cohort"), ORDERS.index("picks") + 1)
    rows = [list(r[inputs]) for r in grid]
    for r in rows:
        r[ORDERS.index("roll") - 1] = None
    start = ORDERS.first_row + len(grid)
    backend.write_ranges([RangeUpdate(f"Orders!{ORDERS.letter('cohort')}{start}:{ORDERS.letter('picks')}"
                                      f"{start + len(rows) - 1}", rows)])
    return backend


def _typed(grid: Grid) -> Grid:
    """The Orders rows with a cohort typed (the Odds column holds a formula in every row)."""
    j = ORDERS.index("cohort")
    last = max((i for i, row in enumerate(grid) if row[j] is not None), default=-1)
    return grid[:last + 1]


class _Together:
    """A Tracker's laptop: it reads, waits until the other laptop has read too, and writes
    only when its turn comes (``turn`` is set), then lets the next one go (``done``)."""

    def __init__(self, inner: GSheetsBackend, barrier: threading.Barrier, turn: threading.Event,
                 done: threading.Event) -> None:
        self.inner, self.barrier, self.turn, self.done = inner, barrier, turn, done

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        grids = self.inner.read_ranges(ranges)
        self.barrier.wait(timeout=60)
        return grids

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        assert self.turn.wait(timeout=60)
        try:
            self.inner.write_ranges(updates)
        finally:
            self.done.set()


def _collide(server: FakeSheetsServer, key: str, first: str, second: str) -> list[Any]:
    """Run step ``first`` and step ``second`` from the same read; ``first``'s write lands
    first.  Returns each one's report (or the error it raised)."""
    barrier = threading.Barrier(2)
    go, first_done, second_done = threading.Event(), threading.Event(), threading.Event()
    go.set()
    laptops = [_Together(_backend(server, key), barrier, go, first_done),
               _Together(_backend(server, key), barrier, first_done, second_done)]
    results: list[Any] = [None, None]

    def run(i: int, action: str) -> None:
        try:
            results[i] = usecases.run(action, laptops[i])  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - handed to the test
            results[i] = exc
            laptops[i].done.set()

    threads = [threading.Thread(target=run, args=(0, first)), threading.Thread(target=run, args=(1, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


def _stamps(backend: GSheetsBackend) -> list[Any]:
    grid = _typed(backend.read_ranges([ORDERS.range()])[0])
    return [row[ORDERS.index("phase")] for row in grid]


def _log_steps(backend: GSheetsBackend) -> list[Any]:
    return [row[0] for row in backend.read_ranges([f"Log!{LOG.letter('step')}2:{LOG.letter('step')}"])[0]]


def _state_pieces(backend: GSheetsBackend) -> int:
    return len(backend.read_ranges([STATE.range()])[0])


def _refused_once(backend: GSheetsBackend, step: str, match: str) -> str:
    with pytest.raises(BattleStateError, match=match) as err:
        usecases.run(step, backend)
    return str(err.value)


# -- resolve + undo -------------------------------------------------------------------------


def test_issue8_2_resolve_then_undo_lands_last_undo_stands_resolve_reported_lost(server: FakeSheetsServer) -> None:
    backend = _battle_at_phase_2(server)
    resolve, undo = _collide(server, backend.key, "resolve", "undo")
    assert resolve.phase == 2 and undo.phase == 1  # both steps ran and landed
    assert usecases.export(backend)["next_phase"] == 1  # the State reads back whole: the Undo's
    msg = _refused_once(backend, "resolve", "ran at the same moment")
    assert "Undo Phase 1 stands, Resolve Phase 2 was lost: run it again" in msg
    # repaired: no Orders row keeps a stamp of a phase the State has not resolved
    assert all(s is None for s in _stamps(backend))
    lost = [v for v in _log_steps(backend) if isinstance(v, str) and v.endswith(" lost")]
    assert len(lost) == len(resolve.result.events) + len(resolve.result.end_of_phase)
    assert all(":resolve:2:" in v for v in lost)
    report = usecases.resolve(backend)  # reported once: the next attempt goes ahead
    assert report.phase == 1


def test_issue8_2_undo_then_resolve_lands_last_resolve_stands_undo_reported_and_stamps_restored(
        server: FakeSheetsServer) -> None:
    backend = _battle_at_phase_2(server)
    phase1 = [s for s in _stamps(backend) if s == 1]
    undo, resolve = _collide(server, backend.key, "undo", "resolve")
    assert undo.phase == 1 and resolve.phase == 2
    assert usecases.export(backend)["next_phase"] == 3  # the Resolve's State, whole
    assert [s for s in _stamps(backend) if s == 1] == []  # the lost Undo cleared phase 1's stamps
    msg = _refused_once(backend, "resolve", "ran at the same moment")
    assert "Resolve Phase 2 stands, Undo Phase 1 was lost: run it again" in msg
    stamps = _stamps(backend)
    assert stamps.count(1) == len(phase1) and stamps.count(2) == len(phase1) and None not in stamps
    # phase 1's outcomes are back too, as the first resolve wrote them
    grid = _typed(backend.read_ranges([ORDERS.range()])[0])
    assert all(row[ORDERS.index("outcome")] for row in grid)
    with pytest.raises(BattleStateError, match="no pending orders for phase 3"):
        usecases.resolve(backend)
    assert usecases.undo(backend).phase == 2  # and undo works on the repaired tracker


# -- resolve + end --------------------------------------------------------------------------


def test_issue8_2_resolve_then_end_lands_last_end_stands_resolve_reported(server: FakeSheetsServer) -> None:
    backend = _battle_at_phase_2(server)
    resolve, end = _collide(server, backend.key, "resolve", "end")
    assert resolve.phase == 2 and end.phase == 1
    assert usecases.export(backend)["next_phase"] == 2
    msg = _refused_once(backend, "undo", "ran at the same moment")
    assert "End Battle stands, Resolve Phase 2 was lost: run it again" in msg
    assert 2 not in _stamps(backend)
    phase_cell = backend.read_ranges([LAY.cells["Battle_Phase"].ref])[0]
    assert phase_cell == [[2]]  # the dashboard is the State's again, not the lost resolve's
    assert usecases.resolve(backend).phase == 2


def test_issue8_2_end_then_resolve_lands_last_resolve_stands_end_reported_aftermath_cleared(
        server: FakeSheetsServer) -> None:
    backend = _battle_at_phase_2(server)
    end, resolve = _collide(server, backend.key, "end", "resolve")
    assert end.phase == 1 and resolve.phase == 2
    after = LAY.block("Aftermath_Table")
    assert backend.read_ranges([after.range()])[0]  # the lost End's results are on the sheet
    msg = _refused_once(backend, "resolve", "ran at the same moment")
    assert "Resolve Phase 2 stands, End Battle was lost: run it again" in msg
    assert backend.read_ranges([after.range()])[0] == []
    assert usecases.end_battle(backend).phase == 2


# -- undo + undo, resolve + resolve: the same step twice ------------------------------------


@pytest.mark.parametrize("step", ["undo", "resolve"])
def test_issue8_2_r13_same_step_twice_at_once_applies_once_and_is_not_a_loss(server: FakeSheetsServer,
                                                                              step: str) -> None:
    backend = _battle_at_phase_2(server)
    a, b = _collide(server, backend.key, step, step)
    assert a.phase == b.phase
    expected = 1 if step == "undo" else 3
    assert usecases.export(backend)["next_phase"] == expected
    follow = usecases.run("resolve" if step == "undo" else "undo", backend)  # not refused: nothing was lost
    assert "run twice at the same moment and applied once" in follow.message
    marked = [v for v in _log_steps(backend) if isinstance(v, str) and v.endswith(" duplicate")]
    rows = 1 if step == "undo" else len(a.result.events) + len(a.result.end_of_phase)
    assert len(marked) == rows


def test_issue8_2_two_resolves_of_different_orders_at_once_one_is_reported(server: FakeSheetsServer) -> None:
    """Someone types one more order between the two reads: the resolves differ, so the one
    overwritten is a loss and is reported (it used to be silently replaced)."""
    backend = _battle_at_phase_2(server)
    key = backend.key
    barrier = threading.Barrier(2)
    first_done, second_done, go = threading.Event(), threading.Event(), threading.Event()
    go.set()
    a = _Together(_backend(server, key), barrier, go, first_done)
    b = _Together(_backend(server, key), barrier, first_done, second_done)
    grid = _typed(backend.read_ranges([ORDERS.range()])[0])
    row = ORDERS.first_row + len(grid)

    class _LateReader(_Together):
        def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
            self.inner.write_ranges([RangeUpdate(f"Orders!{ORDERS.letter('cohort')}{row}:"
                                                 f"{ORDERS.letter('target')}{row}",
                                                 [["Cohort 0", "Melee Attack", "Cohort 1"]])])
            return super().read_ranges(ranges)

    late = _LateReader(b.inner, barrier, first_done, second_done)
    results: list[Any] = [None, None]

    def run(i: int, laptop: _Together) -> None:
        results[i] = usecases.resolve(laptop)  # type: ignore[arg-type]

    first = threading.Thread(target=run, args=(0, a))
    first.start()
    # the first laptop reads before the order is typed; the second one after
    while barrier.n_waiting < 1:
        threading.Event().wait(0.01)
    second = threading.Thread(target=run, args=(1, late))
    second.start()
    first.join(60)
    second.join(60)
    assert len(results[0].result.events) + 1 == len(results[1].result.events)
    msg = _refused_once(backend, "undo", "ran at the same moment")
    assert "Resolve Phase 2 and Resolve Phase 2 ran at the same moment" in msg


# -- the State write itself ---------------------------------------------------------------


def test_issue8_2_state_write_covers_the_whole_block_whatever_was_there() -> None:
    """A shorter State than the one before leaves no piece of it behind."""
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    battle = load_battle(make_battle(6))
    usecases.load_battle_into(backend, battle)
    usecases.resolve(backend)
    long = len(backend.read_ranges([STATE.range()])[0])
    usecases.undo(backend)
    short = len(backend.read_ranges([STATE.range()])[0])
    assert short < long
    update = sj.state_update(LAY, battle, None, prior=sj.Stored(), action="new", phase=0).update
    assert len(update.values) == STATE_CHUNKS and update.range.endswith(f"A{STATE.first_row + STATE_CHUNKS - 1}")
    assert usecases.export(backend)["next_phase"] == 1


def test_issue8_2_old_state_without_revision_reads_as_rev_0_and_steps_go_on() -> None:
    """A tracker written before the journal: its State has no rev, its Log no Step ids."""
    import json

    backend = MemoryBackend({name: {} for name in LAY.sheets})
    battle = load_battle(make_battle(2))
    usecases.load_battle_into(backend, battle)
    data = battle.to_data()
    data["log"] = []
    old = json.dumps({"battle": data, "last": None})
    backend.write_ranges([RangeUpdate(STATE.range(rows=STATE_CHUNKS), [[old]] + [[None]] * (STATE_CHUNKS - 1))])
    stored = sj.parse_state(backend.read_ranges([STATE.range()])[0])
    assert stored.rev == 0 and stored.journal == []
    assert usecases.resolve(backend).phase == 1
    assert sj.parse_state(backend.read_ranges([STATE.range()])[0]).rev == 1
    assert usecases.undo(backend).phase == 1


# -- appendCells in the fake, as Google documents it ----------------------------------------


def test_fake_append_cells_puts_rows_after_the_last_row_with_data_and_grows_the_grid(
        server: FakeSheetsServer) -> None:
    key = server.create_spreadsheet("Append")
    backend = _backend(server, key)
    sheet_id = backend.metadata()["Sheet1"]
    grid = server.spreadsheet(key).sheet(sheet_id).properties["gridProperties"]
    rows = grid["rowCount"]
    server.set_values(key, f"Sheet1!A{rows}", [["last"]])

    def append(text: str) -> dict[str, Any]:
        return {"appendCells": {"sheetId": sheet_id, "rows": [{"values": [{"userEnteredValue": {"stringValue": text}}]}],
                                "fields": "userEnteredValue"}}

    backend.spreadsheet_batch_update([append("one"), append("two")])
    assert server.spreadsheet(key).sheet(sheet_id).row_count == rows + 2  # rows inserted
    assert server.cell(key, f"Sheet1!A{rows + 1}")["userEnteredValue"] == {"stringValue": "one"}
    assert server.cell(key, f"Sheet1!A{rows + 2}")["userEnteredValue"] == {"stringValue": "two"}


def test_fake_append_cells_without_fields_is_refused_like_google(server: FakeSheetsServer) -> None:
    from sheetsync.core.errors import BackendError

    key = server.create_spreadsheet("Append")
    backend = _backend(server, key)
    sheet_id = backend.metadata()["Sheet1"]
    with pytest.raises(BackendError, match="At least one field"):
        backend.spreadsheet_batch_update([{"appendCells": {"sheetId": sheet_id, "rows": []}}])
    with pytest.raises(BackendError, match="No grid with id"):
        backend.spreadsheet_batch_update([{"appendCells": {"sheetId": 424242, "rows": [], "fields": "*"}}])


def test_log_rows_are_appended_on_every_backend_after_the_last_row_with_a_value() -> None:
    backend = MemoryBackend({"Log": {(1, 1): "Phase", (5, 3): "typed by hand"}})
    backend.write_ranges([RangeUpdate("Log!A2:K", [["a"], ["b"]], append=True),
                          RangeUpdate("Log!A2:K", [["c"]], append=True)])
    assert backend.read_ranges(["Log!A6:A9"])[0] == [["a"], ["b"], ["c"]]


@pytest.mark.parametrize("client", ["VBA", "Google Apps Script"])
def test_xlwings_append_lands_after_the_last_row_with_a_value(monkeypatch: pytest.MonkeyPatch, client: str) -> None:
    """The endpoint's backend: an append starts after the used range's last row holding a
    value, and two appends in one write follow each other."""
    import openpyxl

    from sheetsync.backends.xlwings_backend import XlwingsBackend
    from sheetsync.backends.xlwings_remote import (
        CLIENTS,
        apply_actions,
        payload_from_openpyxl,
        remote_book,
    )

    monkeypatch.setenv("XLWINGS_LICENSE_KEY", "noncommercial")
    assert client in CLIENTS
    wb = openpyxl.Workbook()
    log = wb.active
    log.title = "Log"
    log.append(["Phase", "Cohort"])
    log.append([1, "Iron Wolves"])
    log["C4"] = "typed by hand"
    book = remote_book(payload_from_openpyxl(wb, client))
    XlwingsBackend(book).write_ranges([RangeUpdate("Log!A2:B", [[2, "Red Hand"], [2, "Night Watch"]], append=True),
                                       RangeUpdate("Log!A2:B", [[3, "Ghouls"]], append=True)])
    apply_actions(wb, book.json(), client=client)
    assert [[c.value for c in row] for row in wb["Log"]["A5:B7"]] == [[2, "Red Hand"], [2, "Night Watch"], [3, "Ghouls"]]
    assert wb["Log"]["A4"].value is None


def test_excel_append_skips_styled_empty_rows(tmp_path: Any) -> None:
    """openpyxl counts a styled empty row in ``max_row``: an append scans for values."""
    import openpyxl
    from openpyxl.styles import Font

    from sheetsync.backends.excel import ExcelBackend

    path = tmp_path / "log.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "Log"
    wb["Log"]["A1"] = "Phase"
    wb["Log"]["A2"] = 1
    for r in range(3, 50):
        wb["Log"].cell(row=r, column=1).font = Font(bold=True)
    wb.save(path)
    backend = ExcelBackend(path)
    backend.write_ranges([RangeUpdate("Log!A2:B", [[2, "x"]], append=True)])
    assert ExcelBackend(path).read_ranges(["Log!A2:B4"])[0] == [[1, None], [2, "x"]]
