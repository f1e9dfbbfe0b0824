"""What CSV rows become in Exalted 2e mass combat: characters (E7-E10) and units (X1-X11),
one CSV for each sheet, told apart by its headers, each row with the typed columns of the
Characters or Units sheet; Build Units works out the rest.

Each cell is read by its column's codec, the same one the tracker's reader uses, and the
rows are checked as Build Units checks the sheets; every problem is named by its CSV cell
(``units.csv:C4``), all at once.  The CSV itself is read by :mod:`sheetsync.sheets.csv_rows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sheetsync.core.errors import InputError, Problem
from sheetsync.sheets import table as tables
from sheetsync.sheets.backend import Grid
from sheetsync.sheets.csv_rows import (
    CsvTable,
    block_grid,
    match_headers,
    merged,
    normalize,
    relocate,
)
from sheetsync.sheets.session import Session
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.tracker import layout as ex_layout
from sheetsync.systems.exalted.tracker import steps as et

__all__ = ["CSV_SHEETS", "SHEETS", "battle_from_csv", "check_rows", "csv_columns", "sheet_of", "sheet_rows",
           "tables_by_sheet"]

SHEETS = {"characters": "Characters_Table", "units": "Units_Table"}
"""E7-E10, X1-X11: an Exalted CSV holds the rows of one of these sheets (its block)."""

CSV_SHEETS: tuple[str | None, ...] = tuple(SHEETS)
"""The sheets an Exalted CSV may hold, one a file."""

_REQUIRED = {"characters": ("name",), "units": ("name", "side", "commander")}


def csv_columns(sheet: str | None = None) -> tuple[Any, list[Any]]:
    """The block and the typed columns a CSV row of ``sheet`` holds (``characters``, the
    default, or ``units``), in the sheet's order."""
    block = ex_layout.layout(None).block(SHEETS[sheet or "characters"])
    return block, [c for c in block.columns if c.is_input]


def sheet_of(table: CsvTable) -> str:
    """E7-E10, X1-X11: which Exalted sheet a CSV holds, by its headers (matched as trait
    names are, R12): ``characters`` when more of them are Characters columns (Character,
    Role, Dex ...), ``units`` when more are Units columns (Unit, Side, Commander ...).  A
    file that could be either is refused, saying how to tell them apart."""
    counts: dict[str, int] = {}
    for sheet in SHEETS:
        _block, cols = csv_columns(sheet)
        names = {normalize(c.header) for c in cols} | {normalize(c.key) for c in cols}
        counts[sheet] = sum(1 for h in table.headers if h and normalize(h) in names)
    if counts["characters"] == counts["units"]:
        raise InputError([Problem(f"{table.where}:1", "can't tell whether this CSV holds Exalted characters or "
                                  "units: head its first column Character (the Characters sheet) or Unit (the "
                                  "Units sheet); sheetsync template --csv chars.csv --system exalted writes the "
                                  "headers")], table.where)
    return max(counts, key=lambda k: counts[k])


def sheet_rows(table: CsvTable, lay: Any, sheet: str, problems: list[Problem]) -> tuple[Grid, dict[int, Any]]:
    """E7-E10 (``characters``) or X1-X11 (``units``): the CSV's rows as rows of the
    tracker's block (``lay``), and which CSV column is which block column; header problems
    are added to ``problems``, each at its CSV cell."""
    block = lay.block(SHEETS[sheet])
    found = match_headers(table, [c for c in block.columns if c.is_input], _REQUIRED[sheet], problems)
    return block_grid(table, block, found), found


