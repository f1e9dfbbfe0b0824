"""The hex wargame's tracker layout as data (DESIGN "The layout is data with codecs").

Sheets: Battle (turn, initiative, status, the map's size and impassable hexes, buttons),
Units (typed counters and start hexes; computed standing and effective values), Moves,
Attacks (with live S, D, chance and expected casualties, H11), Map (the hex grid drawn in
cells, H2), Log, Report, House Rules, and the hidden Lists and State.  The generic reader,
writer and template, and the Google Sheets initializer, draw every tracker from this.

Capacity grows with the battle: ``layout({"units": 100, "map_columns": 30, "map_rows": 20})``.
The capacity used is recorded beside the tracker's mark, so every step reads the same cells.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from sheetsync.core.layout import (
    PRINT_MARGINS,
    Area,
    Block,
    Cell,
    Choice,
    CodecError,
    Colours,
    Column,
    Int,
    Kind,
    Layout,
    PrintSetup,
    Text,
    table_printing,
)
from sheetsync.systems.hexwar.rules.counter import parse_counter
from sheetsync.systems.hexwar.rules.grid import parse_hex
from sheetsync.systems.hexwar.rules.models import HouseRules
from sheetsync.systems.hexwar.tracker.formulas import HELPER_COLUMNS, add_formulas

__all__ = ["CAPACITY", "MAX_CAPACITY", "SIDE_COLOURS", "Counter_", "HexId", "HexIds", "layout", "map_cell"]

SYSTEM_ID = "hexwar"
VERSION = 1

CAPACITY: dict[str, int] = {"units": 40, "moves": 80, "attacks": 40, "map_columns": 20, "map_rows": 20, "sides": 6}
"""A blank tracker's capacity; a battle loaded with ``new --from`` gets room for all of it."""

MAX_CAPACITY: dict[str, int] = {"units": 400, "moves": 800, "attacks": 400, "map_columns": 99, "map_rows": 99,
                                "sides": 12}
"""The most a tracker is made to hold: a battle beyond it is refused, naming the limit."""

SIDE_COLOURS = ("C6DBEF", "F4CCCC", "D9EAD3", "FFF2CC", "E1D5E7", "FCE5CD")
"""Fills for the sides, in the order their first unit is listed (H1)."""

IMPASSABLE_COLOUR = "595959"
"""5.1, H2: the fill of an impassable hex's cell on the Map sheet."""
MAP_CELL_WIDTH, MAP_CELL_HEIGHT = 15.0, 40.0
"""H2: a Map column's width (characters) and row height (points): a hex is one column and
two rows, about as tall as it is wide."""

OUTCOME_COLOURS = {"moved": "C6EFCE", "hit": "C6EFCE", "miss": "FFEB9C", "refused": "FFC7CE", "destroyed": "808080"}

LISTS: dict[str, list[str]] = {
    "YesNo": ["Yes", "No"],
    "Sizes": ["battalion", "squadron", "company"],
    "Initiative": ["set", "contest"],
    "ChargeBy": ["distance", "path"],
}


def _whole(value: Any) -> Any:
    """H2: a number a spreadsheet made of a hex id, as the int it stands for; a number that
    is no whole one of a few digits (``1e309`` is infinite, NaN is none; issue 26) is
    refused here, before ``int()`` overflows on it."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CodecError(f"{value!r} is not a hex id (four digits CCRR, such as 0405)")
        if value.is_integer() and abs(value) < 10**15:
            return int(value)
    return value


class HexId:
    """H2: a hex id ``CCRR`` (``0405``; a number 405 typed by a spreadsheet reads too)."""

    @property
    def kind(self) -> Kind:
        return "text"

    def decode(self, value: Any) -> Any:
        value = _whole(value)
        try:
            return parse_hex(value).id
        except ValueError as exc:
            raise CodecError(str(exc)) from None

    def encode(self, value: Any) -> Any:
        return None if value is None else str(value)


class HexIds:
    """H2, H4: hex ids separated by spaces, commas or semicolons (a path, impassable hexes)."""

    @property
    def kind(self) -> Kind:
        return "text"

    def decode(self, value: Any) -> Any:
        value = _whole(value)
        if isinstance(value, float):
            raise CodecError(f"{value!r} is not a hex id (four digits CCRR, such as 0405)")
        if isinstance(value, int) and not isinstance(value, bool):
            value = f"{value:04d}"
        parts = [p for p in str(value).replace(",", " ").replace(";", " ").split() if p]
        out = []
        for p in parts:
            try:
                out.append(parse_hex(p).id)
            except ValueError as exc:
                raise CodecError(str(exc)) from None
        return tuple(out) or None

    def encode(self, value: Any) -> Any:
        return None if not value else " ".join(value)


class Counter_:
    """H1: a counter in the text's notation (``3+ - 2 - 4 - 1``), checked as it is read."""

    @property
    def kind(self) -> Kind:
        return "text"

    def decode(self, value: Any) -> Any:
        text = str(value).strip()
        try:
            parse_counter(text)
        except ValueError as exc:
            raise CodecError(str(exc)) from None
        return text

    def encode(self, value: Any) -> Any:
        return None if value is None else str(value)


