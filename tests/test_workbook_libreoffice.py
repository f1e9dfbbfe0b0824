"""Generated and resolved trackers in real LibreOffice Calc (headless).

Each workbook must open, recalculate with no error value in any cell, and its Odds
formulas must give the chances the engine computes (R14).  A round trip through
LibreOffice (xlsx → xlsx) keeps every input value and defined name.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from libreoffice import error_cells, inspect_macros, recalc_and_convert, require_libreoffice

from sheetsync.app.files import example_path, read_data_file
from sheetsync.app.workbook_cli import (
    excel_backend,
    new_workbook,
    run_workbook,
    write_macro_template,
    write_template,
)
from sheetsync.backends.excel import ExcelBackend
from sheetsync.rules.bbn import hit_chance, load_battle
from sheetsync.sheets.layout import layout

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
