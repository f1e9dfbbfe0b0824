"""A Google Sheet as the tracker: the real gspread client against the fake Sheets API.

Request counts per step, parity with the workbook path, retries without partial writes,
double resolves, formula injection and the checkbox watcher.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from battles import make_battle
from fake_sheets_api import FakeSheetsServer, fake_client

from sheetsync.app import usecases
from sheetsync.app.gsheet_cli import copy_tracker, init_spreadsheet, tracker_ranges
from sheetsync.app.watch import watch
from sheetsync.app.workbook_cli import excel_backend, new_workbook
from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.core.errors import BackendError, BattleStateError, SheetFormatError
from sheetsync.sheets.disk import example_path, read_data_file
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.tracker.layout import layout

LAY = layout()


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as srv:
        yield srv


def _tracker(server: FakeSheetsServer, **kw: object) -> GSheetsBackend:
    key = server.create_spreadsheet("Battle")
    sleeps: list[float] = []
    backend = GSheetsBackend(fake_client(server.url), key, sleep=sleeps.append, **kw)  # type: ignore[arg-type]
    init_spreadsheet(backend)
    return backend


def test_gsheet_init_is_one_request_with_the_whole_layout(server: FakeSheetsServer) -> None:
    key = server.create_spreadsheet("Battle")
    backend = GSheetsBackend(fake_client(server.url), key)
    server.clear_requests()
    init_spreadsheet(backend)
    api = server.api_requests()
    assert len(api) == 2  # metadata, then one batchUpdate
    book = server.spreadsheet(key)
    titles = [s.title for s in book.sheets] if isinstance(book.sheets, list) else list(book.sheets)
    assert "Orders" in str(titles) and "Sheet1" not in str(titles)
    assert {"Cohort_Names", "Orders_Table", "Battle_Phase"} <= set(book.named_ranges if isinstance(book.named_ranges, dict)
                                                                   else [n["name"] for n in book.named_ranges])


@pytest.mark.parametrize("cohorts", [2, 6, 20])
def test_r13_resolve_is_two_requests_whatever_the_cohorts(server: FakeSheetsServer, cohorts: int) -> None:
    backend = _tracker(server)
    usecases.load_battle_into(backend, load_battle(make_battle(cohorts)))
    server.clear_requests()
    before = backend.request_count
    report = usecases.resolve(backend)
    assert backend.request_count - before == 2
    assert len(server.api_requests()) == 2
    assert len(report.result.events) == 2 * cohorts  # type: ignore[union-attr]


def _loaded(server: FakeSheetsServer) -> GSheetsBackend:
    backend = _tracker(server)
    usecases.load_battle_into(backend, load_battle(read_data_file(example_path())))
    return backend


def _two_requests(server: FakeSheetsServer, backend: GSheetsBackend, action: str) -> list[str]:
    server.clear_requests()
    before = backend.request_count
    usecases.run(action, backend)
    assert backend.request_count - before == 2
    api = server.api_requests()
    assert len(api) == 2
    return [r.method for r in api]


def test_issue8_15_build_is_two_requests(server: FakeSheetsServer) -> None:
    backend = _loaded(server)
    assert _two_requests(server, backend, "build") == ["GET", "POST"]


def test_issue8_15_undo_is_two_requests(server: FakeSheetsServer) -> None:
    backend = _loaded(server)
    usecases.resolve(backend)
    assert _two_requests(server, backend, "undo") == ["GET", "POST"]


def test_issue8_15_end_is_two_requests_with_a_fresh_backend(server: FakeSheetsServer) -> None:
    """``gsheet end`` builds a new backend: no sheet ids are cached, and the step's one read
    must bring the Aftermath sheet's id (it used to cost a third request)."""
    backend = _loaded(server)
    usecases.resolve(backend)
    fresh = GSheetsBackend(fake_client(server.url), backend.key, sleep=lambda s: None)
    assert _two_requests(server, fresh, "end") == ["GET", "POST"]


def test_issue8_15_every_step_on_a_fresh_backend_is_two_requests(server: FakeSheetsServer) -> None:
    backend = _loaded(server)
    for action in ("build", "resolve", "undo", "resolve", "end"):
        fresh = GSheetsBackend(fake_client(server.url), backend.key, sleep=lambda s: None)
        _two_requests(server, fresh, action)


def test_same_cells_as_the_workbook_path(server: FakeSheetsServer, tmp_path: Path) -> None:
    """Load, resolve, undo, resolve, end on both backends: every tracker cell is equal."""
    backend = _tracker(server)
    battle = load_battle(read_data_file(example_path()))
    usecases.load_battle_into(backend, battle)
    wb = tmp_path / "parity.xlsx"
    new_workbook(wb, example_path())
    excel = excel_backend(wb)
    for step in ("resolve", "undo", "resolve", "end"):
        a = usecases.run(step, backend)
        b = usecases.run(step, excel)
        assert a.message == b.message
    ranges = tracker_ranges(LAY)
    g_grids = backend.read_ranges(ranges)
    x_grids = excel_backend(wb).read_ranges(ranges)
    assert len(g_grids) == len(x_grids)
    for rng, g, x in zip(ranges, g_grids, x_grids, strict=True):
        assert g == x, rng


def test_failed_write_retried_then_nothing_half_written(server: FakeSheetsServer) -> None:
    backend = _tracker(server, max_tries=3)
    usecases.load_battle_into(backend, load_battle(read_data_file(example_path())))
    before = backend.read_ranges(tracker_ranges(LAY))
    server.fail_next(3, status=500, path_contains=":batchUpdate")
    with pytest.raises(BackendError):
        usecases.resolve(backend)
    assert backend.read_ranges(tracker_ranges(LAY)) == before
    report = usecases.resolve(backend)  # the sheet is intact: the step can simply be run again
    assert report.phase == 1


