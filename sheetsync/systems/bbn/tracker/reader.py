"""Cells to a battle: read the tracker's blocks, report every bad cell by its address.

The reader turns the sheets into the engine's battle-file dict while remembering which
cell each value came from; the engine's loader then checks it, and every problem it finds
is reported at its cell (``Orders!C7: task 'Melee' is not a task (expected one of ...)``).
Nothing is written when anything is wrong.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sheetsync.core.errors import (
    BattleStateError,
    InputError,
    Problem,
    SheetFormatError,
    did_you_mean,
)
from sheetsync.core.layout import Codec, Column
from sheetsync.core.recent import keep
from sheetsync.core.registry import MARK_CELL
from sheetsync.sheets import table
from sheetsync.sheets.backend import CellValue, Formula, Grid, quote_sheet
from sheetsync.systems.bbn.files.loader import load_battle, load_turn
from sheetsync.systems.bbn.rules import Battle, HouseRules
from sheetsync.systems.bbn.tracker.codecs import Seed, Text, for_annotation
from sheetsync.systems.bbn.tracker.codecs import short as _short
from sheetsync.systems.bbn.tracker.layout import (
    MAX_CAPACITY,
    Block,
    Layout,
    capacity_json,
    tracker_capacity,
)

__all__ = ["Sheets", "check_fits", "missing_ranges", "parse_battle_setup", "parse_turn", "read_plan"]

_OVERFLOW = {"characters": ("Characters_Table", "characters", "characters"),
             "setup": ("Cohorts_Setup", "cohorts", "cohorts"),
             "orders": ("Orders_Table", "orders", "orders"),
             "ranges": ("Ranges_Table", "ranges", "ranges")}
"""The input blocks, the capacity key of their number of rows, and what a row below them
would be (issue 8, item 6; issue 9: the rows are the tracker's capacity, ``State!B2``)."""

MARK_RANGE = f"{MARK_CELL[0]}!B1:B2"
"""The tracker's mark and capacity (:mod:`sheetsync.sheets.marks`), read with every step so
the blocks are cut at the tracker's own rows and a step laid out otherwise is refused."""


def _beyond(block: Block, lay: Layout) -> str:
    """A block's range read a little past its last row, so a value typed below it is seen
    and refused rather than dropped.  Blocks with nothing under them are read to the end of
    their sheet; the Cohorts setup only to the blank row above the Pools block."""
    if block.name == "Cohorts_Setup":
        return table.read_past(block, lay.block("Cohorts_Pools").header_row - 2)
    return table.read_past(block)


NOT_READ: dict[str, frozenset[str]] = {"resolve": frozenset({"characters"}), "undo": frozenset({"characters"})}
"""The :class:`Sheets` a step leaves out of its read (issue 12): a phase and its undo take
the cohorts from the State, never from the Characters sheet, which only a build and an end
read (and no step of these two writes it, so on Google Sheets its id is not needed)."""


def read_plan(lay: Layout, action: str | None = None) -> list[str]:
    """The ranges ``action`` reads, in one call (``None``: every range a use case may read;
    :data:`NOT_READ` says what a step leaves out)."""
    plan = _full_plan(lay)
    skip = NOT_READ.get(action or "", frozenset())
    return [rng for name, rng in zip(_PLAN_FIELDS, plan, strict=True) if name not in skip]


def _full_plan(lay: Layout) -> list[str]:
    return [
        lay.block("State_Blob").range(),
        _beyond(lay.block("Characters_Table"), lay),
        _beyond(lay.block("Cohorts_Setup"), lay),
        _beyond(lay.block("Orders_Table"), lay),
        _beyond(lay.block("Ranges_Table"), lay),
        lay.block("HouseRules_Table").range(),
        lay.cells["Battle_Seed"].ref,
        _log_steps(lay.block("Log_Table")),
        lay.block("Aftermath_Table").header_range(),
        MARK_RANGE,
        lay.block("State_History").range(),  # issue 9: the undo records, State!C2:F
    ]


def _log_steps(log: Block) -> str:
    """The Log's Step column (``rev:id`` of the step that wrote each row), to its end: a step
    checks it against the State's journal to find a step lost to a simultaneous one.  The
    Log's other columns are never read back; its rows are appended."""
    return f"{log.cell(0, 'step')}:{log.letter('step')}".replace(f"{log.sheet}!", f"{quote_sheet(log.sheet)}!", 1)


@dataclass
class Sheets:
    """The grids of :func:`read_plan`, by block name."""

    state: Grid
    characters: Grid
    setup: Grid
    orders: Grid
    ranges: Grid
    house_rules: Grid
    seed: Grid
    log: Grid
    """The Log's Step column (see :func:`read_plan`), one row per Log row."""
    aftermath_head: Grid = field(default_factory=list)
    """The Aftermath header: read so that every sheet a step writes is in its read (on
    Google Sheets the read also brings the sheet ids the write needs: 2 requests a step)."""
    mark: Grid = field(default_factory=list)
    """``State!B1:B2``: the tracker's mark and capacity (empty on a tracker made before them:
    a blank tracker's capacity)."""
    history: Grid = field(default_factory=list)
    """``State!C:F``: the undo records (see :mod:`sheetsync.systems.bbn.tracker.journal`, issue 9)."""

    overflow: dict[str, Grid] = field(default_factory=dict, init=False)
    """The rows read below each input block (by attribute name): any value there is
    refused, naming the block's limit (issue 8, item 6)."""
    capacity: dict[str, int] = field(default_factory=dict, init=False)
    """The capacity the tracker records (``State!B2``), defaults filled in (issue 9)."""

    def __post_init__(self) -> None:
        self.capacity = _recorded_capacity(self.mark)
        for attr, (_name, key, _what) in _OVERFLOW.items():
            grid = getattr(self, attr)
            rows = self.capacity[key]
            if len(grid) > rows:
                self.overflow[attr] = grid[rows:]
                setattr(self, attr, grid[:rows])

    @classmethod
    def from_grids(cls, grids: list[Grid], action: str | None = None) -> Sheets:
        """The grids of :func:`read_plan` (of ``action``'s plan, or the whole plan's): a
        block ``action`` does not read (:data:`NOT_READ`) is empty."""
        skip = NOT_READ.get(action or "", frozenset())
        if skip and len(grids) == len(_PLAN_FIELDS) - len(skip):
            read = iter(grids)
            grids = [[] if name in skip else next(read) for name in _PLAN_FIELDS]
        return cls(*grids)


_PLAN_FIELDS = tuple(f.name for f in dataclasses.fields(Sheets) if f.init)
"""The :class:`Sheets` each range of the whole read plan fills, in its order."""


def _recorded_capacity(mark: Grid) -> dict[str, int]:
    """Issue 9: the capacity in ``State!B2`` (JSON, written by sheetsync), defaults for what
    it lacks; a damaged one is refused naming the cell, never guessed."""
    import json

    value = mark[1][0] if len(mark) > 1 and mark[1] else None
    if value is None or (isinstance(value, str) and not value.strip()):
        return tracker_capacity()
    try:
        data = json.loads(str(value))
    except (ValueError, RecursionError):  # issue 26: nested past the recursion limit
        data = None
    if not isinstance(data, dict):
        raise SheetFormatError([Problem("State!B2", f"holds {_short(value)}, not the tracker's capacity (written by "
                                        f"sheetsync, e.g. {capacity_json({'cohorts': 36})}): restore it or make a "
                                        "new tracker")])
    return tracker_capacity(data)


def _same_capacity(lay: Layout, sh: Sheets) -> None:
    """Issue 9: a step must lay the tracker out with the capacity the tracker records, or
    every block below a longer one would be read from, and written to, the wrong rows."""
    if {k: lay.capacity.get(k) for k in sh.capacity} != sh.capacity:
        raise SheetFormatError([Problem("State!B2", f"this tracker holds {_holds(sh.capacity)}, but the step laid it "
                                        f"out for {_holds(lay.capacity)}; nothing was written. Run the step through "
                                        "sheetsync's commands or buttons, which read the tracker's capacity here")])


def _holds(cap: dict[str, int]) -> str:
    return ", ".join(f"{cap.get(k)} {k}" for k in ("cohorts", "characters", "orders", "ranges", "phases"))


@dataclass(frozen=True)
class _Plan:
    """A block's column lookups, made once per block (issue 12: a Resolve reads some
    thousand cells): by key, the column's offset, the column and its letter."""

    block: Block
    by_key: dict[str, tuple[int, Column, str]]
    inputs: tuple[tuple[int, Column], ...]
    """The input columns (offset, column): where a formula is refused."""
    prefix: str
    """``Sheet!``, as :meth:`Block.cell` spells a cell's address."""


_PLANS: dict[int, _Plan] = {}
"""By the block's identity (the plan keeps the block alive, and is checked to be for it):
layouts are built once and cached, so there are few."""


def _plan(block: Block) -> _Plan:
    got = _PLANS.get(id(block))
    if got is None or got.block is not block:
        by_key = {c.key: (j, c, block.letter(c.key)) for j, c in enumerate(block.columns)}
        got = _Plan(block, by_key, tuple((j, c) for j, c in enumerate(block.columns) if c.is_input), f"{block.sheet}!")
        if len(_PLANS) > 256:
            _PLANS.clear()
        _PLANS[id(block)] = got
    return got


@dataclass
class _Reader:
    """Reads cells through their columns' codecs (:mod:`sheetsync.systems.bbn.tracker.codecs`), each
    problem at the address made from the block, the column and the row (issue 9), and
    remembers which cell each battle-file path came from."""

    lay: Layout
    problems: list[Problem] = field(default_factory=list)
    where: dict[str, str] = field(default_factory=dict)
    later: list[Callable[[dict[str, str]], None]] = field(default_factory=list)
    """What fills in the cells of the paths of many rows (the Orders and Ranges rows read):
    only needed to name the cell of a problem the loader finds, so filled in then
    (:meth:`cells`; issue 12: a Resolve reads a few hundred cells)."""

    def cells(self) -> dict[str, str]:
        """:attr:`where`, every path's cell filled in."""
        for fill in self.later:
            fill(self.where)
        self.later.clear()
        return self.where

    def value(self, grid: Grid, block: Block, i: int, key: str, path: str | None = None,
              codec: Codec | None = None) -> Any:
        """Row ``i``'s cell of column ``key`` decoded by the column's codec (or ``codec``,
        for a House Rules value read by its rule's type): ``None`` when blank or bad."""
        plan = _plan(block)
        try:
            j, col, letter = plan.by_key[key]
        except KeyError:
            raise KeyError(f"{block.name} has no column {key!r}") from None
        value = _value_at(grid[i], j) if i < len(grid) else None
        if path:
            self.where[path] = f"{plan.prefix}{letter}{block.first_row + i}"
        if value is None:  # blank: what table.decode gives for it, without the call
            return None
        if codec is not None:
            col = replace(col, codec_=codec)
        return table.decode(col, value, f"{plan.prefix}{letter}{block.first_row + i}", self.problems)

    def formulas(self, grid: Grid, block: Block, rows: list[int] | None = None) -> None:
        """Refuse a formula in every input column of ``block`` (in ``rows``, or all rows
        read) first, so a row that is otherwise blank still has its formula named
        (issue 8, item 12)."""
        inputs = _plan(block).inputs
        for i in (range(len(grid)) if rows is None else rows):
            row = grid[i] if i < len(grid) else []
            n = len(row)
            for j, col in inputs:
                if j < n and isinstance(row[j], Formula):
                    table.decode(col, row[j], block.cell(i, col.key), self.problems)

    def overflow(self, sh: Sheets, attr: str) -> None:
        """Issue 8, item 6: a value below an input block is refused, with the limit named (a
        row there would otherwise be silently ignored).  Issue 9: the block is as long as the
        tracker's capacity; a tracker made from a battle file is sized to it, hence the hint
        for the Cohorts and Characters sheets.  The message is every system's
        (:func:`sheetsync.sheets.table.below_block`, issue 26, item 3)."""
        _same_capacity(self.lay, sh)
        name, key, what = _OVERFLOW[attr]
        block = self.lay.block(name)
        most = MAX_CAPACITY[key] if key in ("cohorts", "characters") else None
        self.problems.extend(table.below_block(block, sh.overflow.get(attr, []), what, most=most))


def _characters(r: _Reader, sh: Sheets) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Characters sheet: one member dict per row, grouped by cohort, with cell addresses."""
    lay = r.lay
    block = lay.block("Characters_Table")
    by_cohort: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    """Keyed by the cohort name folded to lower case: a cohort is found whatever the case
    it is typed in (as trait names are, R12)."""
    seen: dict[tuple[str, str], int] = {}
    r.overflow(sh, "characters")
    r.formulas(sh.characters, block)
    for i, _row in enumerate(sh.characters):
        cohort = r.value(sh.characters, block, i, "cohort")
        name = r.value(sh.characters, block, i, "name")
        if cohort is None and name is None:
            if any(v not in (None, "") for v in _row):
                r.problems.append(Problem(block.cell(i, "name"), "this row has values but no character name and cohort"))
            continue
        if name is None:
            r.problems.append(Problem(block.cell(i, "name"), "a character needs a name"))
            continue
        if cohort is None:
            r.problems.append(Problem(block.cell(i, "cohort"), f"{name} needs a cohort"))
            continue
        first = seen.setdefault((cohort.casefold(), name), i)
        if first != i:
            r.problems.append(Problem(block.cell(i, "name"), f"{name!r} is in {cohort} twice (also "
                                      f"{block.cell(first, 'name')}); give each character its own name"))
            continue
        m: dict[str, Any] = {"name": name}
        for key in ("temper", "willpower_spent", "health_levels", "ranged_attack", "blood_magic_in_clan"):
            v = r.value(sh.characters, block, i, key)
            if v is not None:
                m[key] = v
        pick = r.value(sh.characters, block, i, "movement_discipline")
        if pick:
            m["movement_discipline"] = pick
        abilities = {a: v for a in lay.ability_columns if (v := r.value(sh.characters, block, i, "ability:" + a))}
        disciplines = {d: v for d in lay.discipline_columns if (v := r.value(sh.characters, block, i, "discipline:" + d))}
        merits = [x for x in lay.merit_columns if r.value(sh.characters, block, i, "merit:" + x)]
        paths = {path: {"level": level, "offensive": True}  # R6
                 for path, level in r.value(sh.characters, block, i, "offensive_paths") or ()}
        combos = [{"name": cname, "includes": list(includes)}  # R5
                  for cname, includes in r.value(sh.characters, block, i, "combinations") or ()]
        for item in r.value(sh.characters, block, i, "other_traits") or ():  # R12
            if isinstance(item, str):
                merits.append(item)
            else:
                disciplines.setdefault(item[0], item[1])
        m.update({k: v for k, v in (("abilities", abilities), ("disciplines", disciplines), ("merits", merits),
                                    ("blood_magic_paths", paths), ("combination_disciplines", combos)) if v})
        aegis = r.value(sh.characters, block, i, "aegis")
        lasting = r.value(sh.characters, block, i, "lasting_roll")
        m["_aegis"], m["_lasting"], m["_row"], m["_cohort"] = aegis, lasting, i, cohort
        by_cohort.setdefault(cohort.casefold(), []).append((i, m))
    return by_cohort


_SEEN_LIMIT = 4
"""How many House Rules and Ranges sheets :func:`parse_house_rules` and :func:`_ranges`
remember (the last read, and a few before it)."""

_RULES_SEEN: dict[tuple[Any, ...], tuple[Block, dict[str, Any], dict[str, str]]] = {}
"""The last few House Rules sheets read with no problem, by their block and cells: the
rules they gave and the cell of each rule's path (issue 12: the Storyteller sets the house
rules once, and every Resolve reads them).  A sheet with a problem is never kept, so its
problems are noted on every read."""

_RANGES_READ: dict[tuple[Any, ...], tuple[Block, list[list[str]], list[tuple[int, int]]]] = {}
"""The last few Ranges sheets read with no problem, by their block and cells: the ranges
they gave and each range's row (issue 12, R24: set once, read on every Resolve)."""


