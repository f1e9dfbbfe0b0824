"""Entry points of the Excel buttons (desktop xlwings ``RunPython``).

Each button in the workbook calls, for example,
``RunPython "import sheetsync.app.buttons as b; b.resolve()"``.  The entry point finds the
calling workbook with ``xw.Book.caller()``, runs the use case through the xlwings backend,
and shows the outcome in a message box: on failure the error with its cell.  It needs only
open-source xlwings.  Imports stay lazy: every click starts a fresh Python.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build", "end", "resolve", "run_button", "undo"]


def run_button(action: str, book: Any = None) -> str:
    """Run ``action`` on ``book`` (the calling workbook by default); returns the message shown."""
    import xlwings as xw

    from sheetsync.app import usecases
    from sheetsync.backends.xlwings_backend import XlwingsBackend, alert
    from sheetsync.errors import SheetSyncError

    book = book if book is not None else xw.Book.caller()
    try:
        report = usecases.run(action, XlwingsBackend(book))
    except SheetSyncError as exc:
        message = str(exc)  # the problem in words, with its cell; no class name
        alert(book, "sheetsync", message)
        return message
    alert(book, "sheetsync", report.message, mode="info")
    return report.message


def build() -> None:
    """Build Cohorts button."""
    run_button("build")


def resolve() -> None:
    """Resolve Phase button."""
    run_button("resolve")


def undo() -> None:
    """Undo Phase button."""
    run_button("undo")


def end() -> None:
    """End Battle button."""
    run_button("end")
