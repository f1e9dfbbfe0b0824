"""Readable terminal tables that look like rich's ``Table`` (the same boxes, widths and
wrapping) but are laid out here and printed with one ``console.print`` of ready segments:
rich measures and renders every cell through several layers, which took 0.3 s for a
100-cohort phase and 3 s for its pools (issue 12).  Names never wrap or shrink to
``Nig…``.  Generic: any rule system's ``views`` room may draw with it."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len, chop_cells
from rich.segment import Segment, Segments
from rich.style import Style

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Col", "Frag", "Grid", "Out", "wrap_frags"]

_NEWLINE = Segment("\n")

Frag = tuple[str, str]
"""A piece of text and its rich style name ("" for none)."""

_BOXES = {  # rich's HEAVY_HEAD (wide) and SIMPLE_HEAD (narrow), by part: top, head row, head rule, row, bottom
    "heavy": ("┏━┳┓", "┃┃┃", "┡━╇┩", "│││", "└─┴┘"),
    "simple": ("    ", "   ", " ── ", "   ", "    "),
}


_ODD_WIDTH = (0x0300, 0x036f, 0x0483, 0x0489, 0x0591, 0x05c7, 0x0610, 0x061a, 0x064b, 0x065f, 0x1100, 0x115f,
              0x200b, 0x200f, 0x2028, 0x202e, 0x2060, 0x206f, 0x2e80, 0xa4cf, 0xac00, 0xd7a3, 0xf900, 0xfaff,
              0xfe00, 0xfe0f, 0xfe20, 0xfe6f, 0xff00, 0xff60, 0xffe0, 0xffe6, 0x1f000, 0x1faff, 0x20000, 0x3fffd)
"""Characters that may not take exactly one cell (wide, combining, zero-width), as
inclusive ranges ``first, last, first, last, ...``: rich measures those."""
_ODD_BOUNDS = tuple(c + (i % 2) for i, c in enumerate(_ODD_WIDTH))
"""The same ranges as ``first, last + 1, ...``: a code point is odd when an odd number of
bounds are at or below it.  (A regular expression of these ranges takes 3-5 ms to compile,
at every start: issue 12.)"""


def _odd(text: str) -> bool:
    """``text`` (not ASCII) has a character of :data:`_ODD_WIDTH`."""
    for ch in set(text):
        code = ord(ch)
        if code >= 0x0300 and bisect_right(_ODD_BOUNDS, code) & 1:
            return True
    return False


def _width(text: str) -> int:
    """Cells ``text`` takes on a terminal (rich's count; one a character for the usual text)."""
    if text.isascii() or not _odd(text):
        return len(text)
    return cell_len(text)


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]) -> list[int]:
    """Take ``total`` off ``values`` in proportion to ``ratios``, at most ``maximums`` each
    (the same split rich makes, so the tables keep rich's column widths)."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums, strict=True)]
    left_ratio = sum(ratios)
    if not left_ratio:
        return values[:]
    left = total
    out = []
    for ratio, maximum, value in zip(ratios, maximums, values, strict=True):
        if ratio and left_ratio > 0:
            taken = min(maximum, round(ratio * left / left_ratio))
            out.append(value - taken)
            left -= taken
            left_ratio -= ratio
        else:
            out.append(value)
    return out


def _collapse(widths: list[int], wrapable: list[bool], max_width: int) -> list[int]:
    """Narrow the widest wrapable columns, down to the next widest each time, until the
    table fits ``max_width`` (or nothing wrapable is left to narrow)."""
    total = sum(widths)
    excess = total - max_width
    if not any(wrapable):
        return widths
    while total and excess > 0:
        widest = max(w for w, ok in zip(widths, wrapable, strict=True) if ok)
        second = max((w if ok and w != widest else 0) for w, ok in zip(widths, wrapable, strict=True))
        ratios = [1 if (w == widest and ok) else 0 for w, ok in zip(widths, wrapable, strict=True)]
        if not any(ratios) or widest == second:
            break
        widths = _ratio_reduce(excess, ratios, [min(excess, widest - second)] * len(widths), widths)
        total = sum(widths)
        excess = total - max_width
    return widths


_SPACED = re.compile(r"[^\S ]")
"""Whitespace other than the space (tabs, returns, form feeds, odd spaces): text without
it is wrapped by :func:`_spaced_spans`."""


@lru_cache(maxsize=4096)  # a battle's tables repeat their texts (rules, traits) cohort after cohort
def _line_spans(text: str, width: int, fold: bool) -> list[tuple[int, int]]:
    """Where each line of ``text`` word-wrapped at ``width`` cells starts and ends.  A
    paragraph's leading spaces stay (indents); a word longer than the line is folded."""
    if width > 0 and text.isascii() and not _SPACED.search(text):
        return _spaced_spans(text, width, fold)
    return _word_spans(text, width, fold)


