"""A tracker's layout as data: sheets, blocks of columns, named cells, free areas, lists
and decorations.  The generic reader, writer and template (``sheetsync.sheets``) and the
Google Sheets initializer draw from it; nothing here knows a rule system.

A :class:`Column` names the model field it fills (``field``) and the :class:`Codec` that
turns a cell into a value and back.  The reader derives every problem's cell address from
the block and the column, and the writer writes rows keyed by column, never by position.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Literal, Protocol

from sheetsync.core.a1 import (  # A1 notation, one place for both
    cell_position,
    col_letter,
    quote_sheet,
)

__all__ = [
    "BOOL", "INT", "NUMBER", "PERCENT", "TEXT",
    "Area", "Block", "Cell", "Chart", "CellChoices", "Choice", "Codec", "CodecError", "Colours", "Column", "DataBar",
    "DeferredStatic", "Dropdowns", "Int", "Layout", "Names", "Number", "Percent", "PRINT_MARGINS", "PrintSetup", "Rule", "Static", "Text", "YesNo",
    "col_letter", "columns_of", "quote_sheet", "step_layouts", "table_printing",
]

Kind = Literal["text", "int", "bool", "choice", "number", "percent"]


class CodecError(ValueError):
    """A cell that can't be turned into a value: the message says what it should be."""


class Codec(Protocol):
    """Turns a cell's value into a field's value (``decode``) and back (``encode``).
    ``decode`` gets a non-blank cell and raises :class:`CodecError` with a message for the
    Tracker; a blank cell never reaches it.  ``kind`` says how the cell is aligned and
    validated.  A codec whose ``encode`` gives every value back as it is may say so with a
    class attribute ``encodes_as_is = True``: a writer then skips the call (issue 12)."""

    @property
    def kind(self) -> Kind: ...

    def decode(self, value: Any) -> Any: ...

    def encode(self, value: Any) -> Any: ...


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "...'"


@dataclass(frozen=True)
class Text:
    """Text, trimmed.  A number typed in a text cell reads as its digits."""

    kind: Kind = "text"
    max_length: int = 2000

    def decode(self, value: Any) -> Any:
        if isinstance(value, bool):
            raise CodecError(f"should be text, not {value!r}")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value).strip()
        if len(text) > self.max_length:
            raise CodecError(f"is {len(text)} characters long; at most {self.max_length} fit")
        return text or None

    def encode(self, value: Any) -> Any:
        return None if value is None else str(value)


@dataclass(frozen=True)
class Int:
    """A whole number, optionally between ``low`` and ``high``."""

    encodes_as_is: ClassVar[bool] = True

    low: int | None = None
    high: int | None = None
    kind: Kind = "int"

    def _range(self) -> str:
        if self.low is not None and self.high is not None:
            return f" from {self.low} to {self.high}"
        if self.low is not None:
            return f" of at least {self.low}"
        if self.high is not None:
            return f" of at most {self.high}"
        return ""

    def decode(self, value: Any) -> Any:
        number: int | None = None
        if isinstance(value, bool):
            number = None
        elif isinstance(value, int):
            number = value
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            number = int(value)
        elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,15}\s*", value):
            number = int(value)
        if number is None:
            raise CodecError(f"should be a whole number{self._range()}, not {_short(value)}")
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            raise CodecError(f"should be a whole number{self._range()}, not {number}")
        return number

    def encode(self, value: Any) -> Any:
        return value


