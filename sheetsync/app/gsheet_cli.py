"""Google Sheets commands: ``gsheet init|build|resolve|undo|end``, ``upload``, ``download``
and ``watch``, all from the Storyteller's laptop through gspread (no server needed)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from sheetsync.errors import BackendError
from sheetsync.sheets.backend import RangeUpdate, SheetBackend
from sheetsync.sheets.layout import Layout, layout

__all__ = ["copy_tracker", "gsheet_backend", "gspread_client", "init_spreadsheet", "spreadsheet_key", "tracker_ranges"]

SERVICE_ACCOUNT_ENV = "SHEETSYNC_SERVICE_ACCOUNT"


def spreadsheet_key(text: str) -> str:
    """A spreadsheet's key from its key or its URL."""
    m = re.search(r"/spreadsheets/d/([A-Za-z0-9_-]+)", text)
    return m.group(1) if m else text.strip()


def gspread_client(service_account: Path | None = None, *, oauth: bool = False) -> Any:
    """A gspread client: a service-account file (flag or ``SHEETSYNC_SERVICE_ACCOUNT``), or
    gspread's OAuth flow (a browser opens once; the token is cached by gspread)."""
    import gspread

    path = service_account or (Path(os.environ[SERVICE_ACCOUNT_ENV]) if os.environ.get(SERVICE_ACCOUNT_ENV) else None)
    try:
        if path is not None and not oauth:
            return gspread.service_account(filename=str(path))
        if oauth:
            return gspread.oauth()
    except FileNotFoundError as exc:
        raise BackendError(f"credentials file not found: {exc.filename}") from None
    except Exception as exc:  # google-auth errors: bad key file, refused token
        raise BackendError(f"Google sign-in failed: {exc}") from None
    raise BackendError(f"no Google credentials: pass --service-account FILE, set {SERVICE_ACCOUNT_ENV}, or use --oauth "
                       "(README: 'Google Sheets')")


API_ROOT_ENV = "SHEETSYNC_SHEETS_API_ROOT"
"""Where the Sheets API is (default Google's); set it to talk to an emulator."""


def gsheet_backend(spreadsheet: str, client: Any, **kwargs: Any) -> Any:
    from sheetsync.backends.gsheets import API_ROOT, GSheetsBackend

    kwargs.setdefault("api_root", os.environ.get(API_ROOT_ENV) or API_ROOT)
    return GSheetsBackend(client, spreadsheet_key(spreadsheet), **kwargs)


def init_spreadsheet(backend: Any, lay: Layout | None = None) -> int:
    """Lay a blank tracker into the spreadsheet in one batchUpdate.  Returns the number of
    requests inside it."""
    from sheetsync.backends.gsheets_layout import init_requests

    requests = init_requests(backend.metadata(), lay)
    backend.spreadsheet_batch_update(requests)
    return len(requests)


def tracker_ranges(lay: Layout) -> list[str]:
    """Every block and named cell that holds a battle (the hidden Lists excepted)."""
    ranges = [b.range() for b in lay.blocks.values() if b.sheet != "Lists"]
    ranges += [c.ref for c in lay.cells.values()]
    return ranges


def copy_tracker(src: SheetBackend, dst: SheetBackend, lay: Layout | None = None) -> int:
    """Copy a whole battle between two trackers (workbook ↔ Google Sheet): one read, one
    write.  Returns the number of cells with a value."""
    lay = lay or layout()
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
