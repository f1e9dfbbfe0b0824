"""The one map of where everything lives in a tracker (workbook or Google Sheet).

The template builder (openpyxl), the Google Sheets initializer, the reader and the writer
all take their sheet names, blocks, columns and defined names from here, so the same
battle lands in the same cells on every backend.  ``docs/LAYOUT.md`` is generated from it.

Issue 9, capacity: a blank tracker holds :data:`CAPACITY` (24 cohorts, 120 characters, 400
orders, 200 ranges, 40 phases); a tracker made from a battle is laid out with room for it
(:func:`capacity_for`), up to :data:`MAX_CAPACITY`.  The capacity is recorded in
``State!B2`` beside the mark, and every step lays the tracker out with it, so a row is
never read from, or written to, the wrong place; nothing past the blocks is dropped (the
reader refuses it, naming the limit).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sheetsync.core.layout import Block, Cell, Column
from sheetsync.core.layout import Layout as CoreLayout
from sheetsync.systems.bbn.rules.catalog import Catalog, default_catalog
from sheetsync.systems.bbn.rules.models import (
    Band,
    Benefit,
    HouseRules,
    Moment,
    PoolName,
    State,
    Task,
)
from sheetsync.systems.bbn.tracker import codecs as bc

__all__ = ["CAPACITY", "LISTS", "MAX_CAPACITY", "MAX_COHORTS", "Block", "Column", "Layout", "capacity_for",
           "capacity_json", "layout", "tracker_capacity"]

MAX_COHORTS = 24
MAX_CHARACTERS = 120
ORDER_ROWS = 400
RANGE_ROWS = 200
LOG_ROWS = 4000
BREAKDOWN_ROWS = 900
HISTORY_PHASES = 40
"""A blank tracker's room (the names are kept for the tests and scripts that use them):
:data:`CAPACITY` below.  A tracker made from a battle is laid out with more."""

CAPACITY: dict[str, int] = {"cohorts": MAX_COHORTS, "characters": MAX_CHARACTERS, "orders": ORDER_ROWS,
                            "ranges": RANGE_ROWS, "phases": HISTORY_PHASES}
"""A blank tracker's capacity (``sheetsync template``): the rows of its Cohorts, Characters,
Orders and Ranges blocks, and the resolved phases its Health-by-phase table holds."""

MAX_CAPACITY: dict[str, int] = {"cohorts": 120, "characters": 600, "orders": 4000, "ranges": 8000,
                                "phases": HISTORY_PHASES}
"""The most a battalion tracker is made to hold: a battle beyond it is refused, naming the
limit.  Phases stay at 40: the State journal checks a phase against that number."""

HEADROOM = 1.5
"""A tracker made from a battle gets half as many rows again as the battle fills, so cohorts,
characters and ranges can still be added by hand."""

# The "Who gave what" table keeps BREAKDOWN_ROWS rows for MAX_CHARACTERS characters (7.5 a
# character; one gives 5 to 7 lines) as the characters grow; a longer one ends with a note.
STATE_CHUNKS = 400
STATE_CHUNK_CHARS = 30000

LISTS: dict[str, list[str]] = {
    "Tasks": [t.value for t in Task],
    "Moments": [m.value for m in Moment],
    "Pools": [p.value for p in PoolName],
    "Benefits": [b.value for b in Benefit],
    "Bands": [b.value for b in Band],
    "States": [s.value for s in State],
    "FreeTasks": ["Heal", "Rescue"],
    "YesNo": ["Yes", "No"],
}


@dataclass
class Layout(CoreLayout):
    """Every sheet, block and named cell of the tracker, and its decorations as data (a
    :class:`sheetsync.core.layout.Layout`, drawn by the generic template and initializer)."""

    catalog: Catalog = field(kw_only=True)
    sheets: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    blocks: dict[str, Block] = field(default_factory=dict)
    cells: dict[str, Cell] = field(default_factory=dict)
    ability_columns: tuple[str, ...] = ()
    merit_columns: tuple[str, ...] = ()
    discipline_columns: tuple[str, ...] = ()
    capacity: dict[str, int] = field(default_factory=lambda: dict(CAPACITY))
    """What the tracker holds (see :data:`CAPACITY`), recorded beside its mark in ``State!B2``."""
    log_rows: int = LOG_ROWS
    """How far down the Log is formatted (it is appended to, never cut: rows past this are
    written all the same, only unformatted)."""

    def block(self, name: str) -> Block:
        return self.blocks[name]

    def add(self, block: Block) -> None:
        self.blocks[block.name] = block

    def add_cell(self, cell: Cell) -> None:
        self.cells[cell.name] = cell


def _unique(items: list[str]) -> tuple[str, ...]:
    seen: list[str] = []
    for i in items:
        if i not in seen:
            seen.append(i)
    return tuple(seen)


def _build(catalog: Catalog, cap: dict[str, int]) -> Layout:
    """The tracker's blocks, each as long as ``cap`` says; the blocks below a longer one
    move down with it (the Pools under the Setup, the Roster under the Pools, the Health
    table under the Battle summary)."""
    cohorts, characters, phases = cap["cohorts"], cap["characters"], cap["phases"]
    lay = Layout(catalog=catalog, capacity=dict(cap),
                 log_rows=max(LOG_ROWS, 2 * (cap["orders"] + cohorts * phases)))
    lay.sheets = ["Battle", "Orders", "Cohorts", "Characters", "Ranges", "Log", "Aftermath", "House Rules", "Lists", "State"]
    lay.hidden = ["Lists", "State"]

    # -- Battle (the dashboard) -----------------------------------------------------------
    lay.add_cell(Cell("Battle_Phase", "Battle", "B3", "Phase to resolve"))
    lay.add_cell(Cell("Battle_Status", "Battle", "B4", "Status"))
    lay.add_cell(Cell("Battle_LastAction", "Battle", "B5", "Last action"))
    lay.add_cell(Cell("Battle_Seed", "Battle", "B6", "Dice seed", is_input=True,
                      note="Dice not typed in are rolled from this seed and the phase number (R25)."))
    lay.add(Block("Battle_Buttons", "Battle", 2, (
        Column("action", "Action", is_input=False, width=16),
        Column("tick", "Tick to run", kind="bool", width=12),
    ), rows=4, first_col=5, title="Google Sheets only: tick while `sheetsync watch` runs",
        note="Google Sheets only: tick a box while `sheetsync watch` runs (Excel: use the buttons of a .xlsm, or the CLI)."))
    lay.add(Block("Battle_Summary", "Battle", 9, (
        Column("cohort", "Cohort", is_input=False, width=20),
        Column("side", "Side", is_input=False),
        Column("health", "Health", kind="int", is_input=False),
        Column("max_health", "Max Health", kind="int", is_input=False),
        Column("temper", "Temper", kind="int", is_input=False),
        Column("control", "Control", kind="int", is_input=False),
        Column("actions", "Actions", kind="int", is_input=False),
        Column("active", "Active", kind="int", is_input=False, width=8),
        Column("scared", "Scared", kind="int", is_input=False, width=8),
        Column("knocked_out", "Knocked Out", kind="int", is_input=False, width=8),
        Column("stabilized", "Stabilized", kind="int", is_input=False, width=8),
        Column("dead", "Dead", kind="int", is_input=False, width=8),
        Column("members", "Members by state", is_input=False, width=36),
    ), rows=cohorts, title="Cohorts"))
    lay.add(Block("Battle_HealthByPhase", "Battle", 9 + cohorts + 4, (
        Column("phase", "Phase", kind="int", is_input=False, width=8),
        *(Column(f"c{i}", f"Cohort {i + 1}", kind="int", is_input=False) for i in range(cohorts)),
    ), rows=phases + 1, title="Health by phase"))

    # -- Characters (input) ---------------------------------------------------------------
    abilities: list[str] = []
    merits: list[str] = []
    disciplines: list[str] = []
    for mods in catalog.pools.values():
        abilities += list(mods.abilities)
        merits += list(mods.merits) + [m for g in mods.exclusive_merits for m in g]
        disciplines += list(mods.disciplines) + [d for g in mods.exclusive_disciplines for d in g]
    lay.ability_columns = _unique(abilities)
    lay.merit_columns = _unique(merits)
    lay.discipline_columns = _unique(disciplines)
    char_cols: list[Column] = [
        Column("cohort", "Cohort", choices="=Cohort_Names", width=18, codec_=bc.Text("cohort")),
        Column("name", "Character", width=18, codec_=bc.Text("character"),
               note="A name, unique among the characters (Cohorts and Orders use it)"),
        Column("temper", "Temper", kind="int", low=0, high=50, note="Blood/Rage committed (R8 caps at 30, or 50 in-clan)",
               codec_=bc.Whole(0, 50, label="temper")),
        Column("willpower_spent", "Willpower Spent", kind="int", low=0, high=20,
               codec_=bc.Whole(0, 20, label="willpower spent")),
        Column("ranged_attack", "Ranged Attack", kind="bool", choices="YesNo", codec_=bc.YesNo("ranged attack")),
        Column("blood_magic_in_clan", "Blood Magic In-Clan", kind="bool", choices="YesNo",
               codec_=bc.YesNo("blood magic in-clan")),
        Column("movement_discipline", "Movement Pick", width=14, note="Optional: the movement Discipline used (R10)",
               codec_=bc.Text("movement pick")),
        Column("health_levels", "Health Levels", kind="int", low=1, high=20, note="Default 7 (R27)",
               codec_=bc.Whole(1, 20, label="health levels")),
        *(Column("ability:" + a, a, kind="int", low=0, high=10, width=9, codec_=bc.Whole(0, 10, label=a.lower()))
          for a in lay.ability_columns),
        *(Column("merit:" + m, m, kind="bool", choices="YesNo", width=9, codec_=bc.YesNo(m.lower()))
          for m in lay.merit_columns),
        *(Column("discipline:" + d, d, kind="int", low=0, high=10, width=9, codec_=bc.Whole(0, 10, label=d.lower()))
          for d in lay.discipline_columns),
        Column("offensive_paths", "Offensive Paths", width=24, note="e.g. Lure of Flames 3; Hands of Destruction 2 (R6)",
               codec_=bc.Paths("offensive paths")),
        Column("combinations", "Combination Disciplines", width=30, note="e.g. Armor of Caine's Fury: Fortitude + Potence (R5)",
               codec_=bc.Combinations("combination disciplines")),
        Column("other_traits", "Other Traits", width=24, note="Kept, listed as not counted (R12): Name 3; Merit",
               codec_=bc.OtherTraits("other traits")),
        Column("aegis", "Aegis Burned", kind="int", low=0, high=3, note="Aftermath (R27)",
               codec_=bc.Whole(0, 3, label="aegis burned")),
        Column("lasting_roll", "Aftermath Roll", kind="int", low=1, high=10, note="Typed lasting-effect d10 (R28)",
               codec_=bc.Whole(1, 10, label="aftermath roll")),
    ]
    lay.add(Block("Characters_Table", "Characters", 2, tuple(char_cols), rows=characters, title="Characters"))

    # -- Cohorts ----------------------------------------------------------------------------
    pool_keys = [p.value for p in PoolName]
    lay.add(Block("Cohorts_Setup", "Cohorts", 2, (
        Column("name", "Cohort", width=20, codec_=bc.Text("cohort"),
               note="A name, unique among the cohorts (Orders use it)"),
        Column("side", "Side", width=12, note="A side's name, e.g. players: cohorts on different sides are enemies",
               codec_=bc.Text("side")),
        Column("support", "Support", kind="bool", choices="YesNo", width=9, codec_=bc.YesNo("support")),
        Column("sergeant", "Sergeant", choices="=Character_Names", width=14, codec_=bc.Text("sergeant")),
        Column("tracker", "Tracker", width=12, codec_=bc.Text("tracker"),
               note="The player who types this cohort's orders: a name (free text)"),
        Column("reporter", "Reporter", width=12, codec_=bc.Text("reporter"),
               note="The player who reports this cohort's results: a name (free text)"),
        *(Column("set:" + p, f"Set {p.title()}", kind="int", low=0, high=999, width=9,
                 note="NPC cohorts: a pool set by hand (R1)", codec_=bc.Whole(0, 999, label=f"set {p}"))
          for p in pool_keys),
    ), rows=cohorts, title="Setup (type here)"))
    pools_row = 2 + cohorts + 3
    lay.add(Block("Cohorts_Pools", "Cohorts", pools_row, (
        Column("name", "Cohort", is_input=False, width=20),
        Column("max_health", "Max Health", kind="int", is_input=False, width=9),
        Column("health", "Health", kind="int", is_input=False, width=9),
        Column("melee", "Melee", kind="int", is_input=False, width=9),
        Column("ranged", "Ranged", kind="int", is_input=False, width=9),
        Column("mystical", "Mystical", kind="int", is_input=False, width=9),
        Column("defense", "Defense", kind="int", is_input=False, width=9),
        Column("max_temper", "Max Temper", kind="int", is_input=False, width=9),
        Column("temper", "Temper", kind="int", is_input=False, width=9),
        Column("movement", "Movement", kind="int", is_input=False, width=9),
        Column("resolve", "Resolve", kind="int", is_input=False, width=9),
        Column("max_control", "Max Control", kind="int", is_input=False, width=9),
        Column("control", "Control", kind="int", is_input=False, width=9),
        Column("actions", "Actions", kind="int", is_input=False, width=9),
        Column("reroll_tokens", "Reroll Tokens", kind="int", is_input=False, width=9),
        Column("units_moved", "Units Moved", kind="int", is_input=False, width=9),
    ), rows=cohorts, title="Pools and standing (computed)"))
    roster_row = pools_row + cohorts + 3
    lay.add(Block("Cohorts_Roster", "Cohorts", roster_row, (
        Column("cohort", "Cohort", is_input=False, width=20),
        Column("member", "Member", is_input=False, width=16),
        Column("role", "Role", is_input=False, width=10),
        Column("state", "State", is_input=False, width=12),
        Column("hero", "Hero Moment Used", kind="bool", is_input=False, width=10),
    ), rows=characters, title="Roster (computed)"))
    lay.add(Block("Cohorts_Breakdown", "Cohorts", roster_row, (
        Column("cohort", "Cohort", is_input=False, width=18),
        Column("pool", "Pool", is_input=False, width=10),
        Column("member", "From", is_input=False, width=14),
        Column("trait", "Trait", is_input=False, width=22),
        Column("amount", "+", kind="int", is_input=False, width=6),
        Column("rule", "Rule", is_input=False, width=22),
        Column("detail", "Detail", is_input=False, width=40),
    ), rows=BREAKDOWN_ROWS * characters // MAX_CHARACTERS, first_col=8, title="Who gave what (computed)"))

    # -- Orders ------------------------------------------------------------------------------
    lay.add(Block("Orders_Table", "Orders", 3, (
        Column("phase", "Phase", kind="int", is_input=False, width=7, note="Stamped when resolved; blank = pending"),
        Column("cohort", "Cohort", choices="=Cohort_Names", width=18, codec_=bc.Text("cohort")),
        Column("task", "Task", choices="Tasks", width=16, codec_=bc.Text("task")),
        Column("target", "Target", choices="=Cohort_Names", width=18, codec_=bc.Text("target")),
        Column("member", "Member", choices="=Character_Names", width=14, codec_=bc.Text("member")),
        Column("moment", "Moment", choices="Moments", width=15, codec_=bc.Text("moment")),
        Column("pool", "Pool", choices="Pools", width=10, codec_=bc.Text("pool")),
        Column("benefit", "Benefit", choices="Benefits", width=14, codec_=bc.Text("benefit")),
        Column("ally", "Ally", choices="=Cohort_Names", width=14, note="Member to save or rescue, or the friendly cohort",
               codec_=bc.Text("ally")),
        Column("free_task", "Free Task", choices="FreeTasks", width=10, codec_=bc.Text("free task")),
        Column("temper", "Temper", kind="int", low=1, high=10, width=8, codec_=bc.Whole(1, 10, label="temper")),
        Column("text", "Text", width=24, note="Tactical Task or Custom Hero Moment", codec_=bc.Text("text")),
        Column("roll", "Roll", kind="int", low=1, high=10, width=6, note="Blank: sheetsync rolls (R25)",
               codec_=bc.Whole(1, 10, label="roll")),
        Column("reroll", "Reroll", width=7,
               note="Spend an Inspire reroll token: the d10 you rerolled, or Yes to let sheetsync roll it (R25)",
               codec_=bc.Reroll("reroll")),
        Column("picks", "Picks", width=8, note="Typed dice for random picks, e.g. 2 3", codec_=bc.Picks("picks")),
        Column("odds", "Odds", kind="percent", is_input=False, width=8, note="Chance to succeed before bonuses (R14)"),
        Column("outcome", "Outcome", is_input=False, width=9),
        Column("damage", "Damage", kind="int", is_input=False, width=8),
        Column("result", "Result", is_input=False, width=60),
        Column("roll_source", "Roll source", is_input=False, width=8,
               note="Hidden: Rolled when sheetsync rolled the die in Roll; Undo clears those (R25)"),
    ), rows=cap["orders"], title="Orders"))

    # -- Ranges, Log, Aftermath, House Rules ------------------------------------------------
    lay.add(Block("Ranges_Table", "Ranges", 2, (
        Column("a", "Cohort", choices="=Cohort_Names", width=20, codec_=bc.Text("cohort")),
        Column("b", "Other cohort", choices="=Cohort_Names", width=20, codec_=bc.Text("other cohort")),
        Column("band", "Band", choices="Bands", width=12, codec_=bc.Text("band")),
    ), rows=cap["ranges"], title="Ranges"))
    lay.add(Block("Log_Table", "Log", 1, (
        Column("phase", "Phase", kind="int", is_input=False, width=7),
        Column("order", "Order", kind="int", is_input=False, width=7),
        Column("cohort", "Cohort", is_input=False, width=18),
        Column("task", "Task", is_input=False, width=16),
        Column("target", "Target", is_input=False, width=18),
        Column("outcome", "Outcome", is_input=False, width=9),
        Column("damage", "Damage", kind="int", is_input=False, width=8),
        Column("rolls", "Rolls", is_input=False, width=24),
        Column("rule", "Rule", is_input=False, width=20),
        Column("details", "Details", is_input=False, width=80),
        Column("step", "Step", is_input=False, width=6,
               note="Written by sheetsync: the step that wrote the row (revision:id:action:phase:row), checked "
                    "against the State on every step; ' lost' marks a step overwritten by one run at the same "
                    "moment, ' duplicate' a row written twice by the same step"),
    ), rows=None, title="Log"))
    lay.add(Block("Aftermath_Table", "Aftermath", 2, (
        Column("cohort", "Cohort", is_input=False, width=18),
        Column("name", "Character", is_input=False, width=16),
        Column("dead", "Dead", kind="bool", is_input=False, width=7),
        Column("damage", "Damage", kind="int", is_input=False, width=8),
        Column("aggravated", "Aggravated", kind="int", is_input=False, width=10),
        Column("lethal", "Lethal", kind="int", is_input=False, width=8),
        Column("aegis", "Aegis", kind="int", is_input=False, width=7),
        Column("torpor", "Torpor", kind="bool", is_input=False, width=8),
        Column("lasting", "Lasting Effect", is_input=False, width=50),
        Column("temper_returned", "Temper Returned", kind="int", is_input=False, width=10),
    ), rows=characters, title="Aftermath"))
    lay.add(Block("HouseRules_Table", "House Rules", 2, (
        Column("key", "Key", is_input=False, width=22, codec_=bc.Text("key")),
        # read by each rule's type: bc.for_annotation
        Column("value", "Value", width=16, codec_=bc.Text("value"),
               note="Yes or No, a number, or one of the values the rule names (blank: the default)"),
        Column("default", "Default", is_input=False, width=14, codec_=bc.Text("default")),
        Column("ruling", "Ruling", is_input=False, width=70),
    ), rows=len(HouseRules.model_fields), title="House Rules"))
    # -- hidden --------------------------------------------------------------------------------
    lay.add(Block("Lists_Table", "Lists", 1, tuple(Column(k, k, is_input=False) for k in LISTS), rows=20))
    lay.add(Block("State_Blob", "State", 1, (Column("json", "Battle state (JSON, in pieces)", is_input=False),),
                  rows=STATE_CHUNKS, note="The whole battle, undo history included: sheetsync reads and writes it."))
    lay.add(Block("State_History", "State", 1, (  # issue 9: one undo record a resolved phase
        Column("rev", "Rev", kind="int", is_input=False), Column("step", "Step", is_input=False),
        Column("json", "Undo record (JSON)", is_input=False), Column("mark", "Undone", is_input=False),
    ), rows=None, first_col=3, note="Undo records: one a resolved phase, each below the last; sheetsync marks the undone ones."))
    _decorate(lay)
    return lay


# -- decorations as data (issue 9: drawn by sheets/draw.py and backends/gsheets_draw.py) ---

STATE_COLOURS = {"Active": "C6EFCE", "Scared": "FFEB9C", "Knocked Out": "FFC7CE", "Stabilized": "BDD7EE", "Dead": "808080"}
OUTCOME_COLOURS = {"hit": "C6EFCE", "miss": "FFEB9C", "refused": "FFC7CE", "done": "DDEBF7"}
ROLLED_FONT = "1F5FAF"
"""Roll cells holding a die sheetsync rolled: blue italics on pale blue (typed dice stay black/grey)."""
ROLLED_FILL = "DDEBF7"
UNDONE_FONT = "9C9C9C"
"""Log rows of an undone phase: grey, struck through."""
RESOLVED_FONT = "808080"
"""Orders rows already resolved (stamped with their phase): grey italics."""
MERGED = {"Battle": ("B4:D4", "B5:D5")}
"""Merged cells per sheet: the Battle status and last action get room to wrap."""
FROZEN: dict[str, tuple[int, int]] = {
    "Battle": (2, 0), "Characters": (2, 2), "Cohorts": (2, 1), "Orders": (3, 3), "Ranges": (2, 0), "Log": (1, 0),
    "Aftermath": (2, 0), "House Rules": (2, 0),
}
"""Frozen (rows, columns) per sheet: headers stay in view."""
PROTECTED_SHEETS = ("Battle", "Characters", "Cohorts", "Orders", "Ranges", "Log", "Aftermath", "House Rules")
BUTTON_LABELS = ("Build Cohorts", "Resolve Phase", "Undo Phase", "End Battle")
PRINT_TITLES: dict[str, str] = {"Orders": "Orders_Table", "Characters": "Characters_Table", "Ranges": "Ranges_Table",
                                "Log": "Log_Table", "Aftermath": "Aftermath_Table", "House Rules": "HouseRules_Table"}
"""The block whose header row repeats on every printed page of a sheet."""
PORTRAIT = ("Ranges",)
PAGES_WIDE = {"Characters": (3, "A:B")}
"""Sheets too wide for one legible page: pages across, and the columns repeated on each."""
CHART_COHORTS = 4
"""The cohorts a blank tracker's Health chart draws (and keeps room for under the cohort lines)."""


