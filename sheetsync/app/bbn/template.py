"""The blank tracker workbook, generated from the layout map with openpyxl.

Frozen header rows, dropdowns on every choice, state colours, input cells (pale yellow,
unlocked) visibly different from computed cells (grey, locked; sheets protected with no
password so typing into one warns), a defined name for every block, the Odds formulas,
a data bar on Health and a native chart of each cohort's Health by phase, placed under
the cohort lines and scaled to the phases played.  Headers sit over their values (numbers
centred, text left), rolled dice show apart from typed ones, undone Log rows are struck
through, and every sheet prints fitted to the page width with its header rows repeated.
The "Tick to run" boxes, which only `sheetsync watch` on Google Sheets acts on, say so.
"""

from __future__ import annotations

from copy import copy
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import LineChart, Reference
from openpyxl.formatting.rule import CellIsRule, DataBarRule, FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill, Protection
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.worksheet import Worksheet

from sheetsync.app.bbn.layout import LISTS, Block, Layout, capacity_json, layout
from sheetsync.app.bbn.writer import house_rules_rows, odds_formula
from sheetsync.errors import SheetFormatError
from sheetsync.rules.bbn.system import SYSTEM
from sheetsync.sheets.backend import Formula, col_letter, quote_sheet
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

__all__ = ["FROZEN", "MARK", "MERGED", "PROTECTED_SHEETS", "ROLLED_FONT", "STATE_COLOURS", "UNDONE_FONT", "add_chart",
           "align_of", "build_template", "chart_anchor", "chart_cohorts", "defined_names", "house_choices",
           "log_undone_formula", "phases_played", "restore_chart", "rolled_formula", "static_cells", "workbook_layout"]

STATE_COLOURS = {"Active": "C6EFCE", "Scared": "FFEB9C", "Knocked Out": "FFC7CE", "Stabilized": "BDD7EE", "Dead": "808080"}
OUTCOME_COLOURS = {"hit": "C6EFCE", "miss": "FFEB9C", "refused": "FFC7CE", "done": "DDEBF7"}
ROLLED_FONT = "1F5FAF"
"""Roll cells holding a die sheetsync rolled: blue italics on pale blue (typed dice stay black/grey)."""
ROLLED_FILL = "DDEBF7"
UNDONE_FONT = "9C9C9C"
"""Log rows of an undone phase: grey, struck through."""
MERGED = {"Battle": ("B4:D4", "B5:D5")}
"""Merged cells per sheet: the Battle status and last action get room to wrap."""
MARK = f"{SYSTEM.id}@{SYSTEM.version}"
"""``State!B1`` of a battalion tracker: the system and the version of its layout (as
:func:`sheetsync.app.steps.mark_updates` writes it); ``State!B2`` holds its capacity."""




def rolled_formula(lay: Layout) -> str:
    """The conditional-format test (relative to the first Orders row) for a Roll cell that
    holds a die sheetsync rolled (R25): the hidden Roll source column says Rolled."""
    o = lay.block("Orders_Table")
    return f'${o.letter("roll_source")}{o.first_row}="Rolled"'


def log_undone_formula(lay: Layout, row: int | None = None) -> str:
    """The conditional-format test (relative to the first Log row, or to ``row``) for a Log
    row whose phase was undone later: an "Undo Phase" row of the same phase sits below it."""
    b = lay.block("Log_Table")
    ph, task, r = b.letter("phase"), b.letter("task"), row or b.first_row
    end = r + lay.log_rows
    return (f'AND(${task}{r}<>"Undo Phase",${ph}{r}<>"",'
            f'COUNTIFS(${task}{r + 1}:${task}${end},"Undo Phase",${ph}{r + 1}:${ph}${end},${ph}{r})>0)')


