"""The map (H2, 5.1): flat-topped hexes numbered ``CCRR`` in the wargame way, odd columns
half a hex lower ("odd-q", taking the column number as written), distances in cube
coordinates, neighbours, straight lines and the shortest legal path.

The conversions follow the public offset/cube algorithms for hex grids (Red Blob Games,
"Hexagonal Grids"), written here from the formulas:

- odd-q offset (col, row) to axial (q, r): ``q = col``, ``r = row - (col - (col & 1)) // 2``;
  the third cube coordinate is ``s = -q - r``;
- distance: half the sum of the absolute cube differences;
- a line: sample ``N + 1`` evenly spaced points between the two cube centres and round
  each to the nearest hex.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "Cube",
    "Hex",
    "HexMap",
    "hex_distance",
    "hex_line",
    "hexes_of",
    "neighbours",
    "parse_hex",
]

_HEX_ID = re.compile(r"^\s*(\d{2})(\d{2})\s*$")


@dataclass(frozen=True, slots=True, order=True)
class Hex:
    """H2: one hex by its column and row as written (``Hex(4, 5)`` is ``"0405"``)."""

    col: int
    row: int

    @property
    def id(self) -> str:
        """The ``CCRR`` id the sheets and battle files use."""
        return f"{self.col:02d}{self.row:02d}"

    def cube(self) -> Cube:
        """H2: odd-q offset to cube coordinates (odd columns sit half a hex lower)."""
        q = self.col
        r = self.row - (self.col - (self.col & 1)) // 2
        return Cube(q, r, -q - r)

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True, slots=True)
class Cube:
    """Cube coordinates: ``q + r + s == 0``."""

    q: int
    r: int
    s: int

    def to_hex(self) -> Hex:
        """H2: cube back to the odd-q column and row."""
        return Hex(self.q, self.r + (self.q - (self.q & 1)) // 2)

    def __add__(self, other: Cube) -> Cube:
        return Cube(self.q + other.q, self.r + other.r, self.s + other.s)


_DIRECTIONS = (Cube(1, 0, -1), Cube(1, -1, 0), Cube(0, -1, 1), Cube(-1, 0, 1), Cube(-1, 1, 0), Cube(0, 1, -1))


_PARSED: dict[str, Hex] = {}
"""Each four-digit id :func:`parse_hex` has read, to its hex (at most 10,000 of them): a
turn reads the same ids many times (issue 23)."""


def parse_hex(text: object) -> Hex:
    """H2: ``"0405"`` (also the number ``405`` a spreadsheet makes of it) to :class:`Hex`.

    Raises :class:`ValueError` with a message for anything that is not four digits."""
    if type(text) is str:
        known = _PARSED.get(text)
        if known is not None:
            return known
        if len(text) == 4 and text.isdigit() and text.isascii():
            known = _PARSED[text] = Hex(int(text[:2]), int(text[2:]))
            return known
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a hex id (four digits CCRR, such as 0405)")
    if isinstance(text, int) and 0 <= text <= 9999:
        text = f"{text:04d}"
    m = _HEX_ID.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"{text!r} is not a hex id (four digits CCRR, such as 0405)")
    return Hex(int(m.group(1)), int(m.group(2)))


def hex_distance(a: Hex, b: Hex) -> int:
    """H2: the number of hex steps between two hexes, computed in cube coordinates."""
    ca, cb = a.cube(), b.cube()
    return (abs(ca.q - cb.q) + abs(ca.r - cb.r) + abs(ca.s - cb.s)) // 2


def neighbours(h: Hex) -> tuple[Hex, ...]:
    """H2: the six hexes next to ``h`` (some may be off the map)."""
    c = h.cube()
    return tuple((c + d).to_hex() for d in _DIRECTIONS)


def _round_cube(q: float, r: float, s: float) -> Cube:
    rq, rr, rs = round(q), round(r), round(s)
    dq, dr, ds = abs(rq - q), abs(rr - r), abs(rs - s)
    if dq > dr and dq > ds:
        rq = -rr - rs
    elif dr > ds:
        rr = -rq - rs
    else:
        rs = -rq - rr
    return Cube(rq, rr, rs)


def hex_line(a: Hex, b: Hex) -> tuple[Hex, ...]:
    """H2: the hexes a straight line from ``a`` to ``b`` crosses, both ends included
    (``distance + 1`` hexes, each next to the one before).  A tiny nudge keeps a line that
    runs exactly along a hex edge on one side of it."""
    n = hex_distance(a, b)
    ca, cb = a.cube(), b.cube()
    eps = (1e-6, 2e-6, -3e-6)
    aq, ar, as_ = ca.q + eps[0], ca.r + eps[1], ca.s + eps[2]
    bq, br, bs = cb.q + eps[0], cb.r + eps[1], cb.s + eps[2]
    if n == 0:
        return (a,)
    out = []
    for i in range(n + 1):
        t = i / n
        out.append(_round_cube(aq + (bq - aq) * t, ar + (br - ar) * t, as_ + (bs - as_) * t).to_hex())
    return tuple(out)


@dataclass(frozen=True, slots=True)
class HexMap:
    """H2, 5.1: a map ``columns`` wide and ``rows`` high (ids from ``0101``), and its
    impassable hexes.  There is no other terrain (5.1)."""

    columns: int
    rows: int
    impassable: frozenset[Hex] = frozenset()

    def contains(self, h: Hex) -> bool:
        """Whether ``h`` is a hex of this map."""
        return 1 <= h.col <= self.columns and 1 <= h.row <= self.rows

    def describe(self) -> str:
        """``12x10``, for messages."""
        return f"{self.columns}x{self.rows}"

    def hexes(self) -> Iterator[Hex]:
        """Every hex of the map, column by column."""
        for col in range(1, self.columns + 1):
            for row in range(1, self.rows + 1):
                yield Hex(col, row)

    def neighbours(self, h: Hex) -> tuple[Hex, ...]:
        """H2: the neighbours of ``h`` that are on the map."""
        return tuple(n for n in neighbours(h) if self.contains(n))

    def shortest_path(self, start: Hex, goal: Hex, blocked: Callable[[Hex], bool],
                      limit: int | None = None) -> tuple[Hex, ...] | None:
        """H4: the shortest path from ``start`` to ``goal`` (both included) over map hexes
        that are not impassable and for which ``blocked`` is false, or None.  With
        ``limit``, the search stops past that many hexes entered."""
        if start == goal:
            return (start,)
        came: dict[Hex, Hex | None] = {start: None}
        frontier: deque[tuple[Hex, int]] = deque([(start, 0)])
        while frontier:
            here, steps = frontier.popleft()
            if limit is not None and steps >= limit:
                continue
            for nxt in self.neighbours(here):
                if nxt in came or nxt in self.impassable or blocked(nxt):
                    continue
                came[nxt] = here
                if nxt == goal:
                    path = [nxt]
                    back: Hex | None = here
                    while back is not None:
                        path.append(back)
                        back = came[back]
                    return tuple(reversed(path))
                frontier.append((nxt, steps + 1))
        return None


def hexes_of(ids: Iterable[str]) -> frozenset[Hex]:
    """A set of hexes from their ids (each must parse)."""
    return frozenset(parse_hex(i) for i in ids)
