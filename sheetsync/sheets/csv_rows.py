"""Generic CSV reading for the imports: a CSV file read as text (:func:`read_csv`), its
headers matched to a block's columns (:func:`match_headers`), its rows as the block's grid
(:func:`block_grid`), and a tracker reader's problems moved back to the CSV cell each
value came from (:func:`relocate`).

A header matches a column as trait names match (R12: case, spacing and punctuation
ignored), by the sheet's header (``Willpower Spent``) or its field name
(``willpower_spent``).  Every problem is named by its place in the CSV (``chars.csv:C7``,
the column letter and row number a spreadsheet shows when it opens the file).  What a row
becomes is each rule system's ``importing`` room's to say.

Imports nothing from ``sheetsync.systems``, ``sheetsync.app`` or ``sheetsync.importers``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sheetsync.core.errors import InputError, Problem, did_you_mean
from sheetsync.sheets.backend import CellValue, Grid, col_letter

__all__ = ["CELL", "MAX_BYTES", "CsvTable", "address", "block_grid", "match_headers", "merged", "normalize",
           "read_csv", "relocate"]

MAX_BYTES = 16 * 1024 * 1024
"""A larger CSV is refused rather than read into memory."""

def address(col: int, row: int) -> str:
    return f"{col_letter(col + 1)}{row}"


@dataclass
class CsvTable:
    """A CSV file read as text: its header and its non-blank rows, each with its row number."""

    where: str
    """The file's name, as problems show it (``chars.csv``)."""
    headers: list[str]
    rows: list[tuple[int, list[str]]] = field(default_factory=list)
    """(row number in the file, counting the header as row 1; the cells)."""

    def at(self, col: int, row: int) -> str:
        """``chars.csv:C7``: a cell of the file."""
        return f"{self.where}:{address(col, row)}"


