"""A stateful fake of the Google Sheets v4 REST API, served on 127.0.0.1 for tests.

No test reaches Google.  :class:`FakeSheetsServer` keeps spreadsheets in memory and answers
the calls the real gspread client and :class:`sheetsync.backends.gsheets.GSheetsBackend`
make:

* ``GET  /v4/spreadsheets/{id}`` (``ranges=``, ``includeGridData=``, ``fields=`` masks),
* ``POST /v4/spreadsheets`` (create) and ``POST /v4/spreadsheets/{id}:batchUpdate``,
  applied atomically: every request is applied to a copy, and on any bad request the
  answer is 400 and nothing changes, as at Google,
* ``GET  .../values/{range}``, ``PUT .../values/{range}``, ``POST .../values/{range}:append``
  and ``:clear``, ``GET .../values:batchGet``, ``POST .../values:batchUpdate`` and
  ``:batchClear`` (``valueInputOption`` RAW / USER_ENTERED),
* the Drive calls gspread makes for ``Client.create``, ``open`` and ``del_spreadsheet``,
* ``POST /token``, the OAuth token endpoint of the service-account (JWT bearer) flow.

Every request is recorded in :attr:`FakeSheetsServer.requests`, and
:meth:`FakeSheetsServer.fail_next` makes the next N matching requests fail with a 429 or
a 5xx; :meth:`~FakeSheetsServer.hang_next` makes them get no answer at all for a while,
and :meth:`~FakeSheetsServer.trickle_next` sends their answer a byte at a time.  :class:`RedirectAdapter` / :func:`route_to_fake` send a ``requests`` session's
calls for the Google hosts to the fake; :func:`fake_client` builds a gspread ``Client``
with no credentials that talks to it.

Cells are stored as Sheets ``CellData`` dicts keyed by 0-based ``(row, column)``; a
literal value also gets a computed ``effectiveValue`` / ``formattedValue``, a formula only
when it is a bare literal (``=3``, ``="x"``).  Sheet and spreadsheet objects are replaced
by every successful batch update, so look them up again after a request.
"""

from __future__ import annotations

import base64
import copy
import itertools
import json
import math
import pickle
import re
import threading
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

import gspread
import requests
from requests.adapters import HTTPAdapter

__all__ = [
    "FakeApiError",
    "FakeSheet",
    "FakeSheetsServer",
    "FakeSpreadsheet",
    "GOOGLE_HOSTS",
    "RecordedRequest",
    "RedirectAdapter",
    "fake_client",
    "parse_field_mask",
    "route_to_fake",
    "service_account_info",
]

GOOGLE_HOSTS = (
    "https://sheets.googleapis.com",
    "https://www.googleapis.com",
    "https://oauth2.googleapis.com",
)

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "BAD_GATEWAY",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

_FAULT_MESSAGES = {
    429: "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute per "
    "user' of service 'sheets.googleapis.com'.",
    500: "Internal error encountered.",
    502: "Bad gateway.",
    503: "The service is currently unavailable.",
    504: "The request timed out.",
}


# --------------------------------------------------------------------------------------
# Routing a requests session to the fake
# --------------------------------------------------------------------------------------


class RedirectAdapter(HTTPAdapter):
    """A transport adapter that sends every request it gets to ``base_url`` instead.

    Mount it on a session for the Google hosts; the path and query are kept, the scheme
    and host are replaced (``https://sheets.googleapis.com/v4/...`` ->
    ``http://127.0.0.1:PORT/v4/...``).
    """

    def __init__(self, base_url: str) -> None:
        super().__init__()
        parts = urlsplit(base_url)
        self.scheme, self.netloc = parts.scheme, parts.netloc

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        parts = urlsplit(request.url or "")
        request.url = urlunsplit((self.scheme, self.netloc, parts.path, parts.query, ""))
        return super().send(request, **kwargs)


def route_to_fake(session: requests.Session, base_url: str) -> requests.Session:
    """Mount a :class:`RedirectAdapter` on ``session`` for every Google host; returns it."""
    adapter = RedirectAdapter(base_url)
    for host in GOOGLE_HOSTS:
        session.mount(host, adapter)
    return session


def service_account_info(base_url: str) -> tuple[dict[str, str], Any]:
    """A throwaway service-account key whose ``token_uri`` is the fake's token endpoint,
    and its RSA private key (to check what was signed)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    info = {
        "type": "service_account",
        "project_id": "sheetsync-test",
        "private_key_id": "0123456789abcdef",
        "private_key": pem,
        "client_email": "tracker@sheetsync-test.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "token_uri": f"{base_url}/token",  # the fake's token endpoint
    }
    return info, private_key


def fake_client(base_url: str, session: requests.Session | None = None) -> gspread.Client:
    """A real gspread ``Client`` with no credentials whose calls all reach the fake.

    Close it with ``client.http_client.session.close()``.
    """
    session = route_to_fake(session or requests.Session(), base_url)
    return gspread.Client(auth=None, session=session)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# Field masks, A1 ranges, values
# --------------------------------------------------------------------------------------

MaskTree = dict[str, Any]  # name -> sub-tree, or None for "the whole field"


def parse_field_mask(mask: str) -> MaskTree:
    """Parse a Google field mask (``a,b.c,d(e,f(g))``) into a tree of dicts."""
    pos = 0

    def merge(tree: MaskTree, path: list[str], sub: MaskTree | None) -> None:
        for name in path[:-1]:
            if name in tree and tree[name] is None:
                return
            tree = tree.setdefault(name, {})
        last = path[-1]
        if sub is None or (last in tree and tree[last] is None):
            tree[last] = None
            return
        node = tree.setdefault(last, {})
        for key, value in sub.items():
            merge(node, [key], value)

    def parse_list() -> MaskTree:
        nonlocal pos
        tree: MaskTree = {}
        while True:
            m = re.compile(r"\s*([A-Za-z0-9_.*]+)\s*").match(mask, pos)
            if not m:
                raise FakeApiError(400, f"Invalid field selection {mask!r}")
            pos = m.end()
            sub: MaskTree | None = None
            if pos < len(mask) and mask[pos] == "(":
                pos += 1
                sub = parse_list()
                if pos >= len(mask) or mask[pos] != ")":
                    raise FakeApiError(400, f"Invalid field selection {mask!r}")
                pos += 1
            merge(tree, m.group(1).split("."), sub)
            if pos < len(mask) and mask[pos] == ",":
                pos += 1
                continue
            return tree

    tree = parse_list()
    if pos != len(mask.rstrip()):
        raise FakeApiError(400, f"Invalid field selection {mask!r}")
    return tree


def apply_field_mask(obj: Any, tree: MaskTree | None) -> Any:
    """Keep only the fields ``tree`` selects (lists are masked element by element)."""
    if tree is None or "*" in tree:
        return obj
    if isinstance(obj, list):
        return [apply_field_mask(item, tree) for item in obj]
    if not isinstance(obj, dict):
        return obj
    out = {}
    for key, sub in tree.items():
        if key in obj:
            out[key] = apply_field_mask(obj[key], sub)
    return out


def _masked_assign(target: dict[str, Any], source: Mapping[str, Any], tree: MaskTree) -> None:
    """Set the fields ``tree`` names from ``source`` into ``target`` (absent -> deleted)."""
    if "*" in tree:
        target.clear()
        target.update(copy.deepcopy(dict(source)))
        return
    for key, sub in tree.items():
        if sub is None:
            if key in source:
                target[key] = copy.deepcopy(source[key])
            else:
                target.pop(key, None)
        else:
            node = target.get(key)
            if not isinstance(node, dict):
                node = {}
            inner = source.get(key, {})
            _masked_assign(node, inner if isinstance(inner, Mapping) else {}, sub)
            if node:
                target[key] = node
            else:
                target.pop(key, None)


def col_letters(index: int) -> str:
    """0 -> ``A``."""
    index += 1
    out = ""
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def _col_number(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n - 1


def quote_title(title: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", title) and not re.fullmatch(
        r"[A-Za-z]{1,3}\d+", title
    ):
        return title
    return "'" + title.replace("'", "''") + "'"


@dataclass(frozen=True)
class Box:
    """A 0-based, end-exclusive block of one sheet; ``None`` ends run to the grid's edge."""

    sheet_id: int
    row0: int
    row1: int | None
    col0: int
    col1: int | None


_CELLS = re.compile(
    r"^\$?(?P<c1>[A-Za-z]{1,3})?\$?(?P<r1>\d+)?(?::\$?(?P<c2>[A-Za-z]{1,3})?\$?(?P<r2>\d+)?)?$"
)
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _python_to_extended(value: Any, user_entered: bool) -> dict[str, Any] | None:
    """A JSON value from the values API -> ``ExtendedValue`` (None for an empty cell)."""
    if value is None:
        return None
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, (int, float)):
        return {"numberValue": value}
    text = str(value)
    if text == "":
        return None
    if not user_entered:
        return {"stringValue": text}
    if text.startswith("="):
        return {"formulaValue": text}
    if text.startswith("'"):
        return {"stringValue": text[1:]}
    if text.upper() in ("TRUE", "FALSE"):
        return {"boolValue": text.upper() == "TRUE"}
    if _NUMBER.match(text.strip()):
        number = float(text)
        return {"numberValue": int(number) if number.is_integer() else number}
    return {"stringValue": text}


def _format_number(number: float) -> str:
    if isinstance(number, int) or (math.isfinite(number) and float(number).is_integer()):
        return str(int(number))
    return repr(float(number))


def _compute(cell: dict[str, Any]) -> None:
    """Recompute ``effectiveValue`` / ``formattedValue`` from ``userEnteredValue``."""
    cell.pop("effectiveValue", None)
    cell.pop("formattedValue", None)
    entered = cell.get("userEnteredValue")
    if not isinstance(entered, dict):
        return
    effective: dict[str, Any] | None = None
    if "formulaValue" in entered:
        body = str(entered["formulaValue"])[1:].strip()
        if _NUMBER.match(body):
            number = float(body)
            effective = {"numberValue": int(number) if number.is_integer() else number}
        elif re.fullmatch(r'"[^"]*"', body):
            effective = {"stringValue": body[1:-1]}
        elif body.upper() in ("TRUE", "FALSE"):
            effective = {"boolValue": body.upper() == "TRUE"}
    else:
        effective = dict(entered)
    if effective is None:
        return
    cell["effectiveValue"] = effective
    if "numberValue" in effective:
        cell["formattedValue"] = _format_number(effective["numberValue"])
    elif "boolValue" in effective:
        cell["formattedValue"] = "TRUE" if effective["boolValue"] else "FALSE"
    elif "stringValue" in effective:
        cell["formattedValue"] = str(effective["stringValue"])


