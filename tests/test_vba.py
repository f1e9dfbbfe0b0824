"""Macro-enabled workbooks: the VBA project, the buttons, and what Office tools see."""

from __future__ import annotations

import os
import random
import re
import warnings
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import libreoffice as lo
import olefile
import openpyxl
import pytest

from sheetsync.backends.vba import (
    MACROS_DIR,
    build_vba_project,
    compress,
    make_xlsm,
    read_module,
    write_compound_file,
    xlwings_vba_modules,
)

BUTTONS = [
    ("Battle", "BuildCohorts", "Build cohorts", "H2"),
    ("Battle", "ResolvePhase", "Resolve phase", "H5"),
    ("Battle", "UndoPhase", "Undo phase", "H8"),
    ("Battle", "EndBattle", "End battle", "H11"),
]
MACROS = [b[1] for b in BUTTONS]

with warnings.catch_warnings():  # oletools 0.60 calls pyparsing APIs deprecated in 3.3
    warnings.simplefilter("ignore", DeprecationWarning)
    from oletools.olevba import VBA_Parser, decompress_stream
NS = {
    "main": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
    "ct": "http://schemas.openxmlformats.org/package/2006/content-types",
    "x": "urn:schemas-microsoft-com:office:excel",
}


def small_workbook() -> openpyxl.Workbook:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Battle"
    ws["A1"] = "Phase"
    ws["B1"] = 1
    ws["B2"] = "=B1+1"
    ws.column_dimensions["H"].width = 20
    rules = wb.create_sheet("House Rules")
    rules["A1"] = "Morale"
    return wb


def desktop_modules() -> list[Path]:
    return [MACROS_DIR / "Sheetsync.bas", MACROS_DIR / "SheetsyncGuard.bas", *xlwings_vba_modules()]


def remote_modules() -> list[Path]:
    return [MACROS_DIR / "SheetsyncRemote.bas", MACROS_DIR / "SheetsyncGuard.bas", *xlwings_vba_modules(remote=True)]


@pytest.fixture(scope="module")
def desktop_xlsm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("xlsm") / "battle.xlsm"
    return make_xlsm(small_workbook(), out, desktop_modules(), BUTTONS)


def _strip(code: str) -> list[str]:
    """Source lines without line-end differences, attribute lines and a class header."""
    lines = code.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
    if lines and lines[0].startswith("VERSION "):
        lines = lines[lines.index("END") + 1 :]
    return [line for line in lines if not line.startswith("Attribute ")]


def _extracted(path: Path) -> dict[str, str]:
    parser = VBA_Parser(str(path))
    try:
        assert parser.detect_vba_macros()
        return {name.rsplit(".", 1)[0]: code for (_f, _s, name, code) in parser.extract_macros()}
    finally:
        parser.close()


# -- the module files ---------------------------------------------------------------------


def test_each_macro_file_defines_the_four_buttons() -> None:
    for name in ("Sheetsync.bas", "SheetsyncRemote.bas"):
        code = (MACROS_DIR / name).read_text()
        subs = re.findall(r"^Public Sub (\w+)\(\)", code, re.M)
        assert subs == MACROS, name
    desktop = (MACROS_DIR / "Sheetsync.bas").read_text()
    for step in ("build", "resolve", "undo", "end"):
        assert f'    RunStep "import sheetsync.app.buttons as b; b.{step}()"' in desktop
    assert re.search(r"Set guarded = SheetsyncGuard\.Unguard\(\)\s+On Error GoTo Finally\s+RunPython code\s+Finally:\s+SheetsyncGuard\.Guard guarded",
                     desktop), "the desktop step lifts and restores sheet protection around RunPython"
    remote = (MACROS_DIR / "SheetsyncRemote.bas").read_text()
    assert re.findall(r'CallEndpoint "(\w+)"', remote) == ["build", "resolve", "undo", "end"]
    assert re.search(r"Set guarded = SheetsyncGuard\.Unguard\(\)\s+On Error GoTo Finally\s+RunRemotePython .*\s+Finally:\s+SheetsyncGuard\.Guard guarded",
                     remote), "the remote step lifts and restores sheet protection around RunRemotePython"


# Words of the VBA language that cannot name a routine (statement and clause keywords).
VBA_KEYWORDS = {
    "And", "As", "Call", "Case", "Const", "Declare", "Dim", "Do", "Each", "Else", "ElseIf", "End",
    "Enum", "Erase", "Error", "Event", "Exit", "For", "Function", "Get", "GoSub", "GoTo", "If", "In",
    "Is", "Let", "Like", "Loop", "Me", "Mod", "New", "Next", "Not", "Nothing", "On", "Option",
    "Or", "Print", "Private", "Property", "Public", "ReDim", "Resume", "Return", "Select", "Set",
    "Static", "Step", "Stop", "Sub", "Then", "To", "Type", "Until", "Wend", "While", "With", "Xor",
}


