"""The :class:`~sheetsync.sheets.backend.SheetBackend` seam on an xlwings ``Book``.

The same class serves both ways a button reaches sheetsync:

* **Desktop Excel** (``RunPython`` from a macro-enabled workbook, open-source xlwings):
  ``XlwingsBackend(xw.Book.caller())``.  Reads and writes go to Excel over COM/AppleScript.
* **Remote clients** (xlwings Server: ``RunRemotePython`` in VBA, ``runPython`` in Google
  Apps Script, Office.js): ``XlwingsBackend(xw.Book(json=payload))``.  The client posts the
  workbook's content as JSON; reads come from that payload and writes are queued as
  *actions* (``book.json()``) that the endpoint returns and the client applies.  This mode
  is part of xlwings PRO: free for noncommercial use with
  ``XLWINGS_LICENSE_KEY=noncommercial``, paid otherwise.

What the remote payload holds
-----------------------------
Values only.  Both the VBA client (``Remote.bas``: ``UsedRange.Value`` from ``A1`` to the
end of the used range) and the Apps Script client (``xlwings.js``: ``getValues()`` up to
``getLastRow()``/``getLastColumn()``) send each sheet's *computed values* (dates as ISO
strings, errors as ``#DIV/0!``-style strings, empty cells as ``null`` from VBA and ``""``
from Apps Script), plus the book name, active sheet index, selection, named ranges,
pictures and (VBA only) tables.  No formulas, no number formats.  xlwings' remote engine
itself refuses ``Range.formula`` reads ("Formulas aren't part of the payload").  So on a
remote book a formula cell reads back as its value, never as a
:class:`~sheetsync.sheets.backend.Formula`; a reader that must refuse formulas in input
cells can only do so on desktop Excel, Google Sheets' own API, or a file.  On desktop Excel
the backend reads ``.value`` and ``.formula`` of each block (one range, two properties) and
returns a ``Formula`` where the cell's formula starts with ``=`` and differs from its value.

Writing
-------
Each :class:`~sheetsync.sheets.backend.RangeUpdate` is one xlwings write of the whole block
(one ``setValues`` action remotely); an update whose rows differ in length is written row
by row, so cells it leaves out stay untouched.  Every sheet is looked up before anything is
written.

* A ``str`` is written with a leading apostrophe (``'text``).  Excel (``Range.Value``,
  which both desktop xlwings and the VBA client's ``setValues`` use) and Google Sheets
  (``Range.setValues`` in the Apps Script client) take a leading apostrophe as "this is
  text" and keep only the rest as the value, so ``=1+1``, ``007``, ``1/2`` or ``TRUE``
  typed by a player stay exactly that text, in any locale.  The apostrophe is used rather
  than the Text number format (``@``): it is per value, leaves the template's formatting
  alone, needs no extra action, and the VBA client's ``setNumberFormat`` would have to run
  before the values.  Caveat: a cell that is already formatted as Text may keep the
  apostrophe as a character; sheetsync's templates don't format input cells as Text.
* A :class:`~sheetsync.sheets.backend.Formula` is written as its ``=...`` text in the same
  ``setValues``, which Excel and Google Sheets turn into a formula.  xlwings' own
  ``setFormula`` action is not used: the VBA and Apps Script clients don't implement it
  (see :func:`sheetsync.backends.xlwings_remote.supported_actions`).
* ``None`` (and ``""``) clears the cell.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sheetsync.core.errors import BackendError, SheetSyncError
from sheetsync.sheets.backend import (
    A1Range,
    CellValue,
    Formula,
    Grid,
    RangeUpdate,
    parse_range,
    trim_grid,
)

if TYPE_CHECKING:
    import xlwings as xw

__all__ = ["XlwingsBackend", "alert", "engine_name"]


def engine_name(book: xw.Book) -> str:
    """``"remote"`` for a book made from a client's JSON, ``"excel"`` on the desktop."""
    try:
        return str(book.app.engine.name)
    except Exception:  # an engine without a name is not the remote one
        return "excel"


