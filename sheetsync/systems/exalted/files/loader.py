"""Exalted battle files in and out: a plain dict (parsed from YAML or JSON) to a
:class:`~sheetsync.systems.exalted.rules.state.Battle`, collecting *every* problem with its path
before raising (``units[2].formation: ...``, ``orders[0].dice: die 3: 11 is not a d10 face``).

The keys (RULINGS-exalted.md "What the Tracker types")::

    system: exalted
    seed: 7
    house_rules: {same_tick: sheet_order}
    characters:
      - {name: Cathak Reyen, role: commander, dexterity: 4, charisma: 3, wits: 3, essence: 2,
         abilities: {Melee: 4, War: 4}, close_weapon: {name: Straight sword, accuracy: 1, damage: 3}}
    units:
      - name: Cathak Talon
        side: Realm
        commander: Cathak Reyen
        members: [{kind: Extra, count: 49}]       # headcount by kind (X2)
        drill: 4
        might: 1
        formation: Close
        avg_dexterity: 3                          # and the other averages X4-X10 need
        special_characters: {heroes: [Peleps Ama], relays: [Talon Sergeant]}
        named_members: [Ledaal Kes]
        join_war: "7 8 2 1 9"                     # optional die cell (E4)
    orders:
      - {tick: 0, unit: Cathak Talon, action: Attack, target: Bandit Mob, option: Close, dice: "7 3 10 2 1 8 9"}

A die cell holds the faces rolled (``"7 3 10 2 1"``; one die ``"7,"``) or a number of
successes (``"3s"``); a bare number other than 0 is refused as ambiguous; blank means
rolled from the seed.  ``target_dice`` is the second unit's own roll (X23: the new unit's; X24: the other
commander's); ``own_rout_dice`` is the attacking unit's own rout check when its close attack
engages (X43; ``rout_dice`` is the target's).  Options with several parts put ``;`` between them (``battle.py`` lists them)::

      - {tick: 0, unit: Cathak Talon, action: Split Unit,
         option: "Talon Left; hero: Peleps Ama; headcount: 10; follow: Talon Sergeant"}
      - {tick: 0, unit: Cathak Talon, action: Merge Units, target: Talon Reserve, option: "leaving: Nellens Ivo"}
      - {tick: 0, unit: Cathak Talon, action: Initiate Duel, target: Bandit Mob, option: "ranged"}
      - {tick: 0, unit: Cathak Talon, action: Initiate Duel, option: "result: Cathak Reyen; slain: Red Harrow"}
      - {tick: 0, unit: Bandit Mob, action: Change Formation, option: Spread out}   # X20, after a volley

A unit split off during the battle is written with ``split_from``, and a duel that stops
the long ticks as ``duel:`` (X23, X27).  ``started``, ``tick``, ``state`` and ``history`` are written by :func:`battle_to_file`
for the next long tick and for undo.

Every typed number is checked against its range first (issue 26, the :class:`Bound` tables
of :mod:`~sheetsync.systems.exalted.rules.traits`): ``characters[0].dexterity: Dexterity 1000 is
out of range 1–10 (...)``.  A number out of range stands in as the nearest in range, so the
rest of the battle is still checked, and nothing derived from a battle with a bad number is
ever computed at that size.
"""

from __future__ import annotations

from typing import Any

from sheetsync.core.errors import InputError, Problem, did_you_mean
from sheetsync.sheets.validation import validate
from sheetsync.systems.exalted.rules.dice import read_die_cell
from sheetsync.systems.exalted.rules.formations import check_formation
from sheetsync.systems.exalted.rules.health import starting_ammunition
from sheetsync.systems.exalted.rules.models import Character, HouseRules, UnitSpec
from sheetsync.systems.exalted.rules.morale import Weather
from sheetsync.systems.exalted.rules.options import move_option, parse_attack_option
from sheetsync.systems.exalted.rules.state import (
    Battle,
    BattleUnit,
    Duel,
    Order,
    UndoRecord,
    UnitState,
    expand_record,
)
from sheetsync.systems.exalted.rules.traits import (
    ABILITY_RANGE,
    CHARACTER_RANGES,
    HEADCOUNT_RANGE,
    HEALTH_LEVELS_RANGE,
    MEMBER_RANGES,
    ORDER_RANGES,
    RULE_RANGES,
    UNIT_RANGES,
    WEAPON_RANGES,
    WOUND_RANGE,
    Bound,
    derive_traits,
    headcount,
)

