"""The blank battalion tracker workbook: the generic drawer (:mod:`sheetsync.sheets.draw`)
over the battalion layout, whose decorations are data (``app/bbn/layout.py``, issue 9).

Frozen header rows, dropdowns on every choice, state colours, input cells (pale yellow,
unlocked) visibly different from computed cells (grey, locked; sheets protected with no
password so typing into one warns), a defined name for every block, the Odds formulas,
a data bar on Health and a native chart of each cohort's Health by phase, placed under
the cohort lines and scaled to the phases played.  Headers sit over their values (numbers
centred, text left), rolled dice show apart from typed ones (R25), undone Log rows are
struck through, and every sheet prints fitted to the page width with its header rows
repeated.  The "Tick to run" boxes, which only `sheetsync watch` on Google Sheets acts on,
say so.

What stays here is what a workbook of a battle needs beyond its blank drawing: how many
cohorts its chart draws (the Battle summary's filled lines) and the layout a saved
tracker records in ``State!B2``.
"""

from __future__ import annotations

from typing import Any

from openpyxl import Workbook
from openpyxl.worksheet.worksheet import Worksheet

from sheetsync.core.errors import SheetFormatError
from sheetsync.sheets import draw
from sheetsync.sheets.backend import Formula
from sheetsync.sheets.style import (  # noqa: F401  (align_of and the fills are part of this module's surface)
    COMPUTED_FILL,
    HEADER_FILL,
    HEADER_FONT,
    INPUT_FILL,
    NUMBER_KINDS,
    THIN,
    TITLE_FONT,
    align_of,
)
from sheetsync.systems.bbn.system import SYSTEM
from sheetsync.systems.bbn.tracker.layout import (
    BUTTON_LABELS,
    CHART_COHORTS,
    FROZEN,
    MERGED,
    OUTCOME_COLOURS,
    PAGES_WIDE,
    PORTRAIT,
    PRINT_TITLES,
    PROTECTED_SHEETS,
    ROLLED_FILL,
    ROLLED_FONT,
    STATE_COLOURS,
    UNDONE_FONT,
    Layout,
    chart_anchor,
    house_choices,
    layout,
    log_undone_formula,
    rolled_formula,
)

__all__ = ["BUTTON_LABELS", "FROZEN", "MARK", "MERGED", "OUTCOME_COLOURS", "PAGES_WIDE", "PORTRAIT", "PRINT_TITLES",
           "PROTECTED_SHEETS", "ROLLED_FILL", "ROLLED_FONT", "STATE_COLOURS", "UNDONE_FONT", "add_chart", "align_of",
           "build_template", "chart_anchor", "chart_cohorts", "defined_names", "house_choices", "log_undone_formula",
           "phases_played", "restore_chart", "rolled_formula", "static_cells", "workbook_layout"]

MARK = f"{SYSTEM.id}@{SYSTEM.version}"
"""``State!B1`` of a battalion tracker: the system and the version of its layout (as
:func:`sheetsync.sheets.marks.mark_updates` writes it); ``State!B2`` holds its capacity."""


def defined_names(lay: Layout) -> dict[str, str]:
    """Every defined name of the tracker and the range it points at."""
    return draw.defined_names(lay)


def phases_played(ws: Worksheet, lay: Layout) -> int:
    """How many phases the Battle sheet's Health-by-phase table holds (its row 0 is the
    start, so a table with rows 0..3 has 3)."""
    block = lay.block("Battle_HealthByPhase")
    filled = [r for r in range(block.first_row, (block.last_row or block.first_row) + 1)
              if ws.cell(row=r, column=block.first_col).value not in (None, "")]
    return max(0, (max(filled) - block.first_row) if filled else 0)


def add_chart(wb: Workbook, lay: Layout, cohorts: int | None = None, phases: int | None = None) -> None:
    """A native line chart of each cohort's Health by phase on the Battle sheet, its axis
    running over the phases played so far (``phases``, by default what the sheet's
    Health-by-phase table holds), under the cohort lines (the layout's chart, drawn by
    :func:`sheetsync.sheets.draw.draw_charts`).

    openpyxl does not keep charts it reads, so the Excel backend calls this again before
    every save: the axis grows with each phase and shrinks on undo."""
    draw.draw_charts(wb, lay, series=cohorts if cohorts is not None else CHART_COHORTS,
                     rows=None if phases is None else phases + 1)


