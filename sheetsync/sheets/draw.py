"""Any rule system's tracker workbook, drawn with openpyxl from its layout data alone
(DESIGN "The layout is data with codecs"; imports nothing from ``sheetsync.systems``).

:func:`draw_workbook` draws, from a :class:`~sheetsync.core.layout.Layout`:

- the sheets in order, hidden ones hidden, and the protected ones protected with no
  password (typing into a computed cell warns; input cells are unlocked);
- each block: its title above the header row, the header row styled, the data rows filled
  pale yellow for input and grey for computed, column widths, hidden columns, a percent
  format, dropdowns (``Column.choices``: a list of ``lay.lists`` or a ``=Defined_Name``)
  and whole-number checks (an ``Int`` codec's low and high), and the panes frozen under
  the header of a sheet's only table;
- each live formula of ``lay.formulas`` (``"Block.key"``) in every data row of its block;
- each named cell as a defined name with its label in the column to its left;
- each area (a hex map drawn in cells) with its cell size and an outline around each of
  its rectangles (or a thin grid when it has none);
- the Lists sheet from ``lay.lists``, a defined name ``List_<key>`` per list, a defined name
  per block, per cell, per area and per ``lay.names`` entry (``{"Unit_Names":
  "Units_Table.name"}``);
- each :class:`~sheetsync.core.layout.Colours` decoration as conditional formats: a colour
  key is the text to match (whole, or a part with ``contains``), or, starting with ``=``,
  an expression the cell is compared with (``=Battle!$A$15``: a cell that holds a side's
  name; with ``contains``, the expression's text is looked for in the cell);
- the other decorations of the layout, all data (issue 9): conditional-format rules
  (``lay.rules``, in order: the first wins) and data bars, line charts (drawn again by
  :func:`draw_charts` before every save: openpyxl drops the charts it reads), merges, row
  heights, frozen panes per sheet (``lay.frozen``, else under a sheet's only table), print
  setup per sheet (``lay.printing``, else landscape one page wide; hidden sheets don't
  print) on the paper asked for, its print area over the rows in use, fixed cells,
  checkboxes (a cell holding FALSE), one-cell dropdowns, and how lenient the dropdowns are
  (``lay.dropdowns``);
- the buttons block's actions (``Battle_Buttons``) from ``captions``, the House Rules rows
  from ``house_rules`` (never guessed), and the tracker's mark ``State!B1`` =
  ``system@version`` with its capacity in ``State!B2`` (see :mod:`sheetsync.sheets.marks`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from copy import copy
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import LineChart, Reference
from openpyxl.comments import Comment
from openpyxl.formatting.rule import CellIsRule, DataBarRule, FormulaRule
from openpyxl.styles import Alignment, Border, Font, PatternFill, Protection, Side
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.worksheet import Worksheet

from sheetsync.core.layout import (
    Area,
    Block,
    Cell,
    Chart,
    Colours,
    DataBar,
    Int,
    Layout,
    PrintSetup,
    Rule,
    col_letter,
    quote_sheet,
)
from sheetsync.core.registry import MARK_CELL
from sheetsync.sheets.printing import PAPER, print_area, printed_sheets
from sheetsync.sheets.style import COMPUTED_FILL, HEADER_FILL, HEADER_FONT, INPUT_FILL, align_of

__all__ = ["BUTTONS_BLOCK", "HOUSE_RULES_BLOCK", "OPEN_ROWS", "capacity_text", "column_ref", "defined_names",
           "draw_charts", "draw_workbook", "mark_text"]

BUTTONS_BLOCK = "Battle_Buttons"
"""The block whose action column holds the steps' captions."""
HOUSE_RULES_BLOCK = "HouseRules_Table"
"""The block filled from ``house_rules`` (key, value, default, ruling)."""
OPEN_ROWS = 4000
"""How far down an open-ended block (the Log) is decorated and named."""
THIN = Side(style="thin", color="9A9A9A")
MEDIUM = Side(style="medium", color="404040")
NONE = Side()