__all__ = ["battle_to_file", "initial_state", "load_battle"]

TOP_KEYS = {"system", "seed", "house_rules", "characters", "units", "orders", "started", "tick", "state", "history",
            "ended", "duel"}
ROLES = ("commander", "hero", "sorcerer", "relay", "member")
SPECIAL_KEYS = {"heroes", "sorcerers", "relays"}
UNIT_EXTRA_KEYS = {"commander", "special_characters", "named_members", "ammunition", "fortified", "cover", "join_war",
                   "split_from"}
DICE_KEYS = ("dice", "damage_dice", "rout_dice", "own_rout_dice", "exhaustion_dice", "target_exhaustion_dice",
             "target_dice")


def _list(data: dict[str, Any], key: str, problems: list[Problem], *, required: bool = False) -> list[Any]:
    value = data.get(key)
    if value is None:
        if required:
            problems.append(Problem(key, "is required (a list)"))
        return []
    if not isinstance(value, list):
        problems.append(Problem(key, f"{value!r} is not a list"))
        return []
    return value


def _bounded(data: dict[str, Any], ranges: dict[str, Bound], where: str, problems: list[Problem]) -> dict[str, Any]:
    """Issue 26: ``data`` with each number of ``ranges`` checked; one out of range is a
    problem at its path, and stands in as the nearest value in range."""
    out = dict(data)
    for key, bound in ranges.items():
        value = out.get(key)
        problem = bound.problem(value)
        if problem is not None and isinstance(value, (int, float)):
            problems.append(Problem(f"{where}.{key}", problem))
            out[key] = bound.clamp(value)
    return out


def _bounded_character(c: dict[str, Any], where: str, problems: list[Problem]) -> dict[str, Any]:
    """Issue 26: a character's traits, Abilities, weapons and health track in range."""
    c = _bounded(c, CHARACTER_RANGES, where, problems)
    abilities = c.get("abilities")
    if isinstance(abilities, dict):
        c["abilities"] = dict(abilities)
        for name, dots in abilities.items():
            problem = ABILITY_RANGE.problem(dots, str(name))
            if problem is not None:
                problems.append(Problem(f"{where}.abilities.{name}", problem))
                c["abilities"][name] = ABILITY_RANGE.clamp(dots)
    for weapon in ("close_weapon", "ranged_weapon"):
        if isinstance(c.get(weapon), dict):
            c[weapon] = _bounded(c[weapon], WEAPON_RANGES, f"{where}.{weapon}", problems)
    track = c.get("health_track")
    if isinstance(track, (list, tuple)):
        problem = HEALTH_LEVELS_RANGE.problem(len(track) + 1)
        if problem is not None:
            problems.append(Problem(f"{where}.health_track", problem))
            track = track[:HEALTH_LEVELS_RANGE.high - 1]
        c["health_track"] = list(track)
        for j, penalty in enumerate(track):
            problem = WOUND_RANGE.problem(penalty)
            if problem is not None:
                problems.append(Problem(f"{where}.health_track[{j}]", problem))
                c["health_track"][j] = WOUND_RANGE.clamp(penalty)
    return c


def _bounded_unit(raw: dict[str, Any], where: str, problems: list[Problem]) -> dict[str, Any]:
    """Issue 26: a unit's typed numbers and its member groups' in range."""
    raw = _bounded(raw, UNIT_RANGES, where, problems)
    members = raw.get("members")
    if isinstance(members, list):
        raw["members"] = [_bounded(g, MEMBER_RANGES, f"{where}.members[{j}]", problems) if isinstance(g, dict) else g
                          for j, g in enumerate(members)]
    return raw


def _bounded_rules(data: Any, problems: list[Problem]) -> Any:
    """Issue 26: the house rules' numbers in range (``speed.X`` and ``dv.X`` each)."""
    if not isinstance(data, dict):
        return data
    out = _bounded(data, {"inactive_dv": RULE_RANGES["inactive_dv"]}, "house_rules", problems)
    for key in ("speed", "dv"):
        if isinstance(out.get(key), dict):
            out[key] = _bounded(out[key], dict.fromkeys(out[key], RULE_RANGES[key]), f"house_rules.{key}", problems)
    return out