def _grid_key(block: Block, grid: Grid) -> tuple[Any, ...] | None:
    """What reading ``grid`` as ``block`` depends on: the block (by identity: what is kept
    under the key holds the block, and is checked to be for it) and every cell (``None``
    when a cell is not hashable)."""
    key = (id(block), *(tuple(row) for row in grid))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def parse_house_rules(r: _Reader, sh: Sheets) -> dict[str, Any]:
    """House Rules sheet: key/value rows for the RULINGS-bbn.md keys.  A sheet read before
    with no problem gives the same rules and cells again without being decoded (issue 12)."""
    block = r.lay.block("HouseRules_Table")
    key = _grid_key(block, sh.house_rules)
    got = _RULES_SEEN.get(key) if key is not None else None
    if got is not None and got[0] is block:
        r.where.update(got[2])
        return dict(got[1])
    noted, where_before = len(r.problems), dict(r.where)
    out = _house_rules(r, sh, block)
    if key is not None and len(r.problems) == noted:
        keep(_RULES_SEEN, key, (block, dict(out), {k: v for k, v in r.where.items() if where_before.get(k) != v}),
             _SEEN_LIMIT)
    return out


def _house_rules(r: _Reader, sh: Sheets, block: Block) -> dict[str, Any]:
    out: dict[str, Any] = {}
    fields = HouseRules.model_fields
    for i, _ in enumerate(sh.house_rules):
        key = r.value(sh.house_rules, block, i, "key")
        if key is None or key not in fields:
            continue
        codec = for_annotation(fields[key].annotation, block.column("value").header.lower())
        v = r.value(sh.house_rules, block, i, "value", f"house_rules.{key}", codec)
        if v is not None:
            out[key] = v
    return out


