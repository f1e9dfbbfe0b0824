"""The generated ``vbaProject.bin`` against ones Excel wrote.

The installed xlwings wheel ships workbooks that Excel saved: ``quickstart_standalone.xlsm``
(the xlwings module and the Dictionary class) and ``quickstart.xlsm`` (a newer save that
also carries the PROJECTCOMPATVERSION record).  Where the generated project and these
overlap, they agree field by field; where they must differ, the test says why.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import olefile
import pytest

from sheetsync.backends.vba import (
    MACROS_DIR,
    build_vba_project,
    decompress,
    write_compound_file,
    xlwings_vba_modules,
)

STORAGE, STREAM, ROOT = 1, 2, 5


def _excel_project(name: str) -> bytes:
    import xlwings

    with zipfile.ZipFile(Path(xlwings.__file__).parent / name) as zf:
        return zf.read("xl/vbaProject.bin")


@pytest.fixture(scope="module")
def ours() -> bytes:
    modules = [MACROS_DIR / "Sheetsync.bas", MACROS_DIR / "SheetsyncGuard.bas", *xlwings_vba_modules()]
    return build_vba_project(modules, sheet_modules=["Sheet1", "Sheet2"])


def _entries(data: bytes) -> dict[str, olefile.olefile.OleDirectoryEntry]:
    ole = olefile.OleFileIO(data)
    try:
        return {e.name: e for e in ole.direntries if e is not None}
    finally:
        ole.close()


def _stream(data: bytes, path: str) -> bytes:
    ole = olefile.OleFileIO(data)
    try:
        return bytes(ole.openstream(path).read())
    finally:
        ole.close()


def _dir_records(data: bytes) -> list[tuple[int, bytes]]:
    """(Id, payload) of every record of the decompressed dir stream ([MS-OVBA] 2.3.4.2).

    Every record is Id (2 bytes), Size (4 bytes) and Size bytes, except PROJECTVERSION
    (0x0009), whose Size is a reserved 4 followed by 6 bytes of version.
    """
    raw = decompress(_stream(data, "VBA/dir"))
    out, pos = [], 0
    while pos < len(raw):
        rid = int.from_bytes(raw[pos : pos + 2], "little")
        size = int.from_bytes(raw[pos + 2 : pos + 6], "little")
        if rid == 0x0009:
            size = 6
        out.append((rid, raw[pos + 6 : pos + 6 + size]))
        pos += 6 + size
    return out


def _information(records: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """The PROJECTINFORMATION records: everything before the first reference record."""
    first_reference = next(i for i, (rid, _) in enumerate(records) if rid in (0x16, 0x0D, 0x0E, 0x2F, 0x33))
    return records[:first_reference]


def _project_keys(data: bytes) -> list[str]:
    text = _stream(data, "PROJECT").decode("cp1252")
    head = text.split("\r\n\r\n", 1)[0]  # the properties, before [Host Extender Info]
    return [line.split("=", 1)[0] for line in head.split("\r\n") if line]


# -- [MS-CFB] ----------------------------------------------------------------------------------


def test_ms_cfb_2_6_3_storage_start_sector_is_zero(ours: bytes) -> None:
    """Before, the VBA storage's entry said 0xFFFFFFFE (end of chain); [MS-CFB] 2.6.3 wants
    a storage's starting sector location and stream size to be 0, as Excel writes them."""
    excel = _entries(_excel_project("quickstart_standalone.xlsm"))["VBA"]
    mine = _entries(ours)["VBA"]
    assert (excel.entry_type, excel.isectStart, excel.size) == (STORAGE, 0, 0)
    assert (mine.entry_type, mine.isectStart, mine.size) == (STORAGE, 0, 0)


def test_ms_cfb_2_6_3_every_storage_of_a_compound_file_starts_at_zero() -> None:
    data = write_compound_file({"A/B/x": b"x" * 5000, "A/y": b"y", "C/z": b"", "top": b"t" * 70})
    storages = [e for e in _entries(data).values() if e.entry_type == STORAGE]
    assert sorted(e.name for e in storages) == ["A", "B", "C"]
    assert [(e.isectStart, e.size) for e in storages] == [(0, 0)] * 3
    root = _entries(data)["Root Entry"]
    assert root.entry_type == ROOT and root.size > 0  # the root still locates the mini stream