def _dice_format(value: Any, where: str, problems: list[Problem]) -> None:
    """E1: a die cell's form, checked before any roll (:func:`read_die_cell`): faces 1-10,
    or a number of successes marked as such.  How many faces or successes the pool allows
    is checked when it is rolled."""
    try:
        read_die_cell(value, where)
    except InputError as exc:
        problems.extend(exc.problems)


def _option_syntax(order: dict[str, Any], where: str, problems: list[Problem]) -> None:
    """X16, X28, X32, X37: an Attack, Move or Dash option the order syntax does not define
    is refused at its cell, with the syntax (issue 22; :mod:`.options`)."""
    action, option = order.get("action"), order.get("option")
    if option is None or action not in ("Attack", "Move", "Dash"):
        return
    try:
        if action == "Attack":
            parse_attack_option(str(option))
        else:
            move_option(str(option))
    except ValueError as exc:
        problems.append(Problem(where, str(exc)))


def _characters(raw: list[Any], problems: list[Problem]) -> tuple[list[Character], dict[str, str]]:
    out: list[Character] = []
    roles: dict[str, str] = {}
    seen: set[str] = set()
    for i, c in enumerate(raw):
        where = f"characters[{i}]"
        if not isinstance(c, dict):
            problems.append(Problem(where, f"{c!r} is not a mapping"))
            continue
        c = _bounded_character(c, where, problems)
        role = c.pop("role", None)
        if role is not None and role not in ROLES:
            problems.append(Problem(f"{where}.role", f"{role!r} is not a role{did_you_mean(role, ROLES)}; the roles "
                                                     f"are {', '.join(ROLES)}"))
        ch = validate(Character, c, where, problems)
        if ch is None:
            continue
        if ch.name in seen:
            problems.append(Problem(f"{where}.name", f"{ch.name!r} is already a character: names must be unique"))
            continue
        seen.add(ch.name)
        out.append(ch)
        if role is not None:
            roles[ch.name] = role
    return out, roles


