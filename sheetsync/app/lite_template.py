"""``sheetsync template battle.xlsx --lite``: a tracker for xlwings Lite (issue 25, §3).

The tracker of any rule system with, in front, a "How to run" sheet that says in three lines
what to do, on the Battle sheet one button per script of :mod:`sheetsync.lite`: a shape
named and linked as xlwings Lite documents sheet buttons
(:mod:`sheetsync.backends.sheet_buttons`), captioned as the system names its steps, and the
xlwings Lite pane's own files inside the workbook (:mod:`sheetsync.backends.lite_code`): a
``requirements.txt`` that lists ``sheetsync`` and a ``main.py`` that imports its scripts, so
the workbook needs nothing typed into the pane.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

__all__ = ["HOW_TO_RUN", "HOW_TO_RUN_SHEET", "lite_bytes", "lite_buttons", "write_lite_template"]

HOW_TO_RUN_SHEET = "How to run"
HOW_TO_RUN = (
    "1. Add xlwings Lite from Excel's add-in store: Home > Add-ins, search for xlwings Lite, click Add.",
    "2. Open the xlwings Lite pane: the xlwings Lite button at the right end of the Home tab.",
    "3. Its requirements.txt already lists sheetsync and its main.py holds the scripts: once the pane has "
    "installed them, the buttons on the Battle sheet run each step.",
)
"""The three lines of the "How to run" sheet, the tracker's first."""


def lite_buttons(system: Any) -> list[Any]:
    """One :class:`~sheetsync.backends.sheet_buttons.ShapeButton` per script of
    :mod:`sheetsync.lite`, captioned as ``system`` names the step it runs."""
    from sheetsync import lite
    from sheetsync.backends.sheet_buttons import ShapeButton
    from sheetsync.core.system import step_of

    out = []
    for script_name, (shape, cell, caption) in lite.BUTTONS.items():
        action = lite.STEP_ACTIONS.get(script_name)
        label = step_of(system, action).caption if action else caption
        out.append(ShapeButton(shape, label, cell))
    return out


def _how_to_run(wb: Any) -> None:
    from openpyxl.styles import Alignment, Font

    ws = wb.create_sheet(HOW_TO_RUN_SHEET, 0)
    for row, line in enumerate(HOW_TO_RUN, start=1):
        cell = ws.cell(row=row, column=1, value=line)
        cell.font = Font(size=12)
        cell.alignment = Alignment(vertical="center")
        ws.row_dimensions[row].height = 24
    ws.column_dimensions["A"].width = 120
    wb.active = 0
    for sheet in wb.worksheets[1:]:
        sheet.sheet_view.tabSelected = False


def lite_bytes(system: Any, capacity: dict[str, int] | None = None, *, requirement: str = "sheetsync") -> bytes:
    """The bytes of ``system``'s blank tracker for xlwings Lite (an .xlsx), its pane's
    ``requirements.txt`` naming ``requirement`` for sheetsync."""
    from sheetsync.backends.lite_code import MAIN_PY, requirements_txt, with_lite_code
    from sheetsync.backends.sheet_buttons import add_shape_buttons
    from sheetsync.core.registry import room
    from sheetsync.lite import BUTTON_SHEET
    from sheetsync.web import XLWINGS_VERSION

    if system.id == "bbn":
        layout = room("bbn", "tracker.layout").layout
        wb = room("bbn", "tracker.template").build_template(layout(capacity=capacity) if capacity else None)
    else:
        from sheetsync.app.workbook_cli import system_template

        wb = system_template(system, capacity)
    _how_to_run(wb)
    buf = io.BytesIO()
    wb.save(buf)
    with_buttons = add_shape_buttons(buf.getvalue(), BUTTON_SHEET, lite_buttons(system))
    return with_lite_code(with_buttons, {"main.py": MAIN_PY, "requirements.txt": requirements_txt(XLWINGS_VERSION, requirement)})


def write_lite_template(out: Path, system: Any, *, force: bool = True) -> Path:
    """``system``'s blank tracker for xlwings Lite at ``out`` (an .xlsx: xlwings Lite needs no
    macros); an existing file is refused unless ``force``, and when replaced kept as
    ``NAME.bak``, as every template is."""
    from sheetsync.core.errors import InputError, Problem
    from sheetsync.sheets.disk import atomic_write_bytes, file_lock, refuse_existing

    if out.suffix.lower() != ".xlsx":
        raise InputError([Problem(str(out), "a tracker for xlwings Lite is an .xlsx workbook (it needs no macros): "
                                            "name it battle.xlsx; nothing was written")])
    data = lite_bytes(system)
    with file_lock(out):
        refuse_existing(out, force)
        atomic_write_bytes(out, data, backup=True)
    return out
