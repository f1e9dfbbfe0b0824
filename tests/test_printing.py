"""Issue 22, printing: every tracker prints on A4 (or Letter by choice), fitted across so no
column is cut, its header row on every page, its print area stopping at the rows in use;
the hex Map whole on one page.  One tracker per rule system, each made from its example
and a step resolved, printed sheet by sheet by real LibreOffice (one run for all three),
and the PDF pages read back with poppler-utils (``pdfinfo``, ``pdftotext``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import openpyxl
import pytest
from libreoffice import require_libreoffice, sheet_pdfs
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.workbook_cli import new_workbook, run_workbook, system_tracker_from
from sheetsync.core.registry import find_system
from sheetsync.sheets.disk import example_path, read_data_file
from sheetsync.sheets.printing import PAPER, printed_sheets

pytestmark = [pytest.mark.libreoffice,
              pytest.mark.filterwarnings("ignore:.*extension is not supported:UserWarning")]

EXAMPLES = {"bbn": example_path(),
            "hexwar": Path("sheetsync/systems/hexwar/example.yaml"),
            "exalted": Path("sheetsync/systems/exalted/example.yaml")}
ROOT = Path(__file__).resolve().parent.parent
POINTS = {"a4": (595, 842), "letter": (612, 792)}
TABLES = {  # the table each printed sheet is laid out around, and its last printed column
    "bbn": {"Orders": ("Orders_Table", "result"), "Characters": ("Characters_Table", None),
            "Ranges": ("Ranges_Table", None), "Log": ("Log_Table", None), "Aftermath": ("Aftermath_Table", None),
            "House Rules": ("HouseRules_Table", None)},
    "hexwar": {"Units": ("Units_Table", None), "Moves": ("Moves_Table", None), "Attacks": ("Attacks_Table", None),
               "Log": ("Log_Table", None), "Report": ("Report_Table", None),
               "House Rules": ("HouseRules_Table", None)},
    "exalted": {"Characters": ("Characters_Table", None), "Units": ("Units_Table", None),
                "Orders": ("Orders_Table", None), "Log": ("Log_Table", None), "Aftermath": ("Aftermath_Table", None),
                "House Rules": ("HouseRules_Table", None)},
}


@dataclass
class Printed:
    system: str
    paper: str
    book: Path
    pdfs: dict[str, Path]


def _tools() -> tuple[str, str]:
    pdfinfo, pdftotext = shutil.which("pdfinfo"), shutil.which("pdftotext")
    if pdfinfo is None or pdftotext is None:  # .ci/install-system-deps.sh installs poppler-utils
        if os.environ.get("CI"):
            pytest.fail("needs poppler-utils (pdfinfo, pdftotext), which .ci/install-system-deps.sh installs")
        pytest.skip("needs poppler-utils (pdfinfo, pdftotext)")
    return pdfinfo, pdftotext


def make_tracker(system_id: str, out: Path, paper: str) -> Path:
    """The system's example as a tracker (loaded and built, ready for its first step) on
    ``paper``, with one step resolved: Exalted's is made on the other paper and switched by
    ``build --paper``, as a user would."""
    example = ROOT / EXAMPLES[system_id]
    if system_id == "bbn":
        new_workbook(out, example, paper=paper)
        run_workbook("build", out)
    else:
        system = find_system(system_id)
        first = "letter" if system_id == "exalted" else paper
        system_tracker_from(out, system, system.load(read_data_file(example), str(example)), paper=first)
        run_workbook("build", out, paper=paper if system_id == "exalted" else None)
    run_workbook("resolve", out)
    return out


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Printed]:
    """The three trackers, every printed sheet of each as its own PDF (one LibreOffice run)."""
    require_libreoffice()
    _tools()
    tmp = tmp_path_factory.mktemp("printing")
    out: dict[str, Printed] = {}
    for system_id, paper in (("bbn", "letter"), ("hexwar", "a4"), ("exalted", "a4")):
        book = make_tracker(system_id, tmp / f"{system_id}.xlsx", paper)
        lay = find_system(system_id).layout(_capacity(book))
        pdfs = {sheet: tmp / f"{system_id}-{sheet.replace(' ', '_')}.pdf" for sheet in printed_sheets(lay)}
        out[system_id] = Printed(system_id, paper, book, pdfs)
    sheet_pdfs({p.book: {s: str(f) for s, f in p.pdfs.items()} for p in out.values()})
    return out


def _capacity(book: Path) -> dict[str, int] | None:
    import json

    wb = openpyxl.load_workbook(book, read_only=True)  # a read-only workbook keeps its file open
    try:
        value = wb["State"]["B2"].value
    finally:
        wb.close()
    return json.loads(value) if value else None


def _pages(pdf: Path) -> tuple[list[tuple[float, float]], list[str]]:
    """Each page's size (points) and text (``pdftotext -layout``)."""
    pdfinfo, pdftotext = _tools()
    info = subprocess.run([pdfinfo, "-f", "1", "-l", "9999", str(pdf)], capture_output=True, text=True,
                          check=True).stdout
    sizes = [(float(w), float(h)) for w, h in re.findall(r"Page\s+\d+ size:\s+([\d.]+) x ([\d.]+)", info)]
    text = subprocess.run([pdftotext, "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = text.split("\f")[:len(sizes)]
    return sizes, pages


@pytest.mark.parametrize("system_id", ["bbn", "hexwar", "exalted"])
def test_every_sheet_prints_on_the_paper_with_its_headers_on_every_page(
        printed: dict[str, Printed], system_id: str) -> None:
    """Every page of every printed sheet is the paper chosen (A4: 595 x 842 points, Letter:
    612 x 792, either way round), no page is blank, the table's first header is on every
    page (its header row and first columns repeat) and its last header is printed (no
    column cut); the hex Map is one page."""
    got = printed[system_id]
    lay = find_system(system_id).layout(_capacity(got.book))
    paper = POINTS[got.paper]
    for sheet, pdf in got.pdfs.items():
        sizes, pages = _pages(pdf)
        assert sizes, (system_id, sheet)
        landscape = printed_sheets(lay)[sheet].landscape
        for w, h in sizes:
            assert (round(w), round(h)) == (paper[::-1] if landscape else paper), (system_id, sheet, w, h)
        for i, text in enumerate(pages):
            assert text.strip(), f"{system_id} {sheet}: page {i + 1} of {len(pages)} is blank"
        if sheet == "Map":
            assert len(pages) == 1, f"the hex Map prints on {len(pages)} pages"
        if sheet not in TABLES[system_id]:
            continue
        name, last_key = TABLES[system_id][sheet]
        block = lay.block(name)
        first = block.columns[0].header.split()[0]
        shown = [c for c in block.columns if not c.hidden]
        last = (block.column(last_key) if last_key else shown[-1]).header.split()[0]
        for i, text in enumerate(pages):
            assert first in text, f"{system_id} {sheet}: page {i + 1} of {len(pages)} lacks the header {first!r}"
        assert last in "".join(pages), f"{system_id} {sheet}: its last column {last!r} is not printed"


def test_the_wide_exalted_sheets_print_on_pages_across_with_the_names_repeated(printed: dict[str, Printed]) -> None:
    """The Exalted Units sheet (sixty columns) reads: several pages across, each with the
    Unit column and the header row, so every page says which unit a row is."""
    sizes, pages = _pages(printed["exalted"].pdfs["Units"])
    assert len(pages) >= 3
    units = [u["name"] for u in read_data_file(ROOT / EXAMPLES["exalted"])["units"]]
    for i, text in enumerate(pages):
        assert all(u in text for u in units), f"Units page {i + 1} lacks the unit names"
        assert "Unit" in text


@pytest.mark.parametrize("system_id", ["bbn", "hexwar", "exalted"])
def test_the_page_setup_in_the_workbook(printed: dict[str, Printed], system_id: str) -> None:
    """What the workbook says, read with openpyxl: the paper, fitted to the page width (as
    many pages down as it takes), the header row as print titles, and a print area that
    stops at the last row holding a value in the sheet's table."""
    got = printed[system_id]
    wb = openpyxl.load_workbook(got.book)
    lay = find_system(system_id).layout(_capacity(got.book))
    for sheet, setup in printed_sheets(lay).items():
        ws = wb[sheet]
        assert ws.page_setup.paperSize is not None and int(ws.page_setup.paperSize) == PAPER[got.paper], sheet
        assert ws.sheet_properties.pageSetUpPr.fitToPage is True, sheet
        assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (setup.pages_wide, setup.pages_tall), sheet
        assert ws.page_setup.orientation == ("landscape" if setup.landscape else "portrait"), sheet
        if sheet not in TABLES[system_id]:
            continue
        block = lay.block(TABLES[system_id][sheet][0])
        assert ws.print_title_rows == f"${block.header_row}:${block.header_row}", sheet
        filled = [r for r in range(block.first_row, ws.max_row + 1)
                  if any(ws.cell(row=r, column=c).value not in (None, "")
                         and ws.cell(row=r, column=c).data_type != "f"
                         for c in range(block.first_col, block.last_col + 1))]
        bottom = max([block.header_row, *filled])
        m = re.fullmatch(r"'?[^!]+'?!\$A\$1:\$([A-Z]+)\$(\d+)", ws.print_area or "")
        assert m is not None, (sheet, ws.print_area)
        assert int(m.group(2)) == bottom, (sheet, ws.print_area, bottom)
        if block.rows is not None and sheet != "House Rules":  # House Rules: a row per rule, all filled
            assert bottom < block.last_row, f"{sheet}: the example fills every capacity row"  # the area is shorter


def test_the_hex_map_prints_at_the_maps_own_size(printed: dict[str, Printed]) -> None:
    """The Map's print area is the map of the battle (its columns and rows of hexes, not
    the Map area's capacity), fitted to one page."""
    got = printed["hexwar"]
    ws = openpyxl.load_workbook(got.book)["Map"]
    battle = read_data_file(ROOT / EXAMPLES["hexwar"])
    lay = find_system("hexwar").layout(_capacity(got.book))
    grid = lay.areas["Map_Grid"]
    cols, rows = battle["map"]["columns"], battle["map"]["rows"]
    from sheetsync.core.a1 import col_letter

    assert ws.print_area == f"'Map'!$A$1:${col_letter(grid.first_col + cols - 1)}${grid.first_row + 2 * rows}"
    assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (1, 1)


def test_paper_is_the_users_choice_on_the_command_line(tmp_path: Path) -> None:
    """``template --paper letter`` makes a Letter tracker, every sheet; ``build --paper a4``
    moves it to A4 and a later step keeps it; A4 is the default."""
    runner = CliRunner()
    book = tmp_path / "t.xlsx"
    assert runner.invoke(app, ["template", str(book), "--system", "hexwar", "--paper", "letter"]).exit_code == 0
    assert {int(ws.page_setup.paperSize) for ws in openpyxl.load_workbook(book).worksheets} == {PAPER["letter"]}
    plain = tmp_path / "plain.xlsx"
    assert runner.invoke(app, ["template", str(plain), "--system", "exalted"]).exit_code == 0
    assert {int(ws.page_setup.paperSize) for ws in openpyxl.load_workbook(plain).worksheets} == {PAPER["a4"]}
    bad = runner.invoke(app, ["template", str(tmp_path / "x.xlsx"), "--paper", "a3"])
    assert bad.exit_code == 2 and not (tmp_path / "x.xlsx").exists()
