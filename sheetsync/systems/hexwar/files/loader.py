"""Hex battle files in and out: a plain dict (parsed from YAML or JSON) to a
:class:`Battle`, collecting *every* problem with its path before raising
(``units[2].counter: ...``, ``turn.moves[0].to: '9999' is not a hex on this 12x10 map``).

The keys are the issue's contract, plus what the next turn and undo need::

    system: hexwar
    seed: 7
    house_rules: {proportional_reduction: true}
    map: {columns: 12, rows: 10, impassable: ["0603", "0604"]}
    units:
      - {name: Sun Knights, side: Party, counter: "3 - 3 - 1 - 1", hex: "0405"}
      - {name: 1st Fist, side: Enemy, counter: "4 - 4 - 1 - 2(2)", hex: "0506", men: 670}
    turn:
      number: 1            # optional, 1 by default
      initiative: Party
      moves: [{unit: 1st Fist, to: "0505"}, {unit: Caliph's Horses, path: ["0302", "0303"]}]
      attacks: [{defender: Sun Knights, attackers: [1st Fist, 2nd Fist], roll: 37}]

A unit may give its values one per key instead of ``counter`` (``attack: "3+"``,
``defense``, ``movement``, ``range: "2(2)"``), and ``size`` as a number or a word
(battalion, squadron, company), H1.  ``generals`` (H3 contest), ``initiative_holder`` and
``history`` are written by ``battle_to_file`` for the next turn and for undo.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sheetsync.core.errors import InputError, Problem
from sheetsync.sheets.validation import validate
from sheetsync.systems.hexwar.rules.counter import Counter, parse_counter
from sheetsync.systems.hexwar.rules.grid import Hex, parse_hex
from sheetsync.systems.hexwar.rules.models import (
    AttackOrder,
    Battle,
    HouseRules,
    MapSpec,
    MoveOrder,
    TurnOrders,
    UndoRecord,
    Unit,
)

__all__ = ["battle_to_file", "load_battle"]

TOP_KEYS = {"system", "seed", "house_rules", "map", "units", "turn", "generals", "initiative_holder", "history"}
UNIT_KEYS = {"name", "side", "counter", "attack", "defense", "movement", "range", "hex", "size", "men",
             "casualties", "destroyed_turn", "destroyed_by"}
TURN_KEYS = {"number", "initiative", "initiative_rolls", "moves", "attacks"}
SIZES = {"battalion": 1.0, "squadron": 1.0, "fist": 1.0, "company": 0.5}
"""H1: unit sizes by name, in battalions."""
USUAL_SIZE_WORDS = ("battalion", "company")
"""H1: the words a size of 1 and of 0.5 is said with; another word typed is kept (``Unit.size_name``)."""


class _Hexes:
    """Reads hex ids against the map, naming the path of each bad one."""

    def __init__(self, spec: MapSpec | None, problems: list[Problem]) -> None:
        self.spec = spec
        self.problems = problems

    def read(self, value: Any, where: str) -> Hex | None:
        try:
            h = parse_hex(value)
        except ValueError as exc:
            self.problems.append(Problem(where, str(exc)))
            return None
        if self.spec is not None and not self.spec.grid.contains(h):
            self.problems.append(Problem(where, f"{h.id!r} is not a hex on this {self.spec.grid.describe()} map "
                                         "(H2)"))
            return None
        return h


def _names(known: Sequence[str]) -> str:
    shown = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
    return f"(expected one of {shown})"


def _counter(raw: dict[str, Any], where: str, problems: list[Problem]) -> Counter | None:
    """H1: the counter as written, or from one value per key."""
    per_key = [k for k in ("attack", "defense", "movement", "range") if k in raw]
    if "counter" in raw:
        if per_key:
            problems.append(Problem(f"{where}.{per_key[0]}", "give the counter or its values, not both (H1)"))
        text = raw["counter"]
        key = f"{where}.counter"
    elif per_key:
        missing = [k for k in ("attack", "defense", "movement", "range") if k not in raw]
        if missing:
            problems.append(Problem(f"{where}.{missing[0]}", "is required (or give the whole counter, H1)"))
            return None
        text = " - ".join(str(raw[k]) for k in ("attack", "defense", "movement", "range"))
        key = where
    else:
        problems.append(Problem(f"{where}.counter", "is required (such as \"3+ - 2 - 4 - 1\", H1)"))
        return None
    try:
        return parse_counter(text)
    except ValueError as exc:
        problems.append(Problem(key, str(exc)))
        return None


def _roll(value: Any, where: str, problems: list[Problem]) -> int | None:
    """H8: a typed d100, 1 to 100; ``00`` (or 0) means 100."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        problems.append(Problem(where, f"{value!r} is not a d100 roll (1 to 100; 00 means 100) (H8)"))
        return None
    return value or 100