def parse_battle_setup(lay: Layout, sh: Sheets) -> Battle:
    """Build Cohorts: the Characters and Cohorts Setup blocks (and House Rules) to a fresh
    battle.  Raises :class:`SheetFormatError` listing every bad cell."""
    r = _Reader(lay)
    setup = lay.block("Cohorts_Setup")
    chars = _characters(r, sh)
    rules = parse_house_rules(r, sh)
    cohorts: list[dict[str, Any]] = []
    named: dict[str, int] = {}
    r.overflow(sh, "setup")
    r.formulas(sh.setup, setup)
    for i, _ in enumerate(sh.setup):
        name = r.value(sh.setup, setup, i, "name")
        if name is None:
            continue
        first = named.setdefault(name.casefold(), i)
        if first != i:  # issue 8, item 9: two rows with one name would share one cohort's members
            r.problems.append(Problem(setup.cell(i, "name"), f"cohort {name!r} is named twice (also "
                                      f"{setup.cell(first, 'name')}); give each cohort its own name"))
            continue
        c = _setup_row(r, sh, setup, i, len(cohorts), name)
        _cohort_members(r, c, len(cohorts), chars.get(name.casefold(), []))
        cohorts.append(c)
    _unknown_cohorts(r, chars, named, [c["name"] for c in cohorts])
    if not cohorts and not r.problems:
        r.problems.append(Problem(setup.cell(0, "name"), "no cohorts yet: name each cohort here, then its members on Characters"))
    data: dict[str, Any] = {"cohorts": cohorts, "house_rules": rules}
    seed = _seed(r, sh)
    if seed is not None:
        data["seed"] = seed
    return _load(r, data)


