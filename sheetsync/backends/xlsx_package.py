"""A workbook step close to the cost of rewriting its zip: read and patch the package itself.

Issue 12: openpyxl's load and save are nearly all of a workbook Resolve, although a tracker's
~33,500 pre-styled cells hold only ~3,800 values and a step changes a few hundred.  This
module works on the ``.xlsx``/``.xlsm`` package (a zip of XML parts) directly, stdlib only:

- **read**: the sheet names are mapped to their parts through ``xl/workbook.xml`` and its
  relationships; only the sheets a range names are parsed, by a regular expression that
  never stops on an empty styled cell (``<c r="B5" s="3"/>``).  Values come out exactly as
  openpyxl's reader and :func:`sheetsync.backends.excel._read_cell` give them: shared and
  inline strings (rich-text runs joined, phonetic runs left out), ``t="str"``/``"b"``/
  ``"e"``, numbers cast as openpyxl casts them, formulas as :class:`Formula` (``=TRUE()``
  as ``True``), cells inside a merged range (but its first) as empty.
- **write**: the changed cells are spliced into the sheet's XML: each cell keeps its style,
  text is written as an inline string (text starting with ``=`` stays text), a formula
  without a cached value, a number as openpyxl writes it (``%.16g``), so every value reads
  back as it does after an openpyxl save.  Missing rows and cells are made in order, a
  changed row loses its ``spans``, ``<dimension>`` keeps covering the cells.  A formula's
  cached value is dropped in every sheet (as an openpyxl save drops them all) and the
  workbook asks for a full recalculation on load, so no cell shows a stale result.
  ``xl/calcChain.xml`` is dropped with its relationship and content type.  Every other
  member is copied as its compressed bytes, untouched: the VBA project, drawings, charts
  and buttons stay exactly as they are.

Whatever this module does not understand raises :class:`PackageFallback` before anything
is written, and :class:`~sheetsync.backends.excel.ExcelBackend` then runs the whole step
on openpyxl as before, so behaviour never changes: a date-formatted number, an array or
data-table formula, a cell or row it can't parse, a prefixed (namespaced) sheet, a zip64 or
an unusual compression, a sheet that does not exist, text openpyxl would refuse.

Issue 26: a package openpyxl refuses to load is refused here too, as a
:class:`~sheetsync.core.errors.BackendError` naming the part (:func:`check_package`), instead of
being read and written back: no ``[Content_Types].xml``, or one that is not XML or names
no workbook part, or an XML part (document properties, relationships, drawings, charts)
that is not well-formed.
"""

from __future__ import annotations

import bisect
import re
import struct
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import isfinite
from typing import Any

from sheetsync.core.errors import BackendError
from sheetsync.sheets.backend import (
    CellValue,
    Formula,
    Grid,
    RangeUpdate,
    col_index,
    col_letter,
    parse_range,
)

__all__ = ["FALLBACK_ERRORS", "PackageFallback", "XlsxPackage", "check_package", "refresh_health_chart",
           "refresh_parts", "refresh_print_areas", "zip_rewrite"]


class PackageFallback(Exception):
    """The package path does not handle this workbook or this write: the step goes through
    openpyxl instead (nothing has been written)."""


#: What sends a step to openpyxl: the package path's own refusal, and what a part it can't
#: read raises on the way (text that is not UTF-8, a number or index out of place).
FALLBACK_ERRORS: tuple[type[Exception], ...] = (PackageFallback, ValueError, KeyError, IndexError, struct.error,
                                                zlib.error)


_NS_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_NS_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_CALC_CHAIN_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/calcChain"

# ---------------------------------------------------------------------------------------
# The zip container: members read from the central directory, unchanged ones copied raw
# ---------------------------------------------------------------------------------------

_EOCD = struct.Struct("<4s4H2LH")
_CENTRAL = struct.Struct("<4s6H3L5H2L")
_LOCAL = struct.Struct("<4s5H3L2H")
_COMPRESS_LEVEL = 1  # a rewritten part: the fastest deflate (zipfile's default, 6, costs ~3x the time)


@dataclass
class _Member:
    name: str
    central: bytes  # its central-directory record, as found
    local: bytes  # its local header, data and data descriptor, as found
    method: int
    data_start: int  # in ``local``
    compress_size: int

    def content(self) -> bytes:
        raw = self.local[self.data_start:self.data_start + self.compress_size]
        if self.method == 0:
            return raw
        if self.method == 8:
            try:
                return zlib.decompress(raw, -15)
            except zlib.error as exc:
                raise PackageFallback(f"{self.name} can't be inflated: {exc}") from None
        raise PackageFallback(f"{self.name} uses compression method {self.method}")


