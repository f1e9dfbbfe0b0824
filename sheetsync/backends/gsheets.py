"""Google Sheets backend: one spreadsheet through gspread, one request per read and per write.

:class:`GSheetsBackend` implements :class:`~sheetsync.sheets.backend.SheetBackend` for one
Google spreadsheet.  gspread supplies the signed-in HTTP session (a service account, OAuth,
or any ``requests.Session``); the backend speaks the Sheets v4 REST API over it itself, so
each step costs a known number of requests:

* ``read_ranges`` is one ``spreadsheets.get`` with every range, ``includeGridData=true``
  and a field mask that asks for user-entered values only.  User-entered values are what a
  player typed, so a formula reads back as a :class:`~sheetsync.sheets.backend.Formula`
  and text that merely starts with ``=`` reads back as ``str``.  The same answer carries
  the sheet ids, which are cached for the write.
* ``write_ranges`` is one ``spreadsheets.batchUpdate`` made of ``updateCells`` requests
  (``appendCells`` for an update with ``append=True``, such as the Log's rows).
  Google applies a batch update whole or not at all, so a failed write leaves the sheet as
  it was.  A ``str`` is sent as ``stringValue`` (always literal text), a ``Formula`` as
  ``formulaValue``.

A 429 (quota), a 5xx, a dropped connection or an answer that doesn't come in time is
retried after 1, 2, 4, ... seconds (capped), bounded by ``max_tries`` and
``max_total_seconds`` (60 s), through the injected ``sleep`` and ``clock``.  Each request
is bounded too: ``connect_timeout`` to connect, ``read_timeout`` for each piece of the
answer, and ``timeout`` on the wall clock for the whole request (the answer is streamed
and the deadline checked as it arrives, since a read timeout alone lets an answer that
trickles in a byte at a time run on forever); no request runs past the total budget.
``progress`` (optional) gets one line before each wait ("Google Sheets answered 503;
retrying in 4 s (try 2 of 5)…").  A network that can't be reached at all (no DNS, the
connection refused) is reported as such.  Every gspread, google-auth and requests
exception becomes a :class:`~sheetsync.core.errors.BackendError` here; none leaves this module.
"""

from __future__ import annotations

import json as _jsonlib  # ``json`` is the name of the request body in ``_call``
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import google.auth.exceptions
import requests
import urllib3
from gspread import Client, Spreadsheet
from gspread.http_client import HTTPClient

from sheetsync.core.errors import BackendError
from sheetsync.sheets.backend import (
    A1Range,
    CellValue,
    Formula,
    Grid,
    RangeUpdate,
    parse_range,
    trim_grid,
)

__all__ = ["API_ROOT", "GSheetsBackend", "METADATA_FIELDS", "NAMED_READ_FIELDS", "READ_FIELDS", "READ_SLOTS",
           "SNAPSHOT_FIELDS", "cell_data", "read_slot_name", "read_slot_requests"]

API_ROOT = "https://sheets.googleapis.com/v4/spreadsheets"
"""Base URL of the Sheets v4 ``spreadsheets`` collection."""

READ_FIELDS = (
    "sheets(properties(sheetId,title),data(startRow,startColumn,rowData(values(userEnteredValue))))"
)
"""Field mask of the one ``spreadsheets.get`` a read makes."""

SNAPSHOT_FIELDS = ("sheets(properties(sheetId,title),data(startRow,startColumn,rowData(values(userEnteredValue)))),"
                   "namedRanges(namedRangeId,name,range)")
"""Field mask of the whole-spreadsheet ``spreadsheets.get`` of :meth:`GSheetsBackend.read_mark`
(a tracker without its read ranges): sheet titles and ids, every cell's user-entered value
and the named ranges (to add or fix the read ranges in the step's write)."""

NAMED_READ_FIELDS = SNAPSHOT_FIELDS
"""Field mask of the ``spreadsheets.get`` of the mark and the read ranges: the same parts,
for the cells of those ranges only (the named ranges' own ranges say where each answer's
cells end)."""

READ_SLOTS = 16
"""How many named read ranges (``sheetsync_read_01`` .. ``_16``) a tracker carries: enough
for every system's step read (the battalion tracker's is 11 ranges); unused ones cover one
cell."""


def read_slot_name(index: int, prefix: str = "read") -> str:
    """The name of read range ``index`` (0-based): ``sheetsync_read_01`` ...; with
    ``prefix="next"``, of the next Resolve's (``sheetsync_next_01`` ..., issue 23)."""
    return f"sheetsync_{prefix}_{index + 1:02d}"