_MEMBER_FIELDS = {"ability": "abilities", "merit": "merits", "discipline": "disciplines",
                  "offensive_paths": "blood_magic_paths", "combinations": "combination_disciplines"}
"""The Characters table's column keys whose member field has another name."""


def _setup_row(r: _Reader, sh: Sheets, setup: Block, i: int, k: int, name: str) -> dict[str, Any]:
    """One row of the Cohorts Setup block as cohort ``k`` of the battle file: its side,
    Sergeant, tracker and reporter, whether it is a Support cohort (R22), and the pools the
    Storyteller set by hand (R1, R14); each field's path is tied to its cell."""
    r.where[f"cohorts[{k}]"] = setup.cell(i, "name")
    r.where[f"cohorts[{k}].name"] = setup.cell(i, "name")
    r.where[f"cohorts[{k}].members"] = setup.cell(i, "name")
    c: dict[str, Any] = {"name": name}
    for key in ("side", "sergeant", "tracker", "reporter"):
        v = r.value(sh.setup, setup, i, key, f"cohorts[{k}].{key}")
        if v is not None:
            c[key] = v
    support = r.value(sh.setup, setup, i, "support")
    if support:
        c["support"] = True
    pools = {}
    for col in setup.columns:
        if col.key.startswith("set:"):
            v = r.value(sh.setup, setup, i, col.key, f"cohorts[{k}].pools.{col.key[4:]}")
            if v is not None:
                pools[col.key[4:]] = v
    if pools:
        c["pools"] = pools
    return c


