"""Any rule system's tracker laid into a Google Sheet, drawn from its layout data
(:class:`sheetsync.core.layout.Layout`): the Sheets-API twin of ``sheets/draw.py``.

:func:`init_requests_for` returns the ``spreadsheets.batchUpdate`` requests, sent as ONE
batch (Google applies it whole or not at all).  Sheet ids are chosen here, so the same
batch already refers to the sheets it adds.  What it draws, all from the layout:

* the sheets (hidden ones ``hidden: true``), each grid sized to hold its blocks, named
  cells and areas at the layout's capacity, a lone block's header rows frozen;
* titles, headers (with their notes), cell labels, the buttons' captions with a checkbox
  each, the House Rules rows, the lists, the live formulas of ``lay.formulas``, and the
  mark ``State!B1`` (``hexwar@1``) with the capacity JSON in ``State!B2``;
* header and title formats, input vs computed backgrounds, alignment by kind, column
  widths and hidden columns;
* dropdowns (``ONE_OF_RANGE`` over a named column or a list, ``ONE_OF_LIST`` for a
  codec's own choices and Yes/No), whole-number bounds (``NUMBER_BETWEEN``), checkboxes
  (``BOOLEAN``) for the watcher's tick column;
* named ranges for every block, named cell, list and ``lay.names`` entry;
* conditional formats for ``lay.colours`` (``TEXT_EQ`` / ``TEXT_CONTAINS``);
* the rules (``booleanRule``: ``TEXT_EQ``, ``NUMBER_LESS_THAN_EQ``, ``CUSTOM_FORMULA``) and
  data bars (a ``gradientRule``: Google has no data bars) of the layout, after the colours,
  each sheet's in the layout's order (the first wins);
* fixed cells (and their fonts), checkboxes (``BOOLEAN``, unticked), one-cell dropdowns,
  merges (``mergeCells``), row heights (points to pixels), frozen rows and columns per sheet,
  and line charts (``addChart``, ``basicChart`` ``LINE``, drawn once over every row);
* warning-only protection of every protected sheet, its input cells left unprotected.

Print setup is the workbook's only: the Sheets API has no request for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sheetsync.backends.gsheets import cell_data
from sheetsync.core.errors import BattleStateError
from sheetsync.core.layout import (
    Area,
    Block,
    Cell,
    Chart,
    Choice,
    Colours,
    Column,
    DataBar,
    Int,
    Layout,
    Rule,
    col_letter,
)
from sheetsync.sheets.backend import Formula, parse_range
from sheetsync.sheets.draw import OPEN_ROWS, defined_names

__all__ = ["COMPUTED_RGB", "HEADER_RGB", "INPUT_RGB", "SHEET_ID_BASE", "init_requests_for", "mark_value", "named_grids",
           "sheet_ids_for"]

SHEET_ID_BASE = 7100
INPUT_RGB = {"red": 1.0, "green": 0.976, "blue": 0.878}
COMPUTED_RGB = {"red": 0.933, "green": 0.933, "blue": 0.933}
HEADER_RGB = {"red": 0.184, "green": 0.243, "blue": 0.306}

NUMBER_KINDS = ("int", "number", "percent", "bool")
WHITE = {"red": 1.0, "green": 1.0, "blue": 1.0}
PIXELS_PER_CHAR = 7


def _rgb(hexcolour: str) -> dict[str, float]:
    return {k: int(hexcolour[i:i + 2], 16) / 255 for k, i in (("red", 0), ("green", 2), ("blue", 4))}


def _grid(sheet_id: int, r1: int, c1: int, r2: int, c2: int) -> dict[str, int]:
    """1-based inclusive rows/cols -> a GridRange (0-based, end exclusive)."""
    return {"sheetId": sheet_id, "startRowIndex": r1 - 1, "endRowIndex": r2, "startColumnIndex": c1 - 1,
            "endColumnIndex": c2}


def mark_value(lay: Layout) -> tuple[str, str | None]:
    """``State!B1`` and ``B2``: the mark ``system@version`` and the capacity JSON, exactly
    as :func:`sheetsync.sheets.marks.mark_updates` writes them."""
    cap = json.dumps(lay.capacity, sort_keys=True, separators=(",", ":")) if lay.capacity else None
    return f"{lay.system}@{lay.version}", cap


def _row_col(address: str) -> tuple[int, int]:
    rng = parse_range(f"X!{address}")
    return rng.row1, rng.col1


def _last_row(b: Block, open_rows: int = OPEN_ROWS) -> int:
    """An open-ended block (the Log) is decorated and named as far as the workbook's."""
    return b.last_row if b.last_row is not None else b.first_row + open_rows


def _column_grid(ids: Mapping[str, int], b: Block, key: str, *, header: bool = False,
                 open_rows: int = OPEN_ROWS) -> dict[str, int]:
    c = b.first_col + b.index(key)
    return _grid(ids[b.sheet], b.header_row if header else b.first_row, c, _last_row(b, open_rows), c)


