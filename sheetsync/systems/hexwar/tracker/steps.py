"""The hex wargame's tracker steps (build, resolve, undo, end) on any backend: one
``read_ranges`` and one ``write_ranges`` per step (DESIGN "Several rule systems on one seam").

* **build** (H1, H2): the Units sheet, the map cells and the House Rules are read into a
  battle file and checked by :func:`~sheetsync.systems.hexwar.files.loader.load_battle`; the battle
  is stored at turn 1 and the computed Units columns, the Map, the Sides and the Battle
  status are written.  Only before a turn is resolved.
* **resolve** (1.0, H3-H9): the stored battle (the units' standing comes from the State,
  never from the Units inputs) and the *pending* Moves and Attacks rows (Turn blank) go to
  :func:`~sheetsync.systems.hexwar.rules.turn.resolve_turn`; the taken rows are stamped with the
  turn and get their results (a die sheetsync rolled is written into Roll, H8), the Log
  gets one row per event, and one undo record is appended to the State.
* **undo**: the newest undo record restores the units as they were, the turn's rows are
  pending again (their rolled dice cleared, typed ones kept, the live odds back).
* **end** (H12): the Report sheet; a later resolve is refused, an undo reopens the battle.

Every bad cell is reported at once, by address (``Units!C5: '3+ - x - 4' is not a
counter ...``), and nothing is written when anything is wrong.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sheetsync.core.errors import BattleStateError, InputError, Problem, SheetFormatError
from sheetsync.core.layout import Column, step_layouts
from sheetsync.core.system import StepRefused
from sheetsync.sheets import lost_steps as sj
from sheetsync.sheets import session as ss
from sheetsync.sheets import table
from sheetsync.sheets.backend import (
    CellValue,
    Formula,
    Grid,
    RangeUpdate,
)
from sheetsync.sheets.step_report import StepReport
from sheetsync.sheets.steps import LayoutHooks, LayoutSteps
from sheetsync.systems.hexwar.files.loader import battle_to_file, load_battle
from sheetsync.systems.hexwar.rules.aftermath import aftermath
from sheetsync.systems.hexwar.rules.models import Battle, TurnOrders, UndoRecord
from sheetsync.systems.hexwar.rules.turn import AttackEvent, TurnResult, resolve_turn, undo
from sheetsync.systems.hexwar.tracker import cells as views
from sheetsync.systems.hexwar.tracker.formulas import house_rule_rows
from sheetsync.systems.hexwar.tracker.layout import MAX_CAPACITY, layout

__all__ = ["ACTION_NAMES", "HexSteps", "capacity_for", "check", "export", "load_into", "run"]

MARK = "hexwar@1"
ACTION_NAMES = {"build": "Build Units", "resolve": "Resolve Turn", "undo": "Undo Turn", "end": "End Battle",
                "new": "Load"}
BATTLE_RANGE = "Battle!B3:B11"
"""The Battle sheet's named cells, read and written as one column (B3 turn ... B11 impassable)."""

_UNIT_INPUTS = ("name", "side", "counter", "start_hex", "size", "men")
_UNIT_FIELDS = {"name": "name", "side": "side", "counter": "counter", "start_hex": "hex", "size": "size",
                "men": "men"}
_MOVE_RESULTS = ("from", "ends", "charge", "outcome", "result")
_ATTACK_SPAN = ("roll", "strength", "defense", "chance", "expected", "outcome", "casualties", "result",
                "roll_source")
_ATTACKERS = tuple(f"attacker{i}" for i in range(1, 7))


# -- reading ---------------------------------------------------------------------------------

@dataclass
class _Read:
    """One step's read: every grid, the State, and the layout they were read with."""

    lay: Any
    mark: Grid
    battle: Grid
    units: Grid
    moves: Grid
    attacks: Grid
    house: Grid
    session: ss.Session
    log: Grid = field(default_factory=list)
    """The Log's Step column: the State's journal is checked against it (issue 26)."""
    below: dict[str, Grid] = field(default_factory=dict)
    """By block name, the rows read below each block a Tracker types into (:data:`TYPED`):
    a value there is refused (issue 26, item 3)."""

    read_rows: tuple[Any, list[Problem], dict[str, str]] | None = None
    """The pending and stamped rows of the orders' sheets with their problems and cells,
    once read (they are read once a step)."""

    def cell(self, name: str) -> CellValue:
        """A named cell of the Battle sheet, from the read of :data:`BATTLE_RANGE`."""
        return table.in_column(self.lay.cells[name], self.battle, BATTLE_RANGE)


TYPED = {"Units_Table": "units", "Moves_Table": "moves", "Attacks_Table": "attacks",
         "HouseRules_Table": "house rules"}
"""The blocks a Tracker types into, in the read's order, and what a row of each is: each
is read to the end of its sheet, so a row typed below it is refused, not dropped (issue
26, item 3)."""


def _plan(lay: Any) -> list[str]:
    from sheetsync.sheets.marks import MARK_RANGE

    b = lay.blocks
    return [MARK_RANGE, BATTLE_RANGE, *(table.read_past(b[name]) for name in TYPED),
            *ss.read_ranges(b["State_Blob"].range()), _TOUCH[0], sj.step_column(b["Log_Table"]), _TOUCH[1]]


_TOUCH = ("Map!A1:A1", "Report!A1:A1")
"""One cell of each sheet a step writes but need not read: every sheet written is in the
step's read (Google Sheets brings the sheet ids the write needs with it).  The Log's Step
column is read whole: the State's journal is checked against it (issue 26)."""


def _parse(lay: Any, grids: Sequence[Grid]) -> _Read:
    """The grids of :func:`_plan` (one step's one read) as a :class:`_Read`; a tracker of
    another system is refused at its mark."""
    mark = grids[0]
    value = mark[0][0] if mark and mark[0] else None
    if value not in (None, "") and str(value).split("@")[0] != "hexwar":
        raise SheetFormatError([Problem("State!B1", f"says {value!r}: this is not a hex wargame tracker")])
    session = ss.parse(grids[6], grids[7], blob_range=lay.block("State_Blob").range(), mark=MARK)
    log = grids[9] if len(grids) > 9 else []
    below: dict[str, Grid] = {}
    units, moves, attacks, house = (_own(lay, name, grid, below) for name, grid in zip(TYPED, grids[2:6], strict=True))
    return _Read(lay, mark, grids[1], units, moves, attacks, house, session, log, below)


