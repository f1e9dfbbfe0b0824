"""Macro-enabled workbooks built on Linux: a VBA project and buttons that run it.

:func:`build_vba_project` turns ``.bas`` (standard) and ``.cls`` (class) module files into
the ``vbaProject.bin`` part of an ``.xlsm``; :func:`make_xlsm` puts that part into a
workbook, marks the workbook macro-enabled and adds form-control buttons that run macros.

How ``vbaProject.bin`` is made
------------------------------
The part is an OLE compound file ([MS-CFB]) holding the streams of [MS-OVBA]:
``PROJECT`` (module list and protection records), ``VBA/dir`` (compressed project and
module records), ``VBA/_VBA_PROJECT`` (a performance cache header with version
``0xFFFF``, which tells Office that there is no compiled cache, so it compiles the source
on open) and one ``VBA/<module>`` stream per module (the compressed source).

* The records come from the ``ms-ovba`` package: its ``DirStream``, ``Project`` and
  ``ProjectView`` views and its module records.
* The compression is this module's own (:func:`compress`, [MS-OVBA] 2.4.1), and so is
  the matching :func:`decompress` (2.4.1.3.1), which reads containers Excel wrote too.
  ``ms_ovba_compression`` 1.0.1 produces containers that neither its own decompressor
  nor oletools can read back for ordinary source text (copy tokens go wrong after the
  first few hundred bytes), so it is not used.
* The compound file is written by this module (:func:`write_compound_file`): the
  ``ms_cfb`` writer that ``ms-ovba`` uses writes scratch files into the current
  directory and leaves one behind.

The source of every module is stored in code page 1252 with CRLF line ends, headed by
``Attribute VB_Name``; class modules get the attributes Office gives them on import.

Step modules
------------
The module the buttons run is made from a rule system's steps (:func:`step_module_source`):
one ``Public Sub`` per step (``ResolvePhase``, ``ResolveTurn``), each running the step's
action, after the head of ``macros/Sheetsync.bas`` (desktop) or ``SheetsyncRemote.bas``
(remote).  :func:`buttons_for` gives the matching buttons, captioned as the steps are.

Buttons
-------
Buttons are legacy form-control buttons in a VML drawing (``xl/drawings/vmlDrawingN.vml``)
whose ``<x:ClientData ObjectType="Button">`` holds ``<x:FmlaMacro>[0]!Macro</x:FmlaMacro>``.
Excel has read this form since Excel 2007 (it is also what XlsxWriter writes), and
LibreOffice Calc imports it as a push button whose "execute action" event calls the
VBA macro of the same name.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
import uuid
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape

from sheetsync.sheets.backend import col_index, col_letter

if TYPE_CHECKING:
    import openpyxl

__all__ = [
    "BUTTON_ANCHORS",
    "MACROS_DIR",
    "STEP_MODULES",
    "Button",
    "VbaModule",
    "build_vba_project",
    "buttons_for",
    "compress",
    "decompress",
    "make_xlsm",
    "read_module",
    "shipped_remote_module",
    "step_module_source",
    "write_compound_file",
    "write_shipped_remote_modules",
    "write_step_module",
    "xlwings_vba_modules",
]

#: The project's VBA and Apps Script sources (``Sheetsync.bas`` and friends).
MACROS_DIR = Path(__file__).resolve().parents[1] / "macros"

# ---------------------------------------------------------------------------------------
# xlwings' own VBA modules, read from the installed wheel
# ---------------------------------------------------------------------------------------

# What ``xlwings quickstart --standalone`` embeds so that RunPython works without the
# add-in: the ``xlwings`` module plus the ``Dictionary`` class it uses on macOS.
_XLWINGS_STANDALONE = ("xlwings.bas", "addin/Dictionary.cls")
# What ``xlwings quickstart --server`` imports on top for RunRemotePython.
_XLWINGS_REMOTE = (
    "addin/Remote.bas",
    "addin/IWebAuthenticator.cls",
    "addin/WebClient.cls",
    "addin/WebRequest.cls",
    "addin/WebResponse.cls",
    "addin/WebHelpers.bas",
)


def xlwings_vba_modules(*, remote: bool = False) -> list[Path]:
    """The xlwings VBA modules a workbook needs, as files of the installed xlwings.

    Without ``remote`` these are the standalone modules (``RunPython`` with open-source
    xlwings, no add-in).  With ``remote`` the modules behind ``RunRemotePython`` are
    added.  Their version always matches the installed Python package, which
    ``RunPython`` checks.
    """
    import xlwings

    root = Path(xlwings.__file__).parent
    names = _XLWINGS_STANDALONE + (_XLWINGS_REMOTE if remote else ())
    paths = [root / name for name in names]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"xlwings {xlwings.__version__} ships no {', '.join(missing)}")
    return paths


# ---------------------------------------------------------------------------------------
# [MS-OVBA] 2.4.1 compression
# ---------------------------------------------------------------------------------------

_CHUNK = 4096


def _copy_token_bits(position: int) -> int:
    """Bits of a copy token given to the offset, for a token at ``position`` in a chunk."""
    return max((position - 1).bit_length(), 4)


def _compress_chunk(chunk: bytes) -> bytes:
    out = bytearray()
    heads: dict[bytes, list[int]] = {}
    pos, end = 0, len(chunk)
    while pos < end:
        flag_at = len(out)
        out.append(0)
        flags = 0
        for bit in range(8):
            if pos >= end:
                break
            best_len, best_off = 0, 0
            if pos + 3 <= end and pos > 0:
                offset_bits = _copy_token_bits(pos)
                max_len = min((0xFFFF >> offset_bits) + 3, end - pos)
                for cand in reversed(heads.get(chunk[pos : pos + 3], ())[-64:]):
                    n = 3
                    while n < max_len and chunk[cand + n] == chunk[pos + n]:
                        n += 1
                    if n > best_len:
                        best_len, best_off = n, pos - cand
                        if n == max_len:
                            break
            step = best_len if best_len >= 3 else 1
            if best_len >= 3:
                offset_bits = _copy_token_bits(pos)
                token = ((best_off - 1) << (16 - offset_bits)) | (best_len - 3)
                out += token.to_bytes(2, "little")
                flags |= 1 << bit
            else:
                out.append(chunk[pos])
            for p in range(pos, min(pos + step, end - 2)):
                heads.setdefault(chunk[p : p + 3], []).append(p)
            pos += step
        out[flag_at] = flags
    if len(out) > _CHUNK:
        return b""  # the tokens do not fit in a chunk: the caller decides
    header = 0xB000 | ((len(out) + 2 - 3) & 0x0FFF)
    return header.to_bytes(2, "little") + bytes(out)


def _raw_chunk(chunk: bytes) -> bytes:
    """[MS-OVBA] 2.4.1.3.10: a CompressedChunkHeader with flag 0 and size 4095, then the
    4096 bytes of the chunk as they are (2.4.1.1.6)."""
    assert len(chunk) == _CHUNK
    return (0x3000 | (_CHUNK - 1)).to_bytes(2, "little") + chunk


def compress(data: bytes) -> bytes:
    """Compress ``data`` into an [MS-OVBA] 2.4.1 compressed container.

    Each 4096-byte chunk becomes a compressed chunk, or, when its tokens would not fit in
    4096 bytes (data without repeats), a raw chunk (2.4.1.3.7, 2.4.1.3.10).

    A shorter final chunk is never written raw.  A raw chunk always holds 4096 bytes
    (2.4.1.1.6), so 2.4.1.3.10 pads a short one with zero bytes, and decompression
    (2.4.1.3.3) hands all 4096 back: the padding would become part of the data (NUL
    characters after a module's last line, or bytes after the dir stream's terminator).
    Instead, a short final chunk whose tokens do not fit is written as two compressed
    chunks, each of at most 2048 bytes of data, which always fit.  The decompression
    algorithm (2.4.1.3.1, 2.4.1.3.2) starts each chunk's copy-token offsets afresh, so this
    reads back exactly, and only the final chunks are shorter than 4096 bytes.  Module
    source never gets here in practice (3,641 bytes of VBA without a single repeated
    three-byte sequence); the case is for arbitrary data.
    """
    out = bytearray(b"\x01")
    for start in range(0, len(data), _CHUNK):
        chunk = data[start : start + _CHUNK]
        packed = _compress_chunk(chunk)
        if not packed and len(chunk) == _CHUNK:
            packed = _raw_chunk(chunk)
        elif not packed:
            half = _CHUNK // 2
            packed = _compress_chunk(chunk[:half]) + _compress_chunk(chunk[half:])
        out += packed
    return bytes(out)


def decompress(container: bytes) -> bytes:
    """The data of an [MS-OVBA] 2.4.1 compressed container (2.4.1.3.1).

    Raises :class:`ValueError` on a container that does not follow 2.4.1.1: a wrong
    signature byte, a chunk header without its 0b011 signature, a raw chunk with fewer
    than 4096 bytes, or a copy token that reaches before the start of its chunk.
    """
    if not container or container[0] != 0x01:
        raise ValueError("not a compressed container: the first byte is not 0x01 (MS-OVBA 2.4.1.1.1)")
    out = bytearray()
    pos, end = 1, len(container)
    while pos < end:
        if pos + 2 > end:
            raise ValueError(f"compressed container: chunk header cut short at byte {pos}")
        header = int.from_bytes(container[pos : pos + 2], "little")
        if (header >> 12) & 0b0111 != 0b011:
            raise ValueError(f"compressed container: chunk at byte {pos} has no 0b011 signature (MS-OVBA 2.4.1.1.5)")
        size = (header & 0x0FFF) + 3
        chunk_end = min(pos + size, end)
        pos += 2
        if not header & 0x8000:  # 2.4.1.3.3: a raw chunk holds 4096 bytes
            if size != _CHUNK + 2 or pos + _CHUNK > end:
                raise ValueError(f"compressed container: raw chunk at byte {pos - 2} does not hold 4096 bytes")
            out += container[pos : pos + _CHUNK]
            pos += _CHUNK
            continue
        chunk_start = len(out)
        while pos < chunk_end:  # 2.4.1.3.4: a flag byte, then up to eight tokens
            flags = container[pos]
            pos += 1
            for bit in range(8):
                if pos >= chunk_end:
                    break
                if not flags >> bit & 1:
                    out.append(container[pos])
                    pos += 1
                    continue
                if pos + 2 > chunk_end:
                    raise ValueError(f"compressed container: copy token cut short at byte {pos}")
                token = int.from_bytes(container[pos : pos + 2], "little")
                pos += 2
                offset_bits = _copy_token_bits(len(out) - chunk_start)  # 2.4.1.3.19.1
                length = (token & (0xFFFF >> offset_bits)) + 3
                offset = (token >> (16 - offset_bits)) + 1
                source = len(out) - offset
                if source < chunk_start:
                    raise ValueError(f"compressed container: copy token at byte {pos - 2} reaches before its chunk")
                for i in range(length):  # byte by byte: a copy may overlap itself (2.4.1.3.11)
                    out.append(out[source + i])
    return bytes(out)


# ---------------------------------------------------------------------------------------
# [MS-CFB] compound file writer (version 3, 512-byte sectors)
# ---------------------------------------------------------------------------------------

_FREE, _END, _FATSECT, _NOSTREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
_SECTOR, _MINI, _CUTOFF = 512, 64, 4096


@dataclass
class _Entry:
    name: str
    kind: int  # 1 storage, 2 stream, 5 root
    data: bytes = b""
    children: list[_Entry] | None = None
    index: int = 0
    left: int = _NOSTREAM
    right: int = _NOSTREAM
    child: int = _NOSTREAM
    start: int = _END
    size: int = 0


def _cfb_key(entry: _Entry) -> tuple[int, str]:
    return (len(entry.name), entry.name.upper())


def _link_tree(entries: list[_Entry]) -> int:
    """Link siblings as a balanced binary search tree (every node black); return the root."""
    if not entries:
        return _NOSTREAM
    mid = len(entries) // 2
    node = entries[mid]
    node.left = _link_tree(entries[:mid])
    node.right = _link_tree(entries[mid + 1 :])
    return node.index


def _storage_tree(streams: dict[str, bytes]) -> _Entry:
    """The root storage holding a storage per folder of the ``/``-separated paths and a
    stream per path, in the order the paths come."""
    root = _Entry("Root Entry", 5, children=[])
    for path, data in streams.items():
        parts = path.split("/")
        node = root
        for part in parts[:-1]:
            assert node.children is not None
            found = next((c for c in node.children if c.name == part and c.kind == 1), None)
            if found is None:
                found = _Entry(part, 1, children=[])
                node.children.append(found)
            node = found
        assert node.children is not None
        node.children.append(_Entry(parts[-1], 2, data=bytes(data)))
    return root


def _numbered(root: _Entry) -> list[_Entry]:
    """Every entry under ``root`` in directory order, each knowing its index, and each
    storage's children linked as a tree; a name over 31 characters is refused."""
    entries: list[_Entry] = []

    def number(node: _Entry) -> None:
        node.index = len(entries)
        entries.append(node)
        for child in node.children or ():
            if len(child.name) > 31:
                raise ValueError(f"compound file names have at most 31 characters: {child.name!r}")
            number(child)

    number(root)
    for node in entries:
        if node.children is not None:
            node.child = _link_tree(sorted(node.children, key=_cfb_key))
    return entries