def test_quota_429_retried_and_step_lands(server: FakeSheetsServer) -> None:
    backend = _tracker(server)
    usecases.load_battle_into(backend, load_battle(read_data_file(example_path())))
    server.fail_next(2, status=429, path_contains=":batchUpdate")
    report = usecases.resolve(backend)
    assert report.phase == 1
    assert usecases.export(backend)["next_phase"] == 2


class _Held:
    """A second laptop: it reads now, and its write is held back until we send it."""

    def __init__(self, inner: GSheetsBackend) -> None:
        self.inner = inner
        self.held: list[object] = []

    def read_ranges(self, ranges):  # type: ignore[no-untyped-def]
        return self.inner.read_ranges(ranges)

    def write_ranges(self, updates):  # type: ignore[no-untyped-def]
        self.held = list(updates)


def test_double_resolve_applies_once(server: FakeSheetsServer) -> None:
    """Two Trackers resolve phase 1 at once: both read before either writes.  The phase's
    dice come from the seed and phase, so the late write puts back the very same cells
    (the same State, the same step id); only its Log rows come twice, and the next step
    marks the copy.  A third resolve afterwards finds nothing pending and is refused."""
    backend = _tracker(server)
    usecases.load_battle_into(backend, load_battle(read_data_file(example_path())))
    laptop_b = _Held(GSheetsBackend(fake_client(server.url), backend.key))
    usecases.resolve(laptop_b)  # type: ignore[arg-type]
    first = usecases.resolve(backend)
    ranges = [r for r in tracker_ranges(LAY) if not r.startswith("Log!")]
    after_first = backend.read_ranges(ranges)
    laptop_b.inner.write_ranges(laptop_b.held)  # type: ignore[arg-type]
    assert backend.read_ranges(ranges) == after_first
    with pytest.raises(BattleStateError, match="already resolved"):
        usecases.resolve(backend)
    assert backend.read_ranges(ranges) == after_first
    assert usecases.export(backend)["next_phase"] == 2
    report = usecases.undo(backend)  # not refused: nothing was lost
    assert "run twice at the same moment and applied once" in report.message
    step = LAY.block("Log_Table").letter("step")
    marks = [row[0] for row in backend.read_ranges([f"Log!{step}2:{step}"])[0] if row[0]]
    rows = len(first.result.events) + len(first.result.end_of_phase)  # type: ignore[union-attr]
    assert sum(1 for m in marks if str(m).endswith(" duplicate")) == rows


def test_formula_in_a_name_cell_is_refused_with_its_address(server: FakeSheetsServer) -> None:
    backend = _tracker(server)
    chars = LAY.block("Characters_Table")
    setup = LAY.block("Cohorts_Setup")
    server.set_values(backend.key, f"Cohorts!{setup.letter('name')}{setup.first_row}", [["Watch"]])
    rows = [["Watch", n, 10] for n in ("A", "B")] + [["Watch", '=IMPORTXML("http://x","//a")', 10]]
    server.set_values(backend.key, f"Characters!A{chars.first_row}:C{chars.first_row + 2}", rows, user_entered=True)
    with pytest.raises(SheetFormatError) as err:
        usecases.build_cohorts(backend)
    assert f"Characters!{chars.letter('name')}{chars.first_row + 2}: character: a formula" in str(err.value)


def test_text_that_looks_like_a_formula_stays_text(server: FakeSheetsServer) -> None:
    backend = _tracker(server)
    data = read_data_file(example_path())
    data["cohorts"][0]["members"][0]["name"] = '=IMPORTXML("http://x","//a")'
    data["cohorts"][0]["sergeant"] = data["cohorts"][0]["members"][0]["name"]
    usecases.load_battle_into(backend, load_battle(data))
    chars = LAY.block("Characters_Table")
    cell = server.cell(backend.key, f"Characters!{chars.letter('name')}{chars.first_row}")
    assert cell["userEnteredValue"] == {"stringValue": '=IMPORTXML("http://x","//a")'}
    assert usecases.resolve(backend).phase == 1


def test_watch_reacts_to_a_tick_and_clears_it(server: FakeSheetsServer) -> None:
    backend = _tracker(server)
    usecases.load_battle_into(backend, load_battle(read_data_file(example_path())))
    buttons = LAY.block("Battle_Buttons")
    tick = f"Battle!{buttons.letter('tick')}{buttons.first_row + 1}"  # Resolve Phase
    server.set_values(backend.key, tick, [[True]])
    server.clear_requests()
    state = watch(backend, sleep=lambda s: None, max_polls=2)
    assert state.steps == 1 and state.phase == 1
    assert server.cell(backend.key, tick)["userEnteredValue"] == {"boolValue": False}
    # poll, step read, step write, poll
    assert len(server.api_requests()) == 4
    assert usecases.export(backend)["next_phase"] == 2


def test_upload_then_download_round_trip(server: FakeSheetsServer, tmp_path: Path) -> None:
    wb = tmp_path / "up.xlsx"
    new_workbook(wb, example_path())
    usecases.resolve(excel_backend(wb))
    backend = _tracker(server)
    copy_tracker(excel_backend(wb), backend)
    back = tmp_path / "down.xlsx"
    from sheetsync.app.workbook_cli import write_template

    write_template(back)
    copy_tracker(backend, excel_backend(back))
    ranges = tracker_ranges(LAY)
    assert excel_backend(back).read_ranges(ranges) == excel_backend(wb).read_ranges(ranges)
    assert usecases.undo(excel_backend(back)).phase == 1  # the undo history came along