class _Styles:
    """Cell styles by key: the first cell of a key is styled, the others copy its style
    record (openpyxl's per-attribute setters are slow over a 99x99 map)."""

    def __init__(self) -> None:
        self._done: dict[Any, Any] = {}

    def apply(self, cell: Any, key: Any, setup: Callable[[Any], None]) -> None:
        style = self._done.get(key)
        if style is None:
            setup(cell)
            self._done[key] = copy(cell._style)
        else:
            cell._style = copy(style)


def mark_text(lay: Layout) -> str:
    """The tracker's mark, ``hexwar@1``."""
    return f"{lay.system}@{lay.version}"


def capacity_text(lay: Layout) -> str | None:
    """The capacity beside the mark, as :func:`sheetsync.sheets.marks.mark_updates` writes it."""
    return json.dumps(lay.capacity, sort_keys=True, separators=(",", ":")) if lay.capacity else None


def _last_row(block: Block) -> int:
    return block.last_row if block.last_row is not None else block.first_row + OPEN_ROWS


def column_ref(lay: Layout, target: str) -> str:
    """``"Units_Table.name"`` -> ``Units!$A$3:$A$42`` (absolute, for a defined name)."""
    name, _, key = target.partition(".")
    block = lay.block(name)
    letter = block.letter(key)
    return f"{quote_sheet(block.sheet)}!${letter}${block.first_row}:${letter}${lay.end_row(block)}"


def _abs(address: str) -> str:
    col = "".join(ch for ch in address if ch.isalpha())
    row = "".join(ch for ch in address if ch.isdigit())
    return f"${col}${row}"


def _list_cells(lay: Layout) -> dict[str, tuple[str, int, int]]:
    """Where each list of ``lay.lists`` is written: ``{key: (sheet, first row, column)}``
    (the Lists block's column of that key, else the next free column of the Lists sheet)."""
    block = lay.blocks.get("Lists_Table")
    out: dict[str, tuple[str, int, int]] = {}
    spare = (block.last_col + 1) if block is not None else 1
    for key in lay.lists:
        if block is not None and any(c.key == key for c in block.columns):
            out[key] = (block.sheet, block.first_row, block.first_col + block.index(key))
        else:
            out[key] = ("Lists", 2, spare)
            spare += 1
    return out


def defined_names(lay: Layout) -> dict[str, str]:
    """Every defined name of the drawn workbook and the range it points at: each block,
    named cell, area, ``lay.names`` entry and list (``List_<key>``)."""
    names: dict[str, str] = {}
    for b in lay.blocks.values():
        names[b.name] = (f"{quote_sheet(b.sheet)}!${col_letter(b.first_col)}${b.first_row}:"
                         f"${col_letter(b.last_col)}${lay.end_row(b)}")
    for c in lay.cells.values():
        names[c.name] = f"{quote_sheet(c.sheet)}!{_abs(c.address)}"
    for a in lay.areas.values():
        names[a.name] = (f"{quote_sheet(a.sheet)}!${col_letter(a.first_col)}${a.first_row}:"
                         f"${col_letter(a.first_col + a.cols - 1)}${a.first_row + a.rows - 1}")
    for name, target in lay.names.items():
        names[name] = column_ref(lay, target)
    for key, (sheet, row, col) in _list_cells(lay).items():
        letter = col_letter(col)
        names[f"List_{key}"] = f"{quote_sheet(sheet)}!${letter}${row}:${letter}${row + max(1, len(lay.lists[key])) - 1}"
    return names


def _validation(lay: Layout, header: str, note: str, choices: str | None, codec: Any) -> DataValidation | None:
    """A dropdown for ``choices`` (a list of ``lay.lists`` or a ``=Defined_Name``), or a
    whole-number check for an :class:`Int` codec with both bounds."""
    style = lay.dropdowns
    if choices:
        by_name = choices.startswith("=")
        source = choices if by_name else f"=List_{choices}"
        # a name list checked by the system warns only (a unit typed before it is listed)
        dv = DataValidation(type="list", formula1=source, allow_blank=True,
                            showErrorMessage=not (by_name and style.name_errors == "off"),
                            errorStyle="warning" if by_name else style.list_errors)
        dv.error = f"Pick a {header} from the list"
        dv.prompt = note or f"Pick a {header}"
        if style.prompts:
            dv.showInputMessage = True
        return dv
    if isinstance(codec, Int) and codec.low is not None and codec.high is not None:
        dv = DataValidation(type="whole", operator="between", formula1=str(codec.low), formula2=str(codec.high),
                            allow_blank=True, showErrorMessage=True)
        dv.error = f"{header} is a whole number from {codec.low} to {codec.high}"
        if note:
            dv.prompt = note
            if style.prompts:
                dv.showInputMessage = True
        return dv
    return None


