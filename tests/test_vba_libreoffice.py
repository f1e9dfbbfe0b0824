"""The project's VBA modules compile and run in LibreOffice Calc.

Calc imports an ``.xlsm``'s modules into its Basic library ``VBAProject`` and compiles a
module the first time one of its routines is called.  Each test builds a workbook with our
modules and a stand-in for xlwings' ``RunPython`` / ``RunRemotePython`` (the real ones start
a Python or send an HTTP request), clicks a button's macro through the script provider,
and reads back what the stand-in recorded on the sheet.  A module that does not compile
runs nothing, so the cell stays empty.
"""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import libreoffice as lo
import openpyxl
import pytest

from sheetsync.backends.vba import MACROS_DIR, compress, make_xlsm, read_module

STAND_IN = '''Attribute VB_Name = "StandIn"
Option Explicit

Public Function RunPython(PythonCommand As String)
    Record PythonCommand
End Function

Public Function RunRemotePython(url As String, Optional auth As String = "")
    Record url & " " & auth
End Function

Private Sub Record(what As String)
    With ThisWorkbook.Worksheets("Battle")
        .Range("C1").Value = what
        .Range("D1").Value = .ProtectContents
    End With
End Sub
'''


def _script(module: str, macro: str) -> str:
    return f"vnd.sun.star.script:VBAProject.{module}.{macro}?language=Basic&location=document"


def _workbook() -> openpyxl.Workbook:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Battle"
    ws["A1"] = "Phase"
    ws.protection.sheet = True  # as the tracker's sheets are: the step must lift it
    return wb


def _build(tmp_path: Path, name: str, modules: list[Path]) -> Path:
    stand_in = tmp_path / "StandIn.bas"
    stand_in.write_text(STAND_IN)
    return make_xlsm(_workbook(), tmp_path / name, [*modules, stand_in])


@pytest.mark.libreoffice
def test_libreoffice_compiles_the_desktop_module_with_run_step(tmp_path: Path) -> None:
    """Before, ``Private Sub Step`` (``Step`` is a keyword of ``For ... Step``) kept the
    Sheetsync module from compiling in LibreOffice, so no button did anything."""
    lo.require_libreoffice()
    book = _build(tmp_path, "desktop.xlsm", [MACROS_DIR / "Sheetsync.bas", MACROS_DIR / "SheetsyncGuard.bas"])
    result = lo.run_macros(book, [_script("Sheetsync", "ResolvePhase")], ["Battle!C1:D1"])
    assert [run["ok"] for run in result["runs"]] == [True], result["runs"]
    command, protected = result["values"]["Battle!C1:D1"][0]
    assert command == "import sheetsync.app.buttons as b; b.resolve()"
    assert not protected  # SheetsyncGuard lifted the protection for the step


@pytest.mark.libreoffice
def test_libreoffice_check_fails_for_a_routine_named_step(tmp_path: Path) -> None:
    """The check above can fail: the module as it was (the helper named ``Step``) runs
    nothing in LibreOffice."""
    lo.require_libreoffice()
    source = (MACROS_DIR / "Sheetsync.bas").read_text()
    assert "RunStep" in source
    old = tmp_path / "old" / "Sheetsync.bas"
    old.parent.mkdir()
    old.write_text(re.sub(r"\bRunStep\b", "Step", source))
    book = _build(tmp_path, "old.xlsm", [old, MACROS_DIR / "SheetsyncGuard.bas"])
    result = lo.run_macros(book, [_script("Sheetsync", "ResolvePhase")], ["Battle!C1:D1"])
    assert result["values"]["Battle!C1:D1"][0][0] == ""


@pytest.mark.libreoffice
def test_libreoffice_compiles_the_remote_module(tmp_path: Path) -> None:
    lo.require_libreoffice()
    book = _build(tmp_path, "remote.xlsm", [MACROS_DIR / "SheetsyncRemote.bas", MACROS_DIR / "SheetsyncGuard.bas"])
    result = lo.run_macros(book, [_script("SheetsyncRemote", "UndoPhase")], ["Battle!C1:D1"])
    assert [run["ok"] for run in result["runs"]] == [True], result["runs"]
    command, protected = result["values"]["Battle!C1:D1"][0]
    assert command == "http://127.0.0.1:8000/api/undo "  # the default URL, no key set
    assert not protected


@pytest.mark.libreoffice
def test_ms_ovba_2_4_1_libreoffice_reads_a_module_whose_last_chunk_does_not_compress(tmp_path: Path) -> None:
    """A module whose final chunk holds no repeats: before, compress() refused it; now it is
    two short compressed chunks, and Calc reads and runs the module."""
    rng = random.Random(20)
    alphabet = string.ascii_letters + string.digits + string.punctuation.replace('"', "")
    noise = "".join("' " + "".join(rng.choice(alphabet) for _ in range(400)) + "\n" for _ in range(9))
    module = tmp_path / "Noise.bas"
    module.write_text(
        'Attribute VB_Name = "Noise"\nOption Explicit\n\n'
        'Public Function Answer() As String\n    Answer = "read back whole"\nEnd Function\n' + noise
    )
    code = read_module(module).code.encode("cp1252")
    packed = compress(code)
    chunk_headers = [int.from_bytes(packed[1:3], "little")]
    second = 1 + (chunk_headers[0] & 0x0FFF) + 3
    chunk_headers.append(int.from_bytes(packed[second : second + 2], "little"))
    assert len(code) < 4096 and second < len(packed)  # one short chunk of data, two chunks written
    assert all(h & 0x8000 for h in chunk_headers)  # both compressed, no zero-padded raw chunk

    book = make_xlsm(_workbook(), tmp_path / "noise.xlsm", [module])
    result = lo.run_macros(book, [_script("Noise", "Answer")])
    assert result["runs"] == [{"script": _script("Noise", "Answer"), "ok": True, "value": "read back whole"}]
    source = lo.inspect_macros(book)["libraries"]["VBAProject"]["Noise"]
    assert noise.replace("\n", "") in source.replace("\r", "").replace("\n", "")
