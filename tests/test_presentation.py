"""A tracker a hurried person reads at a glance: alignment, Yes/No, the Battle status, the
Health chart, rolled dice, undone Log rows, dropdowns, End/Undo, printing.

The LibreOffice checks of the same (formulas evaluated, PDF pages) are in
``test_workbook_libreoffice.py``.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import openpyxl
import pytest

from sheetsync.app import usecases
from sheetsync.app.workbook_cli import excel_backend, new_workbook, run_workbook
from sheetsync.backends.gsheets_layout import init_requests
from sheetsync.core.errors import BattleStateError
from sheetsync.sheets.backend import MemoryBackend
from sheetsync.sheets.disk import example_path
from sheetsync.systems.bbn.tracker.layout import layout
from sheetsync.systems.bbn.tracker.template import align_of, build_template, house_choices
from sheetsync.systems.bbn.tracker.writer import house_rules_rows, odds_formula

LAY = layout()
ORDERS = LAY.block("Orders_Table")


@pytest.fixture
def resolved(tmp_path: Path) -> Path:
    """The example battle as a tracker, phase 1 resolved."""
    wb = tmp_path / "battle.xlsx"
    new_workbook(wb, example_path())
    run_workbook("resolve", wb)
    return wb


def _ws(path: Path, sheet: str) -> openpyxl.worksheet.worksheet.Worksheet:
    return openpyxl.load_workbook(path)[sheet]


# -- 21: Odds ------------------------------------------------------------------------------


def test_r24_odds_formula_checks_the_ranges_sheet() -> None:
    """R24: an order between two cohorts with no range is refused, so Odds says "no range"
    (LibreOffice evaluates it in test_workbook_libreoffice)."""
    text = odds_formula(LAY, ORDERS.first_row).text
    ranges = LAY.block("Ranges_Table")
    c, g = (f"{ORDERS.letter(k)}{ORDERS.first_row}" for k in ("cohort", "target"))
    assert f"COUNTIFS({ranges.column_ref('a')},{c},{ranges.column_ref('b')},{g})" in text
    assert f"COUNTIFS({ranges.column_ref('a')},{g},{ranges.column_ref('b')},{c})" in text
    assert '"no range"' in text
    # the range test comes before the chance: an unranged order never shows a percentage
    assert text.index('"no range"') < text.index("MAX(0,MIN(10")


# -- 23: alignment, Yes/No, status, End --------------------------------------------------


def test_every_header_is_aligned_with_its_values() -> None:
    """Night Watch's Active 3 must sit under Active: header and values share an alignment,
    numbers centred, text left."""
    wb = build_template()
    checked = 0
    for block in LAY.blocks.values():
        if block.rows is None or block.sheet in LAY.hidden:
            continue
        ws = wb[block.sheet]
        for j, col in enumerate(block.columns):
            header = ws.cell(row=block.header_row, column=block.first_col + j).alignment.horizontal
            value = ws.cell(row=block.first_row, column=block.first_col + j).alignment.horizontal
            assert header == value == align_of(col.kind), (block.name, col.key)
            checked += 1
    summary = LAY.block("Battle_Summary")
    active = wb["Battle"].cell(row=summary.header_row, column=summary.first_col + summary.index("active"))
    assert active.alignment.horizontal == "center"
    assert checked > 100


def test_google_sheet_headers_aligned_like_the_workbook() -> None:
    reqs = init_requests({})
    aligned = [r["repeatCell"] for r in reqs if "repeatCell" in r
               and "horizontalAlignment" in r["repeatCell"]["cell"]["userEnteredFormat"]]
    summary = LAY.block("Battle_Summary")
    col = summary.first_col + summary.index("active") - 1
    hit = [r for r in aligned if r["range"]["startColumnIndex"] == col and r["range"]["startRowIndex"] == summary.header_row - 1]
    assert hit and hit[0]["cell"]["userEnteredFormat"]["horizontalAlignment"] == "CENTER"


def test_booleans_show_as_yes_no(resolved: Path) -> None:
    """Roster Hero Moment Used and House Rules switches read Yes/No, not TRUE/FALSE."""
    roster = LAY.block("Cohorts_Roster")
    ws = _ws(resolved, "Cohorts")
    hero = {ws.cell(row=roster.first_row + i, column=roster.first_col + roster.index("member")).value:
            ws.cell(row=roster.first_row + i, column=roster.first_col + roster.index("hero")).value for i in range(15)}
    assert hero["Isabel"] == "Yes"  # Kill 'Em All in phase 1 (Hero Moments 1.3)
    assert hero["Marcus"] == "No"
    house = LAY.block("HouseRules_Table")
    hr = _ws(resolved, "House Rules")
    values = {hr.cell(row=house.first_row + i, column=1).value: hr.cell(row=house.first_row + i, column=2).value
              for i in range(len(house_rules_rows()))}
    assert values["scared_loses_action"] == "Yes"
    assert values["allow_any_size"] == "No"
    assert house_choices("scared_loses_action") == ["Yes", "No"]
    assert True not in values.values() and False not in values.values()


@pytest.mark.parametrize("typed", ["No", "FALSE", False, "no"])
def test_r11_house_rule_switch_reads_yes_no_and_true_false(resolved: Path, typed: object) -> None:
    """The reader still takes TRUE/FALSE as well as Yes/No in a House Rules switch (R11)."""
    wb = openpyxl.load_workbook(resolved)
    house = LAY.block("HouseRules_Table")
    keys = [r[0] for r in house_rules_rows()]
    row = house.first_row + keys.index("scared_loses_action")
    wb["House Rules"].cell(row=row, column=house.first_col + 1).value = typed
    o = ORDERS.first_row + 10
    wb["Orders"][f"{ORDERS.letter('cohort')}{o}"] = "Night Watch"
    wb["Orders"][f"{ORDERS.letter('task')}{o}"] = "Tactical Task"
    wb["Orders"][f"{ORDERS.letter('text')}{o}"] = "Hold the line"
    wb.save(resolved)
    assert run_workbook("resolve", resolved).result is not None


def test_battle_status_and_last_action_have_room_to_wrap() -> None:
    wb = build_template()
    merged = {str(r) for r in wb["Battle"].merged_cells.ranges}
    assert {"B4:D4", "B5:D5"} <= merged
    assert wb["Battle"]["B5"].alignment.wrap_text is True
    reqs = init_requests({})
    merges = [r["mergeCells"]["range"] for r in reqs if "mergeCells" in r]
    assert {"startRowIndex": 3, "endRowIndex": 4, "startColumnIndex": 1, "endColumnIndex": 4} in [
        {k: v for k, v in m.items() if k != "sheetId"} for m in merges]


def test_battle_aftermath_battle_sheet_says_the_battle_is_over(resolved: Path) -> None:
    run_workbook("end", resolved)
    status = _ws(resolved, "Battle")["B4"].value
    assert status.startswith("Battle over after phase 1")


# -- 26: End and Undo ----------------------------------------------------------------------


def test_battle_aftermath_end_refused_before_any_phase_nothing_written(tmp_path: Path) -> None:
    wb = tmp_path / "fresh.xlsx"
    new_workbook(wb, example_path())
    before = wb.read_bytes()
    with pytest.raises(BattleStateError, match="no phase has been resolved yet"):
        run_workbook("end", wb)
    assert wb.read_bytes() == before


def test_battle_aftermath_undo_after_end_clears_the_aftermath(resolved: Path) -> None:
    run_workbook("end", resolved)
    after = LAY.block("Aftermath_Table")
    assert _ws(resolved, "Aftermath").cell(row=after.first_row, column=1).value == "Night Watch"
    run_workbook("undo", resolved)
    ws = _ws(resolved, "Aftermath")
    assert all(ws.cell(row=after.first_row + i, column=c + 1).value is None
               for i in range(20) for c in range(len(after.columns)))
    status = _ws(resolved, "Battle")["B4"].value
    assert "over" not in status and "undone" in status


# -- 24: the chart -------------------------------------------------------------------------


def _chart_refs(path: Path) -> tuple[list[str], str]:
    with zipfile.ZipFile(path) as z:
        chart = z.read("xl/charts/chart1.xml").decode()
        drawing = z.read("xl/drawings/drawing1.xml").decode()
    refs = [r for r in re.findall(r"<(?:c:)?f>([^<]+)</(?:c:)?f>", chart) if "$" in r]  # data, not series titles
    row = re.search(r"<(?:xdr:)?from>.*?<(?:xdr:)?row>(\d+)</", drawing, re.S)
    assert row is not None
    return refs, row.group(1)


def test_health_chart_axis_runs_over_the_phases_played(resolved: Path) -> None:
    hist = LAY.block("Battle_HealthByPhase")
    refs, _ = _chart_refs(resolved)
    last_rows = {int(re.search(r"\$(\d+)$", r).group(1)) for r in refs}  # type: ignore[union-attr]
    assert last_rows == {hist.first_row + 1}, refs  # the start and phase 1, not 41 rows
    run_workbook("undo", resolved)
    refs, _ = _chart_refs(resolved)
    assert {int(re.search(r"\$(\d+)$", r).group(1)) for r in refs} == {hist.first_row}  # type: ignore[union-attr]


def test_health_chart_sits_under_the_cohort_lines(resolved: Path) -> None:
    """Visible without scrolling: column A, one row under the last of the 4 cohorts."""
    summary = LAY.block("Battle_Summary")
    _, row = _chart_refs(resolved)
    assert int(row) + 1 == summary.first_row + 4 + 1  # drawing rows are 0-based
    with zipfile.ZipFile(resolved) as z:
        assert re.search(r"<(?:xdr:)?from><(?:xdr:)?col>0</", z.read("xl/drawings/drawing1.xml").decode())
    reqs = init_requests({})
    (chart,) = [r["addChart"]["chart"] for r in reqs if "addChart" in r]
    anchor = chart["position"]["overlayPosition"]["anchorCell"]
    assert (anchor["rowIndex"], anchor["columnIndex"]) == (summary.first_row + 4, 0)


# -- 25: the watch checkboxes --------------------------------------------------------------


def test_tick_boxes_are_labelled_google_sheets_only() -> None:
    wb = build_template()
    buttons = LAY.block("Battle_Buttons")
    title = wb["Battle"].cell(row=buttons.header_row - 1, column=buttons.first_col).value
    assert "Google Sheets only" in title and "watch" in title


# -- 27: rolled dice, undone Log rows, Ally dropdown ---------------------------------------


def test_r25_rolled_die_written_into_roll_and_undo_clears_only_rolled(resolved: Path) -> None:
    ws = _ws(resolved, "Orders")
    roll, src = ORDERS.letter("roll"), ORDERS.letter("roll_source")
    rows = range(ORDERS.first_row, ORDERS.first_row + 10)
    got = [(ws[f"{roll}{r}"].value, ws[f"{src}{r}"].value) for r in rows]
    assert got[0] == (9, None) and got[1] == (7, None)  # typed in the battle file
    rolled = [i for i, (v, s) in enumerate(got) if s == "Rolled"]
    assert rolled and all(isinstance(got[i][0], int) and 1 <= got[i][0] <= 10 for i in rolled)
    assert got[7] == (None, None)  # Heal rolls no d10
    assert ws.column_dimensions[src].hidden is True
    run_workbook("undo", resolved)
    ws = _ws(resolved, "Orders")
    after = [(ws[f"{roll}{r}"].value, ws[f"{src}{r}"].value) for r in rows]
    assert after[0] == (9, None) and after[1] == (7, None)
    assert all(after[i] == (None, None) for i in rolled)


def test_r25_resolve_after_undo_rolls_again_instead_of_reading_a_typed_die() -> None:
    """Undo then resolve gives the same events as the first resolve: the rolled dice are
    marked rolled again, not taken for typed ones."""
    backend = MemoryBackend({s: {} for s in LAY.sheets})
    from sheetsync.sheets.disk import read_data_file
    from sheetsync.systems.bbn.files.loader import load_battle

    usecases.load_battle_into(backend, load_battle(read_data_file(example_path())))
    first = usecases.resolve(backend).result
    usecases.undo(backend)
    again = usecases.resolve(backend).result
    assert first is not None and again is not None
    assert [e.rolls for e in again.events] == [e.rolls for e in first.events]
    assert any(r.source == "rolled" for e in again.events for r in e.rolls)


def test_rolled_dice_and_undone_log_rows_are_drawn_apart() -> None:
    wb = build_template()
    roll = ORDERS.letter("roll")
    orders_rules = [(str(cf.sqref), rule) for cf in wb["Orders"].conditional_formatting for rule in cf.rules]
    rolled = [rule for ref, rule in orders_rules if ref.startswith(f"{roll}{ORDERS.first_row}")]
    assert rolled and rolled[0].formula == [f'${ORDERS.letter("roll_source")}{ORDERS.first_row}="Rolled"']
    assert rolled[0].dxf.font.i is True
    log_rules = [rule for cf in wb["Log"].conditional_formatting for rule in cf.rules]
    assert any(rule.dxf.font.strike for rule in log_rules)
    assert any("Undo Phase" in rule.formula[0] for rule in log_rules)
    reqs = init_requests({})
    formulas = [r["addConditionalFormatRule"]["rule"]["booleanRule"]["condition"]["values"][0]["userEnteredValue"]
                for r in reqs if "addConditionalFormatRule" in r
                and r["addConditionalFormatRule"]["rule"].get("booleanRule", {}).get("condition", {}).get("type")
                == "CUSTOM_FORMULA"]
    assert any("Rolled" in f for f in formulas) and any("Undo Phase" in f for f in formulas)


def test_orders_ally_has_a_cohort_dropdown() -> None:
    wb = build_template()
    ally = ORDERS.letter("ally")
    dvs = [d for d in wb["Orders"].data_validations.dataValidation if str(d.sqref).startswith(f"{ally}{ORDERS.first_row}")]
    assert dvs and dvs[0].formula1 == "=Cohort_Names"
    assert dvs[0].showErrorMessage is False  # a member's name may be typed too


# -- 29: printing --------------------------------------------------------------------------


def test_every_sheet_prints_fitted_to_width_with_headers_repeated() -> None:
    wb = build_template()
    for sheet in ("Battle", "Orders", "Cohorts", "Characters", "Ranges", "Log", "Aftermath", "House Rules"):
        ws = wb[sheet]
        assert ws.sheet_properties.pageSetUpPr.fitToPage is True, sheet
        assert ws.page_setup.fitToWidth == (3 if sheet == "Characters" else 1), sheet
        assert ws.page_setup.orientation == ("portrait" if sheet == "Ranges" else "landscape"), sheet
    assert wb["Orders"].print_title_rows == f"${ORDERS.header_row}:${ORDERS.header_row}"
    assert wb["Log"].print_title_rows == "$1:$1"
    assert wb["Characters"].print_title_rows == "$2:$2"
    assert wb["Characters"].print_title_cols == "$A:$B"


def test_status_after_resolve_leaves_the_workbook_readable(resolved: Path) -> None:
    """A tracker saved by a step still opens with the chart and merged status cells."""
    ws = _ws(resolved, "Battle")
    assert "B4:D4" in {str(r) for r in ws.merged_cells.ranges}
    assert excel_backend(resolved).read_ranges([LAY.cells["Battle_Status"].ref])[0][0][0].startswith("Phase 1 resolved")
