"""A1 notation: column letters and quoted sheet names, the two pieces a layout needs to
name its cells.  Standard library only; :mod:`sheetsync.sheets.backend` parses whole
ranges on top of these."""

from __future__ import annotations

import functools
import re

__all__ = ["cell_position", "col_index", "col_letter", "quote_sheet"]


@functools.lru_cache(maxsize=4096)  # pure, and called for every address a step writes (issue 12)
def col_letter(index: int) -> str:
    """1 -> ``"A"``, 27 -> ``"AA"``."""
    if index < 1:
        raise ValueError(f"column index {index} < 1")
    out = ""
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


@functools.lru_cache(maxsize=4096)  # pure, and called for every address a step writes (issue 12)
def quote_sheet(name: str) -> str:
    """Quote a sheet name for A1 notation when it needs it (``'House Rules'``)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "'" + name.replace("'", "''") + "'"


def cell_position(address: str) -> tuple[int, int]:
    """``"B12"`` (or ``"$B$12"``) -> (column 2, row 12)."""
    m = re.fullmatch(r"\$?([A-Z]+)\$?(\d+)", address)
    if m is None:
        raise ValueError(f"{address!r} is not a cell such as B12")
    return col_index(m.group(1)), int(m.group(2))


def col_index(letters: str) -> int:
    """``"A"`` -> 1, ``"AA"`` -> 27."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    return n