def _unknown_keys(raw: dict[str, Any], known: Any, where: str, problems: list[Problem]) -> None:
    """Each key of ``raw`` sheetsync does not read, at its path."""
    for key in raw:
        if key not in known:
            problems.append(Problem(f"{where}.{key}" if where else str(key),
                                    "is not a key sheetsync knows (check its spelling)"))


def _header(data: dict[str, Any], problems: list[Problem]) -> tuple[Any, HouseRules]:
    """The file's keys, ``system``, ``seed`` and the house rules (H1-H12's readings)."""
    _unknown_keys(data, TOP_KEYS, "", problems)
    system = data.get("system", "hexwar")
    if system != "hexwar":
        problems.append(Problem("system", f"{system!r} is not the hex wargame (system: hexwar)"))
    seed = data.get("seed")
    if isinstance(seed, bool) or (seed is not None and not isinstance(seed, (int, str))):
        problems.append(Problem("seed", f"{seed!r} is not a whole number or text"))
    rules = validate(HouseRules, data.get("house_rules") or {}, "house_rules", problems) or HouseRules()
    return seed, rules


def _map(data: dict[str, Any], problems: list[Problem]) -> MapSpec | None:
    """H2, 5.1: the map's size, and its impassable hexes read against that size."""
    raw_map = data.get("map")
    if not isinstance(raw_map, dict):
        problems.append(Problem("map", "is required: {columns, rows, impassable} (H2)"))
        return None
    shape = validate(MapSpec, {k: v for k, v in raw_map.items() if k != "impassable"}, "map", problems)
    hexes = _Hexes(shape, problems)
    blocked: list[str] = []
    raw_imp = raw_map.get("impassable") or []
    if not isinstance(raw_imp, list):
        problems.append(Problem("map.impassable", "must be a list of hex ids"))
        raw_imp = []
    for i, h in enumerate(raw_imp):
        got = hexes.read(h, f"map.impassable[{i}]")
        if got is not None:
            blocked.append(got.id)
    if shape is None:
        return None
    return MapSpec(columns=shape.columns, rows=shape.rows, impassable=tuple(dict.fromkeys(blocked)))


def _size(fields: dict[str, Any], where: str, problems: list[Problem]) -> bool:
    """H1: a size typed as a word becomes its number of battalions (an unusual word is
    kept as ``size_name``); False when the word is not a size."""
    if not isinstance(fields.get("size"), str):
        return True
    word = fields["size"].strip().lower()
    if word not in SIZES:
        problems.append(Problem(f"{where}.size", f"{fields['size']!r} is not a size (a number of "
                                "battalions, or battalion, squadron, company) (H1)"))
        return False
    fields["size"] = SIZES[word]
    if word not in USUAL_SIZE_WORDS:
        fields["size_name"] = word
    return True