def rolled_formula(lay: Layout) -> str:
    """The conditional-format test (relative to the first Orders row) for a Roll cell that
    holds a die sheetsync rolled (R25): the hidden Roll source column says Rolled."""
    o = lay.block("Orders_Table")
    return f'${o.letter("roll_source")}{o.first_row}="Rolled"'


def log_undone_formula(lay: Layout, row: int | None = None) -> str:
    """The conditional-format test (relative to the first Log row, or to ``row``) for a Log
    row whose phase was undone later: an "Undo Phase" row of the same phase sits below it."""
    b = lay.block("Log_Table")
    ph, task, r = b.letter("phase"), b.letter("task"), row or b.first_row
    end = r + lay.log_rows
    return (f'AND(${task}{r}<>"Undo Phase",${ph}{r}<>"",'
            f'COUNTIFS(${task}{r + 1}:${task}${end},"Undo Phase",${ph}{r + 1}:${ph}${end},${ph}{r})>0)')


def chart_anchor(lay: CoreLayout, cohorts: int) -> str:
    """Where the Health chart sits: one row under the last cohort line of the Battle
    summary, at column A, so it shows next to the numbers it draws without scrolling on a
    laptop screen (a blank tracker keeps room for four cohorts)."""
    summary = lay.block("Battle_Summary")
    return f"A{summary.first_row + max(1, cohorts) + 1}"


