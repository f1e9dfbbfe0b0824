"""Trackers in memory for the bad-input tests: a blank tracker with two cohorts typed in."""

from __future__ import annotations

from typing import Any

from sheetsync.sheets.backend import CellValue, Formula, MemoryBackend
from sheetsync.systems.bbn.tracker.layout import layout
from sheetsync.systems.bbn.tracker.template import static_cells

LAY = layout()


def blank() -> MemoryBackend:
    """A blank tracker, cell for cell what the template holds."""
    backend = MemoryBackend({s: {} for s in LAY.sheets})
    for sheet, row, col, value in static_cells(LAY):
        backend.sheets[sheet][(row, col)] = value
    return backend


def put(backend: MemoryBackend, block: str, offset: int, key: str, value: CellValue) -> str:
    """Type ``value`` in column ``key`` of data row ``offset`` of ``block``; returns its address."""
    b = LAY.block(block)
    backend.sheets[b.sheet][(b.first_row + offset, b.first_col + b.index(key))] = value
    return b.cell(offset, key)


def put_seed(backend: MemoryBackend, value: CellValue) -> None:
    cell = LAY.cells["Battle_Seed"]
    col = ord(cell.address[0]) - ord("A") + 1
    backend.sheets[cell.sheet][(int(cell.address[1:]), col)] = value


COHORTS: list[tuple[str, str, list[str]]] = [
    ("Night Watch", "players", ["Marcus", "Ana", "Ben"]),
    ("Ghouls", "Sabbat", ["G1", "G2", "G3"]),
]


def two_cohorts(*, ranges: bool = True, cohorts: list[tuple[str, str, list[str]]] | None = None) -> MemoryBackend:
    """A blank tracker with the cohorts typed on Cohorts and Characters (and, with
    ``ranges``, Personal range between every pair), not yet built."""
    backend = blank()
    row = 0
    cohorts = COHORTS if cohorts is None else cohorts
    for i, (name, side, members) in enumerate(cohorts):
        put(backend, "Cohorts_Setup", i, "name", name)
        put(backend, "Cohorts_Setup", i, "side", side)
        put(backend, "Cohorts_Setup", i, "sergeant", members[0])
        for m in members:
            put(backend, "Characters_Table", row, "cohort", name)
            put(backend, "Characters_Table", row, "name", m)
            put(backend, "Characters_Table", row, "ability:Brawl", 2)
            put(backend, "Characters_Table", row, "temper", 10)
            row += 1
    if ranges:
        k = 0
        for x, (a, _s, _m) in enumerate(cohorts):
            for b, _s2, _m2 in cohorts[x + 1:]:
                put(backend, "Ranges_Table", k, "a", a)
                put(backend, "Ranges_Table", k, "b", b)
                put(backend, "Ranges_Table", k, "band", "Personal")
                k += 1
    return backend


def orders(backend: MemoryBackend, rows: list[dict[str, Any]], start: int = 0) -> None:
    """Type Orders rows (keys are Orders column keys)."""
    for i, o in enumerate(rows):
        for key, value in o.items():
            put(backend, "Orders_Table", start + i, key, value)


def snapshot(backend: MemoryBackend) -> dict[str, dict[tuple[int, int], CellValue]]:
    return {s: dict(cells) for s, cells in backend.sheets.items()}


__all__ = ["COHORTS", "LAY", "Formula", "blank", "orders", "put", "put_seed", "snapshot", "two_cohorts"]
