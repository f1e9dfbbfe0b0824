"""The values of an Exalted battle file (RULINGS-exalted.md "What the Tracker types"): the
units as typed with their special characters and named members, the orders, each unit's
state on the long-tick timeline, and the undo record.  Every model is frozen; a long tick
makes new ones (DESIGN convention 4)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, fields
from typing import Annotated, Any

from sheetsync.core.model import Range, model
from sheetsync.systems.exalted.rules.models import (
    Character,
    Formation,
    Frozen,
    HouseRules,
    UnitSpec,
)
from sheetsync.systems.exalted.rules.timeline import Action

__all__ = ["Battle", "BattleUnit", "Duel", "Order", "UndoRecord", "UnitState", "copy_state", "in_fight", "sides_in_fight"]

Dice = str | int | None
"""E1: a die cell: faces (``"7 3 10 2 1"``), a number of successes, or blank (rolled)."""


@model
class BattleUnit(Frozen):
    """A unit as typed: its traits (:class:`UnitSpec`, with its commander's), the names of
    its special characters by role (X11) and of its named rank-and-file members (X40), its
    ammunition (X31, arrows), cover (X16) and its Join War die cell (E4)."""

    spec: UnitSpec
    heroes: tuple[str, ...] = ()
    sorcerers: tuple[str, ...] = ()
    relays: tuple[str, ...] = ()
    named_members: tuple[str, ...] = ()
    ammunition: int | None = None
    fortified: bool = False
    cover: Annotated[int, Range(ge=0, le=100)] = 0
    join_war: Dice = None
    split_from: str | None = None
    """X23: the unit it split off from during the battle (written by sheetsync; a unit typed
    before the battle has none)."""

    @property
    def name(self) -> str:
        return self.spec.name


@model
class Order(Frozen):
    """One order row: its long tick, unit, action, target and option, and its die cells
    (the action's roll, the damage, the target's rout check, the attacker's own when it
    closes (X43), and the exhaustion rolls of the attacker and the target)."""

    tick: Annotated[int, Range(ge=0)]
    unit: str
    action: Action
    target: str | None = None
    option: str | None = None
    weather: str | None = None
    dice: Dice = None
    damage_dice: Dice = None
    rout_dice: Dice = None
    own_rout_dice: Dice = None
    """X43: the order's own unit's rout check when its close attack engages (``rout_dice``
    is the target's there)."""
    exhaustion_dice: Dice = None
    target_exhaustion_dice: Dice = None
    target_dice: Dice = None
    """X23, X24: the second unit's own roll (Split Unit: the new unit's command roll; Merge
    Units: the other commander's)."""
    row: int = 0
    """Where it was typed (its index in ``orders``), kept for messages."""


@model
class UnitState(Frozen):
    """One unit on the timeline (E5) and in the fight: Magnitude and the levels marked on
    its track (X34), Endurance (X4), formation (X13), hesitation (X36), engagements, the
    special characters still with it, and what undo and the aftermath need."""

    name: str
    magnitude: int
    marked: int = 0
    health_levels: int = 7
    endurance: int
    starting_endurance: int
    starting_magnitude: int
    formation: Formation
    commander: str
    solo: bool = False
    next_tick: int = 0
    dv_penalty: int = 0
    fixed_dv: int | None = None
    attacks_suffered: int = 0
    ranged_since: bool = False
    last_action: Action | None = None
    moved_on: int | None = None
    hesitating: bool = False
    engaged: tuple[str, ...] = ()
    engaged_since: dict[str, int] = field(default_factory=dict)
    enveloping: tuple[str, ...] = ()
    enveloped_by: tuple[str, ...] = ()
    heroes: tuple[str, ...] = ()
    sorcerers: tuple[str, ...] = ()
    relays: tuple[str, ...] = ()
    wounds: dict[str, int] = field(default_factory=dict)
    """E10, X32: levels marked on the commander's and special characters' own tracks."""
    fallen: tuple[str, ...] = ()
    """X32, X34: special characters and commanders slain in the battle."""
    mob_rule: bool = False
    mob_checks: int = 0
    disbanded: bool = False
    ammunition: int | None = None
    destroyed: bool = False
    """X34: brought to Magnitude 0 by damage: everyone but the former commander is dead."""
    charged: bool = False
    """X18, X37: its last action was a Dash that succeeded (a charge)."""
    aim_target: str | None = None
    aim_ticks: int = 0
    dots_lost: int = 0
    largest_loss: int = 0
    rallied: int = 0
    headcount: int | None = None
    """X2, X23, X24: the headcount once a split or merge has changed it (None: as typed, or
    the row's minimum after a loss)."""
    added: tuple[str, ...] = ()
    """X11: special characters who joined during the battle, in the order they joined
    (the last added leave first)."""
    departed: tuple[str, ...] = ()
    """X11, X23, X24: special characters who left the unit alive (expelled, or beyond the
    limit)."""
    merged_into: str | None = None
    """X24: the unit this one merged into (it has left the battle)."""

    @property
    def special_characters(self) -> tuple[str, ...]:
        return (*self.heroes, *self.sorcerers, *self.relays)

    def joined_order(self) -> tuple[str, ...]:
        """X11: the special characters in the order they joined: those typed (heroes,
        sorcerers, relays) first, then those added during the battle."""
        now = self.special_characters
        later = tuple(n for n in self.added if n in now)
        return (*(n for n in now if n not in later), *later)


@model
class Duel(Frozen):
    """X27: a duel begun and not yet decided: it stops the long ticks until its outcome is
    typed (an ``Initiate Duel`` order whose option starts ``result:``)."""

    challenger: str
    challenger_unit: str
    foe: str
    foe_unit: str
    tick: int


@model
class UndoRecord(Frozen):
    """What undoing one long tick needs: the tick and start flag before it, the orders as
    typed, and what the tick changed in the unit states (issue 23: ``changed``, the fields
    each unit had before it, only those the tick changed, as the battalion's records keep a
    reverse diff), or, in a record written before that, every unit state it replaced
    (``states``).  Both are read; :meth:`states_before` gives the states back either way."""

    tick: int
    started: bool
    orders: tuple[Order, ...]
    states: tuple[UnitState, ...] = ()
    """Every unit's state before the tick, in a record without ``changed``."""
    changed: dict[str, dict[str, Any]] | None = None
    """Issue 23: by unit, its fields before the tick that the tick changed (a unit the tick
    left as it was is not named); None: ``states`` holds the states whole."""
    units: tuple[BattleUnit, ...] | None = None
    """X23: the units before the tick, when it split one off (None: unchanged)."""
    duel: Duel | None = None
    """X27: the duel pending before the tick."""

    @classmethod
    def of(cls, *, tick: int, started: bool, orders: tuple[Order, ...], before: tuple[UnitState, ...],
           after: Sequence[UnitState], units: tuple[BattleUnit, ...] | None = None,
           duel: Duel | None = None) -> UndoRecord:
        """The record of a tick that turned the states ``before`` into ``after`` (issue 23:
        only what changed; the whole states when ``after`` does not list the units of
        ``before`` in the same order, so that the undo gives them back exactly)."""
        names = {s.name for s in before}
        if [s.name for s in before] != [s.name for s in after if s.name in names]:
            return cls(tick=tick, started=started, orders=orders, states=before, units=units, duel=duel)
        now = {s.name: s for s in after}
        changed = {s.name: diff for s in before if (diff := _changes(s, now[s.name]))}
        return cls(tick=tick, started=started, orders=orders, changed=changed, units=units, duel=duel)

    def check(self) -> UndoRecord:
        """This record, once each unit's fields in ``changed`` are known fields of a unit
        state with values of their types; raises ``ValueError`` (a record read from a
        tracker or a file that sheetsync did not write)."""
        for unit, was in (self.changed or {}).items():
            if not isinstance(unit, str) or not isinstance(was, dict) or "name" in was:
                raise ValueError(f"changed: {unit!r} is not a unit's changes")
            UnitState.model_validate({**_TEMPLATE, **_long(was)})
        return self

    def model_post_dump(self, data: dict[str, Any]) -> dict[str, Any]:
        """A record dumps the form it holds: ``changed`` (issue 23) or the whole ``states``
        (as every record did before, so those dump as they always did).  A ``changed``
        record dumps compact (issue 23, :func:`compact_record`): its orders as rows;
        :meth:`read` reads either form."""
        data.pop("changed" if self.changed is None else "states", None)
        return compact_record(data) if self.changed is not None else data

    @classmethod
    def read(cls, data: Any) -> UndoRecord:
        """A record from its dump, compact (:func:`compact_record`) or not; raises what
        ``model_validate`` raises."""
        return cls.model_validate(expand_record(data))

    def whole(self, now: tuple[UnitState, ...]) -> UndoRecord:
        """This record with every unit state before the tick (the form a battle file keeps),
        from the states ``now`` just after it."""
        if self.changed is None:
            return self
        return self.model_copy(update={"states": self.states_before(now), "changed": None})

    def states_before(self, now: tuple[UnitState, ...]) -> tuple[UnitState, ...]:
        """The unit states before the tick, from the states ``now`` (those just after it)."""
        if self.changed is None:
            return self.states
        names = None if self.units is None else {u.name for u in self.units}
        return tuple(_restored(s, self.changed.get(s.name)) for s in now if names is None or s.name in names)


ORDER_ROW = ("tick", "unit", "action", "target", "option", "row", "weather", "dice", "damage_dice", "rout_dice",
             "own_rout_dice", "exhaustion_dice", "target_exhaustion_dice", "target_dice")
"""Issue 23: an order's fields in the order a compact record's rows hold them (a field
added to :class:`Order` is added at the end, so older rows still read)."""
def compact_record(data: dict[str, Any]) -> dict[str, Any]:
    """Issue 23: a ``changed`` record's dump made compact, as a tracker's State keeps it: its
    orders as rows of :data:`ORDER_ROW`'s fields, the trailing empty ones left out (``o``);
    its changes already name each field by its short key (:data:`SHORT_KEYS`).  A long tick
    at 100 units then adds some 2 KB instead of 4 to 8."""
    out = dict(data)
    if "orders" in out:
        rows = []
        for o in out.pop("orders"):
            row = [o.get(k) for k in ORDER_ROW]
            while row and row[-1] is None:
                row.pop()
            rows.append(row)
        out["o"] = rows
    return out


def expand_record(data: Any) -> Any:
    """A record's dump as :func:`compact_record` found it (anything else as it is)."""
    if not isinstance(data, dict) or "o" not in data:
        return data
    out = dict(data)
    rows = out.pop("o")
    if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) <= len(ORDER_ROW) for r in rows):
        raise ValueError("o: not a list of order rows")
    out["orders"] = [{k: v for k, v in zip(ORDER_ROW, r, strict=False) if v is not None} for r in rows]
    return out


