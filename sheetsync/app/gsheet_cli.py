"""Google Sheets commands: ``gsheet init|build|resolve|undo|end``, ``upload``, ``download``
and ``watch``, all from the Storyteller's laptop through gspread (no server needed)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sheetsync.core.errors import BackendError
from sheetsync.core.layout import Layout
from sheetsync.sheets.backend import RangeUpdate, SheetBackend

__all__ = ["copy_tracker", "gsheet_backend", "gspread_client", "house_rule_rows_of", "init_spreadsheet",
           "service_account_key", "spreadsheet_key", "tracker_ranges"]

SERVICE_ACCOUNT_ENV = "SHEETSYNC_SERVICE_ACCOUNT"


def spreadsheet_key(text: str) -> str:
    """A spreadsheet's key from its key or its URL."""
    m = re.search(r"/spreadsheets/d/([A-Za-z0-9_-]+)", text)
    return m.group(1) if m else text.strip()


def gspread_client(service_account: Path | None = None, *, oauth: bool = False) -> Any:
    """A gspread client: a service-account file (flag or ``SHEETSYNC_SERVICE_ACCOUNT``), or
    gspread's OAuth flow (a browser opens once; the token is cached by gspread).

    A key file that can't be used is refused with its name and what is wrong with it
    (issue 8, item 17); no request is made."""
    import gspread

    path = service_account or (Path(os.environ[SERVICE_ACCOUNT_ENV]) if os.environ.get(SERVICE_ACCOUNT_ENV) else None)
    if path is not None and not oauth:
        info = service_account_key(path)
        try:
            return gspread.service_account_from_dict(info)
        except (ValueError, TypeError, IndexError) as exc:  # google-auth / cryptography on the key
            raise BackendError(
                f"{path}: the private_key of this service-account key can't be read ({_first_line(exc)}); "
                "it was cut short or edited. Download a new JSON key for the service account "
                "(Google Cloud console > IAM > Service accounts > Keys)."
            ) from None
    if oauth:
        try:
            return gspread.oauth()
        except FileNotFoundError as exc:
            raise BackendError(f"credentials file not found: {exc.filename}") from None
        except Exception as exc:  # google-auth errors: bad client file, refused token
            raise BackendError(f"Google sign-in failed: {exc}") from None
    raise BackendError(f"no Google credentials: pass --service-account FILE, set {SERVICE_ACCOUNT_ENV}, or use --oauth "
                       "(README: 'Google Sheets')")


SERVICE_ACCOUNT_FIELDS = ("client_email", "private_key", "token_uri")
"""What google-auth needs of a service-account key."""


