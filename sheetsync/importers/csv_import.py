"""Characters (battalion), units (hex wargame), or characters and units (Exalted, one CSV
for each sheet) from CSV files, one row each, with the columns of the system's Characters
or Units sheet.

A header matches a column as trait names match (R12: case, spacing and punctuation
ignored), by the sheet's header (``Willpower Spent``) or its field name
(``willpower_spent``).  Every cell is read by its column's codec, the same one the
tracker's reader uses, so a CSV row and a sheet row mean the same thing.  Every bad cell
is reported at once by its place in the CSV (``chars.csv:C7: ...``, the column letter and
row number a spreadsheet shows when it opens the file), and nothing is made from a file
with any problem.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sheetsync.core.errors import BackendError, InputError, Problem, SheetFormatError
from sheetsync.core.registry import room
from sheetsync.sheets.backend import CellValue, Grid
from sheetsync.sheets.csv_rows import (
    CELL as _CELL,
)
from sheetsync.sheets.csv_rows import (
    MAX_BYTES,
    CsvTable,
    merged,
    normalize,
    read_csv,
    relocate,
)
from sheetsync.sheets.csv_rows import (
    block_grid as _grid,
)
from sheetsync.sheets.csv_rows import (
    match_headers as _match_headers,
)

__all__ = [
    "CSV_SYSTEMS",
    "MAX_BYTES",
    "CsvTable",
    "bbn_battle",
    "bbn_character_rows",
    "check_bbn",
    "cohort_names",
    "csv_headers",
    "describe",
    "exalted_battle",
    "exalted_check",
    "exalted_rows",
    "exalted_sheet_of",
    "exalted_tables",
    "hex_unit_rows",
    "hex_units",
    "merged",
    "other_system",
    "read_csv",
    "relocate",
    "template_sheet",
    "write_template_csv",
]

CSV_SYSTEMS = ("bbn", "hexwar", "exalted")
"""The systems whose characters or units a CSV file holds."""

def _input_columns(system_id: str, sheet: str | None = None) -> tuple[Any, list[Any]]:
    """The block and the typed columns a CSV row of ``system_id`` holds (for Exalted, of
    ``sheet``: ``characters``, the default, or ``units``)."""
    if system_id == "bbn":
        block = room("bbn", "tracker.layout").layout().block("Characters_Table")
        return block, [c for c in block.columns if c.is_input]
    if system_id in ("hexwar", "exalted"):
        columns: tuple[Any, list[Any]] = room(system_id, "importing").csv_columns(sheet)
        return columns
    raise _not_yet(system_id)


def _not_yet(system_id: str) -> BackendError:
    from sheetsync.core.registry import find_system

    title = find_system(system_id).title
    return BackendError(f"a CSV of {title} characters or units is not read yet: write the battle file by hand "
                        f"(sheetsync demo --system {system_id} writes an example to copy); CSV import reads "
                        f"{', '.join(CSV_SYSTEMS)}")



def _sheets_of(system_id: str) -> tuple[str | None, ...]:
    """The sheets a CSV of ``system_id`` may hold (``None``: its one sheet)."""
    sheets: tuple[str | None, ...] = room(system_id, "importing").CSV_SHEETS if system_id != "bbn" else (None,)
    return sheets


def _matches(table: CsvTable, system_id: str, sheet: str | None) -> int:
    """How many of the CSV's headers are columns of ``system_id``'s sheet (matched as
    :func:`_match_headers` matches them)."""
    _block, cols = _input_columns(system_id, sheet)
    names = {normalize(c.header) for c in cols} | {normalize(c.key.split(":")[-1]) for c in cols}
    return sum(1 for h in table.headers if h and normalize(h) in names)


def describe(system_id: str, sheet: str | None = None) -> str:
    """``a hexwar units CSV``, ``a bbn characters CSV``, ``an exalted units CSV``."""
    what = sheet or ("units" if system_id == "hexwar" else "characters")
    return f"{'an' if system_id[0] in 'aeiou' else 'a'} {system_id} {what} CSV"


def other_system(table: CsvTable, system_id: str) -> tuple[str, str | None] | None:
    """Issue 22: the system (and, for Exalted, the sheet) whose CSV columns the headers are,
    when that is not ``system_id``: another system's sheet matching more of the headers
    than any of ``system_id``'s.  ``None`` when the headers are ``system_id``'s, or no
    other system's fit them better (then each unknown header is named as usual)."""
    own = max(_matches(table, system_id, sheet) for sheet in _sheets_of(system_id))
    best: tuple[int, str, str | None] | None = None
    for other in CSV_SYSTEMS:
        if other == system_id:
            continue
        for sheet in _sheets_of(other):
            n = _matches(table, other, sheet)
            if n > own and (best is None or n > best[0]):
                best = (n, other, sheet)
    return None if best is None else (best[1], best[2])