@dataclass(frozen=True)
class Number:
    """A number (whole or not)."""

    encodes_as_is: ClassVar[bool] = True

    kind: Kind = "number"

    def decode(self, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return value
        if isinstance(value, str):
            try:
                out = float(value)
            except ValueError:
                pass
            else:
                if math.isfinite(out):
                    return out
        raise CodecError(f"should be a number, not {_short(value)}")

    def encode(self, value: Any) -> Any:
        return value


@dataclass(frozen=True)
class YesNo:
    """A flag shown as Yes / No (a dropdown); TRUE/FALSE and a ticked checkbox read too."""

    kind: Kind = "bool"

    def decode(self, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().casefold() in ("yes", "y", "true", "x"):
            return True
        if isinstance(value, str) and value.strip().casefold() in ("no", "n", "false"):
            return False
        raise CodecError(f"should be Yes or No, not {_short(value)}")

    def encode(self, value: Any) -> Any:
        return None if value is None else ("Yes" if value else "No")


@dataclass(frozen=True)
class Choice:
    """One of a list's entries (``list_name`` is a key of :attr:`Layout.lists`, or a
    defined name of a block column such as ``=Unit_Names`` checked by the system)."""

    options: tuple[str, ...] = ()
    kind: Kind = "choice"

    def decode(self, value: Any) -> Any:
        text = str(value).strip()
        if not self.options:
            return text or None
        for option in self.options:
            if option.casefold() == text.casefold():
                return option
        from sheetsync.core.errors import did_you_mean

        raise CodecError(f"should be one of {', '.join(self.options)}, not {_short(value)}{did_you_mean(text, self.options)}")

    def encode(self, value: Any) -> Any:
        return None if value is None else str(value)


@dataclass(frozen=True)
class Names:
    """A list of names in one cell, separated by commas or semicolons."""

    kind: Kind = "text"

    def decode(self, value: Any) -> Any:
        parts = [p.strip() for p in re.split(r"[;,]", str(value))]
        return tuple(p for p in parts if p) or None

    def encode(self, value: Any) -> Any:
        return None if not value else ", ".join(value)


@dataclass(frozen=True)
class Percent:
    """A percentage shown as a number with a % format (0.57 is 57%)."""

    kind: Kind = "percent"

    def decode(self, value: Any) -> Any:
        return Number().decode(value)

    def encode(self, value: Any) -> Any:
        return value


TEXT = Text()
INT = Int()
NUMBER = Number()
BOOL = YesNo()
PERCENT = Percent()

_BY_KIND: dict[str, Codec] = {"text": TEXT, "int": INT, "bool": BOOL, "number": NUMBER, "percent": PERCENT,
                              "choice": Choice()}


@dataclass(frozen=True)
class Column:
    """One column of a block: its key, header, codec and the model field it fills.

    ``field`` defaults to ``key``; a dotted ``field`` (``orders.roll``) is the system's to
    interpret.  ``choices`` is a list name in :attr:`Layout.lists` or a defined name of a
    block column (``"=Unit_Names"``): the template draws a dropdown from it."""

    key: str
    header: str
    kind: Kind = "text"
    is_input: bool = True
    choices: str | None = None
    width: int = 12
    low: int | None = None
    high: int | None = None
    note: str = ""
    codec_: Codec | None = None
    field_: str | None = None
    hidden: bool = False

    @cached_property
    def codec(self) -> Codec:
        """The column's codec: the one given, else one made from ``kind``, ``low`` and ``high``
        (made once a column: a step encodes thousands of cells through it, issue 23)."""
        if self.codec_ is not None:
            return self.codec_
        if self.kind == "int" and (self.low is not None or self.high is not None):
            return Int(self.low, self.high)
        return _BY_KIND[self.kind]

    @property
    def field(self) -> str:
        return self.field_ or self.key


@dataclass(frozen=True)
class Block:
    """A table: a header row, then ``rows`` data rows (``None``: open-ended, like the Log)."""

    name: str
    sheet: str
    header_row: int
    columns: tuple[Column, ...]
    rows: int | None
    first_col: int = 1
    title: str = ""
    note: str = ""

    @property
    def first_row(self) -> int:
        return self.header_row + 1

    @property
    def last_row(self) -> int | None:
        return None if self.rows is None else self.first_row + self.rows - 1

    @property
    def last_col(self) -> int:
        return self.first_col + len(self.columns) - 1

    @cached_property
    def _index(self) -> dict[str, int]:
        return {c.key: i for i, c in enumerate(self.columns)}

    def index(self, key: str) -> int:
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"{self.name} has no column {key!r}") from None

    def column(self, key: str) -> Column:
        return self.columns[self.index(key)]

    @cached_property
    def _letters(self) -> dict[str, str]:
        return {c.key: col_letter(self.first_col + i) for i, c in enumerate(self.columns)}

    def letter(self, key: str) -> str:
        try:
            return self._letters[key]  # a step names hundreds of cells: each letter made once
        except KeyError:
            raise KeyError(f"{self.name} has no column {key!r}") from None

    def range(self, *, rows: int | None = None, open_rows: int = 4000) -> str:
        """The data range in A1 notation (open-ended when the block has no row limit)."""
        end = self.last_row if rows is None else self.first_row + rows - 1
        return (f"{quote_sheet(self.sheet)}!{col_letter(self.first_col)}{self.first_row}:"
                f"{col_letter(self.last_col)}{end if end is not None else ''}")

    def header_range(self) -> str:
        return (f"{quote_sheet(self.sheet)}!{col_letter(self.first_col)}{self.header_row}:"
                f"{col_letter(self.last_col)}{self.header_row}")

    def row_range(self, offset: int, count: int = 1) -> str:
        """The range of ``count`` data rows starting ``offset`` rows below the first."""
        r = self.first_row + offset
        return f"{quote_sheet(self.sheet)}!{col_letter(self.first_col)}{r}:{col_letter(self.last_col)}{r + count - 1}"

    def cell(self, offset: int, key: str) -> str:
        """``Sheet!C7``: the cell of column ``key`` in data row ``offset`` (0-based)."""
        return f"{self.sheet}!{self.letter(key)}{self.first_row + offset}"

    def column_ref(self, key: str, absolute: bool = True, open_rows: int = 4000) -> str:
        """A whole data column of the block, for formulas and validations (an open-ended
        block's first ``open_rows`` rows)."""
        d = "$" if absolute else ""
        last = self.last_row or (self.first_row + open_rows)
        letter = self.letter(key)
        return f"{quote_sheet(self.sheet)}!{d}{letter}{d}{self.first_row}:{d}{letter}{d}{last}"

    def row_values(self, values: Mapping[str, Any]) -> list[Any]:
        """One data row from ``{column key: value}``, each encoded by its column's codec;
        a key the block has not is an error (rows are keyed, never positional)."""
        unknown = set(values) - set(self._index)
        if unknown:
            raise KeyError(f"{self.name} has no column {sorted(unknown)[0]!r}")
        return [c.codec.encode(values[c.key]) if c.key in values else None for c in self.columns]


@dataclass(frozen=True)
class Cell:
    """A single named cell (``Battle_Turn`` at ``Battle!B3``)."""

    name: str
    sheet: str
    address: str
    label: str
    is_input: bool = False
    note: str = ""
    codec_: Codec | None = None

    @property
    def ref(self) -> str:
        return f"{quote_sheet(self.sheet)}!{self.address}"

    @property
    def codec(self) -> Codec:
        return self.codec_ or TEXT


@dataclass(frozen=True)
class Area:
    """A free rectangle of computed cells that a view fills whole (a hex map drawn in
    cells).  ``rows`` x ``cols`` cells from ``first_row``, ``first_col``."""

    name: str
    sheet: str
    first_row: int
    first_col: int
    rows: int
    cols: int
    title: str = ""
    cell_width: float | None = None
    """The columns' width (characters) and the rows' height (points), for a grid that reads."""
    cell_height: float | None = None
    outlines: tuple[tuple[int, int, int, int], ...] = ()
    """Rectangles drawn with an outline: (row offset, column offset, rows, columns) (a hex's two cells)."""

    def range(self) -> str:
        return (f"{quote_sheet(self.sheet)}!{col_letter(self.first_col)}{self.first_row}:"
                f"{col_letter(self.first_col + self.cols - 1)}{self.first_row + self.rows - 1}")


@dataclass(frozen=True)
class Colours:
    """A decoration: fill ``target`` (a block column ``"Block.key"`` or an area name) with a
    colour chosen by the cell's text (``{"Party": "C6EFCE"}``); ``contains`` matches a part
    of the text rather than the whole.  A key starting with ``=`` is an expression the cell
    is compared with (``=Battle!$A$15``, a cell holding a side's name).  Drawn as
    conditional formats by both renderers."""

    target: str
    colours: Mapping[str, str]
    contains: bool = False


@dataclass(frozen=True)
class Rule:
    """A conditional format: the cells of ``target`` take a fill and a font while a test holds.

    ``target`` is a block column (``"Orders_Table.roll"``), a span of a block's columns
    (``"Orders_Table.phase:picks"``) or a whole block (``"Log_Table"``), data rows only (an
    open-ended block as far as :attr:`Layout.open_rows`).  ``kind`` says what ``when`` is:
    ``"formula"``, a formula (without ``=``) relative to the target's top-left cell;
    ``"equals"``, the text the cell holds, whole; ``"at_most"``, a number the cell's value
    is at most.  Colours are hex ``RRGGBB``; ``None`` leaves the cell's own.  The rules of a
    sheet are drawn in the layout's order, the first winning where two apply."""

    target: str
    when: str
    kind: Literal["formula", "equals", "at_most"] = "formula"
    fill: str | None = None
    colour: str | None = None
    bold: bool = False
    italic: bool = False
    strike: bool = False


@dataclass(frozen=True)
class DataBar:
    """A bar in each cell of ``target`` (a block column) as long as its value, from ``low``
    to the column's largest.  A Google Sheet has no data bars: it shows the same scale as a
    colour from ``low_colour`` (at ``low``) to ``high_colour`` (at the largest)."""

    target: str
    colour: str = "5B9BD5"
    low: int = 0
    low_colour: str = "F8696B"
    high_colour: str = "63BE7B"


def _four(_lay: Layout) -> int:
    return 4


@dataclass(frozen=True)
class Chart:
    """A line chart of a block (``block``): its first column is the axis (categories), the
    next ``series`` columns are the lines, each titled by its header.

    ``series`` and ``anchor`` (the cell of the chart's top-left corner) are computed from the
    layout, as :attr:`Layout.formulas` are: ``anchor(layout, series)``.  A workbook's chart
    is drawn again before every save (openpyxl drops the charts it reads) over the category
    rows filled so far; a Google Sheet's is drawn once over every row, titled
    ``fixed_title`` (when given) since it does not grow with the battle.  Size in cm."""

    block: str
    title: str
    anchor: Callable[[Layout, int], str]
    x_title: str = ""
    y_title: str = ""
    series: Callable[[Layout], int] = _four
    fixed_title: Callable[[Layout, int], str] | None = None
    width: float = 17.0
    height: float = 6.0


@dataclass(frozen=True)
class PrintSetup:
    """How one sheet prints: orientation, fitted ``pages_wide`` pages across (and
    ``pages_tall`` down, 0 for as many as it needs), rows/columns repeated on every page
    (``"2:2"``, ``"A:B"``), the printed area, page order and margins (inches: left, right,
    top, bottom).  Drawn in the workbook only: a Google Sheet is printed from its own dialog.

    The printed area stops at the rows in use (issue 22, :mod:`sheetsync.sheets.printing`):
    ``area`` only bounds it, unless ``rows_in_use`` is off (a dashboard printed whole).
    ``pages_tall=1`` with ``pages_wide=1`` prints the sheet on one page (the hex map)."""

    landscape: bool = True
    pages_wide: int = 1
    pages_tall: int = 0
    title_rows: str | None = None
    title_cols: str | None = None
    area: str | None = None
    over_then_down: bool = False
    margins: tuple[float, float, float, float] | None = None
    grid_lines: bool | None = None
    rows_in_use: bool = True


PAGE_CHARS = 250
"""Issue 22: about how many characters of column width one landscape page (A4 or Letter)
holds and still reads (at about 60%): a wider table prints on more pages across."""
PRINT_MARGINS = (0.4, 0.4, 0.5, 0.5)


def table_printing(block: Block, *, keep: int = 0) -> PrintSetup:
    """Issue 22: how the sheet of a table prints: landscape (portrait when its columns fit
    a portrait page), its header row repeated on every page, fitted to as many pages
    across as its visible columns need to read (:data:`PAGE_CHARS` a page, whole columns
    to a page, never cut), with its first ``keep`` columns repeated on each page across,
    and as many pages down as its rows in use take."""
    shown = [c.width for c in block.columns if not c.hidden]
    width, kept = sum(shown), sum(shown[:keep])
    pages = 1 if width <= PAGE_CHARS else math.ceil((width - kept) / (PAGE_CHARS - kept))
    repeat = f"{col_letter(block.first_col)}:{col_letter(block.first_col + keep - 1)}" if keep and pages > 1 else None
    return PrintSetup(landscape=width > PAGE_CHARS // 2, pages_wide=pages, pages_tall=0,
                      title_rows=f"{block.header_row}:{block.header_row}", title_cols=repeat,
                      over_then_down=pages > 1, margins=PRINT_MARGINS, grid_lines=False)


@dataclass(frozen=True)
class Static:
    """A fixed cell of a blank tracker (``Battle!B3`` = 1): text, a number, a flag, or a
    formula (text starting with ``=``, with ``formula=True``), optionally bold and sized."""

    sheet: str
    address: str
    value: str | int | float | bool
    formula: bool = False
    bold: bool = False
    size: float | None = None


@dataclass(frozen=True)
class DeferredStatic:
    """Fixed cells computed only when something reads them (:attr:`Layout.static`): a large
    table of fixed values (the Exalted Odds sheet's ten thousand chances) that a step never
    reads, only a template or a drawing.  ``last_row`` and ``last_col`` bound the cells on
    ``sheet`` so that a print area needs no values."""

    sheet: str
    last_row: int
    last_col: int
    make: Callable[[], Iterable[Static]] = field(compare=False)



@dataclass(frozen=True)
class CellChoices:
    """A dropdown on one cell (a House Rules value): ``options``, refusing anything else,
    with ``error`` as the refusal's text."""

    sheet: str
    address: str
    options: tuple[str, ...]
    error: str = ""


@dataclass(frozen=True)
class Dropdowns:
    """How the workbook's dropdowns meet a value off their list: ``list_errors`` for a list
    of :attr:`Layout.lists` (``"stop"`` refuses, ``"warning"`` asks), ``name_errors`` for a
    list of names (``=Unit_Names``; ``"off"`` accepts anything, since the system checks the
    name), and ``prompts``: whether a column's note pops up when its cell is selected."""

    list_errors: Literal["stop", "warning"] = "stop"
    name_errors: Literal["warning", "off"] = "warning"
    prompts: bool = True


@dataclass
class Layout:
    """Every sheet, block, named cell, area, list and decoration of a tracker."""

    system: str = ""
    version: int = 0
    sheets: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)
    blocks: dict[str, Block] = field(default_factory=dict)
    cells: dict[str, Cell] = field(default_factory=dict)
    areas: dict[str, Area] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=dict)
    colours: list[Colours] = field(default_factory=list)
    capacity: dict[str, int] = field(default_factory=dict)
    """How many rows each growing block holds (``{"units": 40}``), recorded beside the mark."""
    formulas: dict[str, Callable[[Layout, int], str]] = field(default_factory=dict)
    """Live formulas per ``"Block.key"``: given the layout and a sheet row, the formula text."""
    names: dict[str, str] = field(default_factory=dict)
    """Defined names of block columns, for dropdowns and scripts (``{"Unit_Names": "Units_Table.name"}``)."""
    rules: list[Rule] = field(default_factory=list)
    """Conditional formats beyond :attr:`colours`, in the order they apply (the first wins)."""
    bars: list[DataBar] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    merges: list[str] = field(default_factory=list)
    """Merged ranges (``"Battle!B4:D4"``): the text of the first cell wraps, top-aligned."""
    row_heights: dict[tuple[str, int], float] = field(default_factory=dict)
    """Row heights in points by (sheet, row)."""
    frozen: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Frozen (rows, columns) per sheet; a sheet not named here freezes under its only table."""
    printing: dict[str, PrintSetup] = field(default_factory=dict)
    """Print setup per sheet; a sheet not named here prints landscape, one page wide."""
    fixed: list[Static] = field(default_factory=list)
    """The fixed cells computed so far; read them through :attr:`static`."""
    deferred: list[DeferredStatic] = field(default_factory=list)
    """Fixed cells not computed yet: :attr:`static` computes them, in order, when first read."""
    checkboxes: list[str] = field(default_factory=list)
    """Block columns (``"Battle_Buttons.tick"``) whose data rows are checkboxes, unticked."""
    choices_at: list[CellChoices] = field(default_factory=list)
    dropdowns: Dropdowns = field(default_factory=Dropdowns)
    open_rows: int = 4000
    """How far down an open-ended block (the Log) is decorated and named."""

    @property
    def static(self) -> list[Static]:
        """Every fixed cell of a blank tracker, the deferred ones computed first (in the order
        they were added, before any added after them)."""
        while self.deferred:
            self.fixed.extend(self.deferred.pop(0).make())
        return self.fixed

    @static.setter
    def static(self, value: list[Static]) -> None:
        self.deferred.clear()
        self.fixed = value

    def static_extent(self, sheet: str) -> tuple[int, int]:
        """The last row and column of ``sheet`` that a fixed cell fills (0, 0 when none),
        without computing the deferred ones."""
        last_row = last_col = 0
        for part in self.deferred:
            if part.sheet == sheet:
                last_row, last_col = max(last_row, part.last_row), max(last_col, part.last_col)
        for static in self.fixed:
            if static.sheet == sheet:
                col, row = cell_position(static.address)
                last_row, last_col = max(last_row, row), max(last_col, col)
        return last_row, last_col

    def block(self, name: str) -> Block:
        return self.blocks[name]

    def add(self, block: Block) -> None:
        self.blocks[block.name] = block

    def add_cell(self, cell: Cell) -> None:
        self.cells[cell.name] = cell

    def add_area(self, area: Area) -> None:
        self.areas[area.name] = area

    def end_row(self, block: Block) -> int:
        """A block's last decorated row: its last data row, or an open-ended block's
        :attr:`open_rows`-th."""
        return block.last_row if block.last_row is not None else block.first_row + self.open_rows

    def box(self, target: str) -> tuple[str, int, int, int, int]:
        """The cells of a decoration's target (``"Block.key"``, ``"Block.key:key2"``, ``"Block"``
        or an area's name), data rows only: (sheet, first row, first column, last row, last column)."""
        if target in self.areas:
            a = self.areas[target]
            return a.sheet, a.first_row, a.first_col, a.first_row + a.rows - 1, a.first_col + a.cols - 1
        name, _, keys = target.partition(".")
        b = self.block(name)
        if keys:
            first, _, last = keys.partition(":")
            c1 = b.first_col + b.index(first)
            c2 = b.first_col + b.index(last or first)
        else:
            c1, c2 = b.first_col, b.last_col
        return b.sheet, b.first_row, c1, self.end_row(b), c2


