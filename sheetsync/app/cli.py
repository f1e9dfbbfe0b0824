"""``sheetsync``: the command line.  A thin shell over the use cases: it catches
:class:`SheetSyncError` only, and prints ``error: message`` (the problem first, no Python
class name) without a traceback, exit code 1."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from sheetsync.core.errors import SheetSyncError

__all__ = ["app", "main"]

app = typer.Typer(
    name="sheetsync",
    help="Run battalion-scale mass combat from a spreadsheet: cohort pools, phases, aftermath.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # plain help: this typer's rich panels show every flag as "--json <bool>"
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class _LazyConsole:
    """A rich ``Console`` made on first use: ``sheetsync --help`` and ``--json`` never
    import rich (issue 12).  Every attribute, ``isinstance`` and ``with`` go to the real one."""

    def __init__(self, **options: Any) -> None:
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_real", None)

    def _get(self) -> Any:
        real = object.__getattribute__(self, "_real")
        if real is None:
            from rich.console import Console

            real = Console(**object.__getattribute__(self, "_options"))
            object.__setattr__(self, "_real", real)
        return real

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(console, Console) holds
        return type(self._get())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._get(), name, value)

    def __enter__(self) -> Any:
        return self._get().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._get().__exit__(*exc)


console: Any = _LazyConsole()
err_console: Any = _LazyConsole(stderr=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _print_json(data: Any) -> None:
    import json

    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("sheetsync")
        except PackageNotFoundError:  # running from a source tree that was never installed
            number = "unknown"
        console.print(f"sheetsync {number}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", callback=_version,
                                          is_eager=True)] = False,
) -> None:
    """Run battalion-scale mass combat from a spreadsheet: cohort pools, phases, aftermath."""


def _is_workbook(path: Path) -> bool:
    """A tracker workbook (.xlsx/.xlsm); anything else must be a battle file (.yaml, .yml,
    .json), and any other name is refused in one line that says what to do."""
    from sheetsync.sheets.disk import BATTLE_SUFFIXES, WORKBOOK_SUFFIXES, check_suffix

    check_suffix(path, BATTLE_SUFFIXES + WORKBOOK_SUFFIXES, "a battle file or a tracker workbook")
    return path.suffix.lower() in WORKBOOK_SUFFIXES


def _workbook_only(path: Path) -> None:
    from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, check_suffix

    check_suffix(path, WORKBOOK_SUFFIXES, "a tracker workbook")


def _load(path: Path, seed: int | None = None) -> Any:
    """A battalion battle file (the commands that only the battalion system has)."""
    system, battle = _load_any(path, seed)
    if system.id != "bbn":
        from sheetsync.core.errors import BackendError

        raise BackendError(f"{path} is a {system.title} battle (system: {system.id}); this command is for "
                           "battalion battles")
    return battle


def _load_any(path: Path, seed: int | None = None) -> tuple[Any, Any]:
    """A battle file of any rule system: its ``system:`` key picks the system (none: the
    battalion system), which checks the file and reports every problem with its path."""
    from sheetsync.core.registry import system_of_data
    from sheetsync.sheets.disk import BATTLE_SUFFIXES, check_suffix, read_data_file

    check_suffix(path, BATTLE_SUFFIXES, "a battle file")
    data = read_data_file(path)
    if seed is not None and isinstance(data, dict):
        data["seed"] = seed
    system = system_of_data(data)
    return system, system.load(data, str(path))


def _ensure_seed(battle: Any) -> Any:
    """A battle with no seed gets a fresh one, recorded in its output so it can be replayed (R25)."""
    if battle.seed is None:
        import secrets

        return battle.model_copy(update={"seed": secrets.randbelow(10**9)})
    return battle


def _needs_tracker(system: Any) -> None:
    """A system without a tracker workbook (``has_tracker = False``) is refused before any
    file or spreadsheet is touched."""
    if not getattr(system, "has_tracker", True):
        from sheetsync.core.errors import BattleStateError

        raise BattleStateError(f"the {system.title} tracker workbook is not built yet; use a battle file "
                               f"(sheetsync demo --system {system.id} writes an example)")


def _other_workbook(file: Path, what: str, as_json: bool) -> bool:
    """``pools``, ``aftermath``, ``status``, ``export`` and ``check`` on a tracker of a
    system other than the battalion one (its State!B1 mark says which); nothing is
    written.  Returns False for a battalion tracker, which the caller handles."""
    from sheetsync.app import usecases
    from sheetsync.app.workbook_cli import excel_backend
    from sheetsync.sheets.marks import detect

    backend = excel_backend(file)
    with backend.locked():
        tracker = detect(backend)
        system = tracker.system
        if system.id == "bbn":
            return False
        tracker_steps = system.tracker_steps(tracker.capacity or None)  # the system's steps, one read each
        if what == "check":
            report = usecases.check_steps(tracker_steps, backend)
        else:
            data = usecases.export_steps(tracker_steps, backend)
    if what == "check":
        from sheetsync.app.check_view import print_check

        if as_json:
            _print_json(report.to_json())
        else:
            print_check(console, report, str(file), word="long tick" if system.id == "exalted" else "turn")
        if report.refusals:
            raise typer.Exit(1)
        return True
    if what == "export":
        _print_json(data)
        return True
    _other_workbook_view(what, system, system.load(data["battle"], str(file)), data, file, as_json)
    return True


def _other_workbook_view(what: str, system: Any, battle: Any, data: dict[str, Any], file: Path, as_json: bool) -> None:
    """``pools``, ``aftermath`` and ``status`` of a hex tracker (H10, H12) or an Exalted one
    (X1-X11, X40-X41, E5), through the system's own views."""
    from sheetsync.core.registry import room

    views = room(system, "views")
    if what in ("pools", "aftermath"):
        out = system.pools_json(battle) if what == "pools" else system.aftermath_json(battle)
        if as_json:
            _print_json(out)
        elif what == "pools":
            views.print_values(console, out)
        else:
            views.print_aftermath(console, out)
        return
    if system.id == "exalted":
        ended = " The battle has ended (End Battle wrote the Aftermath)." if data.get("ended") else ""
        console.print(f"{file}: long tick {battle.tick}.{ended}")
    else:
        ended = " The battle has ended (End Battle wrote the report)." if data.get("ended") else ""
        console.print(f"{file}: turn {battle.turn} to resolve.{ended}")
    views.print_units(console, room(system, "rules").units_json(battle))


@app.command(short_help="Every cohort's pools, with who gave what.")
def pools(file: Path, as_json: JsonOpt = False) -> None:
    """Compute every cohort's pools from the members' sheets, with who gave what (a battle
    file, or a workbook's Cohorts and Characters sheets: nothing is written)."""
    if _is_workbook(file) and _other_workbook(file, "pools", as_json):
        return
    if _is_workbook(file):
        from sheetsync.app.workbook_cli import pools_from_workbook

        battle = pools_from_workbook(file)
    else:
        system, battle = _load_any(file)
        if system.id != "bbn":
            data = system.pools_json(battle)
            if as_json:
                _print_json(data)
                return
            from sheetsync.core.registry import room

            room(system, "views").print_values(console, data)
            return
    if as_json:
        _print_json({"cohorts": [pools_json(p) for p in battle.pools.values()]})
        return
    from sheetsync.core.registry import room

    room("bbn", "views").print_pools(console, battle.pools.values())


