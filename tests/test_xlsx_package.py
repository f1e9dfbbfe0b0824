"""Issue 12: a workbook step through the package itself (``backends/xlsx_package.py``) leaves
the same cells as the openpyxl path, keeps every part it does not change byte for byte
(the VBA project, drawings, charts), keeps its guarantees (atomic save, ``.bak``, nothing
written on a refusal), and hands whatever it does not understand to openpyxl."""

from __future__ import annotations

import io
import re
import shutil
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml

from sheetsync.app.workbook_cli import (
    excel_backend,
    run_workbook,
    system_tracker_from,
    tracker_from,
)
from sheetsync.backends.excel import ExcelBackend
from sheetsync.backends.xlsx_package import PackageFallback, XlsxPackage
from sheetsync.core.errors import BackendError, SheetSyncError
from sheetsync.core.registry import find_system, tracker_system_ids
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import Formula, RangeUpdate

STEPS = ("build", "resolve", "undo", "resolve", "end")


# -- helpers ----------------------------------------------------------------------------


def _tracker(system_id: str, path: Path, case: str = "example") -> Path:
    from hex_battles import make_hex_battle

    system = find_system(system_id)
    battle = system.load(make_hex_battle(100) if case == "100 units" else yaml.safe_load(system.example_data()))
    if system.id == "bbn":
        tracker_from(path, battle)
    else:
        system_tracker_from(path, system, battle)
    return path


def _cells(path: Path) -> dict[str, dict[tuple[int, int], Any]]:
    """Every cell holding a value, sheet by sheet, as openpyxl reads the file."""
    with warnings.catch_warnings():  # LibreOffice's extensions: not cells
        warnings.filterwarnings("ignore", message=".*extension is not supported", category=UserWarning)
        wb = openpyxl.load_workbook(path)
    return {ws.title: {(c.row, c.column): c.value for row in ws.iter_rows() for c in row if c.value is not None}
            for ws in wb}


@pytest.fixture
def openpyxl_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.setenv("SHEETSYNC_OPENPYXL", "1")
    yield monkeypatch


