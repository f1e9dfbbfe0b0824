"""Workbook commands: template, new, build, resolve, undo, end, export on .xlsx/.xlsm.

Every step on a workbook holds the workbook's step lock from before its read until after
its save (:meth:`ExcelBackend.locked`), so two steps at once run one after the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sheetsync.app import usecases
from sheetsync.sheets.backend import DryRunBackend

if TYPE_CHECKING:  # rich is the terminal's, and optional on the workbook path (issue 25)
    from rich.console import Console

__all__ = ["DryRunBackend", "aftermath_preview", "check_workbook", "export_workbook", "template_bytes", "battle_of_tracker", "demo_system_workbook", "demo_workbook", "system_template",
           "system_tracker_from", "write_system_template", "excel_backend", "new_workbook", "tracker_from", "pools_from_workbook",
           "resolve_workbook", "run_workbook", "undo_workbook", "write_macro_template", "write_template"]


def excel_backend(path: Path, *, save_to: Path | None = None, workbook: Any = None) -> Any:
    """An :class:`ExcelBackend` that puts the Health chart back before each save (openpyxl
    drops charts it reads).  ``save_to`` writes the result there instead of over ``path``.

    Issue 12: the chart and the macros are only rebuilt on the openpyxl path; the package
    path keeps them as they are, the chart's ranges moved on to the phases played."""
    from sheetsync.backends.excel import ExcelBackend
    from sheetsync.backends.xlsx_package import refresh_parts

    def restore(wb: Any) -> None:
        from sheetsync.core.registry import parse_mark, room

        _fit_print_areas(wb)
        if "State" in wb.sheetnames and parse_mark(wb["State"]["B1"].value).system != "bbn":
            return  # the Health chart is the battalion tracker's
        room("bbn", "tracker.template").restore_chart(wb)  # at the tracker's own rows, over every cohort it names (its capacity, issue 9)

    dest = save_to if save_to is not None else path
    serialize = _xlsm_bytes if dest.suffix.lower() == ".xlsm" else None
    return ExcelBackend(path, before_save=restore, serialize=serialize, save_to=save_to, workbook=workbook,
                        package=True, package_hook=refresh_parts)


def _fit_print_areas(wb: Any) -> None:
    """Issue 22: each sheet's print area down to the rows in use, before a save; a tracker
    whose mark or capacity is damaged is left as it is (the step that reads it refuses it)."""
    import json

    from sheetsync.core.errors import SheetSyncError
    from sheetsync.sheets.draw import fit_print_areas

    if "State" not in wb.sheetnames:
        return
    value = wb["State"]["B2"].value
    try:
        capacity = json.loads(value) if isinstance(value, str) and value.strip() else None
        lay = _system_of_workbook(wb).layout(capacity if isinstance(capacity, dict) else None)
    except (SheetSyncError, ValueError, RecursionError, TypeError):
        return
    fit_print_areas(wb, lay)


def _system_of_workbook(wb: Any) -> Any:
    """The rule system a tracker workbook says it is (its ``State!B1`` mark; no mark: the
    battalion system)."""
    from sheetsync.core.registry import MARK_CELL, find_system, parse_mark

    sheet, cell = MARK_CELL
    value = wb[sheet][cell].value if sheet in wb.sheetnames else None
    return find_system(parse_mark(value).system)


def _xlsm_bytes(wb: Any, system: Any = None) -> bytes:
    """A macro-enabled workbook's bytes: openpyxl keeps the VBA project but drops the
    buttons' drawing, so the macros and buttons are put back on every save.  The step
    module and the buttons are ``system``'s (by default the one the workbook's mark names):
    one sub and one button per step (:func:`sheetsync.backends.vba.buttons_for`)."""
    import tempfile

    from sheetsync.backends.vba import (
        buttons_for,
        make_xlsm,
        write_step_module,
        xlwings_vba_modules,
    )

    system = system if system is not None else _system_of_workbook(wb)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tracker.xlsm"
        step_module = write_step_module(system, tmp)
        modules = [*xlwings_vba_modules(), step_module, _macros_dir() / "SheetsyncGuard.bas"]
        make_xlsm(wb, out, modules, buttons_for(system))
        return out.read_bytes()


def _macros_dir() -> Path:
    from sheetsync.backends.vba import MACROS_DIR

    return Path(MACROS_DIR)


