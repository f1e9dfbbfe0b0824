"""The Exalted mass-combat tracker's steps (build, resolve, undo, end) on any backend: one
``read_ranges`` and one ``write_ranges`` per step (DESIGN "Several rule systems on one seam").

* **build** (X1-X11): the Characters, Units and House Rules sheets are read into a battle
  file and checked by :func:`~sheetsync.systems.exalted.files.loader.load_battle`; the battle is
  stored before Join War, and the computed Units columns, the Sides, the Ticks board and the
  pending orders' odds are written.  Only before the first long tick is resolved.
* **resolve** (E4-E6, X17-X39): the stored battle (the units' standing comes from the
  State, never from the Units inputs) and the *pending* Orders rows (Resolved blank) go to
  :func:`~sheetsync.systems.exalted.rules.battle.resolve`; the rows of the long tick are stamped
  with it and get their outcome, the Log gets a row per event, and one undo record is
  appended to the State.
* **undo**: the newest undo record restores the units as they were, and the tick's rows
  are pending again.
* **end** (X40, X41): the Aftermath sheet; a later resolve is refused, an undo reopens.

Each step that writes the pending orders writes what their odds depend on (the pool, the
successes added, the external penalty, the DV and the damage figures, E1, E7, X28-X33) as
the engine's own values, with the live formulas beside them that derive the successes
needed, the exact chance of a hit and the expected levels
(:mod:`sheetsync.systems.exalted.tracker.formulas`); a resolved row keeps its odds before the roll.

Every bad cell is reported at once, by address (``Orders!G5: die 2: 11 is not a d10 face
...``), and nothing is written when anything is wrong.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sheetsync.core.errors import BattleStateError, InputError, Problem, SheetFormatError
from sheetsync.core.layout import step_layouts
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
from sheetsync.systems.exalted.files.loader import battle_to_file, load_battle
from sheetsync.systems.exalted.rules.battle import resolve, undo
from sheetsync.systems.exalted.rules.models import HouseRules
from sheetsync.systems.exalted.rules.state import Battle, UndoRecord
from sheetsync.systems.exalted.tracker import cells as views
from sheetsync.systems.exalted.tracker.formulas import ODDS_KEYS
from sheetsync.systems.exalted.tracker.layout import (
    HOUSE_RULE_NOTES,
    MAX_CAPACITY,
    RoutPair,
    house_rule_rows,
    layout,
)

__all__ = ["ACTION_NAMES", "ExaltedSteps", "capacity_for", "check", "export", "load_into", "run"]

MARK = "exalted@1"
ACTION_NAMES = {"build": "Build Units", "resolve": "Next Tick", "undo": "Undo Tick", "end": "End Battle",
                "new": "Load"}
BATTLE_RANGE = "Battle!B3:B6"
"""The Battle sheet's named cells, read and written as one column (B3 tick ... B6 seed)."""

_WEAPON = {"close_weapon": ("close_weapon", "name"), "close_ability": ("close_weapon", "ability"),
           "close_accuracy": ("close_weapon", "accuracy"), "close_damage": ("close_weapon", "damage"),
           "close_damage_type": ("close_weapon", "damage_type"), "close_defense": ("close_weapon", "defense"),
           "close_speed": ("close_weapon", "speed"), "ranged_weapon": ("ranged_weapon", "name"),
           "ranged_ability": ("ranged_weapon", "ability"), "ranged_accuracy": ("ranged_weapon", "accuracy"),
           "ranged_damage": ("ranged_weapon", "damage"), "ranged_damage_type": ("ranged_weapon", "damage_type"),
           "ranged_speed": ("ranged_weapon", "speed")}
"""E7-E9: the Characters columns that make a character's two weapons."""
_CHAR_PLAIN = ("name", "role", "dexterity", "strength", "stamina", "charisma", "wits", "essence", "valor",
               "willpower", "abilities", "mortal", "shield_dv", "armor_soak", "hardness", "extra", "health_track")
_UNIT_PLAIN = ("name", "side", "commander", "solo", "formation", "drill", "might", "might_bonus", "avg_dexterity",
               "avg_strength", "avg_stamina", "avg_valor", "perfect_morale", "close_weapons", "close_ability",
               "close_accuracy", "close_damage", "close_damage_type", "ranged_weapons", "ranged_ability",
               "ranged_accuracy", "ranged_damage", "ranged_damage_type", "avg_lethal_soak",
               "avg_mobility", "avg_fatigue", "rested", "hardness_avg", "hardness_min", "shields", "ranged_kind",
               "mount", "steed_valor", "named_members", "ammunition", "fortified", "cover", "join_war")
_TERRAIN = ("ammunition", "fortified", "cover")
"""X16, X31: the Units columns of the battle unit itself (not its traits): its arrows, its
fortified position and its cover."""
_SPECIAL = ("heroes", "sorcerers", "relays")
_ORDER_INPUTS = ("tick", "unit", "action", "target", "option", "weather", "dice", "target_dice", "damage_dice",
                 "rout_dice", "exhaustion_dice", "target_exhaustion_dice")
_ODDS = (*views.ODDS_INPUTS, *ODDS_KEYS)
"""E1, E7, X28-X33: the odds columns: the values the steps write, then the live formulas."""
_RESULTS = ("resolved", "outcome", "result")
HEROIC = "Heroic mortal"
_TOUCH = ("Ticks!A1:A1", "Aftermath!A1:A1")
"""One cell of each sheet a step writes but need not read (Google Sheets brings the sheet
ids the write needs with the read).  The Log's Step column is read whole: the State's
journal is checked against it (issue 26)."""


# -- reading ---------------------------------------------------------------------------------

@dataclass
class _Read:
    lay: Any
    battle: Grid
    chars: Grid
    units: Grid
    orders: Grid
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


TYPED = {"Characters_Table": "characters", "Units_Table": "units", "Orders_Table": "orders",
         "HouseRules_Table": "house rules"}
"""The blocks a Tracker types into, in the read's order, and what a row of each is: each
is read to the end of its sheet, so a row typed below it is refused, not dropped (issue
26, item 3)."""


def _plan(lay: Any) -> list[str]:
    from sheetsync.sheets.marks import MARK_RANGE

    b = lay.blocks
    return [MARK_RANGE, BATTLE_RANGE, *(table.read_past(b[name]) for name in TYPED),
            *ss.read_ranges(b["State_Blob"].range()), _TOUCH[0], sj.step_column(b["Log_Table"]), _TOUCH[1]]


