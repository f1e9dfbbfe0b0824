"""Where a Resolve starts reading the rows that grow with the battle (issue 23, "O(P)
battles"): a step after forty costs what the first did.

Every Resolve stamps the orders it takes (a phase, turn or tick in their stamp column) and
appends Log rows; without this, each step read every order and Log row of the battle
again.  So each step writes, in ``State!B3`` beside the tracker's mark, where the next
Resolve starts reading (:class:`ReadFrom`):

* for each table a Tracker types orders into, the first row whose stamp is blank or
  written by this step (an order typed into an old blank row lies at or below it, so it
  is still read; the rows this step stamped are read again, so the next step's checks for
  a step cut short find them, issue 22.3), and a digest of the row just above it, the
  *guard row*, which the next read includes: its stamp and the cells a Tracker types;
* the Log rows already checked for lost steps (issue 26 keeps that count in the State as
  ``log_checked``; the next step checks only the rows below it);
* the State's revision it was written with.

The next Resolve reads those ranges from there (:func:`shift_plan`) and gives its parser
grids shaped as a whole read, the rows above the start left blank (:func:`pad`), so no
parser changes.  It trusts them only when they hold (:func:`holds`): the State read in the
same read has the very revision (a write cut short, or a State put back by hand, has
another), and the guard row is still the row it was (rows inserted or deleted above it by
hand move another row there, with another stamp or other orders).  When they do not, the
step raises :class:`ReadAgain` and the envelope reads the whole plan, as before.  Every
other step (Undo, End, Build) reads the whole plan and writes ``State!B3`` from it for the
next Resolve; a refused step's repair blanks it.

What the guard cannot see: a row inserted above the start by hand while the rows on both
sides of the guard are alike in stamp and typed cells (two identical orders of one turn).
An order typed there would wait until the next Undo, which reads everything.  Imports no
rule system.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sheetsync.core.layout import Block, col_letter, quote_sheet
from sheetsync.sheets.backend import CellValue, Formula, Grid, RangeUpdate, parse_range

__all__ = ["READ_FROM_CELL", "ReadAgain", "ReadFrom", "ahead", "guard_digest", "holds", "holds_all", "indices",
           "next_start", "pad", "parse", "shift_plan", "starts", "update"]

READ_FROM_CELL = "State!B3"
"""Where a Resolve writes :class:`ReadFrom` for the next one (below the mark and capacity)."""


class ReadAgain(Exception):
    """The stored starts do not hold for this read: read the whole plan."""


@dataclass(frozen=True)
class ReadFrom:
    """Where the next Resolve starts reading: ``rows`` maps a table (its block's name) to
    (the offset of its first row to read, the guard row's digest), ``log`` is the Log rows
    already checked, ``rev`` the State's revision written with them."""

    rev: int
    rows: dict[str, tuple[int, str]] = field(default_factory=dict)
    log: int = 0

    def text(self) -> str:
        return json.dumps({"rev": self.rev, "log": self.log, "rows": {k: list(v) for k, v in self.rows.items()}},
                          separators=(",", ":"), sort_keys=True)


def _whole(value: Any) -> bool:
    return type(value) is int and 0 <= value < 10**7


def parse(value: CellValue) -> ReadFrom | None:
    """``State!B3`` as a :class:`ReadFrom`, or ``None`` when it is blank or anything but
    what a Resolve writes (a hand edit only costs the shortcut, never a refusal)."""
    if not isinstance(value, str) or not value.startswith("{") or len(value) > 2000:
        return None
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not _whole(data.get("rev")) or not _whole(data.get("log", 0)):
        return None
    rows = data.get("rows", {})
    if not isinstance(rows, dict):
        return None
    out: dict[str, tuple[int, str]] = {}
    for name, pair in rows.items():
        if not (isinstance(pair, list) and len(pair) == 2 and _whole(pair[0]) and pair[0] > 0
                and isinstance(pair[1], str)):
            return None
        out[str(name)] = (pair[0], pair[1])
    return ReadFrom(data["rev"], out, data.get("log", 0))


def update(read_from: ReadFrom | None) -> RangeUpdate:
    """The write of ``State!B3``: ``read_from``, or a blank (the next step reads everything)."""
    return RangeUpdate(READ_FROM_CELL, [[read_from.text() if read_from is not None else None]])


def _moved(text: str, row: int) -> str:
    """The A1 range ``text`` starting at sheet row ``row`` instead (its columns and end kept)."""
    rng = parse_range(text)
    end = "" if rng.row2 is None else str(rng.row2)
    return f"{quote_sheet(rng.sheet)}!{col_letter(rng.col1)}{row}:{col_letter(rng.col2)}{end}"


def shift_plan(plan: Sequence[str], starts: Mapping[int, int]) -> tuple[list[str], list[int]]:
    """``plan`` with range ``i`` read from sheet row ``starts[i]`` (when that is below its
    first row and above its end), and the rows each range skips (for :func:`pad`)."""
    out, skipped = list(plan), [0] * len(plan)
    for i, row in starts.items():
        rng = parse_range(plan[i])
        if row <= rng.row1 or (rng.row2 is not None and row > rng.row2):
            continue
        out[i], skipped[i] = _moved(plan[i], row), row - rng.row1
    return out, skipped


def pad(grids: Sequence[Grid], skipped: Sequence[int]) -> list[Grid]:
    """The grids of a shifted read shaped as the whole read's: each range's skipped rows
    come first, blank."""
    return [([[] for _ in range(n)] + list(g)) if n else g for g, n in zip(grids, skipped, strict=True)]


def _plain(value: Any) -> str:
    """A cell as the digest sees it, the same whichever backend read it back (a number
    written as 3 may come back as 3.0; a blank as ``None`` or ``""``)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    if isinstance(value, Formula):
        return "=" + value.text
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def guard_digest(block: Block, cells: Sequence[Any], stamp: str) -> str:
    """The digest of a guard row: its stamp and the cells a Tracker types."""
    keys = [stamp, *(c.key for c in block.columns if c.is_input and c.key != stamp)]
    text = "\x1f".join(_plain(cells[block.index(k)] if block.index(k) < len(cells) else None) for k in keys)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _written(block: Block, updates: Sequence[RangeUpdate]) -> dict[int, dict[int, Any]]:
    """The cells ``updates`` write into ``block``: row offset -> column offset -> value."""
    out: dict[int, dict[int, Any]] = {}
    sheet = block.sheet.casefold()
    for up in updates:
        if getattr(up, "append", False):
            continue
        rng = parse_range(up.range)
        if rng.sheet.casefold() != sheet:
            continue
        for r, values in enumerate(up.values):
            row = out.setdefault(rng.row1 + r - block.first_row, {})
            for c, value in enumerate(values):
                row[rng.col1 + c - block.first_col] = value
    return out


def next_start(block: Block, grid: Grid, stamp: str, updates: Sequence[RangeUpdate],
               start: int = 0) -> tuple[int, str] | None:
    """Where the next Resolve starts reading ``block`` once ``updates`` are written: the
    offset of the first row from ``start`` whose ``stamp`` is blank or is written by this
    step, and the digest of the row above it; ``None`` when that is the block's first row
    (nothing to skip).  The rows this step stamps stay in the next read: its checks for a
    step cut short (issue 22.3) look for the last step's rows."""
    written = _written(block, updates)
    col = block.index(stamp)
    limit = len(grid) if block.rows is None else min(len(grid), block.rows)
    i = start
    while i < limit:
        cells = grid[i]
        mine = written.get(i, {})
        if col in mine:
            break
        value = cells[col] if col < len(cells) else None
        if value is None or (isinstance(value, str) and not value.strip()):
            break
        i += 1
    if i <= 0:
        return None
    above = list(grid[i - 1]) if i - 1 < len(grid) else []
    for c, value in written.get(i - 1, {}).items():
        above += [None] * (c + 1 - len(above))
        above[c] = value
    return i, guard_digest(block, above, stamp)


def holds(block: Block, grid: Grid, stamp: str, start: int, digest: str) -> bool:
    """Whether the guard row above ``start`` (read with it) is still the row it was, and
    still stamped."""
    if start - 1 >= len(grid):
        return False
    cells = grid[start - 1]
    col = block.index(stamp)
    if _plain(cells[col] if col < len(cells) else None) == "":
        return False
    return guard_digest(block, cells, stamp) == digest


# -- a tracker's steps: the plan's ranges of its stamped tables and its Log ----------------

def indices(plan: Sequence[str], lay: Any, stamps: Mapping[str, str]) -> dict[str, int]:
    """The range of ``plan`` of each stamped table (``stamps``: block name -> stamp column)
    and of the Log's Step column (``"log"``), by where they start."""
    firsts: dict[tuple[str, int, int], int] = {}
    for i, text in enumerate(plan):
        r = parse_range(text)
        firsts.setdefault((r.sheet.casefold(), r.row1, r.col1), i)
    out: dict[str, int] = {}
    for name in stamps:
        block = lay.block(name)
        at = firsts.get((block.sheet.casefold(), block.first_row, block.first_col))
        if at is not None:
            out[name] = at
    log = lay.block("Log_Table")
    at = firsts.get((log.sheet.casefold(), log.first_row, log.first_col + log.index("step")))
    if at is not None:
        out["log"] = at
    return out


def starts(plan: Sequence[str], lay: Any, stamps: Mapping[str, str], read: ReadFrom) -> dict[int, int]:
    """The sheet row each range of ``plan`` starts at after ``read`` (for :func:`shift_plan`):
    a stamped table from its guard row, the Log's Step column from its first row unchecked."""
    index = indices(plan, lay, stamps)
    out = {index[name]: lay.block(name).first_row + start - 1
           for name, (start, _digest) in read.rows.items() if name in index and name in stamps}
    if "log" in index and read.log:
        out[index["log"]] = lay.block("Log_Table").first_row + read.log
    return out


def holds_all(plan: Sequence[str], lay: Any, stamps: Mapping[str, str], grids: Sequence[Grid], read: ReadFrom,
              rev: int) -> bool:
    """Whether a read shifted by ``read`` holds: the State read with it (revision ``rev``)
    is the one ``read`` was written with, and each guard row is the row it was."""
    if rev != read.rev:
        return False
    index = indices(plan, lay, stamps)
    return all(holds(lay.block(name), grids[index[name]], stamps[name], start, digest)
               for name, (start, digest) in read.rows.items() if name in index and name in stamps)


def ahead(plan: Sequence[str], lay: Any, stamps: Mapping[str, str], grids: Sequence[Grid],
          updates: Sequence[RangeUpdate], read: ReadFrom | None, rev: int) -> ReadFrom:
    """Where the Resolve after this step starts reading, once ``updates`` are written
    (``read``: the starts this step read from and that held; ``rev``: the State's revision
    this step writes).  The Log's rows checked are all the rows this step read."""
    index = indices(plan, lay, stamps)
    rows: dict[str, tuple[int, str]] = {}
    for name, stamp in stamps.items():
        if name not in index:
            continue
        before = read.rows.get(name) if read is not None else None
        found = next_start(lay.block(name), grids[index[name]], stamp, updates, before[0] if before else 0)
        if found is not None:
            rows[name] = found
    return ReadFrom(rev, rows, len(grids[index["log"]]) if "log" in index else 0)