def defined_names(lay: Layout) -> dict[str, str]:
    """Every defined name of the tracker and the range it points at."""
    names: dict[str, str] = {}
    for b in lay.blocks.values():
        start = f"${col_letter(b.first_col)}${b.first_row}"
        end_row = b.last_row if b.last_row is not None else b.first_row + lay.log_rows
        names[b.name] = f"{quote_sheet(b.sheet)}!{start}:${col_letter(b.last_col)}${end_row}"
    for c in lay.cells.values():
        col = "".join(ch for ch in c.address if ch.isalpha())
        row = "".join(ch for ch in c.address if ch.isdigit())
        names[c.name] = f"{quote_sheet(c.sheet)}!${col}${row}"
    names["Cohort_Names"] = lay.block("Cohorts_Setup").column_ref("name")
    names["Character_Names"] = lay.block("Characters_Table").column_ref("name")
    names["Cohort_Pool_Names"] = lay.block("Cohorts_Pools").column_ref("name")
    lists = lay.block("Lists_Table")
    for i, (key, values) in enumerate(LISTS.items()):
        letter = col_letter(lists.first_col + i)
        names[f"List_{key}"] = f"Lists!${letter}${lists.first_row}:${letter}${lists.first_row + len(values) - 1}"
    return names


def _validation_source(lay: Layout, choices: str) -> str:
    if choices.startswith("="):
        return choices
    return f"=List_{choices}"


def _write_block(ws: Worksheet, lay: Layout, block: Block, *, fill_rows: bool = True) -> None:
    if block.title and block.header_row > 1:
        ws.cell(row=block.header_row - 1, column=block.first_col).font = Font(bold=True, size=12)
    for j, col in enumerate(block.columns):
        c = ws.cell(row=block.header_row, column=block.first_col + j)
        c.fill, c.font = HEADER_FILL, HEADER_FONT
        c.alignment = Alignment(wrap_text=True, vertical="center", horizontal=align_of(col.kind))
        letter = col_letter(block.first_col + j)
        current = ws.column_dimensions[letter].width or 0
        ws.column_dimensions[letter].width = max(current, col.width)
    if not fill_rows or block.rows is None:
        return
    for j, col in enumerate(block.columns):
        first = ws.cell(row=block.first_row, column=block.first_col + j)
        first.fill = INPUT_FILL if col.is_input else COMPUTED_FILL
        first.protection = Protection(locked=not col.is_input)
        first.alignment = Alignment(horizontal=align_of(col.kind))
        if col.kind == "percent":
            first.number_format = "0%"
        for i in range(1, block.rows):  # the same style, copied: a 450-row block is built in moments (issue 9)
            ws.cell(row=block.first_row + i, column=block.first_col + j)._style = copy(first._style)
        ref = f"{col_letter(block.first_col + j)}{block.first_row}:{col_letter(block.first_col + j)}{block.last_row}"
        if col.is_input and col.choices:
            dv = DataValidation(type="list", formula1=_validation_source(lay, col.choices), allow_blank=True,
                                showErrorMessage=not col.choices.startswith("="), errorStyle="warning")
            dv.error = f"Pick a {col.header} from the list"
            dv.prompt = col.note or f"Pick a {col.header}"
            dv.add(ref)
            ws.add_data_validation(dv)
        elif col.is_input and col.kind == "int" and col.low is not None and col.high is not None:
            dv = DataValidation(type="whole", operator="between", formula1=str(col.low), formula2=str(col.high),
                                allow_blank=True, showErrorMessage=True)
            dv.error = f"{col.header} is a whole number from {col.low} to {col.high}"
            if col.note:
                dv.prompt = col.note
            dv.add(ref)
            ws.add_data_validation(dv)


def _state_colours(ws: Worksheet, ref: str) -> None:
    for state, colour in STATE_COLOURS.items():
        font = Font(color="FFFFFF") if state == "Dead" else None
        ws.conditional_formatting.add(ref, CellIsRule(operator="equal", formula=[f'"{state}"'],
                                                      fill=PatternFill("solid", fgColor=colour, bgColor=colour), font=font))