def _unit(raw: Any, where: str, hexes: _Hexes, problems: list[Problem]) -> Unit | None:
    """H1, H2: one unit: its counter, its hex on the map, its size and standing."""
    if not isinstance(raw, dict):
        problems.append(Problem(where, "must be a mapping"))
        return None
    _unknown_keys(raw, UNIT_KEYS, where, problems)
    counter = _counter(raw, where, problems)
    at = hexes.read(raw.get("hex"), f"{where}.hex") if "hex" in raw else None
    if "hex" not in raw:
        problems.append(Problem(f"{where}.hex", "is required (the unit's hex, such as \"0405\")"))
    spec = hexes.spec
    if at is not None and spec is not None and at in spec.grid.impassable:
        problems.append(Problem(f"{where}.hex", f"{at.id} is impassable (5.1, H2)"))
    fields = {k: v for k, v in raw.items() if k in ("name", "side", "size", "men", "casualties",
                                                     "destroyed_turn", "destroyed_by")}
    if not _size(fields, where, problems):
        return None
    if counter is None or at is None:  # the rest is still checked, with stand-ins
        validate(Unit, {**fields, "counter": Counter(attack=1, defense=1, movement=1, range=1),
                         "hex": "0101"}, where, problems)
        return None
    unit: Unit | None = validate(Unit, {**fields, "counter": counter, "hex": at.id}, where, problems)
    return unit


def _units(data: dict[str, Any], hexes: _Hexes, problems: list[Problem]) -> tuple[list[Unit], list[str]]:
    """H1: the units (names once each), and every name typed, even of a unit with problems."""
    raw_units = data.get("units")
    if not isinstance(raw_units, list) or not raw_units:
        problems.append(Problem("units", "must be a list of at least one unit"))
        raw_units = []
    all_names: list[str] = [u["name"] for u in raw_units if isinstance(u, dict) and isinstance(u.get("name"), str)]
    units: list[Unit] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_units):
        unit = _unit(raw, f"units[{i}]", hexes, problems)
        if unit is None:
            continue
        if unit.name in seen:
            problems.append(Problem(f"units[{i}].name", f"{unit.name!r} names two units"))
        seen.add(unit.name)
        units.append(unit)
    return units, all_names


def _stacking(units: list[Unit], rules: HouseRules, problems: list[Problem]) -> None:
    """5.0, H4: where the units stand must already be legal."""
    stacks: dict[tuple[str, str], float] = {}
    holders: dict[str, set[str]] = {}
    for u in units:
        if u.destroyed:
            continue
        stacks[(u.hex, u.side)] = stacks.get((u.hex, u.side), 0) + u.size
        holders.setdefault(u.hex, set()).add(u.side)
    for (h, side), size in stacks.items():
        if size > rules.stack_limit:
            problems.append(Problem("units", f"{h} holds {size:g} battalions of {side}; the limit is "
                                    f"{rules.stack_limit:g} (5.0, H4)"))
    for h, held in holders.items():
        if len(held) > 1:
            problems.append(Problem("units", f"{h} holds units of {' and '.join(sorted(held))}; enemies never "
                                    "share a hex (H4)"))