_TEMPLATE: dict[str, Any] = {"name": "-", "magnitude": 0, "endurance": 0, "starting_endurance": 0,
                              "starting_magnitude": 0, "formation": "Relaxed", "commander": "-"}
"""A unit state's required fields, under a record's changes to check their types."""
_STATE_FIELDS: tuple[str, ...] = ()

SHORT_KEYS: dict[str, str] = {
    "magnitude": "m", "marked": "mk", "health_levels": "hl", "endurance": "e", "starting_endurance": "se",
    "starting_magnitude": "sm", "formation": "f", "commander": "c", "solo": "s", "next_tick": "t",
    "dv_penalty": "dv", "fixed_dv": "fd", "attacks_suffered": "a", "ranged_since": "rs", "last_action": "la",
    "moved_on": "mo", "hesitating": "h", "engaged": "g", "engaged_since": "gs", "enveloping": "ev",
    "enveloped_by": "eb", "heroes": "hr", "sorcerers": "so", "relays": "r", "wounds": "w", "fallen": "fa",
    "mob_rule": "mr", "mob_checks": "mc", "disbanded": "d", "ammunition": "am", "destroyed": "ds", "charged": "ch",
    "aim_target": "at", "aim_ticks": "ak", "dots_lost": "dl", "largest_loss": "ll", "rallied": "ra",
    "headcount": "hc", "added": "ad", "departed": "dp", "merged_into": "mi"}
