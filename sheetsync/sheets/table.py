"""Blocks and named cells read and written by column key (DESIGN "The layout is data with
codecs"): the generic half of a tracker's reader and writer, for any rule system.

:func:`read_block` turns a :class:`~sheetsync.core.layout.Block`'s grid into rows
``{column key: value}`` decoded by each column's codec, skipping blank rows, and collects
every problem as ``Problem("Units!C5", message)``, the address made from the block, the
column and the row.  A formula in an input cell is refused, naming the cell (a Tracker
types values; ``=RAND()`` would change on every recalculation).  :func:`block_update`
writes rows keyed by column through :meth:`Block.row_values`, never by position, and
:func:`locate` maps a loader's problem path (``units[3].counter``) back to its cell.

Imports nothing from ``sheetsync.systems``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sheetsync.core.errors import Problem
from sheetsync.core.layout import Block, Cell, CodecError, Column, col_letter, quote_sheet
from sheetsync.sheets.backend import CellValue, Formula, Grid, RangeUpdate, parse_range

__all__ = ["HOUSE_RULES_TODO", "Row", "append_update", "blank_rows", "block_fill", "block_update", "cell_update", "row_updates", "decode", "is_blank",
           "below_block", "in_column", "locate", "overflow", "read_block", "read_cell", "read_past", "relocate",
           "split_below"]


@dataclass(frozen=True)
class Row:
    """One non-blank data row: its offset below the block's first row, its decoded values
    (every column read; a blank or refused cell is ``None``) and the cells as read."""

    offset: int
    values: dict[str, Any]
    raw: dict[str, CellValue] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        value = self.values.get(key)
        return default if value is None else value


def is_blank(value: CellValue) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _message(col: Column, err: CodecError) -> str:
    """``Men should be a whole number ...``; a codec's own sentence (``'3+ - x' is not a
    counter ...``) is kept as it is."""
    text = str(err)
    return f"{col.header} {text}" if text.startswith(("should", "is ", "must")) else text


def _want(col: Column) -> str:
    return {"int": "a whole number", "number": "a number", "percent": "a number", "bool": "Yes or No"}.get(
        col.kind, "the value")


def decode(col: Column, value: CellValue, where: str, problems: list[Problem]) -> Any:
    """One cell through its column's codec: ``None`` for a blank cell, and for a bad one
    (its problem added).  A formula is refused in an input column and read as ``None`` in
    a computed one (a live formula that a step overwrites).

    A codec may word the formula refusal itself (a ``formula_message(text)`` method), and
    a :class:`CodecError` may carry several ``messages`` (one cell, several bad parts) and
    the ``partial`` value that could still be read (returned instead of ``None``)."""
    if isinstance(value, Formula):
        if col.is_input:
            refuse = getattr(col.codec, "formula_message", None)
            problems.append(Problem(where, refuse(value.text) if refuse is not None else
                                    f"{col.header}: a formula ({value.text}) is not allowed here; type {_want(col)}"))
        return None
    if is_blank(value):
        return None
    try:
        return col.codec.decode(value)
    except CodecError as err:
        messages = getattr(err, "messages", None)
        if messages:
            problems.extend(Problem(where, m) for m in messages)
        else:
            problems.append(Problem(where, _message(col, err)))
        return getattr(err, "partial", None)
    except (ValueError, OverflowError, TypeError, RecursionError):
        # issue 26: a codec's own conversion failing on an absurd cell (4,301 digits past
        # what int() converts, ``1e309`` or NaN made an int) is that cell's problem too
        problems.append(Problem(where, f"{col.header}: {_short(value)} can't be read here; type {_want(col)}"))
        return None


def _short(value: CellValue) -> str:
    """A cell's value for a message, long text cut to its first characters."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(str(value))} characters)"