def chart_cohorts(ws: Worksheet, lay: Layout) -> int:
    """How many cohorts the Battle summary lists (one line each, from the top): the chart
    draws each of them (a cohort may well be called "Cohort 7", so the Health table's
    placeholder headers can't tell)."""
    block = lay.block("Battle_Summary")
    col = block.first_col + block.index("cohort")
    return sum(1 for i in range(block.rows or 0) if ws.cell(row=block.first_row + i, column=col).value not in (None, ""))


def workbook_layout(wb: Workbook) -> Layout:
    """The layout of a tracker workbook: laid out with the capacity it records in
    ``State!B2`` (issue 9; a tracker without one holds a blank tracker's)."""
    import json

    value = wb["State"]["B2"].value if "State" in wb.sheetnames else None
    try:
        capacity = json.loads(value) if isinstance(value, str) and value.strip() else None
    except (ValueError, RecursionError):
        capacity = None  # a damaged capacity is refused by the step that reads it
    return layout(capacity=capacity if isinstance(capacity, dict) else None)


def restore_chart(wb: Workbook) -> None:
    """Put the Health chart back before a save (openpyxl drops charts it reads), over every
    cohort the tracker's Health-by-phase table names, at the tracker's own rows."""
    try:
        lay = workbook_layout(wb)
    except SheetFormatError:  # a damaged capacity: the step that reads it refuses it
        return
    add_chart(wb, lay, max(1, chart_cohorts(wb["Battle"], lay)))


def _row_col(address: str) -> tuple[int, int]:
    from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

    letters, row = coordinate_from_string(address)
    return row, column_index_from_string(letters)


def static_cells(lay: Layout) -> list[tuple[str, int, int, Any]]:
    """Every cell a blank tracker holds: titles, headers, labels, the fixed cells, the
    buttons' unticked boxes, lists, House Rules rows, the Odds formulas (as ``Formula``)
    and the mark.  The openpyxl template and the Google Sheets initializer both write
    exactly these, from the layout (so a tracker copied between the two is the same cell
    for cell)."""
    out: list[tuple[str, int, int, Any]] = []
    for cell in lay.cells.values():
        row, col = _row_col(cell.address)
        if col > 1:
            out.append((cell.sheet, row, col - 1, cell.label))
    for block in lay.blocks.values():
        if block.title and block.header_row > 1:
            out.append((block.sheet, block.header_row - 1, block.first_col, block.title))
        for j, column in enumerate(block.columns):
            out.append((block.sheet, block.header_row, block.first_col + j, column.header))
    for st in lay.static:
        row, col = _row_col(st.address)
        out.append((st.sheet, row, col, Formula(str(st.value)) if st.formula else st.value))
    for target in lay.checkboxes:
        sheet, r1, c1, r2, _c2 = lay.box(target)
        out += [(sheet, r, c1, False) for r in range(r1, r2 + 1)]
    for target, make in lay.formulas.items():
        name, _, key = target.partition(".")
        block = lay.block(name)
        col = block.first_col + block.index(key)
        out += [(block.sheet, block.first_row + i, col, Formula(make(lay, block.first_row + i)))
                for i in range(block.rows or 0)]
    lists = lay.block("Lists_Table")
    for j, values in enumerate(lay.lists.values()):
        out += [(lists.sheet, lists.first_row + i, lists.first_col + j, v) for i, v in enumerate(values)]
    out.append(("State", 1, 2, draw.mark_text(lay)))  # issue 9: what the tracker is, and what it holds
    out.append(("State", 2, 2, draw.capacity_text(lay)))
    return out


def build_template(lay: Layout | None = None, *, cohorts_in_chart: int = CHART_COHORTS) -> Workbook:
    """A blank tracker workbook: the generic drawer over the battalion layout, its chart
    drawing ``cohorts_in_chart`` cohorts."""
    lay = lay or layout()
    wb = draw.draw_workbook(lay)
    if cohorts_in_chart != CHART_COHORTS:
        add_chart(wb, lay, cohorts_in_chart)
    return wb
