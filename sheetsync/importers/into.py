"""``sheetsync import FILE --into TARGET``: characters from a Grapevine exchange file
(``.gex``) or CSV files into an existing tracker (a workbook, or a Google Sheet with
``sheetsync gsheet import``), or into a new battle file.

Into a tracker, only its input cells are written: the Characters and Cohorts sheets of a
battalion tracker (Cohort Sheet 1.1-1.7), the typed columns of a hex tracker's Units sheet
(H1, H2), the typed columns of an Exalted tracker's Characters and Units sheets (E7-E10,
X1-X11; one CSV per sheet, told apart by its headers), through the tracker's own layout and
codecs, in one write (a workbook's under its step lock, the previous file kept as
``NAME.bak``).  Every import is checked as Build would check the sheet, and nothing is
written when anything is wrong: a tracker that already holds characters or units (unless
``replace``; a Grapevine import into a battalion tracker is instead added below them, a
name already there refused at its cell), a tracker whose battle has begun, an import past
the tracker's room (the limit named), a CSV whose headers are another system's columns
(the system named), or any bad cell (all listed, each at its place in the file imported).
Several Grapevine files (the players' and the Storyteller's) are read as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sheetsync.core.errors import BackendError, BattleStateError, InputError, Problem
from sheetsync.core.registry import room
from sheetsync.importers.csv_import import CSV_SYSTEMS, CsvTable, read_csv
from sheetsync.sheets.backend import CellValue, Grid

__all__ = ["GV3_MESSAGE", "ImportReport", "import_into", "import_into_backend"]

GV3_MESSAGE = ("is in Grapevine's older binary format (.gv3), which sheetsync does not read: in Grapevine, "
               "choose File > Export, pick \"Grapevine exchange format\" (XML), and import the .gex file it saves")

SOURCE_SUFFIXES = (".gex", ".csv")


@dataclass
class ImportReport:
    """What an import wrote: one row per cohort (or side) and its members, and the notes."""

    target: Path | str
    message: str
    groups: list[tuple[str, list[str]]] = field(default_factory=list)
    """(cohort or side, its members' names), in the order written."""
    notes: list[str] = field(default_factory=list)
    unmapped: dict[str, list[str]] = field(default_factory=dict)
    """Character → the traits of theirs that feed no pool (R12), from a .gex."""
    group_word: str = "Cohort"


def _blank(row: Sequence[CellValue]) -> bool:
    return all(v is None or (isinstance(v, str) and not v.strip()) for v in row)


def _names(only: Sequence[str] | None) -> list[str] | None:
    return [n.strip() for item in (only or []) for n in item.split(",") if n.strip()] or None


def _source(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".gv3":
        raise InputError([Problem(path.name, GV3_MESSAGE)])
    if suffix not in SOURCE_SUFFIXES:
        raise InputError([Problem(path.name, "is not a file sheetsync imports: give a Grapevine exchange file "
                                  "(.gex) or a CSV file (.csv, headers from sheetsync template --csv)")])
    if not path.exists():
        raise InputError([Problem(path.name, "does not exist")])
    return suffix


@dataclass(frozen=True)
class _Target:
    """Where an import goes, as its messages name it: ``name`` (``battle.xlsx``, a Google
    Sheet's key), ``build`` (the command to run next) and ``path`` (the report's target)."""

    name: str
    build: str
    path: Path | str


def _sources(source: Path | Sequence[Path]) -> list[Path]:
    """The files imported: one or more .gex (read as one), or one CSV (two for Exalted:
    characters and units)."""
    paths = [source] if isinstance(source, Path) else list(source)
    if not paths:
        raise InputError([Problem("FILE", "name the file to import (a .gex, or a .csv)")])
    kinds = [_source(p) for p in paths]
    if ".gex" in kinds and ".csv" in kinds:
        raise InputError([Problem(paths[kinds.index(".csv")].name, "Grapevine files and CSV files are imported "
                                  "apart: import the .gex files in one command and the CSV in another")])
    return paths


def _one(paths: Sequence[Path], system_id: str) -> Path:
    """The one file a battalion or hex import takes (an Exalted one takes a CSV per sheet)."""
    if len(paths) > 1:
        raise InputError([Problem(paths[1].name, f"a {system_id} import reads one CSV file (its "
                                  "characters or units); give one file at a time")])
    return paths[0]


def import_into(source: Path | Sequence[Path], into: Path, *, replace: bool = False, force: bool = False,
                cohort_by: str = "coterie", only: Sequence[str] | None = None, system: str | None = None,
                map_size: str | None = None, cohorts: Sequence[str] | None = None) -> ImportReport:
    """Import ``source`` (one or more .gex, read as one; a .csv; for Exalted, a CSV per
    sheet) into ``into``: an existing tracker workbook, or a battle file to write (refused
    when it exists, unless ``force``).  ``system`` picks the CSV's rule system for a battle
    file (a tracker says its own); ``map_size`` (``COLUMNSxROWS``) is a hex battle file's
    map (H2); ``cohorts`` are ``--cohort`` picks of a .gex's cohorts (R1)."""
    from sheetsync.sheets.disk import BATTLE_SUFFIXES, WORKBOOK_SUFFIXES, check_suffix

    check_suffix(into, WORKBOOK_SUFFIXES + BATTLE_SUFFIXES, "the tracker or battle file to import into")
    paths = _sources(source)
    source = paths[0]
    kind = _source(source)
    if kind == ".csv" and (only or cohorts):
        flag = "--only" if only else "--cohort"
        raise InputError([Problem(flag, "picks characters of a Grapevine file; a CSV is imported whole "
                                  "(delete the rows you don't want)")])
    if map_size is not None and (into.suffix.lower() in WORKBOOK_SUFFIXES or _system_id(system) != "hexwar"):
        raise InputError([Problem("--map", "is the map of a hex battle file (with --system hexwar); a tracker's map "
                                  "is on its Battle sheet")])
    if into.suffix.lower() in WORKBOOK_SUFFIXES:
        return _into_workbook(paths, kind, into, replace=replace, cohort_by=cohort_by, only=only, system=system,
                              cohorts=cohorts)
    return _into_battle_file(paths, kind, into, force=force, cohort_by=cohort_by, only=only, system=system,
                             map_size=map_size, cohorts=cohorts)


# -- a new battle file -----------------------------------------------------------------------

def _system_id(system: str | None) -> str:
    from sheetsync.core.registry import find_system

    return str(find_system(system).id) if system else "bbn"


def _into_battle_file(paths: Sequence[Path], kind: str, out: Path, *, force: bool, cohort_by: str,
                      only: Sequence[str] | None, system: str | None, map_size: str | None,
                      cohorts: Sequence[str] | None = None) -> ImportReport:
    from sheetsync.sheets.disk import dump_battle_file, refuse_existing

    refuse_existing(out, force)  # before any work
    system_id = _system_id(system)
    source = paths[0] if system_id == "exalted" or kind == ".gex" else _one(paths, system_id)
    if kind == ".csv":
        for p in paths:
            _refuse_other_system(read_csv(p), system_id,
                                 lambda other: f"add --system {other}" if system is None else
                                 f"use --system {other}" + (" (or leave --system out)" if other == "bbn" else ""))
    if kind == ".gex":
        if system_id != "bbn":
            raise InputError([Problem("--system", f"a Grapevine file holds battalion characters, not {system_id} "
                                      "units: leave --system out")])
        import_gex = room("bbn", "importing").import_gex

        result = import_gex(paths, cohort_by=cohort_by, only=_names(only), cohorts=cohorts)
        data: dict[str, Any] = result.battle
        report = _bbn_report(out, [(c["name"], [m["name"] for m in c["members"]]) for c in data["cohorts"]])
        report.notes = list(result.notes)
        report.unmapped = {k: [str(u) for u in v] for k, v in result.unmapped.items() if v}
    elif system_id == "bbn":
        battle = room("bbn", "importing").battle_from_csv([read_csv(source)])
        data = room("bbn", "files.loader").battle_to_file(battle)
        report = _bbn_report(out, [(c.name, [m.name for m in c.members]) for c in battle.cohorts])
        _not_counted(report, battle)
        report.notes.append("every cohort is on side 'players': set each cohort's side in the battle file")
    elif system_id == "hexwar":
        data, report = _hex_battle_file(read_csv(source), out, map_size)
    elif system_id == "exalted":
        battle = room("exalted", "importing").battle_from_csv([read_csv(p) for p in paths])
        data = room("exalted", "files.loader").battle_to_file(battle)
        report = ImportReport(out, "", _sides([(u.name, u.spec.side) for u in battle.units]), group_word="Side")
    else:
        raise _not_yet(system_id)
    dump_battle_file(data, out, backup=force)
    report.message = {"bbn": f"battle file written; add ranges and orders, then: sheetsync pools {out}",
                      "exalted": f"battle file written; add the orders (each with its tick), then: sheetsync check "
                                 f"{out}"}.get(system_id, f"battle file written; add the turn's orders, then: "
                                                          f"sheetsync check {out}")
    return report


def _not_yet(system_id: str) -> BackendError:
    from sheetsync.core.registry import find_system

    title = find_system(system_id).title
    return BackendError(f"importing {title} characters or units is not built yet; write its battle file by hand "
                        f"(sheetsync demo --system {system_id} writes an example to copy). CSV import reads "
                        f"{' and '.join(CSV_SYSTEMS)} characters and units")


def _map(map_size: str | None) -> dict[str, int]:
    import re

    if map_size is None:
        raise InputError([Problem("--map", "a hex battle file needs its map's size (H2): add --map COLUMNSxROWS, "
                                  "e.g. --map 12x8")])

    MAX_CAPACITY = room("hexwar", "tracker.layout").MAX_CAPACITY
    m = re.fullmatch(r"\s*(\d{1,3})\s*[xX×]\s*(\d{1,3})\s*", map_size)
    if m is None:
        raise InputError([Problem("--map", f"{map_size!r} is not a map size: write COLUMNSxROWS, e.g. 12x8")])
    shape = {"columns": int(m[1]), "rows": int(m[2])}
    for key, n in shape.items():
        most = MAX_CAPACITY[f"map_{key}"]
        if not 1 <= n <= most:
            raise InputError([Problem("--map", f"a map has 1 to {most} {key}, not {n} (H2)")])
    return shape


def _hex_battle_file(table: CsvTable, out: Path, map_size: str | None) -> tuple[dict[str, Any], ImportReport]:
    """H1, H2: the CSV's units on a map of ``map_size`` as a hex battle file."""
    battle = room("hexwar", "importing").battle_from_csv([table], _map(map_size))
    report = ImportReport(out, "", _sides([(u.name, u.side) for u in battle.units]), group_word="Side")
    return room("hexwar", "files.loader").battle_to_file(battle), report


def _sides(units: Sequence[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    out: dict[str, list[str]] = {}
    for name, side in units:
        out.setdefault(side, []).append(name)
    return list(out.items())


def _bbn_report(target: Path, groups: list[tuple[str, list[str]]]) -> ImportReport:
    return ImportReport(target, "", groups)


def _not_counted(report: ImportReport, battle: Any) -> None:
    """R12: each member's traits that feed no pool (an Other Traits entry no pool uses, say),
    by the engine's own reckoning, into the report and its notes."""
    for spec in battle.cohorts:
        listed: dict[str, list[str]] = {}
        for nc in battle.pools[spec.name].not_counted:
            listed.setdefault(nc.member, []).append(f"{nc.trait}: {nc.reason}" if nc.reason else nc.trait)
        for member, traits in listed.items():
            report.unmapped[member] = traits
            report.notes.append(f"{member}: not counted (R12): " + "; ".join(traits))


# -- an existing tracker ---------------------------------------------------------------------

def _into_workbook(paths: Sequence[Path], kind: str, path: Path, *, replace: bool, cohort_by: str,
                   only: Sequence[str] | None, system: str | None,
                   cohorts: Sequence[str] | None = None) -> ImportReport:
    from sheetsync.app.workbook_cli import excel_backend

    source = paths[0]
    if not path.exists():
        raise BackendError(f"{path}: no such workbook; make a blank tracker first (sheetsync template {path}), or "
                           f"write a new one from the import with sheetsync new {path} --from {source.name}")
    # the import's own problems first: a bad file costs no workbook read
    gex = None
    tables: list[CsvTable] = []
    if kind == ".gex":
        import_gex = room("bbn", "importing").import_gex

        gex = import_gex(paths, cohort_by=cohort_by, only=_names(only), cohorts=cohorts)
    else:
        tables = [read_csv(p) for p in paths]
    backend = excel_backend(path)
    with backend.locked():
        return _into_tracker(backend, _Target(path.name, f"sheetsync build {path}", path), gex=gex, tables=tables,
                             replace=replace, system=system)


def import_into_backend(sources: Sequence[Path], backend: Any, name: str, *, replace: bool = False,
                        build: str | None = None) -> ImportReport:
    """Import CSV files into the tracker behind ``backend`` (a Google Sheet), named ``name``
    in messages: one read, one write, nothing written when anything is wrong.  ``build``
    is the command the report says to run next."""
    paths = _sources(sources)
    if any(_source(p) == ".gex" for p in paths):
        raise InputError([Problem(paths[0].name, "import a Grapevine file into a workbook (sheetsync import FILE.gex "
                                  "--into battle.xlsx), then sheetsync upload it; into a Google Sheet, import CSV")])
    tables = [read_csv(p) for p in paths]
    return _into_tracker(backend, _Target(name, build or f"sheetsync gsheet build {name}", name), gex=None,
                         tables=tables, replace=replace, system=None)


def _into_tracker(backend: Any, target: _Target, *, gex: Any, tables: Sequence[CsvTable], replace: bool,
                  system: str | None) -> ImportReport:
    """The import into a tracker of any system, its kind said by its mark."""
    from sheetsync.sheets.marks import detect

    tracker = detect(backend)
    system_id = str(tracker.system.id)
    if system is not None and _system_id(system) != system_id:
        raise InputError([Problem("--system", f"{target.name} is a {tracker.system.title.lower()} tracker, not "
                                  f"{_system_id(system)}: leave --system out")])
    if gex is not None and system_id != "bbn":
        raise InputError([Problem(target.name, f"is a {tracker.system.title.lower()} tracker; a Grapevine file holds "
                                  "battalion characters (import it into a battalion tracker)")])
    own = _title(system_id)
    for t in tables:
        _refuse_other_system(t, system_id, lambda other: f"{target.name} is {own} tracker, so import it "
                             f"into {_title(other)} tracker, or into a battle file with --system {other}")
    if system_id == "exalted":
        return _into_exalted(backend, tracker, target, tables, replace=replace)
    table = None
    if gex is None:
        table = _read_one(tables, system_id)
    if system_id == "bbn":
        return _into_bbn(backend, tracker, target, gex=gex, table=table, replace=replace)
    if system_id == "hexwar" and table is not None:
        return _into_hex(backend, tracker, target, table, replace=replace)
    raise _not_yet(system_id)


def _title(system_id: str) -> str:
    from sheetsync.core.registry import find_system

    title = str(find_system(system_id).title).lower()
    return f"{'an' if title[0] in 'aeiou' else 'a'} {title}"


def _refuse_other_system(table: CsvTable, system_id: str, fix: Any) -> None:
    """Issue 22: a CSV whose headers are another system's columns says which system they
    are and how to import it (``fix(other)``), rather than calling every header unknown."""
    from sheetsync.importers.csv_import import describe, other_system

    found = other_system(table, system_id)
    if found is not None:
        other, sheet = found
        raise InputError([Problem(f"{table.where}:1", f"these columns are {describe(other, sheet)}: "
                                  f"{fix(other)}")], table.where)


def _read_one(tables: Sequence[CsvTable], system_id: str) -> CsvTable:
    """The one CSV a battalion or hex import takes."""
    if len(tables) > 1:
        raise InputError([Problem(tables[1].where, f"a {system_id} import reads one CSV file (its characters or "
                                  "units); give one file at a time")])
    return tables[0]


def _refuse_started(history: Grid, target: _Target, word: str) -> None:
    """A tracker with a step resolved keeps its characters: its undo records are built on them."""
    if any(not _blank(row) for row in history):
        raise BattleStateError(f"{target.name}: a {word} of this battle is resolved already, so its characters stay as "
                               f"they are; nothing was written. Import into a new tracker (sheetsync template)")


def _into_bbn(backend: Any, tracker: Any, target: _Target, *, gex: Any, table: CsvTable | None,
              replace: bool) -> ImportReport:
    """Cohort Sheet 1.1-1.7: the characters into the Characters sheet and their cohorts into
    the Cohorts sheet.  Cohorts typed there already keep their row (side, sergeant …); one
    the import adds gets a new row below them.  With ``replace``, both sheets hold the
    import only.  Checked as Build Cohorts checks the sheets, with the tracker's House Rules."""
    importing = room("bbn", "importing")
    reader = room("bbn", "tracker.reader")
    Sheets = reader.Sheets
    input_updates = room("bbn", "tracker.writer").input_updates
    lay = room("bbn", "tracker.layout").layout(capacity=tracker.capacity)
    sh = Sheets.from_grids(backend.read_ranges(reader.read_plan(lay)))
    _refuse_started(sh.history, target, "phase")
    chars_block, setup_block = lay.block("Characters_Table"), lay.block("Cohorts_Setup")
    held = [i for i, row in enumerate(sh.characters) if not _blank(row)]
    adding = bool(held) and not replace
    if adding and gex is None:
        first = chars_block.cell(held[0], "name")
        raise BattleStateError(f"{target.name}: the Characters sheet already holds {len(held)} character"
                               f"{'s' if len(held) != 1 else ''} (from {first}); nothing was written. Add --replace "
                               "to replace them and the Cohorts sheet's rows with the import")
    cap = lay.capacity
    name_at = setup_block.index("name")
    found: dict[int, Any] = {}
    problems: list[Problem] = []
    start = held[-1] + 1 if adding else 0  # the first Characters row written: below the characters kept
    if gex is not None:
        imported = room("bbn", "files.loader").load_battle(gex.battle, gex.source)
        count = sum(len(c.members) for c in imported.cohorts)
        _fits(target, cap, count, len(imported.cohorts), source=gex.files or Path(gex.source).name)
        if adding:
            _refuse_clashes(target, chars_block, sh.characters, held, imported, gex.files)
            _room(target, chars_block, cap["characters"], held, count, gex.files)
        updates = input_updates(lay, imported)
        grid: Grid = [list(r) for r in updates[0].values[:count]]
        new_rows: list[list[CellValue]] = [list(r) for r in updates[1].values[:len(imported.cohorts)]]
    else:
        assert table is not None
        grid, found = importing.character_rows(table, lay, problems)
        names = importing.cohort_names(grid, chars_block)
        _fits(target, cap, len(grid), len(names), source=table.where)
        new_rows = []
        for name in names:
            row: list[CellValue] = [None] * len(setup_block.columns)
            row[name_at] = name
            new_rows.append(row)
    kept: list[list[CellValue]] = []
    if not replace:  # the rows as they are on the sheet (blank rows too, so each keeps its address)
        typed = [i for i, r in enumerate(sh.setup) if not _blank(r)]
        kept = [list(r) for r in sh.setup[:typed[-1] + 1]] if typed else []
    named = {str(r[name_at]).strip().casefold() for r in kept if len(r) > name_at and not _blank([r[name_at]])}
    added = [r for r in new_rows if str(r[name_at]).strip().casefold() not in named]
    setup = kept + added
    if len(setup) > cap["cohorts"]:
        raise InputError([Problem(f"{setup_block.sheet}!A{setup_block.first_row}",
                                  f"the import needs {len(setup)} cohort rows ({len(kept)} already on the sheet), and "
                                  f"{target.name} holds at most {cap['cohorts']} cohorts; nothing was written")])
    if table is not None:
        battle = importing.check_rows(lay, grid, setup, table, found, problems, new_from=len(kept), mark=sh.mark, base=sh)
    else:
        from sheetsync.core.errors import SheetFormatError

        kept_chars = [list(r) for r in sh.characters[:start]]  # the characters kept, each on its row
        fresh = Sheets(state=sh.state, characters=kept_chars + grid, setup=setup, orders=sh.orders, ranges=sh.ranges,
                       house_rules=sh.house_rules, seed=sh.seed, log=sh.log, aftermath_head=sh.aftermath_head,
                       mark=sh.mark, history=sh.history)
        try:
            battle = reader.parse_battle_setup(lay, fresh)
        except SheetFormatError as err:  # the tracker's own rows (a Cohorts row left with no members, say)
            raise InputError(err.problems, target.name) from None
    if adding:  # the new rows only: every cell already on the sheets stays as it is
        from sheetsync.sheets.backend import RangeUpdate

        writes = [RangeUpdate(_row_at(chars_block, start), grid)]
        if added:
            writes.append(RangeUpdate(_row_at(setup_block, len(kept)), added))
        backend.write_ranges(writes)
    else:
        backend.write_ranges(input_updates(lay, battle)[:2])  # Characters and Cohorts Setup only
    ours = {c.name.casefold() for c in imported.cohorts} if adding else None
    report = ImportReport(target.path, "", [(c.name, [m.name for m in c.members]) for c in battle.cohorts
                                            if ours is None or c.name.casefold() in ours])
    if gex is not None:
        report.notes = list(gex.notes)
        report.unmapped = {k: [str(u) for u in v] for k, v in gex.unmapped.items() if v}
    if table is not None:
        _not_counted(report, battle)
    if added and table is not None:
        report.notes.append(f"{len(added)} cohort{'s' if len(added) != 1 else ''} added to the Cohorts sheet on side "
                            "'players': set each one's side there")
    n = sum(len(m) for _c, m in report.groups)
    where = (f"added below the {len(held)} already on the Characters sheet (from {_row_at(chars_block, start)})"
             if adding else "written to the Characters and Cohorts sheets")
    report.message = (f"{n} character{'s' if n != 1 else ''} in {len(report.groups)} cohort"
                      f"{'s' if len(report.groups) != 1 else ''} {where}; add ranges, then: {target.build}")
    return report


def _row_at(block: Any, offset: int) -> str:
    """The first cell of ``block``'s row ``offset`` (``Characters!A8``): where rows written from there start."""
    from sheetsync.sheets.backend import col_letter, quote_sheet

    return f"{quote_sheet(block.sheet)}!{col_letter(block.first_col)}{block.first_row + offset}"


def _refuse_clashes(target: _Target, block: Any, grid: Grid, held: Sequence[int], imported: Any, files: str) -> None:
    """Issue 22: an import added to a tracker's characters (no ``replace``) may not bring a
    character whose name is on the Characters sheet already, nor more members for a cohort
    there (R1: its members are the Storyteller's to pick): each clash named at its cell."""
    name_at, cohort_at = block.index("name"), block.index("cohort")
    names: dict[str, str] = {}
    cohorts: dict[str, str] = {}
    for i in held:
        row = grid[i]
        for at, seen, key in ((name_at, names, "name"), (cohort_at, cohorts, "cohort")):
            value = row[at] if at < len(row) else None
            if isinstance(value, str) and value.strip():
                seen.setdefault(value.strip().casefold(), block.cell(i, key))
    problems: list[Problem] = []
    for c in imported.cohorts:
        if c.name.casefold() in cohorts:
            problems.append(Problem(cohorts[c.name.casefold()], f"the cohort {c.name!r} is on the sheet already, and "
                                    f"{files} would add {len(c.members)} more members to it; pick the import's under "
                                    f"another name (--cohort \"NEW NAME=coterie:{c.name}\", or sect: or clan:)"))
        for m in c.members:
            if m.name.casefold() in names:
                problems.append(Problem(names[m.name.casefold()], f"{m.name} is on the sheet already and in {files}: "
                                        "one character can't fight twice"))
    if problems:
        n = len(held)
        raise InputError([Problem(target.name, f"the Characters sheet already holds {n} character"
                                  f"{'s' if n != 1 else ''} (from {block.cell(held[0], 'name')}); nothing was "
                                  f"written: the import adds to them, and {len(problems)} of its names clash with "
                                  "theirs. Leave those out (--only, --cohort), or add --replace to replace the "
                                  "sheet's characters and cohorts with the import"), *problems])


def _room(target: _Target, block: Any, most: int, held: Sequence[int], count: int, files: str) -> None:
    """Issue 9: the rows added below the characters kept must fit the Characters sheet."""
    start = held[-1] + 1
    if start + count > most:
        raise InputError([Problem(files, f"adds {count} characters below the {len(held)} on {target.name}'s "
                                  f"Characters sheet (from {_row_at(block, start)}), and it holds at most {most}; "
                                  "nothing was written. Import them all into a new tracker (sheetsync new OUT.xlsx "
                                  f"--from a battle file of them), or add --replace")], files)


def _fits(target: _Target, cap: dict[str, int], characters: int, cohorts: int, *, source: str) -> None:
    """The import must fit the tracker's rows (issue 9): each limit over is named."""
    problems = []
    for key, n in (("characters", characters), ("cohorts", cohorts)):
        if n > cap[key]:
            problems.append(Problem(source, f"holds {n} {key}, and {target.name} holds at most {cap[key]} {key}; "
                                    "nothing was written. Make a tracker sized to them with sheetsync new OUT.xlsx "
                                    f"--from {source}"))
    if problems:
        raise InputError(problems, source)


def _into_hex(backend: Any, tracker: Any, target: _Target, table: CsvTable, *, replace: bool) -> ImportReport:
    """H1, H2: the units into the Units sheet's typed columns (Unit … Men); Build Units
    works out the rest.  Checked against the tracker's map as Build Units checks it."""
    from sheetsync.sheets import session as ss
    from sheetsync.sheets import table as tables
    from sheetsync.sheets.backend import parse_range

    hex_layout = room("hexwar", "tracker.layout")
    MAX_CAPACITY = hex_layout.MAX_CAPACITY
    BATTLE_RANGE = room("hexwar", "tracker.steps").BATTLE_RANGE
    lay = hex_layout.layout(tracker.capacity or None)
    block = lay.block("Units_Table")
    records = ss.read_ranges(lay.block("State_Blob").range())[1]  # the undo records: one per resolved turn
    units_grid, battle_cells, history = backend.read_ranges([block.range(), BATTLE_RANGE, records])
    turn = battle_cells[0][0] if battle_cells and battle_cells[0] else None
    record_rows = [r for r in history if tuple([*r, None, None, None, None][:4]) != ss.RECORDS_HEADER]  # issue 22.3
    if (isinstance(turn, int) and turn > 1) or any(not _blank(r) for r in record_rows):
        raise BattleStateError(f"{target.name}: a turn of this battle is resolved already, so its units stay as they "
                               "are; nothing was written. Import into a new tracker (sheetsync template --system "
                               "hexwar)")
    keys = room("hexwar", "importing").UNIT_KEYS
    held = [i for i, row in enumerate(units_grid[:block.rows])
            if not _blank([row[block.index(k)] if block.index(k) < len(row) else None for k in keys])]
    if held and not replace:
        raise BattleStateError(f"{target.name}: the Units sheet already holds {len(held)} unit"
                               f"{'s' if len(held) != 1 else ''} (from {block.cell(held[0], 'name')}); nothing was "
                               "written. Add --replace to replace them with the import")
    if len(table.rows) > (block.rows or 0):
        raise InputError([Problem(table.where, f"holds {len(table.rows)} units, and {target.name} holds at most "
                                  f"{block.rows} units; nothing was written. Make a tracker sized to them: import "
                                  f"into a battle file, then sheetsync new OUT.xlsx --from it (up to "
                                  f"{MAX_CAPACITY['units']})")], table.where)
    # checked as Build Units checks them, on the tracker's map (the largest, when not typed yet)
    start = parse_range(BATTLE_RANGE).row1
    typed: dict[str, Any] = {}
    for name in ("Battle_MapColumns", "Battle_MapRows", "Battle_Impassable"):
        cell = lay.cells[name]
        k = int(cell.address[1:]) - start
        value = battle_cells[k][0] if 0 <= k < len(battle_cells) and battle_cells[k] else None
        typed[name] = tables.read_cell(cell, value, [])  # a bad map cell is Build Units' to report
    columns, rows = typed["Battle_MapColumns"], typed["Battle_MapRows"]
    shape = {"columns": columns if isinstance(columns, int) else MAX_CAPACITY["map_columns"],
             "rows": rows if isinstance(rows, int) else MAX_CAPACITY["map_rows"]}
    impassable = list(typed["Battle_Impassable"] or ()) if columns and rows else []
    importing = room("hexwar", "importing")
    importing.battle_from_csv([table], shape, impassable)  # every problem, at its CSV cell; raises when any
    _found, decoded, _problems, _where = importing.unit_rows(table, block)  # the cells as typed (a blank Size stays blank)
    rows_out = [{"name": u.get("name"), "side": u.get("side"), "counter": u.get("counter"),
                 "start_hex": u.get("hex"), "size": u.get("size"), "men": u.get("men")} for u in decoded]
    backend.write_ranges([tables.block_fill(block, rows_out, keys=keys)])
    report = ImportReport(target.path, "", _sides([(str(u.get("name")), str(u.get("side"))) for u in decoded]),
                          group_word="Side")
    report.message = (f"{len(decoded)} unit{'s' if len(decoded) != 1 else ''} written to the Units sheet; then: "
                      f"{target.build}")
    return report


def _into_exalted(backend: Any, tracker: Any, target: _Target, tables: Sequence[CsvTable], *,
                  replace: bool) -> ImportReport:
    """E7-E10, X1-X11: each CSV into the typed columns of the sheet its headers name
    (Characters, or Units up to Join War dice); Build Units works out the rest.  Checked as
    Build Units checks the sheets, against the tracker's other sheet and House Rules: a
    units CSV's commanders must be on the Characters sheet (or in the characters CSV)."""
    from sheetsync.sheets import table as tablemod
    from sheetsync.sheets.csv_rows import merged

    et = room("exalted", "tracker.steps")
    importing = room("exalted", "importing")
    ex_layout = room("exalted", "tracker.layout")
    MAX_CAPACITY = ex_layout.MAX_CAPACITY
    lay = ex_layout.layout(tracker.capacity or None)
    by_sheet = importing.tables_by_sheet(tables)
    rd = et._parse(lay, backend.read_ranges(et._plan(lay)))
    if rd.session.history() or (rd.session.battle or {}).get("started"):
        raise BattleStateError(f"{target.name}: a long tick of this battle is resolved already, so its characters "
                               "and units stay as they are; nothing was written. Import into a new tracker "
                               "(sheetsync template --system exalted)")
    own = {"characters": rd.chars, "units": rd.units}
    for sheet, t in by_sheet.items():
        block = lay.block(importing.SHEETS[sheet])
        keys = [c.key for c in block.columns if c.is_input]
        held = [r.offset for r in tablemod.read_block(block, own[sheet], [], keys=["name"], blank_keys=keys)]
        if held and not replace:
            word = "character" if sheet == "characters" else "unit"
            raise BattleStateError(f"{target.name}: the {block.sheet} sheet already holds {len(held)} {word}"
                                   f"{'s' if len(held) != 1 else ''} (from {block.cell(held[0], 'name')}); nothing "
                                   "was written. Add --replace to replace them with the import")
        if len(t.rows) > (block.rows or 0):
            raise InputError([Problem(t.where, f"holds {len(t.rows)} {sheet}, and {target.name} holds at most "
                                      f"{block.rows} {sheet}; nothing was written. Make a tracker sized to them: "
                                      "import into a battle file, then sheetsync new OUT.xlsx --from it (up to "
                                      f"{MAX_CAPACITY[sheet]})")], t.where)
    problems: list[Problem] = []
    grids = dict(own)
    csvs: dict[str, tuple[CsvTable, dict[int, Any]]] = {}
    for sheet, t in by_sheet.items():
        grids[sheet], found = importing.sheet_rows(t, lay, sheet, problems)
        csvs[sheet] = (t, found)
    _battle, decoded, found_problems = importing.check_rows(lay, grids, csvs, rd.house)
    problems = merged(problems, found_problems)
    if problems:
        raise InputError(problems, next(iter(by_sheet.values())).where)
    updates = []
    for sheet in by_sheet:
        block = lay.block(importing.SHEETS[sheet])
        updates.append(tablemod.block_fill(block, decoded[sheet], keys=[c.key for c in block.columns if c.is_input]))
    backend.write_ranges(updates)
    groups: list[tuple[str, list[str]]] = []
    said = []
    if "units" in decoded:
        groups = _sides([(str(u.get("name")), str(u.get("side"))) for u in decoded["units"]])
        n = len(decoded["units"])
        said.append(f"{n} unit{'s' if n != 1 else ''} written to the Units sheet")
    if "characters" in decoded:
        n = len(decoded["characters"])
        said.append(f"{n} character{'s' if n != 1 else ''} written to the Characters sheet")
        if not groups:
            groups = [("Characters", [str(c.get("name")) for c in decoded["characters"]])]
    report = ImportReport(target.path, "", groups, group_word="Side" if "units" in decoded else "Sheet")
    report.message = "; ".join(said) + f"; then: {target.build}"
    return report