def _chart_series(lay: CoreLayout) -> int:
    return min(CHART_COHORTS, len(lay.block("Battle_HealthByPhase").columns) - 1)


def _chart_title_once(lay: CoreLayout, shown: int) -> str:
    """A Google Sheet's chart is drawn once, over the first cohorts: its title says so."""
    hist = lay.block("Battle_HealthByPhase")
    return (f"Health by phase: the first {shown} cohorts (every cohort's Health is in the table at "
            f"A{hist.header_row})")


def house_choices(key: str) -> list[str]:
    """The House Rules dropdown of one key."""
    _text, default, choices = HouseRules.describe()[key]
    if isinstance(default, bool):
        return ["Yes", "No"]
    return [str(c) for c in choices]


def _odds(lay: CoreLayout, row: int) -> str:
    from sheetsync.systems.bbn.tracker.writer import odds_formula

    assert isinstance(lay, Layout)
    return odds_formula(lay, row).text


def _decorate(lay: Layout) -> None:
    """The battalion tracker's decorations, as data: state and outcome colours, the rolled
    dice (R25), resolved Orders rows and undone Log rows, the Health bar and chart, merges,
    row heights, frozen panes, print setup, the fixed cells, the buttons' checkboxes, the
    House Rules dropdowns and the protected sheets."""
    from dataclasses import replace

    from sheetsync.core.layout import (
        CellChoices,
        Chart,
        DataBar,
        Dropdowns,
        PrintSetup,
        Rule,
        Static,
    )
    from sheetsync.systems.bbn.system import SYSTEM

    lay.system, lay.version = SYSTEM.id, SYSTEM.version
    lay.open_rows = lay.log_rows
    lay.protected = list(PROTECTED_SHEETS)
    lay.lists = {k: list(v) for k, v in LISTS.items()}
    lay.names = {"Cohort_Names": "Cohorts_Setup.name", "Character_Names": "Characters_Table.name",
                 "Cohort_Pool_Names": "Cohorts_Pools.name"}
    lay.dropdowns = Dropdowns(list_errors="warning", name_errors="off", prompts=False)
    lay.formulas["Orders_Table.odds"] = _odds
    orders = lay.block("Orders_Table")
    lay.blocks["Orders_Table"] = replace(orders, columns=tuple(
        replace(c, hidden=True) if c.key == "roll_source" else c for c in orders.columns))

    def row_of(cell: str) -> int:
        return int("".join(ch for ch in lay.cells[cell].address if ch.isdigit()))

    lay.static += [
        Static("Battle", "A1", "sheetsync battle tracker", bold=True, size=14),
        Static("Battle", "B3", 1),
        Static("Battle", "B4", "New: fill in Cohorts and Characters, then Build Cohorts"),
        Static("Orders", "A1", "Orders: one row per declared task, in the order they resolve. Blank Roll = sheetsync rolls.",
               bold=True),
        Static("State", "A1", "Battle state (JSON, in pieces). sheetsync reads and writes it; do not edit."),
    ]
    buttons = lay.block("Battle_Buttons")
    for i, label in enumerate(BUTTON_LABELS):
        lay.static.append(Static(buttons.sheet, f"{buttons.letter('action')}{buttons.first_row + i}", label))
    lay.checkboxes.append("Battle_Buttons.tick")
    house = lay.block("HouseRules_Table")
    for i, (key, (text, default, _choices)) in enumerate(HouseRules.describe().items()):
        shown = ("Yes" if default else "No") if isinstance(default, bool) else default
        for k, value in zip(("key", "value", "default", "ruling"), (key, shown, shown, text), strict=True):
            if isinstance(value, (str, int, float)) and value != "":
                lay.static.append(Static(house.sheet, f"{house.letter(k)}{house.first_row + i}", value))
        options = house_choices(key)
        if options:
            lay.choices_at.append(CellChoices(house.sheet, f"{house.letter('value')}{house.first_row + i}",
                                              tuple(options), f"{key}: one of {', '.join(options)}"))

    lay.bars.append(DataBar("Battle_Summary.health"))
    lay.rules.append(Rule("Battle_Summary.health", "0", "at_most", colour="C00000", bold=True))
    lay.rules += [Rule("Orders_Table.outcome", text, "equals", fill=colour) for text, colour in OUTCOME_COLOURS.items()]
    # the rolled die first: it wins over the resolved-row grey below (R25)
    lay.rules.append(Rule("Orders_Table.roll", rolled_formula(lay), fill=ROLLED_FILL, colour=ROLLED_FONT,
                          bold=True, italic=True))
    lay.rules.append(Rule("Orders_Table.phase:picks", f'${orders.letter("phase")}{orders.first_row}<>""',
                          colour=RESOLVED_FONT, italic=True))
    lay.rules.append(Rule("Log_Table", log_undone_formula(lay), colour=UNDONE_FONT, strike=True))
    lay.rules += [Rule("Cohorts_Roster.state", state, "equals", fill=colour, colour="FFFFFF" if state == "Dead" else None)
                  for state, colour in STATE_COLOURS.items()]
    lay.charts.append(Chart("Battle_HealthByPhase", "Health by phase", chart_anchor, x_title="Phase", y_title="Health",
                            series=_chart_series, fixed_title=_chart_title_once))

    lay.merges += [f"{sheet}!{rng}" for sheet, ranges in MERGED.items() for rng in ranges]
    lay.row_heights[("Battle", row_of("Battle_Status"))] = 30
    lay.row_heights[("Battle", row_of("Battle_LastAction"))] = 45
    lay.frozen.update(FROZEN)
    summary = lay.block("Battle_Summary")
    for sheet in PROTECTED_SHEETS:  # A4 or Letter, fitted to the page width, the header row on every page,
        # down to the rows in use (issue 22; the Battle dashboard prints whole, with its chart)
        title = lay.block(PRINT_TITLES[sheet]).header_row if sheet in PRINT_TITLES else None
        wide = PAGES_WIDE.get(sheet)
        area = None
        if sheet == "Battle":  # the dashboard (phase, status, cohort lines, chart) on one page
            area = f"A1:{summary.letter('members')}{summary.last_row}"
        elif sheet == "Orders":  # up to Result: its long texts must not widen the page
            area = f"A1:{orders.letter('result')}{orders.last_row}"
        lay.printing[sheet] = PrintSetup(
            landscape=sheet not in PORTRAIT, pages_wide=wide[0] if wide else 1, pages_tall=1 if sheet == "Battle" else 0,
            title_rows=f"{title}:{title}" if title else None, title_cols=wide[1] if wide else None, area=area,
            over_then_down=wide is not None, margins=(0.4, 0.4, 0.5, 0.5), grid_lines=False,
            rows_in_use=sheet != "Battle")


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def tracker_capacity(capacity: Mapping[str, Any] | None = None) -> dict[str, int]:
    """``capacity`` with today's defaults for the keys it lacks; a value never shrinks a
    block below a blank tracker's (:data:`CAPACITY`).  A value that is not a whole number,
    or past :data:`MAX_CAPACITY`, is a :class:`SheetFormatError` naming ``State!B2``, where
    a tracker records its capacity: a layout is never guessed."""
    from sheetsync.core.errors import Problem, SheetFormatError

    out = dict(CAPACITY)
    bad = []
    for key, value in (capacity or {}).items():
        if key not in out:
            continue  # another system's key, or one a newer sheetsync adds
        n = _whole(value)
        if n is None or n < 1 or n > MAX_CAPACITY[key]:
            bad.append(f"{key} {value!r} (1 to {MAX_CAPACITY[key]})")
            continue
        out[key] = max(out[key], n)
    if bad:
        raise SheetFormatError([Problem("State!B2", "the tracker's capacity says " + ", ".join(bad) + "; it is "
                                        "written by sheetsync: restore it or make a new tracker")])
    return out