def _members(data: bytes) -> tuple[list[_Member], bytes]:
    """The members of a zip in central-directory order, and the archive comment."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 65557))
    if end < 0:
        raise PackageFallback("no end of central directory")
    _sig, disk, cd_disk, _n_disk, count, cd_size, cd_offset, comment_len = _EOCD.unpack_from(data, end)
    if disk or cd_disk or count == 0xFFFF or cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:
        raise PackageFallback("a zip64 or multi-disk archive")
    comment = data[end + _EOCD.size:end + _EOCD.size + comment_len]
    out: list[_Member] = []
    pos = cd_offset
    for _ in range(count):
        if data[pos:pos + 4] != b"PK\x01\x02":
            raise PackageFallback("a damaged central directory")
        fields = _CENTRAL.unpack_from(data, pos)
        flag, method, csize, usize = fields[3], fields[4], fields[8], fields[9]
        nlen, xlen, clen, offset = fields[10], fields[11], fields[12], fields[16]
        if 0xFFFFFFFF in (csize, usize, offset) or flag & 1:
            raise PackageFallback("a zip64 or encrypted member")
        raw_name = data[pos + 46:pos + 46 + nlen]
        name = raw_name.decode("utf-8" if flag & 0x800 else "cp437")
        central = data[pos:pos + 46 + nlen + xlen + clen]
        pos += len(central)
        if data[offset:offset + 4] != b"PK\x03\x04":
            raise PackageFallback(f"{name}: a damaged local header")
        lfields = _LOCAL.unpack_from(data, offset)
        start = _LOCAL.size + lfields[9] + lfields[10]
        stop = start + csize
        if flag & 8:  # a data descriptor follows the data
            stop += 16 if data[offset + stop:offset + stop + 4] == b"PK\x07\x08" else 12
        out.append(_Member(name, central, data[offset:offset + stop], method, start, csize))
    return out, comment


def _assemble(members: list[_Member], replaced: dict[str, bytes], dropped: set[str], comment: bytes) -> bytes:
    """A zip of ``members`` in their order: ``replaced`` ones deflated anew, ``dropped`` ones
    left out, every other one copied as its raw bytes (only its offset changes)."""
    parts: list[bytes] = []
    central: list[bytes] = []
    offset = 0
    for m in members:
        if m.name in dropped:
            continue
        if m.name in replaced:
            content = replaced[m.name]
            comp = zlib.compressobj(_COMPRESS_LEVEL, zlib.DEFLATED, -15)
            packed = comp.compress(content) + comp.flush()
            old = _CENTRAL.unpack_from(m.central, 0)
            name = m.central[46:46 + old[10]]
            flag = old[3] & 0x800  # keep only the utf-8 name flag
            crc = zlib.crc32(content)
            local = _LOCAL.pack(b"PK\x03\x04", 20, flag, 8, old[5], old[6], crc, len(packed), len(content),
                                len(name), 0) + name
            parts += [local, packed]
            central.append(_CENTRAL.pack(b"PK\x01\x02", old[1], 20, flag, 8, old[5], old[6], crc, len(packed),
                                         len(content), len(name), 0, 0, 0, old[14], old[15], offset) + name)
            offset += len(local) + len(packed)
        else:
            record = bytearray(m.central)
            struct.pack_into("<L", record, 42, offset)
            central.append(bytes(record))
            parts.append(m.local)
            offset += len(m.local)
    directory = b"".join(central)
    end = _EOCD.pack(b"PK\x05\x06", 0, 0, len(central), len(central), len(directory), offset, len(comment))
    return b"".join([*parts, directory, end, comment])


def zip_rewrite(data: bytes) -> bytes:
    """Every member inflated and deflated again into a new zip: the floor a step that
    rewrites the whole package can't go under (``benchmarks/bench_workbook.py``)."""
    import io
    import zipfile

    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info, src.read(info))
    return buf.getvalue()


# ---------------------------------------------------------------------------------------
# XML text
# ---------------------------------------------------------------------------------------