def read_csv(path: Path) -> CsvTable:
    """The CSV at ``path`` (UTF-8, with or without a byte-order mark; comma, semicolon or
    tab separated, as spreadsheets save it).  An unreadable or empty file is refused."""
    where = path.name
    try:
        size = path.stat().st_size
        if not path.is_dir() and not path.is_file():  # a FIFO or a device: reading it would never end
            raise InputError([Problem(where, "is not a regular file (a FIFO, a device or a socket); only a CSV file is read")])
        if size > MAX_BYTES:
            raise InputError([Problem(where, f"is {size // (1024 * 1024)} MB; a CSV of characters over "
                                      f"{MAX_BYTES // (1024 * 1024)} MB is refused")])
        raw = path.read_bytes()
    except IsADirectoryError:
        raise InputError([Problem(where, "is a folder, not a CSV file")]) from None
    except FileNotFoundError:
        raise InputError([Problem(where, "does not exist")]) from None
    except OSError as exc:
        raise InputError([Problem(where, f"can't be read ({exc.strerror or exc})")]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError([Problem(where, "is not UTF-8 text: save it again as \"CSV UTF-8\"")]) from None
    if "\x00" in text:
        raise InputError([Problem(where, "is not a CSV file (it holds binary data): save the sheet as CSV")])
    first = text.splitlines()[0] if text.strip() else ""
    delimiter = max((",", ";", "\t"), key=first.count) if first else ","
    try:
        records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
    except csv.Error as exc:
        raise InputError([Problem(where, f"is not readable CSV ({exc})")]) from None
    while records and not any(c.strip() for c in records[0]):
        records.pop(0)
    if not records:
        raise InputError([Problem(where, "is empty: its first row must hold the column headers "
                                  "(sheetsync template --csv writes them)")])
    table = CsvTable(where, [h.strip() for h in records[0]])
    for number, cells in enumerate(records[1:], start=2):
        if any(c.strip() for c in cells):
            table.rows.append((number, [c.strip() for c in cells]))
    return table


def normalize(name: str) -> str:
    """A header as trait names are compared (R12: no case, spacing, punctuation or leading
    'Thaumaturgy:'), which every system's CSV headers are matched by.  The same comparison
    as the battalion catalog's ``normalize`` (a test holds them together)."""
    text = name.strip().lower()
    text = re.sub(r"^thaumaturgy\s*[:\-]\s*", "", text)
    return re.sub(r"[\s'’:\-_.()]+", "", text)


def match_headers(table: CsvTable, cols: Sequence[Any], required: Sequence[str],
                   problems: list[Problem]) -> dict[int, Any]:
    """R12: each CSV column's sheet column, by header or field name, compared as trait
    names are.  An unknown or repeated header, or a value past the last header, is a
    problem at its cell (added to ``problems``; the other columns are still read); a
    missing required column, or no rows at all, raises :class:`InputError` at once, as
    no row can be read without it."""
    names: dict[str, Any] = {}
    for c in cols:
        names.setdefault(normalize(c.header), c)
        names.setdefault(normalize(c.key.split(":")[-1]), c)
    found: dict[int, Any] = {}
    seen: dict[str, int] = {}
    for j, header in enumerate(table.headers):
        if not header:
            if any(j < len(cells) and cells[j] for _n, cells in table.rows):
                problems.append(Problem(table.at(j, 1), "this column has values but no header"))
            continue
        col = names.get(normalize(header))
        if col is None:
            problems.append(Problem(table.at(j, 1), f"{header!r} is not a column of the sheet"
                                    + (did_you_mean(header, [c.header for c in cols]) or
                                       " (sheetsync template --csv writes the headers)")))
            continue
        if col.key in seen:
            problems.append(Problem(table.at(j, 1), f"{header!r} is the column {col.header!r} again (also "
                                    f"{table.at(seen[col.key], 1)}); keep one"))
            continue
        seen[col.key] = j
        found[j] = col
    missing = [Problem(f"{table.where}:1", f"there is no {c.header!r} column, and every row needs one")
               for key in required for c in cols if c.key == key and key not in seen]
    if missing:
        raise InputError([*problems, *missing], table.where)
    if not table.rows:
        raise InputError([*problems, Problem(f"{table.where}:2", "holds no rows below its header row")], table.where)
    for number, cells in table.rows:
        for j in range(len(table.headers), len(cells)):
            if cells[j]:
                problems.append(Problem(table.at(j, number), f"{cells[j][:40]!r} is past the last header"))
    return found


def merged(first: Sequence[Problem], later: Sequence[Problem]) -> list[Problem]:
    """``first`` and then each of ``later`` at a place not named already (a value refused
    by its codec is not reported again by the loader)."""
    said = {p.where for p in first}
    return [*first, *(p for p in later if p.where not in said)]


def block_grid(table: CsvTable, block: Any, found: dict[int, Any]) -> Grid:
    """The CSV's rows as the block's grid (its columns' order), blank where not given."""
    grid: Grid = []
    for _number, cells in table.rows:
        row: list[CellValue] = [None] * len(block.columns)
        for j, col in found.items():
            if j < len(cells) and cells[j] != "":
                row[block.index(col.key)] = cells[j]
        grid.append(row)
    return grid


CELL = re.compile(r"^'?(?P<sheet>[^!']+)'?!(?P<col>[A-Z]+)(?P<row>\d+)$")


def relocate(problems: Sequence[Problem], table: CsvTable, block: Any, found: dict[int, Any]) -> list[Problem]:
    """Problems a tracker's reader put at ``Characters!F7`` (or ``Units!C5``), moved to the
    CSV cell that value came from (``chars.csv:C7``); other places are kept."""
    from sheetsync.sheets.backend import parse_range

    by_key = {col.key: j for j, col in found.items()}
    out: list[Problem] = []
    for p in problems:
        m = CELL.match(p.where)
        if m is None or m["sheet"] != block.sheet:
            out.append(p)
            continue
        k = int(m["row"]) - block.first_row
        if not 0 <= k < len(table.rows):
            out.append(p)
            continue
        number = table.rows[k][0]
        col_index = parse_range(f"{block.sheet}!{m['col']}1").col1 - parse_range(block.range()).col1
        key = block.columns[col_index].key if 0 <= col_index < len(block.columns) else None
        where = table.at(by_key[key], number) if key in by_key else f"{table.where}:row {number}"
        out.append(Problem(where, p.message))
    return out