def _render(cell: Mapping[str, Any] | None, option: str) -> Any:
    """A cell as the values API shows it (``valueRenderOption``)."""
    if not cell:
        return ""
    entered = cell.get("userEnteredValue") or {}
    if option == "FORMULA" and "formulaValue" in entered:
        return entered["formulaValue"]
    if option in ("UNFORMATTED_VALUE", "FORMULA"):
        effective = cell.get("effectiveValue") or {}
        for kind in ("numberValue", "boolValue", "stringValue"):
            if kind in effective:
                return effective[kind]
        return ""
    return cell.get("formattedValue", "")


# --------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------


class FakeApiError(Exception):
    """Answer the current request with ``status`` and a Google-shaped error body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class FakeSheet:
    """One sheet (tab): its ``SheetProperties`` and what the requests stored on it."""

    properties: dict[str, Any]
    cells: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    conditional_formats: list[dict[str, Any]] = field(default_factory=list)
    protected_ranges: list[dict[str, Any]] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)
    merges: list[dict[str, Any]] = field(default_factory=list)
    row_metadata: dict[int, dict[str, Any]] = field(default_factory=dict)
    column_metadata: dict[int, dict[str, Any]] = field(default_factory=dict)
    auto_resized: list[dict[str, Any]] = field(default_factory=list)

    @property
    def sheet_id(self) -> int:
        return int(self.properties["sheetId"])

    @property
    def title(self) -> str:
        return str(self.properties["title"])

    @property
    def row_count(self) -> int:
        return int(self.properties["gridProperties"]["rowCount"])

    @property
    def column_count(self) -> int:
        return int(self.properties["gridProperties"]["columnCount"])

    def last_data_row(self) -> int:
        """0-based index of the last row holding a value, -1 when empty."""
        return max(
            (r for (r, _c), cell in self.cells.items() if cell.get("userEnteredValue")), default=-1
        )

    def clamp(self, box: Box, what: str) -> tuple[int, int, int, int]:
        row1 = self.row_count if box.row1 is None else box.row1
        col1 = self.column_count if box.col1 is None else box.col1
        if box.row0 < 0 or box.col0 < 0 or row1 < box.row0 or col1 < box.col0:
            raise FakeApiError(400, f"Invalid {what}: bad range")
        if row1 > self.row_count or col1 > self.column_count:
            raise FakeApiError(
                400,
                f"Range ({quote_title(self.title)}!{a1(box.row0, box.col0, row1, col1)}) "
                f"exceeds grid limits. Max rows: {self.row_count}, "
                f"max columns: {self.column_count}",
            )
        return box.row0, row1, box.col0, col1

    def set_cell(self, row: int, col: int, cell: Mapping[str, Any]) -> None:
        new = copy.deepcopy(dict(cell))
        _compute(new)
        if new:
            self.cells[(row, col)] = new
        else:
            self.cells.pop((row, col), None)

    def grid_data(self, row0: int, row1: int, col0: int, col1: int) -> dict[str, Any]:
        """``GridData`` for a block, shaped as Google sends it (zero and empty fields left out)."""
        data: dict[str, Any] = {}
        if row0:
            data["startRow"] = row0
        if col0:
            data["startColumn"] = col0
        by_row: dict[int, int] = {}  # row -> last used column
        for r, c in self.cells:
            if row0 <= r < row1 and col0 <= c < col1 and c > by_row.get(r, -1):
                by_row[r] = c
        if by_row:
            rows = []
            for r in range(row0, max(by_row) + 1):
                if r not in by_row:
                    rows.append({})
                    continue
                values = [copy.deepcopy(self.cells.get((r, c), {})) for c in range(col0, by_row[r] + 1)]
                rows.append({"values": values})
            data["rowData"] = rows
        return data

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"properties": copy.deepcopy(self.properties)}
        if self.merges:
            out["merges"] = copy.deepcopy(self.merges)
        if self.conditional_formats:
            out["conditionalFormats"] = copy.deepcopy(self.conditional_formats)
        if self.protected_ranges:
            out["protectedRanges"] = copy.deepcopy(self.protected_ranges)
        if self.charts:
            out["charts"] = copy.deepcopy(self.charts)
        return out


def a1(row0: int, col0: int, row1: int, col1: int) -> str:
    """0-based end-exclusive bounds -> ``A1:B2``."""
    return f"{col_letters(col0)}{row0 + 1}:{col_letters(col1 - 1)}{row1}"


@dataclass
class FakeSpreadsheet:
    """One spreadsheet: ``SpreadsheetProperties``, its sheets and its named ranges."""

    spreadsheet_id: str
    properties: dict[str, Any]
    sheets: list[FakeSheet] = field(default_factory=list)
    named_ranges: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 1_000_001

    def new_id(self) -> int:
        value = self.next_id
        self.next_id += 7919
        return value

    def sheet(self, key: str | int) -> FakeSheet:
        """A sheet by title (case-insensitive, as Google matches) or by ``sheetId``."""
        for sheet in self.sheets:
            if isinstance(key, int) and sheet.sheet_id == key:
                return sheet
            if isinstance(key, str) and sheet.title.casefold() == key.casefold():
                return sheet
        if isinstance(key, int):
            raise FakeApiError(400, f"No grid with id: {key}")
        raise FakeApiError(400, f"Unable to parse range: {key}")

    def reindex(self) -> None:
        for index, sheet in enumerate(self.sheets):
            sheet.properties["index"] = index

    # -- ranges -------------------------------------------------------------------

    def parse_a1(self, text: str) -> tuple[FakeSheet, Box]:
        """``Sheet1!A1:B2``, ``'House Rules'!A2:B``, ``Sheet1``, ``A1:B2``, a named range."""
        text = text.strip()
        title: str | None
        cells: str | None
        if text.startswith("'"):
            m = re.match(r"^'((?:[^']|'')*)'(?:!(.*))?$", text)
            if not m:
                raise FakeApiError(400, f"Unable to parse range: {text}")
            title, cells = m.group(1).replace("''", "'"), m.group(2)
        elif "!" in text:
            title, _, cells = text.rpartition("!")
        else:
            for named in self.named_ranges:
                if named["name"] == text:
                    return self._grid_range_box(named["range"])
            if any(s.title.casefold() == text.casefold() for s in self.sheets):
                title, cells = text, None
            else:
                title, cells = None, text
        try:
            sheet = self.sheets[0] if title is None else self.sheet(title)
        except (FakeApiError, IndexError):
            raise FakeApiError(400, f"Unable to parse range: {text}") from None
        if not cells:
            return sheet, Box(sheet.sheet_id, 0, None, 0, None)
        m = _CELLS.match(cells)
        if not m or not (m.group("c1") or m.group("r1")):
            raise FakeApiError(400, f"Unable to parse range: {text}")
        c1, r1, c2, r2 = m.group("c1", "r1", "c2", "r2")
        single = ":" not in cells
        if single:
            if not (c1 and r1):
                raise FakeApiError(400, f"Unable to parse range: {text}")
            c2, r2 = c1, r1
        col0 = _col_number(c1) if c1 else 0
        row0 = int(r1) - 1 if r1 else 0
        col1 = _col_number(c2) + 1 if c2 else None
        row1 = int(r2) if r2 else None
        if (r1 and int(r1) < 1) or (r2 and int(r2) < 1):
            raise FakeApiError(400, f"Unable to parse range: {text}")
        return sheet, Box(sheet.sheet_id, row0, row1, col0, col1)

    def _grid_range_box(self, grid_range: Mapping[str, Any]) -> tuple[FakeSheet, Box]:
        sheet = self.sheet(int(grid_range.get("sheetId", 0)))
        return sheet, Box(
            sheet.sheet_id,
            int(grid_range.get("startRowIndex", 0)),
            grid_range.get("endRowIndex"),
            int(grid_range.get("startColumnIndex", 0)),
            grid_range.get("endColumnIndex"),
        )

    def grid_range(self, grid_range: Any, what: str) -> tuple[FakeSheet, tuple[int, int, int, int]]:
        if not isinstance(grid_range, Mapping):
            raise FakeApiError(400, f"Invalid {what}: range is required")
        sheet, box = self._grid_range_box(grid_range)
        return sheet, sheet.clamp(box, what)

    # -- reading --------------------------------------------------------------------

    def to_json(self, ranges: Sequence[str] = (), grid: bool = False) -> dict[str, Any]:
        """The ``Spreadsheet`` resource as ``spreadsheets.get`` returns it (before masking)."""
        out: dict[str, Any] = {
            "spreadsheetId": self.spreadsheet_id,
            "properties": copy.deepcopy(self.properties),
        }
        if ranges:
            wanted: dict[int, list[dict[str, Any]]] = {}
            for text in ranges:
                sheet, box = self.parse_a1(text)
                bounds = sheet.clamp(box, "range")
                wanted.setdefault(sheet.sheet_id, []).append(sheet.grid_data(*bounds))
            sheets = []
            for sheet in self.sheets:
                if sheet.sheet_id in wanted:
                    item = sheet.to_json()
                    if grid:
                        item["data"] = wanted[sheet.sheet_id]
                    sheets.append(item)
        else:
            sheets = []
            for sheet in self.sheets:
                item = sheet.to_json()
                if grid:
                    item["data"] = [sheet.grid_data(0, sheet.row_count, 0, sheet.column_count)]
                sheets.append(item)
        out["sheets"] = sheets
        if self.named_ranges:
            out["namedRanges"] = copy.deepcopy(self.named_ranges)
        out["spreadsheetUrl"] = f"https://docs.google.com/spreadsheets/d/{self.spreadsheet_id}/edit"
        return out

    def values(
        self, text: str, option: str = "FORMATTED_VALUE", major: str = "ROWS"
    ) -> dict[str, Any]:
        """A ``ValueRange`` as ``values.get`` returns it."""
        sheet, box = self.parse_a1(text)
        row0, row1, col0, col1 = sheet.clamp(box, "range")
        rows: list[list[Any]] = []
        for r in range(row0, row1):
            row = [_render(sheet.cells.get((r, c)), option) for c in range(col0, col1)]
            while row and row[-1] == "":
                row.pop()
            rows.append(row)
        while rows and not rows[-1]:
            rows.pop()
        if major == "COLUMNS":
            width = max((len(r) for r in rows), default=0)
            rows = [[r[j] if j < len(r) else "" for r in rows] for j in range(width)]
            for col in rows:
                while col and col[-1] == "":
                    col.pop()
        out: dict[str, Any] = {
            "range": f"{quote_title(sheet.title)}!{a1(row0, col0, row1, col1)}",
            "majorDimension": major,
        }
        if rows:
            out["values"] = rows
        return out

    # -- writing --------------------------------------------------------------------

    def write_values(
        self, text: str, rows: Sequence[Sequence[Any]], user_entered: bool, major: str = "ROWS"
    ) -> dict[str, Any]:
        """``values.update``: the grid grows to fit, as the values API does."""
        sheet, box = self.parse_a1(text)
        if major == "COLUMNS":
            width = max((len(r) for r in rows), default=0)
            rows = [[col[i] if i < len(col) else None for col in rows] for i in range(width)]
        height = len(rows)
        width = max((len(r) for r in rows), default=0)
        grid = sheet.properties["gridProperties"]
        grid["rowCount"] = max(sheet.row_count, box.row0 + height)
        grid["columnCount"] = max(sheet.column_count, box.col0 + width)
        for i, row in enumerate(rows):
            for j, value in enumerate(row):
                cell = dict(sheet.cells.get((box.row0 + i, box.col0 + j), {}))
                entered = _python_to_extended(value, user_entered)
                if entered is None:
                    cell.pop("userEnteredValue", None)
                else:
                    cell["userEnteredValue"] = entered
                sheet.set_cell(box.row0 + i, box.col0 + j, cell)
        updated = a1(box.row0, box.col0, box.row0 + max(height, 1), box.col0 + max(width, 1))
        return {
            "spreadsheetId": self.spreadsheet_id,
            "updatedRange": f"{quote_title(sheet.title)}!{updated}",
            "updatedRows": height,
            "updatedColumns": width,
            "updatedCells": sum(len(r) for r in rows),
        }

    def clear_values(self, text: str) -> str:
        sheet, box = self.parse_a1(text)
        row0, row1, col0, col1 = sheet.clamp(box, "range")
        for r, c in list(sheet.cells):
            if row0 <= r < row1 and col0 <= c < col1:
                cell = dict(sheet.cells[(r, c)])
                cell.pop("userEnteredValue", None)
                sheet.set_cell(r, c, cell)
        return f"{quote_title(sheet.title)}!{a1(row0, col0, row1, col1)}"


# --------------------------------------------------------------------------------------
# batchUpdate requests (applied to a copy: see FakeSheetsServer.batch_update)
# --------------------------------------------------------------------------------------


def _fields(body: Mapping[str, Any], what: str) -> MaskTree:
    fields = body.get("fields")
    if not isinstance(fields, str) or not fields.strip():
        raise FakeApiError(
            400, f"Invalid {what}: At least one field must be updated. Specify 'fields'."
        )
    return parse_field_mask(fields)


def _add_sheet(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    props = copy.deepcopy(dict(body.get("properties") or {}))
    sheet_id = props.get("sheetId")
    if sheet_id is None:
        sheet_id = ss.new_id()
    if not isinstance(sheet_id, int) or sheet_id < 0:
        raise FakeApiError(400, f"Invalid {what}: bad sheetId {sheet_id!r}")
    if any(s.sheet_id == sheet_id for s in ss.sheets):
        raise FakeApiError(400, f"Invalid {what}: Sheet with id {sheet_id} already exists.")
    title = props.get("title") or f"Sheet{len(ss.sheets) + 1}"
    if any(s.title.casefold() == str(title).casefold() for s in ss.sheets):
        raise FakeApiError(
            400,
            f'Invalid {what}: A sheet with the name "{title}" already exists. '
            "Please enter another name.",
        )
    grid = dict(props.get("gridProperties") or {})
    grid.setdefault("rowCount", 1000)
    grid.setdefault("columnCount", 26)
    index = props.get("index", len(ss.sheets))
    if not isinstance(index, int) or index < 0:
        raise FakeApiError(400, f"Invalid {what}: bad index {index!r}")
    props.update(
        sheetId=sheet_id, title=title, sheetType=props.get("sheetType", "GRID"), gridProperties=grid
    )
    ss.sheets.insert(min(index, len(ss.sheets)), FakeSheet(props))
    ss.reindex()
    return {"addSheet": {"properties": copy.deepcopy(props)}}


def _delete_sheet(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    sheet = ss.sheet(int(body.get("sheetId", 0)))
    if len(ss.sheets) == 1:
        raise FakeApiError(400, f"Invalid {what}: You can't remove all the sheets in a document.")
    ss.sheets.remove(sheet)
    ss.named_ranges = [n for n in ss.named_ranges if n["range"].get("sheetId", 0) != sheet.sheet_id]
    ss.reindex()
    return {}


def _update_sheet_properties(
    ss: FakeSpreadsheet, body: Mapping[str, Any], what: str
) -> dict[str, Any]:
    props = body.get("properties") or {}
    sheet = ss.sheet(int(props.get("sheetId", 0)))
    tree = _fields(body, what)
    new = copy.deepcopy(sheet.properties)
    _masked_assign(new, props, tree)
    new["sheetId"] = sheet.sheet_id
    title = new.get("title")
    if not title:
        raise FakeApiError(400, f"Invalid {what}: a sheet needs a title")
    if any(s is not sheet and s.title.casefold() == str(title).casefold() for s in ss.sheets):
        raise FakeApiError(400, f'Invalid {what}: A sheet with the name "{title}" already exists.')
    grid = new.setdefault("gridProperties", {})
    grid.setdefault("rowCount", sheet.row_count)
    grid.setdefault("columnCount", sheet.column_count)
    sheet.properties = new
    sheet.cells = {
        (r, c): cell
        for (r, c), cell in sheet.cells.items()
        if r < sheet.row_count and c < sheet.column_count
    }
    if "index" in props and "index" in str(body.get("fields")):
        ss.sheets.remove(sheet)
        ss.sheets.insert(min(int(props["index"]), len(ss.sheets)), sheet)
    ss.reindex()
    return {}


def _rows_into(
    sheet: FakeSheet,
    row0: int,
    col0: int,
    rows: Any,
    tree: MaskTree,
    bounds: tuple[int, int, int, int] | None,
    what: str,
) -> None:
    if not isinstance(rows, list):
        raise FakeApiError(400, f"Invalid {what}: rows must be a list")
    written: set[tuple[int, int]] = set()
    for i, row in enumerate(rows):
        values = (row or {}).get("values") or []
        for j, data in enumerate(values):
            r, c = row0 + i, col0 + j
            if bounds is not None and not (
                bounds[0] <= r < bounds[1] and bounds[2] <= c < bounds[3]
            ):
                continue
            if r >= sheet.row_count:
                raise FakeApiError(
                    400,
                    f"Invalid {what}: GridCoordinate.rowIndex[{r}] is after last row in grid"
                    f"[{sheet.row_count - 1}]",
                )
            if c >= sheet.column_count:
                raise FakeApiError(
                    400,
                    f"Invalid {what}: GridCoordinate.columnIndex[{c}] is after last column in "
                    f"grid[{sheet.column_count - 1}]",
                )
            if not isinstance(data, Mapping):
                raise FakeApiError(400, f"Invalid {what}: a cell must be an object")
            _check_cell(data, what)
            cell = copy.deepcopy(sheet.cells.get((r, c), {}))
            _masked_assign(cell, data, tree)
            sheet.set_cell(r, c, cell)
            written.add((r, c))
    if bounds is not None:  # cells of the range the rows don't cover: the fields are cleared
        for r, c in list(sheet.cells):
            if bounds[0] <= r < bounds[1] and bounds[2] <= c < bounds[3] and (r, c) not in written:
                cell = copy.deepcopy(sheet.cells[(r, c)])
                _masked_assign(cell, {}, tree)
                sheet.set_cell(r, c, cell)


_VALUE_KINDS = {"stringValue", "numberValue", "boolValue", "formulaValue", "errorValue"}


def _check_cell(data: Mapping[str, Any], what: str) -> None:
    entered = data.get("userEnteredValue")
    if entered is None:
        return
    if not isinstance(entered, Mapping) or len(entered) != 1 or not set(entered) <= _VALUE_KINDS:
        raise FakeApiError(400, f"Invalid {what}: bad userEnteredValue {entered!r}")
    kind, value = next(iter(entered.items()))
    ok = {
        "stringValue": isinstance(value, str),
        "numberValue": isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolValue": isinstance(value, bool),
        "formulaValue": isinstance(value, str) and value.startswith("="),
        "errorValue": isinstance(value, Mapping),
    }[kind]
    if not ok:
        raise FakeApiError(400, f"Invalid {what}: bad {kind} {value!r}")


def _update_cells(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    tree = _fields(body, what)
    if "start" in body:
        start = body["start"] or {}
        sheet = ss.sheet(int(start.get("sheetId", 0)))
        _rows_into(
            sheet,
            int(start.get("rowIndex", 0)),
            int(start.get("columnIndex", 0)),
            body.get("rows", []),
            tree,
            None,
            what,
        )
    elif "range" in body:
        sheet, bounds = ss.grid_range(body["range"], what)
        _rows_into(sheet, bounds[0], bounds[2], body.get("rows", []), tree, bounds, what)
    else:
        raise FakeApiError(400, f"Invalid {what}: one of start or range is required")
    return {}


def _repeat_cell(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    tree = _fields(body, what)
    sheet, (row0, row1, col0, col1) = ss.grid_range(body.get("range"), what)
    data = body.get("cell") or {}
    _check_cell(data, what)
    for r in range(row0, row1):
        for c in range(col0, col1):
            cell = copy.deepcopy(sheet.cells.get((r, c), {}))
            _masked_assign(cell, data, tree)
            sheet.set_cell(r, c, cell)
    return {}


def _append_cells(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    tree = _fields(body, what)
    sheet = ss.sheet(int(body.get("sheetId", 0)))
    rows = body.get("rows") or []
    row0 = sheet.last_data_row() + 1
    grid = sheet.properties["gridProperties"]
    grid["rowCount"] = max(sheet.row_count, row0 + len(rows))
    _rows_into(sheet, row0, 0, rows, tree, None, what)
    return {}


def _set_data_validation(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    sheet, (row0, row1, col0, col1) = ss.grid_range(body.get("range"), what)
    rule = body.get("rule")
    if rule is not None and not (
        isinstance(rule, Mapping) and (rule.get("condition") or {}).get("type")
    ):
        raise FakeApiError(400, f"Invalid {what}: a rule needs condition.type")
    for r in range(row0, row1):
        for c in range(col0, col1):
            cell = copy.deepcopy(sheet.cells.get((r, c), {}))
            if rule is None:
                cell.pop("dataValidation", None)
            else:
                cell["dataValidation"] = copy.deepcopy(dict(rule))
            sheet.set_cell(r, c, cell)
    return {}


def _add_protected_range(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    protected = copy.deepcopy(dict(body.get("protectedRange") or {}))
    if "range" in protected:
        sheet, _ = ss.grid_range(protected["range"], what)
    elif "namedRangeId" in protected:
        named = [n for n in ss.named_ranges if n.get("namedRangeId") == protected["namedRangeId"]]
        if not named:
            raise FakeApiError(
                400, f"Invalid {what}: No named range with id {protected['namedRangeId']}"
            )
        sheet = ss.sheet(int(named[0]["range"].get("sheetId", 0)))
    else:
        raise FakeApiError(400, f"Invalid {what}: a protected range needs a range")
    protected.setdefault("protectedRangeId", ss.new_id())
    sheet.protected_ranges.append(protected)
    return {"addProtectedRange": {"protectedRange": copy.deepcopy(protected)}}


def _add_conditional_format_rule(
    ss: FakeSpreadsheet, body: Mapping[str, Any], what: str
) -> dict[str, Any]:
    rule = copy.deepcopy(dict(body.get("rule") or {}))
    ranges = rule.get("ranges")
    if not ranges or not isinstance(ranges, list):
        raise FakeApiError(400, f"Invalid {what}: a rule needs ranges")
    if not ("booleanRule" in rule or "gradientRule" in rule):
        raise FakeApiError(400, f"Invalid {what}: a rule needs booleanRule or gradientRule")
    sheets = {ss.grid_range(r, what)[0].sheet_id for r in ranges}
    if len(sheets) != 1:
        raise FakeApiError(400, f"Invalid {what}: all ranges of a rule must be on one sheet")
    sheet = ss.sheet(sheets.pop())
    index = int(body.get("index", 0))
    sheet.conditional_formats.insert(min(index, len(sheet.conditional_formats)), rule)
    return {}


_NAME = re.compile(r"^[A-Za-z_\\][A-Za-z0-9_.]*$")


def _add_named_range(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    named = copy.deepcopy(dict(body.get("namedRange") or {}))
    name = named.get("name")
    if (
        not isinstance(name, str)
        or not _NAME.match(name)
        or re.fullmatch(r"[A-Za-z]{1,3}\d+", name)
    ):
        raise FakeApiError(400, f"Invalid {what}: bad name {name!r}")
    if any(n["name"].casefold() == name.casefold() for n in ss.named_ranges):
        raise FakeApiError(400, f"Invalid {what}: Named range with name {name} already exists.")
    ss.grid_range(named.get("range"), what)
    named.setdefault("namedRangeId", f"nr{ss.new_id()}")
    ss.named_ranges.append(named)
    return {"addNamedRange": {"namedRange": copy.deepcopy(named)}}


def _update_named_range(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``UpdateNamedRangeRequest``: ``namedRange.namedRangeId`` picks the named range (an
    unknown id is refused), ``fields`` (required) says which of ``name`` and ``range`` to set;
    a new name is checked as ``addNamedRange`` checks one.  Google's reply is empty."""
    named = dict(body.get("namedRange") or {})
    wanted = named.get("namedRangeId")
    if not isinstance(wanted, str) or not wanted:
        raise FakeApiError(400, f"Invalid {what}: namedRange.namedRangeId is required")
    target = next((n for n in ss.named_ranges if n.get("namedRangeId") == wanted), None)
    if target is None:
        raise FakeApiError(400, f"Invalid {what}: No named range with id {wanted}")
    fields = body.get("fields")
    if not isinstance(fields, str) or not fields.strip():
        raise FakeApiError(400, f"Invalid {what}: fields is required")
    tree = parse_field_mask(fields)
    star = "*" in tree
    if star or "name" in tree:
        name = named.get("name")
        if not isinstance(name, str) or not _NAME.match(name) or re.fullmatch(r"[A-Za-z]{1,3}\d+", name):
            raise FakeApiError(400, f"Invalid {what}: bad name {name!r}")
        if any(n is not target and n["name"].casefold() == name.casefold() for n in ss.named_ranges):
            raise FakeApiError(400, f"Invalid {what}: Named range with name {name} already exists.")
    if star or "range" in tree:
        ss.grid_range(named.get("range"), what)
    if star or "name" in tree:
        target["name"] = named["name"]
    if star or "range" in tree:
        target["range"] = copy.deepcopy(named["range"])
    return {}