METADATA_FIELDS = "sheets.properties(sheetId,title)"
"""Field mask of the metadata fetch (sheet titles and ids only)."""

_RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})

GSheetsSource = Client | Spreadsheet | HTTPClient


def _status_words(status: int) -> str:
    if status == 429:
        return "429 (quota)"
    if status >= 500:
        return f"{status} (server error)"
    if status == 408:
        return "408 (timeout)"
    return str(status)


class GSheetsBackend:
    """One Google spreadsheet behind the :class:`SheetBackend` seam.

    ``source`` is a gspread :class:`~gspread.Client`, a :class:`~gspread.Spreadsheet` (then
    ``key`` defaults to its id) or a gspread ``HTTPClient``.  Only its HTTP session is used.
    The constructor does no I/O.

    ``request_count`` counts every HTTP request sent to the Sheets API, retries included
    (the token exchange of a service account is not counted).
    """

    def __init__(
        self,
        source: GSheetsSource,
        key: str | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        max_tries: int = 5,
        max_total_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        first_delay: float = 1.0,
        max_delay: float = 32.0,
        timeout: float | None = 30.0,
        connect_timeout: float = 10.0,
        read_timeout: float = 20.0,
        progress: Callable[[str], None] | None = None,
        api_root: str = API_ROOT,
    ) -> None:
        if isinstance(source, Spreadsheet):
            http: HTTPClient = source.client
            key = key if key is not None else source.id
        elif isinstance(source, Client):
            http = source.http_client
        else:
            http = source
        if not key:
            raise ValueError("GSheetsBackend needs the spreadsheet key")
        if max_tries < 1:
            raise ValueError(f"max_tries must be at least 1, not {max_tries}")
        self.key = key
        self._session: requests.Session = http.session
        self._sleep = sleep
        self._clock = clock
        self.max_tries = max_tries
        self.max_total_seconds = max_total_seconds
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._progress = progress
        self._url = f"{api_root.rstrip('/')}/{key}"
        self.request_count = 0
        self._sheet_ids: dict[str, int] = {}
        self._all_sheets_known = False
        self._snapshot: dict[str, list[_Region]] | None = None
        self._mark: dict[str, Grid] = {}
        self._named_read: bool | None = None  # None: not known yet whether the read ranges exist
        self._slots: dict[str, tuple[str, dict[str, Any]]] = {}
        self._next_slots: dict[str, tuple[str, dict[str, Any]]] = {}
        self._slots_known = False
        """Whether this backend read the tracker's named ranges (with the mark)."""
        self._slot_fix: list[dict[str, Any]] = []
        self._prefix = "read"
        """Which named read ranges the step's GET asks for: ``read`` (every step's whole
        plan) or ``next`` (a Resolve's, from where the step before it left its tables)."""

    def step_ahead(self, action: str) -> None:
        """Issue 23: the step about to run, told before its GET.  A Resolve reads its
        stamped tables and the Log from where the step before left them (``State!B3``), so
        its GET asks for the named ranges the step before set to that read
        (``sheetsync_next_01`` ..); every other step reads its whole plan, from
        ``sheetsync_read_01`` ..., which stay put."""
        self._prefix = "next" if action == "resolve" else "read"

    def plan_next(self, plan: Sequence[str]) -> None:
        """The next Resolve's read (issue 23): this step's write moves the ``next`` named
        ranges over it (``updateNamedRange``, or ``addNamedRange`` for one the tracker
        lacks), so that Resolve's one GET gets exactly its ranges."""
        if not self._slots_known:
            return  # this step read no named ranges (the watcher's): it leaves them alone
        ids = {t.casefold(): i for t, i in self._sheet_ids.items()}
        wanted: list[dict[str, Any]] = []
        for text in plan:
            rng = self._parse(text)
            sheet_id = ids.get(rng.sheet.casefold())
            if sheet_id is None:
                return  # a sheet the answer did not name: the next Resolve reads the whole spreadsheet
            grid = _grid_range(rng, sheet_id)
            if grid not in wanted:
                wanted.append(grid)
        if not wanted or len(wanted) > READ_SLOTS:
            return
        pad = dict(wanted[0], endRowIndex=wanted[0]["startRowIndex"] + 1,
                   endColumnIndex=wanted[0]["startColumnIndex"] + 1)
        out: list[dict[str, Any]] = []
        for i, grid in enumerate(wanted + [pad] * (READ_SLOTS - len(wanted))):
            name = read_slot_name(i, "next")
            known = self._next_slots.get(name)
            if known is None:
                out.append({"addNamedRange": {"namedRange": {"name": name, "range": grid}}})
            elif known[1] != grid:
                out.append({"updateNamedRange": {"namedRange": {"namedRangeId": known[0], "name": name,
                                                                "range": grid}, "fields": "range"}})
        self._slot_fix = [*self._slot_fix, *out]

    # -- the tracker's mark -------------------------------------------------------------

    def read_mark(self, range_a1: str) -> Grid:
        """The cells of ``range_a1`` (the tracker's mark, ``State!B1:B2``) at no request of
        their own: the first time, ONE ``spreadsheets.get`` of the mark and the tracker's
        named read ranges (``sheetsync_read_01`` .. ``_16``, :data:`READ_SLOTS`), which
        cover what a step reads, is kept as a one-shot snapshot that serves the next
        :meth:`read_ranges` without a request (the step's read), so a step is one GET and
        one POST.  A tracker without the read ranges (made before them) has that GET refused
        (400): the whole spreadsheet is read instead (``includeGridData=true``, no
        ``ranges``) and the step's write adds the read ranges, once.  A sheet or cells the
        spreadsheet lacks read as empty (a tracker from before the mark).  The mark is
        remembered: a later call makes no request (a step then reads its cells itself),
        until this backend writes to the mark's sheet."""
        rng = self._parse(range_a1)
        key = str(rng)
        if key in self._mark:
            return [list(row) for row in self._mark[key]]
        body: Any = None
        self._slot_fix = []
        if self._named_read is not False:
            try:
                body = self._call("GET", self._url, params={
                    "ranges": [key, *(read_slot_name(i, self._prefix) for i in range(READ_SLOTS))],
                    "includeGridData": "true", "fields": NAMED_READ_FIELDS}, doing="read")
            except _Refused as exc:
                if exc.status != 400:
                    raise
                self._named_read = False  # no read ranges yet: this step adds them
        whole = body is None
        if whole:
            body = self._call("GET", self._url, params={"includeGridData": "true", "fields": SNAPSHOT_FIELDS},
                              doing="read")
        ids: dict[str, int] = {}
        for sheet in _list(body, "sheets"):
            props = sheet.get("properties", {})
            if isinstance(props.get("title"), str):
                ids[props["title"]] = int(props.get("sheetId", 0))
        titles = {i: t for t, i in ids.items()}
        slots: dict[str, tuple[str, dict[str, Any]]] = {}
        for named in _list(body, "namedRanges"):
            name, grid = named.get("name"), named.get("range")
            if isinstance(name, str) and name.startswith(("sheetsync_read_", "sheetsync_next_")) and isinstance(
                    grid, Mapping):
                slots[name] = (str(named.get("namedRangeId", "")), dict(grid))
        self._slots_known = True
        self._slots = {k: v for k, v in slots.items() if k.startswith("sheetsync_read_")}
        self._next_slots = {k: v for k, v in slots.items() if k.startswith("sheetsync_next_")}
        regions: dict[str, list[_Region]] = {}
        if whole:
            for sheet in _list(body, "sheets"):
                title = sheet.get("properties", {}).get("title")
                if isinstance(title, str):
                    regions[title] = [_region(data, None, None) for data in _list(sheet, "data")] or [
                        _Region(0, 0, None, None, [])]  # one GridData from A1, as Google sends it
            self._sheet_ids = ids
            self._all_sheets_known = True
        else:
            # Google answers each sheet's ranges in the order asked: the mark, then the slots.
            asked: dict[str, list[tuple[int | None, int | None]]] = {}
            asked.setdefault(rng.sheet.casefold(), []).append((rng.row2, rng.col2))
            for i in range(READ_SLOTS):
                grid = slots.get(read_slot_name(i, self._prefix), ("", {}))[1]
                title = titles.get(int(grid.get("sheetId", 0)))
                if title is not None:
                    end_row, end_col = grid.get("endRowIndex"), grid.get("endColumnIndex")
                    asked.setdefault(title.casefold(), []).append(
                        (None if end_row is None else int(end_row), None if end_col is None else int(end_col)))
            for sheet in _list(body, "sheets"):
                title = sheet.get("properties", {}).get("title")
                if not isinstance(title, str):
                    continue
                self._remember(title, ids[title])
                ends = asked.get(title.casefold(), [])
                for index, data in enumerate(_list(sheet, "data")):
                    end = ends[index] if index < len(ends) else (0, 0)  # unknown: serves nothing
                    regions.setdefault(title, []).append(_region(data, *end))
            self._named_read = True
        self._snapshot = regions
        grid_ = _slice(regions, rng) or []
        self._mark = {key: [list(row) for row in grid_]}
        return grid_

    # -- the seam ---------------------------------------------------------------------

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        """Read every range in one ``spreadsheets.get``; one grid per range, in order."""
        if not ranges:
            return []
        parsed = [self._parse(text) for text in ranges]
        snapshot, self._snapshot = self._snapshot, None
        if snapshot is not None:
            served = [_slice(snapshot, rng) for rng in parsed]
            if all(grid is not None for grid in served):
                self._slot_fix = self._slot_requests(parsed) if self._prefix == "read" else []
                return [grid for grid in served if grid is not None]
            # a range the snapshot lacks: ask Google, for its own answer (and let the
            # step's write move the read ranges over it, for the next step)
        body = self._call(
            "GET",
            self._url,
            params={
                "ranges": [str(rng) for rng in parsed],
                "includeGridData": "true",
                "fields": READ_FIELDS,
            },
            doing="read",
        )
        data_by_sheet: dict[str, list[Mapping[str, Any]]] = {}
        for sheet in _list(body, "sheets"):
            props = sheet.get("properties", {})
            title = props.get("title")
            if not isinstance(title, str):
                continue
            self._remember(title, int(props.get("sheetId", 0)))
            data_by_sheet[title] = list(_list(sheet, "data"))
        grids: list[Grid] = []
        for rng in parsed:
            title = _find_title(data_by_sheet, rng.sheet)
            if title is None or not data_by_sheet[title]:
                raise BackendError(f"Google Sheets sent no cells for {rng}; nothing was read.")
            data = data_by_sheet[title].pop(0)
            start = (int(data.get("startRow", 0)), int(data.get("startColumn", 0)))
            if start != (rng.row1 - 1, rng.col1 - 1):
                raise BackendError(
                    f"Google Sheets answered {rng} with cells from row {start[0] + 1}, "
                    f"column {start[1] + 1}; nothing was read."
                )
            rows = [
                [_from_cell(cell) for cell in _list(row, "values")]
                for row in _list(data, "rowData")
            ]
            if rng.row2 is not None:
                rows = rows[: rng.row2 - rng.row1 + 1]
            grids.append(trim_grid(rows, rng.width))
        if snapshot is not None and self._prefix == "read":
            self._slot_fix = self._slot_requests(parsed)
        return grids

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        """Write every update in one ``spreadsheets.batchUpdate`` (all or nothing)."""
        parsed = [(self._parse(u.range), u.values, u.append) for u in updates]
        parsed = [(rng, values, append) for rng, values, append in parsed if len(values) > 0]
        if not parsed:
            return
        self._forget(rng.sheet for rng, _, _ in parsed)
        ids = self._sheet_ids_for([rng.sheet for rng, _, _ in parsed])
        batch: list[dict[str, Any]] = []
        for rng, values, append in parsed:
            rows = [
                {"values": [_to_cell(value, rng, i, j) for j, value in enumerate(row)]}
                for i, row in enumerate(values)
            ]
            if append:
                # appendCells: Google puts the rows after the sheet's last row with data,
                # inside this same atomic batch, so a concurrent step's rows land too.
                # Its rows start at column A: blank cells fill the columns before ours.
                lead: list[dict[str, Any]] = [{} for _ in range(rng.col1 - 1)]
                batch.append(
                    {
                        "appendCells": {
                            "sheetId": ids[rng.sheet],
                            "rows": [{"values": lead + row["values"]} for row in rows],
                            "fields": "userEnteredValue",
                        }
                    }
                )
                continue
            batch.append(
                {
                    "updateCells": {
                        "start": {
                            "sheetId": ids[rng.sheet],
                            "rowIndex": rng.row1 - 1,
                            "columnIndex": rng.col1 - 1,
                        },
                        "rows": rows,
                        "fields": "userEnteredValue",
                    }
                }
            )
        fix, self._slot_fix = self._slot_fix, []
        self._call("POST", f"{self._url}:batchUpdate", json={"requests": batch + fix}, doing="write")
        if fix:
            self._named_read = True

    def _slot_requests(self, plan: Sequence[A1Range]) -> list[dict[str, Any]]:
        """The named-range requests that make the read ranges cover ``plan`` (the step's
        read, just served): none when they already do; ``addNamedRange`` for a read range
        the tracker lacks, ``updateNamedRange`` (``fields: "range"``) for one that moves.
        A read range still covering a range of the plan keeps it; ranges read before and
        not now are kept while there is room (another step reads them)."""
        ids = {t.casefold(): i for t, i in self._sheet_ids.items()}
        wanted: list[dict[str, Any]] = []
        for rng in plan:
            sheet_id = ids.get(rng.sheet.casefold())
            if sheet_id is None:
                return []  # a sheet the answer did not name: leave the read ranges alone
            grid = _grid_range(rng, sheet_id)
            if grid not in wanted:
                wanted.append(grid)
        current: list[dict[str, Any] | None] = [
            self._slots[name][1] if name in self._slots else None for name in map(read_slot_name, range(READ_SLOTS))]
        for old in current:
            if old is not None and old not in wanted and len(wanted) < READ_SLOTS and not _is_pad(old):
                wanted.append(old)
        if len(wanted) > READ_SLOTS:
            return []  # more than the slots hold: the step reads the whole spreadsheet
        pad = dict(wanted[0], endRowIndex=wanted[0]["startRowIndex"] + 1,
                   endColumnIndex=wanted[0]["startColumnIndex"] + 1) if wanted else None
        todo = [g for g in wanted if g not in current]
        target: list[dict[str, Any] | None] = []
        for i, old in enumerate(current):
            kept = old is not None and old in wanted and current.index(old) == i
            if kept or (todo == [] and old is not None and _is_pad(old)):
                target.append(old)
            else:
                target.append(todo.pop(0) if todo else pad)
        out: list[dict[str, Any]] = []
        for i, new in enumerate(target):
            name = read_slot_name(i)
            if new is None or new == current[i]:
                continue
            if name in self._slots:
                out.append({"updateNamedRange": {"namedRange": {"namedRangeId": self._slots[name][0], "name": name,
                                                                "range": new}, "fields": "range"}})
            else:
                out.append({"addNamedRange": {"namedRange": {"name": name, "range": new}}})
        return out

    # -- more of the API --------------------------------------------------------------

    def spreadsheet_batch_update(self, requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Send arbitrary ``spreadsheets.batchUpdate`` requests in one retried call.

        Google applies them all or none.  Returns the response body (its ``replies``).
        The cached sheet ids follow sheets added, deleted or renamed here.
        """
        if not requests:
            return {"spreadsheetId": self.key, "replies": []}
        self._forget(None)
        body = self._call(
            "POST", f"{self._url}:batchUpdate", json={"requests": list(requests)}, doing="write"
        )
        replies = _list(body, "replies")
        for index, request in enumerate(requests):
            reply = replies[index] if index < len(replies) else {}
            for kind in ("addSheet", "duplicateSheet"):
                props = reply.get(kind, {}).get("properties", {})
                if isinstance(props.get("title"), str):
                    self._remember(props["title"], int(props.get("sheetId", 0)))
            if "deleteSheet" in request:
                gone = int(request["deleteSheet"].get("sheetId", 0))
                self._sheet_ids = {t: i for t, i in self._sheet_ids.items() if i != gone}
            if "updateSheetProperties" in request:
                update = request["updateSheetProperties"]
                props = update.get("properties", {})
                fields = {f.strip() for f in str(update.get("fields", "")).split(",")}
                if fields & {"title", "*"} and isinstance(props.get("title"), str):
                    self._remember(props["title"], int(props.get("sheetId", 0)))
        return dict(body) if isinstance(body, Mapping) else {}

    def metadata(self) -> dict[str, int]:
        """Sheet titles -> sheet ids, fetched once (``fields=sheets.properties``) and cached."""
        if not self._all_sheets_known:
            self._fetch_metadata()
        return dict(self._sheet_ids)

    # -- helpers ----------------------------------------------------------------------

    def _forget(self, sheets: Any) -> None:
        """A write makes the snapshot stale, and the mark too when it touches its sheet
        (``None``: any sheet)."""
        self._snapshot = None
        if sheets is None:
            self._mark = {}
            return
        touched = {s.casefold() for s in sheets}
        self._mark = {k: v for k, v in self._mark.items() if self._parse(k).sheet.casefold() not in touched}

    @staticmethod
    def _parse(text: str) -> A1Range:
        try:
            return parse_range(text)
        except ValueError as exc:
            raise BackendError(str(exc)) from exc

    def _remember(self, title: str, sheet_id: int) -> None:
        # A sheet renamed since the last look keeps its id under its new title only.
        self._sheet_ids = {t: i for t, i in self._sheet_ids.items() if i != sheet_id}
        self._sheet_ids[title] = sheet_id

    def _fetch_metadata(self, doing: str = "read") -> None:
        body = self._call("GET", self._url, params={"fields": METADATA_FIELDS}, doing=doing)
        ids: dict[str, int] = {}
        for sheet in _list(body, "sheets"):
            props = sheet.get("properties", {})
            if isinstance(props.get("title"), str):
                ids[props["title"]] = int(props.get("sheetId", 0))
        self._sheet_ids = ids
        self._all_sheets_known = True

    def _sheet_ids_for(self, titles: Sequence[str]) -> dict[str, int]:
        if any(_find_title(self._sheet_ids, t) is None for t in titles):
            if not self._all_sheets_known:
                self._fetch_metadata(doing="prepare")
        out: dict[str, int] = {}
        for title in titles:
            found = _find_title(self._sheet_ids, title)
            if found is None:
                raise BackendError(
                    f"there is no sheet {title!r} in the Google Sheet; nothing was written."
                )
            out[title] = self._sheet_ids[found]
        return out

    def _call(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Mapping[str, Any] | None = None,
        doing: str,
    ) -> Any:
        """One API call, retried on 429, 5xx, dropped connections and answers too slow to
        come; JSON body back.  Issue 8, item 16: every try is bounded in time (connect, each
        read, and the whole request on the wall clock), and so is the call (at most
        ``max_tries`` tries within ``max_total_seconds``).

        ``doing`` is ``"read"``, ``"write"`` (the call that changes the sheet) or
        ``"prepare"`` (a metadata read made for a write): it shapes the error message.
        """
        outcome = "nothing was read" if doing == "read" else "nothing was written"
        start = self._clock()
        failures: list[str] = []
        while True:
            budget = self.max_total_seconds - (self._clock() - start)
            limit = budget if self.timeout is None else min(self.timeout, budget)
            self.request_count += 1
            try:
                status, body = self._attempt(method, url, params, json, limit)
                if 200 <= status < 300:
                    return _json_of(body)
                if status not in _RETRYABLE:
                    raise _Refused(status, _refusal(status, body, outcome))
                failures.append(_status_words(status))
            except BackendError:
                raise
            except _TooSlow:
                failures.append(f"no answer within {limit:.3g} s")
            except (
                requests.ConnectionError,
                requests.Timeout,
                google.auth.exceptions.TransportError,
            ) as exc:
                if _unreachable(exc):
                    failures.append(UNREACHABLE)
                elif isinstance(exc, requests.ReadTimeout):
                    failures.append(f"no answer within {min(self.read_timeout, limit):.3g} s")
                else:
                    failures.append(f"no answer ({type(exc).__name__})")
            except google.auth.exceptions.GoogleAuthError as exc:
                raise BackendError(
                    f"could not sign in to Google ({type(exc).__name__}: {exc}); {outcome}."
                ) from exc
            except (requests.RequestException, ValueError) as exc:
                raise BackendError(
                    f"talking to Google Sheets failed ({type(exc).__name__}: {exc}); {outcome}."
                ) from exc
            tries = len(failures)
            delay = min(self.first_delay * 2 ** (tries - 1), self.max_delay)
            elapsed = self._clock() - start
            if tries >= self.max_tries or elapsed + delay > self.max_total_seconds:
                raise BackendError(_giving_up(failures, elapsed, doing, outcome))
            if self._progress is not None:
                self._progress(
                    f"{_failure_words(failures[-1])}; retrying in {delay:g} s "
                    f"(try {tries + 1} of {self.max_tries})…"
                )
            self._sleep(delay)

    def _attempt(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None,
        json: Mapping[str, Any] | None,
        limit: float,
    ) -> tuple[int, bytes]:
        """One request, given at most ``limit`` seconds (wall clock, ``clock``) from now:
        the status and the whole body, or :class:`_TooSlow`."""
        if limit <= 0:
            raise _TooSlow
        deadline = self._clock() + limit
        response = self._session.request(
            method,
            url,
            params=params,
            json=json,
            timeout=(min(self.connect_timeout, limit), min(self.read_timeout, limit)),
            stream=True,
        )
        try:
            raw = response.raw
            if not isinstance(raw, urllib3.response.BaseHTTPResponse):
                return response.status_code, response.content  # a transport that buffers
            chunks: list[bytes] = []
            while True:
                if self._clock() > deadline:
                    raise _TooSlow
                try:
                    data = raw.read1(65536, decode_content=True)
                except urllib3.exceptions.ReadTimeoutError as exc:
                    raise requests.ReadTimeout(exc) from exc
                except (urllib3.exceptions.ProtocolError, urllib3.exceptions.DecodeError) as exc:
                    raise requests.ConnectionError(exc) from exc
                if not data:
                    return response.status_code, b"".join(chunks)
                chunks.append(data)
        finally:
            response.close()


UNREACHABLE = "can't reach Google Sheets: no network connection?"
"""What a failed try says when no connection could be made at all (no DNS, refused)."""


class _Refused(BackendError):
    """Google refused the request outright (a 4xx that is not worth retrying)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _TooSlow(Exception):
    """A request ran past its wall-clock deadline (an answer that trickles or never ends)."""


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) says no connection could be made at all: the name
    did not resolve, or the connection was refused or timed out while connecting."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError,
                          requests.ConnectTimeout)):
            return True
        if isinstance(e, urllib3.exceptions.MaxRetryError):
            todo.append(e.reason)
        todo += [a for a in e.args if isinstance(a, BaseException)]
        todo += [e.__cause__, e.__context__]
    return False