def _own(lay: Any, name: str, grid: Grid, below: dict[str, Grid]) -> Grid:
    """Block ``name``'s own rows of its read past its end; the rows below go to ``below``."""
    own, below[name] = table.split_below(lay.block(name), grid)
    return own


def _below(rd: _Read, names: Sequence[str]) -> list[Problem]:
    """Issue 26, item 3: a value typed below one of the blocks ``names`` is refused, naming
    the block's last row and how to get a longer one (as the battalion tracker does)."""
    problems: list[Problem] = []
    for name in names:
        block, what, below = rd.lay.block(name), TYPED[name], rd.below.get(name, [])
        if name == "HouseRules_Table":
            problems += table.below_block(block, below, what, todo=table.HOUSE_RULES_TODO)
        else:
            problems += table.below_block(block, below, what, most=MAX_CAPACITY[what])
    return problems


def _raise(problems: Sequence[Problem]) -> None:
    """Raise every problem at once."""
    if problems:
        raise InputError(problems)


def _plain(value: CellValue) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return value.strip() or None
    return value


def _battle_cells(rd: _Read, problems: list[Problem], where: dict[str, str]) -> dict[str, Any]:
    """H2, H8: seed and map from the Battle sheet (a formula refused, naming the cell)."""
    cells = rd.lay.cells
    out: dict[str, Any] = {}
    seed_cell = cells["Battle_Seed"]
    seed = rd.cell("Battle_Seed")
    where["seed"] = f"Battle!{seed_cell.address}"
    if isinstance(seed, Formula):
        problems.append(Problem(where["seed"], f"dice seed: a formula ({seed.text}) is not allowed here; type a "
                                               "whole number or text"))
    elif _plain(seed) is not None and not isinstance(seed, bool):
        out["seed"] = _plain(seed)
    columns = table.read_cell(cells["Battle_MapColumns"], rd.cell("Battle_MapColumns"), problems)
    rows = table.read_cell(cells["Battle_MapRows"], rd.cell("Battle_MapRows"), problems)
    blocked = table.read_cell(cells["Battle_Impassable"], rd.cell("Battle_Impassable"), problems)
    where.update({"map": "Battle!B9", "map.columns": "Battle!B9", "map.rows": "Battle!B10",
                  "map.impassable": "Battle!B11"})
    raw_map: dict[str, Any] = {"impassable": list(blocked or ())}
    if columns is not None:
        raw_map["columns"] = columns
    elif not any(p.where == "Battle!B9" for p in problems):
        problems.append(Problem("Battle!B9", "map columns: type the map's width in hexes (H2)"))
    if rows is not None:
        raw_map["rows"] = rows
    elif not any(p.where == "Battle!B10" for p in problems):
        problems.append(Problem("Battle!B10", "map rows: type the map's height in hexes (H2)"))
    out["map"] = raw_map
    return out


def _house_rules(rd: _Read, problems: list[Problem], where: dict[str, str]) -> dict[str, Any]:
    block = rd.lay.block("HouseRules_Table")
    out: dict[str, Any] = {}
    for row in table.read_block(block, rd.house, problems, blank_keys=["key"]):
        key = row.get("key")
        raw = row.raw.get("value")
        if key is None:
            continue
        where[f"house_rules.{key}"] = block.cell(row.offset, "value")
        if isinstance(raw, Formula) or row.get("value") is None:
            continue
        out[str(key)] = row["value"]
    return out


def _units(rd: _Read, problems: list[Problem], where: dict[str, str]) -> tuple[list[dict[str, Any]], list[int]]:
    """H1: the Units sheet's typed columns, one battle-file unit per non-blank row."""
    block = rd.lay.block("Units_Table")
    out: list[dict[str, Any]] = []
    offsets: list[int] = []
    for row in table.read_block(block, rd.units, problems, keys=_UNIT_INPUTS):
        i = len(out)
        where[f"units[{i}]"] = block.cell(row.offset, "name")
        unit: dict[str, Any] = {}
        for key, name in _UNIT_FIELDS.items():
            where[f"units[{i}].{name}"] = block.cell(row.offset, key)
            if row.values.get(key) is not None:
                unit[name] = row.values[key]
        out.append(unit)
        offsets.append(row.offset)
    where["units"] = f"Units!A{block.first_row}"
    return out, offsets


@dataclass
class _Pending:
    moves: list[tuple[int, dict[str, Any]]]
    attacks: list[tuple[int, dict[str, Any]]]
    stamped_moves: dict[int, list[int]]
    """Turn -> offsets of the Moves rows stamped with it."""
    stamped_attacks: dict[int, list[tuple[int, dict[str, CellValue]]]]
    raw_attacks: dict[int, dict[str, CellValue]]
    """Offset -> the cells of each pending Attacks row, as read."""


def _rows(block: Any, grid: Grid, problems: list[Problem]) -> list[table.Row]:
    inputs = [c.key for c in block.columns if c.is_input]
    return table.read_block(block, grid, problems, keys=["turn"], blank_keys=[*inputs, "turn"], stamp="turn")


def _pending(rd: _Read, problems: list[Problem], where: dict[str, str]) -> _Pending:
    """H4, H7, H8: the Moves and Attacks rows not yet resolved (Turn blank) as the turn's
    orders of a battle file, each path mapped back to its cell; and the stamped rows."""
    out: _Pending = table.read_once(rd, _pending_rows, problems, where)  # the check for a step cut short reads them too
    return out


