"""A blank tracker laid out in a Google Sheet: the same layout map as the workbook, sent
as ONE ``spreadsheets:batchUpdate`` (which Google applies atomically).

Sheets are added with sheet ids chosen here, so the same batch can already refer to them:
headers and static cells, dropdown validations, checkboxes for the watcher's buttons,
state colours, warning-only protected ranges over computed cells, named ranges for every
block, frozen headers, hidden Lists and State sheets, and a line chart of Health by phase
under the cohort lines.  The same decorations as the workbook template: headers aligned
with their values, the Battle status merged and wrapped, rolled dice told apart from typed
ones (R25), undone Log rows struck through.
"""

from __future__ import annotations

from typing import Any

from sheetsync.app.bbn.layout import Block, Layout, layout
from sheetsync.app.bbn.template import (
    FROZEN,
    MERGED,
    OUTCOME_COLOURS,
    PROTECTED_SHEETS,
    ROLLED_FILL,
    ROLLED_FONT,
    STATE_COLOURS,
    UNDONE_FONT,
    align_of,
    chart_anchor,
    defined_names,
    house_choices,
    log_undone_formula,
    rolled_formula,
    static_cells,
)
from sheetsync.backends.gsheets import cell_data
from sheetsync.errors import BattleStateError

__all__ = ["SHEET_ID_BASE", "init_requests"]

SHEET_ID_BASE = 7100
INPUT_RGB = {"red": 1.0, "green": 0.976, "blue": 0.878}
COMPUTED_RGB = {"red": 0.933, "green": 0.933, "blue": 0.933}
HEADER_RGB = {"red": 0.184, "green": 0.243, "blue": 0.306}


def _rgb(hexcolour: str) -> dict[str, float]:
    return {k: int(hexcolour[i:i + 2], 16) / 255 for k, i in (("red", 0), ("green", 2), ("blue", 4))}


def _grid(sheet_id: int, r1: int, c1: int, r2: int, c2: int) -> dict[str, int]:
    """1-based inclusive rows/cols → a GridRange (0-based, end exclusive)."""
    return {"sheetId": sheet_id, "startRowIndex": r1 - 1, "endRowIndex": r2, "startColumnIndex": c1 - 1, "endColumnIndex": c2}


def _block_grid(ids: dict[str, int], b: Block, *, col: str | None = None, header: bool = False,
                log_rows: int = 4000) -> dict[str, int]:
    last = b.last_row if b.last_row is not None else b.first_row + log_rows
    c1 = b.first_col + (b.index(col) if col else 0)
    c2 = c1 if col else b.last_col
    return _grid(ids[b.sheet], b.header_row if header else b.first_row, c1, last, c2)


def _sheet_size(lay: Layout, sheet: str) -> tuple[int, int]:
    rows, cols = 100, 26
    for b in lay.blocks.values():
        if b.sheet == sheet:
            rows = max(rows, (b.last_row or b.first_row + lay.log_rows) + 5)
            cols = max(cols, b.last_col + 2)
    return rows, cols