def _block_grid(ids: Mapping[str, int], b: Block, *, header: bool = False, open_rows: int = OPEN_ROWS) -> dict[str, int]:
    return _grid(ids[b.sheet], b.header_row if header else b.first_row, b.first_col, _last_row(b, open_rows),
                 b.last_col)


def _box_grid(ids: Mapping[str, int], lay: Layout, target: str) -> tuple[str, dict[str, int]]:
    sheet, r1, c1, r2, c2 = lay.box(target)
    return sheet, _grid(ids[sheet], r1, c1, r2, c2)


def _cell_grid(ids: Mapping[str, int], c: Cell) -> dict[str, int]:
    row, col = _row_col(c.address)
    return _grid(ids[c.sheet], row, col, row, col)


def _area_grid(ids: Mapping[str, int], a: Area) -> dict[str, int]:
    return _grid(ids[a.sheet], a.first_row, a.first_col, a.first_row + a.rows - 1, a.first_col + a.cols - 1)


def _sheet_size(lay: Layout, sheet: str) -> tuple[int, int]:
    """Rows and columns of a sheet: room for every block (at the layout's capacity), named
    cell and area on it, and a margin."""
    rows, cols = 50, 26
    for b in lay.blocks.values():
        if b.sheet == sheet:
            rows = max(rows, _last_row(b, lay.open_rows) + 5)
            cols = max(cols, b.last_col + 2)
    for c in lay.cells.values():
        if c.sheet == sheet:
            r, k = _row_col(c.address)
            rows, cols = max(rows, r + 5), max(cols, k + 2)
    for a in lay.areas.values():
        if a.sheet == sheet:
            rows = max(rows, a.first_row + a.rows + 2)
            cols = max(cols, a.first_col + a.cols + 1)
    return rows, cols


def _frozen_rows(lay: Layout, sheet: str) -> int:
    """A sheet that is one table keeps its header in view."""
    blocks = [b for b in lay.blocks.values() if b.sheet == sheet]
    others = [c for c in lay.cells.values() if c.sheet == sheet] + [a for a in lay.areas.values() if a.sheet == sheet]
    if len(blocks) == 1 and not others and sheet not in lay.hidden:
        return blocks[0].header_row
    return 0


def _grid_properties(lay: Layout, sheet: str, rows: int, cols: int) -> dict[str, int]:
    """A sheet's size and frozen panes: the layout's (rows, columns), else under its only table."""
    props = {"rowCount": rows, "columnCount": cols}
    if sheet in lay.frozen:
        props["frozenRowCount"], props["frozenColumnCount"] = lay.frozen[sheet]
    else:
        props["frozenRowCount"] = _frozen_rows(lay, sheet)
    return props


def sheet_ids_for(lay: Layout, existing: Mapping[str, int]) -> dict[str, int]:
    """A sheet id for every sheet of the layout, none taken by ``existing`` (title -> id)."""
    taken = set(existing.values())
    ids: dict[str, int] = {}
    next_id = SHEET_ID_BASE
    for s in lay.sheets:
        while next_id in taken:
            next_id += 1
        ids[s] = next_id
        taken.add(next_id)
        next_id += 1
    return ids


def _ref_grid(ids: Mapping[str, int], ref: str) -> dict[str, int]:
    rng = parse_range(ref.replace("$", ""))
    return _grid(ids[rng.sheet], rng.row1, rng.col1, rng.row2 or rng.row1, rng.col2)


def named_grids(lay: Layout, ids: Mapping[str, int]) -> dict[str, tuple[str, dict[str, int]]]:
    """Every named range: name -> (absolute A1 reference, GridRange), the very names and
    ranges of the drawn workbook's defined names (:func:`sheetsync.sheets.draw.defined_names`:
    blocks, named cells, areas, ``lay.names`` and ``List_<key>``)."""
    return {name: (ref, _ref_grid(ids, ref)) for name, ref in defined_names(lay).items()}


def _one_of_list(values: Sequence[Any], *, strict: bool = True) -> dict[str, Any]:
    return {"condition": {"type": "ONE_OF_LIST", "values": [{"userEnteredValue": str(v)} for v in values]},
            "strict": strict, "showCustomUi": True}


def _number_between(low: int, high: int, note: str) -> dict[str, Any]:
    return {"condition": {"type": "NUMBER_BETWEEN", "values": [{"userEnteredValue": str(low)},
                                                                 {"userEnteredValue": str(high)}]},
            "strict": True, "inputMessage": note or f"A whole number from {low} to {high}"}


def _codec_rule(codec: Any, kind: str, note: str) -> dict[str, Any] | None:
    if isinstance(codec, Int) and codec.low is not None and codec.high is not None:
        return _number_between(codec.low, codec.high, note)
    if isinstance(codec, Choice) and codec.options:
        return _one_of_list(codec.options)
    if kind == "bool":
        return _one_of_list(["Yes", "No"], strict=False)
    return None