_ENTITY = re.compile(r"&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def _entity(m: re.Match[str]) -> str:
    key = m.group(1)
    if key[0] == "#":
        return chr(int(key[2:], 16) if key[1] == "x" else int(key[1:]))
    return _NAMED[key]


def _text(raw: str) -> str:
    """XML character data as a parser gives it: line ends normalised, entities resolved."""
    if "\r" in raw:
        raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    if "&" not in raw:
        return raw
    out = _ENTITY.sub(_entity, raw)
    if out.count("&") > raw.count("&amp;") + raw.count("&#38;") + raw.count("&#x26;"):
        raise PackageFallback("an unknown entity")
    return out


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_T = re.compile(r"<t(?:\s[^>]*)?(?:/>|>(.*?)</t>)", re.S)
_RPH = re.compile(r"<rPh\b.*?</rPh>", re.S)


def _string_item(inner: str) -> str:
    """The text of a string item (``<si>`` or ``<is>``): its plain text and its runs'
    text, phonetic runs left out (openpyxl's ``Text.content``)."""
    if "<rPh" in inner:
        inner = _RPH.sub("", inner)
    return "".join(_text(m.group(1) or "") for m in _T.finditer(inner))


_SI = re.compile(r"<si\b[^>]*?(?:/>|>(.*?)</si>)", re.S)


def _shared_strings(xml: str) -> list[str]:
    if ":si" in xml or ":t>" in xml:
        raise PackageFallback("a prefixed shared-string table")
    out = [_string_item(m.group(1) or "").replace("x005F_", "") for m in _SI.finditer(xml)]
    if len(out) != xml.count("<si>") + xml.count("<si ") + xml.count("<si/>"):
        raise PackageFallback("a shared-string table it can't parse")
    return out


# ---------------------------------------------------------------------------------------
# Number formats: which styles make a number a date (openpyxl's is_date_format)
# ---------------------------------------------------------------------------------------

_STRIP = re.compile(r'".*?"|\[(?!hh?\]|mm?\]|ss?\])[^\]]*\]')
_DATE_LETTER = re.compile(r"(?<![_\\])[dmhysDMHYS]")
_BUILTIN_DATES = {14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47}


def _is_date_format(fmt: str) -> bool:
    return _DATE_LETTER.search(_STRIP.sub("", fmt.split(";")[0])) is not None


def _date_styles(styles: bytes | None) -> set[int]:
    if styles is None:
        return set()
    try:
        root = ET.fromstring(styles)
    except ET.ParseError as exc:
        raise PackageFallback(f"styles: {exc}") from None
    custom = {int(f.get("numFmtId", "-1")): f.get("formatCode", "")
              for f in root.iter(f"{_NS_MAIN}numFmt")}
    xfs = root.find(f"{_NS_MAIN}cellXfs")
    out: set[int] = set()
    for idx, xf in enumerate(xfs if xfs is not None else []):
        num = int(xf.get("numFmtId", "0"))
        if num in custom:
            if _is_date_format(custom[num]):
                out.add(idx)
        elif num in _BUILTIN_DATES:
            out.add(idx)
    return out


# ---------------------------------------------------------------------------------------
# One worksheet: its cells with values, read once; its XML patched on write
# ---------------------------------------------------------------------------------------

# a cell holding something, its common shapes taken apart by the expression itself:
# column, row, style, type, other attributes, then one of: a value, an inline string (plain
# or spaced), a formula without attributes (and its cached value), anything else
_CELL_SHAPE = re.compile(
    r'<c r="([A-Z]{1,3})([0-9]+)"(?: s="([0-9]+)")?+(?: t="([A-Za-z]+)")?+([^>]*+)(?<!/)>'
    r'(?:<v>([^<]*)</v>|<is><t>([^<]*)</t></is>|<is><t xml:space="preserve">([^<]*)</t></is>'
    r'|<f>([^<]*)</f>(?:<v>[^<]*</v>|<v\s*/>)?|(.*))\Z', re.S)
_COLUMNS: dict[str, int] = {}
_ANY_CELL = re.compile(r'(<c r="([A-Z]{1,3})([0-9]+)"(?: s="([0-9]*)")?[^>]*?(?:/>|>.*?</c>))', re.S)
_STYLE = re.compile(r'\ss="([0-9]*)"')
_SPANS = re.compile(r'\s+spans="[^"]*"')
_ATTR = re.compile(r'([\w:]+)="([^"]*)"')
_V = re.compile(r"<v(?:\s[^>]*)?(?:/>|>(.*?)</v>)", re.S)
_F = re.compile(r"<f(\s[^>]*?)?(?:/>|>(.*?)</f>)", re.S)
_IS = re.compile(r"<is>(.*?)</is>|<is/>", re.S)
_ROW_NUMBER = re.compile(r'<row r="([0-9]+)"')
_ROW = re.compile(r'<row r="([0-9]+)"([^>]*?)(/?)>')
_MERGE = re.compile(r'<mergeCell ref="([A-Z]+)([0-9]+)(?::([A-Z]+)([0-9]+))?"')
_DIMENSION = re.compile(r'<dimension ref="([^"]*)"\s*/>')
_CACHED = re.compile(r"(</f>|<f\b[^>]*/>)\s*<v>[^<]+</v>")
_BOOLEAN_FORMULAS = {"=TRUE()": True, "=FALSE()": False, "=TRUE": True, "=FALSE": False}
_ERROR_CODES = frozenset(("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A"))
_ILLEGAL = re.compile(r"[\000-\010]|[\013-\014]|[\016-\037]")


def _cast_number(text: str) -> int | float:
    """As openpyxl's reader casts a number."""
    try:
        return float(text) if ("." in text or "E" in text or "e" in text) else int(text)
    except ValueError:
        raise PackageFallback(f"a number it can't read: {text!r}") from None


@dataclass
class _Sheet:
    name: str
    member: str
    xml: str
    rows: dict[int, dict[int, CellValue]] = field(default_factory=dict)  # only cells holding a value
    merged: list[tuple[int, int, int, int]] = field(default_factory=list)  # r1, c1, r2, c2
    changes: dict[int, dict[int, CellValue]] = field(default_factory=dict)
    _last: int | None = None

    def last_value_row(self) -> int:
        """The last row holding a value, 0 when none (``excel._last_value_row``)."""
        if self._last is None:
            self._last = max((r for r, cells in self.rows.items() if cells), default=0)
        return self._last

    def merged_at(self, row: int, col: int) -> bool:
        """Whether the cell is inside a merged range but not its first cell (openpyxl makes
        it a read-only empty MergedCell)."""
        return any(r1 <= row <= r2 and c1 <= col <= c2 and (row, col) != (r1, c1)
                   for r1, c1, r2, c2 in self.merged)

    def write(self, row: int, col1: int, values: Sequence[CellValue]) -> None:
        """Write a row of cells from column ``col1`` on (see :meth:`set`); an empty value
        on an empty cell and a text on the same text cost no more than a look."""
        cells = self.rows.get(row)
        changed = self.changes.get(row)
        for j, value in enumerate(values):
            col = col1 + j
            if changed is None or col not in changed:
                if value is None or value == "":
                    if cells is None or col not in cells:
                        if not self.merged:
                            continue
                elif type(value) is str and cells is not None and cells.get(col) == value and len(value) < 32767 \
                        and type(cells.get(col)) is str and not _ILLEGAL.search(value):
                    if not self.merged:
                        continue
            self.set(row, col, value)
            cells = self.rows.get(row)
            changed = self.changes.get(row)

    def set(self, row: int, col: int, value: CellValue) -> None:
        """Write one cell.  A cell that already reads back as ``value`` is left as it is
        (a step writes whole blocks, most of them unchanged)."""
        if self.merged and self.merged_at(row, col):
            raise PackageFallback(f"{self.name}!{col_letter(col)}{row} is inside a merged range")
        stored = _stored(value)
        cells = self.rows.get(row)
        if cells is None:
            if stored is None and row not in self.changes:
                return
            cells = self.rows[row] = {}
        current = cells.get(col)
        if type(current) is type(stored) and current == stored and col not in self.changes.get(row, ()):
            return
        self.changes.setdefault(row, {})[col] = value
        if stored is None:
            cells.pop(col, None)
            if self._last == row and not cells:
                self._last = None
        else:
            cells[col] = stored
            if self._last is not None and row > self._last:
                self._last = row


def _number_text(value: float) -> str:
    """A number as openpyxl writes it (``safe_string``)."""
    return "%.16g" % value  # noqa: UP031 - exactly openpyxl's format


def _stored(value: CellValue) -> CellValue:
    """What a written value reads back as after an openpyxl save (``%.16g`` numbers,
    ``Formula("=")`` as text, ``=TRUE()`` as True); ``None`` for an empty cell."""
    if value is None or value == "":
        return None
    if isinstance(value, Formula):
        if value.text == "=":
            return "="
        return _BOOLEAN_FORMULAS.get(value.text.upper(), value)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not isfinite(value):
            return None
        return _cast_number(_number_text(value))
    if isinstance(value, str):
        if _ILLEGAL.search(value):
            raise PackageFallback("text openpyxl refuses (a control character)")
        return value[:32767]
    raise PackageFallback(f"a value it does not write: {value!r}")


def _cell_xml(ref: str, style: str, value: CellValue) -> str:
    """One cell as openpyxl writes it (the reading of :func:`_stored`)."""
    s = f' s="{style}"' if style else ""
    if value is None or value == "":
        return f'<c r="{ref}"{s}/>'
    if isinstance(value, Formula) and value.text != "=":
        return f'<c r="{ref}"{s}><f>{_escape(value.text[1:])}</f><v></v></c>'
    if isinstance(value, Formula):
        value = value.text
    if isinstance(value, bool):
        return f'<c r="{ref}"{s} t="b"><v>{int(value)}</v></c>'
    if isinstance(value, (int, float)):
        text = _number_text(value) if isfinite(value) else ""
        return f'<c r="{ref}"{s} t="n"><v>{text}</v></c>'
    assert isinstance(value, str)
    value = value[:32767]
    if _ILLEGAL.search(value):
        raise PackageFallback("text openpyxl refuses (a control character)")
    if value in _ERROR_CODES:
        return f'<c r="{ref}"{s} t="e"><v>{value}</v></c>'
    edges = value[:1].isspace() or value[-1:].isspace()
    space = ' xml:space="preserve"' if edges and not value.isspace() else ""  # as openpyxl's whitespace()
    return f'<c r="{ref}"{s} t="inlineStr"><is><t{space}>{_escape(value)}</t></is></c>'


_CT = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_WORKBOOK_TYPES = frozenset(f"application/vnd.{kind}.main+xml" for kind in (
    "openxmlformats-officedocument.spreadsheetml.sheet", "ms-excel.sheet.macroEnabled",
    "openxmlformats-officedocument.spreadsheetml.template", "ms-excel.template.macroEnabled"))
"""The content types openpyxl takes for a workbook part (``.xlsx``, ``.xlsm``, ``.xltx``, ``.xltm``)."""
_CHECKED_ELSEWHERE = re.compile(r"xl/(worksheets/sheet[^/]*\.xml|sharedStrings\.xml|styles\.xml)")
"""Parts :func:`sheetsync.backends.excel.check_workbook_parts` parses whole before any read."""


def check_package(members: dict[str, _Member], where: str) -> None:
    """Refuse, naming the part, a package openpyxl would refuse to load (issue 26): it
    finds the workbook through ``[Content_Types].xml`` (which must exist, be XML and name a
    workbook part, by an override or a default, that exists) and parses every XML part it
    reads.  Each ``.xml``/``.rels`` part must be well-formed; the worksheets, shared
    strings and styles, the large parts, are left to ``check_workbook_parts``, which already
    parses them whole, so the common path does not parse them twice."""
    from xml.parsers import expat

    def refuse(part: str, why: str) -> BackendError:
        return BackendError(f"{where}: the workbook package is damaged: {part} {why}; openpyxl, Excel and "
                            "LibreOffice can't load it either. Nothing was written; restore the .bak or the last "
                            "good copy")

    def content(name: str) -> bytes:
        try:
            return members[name].content()
        except PackageFallback as exc:  # a part that can't be inflated is as damaged
            raise refuse(name, f"can't be read ({exc})") from None

    if "[Content_Types].xml" not in members:
        raise refuse("[Content_Types].xml", "is missing (it says which part is the workbook)")
    try:
        types = ET.fromstring(content("[Content_Types].xml"))
    except ET.ParseError as exc:
        raise refuse("[Content_Types].xml", f"is not well-formed XML ({exc})") from None
    book = next((o.get("PartName", "") for o in types.iter(f"{_CT}Override")
                 if o.get("ContentType") in _WORKBOOK_TYPES), None)
    if book is None and any(d.get("ContentType") in _WORKBOOK_TYPES for d in types.iter(f"{_CT}Default")):
        book = "/xl/workbook.xml"
    if book is None:
        raise refuse("[Content_Types].xml", "names no workbook part")
    if book.lstrip("/") not in members:
        raise refuse(book.lstrip("/"), "is missing (the workbook part [Content_Types].xml names)")
    for name in members:
        if not name.endswith((".xml", ".rels")) or name == "[Content_Types].xml" or _CHECKED_ELSEWHERE.fullmatch(name):
            continue
        try:
            expat.ParserCreate().Parse(content(name), True)
        except expat.ExpatError as exc:
            raise refuse(name, f"is not well-formed XML ({exc})") from None


def _typed_text(kind: str, v: str, member: str) -> str | None:
    """A ``<v>`` cell of a rarer type: the text of a ``str`` or ``e`` (error) cell, nothing
    for an ``inlineStr`` that holds a ``<v>``; any other type is left to openpyxl."""
    if kind == "str" or kind == "e":
        return _text(v) if "&" in v or "\r" in v else v
    if kind == "inlineStr":
        return None
    raise PackageFallback(f"{member}: a cell of type {kind!r}")


def _read_merges(sheet: _Sheet, xml: str) -> None:
    """The sheet's merged areas into ``sheet.merged``, and every cell of an area but its
    first dropped from ``sheet.rows``."""
    rows = sheet.rows
    for mm in _MERGE.finditer(xml):
        c1, r1 = col_index(mm.group(1)), int(mm.group(2))
        c2, r2 = (col_index(mm.group(3)), int(mm.group(4))) if mm.group(3) else (c1, r1)
        sheet.merged.append((r1, c1, r2, c2))
    for r1, c1, r2, c2 in sheet.merged:
        for r in range(r1, r2 + 1):
            cells = rows.get(r)
            if cells:
                for c in range(c1, c2 + 1):
                    if (r, c) != (r1, c1):
                        cells.pop(c, None)


class XlsxPackage:
    """A workbook package held as its zip bytes: :meth:`read_ranges` parses the sheets it
    is asked for, :meth:`patched` returns the bytes of the workbook with ``updates`` applied.
    Raises :class:`PackageFallback` for anything it does not handle."""

    def __init__(self, data: bytes, where: str | None = None) -> None:
        """``where``: the file ``data`` was read from; given, the package is first checked
        as openpyxl would load it (:func:`check_package`).  Bytes this module wrote itself
        are not checked again."""
        self.data = data
        self._members, self._comment = _members(data)
        self._by_name = {m.name: m for m in self._members}
        if len(self._by_name) != len(self._members):
            raise PackageFallback("a member twice")
        if where is not None:
            check_package(self._by_name, where)
        book = self._xml("xl/workbook.xml")
        rels = self._rels("xl/_rels/workbook.xml.rels")
        self.sheet_members: dict[str, str] = {}
        sheets = book.find(f"{_NS_MAIN}sheets")
        for sheet in sheets if sheets is not None else []:
            target, kind = rels.get(sheet.get(f"{_NS_REL}id", ""), ("", ""))
            if kind.endswith("/worksheet") and target in self._by_name:
                self.sheet_members[sheet.get("name", "")] = target
        self._rel_types = {target: kind for target, kind in rels.values()}
        self._date_styles: set[int] | None = None
        self._strings: list[str] | None = None
        self._sheets: dict[str, _Sheet] = {}

    # -- parts -------------------------------------------------------------------------

    def _read(self, member: str) -> bytes:
        m = self._by_name.get(member)
        if m is None:
            raise PackageFallback(f"no {member}")
        return m.content()

    def _xml(self, member: str) -> Any:
        try:
            return ET.fromstring(self._read(member))
        except ET.ParseError as exc:
            raise PackageFallback(f"{member}: {exc}") from None

    def _rels(self, member: str) -> dict[str, tuple[str, str]]:
        import posixpath

        out: dict[str, tuple[str, str]] = {}
        if member not in self._by_name:
            return out
        base = posixpath.dirname(posixpath.dirname(member))
        for rel in self._xml(member):
            target = rel.get("Target", "")
            if rel.get("TargetMode") == "External" or not target:
                continue
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(base, target))
            out[rel.get("Id", "")] = (path, rel.get("Type", ""))
        return out

    @property
    def strings(self) -> list[str]:
        if self._strings is None:
            member = next((t for t, k in self._rel_types.items() if k.endswith("/sharedStrings")), None)
            self._strings = _shared_strings(self._read(member).decode("utf-8")) if member else []
        return self._strings

    @property
    def date_styles(self) -> set[int]:
        if self._date_styles is None:
            member = next((t for t, k in self._rel_types.items() if k.endswith("/styles")), None)
            self._date_styles = _date_styles(self._read(member) if member in self._by_name else None)
        return self._date_styles

    def sheet(self, name: str) -> _Sheet:
        """The sheet called ``name``, parsed on first use."""
        found = self._sheets.get(name)
        if found is None:
            member = self.sheet_members.get(name)
            if member is None:
                raise PackageFallback(f"no sheet {name!r}")
            found = self._sheets[name] = self._parse(name, member)
        return found

    # -- reading -----------------------------------------------------------------------

    def _parse(self, name: str, member: str) -> _Sheet:
        """The sheet ``name`` read from its part ``member``: its cells, then its merged
        areas (only an area's first cell keeps a value)."""
        xml = self._read(member).decode("utf-8")
        if "<sheetData" not in xml or not xml.lstrip().startswith(("<worksheet", "<?xml")):
            raise PackageFallback(f"{member}: not a worksheet it can read")
        sheet = _Sheet(name, member, xml)
        self._read_cells(sheet, xml, member)
        if "<mergeCell " in xml:
            _read_merges(sheet, xml)
        return sheet

    def _read_cells(self, sheet: _Sheet, xml: str, member: str) -> None:
        """Every cell of the sheet's XML that holds something, into ``sheet.rows``: the
        common shapes read here in one pass, a rarer one through :meth:`_value` or
        :func:`_typed_text`."""
        rows = sheet.rows
        shared: dict[str, tuple[str, str]] = {}
        columns = _COLUMNS
        dates = self.date_styles if "<v>" in xml else set()
        shape = _CELL_SHAPE.match
        # every cell holding something ends in </c> (an empty one is <c .../>), and starts
        # at the last <c r=" before that: the empty styled cells cost no Python at all.  A
        # cell without its address first makes that start an empty cell's: refused below
        for chunk in xml.split("</c>")[:-1]:
            at = chunk.rfind('<c r="')
            m = shape(chunk, at) if at >= 0 else None
            if m is None:
                raise PackageFallback(f"{member}: a cell it can't parse")
            letters, digits, style, kind, extra, v, plain, spaced, f, other = m.groups()
            if other is not None or (extra and not extra.isspace()):
                value = self._value(m.group(0), letters + digits, shared, member)  # a less common shape
                if value is None or value == "":
                    continue
            elif v is not None:
                if not v:
                    continue
                if kind is None or kind == "n":
                    if style is not None and int(style) in dates or style is None and 0 in dates:
                        raise PackageFallback(f"{member}: a date-formatted number")
                    value = _cast_number(v)
                elif kind == "s":
                    try:
                        value = self.strings[int(v)]
                    except (ValueError, IndexError):
                        raise PackageFallback(f"{member}: a shared string that is not there") from None
                    if not value:
                        continue
                elif kind == "b":
                    value = v not in ("0", "")
                    if v not in ("0", "1"):
                        raise PackageFallback(f"{member}: a truth value it can't read")
                else:
                    value = _typed_text(kind, v, member)
                    if value is None:
                        continue
            elif f is not None:
                text = "=" + (_text(f) if "&" in f or "\r" in f else f)
                upper = text.upper() if len(text) < 9 else ""
                value = _BOOLEAN_FORMULAS[upper] if upper in _BOOLEAN_FORMULAS else Formula(text)
            else:
                if kind != "inlineStr":
                    continue
                text = plain if plain is not None else spaced
                value = _text(text) if "&" in text or "\r" in text else text
                if not value:
                    continue
            row = int(digits)
            col = columns.get(letters)
            if col is None:
                col = columns[letters] = col_index(letters)
            cells = rows.get(row)
            if cells is None:
                cells = rows[row] = {}
            cells[col] = value

    def _value(self, cell: str, here: str, shared: dict[str, tuple[str, str]], member: str) -> CellValue:
        """A cell of a less common shape (its text up to ``</c>``), read through its
        attributes and elements."""
        head_end = cell.index(">") + 1
        attrs, content = cell[len('<c r="'):head_end - 1], cell[head_end:]
        kind, style = "n", 0
        for key, val in _ATTR.findall(attrs):
            if key == "t":
                kind = val
            elif key == "s":
                style = int(val) if val.isdigit() else -1
            elif key in ("cm", "vm"):
                raise PackageFallback(f"{member}: a cell with cell or value metadata")
        if "<f" in content:
            return self._formula(here, content, shared, member)
        if kind == "inlineStr":
            found = _IS.search(content)
            if found is None:
                return None
            return _string_item(found.group(1) or "")
        v = _V.search(content)
        raw = v.group(1) if v is not None else None
        if not raw:
            return None
        text = _text(raw)
        if kind == "n":
            if style in self.date_styles or style < 0:
                raise PackageFallback(f"{member}: a date-formatted number")
            return _cast_number(text)
        if kind == "s":
            try:
                return self.strings[int(text)]
            except (ValueError, IndexError):
                raise PackageFallback(f"{member}: a shared string that is not there") from None
        if kind == "b":
            try:
                return bool(int(text))
            except ValueError:
                raise PackageFallback(f"{member}: a truth value it can't read") from None
        if kind in ("str", "e"):
            return text
        raise PackageFallback(f"{member}: a cell of type {kind!r}")

    def _formula(self, here: str, content: str, shared: dict[str, tuple[str, str]], member: str) -> CellValue:
        f = _F.search(content)
        if f is None:
            raise PackageFallback(f"{member}: a formula it can't parse")
        attrs = dict(_ATTR.findall(f.group(1) or ""))
        text = "=" + _text(f.group(2) or "")
        kind = attrs.get("t", "normal")
        if kind in ("array", "dataTable"):
            raise PackageFallback(f"{member}: an {kind} formula")
        if kind == "shared":
            si = attrs.get("si", "")
            if attrs.get("ref"):
                shared[si] = (text, here)
            elif si in shared:
                from openpyxl.formula.translate import Translator

                origin, at = shared[si]
                text = Translator(origin, at).translate_formula(here)
            else:
                raise PackageFallback(f"{member}: a shared formula without its first cell")
        if text.upper() in _BOOLEAN_FORMULAS:  # LibreOffice saves TRUE/FALSE as =TRUE()/=FALSE()
            return _BOOLEAN_FORMULAS[text.upper()]
        return Formula(text)

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        """The grids :meth:`ExcelBackend.read_ranges` gives on openpyxl: trailing empty rows
        dropped, rows padded to the range's width, an open-ended range up to the last value."""
        out: list[Grid] = []
        for text in ranges:
            rng = parse_range(text)
            sheet = self.sheet(rng.sheet)
            last = sheet.last_value_row()
            if rng.row2 is not None:
                last = min(last, rng.row2)
            cols = range(rng.col1, rng.col2 + 1)
            rows = sheet.rows
            grid: Grid = []
            for r in range(rng.row1, last + 1):
                cells = rows.get(r)
                grid.append([cells.get(c) for c in cols] if cells else [None] * len(cols))
            while grid and all(v is None for v in grid[-1]):
                grid.pop()
            out.append(grid)
        return out

    # -- writing -----------------------------------------------------------------------

    def patched(self, updates: Sequence[RangeUpdate],
                hook: Callable[[XlsxPackage], dict[str, bytes]] | None = None) -> bytes:
        """The workbook's bytes with ``updates`` applied in order (an append goes after the
        last row holding a value, as on openpyxl).  ``hook`` sees the package with the
        updates applied and returns other members to replace (a chart's ranges)."""
        for u in updates:  # every sheet first: all or nothing
            self.sheet(parse_range(u.range).sheet)
        for u in updates:
            rng = parse_range(u.range)
            sheet = self.sheet(rng.sheet)
            row1 = max(rng.row1, sheet.last_value_row() + 1) if u.append else rng.row1
            for i, row in enumerate(u.values):
                sheet.write(row1 + i, rng.col1, row)
        replaced: dict[str, bytes] = {}
        if hook is not None:
            replaced.update(hook(self))
        for name, member in self.sheet_members.items():
            parsed = self._sheets.get(name)
            if parsed is not None and parsed.changes:
                replaced[member] = _strip_cached(_patch_sheet(parsed)).encode("utf-8")
            elif member not in replaced:
                xml = parsed.xml if parsed is not None else self._read(member).decode("utf-8")
                if _CACHED.search(xml):
                    replaced[member] = _strip_cached(xml).encode("utf-8")
        dropped = self._drop_calc_chain(replaced)
        self._full_calc_on_load(replaced)
        return _assemble(self._members, replaced, dropped, self._comment)

    def _drop_calc_chain(self, replaced: dict[str, bytes]) -> set[str]:
        chain = next((t for t, k in self._rel_types.items() if k == _CALC_CHAIN_TYPE), None)
        if chain is None:
            return set()
        rels = self._read("xl/_rels/workbook.xml.rels").decode("utf-8")
        rels = re.sub(r'<Relationship\b[^>]*calcChain"[^>]*/>', "", rels)
        replaced["xl/_rels/workbook.xml.rels"] = rels.encode("utf-8")
        if "[Content_Types].xml" in self._by_name:
            types = self._read("[Content_Types].xml").decode("utf-8")
            types = re.sub(r'<Override\b[^>]*PartName="/' + re.escape(chain) + r'"[^>]*/>', "", types)
            replaced["[Content_Types].xml"] = types.encode("utf-8")
        return {chain}

    def _full_calc_on_load(self, replaced: dict[str, bytes]) -> None:
        """Ask Excel and LibreOffice to recalculate on load (openpyxl's workbooks do)."""
        book = replaced.get("xl/workbook.xml", self._read("xl/workbook.xml")).decode("utf-8")
        calc = re.search(r"<calcPr\b[^>]*?/?>", book)
        if calc is not None and 'fullCalcOnLoad="1"' in calc.group(0):
            return
        if calc is None:
            new = book.replace("</workbook>", '<calcPr calcId="124519" fullCalcOnLoad="1"/></workbook>')
            if re.search(r"<(extLst|fileRecoveryPr|webPublishObjects|webPublishing|oleSize|"
                         r"customWorkbookViews|pivotCaches|smartTagPr|smartTagTypes)\b", book):
                raise PackageFallback("xl/workbook.xml: no calcPr and elements after where it goes")
        else:
            tag = re.sub(r'\s+fullCalcOnLoad="[^"]*"', "", calc.group(0))
            tag = '<calcPr fullCalcOnLoad="1"' + tag[len("<calcPr"):]
            new = book[:calc.start()] + tag + book[calc.end():]
        replaced["xl/workbook.xml"] = new.encode("utf-8")


    def changed_sheets(self) -> dict[str, dict[int, dict[int, CellValue]]]:
        """The cells holding a value of each sheet a write changed, as they stand now."""
        return {name: sheet.rows for name, sheet in self._sheets.items() if sheet.changes}

    def with_print_areas(self, areas: dict[str, str]) -> dict[str, bytes]:
        """``xl/workbook.xml`` with the print area (``A1:K20``) of each sheet named in
        ``areas`` set (issue 22), as openpyxl writes one: a ``_xlnm.Print_Area`` defined name
        local to the sheet.  Nothing when every area already stands."""
        book = self._read("xl/workbook.xml").decode("utf-8")
        order = [el.get("name", "") for el in self._xml("xl/workbook.xml").iter(f"{_NS_MAIN}sheet")]
        new = book
        for name, area in areas.items():
            if name not in order:
                continue
            index = order.index(name)
            quoted = "'" + name.replace("'", "''") + "'"
            first, _, last = area.partition(":")
            ref = _escape(f"{quoted}!{_absolute(first)}:{_absolute(last)}")
            found = re.compile(r'<definedName\b(?=[^>]*\bname="_xlnm\.Print_Area")(?=[^>]*\blocalSheetId="'
                               + str(index) + r'")[^>]*>([^<]*)</definedName>')
            m = found.search(new)
            if m is not None:
                new = new[:m.start(1)] + ref + new[m.end(1):]
            elif "</definedNames>" in new:
                tag = f'<definedName name="_xlnm.Print_Area" localSheetId="{index}">{ref}</definedName>'
                new = new.replace("</definedNames>", tag + "</definedNames>", 1)
            else:
                raise PackageFallback("xl/workbook.xml: no defined names to hold a print area")
        return {} if new == book else {"xl/workbook.xml": new.encode("utf-8")}


