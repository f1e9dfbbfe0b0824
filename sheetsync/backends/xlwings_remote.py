"""Stand in for the xlwings remote clients, with an openpyxl workbook as the spreadsheet.

xlwings Server works in three steps: a client (VBA ``RunRemotePython`` or Google Apps
Script ``runPython`` from ``xlwings.js``) posts the workbook as JSON; Python opens it with
``xw.Book(json=payload)``, reads it and queues changes; the answer ``book.json()``, a list
of *actions*, goes back and the client applies them.  This module plays the client:

* :func:`payload_from_openpyxl` builds the JSON a client would post for a workbook;
* :func:`apply_actions` applies the returned actions to the workbook, as the client would;
* :func:`remote_book` opens a payload with xlwings (registering xlwings' remote engine if
  ``XLWINGS_LICENSE_KEY`` was set only after ``xlwings`` was imported), and
  :func:`close_book` closes it again: xlwings' remote engine keeps every book it opened in
  its one app until the book is closed, and caches every range it reads keyed by the
  sheet's whole grid, so a server that doesn't close them (which empties that cache too)
  grows by the size of each payload on every request;
* :func:`supported_actions` lists the actions a client implements, read from the client
  code that ships in the installed xlwings (``js/xlwings.js``, ``addin/Remote.bas``).

The payload (xlwings 0.37, both clients)::

    {"client": "VBA" | "Google Apps Script",
     "version": "<xlwings version; must equal the server's>",
     "book": {"name": ..., "active_sheet_index": 0, "selection": "A1"},
     "names": [{"name", "sheet_index", "address", "book_scope",
                "scope_sheet_name", "scope_sheet_index"}],
     "sheets": [{"name", "values": [[...]], "pictures": [{"name", "height", "width"}],
                 "tables": [...]}]}

``values`` are the sheet's computed values from ``A1`` to the end of the used range (VBA)
or to the last row and column with content (Apps Script): dates as ISO strings, errors as
``#DIV/0!``-style strings, empty cells ``null`` (VBA) or ``""`` (Apps Script).  Formulas
are not sent.  An openpyxl workbook holds formulas but no results, so a formula cell's
value is taken from ``cached_values`` (the same file loaded with ``data_only=True``, for
instance after LibreOffice recalculated it) and is sent empty without it.

Each action is ``{"func", "args", "values", "sheet_position", "start_row",
"start_column", "row_count", "column_count"}`` (0-based positions).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sheetsync.core.errors import BackendError

if TYPE_CHECKING:
    import openpyxl
    import xlwings as xw
    from openpyxl.worksheet.worksheet import Worksheet

__all__ = [
    "CLIENTS",
    "STATE_SHEET",
    "apply_actions",
    "close_book",
    "commit_last",
    "confirmation",
    "step_answer",
    "ensure_remote_engine",
    "open_remote_books",
    "payload_from_openpyxl",
    "remote_book",
    "simulate_request",
    "supported_actions",
]

VBA = "VBA"
GOOGLE = "Google Apps Script"
#: The clients whose payload :func:`payload_from_openpyxl` can build.
CLIENTS = (VBA, GOOGLE)

_ERRORS = {"#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!", "#DATA!",
           "#GETTING_DATA", "#SPILL!", "#CALC!"}


# ---------------------------------------------------------------------------------------
# xlwings' remote engine
# ---------------------------------------------------------------------------------------


def ensure_remote_engine() -> None:
    """Make sure ``xw.Book(json=...)`` works in this process.

    xlwings registers its remote engine when ``xlwings`` is first imported, and only if a
    license key is found then (``XLWINGS_LICENSE_KEY``; ``noncommercial`` is free for
    noncommercial use).  If the key was set later, register the engine now.
    """
    import xlwings as xw

    if any(engine.name == "remote" for engine in xw.engines):
        return
    try:
        from xlwings.pro import _xlremote
    except (ImportError, xw.LicenseError) as exc:
        # xlwings' own words stay in the cause (for a log), not in what a Tracker reads.
        raise BackendError(
            "xlwings' remote mode (xlwings Server, part of xlwings PRO) has no licence key: "
            "set XLWINGS_LICENSE_KEY (for noncommercial use: XLWINGS_LICENSE_KEY=noncommercial; "
            "the README's 'Licence' note says when you need a paid key)"
        ) from exc
    xw.engines.add(xw.main.Engine(impl=_xlremote.engine))


def remote_book(payload: Mapping[str, Any]) -> xw.Book:
    """``xw.Book(json=payload)``, with xlwings' errors as :class:`BackendError`."""
    import xlwings as xw

    ensure_remote_engine()
    try:
        return xw.Book(json=dict(payload))
    except Exception as exc:
        raise BackendError(f"xlwings could not open the workbook the client sent: {exc}") from exc