def _column_rule(lay: Layout, names: Mapping[str, tuple[str, dict[str, int]]], col: Column) -> dict[str, Any] | None:
    """The dropdown or bound of an input column, from its ``choices``, then its codec.  A
    dropdown of names (``=Unit_Names``) only warns: the system checks the name (a unit
    typed before it is listed); a list's refuses anything else, or only warns when the
    layout's dropdowns do (``lay.dropdowns.list_errors``, as the workbook's)."""
    if not col.is_input:
        return None
    if col.choices:
        name = col.choices[1:] if col.choices.startswith("=") else f"List_{col.choices}"
        strict = not col.choices.startswith("=") and lay.dropdowns.list_errors == "stop"  # "warning": Google marks it
        if name in names:
            return {"condition": {"type": "ONE_OF_RANGE", "values": [{"userEnteredValue": "=" + names[name][0]}]},
                    "strict": strict, "showCustomUi": True}
        if col.choices in lay.lists:
            return _one_of_list(lay.lists[col.choices], strict=strict)
    return _codec_rule(col.codec, col.kind, col.note)


def _is_buttons(b: Block) -> bool:
    return b.name.endswith("_Buttons") and "tick" in {c.key for c in b.columns}


def _formula(text: str) -> Formula:
    text = text.strip()
    return Formula(text if text.startswith("=") else "=" + text)


def _house_rows(b: Block, rows: Sequence[Any]) -> list[tuple[list[Any], Sequence[Any]]]:
    """Each House Rules row as cell values over the block's columns, and its choices."""
    out: list[tuple[list[Any], Sequence[Any]]] = []
    for row in rows:
        if isinstance(row, Mapping):
            choices = row.get("choices") or ()
            out.append((b.row_values({k: v for k, v in row.items() if k != "choices"}), choices))
        else:  # (key, value, default, ruling), as sheets.draw takes them
            values = list(row)
            keys = ("key", "value", "default", "ruling")
            if len(values) == len(keys) and set(keys) <= {c.key for c in b.columns}:
                out.append((b.row_values(dict(zip(keys, values, strict=True))), ()))
            else:
                out.append((values[: len(b.columns)] + [None] * (len(b.columns) - len(values)), ()))
    if len(out) > (b.rows or len(out)):
        raise ValueError(f"{b.name} holds {b.rows} rows, not {len(out)} house rules")
    return out


_Cells = dict[str, dict[tuple[int, int], dict[str, Any]]]
_Put = Callable[..., None]


def _label_cells(lay: Layout, put: _Put, title: str) -> None:
    """The title in the first sheet's A1, each named cell's label on its left, and each
    area's title above it."""
    if title and lay.sheets:
        put(lay.sheets[0], 1, 1, title)
    for c in lay.cells.values():
        row, col = _row_col(c.address)
        if col > 1:
            put(c.sheet, row, col - 1, c.label, c.note)
    for a in lay.areas.values():
        if a.title and a.first_row > 1:
            put(a.sheet, a.first_row - 1, a.first_col, a.title)


def _block_cells(b: Block, put: _Put, captions: Sequence[str],
                 house: list[tuple[list[Any], Sequence[Any]]]) -> None:
    """A block's title and headers, and its rows where a blank tracker fills them: the
    buttons' captions and unticked boxes, or the House Rules rows."""
    if b.title and b.header_row > 1:
        put(b.sheet, b.header_row - 1, b.first_col, b.title, b.note)
    for j, column in enumerate(b.columns):
        put(b.sheet, b.header_row, b.first_col + j, column.header, column.note)
    if _is_buttons(b):
        action, tick = b.first_col + b.index("action"), b.first_col + b.index("tick")
        for i, caption in enumerate(list(captions)[: b.rows or len(captions)]):
            put(b.sheet, b.first_row + i, action, caption)
            put(b.sheet, b.first_row + i, tick, False)
    if b.name == "HouseRules_Table":
        for i, (values, _choices) in enumerate(house):
            for j, v in enumerate(values):
                put(b.sheet, b.first_row + i, b.first_col + j, v)


def _list_values(lay: Layout, put: _Put, cells: _Cells,
                 names: Mapping[str, tuple[str, dict[str, int]]]) -> None:
    """Each list's values under its key, where the workbook has them: ``List_<key>``."""
    for key, values in lay.lists.items():
        rng = parse_range(names[f"List_{key}"][0].replace("$", ""))
        sheet = next(s for s in lay.sheets if s.casefold() == rng.sheet.casefold())
        if rng.row1 > 1 and (rng.row1 - 1, rng.col1) not in cells[sheet]:
            put(sheet, rng.row1 - 1, rng.col1, key)
        for i, v in enumerate(values):
            put(sheet, rng.row1 + i, rng.col1, v)


def _computed_cells(lay: Layout, put: _Put) -> None:
    """The columns' formulas down every row, the fixed cells, and the unticked checkboxes."""
    for target, make in lay.formulas.items():
        block_name, _, key = target.partition(".")
        b = lay.blocks[block_name]
        if b.rows is None:
            continue
        col = b.first_col + b.index(key)
        for row in range(b.first_row, _last_row(b, lay.open_rows) + 1):
            put(b.sheet, row, col, _formula(make(lay, row)))
    for st in lay.static:
        row, col = _row_col(st.address)
        put(st.sheet, row, col, _formula(str(st.value)) if st.formula else st.value)
    for target in lay.checkboxes:
        sheet, r1, c1, r2, _c2 = lay.box(target)
        for row in range(r1, r2 + 1):
            put(sheet, row, c1, False)


