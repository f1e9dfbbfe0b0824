"""The tracker's buttons inside Excel through xlwings Lite (issue 25, §3).

xlwings Lite is a free Excel add-in that runs Python through Pyodide, in the browser runtime
of Office add-ins, on Windows, macOS and Excel on the web.  A *script* there is a function
decorated with ``@script`` whose one ``xw.Book`` argument is the workbook the add-in hands
it (https://lite.xlwings.org/custom-scripts).  This module holds one script per step of the
trackers of every rule system:

========== =============================================================================
Build      Build Cohorts (bbn), Build Units (hexwar, exalted)
Check      the dry run of the next resolve; writes nothing, says what would be refused
Resolve    Resolve Phase (bbn), Resolve Turn (hexwar), Next Tick (exalted)
Undo       Undo Phase, Undo Turn, Undo Tick
End Battle End Battle
Forecast   the Forecast sheet (as ``sheetsync forecast --write``)
Report     the Report sheet: the after-action report (as ``sheetsync report --md``)
========== =============================================================================

The tracker tells its own system (its mark, ``State!B1``), so one script serves all three
systems.  Every script goes through :class:`~sheetsync.backends.xlwings_backend.XlwingsBackend`
on the book it is given, the same use cases as the CLI, the desktop buttons and the
endpoint.  A step that fails says why in a message box (the error with its cell, as the
desktop buttons do) and writes nothing.

Each script is also a sheet button: ``sheetsync template battle.xlsx --lite`` draws a shape
named as in :data:`BUTTONS` over the cell it names, linked to that cell, which is how
xlwings Lite documents sheet buttons (``@script(button="[shape]Sheet!Cell")``).

Importing this module needs xlwings (which xlwings Lite provides) and nothing else: the
rest of sheetsync is imported when a script runs.
"""

from __future__ import annotations

from typing import Any

import xlwings as xw
from xlwings import script

__all__ = ["build", "check", "end_battle", "forecast", "report", "resolve", "undo"]

#: Each script's sheet button: the shape's name and the Battle sheet cell it covers and links
#: to.  The four steps sit where the macro-enabled tracker's buttons sit
#: (:data:`sheetsync.backends.vba.BUTTON_ANCHORS`), the other three beside them.
BUTTONS: dict[str, tuple[str, str, str]] = {
    # script: (shape name, cell on the Battle sheet, caption when the system names no step)
    "build": ("sheetsync_build", "H2", "Build"),
    "resolve": ("sheetsync_resolve", "H5", "Resolve"),
    "undo": ("sheetsync_undo", "K2", "Undo"),
    "end_battle": ("sheetsync_end", "K5", "End Battle"),
    "check": ("sheetsync_check", "N2", "Check"),
    "forecast": ("sheetsync_forecast", "N5", "Forecast"),
    "report": ("sheetsync_report", "Q2", "Report"),
}
BUTTON_SHEET = "Battle"
#: The step action each step script runs.
STEP_ACTIONS = {"build": "build", "resolve": "resolve", "undo": "undo", "end_battle": "end"}
FORECAST_RUNS = 10000
FORECAST_STEPS = 12
REPORT_SHEET = "After-action Report"
TITLE = "sheetsync"


def button(name: str) -> str:
    """The ``button`` argument of ``@script`` for the script ``name``: ``[shape]Battle!H2``."""
    shape, cell, _caption = BUTTONS[name]
    return f"[{shape}]{BUTTON_SHEET}!{cell}"


# -- the scripts ---------------------------------------------------------------------------


@script(name="Build", button=button("build"), show_taskpane=True)
def build(book: xw.Book) -> None:
    """Build the tracker: pools (bbn) or every unit's values (hexwar, exalted) from its sheets."""
    _step(book, "build")


@script(name="Check", button=button("check"), show_taskpane=True)
def check(book: xw.Book) -> None:
    """What the next resolve would refuse, and why. Writes nothing."""
    _guarded(book, _check)


@script(name="Resolve", button=button("resolve"), show_taskpane=True)
def resolve(book: xw.Book) -> None:
    """Resolve the next phase, turn or long tick."""
    _step(book, "resolve")


@script(name="Undo", button=button("undo"), show_taskpane=True)
def undo(book: xw.Book) -> None:
    """Undo the last resolved phase, turn or long tick."""
    _step(book, "undo")


@script(name="End Battle", button=button("end_battle"), show_taskpane=True)
def end_battle(book: xw.Book) -> None:
    """End the battle: the aftermath."""
    _step(book, "end")


@script(name="Forecast", button=button("forecast"), show_taskpane=True)
def forecast(book: xw.Book, runs: int = FORECAST_RUNS) -> None:
    """Simulate the battle from where it stands and write the Forecast sheet."""
    _guarded(book, lambda b: _forecast(b, runs))


@script(name="Report", button=button("report"), show_taskpane=True)
def report(book: xw.Book) -> None:
    """Write the after-action report on the After-action Report sheet."""
    _guarded(book, _report)


# -- what they do --------------------------------------------------------------------------


def _tell(book: Any, message: str, *, error: bool) -> str:
    """The message box the desktop buttons show; where the add-in has none, the script's
    output (xlwings Lite shows what a script prints)."""
    from sheetsync.backends.xlwings_backend import alert
    from sheetsync.core.errors import BackendError

    try:
        alert(book, TITLE, message, mode="critical" if error else "info")
    except BackendError:
        print(f"{TITLE}: {message}")
    return message