def close_book(book: xw.Book) -> None:
    """Close a book :func:`remote_book` opened, so xlwings lets go of it and its payload.

    Closing forgets the queued actions too: take ``book.json()`` first.  It also empties
    xlwings' range cache (``get_range_api``, unbounded and keyed by each sheet's grid), which
    would otherwise keep a copy of every payload's sheets.  Never raises (a book already
    closed is left as it is)."""
    try:
        impl = book.impl
        books = impl.books
        if books is None:  # already closed
            return
        book.close()
        if getattr(books, "_active", None) is impl:
            books._active = None  # the engine's "active book" would keep the last one alive
        # Every range xlwings' remote engine reads goes through one unbounded cache keyed
        # by the sheet's whole grid: each new payload adds a copy of its sheets (issue 12).
        cached = getattr(sys.modules.get(type(impl).__module__), "get_range_api", None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()
    except Exception:  # closing is clean-up: it must not hide the step's own outcome
        import logging

        logging.getLogger(__name__).warning("could not close an xlwings book", exc_info=True)


def open_remote_books() -> int:
    """How many books xlwings' remote engine holds open in this process (0 before the
    engine is registered).  Stays constant over requests when every book is closed."""
    import xlwings as xw

    for engine in xw.engines:
        if engine.name == "remote":
            return sum(len(app.books) for app in engine.apps)
    return 0


@functools.cache
def supported_actions(client: str) -> frozenset[str]:
    """The actions ``client`` implements, read from the client code in the installed xlwings.

    Actions whose client code only throws "NotImplemented" are left out.
    """
    import xlwings

    root = Path(xlwings.__file__).parent
    if client == GOOGLE:
        code = (root / "js" / "xlwings.js").read_text(encoding="utf-8")
        code = code[code.index("// Functions\n") :]  # the action functions follow this line
        found = set()
        for m in re.finditer(r"^function (\w+)\(workbook, action\) \{\n(.*?)^\}", code, re.M | re.S):
            if not re.fullmatch(r'\s*throw "NotImplemented[^"]*";\s*', m.group(2)):
                found.add(m.group(1))
        return frozenset(found)
    if client == VBA:
        code = (root / "addin" / "Remote.bas").read_text(encoding="utf-8")
        return frozenset(re.findall(r"^Sub (\w+)\(wb As Workbook, action As Dictionary\)", code, re.M))
    raise ValueError(f"unknown client {client!r}; known: {', '.join(CLIENTS)}")


# ---------------------------------------------------------------------------------------
# The payload
# ---------------------------------------------------------------------------------------

_EPOCH_TIME = dt.date(1899, 12, 30)


def _iso(value: dt.datetime) -> str:
    # VBA-JSON's ConvertToIso and JavaScript's toISOString both give milliseconds and Z.
    return value.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def _payload_value(value: Any, empty: Any) -> Any:
    if value is None or value == "":
        return empty
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, dt.datetime):
        return _iso(value)
    if isinstance(value, dt.date):
        return _iso(dt.datetime.combine(value, dt.time()))
    if isinstance(value, dt.time):
        return _iso(dt.datetime.combine(_EPOCH_TIME, value))
    if isinstance(value, dt.timedelta):
        return value.total_seconds() / 86400
    return str(value)