def _cohort_members(r: _Reader, c: dict[str, Any], k: int, rows: list[tuple[int, dict[str, Any]]]) -> None:
    """The Characters rows of cohort ``k`` as its members (R1), with the Aegis burned (R27)
    and the lasting-effect rolls (R28) typed beside them moved to the cohort; each member
    field's path is tied to its cell on the Characters table."""
    block = r.lay.block("Characters_Table")
    members = []
    aegis: dict[str, int] = {}
    lasting: dict[str, int] = {}
    for j, (row, m) in enumerate(rows):
        r.where[f"cohorts[{k}].members[{j}]"] = block.cell(row, "name")
        for col in block.columns:
            field_name = col.key.split(":")[0]
            target = _MEMBER_FIELDS.get(field_name, field_name)
            r.where.setdefault(f"cohorts[{k}].members[{j}].{target}", block.cell(row, col.key))
        burned = m.pop("_aegis")
        if burned:
            aegis[m["name"]] = burned
        lv = m.pop("_lasting")
        if lv is not None:
            lasting[m["name"]] = lv
        m.pop("_row", None)
        m.pop("_cohort", None)
        members.append(m)
    c["members"] = members
    if aegis:
        c["aegis"] = aegis
    if lasting:
        c["lasting_rolls"] = lasting