def _absolute(cell: str) -> str:
    m = re.fullmatch(r"([A-Z]+)([0-9]+)", cell)
    if m is None:
        raise PackageFallback(f"a print area cell it can't read: {cell!r}")
    return f"${m.group(1)}${m.group(2)}"


def refresh_print_areas(pkg: XlsxPackage) -> dict[str, bytes]:
    """Issue 22: the print area of each sheet a step changed, down to the rows in use now
    (:func:`sheetsync.sheets.printing.print_area`), as the openpyxl path's
    :func:`sheetsync.sheets.draw.fit_print_areas` sets it before every save."""
    import json

    from sheetsync.core.errors import SheetSyncError
    from sheetsync.core.registry import MARK_CELL, find_system, parse_mark
    from sheetsync.sheets.printing import print_area, printed_sheets

    changed = pkg.changed_sheets()
    mark_sheet, mark_cell = MARK_CELL
    if not changed or mark_sheet not in pkg.sheet_members:
        return {}
    (mark,), (capacity,) = (g[0] if g else [None] for g in pkg.read_ranges([f"{mark_sheet}!{mark_cell}",
                                                                            f"{mark_sheet}!B2"]))
    try:
        cap = json.loads(capacity) if isinstance(capacity, str) and capacity.strip() else None
        lay = find_system(parse_mark(mark).system).layout(cap if isinstance(cap, dict) else None)
    except (SheetSyncError, ValueError, RecursionError, TypeError):
        return {}  # a tracker whose mark or capacity is damaged: the step refuses it, not this
    areas: dict[str, str] = {}
    printed = printed_sheets(lay)
    for name, rows in changed.items():
        if name in printed:
            values = {r: {c: v for c, v in cells.items() if not isinstance(v, Formula)} for r, cells in rows.items()}
            area = print_area(lay, name, values)
            if area is not None:
                areas[name] = area
    return pkg.with_print_areas(areas)