def _is_formula(cell: Any) -> bool:
    return bool(cell.data_type == "f")


def _address(ref: str) -> str:
    return ref.replace("$", "")


def _abs_address(min_col: int, min_row: int, max_col: int, max_row: int) -> str:
    from openpyxl.utils import get_column_letter as letter

    first = f"${letter(min_col)}${min_row}"
    if (min_col, min_row) == (max_col, max_row):
        return first
    return f"{first}:${letter(max_col)}${max_row}"


def _sheet_values(
    ws: Worksheet, cached: Worksheet | None, client: str
) -> list[list[Any]]:
    empty = None if client == VBA else ""
    content = [
        (cell.row, cell.column)
        for cell in ws._cells.values()  # every stored cell, styled or not
        if cell.value is not None and cell.value != ""
    ]
    if client == VBA:
        if not ws._cells or (ws.max_row == 1 and ws.max_column == 1 and not content):
            return [[]]  # IsEmpty(UsedRange.Value)
        last_row, last_col = ws.max_row, ws.max_column
    else:
        last_row = max((r for r, _ in content), default=1)
        last_col = max((c for _, c in content), default=1)
    rows = []
    for r in range(1, last_row + 1):
        row = []
        for c in range(1, last_col + 1):
            cell = ws._cells.get((r, c))
            if cell is None:
                row.append(empty)
            elif _is_formula(cell):
                cached_value = cached.cell(r, c).value if cached is not None else None
                row.append(_payload_value(cached_value, empty))
            else:
                row.append(_payload_value(cell.value, empty))
        rows.append(row)
    return rows


def _pictures(ws: Worksheet, client: str) -> list[dict[str, Any]]:
    out = []
    for i, image in enumerate(getattr(ws, "_images", []), start=1):
        scale = 0.75 if client == VBA else 1.0  # VBA sends points, Apps Script pixels
        out.append({"name": f"Picture {i}", "height": image.height * scale,
                    "width": image.width * scale})
    return out


def _tables(ws: Worksheet) -> list[dict[str, Any]]:
    from openpyxl.utils.cell import range_boundaries

    out = []
    for table in ws.tables.values():
        min_col, min_row, max_col, max_row = range_boundaries(table.ref)
        headers = 0 if table.headerRowCount == 0 else 1
        totals = 1 if table.totalsRowCount else 0
        body_first, body_last = min_row + headers, max_row - totals
        out.append({
            "name": table.displayName,
            "range_address": _abs_address(min_col, min_row, max_col, max_row),
            "header_row_range_address": _abs_address(min_col, min_row, max_col, min_row)
            if headers else None,
            "data_body_range_address": _abs_address(min_col, body_first, max_col, body_last)
            if body_last >= body_first else None,
            "total_row_range_address": _abs_address(min_col, max_row, max_col, max_row)
            if totals else None,
            "show_headers": bool(headers),
            "show_totals": bool(totals),
            "table_style": table.tableStyleInfo.name if table.tableStyleInfo else "",
            "show_autofilter": table.autoFilter is not None,
        })
    return out


def _quote(name: str) -> str:
    from sheetsync.sheets.backend import quote_sheet

    return quote_sheet(name)