def _failure_words(failure: str) -> str:
    """One failure, as the start of a progress line."""
    if failure == UNREACHABLE:
        return "can't reach Google Sheets (no network connection?)"
    if failure[0].isdigit():
        return f"Google Sheets answered {failure}"
    return f"Google Sheets gave {failure}"


def _json_of(body: bytes) -> Any:
    return _jsonlib.loads(body) if body else {}


def _giving_up(failures: list[str], elapsed: float, doing: str, outcome: str) -> str:
    n = len(failures)
    times = "once" if n == 1 else f"{n} times"
    if set(failures) == {UNREACHABLE}:
        tried = "" if n == 1 else f" (tried {n} times over {elapsed:.0f} s)"
        return f"{UNREACHABLE}{tried}; {outcome}. Check the connection, then try again."
    if len(set(failures)) == 1 and failures[0][0].isdigit():
        head = f"Google Sheets answered {failures[0]} {times} over {elapsed:.0f} s"
    elif len(set(failures)) == 1:
        head = f"Google Sheets gave {failures[0]} {times} over {elapsed:.0f} s"
    else:
        head = f"Google Sheets failed {times} over {elapsed:.0f} s ({', '.join(failures)})"
    if all(f.startswith("429") for f in failures):
        return f"{head}; {outcome}. Wait a minute and try again."
    if doing == "write":
        return (
            f"{head}; the write was not confirmed (Google applies it whole or not at all). "
            "Check the sheet, then try again in a few minutes."
        )
    return f"{head}; {outcome}. Try again in a few minutes."