def _strip_cached(xml: str) -> str:
    """Drop the cached values of formulas (an openpyxl save drops them all)."""
    return _CACHED.sub(r"\1", xml) if "<f" in xml else xml


def _patch_sheet(sheet: _Sheet) -> str:
    """The sheet's XML with its changed cells written in."""
    xml = sheet.xml
    start = xml.find("<sheetData")
    open_end = xml.find(">", start) + 1
    if xml[open_end - 2] == "/":  # <sheetData/>
        head, body, tail = xml[:start] + "<sheetData>", "", "</sheetData>" + xml[open_end:]
    else:
        close = xml.find("</sheetData>", open_end)
        if close < 0:
            raise PackageFallback(f"{sheet.member}: no end of its cell table")
        head, body, tail = xml[:open_end], xml[open_end:close], xml[close:]
    numbers = [int(n) for n in _ROW_NUMBER.findall(body)]
    if ":row" in body or body.count("<row") != len(numbers):
        raise PackageFallback(f"{sheet.member}: a row without its number first")
    if any(a >= b for a, b in zip(numbers, numbers[1:], strict=False)):
        raise PackageFallback(f"{sheet.member}: rows out of order")
    if numbers and body[:body.find("<row")].strip():
        raise PackageFallback(f"{sheet.member}: something before its first row")
    pieces: list[str] = []
    pos = 0  # the text before ``pos`` is placed
    # the changed rows in order (the rows are in order: each is found from the last one on),
    # the text between them copied unchanged
    for row in sorted(sheet.changes):
        at = body.find(f'<row r="{row}"', pos)
        if at >= 0:
            stop = body.find("<row ", at + 4)
            stop = stop if stop >= 0 else len(body)
            pieces.append(body[pos:at])
            pieces.append(_patch_row(sheet, row, body[at:stop]))
            pos = stop
        else:  # a new row goes before the first row after it
            i = bisect.bisect_right(numbers, row)
            at = body.find(f'<row r="{numbers[i]}"', pos) if i < len(numbers) else len(body)
            pieces.append(body[pos:at])
            pieces.append(_patch_row(sheet, row, None))
            pos = at
    pieces.append(body[pos:])
    return _dimension(head, sheet) + "".join(pieces) + tail


