"""Sheet buttons for xlwings Lite: named shapes linked to the cell they cover (issue 25, §3).

Office.js, which xlwings Lite is written in, cannot tie a sheet button to a script, so
xlwings Lite documents this instead (https://lite.xlwings.org/custom-scripts, "Running a
script via sheet button"): draw a shape, give it a name in the name box (``xlwings_button``),
link it (Link / Hyperlink, "Place in This Document") to a cell the shape covers (``B4``),
and decorate the script with ``@script(button="[xlwings_button]Sheet1!B4")``.  Clicking
the shape selects the cell, and xlwings Lite runs the script whose button names it.

:func:`add_shape_buttons` does those steps on a workbook package (stdlib only): each button
is a rounded rectangle in the sheet's drawing (added when the sheet has none) whose
``cNvPr`` carries the name and a ``hlinkClick`` whose relationship targets ``#Sheet!Cell``,
which is how SpreadsheetML stores a shape's link to a place in the document.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence
from typing import NamedTuple
from xml.sax.saxutils import escape, quoteattr

from sheetsync.backends.vba import (
    _add_relationship,
    _col_widths_px,
    _next_rid,
    _relationships,
    _rels_path,
    _resolve,
    _row_heights_px,
    _span,
    _top_level_children,
)
from sheetsync.core.a1 import quote_sheet
from sheetsync.sheets.backend import col_index

__all__ = ["ShapeButton", "add_shape_buttons", "shape_buttons"]

_NS_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_NS_XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
_NS_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_REL_DRAWING = f"{_NS_R}/drawing"
_REL_HYPERLINK = f"{_NS_R}/hyperlink"
_CT_DRAWING = "application/vnd.openxmlformats-officedocument.drawing+xml"
_EMU_PER_PX = 9525

#: Elements a worksheet's ``<drawing>`` must come before (ECMA-376, CT_Worksheet).
_AFTER_DRAWING = ("legacyDrawing", "legacyDrawingHF", "drawingHF", "picture", "oleObjects", "controls",
                  "webPublishItems", "tableParts", "extLst", "AlternateContent")


class ShapeButton(NamedTuple):
    """A shape named ``name`` showing ``caption``, over ``cell`` (its top-left) and linked to it."""

    name: str
    caption: str
    cell: str
    width_px: int = 144
    height_px: int = 40


def _sheet_part(files: dict[str, bytes], sheet: str) -> str:
    workbook = files["xl/workbook.xml"].decode("utf-8")
    rels = {r["Id"]: r["Target"] for r in _relationships(files["xl/_rels/workbook.xml.rels"])}
    for m in re.finditer(r"<(?:\w+:)?sheet\b([^>]*)/?>", workbook):
        attrs = dict(re.findall(r'([\w:]+)="([^"]*)"', m.group(1)))
        if attrs.get("name") == escape(sheet, {'"': "&quot;"}):
            rid = next(v for k, v in attrs.items() if k.endswith(":id"))
            return _resolve("xl/workbook.xml", rels[rid])
    raise ValueError(f"the workbook has no sheet {sheet!r}")


def _new_drawing_part(files: dict[str, bytes]) -> str:
    n = 1
    while f"xl/drawings/drawing{n}.xml" in files:
        n += 1
    return f"xl/drawings/drawing{n}.xml"


def _with_drawing(files: dict[str, bytes], part: str) -> str:
    """The drawing part of sheet ``part``, made (with its relationship, content type and
    ``<drawing>`` element) when the sheet has none."""
    rels_path = _rels_path(part)
    text = files[part].decode("utf-8")
    m = re.search(r"<(?:\w+:)?drawing\b[^>]*?\b(?:\w+:)?id=\"([^\"]+)\"", text)
    if m:
        target = next(r["Target"] for r in _relationships(files[rels_path]) if r["Id"] == m.group(1))
        return _resolve(part, target)
    drawing = _new_drawing_part(files)
    files[drawing] = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                      f'<xdr:wsDr xmlns:xdr="{_NS_XDR}" xmlns:a="{_NS_A}"></xdr:wsDr>').encode()
    rels = files.get(rels_path)
    rid = _next_rid(rels) if rels is not None else "rId1"
    files[rels_path] = _add_relationship(rels, rid, _REL_DRAWING, "/" + drawing)
    if not re.search(r"<worksheet\b[^>]*\bxmlns:r\s*=", text):
        text = re.sub(r"<worksheet\b", f'<worksheet xmlns:r="{_NS_R}"', text, count=1)
    at = text.rindex("</worksheet>")
    for start, _end, name in _top_level_children(text):
        if name.rpartition(":")[2] in _AFTER_DRAWING:
            at = start
            break
    files[part] = (text[:at] + f'<drawing r:id="{rid}"/>' + text[at:]).encode("utf-8")
    types = files["[Content_Types].xml"].decode("utf-8")
    override = f'<Override PartName="/{drawing}" ContentType="{_CT_DRAWING}"/>'
    files["[Content_Types].xml"] = types.replace("</Types>", override + "</Types>").encode("utf-8")
    return drawing


def _anchor(button: ShapeButton, sheet_xml: str) -> tuple[str, int, int]:
    """The ``from``/``to`` of the shape over ``button.cell``, and its offset in EMU."""
    m = re.fullmatch(r"\$?([A-Za-z]{1,3})\$?(\d+)", button.cell)
    if not m:
        raise ValueError(f"button cell {button.cell!r} is not a cell such as H2")
    col, row = col_index(m.group(1)) - 1, int(m.group(2)) - 1
    col_px, col_default = _col_widths_px(sheet_xml)
    row_px, row_default = _row_heights_px(sheet_xml)
    c1, x1, c2, x2 = _span(col, button.width_px, col_px, col_default)
    r1, y1, r2, y2 = _span(row, button.height_px, row_px, row_default)

    def mark(tag: str, c: int, x: int, r: int, y: int) -> str:
        return (f"<xdr:{tag}><xdr:col>{c}</xdr:col><xdr:colOff>{x * _EMU_PER_PX}</xdr:colOff>"
                f"<xdr:row>{r}</xdr:row><xdr:rowOff>{y * _EMU_PER_PX}</xdr:rowOff></xdr:{tag}>")

    left = sum(col_px.get(i, col_default) for i in range(col)) * _EMU_PER_PX
    top = sum(row_px.get(i, row_default) for i in range(row)) * _EMU_PER_PX
    return mark("from", c1, x1, r1, y1) + mark("to", c2, x2, r2, y2), left, top


def _shape_xml(button: ShapeButton, shape_id: int, rid: str, sheet_xml: str) -> str:
    anchor, left, top = _anchor(button, sheet_xml)
    cx, cy = button.width_px * _EMU_PER_PX, button.height_px * _EMU_PER_PX
    return (
        f'<xdr:twoCellAnchor xmlns:xdr="{_NS_XDR}" xmlns:a="{_NS_A}" xmlns:r="{_NS_R}" editAs="absolute">'
        f'{anchor}<xdr:sp macro="" textlink=""><xdr:nvSpPr>'
        f'<xdr:cNvPr id="{shape_id}" name={quoteattr(button.name)} descr={quoteattr(button.caption)}>'
        f'<a:hlinkClick r:id="{rid}"/></xdr:cNvPr><xdr:cNvSpPr/></xdr:nvSpPr>'
        f'<xdr:spPr><a:xfrm><a:off x="{left}" y="{top}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>'
        '<a:prstGeom prst="roundRect"><a:avLst/></a:prstGeom>'
        '<a:solidFill><a:srgbClr val="2E7D32"/></a:solidFill><a:ln><a:noFill/></a:ln></xdr:spPr>'
        '<xdr:txBody><a:bodyPr vertOverflow="clip" horzOverflow="clip" rtlCol="0" anchor="ctr"/><a:lstStyle/>'
        '<a:p><a:pPr algn="ctr"/><a:r><a:rPr lang="en-US" sz="1100" b="1">'
        '<a:solidFill><a:srgbClr val="FFFFFF"/></a:solidFill></a:rPr>'
        f"<a:t>{escape(button.caption)}</a:t></a:r></a:p></xdr:txBody></xdr:sp>"
        "<xdr:clientData/></xdr:twoCellAnchor>"
    )


def add_shape_buttons(data: bytes, sheet: str, buttons: Sequence[ShapeButton]) -> bytes:
    """The workbook package ``data`` with ``buttons`` drawn on ``sheet``, each linked to its
    own cell (``#Sheet!Cell``); every other part is kept as it was."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
        files = {name: z.read(name) for name in names}
    part = _sheet_part(files, sheet)
    drawing = _with_drawing(files, part)
    sheet_xml = files[part].decode("utf-8")
    text = files[drawing].decode("utf-8")
    rels_path = _rels_path(drawing)
    rels = files.get(rels_path)
    next_id = max((int(i) for i in re.findall(r"<(?:\w+:)?cNvPr\b[^>]*?\bid=\"(\d+)\"", text)), default=1) + 1
    shapes = []
    for i, button in enumerate(buttons):
        rid = _next_rid(rels) if rels is not None else "rId1"
        rels = _add_relationship(rels, rid, _REL_HYPERLINK, f"#{quote_sheet(sheet)}!{button.cell}")
        shapes.append(_shape_xml(button, next_id + i, rid, sheet_xml))
    files[rels_path] = rels if rels is not None else b""
    end = re.search(r"</(?:\w+:)?wsDr>\s*$", text)
    if end is None:
        raise ValueError(f"{drawing} is not a spreadsheet drawing")
    files[drawing] = (text[: end.start()] + "".join(shapes) + text[end.start():]).encode("utf-8")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name in [*names, *(n for n in files if n not in names)]:
            z.writestr(name, files[name])
    return out.getvalue()


def shape_buttons(data: bytes, sheet: str) -> list[dict[str, str]]:
    """The named, linked shapes on ``sheet`` of the package ``data``: ``name``, ``caption``
    and ``link`` (the relationship's target, ``#Battle!H2``), in drawing order."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        files = {name: z.read(name) for name in z.namelist()}
    part = _sheet_part(files, sheet)
    m = re.search(r"<(?:\w+:)?drawing\b[^>]*?\b(?:\w+:)?id=\"([^\"]+)\"", files[part].decode("utf-8"))
    if m is None:
        return []
    target = next(r["Target"] for r in _relationships(files[_rels_path(part)]) if r["Id"] == m.group(1))
    drawing = _resolve(part, target)
    links = {r["Id"]: r["Target"] for r in _relationships(files.get(_rels_path(drawing), b"<Relationships/>"))}
    out = []
    for sp in re.findall(r"<(?:\w+:)?sp\b.*?</(?:\w+:)?sp>", files[drawing].decode("utf-8"), re.S):
        name = re.search(r"<(?:\w+:)?cNvPr\b[^>]*?\bname=\"([^\"]*)\"", sp)
        link = re.search(r"<(?:\w+:)?hlinkClick\b[^>]*?\br:id=\"([^\"]+)\"", sp)
        caption = "".join(re.findall(r"<a:t>([^<]*)</a:t>", sp))
        if name and link:
            out.append({"name": name.group(1), "caption": caption, "link": links.get(link.group(1), "")})
    return out
