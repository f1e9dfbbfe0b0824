"""Decorations as data (issue 9, "Generic middle"): conditional-format rules, data bars,
line charts, merges, row heights, frozen panes, print setup, fixed cells, checkboxes and
cell dropdowns of a :class:`~sheetsync.core.layout.Layout`, drawn by the openpyxl template
(``sheets/draw.py``) and by the Google Sheets initializer (``backends/gsheets_draw.py``);
then the battalion tracker, whose decorations are now all data, drawn whole by both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fake_sheets_api import FakeSheetsServer
from openpyxl import Workbook

from sheetsync.backends.gsheets_draw import init_requests_for, sheet_ids_for
from sheetsync.backends.gsheets_layout import init_requests
from sheetsync.core.layout import (
    Block,
    CellChoices,
    Chart,
    Column,
    DataBar,
    Dropdowns,
    Layout,
    PrintSetup,
    Rule,
    Static,
    col_letter,
)
from sheetsync.sheets.draw import draw_charts, draw_workbook
from sheetsync.systems.bbn.tracker.layout import layout as bbn_layout
from sheetsync.systems.bbn.tracker.template import add_chart, build_template, restore_chart


def small() -> Layout:
    """A hand-made layout with one decoration of each kind."""
    lay = Layout(system="demo", version=1, sheets=["Main"], protected=["Main"])
    lay.add(Block("Units", "Main", 3, (
        Column("name", "Name"),
        Column("hp", "HP", kind="int", is_input=False),
        Column("state", "State", is_input=False),
        Column("tick", "Tick", kind="bool"),
    ), rows=5, title="Units"))
    lay.add(Block("History", "Main", 12, (
        Column("turn", "Turn", kind="int", is_input=False),
        Column("a", "A", kind="int", is_input=False),
        Column("b", "B", kind="int", is_input=False),
        Column("c", "C", kind="int", is_input=False),
    ), rows=4))
    lay.bars.append(DataBar("Units.hp", colour="5B9BD5", low_colour="F8696B", high_colour="63BE7B"))
    lay.rules += [
        Rule("Units.state", "Dead", "equals", fill="808080", colour="FFFFFF"),
        Rule("Units.hp", "0", "at_most", colour="C00000", bold=True),
        Rule("Units.name:state", '$B4<>""', colour="9C9C9C", italic=True, strike=True),
    ]
    lay.charts.append(Chart("History", "HP by turn", lambda _lay, n: f"F{12 + n}", x_title="Turn", y_title="HP",
                            series=lambda _lay: 2, fixed_title=lambda _lay, n: f"HP by turn: the first {n}"))
    lay.merges.append("Main!A1:C1")
    lay.row_heights[("Main", 1)] = 45
    lay.frozen["Main"] = (3, 1)
    lay.printing["Main"] = PrintSetup(landscape=False, pages_wide=2, title_rows="3:3", title_cols="A:A", area="A1:D8",
                                      over_then_down=True, margins=(0.4, 0.4, 0.5, 0.5), grid_lines=False)
    lay.static += [Static("Main", "A1", "Demo tracker", bold=True, size=14), Static("Main", "G1", "=1+1", formula=True),
                   Static("Main", "G2", 7)]
    lay.checkboxes.append("Units.tick")
    lay.choices_at.append(CellChoices("Main", "G3", ("Yes", "No"), "G3: Yes or No"))
    return lay


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as srv:
        yield srv


def _rules(wb: Workbook, sheet: str) -> list[tuple[int, str, Any]]:
    """A sheet's conditional formats, first (winning) first: (priority, range, rule)."""
    out = [(rule.priority, str(cf.sqref), rule) for cf in wb[sheet].conditional_formatting for rule in cf.rules]
    return sorted(out, key=lambda r: r[0])


def _grid(sheet_id: int, a1: str) -> dict[str, int]:
    from sheetsync.sheets.backend import parse_range

    rng = parse_range(f"X!{a1}")
    return {"sheetId": sheet_id, "startRowIndex": rng.row1 - 1, "endRowIndex": rng.row2 or rng.row1,
            "startColumnIndex": rng.col1 - 1, "endColumnIndex": rng.col2}


def _kind(reqs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r[kind] for r in reqs if kind in r]


