"""The code an xlwings Lite workbook carries: its ``main.py`` and ``requirements.txt`` (issue 25, §3).

xlwings Lite keeps a workbook's Python inside the workbook itself, as the settings of its
Office add-in: a *web extension* part (``xl/webextensions/webextension1.xml``) whose
properties are the pane's files, each a JSON string named as the tab it fills (``main.py``,
``requirements.txt``), reached from the package through a *task panes* part
(``xl/webextensions/taskpanes.xml``) that also says whether the pane opens with the
workbook.  That is the layout Excel writes for workbooks saved with the xlwings Lite pane,
and the one written here, so a ``--lite`` tracker opens with the pane and its files filled:

* ``requirements.txt`` lists ``xlwings`` and ``sheetsync``, so installing the scripts is the
  add-in's own install of the packages;
* ``main.py`` imports the scripts of :mod:`sheetsync.lite`; xlwings Lite registers every
  ``@script`` function it finds in ``main.py``'s namespace, imported ones included, each with
  the sheet button its decorator names.

The rest of the package is kept byte for byte.  :func:`lite_code` reads the files back.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Mapping
from xml.etree import ElementTree
from xml.sax.saxutils import quoteattr

from sheetsync.backends.vba import _add_relationship, _next_rid

__all__ = ["ADDIN_ID", "MAIN_PY", "lite_code", "requirements_txt", "with_lite_code"]

#: The xlwings Lite add-in's id in Office's add-in store (AppSource): the reference Excel
#: follows to load the add-in when the workbook opens.
ADDIN_ID = "wa200008175"
_WE_NS = "http://schemas.microsoft.com/office/webextensions/webextension/2010/11"
_WETP_NS = "http://schemas.microsoft.com/office/webextensions/taskpanes/2010/11"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_REL_TASKPANES = "http://schemas.microsoft.com/office/2011/relationships/webextensiontaskpanes"
_REL_WEBEXTENSION = "http://schemas.microsoft.com/office/2011/relationships/webextension"
_CT_WEBEXTENSION = "application/vnd.ms-office.webextension+xml"
_CT_TASKPANES = "application/vnd.ms-office.webextensiontaskpanes+xml"
WEBEXTENSION_PART = "xl/webextensions/webextension1.xml"
TASKPANES_PART = "xl/webextensions/taskpanes.xml"

MAIN_PY = (
    '"""The tracker\'s buttons: sheetsync\'s scripts, one per step of the battle."""\n'
    "from sheetsync.lite import build, check, end_battle, forecast, report, resolve, undo  # noqa: F401\n"
)
"""The ``main.py`` of a ``--lite`` tracker: the scripts, imported so xlwings Lite registers them."""


def requirements_txt(xlwings_version: str, sheetsync_requirement: str = "sheetsync") -> str:
    """The ``requirements.txt`` of a ``--lite`` tracker: xlwings at ``xlwings_version`` (the
    one the scripts are tested with) or newer, and ``sheetsync_requirement`` (the package's
    name, or a wheel's address for a copy served from elsewhere)."""
    return f"xlwings>={xlwings_version}\n{sheetsync_requirement}\n"


def _webextension_xml(files: Mapping[str, str]) -> str:
    props = "".join(f"<we:property name={quoteattr(name)} value={quoteattr(json.dumps(text))}/>"
                    for name, text in files.items())
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            f'<we:webextension xmlns:we="{_WE_NS}" id="{{6A5C5F67-2F3B-4C1E-9F1D-5E7A1B3C9D21}}">'
            f'<we:reference id="{ADDIN_ID}" version="1.0.0.0" store="en-US" storeType="OMEX"/>'
            f'<we:alternateReferences><we:reference id="{ADDIN_ID}" version="1.0.0.0" store="{ADDIN_ID.upper()}" '
            'storeType="OMEX"/></we:alternateReferences>'
            f"<we:properties>{props}</we:properties><we:bindings/>"
            f'<we:snapshot xmlns:r="{_REL_NS}"/></we:webextension>')


def _taskpanes_xml(open_pane: bool) -> str:
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            f'<wetp:taskpanes xmlns:wetp="{_WETP_NS}"><wetp:taskpane dockstate="right" '
            f'visibility="{int(open_pane)}" width="350" row="3">'
            f'<wetp:webextensionref xmlns:r="{_REL_NS}" r:id="rId1"/></wetp:taskpane></wetp:taskpanes>')


def _with_overrides(content_types: bytes) -> bytes:
    text = content_types.decode("utf-8")
    for part, ctype in ((WEBEXTENSION_PART, _CT_WEBEXTENSION), (TASKPANES_PART, _CT_TASKPANES)):
        if f'PartName="/{part}"' not in text:
            text = text.replace("</Types>", f'<Override PartName="/{part}" ContentType="{ctype}"/></Types>')
    return text.encode("utf-8")


def with_lite_code(data: bytes, files: Mapping[str, str], *, open_pane: bool = True) -> bytes:
    """The workbook package ``data`` carrying ``files`` (name → text, e.g. ``main.py``) as its
    xlwings Lite pane's files; with ``open_pane`` the pane opens when the workbook does.  A
    package that already carries an add-in's parts is refused (``ValueError``) rather than
    have them replaced."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
        parts = {name: z.read(name) for name in names}
    if WEBEXTENSION_PART in parts or TASKPANES_PART in parts:
        raise ValueError("this workbook already carries an Office add-in's settings")
    root_rels = parts["_rels/.rels"]
    parts["_rels/.rels"] = _add_relationship(root_rels, _next_rid(root_rels), _REL_TASKPANES, TASKPANES_PART)
    parts["[Content_Types].xml"] = _with_overrides(parts["[Content_Types].xml"])
    parts[TASKPANES_PART] = _taskpanes_xml(open_pane).encode("utf-8")
    parts["xl/webextensions/_rels/taskpanes.xml.rels"] = _add_relationship(
        None, "rId1", _REL_WEBEXTENSION, "webextension1.xml")
    parts[WEBEXTENSION_PART] = _webextension_xml(files).encode("utf-8")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name in [*names, *(n for n in parts if n not in names)]:
            z.writestr(name, parts[name])
    return out.getvalue()


def lite_code(data: bytes) -> dict[str, str]:
    """The xlwings Lite pane's files a workbook package carries (name → text); empty when it
    carries none.  Properties that are not JSON strings (settings of other kinds) are left out."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        found = [n for n in z.namelist() if re.fullmatch(r"xl/webextensions/webextension\d*\.xml", n)]
        out: dict[str, str] = {}
        for name in found:
            root = ElementTree.fromstring(z.read(name))
            ref = root.find(f"{{{_WE_NS}}}reference")
            if ref is None or ref.get("id", "").lower() != ADDIN_ID:
                continue
            for prop in root.iter(f"{{{_WE_NS}}}property"):
                try:
                    value = json.loads(prop.get("value", ""))
                except ValueError:
                    continue
                if isinstance(value, str):
                    out[prop.get("name", "")] = value
    return out