def pools_json(p: Any) -> dict[str, Any]:
    return {
        "name": p.name,
        "actions": p.actions,
        "pools": p.pools,
        "breakdown": {k: [c.model_dump(mode="json") for c in v] for k, v in p.breakdown.items()},
        "not_counted": [n.model_dump(mode="json") for n in p.not_counted],
    }


@app.command(short_help="Resolve the next phase's orders (battle file or workbook).")
def resolve(
    file: Path,
    as_json: JsonOpt = False,
    out: Annotated[Path | None, typer.Option(
        help="Write the new battle state here (a battle file; for a workbook, a copy of it, the original untouched).")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed for dice not typed in (battle files only).")] = None,
) -> None:
    """Resolve the declared orders of the next phase (a battle file, or a workbook)."""
    if _is_workbook(file):
        from sheetsync.app.workbook_cli import resolve_workbook

        if seed is not None:
            _refuse_workbook_seed(file)
        resolve_workbook(file, as_json=as_json, console=console, out=out)
        return
    system, loaded = _load_any(file, seed)
    step = system.resolve_file(_ensure_seed(loaded))
    if out is not None:
        from sheetsync.sheets.disk import dump_battle_file

        dump_battle_file(system.dump(step.battle), out)
    if as_json:
        _print_json(step.json)
        return
    from sheetsync.core.registry import room

    room(system, "views").print_step(console, step.json, step.result)
    if out is None:
        return
    if system.id == "bbn":
        console.print(f"New battle state written to {out}; resolve it for phase {step.result.phase + 1}.")
    elif system.id == "exalted":
        console.print(f"The battle after long tick {step.json['tick']} written to {out}; type the next orders "
                      "under orders:, then resolve it.")
    else:
        console.print(f"Next turn's battle written to {out}: type turn {step.battle.turn}'s moves and attacks "
                      "under turn:, then resolve it.")


def _refuse_workbook_seed(file: Path) -> None:
    """R25: a tracker's dice come from the seed stored at Build Cohorts and the phase
    number, so that a phase resolved again after an Undo rolls the same dice.  A one-off
    ``--seed`` would break that, so it is refused on a workbook."""
    from sheetsync.core.errors import BackendError

    raise BackendError(f"{file}: --seed can't be used on a workbook; nothing was written. A tracker's dice come from "
                       "the seed stored when the cohorts were built and the phase number, so that a phase resolved "
                       "again after Undo rolls the same dice (R25). Type your own dice in the Orders sheet's Roll "
                       "column instead, or set Battle!B6 (Dice seed) before Build Cohorts")


@app.command(short_help="Undo the last resolved phase.")
def undo(
    file: Path,
    out: Annotated[Path | None, typer.Option(
        help="Where to write the restored battle (default: in place; for a workbook, a copy, the original untouched).")] = None,
) -> None:
    """Undo the last resolved phase: the battle exactly as it was before it."""
    if _is_workbook(file):
        from sheetsync.app.workbook_cli import undo_workbook

        undo_workbook(file, console=console, out=out)
        return
    from sheetsync.sheets.disk import dump_battle_file

    system, loaded = _load_any(file)
    step = system.undo_file(loaded)
    battle = step.battle
    dump_battle_file(system.dump(battle), out or file)
    if system.id == "bbn":
        console.print(f"Phase {battle.phase} undone; {len(battle.orders)} orders are pending again ({out or file}).")
    elif system.id == "exalted":
        console.print(f"Long tick undone: back at long tick {battle.tick}; {len(battle.orders)} orders are pending "
                      f"again ({out or file}).")
    else:
        typed = len(battle.orders.moves) + len(battle.orders.attacks)
        console.print(f"Turn {battle.turn} undone; its {typed} moves and attacks are pending again ({out or file}).")


@app.command(short_help="The aftermath: damage, Aegis, Torpor, lasting effects.")
def aftermath(file: Path, as_json: JsonOpt = False) -> None:
    """Battle Aftermath (R26-R30): each character's damage, Aegis, Torpor, lasting effects.
    On a workbook it previews what `sheetsync end` would write, and writes nothing."""
    from sheetsync.core.dice import RandomRoller
    from sheetsync.core.registry import room

    rules = room("bbn", "rules")
    if _is_workbook(file) and _other_workbook(file, "aftermath", as_json):
        return
    if _is_workbook(file):
        from sheetsync.app.workbook_cli import aftermath_preview

        report = aftermath_preview(file)
        entries = [rules.AftermathEntry.model_validate(c) for c in (report.aftermath or {}).get("characters", [])]
    else:
        system, loaded = _load_any(file)
        if system.id != "bbn":
            data = system.aftermath_json(loaded)
            if as_json:
                _print_json(data)
                return
            room(system, "views").print_aftermath(console, data)
            return
        battle = _ensure_seed(loaded)
        entries = rules.aftermath(battle, RandomRoller(f"{battle.seed}:aftermath"))
    if as_json:
        _print_json(rules.aftermath_json(entries))
        return
    room("bbn", "views").print_aftermath(console, entries)


class Paper(str, Enum):
    """The paper a tracker prints on (issue 22)."""

    a4 = "a4"
    letter = "letter"


PaperOpt = Annotated[Paper, typer.Option("--paper", case_sensitive=False,
                                        help="The paper every sheet prints on: a4 (the default) or letter.")]
SystemOpt = Annotated[str, typer.Option("--system", help="The rule system: bbn (Baltimore by Night battalion "
                                                         "combat, the default), hexwar (the hex wargame) or "
                                                         "exalted (Exalted 2e mass combat); see sheetsync "
                                                         "systems.")]


@app.command(short_help="Run the embedded example battle.")
def demo(
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the demo writes its files.")] = Path("sheetsync-demo"),
    as_json: JsonOpt = False,
    system_name: SystemOpt = "bbn",
) -> None:
    """Build the embedded example battle, resolve one phase (or turn), and show the result."""
    from sheetsync.core.registry import find_system

    system = find_system(system_name)
    if system.id == "exalted":
        from sheetsync.app.demo import demo as demo_exalted

        demo_exalted(console, system, out_dir, as_json, _print_json)
        return
    if system.id != "bbn":
        _demo_other(system, out_dir, as_json)
        return
    from sheetsync.core.registry import room
    from sheetsync.sheets.disk import dump_battle_file, example_path

    rules = room(system, "rules")
    battle = _load(example_path())
    result = rules.resolve_phase(battle)
    out_dir.mkdir(parents=True, exist_ok=True)
    dump_battle_file(room(system, "files.loader").battle_to_file(result.battle), out_dir / "after-phase-1.yaml")
    from sheetsync.app.workbook_cli import demo_workbook

    workbook = demo_workbook(example_path(), out_dir / "demo-tracker.xlsx")
    if as_json:
        _print_json({"pools": [pools_json(p) for p in battle.pools.values()], "resolve": result.to_json(),
                     "workbook": str(workbook) if workbook else None})
        return
    views = room(system, "views")
    console.rule("sheetsync demo: the example battle")
    views.print_pools(console, battle.pools.values(), breakdown=False)
    views.print_phase(console, result)
    console.print(f"Battle state after phase 1: {out_dir / 'after-phase-1.yaml'}")
    if workbook:
        console.print(f"The same battle as a tracker workbook, phase 1 resolved: {workbook}")


def _demo_other(system: Any, out_dir: Path, as_json: bool) -> None:
    """The hex wargame's demo: the embedded battle (the text's units, 7.0, at a pass between
    impassable mountains as at Vulcan's Gap, 5.1), its first turn resolved, the next turn's
    battle file, a picture of the map after the turn, and the same battle as a tracker."""
    import yaml

    from sheetsync.core.registry import room
    from sheetsync.sheets.disk import dump_battle_file

    data = yaml.safe_load(system.example_data())
    battle = system.load(data, f"the embedded {system.id} example")
    step = system.resolve_file(battle)
    out_dir.mkdir(parents=True, exist_ok=True)
    example = out_dir / f"{system.id}-example.yaml"
    example.write_text(system.example_data(), encoding="utf-8")
    after = out_dir / f"{system.id}-after-turn-1.yaml"
    dump_battle_file(system.dump(step.battle), after)
    picture = out_dir / f"{system.id}-map-after-turn-1.png"
    room(system, "picture").save_map_png(step.battle, picture)
    from sheetsync.app.workbook_cli import demo_system_workbook

    workbook = demo_system_workbook(system, battle, out_dir / f"{system.id}-tracker.xlsx")
    if as_json:
        _print_json({"system": system.id, "values": system.pools_json(battle), "resolve": step.json,
                     "files": {"example": str(example), "after": str(after), "map": str(picture),
                               "workbook": str(workbook) if workbook else None}})
        return
    console.rule(f"sheetsync demo: the example {system.title.lower()} battle")
    room(system, "views").print_step(console, step.json, step.result)
    console.print(f"The example battle file: {example}")
    console.print(f"Next turn's battle file: {after}")
    console.print(f"The map after turn 1: {picture}")
    if workbook:
        console.print(f"The same battle as a tracker workbook, turn 1 resolved: {workbook}")


@app.command("systems", short_help="The rule systems sheetsync runs.")
def systems(as_json: JsonOpt = False) -> None:
    """The rule systems: their ids (for --system and a battle file's system: key), other
    names, and the steps their trackers' buttons run."""
    from sheetsync.core.registry import ALIASES, find_system, system_ids

    rows = []
    for key in system_ids():
        sys_ = find_system(key)
        rows.append({"id": sys_.id, "title": sys_.title, "version": sys_.version,
                     "aliases": sorted(a for a, k in ALIASES.items() if k == key),
                     "tracker": bool(getattr(sys_, "has_tracker", True)),
                     "steps": [{"action": st.action, "caption": st.caption} for st in sys_.steps]})
    if as_json:
        _print_json({"systems": rows})
        return
    from rich.table import Table

    table = Table(title="Rule systems", header_style="bold")
    table.add_column("Id", no_wrap=True)
    table.add_column("System", no_wrap=True)
    table.add_column("Also", overflow="fold")
    table.add_column("Buttons", overflow="fold")
    for r in rows:
        buttons = ", ".join(st["caption"] for st in r["steps"])
        if not r["tracker"]:
            buttons = f"battle files only for now (its tracker's steps will be {buttons})"
        table.add_row(f"{r['id']}@{r['version']}", r["title"], ", ".join(r["aliases"]), buttons)
    console.print(table)


@app.command(short_help="Write a blank tracker workbook.")
def template(
    out: Annotated[Path | None, typer.Argument(help="The tracker workbook to write (.xlsx or .xlsm).")] = None,
    macros: Annotated[bool, typer.Option("--macros", help="A macro-enabled .xlsm with the four buttons.")] = False,
    lite: Annotated[bool, typer.Option("--lite", help="For xlwings Lite (Excel's free Python add-in): a How to run "
                                                      "sheet first, and a button per step on the Battle sheet.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file (kept as NAME.bak).")] = False,
    system_name: SystemOpt = "bbn",
    csv_out: Annotated[Path | None, typer.Option(
        "--csv", help="Instead, write an empty CSV with the system's Characters (or Units) headers, for "
                      "sheetsync import.")] = None,
    sheet: Annotated[str | None, typer.Option(
        "--sheet", help="With --csv for Exalted: characters or units (default: units when the CSV's name says "
                        "so).")] = None,
    paper: PaperOpt = Paper.a4,
) -> None:
    """Write a blank tracker workbook (.xlsx, or .xlsm with --macros) for a rule system, or
    with --csv the empty CSV of its characters or units.

    --system bbn (the default): Cohorts and Characters, for Baltimore by Night battalion
    combat. hexwar: the Battle sheet's map and the Units sheet, for the hex wargame.
    exalted: Characters and Units, for Exalted 2e mass combat."""
    from sheetsync.core.registry import find_system

    if csv_out is not None:
        _template_csv(csv_out, out, macros=macros, force=force, system_name=system_name, sheet=sheet)
        return
    if out is None:
        from sheetsync.core.errors import InputError, Problem

        raise InputError([Problem("OUT", "name the tracker workbook to write (sheetsync template battle.xlsx), or "
                                  "write the CSV of characters with --csv chars.csv")])
    _workbook_only(out)
    system = find_system(system_name)
    _needs_tracker(system)
    if lite:
        _template_lite(out, system, macros=macros, force=force)
        return
    if system.id != "bbn":
        from sheetsync.app.workbook_cli import write_system_template

        target = out.with_suffix(".xlsm") if macros else out
        written = write_system_template(target, system, force=force, paper=paper.value)
        fill = ("the Characters and Units sheets" if system.id == "exalted"
                else "the Battle sheet's map and the Units sheet")
        console.print(f"Blank {system.title.lower()} tracker written to {written}. Fill in {fill}, then: "
                      f"sheetsync build {written}")
        return
    if macros or out.suffix.lower() == ".xlsm":
        from sheetsync.app.workbook_cli import write_macro_template

        written = write_macro_template(out, force=force, paper=paper.value)
    else:
        from sheetsync.app.workbook_cli import write_template

        written = write_template(out, force=force, paper=paper.value)
    console.print(f"Blank tracker written to {written}. Fill in Cohorts and Characters, then: sheetsync build {written}")


def _template_lite(out: Path, system: Any, *, macros: bool, force: bool) -> None:
    """``template --lite``: the tracker for xlwings Lite (an .xlsx; its buttons need no macros)."""
    from sheetsync.app.lite_template import write_lite_template
    from sheetsync.core.errors import InputError, Problem

    if macros:
        raise InputError([Problem("--lite", "a tracker for xlwings Lite needs no macros: use --lite or --macros, "
                                            "not both; nothing was written")])
    written = write_lite_template(out, system, force=force)
    console.print(f"Tracker for xlwings Lite written to {written}. Open it in Excel and follow its How to run "
                  "sheet.", highlight=False, soft_wrap=True)


_COHORT_HELP = ("From a .gex: pick a cohort, without listing names by its coterie, sect or clan "
                "(\"Night Watch=coterie:Night Watch\", \"Warlocks=clan:Tremere\", \"clan:Tremere\"), or by its "
                "members (\"Hunters=Ana,Ben,Cy\"); repeat for each cohort. Only the cohorts picked are imported.")


@app.command(short_help="A tracker (or battle file) from a battle file or Grapevine.")
def new(
    workbook: Path,
    from_file: Annotated[list[Path], typer.Option(
        "--from", help="A battle file (YAML or JSON), or Grapevine exchange files (.gex) of characters (repeat "
                       "--from for each).")],
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file (kept as NAME.bak).")] = False,
    cohort_by: Annotated[str, typer.Option(
        "--cohort-by", help="From a .gex: one cohort per coterie, sect or clan.")] = "coterie",
    only: Annotated[list[str] | None, typer.Option(
        "--only", help="From a .gex: take only this character (repeat, or separate names with commas).")] = None,
    cohort: Annotated[list[str] | None, typer.Option(
        "--cohort", metavar="NAME=PICK", help=_COHORT_HELP)] = None,
    paper: PaperOpt = Paper.a4,
) -> None:
    """Create a tracker workbook from a battle file: characters, state, ranges and orders.

    From Grapevine .gex files (repeat --from for the players' and the Storyteller's file),
    WORKBOOK may also be a battle file (.yaml or .json) to write."""
    from sheetsync.core.errors import InputError, Problem
    from sheetsync.sheets.disk import BATTLE_SUFFIXES, WORKBOOK_SUFFIXES, check_suffix

    grapevine = [f for f in from_file if f.suffix.lower() in (".gex", ".gv3")]
    if grapevine:
        if len(grapevine) != len(from_file):
            raise InputError([Problem("--from", "takes one battle file, or Grapevine files (.gex) only: not both")])
        check_suffix(workbook, WORKBOOK_SUFFIXES + BATTLE_SUFFIXES, "the tracker or battle file to write")
        _new_from_grapevine(workbook, grapevine, force=force, cohort_by=cohort_by, only=only, cohorts=cohort)
        return
    if len(from_file) > 1:
        raise InputError([Problem("--from", "takes one battle file (repeat --from only for Grapevine .gex files)")])
    if cohort:
        raise InputError([Problem("--cohort", "picks cohorts of a Grapevine file; a battle file's cohorts are its "
                                  "own")])
    (from_file_one,) = from_file
    _workbook_only(workbook)
    check_suffix(from_file_one, BATTLE_SUFFIXES, "the --from battle file")
    system, battle = _load_any(from_file_one)
    _needs_tracker(system)
    if system.id != "bbn":
        from sheetsync.app.workbook_cli import system_tracker_from

        report = system_tracker_from(workbook, system, battle, force=force, paper=paper.value)
        console.print(f"{workbook}: {report.message}")
        return
    from sheetsync.app.workbook_cli import new_workbook

    report = new_workbook(workbook, from_file_one, force=force, paper=paper.value)
    console.print(f"{workbook}: {report.message}")


def _new_from_grapevine(out: Path, gex: list[Path], *, force: bool, cohort_by: str, only: list[str] | None,
                        cohorts: list[str] | None = None) -> None:
    """Characters from Grapevine exchange files (read as one), as a battle file or a tracker."""
    from sheetsync.core.registry import room

    import_gex = room("bbn", "importing").import_gex
    from sheetsync.sheets.disk import BATTLE_SUFFIXES, dump_battle_file, refuse_existing

    refuse_existing(out, force)  # before any work: nothing to import into
    names = [n.strip() for item in (only or []) for n in item.split(",") if n.strip()] or None
    result = import_gex(gex, cohort_by=cohort_by, only=names, cohorts=cohorts)
    for line in result.notes:
        err_console.print(f"Note: {line}", highlight=False)
    made = result.battle["cohorts"]
    summary = f"{len(made)} cohort{'s' if len(made) != 1 else ''} from {result.files}: " + ", ".join(
        f"{c['name']} ({len(c['members'])})" for c in made)
    if out.suffix.lower() in BATTLE_SUFFIXES:
        dump_battle_file(result.battle, out, backup=force)
        console.print(f"{out}: {summary}. Add ranges and orders, then: sheetsync pools {out}")
        return
    from sheetsync.app.workbook_cli import tracker_from
    from sheetsync.core.registry import room

    report = tracker_from(out, room("bbn", "files.loader").load_battle(result.battle, result.source), force=force)
    console.print(f"{out}: {summary}. {report.message}")


def _template_csv(csv_out: Path, out: Path | None, *, macros: bool, force: bool, system_name: str,
                  sheet: str | None = None) -> None:
    """``template --csv``: the empty CSV whose headers ``sheetsync import`` reads."""
    from sheetsync.core.errors import InputError, Problem
    from sheetsync.core.registry import find_system
    from sheetsync.importers.csv_import import template_sheet, write_template_csv
    from sheetsync.sheets.disk import check_suffix

    if out is not None or macros:
        raise InputError([Problem("--csv", "writes the CSV only: leave out the workbook name and --macros (write the "
                                  "tracker with a second sheetsync template)")])
    check_suffix(csv_out, (".csv",), "the CSV file to write")
    system = find_system(system_name)
    chosen = template_sheet(system.id, csv_out, sheet)
    write_template_csv(csv_out, system.id, force=force, sheet=chosen)
    what = "characters, one row each" if system.id == "bbn" or chosen == "characters" else "units, one row each"
    if chosen is not None:
        other = "units" if chosen == "characters" else "characters"
        what += (f" (an Exalted battle needs a CSV of {other} too: sheetsync template --csv {other}.csv --system "
                 f"exalted --sheet {other}; import both at once)")
    console.print(f"Empty {system.title.lower()} CSV written to {csv_out}. Fill in its {what}, then: "
                  f"sheetsync import {csv_out} --into battle.xlsx", highlight=False, soft_wrap=True)


@app.command("import", short_help="Characters from Grapevine (.gex) or CSV into a tracker or battle file.")
def import_command(
    source: Annotated[list[Path], typer.Argument(
        metavar="FILE...", help="A Grapevine exchange file (.gex) or a CSV of characters or units (Exalted: a "
                                "CSV of characters and one of units).")],
    into: Annotated[Path, typer.Option(
        "--into", help="An existing tracker workbook (.xlsx/.xlsm), or a battle file (.yaml/.json) to write.")],
    replace: Annotated[bool, typer.Option(
        "--replace", help="Replace the characters (or units) the tracker already holds.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing battle file (kept as NAME.bak).")] = False,
    cohort_by: Annotated[str, typer.Option(
        "--cohort-by", help="From a .gex: one cohort per coterie, sect or clan.")] = "coterie",
    only: Annotated[list[str] | None, typer.Option(
        "--only", help="From a .gex: take only this character (repeat, or separate names with commas).")] = None,
    cohort: Annotated[list[str] | None, typer.Option(
        "--cohort", metavar="NAME=PICK", help=_COHORT_HELP)] = None,
    system_name: Annotated[str | None, typer.Option(
        "--system", help="The CSV's rule system when writing a battle file (a tracker says its own).")] = None,
    map_size: Annotated[str | None, typer.Option(
        "--map", help="A hex battle file's map, COLUMNSxROWS (e.g. 12x8).")] = None,
) -> None:
    """Import characters (or hex units) into an existing tracker's Characters and Cohorts
    sheets (or Units sheet), or into a new battle file.  Several Grapevine files (the
    players' and the Storyteller's) are read as one; into a battalion tracker that holds
    characters, a Grapevine import is added below them (a name already there is refused;
    --replace replaces them).  Nothing is written when anything is wrong; every bad cell is
    listed at once with its place in the imported file."""
    from sheetsync.importers.into import import_into

    report = import_into(source, into, replace=replace, force=force, cohort_by=cohort_by, only=only,
                         system=system_name, map_size=map_size, cohorts=cohort)
    for line in report.notes:
        err_console.print(f"Note: {line}", highlight=False, soft_wrap=True)
    from rich.table import Table

    table = Table(title=f"Imported from {', '.join(p.name for p in source)}", header_style="bold")
    table.add_column(report.group_word, no_wrap=True)
    table.add_column("Members", overflow="fold")
    traits = report.group_word == "Cohort"  # a hex unit has no traits to leave out
    if traits:
        table.add_column("Traits not counted (R12, listed in the notes above)", overflow="fold")
    for group, members in report.groups:
        unmapped = [f"{m} {len(report.unmapped[m])}" for m in members if report.unmapped.get(m)]
        table.add_row(group, ", ".join(members), *([", ".join(unmapped) or "none"] if traits else []))
    console.print(table)
    console.print(f"{into}: {report.message}", highlight=False, soft_wrap=True)


@app.command(short_help="Build a tracker: pools (or unit values) from its sheets.")
def build(workbook: Path, paper: Annotated[Paper | None, typer.Option(
        "--paper", case_sensitive=False,
        help="Print every sheet on a4 or letter from now on (default: the paper the tracker was made "
             "with).")] = None) -> None:
    """Build a tracker workbook; the tracker says its own rule system.

    bbn (Baltimore by Night battalion combat): Build Cohorts, Characters → pools on the
    Cohorts sheet. hexwar (the hex wargame): Build Units, the Units sheet and the map read
    and the counters placed. exalted (Exalted 2e mass combat): Build Units, every unit's
    traits from the Characters and Units sheets, and Join War's pools."""
    from sheetsync.app.workbook_cli import run_workbook

    report = run_workbook("build", workbook, paper=paper.value if paper else None)
    console.print(f"{workbook}: {report.message}")
    for line in report.warnings:
        err_console.print(f"Warning: {line}", style="yellow", highlight=False)


@app.command(short_help="Dry run: what the next resolve would refuse, and why.")
def check(file: Path, as_json: JsonOpt = False) -> None:
    """Dry run: list what the next resolve would refuse, and why; changes nothing.

    FILE is a tracker workbook or a battle file. Exit code 0: nothing would be refused;
    1: something would be (or the file could not be checked); 2: a usage error."""
    from sheetsync.app import usecases

    if _is_workbook(file) and _other_workbook(file, "check", as_json):
        return
    word = "phase"
    if _is_workbook(file):
        from sheetsync.app.workbook_cli import excel_backend

        backend = excel_backend(file)
        with backend.locked():
            report = usecases.check(backend, usecases.tracker_layout(backend))
    else:
        system, battle = _load_any(file)
        if system.id == "bbn":
            report = usecases.check_battle(battle)
        else:
            orders, refused = system.check_file(battle)
            step_no = battle.tick if system.id == "exalted" else battle.turn
            report = usecases.CheckReport(step_no, orders, [usecases.Refusal(*r) for r in refused])
            word = "long tick" if system.id == "exalted" else "turn"
    if as_json:
        _print_json(report.to_json())
    else:
        from sheetsync.app.check_view import print_check

        print_check(console, report, str(file), word=word)
    if report.refusals:
        raise typer.Exit(1)


@app.command(short_help="End Battle: fill in the Aftermath sheet.")
def end(workbook: Path, as_json: JsonOpt = False) -> None:
    """End Battle: fill in the Aftermath sheet (a workbook)."""
    from sheetsync.app.workbook_cli import run_workbook

    report = run_workbook("end", workbook)
    if as_json:
        _print_json(report.to_json())
        return
    console.print(f"{workbook}: {report.message}")


@app.command(short_help="A tracker's state and last events as JSON.")
def export(workbook: Path, as_json: JsonOpt = True) -> None:
    """Print a tracker's battle state and its last resolve's events as JSON."""
    from sheetsync.app.usecases import export as export_state
    from sheetsync.app.usecases import tracker_layout
    from sheetsync.app.workbook_cli import excel_backend

    _workbook_only(workbook)
    if _other_workbook(workbook, "export", True):
        return
    backend = excel_backend(workbook)
    with backend.locked():
        _print_json(export_state(backend, tracker_layout(backend)))


@app.command(short_help="The battle at a glance.")
def status(file: Path) -> None:
    """The battle at a glance: the phase, each cohort's Health as a bar, temper, control,
    actions left and members by state (a workbook or a battle file; nothing is written)."""
    from sheetsync.core.registry import room

    if not _is_workbook(file):
        system, battle = _load_any(file)
        views = room(system, "views")
        if system.id == "bbn":
            views.print_status(console, battle)
            return
        if system.id == "exalted":
            console.print(f"Long tick {battle.tick}" + ("" if battle.started else " (Join War not rolled yet: the Tick "
                                                                   "column is the long tick it will give, E4)")
                          + f"; {len(battle.orders)} orders typed.")
        else:
            console.print(f"Turn {battle.turn} to resolve; {len(battle.orders.moves)} moves and "
                          f"{len(battle.orders.attacks)} attacks typed.")
        views.print_units(console, room(system, "rules").units_json(battle))
        return
    if _other_workbook(file, "status", False):
        return
    from sheetsync.app.usecases import export as export_state
    from sheetsync.app.usecases import tracker_layout
    from sheetsync.app.workbook_cli import excel_backend

    backend = excel_backend(file)
    with backend.locked():
        data = export_state(backend, tracker_layout(backend))
        (cell,) = backend.read_ranges([room("bbn", "tracker.layout").layout().cells["Battle_Status"].ref])
    shown = cell[0][0] if cell and cell[0] and isinstance(cell[0][0], str) else None
    room("bbn", "views").print_status(console, room("bbn", "files.loader").load_battle(data["battle"], str(file)), status=shown)


gsheet_app = typer.Typer(help="A shared Google Sheet as the tracker (through gspread, no server needed).",
                         short_help="A shared Google Sheet as the tracker.",
                         no_args_is_help=True)
app.add_typer(gsheet_app, name="gsheet")
ServiceAccount = Annotated[Path | None, typer.Option(
    "--service-account", help="Service-account JSON key (or set SHEETSYNC_SERVICE_ACCOUNT).")]
OAuth = Annotated[bool, typer.Option("--oauth", help="Sign in with gspread's OAuth flow instead.")]


def _gsheet(spreadsheet: str, service_account: Path | None, oauth: bool) -> Any:
    from sheetsync.app.gsheet_cli import gsheet_backend, gspread_client

    def progress(line: str) -> None:  # waits and retries, on stderr (stdout may be --json)
        err_console.print(line, style="yellow", highlight=False)

    return gsheet_backend(spreadsheet, gspread_client(service_account, oauth=oauth), progress=progress)


@gsheet_app.command("init")
def gsheet_init(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False,
                system_name: SystemOpt = "bbn") -> None:
    """Lay out a blank tracker of a rule system in an existing spreadsheet (its key or URL)."""
    from sheetsync.app.gsheet_cli import init_spreadsheet
    from sheetsync.core.registry import find_system

    system = find_system(system_name)
    _needs_tracker(system)
    backend = _gsheet(spreadsheet, service_account, oauth)
    n = init_spreadsheet(backend, system=system.id)
    fill = {"bbn": "Cohorts and Characters", "exalted": "the Characters and Units sheets"}.get(
        system.id, "the Battle sheet's map and the Units sheet")
    console.print(f"{system.title} tracker laid out ({n} changes in one request, {backend.request_count} requests "
                  f"in all). Fill in {fill}, then: sheetsync gsheet build {spreadsheet}")


def _gsheet_step(action: str, spreadsheet: str, service_account: Path | None, oauth: bool, as_json: bool) -> None:
    from sheetsync.sheets.marks import run

    backend = _gsheet(spreadsheet, service_account, oauth)
    report = run(action, backend)
    if as_json:
        _print_json(report.to_json())
        return
    if report.result is not None:
        _print_step_result(report)
    console.print(f"{report.message} ({backend.request_count} requests)")


def _print_step_result(report: Any) -> None:
    """A step's result as tables: a battalion phase, a hex turn or an Exalted long tick."""
    from sheetsync.core.registry import room

    data = report.to_json()
    room(data.get("system") or "bbn", "views").print_step(console, data, report.result)


@gsheet_app.command("build")
def gsheet_build(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False, as_json: JsonOpt = False) -> None:
    """Build Cohorts in the Google Sheet."""
    _gsheet_step("build", spreadsheet, service_account, oauth, as_json)


@gsheet_app.command("resolve")
def gsheet_resolve(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False, as_json: JsonOpt = False) -> None:
    """Resolve Phase in the Google Sheet: one read, one write."""
    _gsheet_step("resolve", spreadsheet, service_account, oauth, as_json)


@gsheet_app.command("undo")
def gsheet_undo(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False, as_json: JsonOpt = False) -> None:
    """Undo the last phase in the Google Sheet."""
    _gsheet_step("undo", spreadsheet, service_account, oauth, as_json)


@gsheet_app.command("end")
def gsheet_end(spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False, as_json: JsonOpt = False) -> None:
    """End Battle in the Google Sheet (the Aftermath sheet)."""
    _gsheet_step("end", spreadsheet, service_account, oauth, as_json)


@gsheet_app.command("forecast")
def gsheet_forecast(
    spreadsheet: str,
    runs: Annotated[int, typer.Option("--runs", help="Battles to simulate.")] = 10000,
    phases: Annotated[int, typer.Option("--phases", help="Steps (phases, turns) at most per battle.")] = 12,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the simulated dice (default: the battle's).")] = None,
    write: Annotated[bool, typer.Option("--write", help="Add (or replace) a Forecast sheet with a chart.")] = False,
    workers: Annotated[int | None, typer.Option("--workers", help="Processes to use (default: every core).")] = None,
    as_json: JsonOpt = False,
    service_account: ServiceAccount = None,
    oauth: OAuth = False,
) -> None:
    """Forecast the Google Sheet's battle (as sheetsync forecast does); --write adds a
    Forecast sheet with a chart in one request, unless a step ran meanwhile."""
    from sheetsync.app import forecast_io

    backend = _gsheet(spreadsheet, service_account, oauth)
    data = forecast_io.gsheet_forecast(backend, spreadsheet, runs=runs, phases=phases, seed=seed, workers=workers,
                                       write=write, console=None if as_json else err_console)
    if as_json:
        _print_json(data)
        return
    forecast_io.print_forecast(console, data, spreadsheet)
    if write:
        console.print(f"Forecast sheet written to {spreadsheet} ({backend.request_count} requests).",
                      highlight=False, soft_wrap=True)


@gsheet_app.command("report")
def gsheet_report(
    spreadsheet: str,
    html_out: Annotated[Path | None, typer.Option("--html", help="Write the report here as one HTML file.")] = None,
    md_out: Annotated[Path | None, typer.Option("--md", help="Write the report here as Markdown.")] = None,
    service_account: ServiceAccount = None,
    oauth: OAuth = False,
) -> None:
    """The after-action report of the Google Sheet's battle (as sheetsync report does); it only reads."""
    from sheetsync.app.report import build_account, to_markdown, write_reports

    def progress(line: str) -> None:
        err_console.print(line, style="yellow", highlight=False)

    acc = build_account(spreadsheet, service_account=service_account, oauth=oauth, progress=progress, google=True)
    if html_out is None and md_out is None:
        from rich.markdown import Markdown

        console.print(Markdown(to_markdown(acc, images=False)))
        return
    for path in write_reports(acc, spreadsheet, html_path=html_out, md_path=md_out):
        console.print(f"Report written to {path}.", highlight=False, soft_wrap=True)


@gsheet_app.command("import")
def gsheet_import(
    sources: Annotated[list[Path], typer.Argument(metavar="FILE...", help="CSV files of characters or units.")],
    spreadsheet: Annotated[str, typer.Option("--into", help="The Google Sheet tracker (its key or URL).")],
    replace: Annotated[bool, typer.Option(
        "--replace", help="Replace the characters (or units) the tracker already holds.")] = False,
    service_account: ServiceAccount = None,
    oauth: OAuth = False,
) -> None:
    """Import CSV characters or units into a Google Sheet tracker in one write (as
    sheetsync import does into a workbook); nothing is written when anything is wrong."""
    from sheetsync.importers.into import import_into_backend

    backend = _gsheet(spreadsheet, service_account, oauth)
    report = import_into_backend(sources, backend, spreadsheet, replace=replace,
                                 build=f"sheetsync gsheet build {spreadsheet}")
    for line in report.notes:
        err_console.print(f"Note: {line}", highlight=False, soft_wrap=True)
    console.print(f"{spreadsheet}: {report.message} ({backend.request_count} requests)", highlight=False,
                  soft_wrap=True)


@app.command(short_help="Copy a workbook's battle into a Google Sheet.")
def upload(workbook: Path, spreadsheet: str, service_account: ServiceAccount = None, oauth: OAuth = False,
           init: Annotated[bool, typer.Option(help="Lay out the tracker first (a spreadsheet without one).")] = True) -> None:
    """Move a battle from a workbook into a Google Sheet (undo history included)."""
    from sheetsync.app.gsheet_cli import copy_tracker, init_spreadsheet
    from sheetsync.app.workbook_cli import excel_backend
    from sheetsync.sheets.marks import detect

    _workbook_only(workbook)
    backend = _gsheet(spreadsheet, service_account, oauth)
    source = excel_backend(workbook)
    tracker = detect(source)
    if init and "State" not in backend.metadata():
        init_spreadsheet(backend, system=tracker.system.id, capacity=tracker.capacity or None)
    n = copy_tracker(source, backend, tracker.system.layout(tracker.capacity or None))
    console.print(f"Uploaded {n} cells from {workbook} ({backend.request_count} requests).")


@app.command(short_help="Copy a Google Sheet's battle into a workbook.")
def download(spreadsheet: str, workbook: Path, service_account: ServiceAccount = None, oauth: OAuth = False) -> None:
    """Move a battle from a Google Sheet into a tracker workbook."""
    from sheetsync.app.gsheet_cli import copy_tracker
    from sheetsync.app.workbook_cli import excel_backend, write_template
    from sheetsync.sheets.marks import detect

    _workbook_only(workbook)
    backend = _gsheet(spreadsheet, service_account, oauth)
    tracker = detect(backend)
    lay = tracker.system.layout(tracker.capacity or None)
    if not workbook.exists():
        if tracker.system.id == "bbn":
            write_template(workbook, force=False, capacity=tracker.capacity or None)
        else:
            from sheetsync.app.workbook_cli import write_system_template

            write_system_template(workbook, tracker.system, force=False, capacity=tracker.capacity or None)
    target = excel_backend(workbook)  # an existing workbook is updated in place, the old one kept as .bak
    with target.locked():
        n = copy_tracker(backend, target, lay)
    console.print(f"Downloaded {n} cells into {workbook} ({backend.request_count} requests).")


@app.command(short_help="Run the step ticked on a Google Sheet's Battle sheet.")
def watch(
    spreadsheet: str,
    service_account: ServiceAccount = None,
    oauth: OAuth = False,
    interval: Annotated[float, typer.Option(help="Seconds between reads (Google allows 60 reads a minute).")] = 3.0,
) -> None:
    """Watch the Battle sheet's checkboxes and run Build/Resolve/Undo/End when one is ticked."""
    from sheetsync.app.watch import live_watch

    live_watch(_gsheet(spreadsheet, service_account, oauth), interval=interval, console=console)


@app.command(short_help="The buttons over HTTP (Google Sheets, Excel without Python).")
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    site: Annotated[Path | None, typer.Option(
        "--site", metavar="DIR", help="The web page served at / : a folder `sheetsync web` wrote. Default: "
                                      "written on the first request, Pyodide from the public CDN.")] = None,
) -> None:
    """The four buttons over HTTP for xlwings' remote clients (needs SHEETSYNC_API_KEY and
    XLWINGS_LICENSE_KEY), and the web page at /."""
    import logging

    import uvicorn

    from sheetsync.app.server import create_app, require_remote_engine
    from sheetsync.core.errors import BackendError

    if site is not None and not (site / "index.html").is_file():
        raise BackendError(f"{site} holds no web page: write one with sheetsync web {site}")
    app = create_app(site=site)
    require_remote_engine()  # refuse to start rather than fail every click
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(app, host=host, port=port, log_level="info")


@app.command(short_help="Write the web page (a static site) that runs the tracker in the browser.")
def web(
    directory: Annotated[Path, typer.Argument(help="The folder to write the site into (made if missing).")],
    pyodide: Annotated[str | None, typer.Option(
        "--pyodide", metavar="URL",
        help="Where the page loads Pyodide from: a folder URL, absolute or relative to the page (a copy of "
             "the npm package's files). Default: the public Pyodide CDN at the pinned version.")] = None,
) -> None:
    """Write a static site any static host can serve: index.html and its script, the wheels
    it needs (sheetsync's own, openpyxl, et_xmlfile) and config.json, which says where
    Pyodide is loaded from.  The workbook never leaves the browser, so no key is needed."""
    from sheetsync.web.site import build_site

    site = build_site(directory, pyodide)
    console.print(f"Wrote the web page to {directory}: index.html, config.json and {len(site.wheels)} wheels "
                  f"({', '.join(site.wheels)}); Pyodide from {site.pyodide}", highlight=False, soft_wrap=True)


@app.command("rules", short_help="The rulings, house-rule keys and rule sections.")
def rules_reference(
    ruling: Annotated[str | None, typer.Argument(help="Show one ruling only, for example R16, H7, E3 or X35.")] = None,
    system: Annotated[str, typer.Option(
        "--system", help="The rule system: bbn (Baltimore by Night battalion combat, rulings R1-R37), hexwar "
                         "(the hex wargame, H1-H12) or exalted (Exalted 2e mass combat, E1-E11 and "
                         "X1-X52).")] = "bbn",
) -> None:
    """Print a rule system's rulings with their house-rule keys and defaults, and the rule
    sections results cite (also in docs/rules/<system>.md)."""
    from sheetsync.app.rules_doc import SYSTEMS, print_rules, reference
    from sheetsync.core.registry import ALIASES

    key = system.strip().casefold()
    key = ALIASES.get(key, key)
    if key not in SYSTEMS:
        known = "; ".join(f"{k} ({what})" for k, what in SYSTEMS.items())
        raise typer.BadParameter(f"{system!r} is not a rule system sheetsync runs: the systems are {known}",
                                 param_hint="--system")
    ref = reference(key)
    found = None
    if ruling is not None:
        found = ref.find(ruling)
        if found is None:
            hint = f" (sheetsync rules --system {key})"
            for k in SYSTEMS:  # "X35" typed without --system exalted: say where it is
                other = reference(k).find(ruling) if k != key and not ruling.strip().isdigit() else None
                if other is not None:
                    hint = f"; {other.ref} is a ruling of --system {k}: sheetsync rules --system {k} {other.ref}"
                    break
            raise typer.BadParameter(f"{ruling!r} is not a ruling of {ref.title}: its rulings are "
                                     f"{ref.keys_listed()}{hint}", param_hint="RULING")
    print_rules(console, found, key)


@app.command(short_help="A rule system's battle file JSON Schema.")
def schema(system_name: SystemOpt = "bbn") -> None:
    """Print the JSON Schema of a rule system's battle file (YAML or JSON), built from the
    models: bbn (Baltimore by Night battalion combat, the default; no system: key), hexwar
    (the hex wargame, system: hexwar) or exalted (Exalted 2e mass combat, system: exalted)."""
    from sheetsync.core.registry import find_system, room

    system = find_system(system_name)  # an unknown name is refused, listing the systems
    _print_json(room(system, "files.schema").battle_file_schema())


@app.command("map", short_help="Draw a hex battle's map as PNG or SVG (from a battle file or a hex tracker).")
def map_picture(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A hex battle file (.yaml/.json), or a hex tracker "
                                                              "workbook (.xlsx/.xlsm).")],
    png: Annotated[Path | None, typer.Option("--png", help="Where to write the picture as PNG (a .png file).")] = None,
    svg: Annotated[Path | None, typer.Option("--svg", help="Where to write the picture as SVG (a .svg file: "
                                                            "drawn without Pillow, sharp at any zoom).")] = None,
    hex_size: Annotated[int, typer.Option("--hex-size", min=20, max=400,
                                          help="Pixels from a hex's centre to its corners.")] = 90,
) -> None:
    """Draw a hex wargame battle's map as a PNG or an SVG (or both): the hexes with their ids, impassable hexes
    shaded, and each unit's box with its value line and casualties (H1, H2, H9).  FILE is a
    battle file, or a hex tracker workbook (the battle as its last step left it; the
    workbook is only read)."""
    from sheetsync.core.errors import InputError, Problem
    from sheetsync.sheets.disk import (
        BATTLE_SUFFIXES,
        WORKBOOK_SUFFIXES,
        check_suffix,
        read_data_file,
    )

    check_suffix(file, BATTLE_SUFFIXES + WORKBOOK_SUFFIXES, "a hex battle file or a hex tracker workbook")
    if png is None and svg is None:
        raise InputError([Problem("map", "say where to write the picture: --png map.png, --svg map.svg, or both; "
                                         "nothing was written")])
    for given, suffix in ((png, ".png"), (svg, ".svg")):
        if given is not None and given.suffix.lower() != suffix:
            raise InputError([Problem(str(given), f"the picture is written as {suffix[1:].upper()}, so its name must "
                                                  f"end in {suffix}; nothing was written")])
    from sheetsync.app.workbook_cli import battle_of_tracker
    from sheetsync.core.registry import room

    picture = room("hexwar", "picture")

    if file.suffix.lower() in WORKBOOK_SUFFIXES:
        battle = battle_of_tracker(file)
    else:
        data = read_data_file(file)
        system = data.get("system", "") if isinstance(data, dict) else "hexwar"
        if system != "hexwar":
            kind = (f"a battle file of the {system!r} rule system" if system
                    else "a battalion battle file (it has no 'system' key: the Baltimore by Night rules)")
            raise InputError([Problem(str(file), f"this is {kind}, and sheetsync map draws hex wargame battles only "
                                                 "(system: hexwar); nothing was written")])
        battle = room("hexwar", "files.loader").load_battle(data, str(file))
    written = []
    if svg is not None:
        picture.save_map_svg(battle, svg, hex_size=hex_size)
        written.append(str(svg))
    if png is not None:
        note = picture.font_note()
        if note:
            err_console.print(f"note: {note}", highlight=False, soft_wrap=True)
        picture.save_map_png(battle, png, hex_size=hex_size)
        written.append(str(png))
    on_map = sum(1 for u in battle.units if not u.destroyed)
    console.print(f"Map of turn {battle.turn} written to {' and '.join(written)} ({battle.map.columns}x"
                  f"{battle.map.rows} hexes, {on_map} units on the map).", highlight=False, soft_wrap=True)