def _pending_rows(rd: _Read, problems: list[Problem], where: dict[str, str]) -> _Pending:
    mb, ab = rd.lay.block("Moves_Table"), rd.lay.block("Attacks_Table")
    moves: list[tuple[int, dict[str, Any]]] = []
    stamped_m: dict[int, list[int]] = {}
    for row in _rows(mb, rd.moves, problems):
        if row.get("turn") is not None:
            stamped_m.setdefault(row["turn"], []).append(row.offset)
            continue
        if not table.is_blank(row.raw.get("turn")):
            continue  # a bad Turn cell: its problem is listed
        i = len(moves)
        v = {k: table.decode(mb.column(k), row.raw[k], mb.cell(row.offset, k), problems)
             for k in ("unit", "to", "path")}
        where[f"turn.moves[{i}]"] = mb.cell(row.offset, "to" if table.is_blank(row.raw.get("path")) else "path")
        for k in ("unit", "to", "path"):
            where[f"turn.moves[{i}].{k}"] = mb.cell(row.offset, k)
        order: dict[str, Any] = {"unit": v["unit"]}
        if v["to"] is not None:
            order["to"] = v["to"]
        if v["path"] is not None:
            order["path"] = list(v["path"])
        moves.append((row.offset, order))
    attacks: list[tuple[int, dict[str, Any]]] = []
    stamped_a: dict[int, list[tuple[int, dict[str, CellValue]]]] = {}
    raw_a: dict[int, dict[str, CellValue]] = {}
    for row in _rows(ab, rd.attacks, problems):
        if row.get("turn") is not None:
            stamped_a.setdefault(row["turn"], []).append((row.offset, row.raw))
            continue
        if not table.is_blank(row.raw.get("turn")):
            continue
        i = len(attacks)
        raw_a[row.offset] = row.raw
        where[f"turn.attacks[{i}]"] = ab.cell(row.offset, "defender")
        defender = table.decode(ab.column("defender"), row.raw["defender"], ab.cell(row.offset, "defender"), problems)
        where[f"turn.attacks[{i}].defender"] = ab.cell(row.offset, "defender")
        where[f"turn.attacks[{i}].attackers"] = ab.cell(row.offset, "attacker1")
        names: list[str] = []
        for key in _ATTACKERS:
            name = table.decode(ab.column(key), row.raw[key], ab.cell(row.offset, key), problems)
            if name is not None:
                where[f"turn.attacks[{i}].attackers[{len(names)}]"] = ab.cell(row.offset, key)
                names.append(name)
        roll = row.raw.get("roll")
        where[f"turn.attacks[{i}].roll"] = ab.cell(row.offset, "roll")
        if isinstance(roll, Formula):
            table.decode(ab.column("roll"), roll, ab.cell(row.offset, "roll"), problems)
            roll = None
        attack: dict[str, Any] = {"defender": defender, "attackers": names}
        if _plain(roll) is not None:
            attack["roll"] = _plain(roll)
        attacks.append((row.offset, attack))
    return _Pending(moves, attacks, stamped_m, stamped_a, raw_a)


def _stored(rd: _Read) -> Battle:
    if rd.session.battle is None:
        raise BattleStateError("this tracker has no units yet: fill in the Units sheet and the map on the Battle "
                               "sheet, then Build Units")
    try:
        session = rd.session
        return ss.stored_battle(session, lambda: load_battle(session.battle, "the State sheet"))
    except InputError as err:
        raise SheetFormatError([Problem(rd.lay.block("State_Blob").cell(0, "json"),
                                        f"the stored battle can't be read ({err.problems[0]}): restore the "
                                        "previous copy, or make a new tracker")]) from None
    except (ValueError, TypeError, ArithmeticError, RecursionError):
        # issue 26: a hand-edited State whose values the loader does not bound (a trait of
        # 30 digits overflows a float) is as damaged as one it refuses
        raise SheetFormatError([Problem(rd.lay.block("State_Blob").cell(0, "json"),
                                        "the stored battle holds a value sheetsync never writes (it was edited): "
                                        "restore the previous copy, or make a new tracker")]) from None


def _file(battle: Battle) -> dict[str, Any]:
    """The battle as the State stores it: its file data without orders and history."""
    data = battle_to_file(battle.model_copy(update={"orders": TurnOrders(), "history": ()}))
    data.pop("history", None)
    return data


# -- writing ---------------------------------------------------------------------------------

def _formulas(lay: Any, block: Any, offset: int) -> dict[str, Formula]:
    """The live formulas of ``block``'s data row ``offset`` (``lay.formulas``)."""
    prefix = block.name + "."
    row = block.first_row + offset
    return {k[len(prefix):]: Formula(f(lay, row)) for k, f in lay.formulas.items() if k.startswith(prefix)}


def _computed_keys(block: Any, first: str) -> list[str]:
    return [c.key for c in block.columns[block.index(first):]]


def _view_updates(lay: Any, battle: Battle, offsets: Sequence[int], *, ended: bool = False,
                  last_action: str = "") -> list[RangeUpdate]:
    """Units computed columns, the Map, the Sides and the Battle status of ``battle``."""
    ub = lay.block("Units_Table")
    keys = _computed_keys(ub, "hex")
    rows: list[dict[str, Any]] = [{} for _ in range(ub.rows)]
    for off, row in zip(offsets, views.unit_rows(battle), strict=True):
        rows[off] = row
    area = lay.areas["Map_Grid"]
    sides = views.side_rows(battle)
    return [
        table.block_update(ub, rows, keys=keys),
        RangeUpdate(area.range(), views.map_grid(battle, area.rows, area.cols)),
        table.block_fill(lay.block("Battle_Sides"), sides),
        RangeUpdate("Battle!B3", [[battle.turn]]),
        RangeUpdate("Battle!B5:B6", [[views.status(battle, ended=ended)], [last_action or None]]),
    ]


def _fits(lay: Any, battle: Battle) -> None:
    """A battle larger than the tracker is refused, naming the limit: never drop a row."""
    cap = lay.capacity
    checks = [("units", len(battle.units), lay.block("Units_Table").rows, "units"),
              ("turn.moves", len(battle.orders.moves), lay.block("Moves_Table").rows, "moves"),
              ("turn.attacks", len(battle.orders.attacks), lay.block("Attacks_Table").rows, "attacks"),
              ("units", len(battle.sides), lay.block("Battle_Sides").rows, "sides"),
              ("map.columns", battle.map.columns, cap["map_columns"], "map columns"),
              ("map.rows", battle.map.rows, cap["map_rows"], "map rows"),
              ("turn.attacks", max((len(a.attackers) for a in battle.orders.attacks), default=0), len(_ATTACKERS),
               "attackers per engagement")]
    problems = [Problem(where, f"the tracker holds {limit} {what}; this battle has {have}: make a new tracker "
                               "with sheetsync new OUT --from battle.yaml")
                for where, have, limit, what in checks if have > limit]
    if problems:
        raise InputError(problems)


def _log(lay: Any, rows: Sequence[Mapping[str, Any]]) -> RangeUpdate:
    return table.append_update(lay.block("Log_Table"), rows)