def _static_cells(lay: Layout, captions: Sequence[str], house: list[tuple[list[Any], Sequence[Any]]],
                  title: str, names: Mapping[str, tuple[str, dict[str, int]]]) -> _Cells:
    """Every cell a blank tracker holds, as ``CellData`` by sheet and (row, column)."""
    cells: _Cells = {s: {} for s in lay.sheets}

    def put(sheet: str, row: int, col: int, value: Any, note: str = "") -> None:
        data = cell_data(value, f"{sheet}!{col_letter(col)}{row}")
        if note:
            data["note"] = note
        if data:
            cells[sheet][(row, col)] = data

    _label_cells(lay, put, title)
    for b in lay.blocks.values():
        _block_cells(b, put, captions, house)
    _list_values(lay, put, cells, names)
    _computed_cells(lay, put)
    if "State" in cells:
        mark, cap = mark_value(lay)
        put("State", 1, 2, mark)
        put("State", 2, 2, cap)
    return cells


def _outline_requests(ids: Mapping[str, int], a: Area) -> list[dict[str, Any]]:
    """An area's outlined rectangles (a hex's two cells, H2), or a thin grid over the whole
    area when it has none."""
    if not a.outlines:
        thin = {"style": "SOLID", "color": _rgb("9A9A9A")}
        return [{"updateBorders": {"range": _area_grid(ids, a), "top": thin, "bottom": thin, "left": thin,
                                   "right": thin, "innerHorizontal": thin, "innerVertical": thin}}]
    medium = {"style": "SOLID_MEDIUM", "color": _rgb("404040")}
    out = []
    for dr, dc, rows, cols in a.outlines:
        r1, c1 = max(dr, 0), max(dc, 0)
        r2, c2 = min(dr + rows, a.rows) - 1, min(dc + cols, a.cols) - 1
        if r1 > r2 or c1 > c2:
            continue
        grid = _grid(ids[a.sheet], a.first_row + r1, a.first_col + c1, a.first_row + r2, a.first_col + c2)
        out.append({"updateBorders": {"range": grid, "top": medium, "bottom": medium, "left": medium, "right": medium}})
    return out


def _colour_target(lay: Layout, ids: Mapping[str, int], target: str) -> tuple[str, dict[str, int]]:
    if target in lay.areas:
        return lay.areas[target].sheet, _area_grid(ids, lay.areas[target])
    name, _, key = target.partition(".")
    b = lay.block(name)
    return b.sheet, (_column_grid(ids, b, key, open_rows=lay.open_rows) if key else _block_grid(ids, b, open_rows=lay.open_rows))


_REF = re.compile(r"(?:'(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_]*)!\$?[A-Za-z]{1,3}\$?\d+(?::\$?[A-Za-z]{1,3}\$?\d+)?")
_QUOTED = re.compile(r'"(?:[^"]|"")*"')


def _same_sheet(expr: str, sheet: str) -> str:
    """A conditional format's formula at Google may name only its own sheet: a reference
    to another (``Battle!$A$15``) is read through ``INDIRECT("Battle!$A$15")``."""
    def swap(m: re.Match[str]) -> str:
        ref = m.group(0)
        title = ref.rsplit("!", 1)[0]
        title = title[1:-1].replace("''", "'") if title.startswith("'") else title
        if title.casefold() == sheet.casefold():
            return ref
        return 'INDIRECT("' + ref.replace('"', '""') + '")'

    out, last = [], 0
    for q in _QUOTED.finditer(expr):  # leave text in quotes alone
        out.append(_REF.sub(swap, expr[last:q.start()]))
        out.append(q.group(0))
        last = q.end()
    out.append(_REF.sub(swap, expr[last:]))
    return "".join(out)


def _colour_rules(deco: Colours, grid: Mapping[str, int], sheet: str) -> list[dict[str, Any]]:
    """The conditional formats of a decoration: a plain key is the text to match (whole,
    or a part with ``contains``: ``TEXT_EQ`` / ``TEXT_CONTAINS``); a key starting with ``=``
    is an expression the cell is compared with, as a custom formula relative to the
    range's top-left cell (the workbook's rule, word for word)."""
    first = f"{col_letter(grid['startColumnIndex'] + 1)}{grid['startRowIndex'] + 1}"
    out = []
    for key, colour in deco.colours.items():
        fmt: dict[str, Any] = {"backgroundColor": _rgb(colour)}
        r, g, b = (int(colour[i:i + 2], 16) for i in (0, 2, 4))
        if 0.299 * r + 0.587 * g + 0.114 * b < 110:  # white text on a dark fill
            fmt["textFormat"] = {"foregroundColor": WHITE}
        if key.startswith("="):
            expr = _same_sheet(key[1:], sheet)
            test = (f"=AND(LEN({first})>0,ISNUMBER(SEARCH({expr},{first})))" if deco.contains
                    else f'=AND({first}<>"",{first}={expr})')
            condition: dict[str, Any] = {"type": "CUSTOM_FORMULA", "values": [{"userEnteredValue": test}]}
        else:
            condition = {"type": "TEXT_CONTAINS" if deco.contains else "TEXT_EQ", "values": [{"userEnteredValue": key}]}
        out.append({"ranges": [dict(grid)], "booleanRule": {"condition": condition, "format": fmt}})
    return out