def _parse(lay: Any, grids: Sequence[Grid]) -> _Read:
    mark = grids[0]
    value = mark[0][0] if mark and mark[0] else None
    if value not in (None, "") and str(value).split("@")[0] != "exalted":
        raise SheetFormatError([Problem("State!B1", f"says {value!r}: this is not an Exalted tracker")])
    session = ss.parse(grids[6], grids[7], blob_range=lay.block("State_Blob").range(), mark=MARK)
    log = grids[9] if len(grids) > 9 else []
    below: dict[str, Grid] = {}
    chars, units, orders, house = (_own(lay, name, grid, below) for name, grid in zip(TYPED, grids[2:6], strict=True))
    return _Read(lay, grids[1], chars, units, orders, house, session, log, below)


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
    if problems:
        raise InputError(list(problems))


def _plain(value: CellValue) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return value.strip() or None
    return value


def _seed(rd: _Read, problems: list[Problem]) -> Any:
    """E1: the dice seed (a formula refused, naming the cell)."""
    cell = rd.lay.cells["Battle_Seed"]
    seed = rd.cell("Battle_Seed")
    if isinstance(seed, Formula):
        problems.append(Problem(f"Battle!{cell.address}", f"dice seed: a formula ({seed.text}) is not allowed "
                                                          "here; type a whole number or text"))
        return None
    seed = _plain(seed)
    return None if isinstance(seed, bool) else seed


def _house_rules(rd: _Read, problems: list[Problem], where: dict[str, str]) -> dict[str, Any]:
    """The House Rules values as typed (Yes / No for a flag); the loader checks each."""
    block = rd.lay.block("HouseRules_Table")
    fields = HouseRules.model_fields
    out: dict[str, Any] = {}
    for row in table.read_block(block, rd.house, problems, blank_keys=["key"]):
        key, raw = row.get("key"), row.raw.get("value")
        if key not in HOUSE_RULE_NOTES:
            continue
        at = block.cell(row.offset, "value")
        where[f"house_rules.{key}"] = at
        value = row.get("value")
        if isinstance(raw, Formula) or value is None:
            continue
        if fields[str(key)].annotation is bool and isinstance(value, str):
            word = value.strip().casefold()
            if word not in ("yes", "no", "true", "false"):
                problems.append(Problem(at, f"{key}: {value!r} should be Yes or No"))
                continue
            value = word in ("yes", "true")
        out[str(key)] = value
    return out


def _characters(rd: _Read, problems: list[Problem], where: dict[str, str]) -> list[dict[str, Any]]:
    """E7-E10: one battle-file character per non-blank Characters row."""
    block = rd.lay.block("Characters_Table")
    out: list[dict[str, Any]] = []
    for row in table.read_block(block, rd.chars, problems):
        i = len(out)
        where[f"characters[{i}]"] = block.cell(row.offset, "name")
        ch: dict[str, Any] = {}
        for key in _CHAR_PLAIN:
            where[f"characters[{i}].{key}"] = block.cell(row.offset, key)
            if row.values.get(key) is not None:
                value = row.values[key]
                ch[key] = list(value) if isinstance(value, tuple) else value
        for key, (weapon, part) in _WEAPON.items():
            where.setdefault(f"characters[{i}].{weapon}", block.cell(row.offset, weapon))
            where[f"characters[{i}].{weapon}.{part}"] = block.cell(row.offset, key)
            if row.values.get(key) is not None:
                ch.setdefault(weapon, {})[part] = row.values[key]
        if "ranged_weapon" in ch:
            ch["ranged_weapon"]["ranged"] = True
        out.append(ch)
    return out


def _units(rd: _Read, problems: list[Problem], where: dict[str, str]) -> tuple[list[dict[str, Any]], list[int]]:
    """X2-X11, X16, X31: one battle-file unit per non-blank Units row (headcount by kind,
    the averages, the special characters by role, its ammunition, fortified position and
    cover; the loader checks each, at its cell)."""
    block = rd.lay.block("Units_Table")
    inputs = [c.key for c in block.columns if c.is_input]
    out: list[dict[str, Any]] = []
    offsets: list[int] = []
    for row in table.read_block(block, rd.units, problems, keys=inputs):
        i = len(out)
        where[f"units[{i}]"] = block.cell(row.offset, "name")
        unit: dict[str, Any] = {}
        for key in _UNIT_PLAIN:
            where[f"units[{i}].{key}"] = block.cell(row.offset, key)
            value = row.values.get(key)
            if value is not None:
                unit[key] = list(value) if isinstance(value, tuple) else value
        members: list[dict[str, Any]] = []
        where[f"units[{i}].members"] = block.cell(row.offset, "extras")
        for key, group in (("extras", {"kind": "Extra"}), ("heroic", {"kind": HEROIC, "health_levels": 7})):
            if row.values.get(key) is not None:
                where[f"units[{i}].members[{len(members)}]"] = block.cell(row.offset, key)
                members.append({**group, "count": row.values[key]})
        if members:
            unit["members"] = members
        special: dict[str, Any] = {}
        where[f"units[{i}].special_characters"] = block.cell(row.offset, "heroes")
        for key in _SPECIAL:
            where[f"units[{i}].special_characters.{key}"] = block.cell(row.offset, key)
            if row.values.get(key):
                special[key] = list(row.values[key])
        if special:
            unit["special_characters"] = special
        out.append(unit)
        offsets.append(row.offset)
    where["units"] = f"Units!A{block.first_row}"
    return out, offsets


@dataclass
class _Orders:
    pending: list[tuple[int, dict[str, Any]]]
    """(row offset, battle-file order) of each pending row, in sheet order."""
    stamped: dict[int, int]
    """Row offset -> the long tick it was resolved on."""


def _orders(rd: _Read, problems: list[Problem], where: dict[str, str]) -> _Orders:
    """E5, E11: the Orders rows not yet resolved (Resolved blank) as the battle file's
    orders, each key mapped back to its cell; and the stamped rows."""
    out: _Orders = table.read_once(rd, _orders_rows, problems, where)  # the check for a step cut short reads them too
    return out