def read_block(block: Block, grid: Grid, problems: list[Problem], *, keys: Sequence[str] | None = None,
               blank_keys: Sequence[str] | None = None, stamp: str | None = None) -> list[Row]:
    """The block's non-blank rows, each ``{column key: decoded value}``.

    ``grid`` is what ``read_ranges([block.range()])`` gave.  ``keys`` limits the columns
    decoded (default: all); ``blank_keys`` the columns that decide whether a row is blank
    (default: the input columns, or all when the block has none).  Every bad cell adds a
    :class:`Problem` naming it; nothing is raised here, so a caller lists them all at once.

    ``stamp`` names a column a step stamps a row with once it is resolved (its turn): a row
    whose stamp cell holds a whole number is done, and only its stamp is decoded (issue 23:
    the rows of every past turn are not decoded again on every step; a resolved row is
    history, its other cells are not orders any more)."""
    columns = block.columns
    cols = [c for c in columns if keys is None or c.key in keys]
    deciders = set(blank_keys) if blank_keys is not None else (
        {c.key for c in columns if c.is_input} or {c.key for c in columns})
    # issue 23: a blank row is passed over by its deciding cells alone, before any dict is
    # made of it (a tracker's blocks are mostly blank rows, read on every step)
    decide = [(j, c.is_input) for j, c in enumerate(columns) if c.key in deciders]
    out: list[Row] = []
    for i, cells in enumerate(grid):
        if block.rows is not None and i >= block.rows:
            break
        width = len(cells)
        if all(j >= width or is_blank(v := cells[j]) or (isinstance(v, Formula) and not is_input)
               for j, is_input in decide):
            continue
        raw = {c.key: (cells[j] if j < width else None) for j, c in enumerate(columns)}
        if stamp is not None and type(raw.get(stamp)) is int:
            column = block.column(stamp)
            out.append(Row(i, {stamp: decode(column, raw[stamp], block.cell(i, stamp), problems)}, raw))
            continue
        values: dict[str, Any] = {}
        for c in cols:  # the cell's address is made only for a problem (issue 23)
            said = len(problems)
            values[c.key] = decode(c, raw[c.key], "", problems)
            if len(problems) != said:
                at = block.cell(i, c.key)
                problems[said:] = [Problem(at, p.message) for p in problems[said:]]
        out.append(Row(i, values, raw))
    return out


def overflow(block: Block, grid: Grid) -> list[int]:
    """Offsets of non-blank rows read below the block's last row (a read past the end)."""
    if block.rows is None:
        return []
    return [i for i, cells in enumerate(grid) if i >= block.rows and not all(is_blank(v) for v in cells)]


HOUSE_RULES_TODO = "Each house rule has its own row above: type its value in that row's Value column"
"""What to do with a row typed below a House Rules block, whose rows are fixed, one a rule
(for :func:`below_block`)."""


def read_past(block: Block, last_row: int | None = None) -> str:
    """``block``'s range read past its last row, so a value typed below it is seen and
    refused (:func:`below_block`) rather than silently dropped (issue 8, item 6; issue 26,
    item 3): to the end of its sheet (``Units!A3:W``), or to row ``last_row`` when
    something else of the tracker lies further down the sheet.  An open-ended block's
    range is its own."""
    if block.rows is None:
        return block.range()
    if last_row is not None:
        return block.range(rows=last_row - block.first_row + 1)
    return block.range().rsplit(":", 1)[0] + ":" + col_letter(block.last_col)


def split_below(block: Block, grid: Grid) -> tuple[Grid, Grid]:
    """The read of :func:`read_past` as the block's own rows and the rows below them."""
    if block.rows is None:
        return grid, []
    return grid[:block.rows], grid[block.rows:]


def below_block(block: Block, below: Grid, what: str, *, todo: str = "Move this row into an empty row above",
                most: int | None = None) -> list[Problem]:
    """Issue 8, item 6 and issue 26, item 3: a value below a block a Tracker types into is
    refused, with the block's limit and its last row named, and what to do: ``todo``, and
    when a tracker made from a battle file is sized to the battle (up to ``most`` rows of
    this block), how to get one.  ``below`` is what was read under the block's last row
    (:func:`split_below`); each row holding a value is one problem, at its first filled
    cell, so every row to move is listed at once."""
    rows = block.rows or 0
    more = "" if most is None else (", or put the battle in a battle file: `sheetsync new OUT --from battle.yaml` "
                                    f"makes a tracker sized to it (up to {most} {what})")
    out: list[Problem] = []
    for k, cells in enumerate(below):
        j = next((j for j, v in enumerate(cells) if not is_blank(v)), None)
        if j is None:
            continue
        where = f"{block.sheet}!{col_letter(block.first_col + j)}{block.first_row + rows + k}"
        out.append(Problem(where, f"this tracker holds at most {rows} {what} (rows {block.first_row}-"
                                  f"{block.last_row}); nothing below them is read. {todo}{more}"))
    return out