def init_requests(existing: dict[str, int], lay: Layout | None = None) -> list[dict[str, Any]]:
    """The batchUpdate requests that lay a blank tracker into a spreadsheet whose sheets are
    ``existing`` (title → sheet id).  A spreadsheet that already has a tracker sheet is
    refused; a lone empty default sheet ("Sheet1") is removed."""
    lay = lay or layout()
    clash = [s for s in lay.sheets if s in existing]
    if clash:
        raise BattleStateError(f"this spreadsheet already has tracker sheets ({', '.join(clash)}); "
                               "use a new spreadsheet or delete them first")
    taken = set(existing.values())
    ids: dict[str, int] = {}
    next_id = SHEET_ID_BASE
    for s in lay.sheets:
        while next_id in taken:
            next_id += 1
        ids[s] = next_id
        taken.add(next_id)
        next_id += 1
    reqs: list[dict[str, Any]] = []
    for index, s in enumerate(lay.sheets):
        rows, cols = _sheet_size(lay, s)
        frozen_rows, frozen_cols = FROZEN.get(s, (0, 0))
        reqs.append({"addSheet": {"properties": {
            "sheetId": ids[s], "title": s, "index": index, "hidden": s in lay.hidden,
            "gridProperties": {"rowCount": rows, "columnCount": cols, "frozenRowCount": frozen_rows,
                               "frozenColumnCount": frozen_cols},
        }}})
    # static cells: one updateCells per sheet, over the box that holds them
    by_sheet: dict[str, dict[tuple[int, int], Any]] = {}
    for sheet, row, col, value in static_cells(lay):
        by_sheet.setdefault(sheet, {})[(row, col)] = value
    for sheet, cells in by_sheet.items():
        r1, r2 = min(r for r, _ in cells), max(r for r, _ in cells)
        c1, c2 = min(c for _, c in cells), max(c for _, c in cells)
        rows = [{"values": [cell_data(cells.get((r, c))) for c in range(c1, c2 + 1)]} for r in range(r1, r2 + 1)]
        reqs.append({"updateCells": {"rows": rows, "fields": "userEnteredValue",
                                     "start": {"sheetId": ids[sheet], "rowIndex": r1 - 1, "columnIndex": c1 - 1}}})
    # formats: headers, input vs computed
    for b in lay.blocks.values():
        reqs.append({"repeatCell": {"range": _grid(ids[b.sheet], b.header_row, b.first_col, b.header_row, b.last_col),
                                    "cell": {"userEnteredFormat": {"backgroundColor": HEADER_RGB, "textFormat": {
                                        "bold": True, "foregroundColor": {"red": 1, "green": 1, "blue": 1}},
                                        "wrapStrategy": "WRAP"}},
                                    "fields": "userEnteredFormat(backgroundColor,textFormat,wrapStrategy)"}})
        for j, col in enumerate(b.columns):  # a header sits over its values: numbers centred, text left
            c = b.first_col + j
            reqs.append({"repeatCell": {
                "range": _grid(ids[b.sheet], b.header_row, c, (b.last_row or b.first_row + lay.log_rows), c),
                "cell": {"userEnteredFormat": {"horizontalAlignment": align_of(col.kind).upper()}},
                "fields": "userEnteredFormat.horizontalAlignment"}})
        if b.sheet in lay.hidden or b.rows is None:
            continue
        for col in b.columns:
            reqs.append({"repeatCell": {"range": _block_grid(ids, b, col=col.key), "cell": {"userEnteredFormat": {
                "backgroundColor": INPUT_RGB if col.is_input else COMPUTED_RGB}},
                "fields": "userEnteredFormat.backgroundColor"}})
            rule = _validation(lay, col)
            if rule is not None:
                reqs.append({"setDataValidation": {"range": _block_grid(ids, b, col=col.key), "rule": rule}})
    for sheet, merged in MERGED.items():
        for rng in merged:
            grid = _ref_grid(ids, f"{sheet}!{rng}")
            reqs.append({"mergeCells": {"range": grid, "mergeType": "MERGE_ALL"}})
            reqs.append({"repeatCell": {"range": grid, "cell": {"userEnteredFormat": {
                "wrapStrategy": "WRAP", "verticalAlignment": "TOP"}},
                "fields": "userEnteredFormat(wrapStrategy,verticalAlignment)"}})
    for cell, pixels in (("Battle_Status", 40), ("Battle_LastAction", 60)):
        row = int("".join(ch for ch in lay.cells[cell].address if ch.isdigit()))
        reqs.append({"updateDimensionProperties": {
            "range": {"sheetId": ids["Battle"], "dimension": "ROWS", "startIndex": row - 1, "endIndex": row},
            "properties": {"pixelSize": pixels}, "fields": "pixelSize"}})
    orders_block = lay.block("Orders_Table")
    roll_source = orders_block.first_col + orders_block.index("roll_source")
    reqs.append({"updateDimensionProperties": {
        "range": {"sheetId": ids["Orders"], "dimension": "COLUMNS", "startIndex": roll_source - 1, "endIndex": roll_source},
        "properties": {"hiddenByUser": True}, "fields": "hiddenByUser"}})
    buttons = lay.block("Battle_Buttons")
    reqs.append({"setDataValidation": {"range": _block_grid(ids, buttons, col="tick"),
                                       "rule": {"condition": {"type": "BOOLEAN"}, "showCustomUi": True}}})
    house = lay.block("HouseRules_Table")
    for i, key in enumerate(_house_keys()):
        choices = house_choices(key)
        if choices:
            reqs.append({"setDataValidation": {
                "range": _grid(ids["House Rules"], house.first_row + i, house.first_col + 1, house.first_row + i, house.first_col + 1),
                "rule": {"condition": {"type": "ONE_OF_LIST", "values": [{"userEnteredValue": c} for c in choices]},
                         "strict": True, "showCustomUi": True}}})
    # state and outcome colours
    roster = lay.block("Cohorts_Roster")
    orders = lay.block("Orders_Table")
    for colours, b, key in ((STATE_COLOURS, roster, "state"), (OUTCOME_COLOURS, orders, "outcome")):
        for text, colour in colours.items():
            reqs.append({"addConditionalFormatRule": {"index": 0, "rule": {
                "ranges": [_block_grid(ids, b, col=key)],
                "booleanRule": {"condition": {"type": "TEXT_EQ", "values": [{"userEnteredValue": text}]},
                                "format": {"backgroundColor": _rgb(colour)}}}}})
    # a die sheetsync rolled (R25), and Log rows of an undone phase
    reqs.append({"addConditionalFormatRule": {"index": 0, "rule": {
        "ranges": [_block_grid(ids, orders, col="roll")],
        "booleanRule": {"condition": {"type": "CUSTOM_FORMULA", "values": [{"userEnteredValue": "=" + rolled_formula(lay)}]},
                        "format": {"backgroundColor": _rgb(ROLLED_FILL), "textFormat": {
                            "italic": True, "bold": True, "foregroundColor": _rgb(ROLLED_FONT)}}}}}})
    log = lay.block("Log_Table")
    reqs.append({"addConditionalFormatRule": {"index": 0, "rule": {
        "ranges": [_block_grid(ids, log, log_rows=lay.log_rows)],
        "booleanRule": {"condition": {"type": "CUSTOM_FORMULA", "values": [{"userEnteredValue": "=" + log_undone_formula(lay)}]},
                        "format": {"textFormat": {"strikethrough": True, "foregroundColor": _rgb(UNDONE_FONT)}}}}}})
    summary = lay.block("Battle_Summary")
    reqs.append({"addConditionalFormatRule": {"index": 0, "rule": {
        "ranges": [_block_grid(ids, summary, col="health")],
        "gradientRule": {"minpoint": {"type": "NUMBER", "value": "0", "color": _rgb("F8696B")},
                         "maxpoint": {"type": "MAX", "color": _rgb("63BE7B")}}}}})
    # computed cells: protected, warning only (typing there asks first)
    for b in lay.blocks.values():
        if b.sheet not in PROTECTED_SHEETS:
            continue
        for col in b.columns:
            if not col.is_input:
                reqs.append({"addProtectedRange": {"protectedRange": {
                    "range": _block_grid(ids, b, col=col.key, log_rows=lay.log_rows), "warningOnly": True,
                    "description": f"{b.name}.{col.key}: computed by sheetsync"}}})
    # named ranges: the same names as the workbook's defined names
    for name, ref in defined_names(lay).items():
        reqs.append({"addNamedRange": {"namedRange": {"name": name, "range": _ref_grid(ids, ref)}}})
    # the chart of Health by phase, under the cohort lines (room for four); issue 9: it draws
    # the first four cohort columns, and says so, since the table under it has every cohort
    hist = lay.block("Battle_HealthByPhase")
    anchor_row = int(chart_anchor(lay, 4)[1:])
    shown = min(4, len(hist.columns) - 1)
    title = (f"Health by phase: the first {shown} cohorts (every cohort's Health is in the table at "
             f"A{hist.header_row})")
    reqs.append({"addChart": {"chart": {
        "spec": {"title": title, "basicChart": {
            "chartType": "LINE", "legendPosition": "RIGHT_LEGEND", "headerCount": 1,
            "axis": [{"position": "BOTTOM_AXIS", "title": "Phase"}, {"position": "LEFT_AXIS", "title": "Health"}],
            "domains": [{"domain": {"sourceRange": {"sources": [
                _grid(ids["Battle"], hist.header_row, hist.first_col, hist.last_row or hist.first_row, hist.first_col)]}}}],
            "series": [{"series": {"sourceRange": {"sources": [
                _grid(ids["Battle"], hist.header_row, hist.first_col + 1 + i, hist.last_row or hist.first_row, hist.first_col + 1 + i)]}},
                "targetAxis": "LEFT_AXIS"} for i in range(shown)],
        }},
        "position": {"overlayPosition": {"anchorCell": {"sheetId": ids["Battle"], "rowIndex": anchor_row - 1, "columnIndex": 0},
                                         "widthPixels": 640, "heightPixels": 230}},
    }}})
    if list(existing) in (["Sheet1"], ["Sheet 1"]):
        reqs.append({"deleteSheet": {"sheetId": next(iter(existing.values()))}})
    return reqs