def _orders_rows(rd: _Read, problems: list[Problem], where: dict[str, str]) -> _Orders:
    block = rd.lay.block("Orders_Table")
    pending: list[tuple[int, dict[str, Any]]] = []
    stamped: dict[int, int] = {}
    rows = table.read_block(block, rd.orders, problems, keys=[*_ORDER_INPUTS, "resolved"],
                            blank_keys=[*_ORDER_INPUTS, "resolved"], stamp="resolved")
    for row in rows:
        if row.get("resolved") is not None:
            stamped[row.offset] = row["resolved"]
            continue
        if not table.is_blank(row.raw.get("resolved")):
            continue  # a bad Resolved cell: its problem is listed
        i = len(pending)
        where[f"orders[{i}]"] = block.cell(row.offset, "unit")
        order: dict[str, Any] = {}
        for key in _ORDER_INPUTS:
            where[f"orders[{i}].{key}"] = block.cell(row.offset, key)
            if row.values.get(key) is not None:
                order[key] = row.values[key]
        where[f"orders[{i}].own_rout_dice"] = block.cell(row.offset, "rout_dice")
        pair = order.get("rout_dice")
        if isinstance(pair, RoutPair):  # X43: the Rout dice cell types both checks of an engagement
            order.pop("rout_dice")
            order.update({k: v for k, v in (("rout_dice", pair.target), ("own_rout_dice", pair.own)) if v is not None})
        for key in ("tick", "unit", "action"):
            if key not in order and table.is_blank(row.raw.get(key)):
                problems.append(Problem(block.cell(row.offset, key), f"{block.column(key).header}: type the "
                                                                     "order's long tick, unit and action (E5)"))
        pending.append((row.offset, order))
    return _Orders(pending, stamped)


def _load(data: dict[str, Any], problems: list[Problem], where: Mapping[str, str], *,
          known: Battle | None = None) -> Battle:
    """The loader's problems mapped to their cells, with the cells' own problems first (a
    loader problem on a cell already refused is that mistake again).  ``known``: the
    stored battle ``data`` was made from (issue 23: with the same house rules, only the
    orders are read, :func:`load_battle`)."""
    try:
        battle = load_battle(data, known=known)
    except InputError as err:
        said = {p.where for p in problems}
        _raise([*problems, *(p for p in table.relocate(err.problems, where) if p.where not in said)])
        raise
    _raise(problems)
    return battle


def _stored(rd: _Read) -> Battle:
    if rd.session.battle is None:
        raise BattleStateError("this tracker has no units yet: fill in the Characters and Units sheets, then "
                               "Build Units")
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


def _history(rd: _Read) -> tuple[UndoRecord, ...]:
    """The undo records of the long ticks resolved so far, oldest first, each read and
    checked (a record sheetsync did not write is refused at its cell): what a battle file's
    history holds."""
    return tuple(_undo_record(r) for r in rd.session.history())


def _undo_record(r: ss.Record) -> UndoRecord:
    try:
        return UndoRecord.read(r.data.get("record") if isinstance(r.data, dict) else None).check()
    except ValueError:
        raise SheetFormatError([Problem(r.where, "this undo record is not sheetsync's: restore the previous "
                                                 "copy")]) from None


def _ticks_behind(rd: _Read) -> tuple[UndoRecord, ...]:
    """The history a Next Tick resolves on (issue 23).  E1 seeds a long tick's dice by how
    many records the history holds, and the tick appends its own; it reads no older record.
    So only the newest record is read and checked (the one Undo Tick takes next: a damaged
    one is refused at its cell, by Next Tick as by Undo Tick), and it stands in each place
    of the tuple for the count: a step does not parse the records of every tick behind it."""
    records = rd.session.history()
    return (_undo_record(records[-1]),) * len(records) if records else ()


_FILED: tuple[Battle, dict[str, Any]] | None = None
"""The last battle :func:`_file` wrote out, with its file data (a step's commit and its
odds both write out the battle it resolved: once is enough)."""


def _file(battle: Battle) -> dict[str, Any]:
    """The battle as the State stores it: its file data without orders and history (the
    orders live on the Orders sheet, the undo records beside the blob).  Its callers copy
    it before they change it."""
    global _FILED
    last = _FILED
    if last is not None and last[0] is battle:  # the very object, held here: its data as made
        return last[1]
    data = battle_to_file(battle.model_copy(update={"orders": (), "history": ()}))
    data.pop("history", None)
    data.pop("orders", None)
    _FILED = (battle, data)
    return data


# -- writing ---------------------------------------------------------------------------------

def _fits(lay: Any, battle: Battle, orders: int) -> None:
    """A battle larger than the tracker is refused, naming the limit: never drop a row."""
    sides = {u.spec.side for u in battle.units}
    checks = [("units", len(battle.units), lay.block("Units_Table").rows, "units"),
              ("characters", len(battle.characters), lay.block("Characters_Table").rows, "characters"),
              ("orders", orders, lay.block("Orders_Table").rows, "orders"),
              ("units", len(sides), lay.block("Battle_Sides").rows, "sides")]
    _raise([Problem(where, f"the tracker holds {limit} {what}; this battle has {have}: make a new tracker with "
                           "sheetsync new OUT --from battle.yaml")
            for where, have, limit, what in checks if have > limit])


def _formulas(lay: Any, offset: int) -> dict[str, Formula]:
    """E1, E7, X28-X33: the live odds formulas of Orders data row ``offset`` (``lay.formulas``)."""
    block = lay.block("Orders_Table")
    row = block.first_row + offset
    return {key: Formula(lay.formulas[f"{block.name}.{key}"](lay, row)) for key in ODDS_KEYS}


def _odds_updates(lay: Any, battle: Battle, pending: Sequence[tuple[int, dict[str, Any]]]) -> list[RangeUpdate]:
    """E1, E7, X28-X33: the odds columns of the pending rows: what the odds depend on, from
    ``battle`` with those orders (a row that can't be read yet keeps them blank), and the
    live formulas over them, written again so that a row always holds them."""
    if not pending:  # no row to write odds into: the battle need not be loaded with none
        return []
    block = lay.block("Orders_Table")
    data = {**_file(battle), "orders": [o for _, o in pending]}
    try:
        with_orders = load_battle(data)
    except InputError:
        return []
    odds = views.odds_rows(with_orders)
    out = []
    for i, (off, _order) in enumerate(pending):
        row = odds.get(i, dict.fromkeys((*views.ODDS_INPUTS, "result")))
        out.append(table.block_update(block, [{**{k: row.get(k) for k in (*views.ODDS_INPUTS, "result")},
                                               **_formulas(lay, off)}], off, keys=[*_ODDS, *_RESULTS]))
    return out


def _view_updates(lay: Any, battle: Battle, offsets: Sequence[int], pending: Sequence[tuple[int, dict[str, Any]]],
                  *, ended: bool = False, last_action: str = "") -> list[RangeUpdate]:
    """The Units computed columns, the Sides, the Ticks board, the pending odds and the
    Battle sheet's tick, status and last action."""
    ub = lay.block("Units_Table")
    keys = [c.key for c in ub.columns if not c.is_input]
    rows: list[dict[str, Any]] = [{} for _ in range(ub.rows)]
    for off, row in zip(offsets, views.unit_rows(battle), strict=True):
        rows[off] = row
    area = lay.areas["Ticks_Board"]
    typed = [(int(o["tick"]), str(o.get("unit")), str(o.get("action"))) for _, o in pending
             if isinstance(o.get("tick"), int)]
    return [
        table.block_update(ub, rows, keys=keys),
        table.block_fill(lay.block("Battle_Sides"), views.side_rows(battle)),
        RangeUpdate(area.range(), views.tick_board(battle, typed, area.rows, area.cols)),
        RangeUpdate("Battle!B3:B5", [[battle.tick], [views.status(battle, ended=ended)], [last_action or None]]),
        *_odds_updates(lay, battle, pending),
    ]