def read_cell(cell: Cell, value: CellValue, problems: list[Problem]) -> Any:
    """A named cell's value through its codec (``None`` when blank or bad, its problem added)."""
    col = Column(cell.name, cell.label, is_input=cell.is_input, codec_=cell.codec)
    return decode(col, value, f"{cell.sheet}!{cell.address}", problems)


def in_column(cell: Cell, grid: Grid, column_range: str) -> CellValue:
    """A named cell's value as read in ``grid``, the read of the one-column ``column_range``
    holding it (``Battle!B3:B11``); ``None`` when the read stops above it."""
    row = int(cell.address[1:]) - parse_range(column_range).row1
    return grid[row][0] if 0 <= row < len(grid) and grid[row] else None


def cell_update(cell: Cell, value: Any) -> RangeUpdate:
    """Write one named cell (through its codec; a :class:`Formula` as it is)."""
    out = value if isinstance(value, Formula) else cell.codec.encode(value)
    return RangeUpdate(cell.ref, [[out]])


def _encode(block: Block, row: Mapping[str, Any]) -> list[CellValue]:
    plain = {k: v for k, v in row.items() if not isinstance(v, Formula)}
    values: list[CellValue] = list(block.row_values(plain))
    for k, v in row.items():
        if isinstance(v, Formula):
            values[block.index(k)] = v
    return values


def block_update(block: Block, rows: Sequence[Mapping[str, Any]], offset: int = 0, *,
                 keys: Sequence[str] | None = None) -> RangeUpdate:
    """Write ``rows`` (``{column key: value}``) from data row ``offset`` down.

    Without ``keys`` every column of each row is written (a key a row lacks is blanked).
    With ``keys`` only the columns from the first to the last of them are written, so
    input columns beside a computed span stay as typed; a row key outside that span is an
    error.  A row past the block's end is an error too: a step never drops a row."""
    if block.rows is not None and offset + len(rows) > block.rows:
        raise ValueError(f"{block.name} holds {block.rows} rows; writing {len(rows)} from row {offset} overflows it")
    if keys is None:
        lo, hi = 0, len(block.columns) - 1
    else:
        idx = [block.index(k) for k in keys]
        lo, hi = min(idx), max(idx)
    grid: list[list[CellValue]] = []
    span = block.columns[lo:hi + 1]
    for row in rows:
        outside = [k for k in row if not lo <= block.index(k) <= hi]
        if outside:
            raise KeyError(f"{block.name}: column {outside[0]!r} is outside the columns written")
        # only the columns written are encoded (issue 23: a stamp of one cell encoded the
        # whole row); each exactly as :func:`_encode` encodes it
        grid.append([(v if isinstance(v := row[c.key], Formula) else c.codec.encode(v)) if c.key in row else None
                     for c in span])
    r1 = block.first_row + offset
    rng = (f"{quote_sheet(block.sheet)}!{col_letter(block.first_col + lo)}{r1}:"
           f"{col_letter(block.first_col + hi)}{r1 + max(len(rows), 1) - 1}")
    return RangeUpdate(rng, grid)