def _draw_block(ws: Worksheet, lay: Layout, block: Block, styles: _Styles) -> None:
    if block.title and block.header_row > 1:
        title = ws.cell(row=block.header_row - 1, column=block.first_col, value=block.title)
        title.font = Font(bold=True, size=12)
    for j, col in enumerate(block.columns):
        c = ws.cell(row=block.header_row, column=block.first_col + j, value=col.header)
        c.fill, c.font = HEADER_FILL, HEADER_FONT
        if col.note:  # issue 22: what the column holds and how it is typed, as the Google drawer's note
            c.comment = _note(col.note)
        c.alignment = Alignment(wrap_text=True, vertical="center", horizontal=align_of(col.kind))
        letter = col_letter(block.first_col + j)
        dim = ws.column_dimensions[letter]
        dim.width = max(dim.width or 0, col.width)
        if col.hidden:
            dim.hidden = True
        if len(col.header) > col.width and not col.hidden:  # a wrapped header gets two lines
            ws.row_dimensions[block.header_row].height = max(ws.row_dimensions[block.header_row].height or 0, 30)
    if block.rows is None:
        return
    for j, col in enumerate(block.columns):
        def setup(c: Any, col: Any = col) -> None:
            c.fill = INPUT_FILL if col.is_input else COMPUTED_FILL
            c.protection = Protection(locked=not col.is_input)
            c.alignment = Alignment(horizontal=align_of(col.kind))
            if col.kind == "percent":
                c.number_format = "0%"
            elif col.kind == "number":
                c.number_format = "0.0#"

        key = ("data", col.is_input, col.kind)
        for i in range(block.rows):
            styles.apply(ws.cell(row=block.first_row + i, column=block.first_col + j), key, setup)
        if col.is_input:
            dv = _validation(lay, col.header, col.note, col.choices, col.codec)
            if dv is not None:
                letter = col_letter(block.first_col + j)
                dv.add(f"{letter}{block.first_row}:{letter}{block.last_row}")
                ws.add_data_validation(dv)