def _spaced_spans(text: str, width: int, fold: bool) -> list[tuple[int, int]]:
    """:func:`_word_spans` for ASCII text whose only whitespace is spaces and newlines,
    found by looking back from each line's last column for a space rather than word by
    word (a who-gave-what table's first drawing wraps some 300 such texts: issue 12)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for para in text.split("\n"):
        content = start + len(para.rstrip(" "))  # the end of the paragraph's last word
        i = start  # where the line being laid out starts: the paragraph or a word
        while True:
            limit = i + width
            if limit >= content:
                spans.append((i, content))
                break
            j = text.rfind(" ", i + 1, limit + 1)
            e = j
            while e > i and text[e - 1] == " ":
                e -= 1
            if e > i:  # the line ends with the last word that fits
                spans.append((i, e))
            else:  # the line's first word (with the paragraph's indent) is longer than the line
                if fold:  # folded with its trailing spaces, as rich folds: the general way
                    return _word_spans(text, width, fold)
                word = i
                while text[word] == " ":
                    word += 1
                we = text.find(" ", word, content)
                if we < 0:
                    we = content
                spans.append((i, we))  # on a line of its own, cut later
                j = we
                if j >= content:
                    break
            while text[j] == " ":
                j += 1
            i = j
        start += len(para) + 1
    return spans


_RICH_WORD = re.compile(r"\s*\S+\s*")
"""A word as rich divides a line: with the whitespace after it (and, the first, before it)."""


def _word_spans(text: str, width: int, fold: bool) -> list[tuple[int, int]]:
    """:func:`_line_spans` word by word, for any text, the way rich divides a line
    (``rich._wrap.divide_line``): a word joins the line if it fits without its trailing
    whitespace; a word longer than a line is folded with that whitespace, so a fold can end
    in a piece of spaces, a blank line as rich draws it (issue 12).  Each line ends at its
    last non-space."""
    simple = text.isascii() or not _odd(text)  # one cell a character: sizes are lengths
    size = len if simple else cell_len
    spans: list[tuple[int, int]] = []
    start = 0
    for para in text.split("\n"):
        end = start + len(para)
        breaks: list[int] = []
        offset = 0  # cells taken on the line so far, trailing whitespace included
        for m in _RICH_WORD.finditer(text, start, end):
            ws = m.start()
            word = m.group()
            length = size(word.rstrip())
            if width - offset >= length:
                offset += size(word)
            elif length > width and fold:
                pieces = ([word[k:k + width] for k in range(0, len(word), max(width, 1))] if simple
                          else chop_cells(word, max(width, 1)))
                for piece in pieces:
                    if ws > start:
                        breaks.append(ws)
                    ws += len(piece)
                offset = size(pieces[-1])
            elif length > width or offset:
                if ws > start:
                    breaks.append(ws)
                offset = size(word)
        bounds = [start, *breaks, end]
        spans += [(a, a + len(text[a:b].rstrip())) for a, b in pairwise(bounds)]
        start = end + 1
    return spans


def _text_lines(text: str, width: int, fold: bool) -> list[tuple[str, int]]:
    """Plain text (no odd-width characters) as lines and their widths; a word too long
    for a column that does not fold ends in an ellipsis."""
    return [(text[a:b], b - a) if b - a <= width else (text[a:a + width - 1] + "…", width)
            for a, b in _line_spans(text, width, fold)]


def _padded(text: str, edge: str, left: int, right: int, room: int, rjust: bool, fold: bool,
            no_wrap: bool) -> tuple[str, ...]:
    """A plain cell too wide for its column: its wrapped lines, each with the border and
    padding before it and the padding after it (remembered by :class:`_PlainRows`)."""
    if (text.isascii() or not _odd(text)) and not no_wrap:
        lines = _text_lines(text, room, fold)
    else:
        lines = [(t, _width(t)) for t in ("".join(t for t, _ in line)
                                          for line in wrap_frags([(text, "")], room, fold=fold, no_wrap=no_wrap,
                                                                     rstrip=rjust))]
    lead = edge + " " * left
    if rjust:
        return tuple(lead + " " * (room - n) + t + " " * right for t, n in lines)
    return tuple(lead + t + " " * (room - n + right) for t, n in lines)


def _slice(frags: list[Frag], a: int, b: int) -> list[Frag]:
    out: list[Frag] = []
    pos = 0
    for text, style in frags:
        end = pos + len(text)
        if end > a and pos < b:
            out.append((text[max(a - pos, 0):b - pos], style))
        pos = end
        if pos >= b:
            break
    return out


def _crop(frags: list[Frag], width: int) -> list[Frag]:
    """A line cut to ``width`` cells, ending in an ellipsis."""
    out: list[Frag] = []
    room = width - 1
    for text, style in frags:
        if room <= 0:
            break
        piece = text[:room]
        out.append((piece, style))
        room -= _width(piece)
    out.append(("…", ""))
    return out


def wrap_frags(frags: list[Frag], width: int, *, fold: bool = True, no_wrap: bool = False,
               rstrip: bool = False) -> list[list[Frag]]:
    """Styled text as lines of at most ``width`` cells (the lines rich would print).
    ``rstrip``: each line without the whitespace it ends in (a right-justified table cell:
    rich strips it before it cuts or pads the line)."""
    text = "".join(t for t, _ in frags)
    if rstrip and "\n" not in text and text[-1:].isspace():
        frags, text = _rstripped(frags), text.rstrip()
    if "\n" not in text and _width(text) <= width:
        return [frags]
    if no_wrap:  # each line of the text on a line of its own, cut to the width (as rich draws it)
        if "\n" not in text:
            return [_crop(frags, width)]
        lines, start = [], 0
        for para in text.split("\n"):
            lines += wrap_frags(_slice(frags, start, start + len(para)), width, no_wrap=True, rstrip=rstrip)
            start += len(para) + 1
        return lines
    lines = []
    for a, b in _line_spans(text, width, fold):
        line = _slice(frags, a, b)
        if _width(text[a:b]) > width:
            line = _crop(line, width)
        lines.append(line)
    return lines


def _rstripped(frags: list[Frag]) -> list[Frag]:
    """A table cell's line without the whitespace it ends in (rich strips each, then pads)."""
    if not frags or not frags[-1][0][-1:].isspace():
        return frags
    out = list(frags)
    while out and not out[-1][0].rstrip():
        out.pop()
    if out:
        out[-1] = (out[-1][0].rstrip(), out[-1][1])
    return out