def _text_format(rule: Rule) -> dict[str, Any]:
    fmt: dict[str, Any] = {}
    if rule.fill:
        fmt["backgroundColor"] = _rgb(rule.fill)
    text: dict[str, Any] = {}
    if rule.bold:
        text["bold"] = True
    if rule.italic:
        text["italic"] = True
    if rule.strike:
        text["strikethrough"] = True
    if rule.colour:
        text["foregroundColor"] = _rgb(rule.colour)
    if text:
        fmt["textFormat"] = text
    return fmt


def _rule(ids: Mapping[str, int], lay: Layout, rule: Rule) -> tuple[str, dict[str, Any]]:
    """A :class:`Rule` as a ``booleanRule``: ``TEXT_EQ`` for a text the cell equals,
    ``NUMBER_LESS_THAN_EQ`` for at most a number, else a ``CUSTOM_FORMULA`` relative to the
    range's top-left cell (the workbook's formula, another sheet read through INDIRECT)."""
    sheet, grid = _box_grid(ids, lay, rule.target)
    if rule.kind == "equals":
        condition: dict[str, Any] = {"type": "TEXT_EQ", "values": [{"userEnteredValue": rule.when}]}
    elif rule.kind == "at_most":
        condition = {"type": "NUMBER_LESS_THAN_EQ", "values": [{"userEnteredValue": rule.when}]}
    else:
        condition = {"type": "CUSTOM_FORMULA", "values": [{"userEnteredValue": "=" + _same_sheet(rule.when, sheet)}]}
    return sheet, {"ranges": [grid], "booleanRule": {"condition": condition, "format": _text_format(rule)}}


def _bar_rule(ids: Mapping[str, int], lay: Layout, bar: DataBar) -> tuple[str, dict[str, Any]]:
    """A data bar as Google shows one: a colour scale from ``low`` to the column's largest."""
    sheet, grid = _box_grid(ids, lay, bar.target)
    return sheet, {"ranges": [grid], "gradientRule": {
        "minpoint": {"type": "NUMBER", "value": str(bar.low), "color": _rgb(bar.low_colour)},
        "maxpoint": {"type": "MAX", "color": _rgb(bar.high_colour)}}}


def _chart_request(ids: Mapping[str, int], lay: Layout, spec: Chart) -> dict[str, Any]:
    """An ``addChart`` of a line chart (``basicChart`` ``LINE``): the block's first column
    as the domain, its next columns as the series (headers as their names), drawn once over
    every row of the block, at the layout's anchor (cm -> pixels at 96 per inch)."""
    hist = lay.block(spec.block)
    sheet_id = ids[hist.sheet]
    shown = max(1, min(spec.series(lay), len(hist.columns) - 1))
    row, col = _row_col(spec.anchor(lay, shown))
    last = hist.last_row or hist.first_row
    axis = []
    if spec.x_title:
        axis.append({"position": "BOTTOM_AXIS", "title": spec.x_title})
    if spec.y_title:
        axis.append({"position": "LEFT_AXIS", "title": spec.y_title})
    return {"addChart": {"chart": {
        "spec": {"title": spec.fixed_title(lay, shown) if spec.fixed_title else spec.title, "basicChart": {
            "chartType": "LINE", "legendPosition": "RIGHT_LEGEND", "headerCount": 1, "axis": axis,
            "domains": [{"domain": {"sourceRange": {"sources": [
                _grid(sheet_id, hist.header_row, hist.first_col, last, hist.first_col)]}}}],
            "series": [{"series": {"sourceRange": {"sources": [
                _grid(sheet_id, hist.header_row, hist.first_col + 1 + i, last, hist.first_col + 1 + i)]}},
                "targetAxis": "LEFT_AXIS"} for i in range(shown)],
        }},
        "position": {"overlayPosition": {"anchorCell": {"sheetId": sheet_id, "rowIndex": row - 1, "columnIndex": col - 1},
                                         "widthPixels": round(spec.width / 2.54 * 96),
                                         "heightPixels": round(spec.height / 2.54 * 96)}},
    }}}


def _sheet_requests(lay: Layout, ids: Mapping[str, int]) -> list[dict[str, Any]]:
    """An ``addSheet`` per sheet of the layout, in its order."""
    reqs: list[dict[str, Any]] = []
    for index, s in enumerate(lay.sheets):
        rows, cols = _sheet_size(lay, s)
        reqs.append({"addSheet": {"properties": {
            "sheetId": ids[s], "title": s, "index": index, "hidden": s in lay.hidden,
            "gridProperties": _grid_properties(lay, s, rows, cols),
        }}})
    return reqs