@pytest.fixture
def no_openpyxl_load(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Count the openpyxl loads (the package path makes none)."""
    loads: list[str] = []
    real = openpyxl.load_workbook

    def spy(path: Any, *args: Any, **kwargs: Any) -> Any:
        loads.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(openpyxl, "load_workbook", spy)
    yield loads


def _run_both(a: Path, b: Path, action: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.delenv("SHEETSYNC_OPENPYXL", raising=False)
    on_package = run_workbook(action, a).message
    monkeypatch.setenv("SHEETSYNC_OPENPYXL", "1")
    try:
        on_openpyxl = run_workbook(action, b).message
    finally:
        monkeypatch.delenv("SHEETSYNC_OPENPYXL")
    return on_package, on_openpyxl


# -- the same cells on both paths, for every system ----------------------------------------


@pytest.mark.parametrize(("system_id", "case"),
                         [(key, "example") for key in tracker_system_ids()] + [("hexwar", "100 units")])
def test_issue12_every_system_leaves_the_same_cells_on_the_package_path(
        system_id: str, case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        no_openpyxl_load: list[str]) -> None:
    origin = _tracker(system_id, tmp_path / "origin.xlsx", case)
    package, plain = tmp_path / "package.xlsx", tmp_path / "openpyxl.xlsx"
    shutil.copy(origin, package)
    shutil.copy(origin, plain)
    for action in STEPS:
        no_openpyxl_load.clear()
        on_package, on_openpyxl = _run_both(package, plain, action, monkeypatch)
        assert on_package == on_openpyxl, action
        assert str(package) not in no_openpyxl_load, f"{action} loaded the workbook through openpyxl"
        assert str(plain) in no_openpyxl_load
        got, expected = _cells(package), _cells(plain)
        assert got.keys() == expected.keys()
        for sheet, cells in expected.items():
            assert got[sheet] == cells, (action, sheet)
    assert "ended" in on_package.lower() or "over" in on_package.lower()
    with zipfile.ZipFile(package) as zp, zipfile.ZipFile(plain) as zo:
        charts = [n for n in zo.namelist() if n.startswith("xl/charts/")]
        for name in charts:  # the Health chart over the same rows as openpyxl draws it anew
            assert zp.read(name) == zo.read(name), name
        assert "xl/calcChain.xml" not in zp.namelist()


def test_issue12_the_health_chart_follows_the_phases_played(tmp_path: Path) -> None:
    wb = _tracker("bbn", tmp_path / "t.xlsx")
    run_workbook("build", wb)

    def chart() -> str:
        with zipfile.ZipFile(wb) as z:
            return z.read("xl/charts/chart1.xml").decode()

    before = chart()
    run_workbook("resolve", wb)
    after = chart()
    assert after != before and "$B$38:$B$39" in after
    run_workbook("undo", wb)
    assert chart() == before


# -- guarantees: .bak, refusals, VBA, damaged parts ----------------------------------------------


def test_issue12_the_bak_holds_the_previous_file_and_a_refusal_writes_nothing(tmp_path: Path) -> None:
    wb = _tracker("bbn", tmp_path / "t.xlsx")
    run_workbook("build", wb)
    built = wb.read_bytes()
    run_workbook("resolve", wb)
    assert wb.with_name("t.xlsx.bak").read_bytes() == built
    resolved = wb.read_bytes()
    with pytest.raises(SheetSyncError, match="already resolved"):
        run_workbook("resolve", wb)  # no new orders: refused
    assert wb.read_bytes() == resolved
    assert wb.with_name("t.xlsx.bak").read_bytes() == built
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_issue12_an_unchanged_vba_project_and_buttons_stay_as_they_are(tmp_path: Path,
                                                                       no_openpyxl_load: list[str]) -> None:
    wb = _tracker("bbn", tmp_path / "t.xlsm")
    with zipfile.ZipFile(wb) as z:
        before = {i.filename: (i.CRC, i.compress_size, z.read(i.filename)) for i in z.infolist()}
    for action in ("build", "resolve"):
        run_workbook(action, wb)
    assert no_openpyxl_load == []
    with zipfile.ZipFile(wb) as z:
        after = {i.filename: (i.CRC, i.compress_size, z.read(i.filename)) for i in z.infolist()}
        assert z.testzip() is None
    assert after.keys() == before.keys()
    assert after["xl/vbaProject.bin"] == before["xl/vbaProject.bin"]
    kept = [n for n in before if not n.startswith(("xl/worksheets/sheet", "xl/charts/"))]
    # the buttons' drawing: it holds the Battle sheet's header notes too (issue 22), so it is
    # whichever drawing has the buttons, not always vmlDrawing1.vml
    assert [n for n in kept if n.endswith(".vml") and b'ObjectType="Button"' in before[n][2]]
    for name in kept:  # the buttons' drawing, the content types, the styles: byte for byte
        if name == "xl/workbook.xml":  # issue 22: but for the print areas, down to the rows in use now
            areas = re.compile(r'(<definedName name="_xlnm\.Print_Area" localSheetId="\d+">)[^<]*')
            assert areas.sub(r"\1", after[name][2].decode()) == areas.sub(r"\1", before[name][2].decode())
            assert after[name][2] != before[name][2]  # the Log, Orders and Cohorts grew
            continue
        assert after[name] == before[name], name


def test_issue12_a_damaged_sheet_is_still_refused_before_anything_is_read(tmp_path: Path) -> None:
    wb = _tracker("bbn", tmp_path / "t.xlsx")
    src = wb.read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "xl/worksheets/sheet10.xml":  # State
                data = data[: len(data) // 2]
            zout.writestr(info, data)
    wb.write_bytes(out.getvalue())
    damaged = wb.read_bytes()
    with pytest.raises(BackendError, match="the sheet 'State' is damaged"):
        run_workbook("build", wb)
    assert wb.read_bytes() == damaged


# -- reading: every kind of cell, as openpyxl reads it ------------------------------------------


_SHEET = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:F9"/><sheetData>
<row r="1" spans="1:6"><c r="A1" t="s"><v>0</v></c><c r="B1" s="1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c></row>
<row r="2"><c r="A2"><v>3</v></c><c r="B2"><v>2.5</v></c><c r="C2"><v>1E3</v></c><c r="D2" t="n"><v>-7</v></c><c r="E2" s="1"/><c r="F2"><v></v></c></row>
<row r="3"><c r="A3" t="b"><v>1</v></c><c r="B3" t="b"><v>0</v></c><c r="C3" t="e"><v>#N/A</v></c><c r="D3" t="str"><f>A2&amp;"x"</f><v>3x</v></c></row>
<row r="4"><c r="A4"><f>TRUE()</f><v>1</v></c><c r="B4" t="b"><f>FALSE()</f><v>0</v></c><c r="C4"><f>SUM(A2:D2)</f><v>-1</v></c><c r="D4" t="inlineStr"><is><t xml:space="preserve">  lead &lt;b&gt; &amp; trail  </t></is></c></row>
<row r="5"><c r="A5"><f t="shared" ref="A5:A7" si="0">B2*2</f><v>5</v></c><c r="B5" t="inlineStr"><is><r><t>rich</t></r><r><rPr><b/></rPr><t xml:space="preserve"> text</t></r></is></c></row>
<row r="6"><c r="A6"><f t="shared" si="0"/><v>0</v></c><c r="B6" t="s"><v>4</v></c><c r="C6" t="str"><v>=not a formula</v></c></row>
<row r="7"><c r="A7"><f t="shared" si="0"/><v>0</v></c><c r="B7" t="inlineStr"><is><t>line&#10;break</t></is></c></row>
<row r="9"><c r="A9" t="s"><v>5</v></c><c r="B9" t="s"><v>0</v></c><c r="C9"><v>12345678901234567</v></c></row>
</sheetData><mergeCells count="1"><mergeCell ref="A9:B9"/></mergeCells></worksheet>"""

_STRINGS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="6" uniqueCount="6">
<si><t>plain</t></si><si><t xml:space="preserve"> spaced </t></si><si><r><t>ru</t></r><r><rPr><i/></rPr><t>ns</t></r></si>
<si><t>kanji</t><rPh sb="0" eb="1"><t>KANA</t></rPh></si><si><t/></si><si><t>merged &amp; kept</t></si></sst>"""


def _crafted(path: Path, sheet_xml: str = _SHEET, strings: str | None = _STRINGS) -> Path:
    """A workbook with one sheet ``Data`` of the given XML (and a shared-string table);
    style 1 is bold, style 2 a date."""
    wb = openpyxl.Workbook()
    wb.active.title = "Data"
    wb.active["A1"] = "x"
    wb.active["A1"].font = openpyxl.styles.Font(bold=True)
    wb.active["A2"] = 1
    wb.active["A2"].number_format = "yyyy-mm-dd"
    buf = io.BytesIO()
    wb.save(buf)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = sheet_xml.encode()
            elif strings is not None and info.filename == "xl/_rels/workbook.xml.rels":
                data = data.replace(b"</Relationships>", b'<Relationship Type="http://schemas.openxmlformats.org/'
                                    b'officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml" '
                                    b'Id="rIdS"/></Relationships>')
            elif strings is not None and info.filename == "[Content_Types].xml":
                data = data.replace(b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                                    b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
            zout.writestr(info, data)
        if strings is not None:
            zout.writestr("xl/sharedStrings.xml", strings)
    path.write_bytes(out.getvalue())
    return path


def _both_reads(path: Path, ranges: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    monkeypatch.delenv("SHEETSYNC_OPENPYXL", raising=False)
    backend = ExcelBackend(path)
    with backend.locked():
        fast = backend.read_ranges(ranges)
        used_package = backend._pkg is not None and not backend._openpyxl_only
    monkeypatch.setenv("SHEETSYNC_OPENPYXL", "1")
    slow = ExcelBackend(path).read_ranges(ranges)
    monkeypatch.delenv("SHEETSYNC_OPENPYXL")
    return (fast, used_package), slow


def test_issue12_every_kind_of_cell_reads_as_openpyxl_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _crafted(tmp_path / "c.xlsx")
    ranges = ["Data!A1:F9", "Data!A2:C", "Data!B3:B3", "Data!E1:F", "Data!A8:C8"]
    (fast, used), slow = _both_reads(path, ranges, monkeypatch)
    assert used
    assert fast == slow
    grid = fast[0]
    assert grid[0] == ["plain", " spaced ", "runs", "kanji", None, None]
    assert grid[1][:4] == [3, 2.5, 1000.0, -7] and type(grid[1][2]) is float
    assert grid[2] == [True, False, "#N/A", Formula('=A2&"x"'), None, None]
    assert grid[3][:4] == [True, False, Formula("=SUM(A2:D2)"), "  lead <b> & trail  "]
    assert [grid[4][0], grid[5][0], grid[6][0]] == [Formula("=B2*2"), Formula("=B3*2"), Formula("=B4*2")]
    assert grid[4][1] == "rich text" and grid[5][2] == "=not a formula" and grid[6][1] == "line\nbreak"
    assert grid[8][:3] == ["merged & kept", None, 12345678901234567]  # B9 is inside A9:B9


@pytest.mark.parametrize(("sheet_xml", "why"), [
    ('<c r="B1" s="2"><v>45000</v></c>', "a date"),
    ('<c r="B1"><f t="array" ref="B1">A1:A2*2</f><v>1</v></c>', "an array formula"),
    ('<c r="B1" t="d"><v>2024-01-01T00:00:00</v></c>', "an ISO date"),
])
def test_issue12_what_the_package_path_does_not_read_goes_to_openpyxl(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sheet_xml: str, why: str) -> None:
    xml = _SHEET.split("<sheetData>")[0] + f'<sheetData><row r="1">{sheet_xml}</row></sheetData></worksheet>'
    path = _crafted(tmp_path / "f.xlsx", xml, strings=None)
    with pytest.raises(PackageFallback):
        XlsxPackage(path.read_bytes()).read_ranges(["Data!A1:C3"])
    (fast, used), slow = _both_reads(path, ["Data!A1:C3"], monkeypatch)
    assert not used, why
    assert fast == slow


# -- writing: what a cell becomes ----------------------------------------------------------------


def test_issue12_written_cells_read_back_as_after_an_openpyxl_save(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = _crafted(tmp_path / "w.xlsx")
    plain = tmp_path / "plain.xlsx"
    shutil.copy(path, plain)
    updates = [
        RangeUpdate("Data!A1:F1", [["=1+1", Formula("=A2*3"), True, None, 0.1 + 0.2, 12345678901234567]]),
        RangeUpdate("Data!B2:C2", [[" padded ", "a < b & c"]]),
        RangeUpdate("Data!A12:B12", [["new row", 1.0]]),  # a row that is not there, after the last
        RangeUpdate("Data!A8:B8", [["between", "#N/A"]]),  # a row that is not there, between two
        RangeUpdate("Data!D1:D1", [["spliced"]], append=True),  # after the last row holding a value
        RangeUpdate("Data!C3:D4", [[None, None], ["", float("nan")]]),
    ]
    backend = ExcelBackend(path)
    backend.write_ranges(updates)
    monkeypatch.setenv("SHEETSYNC_OPENPYXL", "1")
    ExcelBackend(plain).write_ranges(updates)
    monkeypatch.delenv("SHEETSYNC_OPENPYXL")
    # the cells a step does not write are left as they are, where openpyxl's save turns an
    # untouched "" into an empty cell and a long whole number into a float (%.16g)
    got, expected = _cells(path)["Data"], _cells(plain)["Data"]
    assert got.pop((6, 2)) == "" and (6, 2) not in expected
    assert got.pop((9, 3)) == 12345678901234567 and expected.pop((9, 3)) == 1.234567890123457e16
    assert got == expected
    cells = _cells(path)["Data"]
    assert cells[(1, 1)] == "=1+1"  # text, never a formula
    assert cells[(1, 6)] == 1.234567890123457e16 and cells[(1, 5)] == 0.3  # numbers written as openpyxl writes them
    ws = openpyxl.load_workbook(path)["Data"]
    assert ws["A1"].data_type == "s" and ws["B1"].data_type == "f" and ws["C1"].value is True
    assert ws["B1"].style_id == openpyxl.load_workbook(plain)["Data"]["B1"].style_id  # its style kept
    assert ws["D13"].value == "spliced" and ws.max_row == 13
    with zipfile.ZipFile(path) as z:
        xml = z.read("xl/worksheets/sheet1.xml").decode()
    assert '<dimension ref="A1:F13"/>' in xml
    assert '<row r="1">' in xml  # a changed row loses its spans
    rows = [int(r) for r in __import__("re").findall(r'<row r="(\d+)"', xml)]
    assert rows == sorted(rows) and len(set(rows)) == len(rows)
    assert "</f><v>5</v>" not in xml and "<f>TRUE()</f><v>1" not in xml  # no stale cached results


def test_issue12_a_write_to_a_sheet_that_is_not_there_is_refused_as_before(tmp_path: Path) -> None:
    path = _crafted(tmp_path / "m.xlsx")
    before = path.read_bytes()
    with pytest.raises(BackendError, match="no sheet 'Nope'"):
        ExcelBackend(path).write_ranges([RangeUpdate("Data!A1", [["x"]]), RangeUpdate("Nope!A1", [["y"]])])
    assert path.read_bytes() == before


def test_issue12_the_calculation_chain_is_dropped(tmp_path: Path) -> None:
    path = _crafted(tmp_path / "cc.xlsx")
    out = io.BytesIO()
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "xl/_rels/workbook.xml.rels":
                data = data.replace(b"</Relationships>", b'<Relationship Type="http://schemas.openxmlformats.org/'
                                    b'officeDocument/2006/relationships/calcChain" Target="calcChain.xml" '
                                    b'Id="rIdC"/></Relationships>')
            elif info.filename == "[Content_Types].xml":
                data = data.replace(b"</Types>", b'<Override PartName="/xl/calcChain.xml" ContentType="application/'
                                    b'vnd.openxmlformats-officedocument.spreadsheetml.calcChain+xml"/></Types>')
            zout.writestr(info, data)
        zout.writestr("xl/calcChain.xml", '<calcChain xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
                                          'main"><c r="C4" i="1"/></calcChain>')
    path.write_bytes(out.getvalue())
    ExcelBackend(path).write_ranges([RangeUpdate("Data!A2", [[5]])])
    with zipfile.ZipFile(path) as z:
        assert "xl/calcChain.xml" not in z.namelist()
        assert b"calcChain" not in z.read("xl/_rels/workbook.xml.rels")
        assert b"calcChain" not in z.read("[Content_Types].xml")
    assert openpyxl.load_workbook(path)["Data"]["A2"].value == 5


def test_issue12_a_workbook_in_memory_goes_through_openpyxl(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.active.title = "Data"
    backend = ExcelBackend(tmp_path / "mem.xlsx", workbook=wb)
    backend.write_ranges([RangeUpdate("Data!A1", [["hello"]])])
    assert openpyxl.load_workbook(tmp_path / "mem.xlsx")["Data"]["A1"].value == "hello"


# -- LibreOffice: its own XML reads the same; the result opens with no error value -----------


@pytest.mark.libreoffice
def test_issue12_a_workbook_libreoffice_saved_reads_and_steps_the_same(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from libreoffice import recalc_and_convert, require_libreoffice

    from sheetsync.app.gsheet_cli import tracker_ranges

    require_libreoffice()
    wb = _tracker("bbn", tmp_path / "t.xlsx")
    run_workbook("build", wb)
    run_workbook("resolve", wb)
    saved = recalc_and_convert(wb, tmp_path / "lo")
    with zipfile.ZipFile(saved) as z:
        assert "xl/sharedStrings.xml" in z.namelist()  # LibreOffice's own XML: shared strings
    tracker = steps.detect(excel_backend(saved))
    ranges = tracker_ranges(find_system("bbn").layout(tracker.capacity or None))
    (fast, used), slow = _both_reads(saved, ranges, monkeypatch)
    assert used and fast == slow
    package, plain = tmp_path / "package.xlsx", tmp_path / "openpyxl.xlsx"
    shutil.copy(saved, package)
    shutil.copy(saved, plain)
    for action in ("undo", "resolve"):
        on_package, on_openpyxl = _run_both(package, plain, action, monkeypatch)
        assert on_package == on_openpyxl
    assert _cells(package) == _cells(plain)


@pytest.mark.libreoffice
@pytest.mark.parametrize("system_id", tracker_system_ids())
def test_issue12_libreoffice_opens_the_package_path_result_with_no_error_value(system_id: str, tmp_path: Path,
                                                                                no_openpyxl_load: list[str]) -> None:
    from libreoffice import error_values, require_libreoffice

    require_libreoffice()
    wb = _tracker(system_id, tmp_path / "t.xlsx")
    no_openpyxl_load.clear()
    for action in ("build", "resolve"):
        run_workbook(action, wb)
    assert no_openpyxl_load == []
    assert error_values(wb) == {}


def test_issue12_a_write_the_package_path_gives_up_on_runs_the_whole_step_on_openpyxl(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_openpyxl_load: list[str]) -> None:
    from sheetsync.backends import xlsx_package

    origin = _tracker("bbn", tmp_path / "origin.xlsx")
    run_workbook("build", origin)
    package, plain = tmp_path / "package.xlsx", tmp_path / "openpyxl.xlsx"
    shutil.copy(origin, package)
    shutil.copy(origin, plain)

    def gives_up(pkg: Any) -> dict[str, bytes]:
        raise PackageFallback("the chart draws another number of cohorts now")

    monkeypatch.setattr(xlsx_package, "refresh_health_chart", gives_up)
    no_openpyxl_load.clear()
    on_package, on_openpyxl = _run_both(package, plain, "resolve", monkeypatch)
    assert str(package) in no_openpyxl_load  # read on the package path, written through openpyxl
    assert on_package == on_openpyxl
    assert _cells(package) == _cells(plain)
    with zipfile.ZipFile(package) as zp, zipfile.ZipFile(plain) as zo:
        assert zp.read("xl/charts/chart1.xml") == zo.read("xl/charts/chart1.xml")  # drawn anew by openpyxl
