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

The CSV is read by :mod:`sheetsync.sheets.csv_rows` and what its rows become is each
system's ``importing`` room's (``room(system_id, "importing")``); this module says which
system a CSV's headers are, writes the header row of a template, and keeps the rooms'
functions under their former names (``bbn_battle``, ``hex_units``, ``exalted_battle`` ...).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sheetsync.core.errors import BackendError, InputError, Problem
from sheetsync.core.registry import room
from sheetsync.sheets.backend import Grid
from sheetsync.sheets.csv_rows import (
    MAX_BYTES,
    CsvTable,
    merged,
    normalize,
    read_csv,
    relocate,
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
    if system_id in CSV_SYSTEMS:
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
    sheets: tuple[str | None, ...] = room(system_id, "importing").CSV_SHEETS
    return sheets


def _matches(table: CsvTable, system_id: str, sheet: str | None) -> int:
    """How many of the CSV's headers are columns of ``system_id``'s sheet (matched as
    :func:`~sheetsync.sheets.csv_rows.match_headers` matches them)."""
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


def _bbn() -> Any:
    return room("bbn", "importing")


def bbn_character_rows(table: CsvTable, lay: Any, problems: list[Problem]) -> tuple[Grid, dict[int, Any]]:
    """The battalion's ``importing.character_rows`` (Cohort Sheet 1.1-1.7), by its former name."""
    rows: tuple[Grid, dict[int, Any]] = _bbn().character_rows(table, lay, problems)
    return rows


def cohort_names(grid: Grid, block: Any) -> list[str]:
    """The battalion's ``importing.cohort_names``, by its former name."""
    names: list[str] = _bbn().cohort_names(grid, block)
    return names


def bbn_battle(table: CsvTable) -> Any:
    """The battalion's ``importing.battle_from_csv`` (Cohort Sheet 1.1-1.7, R1-R12) of one
    CSV, by its former name."""
    return _bbn().battle_from_csv([table])


def check_bbn(lay: Any, grid: Grid, setup: Grid, table: CsvTable, found: dict[int, Any], problems: list[Problem],
              *, new_from: int, mark: Grid, base: Any = None) -> Any:
    """The battalion's ``importing.check_rows`` (Build Cohorts' check), by its former name."""
    return _bbn().check_rows(lay, grid, setup, table, found, problems, new_from=new_from, mark=mark, base=base)


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