def _log(lay: Any, rows: Sequence[Mapping[str, Any]]) -> RangeUpdate:
    return table.append_update(lay.block("Log_Table"), rows)


def _commit(rd: _Read, action: str, tick: int, battle: Battle, offsets: Sequence[int],
            ended: bool = False) -> ss.Commit:
    return ss.commit(rd.session, mark=MARK, action=action, turn=tick, battle=_file(battle),
                     extra={"rows": list(offsets), "ended": ended}, blob_range=rd.lay.block("State_Blob").range())


def _offsets(rd: _Read, battle: Battle) -> list[int]:
    """Each unit's Units row as the State remembers it (a hand-edited one refused, issue 26)."""
    block = rd.lay.block("Units_Table")
    return ss.stored_rows(rd.session, len(battle.units), block.rows or 1_048_576,
                          blob_range=rd.lay.block("State_Blob").range())


def _room(rd: _Read, battle: Battle) -> int:
    """X23: the Units rows no unit holds: how many units may split off in the next tick."""
    return max(0, (rd.lay.block("Units_Table").rows or 0) - len(battle.units))


def _born(rd: _Read, before: Battle, after: Battle, offsets: Sequence[int]) -> tuple[list[tuple[int, dict[str, Any]]],
                                                                                     list[int]]:
    """X23: each unit split off in the tick takes the first free Units row (in the order
    they split): its typed columns as the split made it, and the offsets with its row."""
    free = [off for off in range(rd.lay.block("Units_Table").rows or 0) if off not in set(offsets)]
    rows: list[tuple[int, dict[str, Any]]] = []
    out = list(offsets)
    for i in range(len(before.units), len(after.units)):
        off = free[len(rows)]  # the engine was given only as many as there are free rows
        rows.append((off, _born_row(after, i)))
        out.append(off)
    return rows, out


def _born_row(battle: Battle, i: int) -> dict[str, Any]:
    """X23: the Units row of a unit split off during the battle (its members as extras:
    the headcount a split gives counts each member once; its standing lives in the State)."""
    u = battle.units[i]
    spec = u.spec
    row: dict[str, Any] = {}
    for key in set(_UNIT_PLAIN) - {"commander", "named_members", "join_war", *_TERRAIN}:
        value = getattr(spec, key)
        row[key] = value.value if hasattr(value, "value") else value
    row.update(commander=spec.commander.name, extras=sum(g.count for g in spec.members) or None,
               **{k: getattr(u, k) or None for k in _SPECIAL}, **{k: getattr(u, k) for k in _TERRAIN})
    return row


def _check_units(rd: _Read, battle: Battle, offsets: Sequence[int]) -> None:
    """The Units rows must still be the units Build Units placed (the standing lives in the
    State, row for row): a row renamed or added since is refused, naming its cell."""
    block = rd.lay.block("Units_Table")
    problems: list[Problem] = []
    rows = {r.offset: r for r in table.read_block(block, rd.units, problems, keys=["name"],
                                                  blank_keys=[c.key for c in block.columns if c.is_input])}
    fix = ("Build Units again before the first long tick" if not battle.started else
           "put it back, or Undo Tick back to the start and Build Units again")
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


def _report(action: str, tick: int, message: str, updates: list[RangeUpdate], *, result: Any = None,
            aftermath: dict[str, Any] | None = None) -> StepReport:
    return StepReport(action=action, phase=tick, message=message, result=result, aftermath=aftermath,
                      updates=updates)


# -- steps -----------------------------------------------------------------------------------