def test_vba_no_routine_of_ours_is_named_after_a_keyword() -> None:
    """``Private Sub Step`` did not compile in LibreOffice: ``Step`` belongs to ``For``."""
    for path in sorted(MACROS_DIR.glob("*.bas")):
        names = re.findall(r"^(?:(?:Public|Private|Friend)\s+)?(?:Sub|Function)\s+(\w+)", path.read_text(), re.M | re.I)
        assert names, path.name
        clashes = {n for n in names if n.lower() in {k.lower() for k in VBA_KEYWORDS}}
        assert not clashes, f"{path.name}: {sorted(clashes)}"
    assert re.search(r"^Private Sub RunStep\(code As String\)$", (MACROS_DIR / "Sheetsync.bas").read_text(), re.M)


def test_remote_macros_use_parameters_the_installed_xlwings_has() -> None:
    remote_bas = next(p for p in xlwings_vba_modules(remote=True) if p.name == "Remote.bas").read_text()
    signature = re.search(r"Function RunRemotePython\((.*?)\)\r?\n", remote_bas, re.S)
    assert signature is not None
    assert re.search(r"\bauth As String", signature.group(1))
    assert "RunRemotePython baseUrl & \"/\" & action, auth:=" in (
        MACROS_DIR / "SheetsyncRemote.bas"
    ).read_text()


def test_apps_script_buttons_call_run_python_with_known_options() -> None:
    import xlwings

    js = (Path(xlwings.__file__).parent / "js" / "xlwings.js").read_text()
    options = re.search(r"function runPython\(\s*url,\s*\{([^}]*)\}", js)
    assert options is not None
    known = set(re.findall(r"(\w+)\s*=", options.group(1)))
    gs = (MACROS_DIR / "sheetsync.gs").read_text()
    from sheetsync.core.registry import find_system, system_ids

    wanted = {(st.sub[0].lower() + st.sub[1:], st.action) for key in system_ids() for st in find_system(key).steps}
    found = re.findall(r"^function (\w+)\(\) \{\n  sheetsyncCall_\(\"(\w+)\"\);", gs, re.M)
    assert set(found) == wanted and len(found) == len(wanted)  # one function per step sub of every system
    used = set(re.findall(r"runPython\([^,]+, \{ (\w+):", gs))
    assert used and used <= known


# -- compression and the compound file ----------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 3, 17, 4095, 4096, 4097, 8192, 20000])
def test_compress_round_trips_through_oletools(size: int) -> None:
    rng = random.Random(size)
    words = ["Sub ", "End Sub\r\n", "Dim x As Long\r\n", "RunPython ", '"a"', " ", "'", "=", "\r\n"]
    text = "".join(rng.choice(words) for _ in range(size))[:size].encode("cp1252")
    packed = compress(text)
    assert packed[0] == 1
    assert bytes(decompress_stream(bytearray(packed))) == text
    if size >= 4096:
        assert len(packed) < len(text)  # it really compresses


def test_compress_round_trips_every_xlwings_module() -> None:
    for path in xlwings_vba_modules(remote=True):
        data = path.read_bytes()
        assert bytes(decompress_stream(bytearray(compress(data)))) == data, path.name


def test_compound_file_is_read_back_by_olefile() -> None:
    streams = {
        "PROJECT": b"p" * 100,
        "VBA/dir": b"d" * 4095,  # the last mini stream size
        "VBA/big": os.urandom(4096),  # the first regular stream size
        "VBA/huge": os.urandom(70_000),
        "VBA/empty": b"",
        "Other/x": b"xyz",
    }
    data = write_compound_file(streams)
    ole = olefile.OleFileIO(data)
    try:
        found = {"/".join(parts): ole.openstream(parts).read() for parts in ole.listdir()}
    finally:
        ole.close()
    assert found == streams


def test_build_vba_project_refuses_duplicate_module_names(tmp_path: Path) -> None:
    twin = tmp_path / "Other.bas"
    twin.write_text('Attribute VB_Name = "Sheetsync"\nSub X()\nEnd Sub\n')
    with pytest.raises(ValueError, match="two VBA modules are named 'Sheetsync'"):
        build_vba_project([MACROS_DIR / "Sheetsync.bas", twin])


# -- the workbook ---------------------------------------------------------------------------


def test_olevba_extracts_exactly_the_included_modules(desktop_xlsm: Path) -> None:
    found = _extracted(desktop_xlsm)
    included = {read_module(p).name: p for p in desktop_modules()}
    assert set(included) == {"Sheetsync", "SheetsyncGuard", "xlwings", "Dictionary"}
    documents = {"ThisWorkbook", "Sheet1", "Sheet2"}  # the workbook and its two sheets
    assert set(found) == set(included) | documents
    for name, path in included.items():
        assert found[name] == read_module(path).code
        assert _strip(found[name]) == _strip(path.read_text()), name
    assert 'Attribute VB_Base = "0{00020820-0000-0000-C000-000000000046}"' in found["Sheet1"]