def _commit(rd: _Read, action: str, turn: int, battle: Battle | None, offsets: Sequence[int],
            ended: bool = False) -> ss.Commit:
    return ss.commit(rd.session, mark=MARK, action=action, turn=turn,
                     battle=_file(battle) if battle is not None else None,
                     extra={"rows": list(offsets), "ended": ended}, blob_range=rd.lay.block("State_Blob").range())


def _offsets(rd: _Read, battle: Battle) -> list[int]:
    """Each unit's Units row as the State remembers it (a hand-edited one refused, issue 26)."""
    block = rd.lay.block("Units_Table")
    return ss.stored_rows(rd.session, len(battle.units), block.rows or 1_048_576,
                          blob_range=rd.lay.block("State_Blob").range())


def _check_units(rd: _Read, battle: Battle, offsets: Sequence[int]) -> None:
    """The Units rows must still be the units Build Units placed (the standing lives in the
    State, row for row): a row renamed or added since is refused, naming its cell."""
    block = rd.lay.block("Units_Table")
    problems: list[Problem] = []
    rows = {r.offset: r for r in table.read_block(block, rd.units, problems, keys=["name"])}
    fix = ("Build Units again before turn 1" if battle.turn == 1 else
           "put it back, or Undo Turn back to turn 1 and Build Units again")
    expected = dict(zip(offsets, (u.name for u in battle.units), strict=True))
    for off, name in expected.items():
        got = rows[off].get("name") if off in rows else None
        if got != name:
            problems.append(Problem(block.cell(off, "name"), f"holds {got!r}, not {name!r} as when the units were "
                                    f"built: {fix}"))
    for off, row in rows.items():
        if off not in expected:
            problems.append(Problem(block.cell(off, "name"), f"{row.get('name')!r} was added after the units were "
                                    f"built: {fix}"))
    _raise(problems)


def _report(action: str, turn: int, message: str, updates: list[RangeUpdate], *,
            result: TurnResult | None = None, aftermath_: dict[str, Any] | None = None) -> StepReport:
    return StepReport(action=action, phase=turn, message=message, result=result,  # type: ignore[arg-type]
                      aftermath=aftermath_, updates=updates)


# -- steps -----------------------------------------------------------------------------------