"""Issue 23: the short key a record's ``changed`` writes for each unit state field (a
record written before them has the fields' own names; both are read).  Fixed: records in
saved trackers use them."""
_LONG_KEYS: dict[str, str] = {v: k for k, v in SHORT_KEYS.items()}


def _long(was: dict[str, Any]) -> dict[str, Any]:
    """A record's changes of one unit under the fields' own names (short keys or long)."""
    return {_LONG_KEYS.get(k, k): v for k, v in was.items()}


def _changes(before: UnitState, after: UnitState) -> dict[str, Any]:
    """Issue 23: the fields of ``before`` whose values ``after`` changed, as they were, in
    JSON's terms (as a record read back from a file or a tracker holds them), each under
    its short key (:data:`SHORT_KEYS`)."""
    global _STATE_FIELDS
    if before is after:
        return {}
    if not _STATE_FIELDS:
        _STATE_FIELDS = tuple(f.name for f in fields(UnitState))
    keys = [k for k in _STATE_FIELDS if getattr(before, k) != getattr(after, k)]
    if not keys:
        return {}
    return {SHORT_KEYS.get(k, k): v for k, v in before.model_dump(mode="json", include=keys).items()}


def _restored(now: UnitState, was: dict[str, Any] | None) -> UnitState:
    """A unit state with its fields before the tick put back."""
    if not was:
        return now
    return UnitState.model_validate({**now.model_dump(mode="json"), **_long(was)})