def _house_keys() -> list[str]:
    from sheetsync.rules.bbn import HouseRules

    return list(HouseRules.model_fields)


def _validation(lay: Layout, col: Any) -> dict[str, Any] | None:
    if not col.is_input:
        return None
    if col.choices:
        if col.choices.startswith("="):
            ref = defined_names(lay)[col.choices[1:]]
            return {"condition": {"type": "ONE_OF_RANGE", "values": [{"userEnteredValue": "=" + ref}]},
                    "strict": False, "showCustomUi": True}
        from sheetsync.app.bbn.layout import LISTS

        return {"condition": {"type": "ONE_OF_LIST", "values": [{"userEnteredValue": v} for v in LISTS[col.choices]]},
                "strict": col.choices not in ("YesNo",), "showCustomUi": True}
    if col.kind == "int" and col.low is not None and col.high is not None:
        return {"condition": {"type": "NUMBER_BETWEEN", "values": [{"userEnteredValue": str(col.low)},
                                                                     {"userEnteredValue": str(col.high)}]},
                "strict": True, "inputMessage": col.note or f"{col.low} to {col.high}"}
    return None


def _ref_grid(ids: dict[str, int], ref: str) -> dict[str, int]:
    from sheetsync.sheets.backend import parse_range

    rng = parse_range(ref.replace("$", ""))
    return _grid(ids[rng.sheet], rng.row1, rng.col1, rng.row2 or rng.row1, rng.col2)