def capacity_json(capacity: Mapping[str, int]) -> str:
    """The capacity as ``State!B2`` holds it (as :func:`sheetsync.sheets.marks.mark_updates` writes it)."""
    return json.dumps(dict(capacity), sort_keys=True, separators=(",", ":"))


def capacity_for(battle: Any) -> dict[str, int]:
    """The capacity of a tracker made from ``battle`` (``new --from``, ``load_battle_into``,
    ``gsheet upload``): room for everything the battle holds and half as much again
    (:data:`HEADROOM`), at least a blank tracker's, at most :data:`MAX_CAPACITY` (a battle
    beyond that is refused by :func:`sheetsync.systems.bbn.tracker.reader.check_fits`, naming the limit).

    Orders accumulate over the battle (every resolved row keeps its stamp), so a big battle
    gets 20 rows a cohort: two orders a cohort for ten phases."""
    cohorts = len(battle.cohorts)
    characters = sum(len(c.members) for c in battle.cohorts)
    want = {
        "cohorts": math.ceil(cohorts * HEADROOM),
        "characters": math.ceil(characters * HEADROOM),
        "ranges": max(math.ceil(len(battle.ranges) * HEADROOM), 5 * math.ceil(cohorts * HEADROOM)),
        "orders": max(math.ceil(len(battle.orders) * HEADROOM), 20 * math.ceil(cohorts * HEADROOM)),
        "phases": battle.phase - 1,
    }
    return {k: min(MAX_CAPACITY[k], max(CAPACITY[k], v)) for k, v in want.items()}


@lru_cache(maxsize=8)
def _cached(catalog_json: str, cap: tuple[tuple[str, int], ...]) -> Layout:
    return _build(Catalog.model_validate(json.loads(catalog_json)), dict(cap))


def layout(catalog: Catalog | None = None, capacity: Mapping[str, Any] | None = None) -> Layout:
    """The layout for ``catalog`` (the shipped one by default) with room for ``capacity``
    (a blank tracker's, :data:`CAPACITY`, by default; see :func:`tracker_capacity`)."""
    cap = tracker_capacity(capacity)
    return _cached((catalog or default_catalog()).model_dump_json(), tuple(sorted(cap.items())))
