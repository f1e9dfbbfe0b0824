"""Issue 9, capacity: the battalion tracker never drops a row.

A tracker made from a battle is laid out with room for it (and half as much again), its
capacity recorded in ``State!B2`` beside the mark, and every step lays it out with that
capacity: a 60-cohort, 300-character battle goes through build, resolve, undo, resolve and
end on a MemoryBackend, a workbook, an xlwings remote payload and the Google Sheets fake.
Anything past a tracker's room is refused with the limit named.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from battles import make_battle
from fake_sheets_api import FakeSheetsServer, fake_client

from sheetsync.app import usecases
from sheetsync.app.gsheet_cli import copy_tracker, init_spreadsheet
from sheetsync.app.workbook_cli import run_workbook, tracker_from
from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.backends.xlwings_backend import XlwingsBackend
from sheetsync.backends.xlwings_remote import apply_actions, payload_from_openpyxl, remote_book
from sheetsync.core.errors import BattleStateError, InputError, SheetFormatError
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import MemoryBackend, SheetBackend
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import Battle
from sheetsync.systems.bbn.tracker import writer
from sheetsync.systems.bbn.tracker.layout import (
    CAPACITY,
    MAX_CAPACITY,
    Layout,
    capacity_for,
    capacity_json,
    layout,
)
from sheetsync.systems.bbn.tracker.template import MARK, static_cells

COHORTS, CHARACTERS = 60, 300


def big_battle(cohorts: int = COHORTS) -> dict[str, Any]:
    """``cohorts`` cohorts of five members each, two sides, every enemy pair in range, two
    orders a cohort."""
    data = make_battle(cohorts)
    for i, c in enumerate(data["cohorts"]):
        while len(c["members"]) < 5:
            c["members"].append({"name": f"C{i}M{len(c['members'])}", "abilities": {"Brawl": 2}})
    return data


BATTLE = load_battle(big_battle())
LAY = layout(capacity=capacity_for(BATTLE))


def blank(lay: Layout) -> MemoryBackend:
    """A blank tracker laid out as ``lay``, cell for cell what the template holds."""
    backend = MemoryBackend({s: {} for s in lay.sheets})
    for sheet, row, col, value in static_cells(lay):
        backend.sheets[sheet][(row, col)] = value
    return backend


def filled(backend: SheetBackend, lay: Layout, block: str, key: str) -> list[Any]:
    """The non-blank values of column ``key`` of ``block``, read through the backend."""
    b = lay.block(block)
    (grid,) = backend.read_ranges([b.range()])
    j = b.index(key)
    return [row[j] for row in grid if j < len(row) and row[j] not in (None, "")]


def check_battle_sheets(backend: SheetBackend, lay: Layout = LAY) -> None:
    """Every cohort on the Battle summary, Pools and Health table, every character on the Roster."""
    names = [c.name for c in BATTLE.cohorts]
    assert filled(backend, lay, "Battle_Summary", "cohort") == names
    assert filled(backend, lay, "Cohorts_Pools", "name") == names
    assert len(filled(backend, lay, "Cohorts_Roster", "member")) == CHARACTERS
    hist = lay.block("Battle_HealthByPhase")
    (header,) = backend.read_ranges([hist.header_range()])
    assert header[0][1:1 + COHORTS] == names


def run_through(backend: SheetBackend, run: Any) -> list[str]:
    """Build, resolve, undo, resolve and end, then every cohort and character on the sheets; the messages."""
    out = []
    for action in ("build", "resolve", "undo", "resolve", "end"):
        report = run(action)
        out.append(report.message)
        if action == "resolve":
            assert len(report.result.events) == 2 * COHORTS
    check_battle_sheets(backend)
    assert len(filled(backend, LAY, "Aftermath_Table", "name")) == CHARACTERS
    assert out[0].startswith("Built 60 cohorts") and out[2].startswith("Phase 1 undone: 120 orders")
    assert out[-1].startswith("Battle ended after phase 1: 300 characters")
    return out


def test_issue9_capacity_for_a_60_cohort_battle_fits_it_with_headroom() -> None:
    cap = capacity_for(BATTLE)
    assert len(BATTLE.cohorts) == COHORTS and sum(len(c.members) for c in BATTLE.cohorts) == CHARACTERS
    assert cap["cohorts"] == 90 and cap["characters"] == 450
    assert cap["ranges"] >= 1.5 * len(BATTLE.ranges) and cap["orders"] >= 400 and cap["phases"] == 40
    assert LAY.block("Cohorts_Setup").rows == 90 and LAY.block("Characters_Table").rows == 450
    assert LAY.block("Battle_Summary").rows == 90 and len(LAY.block("Battle_HealthByPhase").columns) == 91
    assert LAY.block("Cohorts_Roster").rows == 450 and LAY.block("Aftermath_Table").rows == 450
    # the blocks under a longer one move down with it, never overlapping
    assert LAY.block("Cohorts_Pools").header_row > LAY.block("Cohorts_Setup").last_row + 1  # type: ignore[operator]
    assert LAY.block("Cohorts_Roster").header_row > LAY.block("Cohorts_Pools").last_row + 1  # type: ignore[operator]
    assert LAY.block("Battle_HealthByPhase").header_row > LAY.block("Battle_Summary").last_row + 1  # type: ignore[operator]


def test_issue9_capacity_blank_tracker_keeps_todays_layout() -> None:
    lay = layout()
    assert lay.capacity == CAPACITY == {"cohorts": 24, "characters": 120, "orders": 400, "ranges": 200, "phases": 40}
    assert (lay.block("Cohorts_Pools").header_row, lay.block("Cohorts_Roster").header_row) == (29, 56)
    assert lay.block("Battle_HealthByPhase").header_row == 37 and lay.block("Orders_Table").rows == 400
    assert layout(capacity={"cohorts": 3}) is lay  # values only grow
    cells = {(s, r, c): v for s, r, c, v in static_cells(lay)}
    assert cells[("State", 1, 2)] == MARK == "bbn@1"
    assert json.loads(cells[("State", 2, 2)]) == CAPACITY
    from sheetsync.systems.bbn.system import SYSTEM

    (mark,) = steps.mark_updates(SYSTEM, LAY.capacity)  # what the template writes is what steps write
    assert (mark.range, mark.values) == ("State!B1:B2", [[MARK], [capacity_json(LAY.capacity)]])


def test_issue9_capacity_memory_backend_60_cohorts_build_resolve_undo_end() -> None:
    backend = blank(LAY)
    assert steps.detect(backend).capacity == LAY.capacity
    usecases.load_battle_into(backend, BATTLE)  # the tracker's own capacity, read from State!B2
    run_through(backend, lambda action: steps.run(action, backend))


@pytest.fixture(scope="module")
def workbook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("capacity") / "big.xlsx"
    tracker_from(path, BATTLE)
    return path


class Reopened:
    """Reads the workbook as the last step saved it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read_ranges(self, ranges: Any) -> Any:
        from sheetsync.backends.excel import ExcelBackend

        return ExcelBackend(self.path).read_ranges(ranges)

    def write_ranges(self, updates: Any) -> None:  # pragma: no cover - only read here
        raise AssertionError("checks only read")