@app.command("report", short_help="The after-action report: the battle told step by step (HTML, Markdown).")
def report_command(
    source: Annotated[str, typer.Argument(metavar="FILE", help="A battle file, a tracker workbook, or a Google "
                                          "Sheet (its URL, or its key with --service-account or --oauth).")],
    html_out: Annotated[Path | None, typer.Option("--html", help="Write the report here as one HTML file.")] = None,
    md_out: Annotated[Path | None, typer.Option("--md", help="Write the report here as Markdown.")] = None,
    service_account: ServiceAccount = None,
    oauth: OAuth = False,
) -> None:
    """The Reporter's account of the battle: the sides, each step in words with its rule, Hero
    Moments, casualties, the aftermath and charts.  With neither --html nor --md it is shown
    here.  The battle is only read, never written."""
    from sheetsync.app.report import build_account, to_markdown, write_reports

    def progress(line: str) -> None:
        err_console.print(line, style="yellow", highlight=False)

    acc = build_account(source, service_account=service_account, oauth=oauth, progress=progress)
    if html_out is None and md_out is None:
        from rich.markdown import Markdown

        console.print(Markdown(to_markdown(acc, images=False)))
        return
    for path in write_reports(acc, source, html_path=html_out, md_path=md_out):
        console.print(f"Report written to {path}.", highlight=False, soft_wrap=True)