def _patch_row(sheet: _Sheet, row: int, text: str | None) -> str:
    """One row (its XML, or ``None`` for a row not there yet) with its changes written."""
    changes = sheet.changes[row]
    cells: dict[int, str] = {}
    styles: dict[int, str] = {}  # a cell's style, when it comes right after its address
    trailer = ""
    if text is None:
        attrs = ""
    else:
        m = _ROW.match(text)
        if m is None or int(m.group(1)) != row:
            raise PackageFallback(f"{sheet.member}: row {row} it can't parse")
        attrs = _SPANS.sub("", m.group(2)) if "spans" in m.group(2) else m.group(2)
        if m.group(3):  # <row .../>
            trailer = text[m.end():]
        else:
            close = text.rfind("</row>")
            if close < 0:
                raise PackageFallback(f"{sheet.member}: row {row} has no end")
            inner, trailer = text[m.end():close], text[close + len("</row>"):]
            found = _ANY_CELL.findall(inner)
            whole = sum(len(c[0]) for c in found) == len(inner)  # nothing but cells, back to back
            if not whole and (len(found) != inner.count("<c ") + inner.count("<c>")
                              or _ANY_CELL.sub("", inner).strip()):
                raise PackageFallback(f"{sheet.member}: row {row} holds something it can't parse")
            columns = _COLUMNS
            number = str(row)
            for whole, letters, digits, style in found:
                if digits != number:
                    raise PackageFallback(f"{sheet.member}: a cell of another row inside row {row}")
                col = columns.get(letters)
                if col is None:
                    col = columns[letters] = col_index(letters)
                cells[col] = whole
                if style:
                    styles[col] = style
        if trailer.strip():
            raise PackageFallback(f"{sheet.member}: something after row {row}")
    for col, value in changes.items():
        style = styles.get(col, "")
        old = cells.get(col)
        if not style and old is not None:
            found_style = _STYLE.search(old[:old.index(">")])
            style = found_style.group(1) if found_style else ""
        cells[col] = _cell_xml(f"{col_letter(col)}{row}", style, value)
    body = "".join([cells[c] for c in sorted(cells)])
    return f'<row r="{row}"{attrs}>{body}</row>{trailer}'