def row_updates(block: Block, rows: Sequence[tuple[int, Mapping[str, Any]]], *,
                keys: Sequence[str]) -> list[RangeUpdate]:
    """The ``(offset, row)`` pairs of ``rows`` written as ``block_update(block, run, start,
    keys=keys)`` writes each run of them on consecutive rows, the runs in row order: the
    same cells as one update a row, in a few blocks (issue 23: a hex Resolve stamps two
    spans of each of its 80 order rows, which were 160 updates and are now four).  The
    columns written are worked out once; an offset given twice is an error."""
    idx = [block.index(k) for k in keys]
    lo, hi = min(idx), max(idx)
    span = block.columns[lo:hi + 1]
    inside = {c.key for c in span}
    head, last = f"{quote_sheet(block.sheet)}!{col_letter(block.first_col + lo)}", col_letter(block.first_col + hi)
    out: list[RangeUpdate] = []
    run: list[list[CellValue]] = []
    start = prev = -2
    for offset, row in sorted(rows, key=lambda pair: pair[0]):
        if offset == prev:
            raise ValueError(f"{block.name}: row {offset} is written twice")
        if block.rows is not None and offset + 1 > block.rows:
            raise ValueError(f"{block.name} holds {block.rows} rows; writing 1 from row {offset} overflows it")
        outside = [k for k in row if k not in inside]
        if outside:
            block.index(outside[0])  # a key the block has not raises as block_update's does
            raise KeyError(f"{block.name}: column {outside[0]!r} is outside the columns written")
        if offset != prev + 1 and run:
            out.append(RangeUpdate(f"{head}{block.first_row + start}:{last}{block.first_row + prev}", run))
            run = []
        if not run:
            start = offset
        prev = offset
        run.append([(v if isinstance(v := row[c.key], Formula) else c.codec.encode(v)) if c.key in row else None
                    for c in span])
    if run:
        out.append(RangeUpdate(f"{head}{block.first_row + start}:{last}{block.first_row + prev}", run))
    return out


def blank_rows(count: int) -> list[dict[str, Any]]:
    """``count`` empty rows, to clear what a block held below the rows written."""
    return [{} for _ in range(count)]


def block_fill(block: Block, rows: Sequence[Mapping[str, Any]], *, keys: Sequence[str] | None = None
               ) -> RangeUpdate:
    """The whole block (it must have a row limit): ``rows`` from the top, blank rows to its
    end, so nothing an earlier step wrote is left below them."""
    if block.rows is None:
        raise ValueError(f"{block.name} is open-ended: append to it instead")
    if len(rows) > block.rows:
        raise ValueError(f"{block.name} holds {block.rows} rows, not {len(rows)}")
    return block_update(block, [*rows, *blank_rows(block.rows - len(rows))], keys=keys)


def locate(path: str, where: Mapping[str, str]) -> str | None:
    """The cell a loader's problem path came from: the path itself when ``where`` has it,
    else its nearest parent (``units[3].counter`` -> ``units[3]`` -> ``units``), else
    ``None``."""
    key = path
    while key:
        if key in where:
            return where[key]
        cut = max(key.rfind("."), key.rfind("["))
        if cut <= 0:
            break
        key = key[:cut]
    return None


def relocate(problems: Sequence[Problem], where: Mapping[str, str]) -> list[Problem]:
    """Each problem with its path replaced by the cell it came from (kept when unknown)."""
    return [Problem(locate(p.where, where) or p.where, p.message) for p in problems]


def append_update(block: Block, rows: Sequence[Mapping[str, Any]]) -> RangeUpdate:
    """Append ``rows`` below the last row holding a value on the block's sheet (a Log)."""
    return RangeUpdate(block.range(), [_encode(block, r) for r in rows], append=True)


_R = TypeVar("_R")


def read_once(rd: Any, read: Callable[[Any, list[Problem], dict[str, str]], _R], problems: list[Problem],
              where: dict[str, str]) -> _R:
    """``read(rd, problems, where)`` once a step (issue 23): its result, problems and cells are
    kept on ``rd.read_rows``, and a second call gives the same rows and adds the same problems
    and cells (a step's check for a step cut short reads them too)."""
    if rd.read_rows is None:
        said: list[Problem] = []
        cells: dict[str, str] = {}
        rd.read_rows = (read(rd, said, cells), said, cells)
    out, said, cells = rd.read_rows
    problems.extend(said)
    where.update(cells)
    return out  # type: ignore[no-any-return]