def test_olevba_sees_the_remote_modules(tmp_path: Path) -> None:
    out = make_xlsm(small_workbook(), tmp_path / "remote.xlsm", remote_modules(), BUTTONS)
    found = _extracted(out)
    assert set(found) == {read_module(p).name for p in remote_modules()} | {
        "ThisWorkbook", "Sheet1", "Sheet2"
    }
    for path in remote_modules():
        assert _strip(found[read_module(path).name]) == _strip(path.read_text()), path.name


def test_workbook_is_macro_enabled_with_the_vba_part(desktop_xlsm: Path) -> None:
    with zipfile.ZipFile(desktop_xlsm) as zf:
        names = zf.namelist()
        types = ET.fromstring(zf.read("[Content_Types].xml"))
        rels = ET.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
        workbook = ET.fromstring(zf.read("xl/workbook.xml"))
        sheet = ET.fromstring(zf.read("xl/worksheets/sheet1.xml"))
        vba = zf.read("xl/vbaProject.bin")
    assert names[0] == "[Content_Types].xml"
    overrides = {o.get("PartName"): o.get("ContentType") for o in types.findall("ct:Override", NS)}
    defaults = {d.get("Extension"): d.get("ContentType") for d in types.findall("ct:Default", NS)}
    assert overrides["/xl/workbook.xml"] == "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
    assert defaults["bin"] == "application/vnd.ms-office.vbaProject"
    assert defaults["vml"] == "application/vnd.openxmlformats-officedocument.vmlDrawing"
    vba_rels = [
        r for r in rels.findall("rel:Relationship", NS)
        if r.get("Type") == "http://schemas.microsoft.com/office/2006/relationships/vbaProject"
    ]
    assert [r.get("Target") for r in vba_rels] == ["vbaProject.bin"]
    assert vba.startswith(bytes.fromhex("D0CF11E0A1B11AE1"))
    workbook_pr, sheet_pr = workbook.find("main:workbookPr", NS), sheet.find("main:sheetPr", NS)
    assert workbook_pr is not None and workbook_pr.get("codeName") == "ThisWorkbook"
    assert sheet_pr is not None and sheet_pr.get("codeName") == "Sheet1"
    # openpyxl still reads the content
    wb = openpyxl.load_workbook(desktop_xlsm)
    assert wb.sheetnames == ["Battle", "House Rules"]
    assert wb["Battle"]["B2"].value == "=B1+1"


def test_buttons_and_their_macros_are_in_the_file(desktop_xlsm: Path) -> None:
    with zipfile.ZipFile(desktop_xlsm) as zf:
        sheet = ET.fromstring(zf.read("xl/worksheets/sheet1.xml"))
        legacy = sheet.find("main:legacyDrawing", NS)
        assert legacy is not None
        rid = legacy.get(f"{{{NS['r']}}}id")
        rels = ET.fromstring(zf.read("xl/worksheets/_rels/sheet1.xml.rels"))
        target = next(r.get("Target", "") for r in rels.findall("rel:Relationship", NS) if r.get("Id") == rid)
        vml = ET.fromstring(zf.read("xl/" + target.removeprefix("../")))
        other = zf.read("xl/worksheets/sheet2.xml").decode()
    children = [child.tag.split("}")[1] for child in sheet]
    assert children.index("legacyDrawing") > children.index("pageMargins")  # schema order
    buttons = []
    for shape in vml.iter("{urn:schemas-microsoft-com:vml}shape"):
        data = shape.find("x:ClientData", NS)
        assert data is not None and data.get("ObjectType") == "Button"
        textbox = shape.find("{urn:schemas-microsoft-com:vml}textbox")
        assert textbox is not None
        caption = "".join(textbox.itertext())
        anchor = [int(v) for v in data.findtext("x:Anchor", "", namespaces=NS).split(",")]
        buttons.append((data.findtext("x:FmlaMacro", namespaces=NS), caption, anchor[0], anchor[2]))
    assert buttons == [
        ("[0]!BuildCohorts", "Build cohorts", 7, 1),
        ("[0]!ResolvePhase", "Resolve phase", 7, 4),
        ("[0]!UndoPhase", "Undo phase", 7, 7),
        ("[0]!EndBattle", "End battle", 7, 10),
    ]
    assert "legacyDrawing" not in other  # no buttons on the other sheet


