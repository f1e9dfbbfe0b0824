"""The seam read straight from an xlwings remote payload, without xlwings' ``Book`` (issue 12).

An xlwings remote client (VBA ``RunRemotePython``, Apps Script ``runPython``) posts the
workbook as JSON: each sheet's ``name`` and its ``values`` from ``A1`` on (see
:mod:`sheetsync.backends.xlwings_remote`).  :class:`~sheetsync.backends.xlwings_backend.XlwingsBackend`
on ``xw.Book(json=payload)`` reads that JSON through xlwings' range objects, which copy a
sheet's whole grid into tuples for every range they touch: on a tracker that is most of a
Resolve's time on the endpoint.  :class:`PayloadBackend` reads the same grids by slicing
the payload's rows, and answers the writes with the ``actions`` list that ``book.json()``
gives for them, action for action:

* reads see what xlwings' remote engine shows (``options(ndim=2, err_to_str=True)``): an
  empty cell (``null`` from VBA, ``""`` from Apps Script) is ``None``, an ISO date-time
  string ending in ``Z`` is the date-time it names, error strings stay text, whole floats
  are ints; an open-ended range (``Log!A2:J``) ends at the last row of the used range
  (``used_range_address`` when the client sends one, else the payload's own rows);
* an append starts after the last row of the used range that holds a value, as
  :meth:`XlwingsBackend._next_free_row` finds it (error strings count as empty there);
* each block is one ``setValues`` action, ``args`` ``[None]``, ``None`` sent as ``""``,
  text with its leading apostrophe and formulas as their ``=...`` text exactly as
  :class:`XlwingsBackend` encodes them; a block over xlwings' write budget (100,000 cells)
  is split into the same row chunks xlwings splits it into.

The write plan (which blocks, ragged rows one by one, every sheet looked up first, nothing
queued if one is missing) is :class:`XlwingsBackend`'s own: this class only replaces the
three places where that backend touches a book.  No xlwings import, no licence check, and
nothing kept once the request's answer is taken (:meth:`PayloadBackend.json`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from sheetsync.backends.xlwings_backend import XlwingsBackend, _empty, _filled_count, _from_xl
from sheetsync.core.errors import BackendError
from sheetsync.sheets.backend import A1Range, CellValue, Grid, col_index

__all__ = ["WRITE_BUDGET", "PayloadBackend"]

WRITE_BUDGET = 100_000
"""Cells per ``setValues`` above which xlwings splits a write into row chunks
(``DEFAULT_MAX_CELLS_PER_WRITE`` in xlwings 0.37; the remote engine keeps the default)."""

# The ISO date-time a client sends for a date cell, as xlwings' remote engine recognises it.
_DATETIME = re.compile(
    r"^(-?(?:[1-9][0-9]*)?[0-9]{4})-(1[0-2]|0[1-9])-(3[01]|0[1-9]|[12][0-9])"
    r"T(2[0-3]|[01][0-9]):([0-5][0-9]):([0-5][0-9])(\.[0-9]+)?"
    r"(Z|[+-](?:2[0-3]|[01][0-9]):[0-5][0-9])?$"
)
# The error strings xlwings turns into empty cells when it is not told err_to_str.
_ERRORS = frozenset({"#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!", "#DATA!"})
_MAX_ROWS, _MAX_COLUMNS = 1_048_576, 16_384
_PART = re.compile(r"^([A-Za-z]*)(\d*)$")
_LONG = 100
"""Rows from which a closed block's end is found from its sheet's last filled row."""


def _date_time(text: str) -> dt.datetime:
    # xlwings drops the last character (the "Z" it expects) before parsing; so does this,
    # so a string it can't parse fails here as it fails there.
    return dt.datetime.fromisoformat(text[:-1])


def _cell(value: Any) -> CellValue:
    """One payload cell as a seam value (the slow path of :meth:`PayloadBackend._read_block`)."""
    if isinstance(value, str):
        if value == "":
            return None
        if len(value) >= 19 and _DATETIME.match(value):
            return _from_xl(_date_time(value))
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return _from_xl(value)
    raise TypeError(f"the client sent {type(value).__name__} {value!r} where a cell value belongs")


def _filled(value: Any) -> bool:
    """Whether a payload cell holds a value, as an append sees it (errors count as empty)."""
    if value is None or value == "":
        return False
    if isinstance(value, str):
        if value in _ERRORS:
            return False
        if len(value) >= 19 and _DATETIME.match(value):
            _date_time(value)  # raises where xlwings' read would
    return True


def _corner(text: str, last: bool) -> tuple[int, int]:
    m = _PART.match(text.replace("$", ""))
    if not m or not (m.group(1) or m.group(2)):
        raise ValueError(f"{text!r} is not an A1 address")
    letters, digits = m.group(1), m.group(2)
    row = int(digits) if digits else (_MAX_ROWS if last else 1)
    col = col_index(letters) if letters else (_MAX_COLUMNS if last else 1)
    return row, col


class _Sheet:
    """One sheet of the payload: where it sits (for ``sheet_position``) and its rows."""

    __slots__ = ("_filled", "_used", "api", "name", "position", "values")

    def __init__(self, position: int, api: Mapping[str, Any]) -> None:
        self.position = position
        self.api = api
        self.name: str = api["name"]
        self.values: list[Any] = api["values"]
        self._used: tuple[int, int, int] | None = None
        self._filled: int | None = None

    def filled_known(self) -> bool:
        return self._filled is not None

    def last_filled(self) -> int:
        """The number of the last row that holds a value in any column (0: none), found
        once a sheet: a block's trailing empty rows are never looked at below it (issue 12:
        an open-ended block ends at the used range's end, and the Orders and State sheets
        are hundreds of laid-out rows, a few of them used).  A closed block uses it when it
        is :data:`_LONG` or longer, or once it is known (a short one is not worth a scan of
        the whole sheet)."""
        if self._filled is None:
            self._filled = _filled_count(self.values)
        return self._filled

    def used(self) -> tuple[int, int, int]:
        """The used range's first row, last row and last column (xlwings' ``used_range``)."""
        if self._used is None:
            address = self.api.get("used_range_address")
            if address:
                first, _, second = str(address).partition(":")
                top = _corner(first, False)
                bottom = _corner(second, True) if second else top
                self._used = (top[0], bottom[0], bottom[1])
            elif address is None and "used_range_address" in self.api:
                self._used = (1, 1, 1)  # the client says: empty (Excel reports A1)
            else:
                rows = len(self.values)
                cols = max(map(len, self.values), default=0)
                self._used = (1, rows, cols) if rows and cols else (1, 1, 1)
        return self._used


class PayloadBackend(XlwingsBackend):
    """The :class:`~sheetsync.sheets.backend.SheetBackend` seam on an xlwings remote payload
    (the parsed JSON a client posted); :meth:`json` is the answer to send back.

    ``reads``/``writes`` count seam calls and ``range_reads``/``range_writes`` the blocks,
    as on :class:`XlwingsBackend`.  The constructor does no I/O and copies nothing: the
    payload is read, never changed.
    """

    def __init__(self, payload: Mapping[str, Any]) -> None:  # no book: XlwingsBackend's is not called
        self.payload = payload
        self.read_formulas = False  # a payload holds values only
        self.reads = 0
        self.writes = 0
        self.range_reads = 0
        self.range_writes = 0
        self.actions: list[dict[str, Any]] = []
        self._sheet_list: dict[str, Any] | None = None

    def json(self) -> dict[str, Any]:
        """The answer, as ``book.json()`` gives it: ``{"actions": [...]}``."""
        return {"actions": self.actions}

    # -- where XlwingsBackend touches the book ---------------------------------------------

    def _sheets(self) -> dict[str, Any]:
        if self._sheet_list is None:
            try:
                self._sheet_list = {
                    sheet.name: sheet
                    for sheet in (_Sheet(i, api) for i, api in enumerate(self.payload["sheets"]))
                }
            except Exception as exc:
                raise BackendError(f"could not list the sheets of the workbook: {exc}") from exc
        return self._sheet_list

    @staticmethod
    def _last_row(sheet: Any) -> int:
        return int(sheet.used()[1])

    def _next_free_row(self, sheet: Any, rng: A1Range) -> int:
        try:
            top, last, width = sheet.used()
            rows = sheet.values[top - 1 : last] if last >= top else []
            nones, blanks = [None] * width, [""] * width
            # a row of nothing but empty cells (most of a laid-out sheet) in one list
            # comparison, as _read_block skips it; any other row cell by cell (issue 23)
            filled = [top + i for i, row in enumerate(rows)
                      if (part := row[:width]) != nones and part != blanks and any(_filled(v) for v in part)]
        except Exception as exc:
            raise BackendError(f"could not find the end of sheet {rng.sheet!r}: {exc}") from exc
        return max(rng.row1, (filled[-1] + 1) if filled else 1)

    def _read_block(self, sheet: Any, rng: A1Range) -> Grid:
        last = rng.row2 if rng.row2 is not None else self._last_row(sheet)
        if last < rng.row1:
            return []
        self.range_reads += 1
        first, stop, width = rng.col1 - 1, rng.col2, rng.width
        if rng.row2 is None or last - rng.row1 >= _LONG or sheet.filled_known():
            last = min(last, sheet.last_filled())
        parts = [row[first:stop] for row in sheet.values[rng.row1 - 1 : last]]
        nones, blanks = [None] * width, [""] * width  # an empty row as VBA and Apps Script send it
        count = _filled_count(parts)  # trailing empty rows are dropped (trim_grid): not even looked at
        out: Grid = []
        for part in parts[:count]:
            if _empty(part, nones, blanks):
                out.append([None] * width)  # an empty row (most of a tracker): no cell by cell
                continue
            # ints and short text as they are; the rest (dates, floats, bools) one by one
            cells: list[CellValue] = [
                None if v is None else v if (t := type(v)) is int or (t is str and 0 < len(v) < 19) else _cell(v)
                for v in part
            ]
            if len(cells) < width:
                cells += [None] * (width - len(cells))
            out.append(cells)
        while out and all(v is None for v in out[-1]):
            out.pop()
        return out

    _BLANK = ""
    """xlwings sends an empty cell as ``""``: the write plan encodes it so, in its one pass
    over the cells, and :meth:`_write_block` takes the plan's rows as they are."""

    def _write_block(self, sheet: Any, row: int, col: int, grid: list[list[Any]]) -> None:
        values = grid  # the write plan's rows, blanks already ""
        count, width = len(values), len(values[0])
        step = count if count * width <= WRITE_BUDGET else max(1, WRITE_BUDGET // width)
        for start in range(0, count, step):
            part = values[start : start + step]
            self.actions.append({
                "func": "setValues",
                "args": [None],
                "values": part,
                "sheet_position": sheet.position,
                "start_row": row - 1 + start,
                "start_column": col - 1,
                "row_count": len(part),
                "column_count": width,
            })