HEX, HEXES, COUNTER = HexId(), HexIds(), Counter_()


def map_cell(col: int, row: int) -> tuple[int, int]:
    """H2: the top-left cell (row, column offsets from the Map area's corner) of hex
    ``col``, ``row`` (1-based, as written): each hex is two cells tall, and an odd column
    sits one cell lower than its even neighbours."""
    return 2 * (row - 1) + (col & 1), col - 1


def _capacity(capacity: Mapping[str, int] | None) -> dict[str, int]:
    out = dict(CAPACITY)
    for key, value in (capacity or {}).items():
        if key in out:  # tables only grow; the Map area may be drawn to a battle's own smaller map
            out[key] = int(value) if key.startswith("map_") else max(out[key], int(value))
    return out


def layout(capacity: Mapping[str, int] | None = None) -> Layout:
    """The hex tracker's layout, with room for ``capacity`` (at least :data:`CAPACITY`)."""
    cap = _capacity(capacity)
    lay = Layout(system=SYSTEM_ID, version=VERSION, capacity=cap, lists=dict(LISTS))
    lay.sheets = ["Battle", "Units", "Moves", "Attacks", "Map", "Log", "Report", "House Rules", "Lists", "State", "Calc"]
    lay.hidden = ["Lists", "State", "Calc"]
    lay.protected = ["Battle", "Units", "Moves", "Attacks", "Map", "Log", "Report", "House Rules", "Calc"]

    # -- Battle ---------------------------------------------------------------------------
    lay.add_cell(Cell("Battle_Turn", "Battle", "B3", "Turn to resolve"))
    lay.add_cell(Cell("Battle_Initiative", "Battle", "B4", "Initiative this turn", is_input=True,
                      note="H3: the side with initiative this turn (it moves second)", codec_=Text()))
    lay.add_cell(Cell("Battle_Status", "Battle", "B5", "Status"))
    lay.add_cell(Cell("Battle_LastAction", "Battle", "B6", "Last action"))
    lay.add_cell(Cell("Battle_Seed", "Battle", "B7", "Dice seed", is_input=True,
                      note="H8: dice not typed in are rolled from this seed, the turn and the engagement"))
    lay.add_cell(Cell("Battle_MapColumns", "Battle", "B9", "Map columns", is_input=True,
                      note="H2: the map's width in hexes", codec_=Int(1, cap["map_columns"])))
    lay.add_cell(Cell("Battle_MapRows", "Battle", "B10", "Map rows", is_input=True,
                      note="H2: the map's height in hexes", codec_=Int(1, cap["map_rows"])))
    lay.add_cell(Cell("Battle_Impassable", "Battle", "B11", "Impassable hexes", is_input=True,
                      note="H2, 5.1: hex ids, e.g. 0603 0604", codec_=HEXES))
    lay.add(Block("Battle_Buttons", "Battle", 2, (
        Column("action", "Action", is_input=False, width=16),
        Column("tick", "Tick to run", kind="bool", width=12),
    ), rows=4, first_col=5, title="Google Sheets only: tick while `sheetsync watch` runs",
        note="Google Sheets only: tick a box while `sheetsync watch` runs (Excel: the buttons of a .xlsm, or the CLI)."))
    lay.add(Block("Battle_Sides", "Battle", 14, (
        Column("side", "Side", is_input=False, width=16),
        Column("units", "Units", kind="int", is_input=False, width=8),
        Column("destroyed", "Destroyed", kind="int", is_input=False, width=10),
        Column("casualties", "Average casualties %", kind="int", is_input=False, width=12),
        Column("men_lost", "Men lost", kind="int", is_input=False, width=10),
    ), rows=cap["sides"], title="Sides"))

    # -- Units ----------------------------------------------------------------------------
    lay.add(Block("Units_Table", "Units", 2, (
        Column("name", "Unit", width=22, note="H1: a name, unique among the units (Moves and Attacks use it)"),
        Column("side", "Side", width=12, note="H1: a side's name, e.g. Party: units of different sides are enemies"),
        Column("counter", "Counter", width=18, codec_=COUNTER, note="H1: A - D - M - R as printed, e.g. 3+ - 2 - 4 - 1"),
        Column("start_hex", "Start hex", width=9, codec_=HEX, field_="hex", note="H2: CCRR, e.g. 0405"),
        Column("size", "Size", choices="Sizes", width=11, codec_=Choice(("battalion", "squadron", "company")),
               note="H1: a company is half a battalion"),
        Column("men", "Men", kind="int", low=1, high=100000, width=8, note="H12: head count, for the report (default 500)"),
        Column("hex", "Hex now", is_input=False, width=9),
        Column("casualties", "Casualties %", kind="int", is_input=False, width=11),
        Column("attack", "A now", kind="int", is_input=False, width=7, note="H10: after proportional reduction"),
        Column("charge", "Charge now", is_input=False, width=8),
        Column("defense", "D now", kind="int", is_input=False, width=7),
        Column("movement", "M", kind="int", is_input=False, width=5),
        Column("range", "R", is_input=False, width=6),
        Column("status", "Status", is_input=False, width=24),
        *HELPER_COLUMNS,
    ), rows=cap["units"], title="Units (type the first six columns)"))

    # -- Moves ----------------------------------------------------------------------------
    lay.add(Block("Moves_Table", "Moves", 2, (
        Column("turn", "Turn", kind="int", is_input=False, width=6, note="Stamped when resolved; blank = pending"),
        Column("unit", "Unit", choices="=Unit_Names", width=22),
        Column("to", "To hex", width=8, codec_=HEX, note="H4: the destination hex, CCRR, e.g. 0605 (the shortest legal path is taken)"),
        Column("path", "Or path", width=20, codec_=HEXES, note="H4: the hexes entered, in order, e.g. 0405 0505 0605"),
        Column("from", "From", is_input=False, width=7),
        Column("ends", "Ends at", is_input=False, width=7),
        Column("charge", "Charge", kind="bool", is_input=False, width=7),
        Column("outcome", "Outcome", is_input=False, width=9),
        Column("result", "Result", is_input=False, width=60),
    ), rows=cap["moves"], title="Moves"))

    # -- Attacks --------------------------------------------------------------------------
    lay.add(Block("Attacks_Table", "Attacks", 2, (
        Column("turn", "Turn", kind="int", is_input=False, width=6, note="Stamped when resolved; blank = pending"),
        Column("defender", "Defender", choices="=Unit_Names", width=20),
        *(Column(f"attacker{i}", f"Attacker {i}", choices="=Unit_Names", width=18) for i in range(1, 7)),
        Column("roll", "Roll", kind="int", low=1, high=100, width=6, note="H8: a typed d100 (00 is 100); blank: sheetsync rolls"),
        Column("strength", "S", kind="int", is_input=False, width=5, note="H7, H11: live, from the planned hexes"),
        Column("defense", "D", kind="int", is_input=False, width=5),
        Column("chance", "Chance %", kind="int", is_input=False, width=8, note="H7: floor(100 S / (S + D))"),
        Column("expected", "Expected casualties %", kind="number", is_input=False, width=10, note="H11: c(c-1)/200"),
        Column("outcome", "Outcome", is_input=False, width=9),
        Column("casualties", "Casualties %", kind="int", is_input=False, width=10),
        Column("result", "Result", is_input=False, width=60),
        Column("roll_source", "Roll source", is_input=False, width=8, hidden=True,
               note="Hidden: Rolled when sheetsync rolled the die in Roll; Undo clears those (H8)"),
    ), rows=cap["attacks"], title="Attacks"))

    # -- Map ------------------------------------------------------------------------------
    lay.add_area(Area("Map_Grid", "Map", 3, 2, 2 * cap["map_rows"] + 1, cap["map_columns"],
                      title="The map (H2): each hex shows its id and its units",
                      cell_width=MAP_CELL_WIDTH, cell_height=MAP_CELL_HEIGHT,
                      outlines=tuple((*map_cell(c, r), 2, 1) for c in range(1, cap["map_columns"] + 1)
                                     for r in range(1, cap["map_rows"] + 1))))

    # -- Log, Report, House Rules, hidden ---------------------------------------------------
    lay.add(Block("Log_Table", "Log", 1, (
        Column("turn", "Turn", kind="int", is_input=False, width=6),
        Column("order", "Order", kind="int", is_input=False, width=7),
        Column("kind", "Kind", is_input=False, width=9),
        Column("unit", "Unit", is_input=False, width=22),
        Column("target", "Target", is_input=False, width=22),
        Column("outcome", "Outcome", is_input=False, width=9),
        Column("casualties", "Casualties %", kind="int", is_input=False, width=10),
        Column("roll", "Roll", is_input=False, width=10),
        Column("rule", "Rule", is_input=False, width=16),
        Column("details", "Details", is_input=False, width=80),
        Column("step", "Step", is_input=False, width=6, note="Written by sheetsync: the step that wrote the row"),
    ), rows=None, title="Log"))
    lay.add(Block("Report_Table", "Report", 2, (
        Column("side", "Side", is_input=False, width=14),
        Column("unit", "Unit", is_input=False, width=22),
        Column("casualties", "Casualties %", kind="int", is_input=False, width=11),
        Column("men_lost", "Men lost", kind="int", is_input=False, width=10),
        Column("destroyed", "Destroyed", kind="bool", is_input=False, width=10),
        Column("destroyed_turn", "Turn destroyed", kind="int", is_input=False, width=10),
        Column("destroyed_by", "Destroyed by", is_input=False, width=40),
    ), rows=cap["units"], title="Report (H12)"))
    lay.add(Block("HouseRules_Table", "House Rules", 2, (
        Column("key", "Key", is_input=False, width=24),
        Column("value", "Value", width=14, note="Yes or No, a number, or one of the values the Ruling names "
                                                 "(blank: the default)"),
        Column("default", "Default", is_input=False, width=12),
        Column("ruling", "Ruling", is_input=False, width=80),
    ), rows=len(HouseRules.model_fields), title="House Rules"))
    lay.add(Block("Lists_Table", "Lists", 1, tuple(Column(k, k, is_input=False) for k in LISTS), rows=20))
    lay.add(Block("State_Blob", "State", 1, (Column("json", "Battle state (JSON, in pieces)", is_input=False),),
                  rows=400, note="The battle: sheetsync reads and writes it."))
    # Issue 22.3: the undo records' columns (State!C:F, sheetsync.sheets.session.RECORDS_RANGE) are
    # laid out with a header, so the State sheet spans them wherever the tracker goes (a
    # Google Sheet made from this .xlsx is no narrower than its used range: a Resolve's
    # record would fall outside a two-column State and the step would stand half-applied).
    lay.add(Block("State_Records", "State", 1, (
        Column("rev", "Rev", kind="int", is_input=False), Column("step", "Step", is_input=False),
        Column("json", "Undo record (JSON)", is_input=False), Column("mark", "Undone", is_input=False),
    ), rows=None, first_col=3, note="Undo records: one a resolved turn; sheetsync marks the undone ones."))

    lay.colours.append(Colours("Moves_Table.outcome", OUTCOME_COLOURS))
    lay.colours.append(Colours("Attacks_Table.outcome", OUTCOME_COLOURS))
    lay.colours.append(Colours("Log_Table.outcome", OUTCOME_COLOURS))
    _side_colours(lay)
    lay.names.update({"Unit_Names": "Units_Table.name", "Side_Names": "Battle_Sides.side"})
    add_formulas(lay)
    _printing(lay, cap)
    return lay