def check_rows(lay: Any, grids: dict[str, Grid], csvs: dict[str, tuple[CsvTable, dict[int, Any]]],
                  house: Grid | None = None) -> tuple[Any, dict[str, list[dict[str, Any]]], list[Problem]]:
    """X1-X11, E7-E10: the Characters and Units rows (``grids``, by sheet: a CSV's, or the
    tracker's own) read as Build Units reads them, with the tracker's House Rules
    (``house``), and checked by the Exalted loader.  Returns the battle (``None`` when
    anything is wrong), each sheet's typed rows as decoded, and the problems of the rows
    that came from a CSV (``csvs``: sheet -> its table and column map), each at its CSV
    cell; a problem of the tracker's own rows is Build Units' to report, not the import's."""
    rd = et._Read(lay, [], grids.get("characters", []), grids.get("units", []), [], house or [], Session())
    cell_problems: list[Problem] = []
    where: dict[str, str] = {}
    data: dict[str, Any] = {"system": "exalted", "house_rules": et._house_rules(rd, [], where)}
    data["characters"] = et._characters(rd, cell_problems, where)
    data["units"], _offsets = et._units(rd, cell_problems, where)
    where["characters"] = f"Characters!A{lay.block('Characters_Table').first_row}"
    battle = None
    loader: list[Problem] = []
    try:
        battle = load_battle(data)
    except InputError as err:
        loader = tables.relocate(err.problems, where)
    problems = merged(cell_problems, loader)
    for sheet, (tbl, found) in csvs.items():
        problems = relocate(problems, tbl, lay.block(SHEETS[sheet]), found)
    ours = [p for p in problems if any(p.where == t.where or p.where.startswith(f"{t.where}:")
                                       for t, _f in csvs.values())]
    decoded: dict[str, list[dict[str, Any]]] = {}
    for sheet, (_tbl, _found) in csvs.items():
        block = lay.block(SHEETS[sheet])
        keys = [c.key for c in block.columns if c.is_input]
        decoded[sheet] = [r.values for r in tables.read_block(block, grids[sheet], [], keys=keys)]
    return (battle if not problems else None), decoded, ours


def tables_by_sheet(tables_: Sequence[CsvTable]) -> dict[str, CsvTable]:
    """E7-E10, X1-X11: the CSVs by the Exalted sheet each holds (:func:`sheet_of`);
    two CSVs of one sheet are an error naming both."""
    by_sheet: dict[str, CsvTable] = {}
    for t in tables_:
        sheet = sheet_of(t)
        if sheet in by_sheet:
            raise InputError([Problem(t.where, f"holds {sheet} again (so does {by_sheet[sheet].where}): give one "
                                      "Characters CSV and one Units CSV")], t.where)
        by_sheet[sheet] = t
    return by_sheet


def battle_from_csv(tables_: Sequence[CsvTable]) -> Any:
    """E7-E10, X1-X11: a Characters CSV and a Units CSV as an Exalted battle, checked as
    Build Units checks the sheets; every problem at its CSV cell, all at once."""
    CAPACITY, MAX_CAPACITY = ex_layout.CAPACITY, ex_layout.MAX_CAPACITY
    by_sheet = tables_by_sheet(tables_)
    missing = [s for s in SHEETS if s not in by_sheet]
    if missing:
        given = ", ".join(t.where for t in tables_)
        raise InputError([Problem(given, f"an Exalted battle needs its characters and its units (X3: each unit's "
                                  f"commander is a character), and there is no {missing[0]} CSV: give both, e.g. "
                                  "sheetsync import chars.csv units.csv --into battle.yaml --system exalted "
                                  "(sheetsync template --csv units.csv --system exalted writes the headers)")])
    too_many = [Problem(t.where, f"holds {len(t.rows)} {sheet}; a battle holds at most {MAX_CAPACITY[sheet]}")
                for sheet, t in by_sheet.items() if len(t.rows) > MAX_CAPACITY[sheet]]
    if too_many:
        raise InputError(too_many, too_many[0].where)
    lay = ex_layout.layout({sheet: max(CAPACITY[sheet], len(t.rows)) for sheet, t in by_sheet.items()})
    problems: list[Problem] = []
    grids: dict[str, Grid] = {}
    csvs: dict[str, tuple[CsvTable, dict[int, Any]]] = {}
    for sheet, t in by_sheet.items():
        grids[sheet], found = sheet_rows(t, lay, sheet, problems)
        csvs[sheet] = (t, found)
    battle, _decoded, found_problems = check_rows(lay, grids, csvs)
    problems = merged(problems, found_problems)
    if problems or battle is None:
        raise InputError(problems or [Problem(by_sheet["units"].where, "can't be read as a battle")],
                         by_sheet["units"].where)
    return battle