def _dimension(head: str, sheet: _Sheet) -> str:
    """``head`` (the XML before the cells) with ``<dimension>`` covering the changed cells."""
    m = _DIMENSION.search(head)
    if m is None:
        return head
    rows = [r for r in sheet.changes]
    cols = [c for cells in sheet.changes.values() for c in cells]
    top, bottom, left, right = min(rows), max(rows), min(cols), max(cols)
    ref = m.group(1)
    parts = re.fullmatch(r"([A-Z]+)([0-9]+)(?::([A-Z]+)([0-9]+))?", ref)
    if parts is None:
        return head
    c1, r1 = col_index(parts.group(1)), int(parts.group(2))
    c2, r2 = (col_index(parts.group(3)), int(parts.group(4))) if parts.group(3) else (c1, r1)
    if (r1, c1, r2, c2) == (1, 1, 1, 1) and not sheet.rows:
        r1, c1, r2, c2 = top, left, bottom, right
    new = (min(r1, top), min(c1, left), max(r2, bottom), max(c2, right))
    if new == (r1, c1, r2, c2):
        return head
    text = f"{col_letter(new[1])}{new[0]}:{col_letter(new[3])}{new[2]}"
    return head[:m.start()] + f'<dimension ref="{text}"/>' + head[m.end():]