def _cell_requests(ids: Mapping[str, int], cells: _Cells) -> list[dict[str, Any]]:
    """One ``updateCells`` per sheet over the box that holds its static cells."""
    reqs: list[dict[str, Any]] = []
    for sheet, at in cells.items():
        if not at:
            continue
        r1, r2 = min(r for r, _ in at), max(r for r, _ in at)
        c1, c2 = min(c for _, c in at), max(c for _, c in at)
        rows_data = [{"values": [at.get((r, c), {}) for c in range(c1, c2 + 1)]} for r in range(r1, r2 + 1)]
        reqs.append({"updateCells": {"rows": rows_data, "fields": "userEnteredValue,note",
                                     "start": {"sheetId": ids[sheet], "rowIndex": r1 - 1, "columnIndex": c1 - 1}}})
    return reqs


def _block_format_requests(lay: Layout, ids: Mapping[str, int], b: Block) -> list[dict[str, Any]]:
    """A block's title and header formats, each column's alignment (numbers centred, text
    left) and percent format, and the input/computed fill of its rows."""
    reqs: list[dict[str, Any]] = []
    if b.title and b.header_row > 1:
        reqs.append({"repeatCell": {
            "range": _grid(ids[b.sheet], b.header_row - 1, b.first_col, b.header_row - 1, b.first_col),
            "cell": {"userEnteredFormat": {"textFormat": {"bold": True, "fontSize": 12}}},
            "fields": "userEnteredFormat.textFormat(bold,fontSize)"}})
    reqs.append({"repeatCell": {
        "range": _grid(ids[b.sheet], b.header_row, b.first_col, b.header_row, b.last_col),
        "cell": {"userEnteredFormat": {"backgroundColor": HEADER_RGB, "wrapStrategy": "WRAP",
                                       "textFormat": {"bold": True, "foregroundColor": WHITE}}},
        "fields": "userEnteredFormat(backgroundColor,textFormat,wrapStrategy)"}})
    for col in b.columns:  # a header sits over its values: numbers centred, text left
        fmt: dict[str, Any] = {"horizontalAlignment": "CENTER" if col.kind in NUMBER_KINDS else "LEFT"}
        fields = "userEnteredFormat.horizontalAlignment"
        reqs.append({"repeatCell": {"range": _column_grid(ids, b, col.key, header=True, open_rows=lay.open_rows),
                                    "cell": {"userEnteredFormat": fmt}, "fields": fields}})
        if col.kind == "percent":
            reqs.append({"repeatCell": {"range": _column_grid(ids, b, col.key, open_rows=lay.open_rows),
                                        "cell": {"userEnteredFormat": {"numberFormat": {"type": "PERCENT", "pattern": "0%"}}},
                                        "fields": "userEnteredFormat.numberFormat"}})
    if b.sheet in lay.hidden or b.rows is None:
        return reqs
    for col in b.columns:
        reqs.append({"repeatCell": {"range": _column_grid(ids, b, col.key, open_rows=lay.open_rows), "cell": {"userEnteredFormat": {
            "backgroundColor": INPUT_RGB if col.is_input else COMPUTED_RGB}},
            "fields": "userEnteredFormat.backgroundColor"}})
    return reqs


def _format_requests(lay: Layout, ids: Mapping[str, int]) -> list[dict[str, Any]]:
    """The blocks' formats, the named cells' input/computed fill, and the areas' small
    centred text."""
    reqs: list[dict[str, Any]] = []
    for b in lay.blocks.values():
        reqs += _block_format_requests(lay, ids, b)
    for c in lay.cells.values():
        reqs.append({"repeatCell": {"range": _cell_grid(ids, c), "cell": {"userEnteredFormat": {
            "backgroundColor": INPUT_RGB if c.is_input else COMPUTED_RGB}},
            "fields": "userEnteredFormat.backgroundColor"}})
    for a in lay.areas.values():
        reqs.append({"repeatCell": {"range": _area_grid(ids, a), "cell": {"userEnteredFormat": {
            "horizontalAlignment": "CENTER", "verticalAlignment": "MIDDLE", "wrapStrategy": "WRAP",
            "textFormat": {"fontSize": 8}}},
            "fields": "userEnteredFormat(horizontalAlignment,verticalAlignment,wrapStrategy,textFormat.fontSize)"}})
    return reqs


