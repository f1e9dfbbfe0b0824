"""A blank battalion tracker laid out in a Google Sheet: the generic Google renderer
(:func:`sheetsync.backends.gsheets_draw.init_requests_for`) over the battalion layout,
whose decorations are data (``app/bbn/layout.py``, issue 9), sent as ONE
``spreadsheets:batchUpdate`` (which Google applies atomically).

The same cells and decorations as the workbook template: headers and fixed cells,
dropdown validations, checkboxes for the watcher's buttons, state and outcome colours,
rolled dice told apart from typed ones (R25), undone Log rows struck through, the Health
scale and chart under the cohort lines, the Battle status merged and wrapped, warning-only
protection of the computed cells, named ranges for every block, frozen headers, hidden
Lists and State sheets.  Nothing here is battalion-only but the choice of layout.
"""

from __future__ import annotations

from typing import Any

from sheetsync.backends.gsheets_draw import (
    COMPUTED_RGB,
    HEADER_RGB,
    INPUT_RGB,
    SHEET_ID_BASE,
    _grid,
    _rgb,
    init_requests_for,
)
from sheetsync.core.layout import Layout
from sheetsync.core.registry import room

__all__ = ["COMPUTED_RGB", "HEADER_RGB", "INPUT_RGB", "SHEET_ID_BASE", "_grid", "_rgb", "init_requests"]


def init_requests(existing: dict[str, int], lay: Layout | None = None) -> list[dict[str, Any]]:
    """The batchUpdate requests that lay a blank tracker into a spreadsheet whose sheets are
    ``existing`` (title → sheet id).  A spreadsheet that already has a tracker sheet is
    refused; a lone empty default sheet ("Sheet1") is removed."""
    return init_requests_for(lay or room("bbn", "tracker.layout").layout(), existing)