def _template_bytes(out: Path, capacity: dict[str, int] | None = None, paper: str = "a4") -> bytes:
    import io

    from sheetsync.core.registry import room
    from sheetsync.sheets.draw import set_paper

    layout = room("bbn", "tracker.layout").layout
    wb = room("bbn", "tracker.template").build_template(layout(capacity=capacity) if capacity else None)
    set_paper(wb, paper)
    if out.suffix.lower() == ".xlsm":
        return _xlsm_bytes(wb)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def template_bytes(system: Any, suffix: str = ".xlsx", capacity: dict[str, int] | None = None,
                   paper: str = "a4") -> bytes:
    """The bytes of a blank tracker of ``system`` (a :class:`~sheetsync.core.system.RuleSystem`),
    as ``sheetsync template`` writes it (``suffix`` .xlsx, or .xlsm with the buttons)."""
    import io

    if system.id == "bbn":
        return _template_bytes(Path("tracker" + suffix), capacity, paper)
    wb = system_template(system, capacity, paper)
    if suffix.lower() == ".xlsm":
        return _xlsm_bytes(wb)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def check_workbook(path: Path) -> tuple[usecases.CheckReport, str]:
    """``sheetsync check`` on a tracker workbook: what the next step would refuse, and the
    word for that step (phase, turn, long tick); nothing is written."""
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix
    from sheetsync.sheets.marks import detect

    check_suffix(path, WORKBOOK_SUFFIXES, "a tracker workbook")
    backend = excel_backend(path)
    with backend.locked():
        tracker = detect(backend)
        system = tracker.system
        if system.id == "bbn":
            return usecases.check(backend, usecases.tracker_layout(backend)), "phase"
        report = usecases.check_steps(system.tracker_steps(tracker.capacity or None), backend)
    return report, "long tick" if system.id == "exalted" else "turn"


def export_workbook(path: Path) -> dict[str, Any]:
    """``sheetsync export``: a tracker workbook's battle state and last events as JSON data."""
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix
    from sheetsync.sheets.marks import detect

    check_suffix(path, WORKBOOK_SUFFIXES, "a tracker workbook")
    backend = excel_backend(path)
    with backend.locked():
        tracker = detect(backend)
        if tracker.system.id == "bbn":
            return usecases.export(backend, usecases.tracker_layout(backend))
        return usecases.export_steps(tracker.system.tracker_steps(tracker.capacity or None), backend)


def write_template(out: Path, *, force: bool = True, capacity: dict[str, int] | None = None,
                   paper: str = "a4") -> Path:
    """A blank tracker at ``out`` (.xlsx, or .xlsm with the buttons), printing on ``paper``
    (``a4`` or ``letter``, issue 22).  An existing file is refused unless ``force``, and when
    replaced it is kept as ``NAME.bak`` (issue: a blank template must never silently replace
    a battle in progress)."""
    from sheetsync.sheets.disk import (
        WORKBOOK_SUFFIXES,
        atomic_write_bytes,
        check_suffix,
        file_lock,
        refuse_existing,
    )

    check_suffix(out, WORKBOOK_SUFFIXES, "a tracker workbook")
    with file_lock(out):
        refuse_existing(out, force)
        atomic_write_bytes(out, _template_bytes(out, capacity, paper), backup=True)
    return out


def new_workbook(out: Path, battle_file: Path, *, force: bool = True, paper: str = "a4") -> usecases.StepReport:
    """A tracker at ``out`` holding the battle of ``battle_file``, written in one save: an
    existing file is refused unless ``force``, and when replaced it is kept as ``NAME.bak``."""
    from sheetsync.core.registry import room
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix, read_data_file

    check_suffix(out, WORKBOOK_SUFFIXES, "a tracker workbook")
    return tracker_from(out, room("bbn", "files.loader").load_battle(read_data_file(battle_file), str(battle_file)),
                        force=force, paper=paper)


def tracker_from(out: Path, battle: Any, *, force: bool = True, paper: str = "a4") -> usecases.StepReport:
    """A tracker at ``out`` holding ``battle`` (a loaded battle), written in one save; the
    same refusal and ``.bak`` as :func:`new_workbook`.  The tracker is laid out with room
    for the battle and more (issue 9, :func:`~sheetsync.systems.bbn.tracker.layout.capacity_for`); a
    battle past the most a tracker holds is refused, naming the limit, and nothing is written."""
    from sheetsync.core.registry import room
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix, refuse_existing

    layout = room("bbn", "tracker.layout")
    check_suffix(out, WORKBOOK_SUFFIXES, "a tracker workbook")
    refuse_existing(out, force)
    lay = layout.layout(capacity=layout.capacity_for(battle))
    room("bbn", "tracker.reader").check_fits(lay, battle)  # before the template is built: a battle too big costs nothing
    from sheetsync.sheets.draw import set_paper

    wb = room("bbn", "tracker.template").build_template(lay)
    set_paper(wb, paper)
    backend = excel_backend(out, workbook=wb)
    with backend.locked():
        refuse_existing(out, force)  # again, under the lock: nobody made it meanwhile
        return usecases.load_battle_into(backend, battle, lay)