@dataclass(slots=True)
class Col:
    """A column of a :class:`Grid`: as rich's ``Table.add_column`` takes it."""

    header: str
    justify: str = "left"
    no_wrap: bool = False
    fold: bool = False
    min_width: int = 0


class Out:
    """Lines of styled text, printed with one ``console.print`` (issue 12: rich's own
    tables measure and render every cell through several layers, 300 ms at 100 cohorts)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.width = console.width
        self._segments: list[Segment] = []
        self._plain: list[str] = []  # plain lines not yet made a segment
        self._styles: dict[str, Style | None] = {"": None}
        self._made: dict[int, tuple[list[list[Frag]], list[Segment]]] = {}  # by the lines' id: see lines()
        self.crop = False
        """Some line is wider than the console (a table whose columns' minimums exceed it)."""

    def _flush(self) -> None:
        if self._plain:
            self._plain.append("")
            self._segments.append(Segment("\n".join(self._plain)))
            self._plain.clear()  # the same list: a table's rows keep adding to it

    def line(self, frags: Iterable[Frag]) -> None:
        self._flush()
        add = self._segments.append
        styles = self._styles
        plain: list[str] = []  # unstyled pieces in a row become one segment
        for text, style in frags:
            if not text:
                continue
            if not style:
                plain.append(text)
                continue
            if plain:
                add(Segment("".join(plain)))
                plain = []
            if style not in styles:
                styles[style] = self.console.get_style(style)
            add(Segment(text, styles[style]))
        if plain:
            add(Segment("".join(plain)))
        add(_NEWLINE)

    def lines(self, lines: list[list[Frag]]) -> None:
        """Lines this output may print again (a table's header, the same in each of a
        battle's hundred who-gave-what tables): their segments are made once."""
        self._flush()
        made = self._made.get(id(lines))
        if made is not None and made[0] is lines:
            self._segments.extend(made[1])
            return
        begin = len(self._segments)
        for line in lines:
            self.line(line)
        self._made[id(lines)] = (lines, self._segments[begin:])

    def plain(self, text: str) -> None:
        """A line without styles."""
        self._plain.append(text)

    def paragraph(self, frags: list[Frag]) -> None:
        """Text wrapped at the console's width, as ``console.print(Text(...))`` would."""
        for line in wrap_frags(frags, self.width):
            self.line(line)

    def print(self) -> None:
        self._flush()
        if self._segments:
            # a table wider than the console (its columns' minimum widths) is cut at the edge, as
            # rich cuts its own; the usual lines fit, and are printed without looking for any
            self.console.print(Segments(self._segments), crop=self.crop, soft_wrap=not self.crop)
            self._segments = []


@lru_cache(maxsize=1024)  # a battle's tables of one kind mostly come out the same widths
def _fit(natural: tuple[int, ...], wrapable: tuple[bool, ...], floor: tuple[int, ...], max_width: int) -> tuple[int, ...]:
    """Column widths (with padding) narrowed to ``max_width``: the widest wrapable columns
    first, then all of them alike, never below ``floor`` (a column's minimum width, 0 for
    none); a column narrowed to nothing is left out (width 0), as rich leaves it."""
    widths = _collapse(list(natural), list(wrapable), max_width)
    if sum(widths) > max_width:
        widths = _ratio_reduce(sum(widths) - max_width, [1] * len(widths), widths, widths)
    return tuple(0 if w < 1 else max(min(n, w), f) for n, w, f in zip(natural, widths, floor, strict=True))


def _column_width(texts: tuple[str, ...]) -> int:
    """The widest cell of a column, in cells (a cell's widest line)."""
    joined = "".join(texts)
    if joined.isascii() and "\n" not in joined:
        return max(map(len, texts))
    return max(len(t) if t.isascii() and "\n" not in t else max(_width(line) for line in t.split("\n"))
               for t in texts)


_CELLS: dict[tuple[str, int, int, int, bool, bool, bool], dict[str, tuple[str, ...]]] = {}
"""Plain cells drawn so far, by column shape (edge, padding, room, justification, wrapping)
and text: the pools of a hundred cohorts are a hundred tables of the same few texts."""


@dataclass(slots=True)
class _Frame:
    """What a table of one shape draws whatever its rows: its box lines, its header and
    the drawer of its plain rows."""

    layout: list[tuple[int, int, int, bool, Col]]
    top: str
    rule: str
    bottom: str
    header: list[list[Frag]]
    plain: _PlainRows


_FRAMES: dict[tuple[Any, ...], _Frame] = {}
"""Table frames drawn so far, by columns, widths, padding and box (a battle's hundred
who-gave-what tables have a few shapes)."""


_TAILS: dict[tuple[Any, ...], dict[tuple[str, ...], tuple[str, tuple[str, ...]]]] = {}
"""The lines of the wrapping columns of a plain row, by their shape and texts: its first
line, and the lines below it with the leading columns' blanks before them."""


class _PlainRows:
    """Rows without styles, drawn as plain lines (most rows): each cell's lines are padded
    strings, found once per column and text (a battle's tables repeat their pools, rules
    and traits row after row), then put side by side."""

    def __init__(self, layout: list[tuple[int, int, int, bool, Col]], edges: str) -> None:
        self.end = edges[2]
        self.cols = [(edges[0] if k == 0 else edges[1], left, right, room, rjust, col)
                     for k, (left, right, room, rjust, col) in enumerate(layout)]
        self.blanks = [edge + " " * (left + room + right) for edge, left, right, room, _, _ in self.cols]
        if len(_CELLS) > 512:
            _CELLS.clear()
        self.cache = [_CELLS.setdefault((edge, left, right, room, rjust, col.fold, col.no_wrap), {})
                      for edge, left, right, room, rjust, col in self.cols]
        n = len(self.cols)
        self.split = next((k for k, c in enumerate(self.cols) if not c[5].no_wrap), n)
        """The leading columns that never wrap (a pool's name, who gave it): their cells are
        one line each (a text too long is cut), unless a text holds a newline."""
        self.firsts: list[dict[str, str | None]] = [{} for _ in range(self.split)]
        """Each leading column's cells by text: the cell's one line, or None for a cell of more."""
        self.lead_blank = "".join(self.blanks[:self.split])
        shape = (self.end, self.lead_blank, *[c[:5] + (c[5].fold, c[5].no_wrap) for c in self.cols[self.split:]])
        if len(_TAILS) > 512:
            _TAILS.clear()
        self.tails = _TAILS.setdefault(shape, {})

    def _cell(self, k: int, text: str) -> tuple[str, ...]:
        edge, left, right, room, rjust, col = self.cols[k]
        if room <= 0:  # no room for text: blank (its border only, if the column was left out)
            return self._keep(k, text, (edge + " " * (left + right),))
        shown = text.rstrip() if rjust and "\n" not in text else text  # right-justified without trailing spaces
        size = len(shown) if shown.isascii() and "\n" not in shown else -1
        if 0 <= size <= room:
            lead = edge + " " * left
            lines: tuple[str, ...] = ((lead + " " * (room - size) + shown + " " * right,) if rjust
                                      else (lead + shown + " " * (room - size + right),))
        elif "\n" not in shown and _width(shown) <= room:
            size = _width(shown)
            lead = edge + " " * left
            lines = ((lead + " " * (room - size) + shown + " " * right,) if rjust
                     else (lead + shown + " " * (room - size + right),))
        else:
            lines = _padded(text, edge, left, right, room, rjust, col.fold, col.no_wrap)
        return self._keep(k, text, lines)

    def _keep(self, k: int, text: str, lines: tuple[str, ...]) -> tuple[str, ...]:
        cache = self.cache[k]
        if len(cache) > 4096:
            cache.clear()
        cache[text] = lines
        return lines

    def _first(self, k: int, text: str) -> str | None:
        lines = self.cache[k].get(text) or self._cell(k, text)
        first = self.firsts[k]
        if len(first) > 4096:
            first.clear()
        first[text] = lines[0] if len(lines) == 1 else None
        return first[text]

    def _cells(self, texts: tuple[str, ...], first: int) -> list[tuple[str, ...]]:
        """The lines of each cell of ``texts``, the columns from ``first`` on."""
        return [self.cache[k].get(text) or self._cell(k, text) for k, text in enumerate(texts, first)]

    def _beside(self, cells: list[tuple[str, ...]], first: int) -> list[str]:
        """The lines of ``cells`` (the columns from ``first`` on) side by side, each ending
        in the row's right edge; a shorter cell is blank below."""
        height = max(map(len, cells), default=1)
        if height > 1:
            cells = [c if len(c) == height else c + (b,) * (height - len(c))
                     for c, b in zip(cells, self.blanks[first:], strict=True)]
        return ["".join(parts) + self.end for parts in zip(*cells, strict=True)] if cells else [self.end]

    def _tail(self, texts: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        lines = self._beside(self._cells(texts, self.split), self.split)
        tail = (lines[0], tuple([self.lead_blank + line for line in lines[1:]]))
        if len(self.tails) > 4096:
            self.tails.clear()
        self.tails[texts] = tail
        return tail

    def add(self, rows: list[tuple[str, ...]], lines: list[str]) -> None:
        """Rows of plain strings, each as one line, or as many as its tallest cell.  A row's
        leading cells (the columns that never wrap) and the rest are each drawn once per
        texts: a hundred cohorts' tables share a few hundred (issue 12)."""
        n, split = len(self.cols), self.split
        tails, make = self.tails, self._first
        leads = list(enumerate(self.firsts))
        append, extend = lines.append, lines.extend
        for texts in rows:
            if len(texts) != n:
                raise ValueError(f"a row of {len(texts)} cells in a table of {n} columns")
            key = texts[split:]
            tail = tails.get(key) or self._tail(key)
            try:
                lead = "".join([first.get(text) or make(k, text)  # type: ignore[misc]  # None: see below
                                for (k, first), text in zip(leads, texts)])  # noqa: B905 (the other cells follow)
            except TypeError:  # a leading cell of more than one line (its text holds a newline)
                self._tall_row(texts, lines)
                continue
            append(lead + tail[0])
            if tail[1]:
                extend(tail[1])

    def _tall_row(self, texts: tuple[str, ...], lines: list[str]) -> None:
        """A row whose leading cells are more than one line, all its cells side by side."""
        lines += self._beside(self._cells(texts, 0), 0)


class Grid:
    """A table drawn the way rich draws ``Table(title=..., header_style="bold")`` (or, on a
    narrow console, with ``box.SIMPLE_HEAD`` and tight padding), in a fraction of the time."""

    def __init__(self, title: str, cols: list[Col], *, narrow: bool) -> None:
        self.title = title
        self.cols = cols
        self.narrow = narrow
        self.rows: list[list[list[Frag]] | None] = []  # None: every cell is a plain string
        self._texts: list[tuple[str, ...]] = []

    def add_row(self, *cells: str | list[Frag]) -> None:
        """A row: each cell a string, or styled pieces of text."""
        for c in cells:
            if not isinstance(c, str):
                break
        else:
            self.rows.append(None)
            self._texts.append(cells)  # type: ignore[arg-type]  # all strings, checked above
            return
        self._texts.append(tuple([c if isinstance(c, str) else "".join(t for t, _ in c) for c in cells]))
        self.rows.append([[(c, "")] if isinstance(c, str) else c for c in cells])

    def add_rows(self, rows: Iterable[tuple[str, ...]]) -> None:
        """Rows of plain strings only (the fast way to fill a long table)."""
        rows = list(rows)
        self._texts.extend(rows)
        self.rows.extend([None] * len(rows))

    def _pads(self) -> list[tuple[int, int]]:
        n = len(self.cols)
        if not self.narrow:
            return [(1, 1)] * n
        return [(0 if i == 0 else 1, 0 if i == n - 1 else 1) for i in range(n)]

    def _widths(self, max_width: int, pads: list[tuple[int, int]]) -> list[int]:
        """Column widths with padding, rich's way: each column as wide as its widest cell;
        too wide for the console, the widest wrapable ones are narrowed first."""
        cols = self.cols
        content = [_width(c.header) for c in cols]
        if self._texts:
            content = [max(n, _column_width(column)) for n, column in zip(content, zip(*self._texts, strict=True),
                                                                          strict=True)]
        floor = tuple(c.min_width + left + right if c.min_width else 0 for c, (left, right) in zip(cols, pads, strict=True))
        # at most the console's width, then at least the column's minimum (rich measures so)
        natural = [max(min(w + left + right, max_width), f) or 1
                   for w, (left, right), f in zip(content, pads, floor, strict=True)]
        if sum(natural) <= max_width:
            return natural
        return list(_fit(tuple(natural), tuple(not c.no_wrap for c in cols), floor, max_width))

    def print(self, out: Out) -> None:
        row = _BOXES["simple" if self.narrow else "heavy"][3]
        pads = self._pads()
        n = len(self.cols)
        widths = self._widths(out.width - (n + 1), pads)
        total = sum(widths) + n + 1
        if total > out.width:
            out.crop = True
        if self.title:
            for line in wrap_frags([(self.title, "table.title")], total):
                size = sum(_width(t) for t, _ in line)
                left = (total - size) // 2
                out.line([(" " * left, ""), *line, (" " * (total - size - left), "")])
        frame = self._frame(widths, pads)
        out.plain(frame.top)
        out.lines(frame.header)
        out.plain(frame.rule)
        run: list[tuple[str, ...]] = []  # plain rows not yet drawn
        for cells, texts in zip(self.rows, self._texts, strict=True):
            if cells is None:
                run.append(texts)
                continue
            if run:
                frame.plain.add(run, out._plain)
                run = []
            self._styled_row(out, cells, frame.layout, row)
        if run:
            frame.plain.add(run, out._plain)
        out.plain(frame.bottom)

    def _frame(self, widths: list[int], pads: list[tuple[int, int]]) -> _Frame:
        key = (*[(c.header, c.justify, c.no_wrap, c.fold) for c in self.cols], *widths, *pads, self.narrow)
        frame = _FRAMES.get(key)
        if frame is None:
            top, head, rule, row, bottom = _BOXES["simple" if self.narrow else "heavy"]
            # a column narrowed to its padding or less is blank (rich cuts its padded cells to
            # its width); narrowed to nothing, only its border is left
            layout = [(left, right, w - left - right, col.justify == "right", col) if w > left + right
                      else (w, 0, 0, False, col)
                      for (left, right), w, col in zip(pads, widths, self.cols, strict=True)]
            frame = _Frame(layout, top[0] + top[2].join(top[1] * w for w in widths) + top[3],
                           rule[0] + rule[2].join(rule[1] * w for w in widths) + rule[3],
                           bottom[0] + bottom[2].join(bottom[1] * w for w in widths) + bottom[3],
                           self._styled_lines([[(c.header, "bold")] for c in self.cols], layout, head, bottom=True),
                           _PlainRows(layout, row))
            if len(_FRAMES) > 256:
                _FRAMES.clear()
            _FRAMES[key] = frame
        return frame

    @staticmethod
    def _styled_row(out: Out, cells: list[list[Frag]], layout: list[tuple[int, int, int, bool, Col]],
                    edges: str) -> None:
        for line in Grid._styled_lines(cells, layout, edges):
            out.line(line)

    @staticmethod
    def _styled_lines(cells: list[list[Frag]], layout: list[tuple[int, int, int, bool, Col]], edges: str,
                      *, bottom: bool = False) -> list[list[Frag]]:
        """The lines of a row with styled cells; a cell shorter than the others is padded
        below (the header row: above, as rich does)."""
        fitted: list[list[tuple[list[Frag], int]]] = []
        for cell, (_, _, room, rjust, col) in zip(cells, layout, strict=True):
            fitted.append([(line, _width("".join(t for t, _ in line)))
                           for line in (wrap_frags(cell, room, fold=col.fold, no_wrap=col.no_wrap, rstrip=rjust)
                                        if room > 0 else [[]])])
        height = max(len(lines) for lines in fitted)
        if height > 1:
            blank: tuple[list[Frag], int] = ([], 0)
            if bottom:
                fitted = [[blank] * (height - len(lines)) + lines for lines in fitted]
            else:
                fitted = [lines + [blank] * (height - len(lines)) for lines in fitted]
        first, inner, end = edges[0], edges[1], edges[2]
        out: list[list[Frag]] = []
        for i in range(height):
            line: list[Frag] = []
            gap = 0
            edge = first
            for lines, (left, right, room, rjust, _) in zip(fitted, layout, strict=True):
                frags, size = lines[i]
                if rjust:
                    line.append((" " * gap + edge + " " * (left + room - size), ""))
                    gap = right
                else:
                    line.append((" " * gap + edge + " " * left, ""))
                    gap = room - size + right
                line.extend(frags)
                edge = inner
            line.append((" " * gap + end, ""))
            out.append(line)
        return out