def chart_anchor(lay: Layout, cohorts: int) -> str:
    """Where the Health chart sits: one row under the last cohort line of the Battle
    summary, at column A, so it shows next to the numbers it draws without scrolling on a
    laptop screen (a blank tracker keeps room for four cohorts)."""
    summary = lay.block("Battle_Summary")
    return f"A{summary.first_row + max(1, cohorts) + 1}"


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
    Health-by-phase table holds), under the cohort lines.

    openpyxl does not keep charts it reads, so the Excel backend calls this again before
    every save: the axis grows with each phase and shrinks on undo."""
    ws = wb["Battle"]
    block = lay.block("Battle_HealthByPhase")
    ws._charts = []  # one chart only
    n = cohorts if cohorts is not None else 4
    if phases is None:
        phases = phases_played(ws, lay)
    last = block.first_row + max(0, min(phases, (block.rows or 1) - 1))
    chart = LineChart()
    chart.title = "Health by phase"
    chart.y_axis.title = "Health"
    chart.x_axis.title = "Phase"
    chart.height, chart.width = 6.0, 17.0
    data = Reference(ws, min_col=block.first_col + 1, max_col=block.first_col + max(1, n), min_row=block.header_row,
                     max_row=last)
    cats = Reference(ws, min_col=block.first_col, min_row=block.first_row, max_row=last)
    chart.add_data(data, titles_from_data=True)
    chart.set_categories(cats)
    ws.add_chart(chart, chart_anchor(lay, n))


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
    except ValueError:
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


FROZEN: dict[str, tuple[int, int]] = {
    "Battle": (2, 0), "Characters": (2, 2), "Cohorts": (2, 1), "Orders": (3, 3), "Ranges": (2, 0), "Log": (1, 0),
    "Aftermath": (2, 0), "House Rules": (2, 0),
}
"""Frozen (rows, columns) per sheet: headers stay in view."""
PROTECTED_SHEETS = ("Battle", "Characters", "Cohorts", "Orders", "Ranges", "Log", "Aftermath", "House Rules")
BUTTON_LABELS = ("Build Cohorts", "Resolve Phase", "Undo Phase", "End Battle")


def static_cells(lay: Layout) -> list[tuple[str, int, int, Any]]:
    """Every cell a blank tracker holds: titles, headers, labels, lists, House Rules rows,
    the Odds formulas (as ``Formula``).  The openpyxl template and the Google Sheets
    initializer both write exactly these (so a tracker copied between the two is the same
    cell for cell; the "Tick to run" boxes are titled as working on Google Sheets only)."""
    out: list[tuple[str, int, int, Any]] = [("Battle", 1, 1, "sheetsync battle tracker")]
    for cell in lay.cells.values():
        row = int("".join(ch for ch in cell.address if ch.isdigit()))
        out.append((cell.sheet, row, 1, cell.label))
    out += [("Battle", 3, 2, 1), ("Battle", 4, 2, "New: fill in Cohorts and Characters, then Build Cohorts")]
    for block in lay.blocks.values():
        if block.title and block.header_row > 1:
            out.append((block.sheet, block.header_row - 1, block.first_col, block.title))
        for j, col in enumerate(block.columns):
            out.append((block.sheet, block.header_row, block.first_col + j, col.header))
    block = lay.block("Battle_Buttons")
    for i, label in enumerate(BUTTON_LABELS):
        out.append(("Battle", block.first_row + i, block.first_col, label))
        out.append(("Battle", block.first_row + i, block.first_col + 1, False))
    out.append(("Orders", 1, 1, "Orders: one row per declared task, in the order they resolve. Blank Roll = sheetsync rolls."))
    orders = lay.block("Orders_Table")
    odds_col = orders.first_col + orders.index("odds")
    for i in range(orders.rows or 0):
        out.append(("Orders", orders.first_row + i, odds_col, odds_formula(lay, orders.first_row + i)))
    house = lay.block("HouseRules_Table")
    for i, row_values in enumerate(house_rules_rows()):
        for j, v in enumerate(row_values):
            out.append(("House Rules", house.first_row + i, house.first_col + j, v))
    for j, (_key, values) in enumerate(LISTS.items()):
        for i, v in enumerate(values):
            out.append(("Lists", 2 + i, 1 + j, v))
    out.append(("State", 1, 1, "Battle state (JSON, in pieces). sheetsync reads and writes it; do not edit."))
    out.append(("State", 1, 2, MARK))  # issue 9: what the tracker is, and what it holds
    out.append(("State", 2, 2, capacity_json(lay.capacity)))
    return out


def house_choices(key: str) -> list[str]:
    """The House Rules dropdown of one key."""
    from sheetsync.rules.bbn import HouseRules

    _text, default, choices = HouseRules.describe()[key]
    if isinstance(default, bool):
        return ["Yes", "No"]
    return [str(c) for c in choices]


def _row_of(address: str) -> int:
    return int("".join(ch for ch in address if ch.isdigit()))


def build_template(lay: Layout | None = None, *, cohorts_in_chart: int = 4) -> Workbook:
    """A blank tracker workbook."""
    lay = lay or layout()
    wb = Workbook()
    wb.remove(wb.active)
    for name in lay.sheets:
        ws = wb.create_sheet(name)
        if name in lay.hidden:
            ws.sheet_state = "hidden"
    for block in lay.blocks.values():
        _write_block(wb[block.sheet], lay, block)
    for sheet, row, col, value in static_cells(lay):
        wb[sheet].cell(row=row, column=col, value=value.text if isinstance(value, Formula) else value)
    ws = wb["Battle"]
    ws["A1"].font = TITLE_FONT
    for cell in lay.cells.values():
        if cell.sheet == "Battle":
            label = ws.cell(row=int("".join(ch for ch in cell.address if ch.isdigit())), column=1)
            label.font = Font(bold=True)
            label.alignment = Alignment(vertical="top")  # level with the wrapped status text
            c = ws[cell.address]
            c.fill = INPUT_FILL if cell.is_input else COMPUTED_FILL
            c.protection = Protection(locked=not cell.is_input)
    ws.column_dimensions["A"].width = 20
    ws.column_dimensions["B"].width = 22
    for sheet, ranges in MERGED.items():
        for rng in ranges:
            wb[sheet].merge_cells(rng)
            wb[sheet][rng.split(":")[0]].alignment = Alignment(wrap_text=True, vertical="top")
    ws.row_dimensions[_row_of(lay.cells["Battle_Status"].address)].height = 30
    ws.row_dimensions[_row_of(lay.cells["Battle_LastAction"].address)].height = 45
    summary = lay.block("Battle_Summary")
    h = summary.letter("health")
    ws.conditional_formatting.add(f"{h}{summary.first_row}:{h}{summary.last_row}",
                                  DataBarRule(start_type="num", start_value=0, end_type="max", color="5B9BD5"))
    ws.conditional_formatting.add(f"{h}{summary.first_row}:{h}{summary.last_row}",
                                  CellIsRule(operator="lessThanOrEqual", formula=["0"], font=Font(bold=True, color="C00000")))
    add_chart(wb, lay, cohorts_in_chart)
    for sheet, (rows, cols) in FROZEN.items():
        wb[sheet].freeze_panes = f"{col_letter(cols + 1)}{rows + 1}"
    wb["Orders"]["A1"].font = Font(bold=True)
    orders = lay.block("Orders_Table")
    out = orders.letter("outcome")
    for outcome, colour in OUTCOME_COLOURS.items():
        wb["Orders"].conditional_formatting.add(
            f"{out}{orders.first_row}:{out}{orders.last_row}",
            CellIsRule(operator="equal", formula=[f'"{outcome}"'], fill=PatternFill("solid", fgColor=colour, bgColor=colour)))
    roll = orders.letter("roll")
    wb["Orders"].conditional_formatting.add(  # first: it wins over the resolved-row grey below
        f"{roll}{orders.first_row}:{roll}{orders.last_row}",
        FormulaRule(formula=[rolled_formula(lay)], font=Font(color=ROLLED_FONT, italic=True, bold=True),
                    fill=PatternFill("solid", fgColor=ROLLED_FILL, bgColor=ROLLED_FILL)))
    wb["Orders"].column_dimensions[orders.letter("roll_source")].hidden = True
    log = lay.block("Log_Table")
    wb["Log"].conditional_formatting.add(
        f"{col_letter(log.first_col)}{log.first_row}:{col_letter(log.last_col)}{log.first_row + lay.log_rows}",
        FormulaRule(formula=[log_undone_formula(lay)], font=Font(color=UNDONE_FONT, strike=True)))
    ph = orders.letter("phase")
    wb["Orders"].conditional_formatting.add(
        f"A{orders.first_row}:{orders.letter('picks')}{orders.last_row}",
        FormulaRule(formula=[f"${ph}{orders.first_row}<>\"\""], font=Font(color="808080", italic=True)))
    roster = lay.block("Cohorts_Roster")
    st = roster.letter("state")
    _state_colours(wb["Cohorts"], f"{st}{roster.first_row}:{st}{roster.last_row}")
    house = lay.block("HouseRules_Table")
    hr = wb["House Rules"]
    for i, (key, *_rest) in enumerate(house_rules_rows()):
        choices = house_choices(str(key))
        if choices:
            dv = DataValidation(type="list", formula1='"' + ",".join(choices) + '"', allow_blank=True, showErrorMessage=True)
            dv.error = f"{key}: one of {', '.join(choices)}"
            dv.add(f"{house.letter('value')}{house.first_row + i}")
            hr.add_data_validation(dv)
    for name, ref in defined_names(lay).items():
        wb.defined_names[name] = DefinedName(name, attr_text=ref)
    # protection: computed cells locked, no password, so typing into one warns
    for sheet in PROTECTED_SHEETS:
        wb[sheet].protection.sheet = True
        wb[sheet].protection.formatColumns = False
        wb[sheet].protection.formatRows = False
    _page_setup(wb, lay)
    wb.active = 0
    return wb


PRINT_TITLES: dict[str, str] = {"Orders": "Orders_Table", "Characters": "Characters_Table", "Ranges": "Ranges_Table",
                                 "Log": "Log_Table", "Aftermath": "Aftermath_Table", "House Rules": "HouseRules_Table"}
"""The block whose header row repeats on every printed page of a sheet."""
PORTRAIT = ("Ranges",)
PAGES_WIDE = {"Characters": (3, "A:B")}
"""Sheets too wide for one legible page: pages across, and the columns repeated on each."""


def _page_setup(wb: Workbook, lay: Layout) -> None:
    """Printing on A4 or Letter: landscape where the sheet is wide, fitted to the page
    width (as many pages down as it needs; the 51-column Characters sheet three pages
    across, Cohort and Character repeated on each), the header row repeated on every page,
    and the Battle sheet's dashboard (phase, status, cohort lines, chart) on one page."""
    summary = lay.block("Battle_Summary")
    for sheet in PROTECTED_SHEETS:
        ws = wb[sheet]
        ws.page_setup.orientation = "portrait" if sheet in PORTRAIT else "landscape"
        ws.sheet_properties.pageSetUpPr.fitToPage = True
        ws.page_setup.fitToWidth = 1
        ws.page_setup.fitToHeight = 0
        ws.print_options.gridLines = False
        ws.page_margins.left = ws.page_margins.right = 0.4
        ws.page_margins.top = ws.page_margins.bottom = 0.5
        if sheet in PRINT_TITLES:
            row = lay.block(PRINT_TITLES[sheet]).header_row
            ws.print_title_rows = f"{row}:{row}"
        if sheet in PAGES_WIDE:
            ws.page_setup.fitToWidth, ws.print_title_cols = PAGES_WIDE[sheet]
            ws.page_setup.pageOrder = "overThenDown"
    wb["Battle"].print_area = f"A1:{summary.letter('members')}{summary.last_row}"
    orders = lay.block("Orders_Table")  # up to Result: its long texts must not widen the page
    wb["Orders"].print_area = f"A1:{orders.letter('result')}{orders.last_row}"
    wb["Battle"].page_setup.fitToHeight = 1