def _unknown_cohorts(r: _Reader, chars: dict[str, list[tuple[int, dict[str, Any]]]], named: dict[str, int],
                     names: list[str]) -> None:
    """R1: a member belongs to a cohort, so a Characters row whose cohort is on no row of
    the Cohorts sheet is a problem at its cohort cell, with the nearest cohort name offered."""
    block = r.lay.block("Characters_Table")
    for cohort, rows in chars.items():
        if cohort not in named:
            for row, m in rows:
                typed = m["_cohort"]
                r.problems.append(Problem(block.cell(row, "cohort"), f"{typed!r} is not a cohort on the Cohorts sheet"
                                          + did_you_mean(typed, names)))


def _seed(r: _Reader, sh: Sheets) -> int | str | None:
    """The Dice seed cell (R25): a whole number or text, never a formula (issue 8, item 12)
    and never a float that is not a whole number (``inf``, ``nan``: item 8)."""
    cell = r.lay.cells["Battle_Seed"]
    seed = sh.seed[0][0] if sh.seed and sh.seed[0] else None
    col = Column(cell.name, cell.label, is_input=True, codec_=Seed(cell.label.lower()))
    value: int | str | None = table.decode(col, seed, f"{cell.sheet}!{cell.address}", r.problems)
    return value


def _value_at(row: Sequence[CellValue], j: int) -> CellValue:
    """The cell at offset ``j`` of a row as read (a short row's missing cells are blank)."""
    return row[j] if j < len(row) else None


def _load(r: _Reader, data: dict[str, Any] | Callable[[], Battle]) -> Battle:
    """The battle ``data`` loads (or the callable builds), or every problem of the read and
    the load together, each at its cell."""
    problems = list(r.problems)
    battle = None
    try:
        battle = data() if callable(data) else load_battle(data)
    except InputError as exc:
        where = r.cells()
        problems += [Problem(_locate(where, p.where), _label(p)) for p in exc.problems]
    if problems:
        raise SheetFormatError(_dedupe(problems))
    assert battle is not None
    return battle


def _label(p: Problem) -> str:
    """``orders[3].task`` + message → ``task 'Melee' is not ...`` (the field named first).

    Only a message that opens with the value or a verb ("'Melee' is not", "is required")
    gets the field in front: one that is a sentence already ("Melee Attack needs a target
    cohort") is left as it is, or it would read "target Melee Attack needs ..." (issue 8,
    item 28)."""
    field_name = re.sub(r"\[\d+\]", "", p.where.rsplit(".", 1)[-1]) if "." in p.where else ""
    opens_with_value = re.match(r"""^(['"\d(\[{-]|(is|are|must) )""", p.message) is not None
    if field_name and opens_with_value and re.match(r"^[a-z_]+$", field_name):
        return f"{field_name.replace('_', ' ')} {p.message}"
    return p.message


def _locate(where: dict[str, str], path: str) -> str:
    """The cell of the longest known prefix of a loader path."""
    probe = path
    while probe:
        if probe in where:
            return where[probe]
        cut = max(probe.rfind("."), probe.rfind("["))
        if cut <= 0:
            break
        probe = probe[:cut]
    return path or "State"


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in problems:
        if (p.where, p.message) not in seen:
            seen.add((p.where, p.message))
            out.append(p)
    return out


