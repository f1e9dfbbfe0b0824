"""Issue 23: a step after many steps reads and writes what the first one does.

The memory backend's read of a long, sparse range (the Orders and Log of every phase
played) takes each cell the sheet holds once rather than looking up every empty cell of
the range: the grid it gives is the same, cell for cell.  And a battle played 39 phases (a tracker holds 40)
still takes an order typed in an old blank row, and still undoes to the same cells.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from battles import make_battle

from sheetsync.app import usecases
from sheetsync.core.registry import find_system
from sheetsync.sheets.backend import CellValue, MemoryBackend, RangeUpdate
from sheetsync.sheets.marks import mark_updates
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.tracker.layout import layout

COHORTS = 4
LAY = layout(capacity={"orders": 2 * COHORTS * 45})
ORDERS = LAY.block("Orders_Table")


def _cell_by_cell(cells: dict[tuple[int, int], CellValue], row1: int, last: int, cols: range) -> list[list[Any]]:
    """The grid as a plain lookup of every cell makes it: "" reads as empty, and the blank
    rows at the end are cut off."""
    rows = [[None if cells.get((r, c)) == "" else cells.get((r, c)) for c in cols] for r in range(row1, last + 1)]
    while rows and all(v is None for v in rows[-1]):
        rows.pop()
    return rows


@pytest.mark.parametrize("seed", range(12))
def test_issue23_a_long_sparse_read_gives_the_cells_a_lookup_a_cell_gives(seed: int) -> None:
    rnd = random.Random(seed)
    cells: dict[tuple[int, int], CellValue] = {}
    for _ in range(rnd.randrange(0, 60)):
        cells[(rnd.randrange(1, 40), rnd.randrange(1, 12))] = rnd.choice(["x", "", 0, 1.5, None, False, "Cohort 1"])
    row1, col1 = rnd.randrange(1, 10), rnd.randrange(1, 5)
    last, cols = row1 + rnd.randrange(0, 45), range(col1, col1 + rnd.randrange(1, 9))
    assert MemoryBackend._grid(cells, row1, last, cols) == _cell_by_cell(cells, row1, last, cols)


def test_issue23_an_open_ended_read_stops_at_the_last_row_holding_a_value() -> None:
    backend = MemoryBackend({"Orders": {(2, 1): "a", (9, 3): "", (7, 30): "far"}})
    # column 30 sets the sheet's last row, but the range's own columns end at row 2
    assert backend.read_ranges(["Orders!A2:C"]) == [[["a", None, None]]]
    assert backend.read_ranges(["Orders!A1:C3"]) == [[[None, None, None], ["a", None, None]]]


def _tracker() -> MemoryBackend:
    backend = MemoryBackend({name: {} for name in LAY.sheets})
    usecases.load_battle_into(backend, load_battle(make_battle(COHORTS)), LAY)
    backend.write_ranges(mark_updates(find_system("bbn"), LAY.capacity))
    return backend


def _next_row(backend: MemoryBackend) -> int:
    grid = backend.read_ranges([ORDERS.range()])[0]
    j = ORDERS.index("cohort")
    return int(ORDERS.first_row + 1 + max((i for i, row in enumerate(grid) if row[j] is not None), default=-1))


def _type(backend: MemoryBackend, row: int, phase: int, count: int = 2 * COHORTS) -> None:
    rows = [[f"Cohort {i % COHORTS}", "Melee Attack", f"Cohort {(i + 1 + phase) % COHORTS}"] for i in range(count)]
    backend.write_ranges([RangeUpdate(f"Orders!{ORDERS.letter('cohort')}{row}:{ORDERS.letter('target')}"
                                      f"{row + count - 1}", rows)])


def _phase_of(backend: MemoryBackend, row: int) -> CellValue:
    grid = backend.read_ranges([f"Orders!{ORDERS.letter('phase')}{row}:{ORDERS.letter('phase')}{row}"])[0]
    return grid[0][0] if grid else None


def test_issue23_r25_after_39_phases_an_order_typed_in_an_old_blank_row_is_taken_by_the_next_phase() -> None:
    """The sensible behaviour for any first-pending-row shortcut: a row with no Phase stamp
    is pending wherever it stands, so one typed in a blank row left long ago, above rows
    resolved since, is taken by the next Resolve, and an Undo leaves it pending again."""
    backend = _tracker()
    gap = None
    for phase in range(1, 40):
        if phase > 1:
            row = _next_row(backend)
            if phase == 3:
                gap = row  # a row left blank: the phase's orders are typed below it
                row += 1
            _type(backend, row, phase)
        assert usecases.resolve(backend, LAY).phase == phase
    assert gap is not None and _phase_of(backend, gap) is None
    _type(backend, gap, 40, count=1)
    before = {name: dict(cells) for name, cells in backend.sheets.items()}
    _type(backend, _next_row(backend), 40)
    typed = {name: dict(cells) for name, cells in backend.sheets.items()}
    report = usecases.resolve(backend, LAY)
    assert report.phase == 40
    assert _phase_of(backend, gap) == 40
    assert _phase_of(backend, _next_row(backend) - 1) == 40
    assert _phase_of(backend, gap + 1) == 3  # the rows resolved long ago keep their stamps
    usecases.undo(backend, LAY)
    assert _phase_of(backend, gap) is None
    assert backend.sheets["Orders"] == typed["Orders"]
    assert before["Orders"] != typed["Orders"]


def test_issue23_phase_40_resolved_undone_and_resolved_again_writes_the_same_cells() -> None:
    backend = _tracker()
    for phase in range(1, 40):
        if phase > 1:
            _type(backend, _next_row(backend), phase)
        usecases.resolve(backend, LAY)
    _type(backend, _next_row(backend), 40)
    typed = {name: dict(cells) for name, cells in backend.sheets.items()}
    usecases.resolve(backend, LAY)
    once = {name: dict(cells) for name, cells in backend.sheets.items()}
    usecases.undo(backend, LAY)
    kept = ("State", "Battle", "Log")  # the step's status, its Log lines and its journal say it was undone
    assert {n: c for n, c in backend.sheets.items() if n not in kept} == \
        {n: c for n, c in typed.items() if n not in kept}
    usecases.resolve(backend, LAY)
    assert {n: c for n, c in backend.sheets.items() if n not in kept} == \
        {n: c for n, c in once.items() if n not in kept}
    assert backend.sheets["Battle"] == once["Battle"]