def _cells(reqs: list[dict[str, Any]], sheet_id: int) -> dict[tuple[int, int], dict[str, Any]]:
    """Every cell the ``updateCells`` requests write on a sheet, by 1-based (row, column)."""
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for body in _kind(reqs, "updateCells"):
        start = body["start"]
        if start["sheetId"] != sheet_id:
            continue
        for i, row in enumerate(body["rows"]):
            for j, value in enumerate(row["values"]):
                if value:
                    out[(start["rowIndex"] + i + 1, start["columnIndex"] + j + 1)] = value
    return out


# -- each decoration, drawn by openpyxl ------------------------------------------------------


def test_rules_and_bar_are_drawn_in_order_by_openpyxl() -> None:
    wb = draw_workbook(small())
    (p1, r1, bar), (p2, r2, dead), (p3, r3, low), (p4, r4, strike) = _rules(wb, "Main")
    assert (r1, bar.type, bar.dataBar.cfvo[0].type, float(bar.dataBar.cfvo[0].val), bar.dataBar.cfvo[1].type) == (
        "B4:B8", "dataBar", "num", 0.0, "max")
    assert bar.dataBar.color.rgb.endswith("5B9BD5")
    assert (r2, dead.type, dead.operator, dead.formula) == ("C4:C8", "cellIs", "equal", ['"Dead"'])
    assert dead.dxf.fill.fgColor.rgb.endswith("808080") and dead.dxf.font.color.rgb.endswith("FFFFFF")
    assert not dead.dxf.font.b and not dead.dxf.font.strike  # only what the rule sets
    assert (r3, low.operator, low.formula, low.dxf.font.b) == ("B4:B8", "lessThanOrEqual", ["0"], True)
    assert low.dxf.fill is None
    assert (r4, strike.type, strike.formula) == ("A4:C8", "expression", ['$B4<>""'])
    assert strike.dxf.font.strike is True and strike.dxf.font.i is True and strike.dxf.font.color.rgb.endswith("9C9C9C")
    assert p1 < p2 < p3 < p4


def test_chart_is_drawn_by_openpyxl_over_the_rows_filled_and_redrawn_on_demand() -> None:
    lay = small()
    wb = draw_workbook(lay)
    ws = wb["Main"]
    (chart,) = ws._charts
    assert chart.anchor == "F14"  # computed from the layout and the series shown
    assert chart.title.tx.rich.p[0].r[0].t == "HP by turn"
    assert [s.val.numRef.f for s in chart.series] == ["'Main'!$B$13", "'Main'!$C$13"]  # a blank: the start row
    assert [s.tx.strRef.f for s in chart.series] == ["'Main'!B12", "'Main'!C12"]  # titled by the headers
    assert (chart.width, chart.height) == (17.0, 6.0)
    for i in range(3):  # three turns played: the axis grows to them
        ws.cell(row=13 + i, column=1, value=i)
    draw_charts(wb, lay, series=3)
    (chart,) = ws._charts  # replaced, never stacked
    assert [s.val.numRef.f for s in chart.series] == ["'Main'!$B$13:$B$15", "'Main'!$C$13:$C$15", "'Main'!$D$13:$D$15"]
    assert chart.anchor == "F15"


def test_merges_heights_freeze_print_static_checkboxes_and_cell_choices_by_openpyxl() -> None:
    wb = draw_workbook(small())
    ws = wb["Main"]
    assert [str(m) for m in ws.merged_cells.ranges] == ["A1:C1"]
    assert ws["A1"].alignment.wrap_text is True and ws["A1"].alignment.vertical == "top"
    assert ws.row_dimensions[1].height == 45
    assert ws.freeze_panes == "B4"  # three rows and one column, not under the sheet's only table
    ps = ws.page_setup
    assert (ps.orientation, ps.fitToWidth, ps.fitToHeight, ps.pageOrder) == ("portrait", 2, 0, "overThenDown")
    assert ws.sheet_properties.pageSetUpPr.fitToPage is True
    assert (ws.print_title_rows, ws.print_title_cols) == ("$3:$3", "$A:$A")
    assert ws.print_area == "'Main'!$A$1:$D$8"
    assert (ws.page_margins.left, ws.page_margins.top, ws.print_options.gridLines) == (0.4, 0.5, False)
    assert ws["A1"].value == "Demo tracker" and ws["A1"].font.b is True and ws["A1"].font.sz == 14
    assert ws["G1"].value == "=1+1" and ws["G2"].value == 7
    assert [ws.cell(row=r, column=4).value for r in range(4, 9)] == [False] * 5
    (dv,) = [d for d in ws.data_validations.dataValidation if str(d.sqref) == "G3"]
    assert (dv.type, dv.formula1, dv.showErrorMessage, dv.error) == ("list", '"Yes,No"', True, "G3: Yes or No")