def _note(text: str) -> Comment:
    """Issue 22: a header's (or a named cell's label's) note: what the cells below hold and
    how a free-text one is typed, as the Google drawer puts it on the same cell."""
    note = Comment(text, "sheetsync")
    note.width, note.height = 320, max(80, 18 * (len(text) // 45 + 2))
    return note


def _draw_cell(ws: Worksheet, lay: Layout, cell: Cell) -> None:
    c = ws[cell.address]
    if c.column > 1:
        label = ws.cell(row=c.row, column=c.column - 1, value=cell.label)
        label.font = Font(bold=True)
        if cell.note:
            label.comment = _note(cell.note)
        label.alignment = Alignment(vertical="top")
        letter = col_letter(c.column - 1)
        ws.column_dimensions[letter].width = max(ws.column_dimensions[letter].width or 0, 20)
    c.fill = INPUT_FILL if cell.is_input else COMPUTED_FILL
    c.protection = Protection(locked=not cell.is_input)
    letter = col_letter(c.column)
    ws.column_dimensions[letter].width = max(ws.column_dimensions[letter].width or 0, 22)
    if cell.is_input:
        dv = _validation(lay, cell.label, cell.note, None, cell.codec)
        if dv is not None:
            dv.add(cell.address)
            ws.add_data_validation(dv)


def _draw_area(ws: Worksheet, area: Area, styles: _Styles) -> None:
    if area.title and area.first_row > 1:
        ws.cell(row=area.first_row - 1, column=area.first_col, value=area.title).font = Font(bold=True, size=12)
    if area.cell_width is not None:
        for j in range(area.cols):
            ws.column_dimensions[col_letter(area.first_col + j)].width = area.cell_width
    if area.cell_height is not None:
        for i in range(area.rows):
            ws.row_dimensions[area.first_row + i].height = area.cell_height
    edges: dict[tuple[int, int], tuple[bool, bool, bool, bool]] = {}
    for dr, dc, rows, cols in area.outlines:
        for i in range(rows):
            for j in range(cols):
                if 0 <= dr + i < area.rows and 0 <= dc + j < area.cols:
                    edges[dr + i, dc + j] = (j == 0, j == cols - 1, i == 0, i == rows - 1)
    grid = not area.outlines

    for i in range(area.rows):
        for j in range(area.cols):
            edge = (True, True, True, True) if grid else edges.get((i, j), (False, False, False, False))

            def setup(c: Any, edge: tuple[bool, bool, bool, bool] = edge) -> None:
                c.alignment = Alignment(horizontal="center", vertical="center", wrap_text=True)
                c.font = Font(size=9)
                line = THIN if grid else MEDIUM
                left, right, top, bottom = (line if e else NONE for e in edge)
                c.border = Border(left=left, right=right, top=top, bottom=bottom)

            styles.apply(ws.cell(row=area.first_row + i, column=area.first_col + j), ("area", grid, edge), setup)


def _fill(colour: str) -> PatternFill:
    return PatternFill("solid", fgColor=colour, bgColor=colour)


def _font_on(colour: str) -> Font | None:
    """White text on a dark fill."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (0, 2, 4))
    return Font(color="FFFFFF") if 0.299 * r + 0.587 * g + 0.114 * b < 110 else None


def _colour_target(lay: Layout, target: str) -> tuple[str, str, str]:
    """The sheet, the range and its top-left cell of a decoration's target."""
    if target in lay.areas:
        a = lay.areas[target]
        first = f"{col_letter(a.first_col)}{a.first_row}"
        return a.sheet, f"{first}:{col_letter(a.first_col + a.cols - 1)}{a.first_row + a.rows - 1}", first
    name, _, key = target.partition(".")
    block = lay.block(name)
    letter = block.letter(key)
    return block.sheet, f"{letter}{block.first_row}:{letter}{lay.end_row(block)}", f"{letter}{block.first_row}"


def _text(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def _draw_colours(wb: Workbook, lay: Layout, deco: Colours) -> None:
    sheet, ref, first = _colour_target(lay, deco.target)
    ws = wb[sheet]
    for key, colour in deco.colours.items():
        fill, font = _fill(colour), _font_on(colour)
        if key.startswith("="):
            expr = key[1:]
            test = (f"AND(LEN({first})>0,ISNUMBER(SEARCH({expr},{first})))" if deco.contains
                    else f'AND({first}<>"",{first}={expr})')
            ws.conditional_formatting.add(ref, FormulaRule(formula=[test], fill=fill, font=font))
        elif deco.contains:
            ws.conditional_formatting.add(ref, FormulaRule(formula=[f"ISNUMBER(SEARCH({_text(key)},{first}))"],
                                                           fill=fill, font=font))
        else:
            ws.conditional_formatting.add(ref, CellIsRule(operator="equal", formula=[_text(key)], fill=fill,
                                                          font=font))


def _range_of(lay: Layout, target: str) -> tuple[str, str, str]:
    """The sheet, the A1 range and its top-left cell of a rule's or a bar's target."""
    sheet, r1, c1, r2, c2 = lay.box(target)
    first = f"{col_letter(c1)}{r1}"
    return sheet, f"{first}:{col_letter(c2)}{r2}", first


def _font(rule: Rule) -> Font | None:
    """A rule's font, naming only what it sets (a conditional format keeps the rest)."""
    given: dict[str, Any] = {k: True for k in ("bold", "italic", "strike") if getattr(rule, k)}
    if rule.colour:
        given["color"] = rule.colour
    return Font(**given) if given else None


def _draw_rule(wb: Workbook, lay: Layout, rule: Rule) -> None:
    sheet, ref, _first = _range_of(lay, rule.target)
    fill = _fill(rule.fill) if rule.fill else None
    if rule.kind == "equals":
        drawn: Any = CellIsRule(operator="equal", formula=[_text(rule.when)], fill=fill, font=_font(rule))
    elif rule.kind == "at_most":
        drawn = CellIsRule(operator="lessThanOrEqual", formula=[rule.when], fill=fill, font=_font(rule))
    else:
        drawn = FormulaRule(formula=[rule.when], fill=fill, font=_font(rule))
    wb[sheet].conditional_formatting.add(ref, drawn)


def _draw_bar(wb: Workbook, lay: Layout, bar: DataBar) -> None:
    sheet, ref, _first = _range_of(lay, bar.target)
    wb[sheet].conditional_formatting.add(ref, DataBarRule(start_type="num", start_value=bar.low, end_type="max",
                                                          color=bar.colour))


def _draw_decorations(wb: Workbook, lay: Layout) -> None:
    """The layout's fixed cells, checkboxes, cell dropdowns, data bars and rules (in their
    order: the first wins), merges and row heights."""
    for st in lay.static:
        c = wb[st.sheet][st.address]
        c.value = st.value
        if st.bold or st.size:
            c.font = Font(bold=st.bold or None, size=st.size)
    for target in lay.checkboxes:  # a workbook has no checkbox: the cell holds FALSE, ticked is TRUE
        sheet, r1, c1, r2, _c2 = lay.box(target)
        for row in range(r1, r2 + 1):
            wb[sheet].cell(row=row, column=c1, value=False)
    for at in lay.choices_at:
        dv = DataValidation(type="list", formula1='"' + ",".join(at.options) + '"', allow_blank=True,
                            showErrorMessage=True)
        dv.error = at.error or f"Pick one of {', '.join(at.options)}"
        dv.add(at.address)
        wb[at.sheet].add_data_validation(dv)
    for bar in lay.bars:
        _draw_bar(wb, lay, bar)
    for rule in lay.rules:
        _draw_rule(wb, lay, rule)
    for merged in lay.merges:
        sheet, _, rng = merged.rpartition("!")
        ws = wb[sheet.strip("'").replace("''", "'")]
        ws.merge_cells(rng)
        ws[rng.split(":")[0]].alignment = Alignment(wrap_text=True, vertical="top")
    for (sheet, row), points in lay.row_heights.items():
        wb[sheet].row_dimensions[row].height = points


def _print_setup(ws: Worksheet, setup: PrintSetup, paper: str = "a4") -> None:
    ws.page_setup.paperSize = PAPER[paper]
    ws.page_setup.orientation = "landscape" if setup.landscape else "portrait"
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_setup.fitToWidth = setup.pages_wide
    ws.page_setup.fitToHeight = setup.pages_tall
    if setup.grid_lines is not None:
        ws.print_options.gridLines = setup.grid_lines
    if setup.margins is not None:
        ws.page_margins.left, ws.page_margins.right, ws.page_margins.top, ws.page_margins.bottom = setup.margins
    if setup.title_rows:
        ws.print_title_rows = setup.title_rows
    if setup.title_cols:
        ws.print_title_cols = setup.title_cols
    if setup.over_then_down:
        ws.page_setup.pageOrder = "overThenDown"
    if setup.area:
        ws.print_area = setup.area


def _value_rows(ws: Worksheet) -> dict[int, dict[int, Any]]:
    """The sheet's cells holding a value (no formula), as :data:`sheetsync.sheets.printing.Rows`."""
    rows: dict[int, dict[int, Any]] = {}
    for (r, c), cell in ws._cells.items():
        if cell.value not in (None, "") and cell.data_type != "f":
            rows.setdefault(r, {})[c] = cell.value
    return rows


def fit_print_areas(wb: Workbook, lay: Layout) -> None:
    """Each printed sheet's print area, down to the rows in use now (issue 22,
    :func:`sheetsync.sheets.printing.print_area`); called when a tracker is drawn and
    before every openpyxl save of a step.  The paper and the rest of the page setup stay."""
    for sheet in printed_sheets(lay):
        if sheet in wb.sheetnames:
            area = print_area(lay, sheet, _value_rows(wb[sheet]))
            if area is not None:
                wb[sheet].print_area = area


def set_paper(wb: Workbook, paper: str) -> None:
    """Every sheet of ``wb`` on ``paper`` (``a4`` or ``letter``, issue 22)."""
    for ws in wb.worksheets:
        ws.page_setup.paperSize = PAPER[paper]


def _filled_rows(ws: Worksheet, block: Block) -> int:
    """How many category rows of a chart's block are filled, from the top (at least one)."""
    last = block.last_row or block.first_row
    filled = [r for r in range(block.first_row, last + 1)
              if ws.cell(row=r, column=block.first_col).value not in (None, "")]
    return max(filled) - block.first_row + 1 if filled else 1


def draw_charts(wb: Workbook, lay: Layout, series: int | None = None, rows: int | None = None) -> None:
    """Each chart of the layout, drawn anew (a sheet's charts are replaced): ``series``
    lines (by default the chart's own count), over the first ``rows`` category rows (by
    default the rows filled so far).  openpyxl drops the charts it reads, so a workbook
    backend calls this again before every save: the axis grows with each step."""
    for sheet in {lay.block(spec.block).sheet for spec in lay.charts}:
        wb[sheet]._charts = []
    for spec in lay.charts:
        _draw_chart(wb, lay, spec, series, rows)


def _draw_chart(wb: Workbook, lay: Layout, spec: Chart, series: int | None, rows: int | None) -> None:
    block = lay.block(spec.block)
    ws = wb[block.sheet]
    n = max(1, series if series is not None else spec.series(lay))
    shown = rows if rows is not None else _filled_rows(ws, block)
    last = block.first_row + max(0, min(shown, block.rows or 1) - 1)
    chart = LineChart()
    chart.title = spec.title
    chart.y_axis.title = spec.y_title or None
    chart.x_axis.title = spec.x_title or None
    chart.height, chart.width = spec.height, spec.width
    data = Reference(ws, min_col=block.first_col + 1, max_col=block.first_col + n, min_row=block.header_row,
                     max_row=last)
    cats = Reference(ws, min_col=block.first_col, min_row=block.first_row, max_row=last)
    chart.add_data(data, titles_from_data=True)
    chart.set_categories(cats)
    ws.add_chart(chart, spec.anchor(lay, n))


def _freeze(wb: Workbook, lay: Layout) -> None:
    """Freeze the panes under the header of a sheet's only table (and its first column
    when the table is wide)."""
    for sheet in lay.sheets:
        if sheet in lay.frozen:
            rows, cols = lay.frozen[sheet]
            wb[sheet].freeze_panes = f"{col_letter(cols + 1)}{rows + 1}"
            continue
        blocks = [b for b in lay.blocks.values() if b.sheet == sheet]
        others = [c for c in lay.cells.values() if c.sheet == sheet] + [a for a in lay.areas.values() if a.sheet == sheet]
        if len(blocks) != 1 or others or sheet in lay.hidden:
            continue
        b = blocks[0]
        wide = len(b.columns) >= 10 and b.first_col == 1
        wb[sheet].freeze_panes = f"{col_letter(2 if wide else 1)}{b.first_row}"


def _house_rules(wb: Workbook, lay: Layout, rows: Sequence[tuple[Any, Any, Any, Any]]) -> None:
    block = lay.block(HOUSE_RULES_BLOCK)
    if block.rows is not None and len(rows) > block.rows:
        raise ValueError(f"{block.name} holds {block.rows} rows, not {len(rows)}")
    keys = ("key", "value", "default", "ruling")
    ws = wb[block.sheet]
    for i, row in enumerate(rows):
        for key, value in zip(keys, row, strict=True):
            ws.cell(row=block.first_row + i, column=block.first_col + block.index(key), value=value)


def _create_sheets(wb: Workbook, lay: Layout) -> None:
    """The layout's sheets in order, then any sheet a block or the mark names that the
    layout leaves out; the layout's hidden sheets hidden."""
    sheets = list(lay.sheets)
    for name in [b.sheet for b in lay.blocks.values()] + [MARK_CELL[0]]:
        if name not in sheets:
            sheets.append(name)
    for name in sheets:
        ws = wb.create_sheet(name)
        if name in lay.hidden:
            ws.sheet_state = "hidden"


def _draw_lists(wb: Workbook, lay: Layout) -> None:
    """Each list's values down its column, its key above them where that cell is free."""
    for key, (sheet, row, col) in _list_cells(lay).items():
        ws = wb[sheet]
        if ws.cell(row=row - 1, column=col).value is None and row > 1:
            ws.cell(row=row - 1, column=col, value=key)
        for i, value in enumerate(lay.lists[key]):
            ws.cell(row=row + i, column=col, value=value)


def _draw_formulas(wb: Workbook, lay: Layout) -> None:
    """Each computed column's formula down every row of its (fixed-size) block."""
    for target, build in lay.formulas.items():
        name, _, key = target.partition(".")
        block = lay.block(name)
        if block.rows is None:
            continue
        col = block.first_col + block.index(key)
        for i in range(block.rows):
            row = block.first_row + i
            wb[block.sheet].cell(row=row, column=col, value=build(lay, row))


def _draw_captions(wb: Workbook, lay: Layout, captions: Sequence[str]) -> None:
    """The steps' captions down the buttons block's action column."""
    if BUTTONS_BLOCK not in lay.blocks or not captions:
        return
    block = lay.block(BUTTONS_BLOCK)
    if block.rows is not None and len(captions) > block.rows:
        raise ValueError(f"{block.name} holds {block.rows} buttons, not {len(captions)}")
    col = block.first_col + block.index("action")
    for i, caption in enumerate(captions):
        wb[block.sheet].cell(row=block.first_row + i, column=col, value=caption)


def _protect(wb: Workbook, lay: Layout) -> None:
    """Each protected sheet locked, its columns and rows still free to resize."""
    for sheet in lay.protected:
        ws = wb[sheet]
        ws.protection.sheet = True
        ws.protection.formatColumns = False
        ws.protection.formatRows = False


def draw_workbook(lay: Layout, *, captions: Sequence[str] = (),
                  house_rules: Sequence[tuple[Any, Any, Any, Any]] = (), paper: str = "a4") -> Workbook:
    """A blank tracker workbook drawn from ``lay`` (see the module's docstring): the steps'
    ``captions`` in the buttons block, the ``house_rules`` rows (key, value, default,
    ruling) in the House Rules block, the mark and capacity in ``State!B1:B2``, and every
    sheet printing on ``paper`` (``a4`` or ``letter``) over its rows in use (issue 22)."""
    wb = Workbook()
    wb.remove(wb.active)
    _create_sheets(wb, lay)
    styles = _Styles()
    for block in lay.blocks.values():
        _draw_block(wb[block.sheet], lay, block, styles)
    for cell in lay.cells.values():
        _draw_cell(wb[cell.sheet], lay, cell)
    for area in lay.areas.values():
        _draw_area(wb[area.sheet], area, styles)
    _draw_lists(wb, lay)
    _draw_formulas(wb, lay)
    _draw_captions(wb, lay, captions)
    if HOUSE_RULES_BLOCK in lay.blocks and house_rules:
        _house_rules(wb, lay, house_rules)
    for deco in lay.colours:
        _draw_colours(wb, lay, deco)
    _draw_decorations(wb, lay)
    state = wb[MARK_CELL[0]]
    state[MARK_CELL[1]] = mark_text(lay)
    state["B2"] = capacity_text(lay)
    for name, ref in defined_names(lay).items():
        wb.defined_names[name] = DefinedName(name, attr_text=ref)
    _protect(wb, lay)
    _freeze(wb, lay)
    set_paper(wb, paper)
    for sheet, setup in printed_sheets(lay).items():
        _print_setup(wb[sheet], setup, paper)
    fit_print_areas(wb, lay)
    draw_charts(wb, lay)
    wb.active = 0
    return wb