def test_ms_cfb_directory_holds_the_streams_excel_holds(ours: bytes) -> None:
    excel = _entries(_excel_project("quickstart_standalone.xlsm"))
    mine = _entries(ours)
    # Module1 is Excel's example module; PROJECTwm (module names in Unicode) is optional in
    # [MS-OVBA] 2.3.3 and not written; Sheetsync and SheetsyncGuard are ours.
    assert set(excel) - set(mine) == {"Module1", "PROJECTwm"}
    assert set(mine) - set(excel) == {"Sheetsync", "SheetsyncGuard"}
    for name in set(excel) & set(mine):
        assert mine[name].entry_type == excel[name].entry_type, name


# -- [MS-OVBA] PROJECT stream ------------------------------------------------------------------


def test_ms_ovba_2_3_1_14_version_compatible32_as_excel_writes_it(ours: bytes) -> None:
    """Before, the PROJECT stream had no VersionCompatible32 line."""
    text = _stream(ours, "PROJECT").decode("cp1252")
    assert 'VersionCompatible32="393222000"\r\n' in text
    for oracle in ("quickstart_standalone.xlsm", "quickstart.xlsm"):
        assert 'VersionCompatible32="393222000"\r\n' in _stream(_excel_project(oracle), "PROJECT").decode("cp1252")


def test_ms_ovba_2_3_1_project_properties_in_excels_order(ours: bytes) -> None:
    excel = _project_keys(_excel_project("quickstart_standalone.xlsm"))
    mine = _project_keys(ours)
    # Both list the module lines (Document=, Module=, Class=) first; compare the rest.
    modules = {"Document", "Module", "Class"}
    assert [k for k in mine if k not in modules] == [k for k in excel if k not in modules]
    assert [k for k in mine if k not in modules] == [
        "ID", "Name", "HelpContextID", "VersionCompatible32", "CMG", "DPB", "GC"
    ]
    assert mine[0] == "ID" and set(mine[1:4]) <= modules


# -- [MS-OVBA] dir stream ----------------------------------------------------------------------


def test_ms_ovba_2_3_4_2_1_2_projectcompatversion_follows_projectsyskind(ours: bytes) -> None:
    """Before, the dir stream had no PROJECTCOMPATVERSION record (0x004A)."""
    excel = _information(_dir_records(_excel_project("quickstart.xlsm")))
    mine = _information(_dir_records(ours))
    assert [rid for rid, _ in mine] == [rid for rid, _ in excel]
    assert [rid for rid, _ in mine][:3] == [0x0001, 0x004A, 0x0002]  # SYSKIND, COMPATVERSION, LCID
    assert dict(mine)[0x004A] == dict(excel)[0x004A] == (5).to_bytes(4, "little")


def test_ms_ovba_2_3_4_2_1_project_information_agrees_with_excel(ours: bytes) -> None:
    excel = dict(_information(_dir_records(_excel_project("quickstart.xlsm"))))
    mine = dict(_information(_dir_records(ours)))
    # SysKind 3 (64-bit Windows), LCIDs 0x409, code page 1252, name VBAProject, empty doc
    # string and help file, no constants: the same bytes.  PROJECTVERSION differs (Excel's
    # own build stamp).
    for rid in (0x0001, 0x0002, 0x0014, 0x0003, 0x0004, 0x0005, 0x0040, 0x0006, 0x003D, 0x0007, 0x0008, 0x000C, 0x003C):
        assert mine[rid] == excel[rid], hex(rid)


def test_ms_ovba_2_3_4_2_dir_stream_ends_with_its_terminator(ours: bytes) -> None:
    records = _dir_records(ours)
    assert records[-1] == (0x0010, b"")
    modules = [payload for rid, payload in records if rid == 0x0019]  # MODULENAME
    assert [m.decode("cp1252") for m in modules][:3] == ["ThisWorkbook", "Sheet1", "Sheet2"]
