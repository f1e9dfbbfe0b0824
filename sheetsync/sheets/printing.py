"""How a tracker prints (issue 22): the paper, and each sheet's print area over the rows in use.

A sheet's print setup is layout data (:class:`~sheetsync.core.layout.PrintSetup`); what
depends on the battle is where the printed area stops.  A tracker keeps empty capacity
rows under each table, so :func:`print_area` stops a sheet's area at the last row that
holds a value in one of its tables (or, for an area such as the hex map, at the last row
and column holding one), never below the fixed cells, titles and header rows.  Formulas
don't count: a live formula sits in every capacity row.

The workbook writers call it when a tracker is drawn and before every save of a step
(:func:`sheetsync.sheets.draw.fit_print_areas` on openpyxl,
:func:`sheetsync.backends.xlsx_package.refresh_print_areas` on the package), so the area
follows the battle step by step.  The paper is the user's choice when the tracker is made
(``--paper``); it stays in each sheet's page setup, which no step rewrites.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sheetsync.core.a1 import col_index, col_letter
from sheetsync.core.layout import Layout, PrintSetup

__all__ = ["PAPER", "PAPER_CODES", "print_area", "printed_sheets"]

PAPER: dict[str, int] = {"a4": 9, "letter": 1}
"""The paper a tracker prints on, as the ``paperSize`` code of an xlsx page setup."""
PAPER_CODES: dict[int, str] = {code: name for name, code in PAPER.items()}

Rows = Mapping[int, Mapping[int, Any]]
"""A sheet's cells holding a value: ``{row: {column: value}}`` (1-based), formulas left out."""


def printed_sheets(lay: Layout) -> dict[str, PrintSetup]:
    """The print setup of every sheet that prints (every sheet not hidden): the layout's,
    else landscape, one page wide."""
    return {s: lay.printing.get(s, PrintSetup()) for s in lay.sheets if s not in lay.hidden}


def _bounds(area: str) -> tuple[int, int, int, int]:
    """``A1:K20`` as (first column, first row, last column, last row)."""
    import re

    m = re.fullmatch(r"\$?([A-Z]+)\$?(\d+):\$?([A-Z]+)\$?(\d+)", area.rpartition("!")[2])
    if m is None:
        raise ValueError(f"{area!r} is not a range such as A1:K20")
    return col_index(m.group(1)), int(m.group(2)), col_index(m.group(3)), int(m.group(4))


def _last_in(rows: Rows, top: int, bottom: int | None, left: int, right: int) -> tuple[int, int]:
    """The last row and the last column holding a value inside the rectangle (0, 0 when none)."""
    last_row = last_col = 0
    for r, cells in rows.items():
        if r < top or (bottom is not None and r > bottom):
            continue
        used = [c for c, v in cells.items() if left <= c <= right and v not in (None, "")]
        if used:
            last_row, last_col = max(last_row, r), max(last_col, max(used))
    return last_row, last_col


def print_area(lay: Layout, sheet: str, rows: Rows) -> str | None:
    """The print area of ``sheet`` (``A1:N12``): from A1 across its tables' visible columns,
    its named cells and the used part of its areas (a layout's ``PrintSetup.area`` bounds
    the columns and rows), down to the last row in use.  ``None`` for a sheet with nothing
    laid out on it; a setup with ``rows_in_use=False`` keeps its own fixed area."""
    setup = lay.printing.get(sheet, PrintSetup())
    if setup.area and not setup.rows_in_use:
        return setup.area
    last_row = last_col = 0
    for block in (b for b in lay.blocks.values() if b.sheet == sheet):
        shown = [block.first_col + j for j, c in enumerate(block.columns) if not c.hidden]
        last_col = max([last_col, *shown])
        used, _ = _last_in(rows, block.first_row, block.last_row, block.first_col, block.last_col)
        last_row = max(last_row, block.header_row, used)
    for cell in (c for c in lay.cells.values() if c.sheet == sheet):
        col, row, _, _ = _bounds(f"{cell.address}:{cell.address}")
        last_row, last_col = max(last_row, row), max(last_col, col)
    for area in (a for a in lay.areas.values() if a.sheet == sheet):
        used_row, used_col = _last_in(rows, area.first_row, area.first_row + area.rows - 1, area.first_col,
                                      area.first_col + area.cols - 1)
        last_row = max(last_row, used_row or area.first_row)
        last_col = max(last_col, used_col or area.first_col)
    fixed_row, fixed_col = lay.static_extent(sheet)  # the deferred fixed cells by their bounds
    last_row, last_col = max(last_row, fixed_row), max(last_col, fixed_col)
    if not last_row:
        return None
    if setup.area:
        _, _, right, bottom = _bounds(setup.area)
        last_col, last_row = right, min(last_row, bottom)
    return f"A1:{col_letter(last_col)}{last_row}"
