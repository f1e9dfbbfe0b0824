"""Issue 23, "O(P) battles": a Resolve reads its stamped tables and the Log from where the
step before it left them (``State!B3``, :mod:`sheetsync.sheets.read_from`), and that never
changes what it does.

Each test plays the same battle on two trackers: one keeps ``State!B3`` (the shortcut),
the other has it blanked before every step (the whole read, as before issue 23).  After
every step the two trackers hold the very same cells, ``State!B3`` included; the shortcut
is taken when it holds, and refused when a row was inserted or deleted by hand above where
it starts, when the State was put back, or when ``State!B3`` was edited.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from bench_step_growth import make_tracker  # noqa: E402

from sheetsync.sheets import marks  # noqa: E402
from sheetsync.sheets import read_from as rf  # noqa: E402
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate  # noqa: E402

STAMPED = {"bbn": ("Orders_Table", "phase"), "hexwar": ("Moves_Table", "turn"), "exalted": ("Orders_Table", "resolved")}
"""Each system's table the benchmark types orders into, and its stamp column (R13, H8, E5)."""


class Reads(MemoryBackend):
    """A MemoryBackend that keeps each ``read_ranges`` call's ranges."""

    calls: list[list[str]]

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        self.calls.append(list(ranges))
        return super().read_ranges(ranges)


def _pair(system_id: str, steps: int, tmp_path: Path) -> tuple[Reads, Reads, Callable[[Any, int], None], Any]:
    backend, typer = make_tracker(system_id, "memory", steps, tmp_path / "t.xlsx")
    lay = marks.detect(backend).system.layout(marks.detect(backend).capacity)
    short, whole = (Reads(copy.deepcopy(backend.sheets)) for _ in range(2))
    for b in (short, whole):
        b.calls = []
    return short, whole, typer, lay


def _blank_b3(backend: MemoryBackend) -> None:
    backend.write_ranges([rf.update(None)])


def _step(short: Reads, whole: Reads, action: str) -> list[list[str]]:
    """``action`` on both trackers (``State!B3`` blanked first on the whole-read one); the
    reads the shortcut tracker made."""
    _blank_b3(whole)
    short.calls.clear()
    outcomes = []
    for b in (short, whole):
        try:
            marks.run(action, b)
            outcomes.append("done")
        except Exception as exc:  # the same refusal on both is the same behaviour
            outcomes.append(f"{type(exc).__name__}: {exc}")
    assert outcomes[0] == outcomes[1]
    assert short.sheets == whole.sheets, action
    return short.calls


def _starts(calls: list[list[str]], lay: Any, name: str) -> list[int]:
    """The first row each read of ``name``'s table started at."""
    block = lay.block(name)
    out = []
    for call in calls:
        for text in call:
            sheet, _, cells = text.rpartition("!")
            if sheet.strip("'") == block.sheet and cells.startswith(block.letter(block.columns[0].key)):
                out.append(int("".join(ch for ch in cells.split(":")[0] if ch.isdigit())))
    return out


@pytest.mark.parametrize("system_id", ["bbn", "hexwar", "exalted"])
def test_r13_h8_e5_issue23_a_resolve_reads_from_where_the_last_step_left_and_writes_what_a_whole_read_does(
        system_id: str, tmp_path: Path) -> None:
    short, whole, typer, lay = _pair(system_id, 8, tmp_path)
    name, _stamp = STAMPED[system_id]
    block = lay.block(name)
    last = 0
    for n in range(6):
        if n:
            for b in (short, whole):
                typer(b, last)
        calls = _step(short, whole, "resolve")
        last = _resolved(short, lay, system_id)
        starts = _starts(calls[1:], lay, name)
        if n <= 1:  # the rows the step before stamped are read again: the first's are the table's first
            assert starts == [block.first_row], "the first Resolves read the whole table"
        else:
            assert len(calls) == 2 and starts[0] > block.first_row, "one read, from the last step's rows on"
    # an Undo reads everything; the Resolve after it reads from where the Undo left it
    calls = _step(short, whole, "undo")
    assert _starts(calls[1:], lay, name) == [block.first_row]
    calls = _step(short, whole, "resolve")
    assert len(calls) == 2 and _starts(calls[1:], lay, name)[0] > block.first_row


def _resolved(backend: MemoryBackend, lay: Any, system_id: str) -> int:
    """The last turn or tick resolved (what the benchmark's typer types the next orders after)."""
    name, stamp = STAMPED[system_id]
    block = lay.block(name)
    col = block.first_col + block.index(stamp)
    stamps = [v for (r, c), v in backend.sheets[block.sheet].items() if c == col and r >= block.first_row
              and isinstance(v, int)]
    return max(stamps, default=0)