def service_account_key(path: Path) -> dict[str, Any]:
    """The contents of a service-account JSON key, checked: a file that is missing,
    unreadable, not JSON, or JSON but not a service-account key (an OAuth client ID, or
    fields missing) is a :class:`BackendError` naming the file and what is wrong."""
    import json

    fix = ("Download a JSON key for the service account (Google Cloud console > IAM > "
           "Service accounts > Keys > Add key) and pass that file.")
    from sheetsync.sheets.disk import refuse_special_file

    if not path.is_dir():  # a folder is named below, as before; a FIFO would hang the read
        refuse_special_file(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise BackendError(f"{path}: no such service-account key file. {fix}") from None
    except UnicodeDecodeError:
        raise BackendError(f"{path}: this is not a service-account key: the file is not text "
                           f"(a key is a small JSON file). {fix}") from None
    except OSError as exc:
        raise BackendError(f"{path}: can't read the service-account key file ({exc.strerror or exc}).") from None
    try:
        info = json.loads(text)
    except json.JSONDecodeError as exc:
        what = "the file is empty" if not text.strip() else \
            f"it is not JSON (it goes wrong at line {exc.lineno}, column {exc.colno})"
        raise BackendError(f"{path}: this is not a service-account key: {what}. {fix}") from None
    if not isinstance(info, dict):
        raise BackendError(f"{path}: this is JSON but not a service-account key (a key is one JSON object "
                           f"with {', '.join(SERVICE_ACCOUNT_FIELDS)}). {fix}")
    kind = info.get("type")
    if kind in ("authorized_user",) or "installed" in info or "web" in info:
        raise BackendError(f"{path}: this is an OAuth client or user file, not a service-account key: "
                           f"use it with --oauth instead (README: 'Google Sheets'), or {fix[0].lower()}{fix[1:]}")
    if kind is not None and kind != "service_account":
        raise BackendError(f"{path}: this is JSON but not a service-account key (its type is {kind!r}, "
                           f"not 'service_account'). {fix}")
    missing = [f for f in SERVICE_ACCOUNT_FIELDS if not isinstance(info.get(f), str) or not info[f].strip()]
    if missing:
        raise BackendError(f"{path}: this is JSON but not a whole service-account key: "
                           f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing. {fix}")
    return info


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0].split(". See https://")[0] if text else type(exc).__name__


API_ROOT_ENV = "SHEETSYNC_SHEETS_API_ROOT"
"""Where the Sheets API is (default Google's); set it to talk to an emulator."""


def gsheet_backend(spreadsheet: str, client: Any, **kwargs: Any) -> Any:
    from sheetsync.backends.gsheets import API_ROOT, GSheetsBackend

    kwargs.setdefault("api_root", os.environ.get(API_ROOT_ENV) or API_ROOT)
    return GSheetsBackend(client, spreadsheet_key(spreadsheet), **kwargs)


def init_spreadsheet(backend: Any, lay: Layout | None = None, *, system: str | None = None,
                     capacity: Mapping[str, int] | None = None) -> int:
    """Lay a blank tracker of rule system ``system`` (an id or alias; default the battalion
    system) into the spreadsheet in one batchUpdate.  Returns the number of requests inside
    it.  The battalion tracker is laid by its own initializer (``lay`` is its layout);
    any other system's is drawn from its layout data at ``capacity`` (DESIGN "Several rule
    systems on one seam"), with its steps' captions on the buttons and its House Rules."""
    from sheetsync.core.registry import DEFAULT, find_system

    chosen = find_system(system)
    if chosen.id == DEFAULT:
        from sheetsync.backends.gsheets_layout import init_requests

        requests = init_requests(backend.metadata(), lay or (chosen.layout(capacity) if capacity else None))
    else:
        from sheetsync.backends.gsheets_draw import init_requests_for

        requests = init_requests_for(chosen.layout(capacity), backend.metadata(),
                                     captions=[step.caption for step in chosen.steps],
                                     house_rules=house_rule_rows_of(chosen),
                                     title=f"sheetsync {chosen.title} tracker")
    requests = [*requests, *_read_slots(chosen, lay, capacity, backend.metadata(), requests)]
    backend.spreadsheet_batch_update(requests)
    return len(requests)


def _read_slots(system: Any, lay: Layout | None, capacity: Mapping[str, int] | None, existing: Mapping[str, int],
                requests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The new tracker's named read ranges over what its steps read, so its first step
    reads only those (:meth:`sheetsync.backends.gsheets.GSheetsBackend.read_mark`)."""
    from sheetsync.backends.gsheets import read_slot_requests

    ids = dict(existing)
    for request in requests:
        props = request.get("addSheet", {}).get("properties", {})
        if isinstance(props.get("title"), str):
            ids[props["title"]] = int(props.get("sheetId", 0))
    if lay is not None and system.id == "bbn":
        from importlib import import_module

        steps = import_module("sheetsync.systems.bbn.tracker.steps").BbnSteps(lay)
    else:
        steps = system.tracker_steps(capacity or None)
    plan = [rng for action in (None, "build", "resolve", "undo", "end") for rng in steps.read_plan(action)]
    # every step's ranges (a step may read fewer than all), and the first Resolve's (issue 23)
    return [*read_slot_requests(plan, ids), *read_slot_requests(steps.read_plan("resolve"), ids, "next")]


def house_rule_rows_of(system: Any) -> list[dict[str, Any]]:
    """A system's House Rules rows (key, value, default, ruling) with each value's choices
    (``"choices"``: the value cell's dropdown): the rows from the system's
    ``house_rule_rows()`` (in ``rules/<id>/formulas.py`` or ``sheet.py``), else made from
    ``HouseRules.describe()`` (value = default, Yes/No for a flag)."""
    from sheetsync.core.registry import room

    def shown(value: Any) -> Any:
        if isinstance(value, bool):
            return "Yes" if value else "No"
        return f"{value:g}" if isinstance(value, float) else value

    described: dict[str, tuple[str, Any, list[Any]]] = {}
    try:
        described = room(system, "rules.models").HouseRules.describe()
    except (ImportError, AttributeError):
        pass
    rows: list[Any] | None = None
    for name in ("tracker.formulas", "tracker.layout"):
        try:
            module = room(system, name)
        except ImportError:
            continue
        make = getattr(module, "house_rule_rows", None)
        if callable(make):
            rows = list(make())
            break
    if rows is None:
        rows = [(key, shown(default), shown(default), text) for key, (text, default, _c) in described.items()]
    out = []
    for key, value, default, ruling in rows:
        choices = described.get(str(key), ("", None, []))[2]
        out.append({"key": key, "value": value, "default": default, "ruling": ruling,
                    "choices": [shown(c) for c in choices]})
    return out


def tracker_ranges(lay: Layout) -> list[str]:
    """Every block and named cell that holds a battle (the hidden Lists excepted), and
    every block's header row: a step may write a header (Build Cohorts names the cohorts
    over the Battle sheet's Health-by-phase table, the chart's legend), so a copy without
    them read "Cohort 1..4" (issue 22.3).  The State's are in its own ranges below."""
    ranges = [b.range() for b in lay.blocks.values() if b.sheet != "Lists"]
    ranges += [b.header_range() for b in lay.blocks.values() if b.sheet not in ("Lists", "State")]
    ranges += [c.ref for c in lay.cells.values()]
    ranges += [a.range() for a in getattr(lay, "areas", {}).values()]
    from sheetsync.sheets.marks import HEAD_RANGE

    # the mark, the capacity and where a Resolve starts reading; the appended undo records
    ranges += [HEAD_RANGE, "State!C1:F"]
    return ranges


def copy_tracker(src: SheetBackend, dst: SheetBackend, lay: Layout | None = None) -> int:
    """Copy a whole battle between two trackers (workbook ↔ Google Sheet): one read, one
    write.  Returns the number of cells with a value."""
    if lay is None:
        from sheetsync.core.registry import room

        lay = room("bbn", "tracker.layout").layout()
    ranges = tracker_ranges(lay)
    grids = src.read_ranges(ranges)
    updates = []
    filled = 0
    for text, grid in zip(ranges, grids, strict=True):
        from sheetsync.sheets.backend import parse_range

        rng = parse_range(text)
        height = (rng.row2 - rng.row1 + 1) if rng.row2 is not None else len(grid)
        rows = [list(r) for r in grid] + [[None] * rng.width for _ in range(max(0, height - len(grid)))]
        filled += sum(1 for r in grid for v in r if v is not None)
        if rows:
            end = rng.row1 + len(rows) - 1
            updates.append(RangeUpdate(f"{text.rsplit('!', 1)[0]}!{text.rsplit('!', 1)[1].split(':')[0]}:"
                                       f"{_col(rng.col2)}{end}" if ":" in text else text, rows))
    dst.write_ranges(updates)
    return filled


def _col(index: int) -> str:
    from sheetsync.sheets.backend import col_letter

    return col_letter(index)