@model
class Battle(Frozen):
    """An Exalted battle: the typed file and where the fight stands."""

    seed: int | str | None = None
    house_rules: HouseRules = HouseRules()
    characters: tuple[Character, ...] = ()
    roles: dict[str, str] = field(default_factory=dict)
    units: tuple[BattleUnit, ...]
    orders: tuple[Order, ...] = ()
    started: bool = False
    tick: int = 0
    state: tuple[UnitState, ...] = ()
    history: tuple[UndoRecord, ...] = ()
    ended: bool = False
    duel: Duel | None = None
    """X27: a duel being fought: no long tick resolves until its outcome is typed."""

    def unit(self, name: str) -> BattleUnit | None:
        return _by_name(self.units).get(name)

    def character(self, name: str) -> Character | None:
        return _by_name(self.characters).get(name)

    def state_of(self, name: str) -> UnitState | None:
        return _by_name(self.state).get(name)

    def side_of(self, name: str) -> str:
        u = self.unit(name)
        return u.spec.side if u is not None else ""


_NAMED: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = {}


def _by_name(items: tuple[Any, ...]) -> dict[str, Any]:
    """The first item of ``items`` of each name (as a search from the start finds it),
    kept per tuple, which is frozen: a battle's units, characters or states are looked up
    by name tens of thousands of times a forecast (issue 23).  The tuple is held with its
    index, so its id names no other tuple while the entry lives."""
    hit = _NAMED.get(id(items))
    if hit is not None and hit[0] is items:
        return hit[1]
    index: dict[str, Any] = {}
    for item in items:
        index.setdefault(item.name, item)
    if len(_NAMED) >= 512:
        _NAMED.clear()
    _NAMED[id(items)] = (items, index)
    return index


def copy_state(st: UnitState, changes: Mapping[str, Any]) -> UnitState:
    """``st.model_copy(update=changes)``, the same new state, made at some half the cost
    (issue 23: a long tick copies a unit state several times an attack): each field is set
    through its slot, then the changes.  A name that is no field raises ``TypeError``."""
    copy = _COPY_STATE or _state_copier()
    return copy(st, changes)


def _state_copier() -> Callable[[UnitState, Mapping[str, Any]], UnitState]:
    global _COPY_STATE
    names = tuple(f.name for f in fields(UnitState))
    body = "".join(f"    _s{i}(new, obj.{n})\n" for i, n in enumerate(names))
    src = (f"def copy(obj, update):\n    if not _names.issuperset(update):\n        _unknown(update)\n"
           f"    new = _new(_cls)\n{body}    for k, v in update.items():\n        _set(new, k, v)\n    return new\n")
    scope: dict[str, Any] = {f"_s{i}": getattr(UnitState, n).__set__ for i, n in enumerate(names)}
    scope.update(_names=frozenset(names), _unknown=_unknown_field, _new=object.__new__, _cls=UnitState,
                 _set=object.__setattr__)
    exec(src, scope)  # noqa: S102 - field names only, as dataclasses builds __init__
    _COPY_STATE = scope["copy"]
    return _COPY_STATE


def _unknown_field(update: Mapping[str, Any]) -> None:
    names = {f.name for f in fields(UnitState)}
    key = next(k for k in update if k not in names)
    raise TypeError(f"UnitState has no field {key!r}")


_COPY_STATE: Callable[[UnitState, Mapping[str, Any]], UnitState] | None = None


def in_fight(st: UnitState | None) -> bool:
    """X1, X24, X32, X34, X39, X48: whether a unit is still in the fight, the one answer
    every part of sheetsync asks.  A unit stays in the fight until it leaves the battle:
    its commander slain while it stands alone (X32, X34), leaderless with ``mob_rule``
    off (X39), or merged into another unit (X24).  A unit brought to Magnitude 0, by
    damage (X34) or by rout (X48), is not out: its commander fights on as a solo unit,
    acts on its ticks and may be attacked; a unit that starts solo (X1) is in the fight
    at Magnitude 0 too."""
    return st is not None and not st.disbanded


def sides_in_fight(battle: Battle) -> list[str]:
    """X34: the sides that still have a unit in the fight (:func:`in_fight`), in the order
    their first unit is listed."""
    states = _by_name(battle.state)
    live: dict[str, bool] = {}
    for u in battle.units:  # issue 23: one pass, each unit's state looked up once
        side = u.spec.side
        if not live.get(side):
            live[side] = in_fight(states.get(u.name))
    return [s for s, ok in live.items() if ok]