def _dimension_requests(lay: Layout, ids: Mapping[str, int]) -> list[dict[str, Any]]:
    """The areas' row heights and outlines, then every column's width (the widest of what
    it holds) and the hidden columns."""
    reqs: list[dict[str, Any]] = []
    widths: dict[tuple[str, int], int] = {}
    hidden_cols: set[tuple[str, int]] = set()
    for b in lay.blocks.values():
        for j, col in enumerate(b.columns):
            at = (b.sheet, b.first_col + j)
            widths[at] = max(widths.get(at, 0), col.width)
            if col.hidden:
                hidden_cols.add(at)
    for a in lay.areas.values():
        for k in range(a.first_col, a.first_col + a.cols):
            widths[(a.sheet, k)] = max(widths.get((a.sheet, k), 0), round(a.cell_width or 9))
        if a.cell_height is not None:  # points -> pixels
            reqs.append({"updateDimensionProperties": {
                "range": {"sheetId": ids[a.sheet], "dimension": "ROWS", "startIndex": a.first_row - 1,
                          "endIndex": a.first_row - 1 + a.rows},
                "properties": {"pixelSize": round(a.cell_height * 4 / 3)}, "fields": "pixelSize"}})
        reqs += _outline_requests(ids, a)
    for (sheet, k), width in sorted(widths.items(), key=lambda item: (lay.sheets.index(item[0][0]), item[0][1])):
        reqs.append({"updateDimensionProperties": {
            "range": {"sheetId": ids[sheet], "dimension": "COLUMNS", "startIndex": k - 1, "endIndex": k},
            "properties": {"pixelSize": width * PIXELS_PER_CHAR + 5}, "fields": "pixelSize"}})
    for sheet, k in sorted(hidden_cols, key=lambda at: (lay.sheets.index(at[0]), at[1])):
        reqs.append({"updateDimensionProperties": {
            "range": {"sheetId": ids[sheet], "dimension": "COLUMNS", "startIndex": k - 1, "endIndex": k},
            "properties": {"hiddenByUser": True}, "fields": "hiddenByUser"}})
    return reqs


def _block_validation_requests(lay: Layout, ids: Mapping[str, int], names: Mapping[str, tuple[str, dict[str, int]]],
                               b: Block) -> list[dict[str, Any]]:
    """A visible block's column rules: the buttons' tick boxes, and each column's own rule
    (the layout's checkboxes and the House Rules values are drawn elsewhere)."""
    reqs: list[dict[str, Any]] = []
    if b.sheet in lay.hidden:
        return reqs
    for col in b.columns:
        if f"{b.name}.{col.key}" in lay.checkboxes:
            continue  # drawn with the layout's checkboxes
        if _is_buttons(b) and col.key == "tick":
            reqs.append({"setDataValidation": {"range": _column_grid(ids, b, "tick", open_rows=lay.open_rows),
                                               "rule": {"condition": {"type": "BOOLEAN"}, "showCustomUi": True}}})
            continue
        if b.name == "HouseRules_Table":
            continue
        rule = _column_rule(lay, names, col)
        if rule is not None:
            reqs.append({"setDataValidation": {"range": _column_grid(ids, b, col.key, open_rows=lay.open_rows), "rule": rule}})
    return reqs


def _house_validation_requests(ids: Mapping[str, int], house_block: Block | None,
                               house: list[tuple[list[Any], Sequence[Any]]]) -> list[dict[str, Any]]:
    """A dropdown on each House Rules value that has choices (Yes/No for a switch)."""
    reqs: list[dict[str, Any]] = []
    if house_block is None or "value" not in {c.key for c in house_block.columns}:
        return reqs
    value_col = house_block.first_col + house_block.index("value")
    for i, (_values, choices) in enumerate(house):
        if choices:
            row = house_block.first_row + i
            reqs.append({"setDataValidation": {
                "range": _grid(ids[house_block.sheet], row, value_col, row, value_col),
                "rule": _one_of_list(["Yes", "No"] if set(choices) == {True, False} else list(choices))}})
    return reqs


def _validation_requests(lay: Layout, ids: Mapping[str, int], names: Mapping[str, tuple[str, dict[str, int]]],
                         house_block: Block | None, house: list[tuple[list[Any], Sequence[Any]]]) -> list[dict[str, Any]]:
    """Every data validation: the blocks' columns, the House Rules values, the checkboxes,
    the fixed dropdowns, and the named input cells."""
    reqs: list[dict[str, Any]] = []
    for b in lay.blocks.values():
        reqs += _block_validation_requests(lay, ids, names, b)
    reqs += _house_validation_requests(ids, house_block, house)
    for target in lay.checkboxes:
        _sheet, grid = _box_grid(ids, lay, target)
        reqs.append({"setDataValidation": {"range": grid,
                                           "rule": {"condition": {"type": "BOOLEAN"}, "showCustomUi": True}}})
    for at in lay.choices_at:
        row, col = _row_col(at.address)
        reqs.append({"setDataValidation": {"range": _grid(ids[at.sheet], row, col, row, col),
                                           "rule": _one_of_list(at.options)}})
    for c in lay.cells.values():
        if c.is_input:
            rule = _codec_rule(c.codec, c.codec.kind, c.note)
            if rule is not None:
                reqs.append({"setDataValidation": {"range": _cell_grid(ids, c), "rule": rule}})
    return reqs


