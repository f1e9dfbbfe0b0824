"""Generated and resolved trackers in real LibreOffice Calc (headless).

Each workbook must open, recalculate with no error value in any cell, and its Odds
formulas must give the chances the engine computes (R14).  A round trip through
LibreOffice (xlsx → xlsx) keeps every input value and defined name.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import openpyxl
import pytest
from libreoffice import error_cells, inspect_macros, recalc_and_convert, require_libreoffice

from sheetsync.app.workbook_cli import (
    excel_backend,
    new_workbook,
    run_workbook,
    write_macro_template,
    write_template,
)
from sheetsync.backends.excel import ExcelBackend
from sheetsync.sheets.disk import example_path, read_data_file
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import hit_chance
from sheetsync.systems.bbn.tracker.layout import layout

LAY = layout()
pytestmark = pytest.mark.filterwarnings("ignore:.*extension is not supported:UserWarning")
POOL_OF = {"Melee Attack": "melee", "Ranged Attack": "ranged", "Mystical Attack": "mystical",
           "Inspire": "resolve", "Intimidate": "resolve", "Analyze": "resolve"}


@pytest.fixture(scope="module", autouse=True)
def _libreoffice() -> None:
    require_libreoffice()


def test_blank_template_recalculates_without_errors(tmp_path: Path) -> None:
    wb = write_template(tmp_path / "blank.xlsx")
    assert error_cells(wb) == []


def test_r14_odds_formulas_match_engine_after_resolve(tmp_path: Path) -> None:
    wb = tmp_path / "battle.xlsx"
    new_workbook(wb, example_path())
    run_workbook("resolve", wb)
    assert error_cells(wb) == []
    calc = recalc_and_convert(wb, tmp_path / "calc")
    values = openpyxl.load_workbook(calc, data_only=True)["Orders"]
    battle = load_battle(read_data_file(example_path()))
    block = LAY.block("Orders_Table")
    checked = 0
    for i, order in enumerate(battle.orders):
        row = block.first_row + i
        odds = values[f"{block.letter('odds')}{row}"].value
        pool = POOL_OF.get(order.task.value)
        if pool is None or order.target is None:
            assert odds in (None, ""), (row, order.task)
            continue
        expected = hit_chance(battle.pools[order.cohort].pools[pool], battle.pools[order.target].pools["defense"])
        assert odds == pytest.approx(expected), (row, order.task, order.cohort, order.target)
        checked += 1
    assert checked >= 6
    # a blank row shows nothing
    assert values[f"{block.letter('odds')}{block.first_row + len(battle.orders) + 3}"].value in (None, "")


def test_libreoffice_round_trip_keeps_inputs_and_names(tmp_path: Path) -> None:
    wb = tmp_path / "trip.xlsx"
    new_workbook(wb, example_path())
    run_workbook("resolve", wb)
    back = recalc_and_convert(wb, tmp_path / "lo")
    inputs = [LAY.block(n).range() for n in ("Characters_Table", "Cohorts_Setup", "Ranges_Table", "HouseRules_Table")]
    orders = LAY.block("Orders_Table")
    inputs += [f"Orders!{orders.letter(c.key)}{orders.first_row}:{orders.letter(c.key)}{orders.last_row}"
               for c in orders.columns if c.is_input]
    inputs += [LAY.block("State_Blob").range(), LAY.block("Log_Table").range()]
    before = ExcelBackend(wb).read_ranges(inputs)
    after = ExcelBackend(back).read_ranges(inputs)
    for rng, a, b in zip(inputs, before, after, strict=True):
        assert a == b, rng
    names_before = {n: d.attr_text for n, d in openpyxl.load_workbook(wb).defined_names.items()}
    names_after = {n: d.attr_text for n, d in openpyxl.load_workbook(back).defined_names.items()}
    assert names_after == names_before
    # and the round-tripped workbook still works as a tracker
    assert run_workbook("undo", back).phase == 1


def test_macro_tracker_opens_in_libreoffice_with_modules_and_buttons(tmp_path: Path) -> None:
    xlsm = write_macro_template(tmp_path / "buttons.xlsm")
    found = inspect_macros(xlsm)
    modules = found["libraries"]["VBAProject"]
    assert "Sheetsync" in modules
    for sub in ("BuildCohorts", "ResolvePhase", "UndoPhase", "EndBattle"):
        assert f"Sub {sub}" in modules["Sheetsync"]
    wired = {e["code"] for c in found["controls"] for e in c["events"]}
    for sub in ("BuildCohorts", "ResolvePhase", "UndoPhase", "EndBattle"):
        assert any(code.endswith(f"Sheetsync.{sub}?language=Basic&location=document") for code in wired), sub
    assert error_cells(xlsm) == []


def test_resolved_macro_tracker_keeps_buttons_and_recalculates(tmp_path: Path) -> None:
    xlsm = write_macro_template(tmp_path / "play.xlsm")
    from sheetsync.app import usecases

    usecases.load_battle_into(excel_backend(xlsm), load_battle(read_data_file(example_path())))
    run_workbook("resolve", xlsm)
    found = inspect_macros(xlsm)
    assert len([c for c in found["controls"] if c["events"]]) == 4
    assert error_cells(xlsm) == []


def test_blank_template_file_is_the_committed_one(tmp_path: Path) -> None:
    """The committed templates/tracker.xlsx opens in LibreOffice with no errors too."""
    committed = Path(__file__).resolve().parent.parent / "templates" / "tracker.xlsx"
    assert error_cells(committed) == []
    del tmp_path


# -- a tracker a hurried person reads: Odds, undone Log rows, printing ----------------------


def test_r24_odds_show_no_range_for_an_unranged_order_in_libreoffice(tmp_path: Path) -> None:
    """R24: the Analyze order (Lanterns on Ghoul Pack) loses its range: its Odds reads
    "no range", the other orders keep their chances, and no cell is an error."""
    wb = tmp_path / "unranged.xlsx"
    new_workbook(wb, example_path())
    book = openpyxl.load_workbook(wb)
    ranges = LAY.block("Ranges_Table")
    ws = book["Ranges"]
    for r in range(ranges.first_row, ranges.first_row + 10):
        if {ws[f"A{r}"].value, ws[f"B{r}"].value} == {"Lanterns", "Ghoul Pack"}:
            for col in "ABC":
                ws[f"{col}{r}"] = None
    book.save(wb)
    assert error_cells(wb) == []
    calc = openpyxl.load_workbook(recalc_and_convert(wb, tmp_path / "calc"), data_only=True)["Orders"]
    block = LAY.block("Orders_Table")
    battle = load_battle(read_data_file(example_path()))
    odds = {o.task.value + ":" + o.cohort: calc[f"{block.letter('odds')}{block.first_row + i}"].value
            for i, o in enumerate(battle.orders)}
    assert odds["Analyze:Lanterns"] == "no range"
    assert isinstance(odds["Melee Attack:Ghoul Pack"], (int, float))  # a ranged order keeps its chance
    # and the engine refuses exactly that order
    from sheetsync.app.usecases import resolve

    events = resolve(excel_backend(wb)).result.events  # type: ignore[union-attr]
    assert [e.outcome for e in events if e.outcome == "refused"] == ["refused"]
    assert "no range" in next(e.reason for e in events if e.outcome == "refused")


def test_log_rows_of_an_undone_phase_are_struck_through_in_libreoffice(tmp_path: Path) -> None:
    """The Log's strike-through test, evaluated by Calc: the first phase 1 rows are undone,
    the Undo row and the second phase 1 rows stand."""
    from libreoffice import cell_values

    from sheetsync.systems.bbn.tracker.template import log_undone_formula

    wb = tmp_path / "log.xlsx"
    new_workbook(wb, example_path())
    for step in ("resolve", "undo", "resolve"):
        run_workbook(step, wb)
    book = openpyxl.load_workbook(wb)
    log = book["Log"]
    block = LAY.block("Log_Table")
    rows = [r for r in range(block.first_row, block.first_row + 60) if log.cell(row=r, column=1).value is not None]
    probe = "Z"
    for r in rows:
        log[f"{probe}{r}"] = "=" + log_undone_formula(LAY, r)
    book.save(wb)
    got = cell_values(wb, [f"Log!{probe}{rows[0]}:{probe}{rows[-1]}"])
    struck = [bool(v[0]) for v in next(iter(got.values()))]
    task = block.first_col + block.index("task")
    tasks = [log.cell(row=r, column=task).value for r in rows]
    undo_at = tasks.index("Undo Phase")
    expected = [i < undo_at for i in range(len(rows))]  # the first resolve's rows (a loaded tracker has no Build row)
    assert struck == expected, list(zip(tasks, struck, strict=True))
    assert any(expected) and not all(expected)


@pytest.mark.parametrize(("paper", "size"), [(9, "A4"), (1, "Letter")])
def test_every_sheet_prints_within_the_paper_width(tmp_path: Path, paper: int, size: str) -> None:
    """Each sheet's PDF (as Calc prints it) has pages of the paper's size, in landscape
    where wide, and its first page holds both the first and the last header of the sheet's
    table, so no column spills onto a page to the right."""
    import shutil
    import subprocess

    from libreoffice import _run

    pdfinfo, pdftotext = shutil.which("pdfinfo"), shutil.which("pdftotext")
    if pdfinfo is None or pdftotext is None:  # .ci/install-system-deps.sh installs poppler-utils
        if os.environ.get("CI"):
            pytest.fail("needs poppler-utils (pdfinfo, pdftotext), which .ci/install-system-deps.sh installs")
        pytest.skip("needs poppler-utils (pdfinfo, pdftotext)")
    wb = tmp_path / "print.xlsx"
    new_workbook(wb, example_path())
    run_workbook("resolve", wb)
    book = openpyxl.load_workbook(wb)
    for ws in book.worksheets:
        ws.page_setup.paperSize = paper
    book.save(wb)
    sheets = {"Battle": ("Battle_Summary", "members"), "Orders": ("Orders_Table", "result"),
              "Cohorts": ("Cohorts_Setup", None), "Characters": ("Characters_Table", None),
              "Ranges": ("Ranges_Table", None), "Log": ("Log_Table", None),
              "Aftermath": ("Aftermath_Table", None), "House Rules": ("HouseRules_Table", None)}
    ops = [{"op": "pdf", "src": str(wb.resolve()), "out": str(tmp_path / f"{s}.pdf"), "sheet": s} for s in sheets]
    _run("print", ops)
    paper_pts = {"A4": (595, 842), "Letter": (612, 792)}[size]
    for sheet, (name, last_key) in sheets.items():
        pdf = tmp_path / f"{sheet}.pdf"
        info = subprocess.run([pdfinfo, str(pdf)], capture_output=True, text=True, check=True).stdout
        w, h = (float(x) for x in re.search(r"Page size:\s+([\d.]+) x ([\d.]+)", info).groups())  # type: ignore[union-attr]
        portrait = sheet == "Ranges"
        assert (round(w), round(h)) == (paper_pts if portrait else paper_pts[::-1]), (sheet, info)
        block = LAY.block(name)
        pages = 3 if sheet == "Characters" else 1  # Characters: three pages across (columns A:B repeated)
        text = subprocess.run([pdftotext, "-f", "1", "-l", str(pages), "-layout", str(pdf), "-"],
                              capture_output=True, text=True, check=True).stdout
        first = block.columns[0].header
        last = block.columns[block.index(last_key)].header if last_key else block.columns[-1].header
        assert first in text and last.split()[0] in text, (sheet, first, last)