class _Turn:
    """The typed turn (H3-H8) read against the units and the map: what names a unit, a
    hex or a side is checked here, each problem at its path below ``turn``."""

    def __init__(self, units: list[Unit], all_names: list[str], hexes: _Hexes, problems: list[Problem]) -> None:
        self.by_name = {u.name: u for u in units}
        self.all_names = all_names
        self.sides = tuple(dict.fromkeys(u.side for u in units))
        self.hexes = hexes
        self.problems = problems

    def unit_ref(self, value: Any, where: str) -> str | None:
        if isinstance(value, str) and value in self.by_name:
            return value
        if isinstance(value, str) and value in self.all_names:
            return None  # its own problems are listed already
        self.problems.append(Problem(where, f"{value!r} is not a unit {_names(list(self.by_name) or self.all_names)}"))
        return None

    def items(self, raw_turn: dict[str, Any], key: str) -> list[Any]:
        raw = raw_turn.get(key) or []
        if not isinstance(raw, list):
            self.problems.append(Problem(f"turn.{key}", "must be a list"))
            return []
        return raw

    def read(self, raw_turn: dict[str, Any]) -> tuple[int, str | None, TurnOrders]:
        """H3: the turn's number, initiative, moves, attacks and typed initiative rolls."""
        _unknown_keys(raw_turn, TURN_KEYS, "turn", self.problems)
        number = raw_turn.get("number", 1)
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            self.problems.append(Problem("turn.number", f"{number!r} is not a turn number (1 or more)"))
            number = 1
        initiative = raw_turn.get("initiative")
        if initiative is not None and initiative not in self.sides and self.by_name:
            self.problems.append(Problem("turn.initiative", f"{initiative!r} is not a side "
                                         f"{_names(list(self.sides))} (H3)"))
            initiative = None
        moves = [m for i, raw in enumerate(self.items(raw_turn, "moves"))
                 if (m := self.move(raw, f"turn.moves[{i}]")) is not None]
        attacks = [a for i, raw in enumerate(self.items(raw_turn, "attacks"))
                   if (a := self.attack(raw, f"turn.attacks[{i}]")) is not None]
        rolls = self.initiative_rolls(raw_turn.get("initiative_rolls") or {})
        return number, initiative, TurnOrders(initiative=initiative, initiative_rolls=rolls, moves=tuple(moves),
                                              attacks=tuple(attacks))

    def move(self, raw: Any, where: str) -> MoveOrder | None:
        """H4: a move to a destination or along a typed path, one of the two."""
        if not isinstance(raw, dict):
            self.problems.append(Problem(where, "must be a mapping: {unit, to} or {unit, path}"))
            return None
        _unknown_keys(raw, ("unit", "to", "path"), where, self.problems)
        name = self.unit_ref(raw.get("unit"), f"{where}.unit")
        to, path = raw.get("to"), raw.get("path")
        if (to is None) == (path is None):
            self.problems.append(Problem(where, "give the destination (to) or the path, one of the two (H4)"))
            return None
        dest: str | None = None
        hops: tuple[str, ...] | None = None
        if to is not None:
            got = self.hexes.read(to, f"{where}.to")
            dest = got.id if got is not None else None
            ok = got is not None
        else:
            if isinstance(path, str):
                path = [p for p in path.replace(",", " ").split() if p]
            if not isinstance(path, list) or not path:
                self.problems.append(Problem(f"{where}.path", "must be a list of the hexes entered, in order (H4)"))
                return None
            read = [self.hexes.read(h, f"{where}.path[{j}]") for j, h in enumerate(path)]
            ok = all(r is not None for r in read)
            hops = tuple(r.id for r in read if r is not None)
        return MoveOrder(unit=name, to=dest, path=hops) if name is not None and ok else None

    def attack(self, raw: Any, where: str) -> AttackOrder | None:
        """H7, H8: an engagement: a defender, its attackers (each once) and a typed d100."""
        if not isinstance(raw, dict):
            self.problems.append(Problem(where, "must be a mapping: {defender, attackers, roll}"))
            return None
        _unknown_keys(raw, ("defender", "attackers", "roll"), where, self.problems)
        defender = self.unit_ref(raw.get("defender"), f"{where}.defender")
        raw_att = raw.get("attackers")
        if isinstance(raw_att, str):
            raw_att = [a.strip() for a in raw_att.split(",") if a.strip()]
        if not isinstance(raw_att, list) or not raw_att:
            self.problems.append(Problem(f"{where}.attackers", "must list at least one attacking unit (H7)"))
            return None
        names = [self.unit_ref(a, f"{where}.attackers[{j}]") for j, a in enumerate(raw_att)]
        for j, a in enumerate(raw_att):
            if raw_att.index(a) != j:
                self.problems.append(Problem(f"{where}.attackers[{j}]", f"{a!r} is in this attack twice"))
        roll = _roll(raw.get("roll"), f"{where}.roll", self.problems)
        if defender is None or not all(n is not None for n in names):
            return None
        if raw.get("roll") not in (None, "") and roll is None:
            return None
        return AttackOrder(defender=defender, attackers=tuple(n for n in names if n), roll=roll)

    def initiative_rolls(self, raw_init: Any) -> dict[str, int]:
        """H3 (``initiative = "contest"``): a typed 3d6 total per side."""
        if not isinstance(raw_init, dict):
            self.problems.append(Problem("turn.initiative_rolls", "must map sides to 3d6 totals (H3)"))
            return {}
        out: dict[str, int] = {}
        for side, value in raw_init.items():
            where = f"turn.initiative_rolls.{side}"
            if side not in self.sides:
                self.problems.append(Problem(where, f"{side!r} is not a side {_names(list(self.sides))}"))
            elif isinstance(value, bool) or not isinstance(value, int) or not 3 <= value <= 18:
                self.problems.append(Problem(where, f"{value!r} is not a 3d6 total (3 to 18) (H3)"))
            else:
                out[side] = value
        return out


