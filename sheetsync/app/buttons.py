"""Entry points of the Excel buttons (desktop xlwings ``RunPython``).

Each button in the workbook calls, for example,
``RunPython "import sheetsync.app.buttons as b; b.resolve()"``.  The entry point finds the
calling workbook with ``xw.Book.caller()``, finds the tracker's rule system from the mark
it carries (``State!B1``, :func:`sheetsync.sheets.marks.run`), runs that system's step through
the xlwings backend, and shows the outcome in a message box: on failure the error with its
cell.  The entry points are the four actions (build, resolve, undo, end), whatever the
system calls them ("Resolve Phase", "Resolve Turn"): the VBA sub of each step calls the
entry point of its action.  It needs only open-source xlwings.  Imports stay lazy: every
click starts a fresh Python.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["build", "end", "resolve", "run_button", "undo"]


def run_button(action: str, book: Any = None) -> str:
    """Run ``action`` on ``book`` (the calling workbook by default) as the rule system its
    mark names; returns the message shown."""
    import xlwings as xw

    from sheetsync.backends.xlwings_backend import XlwingsBackend, alert
    from sheetsync.core.errors import SheetSyncError
    from sheetsync.sheets import marks as steps

    book = book if book is not None else xw.Book.caller()
    try:
        report = steps.run(action, XlwingsBackend(book))
    except SheetSyncError as exc:
        message = str(exc)  # the problem in words, with its cell; no class name
        alert(book, "sheetsync", message)
        return message
    message = str(report.message)
    alert(book, "sheetsync", message, mode="info")
    return message


def _click(action: str) -> None:
    """A click: every click is a fresh Python (RunPython), so one that has not loaded
    pydantic validates with the lax validator instead, which makes the same models and
    errors without pydantic's import and validators (issue 23,
    :func:`sheetsync.sheets.validation.prefer_lax`)."""
    if "pydantic" not in sys.modules:
        from sheetsync.sheets.validation import prefer_lax

        prefer_lax()
    run_button(action)


def build() -> None:
    """The build button (Build Cohorts, Build Units)."""
    _click("build")


def resolve() -> None:
    """The resolve button (Resolve Phase, Resolve Turn)."""
    _click("resolve")


def undo() -> None:
    """The undo button (Undo Phase, Undo Turn)."""
    _click("undo")


def end() -> None:
    """The End Battle button."""
    _click("end")