def test_a_layout_without_print_setup_prints_every_sheet_landscape_one_page_wide() -> None:
    lay = small()
    lay.printing.clear()
    ws = draw_workbook(lay)["Main"]
    assert (ws.page_setup.orientation, ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == ("landscape", 1, 0)
    assert ws.page_setup.paperSize == 9  # A4 unless asked for Letter (issue 22)
    # issue 22: the print area still stops at the rows in use (header rows, fixed cells, filled rows)
    assert ws.print_area == "'Main'!$A$1:$G$12"  # down to the History table's header, across to G1:G3


# -- each decoration, drawn by the Google renderer -------------------------------------------


def test_rules_and_bar_are_google_conditional_formats_in_order() -> None:
    lay = small()
    reqs = init_requests_for(lay, {})
    sid = sheet_ids_for(lay, {})["Main"]
    cfs = _kind(reqs, "addConditionalFormatRule")
    assert [c["index"] for c in cfs] == [0, 1, 2, 3]
    bar, dead, low, strike = (c["rule"] for c in cfs)
    assert bar["ranges"] == [_grid(sid, "B4:B8")]
    assert bar["gradientRule"]["minpoint"] == {"type": "NUMBER", "value": "0",
                                               "color": {"red": 248 / 255, "green": 105 / 255, "blue": 107 / 255}}
    assert bar["gradientRule"]["maxpoint"]["type"] == "MAX"
    assert dead["booleanRule"] == {"condition": {"type": "TEXT_EQ", "values": [{"userEnteredValue": "Dead"}]},
                                   "format": {"backgroundColor": {"red": 128 / 255, "green": 128 / 255, "blue": 128 / 255},
                                              "textFormat": {"foregroundColor": {"red": 1.0, "green": 1.0, "blue": 1.0}}}}
    assert low["booleanRule"]["condition"] == {"type": "NUMBER_LESS_THAN_EQ", "values": [{"userEnteredValue": "0"}]}
    assert low["booleanRule"]["format"] == {"textFormat": {"bold": True, "foregroundColor": {
        "red": 192 / 255, "green": 0.0, "blue": 0.0}}}
    assert strike["ranges"] == [_grid(sid, "A4:C8")]
    assert strike["booleanRule"]["condition"] == {"type": "CUSTOM_FORMULA", "values": [{"userEnteredValue": '=$B4<>""'}]}
    assert strike["booleanRule"]["format"]["textFormat"]["strikethrough"] is True


def test_a_rule_naming_another_sheet_reads_it_through_indirect_at_google() -> None:
    lay = small()
    lay.sheets.append("Other")
    lay.bars.clear()
    lay.rules = [Rule("Units.state", "$C4=Other!$A$1", fill="C6EFCE")]
    (cf,) = _kind(init_requests_for(lay, {}), "addConditionalFormatRule")
    assert cf["rule"]["booleanRule"]["condition"]["values"] == [{"userEnteredValue": '=$C4=INDIRECT("Other!$A$1")'}]


def test_chart_is_a_google_basic_line_chart_drawn_once_over_every_row() -> None:
    lay = small()
    sid = sheet_ids_for(lay, {})["Main"]
    (add,) = _kind(init_requests_for(lay, {}), "addChart")
    spec = add["chart"]["spec"]
    assert spec["title"] == "HP by turn: the first 2"
    basic = spec["basicChart"]
    assert basic["chartType"] == "LINE" and basic["headerCount"] == 1
    assert basic["axis"] == [{"position": "BOTTOM_AXIS", "title": "Turn"}, {"position": "LEFT_AXIS", "title": "HP"}]
    assert basic["domains"] == [{"domain": {"sourceRange": {"sources": [_grid(sid, "A12:A16")]}}}]
    assert [s["series"]["sourceRange"]["sources"] for s in basic["series"]] == [[_grid(sid, "B12:B16")],
                                                                               [_grid(sid, "C12:C16")]]
    position = add["chart"]["position"]["overlayPosition"]
    assert position["anchorCell"] == {"sheetId": sid, "rowIndex": 13, "columnIndex": 5}
    assert (position["widthPixels"], position["heightPixels"]) == (643, 227)  # 17 x 6 cm at 96 dpi


def test_merges_heights_freeze_static_checkboxes_and_cell_choices_at_google() -> None:
    lay = small()
    reqs = init_requests_for(lay, {})
    sid = sheet_ids_for(lay, {})["Main"]
    assert _kind(reqs, "mergeCells") == [{"range": _grid(sid, "A1:C1"), "mergeType": "MERGE_ALL"}]
    assert {"range": {"sheetId": sid, "dimension": "ROWS", "startIndex": 0, "endIndex": 1},
            "properties": {"pixelSize": 60}, "fields": "pixelSize"} in _kind(reqs, "updateDimensionProperties")
    (sheet,) = _kind(reqs, "addSheet")
    grid = sheet["properties"]["gridProperties"]
    assert (grid["frozenRowCount"], grid["frozenColumnCount"]) == (3, 1)
    cells = _cells(reqs, sid)
    assert cells[(1, 1)]["userEnteredValue"] == {"stringValue": "Demo tracker"}
    assert cells[(1, 7)]["userEnteredValue"] == {"formulaValue": "=1+1"}
    assert cells[(2, 7)]["userEnteredValue"] == {"numberValue": 7}
    assert [cells[(r, 4)]["userEnteredValue"] for r in range(4, 9)] == [{"boolValue": False}] * 5
    fonts = [r for r in _kind(reqs, "repeatCell") if r["range"] == _grid(sid, "A1")
             and "textFormat" in r["cell"]["userEnteredFormat"]]
    assert fonts[-1]["cell"]["userEnteredFormat"]["textFormat"] == {"bold": True, "fontSize": 14}
    rules = {(tuple(sorted(v["range"].items())), v["rule"]["condition"]["type"]) for v in _kind(reqs, "setDataValidation")}
    assert (tuple(sorted(_grid(sid, "D4:D8").items())), "BOOLEAN") in rules
    (choice,) = [v for v in _kind(reqs, "setDataValidation") if v["range"] == _grid(sid, "G3")]
    assert choice["rule"]["condition"] == {"type": "ONE_OF_LIST", "values": [{"userEnteredValue": "Yes"},
                                                                             {"userEnteredValue": "No"}]}
    assert choice["rule"]["strict"] is True


def test_every_new_request_is_accepted_by_the_fake_in_one_batch(server: FakeSheetsServer) -> None:
    key = server.create_spreadsheet("Decorations")
    ss = server.spreadsheet(key)
    server.batch_update(ss, {"requests": init_requests_for(small(), {"Sheet1": 0})})
    (main,) = [s for s in ss.sheets if s.properties["title"] == "Main"]
    assert len(main.conditional_formats) == 4 and len(main.charts) == 1 and len(main.merges) == 1
    assert main.conditional_formats[0].get("gradientRule") and main.protected_ranges[0]["warningOnly"] is True


# -- the battalion tracker: every decoration of its layout, drawn by both ----------------------


BBN = bbn_layout()


def _box_a1(lay: Layout, target: str) -> tuple[str, str]:
    sheet, r1, c1, r2, c2 = lay.box(target)
    return sheet, f"{col_letter(c1)}{r1}:{col_letter(c2)}{r2}"


def test_the_battalion_template_and_google_initializer_both_draw_every_decoration() -> None:
    wb = build_template()
    reqs = init_requests({})
    ids = sheet_ids_for(BBN, {})
    cfs = _kind(reqs, "addConditionalFormatRule")
    for bar in BBN.bars:
        sheet, a1 = _box_a1(BBN, bar.target)
        assert any(r.type == "dataBar" and rng == a1 for _p, rng, r in _rules(wb, sheet)), bar
        assert any(c["rule"]["ranges"] == [_grid(ids[sheet], a1)] and "gradientRule" in c["rule"] for c in cfs), bar
    for rule in BBN.rules:
        sheet, a1 = _box_a1(BBN, rule.target)
        drawn = [r for _p, rng, r in _rules(wb, sheet) if rng == a1 and r.type != "dataBar"]
        want = f'"{rule.when}"' if rule.kind == "equals" else rule.when
        assert any(r.formula == [want] for r in drawn), rule
        at_google = [c["rule"]["booleanRule"] for c in cfs if c["rule"]["ranges"] == [_grid(ids[sheet], a1)]
                     and "booleanRule" in c["rule"]]
        assert any(b["condition"]["values"][0]["userEnteredValue"].lstrip("=") == rule.when for b in at_google), rule
    (chart,) = BBN.charts
    assert len(wb[BBN.block(chart.block).sheet]._charts) == 1
    assert len(_kind(reqs, "addChart")) == 1
    merges = _kind(reqs, "mergeCells")
    for merged in BBN.merges:
        sheet, _, rng = merged.partition("!")
        assert rng in [str(m) for m in wb[sheet].merged_cells.ranges]
        assert {"range": _grid(ids[sheet], rng), "mergeType": "MERGE_ALL"} in merges
    dims = _kind(reqs, "updateDimensionProperties")
    for (sheet, row), points in BBN.row_heights.items():
        assert wb[sheet].row_dimensions[row].height == points
        assert any(d["range"] == {"sheetId": ids[sheet], "dimension": "ROWS", "startIndex": row - 1, "endIndex": row}
                   and d["properties"] == {"pixelSize": round(points * 4 / 3)} for d in dims)
    sheets = {s["properties"]["title"]: s["properties"]["gridProperties"] for s in _kind(reqs, "addSheet")}
    for sheet, (rows, cols) in BBN.frozen.items():
        assert wb[sheet].freeze_panes == f"{col_letter(cols + 1)}{rows + 1}"
        assert (sheets[sheet]["frozenRowCount"], sheets[sheet]["frozenColumnCount"]) == (rows, cols)
    for sheet, setup in BBN.printing.items():
        ws = wb[sheet]
        assert ws.page_setup.orientation == ("landscape" if setup.landscape else "portrait")
        assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (setup.pages_wide, setup.pages_tall)
    for st in BBN.static:
        assert wb[st.sheet][st.address].value == st.value
        from sheetsync.sheets.backend import parse_range

        rng = parse_range(f"X!{st.address}")
        assert _cells(reqs, ids[st.sheet])[(rng.row1, rng.col1)]["userEnteredValue"] in (
            {"stringValue": st.value}, {"numberValue": st.value})
    validations = _kind(reqs, "setDataValidation")
    for target in BBN.checkboxes:
        sheet, r1, c1, r2, _c2 = BBN.box(target)
        assert [wb[sheet].cell(row=r, column=c1).value for r in range(r1, r2 + 1)] == [False] * (r2 - r1 + 1)
        assert {"range": _grid(ids[sheet], f"{col_letter(c1)}{r1}:{col_letter(c1)}{r2}"),
                "rule": {"condition": {"type": "BOOLEAN"}, "showCustomUi": True}} in validations
    for at in BBN.choices_at:
        assert any(str(d.sqref) == at.address and d.formula1 == '"' + ",".join(at.options) + '"'
                   for d in wb[at.sheet].data_validations.dataValidation), at
        assert any(v["range"] == _grid(ids[at.sheet], at.address)
                   and [x["userEnteredValue"] for x in v["rule"]["condition"]["values"]] == list(at.options)
                   for v in validations), at
    protected = {p["protectedRange"]["range"]["sheetId"] for p in _kind(reqs, "addProtectedRange")}
    for sheet in BBN.protected:
        assert wb[sheet].protection.sheet is True
        assert ids[sheet] in protected


def test_r25_the_rolled_die_wins_over_the_resolved_row_grey_on_both_renderers() -> None:
    orders = BBN.block("Orders_Table")
    roll, grey = f"{orders.letter('roll')}{orders.first_row}", f"A{orders.first_row}"
    rules = _rules(build_template(), "Orders")
    rolled_at = next(p for p, _r, rule in rules if "Rolled" in (rule.formula or [""])[0])
    grey_at = next(p for p, rng, rule in rules if rng.startswith(grey + ":") and rule.formula[0].endswith('<>""'))
    assert rolled_at < grey_at and roll != grey
    sid = sheet_ids_for(BBN, {})["Orders"]
    cfs = [c for c in _kind(init_requests({}), "addConditionalFormatRule")
           if c["rule"]["ranges"][0]["sheetId"] == sid]
    formulas = [c["rule"]["booleanRule"]["condition"]["values"][0]["userEnteredValue"] for c in cfs]
    rolled = next(i for i, f in enumerate(formulas) if "Rolled" in f)
    resolved = next(i for i, f in enumerate(formulas) if f == f'=${orders.letter("phase")}{orders.first_row}<>""')
    assert cfs[rolled]["index"] < cfs[resolved]["index"]


def test_r25_google_now_greys_resolved_orders_and_reddens_health_at_zero_as_the_workbook_does() -> None:
    reqs = init_requests({})
    conditions = [c["rule"]["booleanRule"]["condition"] for c in _kind(reqs, "addConditionalFormatRule")
                  if "booleanRule" in c["rule"]]
    assert {"type": "NUMBER_LESS_THAN_EQ", "values": [{"userEnteredValue": "0"}]} in conditions
    dead = [c["rule"]["booleanRule"]["format"] for c in _kind(reqs, "addConditionalFormatRule")
            if c["rule"].get("booleanRule", {}).get("condition", {}).get("values") == [{"userEnteredValue": "Dead"}]]
    assert dead and dead[0]["textFormat"]["foregroundColor"] == {"red": 1.0, "green": 1.0, "blue": 1.0}


def test_the_battalion_chart_is_redrawn_over_the_phases_played_and_every_cohort() -> None:
    wb = build_template()
    hist = BBN.block("Battle_HealthByPhase")
    summary = BBN.block("Battle_Summary")
    ws = wb["Battle"]
    for i in range(3):  # phases 0..2 and six cohorts on the summary
        ws.cell(row=hist.first_row + i, column=hist.first_col, value=i)
    for i in range(6):
        ws.cell(row=summary.first_row + i, column=summary.first_col, value=f"Cohort {i}")
    restore_chart(wb)
    (chart,) = ws._charts
    assert len(chart.series) == 6
    assert chart.series[0].val.numRef.f == f"'Battle'!$B${hist.first_row}:$B${hist.first_row + 2}"
    assert chart.anchor == f"A{summary.first_row + 6 + 1}"
    add_chart(wb, BBN, 2, phases=1)  # an undo shrinks the axis
    (chart,) = ws._charts
    assert len(chart.series) == 2 and chart.series[0].val.numRef.f.endswith(f"$B${hist.first_row + 1}")


def test_the_battalion_dropdowns_keep_their_leniency() -> None:
    """A cohort's name may be typed before it is listed (no error), a list value off the
    list only warns, as the tracker always had."""
    wb = build_template()
    orders = BBN.block("Orders_Table")
    dvs = {str(d.sqref).split(":")[0]: d for d in wb["Orders"].data_validations.dataValidation}
    cohort = dvs[f"{orders.letter('cohort')}{orders.first_row}"]
    task = dvs[f"{orders.letter('task')}{orders.first_row}"]
    assert (cohort.formula1, cohort.showErrorMessage) == ("=Cohort_Names", False)
    assert (task.formula1, task.showErrorMessage, task.errorStyle) == ("=List_Tasks", True, "warning")
    assert not task.showInputMessage


def test_a_lists_dropdown_is_strict_at_google_unless_the_layout_says_it_only_warns() -> None:
    lay = Layout(system="demo", version=1, sheets=["Main", "Lists"], hidden=["Lists"], lists={"Moves": ["Hold", "Run"]})
    lay.add(Block("Units", "Main", 1, (Column("move", "Move", choices="Moves"),), rows=3))
    lay.add(Block("Lists_Table", "Lists", 1, (Column("Moves", "Moves", is_input=False),), rows=5))

    def strict() -> tuple[bool, str]:
        wb = draw_workbook(lay)
        (dv,) = wb["Main"].data_validations.dataValidation
        (rule,) = [v["rule"] for v in _kind(init_requests_for(lay, {}), "setDataValidation")]
        assert rule["condition"]["type"] == "ONE_OF_RANGE"
        return rule["strict"], dv.errorStyle

    assert strict() == (True, "stop")
    lay.dropdowns = Dropdowns(list_errors="warning")
    assert strict() == (False, "warning")  # both renderers only warn