# ---------------------------------------------------------------------------------------
# The battalion tracker's Health chart: its ranges follow the phases played
# ---------------------------------------------------------------------------------------

_CHART_REF = re.compile(r"(<(?:c:)?f>'?Battle'?!\$([A-Z]+)\$([0-9]+))(?::\$[A-Z]+\$[0-9]+)?(</(?:c:)?f>)")


def refresh_parts(pkg: XlsxPackage) -> dict[str, bytes]:
    """Every part a step's package save refreshes: the Health chart's ranges and the print areas."""
    return {**refresh_health_chart(pkg), **refresh_print_areas(pkg)}


def refresh_health_chart(pkg: XlsxPackage) -> dict[str, bytes]:
    """The Health chart's part with its ranges over the phases played so far, as the openpyxl
    path's ``restore_chart`` draws it anew before every save (Battle sheet, issue 9): the
    same number of lines, the axis over the filled rows of the Health-by-phase table.  A
    step that changes how many cohorts the chart draws is left to the openpyxl path."""
    import json

    from sheetsync.core.registry import MARK_CELL, parse_mark

    mark_sheet, mark_cell = MARK_CELL
    if mark_sheet not in pkg.sheet_members or "Battle" not in pkg.sheet_members:
        return {}
    (mark,), (capacity,) = (g[0] if g else [None] for g in pkg.read_ranges([f"{mark_sheet}!{mark_cell}",
                                                                            f"{mark_sheet}!B2"]))
    if parse_mark(mark).system != "bbn":
        return {}
    from sheetsync.core.registry import room

    layout = room("bbn", "tracker.layout").layout

    try:
        cap = json.loads(capacity) if isinstance(capacity, str) and capacity.strip() else None
    except (ValueError, RecursionError):
        cap = None
    lay = layout(capacity=cap if isinstance(cap, dict) else None)
    if len(lay.charts) != 1:
        raise PackageFallback("a tracker without exactly one chart")
    spec = lay.charts[0]
    block = lay.block(spec.block)
    summary = lay.block("Battle_Summary")
    col = summary.first_col + summary.index("cohort")
    battle = pkg.sheet("Battle")
    cohorts = sum(1 for i in range(summary.rows or 0)
                  if battle.rows.get(summary.first_row + i, {}).get(col) is not None)
    last_row = block.last_row or block.first_row
    filled = [r for r in range(block.first_row, last_row + 1) if battle.rows.get(r, {}).get(block.first_col) is not None]
    shown = max(filled) - block.first_row + 1 if filled else 1
    last = block.first_row + max(0, min(shown, block.rows or 1) - 1)
    chart = _battle_chart(pkg)
    if chart is None:
        raise PackageFallback("the Health chart is not where it should be")
    xml = pkg._read(chart).decode("utf-8")
    if xml.count("<ser>") + xml.count("<c:ser>") != max(1, cohorts):
        raise PackageFallback("the chart draws another number of cohorts now")

    def fix(m: re.Match[str]) -> str:
        if int(m.group(3)) != block.first_row:
            return m.group(0)
        end = f":${m.group(2)}${last}" if last != block.first_row else ""
        return f"{m.group(1)}{end}{m.group(4)}"

    new = _CHART_REF.sub(fix, xml)
    return {} if new == xml else {chart: new.encode("utf-8")}


def _battle_chart(pkg: XlsxPackage) -> str | None:
    """The chart part drawn on the Battle sheet (through its drawing), if there is one."""
    import posixpath

    member = pkg.sheet_members["Battle"]
    rels = f"{posixpath.dirname(member)}/_rels/{posixpath.basename(member)}.rels"
    for target, kind in pkg._rels(rels).values():
        if kind.endswith("/drawing"):
            d_rels = f"{posixpath.dirname(target)}/_rels/{posixpath.basename(target)}.rels"
            charts = [t for t, k in pkg._rels(d_rels).values() if k.endswith("/chart")]
            if len(charts) == 1 and charts[0] in pkg._by_name:
                return charts[0]
    return None
