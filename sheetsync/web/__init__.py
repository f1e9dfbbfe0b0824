"""The static web page (issue 25): ``index.html``, ``app.js``, ``worker.js`` and
``style.css`` run the workbook path in the browser under Pyodide, so the workbook never
leaves the Tracker's machine.  :mod:`sheetsync.web.site` writes the page with its wheels
(``sheetsync web DIR``); this module holds the versions the page and the CI cache share.

Standard library only.  ``sheetsync web`` and ``.ci/install-pyodide.sh`` both read
:data:`PYODIDE_VERSION` from here (``python -c "from sheetsync.web import ..."``), so the
pinned version is written once.
"""

from __future__ import annotations

__all__ = ["CDN_TEMPLATE", "ET_XMLFILE_VERSION", "OPENPYXL_VERSION", "PYODIDE_VERSION", "XLWINGS_VERSION",
           "default_pyodide_url"]

PYODIDE_VERSION = "0.27.7"
"""The Pyodide release the page loads (Python 3.12; its npm package runs on Node >= 18)."""
OPENPYXL_VERSION = "3.1.5"
ET_XMLFILE_VERSION = "2.0.0"
"""The pure wheels the workbook path needs besides sheetsync's own."""
XLWINGS_VERSION = "0.37.8"
"""The xlwings whose pure wheel the tests load under Pyodide, as xlwings Lite provides it, to
run :mod:`sheetsync.lite`'s scripts there (``.ci/install-pyodide.sh`` caches it)."""

CDN_TEMPLATE = "https://cdn.jsdelivr.net/pyodide/v{version}/full/"


def default_pyodide_url() -> str:
    """Where the page loads Pyodide from unless told otherwise: the public CDN, pinned."""
    return CDN_TEMPLATE.format(version=PYODIDE_VERSION)

