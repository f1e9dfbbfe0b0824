"""What a CSV row becomes in the hex wargame: a unit (H1, H2), one row each, with the
typed columns of the Units sheet (Unit, Side, Counter, Start Hex, Size, Men); Build Units
works out the rest.

Each cell is read by its column's codec, the same one the tracker's reader uses, so a CSV
row and a sheet row mean the same thing, and every problem is named by its CSV cell
(``units.csv:D4``), all at once.  The CSV itself is read by :mod:`sheetsync.sheets.csv_rows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sheetsync.core.errors import InputError, Problem
from sheetsync.sheets import table as tables
from sheetsync.sheets.csv_rows import CsvTable, block_grid, match_headers, merged, relocate
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.tracker import layout as hex_layout

__all__ = ["CSV_SHEETS", "UNIT_KEYS", "battle_from_csv", "csv_columns", "unit_rows"]

CSV_SHEETS: tuple[str | None, ...] = (None,)
"""A hex wargame CSV holds one sheet's rows: the Units sheet's."""

UNIT_KEYS = ("name", "side", "counter", "start_hex", "size", "men")
"""The Units sheet's typed columns (H1, H2); the others are worked out by Build Units."""

_REQUIRED_UNIT = ("name", "side", "counter", "start_hex")


def csv_columns(sheet: str | None = None) -> tuple[Any, list[Any]]:
    """The Units block and the typed columns a CSV row holds (H1, H2), in the sheet's order."""
    block = hex_layout.layout(None).block("Units_Table")
    return block, [c for c in block.columns if c.key in UNIT_KEYS]


def unit_rows(table: CsvTable, block: Any) -> tuple[dict[int, Any], list[dict[str, Any]], list[Problem],
                                                    dict[str, str]]:
    """H1, H2: the CSV's units read through the Units block's typed columns (``block``):
    which CSV column is which, each unit as a battle file's unit, every problem at its CSV
    cell (not raised: the caller adds the loader's), and where each unit field came from
    (``units[2].hex`` → ``units.csv:D4``), for the loader's problems."""
    problems: list[Problem] = []
    cols = [c for c in block.columns if c.key in UNIT_KEYS]
    found = match_headers(table, cols, _REQUIRED_UNIT, problems)
    grid = block_grid(table, block, found)
    read: list[Problem] = []
    units: list[dict[str, Any]] = []
    for row in tables.read_block(block, grid, read, keys=UNIT_KEYS, blank_keys=UNIT_KEYS):
        unit: dict[str, Any] = {}
        for key in UNIT_KEYS:
            value = row.values.get(key)
            if value is not None:
                unit["hex" if key == "start_hex" else key] = str(value) if key == "counter" else value
            elif key in _REQUIRED_UNIT and not any(p.where == block.cell(row.offset, key) for p in read):
                read.append(Problem(block.cell(row.offset, key), f"{block.column(key).header}: every unit needs "
                                    "one (H1)"))
        units.append(unit)
    by_key = {col.key: j for j, col in found.items()}
    where: dict[str, str] = {"units": f"{table.where}:2"}
    for i, (number, _cells) in enumerate(table.rows):
        where[f"units[{i}]"] = table.at(by_key["name"], number)
        for key in UNIT_KEYS:
            if key in by_key:
                where[f"units[{i}].{'hex' if key == 'start_hex' else key}"] = table.at(by_key[key], number)
    return found, units, [*problems, *relocate(read, table, block, found)], where


def battle_from_csv(csvs: Sequence[CsvTable], shape: dict[str, int], impassable: Sequence[str] = ()) -> Any:
    """H1, H2: the units of the CSV (``csvs`` holds one) on a map of ``shape`` (columns,
    rows) as a hex battle, checked by the hex loader; every problem at its CSV cell, all at
    once."""
    (table,) = csvs
    most = hex_layout.MAX_CAPACITY["units"]
    if len(table.rows) > most:
        raise InputError([Problem(table.where, f"holds {len(table.rows)} units; a battle holds at most "
                                  f"{most}")], table.where)
    block = hex_layout.layout({"units": max(hex_layout.CAPACITY["units"], len(table.rows))}).block("Units_Table")  # room for every row
    _found, units, problems, where = unit_rows(table, block)
    try:
        battle = load_battle({"system": "hexwar", "map": {**shape, "impassable": list(impassable)}, "units": units})
    except InputError as err:
        raise InputError(merged(problems, [p for p in tables.relocate(err.problems, where)
                                           if not p.where.startswith("map")]), table.where) from None
    if problems:
        raise InputError(problems, table.where)
    return battle
