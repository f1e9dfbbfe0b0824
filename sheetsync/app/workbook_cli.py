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

    return ExcelBackend(path, before_save=restore)


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
    return usecases.load_battle_into(excel_backend(out), battle)


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
    """The tracker as a macro-enabled workbook with the four buttons on the Battle sheet."""
    from sheetsync.backends.vba import macro_workbook

    return macro_workbook(out)