def _named(value: Any, where: str, chars: dict[str, Character], problems: list[Problem]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(Problem(where, f"{value!r} is not a list of character names"))
        return ()
    for j, name in enumerate(value):
        if name not in chars:
            problems.append(Problem(f"{where}[{j}]", f"{name!r} is not a character{did_you_mean(name, chars)}"))
    return tuple(value)


def _unit(raw: Any, i: int, chars: dict[str, Character], rules: HouseRules, problems: list[Problem],
          used: dict[str, str]) -> BattleUnit | None:
    where = f"units[{i}]"
    if not isinstance(raw, dict):
        problems.append(Problem(where, f"{raw!r} is not a mapping"))
        return None
    raw = _bounded_unit(raw, where, problems)
    spec_data = {k: v for k, v in raw.items() if k not in UNIT_EXTRA_KEYS}
    before = len(problems)
    commander = None
    cname = raw.get("commander")
    if cname is None:
        problems.append(Problem(f"{where}.commander", "is required (the name of a character)"))
    elif not isinstance(cname, str) or cname not in chars:
        problems.append(Problem(f"{where}.commander", f"{cname!r} is not a character{did_you_mean(cname, chars)}"))
    else:
        commander = chars[cname]
    special = raw.get("special_characters") or {}
    roles: dict[str, tuple[str, ...]] = {k: () for k in SPECIAL_KEYS}
    if not isinstance(special, dict):
        problems.append(Problem(f"{where}.special_characters", f"{special!r} is not a mapping of heroes, sorcerers "
                                                               "and relays"))
    else:
        for key in special:
            if key not in SPECIAL_KEYS:
                problems.append(Problem(f"{where}.special_characters.{key}",
                                        f"is not a role of special character{did_you_mean(key, SPECIAL_KEYS)} "
                                        "(heroes, sorcerers, relays; X11)"))
        for key in SPECIAL_KEYS:
            roles[key] = _named(special.get(key), f"{where}.special_characters.{key}", chars, problems)
    members = _named(raw.get("named_members"), f"{where}.named_members", chars, problems)
    for name in (cname if isinstance(cname, str) else None, *roles["heroes"], *roles["sorcerers"],
                 *roles["relays"], *members):
        if name is None:
            continue
        if name in used and used[name] != raw.get("name") and not raw.get("split_from"):  # X23: moved in battle
            problems.append(Problem(where, f"{name!r} is already in unit {used[name]!r}: a character serves in one "
                                           "unit"))
        used[name] = str(raw.get("name"))
    spec_data.update(relays=len(roles["relays"]), heroes=len(roles["heroes"]), sorcerers=len(roles["sorcerers"]))
    spec_data["commander"] = commander.model_dump() if commander is not None else {"name": "?"}
    spec = validate(UnitSpec, spec_data, where, problems)
    extra = {k: raw[k] for k in ("ammunition", "fortified", "cover", "split_from") if k in raw}
    _dice_format(raw.get("join_war"), f"{where}.join_war", problems)
    unit = None
    if spec is not None:
        problem = HEADCOUNT_RANGE.problem(headcount(spec, rules).value)
        if problem is not None:  # X2: checked before any trait is derived from it
            problems.append(Problem(f"{where}.members", problem))
            return None
        n_special = len(roles["heroes"]) + len(roles["sorcerers"]) + len(roles["relays"])
        t = derive_traits(spec, rules)
        if n_special > 2 * t.magnitude.value:
            problems.append(Problem(f"{where}.special_characters",
                                    f"{spec.name} has {n_special} special characters, more than 2 × its Magnitude "
                                    f"{t.magnitude.value} (X11)"))
        try:
            check_formation(spec, t.drill.value, communication_failure=t.communication_failure,
                            where=f"{where}.formation", magnitude=t.magnitude.value)
        except InputError as exc:
            problems.extend(exc.problems)
        unit = validate(BattleUnit, {"spec": spec, "heroes": roles["heroes"], "sorcerers": roles["sorcerers"],
                                      "relays": roles["relays"], "named_members": members,
                                      "join_war": raw.get("join_war"), **extra}, where, problems)
    return unit if len(problems) == before else None


def initial_state(unit: BattleUnit, rules: HouseRules) -> UnitState:
    """X2, X4, X13, X31: a unit as the battle starts: its derived Magnitude, full Endurance
    (X41), typed formation, its commander's track (X33), and its ammunition."""
    t = derive_traits(unit.spec, rules)
    ranged = unit.spec.ranged_weapons or unit.spec.commander.ranged_weapon is not None
    ammo = unit.ammunition if unit.ammunition is not None else (
        starting_ammunition(fortified=unit.fortified).value if ranged else None)
    return UnitState(name=unit.name, magnitude=t.magnitude.value, health_levels=unit.spec.commander.health_levels,
                     endurance=t.endurance.value, starting_endurance=t.endurance.value,
                     starting_magnitude=t.magnitude.value, formation=unit.spec.formation,
                     commander=unit.spec.commander.name, solo=unit.spec.solo, heroes=unit.heroes,
                     sorcerers=unit.sorcerers, relays=unit.relays, ammunition=ammo)


def _orders(raw: list[Any], units: list[str], problems: list[Problem]) -> list[Order]:
    out: list[Order] = []
    for i, o in enumerate(raw):
        where = f"orders[{i}]"
        if not isinstance(o, dict):
            problems.append(Problem(where, f"{o!r} is not a mapping"))
            continue
        before = len(problems)
        tick = o.get("tick")
        if not (isinstance(tick, (int, float)) and tick < 0):  # below 0: the Order model's own refusal
            o = _bounded(o, ORDER_RANGES, where, problems)
        for key in DICE_KEYS:
            _dice_format(o.get(key), f"{where}.{key}", problems)
        _option_syntax(o, f"{where}.option", problems)
        weather = o.get("weather")
        if weather is not None and (not isinstance(weather, str) or weather.strip().title() not in
                                    {w.value for w in Weather}):
            problems.append(Problem(f"{where}.weather", f"{weather!r} is not a weather (one of "
                                                        f"{', '.join(w.value for w in Weather)}; X37)"))
        for key in ("unit", "target"):
            name = o.get(key)
            if isinstance(name, str) and units and name not in units:
                problems.append(Problem(f"{where}.{key}", f"{name!r} is not a unit{did_you_mean(name, units)}"))
        order = validate(Order, {**o, "row": o.get("row", i)}, where, problems)
        if order is not None and len(problems) == before:
            out.append(order)
    return out


def _orders_onto(known: Battle, data: dict[str, Any], source: str) -> Battle:
    """Issue 23: ``known`` with the orders of ``data`` read and checked, as a whole read of
    ``data`` reads them (see :func:`load_battle`)."""
    problems: list[Problem] = []
    typed = [str(u["name"]) for u in _list(data, "units", []) if isinstance(u, dict) and "name" in u]
    orders = _orders(_list(data, "orders", problems), typed, problems)
    if problems:
        raise InputError(problems, source)
    return known.model_copy(update={"orders": tuple(orders)})


def load_battle(data: Any, source: str = "", *, known: Battle | None = None) -> Battle:
    """Read an Exalted battle file's data; every problem is reported at once, with its
    path, and nothing is returned unless all is well.

    ``known`` (issue 23) is the battle this function made of the same ``data`` but for its
    ``house_rules`` and ``orders`` (a tracker's Next Tick: the State it read, with the
    house rules and orders typed now).  When the house rules read now are the very ones
    ``known`` holds (the same values, of the same types: a unit's checks depend on them,
    X2, X11), its characters, units and the rest are taken as they were read and only the
    orders are read and checked; any other house rules read the whole file.  The battle
    and the problems are those of a whole read either way."""
    problems: list[Problem] = []
    if not isinstance(data, dict):
        raise InputError([Problem("", "an Exalted battle file is a mapping of system, seed, house_rules, "
                                      "characters, units and orders")], source)
    for key in data:
        if key not in TOP_KEYS:
            problems.append(Problem(str(key), f"is not a key of an Exalted battle file{did_you_mean(key, TOP_KEYS)}"))
    rules = validate(HouseRules, _bounded_rules(data.get("house_rules") or {}, problems), "house_rules",
                     problems) or HouseRules()
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, str))):
        problems.append(Problem("seed", f"{seed!r} is not a whole number or text"))
    if known is not None and not problems and repr(rules) == repr(known.house_rules):
        return _orders_onto(known, data, source)
    chars, roles = _characters(_list(data, "characters", problems), problems)
    by_name = {c.name: c for c in chars}
    units: list[BattleUnit] = []
    used: dict[str, str] = {}
    for i, raw in enumerate(_list(data, "units", problems, required=True)):
        unit = _unit(raw, i, by_name, rules, problems, used)
        if unit is None:
            continue
        if any(u.name == unit.name for u in units):
            problems.append(Problem(f"units[{i}].name", f"{unit.name!r} is already a unit: names must be unique"))
            continue
        units.append(unit)
    typed_names = [str(u["name"]) for u in _list(data, "units", []) if isinstance(u, dict) and "name" in u]
    orders = _orders(_list(data, "orders", problems), typed_names, problems)
    state: list[UnitState] = []
    for i, s in enumerate(_list(data, "state", problems)):
        st = validate(UnitState, s, f"state[{i}]", problems)
        if st is not None:
            state.append(st)
    history: list[UndoRecord] = []
    for i, h in enumerate(_list(data, "history", problems)):
        try:
            h = expand_record(h)  # issue 23: a tracker's compact record, copied into a file
        except ValueError as exc:
            problems.append(Problem(f"history[{i}]", str(exc)))
            continue
        rec = validate(UndoRecord, h, f"history[{i}]", problems)
        if rec is not None:
            try:
                history.append(rec.check())
            except ValueError as exc:  # issue 23: what a tick changed, typed wrong
                problems.append(Problem(f"history[{i}].changed", str(exc)))
    duel = validate(Duel, data["duel"], "duel", problems) if data.get("duel") is not None else None
    if problems:
        raise InputError(problems, source)
    if not state:
        born = [Problem(f"units[{i}].split_from", f"{u.name!r} split off {u.split_from!r} during the battle (X23): "
                                                  "remove it to start the battle again")
                for i, u in enumerate(units) if u.split_from is not None]
        if born:
            raise InputError(born, source)
        state = [initial_state(u, rules) for u in units]
    elif {s.name for s in state} != {u.name for u in units}:
        raise InputError([Problem("state", "does not list the same units as units: (it is written by sheetsync; "
                                           "remove it to start the battle again)")], source)
    try:
        return Battle(seed=seed, house_rules=rules, characters=tuple(chars), roles=roles, units=tuple(units),
                      orders=tuple(orders), started=bool(data.get("started", False)), tick=int(data.get("tick", 0)),
                      state=tuple(state), history=_changes_only(history, state), ended=bool(data.get("ended", False)),
                      duel=duel)
    except (TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        raise InputError([Problem("", f"the battle's started, tick or ended key is not valid: {exc}")],
                         source) from None


def _unit_to_file(u: BattleUnit) -> dict[str, Any]:
    spec = u.spec.model_dump(mode="json", exclude_defaults=True, exclude={"commander", "relays", "heroes",
                                                                           "sorcerers"})
    out: dict[str, Any] = {"name": u.name, **{k: v for k, v in spec.items() if k != "name"},
                           "commander": u.spec.commander.name}
    special = {k: list(getattr(u, k)) for k in ("heroes", "sorcerers", "relays") if getattr(u, k)}
    if special:
        out["special_characters"] = special
    if u.named_members:
        out["named_members"] = list(u.named_members)
    for key in ("ammunition", "fortified", "cover", "join_war", "split_from"):
        value = getattr(u, key)
        typed_zero = key in ("join_war", "ammunition") and value == 0  # 0 arrows typed is not "none typed" (X31)
        if value not in (None, False, 0) or typed_zero:
            out[key] = value
    return out


def _changes_only(history: list[UndoRecord], state: list[UnitState]) -> tuple[UndoRecord, ...]:
    """The undo records as the engine keeps them (issue 23: what each tick changed), from a
    file's records (every unit state each tick replaced), newest first worked out from the
    states after it: the battle read back equals the battle written."""
    now, out = tuple(state), []
    for rec in reversed(history):
        before = rec.states_before(now)
        if rec.changed is None:
            rec = UndoRecord.of(tick=rec.tick, started=rec.started, orders=rec.orders, before=rec.states, after=now,
                                units=rec.units, duel=rec.duel)
        out.append(rec)
        now = before
    return tuple(out[::-1])


def _whole_history(battle: Battle) -> list[UndoRecord]:
    """The undo records with every unit state they replaced, as a battle file keeps them
    (issue 23: the engine's records keep only what each tick changed), newest first
    worked out from the states after it."""
    now, out = battle.state, []
    for rec in reversed(battle.history):
        rec = rec.whole(now)
        out.append(rec)
        now = rec.states
    return out[::-1]


def battle_to_file(battle: Battle) -> dict[str, Any]:
    """The battle as a file: what was typed, and the state the next long tick and undo need."""
    chars = []
    for c in battle.characters:
        d = c.model_dump(mode="json", exclude_defaults=True)
        d["name"] = c.name
        if c.name in battle.roles:
            d = {"name": c.name, "role": battle.roles[c.name], **{k: v for k, v in d.items() if k != "name"}}
        chars.append(d)
    out: dict[str, Any] = {"system": "exalted"}
    if battle.seed is not None:
        out["seed"] = battle.seed
    rules = battle.house_rules.model_dump(mode="json", exclude_defaults=True)
    if rules:
        out["house_rules"] = rules
    out["characters"] = chars
    out["units"] = [_unit_to_file(u) for u in battle.units]
    out["orders"] = [o.model_dump(mode="json", exclude_defaults=True, exclude={"row"}) | {"tick": o.tick}
                     for o in battle.orders]
    if battle.started:
        out["started"] = True
        out["tick"] = battle.tick
        out["state"] = [s.model_dump(mode="json") for s in battle.state]
    if battle.history:
        out["history"] = [h.model_dump(mode="json") for h in _whole_history(battle)]
    if battle.ended:
        out["ended"] = True
    if battle.duel is not None:
        out["duel"] = battle.duel.model_dump(mode="json")
    return out
