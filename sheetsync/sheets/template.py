"""The blank tracker workbook, generated from the layout map with openpyxl.

Frozen header rows, dropdowns on every choice, state colours, input cells (pale yellow,
unlocked) visibly different from computed cells (grey, locked; sheets protected with no
password so typing into one warns), a defined name for every block, the Odds formulas,
a data bar on Health and a native chart of each cohort's Health by phase.
"""

from __future__ import annotations

from openpyxl import Workbook
from openpyxl.chart import LineChart, Reference
from openpyxl.formatting.rule import CellIsRule, DataBarRule, FormulaRule
from openpyxl.styles import Alignment, Border, Font, PatternFill, Protection, Side
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.worksheet import Worksheet

from sheetsync.sheets.backend import col_letter, quote_sheet
from sheetsync.sheets.layout import LISTS, Block, Layout, layout
from sheetsync.sheets.writer import house_rules_rows, odds_formula

__all__ = ["STATE_COLOURS", "add_chart", "build_template", "defined_names"]

INPUT_FILL = PatternFill("solid", fgColor="FFF9E0")
COMPUTED_FILL = PatternFill("solid", fgColor="EEEEEE")
HEADER_FILL = PatternFill("solid", fgColor="2F3E4E")
HEADER_FONT = Font(bold=True, color="FFFFFF")
TITLE_FONT = Font(bold=True, size=14)
THIN = Border(bottom=Side(style="thin", color="BBBBBB"))
STATE_COLOURS = {"Active": "C6EFCE", "Scared": "FFEB9C", "Knocked Out": "FFC7CE", "Stabilized": "BDD7EE", "Dead": "808080"}
OUTCOME_COLOURS = {"hit": "C6EFCE", "miss": "FFEB9C", "refused": "FFC7CE", "done": "DDEBF7"}


def defined_names(lay: Layout) -> dict[str, str]:
    """Every defined name of the tracker and the range it points at."""
    names: dict[str, str] = {}
    for b in lay.blocks.values():
        start = f"${col_letter(b.first_col)}${b.first_row}"
        end_row = b.last_row if b.last_row is not None else b.first_row + 4000
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
        t = ws.cell(row=block.header_row - 1, column=block.first_col, value=block.title)
        t.font = Font(bold=True, size=12)
    for j, col in enumerate(block.columns):
        c = ws.cell(row=block.header_row, column=block.first_col + j, value=col.header)
        c.fill, c.font = HEADER_FILL, HEADER_FONT
        c.alignment = Alignment(wrap_text=True, vertical="center")
        letter = col_letter(block.first_col + j)
        current = ws.column_dimensions[letter].width or 0
        ws.column_dimensions[letter].width = max(current, col.width)
    if not fill_rows or block.rows is None:
        return
    for j, col in enumerate(block.columns):
        for i in range(block.rows):
            c = ws.cell(row=block.first_row + i, column=block.first_col + j)
            c.fill = INPUT_FILL if col.is_input else COMPUTED_FILL
            c.protection = Protection(locked=not col.is_input)
            if col.kind == "percent":
                c.number_format = "0%"
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


def add_chart(wb: Workbook, lay: Layout, cohorts: int | None = None) -> None:
    """A native line chart of each cohort's Health by phase on the Battle sheet.

    openpyxl does not keep charts it reads, so the Excel backend calls this again before
    every save."""
    ws = wb["Battle"]
    block = lay.block("Battle_HealthByPhase")
    ws._charts = []  # one chart only
    n = cohorts if cohorts is not None else 4
    chart = LineChart()
    chart.title = "Health by phase"
    chart.y_axis.title = "Health"
    chart.x_axis.title = "Phase"
    chart.height, chart.width = 8, 18
    data = Reference(ws, min_col=block.first_col + 1, max_col=block.first_col + max(1, n), min_row=block.header_row,
                     max_row=block.last_row)
    cats = Reference(ws, min_col=block.first_col, min_row=block.first_row, max_row=block.last_row)
    chart.add_data(data, titles_from_data=True)
    chart.set_categories(cats)
    ws.add_chart(chart, "O2")