def csv_headers(system_id: str, sheet: str | None = None) -> list[str]:
    """The header row of the CSV for ``system_id``: its Characters (battalion) or Units
    (hex wargame) sheet's typed columns, in the sheet's order; for Exalted, those of
    ``sheet`` (``characters`` or ``units``)."""
    _block, cols = _input_columns(system_id, sheet)
    return [c.header for c in cols]


def template_sheet(system_id: str, out: Path, sheet: str | None) -> str | None:
    """The sheet an Exalted CSV template is for: ``sheet`` when given, else ``units`` when
    the file's name says so (``units.csv``), else ``characters``.  ``None`` for the other
    systems, whose CSV holds one sheet; a ``sheet`` given for them is refused."""
    if system_id != "exalted":
        if sheet is not None:
            raise InputError([Problem("--sheet", "picks the Characters or Units sheet of an Exalted CSV; this "
                                      "system's CSV holds one sheet: leave --sheet out")])
        return None
    if sheet is None:
        return "units" if "unit" in out.stem.casefold() else "characters"
    word = sheet.strip().casefold()
    if word not in _exalted().SHEETS:
        raise InputError([Problem("--sheet", f"{sheet!r} is not a sheet of an Exalted CSV: characters or units")])
    return word


def write_template_csv(out: Path, system_id: str, *, force: bool = False, sheet: str | None = None) -> Path:
    """An empty CSV at ``out`` holding only the header row for ``system_id`` (for Exalted,
    of ``sheet``); an existing file is refused unless ``force`` (then kept as ``NAME.bak``)."""
    from sheetsync.sheets.disk import atomic_write_text, file_lock, refuse_existing

    headers = csv_headers(system_id, sheet)
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\r\n").writerow(headers)
    with file_lock(out):
        refuse_existing(out, force)
        atomic_write_text(out, buf.getvalue(), backup=True)
    return out


def bbn_character_rows(table: CsvTable, lay: Any, problems: list[Problem]) -> tuple[Grid, dict[int, Any]]:
    """Cohort Sheet 1.1-1.7: the CSV's characters as rows of the tracker's Characters
    block (``lay``), and which CSV column is which block column; header problems are
    added to ``problems``, each at its CSV cell."""
    block = lay.block("Characters_Table")
    found = _match_headers(table, [c for c in block.columns if c.is_input], ("cohort", "name"), problems)
    return _grid(table, block, found), found


def cohort_names(grid: Grid, block: Any) -> list[str]:
    """The Cohort values of the Characters rows, each once (case ignored), in the order first named."""
    out: dict[str, str] = {}
    j = block.index("cohort")
    for row in grid:
        name = row[j] if j < len(row) else None
        if isinstance(name, str) and name.strip():
            out.setdefault(name.strip().casefold(), name.strip())
    return list(out.values())


def bbn_battle(table: CsvTable) -> Any:
    """Cohort Sheet 1.1-1.7, R1-R12: the CSV's characters as a battalion battle, one cohort
    per Cohort value (in the order first named), checked as Build Cohorts checks the
    Characters sheet; every problem is named by its CSV cell, all at once."""
    bbn_layout = room("bbn", "tracker.layout")
    MAX_CAPACITY, capacity_json, layout = bbn_layout.MAX_CAPACITY, bbn_layout.capacity_json, bbn_layout.layout
    probe = layout()
    problems: list[Problem] = []
    grid, _found = bbn_character_rows(table, probe, [])
    cohorts = cohort_names(grid, probe.block("Characters_Table"))
    limits = (("characters", len(table.rows)), ("cohorts", len(cohorts)))
    too_many = [Problem(table.where, f"holds {n} {key}; a battle holds at most {MAX_CAPACITY[key]}")
                for key, n in limits if n > MAX_CAPACITY[key]]
    if too_many:
        raise InputError(too_many, table.where)
    cap = {"characters": max(probe.capacity["characters"], len(table.rows)),
           "cohorts": max(probe.capacity["cohorts"], len(cohorts))}
    lay = layout(capacity=cap)
    grid, found = bbn_character_rows(table, lay, problems)
    setup_block = lay.block("Cohorts_Setup")
    setup: Grid = []
    for name in cohorts:
        row: list[CellValue] = [None] * len(setup_block.columns)
        row[setup_block.index("name")] = name
        setup.append(row)
    return check_bbn(lay, grid, setup, table, found, problems, new_from=0,
                     mark=[[None], [capacity_json(lay.capacity)]])