def _build(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """H1, H2: check the Units, the map and the House Rules (and the pending orders) and
    store the battle at turn 1."""
    if rd.session.battle is not None and (rd.session.history() or int(rd.session.battle.get("turn", {})
                                                                         .get("number", 1)) > 1):
        raise BattleStateError("a turn of this battle is resolved already: Undo Turn back to turn 1, or start a "
                               "new tracker")
    problems = _below(rd, list(TYPED))
    where: dict[str, str] = {}
    data: dict[str, Any] = {"system": "hexwar", **_battle_cells(rd, problems, where)}
    rules = _house_rules(rd, problems, where)
    if rules:
        data["house_rules"] = rules
    units, offsets = _units(rd, problems, where)
    data["units"] = units
    if not units:
        problems.append(Problem(where["units"], "type at least one unit (name, side, counter, start hex) (H1)"))
    pending = _pending(rd, problems, where)
    data["turn"] = _turn_data(rd, 1, pending, where, problems)
    if "seed" not in data and not problems:  # H8: a seed drawn now, written back, so that a turn replays
        data["seed"] = secrets.randbelow(10**9)
    battle = _load(data, problems, where)
    if len(battle.sides) > rd.lay.block("Battle_Sides").rows:
        _raise([Problem(where["units"], f"the tracker holds {rd.lay.block('Battle_Sides').rows} sides; this battle "
                                        f"has {len(battle.sides)}: make a new tracker with sheetsync new OUT "
                                        "--from battle.yaml")])
    done = _commit(rd, "build", 1, battle, offsets)
    name = ACTION_NAMES["build"]
    seed_cell = rd.lay.cells["Battle_Seed"]
    updates = [*_view_updates(rd.lay, battle, offsets, last_action=name), done.update,
               RangeUpdate(f"{seed_cell.sheet}!{seed_cell.address}", [[battle.seed]]),
               table.block_fill(rd.lay.block("Report_Table"), []),
               _log(rd.lay, [{"turn": 1, "kind": "build", "details": f"{len(units)} units of "
                              f"{', '.join(battle.sides)} on a {battle.map.columns}x{battle.map.rows} map",
                              "rule": "H1, H2", "step": done.token}])]
    msg = (f"{name}: {len(units)} units of {', '.join(battle.sides)} on a {battle.map.columns}x{battle.map.rows} "
           "map; type turn 1's moves and attacks, then Resolve Turn")
    return _report("build", 1, msg, updates), updates


def _turn_data(rd: _Read, number: int, pending: _Pending, where: dict[str, str],
               problems: list[Problem]) -> dict[str, Any]:
    initiative = rd.cell("Battle_Initiative")
    where["turn.initiative"] = "Battle!B4"
    turn: dict[str, Any] = {"number": number, "moves": [m for _, m in pending.moves],
                            "attacks": [a for _, a in pending.attacks]}
    if isinstance(initiative, Formula):
        table.decode(Column("initiative", "Initiative", codec_=rd.lay.cells["Battle_Initiative"].codec),
                     initiative, "Battle!B4", problems)
    elif _plain(initiative) is not None:
        turn["initiative"] = str(_plain(initiative))
    return turn


def _load(data: dict[str, Any], problems: list[Problem], where: dict[str, str], *,
          known: Battle | None = None) -> Battle:
    """The battle of ``data``; ``known``, the stored battle ``data`` was made from (issue 23:
    its units are not read again, :func:`load_battle`)."""
    try:
        battle = load_battle(data, known=known)
    except InputError as err:
        # a loader problem on a cell whose value was already refused is that mistake again
        said = {p.where for p in problems}
        _raise([*problems, *(p for p in table.relocate(err.problems, where) if p.where not in said)])
        raise
    _raise(problems)
    return battle


def _resolve(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """1.0, H3-H9: the stored battle and the pending orders, resolved."""
    stored = _stored(rd)
    if rd.session.extra.get("ended"):
        raise BattleStateError("the battle has ended (End Battle wrote the report): Undo Turn reopens it")
    offsets = _offsets(rd, stored)
    problems = _below(rd, list(TYPED))  # issue 26, item 3: listed with the Units rows' own problems
    try:
        _check_units(rd, stored, offsets)
    except InputError as err:
        _raise([*err.problems, *problems])
    where: dict[str, str] = {"units": f"Units!A{rd.lay.block('Units_Table').first_row}"}
    pending = _pending(rd, problems, where)
    if not pending.moves and not pending.attacks and not problems:
        raise BattleStateError(f"no pending moves or attacks for turn {stored.turn}: type them on the Moves and "
                               "Attacks sheets (rows with a blank Turn)")
    data = dict(rd.session.battle or {})
    data["house_rules"] = _house_rules(rd, problems, where)  # read at every resolve, as typed now
    warnings = _changed_since_build(rd, data)
    data["turn"] = _turn_data(rd, stored.turn, pending, where, problems)
    battle = _load(data, problems, where, known=stored)  # data: the stored battle's, its turn typed now
    result = resolve_turn(battle)
    lay = rd.lay
    done = _commit(rd, "resolve", battle.turn, result.battle, offsets)
    mb, ab = lay.block("Moves_Table"), lay.block("Attacks_Table")
    updates: list[RangeUpdate] = []
    stamps: dict[str, list[list[Any]]] = {"moves": [], "attacks": []}
    for order, res in views.move_results(result).items():
        stamps["moves"].append([pending.moves[order][0], {k: res[k] for k in _MOVE_RESULTS}])
    for order, res in views.attack_results(result).items():
        off = pending.attacks[order][0]
        row = {k: res[k] for k in _ATTACK_SPAN}
        if res["roll"] is None:  # refused: no die was rolled; a typed one stays as typed
            row["roll"] = pending.raw_attacks[off].get("roll")
        stamps["attacks"].append([off, row])
    for block, taken, spans in ((mb, stamps["moves"], _MOVE_RESULTS), (ab, stamps["attacks"], _ATTACK_SPAN)):
        turns = table.row_updates(block, [(off, {"turn": battle.turn}) for off, _ in taken], keys=["turn"])
        for turn, spanned in zip(turns, table.row_updates(block, [(off, row) for off, row in taken], keys=spans),
                                 strict=True):
            updates += [turn, spanned]  # each run of rows' Turns, then their results
    name = f"{ACTION_NAMES['resolve']} {battle.turn}"
    # issue 26: the record keeps the rows the turn stamped, so a lost Undo's can be put back
    base = result.battle.history[-1].model_dump(mode="json", exclude_defaults=True)
    record = {**base, _STAMPS: stamps}
    if len(json.dumps(record, separators=(",", ":"), ensure_ascii=False)) > ss.CHUNK:
        # a turn too large for its stamps to share the record's one cell: the record is kept
        # without them, and a lost Undo of this turn is reported but its rows are not re-stamped
        record = base
    updates += [*_view_updates(lay, result.battle, offsets, last_action=name), done.update,
                ss.record_update(done, record), _log(lay, views.log_rows(result, done.token))]
    events = result.events
    refused = sum(1 for e in events if e.outcome == "refused")
    hits = sum(1 for e in events if isinstance(e, AttackEvent) and e.outcome == "hit")
    moves = sum(1 for e in events if e.kind == "move" and e.outcome == "moved")
    msg = (f"{name}: {moves} moved, {hits} hit" + (f", {refused} refused" if refused else "")
           + f"; {views.status(result.battle)}")
    report = _report("resolve", battle.turn, msg, updates, result=result)
    report.warnings = warnings
    return report, updates


def _changed_since_build(rd: _Read, data: Mapping[str, Any]) -> list[str]:
    """H2, H8: the map and the dice seed are the ones built (the seed makes a turn replay
    the same after Undo); a change typed in their cells later is named, not silently
    used or dropped."""
    problems: list[Problem] = []
    cells = rd.lay.cells
    built = data.get("map") or {}
    typed = {
        "Battle_MapColumns": (table.read_cell(cells["Battle_MapColumns"], rd.cell("Battle_MapColumns"), problems),
                              built.get("columns")),
        "Battle_MapRows": (table.read_cell(cells["Battle_MapRows"], rd.cell("Battle_MapRows"), problems),
                           built.get("rows")),
        "Battle_Impassable": (tuple(table.read_cell(cells["Battle_Impassable"], rd.cell("Battle_Impassable"),
                                                    problems) or ()), tuple(built.get("impassable") or ())),
        "Battle_Seed": (_plain(rd.cell("Battle_Seed")), data.get("seed")),
    }
    out = []
    for name, (now, then) in typed.items():
        if now != then and not (name == "Battle_Impassable" and set(now) == set(then)):
            c = cells[name]
            shown = " ".join(then) if isinstance(then, tuple) else then
            out.append(f"{c.sheet}!{c.address} ({c.label}) was changed after Build Units; the battle keeps "
                       f"{shown!r}: Build Units again before the first turn, or start a new tracker")
    return out


def _torn(rd: _Read) -> None:
    """Issue 22.3: a step cut short, whose changes reached the visible sheets but whose
    State write (applied last) never did, is found before the next step reads anything
    else, and put right or named.

    The State is the battle; every step rewrites ``Battle!B3`` (the turn to resolve) from
    the battle it commits, and a resolve stamps its rows with the turn it resolved.  So
    rows stamped with the State's turn or later, or ``B3`` one turn ahead, are a Resolve
    Turn that never committed: its rows are made pending again and the sheets redrawn from
    the State.  ``B3`` one turn behind is an Undo Turn that never committed: it is
    completed (its rows are already pending).  Either way the step clicked is refused
    with the repair as its one write (:class:`StepRefused`), and says what happened."""
    if rd.session.battle is None or rd.session.extra.get("ended"):
        return
    stored = _stored(rd)
    shown = _plain(rd.cell("Battle_Turn"))
    problems: list[Problem] = []
    pending = _pending(rd, problems, {})
    ahead = sorted(t for t in {*pending.stamped_moves, *pending.stamped_attacks}
                   if isinstance(t, int) and t >= stored.turn)
    where = f"{rd.lay.cells['Battle_Turn'].sheet}!{rd.lay.cells['Battle_Turn'].address}"
    if ahead or shown == stored.turn + 1:
        name = f"{ACTION_NAMES['resolve']} {stored.turn}"
        msg = (f"{name} was cut short: its changes reached the sheets but not the State sheet, which holds the "
               f"battle (a click whose changes were not all applied). Nothing of it counts: the sheets are put back "
               f"to turn {stored.turn} as the State holds it, and its moves and attacks are pending again. "
               f"Click {ACTION_NAMES['resolve']} to resolve it.")
        offsets = _offsets(rd, stored)
        updates = [*_unstamp(rd.lay, pending, ahead),
                   *_view_updates(rd.lay, stored, offsets, last_action=f"{name} cut short: put back"),
                   _log(rd.lay, [{"turn": stored.turn, "kind": "repair", "details": msg}])]
        raise StepRefused(msg, updates)
    if shown == stored.turn - 1 and stored.turn > 1:
        report, updates = _undo(rd, orders_pending=True)
        name = f"{ACTION_NAMES['undo']} {stored.turn - 1}"
        msg = (f"{name} was cut short: its changes reached the sheets but not the State sheet (a click whose "
               f"changes were not all applied). It is completed now: {report.message}. Click again for the next "
               "step.")
        raise StepRefused(msg, updates)
    if isinstance(shown, int) and not isinstance(shown, bool) and shown != stored.turn:
        raise BattleStateError(f"{where} shows turn {shown}, but the State sheet holds turn {stored.turn}: the sheets "
                               "and the battle disagree. Restore the previous copy (the .bak file, or the Google "
                               "Sheet's version history)")


def _undo(rd: _Read, *, orders_pending: bool = False) -> tuple[StepReport, list[RangeUpdate]]:
    """Undo the last resolved turn from its record (or reopen an ended battle).
    ``orders_pending``: the turn's rows are pending already (an undo cut short, completed
    by :func:`_torn`), so none is typed in again."""
    stored = _stored(rd)
    lay = rd.lay
    offsets = _offsets(rd, stored)
    if rd.session.extra.get("ended"):
        done = _commit(rd, "undo", stored.turn, stored, offsets, ended=False)
        name = "Reopen Battle"
        reopen = [*_view_updates(lay, stored, offsets, last_action=name), done.update,
                  table.block_fill(lay.block("Report_Table"), []),
                  _log(lay, [{"turn": stored.turn, "kind": "undo", "details": "Undo End Battle: the battle is open "
                              "again", "step": done.token}])]
        return _report("undo", stored.turn, f"{name}: the report is cleared; {views.status(stored)}", reopen), reopen
    record_row = rd.session.undo_record(stored.turn - 1)
    if record_row is None or stored.turn == 1:
        raise BattleStateError("nothing to undo: no turn of this battle has been resolved yet")
    if record_row.problem:
        raise SheetFormatError([Problem(record_row.where, f"{record_row.problem}: restore the previous copy")])
    try:
        record = UndoRecord.model_validate(_undo_data(record_row.data))
    except ValueError:
        raise SheetFormatError([Problem(record_row.where, "this undo record is not sheetsync's: restore the "
                                                          "previous copy")]) from None
    if record.turn != stored.turn - 1:
        raise SheetFormatError([Problem(record_row.where, f"this undo record is of turn {record.turn}, not of the "
                                        f"last turn resolved ({stored.turn - 1}): restore the previous copy")])
    before = undo(stored.model_copy(update={"history": (record,)}))
    problems: list[Problem] = []
    pending = _pending(rd, problems, {})  # the stamped rows (a bad pending cell is not undo's business)
    updates = _unstamp(rd.lay, pending, [record.turn])
    if not pending.stamped_moves.get(record.turn) and not pending.stamped_attacks.get(record.turn) \
            and not orders_pending:
        updates += _orders_again(rd, record)
    done = _commit(rd, "undo", record.turn, before, offsets)
    name = f"{ACTION_NAMES['undo']} {record.turn}"
    updates += [*_view_updates(lay, before, offsets, last_action=name), done.update,
                *(ss.undone_update(r) for r in rd.session.same_step(record_row)),
                _log(lay, [{"turn": record.turn, "kind": "undo", "details": name, "step": done.token}])]
    msg = f"{name}: the units stand as before turn {record.turn}, and its orders are pending again"
    return _report("undo", record.turn, msg, updates), updates


def _unstamp(lay: Any, pending: _Pending, turns: Sequence[int]) -> list[RangeUpdate]:
    """The Moves and Attacks rows stamped with ``turns`` pending again: Turn and results
    blank, the live odds back, a die sheetsync rolled cleared (a typed one kept, H8)."""
    mb, ab = lay.block("Moves_Table"), lay.block("Attacks_Table")
    updates: list[RangeUpdate] = []
    for turn in turns:
        for off in pending.stamped_moves.get(turn, []):
            updates.append(table.block_update(mb, [{"turn": None}], off, keys=["turn"]))
            updates.append(table.block_update(mb, [{}], off, keys=_MOVE_RESULTS))
        for off, raw in pending.stamped_attacks.get(turn, []):
            row: dict[str, Any] = {k: f for k, f in _formulas(lay, ab, off).items() if k in _ATTACK_SPAN}
            source = raw.get("roll_source")
            row["roll"] = None if isinstance(source, str) and source.strip() == "Rolled" else raw.get("roll")
            updates.append(table.block_update(ab, [{"turn": None}], off, keys=["turn"]))
            updates.append(table.block_update(ab, [row], off, keys=_ATTACK_SPAN))
    return updates


_STAMPS = "stamps"
"""The key of an undo record row that holds the rows its turn stamped (issue 26)."""


def _undo_data(data: Any) -> Any:
    """An undo record row's data as the engine's :class:`UndoRecord` (without the stamps)."""
    return {k: v for k, v in data.items() if k != _STAMPS} if isinstance(data, dict) else data


def _name(action: str, turn: int) -> str:
    label = ACTION_NAMES.get(action, action)
    return f"{label} {turn}" if action in ("resolve", "undo") else label


def _journal(rd: _Read) -> tuple[list[RangeUpdate], str]:
    """Issue 26, item 2: the State's journal checked against the Log before every step
    (:func:`sheetsync.sheets.lost_steps.session_guard`), as the battalion tracker does."""
    if rd.session.battle is None:
        return [], ""
    turn = rd.session.battle.get("turn")
    number = turn.get("number", 1) if isinstance(turn, dict) else 1
    return sj.session_guard(rd.session, rd.lay, rd.log, name=_name, where=f"turn {number}",
                            repair=lambda lost, msg: _repair(rd, _stored(rd), lost, msg))


def _repair(rd: _Read, stored: Battle, lost: Sequence[sj.Lost], msg: str) -> list[RangeUpdate]:
    """What steps lost to a simultaneous one left behind, put right from the State that
    stands (issue 26, item 2): rows stamped with a turn the State has not resolved are
    pending again (a lost Resolve Turn); the rows of a turn a lost Undo Turn made pending
    are stamped again from their undo record, whose ``undone`` mark is cleared; the Units,
    Map and Battle status are the State's, and a lost End Battle's report is cleared.  The
    blob records the report, so the next step goes ahead."""
    lay = rd.lay
    offsets = _offsets(rd, stored)
    pending = _pending(rd, [], {})
    turns = sorted(t for t in {*pending.stamped_moves, *pending.stamped_attacks} if t >= stored.turn)
    updates = _unstamp(lay, pending, turns)
    mb, ab = lay.block("Moves_Table"), lay.block("Attacks_Table")
    for x in lost:
        if x.action != "undo" or x.phase >= stored.turn:
            continue
        marked = [r for r in rd.session.records if r.undone and rd.session.accepted(r)
                  and isinstance(r.data, dict) and r.data.get("turn") == x.phase]
        standing = [r for r in rd.session.records if not r.undone and rd.session.accepted(r)
                    and isinstance(r.data, dict) and r.data.get("turn") == x.phase]
        if standing or not marked:
            continue
        rec = max(marked, key=lambda r: (r.rev, r.row))
        updates += [RangeUpdate(f"State!F{r.row}", [[None]]) for r in rd.session.same_step(rec)]
        stamps = rec.data.get(_STAMPS) or {}
        for block, key in ((mb, "moves"), (ab, "attacks")):
            for off, cells in stamps.get(key, []):
                updates.append(table.block_update(block, [{"turn": x.phase}], off, keys=["turn"]))
                updates.append(table.block_update(block, [cells], off, keys=list(cells)))
    ended = bool(rd.session.extra.get("ended"))
    done = ss.commit(rd.session, mark=MARK, action="repair", turn=stored.turn, battle=_file(stored),
                     extra=dict(rd.session.extra), blob_range=lay.block("State_Blob").range(),
                     reported=[x.key for x in lost])
    updates += [*_view_updates(lay, stored, offsets, ended=ended, last_action=msg[:45000]), done.update,
                _log(lay, [{"turn": stored.turn, "kind": "repair", "outcome": "refused", "details": msg,
                            "step": done.token}])]
    if any(x.action == "end" for x in lost) and not ended:
        updates.append(table.block_fill(lay.block("Report_Table"), []))
    return updates


def _free(block: Any, grid: Grid, count: int) -> list[int]:
    used = {r.offset for r in _rows(block, grid, [])}
    free = [i for i in range(block.rows or 0) if i not in used][:count]
    if len(free) < count:
        raise BattleStateError(f"the {block.sheet} sheet has no room for the {count} orders of the turn undone: "
                               "clear some old rows")
    return free


def _orders_again(rd: _Read, record: UndoRecord) -> list[RangeUpdate]:
    """A turn resolved before the battle came to this tracker (its history in the battle
    file) has no rows here: undoing it types its orders into free rows, pending again."""
    lay = rd.lay
    mb, ab = lay.block("Moves_Table"), lay.block("Attacks_Table")
    out = []
    for off, m in zip(_free(mb, rd.moves, len(record.orders.moves)), record.orders.moves, strict=True):
        out.append(table.block_update(mb, [{"unit": m.unit, "to": m.to, "path": m.path}], off,
                                      keys=["unit", "path"]))
    for off, a in zip(_free(ab, rd.attacks, len(record.orders.attacks)), record.orders.attacks, strict=True):
        row = {"defender": a.defender, **{f"attacker{j + 1}": n for j, n in enumerate(a.attackers)}, "roll": a.roll}
        out.append(table.block_update(ab, [row], off, keys=["defender", "roll"]))
    return out


def _end(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """H12: the report."""
    stored = _stored(rd)
    lay = rd.lay
    offsets = _offsets(rd, stored)
    report = aftermath(stored)
    done = _commit(rd, "end", stored.turn, stored, offsets, ended=True)
    name = ACTION_NAMES["end"]
    updates = [*_view_updates(lay, stored, offsets, ended=True, last_action=name), done.update,
               table.block_fill(lay.block("Report_Table"), views.report_rows(report)),
               _log(lay, [{"turn": stored.turn, "kind": "end", "rule": "H12", "step": done.token,
                           "details": f"End Battle after turn {stored.turn - 1}"
                                      + (f": {report.survivor} holds the field" if report.survivor else "")}])]
    msg = f"{name}: the report is on the Report sheet; {views.status(stored, ended=True)}"
    return _report("end", stored.turn, msg, updates, aftermath_=report.to_json()), updates


def _whole(step: Any) -> Any:
    """``step`` after the check for a step cut short (:func:`_torn`, issue 22.3)."""
    def checked(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
        _torn(rd)
        out: tuple[StepReport, list[RangeUpdate]] = step(rd)
        return out

    checked.__doc__ = step.__doc__
    return checked


_STEPS = {"build": _build, "resolve": _whole(_resolve), "undo": _whole(_undo), "end": _whole(_end)}


def capacity_for(battle: Battle) -> dict[str, int]:
    """A tracker with room for ``battle``: its map, half as many units again as it has (for
    reinforcements typed later), two moves and one attack a unit, its sides; the Map area
    is exactly the battle's map.  The headroom stops at
    :data:`~sheetsync.systems.hexwar.tracker.layout.MAX_CAPACITY`; only a battle that itself holds more
    than that is refused, naming the limit and what the battle has (issue 26)."""
    from sheetsync.systems.hexwar.tracker.layout import CAPACITY, MAX_CAPACITY

    units = len(battle.units)
    need = {"units": units, "moves": len(battle.orders.moves), "attacks": len(battle.orders.attacks),
            "map_columns": battle.map.columns, "map_rows": battle.map.rows, "sides": len(battle.sides)}
    too_big = [Problem(key.replace("map_", "map."), f"a tracker holds at most {MAX_CAPACITY[key]} "
                                                   f"{key.replace('_', ' ')}; this battle needs {n}")
               for key, n in need.items() if n > MAX_CAPACITY[key]]
    if too_big:
        raise InputError(too_big)
    want = {**need, "units": -(-units * 3 // 2), "moves": max(2 * units, need["moves"]),
            "attacks": max(units, need["attacks"])}
    # the Map area is drawn to the battle's own map; the tables keep at least a blank
    # tracker's room, and their headroom stops at the most a tracker holds
    return {key: n if key.startswith("map_") else min(MAX_CAPACITY[key], max(CAPACITY[key], n))
            for key, n in want.items()}


def _size_cell(unit: Any) -> str | None:
    """H1: the Size cell of a unit: its word as typed when the Size list has it (squadron),
    else the usual word for its size."""
    return unit.size_name if unit.size_name == "squadron" else views.size_word(unit.size)


def _load_into(lay: Any, battle: Battle, rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """The battle's inputs (Units, map, seed, House Rules, the turn's orders as pending
    rows) and everything a build writes, as one write.  A battle that does not fit the
    tracker is refused naming the limit."""
    from sheetsync.sheets.marks import mark_updates
    from sheetsync.systems.hexwar.system import SYSTEM

    _fits(lay, battle)
    ub, mb, ab = lay.block("Units_Table"), lay.block("Moves_Table"), lay.block("Attacks_Table")
    computed = views.unit_rows(battle)
    units = []
    for u, comp in zip(battle.units, computed, strict=True):
        units.append({"name": u.name, "side": u.side, "counter": str(u.counter), "start_hex": u.hex,
                      "size": _size_cell(u), "men": u.men, **comp})
    moves = [{"unit": m.unit, "to": m.to, "path": m.path} for m in battle.orders.moves]
    attacks: list[dict[str, Any]] = []
    for i in range(ab.rows or 0):
        row: dict[str, Any] = dict(_formulas(lay, ab, i))
        if i < len(battle.orders.attacks):
            a = battle.orders.attacks[i]
            row.update({"defender": a.defender, "roll": a.roll,
                        **{f"attacker{j + 1}": name for j, name in enumerate(a.attackers)}})
        attacks.append(row)
    house = []
    values = views.house_rule_values(battle.house_rules)
    for key, _shown, default, ruling in house_rule_rows():
        house.append({"key": key, "value": values.get(key), "default": default, "ruling": ruling})
    offsets = list(range(len(battle.units)))
    history = list(battle.history)
    old = rd.session.records
    done = ss.commit(ss.Session(rev=rd.session.rev, steps=rd.session.steps), mark=MARK, action="new",
                     turn=battle.turn, battle=_file(battle), extra={"rows": offsets, "ended": False},
                     blob_range=lay.block("State_Blob").range())
    name = ACTION_NAMES["new"]
    seed = battle.seed
    updates = [
        *mark_updates(SYSTEM, lay.capacity),
        *ss.clear_records(old),
        table.block_fill(ub, [*units]),
        table.block_fill(mb, moves),
        table.block_fill(ab, attacks),
        table.block_fill(lay.block("HouseRules_Table"), house),
        RangeUpdate(BATTLE_RANGE, [[battle.turn], [battle.orders.initiative], [views.status(battle)], [name],
                                   [seed], [None], [battle.map.columns], [battle.map.rows],
                                   [" ".join(battle.map.impassable) or None]]),
        *_view_updates(lay, battle, offsets, last_action=name)[1:3],
        done.update,
        table.block_fill(lay.block("Report_Table"), []),
        *[ss.record_update(done, r.model_dump(mode="json", exclude_defaults=True)) for r in history],
        _log(lay, [{"turn": battle.turn, "kind": "new", "rule": "H1, H2", "step": done.token,
                    "details": f"{len(battle.units)} units of {', '.join(battle.sides)} on a "
                               f"{battle.map.columns}x{battle.map.rows} map"}]),
    ]
    msg = (f"{name}: {len(battle.units)} units of {', '.join(battle.sides)}; "
           f"{views.status(battle)}")
    return _report("new", battle.turn, msg, updates), updates


def _check(rd: _Read) -> Any:
    """H4, H6, H7 dry run: the pending moves and attacks resolved on a copy with dice that
    do not matter; each refusal is mapped back to its cell (a ``CheckReport``)."""
    from sheetsync.sheets.steps import CheckReport, Refusal

    lay = rd.lay
    stored = _stored(rd)
    problems = _below(rd, list(TYPED))  # issue 26, item 3: what a resolve would refuse
    where: dict[str, str] = {"units": f"Units!A{lay.block('Units_Table').first_row}"}
    pending = _pending(rd, problems, where)
    data = dict(rd.session.battle or {})
    data["house_rules"] = _house_rules(rd, problems, where)
    data["turn"] = _turn_data(rd, stored.turn, pending, where, problems)
    try:
        battle = _load(data, problems, where, known=stored)
    except InputError as err:
        return CheckReport(stored.turn, len(pending.moves) + len(pending.attacks),
                           [Refusal(p.where, "", "cell", p.message) for p in err.problems], bad_cells=True)
    from sheetsync.systems.hexwar.system import SYSTEM

    orders, refused = SYSTEM.check_file(battle)
    return CheckReport(stored.turn, orders, [Refusal(where.get(path, path), who, kind, why)
                                             for path, who, kind, why in refused])


def _export(rd: _Read) -> dict[str, Any]:
    """The battle as a battle file's data (with the undo history, so ``sheetsync undo FILE``
    works on it), and its turn."""
    battle = _stored(rd)
    history = []
    for r in rd.session.history():
        if r.data is not None and not r.problem:
            history.append(UndoRecord.model_validate(_undo_data(r.data)))
    data = battle_to_file(battle.model_copy(update={"history": tuple(history)}))
    return {"system": "hexwar", "battle": data, "turn": battle.turn, "ended": bool(rd.session.extra.get("ended"))}


STAMPS = {"Moves_Table": "turn", "Attacks_Table": "turn"}
"""H8: the tables a Resolve Turn stamps with the turn it resolved; the next one reads them
from their first row not stamped (issue 23, :mod:`sheetsync.sheets.read_from`)."""


class HexSteps(LayoutSteps):
    """The hex wargame's :class:`~sheetsync.core.system.TrackerSteps` at ``capacity`` (a blank
    tracker's by default): every step (build H1, H2; resolve 1.0, H3-H9; undo; end H12) a
    pure function of the one read of :meth:`read_plan`, run by the use-case envelope
    (:mod:`sheetsync.app.usecases`)."""

    title = "the hex wargame"
    hooks = LayoutHooks(step_layouts(layout), _plan, _parse, _STEPS, _check, _export, _load_into, _journal, STAMPS)


run, load_into = HexSteps.run, HexSteps.load_into
check, export = HexSteps.check_tracker, HexSteps.export_tracker