def _mini_stream(entries: list[_Entry]) -> tuple[bytearray, list[int], list[_Entry]]:
    """Small streams packed into the mini stream, in 64-byte mini sectors: the mini stream,
    its allocation table, and the streams too big for it (placed in whole sectors)."""
    mini_stream = bytearray()
    mini_fat: list[int] = []
    big: list[_Entry] = []
    for node in entries:
        if node.kind == 1:  # [MS-CFB] 2.6.3: a storage's start sector and size are 0
            node.start, node.size = 0, 0
        if node.kind != 2:
            continue
        node.size = len(node.data)
        if node.size == 0:
            node.start = _END
        elif node.size < _CUTOFF:
            first = len(mini_fat)
            count = -(-node.size // _MINI)
            mini_fat += list(range(first + 1, first + count)) + [_END]
            node.start = first
            mini_stream += node.data + b"\x00" * (count * _MINI - node.size)
        else:
            big.append(node)
    return mini_stream, mini_fat, big


def _sectors(n_bytes: int) -> int:
    """How many 512-byte sectors hold ``n_bytes``."""
    return -(-n_bytes // _SECTOR)


def _directory(entries: list[_Entry], n_dir: int) -> bytearray:
    """The directory: a 128-byte entry per node (every one black), then unused entries
    up to the end of its last sector."""
    directory = bytearray()
    for node in entries:
        name = node.name.encode("utf-16-le") + b"\x00\x00"
        directory += name.ljust(64, b"\x00")
        directory += len(name).to_bytes(2, "little")
        directory += bytes([node.kind, 1])  # colour: black
        directory += node.left.to_bytes(4, "little") + node.right.to_bytes(4, "little")
        directory += node.child.to_bytes(4, "little")
        directory += b"\x00" * 16 + b"\x00" * 4 + b"\x00" * 16  # clsid, state, times
        directory += node.start.to_bytes(4, "little") + node.size.to_bytes(8, "little")
    while len(directory) < n_dir * _SECTOR:  # unused entries
        directory += b"\x00" * 64 + b"\x00\x00" + b"\x00\x00"
        directory += _NOSTREAM.to_bytes(4, "little") * 3 + b"\x00" * 36 + b"\x00" * 12
    return directory


def _header(n_fat: int, dir_start: int, minifat_start: int, n_minifat: int) -> bytes:
    """The 512-byte header of a version 3 file whose FAT sectors come first, all listed in
    the header's DIFAT."""
    header = bytearray()
    header += bytes.fromhex("D0CF11E0A1B11AE1") + b"\x00" * 16
    header += (0x003E).to_bytes(2, "little") + (0x0003).to_bytes(2, "little")
    header += (0xFFFE).to_bytes(2, "little") + (9).to_bytes(2, "little") + (6).to_bytes(2, "little")
    header += b"\x00" * 6
    header += (0).to_bytes(4, "little")  # number of directory sectors (0 in version 3)
    header += n_fat.to_bytes(4, "little") + dir_start.to_bytes(4, "little")
    header += (0).to_bytes(4, "little") + _CUTOFF.to_bytes(4, "little")
    header += minifat_start.to_bytes(4, "little") + n_minifat.to_bytes(4, "little")
    header += _END.to_bytes(4, "little") + (0).to_bytes(4, "little")
    difat = list(range(n_fat)) + [_FREE] * (109 - n_fat)
    header += b"".join(v.to_bytes(4, "little") for v in difat)
    assert len(header) == _SECTOR
    return bytes(header)


def write_compound_file(streams: dict[str, bytes]) -> bytes:
    """An OLE compound file holding ``streams``, keyed by ``/``-separated paths."""
    root = _storage_tree(streams)
    entries = _numbered(root)
    mini_stream, mini_fat, big = _mini_stream(entries)

    n_dir = _sectors(len(entries) * 128)
    n_minifat = _sectors(len(mini_fat) * 4)
    n_ministream = _sectors(len(mini_stream))
    n_big = sum(_sectors(node.size) for node in big)
    n_fat = 1
    while n_fat * (_SECTOR // 4) < n_fat + n_dir + n_minifat + n_ministream + n_big:
        n_fat += 1
    if n_fat > 109:
        raise ValueError("compound file too large for a header-only DIFAT")

    fat: list[int] = [_FATSECT] * n_fat
    body = bytearray()

    def place(data: bytes) -> int:
        count = _sectors(len(data))
        if count == 0:
            return _END
        first = len(fat)
        fat.extend(list(range(first + 1, first + count)) + [_END])
        body.extend(data + b"\x00" * (count * _SECTOR - len(data)))
        return first

    # Directory entries are written once every start sector is known: reserve the space.
    dir_start = len(fat)
    fat.extend(list(range(dir_start + 1, dir_start + n_dir)) + [_END])
    body.extend(b"\x00" * (n_dir * _SECTOR))
    minifat_start = place(b"".join(v.to_bytes(4, "little") for v in mini_fat)
                          + b"\xff\xff\xff\xff" * (n_minifat * 128 - len(mini_fat)))
    root.start = place(bytes(mini_stream))
    root.size = len(mini_stream)
    for node in big:
        node.start = place(node.data)

    directory = _directory(entries, n_dir)
    offset = (dir_start - n_fat) * _SECTOR
    body[offset : offset + len(directory)] = directory

    fat_bytes = b"".join(v.to_bytes(4, "little") for v in fat)
    fat_bytes += b"\xff\xff\xff\xff" * (n_fat * 128 - len(fat))
    return _header(n_fat, dir_start, minifat_start, n_minifat) + fat_bytes + bytes(body)


# ---------------------------------------------------------------------------------------
# VBA modules and the project
# ---------------------------------------------------------------------------------------

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
_ATTR_NAME = re.compile(r'^Attribute\s+VB_Name\s*=\s*"([^"]*)"\s*$', re.IGNORECASE)
_WORKBOOK_BASE = "0{00020819-0000-0000-C000-000000000046}"
_SHEET_BASE = "0{00020820-0000-0000-C000-000000000046}"
_CLASS_BASE = "0{FCFB3D2A-A0FA-1068-A738-08002B3371B5}"


@dataclass(frozen=True)
class VbaModule:
    """One module of a VBA project.

    ``kind`` is ``"module"`` (a ``.bas`` file), ``"class"`` (a ``.cls`` file) or
    ``"document"`` (the code behind the workbook or a sheet).  ``code`` is the source with
    CRLF line ends, starting with its ``Attribute VB_Name`` line, as Office stores it.
    """

    name: str
    kind: str
    code: str


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")


def read_module(path: str | os.PathLike[str]) -> VbaModule:
    """Read an exported module file (``.bas`` or ``.cls``) the way the VBA editor imports it."""
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252")
    lines = _lines(text)
    suffix = path.suffix.lower()
    if suffix == ".cls":
        kind = "class"
        if lines and lines[0].upper().startswith("VERSION "):  # VERSION / BEGIN ... END
            try:
                end = next(i for i, line in enumerate(lines) if line.strip().upper() == "END")
            except StopIteration:
                raise ValueError(f"{path}: class header has no END") from None
            lines = lines[end + 1 :]
    elif suffix == ".bas":
        kind = "module"
    else:
        raise ValueError(f"{path}: a VBA module file ends in .bas or .cls")
    name = path.stem
    body = []
    for line in lines:
        m = _ATTR_NAME.match(line)
        if m:
            name = m.group(1)
        else:
            body.append(line)
    if not _NAME.match(name):
        raise ValueError(f"{path}: {name!r} is not a VBA module name")
    head = [f'Attribute VB_Name = "{name}"']
    if kind == "class":
        head.append(f'Attribute VB_Base = "{_CLASS_BASE}"')
        defaults = {
            "VB_GlobalNameSpace": "False",
            "VB_Creatable": "False",
            "VB_PredeclaredId": "False",
            "VB_Exposed": "False",
        }
        present = {m.group(1) for line in body if (m := re.match(r"Attribute\s+(VB_\w+)", line))}
        head += [f"Attribute {k} = {v}" for k, v in defaults.items() if k not in present]
        if "VB_Base" in present:
            body = [line for line in body if not re.match(r"Attribute\s+VB_Base\b", line)]
    code = "\r\n".join(head + body) + "\r\n"
    try:
        code.encode("cp1252")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{path}: VBA source must be in code page 1252: {exc}") from None
    return VbaModule(name, kind, code)


def _document_module(name: str, base: str) -> VbaModule:
    lines = [
        f'Attribute VB_Name = "{name}"',
        f'Attribute VB_Base = "{base}"',
        "Attribute VB_GlobalNameSpace = False",
        "Attribute VB_Creatable = False",
        "Attribute VB_PredeclaredId = True",
        "Attribute VB_Exposed = True",
        "Attribute VB_TemplateDerived = False",
        "Attribute VB_Customizable = True",
    ]
    return VbaModule(name, "document", "\r\n".join(lines) + "\r\n")


def build_vba_project(
    bas_files: Sequence[str | os.PathLike[str]],
    *,
    workbook_module: str = "ThisWorkbook",
    sheet_modules: Sequence[str] = ("Sheet1",),
) -> bytes:
    """Build ``vbaProject.bin`` holding the modules in ``bas_files`` (``.bas``/``.cls``).

    ``workbook_module`` and ``sheet_modules`` name the document modules; they must match
    the ``codeName`` of the workbook and of its sheets (:func:`make_xlsm` sees to that).
    """
    from ms_ovba.Models.Entities.doc_module import DocModule
    from ms_ovba.Models.Entities.module_base import ModuleBase
    from ms_ovba.Models.Entities.reference import Reference
    from ms_ovba.Models.Entities.reference_registered import ReferenceRegistered
    from ms_ovba.Models.Entities.std_module import StdModule
    from ms_ovba.Models.Fields.libid_reference import LibidReference
    from ms_ovba.vbaProject import VbaProject
    from ms_ovba.Views.dirStream import DirStream
    from ms_ovba.Views.project import Project
    from ms_ovba.Views.project_view import ProjectView

    class ClassModule(DocModule):  # type: ignore[misc]  # 0x22 in dir, "Class=" in PROJECT
        def to_project_module_string(self) -> str:
            return "Class=" + str(self.modName.value)

    modules = [_document_module(workbook_module, _WORKBOOK_BASE)]
    modules += [_document_module(name, _SHEET_BASE) for name in sheet_modules]
    modules += [read_module(p) for p in bas_files]
    seen: set[str] = set()
    for mod in modules:
        if not _NAME.match(mod.name):
            raise ValueError(f"{mod.name!r} is not a VBA module name")
        if mod.name.upper() in seen:
            raise ValueError(f"two VBA modules are named {mod.name!r}")
        seen.add(mod.name.upper())

    project = VbaProject()
    ident = uuid.uuid5(uuid.NAMESPACE_URL, "sheetsync-vba:" + "|".join(m.name for m in modules))
    project.project_id = "{" + str(ident).upper() + "}"
    streams: dict[str, bytes] = {}
    for mod in modules:
        record: ModuleBase
        if mod.kind == "module":
            record = StdModule(mod.name)
        elif mod.kind == "class":
            record = ClassModule(mod.name)
        else:
            record = DocModule(mod.name)
        project.add_module(record)
        streams["VBA/" + mod.name] = record.cache + compress(mod.code.encode("cp1252"))
    project.add_reference(
        Reference(
            ReferenceRegistered(
                LibidReference(
                    uuid.UUID("00020430-0000-0000-C000-000000000046"),
                    "2.0",
                    "0",
                    "C:\\Windows\\System32\\stdole2.tlb",
                    "OLE Automation",
                )
            ),
            "stdole",
        )
    )
    project.add_reference(
        Reference(
            ReferenceRegistered(
                LibidReference(
                    uuid.UUID("2DF8D04C-5BFA-101B-BDE5-00AA0044DE52"),
                    "2.0",
                    "0",
                    "C:\\Program Files\\Common Files\\Microsoft Shared\\OFFICE16\\MSO.DLL",
                    "Microsoft Office 16.0 Object Library",
                )
            ),
            "Office",
        )
    )
    streams["VBA/dir"] = compress(_with_compat_version(DirStream(project).to_bytes()))
    streams["VBA/_VBA_PROJECT"] = ProjectView(project).to_bytes()
    project_stream = Project(project)
    # [MS-OVBA] 2.3.1.14 ProjectVersionCompat32: after HelpContextID, the value Excel writes.
    project_stream.add_attribute("VersionCompatible32", "393222000")
    streams["PROJECT"] = project_stream.to_bytes()
    return write_compound_file(streams)


#: [MS-OVBA] 2.3.4.2.1.2 PROJECTCOMPATVERSION: Id 0x004A, Size 4, CompatVersion.  Excel
#: writes CompatVersion 5 (the dir stream of xlwings' Excel-saved ``quickstart.xlsm``).
_PROJECTCOMPATVERSION = (0x004A).to_bytes(2, "little") + (4).to_bytes(4, "little") + (5).to_bytes(4, "little")


def _with_compat_version(dir_stream: bytes) -> bytes:
    """[MS-OVBA] 2.3.4.2.1: PROJECTINFORMATION opens with PROJECTSYSKIND (Id 0x0001, Size 4,
    10 bytes in all), and PROJECTCOMPATVERSION follows it, before PROJECTLCID."""
    if dir_stream[:6] != b"\x01\x00\x04\x00\x00\x00" or dir_stream[10:12] != b"\x02\x00":
        raise ValueError("the dir stream does not open with PROJECTSYSKIND and PROJECTLCID")
    return dir_stream[:10] + _PROJECTCOMPATVERSION + dir_stream[10:]


# ---------------------------------------------------------------------------------------
# The macro-enabled workbook
# ---------------------------------------------------------------------------------------

_NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_NS_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_REL_VBA = "http://schemas.microsoft.com/office/2006/relationships/vbaProject"
_REL_VML = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/vmlDrawing"
_CT_XLSM = "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
_CT_VBA = "application/vnd.ms-office.vbaProject"
_CT_VML = "application/vnd.openxmlformats-officedocument.vmlDrawing"


class Button(NamedTuple):
    """A form-control button on ``sheet`` at ``anchor`` (top-left cell) that runs ``macro``."""

    sheet: str
    macro: str
    caption: str
    anchor: str
    width_px: int = 144
    height_px: int = 32


def _rels_path(part: str) -> str:
    folder, _, name = part.rpartition("/")
    return f"{folder}/_rels/{name}.rels"


def _resolve(base_part: str, target: str) -> str:
    if target.startswith("/"):
        return target[1:]
    parts = base_part.split("/")[:-1]
    for piece in target.split("/"):
        if piece == "..":
            parts.pop()
        elif piece != ".":
            parts.append(piece)
    return "/".join(parts)


def _relationships(xml: bytes) -> list[dict[str, str]]:
    return [dict(el.attrib) for el in ET.fromstring(xml).iter(f"{{{_NS_PKG_REL}}}Relationship")]


def _next_rid(xml: bytes) -> str:
    used = {r["Id"] for r in _relationships(xml)}
    n = 1
    while f"rId{n}" in used:
        n += 1
    return f"rId{n}"


def _add_relationship(xml: bytes | None, rid: str, rel_type: str, target: str) -> bytes:
    if xml is None:
        xml = (
            b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            b"</Relationships>"
        )
    rel = f'<Relationship Id="{rid}" Type="{rel_type}" Target="{escape(target)}"/>'
    text = xml.decode("utf-8")
    if re.search(r"<Relationships\b[^>]*/>", text):
        text = re.sub(r"<Relationships\b([^>]*)/>", r"<Relationships\1>" + rel + "</Relationships>", text)
    else:
        text = text.replace("</Relationships>", rel + "</Relationships>")
    return text.encode("utf-8")


def _set_root_attr(text: str, tag: str, attr: str, value: str, after: Iterable[str], root: str) -> str:
    """Give element ``tag`` (created if absent) attribute ``attr`` unless it has one."""
    m = re.search(rf"<{tag}\b([^>]*?)(/?)>", text)
    if m:
        if re.search(rf"\b{attr}\s*=", m.group(1)):
            return text
        new = f"<{tag}{m.group(1)} {attr}=\"{value}\"{m.group(2)}>"
        return text[: m.start()] + new + text[m.end() :]
    at = None
    for prev in after:
        pm = re.search(rf"<{prev}\b[^>]*/>|<{prev}\b[^>]*>.*?</{prev}>", text, re.S)
        if pm:
            at = pm.end()
    if at is None:
        rm = re.search(rf"<{root}\b[^>]*>", text)
        if rm is None:
            raise ValueError(f"no <{root}> element")
        at = rm.end()
    return text[:at] + f'<{tag} {attr}="{value}"/>' + text[at:]


def _get_attr(text: str, tag: str, attr: str) -> str | None:
    m = re.search(rf"<{tag}\b([^>]*?)/?>", text)
    if not m:
        return None
    a = re.search(rf'\b{attr}\s*=\s*"([^"]*)"', m.group(1))
    return a.group(1) if a else None


_AFTER_LEGACY_DRAWING = (
    "legacyDrawingHF", "drawingHF", "picture", "oleObjects", "controls",
    "webPublishItems", "tableParts", "extLst",
)


def _insert_legacy_drawing(text: str, rid: str) -> str:
    if not re.search(r"<worksheet\b[^>]*\bxmlns:r\s*=", text):
        text = re.sub(r"<worksheet\b", f'<worksheet xmlns:r="{_NS_R}"', text, count=1)
    element = f'<legacyDrawing r:id="{rid}"/>'
    at = text.rindex("</worksheet>")
    for start, end, name in _top_level_children(text):
        local = name.rpartition(":")[2]
        if local in _AFTER_LEGACY_DRAWING or (
            local == "AlternateContent" and re.search(r"<(?:\w+:)?(?:controls|oleObjects)\b", text[start:end])
        ):
            at = start
            break
    return text[:at] + element + text[at:]


_TAG = re.compile(r"<!--.*?-->|<\?.*?\?>|<!\[CDATA\[.*?\]\]>|<(/?)([\w:.-]+)(?:[^>\"']|\"[^\"]*\"|'[^']*')*?(/?)>", re.S)


def _top_level_children(text: str) -> list[tuple[int, int, str]]:
    """(start, end, tag) of each child element of the document's root element."""
    out: list[tuple[int, int, str]] = []
    depth = 0
    open_at = 0
    for m in _TAG.finditer(text):
        closing, name, empty = m.group(1), m.group(2), m.group(3)
        if name is None:  # comment, processing instruction, CDATA
            continue
        if closing:
            depth -= 1
            if depth == 1:
                out.append((open_at, m.end(), name))
        else:
            if depth == 1:
                open_at = m.start()
            if empty:
                if depth == 1:
                    out.append((m.start(), m.end(), name))
            else:
                depth += 1
    return out


def _col_widths_px(sheet_xml: str) -> tuple[dict[int, int], int]:
    default_chars = 8.43
    fmt = re.search(r"<sheetFormatPr\b([^>]*)/?>", sheet_xml)
    if fmt:
        m = re.search(r'\bdefaultColWidth="([\d.]+)"', fmt.group(1))
        if m:
            default_chars = float(m.group(1))
    widths: dict[int, int] = {}
    for m in re.finditer(r"<col\b([^>]*)/?>", sheet_xml):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if "width" in attrs:
            for c in range(int(attrs["min"]), min(int(attrs["max"]), 16384) + 1):
                widths[c - 1] = _chars_to_px(float(attrs["width"]))
    return widths, _chars_to_px(default_chars)


def _chars_to_px(width: float) -> int:
    return int(width * 7 + 0.5) + 5 if width >= 1 else int(width * 12 + 0.5)


def _row_heights_px(sheet_xml: str) -> tuple[dict[int, int], int]:
    default_pt = 15.0
    fmt = re.search(r"<sheetFormatPr\b([^>]*)/?>", sheet_xml)
    if fmt:
        m = re.search(r'\bdefaultRowHeight="([\d.]+)"', fmt.group(1))
        if m:
            default_pt = float(m.group(1))
    heights: dict[int, int] = {}
    for m in re.finditer(r"<row\b([^>]*)>", sheet_xml):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if "ht" in attrs and "r" in attrs:
            heights[int(attrs["r"]) - 1] = round(float(attrs["ht"]) * 4 / 3)
    return heights, round(default_pt * 4 / 3)


def _span(start: int, length: int, sizes: dict[int, int], default: int) -> tuple[int, int, int, int]:
    """(start index, 0, end index, end offset) of ``length`` pixels from cell ``start``."""
    index, left = start, length
    while left >= sizes.get(index, default):
        left -= sizes.get(index, default)
        index += 1
    return start, 0, index, left


def _position_px(start: int, sizes: dict[int, int], default: int) -> int:
    return sum(sizes.get(i, default) for i in range(start))


_VML_SHAPETYPE = (
    '<v:shapetype id="_x0000_t201" coordsize="21600,21600" o:spt="201" '
    'path="m,l,21600r21600,l21600,xe"><v:stroke joinstyle="miter"/>'
    '<v:path shadowok="f" o:extrusionok="f" strokeok="f" fillok="f" o:connecttype="rect"/>'
    '<o:lock v:ext="edit" shapetype="t"/></v:shapetype>'
)


def _vml_button(shape_id: int, z_index: int, button: Button, sheet_xml: str) -> str:
    m = re.fullmatch(r"\$?([A-Za-z]{1,3})\$?(\d+)", button.anchor)
    if not m:
        raise ValueError(f"button anchor {button.anchor!r} is not a cell such as H2")
    col, row = col_index(m.group(1)) - 1, int(m.group(2)) - 1
    col_px, col_default = _col_widths_px(sheet_xml)
    row_px, row_default = _row_heights_px(sheet_xml)
    c1, x1, c2, x2 = _span(col, button.width_px, col_px, col_default)
    r1, y1, r2, y2 = _span(row, button.height_px, row_px, row_default)
    left = _position_px(col, col_px, col_default) * 0.75
    top = _position_px(row, row_px, row_default) * 0.75
    if not _NAME.match(button.macro) and not re.fullmatch(r"[A-Za-z]\w*\.[A-Za-z]\w*", button.macro):
        raise ValueError(f"{button.macro!r} is not a VBA macro name")
    style = (
        f"position:absolute;margin-left:{left:g}pt;margin-top:{top:g}pt;"
        f"width:{button.width_px * 0.75:g}pt;height:{button.height_px * 0.75:g}pt;"
        f"z-index:{z_index};mso-wrap-style:tight"
    )
    return (
        f'<v:shape id="_x0000_s{shape_id}" type="#_x0000_t201" style="{style}" o:button="t" '
        'fillcolor="buttonFace [67]" strokecolor="windowText [64]" o:insetmode="auto">'
        '<v:fill color2="buttonFace [67]" o:detectmouseclick="t"/>'
        '<o:lock v:ext="edit" rotation="t"/>'
        '<v:textbox style="mso-direction-alt:auto" o:singleclick="f">'
        '<div style="text-align:center"><font face="Calibri" size="220" color="#000000">'
        f"{escape(button.caption)}</font></div></v:textbox>"
        '<x:ClientData ObjectType="Button">'
        f"<x:Anchor>{c1}, {x1}, {r1}, {y1}, {c2}, {x2}, {r2}, {y2}</x:Anchor>"
        "<x:PrintObject>False</x:PrintObject><x:AutoFill>False</x:AutoFill>"
        f"<x:FmlaMacro>[0]!{button.macro}</x:FmlaMacro>"
        "<x:TextHAlign>Center</x:TextHAlign><x:TextVAlign>Center</x:TextVAlign>"
        "</x:ClientData></v:shape>"
    )


_SHAPE = re.compile(r"<v:shape\b(?:(?!</v:shape>).)*</v:shape>", re.S)


def _drop_buttons(vml: str, macros: set[str]) -> str:
    """Remove earlier buttons for the same macros, so saving a workbook again (openpyxl
    keeps the drawing) does not stack a second set of buttons."""

    def keep(m: re.Match[str]) -> str:
        found = re.search(r"<x:FmlaMacro>\[0\]!(\w+)</x:FmlaMacro>", m.group(0))
        return "" if found and found.group(1) in macros else m.group(0)

    return _SHAPE.sub(keep, vml)


def _new_vml(data_id: int, shapes: str) -> str:
    return (
        '<xml xmlns:v="urn:schemas-microsoft-com:vml" '
        'xmlns:o="urn:schemas-microsoft-com:office:office" '
        'xmlns:x="urn:schemas-microsoft-com:office:excel">'
        f'<o:shapelayout v:ext="edit"><o:idmap v:ext="edit" data="{data_id}"/></o:shapelayout>'
        f"{_VML_SHAPETYPE}{shapes}</xml>"
    )


_VML_PREFIXES = {
    "v": "urn:schemas-microsoft-com:vml",
    "o": "urn:schemas-microsoft-com:office:office",
    "x": "urn:schemas-microsoft-com:office:excel",
}


def _declare_vml_prefixes(vml: str) -> str:
    """Bind ``v:``, ``o:`` and ``x:`` on the root of an existing drawing (openpyxl writes
    its comment drawings with ``ns0:``-style prefixes)."""
    m = re.search(r"<xml\b([^>]*)>", vml)
    if m is None:
        raise ValueError("a VML drawing without an <xml> root")
    extra = "".join(
        f' xmlns:{prefix}="{uri}"'
        for prefix, uri in _VML_PREFIXES.items()
        if not re.search(rf"\bxmlns:{prefix}\s*=", m.group(1))
    )
    return vml[: m.start()] + f"<xml{m.group(1)}{extra}>" + vml[m.end() :]


def _content_types(xml: bytes, workbook_part: str) -> bytes:
    text = xml.decode("utf-8")
    pattern = re.compile(rf'(<Override\b[^>]*PartName="/{re.escape(workbook_part)}"[^>]*/>)')
    m = pattern.search(text)
    override = f'<Override PartName="/{workbook_part}" ContentType="{_CT_XLSM}"/>'
    text = text[: m.start()] + override + text[m.end() :] if m else text.replace("</Types>", override + "</Types>")
    for ext, ctype in (("bin", _CT_VBA), ("vml", _CT_VML)):
        if not re.search(rf'<Default\b[^>]*Extension="{ext}"', text, re.IGNORECASE):
            text = re.sub(
                r"(<Types\b[^>]*>)", rf'\1<Default Extension="{ext}" ContentType="{ctype}"/>', text, count=1
            )
    return text.encode("utf-8")


def _source_bytes(source: str | os.PathLike[str] | openpyxl.Workbook) -> bytes:
    if isinstance(source, (str, os.PathLike)):
        return Path(source).read_bytes()
    buf = io.BytesIO()
    source.save(buf)
    return buf.getvalue()


def make_xlsm(
    source: str | os.PathLike[str] | openpyxl.Workbook,
    out_path: str | os.PathLike[str],
    bas_files: Sequence[str | os.PathLike[str]],
    buttons: Sequence[Button | tuple[str, str, str, str]] = (),
) -> Path:
    """Write ``out_path``: the workbook ``source`` (a path or an openpyxl workbook) made
    macro-enabled with the modules in ``bas_files`` and the given buttons.

    Each button is ``(sheet_name, macro_name, caption, anchor_cell)`` (or a
    :class:`Button`).  Sheets keep their content; sheets and the workbook get a
    ``codeName`` if they have none.  The file is written to a temporary file in the same
    folder and moved into place, so a reader never sees half a workbook.
    """
    specs = [b if isinstance(b, Button) else Button(*b) for b in buttons]
    with zipfile.ZipFile(io.BytesIO(_source_bytes(source))) as package:
        files = {info.filename: package.read(info) for info in package.infolist()}
        order = [info.filename for info in package.infolist()]

    root_rels = _relationships(files["_rels/.rels"])
    office_doc = next(r for r in root_rels if r["Type"].endswith("/officeDocument"))
    wb_part = _resolve("", office_doc["Target"])
    wb_rels_part = _rels_path(wb_part)
    wb_xml = files[wb_part].decode("utf-8")
    wb_rels = files[wb_rels_part]

    # Drop an old VBA project, if the source was macro-enabled already.
    for rel in _relationships(wb_rels):
        if rel["Type"] == _REL_VBA:
            files.pop(_resolve(wb_part, rel["Target"]), None)
            wb_rels = re.sub(
                rf'<Relationship\b[^>]*Id="{rel["Id"]}"[^>]*/>', "", wb_rels.decode("utf-8")
            ).encode("utf-8")

    targets = {r["Id"]: _resolve(wb_part, r["Target"]) for r in _relationships(wb_rels)}
    sheets: list[tuple[str, str]] = []  # (name, part) of worksheets in order
    for el in ET.fromstring(files[wb_part]).iter(f"{{{_NS_MAIN}}}sheet"):
        part = targets[el.attrib[f"{{{_NS_R}}}id"]]
        if "<worksheet" in files[part].decode("utf-8", "replace")[:2000]:
            sheets.append((el.attrib["name"], part))

    wb_code = _get_attr(wb_xml, "workbookPr", "codeName") or "ThisWorkbook"
    wb_xml = _set_root_attr(wb_xml, "workbookPr", "codeName", wb_code,
                            ("fileVersion", "fileSharing"), "workbook")
    used = {wb_code.upper()}
    sheet_codes: list[str] = []
    sheet_xml: dict[str, str] = {}
    for _name, part in sheets:
        text = files[part].decode("utf-8")
        code = _get_attr(text, "sheetPr", "codeName")
        if code is None or code.upper() in used:
            n = 1
            while f"SHEET{n}" in used:
                n += 1
            code = f"Sheet{n}"
            text = re.sub(r'(<sheetPr\b[^>]*?)\s+codeName="[^"]*"', r"\1", text)
            text = _set_root_attr(text, "sheetPr", "codeName", code, (), "worksheet")
        used.add(code.upper())
        sheet_codes.append(code)
        sheet_xml[part] = text

    by_name = {name: part for name, part in sheets}
    unknown = sorted({b.sheet for b in specs} - set(by_name))
    if unknown:
        raise ValueError(f"no worksheet named {', '.join(map(repr, unknown))} for a button")
    vml_numbers = {int(m.group(1)) for f in files if (m := re.fullmatch(r"xl/drawings/vmlDrawing(\d+)\.vml", f))}
    # Shape ids are unique in a workbook: each drawing owns blocks of 1024 (o:idmap data).
    id_blocks = {
        int(block)
        for f in files
        if f.endswith(".vml")
        for m in re.finditer(r'<[\w:]*idmap\b[^>]*\bdata="([\d,\s]+)"', files[f].decode("utf-8", "replace"))
        for block in m.group(1).replace(" ", "").split(",")
        if block
    }
    for name, part in sheets:
        mine = [b for b in specs if b.sheet == name]
        if not mine:
            continue
        text = sheet_xml[part]
        rels_part = _rels_path(part)
        rels = files.get(rels_part)
        existing = re.search(r'<legacyDrawing\b[^>]*\br:id="([^"]+)"', text)
        if existing and rels is not None:
            vml_part = next(
                _resolve(part, r["Target"]) for r in _relationships(rels) if r["Id"] == existing.group(1)
            )
            vml = _drop_buttons(files[vml_part].decode("utf-8", "replace"), {b.macro for b in mine})
            ids = [int(i) for i in re.findall(r"_x0000_s(\d+)", vml)]
            first = max(ids, default=1024) + 1
            shapes = "".join(
                _vml_button(first + i, 1000 + i, b, text) for i, b in enumerate(mine)
            )
            if "_x0000_t201" not in vml:
                shapes = _VML_SHAPETYPE + shapes
            vml = _declare_vml_prefixes(vml)
            at = vml.rindex("</xml>")
            files[vml_part] = (vml[:at] + shapes + vml[at:]).encode("utf-8")
        else:
            number = max(vml_numbers, default=0) + 1
            vml_numbers.add(number)
            vml_part = f"xl/drawings/vmlDrawing{number}.vml"
            block = max(id_blocks, default=0) + 1
            id_blocks.add(block)
            first = 1024 * block + 1
            shapes = "".join(_vml_button(first + i, 1 + i, b, text) for i, b in enumerate(mine))
            files[vml_part] = _new_vml(block, shapes).encode("utf-8")
            order.append(vml_part)
            rid = _next_rid(rels) if rels is not None else "rId1"
            files[rels_part] = _add_relationship(rels, rid, _REL_VML, f"../drawings/vmlDrawing{number}.vml")
            if rels is None:
                order.append(rels_part)
            text = _insert_legacy_drawing(text, rid)
        sheet_xml[part] = text

    for part, text in sheet_xml.items():
        files[part] = text.encode("utf-8")
    files[wb_part] = wb_xml.encode("utf-8")
    files["xl/vbaProject.bin"] = build_vba_project(
        bas_files, workbook_module=wb_code, sheet_modules=sheet_codes
    )
    if "xl/vbaProject.bin" not in order:
        order.append("xl/vbaProject.bin")
    vba_target = os.path.relpath("xl/vbaProject.bin", os.path.dirname(wb_part) or ".")
    wb_rels = _add_relationship(wb_rels, _next_rid(wb_rels), _REL_VBA, vba_target.replace(os.sep, "/"))
    files[wb_rels_part] = wb_rels
    files["[Content_Types].xml"] = _content_types(files["[Content_Types].xml"], wb_part)

    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
            entry_points = ["[Content_Types].xml", "_rels/.rels"]  # first in the archive
            for name in dict.fromkeys(entry_points + order):
                if name in files:
                    zf.writestr(name, files[name])
        os.replace(tmp_name, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return out



# ---------------------------------------------------------------------------------------
# The step module and the buttons, from a rule system's steps
# ---------------------------------------------------------------------------------------

STEP_MODULES = {False: "Sheetsync.bas", True: "SheetsyncRemote.bas"}
"""The step module's file, desktop (``False``) or remote (``True``).  The file in
:data:`MACROS_DIR` is the template of every system's module: everything before its first
``Public Sub`` is kept as it is (``RunStep`` / ``CallEndpoint`` and their helpers), and one
``Public Sub`` per step is generated after it.  The file's own subs are the battalion
system's, so the battalion module is the file, byte for byte."""

BUTTON_ANCHORS = ("H2", "H5", "K2", "K5")
"""Top-left cells of the buttons on the Battle sheet, one per step in step order (a fifth
step would go on to ``N2``)."""

_RESERVED_SUBS = {"RUNSTEP", "CALLENDPOINT", "SETTING", "RUNPYTHON", "RUNREMOTEPYTHON"}
_VBA_KEYWORDS = {
    "AND", "AS", "CALL", "CASE", "CONST", "DECLARE", "DIM", "DO", "EACH", "ELSE", "ELSEIF", "END",
    "ENUM", "ERASE", "ERROR", "EVENT", "EXIT", "FOR", "FUNCTION", "GET", "GOSUB", "GOTO", "IF", "IN",
    "IS", "LET", "LIKE", "LOOP", "ME", "MOD", "NEW", "NEXT", "NOT", "NOTHING", "ON", "OPTION",
    "OR", "PRINT", "PRIVATE", "PROPERTY", "PUBLIC", "REDIM", "RESUME", "RETURN", "SELECT", "SET",
    "STATIC", "STEP", "STOP", "SUB", "THEN", "TO", "TYPE", "UNTIL", "WEND", "WHILE", "WITH", "XOR",
}


def _checked_steps(system: Any) -> list[tuple[str, str, str]]:
    """``(sub, action, caption)`` of each step; a :class:`ValueError` for a sub that is no
    usable VBA name (``Step`` is a keyword, ``RunStep`` the module's own helper) or an action
    the buttons' entry points (:mod:`sheetsync.app.buttons`) do not have."""
    from sheetsync.core.system import ACTIONS

    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for step in system.steps:
        sub, action = str(step.sub), str(step.action)
        if not _NAME.match(sub) or sub.upper() in _VBA_KEYWORDS | _RESERVED_SUBS:
            raise ValueError(f"{system.id}: step {action!r} names the sub {sub!r}, which is not a usable VBA sub name")
        if sub.upper() in seen:
            raise ValueError(f"{system.id}: two steps name the sub {sub!r}")
        if action not in ACTIONS:
            raise ValueError(f"{system.id}: step {action!r} is none of {', '.join(ACTIONS)}")
        seen.add(sub.upper())
        out.append((sub, action, str(step.caption)))
    return out


def step_module_source(system: Any, *, remote: bool = False) -> str:
    """The source of ``system``'s step module (``Sheetsync`` on the desktop, ``SheetsyncRemote``
    with ``remote``): the template's head, then per step ``Public Sub <sub>()`` calling
    ``RunStep "import sheetsync.app.buttons as b; b.<action>()"`` (desktop) or
    ``CallEndpoint "<action>"`` (remote).  The entry point and the endpoint find the
    tracker's system from its mark, so the sub only says which step."""
    template = (MACROS_DIR / STEP_MODULES[remote]).read_text(encoding="utf-8").replace("\r\n", "\n")
    at = template.find("\nPublic Sub ")
    if at < 0:
        raise ValueError(f"{STEP_MODULES[remote]} has no Public Sub to put the steps after")
    head = template[: at + 1]
    subs = []
    for sub, action, _caption in _checked_steps(system):
        call = f'CallEndpoint "{action}"' if remote else f'RunStep "import sheetsync.app.buttons as b; b.{action}()"'
        subs.append(f"Public Sub {sub}()\n    {call}\nEnd Sub\n")
    return head + "\n".join(subs)


def write_step_module(system: Any, folder: str | os.PathLike[str], *, remote: bool = False) -> Path:
    """Write ``system``'s step module into ``folder`` (as ``Sheetsync.bas`` or
    ``SheetsyncRemote.bas``) for :func:`make_xlsm`; returns its path."""
    path = Path(folder) / STEP_MODULES[remote]
    path.write_text(step_module_source(system, remote=remote), encoding="utf-8")
    return path


def shipped_remote_module(system: Any) -> Path:
    """The remote step module shipped in :data:`MACROS_DIR` for ``system`` (issue 22.3: a
    hex or Exalted workbook without Python needs its own subs, ``ResolveTurn`` ...): the
    battalion system's is the template ``SheetsyncRemote.bas`` itself, every other system's
    ``SheetsyncRemote-<id>.bas``, :func:`step_module_source` written out.  Each is imported
    as the module ``SheetsyncRemote``: a workbook takes the one of its system."""
    if system.id == "bbn":
        return MACROS_DIR / STEP_MODULES[True]
    return MACROS_DIR / f"SheetsyncRemote-{system.id}.bas"


def write_shipped_remote_modules() -> list[Path]:
    """Write every tracker system's :func:`shipped_remote_module` from the template (after a
    change to ``SheetsyncRemote.bas`` or to a system's steps); returns the files written."""
    from sheetsync.core.registry import find_system, system_ids

    out = []
    for system_id in system_ids():
        system = find_system(system_id)
        path = shipped_remote_module(system)
        if path.name != STEP_MODULES[True]:
            path.write_text(step_module_source(system, remote=True), encoding="utf-8", newline="\n")
            out.append(path)
    return out


def buttons_for(system: Any, sheet: str = "Battle") -> tuple[tuple[str, str, str, str], ...]:
    """The buttons of ``system``'s macro-enabled tracker, ``(sheet, macro, caption,
    top-left cell)`` per step, for :func:`make_xlsm`: each runs the step's sub and shows the
    step's caption."""
    out = []
    for i, (sub, _action, caption) in enumerate(_checked_steps(system)):
        anchor = BUTTON_ANCHORS[i] if i < len(BUTTON_ANCHORS) else f"{col_letter(8 + 3 * (i // 2))}{2 + 3 * (i % 2)}"
        out.append((sheet, sub, caption, anchor))
    return tuple(out)