def build_template(lay: Layout | None = None, *, cohorts_in_chart: int = 4) -> Workbook:
    """A blank tracker workbook."""
    lay = lay or layout()
    wb = Workbook()
    wb.remove(wb.active)
    for name in lay.sheets:
        ws = wb.create_sheet(name)
        if name in lay.hidden:
            ws.sheet_state = "hidden"
    # Battle dashboard
    ws = wb["Battle"]
    ws["A1"] = "sheetsync battle tracker"
    ws["A1"].font = TITLE_FONT
    for cell in lay.cells.values():
        if cell.sheet != "Battle":
            continue
        col = "".join(ch for ch in cell.address if ch.isalpha())
        row = int("".join(ch for ch in cell.address if ch.isdigit()))
        ws.cell(row=row, column=1, value=cell.label).font = Font(bold=True)
        c = ws[cell.address]
        c.fill = INPUT_FILL if cell.is_input else COMPUTED_FILL
        c.protection = Protection(locked=not cell.is_input)
        del col
    ws["B3"] = 1
    ws["B4"] = "New: fill in Cohorts and Characters, then Build Cohorts"
    ws.column_dimensions["A"].width = 20
    ws.column_dimensions["B"].width = 22
    buttons = lay.block("Battle_Buttons")
    _write_block(ws, lay, buttons)
    for i, label in enumerate(("Build Cohorts", "Resolve Phase", "Undo Phase", "End Battle")):
        ws.cell(row=buttons.first_row + i, column=buttons.first_col, value=label)
        ws.cell(row=buttons.first_row + i, column=buttons.first_col + 1, value=False)
    for key in ("Battle_Summary", "Battle_HealthByPhase"):
        _write_block(ws, lay, lay.block(key))
    summary = lay.block("Battle_Summary")
    h = summary.letter("health")
    ws.conditional_formatting.add(f"{h}{summary.first_row}:{h}{summary.last_row}",
                                  DataBarRule(start_type="num", start_value=0, end_type="max", color="5B9BD5"))
    ws.conditional_formatting.add(f"{h}{summary.first_row}:{h}{summary.last_row}",
                                  CellIsRule(operator="lessThanOrEqual", formula=["0"], font=Font(bold=True, color="C00000")))
    ws.freeze_panes = "A3"
    add_chart(wb, lay, cohorts_in_chart)

    for sheet in ("Characters", "Cohorts", "Orders", "Ranges", "Log", "Aftermath", "House Rules"):
        ws = wb[sheet]
        for block in lay.blocks.values():
            if block.sheet == sheet:
                _write_block(ws, lay, block)
    # first header row frozen on each sheet
    wb["Characters"].freeze_panes = "C3"
    wb["Cohorts"].freeze_panes = "B3"
    wb["Orders"].freeze_panes = "D4"
    wb["Ranges"].freeze_panes = "A3"
    wb["Log"].freeze_panes = "A2"
    wb["Aftermath"].freeze_panes = "A3"
    wb["House Rules"].freeze_panes = "A3"
    wb["Orders"]["A1"] = "Orders: one row per declared task, in the order they resolve. Blank Roll = sheetsync rolls."
    wb["Orders"]["A1"].font = Font(bold=True)
    orders = lay.block("Orders_Table")
    for i in range(orders.rows or 0):
        row = orders.first_row + i
        wb["Orders"][f"{orders.letter('odds')}{row}"] = odds_formula(lay, row).text
    out = orders.letter("outcome")
    for outcome, colour in OUTCOME_COLOURS.items():
        wb["Orders"].conditional_formatting.add(
            f"{out}{orders.first_row}:{out}{orders.last_row}",
            CellIsRule(operator="equal", formula=[f'"{outcome}"'], fill=PatternFill("solid", fgColor=colour, bgColor=colour)))
    ph = orders.letter("phase")
    wb["Orders"].conditional_formatting.add(
        f"A{orders.first_row}:{orders.letter('picks')}{orders.last_row}",
        FormulaRule(formula=[f"${ph}{orders.first_row}<>\"\""], font=Font(color="808080", italic=True)))
    roster = lay.block("Cohorts_Roster")
    st = roster.letter("state")
    _state_colours(wb["Cohorts"], f"{st}{roster.first_row}:{st}{roster.last_row}")
    # House Rules rows
    house = lay.block("HouseRules_Table")
    hr = wb["House Rules"]
    for i, (key, value, default, text) in enumerate(house_rules_rows()):
        r = house.first_row + i
        hr.cell(row=r, column=1, value=key)
        hr.cell(row=r, column=2, value=value)
        hr.cell(row=r, column=3, value=default)
        hr.cell(row=r, column=4, value=text)
        choices = _house_choices(str(key))
        if choices:
            dv = DataValidation(type="list", formula1='"' + ",".join(choices) + '"', allow_blank=True, showErrorMessage=True)
            dv.error = f"{key}: one of {', '.join(choices)}"
            dv.add(f"B{r}")
            hr.add_data_validation(dv)
    # Lists (hidden)
    lists = wb["Lists"]
    for j, (key, values) in enumerate(LISTS.items()):
        lists.cell(row=1, column=j + 1, value=key)
        for i, v in enumerate(values):
            lists.cell(row=2 + i, column=j + 1, value=v)
    wb["State"]["A1"] = "Battle state (JSON, in pieces). sheetsync reads and writes it; do not edit."
    # defined names
    for name, ref in defined_names(lay).items():
        wb.defined_names[name] = DefinedName(name, attr_text=ref)
    # protection: computed cells locked, no password: typing into one warns
    for sheet in ("Battle", "Characters", "Cohorts", "Orders", "Ranges", "Log", "Aftermath", "House Rules"):
        wb[sheet].protection.sheet = True
        wb[sheet].protection.formatColumns = False
        wb[sheet].protection.formatRows = False
    wb.active = 0
    return wb


def _house_choices(key: str) -> list[str]:
    from sheetsync.rules.bbn import HouseRules

    _text, default, choices = HouseRules.describe()[key]
    if isinstance(default, bool):
        return ["TRUE", "FALSE"]
    return [str(c) for c in choices]