def run_workbook(action: str, path: Path, *, out: Path | None = None, paper: str | None = None) -> usecases.StepReport:
    """Run one step on a workbook under its step lock; with ``out`` the result goes there and
    ``path`` is left untouched (``--out``).  ``paper`` (``a4`` or ``letter``, issue 22) puts
    every sheet on that paper after the step; ``None`` keeps the tracker's."""
    from sheetsync.sheets import marks as steps

    backend = _step_backend(path, out)
    with backend.locked():
        report: usecases.StepReport = steps.run(action, backend)
    if paper is not None:
        _repaper(backend.destination, paper)
    return report


def _repaper(path: Path, paper: str) -> None:
    """Every sheet of the workbook at ``path`` on ``paper``, unless it is on it already (a
    save through openpyxl, which puts the chart and the buttons back)."""
    from sheetsync.sheets.draw import set_paper
    from sheetsync.sheets.printing import PAPER

    backend = excel_backend(path)
    with backend.locked():
        wb = backend.workbook
        if all(ws.page_setup.paperSize is not None and int(ws.page_setup.paperSize) == PAPER[paper]
               for ws in wb.worksheets):
            return
        set_paper(wb, paper)
        backend.save()


def _step_backend(path: Path, out: Path | None) -> Any:
    from sheetsync.core.errors import BackendError
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix

    check_suffix(path, WORKBOOK_SUFFIXES, "a tracker workbook")
    if out is None:
        return excel_backend(path)
    if out.suffix.lower() != path.suffix.lower():
        raise BackendError(f"{out}: --out on a workbook must be a workbook of the same kind as {path.name} "
                           f"(a name ending in {path.suffix}); nothing was written")
    return excel_backend(path, save_to=out)


def resolve_workbook(path: Path, *, as_json: bool, console: Console, out: Path | None = None) -> None:
    report = run_workbook("resolve", path, out=out)
    if as_json:
        import json
        import sys

        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
        return
    from sheetsync.core.registry import room

    assert report.result is not None
    data = report.to_json()
    room(data.get("system") or "bbn", "views").print_step(console, data, report.result)
    for line in report.warnings:
        console.print(f"Warning: {line}", style="yellow", highlight=False)
    if out is not None:
        console.print(f"{out}: {report.message} ({path} is unchanged)")
    else:
        console.print(f"{path}: {report.message}")


def undo_workbook(path: Path, *, console: Console, out: Path | None = None) -> None:
    report = run_workbook("undo", path, out=out)
    if out is not None:
        console.print(f"{out}: {report.message} ({path} is unchanged)")
    else:
        console.print(f"{path}: {report.message}")


def pools_from_workbook(path: Path) -> Any:
    """The battle a Build Cohorts would make from the tracker's Cohorts and Characters
    sheets (Cohort Sheet 1.1-1.7), read under the step lock; nothing is written."""
    from sheetsync.core.registry import room
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix
    from sheetsync.sheets.marks import detect

    reader = room("bbn", "tracker.reader")
    check_suffix(path, WORKBOOK_SUFFIXES, "a tracker workbook")
    backend = excel_backend(path)
    with backend.locked():
        lay = room("bbn", "tracker.layout").layout(capacity=detect(backend).capacity)  # the tracker's own rows (issue 9)
        sheets = reader.Sheets.from_grids(backend.read_ranges(reader.read_plan(lay)))
    return reader.parse_battle_setup(lay, sheets)


def aftermath_preview(path: Path) -> usecases.StepReport:
    """What End Battle would write (Battle Aftermath, R26-R30), computed from the stored
    battle with the same dice, and nothing written: ``sheetsync end`` is the step that
    writes it."""
    from sheetsync.sheets import marks as steps

    backend = _step_backend(path, None)
    dry = DryRunBackend(backend)
    with backend.locked():
        report: usecases.StepReport = steps.run("end", dry)
    return report