def _build(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """X1-X11: check the Characters, Units and House Rules (and the pending orders' cells)
    and store the battle before Join War (E4)."""
    if rd.session.battle is not None and (rd.session.history() or rd.session.battle.get("started")):
        raise BattleStateError("a long tick of this battle is resolved already: Undo Tick back to the start, or "
                               "make a new tracker")
    problems = _below(rd, list(TYPED))
    where: dict[str, str] = {"seed": "Battle!B6"}
    data: dict[str, Any] = {"system": "exalted"}
    seed = _seed(rd, problems)
    # E1: a seed drawn now when none is typed, written back (the dice of a tick replay after an undo)
    data["seed"] = seed if seed is not None else secrets.randbelow(10**9)
    data["house_rules"] = _house_rules(rd, problems, where)
    data["characters"] = _characters(rd, problems, where)
    units, offsets = _units(rd, problems, where)
    data["units"] = units
    if not units:
        problems.append(Problem(where["units"], "type at least one unit (name, side, commander, headcount) (X2)"))
    orders = _orders(rd, problems, where)
    data["orders"] = [o for _, o in orders.pending]
    where.setdefault("characters", f"Characters!A{rd.lay.block('Characters_Table').first_row}")
    where["orders"] = f"Orders!A{rd.lay.block('Orders_Table').first_row}"
    battle = _load(data, problems, where)
    _fits(rd.lay, battle, len(orders.pending))
    done = _commit(rd, "build", 0, battle, offsets)
    name = ACTION_NAMES["build"]
    sides = ", ".join(r["side"] for r in views.side_rows(battle))
    updates = [*_view_updates(rd.lay, battle, offsets, orders.pending, last_action=name), done.update,
               RangeUpdate("Battle!B6", [[battle.seed]]),
               table.block_fill(rd.lay.block("Aftermath_Table"), []),
               _log(rd.lay, [{"tick": 0, "kind": "build", "rule": "X1-X11", "step": done.token,
                              "details": f"{len(units)} units of {sides}"}])]
    msg = f"{name}: {len(units)} units of {sides}; type the orders, then Next Tick (Join War first, E4)"
    return _report("build", 0, msg, updates), updates


_ORDER_PATH = re.compile(r"orders\[\d+\]\.\w+")


def _cells_named(events: Sequence[Mapping[str, Any]], where: Mapping[str, str]) -> tuple[dict[str, Any], ...]:
    """E5: the engine's events with each order cell a refusal names (``type 4 in
    orders[1].tick``) as the sheet's cell (``type 4 in Orders!A5``)."""
    def named(text: str) -> str:
        return _ORDER_PATH.sub(lambda m: where.get(m.group(0), m.group(0)), text)

    return tuple({**e, "reason": named(e["reason"])} if e.get("kind") == "refused" and isinstance(e.get("reason"), str)
                 else dict(e) for e in events)


class _Result:
    """A resolved long tick as a step's result (``to_json`` like ``sheetsync resolve --json``)."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = self.result.to_json()
        return out


_STEP_READS = ("Units_Table", "Orders_Table", "HouseRules_Table")
"""The typed blocks a Next Tick reads (the Characters only Build Units reads: the units'
standing is the State's), whose rows below are refused then (issue 26, item 3)."""


def _resolve(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """E4-E6, X17-X39: the stored battle and the pending orders of the next long tick."""
    stored = _stored(rd)
    if rd.session.extra.get("ended"):
        raise BattleStateError("the battle has ended (End Battle wrote the Aftermath): Undo Tick reopens it")
    lay = rd.lay
    offsets = _offsets(rd, stored)
    problems = _below(rd, _STEP_READS)  # issue 26, item 3: listed with the Units rows' own problems
    try:
        _check_units(rd, stored, offsets)
    except InputError as err:
        _raise([*err.problems, *problems])
    where: dict[str, str] = {"orders": f"Orders!A{lay.block('Orders_Table').first_row}"}
    orders = _orders(rd, problems, where)
    data = dict(rd.session.battle or {})
    data["house_rules"] = _house_rules(rd, problems, where)  # as typed now
    data["orders"] = [o for _, o in orders.pending]
    warnings = _seed_changed(rd, stored)
    battle = _load(data, problems, where, known=stored).model_copy(update={"history": _ticks_behind(rd)})
    try:
        result = resolve(battle, new_units=_room(rd, stored))  # X23: a split takes a free Units row
    except InputError as err:  # a die cell wrong for its pool (E1), at its cell
        raise InputError(table.relocate(err.problems, where)) from None
    tick = result.tick
    result = replace(result, events=_cells_named(result.events, where))
    born, offsets = _born(rd, stored, result.battle, offsets)
    ob = lay.block("Orders_Table")
    events_by_order: dict[int, list[dict[str, Any]]] = {}
    for e in result.events:
        if isinstance(e.get("order"), int) and e["order"] >= 0:
            events_by_order.setdefault(e["order"], []).append(e)
    updates: list[RangeUpdate] = []
    taken: list[int] = []
    stamps: list[list[Any]] = []
    later: list[tuple[int, dict[str, Any]]] = []
    for i, (off, order) in enumerate(orders.pending):
        if order["tick"] > tick and i not in events_by_order:  # E5: one of a later tick refused now is taken
            later.append((off, order))
            continue
        taken.append(off)
        outcomes = [views.event_outcome(e) for e in events_by_order.get(i, [])]
        outcome = outcomes[0][0] if outcomes else "done"
        text = " | ".join(t for _, t in outcomes if t) or None
        updates.append(table.block_update(ob, [{"resolved": tick, "outcome": outcome, "result": text}], off,
                                          keys=list(_RESULTS)))
        stamps.append([off, outcome, text])
    done = _commit(rd, "resolve", tick, result.battle, offsets)
    updates += [table.block_update(lay.block("Units_Table"), [row], off, keys=list(row)) for off, row in born]
    # issue 26: "stamps" are the rows' results, so a lost Undo's can be put back
    record = {"turn": tick, "rows": taken, "stamps": stamps,
              "record": result.battle.history[-1].model_dump(mode="json", exclude_defaults=True)}
    name = f"{ACTION_NAMES['resolve']} {tick}"
    updates += [*_view_updates(lay, result.battle, offsets, later, last_action=name), done.update,
                ss.record_update(done, record), _log(lay, views.log_rows(tick, result.events, done.token))]
    refused = sum(1 for e in result.events if e.get("kind") == "refused")
    hits = sum(1 for e in result.events if e.get("kind") == "Attack" and e.get("hit"))
    msg = (f"{name}: {len(taken)} order{'s' if len(taken) != 1 else ''} taken, {hits} hit"
           + (f", {refused} refused" if refused else "")
           + f"; {views.status(result.battle)}")
    report = _report("resolve", tick, msg, updates, result=_Result(result))
    report.warnings = warnings
    return report, updates


def _seed_changed(rd: _Read, stored: Battle) -> list[str]:
    """E1: the dice seed is the one built (the dice of a long tick replay the same after an
    undo); a seed typed in ``Battle!B6`` since is named, not silently used or dropped (as
    the hex tracker does, H8)."""
    problems: list[Problem] = []
    now = _seed(rd, problems)
    if problems or now == stored.seed or (now is not None and str(now) == str(stored.seed)):
        return [p.message for p in problems]
    return [f"Battle!B6 (Dice seed) was changed after Build Units; the battle keeps {stored.seed!r}: Build Units "
            "again before the first long tick, or start a new tracker"]


def _undo(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """Undo the last resolved long tick from its record (or reopen an ended battle)."""
    stored = _stored(rd)
    lay = rd.lay
    offsets = _offsets(rd, stored)
    problems: list[Problem] = []
    orders = _orders(rd, problems, {})  # the stamped rows (a bad pending cell is not undo's business)
    if rd.session.extra.get("ended"):
        done = _commit(rd, "undo", stored.tick, stored, offsets, ended=False)
        name = "Reopen Battle"
        updates = [*_view_updates(lay, stored, offsets, orders.pending, last_action=name), done.update,
                   table.block_fill(lay.block("Aftermath_Table"), []),
                   _log(lay, [{"tick": stored.tick, "kind": "undo", "step": done.token,
                               "details": "Undo End Battle: the battle is open again"}])]
        return _report("undo", stored.tick, f"{name}: the Aftermath is cleared; {views.status(stored)}",
                       updates), updates
    row = rd.session.undo_record()
    if row is None:
        raise BattleStateError("nothing to undo: no long tick of this battle has been resolved yet")
    if row.problem:
        raise SheetFormatError([Problem(row.where, f"{row.problem}: restore the previous copy")])
    try:
        record = UndoRecord.read(row.data.get("record")).check()
        tick = int(row.data["turn"])
        if tick < 0:  # a long tick resolved before the battle came to this tracker (its file's history)
            tick = stored.tick
        rows = [int(r) for r in row.data.get("rows", [])]
    except (ValueError, TypeError, KeyError, AttributeError):
        raise SheetFormatError([Problem(row.where, "this undo record is not sheetsync's: restore the previous "
                                                   "copy")]) from None
    before = undo(stored.model_copy(update={"history": (record,)}))
    ob, ub = lay.block("Orders_Table"), lay.block("Units_Table")
    updates = [table.block_update(ob, [{}], off, keys=list(_RESULTS)) for off in rows]
    # X23: the rows of units split off in that tick are free again
    updates += [table.block_update(ub, [{}], off, keys=[c.key for c in ub.columns])
                for off in offsets[len(before.units):]]
    offsets = offsets[:len(before.units)]
    reread = _orders(_unstamped(rd, set(rows)), [], {}).pending
    done = _commit(rd, "undo", before.tick, before, offsets)
    name = f"{ACTION_NAMES['undo']} {tick}"
    updates += [*_view_updates(lay, before, offsets, reread, last_action=name), done.update,
                *(ss.undone_update(r) for r in rd.session.same_step(row)),
                _log(lay, [{"tick": tick, "kind": "undo", "details": name, "step": done.token}])]
    msg = f"{name}: the units stand as before long tick {tick}, and its orders are pending again"
    return _report("undo", tick, msg, updates), updates


def _name(action: str, tick: int) -> str:
    label = ACTION_NAMES.get(action, action)
    return f"{label} {tick}" if action in ("resolve", "undo") else label


def _journal(rd: _Read) -> tuple[list[RangeUpdate], str]:
    """Issue 26, item 2: the State's journal checked against the Log before every step
    (:func:`sheetsync.sheets.lost_steps.session_guard`), as the battalion tracker does."""
    if rd.session.battle is None:
        return [], ""
    tick = rd.session.battle.get("tick") if isinstance(rd.session.battle.get("tick"), int) else rd.session.turn
    return sj.session_guard(rd.session, rd.lay, rd.log, name=_name, where=f"long tick {tick}",
                            repair=lambda lost, msg: _repair(rd, _stored(rd), lost, msg))


def _repair(rd: _Read, stored: Battle, lost: Sequence[sj.Lost], msg: str) -> list[RangeUpdate]:
    """What steps lost to a simultaneous one left behind, put right from the State that
    stands (issue 26, item 2): the Orders rows a lost Next Tick stamped (its undo record,
    which the State does not accept, lists them) are pending again; the rows of a long
    tick a lost Undo Tick made pending are stamped again from their record, whose
    ``undone`` mark is cleared; the Units, Sides, Ticks and Battle status are the State's,
    and a lost End Battle's Aftermath is cleared.  The blob records the report, so the
    next step goes ahead."""
    lay = rd.lay
    ob = lay.block("Orders_Table")
    offsets = _offsets(rd, stored)
    stamped = _orders(rd, [], {}).stamped
    session = rd.session
    updates: list[RangeUpdate] = []
    reopened: set[int] = set()
    restamped: dict[int, int] = {}
    for x in lost:
        if x.action == "resolve":
            for rec in (r for r in session.records if r.token == x.token and isinstance(r.data, dict)):
                rows = [r for r in rec.data.get("rows", []) if isinstance(r, int) and stamped.get(r) == x.phase]
                reopened.update(rows)
        if x.action != "undo":
            continue
        of_tick = [r for r in session.records if session.accepted(r) and isinstance(r.data, dict)
                   and r.data.get("turn") == x.phase]
        marked = [r for r in of_tick if r.undone]
        if not marked or any(not r.undone for r in of_tick):
            continue
        rec = max(marked, key=lambda r: (r.rev, r.row))
        updates += [RangeUpdate(f"State!F{r.row}", [[None]]) for r in session.same_step(rec)]
        for entry in rec.data.get("stamps") or []:
            if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], int):
                off, outcome, text = entry
                restamped[off] = x.phase
                updates.append(table.block_update(ob, [{"resolved": x.phase, "outcome": outcome, "result": text}],
                                                  off, keys=list(_RESULTS)))
    updates += [table.block_update(ob, [{}], off, keys=list(_RESULTS)) for off in sorted(reopened)]
    ended = bool(session.extra.get("ended"))
    now = _unstamped(rd, reopened)
    col = ob.index("resolved")
    for off, tick in restamped.items():  # the odds are written for the rows pending after the repair
        if off < len(now.orders) and col < len(now.orders[off]):
            now.orders[off][col] = tick
    pending = _orders(now, [], {}).pending
    done = ss.commit(session, mark=MARK, action="repair", turn=stored.tick, battle=_file(stored),
                     extra=dict(session.extra), blob_range=lay.block("State_Blob").range(),
                     reported=[x.key for x in lost])
    updates += [*_view_updates(lay, stored, offsets, pending, ended=ended, last_action=msg[:45000]), done.update,
                _log(lay, [{"tick": stored.tick, "kind": "repair", "outcome": "refused", "details": msg,
                            "step": done.token}])]
    if any(x.action == "end" for x in lost) and not ended:
        updates.append(table.block_fill(lay.block("Aftermath_Table"), []))
    return updates


def _unstamped(rd: _Read, offsets: set[int]) -> _Read:
    """The read with the Resolved cells of ``offsets`` blank (the rows an undo reopens)."""
    block = rd.lay.block("Orders_Table")
    col = block.index("resolved")
    grid = [list(r) for r in rd.orders]
    for off in offsets:
        if off < len(grid) and col < len(grid[off]):
            grid[off][col] = None
    return _Read(rd.lay, rd.battle, rd.chars, rd.units, grid, rd.house, rd.session)


def _end(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """X40, X41: each named member's casualty rolls and each unit's healing days."""
    from sheetsync.systems.exalted.rules.breakdowns import aftermath_json

    stored = _stored(rd)
    lay = rd.lay
    offsets = _offsets(rd, stored)
    orders = _orders(rd, [], {})
    after = aftermath_json(stored)
    done = _commit(rd, "end", stored.tick, stored, offsets, ended=True)
    name = ACTION_NAMES["end"]
    updates = [*_view_updates(lay, stored, offsets, orders.pending, ended=True, last_action=name), done.update,
               table.block_fill(lay.block("Aftermath_Table"), views.aftermath_rows(after)),
               _log(lay, [{"tick": stored.tick, "kind": "end", "rule": "X40, X41", "step": done.token,
                           "details": f"End Battle after long tick {stored.tick}"}])]
    lost = sum(u["dots_lost"] for u in after["units"])
    msg = (f"{name}: the battle ended at long tick {stored.tick}, {lost} Magnitude lost in all; the Aftermath "
           "sheet has the casualties and healing")
    return _report("end", stored.tick, msg, updates, aftermath=after), updates


def _record_rows(rd: _Read, stamped: Collection[int]) -> tuple[set[int], list[int] | None]:
    """The Orders rows the accepted undo records not undone say were stamped, and those of
    the newest such record (``None`` without one, or when it can't be read).  The records
    are read newest first, and no further once every row of ``stamped`` is named (issue
    23: a step does not parse the record of every tick behind it)."""
    covered: set[int] = set()
    newest: list[int] | None = None
    for i, r in enumerate(reversed(rd.session.history())):
        rows = r.data.get("rows") if isinstance(r.data, dict) else None
        good = isinstance(rows, list) and all(isinstance(o, int) and not isinstance(o, bool) for o in rows)
        if good:
            covered.update(rows)  # type: ignore[arg-type]
        if i == 0:
            newest = list(rows) if good else None  # type: ignore[arg-type]
        if covered.issuperset(stamped):
            break
    return covered, newest


def _torn(rd: _Read) -> None:
    """Issue 22.3: a step cut short, whose changes reached the visible sheets but whose
    State write (applied last) never did, is found before the next step, and put right.

    Every committed Next Tick leaves an undo record naming the Orders rows it stamped, so
    a stamped row no accepted record names is a tick that never committed: its rows are
    made pending again and the sheets redrawn from the State.  The newest record's rows all
    unstamped is an Undo Tick that never committed: it is completed.  Either way the step
    clicked is refused with the repair as its one write (:class:`StepRefused`), saying what
    happened.  (Units rows a cut-short tick split off, X23, are not cleared.)"""
    if rd.session.battle is None or rd.session.extra.get("ended"):
        return
    orders = _orders(rd, [], {})
    covered, newest = _record_rows(rd, orders.stamped)
    stray = sorted(off for off in orders.stamped if off not in covered)
    if stray:
        stored = _stored(rd)
        offsets = _offsets(rd, stored)
        ob = rd.lay.block("Orders_Table")
        ticks = sorted({orders.stamped[o] for o in stray if isinstance(orders.stamped[o], int)})
        name = f"{ACTION_NAMES['resolve']} {ticks[0] if ticks else stored.tick}"
        msg = (f"{name} was cut short: its changes reached the sheets but not the State sheet, which holds the "
               "battle (a click whose changes were not all applied). Nothing of it counts: the sheets are put back "
               f"as the State holds them, and its {len(stray)} order{'s' if len(stray) != 1 else ''} "
               f"{'are' if len(stray) != 1 else 'is'} pending again. Click {ACTION_NAMES['resolve']} to resolve "
               "it.")
        pending = _orders(_unstamped(rd, set(stray)), [], {}).pending
        updates = [*(table.block_update(ob, [{}], off, keys=list(_RESULTS)) for off in stray),
                   *_view_updates(rd.lay, stored, offsets, pending, last_action=f"{name} cut short: put back"),
                   _log(rd.lay, [{"tick": stored.tick, "kind": "repair", "details": msg}])]
        raise StepRefused(msg, updates)
    if newest and not any(off in orders.stamped for off in newest):
        report, updates = _undo(rd)
        msg = (f"{report.message.split(':')[0]} was cut short: its changes reached the sheets but not the State "
               f"sheet (a click whose changes were not all applied). It is completed now: {report.message}. "
               "Click again for the next step.")
        raise StepRefused(msg, updates)


def _whole(step: Any) -> Any:
    """``step`` after the check for a step cut short (:func:`_torn`, issue 22.3)."""
    def checked(rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
        _torn(rd)
        out: tuple[StepReport, list[RangeUpdate]] = step(rd)
        return out

    checked.__doc__ = step.__doc__
    return checked


_STEPS = {"build": _build, "resolve": _whole(_resolve), "undo": _whole(_undo), "end": _whole(_end)}


def _check(rd: _Read) -> Any:
    """E5, X17-X39 dry run of the next long tick: each refusal mapped back to its cell."""
    from sheetsync.sheets.steps import CheckReport, Refusal

    stored = _stored(rd)
    problems = _below(rd, _STEP_READS)  # issue 26, item 3: what a resolve would refuse
    where: dict[str, str] = {"orders": f"Orders!A{rd.lay.block('Orders_Table').first_row}"}
    orders = _orders(rd, problems, where)
    data = dict(rd.session.battle or {})
    data["house_rules"] = _house_rules(rd, problems, where)
    data["orders"] = [o for _, o in orders.pending]
    try:
        battle = _load(data, problems, where, known=stored).model_copy(update={"history": _ticks_behind(rd)})
        result = resolve(battle, new_units=_room(rd, stored))  # on a copy: the engine is pure, nothing is kept
    except InputError as err:
        return CheckReport(stored.tick, len(orders.pending),
                           [Refusal(table.locate(p.where, where) or p.where, "", "cell", p.message)
                            for p in err.problems], bad_cells=True)
    events = _cells_named(result.events, where)
    refused = [Refusal(where.get(f"orders[{e['order']}]", f"orders[{e['order']}]"), e["unit"], e["action"],
                       f"{e['reason']} ({e['rule_ref']})") for e in events if e.get("kind") == "refused"]
    rows = {e["order"] for e in events if e.get("kind") == "refused"}
    return CheckReport(result.tick, sum(1 for o in battle.orders if o.tick <= result.tick or o.row in rows), refused)


def _export(rd: _Read) -> dict[str, Any]:
    """The battle as a battle file's data, with its pending orders and its undo history
    (so ``sheetsync resolve FILE`` and ``sheetsync undo FILE`` go on from here)."""
    battle = _stored(rd)
    data = battle_to_file(battle.model_copy(update={"history": _history(rd)}))
    problems: list[Problem] = []
    pending = _orders(rd, problems, {}).pending
    if not problems:
        data["orders"] = [o for _, o in pending]
    return {"system": "exalted", "battle": data, "tick": battle.tick, "turn": battle.tick,
            "ended": bool(rd.session.extra.get("ended"))}


# -- loading a battle file -------------------------------------------------------------------

def _character_row(battle: Battle, i: int) -> dict[str, Any]:
    c = battle.characters[i]
    where = f"characters[{i}]"
    off = c.model_dump(exclude_defaults=True, exclude={*_CHAR_PLAIN, "close_weapon", "ranged_weapon"})
    if off:
        raise InputError([Problem(f"{where}.{sorted(off)[0]}", "the tracker has no column for this key: keep "
                                                               "this battle in its file (sheetsync resolve)")])
    row: dict[str, Any] = {k: getattr(c, k) for k in _CHAR_PLAIN if k != "role"}
    row["role"] = battle.roles.get(c.name)
    for key, (weapon, part) in _WEAPON.items():
        w = getattr(c, weapon)
        if w is not None:
            value = getattr(w, part)
            row[key] = value.value if hasattr(value, "value") else value
    return row


def _unit_row(battle: Battle, i: int) -> dict[str, Any]:
    u = battle.units[i]
    where = f"units[{i}]"
    spec = u.spec
    plain = set(_UNIT_PLAIN) - {"commander", "named_members", "join_war", *_TERRAIN}
    off = spec.model_dump(exclude_defaults=True, exclude={*plain, "commander", "members", "relays", "heroes",
                                                          "sorcerers"})
    if off:
        key = sorted(off)[0]
        raise InputError([Problem(f"{where}.{key}", "the tracker has no column for this key: keep this battle in "
                                                    "its file (sheetsync resolve)")])
    row: dict[str, Any] = {}
    for key in plain:
        value = getattr(spec, key)
        row[key] = value.value if hasattr(value, "value") else value
    row.update(commander=spec.commander.name, named_members=u.named_members or None, join_war=u.join_war,
               **{k: getattr(u, k) or None for k in _SPECIAL}, **{k: getattr(u, k) for k in _TERRAIN})
    for j, g in enumerate(spec.members):
        slot = "extras" if g.health_levels == 3 and g.weight is None else (
            "heroic" if g.health_levels == 7 and g.weight is None else None)
        if slot is None or row.get(slot) is not None:
            raise InputError([Problem(f"{where}.members[{j}]", "the tracker types extras (3 health levels) and "
                                                               "heroic mortals (7), one count each: keep this "
                                                               "battle in its file (sheetsync resolve)")])
        row[slot] = g.count
    return row


def _order_cells(order: Mapping[str, Any]) -> dict[str, Any]:
    """A battle file's order as its Orders cells; the attacker's own rout dice (X43) go in
    the Rout dice cell after ``own:``."""
    cells = {k: order.get(k) for k in _ORDER_INPUTS}
    if order.get("own_rout_dice") is not None:
        cells["rout_dice"] = RoutPair(order.get("rout_dice"), order["own_rout_dice"])
    return cells


def _load_into(lay: Any, battle: Battle, rd: _Read) -> tuple[StepReport, list[RangeUpdate]]:
    """A battle file's Characters, Units, House Rules, seed and pending orders, and what a
    build (or the last resolve) writes, as one write.  A battle that does not fit the
    tracker, or that uses a key the tracker has no column for, is refused naming it."""
    from sheetsync.sheets.marks import mark_updates
    from sheetsync.systems.exalted.system import SYSTEM

    _fits(lay, battle, len(battle.orders))
    chars = [_character_row(battle, i) for i in range(len(battle.characters))]
    units = [_born_row(battle, i) if battle.units[i].split_from else _unit_row(battle, i)
             for i in range(len(battle.units))]
    if battle.house_rules.speed or battle.house_rules.dv:
        raise InputError([Problem("house_rules", "the tracker has no cells for speed.X / dv.X overrides: keep "
                                                 "this battle in its file (sheetsync resolve)")])
    pending = list(enumerate(battle_to_file(battle)["orders"]))
    house = [{"key": k, "value": v, "default": d, "ruling": r} for k, v, d, r in house_rule_rows(battle.house_rules)]
    offsets = list(range(len(battle.units)))
    old = rd.session.records
    done = ss.commit(ss.Session(rev=rd.session.rev, steps=rd.session.steps), mark=MARK, action="new",
                     turn=battle.tick, battle=_file(battle), extra={"rows": offsets, "ended": battle.ended},
                     blob_range=lay.block("State_Blob").range())
    name = ACTION_NAMES["new"]
    ob = lay.block("Orders_Table")
    records = []
    for h in battle.history:
        records.append(ss.record_update(done, {"turn": -1, "rows": [],
                                               "record": h.model_dump(mode="json", exclude_defaults=True)}))
    updates = [
        *mark_updates(SYSTEM, lay.capacity),
        *ss.clear_records(old),
        table.block_fill(lay.block("Characters_Table"), chars),
        table.block_fill(lay.block("Units_Table"), units),
        table.block_fill(ob, [{**(_order_cells(pending[i][1]) if i < len(pending) else {}),
                               **_formulas(lay, i)} for i in range(ob.rows or 0)]),
        table.block_fill(lay.block("HouseRules_Table"), house),
        RangeUpdate("Battle!B6", [[battle.seed]]),
        *_view_updates(lay, battle, offsets, pending, ended=battle.ended, last_action=name),
        done.update,
        table.block_fill(lay.block("Aftermath_Table"), []),
        *records,
        _log(lay, [{"tick": battle.tick, "kind": "new", "step": done.token,
                    "details": f"{len(battle.units)} units, {len(battle.characters)} characters, "
                               f"{len(battle.orders)} orders"}]),
    ]
    msg = f"{name}: {len(battle.units)} units; {views.status(battle, ended=battle.ended)}"
    return _report("new", battle.tick, msg, updates), updates


def capacity_for(battle: Battle) -> dict[str, int]:
    """A tracker with room for ``battle``: half as many units and characters again (for
    reinforcements typed later), ten orders a unit, its sides.  The headroom stops at
    :data:`~sheetsync.systems.exalted.tracker.layout.MAX_CAPACITY`; only a battle that itself holds
    more than that is refused, naming the limit and what the battle has (issue 26)."""
    from sheetsync.systems.exalted.tracker.layout import CAPACITY, MAX_CAPACITY

    units = len(battle.units)
    need = {"units": units, "characters": len(battle.characters), "orders": len(battle.orders),
            "ticks": CAPACITY["ticks"], "sides": len({u.spec.side for u in battle.units})}
    too_big = [Problem(key, f"a tracker holds at most {MAX_CAPACITY[key]} {key}; this battle needs {n}")
               for key, n in need.items() if n > MAX_CAPACITY[key]]
    _raise(too_big)
    want = {**need, "units": -(-units * 3 // 2), "characters": -(-need["characters"] * 3 // 2),
            "orders": max(10 * units, need["orders"])}
    return {key: min(MAX_CAPACITY[key], max(CAPACITY[key], n)) for key, n in want.items()}


STAMPS = {"Orders_Table": "resolved"}
"""E5: the table a Next Tick stamps with the long tick it resolved; the next one reads it
from its first row not stamped (issue 23, :mod:`sheetsync.sheets.read_from`)."""


class ExaltedSteps(LayoutSteps):
    """Exalted mass combat's :class:`~sheetsync.core.system.TrackerSteps` at ``capacity`` (a
    blank tracker's by default): every step (build X1-X11; resolve E4-E6, X17-X39; undo; end
    X40, X41) a pure function of the one read of :meth:`read_plan`, run by the use-case
    envelope (:mod:`sheetsync.app.usecases`)."""

    title = "Exalted mass combat"
    hooks = LayoutHooks(step_layouts(layout), _plan, _parse, _STEPS, _check, _export, _load_into, _journal, STAMPS)


run, load_into = ExaltedSteps.run, ExaltedSteps.load_into
check, export = ExaltedSteps.check_tracker, ExaltedSteps.export_tracker