def _ranges(r: _Reader, sh: Sheets) -> list[list[str]]:
    """Ranges sheet (R24): ``[cohort, cohort, band]`` rows, every bad cell noted."""
    ranges_block = r.lay.block("Ranges_Table")
    r.overflow(sh, "ranges")
    plan = _plan(ranges_block)
    cols = [plan.by_key[key] for key in ("a", "b", "band")]
    first_row, prefix, problems = ranges_block.first_row, plan.prefix, r.problems

    def fill(where: dict[str, str]) -> None:  # the cells of the ranges' paths, as _Reader.value names them
        (_ja, _ca, la), (_jb, _cb, lb), (_jn, _cn, ln) = cols
        for k, i in read:
            num = first_row + i
            where[f"ranges[{k}][0]"] = f"{prefix}{la}{num}"
            where[f"ranges[{k}][1]"] = f"{prefix}{lb}{num}"
            where[f"ranges[{k}]"] = f"{prefix}{ln}{num}"
            where[f"ranges[{k}].band"] = f"{prefix}{ln}{num}"

    key = _grid_key(ranges_block, sh.ranges)
    got = _RANGES_READ.get(key) if key is not None else None
    if got is not None and got[0] is ranges_block:  # read before with no problem (issue 12): the same ranges and rows
        read = list(got[2])
        r.later.append(fill)
        return [list(entry) for entry in got[1]]
    noted = len(problems)
    r.formulas(sh.ranges, ranges_block)
    ranges: list[list[str]] = []
    plain = [type(col.codec) is Text for _j, col, _letter in cols]
    read = []  # (range, row offset)

    r.later.append(fill)
    for i, row in enumerate(sh.ranges):
        n = len(row)
        raws = [row[j] if j < n else None for j, _col, _letter in cols]
        if raws[0] is None and raws[1] is None and raws[2] is None:
            continue  # a blank row (most of the block): nothing to read, nothing to name
        got: list[Any] = []
        for raw, (_j, col, letter), text in zip(raws, cols, plain, strict=True):  # as _Reader.value reads them
            if raw is None:
                got.append(None)
            elif text and type(raw) is str:  # what table.decode and Text give for a text
                got.append(raw.strip() or None)
            else:
                got.append(table.decode(col, raw, f"{prefix}{letter}{first_row + i}", problems))
        a, b, band = got
        if a is None and b is None and band is None:
            continue
        if a is None or b is None or band is None:
            problems.append(Problem(ranges_block.cell(i, "a"), "a range needs two cohorts and a band"))
            continue
        read.append((len(ranges), i))
        ranges.append([a, b, band])
    if key is not None and len(problems) == noted:
        keep(_RANGES_READ, key, (ranges_block, [list(entry) for entry in ranges], list(read)), _SEEN_LIMIT)
    return ranges


def missing_ranges(lay: Layout, sh: Sheets, battle: Battle) -> list[str]:
    """R24: every pair of enemy cohorts with no range on the Ranges sheet, as a line a
    Tracker reads.  An attack between them would be refused, so Build Cohorts warns
    (issue 8, item 21); bad cells there are left for Resolve Phase to report."""
    r = _Reader(lay)
    canon = {c.name.casefold(): c.name for c in battle.cohorts}
    have = {frozenset(canon.get(n.casefold(), n) for n in (a, b)) for a, b, _band in _ranges(r, sh)}
    out = []
    names = [c.name for c in battle.cohorts]
    for x, a in enumerate(names):
        for b in names[x + 1:]:
            if battle.enemies(a, b) and frozenset((a, b)) not in have:
                out.append(f"no range is set between {a} and {b}: set one on the Ranges sheet, "
                           "or every task between them is refused (R24)")
    return out


def check_fits(lay: Layout, battle: Battle, source: str = "") -> None:
    """Issue 8, item 6: refuse a battle the tracker's blocks cannot hold, naming each limit,
    before anything is written.  Issue 9: the limits are the tracker's capacity; when it is
    smaller than the most a tracker is made to hold, the message says how to get a bigger one."""
    cap = lay.capacity
    counts = (
        ("cohorts", len(battle.cohorts), "cohorts", "cohorts"),
        ("cohorts", sum(len(c.members) for c in battle.cohorts), "characters", "characters"),
        ("ranges", len(battle.ranges), "ranges", "ranges"),
        ("orders", len(battle.orders), "orders", "pending orders"),
        ("phase", battle.phase - 1, "phases", "resolved phases"),
    )
    problems = []
    for where, n, key, what in counts:
        if n > cap[key]:
            hint = (f" (`sheetsync new OUT --from battle.yaml` makes a tracker sized to the battle, up to "
                    f"{MAX_CAPACITY[key]})") if cap[key] < MAX_CAPACITY[key] and n <= MAX_CAPACITY[key] else ""
            problems.append(Problem(where, f"the battle has {n} {what}; a tracker holds at most {cap[key]}{hint}"))
    if problems:
        raise InputError(problems, source or "the battle file")


