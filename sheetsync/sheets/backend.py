"""The one narrow I/O seam between the use cases and a spreadsheet.

A :class:`SheetBackend` has two methods.  ``read_ranges`` takes A1 ranges such as
``"Orders!A2:P500"`` and returns one grid per range; ``write_ranges`` takes a list of
:class:`RangeUpdate` and applies them all or none.  A use case calls each at most once per
step, so a Google Sheet costs one read and one write per Resolve Phase.

Cell values crossing the seam are ``str | int | float | bool | None`` or :class:`Formula`.
A plain ``str`` is always literal text, even when it starts with ``=``: text typed by a
player is never turned into a formula.  A formula in a cell reads back as a
:class:`Formula`, so a reader can refuse one found in an input field.

Grids returned by ``read_ranges`` have the trailing empty rows of the range dropped and
every row padded with ``None`` to the range's width, so ``grid[i][j]`` is the cell ``i``
rows and ``j`` columns from the range's top-left corner.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sheetsync.core.a1 import col_index, col_letter, quote_sheet

__all__ = [
    "DryRunBackend",
    "A1Range",
    "CellValue",
    "Formula",
    "Grid",
    "MemoryBackend",
    "RangeUpdate",
    "SheetBackend",
    "col_letter",
    "col_index",
    "parse_range",
]


@dataclass(frozen=True)
class Formula:
    """A spreadsheet formula, ``text`` starting with ``=``."""

    text: str

    def __post_init__(self) -> None:
        if not self.text.startswith("="):
            raise ValueError(f"a formula starts with '=': {self.text!r}")


CellValue = str | int | float | bool | None | Formula
Grid = list[list[CellValue]]


@dataclass(frozen=True)
class RangeUpdate:
    """Write ``values`` (a 2-D grid) with its top-left corner at ``range``'s start.

    With ``append=True`` the rows go instead right after the last row holding a value
    anywhere in ``range``'s sheet (never above ``range``'s first row), in ``range``'s
    columns; the backend finds that row when it writes.  Two steps that append at the same
    moment therefore both keep their rows (Google Sheets places them server-side).
    """

    range: str
    values: Sequence[Sequence[CellValue]]
    append: bool = False


@runtime_checkable
class SheetBackend(Protocol):
    """Reads and writes blocks of cells.  Constructors do no I/O."""

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]: ...

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None: ...


_CELL = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)?$")


@dataclass(frozen=True)
class A1Range:
    """A parsed A1 range.  ``row2`` is ``None`` for an open-ended range (``Log!A2:J``)."""

    sheet: str
    col1: int
    row1: int
    col2: int
    row2: int | None

    @property
    def width(self) -> int:
        return self.col2 - self.col1 + 1

    def cell(self, row_offset: int, col_offset: int) -> str:
        """The A1 address (with sheet) of the cell at the given offsets from the corner."""
        return f"{self.sheet}!{col_letter(self.col1 + col_offset)}{self.row1 + row_offset}"

    def __str__(self) -> str:
        end = f"{col_letter(self.col2)}{self.row2 if self.row2 is not None else ''}"
        return f"{quote_sheet(self.sheet)}!{col_letter(self.col1)}{self.row1}:{end}"


@functools.lru_cache(maxsize=8192)
def parse_range(text: str) -> A1Range:
    """Parse ``Sheet!A1:C5``, ``'House Rules'!A2:B``, or a single cell ``Battle!B2``.

    Remembered (an :class:`A1Range` is frozen): every step names the same few hundred
    ranges again (issue 12); a text that is not a range raises each time."""
    if "!" not in text:
        raise ValueError(f"range {text!r} names no sheet")
    sheet, _, cells = text.rpartition("!")
    if sheet.startswith("'") and sheet.endswith("'"):
        sheet = sheet[1:-1].replace("''", "'")
    first, _, last = cells.partition(":")
    m1 = _CELL.match(first)
    m2 = _CELL.match(last or first)
    if not m1 or not m2 or m1.group(2) is None:
        raise ValueError(f"range {text!r} is not in A1 notation")
    row2 = int(m2.group(2)) if m2.group(2) else None
    return A1Range(sheet, col_index(m1.group(1)), int(m1.group(2)), col_index(m2.group(1)), row2)


def trim_grid(rows: list[list[CellValue]], width: int) -> Grid:
    """Pad every row to ``width`` and drop trailing rows that are wholly empty."""
    out = [list(r[:width]) + [None] * (width - len(r[:width])) for r in rows]
    while out and all(v is None or v == "" for v in out[-1]):
        out.pop()
    return [[None if v == "" else v for v in r] for r in out]


class MemoryBackend:
    """A backend held in a dict ``{sheet: {(row, col): value}}``; ships for tests and scripts.

    ``reads`` and ``writes`` count the calls, so a test can check that a use case makes one
    of each.
    """

    def __init__(self, sheets: dict[str, dict[tuple[int, int], CellValue]] | None = None) -> None:
        self.sheets: dict[str, dict[tuple[int, int], CellValue]] = sheets if sheets is not None else {}
        self.reads = 0
        self.writes = 0
        # sheet -> (its cell dict, that dict's size, last row, a cell of that row): see max_row
        self._last: dict[str, tuple[dict[tuple[int, int], CellValue], int, int, tuple[int, int] | None]] = {}

    def max_row(self, sheet: str) -> int:
        """The last row holding a value (0 when none).

        Issue 9: kept up to date by :meth:`write_ranges`, so an open-ended read or an append
        costs the same on a long sheet as on a short one.  Cells poked into ``sheets`` by
        hand are seen too: the row is worked out again when the sheet's dict is another
        one, has another size, or no longer holds a value in the cell that set the row.
        """
        cells = self.sheets.get(sheet)
        if not cells:
            return 0
        known = self._last.get(sheet)
        if known is not None:
            owner, size, row, witness = known
            if owner is cells and size == len(cells) and (witness is None or cells.get(witness) not in (None, "")):
                return row
        row, witness = 0, None
        for key, value in cells.items():
            if key[0] > row and value not in (None, ""):
                row, witness = key[0], key
        self._last[sheet] = (cells, len(cells), row, witness)
        return row

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        self.reads += 1
        grids: list[Grid] = []
        for text in ranges:
            rng = parse_range(text)
            cells = self.sheets.get(rng.sheet)
            if cells is None:
                from sheetsync.core.errors import BackendError

                raise BackendError(f"there is no sheet {rng.sheet!r}")
            last = rng.row2 if rng.row2 is not None else max(self.max_row(rng.sheet), rng.row1)
            grids.append(self._grid(cells, rng.row1, last, range(rng.col1, rng.col2 + 1)))
        return grids

    @staticmethod
    def _grid(cells: dict[tuple[int, int], CellValue], row1: int, last: int, cols: range) -> Grid:
        """What :func:`trim_grid` makes of the rows ``row1..last``, in one pass over the cells
        (issue 9: an open-ended read of a long Orders sheet costs a lookup a cell, no more).
        The rows are as wide as the range already; a cell poked as ``""`` reads as empty."""
        height, width = last - row1 + 1, len(cols)
        if height <= 0 or width <= 0:
            return []
        if height * width > 2 * len(cells):
            # Issue 23: a long sparse read (the Orders and Log of every phase played) takes
            # each cell the sheet holds once, not a lookup for every empty cell of the range
            rows: list[list[CellValue]] = [[None] * width for _ in range(height)]
            c1, c2 = cols.start, cols.stop
            for (r, c), v in cells.items():
                if row1 <= r <= last and c1 <= c < c2 and v is not None and v != "":
                    rows[r - row1][c - c1] = v
            while rows and all(v is None for v in rows[-1]):
                rows.pop()
            return rows
        get = cells.get
        rows = [[get((r, c)) for c in cols] for r in range(row1, last + 1)]
        while rows and all(v is None or v == "" for v in rows[-1]):
            rows.pop()
        return [[None if v == "" else v for v in row] if "" in row else row for row in rows]

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        parsed = [(parse_range(u.range), u.values, u.append) for u in updates]
        for rng, _, _ in parsed:  # all or nothing: check every sheet before touching one
            if rng.sheet not in self.sheets:
                from sheetsync.core.errors import BackendError

                raise BackendError(f"there is no sheet {rng.sheet!r}")
        self.writes += 1
        for rng, values, append in parsed:
            cells = self.sheets[rng.sheet]
            last = self.max_row(rng.sheet)
            row1 = max(rng.row1, last + 1) if append else rng.row1
            top: tuple[int, int] | None = None  # the first cell given a value in the lowest row
            for i, row in enumerate(values):
                for j, value in enumerate(row):
                    key = (row1 + i, rng.col1 + j)
                    if value is None or value == "":
                        cells.pop(key, None)
                    else:
                        cells[key] = value
                        if top is None or key[0] > top[0]:
                            top = key
            known = self._last.get(rng.sheet)
            if top is not None and top[0] > last:
                self._last[rng.sheet] = (cells, len(cells), top[0], top)
            elif known is not None and known[3] is not None and cells.get(known[3]) not in (None, ""):
                self._last[rng.sheet] = (cells, len(cells), last, known[3])  # the cell holding the last row stands
            else:
                self._last.pop(rng.sheet, None)  # worked out again when next asked


class DryRunBackend:
    """Reads from another backend and keeps the writes instead of making them: a step run
    on it shows what it would do and changes nothing."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.updates: list[Any] = []

    def read_ranges(self, ranges: Sequence[str]) -> list[Any]:
        return list(self.inner.read_ranges(ranges))

    def write_ranges(self, updates: Sequence[Any]) -> None:
        self.updates.extend(updates)