def _generals(data: dict[str, Any], sides: tuple[str, ...], problems: list[Problem]) -> dict[str, int]:
    """H3: each side's general's Military Science, for the initiative contest."""
    raw_generals = data.get("generals") or {}
    if not isinstance(raw_generals, dict):
        problems.append(Problem("generals", "must map sides to their general's Military Science (H3)"))
        return {}
    generals: dict[str, int] = {}
    for side, value in raw_generals.items():
        if side not in sides:
            problems.append(Problem(f"generals.{side}", f"{side!r} is not a side {_names(list(sides))}"))
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problems.append(Problem(f"generals.{side}", f"{value!r} is not a skill value (a whole number)"))
        else:
            generals[side] = value
    return generals


def _initiative_needs(rules: HouseRules, raw_turn: dict[str, Any], orders: TurnOrders, generals: dict[str, int],
                      sides: tuple[str, ...], problems: list[Problem]) -> None:
    """H3: a contest needs every side's general; a set initiative is typed when units move."""
    if rules.initiative == "contest":
        for side in sides:
            if side not in generals:
                problems.append(Problem(f"generals.{side}", f"is required: {side}'s general's Military Science, "
                                        "for the initiative contest (H3)"))
    elif raw_turn.get("initiative") is None and orders.moves and len(sides) > 1:
        problems.append(Problem("turn.initiative", f"is required when units move: the side that has "
                                f"initiative this turn {_names(list(sides))} (H3)"))


def _holder(data: dict[str, Any], sides: tuple[str, ...], problems: list[Problem]) -> str | None:
    """H3: who held initiative last turn (written by ``battle_to_file``)."""
    holder = data.get("initiative_holder")
    if holder is not None and holder not in sides:
        problems.append(Problem("initiative_holder", f"{holder!r} is not a side {_names(list(sides))}"))
        return None
    return holder


def _history(data: dict[str, Any], problems: list[Problem]) -> list[UndoRecord]:
    """The undo records written by ``battle_to_file``, checked by pydantic."""
    raw_history = data.get("history") or []
    if not isinstance(raw_history, list):
        problems.append(Problem("history", "must be a list (written by sheetsync)"))
        raw_history = []
    records = (validate(UndoRecord, raw, f"history[{i}]", problems) for i, raw in enumerate(raw_history))
    return [rec for rec in records if rec is not None]