def _conditional_format_requests(lay: Layout, ids: Mapping[str, int]) -> list[dict[str, Any]]:
    """The colours' conditional formats in the layout's order, then the data bars and
    rules after them (the first wins), each indexed within its sheet."""
    reqs: list[dict[str, Any]] = []
    per_sheet: dict[str, int] = {}
    drawn = [(sheet, rule) for deco in lay.colours
             for sheet, grid in (_colour_target(lay, ids, deco.target),)
             for rule in _colour_rules(deco, grid, sheet)]
    drawn += [_bar_rule(ids, lay, bar) for bar in lay.bars] + [_rule(ids, lay, rule) for rule in lay.rules]
    for sheet, rule in drawn:
        index = per_sheet.get(sheet, 0)
        per_sheet[sheet] = index + 1
        reqs.append({"addConditionalFormatRule": {"index": index, "rule": rule}})
    return reqs


def _fixed_look_requests(lay: Layout, ids: Mapping[str, int]) -> list[dict[str, Any]]:
    """The fixed cells' fonts, the merges (wrapped, top-aligned), the row heights, and the
    charts."""
    reqs: list[dict[str, Any]] = []
    for st in lay.static:
        if st.bold or st.size:
            row, col = _row_col(st.address)
            text: dict[str, Any] = {"bold": st.bold}
            if st.size:
                text["fontSize"] = round(st.size)
            reqs.append({"repeatCell": {"range": _grid(ids[st.sheet], row, col, row, col),
                                        "cell": {"userEnteredFormat": {"textFormat": text}},
                                        "fields": "userEnteredFormat.textFormat(" + ",".join(text) + ")"}})
    for merged in lay.merges:
        grid = _ref_grid(ids, merged)
        reqs.append({"mergeCells": {"range": grid, "mergeType": "MERGE_ALL"}})
        reqs.append({"repeatCell": {"range": grid, "cell": {"userEnteredFormat": {
            "wrapStrategy": "WRAP", "verticalAlignment": "TOP"}},
            "fields": "userEnteredFormat(wrapStrategy,verticalAlignment)"}})
    for (sheet, row), points in lay.row_heights.items():  # points -> pixels
        reqs.append({"updateDimensionProperties": {
            "range": {"sheetId": ids[sheet], "dimension": "ROWS", "startIndex": row - 1, "endIndex": row},
            "properties": {"pixelSize": round(points * 4 / 3)}, "fields": "pixelSize"}})
    reqs += [_chart_request(ids, lay, spec) for spec in lay.charts]
    return reqs


def _protection_requests(lay: Layout, ids: Mapping[str, int]) -> list[dict[str, Any]]:
    """Each protected sheet warns before an edit, its input cells and columns excepted."""
    reqs: list[dict[str, Any]] = []
    for sheet in lay.protected:
        inputs = [_column_grid(ids, b, col.key, open_rows=lay.open_rows) for b in lay.blocks.values() if b.sheet == sheet
                  for col in b.columns if col.is_input]
        inputs += [_cell_grid(ids, c) for c in lay.cells.values() if c.sheet == sheet and c.is_input]
        protected: dict[str, Any] = {"range": {"sheetId": ids[sheet]}, "warningOnly": True,
                                     "description": f"{sheet}: written by sheetsync (type only in the input cells)"}
        if inputs:
            protected["unprotectedRanges"] = inputs
        reqs.append({"addProtectedRange": {"protectedRange": protected}})
    return reqs


def init_requests_for(lay: Layout, existing: Mapping[str, int], *, captions: Sequence[str] = (),
                      house_rules: Sequence[Any] = (), title: str = "") -> list[dict[str, Any]]:
    """The batchUpdate requests that lay a blank tracker of ``lay`` into a spreadsheet whose
    sheets are ``existing`` (title -> sheet id).

    ``captions`` label the buttons (the system's steps, in order); ``house_rules`` are the
    House Rules rows, each a sequence over the block's columns or a mapping by column key
    (with ``"choices"``: the value cell's dropdown); ``title`` goes in the first sheet's A1.
    A spreadsheet that already has a sheet of the layout is refused; a lone empty default
    sheet (``Sheet1``) is removed."""
    clash = [s for s in lay.sheets if any(s.casefold() == t.casefold() for t in existing)]
    if clash:
        raise BattleStateError(f"this spreadsheet already has tracker sheets ({', '.join(clash)}); "
                               "use a new spreadsheet or delete them first")
    ids = sheet_ids_for(lay, existing)
    names = named_grids(lay, ids)
    house_block = lay.blocks.get("HouseRules_Table")
    house = _house_rows(house_block, house_rules) if house_block is not None else []
    reqs = _sheet_requests(lay, ids)
    reqs += _cell_requests(ids, _static_cells(lay, captions, house, title, names))
    reqs += _format_requests(lay, ids)
    reqs += _dimension_requests(lay, ids)
    reqs += _validation_requests(lay, ids, names, house_block, house)
    reqs += [{"addNamedRange": {"namedRange": {"name": name, "range": grid}}} for name, (_ref, grid) in names.items()]
    reqs += _conditional_format_requests(lay, ids)
    reqs += _fixed_look_requests(lay, ids)
    reqs += _protection_requests(lay, ids)
    if list(existing) in (["Sheet1"], ["Sheet 1"]):
        reqs.append({"deleteSheet": {"sheetId": next(iter(existing.values()))}})
    return reqs