def _printing(lay: Layout, cap: Mapping[str, int]) -> None:
    """Issue 22: each table prints with its header row on every page, fitted across
    (:func:`~sheetsync.core.layout.table_printing`); the Battle sheet landscape, one page
    wide; the Map whole on one page, turned the way the map is longer (a hex is a column
    about 82 points wide and two rows of :data:`MAP_CELL_HEIGHT`)."""
    lay.printing["Battle"] = PrintSetup(margins=PRINT_MARGINS, grid_lines=False)
    for sheet, block in (("Units", "Units_Table"), ("Moves", "Moves_Table"), ("Attacks", "Attacks_Table"),
                         ("Log", "Log_Table"), ("Report", "Report_Table"), ("House Rules", "HouseRules_Table")):
        lay.printing[sheet] = table_printing(lay.block(block))
    wide = cap["map_columns"] * MAP_CELL_WIDTH * 5.5 > (2 * cap["map_rows"] + 3) * MAP_CELL_HEIGHT
    lay.printing["Map"] = PrintSetup(landscape=wide, pages_wide=1, pages_tall=1, margins=PRINT_MARGINS,
                                     grid_lines=False)


def _side_colours(lay: Layout) -> None:
    """H1, H2: each side's fill, by the side names the Battle sheet's Sides rows hold (in
    the order their first unit is listed): the Units and Sides side cells that name it, and
    the map cells that list a unit of it ("Name (Side)").  Impassable hexes are dark grey.
    A colour key starting with ``=`` is an expression (the drawers compare the cell with it)."""
    sides = lay.block("Battle_Sides")
    refs = [f"{sides.sheet}!${sides.letter('side')}${sides.first_row + i}" for i in range(sides.rows or 0)]
    exact = {f"={ref}": SIDE_COLOURS[i % len(SIDE_COLOURS)] for i, ref in enumerate(refs)}
    lay.colours.append(Colours("Units_Table.side", exact))
    lay.colours.append(Colours("Battle_Sides.side", exact))
    lay.colours.append(Colours("Map_Grid", {"impassable": IMPASSABLE_COLOUR}, contains=True))
    lay.colours.append(Colours("Map_Grid", {f'="(" & {ref} & ")"': SIDE_COLOURS[i % len(SIDE_COLOURS)]
                                            for i, ref in enumerate(refs)}, contains=True))