def test_buttons_name_a_missing_sheet(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no worksheet named 'Nope'"):
        make_xlsm(small_workbook(), tmp_path / "x.xlsm", desktop_modules(), [("Nope", "X", "X", "A1")])
    assert list(tmp_path.iterdir()) == []


def test_save_is_atomic_and_leaves_no_temp_file(tmp_path: Path) -> None:
    out = tmp_path / "battle.xlsm"
    make_xlsm(small_workbook(), out, desktop_modules(), BUTTONS)
    first = out.read_bytes()
    bad = tmp_path / "bad.bas"
    bad.write_text('Attribute VB_Name = "1bad"\n')
    with pytest.raises(ValueError, match="not a VBA module name"):
        make_xlsm(small_workbook(), out, [bad], BUTTONS)
    assert out.read_bytes() == first  # a failed build leaves the old file alone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.bas", "battle.xlsm"]


def test_rebuilding_from_an_xlsm_replaces_the_project(tmp_path: Path, desktop_xlsm: Path) -> None:
    out = make_xlsm(desktop_xlsm, tmp_path / "again.xlsm", remote_modules(), BUTTONS[:1])
    found = _extracted(out)
    assert "SheetsyncRemote" in found and "Sheetsync" not in found
    with zipfile.ZipFile(out) as zf:
        rels = zf.read("xl/_rels/workbook.xml.rels").decode()
        vml = [n for n in zf.namelist() if n.endswith(".vml")]
        assert len(vml) == 1
        shapes = zf.read(vml[0]).decode().count("<x:FmlaMacro>")
    assert rels.count("relationships/vbaProject") == 1
    assert shapes == 4  # the new BuildCohorts button replaces its old copy; the other three stay


@pytest.mark.libreoffice
def test_buttons_join_the_drawing_of_existing_comments(tmp_path: Path) -> None:
    from openpyxl.comments import Comment

    wb = small_workbook()
    wb["Battle"]["A1"].comment = Comment("Phase of the battle", "GM")
    wb["House Rules"]["A1"].comment = Comment("Agreed at session 0", "GM")
    out = make_xlsm(wb, tmp_path / "notes.xlsm", desktop_modules(), BUTTONS[:2])
    with zipfile.ZipFile(out) as zf:
        drawings = sorted(n for n in zf.namelist() if n.endswith(".vml"))
        assert len(drawings) == 2  # one legacy drawing per sheet: buttons join the notes
        texts = [zf.read(n).decode() for n in drawings]
    vmls = [ET.fromstring(t) for t in texts]  # still well-formed, prefixes bound
    kinds = [sorted(d.get("ObjectType", "") for d in v.iter(f"{{{NS['x']}}}ClientData")) for v in vmls]
    assert sorted(kinds) == [["Button", "Button", "Note"], ["Note"]]
    shape_ids = [i for t in texts for i in re.findall(r'id="(_x0000_s\d+)"', t)]
    button_ids = [
        shape.get("id")
        for v in vmls
        for shape in v.iter("{urn:schemas-microsoft-com:vml}shape")
        if any(d.get("ObjectType") == "Button" for d in shape.iter(f"{{{NS['x']}}}ClientData"))
    ]
    assert len(button_ids) == 2
    assert all(shape_ids.count(i) == 1 for i in button_ids)  # unique in the workbook
    assert openpyxl.load_workbook(out)["Battle"]["A1"].comment.text == "Phase of the battle"
    lo.require_libreoffice()
    controls = lo.inspect_macros(out)["controls"]
    assert [(c["label"], len(c["events"])) for c in controls] == [
        ("Build cohorts", 1), ("Resolve phase", 1)
    ]


# -- LibreOffice --------------------------------------------------------------------------


@pytest.mark.libreoffice
def test_libreoffice_imports_the_modules_and_wires_the_buttons(desktop_xlsm: Path) -> None:
    lo.require_libreoffice()
    result = lo.inspect_macros(desktop_xlsm)
    seconds = lo.TIMINGS[-1][1]

    project = result["libraries"]["VBAProject"]
    assert {"Sheetsync", "SheetsyncGuard", "xlwings", "Dictionary"} <= set(project)
    assert "Public Function Unguard() As Collection" in project["SheetsyncGuard"]
    assert set(project) - {"Sheetsync", "SheetsyncGuard", "xlwings", "Dictionary"} <= {
        "ThisWorkbook", "Sheet1", "Sheet2"
    }
    for sub in MACROS:
        assert re.search(rf"^Public Sub {sub}\(\)", project["Sheetsync"], re.M)
    assert "Public Function RunPython(PythonCommand As String)" in project["xlwings"]

    controls = [c for c in result["controls"] if c["sheet"] == "Battle"]
    assert [c["label"] for c in controls] == [b[2] for b in BUTTONS]
    for control, macro in zip(controls, MACROS, strict=True):
        assert control["service"] == "com.sun.star.form.OButtonModel"
        assert [e["code"] for e in control["events"]] == [
            f"vnd.sun.star.script:VBAProject.Sheetsync.{macro}?language=Basic&location=document"
        ]
    assert seconds < 120