def _refusal(status: int, body: bytes, outcome: str) -> str:
    message = ""
    try:
        error = _json_of(body).get("error", {})
        message = str(error.get("message", ""))
        reason = str(error.get("status", ""))
    except (ValueError, AttributeError):
        reason = ""
    detail = f": {message}" if message else ""
    label = f"{status} {reason}".strip()
    hint = ""
    if status in (401, 403):
        hint = " Share the spreadsheet with the account sheetsync signs in as (Editor)."
    elif status == 404:
        hint = " Check the spreadsheet key."
    return f"Google Sheets refused the request ({label}){detail}; {outcome}.{hint}"


def _list(obj: Any, key: str) -> list[Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def read_slot_requests(plan: Sequence[str], ids: Mapping[str, int], prefix: str = "read") -> list[dict[str, Any]]:
    """The ``addNamedRange`` requests that give a new tracker its read ranges
    (:data:`READ_SLOTS` of them) over ``plan``, the ranges its steps read; ``ids`` maps
    sheet titles to ids.  Slots the plan leaves over cover its first range's first cell."""
    folded = {t.casefold(): i for t, i in ids.items()}
    wanted: list[dict[str, Any]] = []
    for text in plan:
        rng = parse_range(text)
        grid = _grid_range(rng, folded[rng.sheet.casefold()])
        if grid not in wanted:
            wanted.append(grid)
    if not wanted or len(wanted) > READ_SLOTS:
        return []
    pad = dict(wanted[0], endRowIndex=wanted[0]["startRowIndex"] + 1, endColumnIndex=wanted[0]["startColumnIndex"] + 1)
    grids = wanted + [pad] * (READ_SLOTS - len(wanted))
    return [{"addNamedRange": {"namedRange": {"name": read_slot_name(i, prefix), "range": grid}}}
            for i, grid in enumerate(grids)]


class _Region:
    """Cells of one answered range: 0-based top-left, exclusive ends (``None``: to the
    sheet's end) and the rows as Google sent them."""

    __slots__ = ("c0", "c1", "r0", "r1", "rows")

    def __init__(self, r0: int, c0: int, r1: int | None, c1: int | None, rows: list[list[CellValue]]) -> None:
        self.r0, self.c0, self.r1, self.c1, self.rows = r0, c0, r1, c1, rows

    def covers(self, rng: A1Range) -> bool:
        if rng.row1 - 1 < self.r0 or rng.col1 - 1 < self.c0:
            return False
        if self.c1 is not None and rng.col2 > self.c1:
            return False
        return self.r1 is None or (rng.row2 is not None and rng.row2 <= self.r1)


def _region(data: Mapping[str, Any], end_row: int | None, end_col: int | None) -> _Region:
    rows = [[_from_cell(cell) for cell in _list(row, "values")] for row in _list(data, "rowData")]
    return _Region(int(data.get("startRow", 0)), int(data.get("startColumn", 0)), end_row, end_col, rows)


def _grid_range(rng: A1Range, sheet_id: int) -> dict[str, Any]:
    """``rng`` as a ``GridRange`` (an open end is left out, as Google does)."""
    grid: dict[str, Any] = {"sheetId": sheet_id, "startRowIndex": rng.row1 - 1, "startColumnIndex": rng.col1 - 1}
    if rng.row2 is not None:
        grid["endRowIndex"] = rng.row2
    grid["endColumnIndex"] = rng.col2
    return grid


def _is_pad(grid: Mapping[str, Any]) -> bool:
    """A read range of one cell holds no step's range (a step's single cells are kept by
    the step that reads them)."""
    return (grid.get("endRowIndex") == int(grid.get("startRowIndex", 0)) + 1
            and grid.get("endColumnIndex") == int(grid.get("startColumnIndex", 0)) + 1)


def _slice(snapshot: Mapping[str, list[_Region]], rng: A1Range) -> Grid | None:
    """``rng``'s cells from the answered regions of a snapshot, shaped as
    :meth:`GSheetsBackend.read_ranges` returns them; ``None`` when no region covers it."""
    title = _find_title(snapshot, rng.sheet)
    if title is None:
        return None
    region = next((r for r in snapshot[title] if r.covers(rng)), None)
    if region is None:
        return None
    top, left = rng.row1 - 1 - region.r0, rng.col1 - 1 - region.c0
    rows = region.rows[top: None if rng.row2 is None else rng.row2 - region.r0]
    return trim_grid([row[left: rng.col2 - region.c0] for row in rows], rng.width)


def _find_title(titles: Mapping[str, Any], wanted: str) -> str | None:
    """The key of ``titles`` naming sheet ``wanted``; Google matches titles ignoring case."""
    if wanted in titles:
        return wanted
    folded = wanted.casefold()
    return next((t for t in titles if t.casefold() == folded), None)


def _from_cell(cell: Mapping[str, Any]) -> CellValue:
    value = cell.get("userEnteredValue")
    if not isinstance(value, Mapping):
        return None
    if "formulaValue" in value:
        text = str(value["formulaValue"])
        return Formula(text) if text.startswith("=") else text
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "numberValue" in value:
        number = value["numberValue"]
        if isinstance(number, int):
            return number
        number = float(number)
        if math.isfinite(number) and number.is_integer():
            return int(number)
        return number
    return None


def _to_cell(value: object, rng: A1Range, i: int, j: int) -> dict[str, Any]:
    return cell_data(value, rng.cell(i, j))


def cell_data(value: object, where: str = "") -> dict[str, Any]:
    """One ``CellData`` for ``updateCells``: a ``str`` is always ``stringValue`` (literal
    text, never a formula), a :class:`Formula` is ``formulaValue``; ``None`` clears."""
    if value is None or value == "":
        return {}
    if isinstance(value, Formula):
        return {"userEnteredValue": {"formulaValue": value.text}}
    if isinstance(value, bool):
        return {"userEnteredValue": {"boolValue": value}}
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise BackendError(f"{where}: cannot write {value!r}; nothing was written.")
        return {"userEnteredValue": {"numberValue": value}}
    if isinstance(value, str):
        return {"userEnteredValue": {"stringValue": value}}
    raise BackendError(f"{where}: cannot write a {type(value).__name__} ({value!r}); nothing was written.")