def _chart_series(path: Path) -> int:
    with zipfile.ZipFile(path) as z:
        return len(re.findall(r"<(?:c:)?ser>", z.read("xl/charts/chart1.xml").decode()))


def test_issue9_capacity_excel_workbook_60_cohorts_build_resolve_undo_end(workbook: Path, tmp_path: Path) -> None:
    from sheetsync.backends.excel import ExcelBackend

    path = tmp_path / "big.xlsx"
    path.write_bytes(workbook.read_bytes())
    wb = openpyxl.load_workbook(path)
    assert wb["State"]["B1"].value == "bbn@1"
    assert json.loads(wb["State"]["B2"].value) == LAY.capacity
    assert wb.defined_names["Cohorts_Setup"].attr_text == "Cohorts!$A$3:$O$92"

    def run(action: str) -> Any:
        report = run_workbook(action, path)
        assert _chart_series(path) == COHORTS  # the chart draws every cohort, at the tracker's rows
        return report

    run_through(Reopened(path), run)
    ws = openpyxl.load_workbook(path)["Battle"]
    hist = LAY.block("Battle_HealthByPhase")
    battle = _battle_of(ExcelBackend(path))
    assert ws.cell(row=hist.first_row + 1, column=1).value == 1
    assert [ws.cell(row=hist.first_row + 1, column=2 + i).value for i in range(COHORTS)] == \
        [battle.state[c.name].health for c in battle.cohorts]  # phase 1's Health of every cohort