def check_bbn(lay: Any, grid: Grid, setup: Grid, table: CsvTable, found: dict[int, Any], problems: list[Problem],
              *, new_from: int, mark: Grid, base: Any = None) -> Any:
    """Build Cohorts' own check (:func:`~sheetsync.systems.bbn.tracker.reader.parse_battle_setup`) of
    the CSV's Characters rows ``grid`` with the Cohorts rows ``setup`` (those from
    ``new_from`` on were made for the CSV's cohorts) and the other grids of ``base`` (a
    tracker's read, or none).  Every problem is moved to the CSV cell it came from and
    raised with ``problems`` (the header's) as one :class:`InputError`."""
    reader = room("bbn", "tracker.reader")
    Sheets, parse_battle_setup = reader.Sheets, reader.parse_battle_setup
    if base is not None:
        sheets = Sheets(state=base.state, characters=grid, setup=setup, orders=base.orders, ranges=base.ranges,
                        house_rules=base.house_rules, seed=base.seed, log=base.log,
                        aftermath_head=base.aftermath_head, mark=mark, history=base.history)
    else:
        sheets = Sheets(state=[], characters=grid, setup=setup, orders=[], ranges=[], house_rules=[], seed=[],
                        log=[], mark=mark)
    try:
        battle = parse_battle_setup(lay, sheets)
    except SheetFormatError as err:
        moved = relocate(_cohort_problems(err.problems, lay, table, found, setup, new_from), table,
                         lay.block("Characters_Table"), found)
        raise InputError(merged(problems, moved), table.where) from None
    if problems:
        raise InputError(problems, table.where)
    return battle


def _cohort_problems(problems: Sequence[Problem], lay: Any, table: CsvTable, found: dict[int, Any],
                     setup: Grid, new_from: int) -> list[Problem]:
    """A problem the reader put on a Cohorts row made for the CSV (row ``new_from`` on; not
    on the sheet, e.g. R1's 3 to 5 members) is said of the CSV's Cohort cell on the first
    row that names that cohort."""
    block = lay.block("Cohorts_Setup")
    name_at = block.index("name")
    cohort_col = next(j for j, c in found.items() if c.key == "cohort")
    out = []
    for p in problems:
        m = _CELL.match(p.where)
        k = int(m["row"]) - block.first_row if m is not None and m["sheet"] == block.sheet else -1
        if new_from <= k < len(setup):
            name = str(setup[k][name_at]).casefold()
            number = next((n for n, cells in table.rows
                           if cohort_col < len(cells) and cells[cohort_col].casefold() == name), 2)
            out.append(Problem(table.at(cohort_col, number), p.message))
        else:
            out.append(p)
    return out


def hex_unit_rows(table: CsvTable, block: Any) -> tuple[dict[int, Any], list[dict[str, Any]], list[Problem],
                                                        dict[str, str]]:
    """The hex wargame's ``importing.unit_rows`` (H1, H2), by its former name."""
    rows: tuple[dict[int, Any], list[dict[str, Any]], list[Problem], dict[str, str]]
    rows = room("hexwar", "importing").unit_rows(table, block)
    return rows


def hex_units(table: CsvTable, shape: dict[str, int], impassable: Sequence[str] = ()) -> Any:
    """The hex wargame's ``importing.battle_from_csv`` (H1, H2) of one CSV, by its former name."""
    return room("hexwar", "importing").battle_from_csv([table], shape, impassable)


# -- Exalted: a Characters CSV and a Units CSV -------------------------------------------------

def _exalted() -> Any:
    return room("exalted", "importing")


def exalted_sheet_of(table: CsvTable) -> str:
    """Exalted's ``importing.sheet_of`` (E7-E10, X1-X11), by its former name."""
    sheet: str = _exalted().sheet_of(table)
    return sheet


def exalted_rows(table: CsvTable, lay: Any, sheet: str, problems: list[Problem]) -> tuple[Grid, dict[int, Any]]:
    """Exalted's ``importing.sheet_rows`` (E7-E10, X1-X11), by its former name."""
    rows: tuple[Grid, dict[int, Any]] = _exalted().sheet_rows(table, lay, sheet, problems)
    return rows


def exalted_check(lay: Any, grids: dict[str, Grid], csvs: dict[str, tuple[CsvTable, dict[int, Any]]],
                  house: Grid | None = None) -> tuple[Any, dict[str, list[dict[str, Any]]], list[Problem]]:
    """Exalted's ``importing.check_rows`` (X1-X11, E7-E10), by its former name."""
    checked: tuple[Any, dict[str, list[dict[str, Any]]], list[Problem]] = _exalted().check_rows(lay, grids, csvs,
                                                                                                 house)
    return checked


def exalted_tables(tables_: Sequence[CsvTable]) -> dict[str, CsvTable]:
    """Exalted's ``importing.tables_by_sheet`` (E7-E10, X1-X11), by its former name."""
    by_sheet: dict[str, CsvTable] = _exalted().tables_by_sheet(tables_)
    return by_sheet


def exalted_battle(tables_: Sequence[CsvTable]) -> Any:
    """Exalted's ``importing.battle_from_csv`` (E7-E10, X1-X11), by its former name."""
    return _exalted().battle_from_csv(tables_)


def __getattr__(name: str) -> Any:
    """``EXALTED_SHEETS``: Exalted's ``importing.SHEETS``, by its former name (looked up when asked
    for, so the module names no system; not in ``__all__``, which lists only what it defines)."""
    if name == "EXALTED_SHEETS":
        return _exalted().SHEETS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