def demo_workbook(battle_file: Path, out: Path) -> Path:
    """The example battle as a tracker workbook, with phase 1 resolved in it."""
    new_workbook(out, battle_file)
    run_workbook("resolve", out)
    return out


def write_macro_template(out: Path, *, force: bool = True, paper: str = "a4") -> Path:
    """The tracker as a macro-enabled workbook with the four buttons on the Battle sheet
    (desktop Excel: RunPython through open-source xlwings).  Returns the name written
    (``.xlsm``, whatever ``out`` ended in)."""
    if out.suffix.lower() != ".xlsm":
        out = out.with_suffix(".xlsm")
    return write_template(out, force=force, paper=paper)


def system_template(system: Any, capacity: dict[str, int] | None = None, paper: str = "a4") -> Any:
    """A blank tracker of any rule system but the battalion one, drawn from its layout data
    (:func:`sheetsync.sheets.draw.draw_workbook`) with its steps' captions and House Rules."""
    from sheetsync.core.registry import room
    from sheetsync.sheets.draw import draw_workbook

    lay = system.layout(capacity)
    rows = room(system, "tracker.formulas").house_rule_rows()
    return draw_workbook(lay, captions=[st.caption for st in system.steps], house_rules=rows, paper=paper)


def write_system_template(out: Path, system: Any, *, force: bool = True,
                          capacity: dict[str, int] | None = None, paper: str = "a4") -> Path:
    """A blank tracker of ``system`` at ``out``: the same refusal and ``.bak`` as
    :func:`write_template`."""
    import io

    from sheetsync.sheets.disk import (
        WORKBOOK_SUFFIXES,
        atomic_write_bytes,
        check_suffix,
        file_lock,
        refuse_existing,
    )

    check_suffix(out, WORKBOOK_SUFFIXES, "a tracker workbook")
    wb = system_template(system, capacity, paper)
    if out.suffix.lower() == ".xlsm":
        data = _xlsm_bytes(wb)
    else:
        buf = io.BytesIO()
        wb.save(buf)
        data = buf.getvalue()
    with file_lock(out):
        refuse_existing(out, force)
        atomic_write_bytes(out, data, backup=True)
    return out


def system_tracker_from(out: Path, system: Any, battle: Any, *, force: bool = True, paper: str = "a4") -> Any:
    """A tracker of ``system`` at ``out`` holding ``battle``, sized to fit it, written in one
    save (built, ready for its first turn); the battalion one through :func:`tracker_from`."""
    from sheetsync.core.registry import room
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix, refuse_existing

    if system.id == "bbn":
        return tracker_from(out, battle, force=force, paper=paper)

    check_suffix(out, WORKBOOK_SUFFIXES, "a tracker workbook")
    refuse_existing(out, force)
    tracker = room(system, "tracker.steps")
    capacity = tracker.capacity_for(battle)
    backend = excel_backend(out, workbook=system_template(system, capacity, paper))
    with backend.locked():
        refuse_existing(out, force)
        return tracker.load_into(backend, battle, capacity=capacity)


def demo_system_workbook(system: Any, battle: Any, out: Path) -> Path:
    """The example battle of ``system`` as a tracker workbook, its first turn resolved."""
    system_tracker_from(out, system, battle)
    run_workbook("resolve", out)
    return out


def battle_of_tracker(path: Path) -> Any:
    """H1, H2: the battle a hex tracker workbook holds, as its last step left it (Build
    Units, or the last turn resolved), read under the workbook's step lock and never
    written.  A tracker of another system, or one not built yet, is refused saying so."""
    from sheetsync.app import usecases
    from sheetsync.core.errors import BattleStateError, InputError, Problem
    from sheetsync.sheets.marks import detect

    backend = excel_backend(path)
    with backend.locked():
        tracker = detect(backend)
        system = tracker.system
        if system.id != "hexwar":
            raise InputError([Problem(str(path), f"this is a {system.title.lower()} tracker, and sheetsync map draws "
                                                 "hex wargame battles only (a hex tracker, or a battle file with "
                                                 "system: hexwar); nothing was written")])
        try:
            data = usecases.export_steps(system.tracker_steps(tracker.capacity or None), backend)
        except BattleStateError as exc:  # not built yet: say which workbook
            raise BattleStateError(f"{path}: {exc}; nothing was written") from None
    return system.load(data["battle"], str(path))