def _names(wb: openpyxl.Workbook, client: str) -> list[dict[str, Any]]:
    sheets = wb.worksheets
    index = {ws.title: i for i, ws in enumerate(sheets)}
    scoped: list[tuple[Any, Worksheet | None]] = [(d, None) for d in wb.defined_names.values()]
    for ws in sheets:
        scoped += [(d, ws) for d in ws.defined_names.values()]
    out = []
    for defined, scope in scoped:
        if defined.name.startswith("_xlnm.") or defined.hidden:
            continue
        try:
            destinations = list(defined.destinations)
        except Exception:  # a constant or a formula: not a range
            continue
        if len(destinations) != 1 or destinations[0][0] not in index:
            continue
        sheet, ref = destinations[0]
        full = defined.name if scope is None else f"{_quote(scope.title)}!{defined.name}"
        entry: dict[str, Any] = {"name": full, "sheet_index": index[sheet], "address": _address(ref)}
        scope_fields = {
            "scope_sheet_name": None if scope is None else scope.title,
            "scope_sheet_index": None if scope is None else index[scope.title],
        }
        if client == VBA:
            entry["book_scope"] = scope is None
            entry.update(scope_fields)
        else:
            entry.update(scope_fields)
            entry["book_scope"] = scope is None
        out.append(entry)
    return out