_ORDER_KEYS = ("cohort", "task", "target", "member", "moment", "pool", "benefit", "ally", "free_task", "text",
               "temper", "roll", "reroll", "picks")
"""The Orders columns an order is read from, in the order their problems are listed."""


def parse_turn(lay: Layout, sh: Sheets, battle: Battle) -> tuple[Battle, list[int]]:
    """Resolve Phase input: the stored battle with this phase's House Rules, Ranges and
    pending Orders rows (those with no Phase stamp).  Returns the battle and the Orders
    row offsets of its orders, in order."""
    phases = lay.capacity["phases"]
    if battle.phase > phases:
        raise BattleStateError(
            f"this tracker holds {phases} phases (the rows of the Health by phase table), and phase "
            f"{battle.phase} would be past them. End Battle now, or carry on from a battle file: the 'battle' part "
            "of `sheetsync export`")
    r = _Reader(lay)
    rules = parse_house_rules(r, sh)
    ranges = _ranges(r, sh)
    orders_block = lay.block("Orders_Table")
    orders: list[dict[str, Any]] = []
    rows: list[int] = []
    plan = _plan(orders_block)
    input_cols = [j for j, _col in plan.inputs]
    phase_col = orders_block.index("phase")  # looked up once: the stamped rows grow with the phases (issue 9)
    # the order's fields, in the order their problems are listed; each column's field is
    # the order's (R25: the Reroll cell holds Yes or the d10 rerolled).  Looked up once.
    fields = [(key, *plan.by_key[key], plan.by_key[key][1].field, type(plan.by_key[key][1].codec) is Text)
              for key in _ORDER_KEYS]
    first_row, prefix, problems = orders_block.first_row, plan.prefix, r.problems
    cohort_letter = plan.by_key["cohort"][2]
    read: list[tuple[int, int]] = []  # (order, row offset)

    def fill(where: dict[str, str]) -> None:  # the cells of the orders' paths, as _Reader.value names them
        for k, i in read:
            for _key, _j, _col, letter, name, _plain in fields:
                where[f"orders[{k}].{name}"] = f"{prefix}{letter}{first_row + i}"
            where[f"orders[{k}]"] = f"{prefix}{cohort_letter}{first_row + i}"

    r.later.append(fill)
    r.overflow(sh, "orders")
    for i, row in enumerate(sh.orders):
        if not row:  # a blank row (and every row a Resolve skipped, issue 23)
            continue
        n = len(row)
        stamp = row[phase_col] if phase_col < n else None
        if stamp not in (None, ""):
            continue
        if all((row[j] if j < n else None) in (None, "") for j in input_cols):
            continue
        if Formula in map(type, row):  # only a backend that reads formulas has them (a payload never)
            r.formulas(sh.orders, orders_block, [i])
        k = len(orders)
        o: dict[str, Any] = {}
        read.append((k, i))
        for key, j, col, letter, name, plain in fields:  # as _Reader.value reads each cell
            raw = _value_at(row, j)
            v: Any
            if raw is None:
                v = None
            elif plain and type(raw) is str:  # what table.decode and Text give for a text
                v = raw.strip() or None
            else:
                v = table.decode(col, raw, f"{prefix}{letter}{first_row + i}", problems)
            if key == "reroll" and v is not None:
                o["use_reroll"] = True
                if v is not True:
                    o["reroll"] = v
            elif v is not None:
                o[name] = v
        if "cohort" not in o:
            r.problems.append(Problem(orders_block.cell(i, "cohort"), "an order needs its cohort"))
        if "task" not in o:
            r.problems.append(Problem(orders_block.cell(i, "task"), "an order needs its task"))
        orders.append(o)
        rows.append(i)
    for idx in range(len(battle.cohorts)):
        r.where.setdefault(f"cohorts[{idx}]", "State!A2")
    return _load(r, lambda: load_turn(battle, rules, ranges, orders)), rows