def _dimension(ss: FakeSpreadsheet, dims: Any, what: str) -> tuple[FakeSheet, str, int, int]:
    if not isinstance(dims, Mapping):
        raise FakeApiError(400, f"Invalid {what}: a dimension range is required")
    sheet = ss.sheet(int(dims.get("sheetId", 0)))
    dimension = dims.get("dimension")
    if dimension not in ("ROWS", "COLUMNS"):
        raise FakeApiError(400, f"Invalid {what}: dimension must be ROWS or COLUMNS")
    limit = sheet.row_count if dimension == "ROWS" else sheet.column_count
    start = int(dims.get("startIndex", 0))
    end = int(dims.get("endIndex", limit))
    if not 0 <= start <= end <= limit:
        raise FakeApiError(400, f"Invalid {what}: [{start}, {end}) is outside the grid ({limit})")
    return sheet, dimension, start, end


def _update_dimension_properties(
    ss: FakeSpreadsheet, body: Mapping[str, Any], what: str
) -> dict[str, Any]:
    tree = _fields(body, what)
    sheet, dimension, start, end = _dimension(ss, body.get("range"), what)
    store = sheet.row_metadata if dimension == "ROWS" else sheet.column_metadata
    for index in range(start, end):
        meta = store.setdefault(index, {})
        _masked_assign(meta, body.get("properties") or {}, tree)
    return {}


