"""Workbook commands: template, new, build, resolve, undo, end, export on .xlsx/.xlsm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from sheetsync.app import usecases

__all__ = ["demo_workbook", "excel_backend", "new_workbook", "resolve_workbook", "run_workbook", "undo_workbook",
           "write_template"]


def excel_backend(path: Path) -> Any:
    """An :class:`ExcelBackend` that puts the Health chart back before each save (openpyxl
    drops charts it reads)."""
    from sheetsync.backends.excel import ExcelBackend
    from sheetsync.sheets.layout import layout
    from sheetsync.sheets.template import add_chart

    def restore(wb: Any) -> None:
        ws = wb["Battle"]
        block = layout().block("Battle_HealthByPhase")
        header = [ws.cell(row=block.header_row, column=block.first_col + 1 + i).value for i in range(24)]
        n = sum(1 for h in header if h and not str(h).startswith("Cohort "))
        add_chart(wb, layout(), max(1, n))

    serialize = _xlsm_bytes if path.suffix.lower() == ".xlsm" else None
    return ExcelBackend(path, before_save=restore, serialize=serialize)


BUTTONS = (("Battle", "BuildCohorts", "Build Cohorts", "H2"), ("Battle", "ResolvePhase", "Resolve Phase", "H5"),
           ("Battle", "UndoPhase", "Undo Phase", "K2"), ("Battle", "EndBattle", "End Battle", "K5"))
"""The four buttons of a macro-enabled tracker: (sheet, macro, caption, top-left cell)."""


def _xlsm_bytes(wb: Any) -> bytes:
    """A macro-enabled workbook's bytes: openpyxl keeps the VBA project but drops the
    buttons' drawing, so the macros and buttons are put back on every save."""
    import tempfile

    from sheetsync.backends.vba import make_xlsm, xlwings_vba_modules

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tracker.xlsm"
        modules = [*xlwings_vba_modules(), _macros_dir() / "Sheetsync.bas", _macros_dir() / "SheetsyncGuard.bas"]
        make_xlsm(wb, out, modules, BUTTONS)
        return out.read_bytes()


def _macros_dir() -> Path:
    from sheetsync.backends.vba import MACROS_DIR

    return Path(MACROS_DIR)


def write_template(out: Path) -> Path:
    import io

    from sheetsync.app.files import atomic_write_bytes
    from sheetsync.sheets.template import build_template

    wb = build_template()
    buf = io.BytesIO()
    wb.save(buf)
    atomic_write_bytes(out, buf.getvalue())
    return out


def new_workbook(out: Path, battle_file: Path) -> usecases.StepReport:
    from sheetsync.app.files import read_data_file
    from sheetsync.rules.bbn import load_battle

    battle = load_battle(read_data_file(battle_file), str(battle_file))
    write_template(out)
    backend = excel_backend(out)
    backend.backup = False  # the file was a blank template a moment ago: nothing to keep
    return usecases.load_battle_into(backend, battle)


def run_workbook(action: str, path: Path) -> usecases.StepReport:
    return usecases.run(action, excel_backend(path))


def resolve_workbook(path: Path, *, as_json: bool, console: Console) -> None:
    report = run_workbook("resolve", path)
    if as_json:
        import json
        import sys

        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
        return
    from sheetsync.app.render import print_phase

    assert report.result is not None
    print_phase(console, report.result)
    console.print(f"{path}: {report.message}")


def undo_workbook(path: Path, *, console: Console) -> None:
    report = run_workbook("undo", path)
    console.print(f"{path}: {report.message}")


def demo_workbook(battle_file: Path, out: Path) -> Path:
    """The example battle as a tracker workbook, with phase 1 resolved in it."""
    new_workbook(out, battle_file)
    run_workbook("resolve", out)
    return out


def write_macro_template(out: Path) -> Path:
    """The tracker as a macro-enabled workbook with the four buttons on the Battle sheet
    (desktop Excel: RunPython through open-source xlwings)."""
    from sheetsync.app.files import atomic_write_bytes
    from sheetsync.sheets.template import build_template

    if out.suffix.lower() != ".xlsm":
        out = out.with_suffix(".xlsm")
    atomic_write_bytes(out, _xlsm_bytes(build_template()))
    return out