def test_issue9_capacity_pools_of_a_big_workbook_reads_its_own_rows(workbook: Path) -> None:
    from sheetsync.app.workbook_cli import pools_from_workbook

    battle = pools_from_workbook(workbook)
    assert [c.name for c in battle.cohorts] == [c.name for c in BATTLE.cohorts]
    assert sum(len(c.members) for c in battle.cohorts) == CHARACTERS


def test_issue9_capacity_xlwings_payload_60_cohorts_build_resolve_undo_end(
        workbook: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLWINGS_LICENSE_KEY", "noncommercial")
    wb = openpyxl.load_workbook(workbook)

    class Payload:
        """Reads what the last button press left in ``wb``."""

        def read_ranges(self, ranges: Any) -> Any:
            return XlwingsBackend(remote_book(payload_from_openpyxl(wb, "VBA"))).read_ranges(ranges)

        def write_ranges(self, updates: Any) -> None:  # pragma: no cover - only read here
            raise AssertionError("checks only read")

    def press(action: str) -> Any:
        book = remote_book(payload_from_openpyxl(wb, "VBA"))
        report = steps.run(action, XlwingsBackend(book))
        apply_actions(wb, book.json(), client="VBA")
        return report

    run_through(Payload(), press)


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as srv:
        yield srv


def test_issue9_capacity_google_sheets_60_cohorts_build_resolve_undo_end(
        server: FakeSheetsServer, workbook: Path) -> None:
    """Uploaded as `gsheet upload` should (see the report): laid out with the workbook's
    capacity, then every block copied."""
    from sheetsync.app.workbook_cli import excel_backend

    key = server.create_spreadsheet("Battle")
    backend = GSheetsBackend(fake_client(server.url), key, sleep=lambda _s: None)  # type: ignore[arg-type]
    source = excel_backend(workbook)
    lay = layout(capacity=steps.detect(source).capacity)
    assert lay is LAY
    init_spreadsheet(backend, lay)
    tracker = steps.detect(backend)
    assert str(tracker.mark) == "bbn@1" and tracker.capacity == LAY.capacity
    copy_tracker(source, backend, lay)
    run_through(backend, lambda action: steps.run(action, backend))


# -- refusals: the limit named, nothing written -------------------------------------------------


def test_issue9_capacity_a_cohort_typed_below_a_big_tracker_names_its_limit() -> None:
    backend = blank(LAY)
    usecases.load_battle_into(backend, BATTLE)
    setup = LAY.block("Cohorts_Setup")
    backend.sheets["Cohorts"][(setup.first_row + 90, 1)] = "Reserves"
    before = {s: dict(c) for s, c in backend.sheets.items()}
    with pytest.raises(SheetFormatError) as info:
        steps.run("build", backend)
    assert [str(p) for p in info.value.problems] == [
        "Cohorts!A93: this tracker holds at most 90 cohorts (rows 3-92); nothing below them is read. Move this row "
        "into an empty row above, or put the battle in a battle file: `sheetsync new OUT --from battle.yaml` makes a "
        "tracker sized to it (up to 120 cohorts)"]
    assert backend.sheets == before


def test_issue9_capacity_a_step_laid_out_for_another_capacity_is_refused() -> None:
    """Run with a blank tracker's layout, a big tracker's Pools would land on its Setup rows:
    the step is refused at State!B2 before anything is written."""
    backend = blank(LAY)
    usecases.load_battle_into(backend, BATTLE)
    before = {s: dict(c) for s, c in backend.sheets.items()}
    with pytest.raises(SheetFormatError) as info:
        usecases.run("build", backend, layout())
    (problem,) = info.value.problems
    assert problem.where == "State!B2"
    assert "this tracker holds 90 cohorts, 450 characters" in problem.message
    assert "laid it out for 24 cohorts, 120 characters" in problem.message
    assert backend.sheets == before


def test_issue9_capacity_writer_never_cuts_rows_off() -> None:
    battle = load_battle(big_battle(30))
    with pytest.raises(BattleStateError, match="holds 24 rows and this step has 30 to write"):
        writer.battle_updates(layout(), battle, status="", last_action="")
    with pytest.raises(BattleStateError, match="24 cohort columns and the battle has 30 cohorts"):
        writer.health_row_update(layout(), battle, 1)


def test_issue9_capacity_breakdown_past_its_rows_says_so() -> None:
    lay = layout()
    battle = load_battle(big_battle(24))
    lines = sum(len(v) for p in battle.pools.values() for v in p.breakdown.values())
    small = Layout(catalog=lay.catalog, blocks=dict(lay.blocks), cells=lay.cells, capacity=lay.capacity)
    from dataclasses import replace

    small.blocks["Cohorts_Breakdown"] = replace(lay.block("Cohorts_Breakdown"), rows=50)
    assert lines > 50
    (*_, breakdown) = writer.battle_updates(small, battle, status="", last_action="")
    assert len(breakdown.values) == 50
    assert re.fullmatch(r"\.\.\. and \d+ more lines this table has no room for: `sheetsync pools FILE` lists every one",
                        str(breakdown.values[-1][-1]))


def test_issue9_capacity_past_the_most_a_tracker_holds_new_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "huge.xlsx"
    battle = load_battle(big_battle(MAX_CAPACITY["cohorts"] + 1))
    with pytest.raises(InputError) as info:
        tracker_from(out, battle)
    got = [str(p) for p in info.value.problems]
    assert "cohorts: the battle has 121 cohorts; a tracker holds at most 120" in got
    assert "cohorts: the battle has 605 characters; a tracker holds at most 600" in got
    assert not out.exists()


def test_issue9_capacity_a_battle_too_big_for_a_blank_tracker_says_how_to_get_a_bigger_one() -> None:
    with pytest.raises(InputError) as info:
        usecases.load_battle_into(blank(layout()), BATTLE)
    assert "cohorts: the battle has 60 cohorts; a tracker holds at most 24 (`sheetsync new OUT --from battle.yaml` " \
           "makes a tracker sized to the battle, up to 120)" in [str(p) for p in info.value.problems]


@pytest.mark.parametrize("value", ['{"cohorts": "many"}', '{"cohorts": 100000}', "not json"])
def test_issue9_capacity_a_damaged_capacity_cell_is_refused(value: str) -> None:
    backend = blank(layout())
    backend.sheets["State"][(2, 2)] = value
    with pytest.raises(SheetFormatError) as info:
        steps.run("build", backend)
    assert [p.where for p in info.value.problems] == ["State!B2"]


def test_issue9_capacity_an_old_tracker_without_a_capacity_is_a_blank_trackers() -> None:
    backend = blank(layout())
    del backend.sheets["State"][(1, 2)], backend.sheets["State"][(2, 2)]
    assert steps.detect(backend).capacity == {}
    assert layout(capacity=steps.detect(backend).capacity) is layout()
    assert capacity_json(CAPACITY) == '{"characters":120,"cohorts":24,"orders":400,"phases":40,"ranges":200}'


@pytest.mark.libreoffice
def test_issue9_capacity_a_60_cohort_workbook_recalculates_without_errors_in_libreoffice(
        workbook: Path, tmp_path: Path) -> None:
    from libreoffice import error_cells, require_libreoffice

    require_libreoffice()
    path = tmp_path / "big.xlsx"
    path.write_bytes(workbook.read_bytes())
    run_workbook("build", path)
    run_workbook("resolve", path)
    assert error_cells(path) == []


def _battle_of(backend: SheetBackend) -> Battle:
    return load_battle(usecases.export(backend, LAY)["battle"])