def _auto_resize_dimensions(
    ss: FakeSpreadsheet, body: Mapping[str, Any], what: str
) -> dict[str, Any]:
    dims = body.get("dimensions")
    sheet, dimension, start, end = _dimension(ss, dims, what)
    sheet.auto_resized.append({"dimension": dimension, "startIndex": start, "endIndex": end})
    return {}


def _append_dimension(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    sheet = ss.sheet(int(body.get("sheetId", 0)))
    length = body.get("length")
    if not isinstance(length, int) or length < 1:
        raise FakeApiError(400, f"Invalid {what}: length must be a positive number")
    key = "rowCount" if body.get("dimension") == "ROWS" else "columnCount"
    if body.get("dimension") not in ("ROWS", "COLUMNS"):
        raise FakeApiError(400, f"Invalid {what}: dimension must be ROWS or COLUMNS")
    sheet.properties["gridProperties"][key] += length
    return {}


def _merge_cells(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    sheet, bounds = ss.grid_range(body.get("range"), what)
    sheet.merges.append(
        {
            "sheetId": sheet.sheet_id,
            "startRowIndex": bounds[0],
            "endRowIndex": bounds[1],
            "startColumnIndex": bounds[2],
            "endColumnIndex": bounds[3],
        }
    )
    return {}


def _add_chart(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    chart = copy.deepcopy(dict(body.get("chart") or {}))
    if "spec" not in chart:
        raise FakeApiError(400, f"Invalid {what}: a chart needs a spec")
    position = chart.get("position") or {}
    if position.get("newSheet"):
        reply = _add_sheet(ss, {"properties": {"title": f"Chart{len(ss.sheets) + 1}"}}, what)
        sheet = ss.sheet(int(reply["addSheet"]["properties"]["sheetId"]))
    else:
        sheet_id = position.get("sheetId")
        if sheet_id is None:
            sheet_id = ((position.get("overlayPosition") or {}).get("anchorCell") or {}).get(
                "sheetId"
            )
        if sheet_id is None:
            raise FakeApiError(400, f"Invalid {what}: a chart needs a position")
        sheet = ss.sheet(int(sheet_id))
    chart.setdefault("chartId", ss.new_id())
    sheet.charts.append(chart)
    return {"addChart": {"chart": copy.deepcopy(chart)}}


def _update_spreadsheet_properties(
    ss: FakeSpreadsheet, body: Mapping[str, Any], what: str
) -> dict[str, Any]:
    tree = _fields(body, what)
    _masked_assign(ss.properties, body.get("properties") or {}, tree)
    return {}


# --------------------------------------------------------------------------------------
# Request schemas: unknown fields, enum values, field masks and condition types are
# checked as Google checks them, before a request is applied
# --------------------------------------------------------------------------------------


def _enum(*values: str) -> tuple[str, frozenset[str]]:
    return ("enum", frozenset(values))


_THEME = _enum("THEME_COLOR_TYPE_UNSPECIFIED", "TEXT", "BACKGROUND", "ACCENT1", "ACCENT2", "ACCENT3",
               "ACCENT4", "ACCENT5", "ACCENT6", "LINK")
_CONDITION_TYPES = (
    "CONDITION_TYPE_UNSPECIFIED", "NUMBER_GREATER", "NUMBER_GREATER_THAN_EQ", "NUMBER_LESS",
    "NUMBER_LESS_THAN_EQ", "NUMBER_EQ", "NUMBER_NOT_EQ", "NUMBER_BETWEEN", "NUMBER_NOT_BETWEEN",
    "TEXT_CONTAINS", "TEXT_NOT_CONTAINS", "TEXT_STARTS_WITH", "TEXT_ENDS_WITH", "TEXT_EQ",
    "TEXT_IS_EMAIL", "TEXT_IS_URL", "DATE_EQ", "DATE_BEFORE", "DATE_AFTER", "DATE_ON_OR_BEFORE",
    "DATE_ON_OR_AFTER", "DATE_BETWEEN", "DATE_NOT_BETWEEN", "DATE_IS_VALID", "ONE_OF_RANGE",
    "ONE_OF_LIST", "BLANK", "NOT_BLANK", "CUSTOM_FORMULA", "BOOLEAN", "TEXT_NOT_EQ", "DATE_NOT_EQ",
    "FILTER_EXPRESSION",
)

_SCHEMA: dict[str, dict[str, Any]] = {
    "Color": {"red": "num", "green": "num", "blue": "num", "alpha": "num"},
    "ColorStyle": {"rgbColor": "Color", "themeColor": _THEME},
    "Link": {"uri": "str"},
    "TextFormat": {"foregroundColor": "Color", "foregroundColorStyle": "ColorStyle", "fontFamily": "str",
                   "fontSize": "int", "bold": "bool", "italic": "bool", "strikethrough": "bool",
                   "underline": "bool", "link": "Link"},
    "NumberFormat": {"type": _enum("NUMBER_FORMAT_TYPE_UNSPECIFIED", "TEXT", "NUMBER", "PERCENT", "CURRENCY",
                                   "DATE", "TIME", "DATE_TIME", "SCIENTIFIC"), "pattern": "str"},
    "Border": {"style": _enum("STYLE_UNSPECIFIED", "DOTTED", "DASHED", "SOLID", "SOLID_MEDIUM", "SOLID_THICK",
                              "NONE", "DOUBLE"), "width": "int", "color": "Color", "colorStyle": "ColorStyle"},
    "Borders": {"top": "Border", "bottom": "Border", "left": "Border", "right": "Border"},
    "Padding": {"top": "int", "right": "int", "bottom": "int", "left": "int"},
    "TextRotation": {"angle": "int", "vertical": "bool"},
    "CellFormat": {
        "numberFormat": "NumberFormat", "backgroundColor": "Color", "backgroundColorStyle": "ColorStyle",
        "borders": "Borders", "padding": "Padding",
        "horizontalAlignment": _enum("HORIZONTAL_ALIGN_UNSPECIFIED", "LEFT", "CENTER", "RIGHT"),
        "verticalAlignment": _enum("VERTICAL_ALIGN_UNSPECIFIED", "TOP", "MIDDLE", "BOTTOM"),
        "wrapStrategy": _enum("WRAP_STRATEGY_UNSPECIFIED", "OVERFLOW_CELL", "LEGACY_WRAP", "CLIP", "WRAP"),
        "textDirection": _enum("TEXT_DIRECTION_UNSPECIFIED", "LEFT_TO_RIGHT", "RIGHT_TO_LEFT"),
        "textFormat": "TextFormat",
        "hyperlinkDisplayType": _enum("HYPERLINK_DISPLAY_TYPE_UNSPECIFIED", "LINKED", "PLAIN_TEXT"),
        "textRotation": "TextRotation",
    },
    "ErrorValue": {"type": _enum("ERROR_TYPE_UNSPECIFIED", "ERROR", "NULL_VALUE", "DIVIDE_BY_ZERO", "VALUE",
                                 "REF", "NAME", "NUM", "N_A", "LOADING"), "message": "str"},
    "ExtendedValue": {"numberValue": "num", "stringValue": "str", "boolValue": "bool", "formulaValue": "str",
                      "errorValue": "ErrorValue"},
    "ConditionValue": {"relativeDate": _enum("RELATIVE_DATE_UNSPECIFIED", "PAST_YEAR", "PAST_MONTH", "PAST_WEEK",
                                             "YESTERDAY", "TODAY", "TOMORROW"), "userEnteredValue": "str"},
    "BooleanCondition": {"type": _enum(*_CONDITION_TYPES), "values": ["ConditionValue"]},
    "DataValidationRule": {"condition": "BooleanCondition", "inputMessage": "str", "strict": "bool",
                           "showCustomUi": "bool"},
    "TextFormatRun": {"startIndex": "int", "format": "TextFormat"},
    "CellData": {"userEnteredValue": "ExtendedValue", "effectiveValue": "ExtendedValue", "formattedValue": "str",
                 "userEnteredFormat": "CellFormat", "effectiveFormat": "CellFormat", "hyperlink": "str",
                 "note": "str", "textFormatRuns": ["TextFormatRun"], "dataValidation": "DataValidationRule",
                 "pivotTable": "any", "dataSourceTable": "any", "dataSourceFormula": "any", "chipRuns": "any"},
    "RowData": {"values": ["CellData"]},
    "GridCoordinate": {"sheetId": "int", "rowIndex": "int", "columnIndex": "int"},
    "GridRange": {"sheetId": "int", "startRowIndex": "int", "endRowIndex": "int", "startColumnIndex": "int",
                  "endColumnIndex": "int"},
    "GridProperties": {"rowCount": "int", "columnCount": "int", "frozenRowCount": "int", "frozenColumnCount": "int",
                       "hideGridlines": "bool", "rowGroupControlAfter": "bool", "columnGroupControlAfter": "bool"},
    "SheetProperties": {"sheetId": "int", "title": "str", "index": "int",
                        "sheetType": _enum("SHEET_TYPE_UNSPECIFIED", "GRID", "OBJECT", "DATA_SOURCE"),
                        "gridProperties": "GridProperties", "hidden": "bool", "tabColor": "Color",
                        "tabColorStyle": "ColorStyle", "rightToLeft": "bool", "dataSourceSheetProperties": "any"},
    "DimensionRange": {"sheetId": "int", "dimension": _enum("DIMENSION_UNSPECIFIED", "ROWS", "COLUMNS"),
                       "startIndex": "int", "endIndex": "int"},
    "DimensionProperties": {"hiddenByFilter": "bool", "hiddenByUser": "bool", "pixelSize": "int",
                            "developerMetadata": "any", "dataSourceColumnReference": "any"},
    "InterpolationPoint": {"color": "Color", "colorStyle": "ColorStyle",
                           "type": _enum("INTERPOLATION_POINT_TYPE_UNSPECIFIED", "MIN", "MAX", "NUMBER", "PERCENT",
                                         "PERCENTILE"), "value": "str"},
    "GradientRule": {"minpoint": "InterpolationPoint", "midpoint": "InterpolationPoint",
                     "maxpoint": "InterpolationPoint"},
    "BooleanRule": {"condition": "BooleanCondition", "format": "CellFormat"},
    "ConditionalFormatRule": {"ranges": ["GridRange"], "booleanRule": "BooleanRule", "gradientRule": "GradientRule"},
    "NamedRange": {"namedRangeId": "str", "name": "str", "range": "GridRange"},
    "Editors": {"users": ["str"], "groups": ["str"], "domainUsersCanEdit": "bool"},
    "ProtectedRange": {"protectedRangeId": "int", "range": "GridRange", "namedRangeId": "str", "tableId": "str",
                       "description": "str", "warningOnly": "bool", "requestingUserCanEdit": "bool",
                       "unprotectedRanges": ["GridRange"], "editors": "Editors"},
    # requests
    "AddSheetRequest": {"properties": "SheetProperties"},
    "DeleteSheetRequest": {"sheetId": "int"},
    "UpdateSheetPropertiesRequest": {"properties": "SheetProperties", "fields": "str"},
    "UpdateCellsRequest": {"start": "GridCoordinate", "range": "GridRange", "rows": ["RowData"], "fields": "str"},
    "RepeatCellRequest": {"range": "GridRange", "cell": "CellData", "fields": "str"},
    "AppendCellsRequest": {"sheetId": "int", "rows": ["RowData"], "fields": "str", "tableId": "str"},
    "SetDataValidationRequest": {"range": "GridRange", "rule": "DataValidationRule", "filteredRowsIncluded": "bool"},
    "AddProtectedRangeRequest": {"protectedRange": "ProtectedRange"},
    "AddConditionalFormatRuleRequest": {"rule": "ConditionalFormatRule", "index": "int"},
    "AddNamedRangeRequest": {"namedRange": "NamedRange"},
    "UpdateNamedRangeRequest": {"namedRange": "NamedRange", "fields": "str"},
    "UpdateDimensionPropertiesRequest": {"range": "DimensionRange", "dataSourceSheetRange": "any",
                                         "properties": "DimensionProperties", "fields": "str"},
    "AutoResizeDimensionsRequest": {"dimensions": "DimensionRange", "dataSourceSheetDimensions": "any"},
    "AppendDimensionRequest": {"sheetId": "int", "dimension": _enum("DIMENSION_UNSPECIFIED", "ROWS", "COLUMNS"),
                               "length": "int"},
    "UpdateBordersRequest": {"range": "GridRange", "top": "Border", "bottom": "Border", "left": "Border",
                             "right": "Border", "innerHorizontal": "Border", "innerVertical": "Border"},
    "MergeCellsRequest": {"range": "GridRange", "mergeType": _enum("MERGE_ALL", "MERGE_COLUMNS", "MERGE_ROWS")},
    "UpdateSpreadsheetPropertiesRequest": {"properties": "any", "fields": "str"},
}
"""Sheets v4 messages, each field's type: a scalar (``str``, ``int``, ``num``, ``bool``,
``any``), an enum, a message name, or a one-item list for a repeated field."""

_REQUEST_TYPES = {kind: kind[0].upper() + kind[1:] + "Request" for kind in (
    "addSheet", "deleteSheet", "updateSheetProperties", "updateCells", "repeatCell", "appendCells",
    "setDataValidation", "addProtectedRange", "addConditionalFormatRule", "addNamedRange",
    "updateNamedRange", "updateDimensionProperties", "autoResizeDimensions", "appendDimension", "mergeCells",
    "updateSpreadsheetProperties", "updateBorders")}
_MASKED = {"updateCells": "CellData", "repeatCell": "CellData", "appendCells": "CellData",
           "updateDimensionProperties": "DimensionProperties", "updateSheetProperties": "SheetProperties",
           "updateNamedRange": "NamedRange"}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _check_message(value: Any, type_name: str, path: str) -> None:
    fields = _SCHEMA[type_name]
    if not isinstance(value, Mapping):
        raise FakeApiError(400, f"Invalid value at '{path}' (type.googleapis.com/google.apps.sheets.v4."
                                f"{type_name}), {json.dumps(value)}")
    for key, item in value.items():
        if key not in fields:
            raise FakeApiError(400, f"Invalid JSON payload received. Unknown name \"{key}\" at '{path}': "
                                    "Cannot find field.")
        _check_value(item, fields[key], f"{path}.{_snake(key)}")


def _check_value(value: Any, spec: Any, path: str) -> None:
    if value is None or spec == "any":
        return
    if isinstance(spec, list):
        if not isinstance(value, list):
            raise FakeApiError(400, f"Invalid value at '{path}': a list is expected, not {json.dumps(value)}")
        for i, item in enumerate(value):
            _check_value(item, spec[0], f"{path}[{i}]")
        return
    if isinstance(spec, tuple):
        if not isinstance(value, str) or value not in spec[1]:
            raise FakeApiError(400, f"Invalid value at '{path}', {json.dumps(value)}")
        return
    ok = {
        "str": lambda: isinstance(value, str),
        "int": lambda: isinstance(value, int) and not isinstance(value, bool),
        "num": lambda: isinstance(value, (int, float)) and not isinstance(value, bool),
        "bool": lambda: isinstance(value, bool),
    }.get(spec)
    if ok is None:
        _check_message(value, spec, path)
    elif not ok():
        raise FakeApiError(400, f"Invalid value at '{path}' ({spec}), {json.dumps(value)}")


def _check_mask(tree: MaskTree, type_name: str, what: str, prefix: str = "") -> None:
    """Every path of a field mask must name a field of the message it updates."""
    fields = _SCHEMA[type_name]
    for key, sub in tree.items():
        if key == "*":
            continue
        if key not in fields:
            raise FakeApiError(400, f"Invalid {what}: Invalid field mask: {prefix}{key} is not a field of "
                                    f"{type_name}")
        if sub is not None:
            inner = fields[key]
            if not isinstance(inner, str) or inner not in _SCHEMA:
                raise FakeApiError(400, f"Invalid {what}: Invalid field mask: {prefix}{key} has no sub-fields")
            _check_mask(sub, inner, what, f"{prefix}{key}.")


_DV_ONLY = {"ONE_OF_RANGE", "ONE_OF_LIST", "BOOLEAN", "TEXT_IS_EMAIL", "TEXT_IS_URL", "DATE_IS_VALID"}
_CF_ONLY = {"TEXT_STARTS_WITH", "TEXT_ENDS_WITH", "BLANK", "NOT_BLANK"}
_TWO_VALUES = {"NUMBER_BETWEEN", "NUMBER_NOT_BETWEEN", "DATE_BETWEEN", "DATE_NOT_BETWEEN"}
_NO_VALUES = {"BLANK", "NOT_BLANK", "TEXT_IS_EMAIL", "TEXT_IS_URL", "DATE_IS_VALID"}
_CF_FORMAT = {"backgroundColor": None, "backgroundColorStyle": None,
              "textFormat": {"bold": None, "italic": None, "strikethrough": None, "underline": None,
                             "foregroundColor": None, "foregroundColorStyle": None}}


_SHEET_REF = re.compile(r"('(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_.]*)!")


def _check_condition(ss: FakeSpreadsheet, condition: Any, use: str, what: str, sheet_id: int | None = None) -> None:
    """A ``BooleanCondition`` for data validation (``use="dv"``) or a conditional format
    (``"cf"``): the type must be one that use supports, with the number of values it takes.
    A conditional format's formula may name no other sheet than its own (Google's help:
    another sheet is reached through INDIRECT only)."""
    if not isinstance(condition, Mapping) or not condition.get("type") or \
            condition["type"] == "CONDITION_TYPE_UNSPECIFIED":
        raise FakeApiError(400, f"Invalid {what}: a condition needs a type")
    kind = condition["type"]
    values = [v.get("userEnteredValue", "") for v in condition.get("values") or []]
    if kind == "FILTER_EXPRESSION" or (use == "cf" and kind in _DV_ONLY) or (use == "dv" and kind in _CF_ONLY):
        where = "data validation" if use == "dv" else "conditional formatting"
        raise FakeApiError(400, f"Invalid {what}: {kind} is not supported by {where}")
    if kind in _TWO_VALUES:
        wanted = "exactly two values"
        ok = len(values) == 2
    elif kind in _NO_VALUES:
        wanted, ok = "no values", not values
    elif kind == "BOOLEAN":
        wanted, ok = "at most two values", len(values) <= 2
    elif kind == "ONE_OF_LIST":
        wanted = "at least one value, none a formula"
        ok = bool(values) and not any(str(v).startswith("=") for v in values)
    else:
        wanted, ok = "exactly one value", len(values) == 1
    if not ok:
        raise FakeApiError(400, f"Invalid {what}: {kind} takes {wanted}, not {values!r}")
    if kind in _TWO_VALUES and kind.startswith("NUMBER"):
        for v in values:
            if not (_NUMBER.match(str(v).strip()) or str(v).startswith("=")):
                raise FakeApiError(400, f"Invalid {what}: {kind} needs numbers, not {v!r}")
    if kind == "CUSTOM_FORMULA" and not str(values[0]).startswith(("=", "+")):
        raise FakeApiError(400, f"Invalid {what}: a CUSTOM_FORMULA value must be a formula")
    if use == "cf" and sheet_id is not None:
        own = ss.sheet(sheet_id).title
        for v in values:
            code = re.sub(r'"(?:[^"]|"")*"', '""', str(v))  # text in quotes is no reference
            for m in _SHEET_REF.finditer(code):
                title = m.group(1)
                title = title[1:-1].replace("''", "'") if title.startswith("'") else title
                if title.casefold() != own.casefold():
                    raise FakeApiError(400, f"Invalid {what}: a conditional format on {own!r} can't refer to "
                                            f"sheet {title!r} (use INDIRECT)")
    if kind == "ONE_OF_RANGE":
        ref = str(values[0])
        if not ref.startswith("="):
            raise FakeApiError(400, f"Invalid {what}: ONE_OF_RANGE needs a range such as =Sheet1!A1:A9")
        ss.parse_a1(ref[1:].replace("$", ""))


def _check_format_subset(fmt: Mapping[str, Any], allowed: Mapping[str, Any], what: str, prefix: str = "") -> None:
    for key, value in fmt.items():
        if key not in allowed:
            raise FakeApiError(400, f"Invalid {what}: conditional formatting can't set {prefix}{key} "
                                    "(only bold, italic, strikethrough, underline, text and background colours)")
        sub = allowed[key]
        if sub is not None and isinstance(value, Mapping):
            _check_format_subset(value, sub, what, f"{prefix}{key}.")


def _check_request(ss: FakeSpreadsheet, kind: str, inner: Mapping[str, Any], n: int) -> None:
    """Google's checks of one request, before it is applied (a 400 on the first failure)."""
    type_name = _REQUEST_TYPES.get(kind)
    if type_name is None:
        return
    _check_message(inner, type_name, f"requests[{n}].{_snake(kind)}")
    what = f"requests[{n}].{kind}"
    if kind in _MASKED and inner.get("fields") is not None:
        _check_mask(parse_field_mask(str(inner["fields"])), _MASKED[kind], what)
    if kind == "setDataValidation" and inner.get("rule") is not None:
        _check_condition(ss, inner["rule"].get("condition"), "dv", what)
    if kind == "addConditionalFormatRule":
        rule = inner.get("rule") or {}
        boolean = rule.get("booleanRule")
        if boolean is not None and rule.get("gradientRule") is not None:
            raise FakeApiError(400, f"Invalid {what}: a rule is a booleanRule or a gradientRule, not both")
        if boolean is not None:
            ranges = rule.get("ranges") or [{}]
            _check_condition(ss, boolean.get("condition"), "cf", what, int((ranges[0] or {}).get("sheetId", 0)))
            _check_format_subset(boolean.get("format") or {}, _CF_FORMAT, what)
    if kind == "addProtectedRange":
        protected = inner.get("protectedRange") or {}
        if ("range" in protected) == ("namedRangeId" in protected):
            raise FakeApiError(400, f"Invalid {what}: exactly one of range or namedRangeId must be set")
        if protected.get("warningOnly") and protected.get("editors"):
            raise FakeApiError(400, f"Invalid {what}: editors are not supported with warningOnly protection")
        unprotected = protected.get("unprotectedRanges") or []
        if unprotected:
            whole = protected.get("range")
            if not isinstance(whole, Mapping) or set(whole) - {"sheetId"}:
                raise FakeApiError(400, f"Invalid {what}: unprotectedRanges are only supported on a protected "
                                        "sheet (a range that is the whole sheet)")
            for grid in unprotected:
                if int(grid.get("sheetId", 0)) != int(whole.get("sheetId", 0)):
                    raise FakeApiError(400, f"Invalid {what}: an unprotected range must be on the protected sheet")
                ss.grid_range(grid, what)
    if kind == "addSheet":
        grid = ((inner.get("properties") or {}).get("gridProperties") or {})
        for key, limit in (("frozenRowCount", "rowCount"), ("frozenColumnCount", "columnCount")):
            if int(grid.get(key, 0)) < 0 or (limit in grid and int(grid.get(key, 0)) >= int(grid[limit])):
                raise FakeApiError(400, f"Invalid {what}: {key} must be less than {limit}")


def _update_borders(ss: FakeSpreadsheet, body: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The borders of a range: its outer edges and, inside it, between its rows and columns
    (a side not given is left as it was, as at Google)."""
    sheet, (row0, row1, col0, col1) = ss.grid_range(body.get("range"), what)
    if not any(k in body for k in ("top", "bottom", "left", "right", "innerHorizontal", "innerVertical")):
        raise FakeApiError(400, f"Invalid {what}: at least one border must be given")
    for r in range(row0, row1):
        for c in range(col0, col1):
            sides = {"top": body.get("top") if r == row0 else body.get("innerHorizontal"),
                     "bottom": body.get("bottom") if r == row1 - 1 else body.get("innerHorizontal"),
                     "left": body.get("left") if c == col0 else body.get("innerVertical"),
                     "right": body.get("right") if c == col1 - 1 else body.get("innerVertical")}
            sides = {k: v for k, v in sides.items() if v is not None}
            if not sides:
                continue
            cell = copy.deepcopy(sheet.cells.get((r, c), {}))
            cell.setdefault("userEnteredFormat", {}).setdefault("borders", {}).update(copy.deepcopy(sides))
            sheet.set_cell(r, c, cell)
    return {}


_HANDLERS = {
    "updateBorders": _update_borders,
    "addSheet": _add_sheet,
    "deleteSheet": _delete_sheet,
    "updateSheetProperties": _update_sheet_properties,
    "updateCells": _update_cells,
    "repeatCell": _repeat_cell,
    "appendCells": _append_cells,
    "setDataValidation": _set_data_validation,
    "addProtectedRange": _add_protected_range,
    "addConditionalFormatRule": _add_conditional_format_rule,
    "addNamedRange": _add_named_range,
    "updateNamedRange": _update_named_range,
    "updateDimensionProperties": _update_dimension_properties,
    "autoResizeDimensions": _auto_resize_dimensions,
    "appendDimension": _append_dimension,
    "mergeCells": _merge_cells,
    "addChart": _add_chart,
    "updateSpreadsheetProperties": _update_spreadsheet_properties,
}


# --------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request the fake received; ``status`` is what it answered.

    ``path`` is percent-decoded, ``query`` maps each parameter to its values, ``body`` is
    the parsed JSON (or form fields), and ``headers`` has lower-case names."""

    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    headers: dict[str, str]
    status: int = 0

    @property
    def kinds(self) -> list[str]:
        """The request kinds of a ``:batchUpdate`` body (``["updateCells", ...]``)."""
        if not isinstance(self.body, dict):
            return []
        return [next(iter(r), "") for r in self.body.get("requests", []) if isinstance(r, dict)]


@dataclass
class _Fault:
    remaining: int
    status: int
    path_contains: str | None
    method: str | None


@dataclass
class _Slow:
    remaining: int
    kind: str  # "hang": no answer for ``seconds``; "trickle": a byte every ``seconds``
    seconds: float
    path_contains: str | None
    method: str | None


class FakeSheetsServer:
    """The fake API on ``http://127.0.0.1:PORT`` (a free port), in a background thread.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, access_token: str = "fake") -> None:
        self.host, self.port = host, port
        self.access_token = access_token
        self.spreadsheets: dict[str, FakeSpreadsheet] = {}
        self.requests: list[RecordedRequest] = []
        self.token_claims: list[dict[str, Any]] = []
        self.errors: list[str] = []  # tracebacks of bugs in the fake itself
        self._faults: list[_Fault] = []
        self._slow: list[_Slow] = []
        self._stopping = threading.Event()  # cuts hanging and trickling answers short
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake Sheets server is not running")
        return f"http://{self.host}:{self._httpd.server_address[1]}"

    def start(self) -> FakeSheetsServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeSheetsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- for tests ------------------------------------------------------------------

    def create_spreadsheet(
        self,
        title: str = "Untitled spreadsheet",
        sheets: Sequence[str | Mapping[str, Any]] = ("Sheet1",),
        *,
        rows: int = 1000,
        columns: int = 26,
    ) -> str:
        """Make a spreadsheet; the first sheet gets id 0 as at Google.  Returns its id."""
        with self._lock:
            spreadsheet_id = f"fake{next(self._ids):06d}" + "x" * 34
            ss = FakeSpreadsheet(
                spreadsheet_id,
                {
                    "title": title,
                    "locale": "en_US",
                    "autoRecalc": "ON_CHANGE",
                    "timeZone": "Etc/GMT",
                },
            )
            for n, spec in enumerate(sheets or ("Sheet1",)):
                props = {"title": spec} if isinstance(spec, str) else copy.deepcopy(dict(spec))
                if n == 0:
                    props.setdefault("sheetId", 0)
                grid = props.setdefault("gridProperties", {})
                grid.setdefault("rowCount", rows)
                grid.setdefault("columnCount", columns)
                _add_sheet(ss, {"properties": props}, "spreadsheet")
            self.spreadsheets[spreadsheet_id] = ss
            return spreadsheet_id

    def spreadsheet(self, spreadsheet_id: str) -> FakeSpreadsheet:
        with self._lock:
            try:
                return self.spreadsheets[spreadsheet_id]
            except KeyError:
                raise FakeApiError(404, "Requested entity was not found.") from None

    def set_values(
        self,
        spreadsheet_id: str,
        range_: str,
        rows: Sequence[Sequence[Any]],
        *,
        user_entered: bool = False,
    ) -> None:
        """Seed cells as ``values.update`` would (RAW unless ``user_entered``); a dict is
        taken as the cell's ``userEnteredValue``."""
        with self._lock:
            self.spreadsheet(spreadsheet_id).write_values(range_, rows, user_entered)

    def cell(self, spreadsheet_id: str, address: str) -> dict[str, Any]:
        """The ``CellData`` of one cell (``{}`` when empty), e.g. ``cell(id, "Log!B3")``."""
        with self._lock:
            sheet, box = self.spreadsheet(spreadsheet_id).parse_a1(address)
            return copy.deepcopy(sheet.cells.get((box.row0, box.col0), {}))

    def entered(self, spreadsheet_id: str, range_: str) -> list[list[dict[str, Any] | None]]:
        """The ``userEnteredValue`` of every cell of a bounded range (``None`` when empty)."""
        with self._lock:
            sheet, box = self.spreadsheet(spreadsheet_id).parse_a1(range_)
            row0, row1, col0, col1 = sheet.clamp(box, "range")
            return [
                [
                    copy.deepcopy(sheet.cells.get((r, c), {}).get("userEnteredValue"))
                    for c in range(col0, col1)
                ]
                for r in range(row0, row1)
            ]

    def snapshot(self, spreadsheet_id: str) -> dict[str, Any]:
        """Everything stored for a spreadsheet, to compare before and after."""
        with self._lock:
            ss = self.spreadsheet(spreadsheet_id)
            out = ss.to_json(grid=True)
            for item, sheet in zip(out["sheets"], ss.sheets, strict=True):
                item["rowMetadata"] = copy.deepcopy(sheet.row_metadata)
                item["columnMetadata"] = copy.deepcopy(sheet.column_metadata)
                item["autoResized"] = copy.deepcopy(sheet.auto_resized)
            return out

    def fail_next(
        self,
        n: int = 1,
        status: int = 429,
        *,
        path_contains: str | None = None,
        method: str | None = None,
    ) -> None:
        """Answer the next ``n`` requests whose path contains ``path_contains`` (any path
        when ``None``, the token endpoint included) and whose method is ``method`` with
        ``status`` and change nothing."""
        with self._lock:
            self._faults.append(
                _Fault(n, status, path_contains, method.upper() if method else None)
            )

    def hang_next(
        self,
        n: int = 1,
        seconds: float = 60.0,
        *,
        path_contains: str | None = None,
        method: str | None = None,
    ) -> None:
        """Give the next ``n`` matching requests no answer for ``seconds`` (then drop the
        connection): nothing is recorded and nothing changes.  Pending :meth:`fail_next`
        faults are answered first."""
        with self._lock:
            self._slow.append(_Slow(n, "hang", seconds, path_contains, method.upper() if method else None))

    def trickle_next(
        self,
        n: int = 1,
        interval: float = 2.0,
        *,
        path_contains: str | None = None,
        method: str | None = None,
    ) -> None:
        """Answer the next ``n`` matching requests normally, but send the body one byte
        every ``interval`` seconds (the headers, with the full Content-Length, at once)."""
        with self._lock:
            self._slow.append(_Slow(n, "trickle", interval, path_contains, method.upper() if method else None))

    def _take_slow(self, method: str, path: str) -> _Slow | None:
        """The slow answer for this request, if any; the faults of :meth:`fail_next`
        that match it come first (so "four 503s, then no answer" can be set up)."""
        with self._lock:
            path = unquote(path)
            for fault in self._faults:
                if fault.remaining > 0 and (fault.path_contains is None or fault.path_contains in path) \
                        and (fault.method is None or fault.method == method):
                    return None
            for slow in self._slow:
                if slow.remaining <= 0:
                    continue
                if slow.path_contains is not None and slow.path_contains not in path:
                    continue
                if slow.method is not None and slow.method != method:
                    continue
                slow.remaining -= 1
                return slow
            return None

    def clear_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    def count(self, path_contains: str = "", method: str | None = None) -> int:
        """How many recorded requests match."""
        with self._lock:
            return sum(
                1
                for r in self.requests
                if path_contains in r.path and (method is None or r.method == method.upper())
            )

    def api_requests(self) -> list[RecordedRequest]:
        """The recorded requests to the Sheets API (not the token endpoint or Drive)."""
        with self._lock:
            return [r for r in self.requests if r.path.startswith("/v4/")]

    # -- request handling (runs on the server's threads) ---------------------------

    def _take_fault(self, method: str, path: str) -> int | None:
        for fault in self._faults:
            if fault.remaining <= 0:
                continue
            if fault.path_contains is not None and fault.path_contains not in path:
                continue
            if fault.method is not None and fault.method != method:
                continue
            fault.remaining -= 1
            return fault.status
        return None

    def handle(
        self,
        method: str,
        raw_path: str,
        query: dict[str, list[str]],
        body: Any,
        headers: dict[str, str],
    ) -> tuple[int, Any]:
        with self._lock:
            record = RecordedRequest(method, unquote(raw_path), query, body, headers)
            self.requests.append(record)
            try:
                fault = self._take_fault(method, record.path)
                if fault is not None:
                    raise FakeApiError(fault, _FAULT_MESSAGES.get(fault, "Injected failure."))
                status, answer = 200, self._route(method, raw_path, query, body)
            except FakeApiError as exc:
                status = exc.status
                answer = {
                    "error": {
                        "code": exc.status,
                        "message": exc.message,
                        "status": _STATUS.get(exc.status, "UNKNOWN"),
                    }
                }
            except Exception:  # a bug in the fake: answer 500 and keep the traceback
                self.errors.append(traceback.format_exc())
                status, answer = (
                    500,
                    {"error": {"code": 500, "message": "fake crashed", "status": "INTERNAL"}},
                )
            record.status = status
            return status, answer

    def _route(self, method: str, raw_path: str, query: dict[str, list[str]], body: Any) -> Any:
        one = {k: v[-1] for k, v in query.items()}
        if raw_path == "/token" and method == "POST":
            return self._token(body)
        if raw_path.startswith("/drive/v3/files"):
            return self._drive(method, raw_path, body)
        if raw_path == "/v4/spreadsheets" and method == "POST":
            return self._create(body or {})
        m = re.fullmatch(r"/v4/spreadsheets/([^/:]+)(:batchUpdate)?", raw_path)
        if m:
            ss = self.spreadsheet(unquote(m.group(1)))
            if m.group(2) and method == "POST":
                return self.batch_update(ss, body or {})
            if not m.group(2) and method == "GET":
                ranges = query.get("ranges", [])
                grid = one.get("includeGridData", "false").lower() == "true"
                answer = ss.to_json(ranges, grid)
                if "fields" in one:
                    answer = apply_field_mask(answer, parse_field_mask(one["fields"]))
                return answer
        m = re.fullmatch(
            r"/v4/spreadsheets/([^/]+)/values:(batchGet|batchUpdate|batchClear)", raw_path
        )
        if m:
            ss = self.spreadsheet(unquote(m.group(1)))
            return self._values_batch(ss, m.group(2), method, query, body or {})
        m = re.fullmatch(r"/v4/spreadsheets/([^/]+)/values/([^/]+)", raw_path)
        if m:
            ss = self.spreadsheet(unquote(m.group(1)))
            return self._values_one(ss, unquote(m.group(2)), method, one, body or {})
        raise FakeApiError(404, f"The fake has no {method} {raw_path}")

    def _token(self, body: Any) -> Any:
        form = body if isinstance(body, dict) else {}
        assertion = str(form.get("assertion", ""))
        parts = assertion.split(".")
        if len(parts) != 3:
            raise FakeApiError(400, "invalid_grant: the assertion is not a JWT")
        payload = parts[1] + "=" * (-len(parts[1]) % 4)
        self.token_claims.append(json.loads(base64.urlsafe_b64decode(payload)))
        return {"access_token": self.access_token, "expires_in": 3600, "token_type": "Bearer"}

    def _create(self, body: Mapping[str, Any]) -> Any:
        title = (body.get("properties") or {}).get("title", "Untitled spreadsheet")
        sheets = [s.get("properties", {}) for s in body.get("sheets", [])] or ["Sheet1"]
        spreadsheet_id = self.create_spreadsheet(title, sheets)
        ss = self.spreadsheets[spreadsheet_id]
        ss.properties.update(copy.deepcopy(dict(body.get("properties") or {})))
        return ss.to_json()

    def _drive(self, method: str, raw_path: str, body: Any) -> Any:
        m = re.fullmatch(r"/drive/v3/files(?:/([^/]+))?", raw_path)
        if not m:
            raise FakeApiError(404, f"The fake has no {method} {raw_path}")
        file_id = unquote(m.group(1)) if m.group(1) else None

        def describe(ss: FakeSpreadsheet) -> dict[str, Any]:
            return {
                "kind": "drive#file",
                "id": ss.spreadsheet_id,
                "name": ss.properties.get("title", ""),
                "mimeType": "application/vnd.google-apps.spreadsheet",
                "createdTime": "2024-01-01T00:00:00.000Z",
                "modifiedTime": "2024-01-01T00:00:00.000Z",
            }

        if file_id is None and method == "POST":
            return describe(
                self.spreadsheets[
                    self.create_spreadsheet((body or {}).get("name", "Untitled spreadsheet"))
                ]
            )
        if file_id is None and method == "GET":
            return {
                "kind": "drive#fileList",
                "files": [describe(s) for s in self.spreadsheets.values()],
            }
        if file_id is not None and method == "GET":
            return describe(self.spreadsheet(file_id))
        if file_id is not None and method == "DELETE":
            self.spreadsheet(file_id)
            del self.spreadsheets[file_id]
            return None
        raise FakeApiError(404, f"The fake has no {method} {raw_path}")

    def _values_one(
        self,
        ss: FakeSpreadsheet,
        target: str,
        method: str,
        one: dict[str, str],
        body: Mapping[str, Any],
    ) -> Any:
        action = ""
        for suffix in (":append", ":clear"):
            if target.endswith(suffix):
                target, action = target[: -len(suffix)], suffix
        if method == "GET" and not action:
            return ss.values(
                target,
                one.get("valueRenderOption", "FORMATTED_VALUE"),
                one.get("majorDimension", "ROWS"),
            )
        user_entered = self._input_option(one.get("valueInputOption"), required=action != ":clear")
        work = pickle.loads(pickle.dumps(ss, protocol=pickle.HIGHEST_PROTOCOL))  # a deep copy, faster than deepcopy
        if method == "PUT" and not action:
            answer = work.write_values(
                target, body.get("values", []), user_entered, body.get("majorDimension", "ROWS")
            )
        elif method == "POST" and action == ":append":
            sheet, box = work.parse_a1(target)
            row = max(sheet.last_data_row() + 1, box.row0)
            start = f"{quote_title(sheet.title)}!{col_letters(box.col0)}{row + 1}"
            answer = {
                "spreadsheetId": ss.spreadsheet_id,
                "updates": work.write_values(start, body.get("values", []), user_entered),
            }
        elif method == "POST" and action == ":clear":
            answer = {"spreadsheetId": ss.spreadsheet_id, "clearedRange": work.clear_values(target)}
        else:
            raise FakeApiError(404, f"The fake has no {method} values/{target}{action}")
        ss.__dict__.update(work.__dict__)
        return answer

    @staticmethod
    def _input_option(option: str | None, required: bool = True) -> bool:
        if option in ("RAW", "USER_ENTERED"):
            return option == "USER_ENTERED"
        if not required:
            return False
        raise FakeApiError(400, "'valueInputOption' is required but not specified")

    def _values_batch(
        self,
        ss: FakeSpreadsheet,
        action: str,
        method: str,
        query: dict[str, list[str]],
        body: Mapping[str, Any],
    ) -> Any:
        one = {k: v[-1] for k, v in query.items()}
        if action == "batchGet" and method == "GET":
            option = one.get("valueRenderOption", "FORMATTED_VALUE")
            major = one.get("majorDimension", "ROWS")
            return {
                "spreadsheetId": ss.spreadsheet_id,
                "valueRanges": [ss.values(r, option, major) for r in query.get("ranges", [])],
            }
        work = pickle.loads(pickle.dumps(ss, protocol=pickle.HIGHEST_PROTOCOL))  # a deep copy, faster than deepcopy
        if action == "batchUpdate" and method == "POST":
            user_entered = self._input_option(body.get("valueInputOption"))
            responses = [
                work.write_values(
                    d.get("range", ""),
                    d.get("values", []),
                    user_entered,
                    d.get("majorDimension", "ROWS"),
                )
                for d in body.get("data", [])
            ]
            answer: dict[str, Any] = {
                "spreadsheetId": ss.spreadsheet_id,
                "totalUpdatedRows": sum(r["updatedRows"] for r in responses),
                "totalUpdatedColumns": sum(r["updatedColumns"] for r in responses),
                "totalUpdatedCells": sum(r["updatedCells"] for r in responses),
                "totalUpdatedSheets": len(
                    {r["updatedRange"].rpartition("!")[0] for r in responses}
                ),
                "responses": responses,
            }
        elif action == "batchClear" and method == "POST":
            answer = {
                "spreadsheetId": ss.spreadsheet_id,
                "clearedRanges": [work.clear_values(r) for r in body.get("ranges", [])],
            }
        else:
            raise FakeApiError(404, f"The fake has no {method} values:{action}")
        ss.__dict__.update(work.__dict__)
        return answer

    def batch_update(self, ss: FakeSpreadsheet, body: Mapping[str, Any]) -> dict[str, Any]:
        """Apply ``spreadsheets.batchUpdate`` atomically: all requests or none."""
        work = pickle.loads(pickle.dumps(ss, protocol=pickle.HIGHEST_PROTOCOL))  # a deep copy, faster than deepcopy
        replies = []
        for n, request in enumerate(body.get("requests") or []):
            if not isinstance(request, Mapping) or len(request) != 1:
                raise FakeApiError(
                    400, f"Invalid requests[{n}]: exactly one kind of request is allowed"
                )
            kind, inner = next(iter(request.items()))
            handler = _HANDLERS.get(kind)
            if handler is None:
                raise FakeApiError(
                    400,
                    f"Invalid JSON payload received. Unknown name \"{kind}\" at 'requests[{n}]': "
                    "Cannot find field.",
                )
            if not isinstance(inner, Mapping):
                raise FakeApiError(400, f"Invalid requests[{n}].{kind}: must be an object")
            _check_request(work, kind, inner, n)
            replies.append(handler(work, inner, f"requests[{n}].{kind}"))
        ss.__dict__.update(work.__dict__)
        answer: dict[str, Any] = {"spreadsheetId": ss.spreadsheet_id, "replies": replies}
        if body.get("includeSpreadsheetInResponse"):
            answer["updatedSpreadsheet"] = ss.to_json()
        return answer


class _Handler(BaseHTTPRequestHandler):
    fake: FakeSheetsServer
    protocol_version = "HTTP/1.1"
    timeout = 10

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        content_type = self.headers.get("Content-Type", "")
        body: Any = None
        if raw:
            if "json" in content_type:
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
            elif "x-www-form-urlencoded" in content_type:
                body = {k: v[-1] for k, v in parse_qs(raw.decode()).items()}
            else:
                body = raw.decode("utf-8", "replace")
        slow = self.fake._take_slow(method, parts.path)
        if slow is not None and slow.kind == "hang":
            self.fake._stopping.wait(slow.seconds)
            self.close_connection = True  # the answer never comes
            return
        status, answer = self.fake.handle(
            method,
            parts.path,
            parse_qs(parts.query, keep_blank_values=True),
            body,
            {k.lower(): v for k, v in self.headers.items()},
        )
        data = b"" if answer is None else json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if slow is None:
            self.wfile.write(data)
            return
        try:
            self.wfile.flush()
            for i in range(len(data)):
                if self.fake._stopping.wait(slow.seconds):
                    break
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
        except OSError:  # the client gave up and closed the connection
            pass
        self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._serve("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._serve("DELETE")


def iter_cells(sheet: FakeSheet) -> Iterator[tuple[str, dict[str, Any]]]:
    """``("B3", cell_data)`` for every stored cell of a sheet, in row order."""
    for r, c in sorted(sheet.cells):
        yield f"{col_letters(c)}{r + 1}", sheet.cells[(r, c)]