@app.command(short_help="Forecast the battle: the next step's chances and who is likely to win.")
def forecast(
    source: Annotated[str, typer.Argument(metavar="FILE", help="A battle file, a tracker workbook, or a Google "
                                          "Sheet (its URL, or its key with --service-account or --oauth).")],
    runs: Annotated[int, typer.Option("--runs", help="Battles to simulate.")] = 10000,
    phases: Annotated[int, typer.Option("--phases", help="Steps (phases, turns) at most per battle.")] = 12,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the simulated dice (default: the battle's).")] = None,
    write: Annotated[bool, typer.Option("--write", help="Add (or replace) a Forecast sheet in the workbook.")] = False,
    workers: Annotated[int | None, typer.Option("--workers", help="Processes to use (default: every core).")] = None,
    as_json: JsonOpt = False,
    service_account: ServiceAccount = None,
    oauth: OAuth = False,
) -> None:
    """Simulate the battle from where it stands with the seeded dice: each declared order's
    chance to succeed (exact where the rules give it), each cohort's or unit's standing
    after the next step, and the battle to its end under standing orders: each side's
    chance to win, how many steps, the losses, who ends Dead, in Torpor or destroyed.
    Every simulated figure has its 95% confidence interval.  The battle is never changed;
    --write adds a Forecast sheet (with a chart) to a tracker workbook."""
    from sheetsync.app import forecast_io
    from sheetsync.core.errors import BattleStateError

    shown = None if as_json else err_console
    google = service_account is not None or oauth or source.startswith(("https://", "http://"))
    if google:
        if write:
            raise BattleStateError("--write puts a Forecast sheet in a tracker workbook (.xlsx, .xlsm); this command "
                                   "only reads a Google Sheet, and its steps write it: sheetsync gsheet forecast "
                                   f"{source} --write")
        backend = _gsheet(source, service_account, oauth)
        data = forecast_io.gsheet_forecast(backend, source, runs=runs, phases=phases, seed=seed, workers=workers,
                                           write=False, console=shown)
    elif _is_workbook(Path(source)):
        data = forecast_io.workbook_forecast(Path(source), runs=runs, phases=phases, seed=seed, workers=workers,
                                             write=write, console=shown)
    else:
        if write:
            raise BattleStateError(f"--write puts a Forecast sheet in a tracker workbook, and {source} is a battle "
                                   "file, which the forecast never changes: use --json > forecast.json instead")
        system, battle = _load_any(Path(source))
        data = forecast_io.run_forecast(battle, system.id, None, runs=runs, phases=phases, seed=seed,
                                        workers=workers, console=shown)
    if as_json:
        _print_json(data)
        return
    forecast_io.print_forecast(console, data, Path(source).name if not google else source)
    if write:
        console.print(f"Forecast sheet written to {source}.", highlight=False, soft_wrap=True)


def main() -> None:
    """Entry point: usage errors are typer's (exit 2); a :class:`SheetSyncError` becomes one
    clear line (exit 1), never a traceback."""
    try:
        app()
    except SheetSyncError as exc:
        _print_error(str(exc))
        sys.exit(1)
    except OSError as exc:  # a file problem no command turned into a SheetSyncError
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        _print_error(f"{where}{exc.strerror or exc}")
        sys.exit(1)
    except KeyboardInterrupt:
        _print_error("interrupted; a step that was saving either finished or left the file as it was")
        sys.exit(130)


def _print_error(message: str) -> None:
    """One error, the problem first: ``error: Orders!C7: task 'Melee' is not a task``."""
    from rich.text import Text

    err_console.print(Text.assemble(("error", "bold red"), ": ", message), highlight=False, soft_wrap=True)


if __name__ == "__main__":
    main()
