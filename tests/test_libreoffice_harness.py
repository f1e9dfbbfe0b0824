"""The LibreOffice harness: recalculation, error cells, rendering, and the CI rule."""

from __future__ import annotations

import struct
from pathlib import Path

import libreoffice as lo
import openpyxl
import pytest


def _save(wb: openpyxl.Workbook, path: Path) -> Path:
    wb.save(path)
    return path


@pytest.fixture
def formulas_book(tmp_path: Path) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet"
    ws["A1"] = "=1+1"
    ws["A2"] = "=A1*2"
    ws["B1"] = "plain text"
    rules = wb.create_sheet("House Rules")
    rules["A1"] = "=Sheet!A2+10"
    return _save(wb, tmp_path / "formulas.xlsx")


@pytest.fixture
def broken_book(tmp_path: Path) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet"
    ws["A1"] = 5
    ws["A2"] = "=A1*2"  # fine
    ws["B3"] = "=1/0"
    ws["C1"] = "#N/A typed as text"  # text, not an error
    rules = wb.create_sheet("House Rules")
    rules["D4"] = "=NOSUCHFN()"
    rules["E5"] = "=SUM(("  # LibreOffice's own Err:5xx
    return _save(wb, tmp_path / "broken.xlsx")


@pytest.mark.libreoffice
def test_recalc_and_convert_computes_formulas_openpyxl_left_uncalculated(
    formulas_book: Path, tmp_path: Path
) -> None:
    lo.require_libreoffice()
    before = openpyxl.load_workbook(formulas_book, data_only=True)
    assert before["Sheet"]["A1"].value is None  # openpyxl writes no cached values

    out = lo.recalc_and_convert(formulas_book, tmp_path / "out")

    assert out == (tmp_path / "out" / "formulas.xlsx").resolve()
    values = openpyxl.load_workbook(out, data_only=True)
    assert values["Sheet"]["A1"].value == 2
    assert values["Sheet"]["A2"].value == 4
    assert values["Sheet"]["B1"].value == "plain text"
    assert values["House Rules"]["A1"].value == 14
    formulas = openpyxl.load_workbook(out)
    assert formulas["Sheet"]["A2"].value == "=A1*2"  # formulas survive the conversion
    assert lo.TIMINGS and lo.TIMINGS[-1][0] == "recalc_and_convert"


def test_recalc_and_convert_refuses_to_overwrite_its_source(formulas_book: Path) -> None:
    with pytest.raises(ValueError, match="overwrite"):
        lo.recalc_and_convert(formulas_book, formulas_book.parent)


@pytest.mark.libreoffice
def test_error_cells_lists_every_error_with_its_address(broken_book: Path) -> None:
    lo.require_libreoffice()
    errors = lo.error_values(broken_book)

    assert errors == {
        "Sheet!B3": "#DIV/0!",
        "'House Rules'!D4": "#NAME?",
        "'House Rules'!E5": "Err:511",
    }
    assert lo.error_cells(broken_book) == ["Sheet!B3", "'House Rules'!D4", "'House Rules'!E5"]


@pytest.mark.libreoffice
def test_error_cells_is_empty_for_a_healthy_workbook(formulas_book: Path) -> None:
    lo.require_libreoffice()
    assert lo.error_cells(formulas_book) == []


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.libreoffice
def test_render_png_renders_the_named_sheet(formulas_book: Path, tmp_path: Path) -> None:
    lo.require_libreoffice()
    first = lo.render_png(formulas_book, tmp_path / "sheet.png", "Sheet")
    second = lo.render_png(formulas_book, tmp_path / "rules.png", "House Rules")

    width, height = _png_size(first)
    assert width > 300 and height > 300
    assert _png_size(second) == (width, height)  # same page size
    assert first.read_bytes() != second.read_bytes()  # but another sheet on it


@pytest.mark.libreoffice
def test_render_png_names_a_missing_sheet(formulas_book: Path, tmp_path: Path) -> None:
    lo.require_libreoffice()
    with pytest.raises(lo.LibreOfficeError, match="no sheet named 'Nope'"):
        lo.render_png(formulas_book, tmp_path / "x.png", "Nope")


def test_missing_libreoffice_fails_on_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lo, "soffice_path", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="libreoffice-calc-nogui"):
        lo.require_libreoffice()


def test_missing_libreoffice_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lo, "soffice_path", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="libreoffice-calc-nogui"):
        lo.require_libreoffice()
