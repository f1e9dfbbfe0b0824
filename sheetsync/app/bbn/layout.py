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
from sheetsync.rules.bbn.catalog import Catalog, default_catalog
from sheetsync.rules.bbn.models import Band, Benefit, HouseRules, Moment, PoolName, State, Task

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
class Layout:
    """Every sheet, block and named cell of the tracker."""

    catalog: Catalog
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
        Column("cohort", "Cohort", choices="=Cohort_Names", width=18),
        Column("name", "Character", width=18),
        Column("temper", "Temper", kind="int", low=0, high=50, note="Blood/Rage committed (R8 caps at 30, or 50 in-clan)"),
        Column("willpower_spent", "Willpower Spent", kind="int", low=0, high=20),
        Column("ranged_attack", "Ranged Attack", kind="bool", choices="YesNo"),
        Column("blood_magic_in_clan", "Blood Magic In-Clan", kind="bool", choices="YesNo"),
        Column("movement_discipline", "Movement Pick", width=14, note="Optional: the movement Discipline used (R10)"),
        Column("health_levels", "Health Levels", kind="int", low=1, high=20, note="Default 7 (R27)"),
        *(Column("ability:" + a, a, kind="int", low=0, high=10, width=9) for a in lay.ability_columns),
        *(Column("merit:" + m, m, kind="bool", choices="YesNo", width=9) for m in lay.merit_columns),
        *(Column("discipline:" + d, d, kind="int", low=0, high=10, width=9) for d in lay.discipline_columns),
        Column("offensive_paths", "Offensive Paths", width=24, note="e.g. Lure of Flames 3; Hands of Destruction 2 (R6)"),
        Column("combinations", "Combination Disciplines", width=30, note="e.g. Armor of Caine's Fury: Fortitude + Potence (R5)"),
        Column("other_traits", "Other Traits", width=24, note="Kept, listed as not counted (R12): Name 3; Merit"),
        Column("aegis", "Aegis Burned", kind="int", low=0, high=3, note="Aftermath (R27)"),
        Column("lasting_roll", "Aftermath Roll", kind="int", low=1, high=10, note="Typed lasting-effect d10 (R28)"),
    ]
    lay.add(Block("Characters_Table", "Characters", 2, tuple(char_cols), rows=characters, title="Characters"))

    # -- Cohorts ----------------------------------------------------------------------------
    pool_keys = [p.value for p in PoolName]
    lay.add(Block("Cohorts_Setup", "Cohorts", 2, (
        Column("name", "Cohort", width=20),
        Column("side", "Side", width=12, note="Cohorts on different sides are enemies"),
        Column("support", "Support", kind="bool", choices="YesNo", width=9),
        Column("sergeant", "Sergeant", choices="=Character_Names", width=14),
        Column("tracker", "Tracker", width=12),
        Column("reporter", "Reporter", width=12),
        *(Column("set:" + p, f"Set {p.title()}", kind="int", low=0, high=999, width=9,
                 note="NPC cohorts: a pool set by hand (R1)") for p in pool_keys),
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
        Column("cohort", "Cohort", choices="=Cohort_Names", width=18),
        Column("task", "Task", choices="Tasks", width=16),
        Column("target", "Target", choices="=Cohort_Names", width=18),
        Column("member", "Member", choices="=Character_Names", width=14),
        Column("moment", "Moment", choices="Moments", width=15),
        Column("pool", "Pool", choices="Pools", width=10),
        Column("benefit", "Benefit", choices="Benefits", width=14),
        Column("ally", "Ally", choices="=Cohort_Names", width=14, note="Member to save or rescue, or the friendly cohort"),
        Column("free_task", "Free Task", choices="FreeTasks", width=10),
        Column("temper", "Temper", kind="int", low=1, high=10, width=8),
        Column("text", "Text", width=24, note="Tactical Task or Custom Hero Moment"),
        Column("roll", "Roll", kind="int", low=1, high=10, width=6, note="Blank: sheetsync rolls (R25)"),
        Column("reroll", "Reroll", width=7,
               note="Spend an Inspire reroll token: the d10 you rerolled, or Yes to let sheetsync roll it (R25)"),
        Column("picks", "Picks", width=8, note="Typed dice for random picks, e.g. 2 3"),
        Column("odds", "Odds", kind="percent", is_input=False, width=8, note="Chance to succeed before bonuses (R14)"),
        Column("outcome", "Outcome", is_input=False, width=9),
        Column("damage", "Damage", kind="int", is_input=False, width=8),
        Column("result", "Result", is_input=False, width=60),
        Column("roll_source", "Roll source", is_input=False, width=8,
               note="Hidden: Rolled when sheetsync rolled the die in Roll; Undo clears those (R25)"),
    ), rows=cap["orders"], title="Orders"))

    # -- Ranges, Log, Aftermath, House Rules ------------------------------------------------
    lay.add(Block("Ranges_Table", "Ranges", 2, (
        Column("a", "Cohort", choices="=Cohort_Names", width=20),
        Column("b", "Cohort", choices="=Cohort_Names", width=20),
        Column("band", "Band", choices="Bands", width=12),
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
        Column("key", "Key", is_input=False, width=22),
        Column("value", "Value", width=16),
        Column("default", "Default", is_input=False, width=14),
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
    return lay


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
    from sheetsync.errors import Problem, SheetFormatError

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
    """The capacity as ``State!B2`` holds it (as :func:`sheetsync.app.steps.mark_updates` writes it)."""
    return json.dumps(dict(capacity), sort_keys=True, separators=(",", ":"))


def capacity_for(battle: Any) -> dict[str, int]:
    """The capacity of a tracker made from ``battle`` (``new --from``, ``load_battle_into``,
    ``gsheet upload``): room for everything the battle holds and half as much again
    (:data:`HEADROOM`), at least a blank tracker's, at most :data:`MAX_CAPACITY` (a battle
    beyond that is refused by :func:`sheetsync.app.bbn.reader.check_fits`, naming the limit).

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
    return _build(Catalog.model_validate_json(catalog_json), dict(cap))


def layout(catalog: Catalog | None = None, capacity: Mapping[str, Any] | None = None) -> Layout:
    """The layout for ``catalog`` (the shipped one by default) with room for ``capacity``
    (a blank tracker's, :data:`CAPACITY`, by default; see :func:`tracker_capacity`)."""
    cap = tracker_capacity(capacity)
    return _cached((catalog or default_catalog()).model_dump_json(), tuple(sorted(cap.items())))