def payload_from_openpyxl(
    wb: openpyxl.Workbook,
    client: str = GOOGLE,
    version: str | None = None,
    *,
    name: str = "Workbook.xlsx",
    cached_values: openpyxl.Workbook | None = None,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The JSON that ``client`` (``"VBA"`` or ``"Google Apps Script"``) posts for ``wb``.

    ``version`` defaults to the installed xlwings' (the server refuses any other).
    ``cached_values`` gives formula cells their values (see the module docstring).
    ``include``/``exclude`` name sheets whose values are (not) sent, like the clients'
    options of the same name.
    """
    import xlwings

    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}; known: {', '.join(CLIENTS)}")
    if include is not None and exclude is not None:
        raise ValueError("Either use 'include' or 'exclude', but not both!")
    titles = [ws.title for ws in wb.worksheets]
    skipped = set(exclude or ()) if include is None else set(titles) - set(include)
    active = wb.active
    selection = "A1"
    if active is not None and getattr(active, "sheet_view", None) is not None:
        sel = active.sheet_view.selection
        if sel and sel[0].sqref:
            selection = str(sel[0].sqref).split()[0]
    payload: dict[str, Any] = {
        "client": client,
        "version": version if version is not None else xlwings.__version__,
        "book": {
            "name": name,
            "active_sheet_index": wb.index(active) if active is not None else 0,
            "selection": selection,
        },
        "names": _names(wb, client),
        "sheets": [],
    }
    for ws in wb.worksheets:
        cached = None
        if cached_values is not None and ws.title in cached_values.sheetnames:
            cached = cached_values[ws.title]
        if ws.title in skipped:
            values: list[list[Any]] = [[]]
            pictures: list[dict[str, Any]] = []
        else:
            values = _sheet_values(ws, cached, client)
            pictures = _pictures(ws, client)
        if client == VBA:
            tables = [] if ws.title in skipped else _tables(ws)
            sheet = {"name": ws.title, "pictures": pictures, "tables": tables, "values": values}
        else:
            sheet = {"name": ws.title, "values": values, "pictures": pictures, "tables": []}
        payload["sheets"].append(sheet)
    return payload


# ---------------------------------------------------------------------------------------
# Applying actions
# ---------------------------------------------------------------------------------------

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?$"
)
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


def _typed_in(text: str) -> Any:
    """What the spreadsheet makes of a string written with ``setValues`` (as if typed)."""
    if text.startswith("'"):
        return ("text", text[1:])
    if text.startswith("=") and len(text) > 1:
        return ("formula", text)
    m = _ISO.match(text)
    if m:
        try:
            value = dt.datetime.fromisoformat(text.rstrip("Z").replace(" ", "T"))
        except ValueError:
            return ("text", text)
        return ("value", value.replace(tzinfo=None))
    stripped = text.strip()
    if _NUMBER.match(stripped):
        number = float(stripped)
        if re.fullmatch(r"[+-]?\d+", stripped) and abs(number) < 2**53:
            return ("value", int(stripped))
        return ("value", number)
    if stripped.upper() in ("TRUE", "FALSE"):
        return ("value", stripped.upper() == "TRUE")
    return ("text", text)


def _set(cell: Any, value: Any) -> None:
    if value is None or value == "":
        cell.value = None
        return
    if isinstance(value, str):
        kind, typed = _typed_in(value)
        cell.value = typed
        if kind == "text":
            cell.data_type = "s"  # openpyxl would take "=..." for a formula
            cell.quotePrefix = value.startswith("'")
        return
    cell.value = value


def _cells(ws: Worksheet, action: Mapping[str, Any]) -> Iterable[Any]:
    r0, c0 = action["start_row"] + 1, action["start_column"] + 1
    for r in range(r0, r0 + action["row_count"]):
        for c in range(c0, c0 + action["column_count"]):
            yield ws.cell(r, c)


def _range_ref(action: Mapping[str, Any]) -> str:
    from openpyxl.utils import get_column_letter as letter

    r0, c0 = action["start_row"] + 1, action["start_column"] + 1
    r1, c1 = r0 + action["row_count"] - 1, c0 + action["column_count"] - 1
    first = f"{letter(c0)}{r0}"
    return first if (r0, c0) == (r1, c1) else f"{first}:{letter(c1)}{r1}"


# ---------------------------------------------------------------------------------------
# A step's answer, as the endpoint sends it
# ---------------------------------------------------------------------------------------

STATE_SHEET = "State"
"""The hidden sheet whose blob (column A) is every tracker's battle: a step's commit."""


def commit_last(actions: Sequence[Mapping[str, Any]], state_position: int | None) -> list[Mapping[str, Any]]:
    """``actions`` in the order a client should apply them so that the commit comes last
    (issue 22.3).  A client applies an answer one action at a time and stops at the first
    that fails (``xlwings.js`` throws, VBA raises): the visible sheets' writes first, then
    the State sheet's other writes (undo records, the mark), and the State blob, the write
    that says the step happened, at the very end.  A step cut short thus leaves the State as
    it was, and the next step finds the visible sheets ahead of it (a torn write) instead of
    a State that claims a step the sheets do not show.  Each group keeps its own order;
    ``state_position`` is the State sheet's index (``None``: nothing to move)."""

    def rank(action: Mapping[str, Any]) -> int:
        if state_position is None or action.get("sheet_position") != state_position:
            return 0
        return 2 if action.get("start_column") == 0 else 1

    return sorted(actions, key=rank)  # stable: each group keeps its order


def confirmation(message: str, title: str = "sheetsync") -> dict[str, Any]:
    """The ``alert`` action that tells the Tracker a step went through, as the desktop
    buttons' message box does (an information box, not an error)."""
    return {"func": "alert", "args": [message, title, "ok", "info", ""], "values": None,
            "sheet_position": None, "start_row": None, "start_column": None,
            "row_count": None, "column_count": None}


def step_answer(payload: Mapping[str, Any], actions: Sequence[Mapping[str, Any]],
                message: str | None = None) -> dict[str, Any]:
    """The endpoint's answer to a step that went through: its writes with the commit last
    (:func:`commit_last`), then, with ``message``, the short :func:`confirmation`."""
    names = [s.get("name") if isinstance(s, Mapping) else None for s in payload.get("sheets") or []]
    position = names.index(STATE_SHEET) if STATE_SHEET in names else None
    out = commit_last(actions, position)
    if message:
        out.append(confirmation(message))
    return {"actions": out}


_Alerts = list[dict[str, Any]] | None
_Apply = Callable[["openpyxl.Workbook", "Worksheet | None", Mapping[str, Any], list[Any], _Alerts], None]


def _set_values(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                alerts: _Alerts) -> None:
    """``setValues`` / ``setFormula``: a grid of typed input, or one value over the range."""
    assert ws is not None
    r0, c0 = action["start_row"] + 1, action["start_column"] + 1
    values = action["values"]
    if not isinstance(values, list):
        values = [[values] * action["column_count"]] * action["row_count"]
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            _set(ws.cell(r0 + i, c0 + j), value)


def _clear_range(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                 alerts: _Alerts) -> None:
    """``rangeClear`` / ``rangeClearContents`` / ``rangeClearFormats`` over the range."""
    assert ws is not None
    func = action["func"]
    for cell in _cells(ws, action):
        if func != "rangeClearFormats":
            cell.value = None
        if func != "rangeClearContents":
            cell.style = "Normal"


def _clear_sheet(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                 alerts: _Alerts) -> None:
    """``sheetClear`` / ``sheetClearContents`` / ``sheetClearFormats`` over the whole sheet."""
    assert ws is not None
    func = action["func"]
    for row in ws.iter_rows():
        for cell in row:
            if func != "sheetClearFormats":
                cell.value = None
            if func != "sheetClearContents":
                cell.style = "Normal"


def _add_sheet(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
               alerts: _Alerts) -> None:
    """``addSheet``: a new sheet at an index, with a title when given."""
    index, title = (args + [None, None])[:2]
    wb.create_sheet(title=title, index=int(index) if index is not None else None)


def _rename_sheet(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                  alerts: _Alerts) -> None:
    """``setSheetName``."""
    assert ws is not None
    ws.title = str(args[0])


def _delete_sheet(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                  alerts: _Alerts) -> None:
    """``sheetDelete``."""
    assert ws is not None
    wb.remove(ws)


def _activate_sheet(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                    alerts: _Alerts) -> None:
    """``activateSheet``: the sheet at an index becomes the active one."""
    wb.active = int(args[0])


def _number_format(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                   alerts: _Alerts) -> None:
    """``setNumberFormat`` over the range."""
    assert ws is not None
    for cell in _cells(ws, action):
        cell.number_format = args[0]


def _range_colour(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                  alerts: _Alerts) -> None:
    """``setRangeColor``: a solid fill of a ``#RRGGBB`` colour over the range."""
    from openpyxl.styles import PatternFill

    assert ws is not None
    color = str(args[0]).lstrip("#").upper()
    for cell in _cells(ws, action):
        cell.fill = PatternFill("solid", fgColor=color)


def _select_range(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                  alerts: _Alerts) -> None:
    """``rangeSelect``: the sheet's selection and active cell."""
    assert ws is not None
    ref = _range_ref(action)
    ws.sheet_view.selection[0].sqref = ref
    ws.sheet_view.selection[0].activeCell = ref.split(":")[0]


def _add_hyperlink(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                   alerts: _Alerts) -> None:
    """``addHyperlink``: the link on the range's first cell, shown as its text (else the address)."""
    assert ws is not None
    cell = ws.cell(action["start_row"] + 1, action["start_column"] + 1)
    cell.hyperlink = args[0]
    cell.value = args[1] if len(args) > 1 and args[1] is not None else args[0]


def _name_range(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                alerts: _Alerts) -> None:
    """``setRangeName``: a workbook name for the range, as an absolute reference."""
    from openpyxl.utils.cell import absolute_coordinate
    from openpyxl.workbook.defined_name import DefinedName

    assert ws is not None
    ref = _range_ref(action)
    attr = f"{_quote(ws.title)}!{absolute_coordinate(ref)}"
    wb.defined_names[args[0]] = DefinedName(args[0], attr_text=attr)


def _add_name(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
              alerts: _Alerts) -> None:
    """``namesAdd``: a name for a formula, on the sheet when the action has one, else the book."""
    from openpyxl.workbook.defined_name import DefinedName

    name, refers_to = args[0], str(args[1]).lstrip("=")
    target = ws.defined_names if ws is not None else wb.defined_names
    target[name] = DefinedName(name, attr_text=refers_to)


def _delete_name(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
                 alerts: _Alerts) -> None:
    """``nameDelete``: a book name, or a sheet's as ``Sheet!name`` (gone already: nothing)."""
    name = str(args[0])
    if "!" in name:
        sheet, _, local = name.rpartition("!")
        sheet = sheet.strip("'").replace("''", "'")
        wb[sheet].defined_names.pop(local, None)
    else:
        wb.defined_names.pop(name, None)


def _alert(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
           alerts: _Alerts) -> None:
    """``alert``: kept in ``alerts`` when the caller collects them."""
    if alerts is not None:
        prompt, title, buttons, mode, callback = (args + [""] * 5)[:5]
        alerts.append({"prompt": prompt, "title": title, "buttons": buttons,
                       "mode": mode, "callback": callback})


def _nothing(wb: openpyxl.Workbook, ws: Worksheet | None, action: Mapping[str, Any], args: list[Any],
             alerts: _Alerts) -> None:
    """Layout or calculation only: nothing to change in a file."""


_APPLY: dict[str, _Apply] = {
    "setValues": _set_values, "setFormula": _set_values,
    "rangeClearContents": _clear_range, "rangeClear": _clear_range, "rangeClearFormats": _clear_range,
    "sheetClear": _clear_sheet, "sheetClearContents": _clear_sheet, "sheetClearFormats": _clear_sheet,
    "addSheet": _add_sheet, "setSheetName": _rename_sheet, "sheetDelete": _delete_sheet,
    "activateSheet": _activate_sheet, "setNumberFormat": _number_format, "setRangeColor": _range_colour,
    "rangeSelect": _select_range, "addHyperlink": _add_hyperlink, "setRangeName": _name_range,
    "namesAdd": _add_name, "nameDelete": _delete_name, "alert": _alert,
    "setAutofit": _nothing, "setSheetAutofit": _nothing, "setScreenUpdating": _nothing, "calculate": _nothing,
}
"""How each action the clients send changes a workbook in memory, by ``func``."""


def apply_actions(
    wb: openpyxl.Workbook,
    actions: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    *,
    client: str | None = None,
    alerts: list[dict[str, Any]] | None = None,
) -> None:
    """Apply ``actions`` (``book.json()`` or its ``"actions"`` list) to ``wb`` in memory.

    Strings are taken as the client's spreadsheet takes typed input: a leading ``'``
    makes the rest text, ``=...`` a formula, and numbers, ISO dates and TRUE/FALSE become
    values.  ``alert`` actions are appended to ``alerts`` when given (and otherwise
    ignored).  With ``client``, an action that client does not implement raises
    ``ValueError``, as it would fail there.  Layout-only actions (autofit) change nothing;
    actions with no openpyxl counterpart raise ``NotImplementedError``.
    """
    items = actions["actions"] if isinstance(actions, Mapping) else actions
    known = supported_actions(client) if client is not None else None
    for action in items:
        func = action["func"]
        if known is not None and func not in known:
            raise ValueError(f"the {client} client has no action {func!r}")
        args = list(action.get("args") or [])
        pos = action.get("sheet_position")
        ws = wb.worksheets[pos] if pos is not None else None
        apply = _APPLY.get(func)
        if apply is None:
            raise NotImplementedError(f"apply_actions does not emulate the {func!r} action")
        apply(wb, ws, action, args, alerts)


def simulate_request(
    wb: openpyxl.Workbook,
    handler: Callable[[xw.Book], Any],
    *,
    client: str = VBA,
    cached_values: openpyxl.Workbook | None = None,
) -> list[dict[str, Any]]:
    """One button press against ``wb``: post its payload, run ``handler(book)``, apply the
    answer to ``wb`` as ``client`` would.  Returns the alerts the client would show."""
    book = remote_book(payload_from_openpyxl(wb, client, cached_values=cached_values))
    try:
        handler(book)
        answer = book.json()
    finally:
        close_book(book)
    alerts: list[dict[str, Any]] = []
    apply_actions(wb, answer, client=client, alerts=alerts)
    return alerts