def load_battle(data: Any, source: str = "", *, known: Battle | None = None) -> Battle:
    """Check a hex battle file's dict and build the :class:`Battle`; raise
    :class:`InputError` listing every problem with its path.  Breaking a rule (a move too
    far, an attacker out of range) is not a shape problem: that order is refused when the
    turn is resolved.  One reader per part of the file, in the file's order.

    ``known`` (issue 23) is the battle this function made of the same ``data`` but for its
    ``house_rules`` and ``turn`` (a tracker's Resolve: the State it read, with the house
    rules and orders typed now).  Its map, units, generals, initiative holder and history
    are then taken as they were read, not read and checked again; what depends on the house
    rules (the stacking, H4) and the turn are checked as always, so the battle and the
    problems are those of a whole read."""
    problems: list[Problem] = []
    if not isinstance(data, dict):
        raise InputError([Problem("", "the file must hold a mapping with 'map' and 'units'")], source)
    seed, rules = _header(data, problems)
    if known is not None:
        map_spec: MapSpec | None = known.map
        hexes = _Hexes(map_spec, problems)
        units = list(known.units)
        raw_units = data.get("units")
        all_names = [u["name"] for u in raw_units if isinstance(u, dict) and isinstance(u.get("name"), str)] \
            if isinstance(raw_units, list) else []
    else:
        map_spec = _map(data, problems)
        hexes = _Hexes(map_spec, problems)
        units, all_names = _units(data, hexes, problems)
    _stacking(units, rules, problems)
    turn = _Turn(units, all_names, hexes, problems)
    raw_turn = data.get("turn") or {}
    if not isinstance(raw_turn, dict):
        problems.append(Problem("turn", "must be a mapping: {initiative, moves, attacks}"))
        raw_turn = {}
    number, _, orders = turn.read(raw_turn)
    if known is not None:
        generals, holder, history = dict(known.generals), known.initiative_holder, list(known.history)
    else:
        generals = _generals(data, turn.sides, problems)
    _initiative_needs(rules, raw_turn, orders, generals, turn.sides, problems)
    if known is None:
        holder = _holder(data, turn.sides, problems)
        history = _history(data, problems)
    if problems or map_spec is None:
        raise InputError(problems, source)
    return Battle(seed=seed, house_rules=rules, map=map_spec, units=tuple(units), turn=number, orders=orders,
                  generals=generals, initiative_holder=holder, history=tuple(history))


def battle_to_file(battle: Battle) -> dict[str, Any]:
    """The battle in the file format :func:`load_battle` reads; it round-trips exactly."""
    out: dict[str, Any] = {"system": "hexwar"}
    if battle.seed is not None:
        out["seed"] = battle.seed
    if battle.house_rules != HouseRules():
        out["house_rules"] = battle.house_rules.model_dump(mode="json", exclude_defaults=True)
    out["map"] = {"columns": battle.map.columns, "rows": battle.map.rows, "impassable": list(battle.map.impassable)}
    units = []
    for u in battle.units:
        d: dict[str, Any] = {"name": u.name, "side": u.side, "counter": str(u.counter), "hex": u.hex}
        d.update(u.model_dump(mode="json", exclude_defaults=True, exclude={"name", "side", "counter", "hex",
                                                                           "size_name"}))
        if u.size_name:  # H1: the word as typed (squadron), which reads back as the same size
            d["size"] = u.size_name
        units.append(d)
    out["units"] = units
    turn: dict[str, Any] = {"number": battle.turn}
    o = battle.orders
    if o.initiative is not None:
        turn["initiative"] = o.initiative
    if o.initiative_rolls:
        turn["initiative_rolls"] = dict(o.initiative_rolls)
    turn["moves"] = [m.model_dump(mode="json", exclude_none=True) for m in o.moves]
    turn["attacks"] = [a.model_dump(mode="json", exclude_none=True) for a in o.attacks]
    out["turn"] = turn
    if battle.generals:
        out["generals"] = dict(battle.generals)
    if battle.initiative_holder is not None:
        out["initiative_holder"] = battle.initiative_holder
    out["history"] = [h.model_dump(mode="json", exclude_defaults=True) for h in battle.history]
    return out