def _guarded(book: Any, work: Any) -> str:
    """Run ``work(book)`` (which writes, if at all, only once all is known); a
    :class:`~sheetsync.core.errors.SheetSyncError` becomes the message box, as a desktop
    button's does, and nothing is written."""
    from sheetsync.core.errors import SheetSyncError

    try:
        message = str(work(book))
    except SheetSyncError as exc:
        return _tell(book, str(exc), error=True)
    return _tell(book, message, error=False)


def _step(book: Any, action: str) -> str:
    """A tracker step: the same entry point as the desktop buttons
    (:func:`sheetsync.app.buttons.run_button`), on the book xlwings Lite hands the script."""
    from sheetsync.app.buttons import run_button

    return run_button(action, book)


def _word(system_id: str) -> str:
    return {"bbn": "phase", "exalted": "long tick"}.get(system_id, "turn")


def _check(book: Any) -> str:
    """``sheetsync check`` on the book: one read, nothing written."""
    from sheetsync.app.usecases import check_steps
    from sheetsync.backends.xlwings_backend import XlwingsBackend
    from sheetsync.core.errors import BattleStateError
    from sheetsync.sheets.marks import detect

    backend = XlwingsBackend(book)
    tracker = detect(backend)
    found = check_steps(tracker.system.tracker_steps(tracker.capacity or None), backend)
    text = check_text(found, _word(tracker.system.id))
    if found.refusals:
        raise BattleStateError(text)
    return text


def check_text(found: Any, word: str) -> str:
    """The check's outcome in words, as ``sheetsync check`` prints it."""
    if not found.refusals:
        return f"{word.capitalize()} {found.phase} would resolve every order ({found.orders}); none is refused."
    n = len(found.refusals)
    if found.bad_cells:
        lines = [f"{word.capitalize()} {found.phase} cannot be resolved yet: {n} bad cell{'' if n == 1 else 's'}"]
        lines += [f"{r.where}: {r.reason}" for r in found.refusals]
    else:
        lines = [f"{word.capitalize()} {found.phase}: {n} of {found.orders} "
                 f"order{'' if found.orders == 1 else 's'} would be refused"]
        lines += [f"{r.where} ({r.cohort}, {r.task}): {r.reason}" for r in found.refusals]
    lines.append("Nothing was written. Fix these, then run the check again or resolve.")
    return "\n".join(lines)


def _forecast(book: Any, runs: int) -> str:
    """``sheetsync forecast --write`` on the book: read as a step reads, simulate here (one
    process: Pyodide has no others), then the Forecast sheet in one write."""
    from sheetsync.app import forecast_io
    from sheetsync.backends.xlwings_backend import XlwingsBackend

    backend = XlwingsBackend(book)
    system_id, battle, places = forecast_io.battle_of_backend(backend)
    data = forecast_io.run_forecast(battle, system_id, places, runs=runs, phases=FORECAST_STEPS, seed=None,
                                    workers=1, console=None)
    sheet = forecast_io.forecast_sheet(data, book.name)
    cells = {(c.row, c.col): c.value for c in sheet.cells}
    percent = sorted((c.row, c.col) for c in sheet.cells if c.style == "pct")
    write_sheet(book, backend, forecast_io.SHEET, cells, percent)
    return f"Forecast sheet written ({data['runs']} simulated battles)."


def _report(book: Any) -> str:
    """``sheetsync report`` on the book: the account read as the CLI reads a tracker, its
    Markdown (charts as tables) one line a row on the Report sheet."""
    from sheetsync.app.report import _tracker_source, account_of, to_markdown
    from sheetsync.backends.xlwings_backend import XlwingsBackend

    backend = XlwingsBackend(book)
    acc = account_of(_tracker_source(backend, book.name, "workbook"))
    lines = to_markdown(acc, images=False).rstrip("\n").split("\n")
    write_sheet(book, backend, REPORT_SHEET, {(i, 1): line or None for i, line in enumerate(lines, start=1)}, [])
    return f"Report sheet written ({len(acc.steps)} {acc.step_word}{'' if len(acc.steps) == 1 else 's'})."


def write_sheet(book: Any, backend: Any, name: str, cells: dict[tuple[int, int], Any],
                percent: list[tuple[int, int]]) -> None:
    """Fill sheet ``name`` (added after the last sheet, or emptied when it is there) with
    ``cells`` in one backend write, and give the ``percent`` cells a percentage format."""
    from sheetsync.core.a1 import col_letter, quote_sheet
    from sheetsync.sheets.backend import RangeUpdate

    rows = max((r for r, _ in cells), default=1)
    cols = max((c for _, c in cells), default=1)
    grid: list[list[Any]] = [[None] * cols for _ in range(rows)]
    for (r, c), value in cells.items():
        grid[r - 1][c - 1] = value
    sheets = list(book.sheets)
    sheet = next((s for s in sheets if s.name.casefold() == name.casefold()), None)
    if sheet is None:
        sheet = book.sheets.add(name=name, after=sheets[-1])
    else:
        sheet.clear_contents()
    backend.write_ranges([RangeUpdate(f"{quote_sheet(sheet.name)}!A1:{col_letter(cols)}{rows}", grid)])
    for (r, c1), c2 in _runs(percent):
        sheet.range((r, c1), (r, c2)).number_format = "0.0%"


def _runs(cells: list[tuple[int, int]]) -> list[tuple[tuple[int, int], int]]:
    """Sorted cells as runs along their rows: ((row, first column), last column)."""
    out: list[tuple[tuple[int, int], int]] = []
    for r, c in cells:
        if out and out[-1][0][0] == r and out[-1][1] == c - 1:
            out[-1] = (out[-1][0], c)
        else:
            out.append(((r, c), c))
    return out