def columns_of(names: Sequence[str]) -> tuple[Column, ...]:
    """Plain text columns, for simple hidden blocks."""
    return tuple(Column(n, n, is_input=False) for n in names)


STEP_LAYOUTS = 8
"""How many layouts (one a capacity) :func:`step_layouts` remembers for a system's steps."""


def step_layouts(build: Callable[[Mapping[str, int] | None], Layout]
                 ) -> Callable[[Mapping[str, int] | None], Layout]:
    """``build`` remembered by capacity, for a tracker's steps only (issue 23: a server
    built the whole layout again for every click, 0.85 ms of an Exalted Next Tick).

    A step only looks a layout up (its blocks, cells, areas and formulas); what changes a
    layout, the fixed cells a drawing computes (:attr:`Layout.static`), never reads one of
    these, so a layout shared by every step of one capacity is what each would build.  The
    drawing code keeps calling ``build`` itself, for a layout of its own.  Bounded to
    :data:`STEP_LAYOUTS` capacities, the most recently used kept."""
    known: dict[tuple[tuple[str, int], ...], Layout] = {}
    lock = threading.Lock()

    def layout(capacity: Mapping[str, int] | None = None) -> Layout:
        key = tuple(sorted((capacity or {}).items()))
        got = known.get(key)
        if got is None:
            got = build(capacity)
            with lock:
                known.pop(key, None)
                known[key] = got
                while len(known) > STEP_LAYOUTS:
                    del known[next(iter(known))]
        return got

    layout.__doc__ = build.__doc__
    return layout