def _from_xl(value: Any) -> CellValue:
    """A value as read by xlwings, as a seam value."""
    if value is None or isinstance(value, (bool, int, str)):
        return None if value == "" else value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
            return int(value)
        return value
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0) and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _to_xl(value: CellValue, rng: A1Range, i: int, j: int) -> Any:
    """A seam value as written through xlwings (see the module docstring); ``rng``, ``i``
    and ``j`` place it, for the message of a value that can't be written (the address is
    only worked out then: issue 12)."""
    if value is None or type(value) is int:
        return value
    if isinstance(value, Formula):
        return value.text
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return "'" + value
    if isinstance(value, (bool, int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise BackendError(f"{rng.cell(i, j)}: {value!r} can't be stored in a spreadsheet cell")
        return value
    raise TypeError(f"{rng.cell(i, j)}: {type(value).__name__} is not a cell value")


def _two_d(data: Any) -> list[list[Any]]:
    if not isinstance(data, (list, tuple)):
        return [[data]]
    if data and not isinstance(data[0], (list, tuple)):
        return [list(data)]
    return [list(row) for row in data]


def _empty(part: list[Any], nones: list[None], blanks: list[str]) -> bool:
    """Whether a slice of a row holds no value (``None`` or ``""`` in every cell); a whole
    row as the clients send it, or as a step pads its block, is one list comparison."""
    if part == nones or part == blanks:
        return True
    return not any(part) and part.count(None) + part.count("") == len(part)


_RUN = 32
"""How many trailing rows :func:`_filled_count` compares at once with a run of one empty row."""


def _filled_count(rows: list[Any]) -> int:
    """How many of ``rows`` are left once the trailing empty ones are dropped (:func:`_empty`:
    only ``None`` or ``""`` in every cell), looked at from the last one up; each row is
    first compared whole with the empty rows of its width, as VBA and Apps Script send them.
    Below a row that is such an empty row, the rows above it are compared with it
    :data:`_RUN` at a time, in one list comparison (issue 12: a tracker's sheets end in
    hundreds of laid-out empty rows, a Resolve reads four of them, and the blocks it writes
    end in hundreds of padding rows)."""
    patterns: dict[int, tuple[list[None], list[str]]] = {}
    count = len(rows)
    while count:
        row = rows[count - 1]
        empties = patterns.get(len(row))
        if empties is None:
            empties = patterns[len(row)] = ([None] * len(row), [""] * len(row))
        same = empties[0] if row == empties[0] else empties[1] if row == empties[1] else None
        if same is not None:
            count -= 1
            run = [same] * _RUN
            while count >= _RUN and rows[count - _RUN : count] == run:
                count -= _RUN
            continue
        if not _empty(row, *empties):
            break
        count -= 1
    return count


class XlwingsBackend:
    """Reads and writes blocks of cells of an xlwings ``Book`` (desktop or remote).

    ``read_formulas`` says whether reads tell formula cells apart (see the module
    docstring); by default it is on for desktop Excel and off for a remote book, whose
    payload has no formulas.  ``range_reads`` and ``range_writes`` count xlwings range
    operations, ``reads`` and ``writes`` calls of the seam.  The constructor does no I/O.
    """

    _BLANK: Any = None
    """What an empty cell (``None`` or ``""``) is written as: ``None``, which xlwings clears
    the cell for."""

    def __init__(self, book: xw.Book, *, read_formulas: bool | None = None) -> None:
        self.book = book
        self.read_formulas = (
            engine_name(book) != "remote" if read_formulas is None else read_formulas
        )
        self.reads = 0
        self.writes = 0
        self.range_reads = 0
        self.range_writes = 0

    # -- helpers --------------------------------------------------------------------------

    def _sheets(self) -> dict[str, Any]:
        try:
            return {sheet.name: sheet for sheet in self.book.sheets}
        except Exception as exc:
            raise BackendError(f"could not list the sheets of the workbook: {exc}") from exc

    @staticmethod
    def _sheet(sheets: dict[str, Any], name: str) -> Any:
        if name in sheets:
            return sheets[name]
        folded = {n.casefold(): s for n, s in sheets.items()}  # Excel: case-insensitive
        if name.casefold() in folded:
            return folded[name.casefold()]
        raise BackendError(f"there is no sheet {name!r}")

    @staticmethod
    def _last_row(sheet: Any) -> int:
        return int(sheet.used_range.last_cell.row)

    def _next_free_row(self, sheet: Any, rng: A1Range) -> int:
        """The row an append starts at: after the last row of the used range that holds a
        value (a formatted but empty row does not count), and never above ``rng``'s first."""
        try:
            used = sheet.used_range
            top, last = int(used.row), int(used.last_cell.row)
            width = int(used.last_cell.column)
            values = _two_d(sheet.range((top, 1), (last, width)).options(ndim=2).value) if last >= top else []
        except Exception as exc:
            raise BackendError(f"could not find the end of sheet {rng.sheet!r}: {exc}") from exc
        filled = [top + i for i, row in enumerate(values) if any(v not in (None, "") for v in row)]
        return max(rng.row1, (filled[-1] + 1) if filled else 1)

    def _read_block(self, sheet: Any, rng: A1Range) -> Grid:
        last = rng.row2 if rng.row2 is not None else self._last_row(sheet)
        if last < rng.row1:
            return []
        block = sheet.range((rng.row1, rng.col1), (last, rng.col2))
        self.range_reads += 1
        values = _two_d(block.options(ndim=2, err_to_str=True).value)
        formulas = _two_d(block.formula) if self.read_formulas else None
        rows: list[list[CellValue]] = []
        for i, row in enumerate(values):
            out: list[CellValue] = []
            for j, value in enumerate(row):
                formula = formulas[i][j] if formulas is not None else None
                if (
                    isinstance(formula, str)
                    and formula.startswith("=")
                    and len(formula) > 1
                    and formula != value
                ):
                    out.append(Formula(formula))
                else:
                    out.append(_from_xl(value))
            rows.append(out)
        return trim_grid(rows, rng.width)

    def _write_block(self, sheet: Any, row: int, col: int, grid: list[list[Any]]) -> None:
        sheet.range((row, col)).value = grid  # one xlwings write (one setValues remotely)

    # -- the seam -------------------------------------------------------------------------

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        """One grid per range; ``Log!A2:J`` reads to the last row of the used range."""
        parsed = [parse_range(text) for text in ranges]
        self.reads += 1
        try:
            sheets = self._sheets()
            return [self._read_block(self._sheet(sheets, rng.sheet), rng) for rng in parsed]
        except SheetSyncError:
            raise
        except Exception as exc:
            raise BackendError(f"could not read {', '.join(ranges)}: {exc}") from exc

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        """Write every update, one block each; nothing is written if a sheet is missing."""
        plan: list[tuple[str, int, int, list[list[Any]]]] = []
        appends = [parse_range(u.range) for u in updates if u.append]
        if appends:
            sheets = self._sheets()
            for rng in appends:  # check every sheet first: all or nothing
                self._sheet(sheets, rng.sheet)
        appended: dict[str, int] = {}  # rows already appended to a sheet in this write
        blank = self._BLANK
        blank_rows: dict[int, tuple[list[None], list[Any]]] = {}  # by width: a row of None, and as sent

        def blank_row(n: int) -> tuple[list[None], list[Any]]:
            got = blank_rows.get(n)
            if got is None:
                got = blank_rows[n] = ([None] * n, [blank] * n)
            return got

        for update in updates:
            rng = parse_range(update.range)
            if update.append:
                row1 = appended.get(rng.sheet) or self._next_free_row(self._sheet(sheets, rng.sheet), rng)
                appended[rng.sheet] = row1 + len(update.values)
                rng = A1Range(rng.sheet, rng.col1, row1, rng.col2, None)
            # _to_xl for every cell; the usual ones (blank, whole number, text) inline, a blank
            # as this backend sends one (_BLANK), and a row of blanks whole, one list comparison,
            # sent as one shared row (issue 12: the State block and the tables' padding are
            # hundreds of them; the plan's rows are only read from here on).  The block's
            # trailing blank rows are found a run at a time (_filled_count) when all as wide as
            # its first row; rows of other widths are taken row by row.
            encoded: list[list[Any]] = []
            values = update.values
            width = len(values[0]) if values else 0
            uniform = True  # every row as wide as the first: one block
            filled = _filled_count(values) if width else len(values)
            if filled < len(values) and set(map(len, values[filled:])) != {width}:
                filled = len(values)
            for i, row in enumerate(values[:filled] if filled < len(values) else values):
                n = len(row)
                pattern = blank_rows.get(n) or blank_row(n)
                if n != width:
                    uniform = False
                if row == pattern[0]:
                    encoded.append(pattern[1])
                    continue
                encoded.append([
                    v if (t := type(v)) is int
                    else f"'{v}" if t is str and v
                    else blank if v is None or t is str
                    else _to_xl(v, rng, i, j)
                    for j, v in enumerate(row)
                ])
            if filled < len(values):
                encoded += [blank_row(width)[1]] * (len(values) - filled)
            if uniform:
                if encoded and encoded[0]:
                    plan.append((rng.sheet, rng.row1, rng.col1, encoded))
            else:
                plan += [
                    (rng.sheet, rng.row1 + i, rng.col1, [row])
                    for i, row in enumerate(encoded)
                    if row
                ]
        sheets = self._sheets()
        targets = [(self._sheet(sheets, name), r, c, grid) for name, r, c, grid in plan]
        self.writes += 1
        try:
            for sheet, row, col, grid in targets:
                self._write_block(sheet, row, col, grid)
                self.range_writes += 1
        except SheetSyncError:
            raise
        except Exception as exc:
            raise BackendError(f"could not write to the workbook: {exc}") from exc


def alert(book: xw.Book, title: str, message: str, *, mode: str = "critical") -> None:
    """Show ``message`` in a message box with an OK button.

    On desktop Excel the box appears at once; on a remote book it becomes an ``alert``
    action that the client shows after the endpoint answers.  ``mode`` is ``"critical"``
    (an error) or ``"info"``.
    """
    try:
        book.app.alert(message, title=title, buttons="ok", mode=mode)
    except Exception as exc:
        raise BackendError(f"could not show a message box: {exc}") from exc