def _shift_rows(backend: MemoryBackend, sheet: str, at: int, by: int) -> None:
    """Rows inserted (``by`` > 0) or deleted (``by`` < 0) by hand at sheet row ``at``."""
    cells = backend.sheets[sheet]
    moved = {}
    for (r, c), v in cells.items():
        if r < at:
            moved[(r, c)] = v
        elif by > 0 or r >= at - by:
            moved[(r + by, c)] = v
    cells.clear()
    cells.update(moved)


@pytest.mark.parametrize("system_id", ["bbn", "exalted"])
@pytest.mark.parametrize("by", [1, -1, -3], ids=["inserted", "deleted", "three-deleted"])
def test_r13_e5_issue23_rows_inserted_or_deleted_above_the_start_are_read_whole(system_id: str, by: int,
                                                                             tmp_path: Path) -> None:
    """A row inserted by hand above where the next Resolve starts (an order typed into it)
    or rows deleted there (the pending orders move up above the start): the guard row is
    another row now, and the Resolve reads the whole table: no order is left behind."""
    short, whole, typer, lay = _pair(system_id, 6, tmp_path)
    name, _stamp = STAMPED[system_id]
    block = lay.block(name)
    _step(short, whole, "resolve")
    for b in (short, whole):
        typer(b, _resolved(b, lay, system_id))
    _step(short, whole, "resolve")
    for b in (short, whole):
        typer(b, _resolved(b, lay, system_id))
    start, _digest = marks.detect(short).read_from.rows[name]
    at = block.first_row + 2  # well above the start
    assert at < block.first_row + start - 1
    for b in (short, whole):
        _shift_rows(b, block.sheet, at, by)
        if by > 0:  # the last order typed again into the inserted row
            last = max(r for (r, _c) in b.sheets[block.sheet])
            row = b.read_ranges([block.row_range(last - block.first_row)])[0]
            b.write_ranges([RangeUpdate(block.row_range(at - block.first_row), row)])
            b.calls.clear()
    calls = _step(short, whole, "resolve")
    assert len(calls) == 3, "the shifted read, then the whole plan"
    assert _starts(calls[2:], lay, name) == [block.first_row]


@pytest.mark.parametrize("edit", ["garbage", "not json", "other rev", "bad start"])
def test_e5_issue23_a_state_b3_that_does_not_hold_is_passed_over(edit: str, tmp_path: Path) -> None:
    """``State!B3`` edited by hand, or left by a write whose State was put back: never an
    error, never a different result; the Resolve reads the whole plan."""
    short, whole, typer, lay = _pair("exalted", 6, tmp_path)
    _step(short, whole, "resolve")
    for b in (short, whole):
        typer(b, _resolved(b, lay, "exalted"))
    read = marks.detect(short).read_from
    value: Any = {"garbage": "{[[[[", "not json": 12345,
                  "other rev": rf.ReadFrom(read.rev + 7, read.rows, read.log).text(),
                  "bad start": rf.ReadFrom(read.rev, {"Orders_Table": (10**6, "0" * 16)}, read.log).text()}[edit]
    short.write_ranges([RangeUpdate(rf.READ_FROM_CELL, [[value]])])
    whole.write_ranges([RangeUpdate(rf.READ_FROM_CELL, [[value]])])
    calls = _step(short, whole, "resolve")
    assert _starts(calls[1:], lay, "Orders_Table")[-1] == lay.block("Orders_Table").first_row


def test_e5_x22_issue23_the_last_ticks_rows_stay_in_the_next_read(tmp_path: Path) -> None:
    """A tick that took only an order typed into an old blank row above older resolved
    rows: the next Next Tick still reads that row (the rows a step stamps are read again),
    so its check for an Undo Tick cut short (issue 22.3) sees them stamped and refuses
    nothing: the same tick as the whole read's."""
    from exalted_battles import make_exalted_battle

    short, whole, _typer, lay = _pair("exalted", 6, tmp_path)
    block = lay.block("Orders_Table")
    foes = [(o["unit"], o["target"]) for o in make_exalted_battle(10)["orders"]]

    def type_at(offset: int, tick: int, pairs: list[tuple[str, str]]) -> None:
        rows = [[tick, unit, "Attack", foe, "Close"] for unit, foe in pairs]
        first = block.first_row + offset
        span = f"Orders!{block.letter('tick')}{first}:{block.letter('option')}{first + len(rows) - 1}"
        for b in (short, whole):
            b.write_ranges([RangeUpdate(span, rows)])

    type_at(0, 0, foes)
    _step(short, whole, "resolve")
    type_at(len(foes) + 1, 1, foes)  # the row between is left blank
    _step(short, whole, "resolve")
    type_at(len(foes), 2, foes[:1])  # tick 2 takes only the blank row, above tick 1's rows
    _step(short, whole, "resolve")
    type_at(2 * len(foes) + 1, 3, foes)
    calls = _step(short, whole, "resolve")
    assert len(calls) == 2, "the shortcut held"
    assert "cut short" not in str(short.sheets["Battle"])
