"""Values of the hex wargame: house rules, the map, units, a turn's orders, the undo record
and the battle.  Every model is a frozen, slotted dataclass on the standard library alone
(:mod:`sheetsync.core.model`, issue 24); a turn makes new ones (DESIGN convention 4)."""

from __future__ import annotations

from dataclasses import field
from functools import lru_cache
from typing import Annotated, Any, Literal

from sheetsync.core.model import MinLen, Model, Range, model
from sheetsync.systems.hexwar.rules.counter import Counter
from sheetsync.systems.hexwar.rules.grid import Hex, HexMap, parse_hex

__all__ = [
    "AttackOrder",
    "Battle",
    "HouseRules",
    "MapSpec",
    "MoveOrder",
    "TurnOrders",
    "UndoRecord",
    "Unit",
    "UnitBefore",
]


@model
class HouseRules(Model):
    """The readings of RULINGS-hexwar.md a chronicle may change (the keys H1-H12 name)."""

    initiative: Literal["set", "contest"] = "set"
    """H3: the Storyteller sets who has initiative each turn, or the generals contest it."""
    stack_limit: Annotated[float, Range(gt=0)] = 2
    """H4, 5.0: battalions of one side a hex may hold after a move (a company counts 0.5)."""
    charge_by: Literal["distance", "path"] = "distance"
    """H5, 6.3.1: what makes a move a charge."""
    stack_defense: Literal["single"] = "single"
    """H7, 9.0: the defender's own D (a summed stack defense is not offered yet)."""
    proportional_reduction: bool = True
    """H10, 6.2.2: damaged units fight with reduced values."""

    @classmethod
    def describe(cls) -> dict[str, tuple[str, Any, list[Any]]]:
        """``{key: (what it means, default, choices)}`` for a House Rules sheet."""
        docs = {
            "initiative": "H3: who has initiative: typed each turn (set) or a Military Science contest",
            "stack_limit": "H4: battalions of one side in a hex after moving",
            "charge_by": "H5: a charge is a move ending 2+ hexes away (distance), or also a typed path of 2+ new hexes",
            "stack_defense": "H7: the defender's own defense value",
            "proportional_reduction": "H10: values fall with casualties (6.2.2)",
        }
        out: dict[str, tuple[str, Any, list[Any]]] = {}
        for name, info in cls.model_fields.items():
            ann = info.annotation
            choices: list[Any] = [True, False] if ann is bool else list(getattr(ann, "__args__", ()))
            out[name] = (docs[name], info.default, choices)
        return out


@model
class MapSpec(Model):
    """H2, 5.1: the map's width and height in hexes and its impassable hexes (ids)."""

    columns: Annotated[int, Range(ge=1, le=99)]
    rows: Annotated[int, Range(ge=1, le=99)]
    impassable: tuple[str, ...] = ()

    @property
    def grid(self) -> HexMap:
        """The map as a :class:`HexMap` for the grid algorithms (made once per map)."""
        return _grid(self.columns, self.rows, self.impassable)


@lru_cache(maxsize=64)
def _grid(columns: int, rows: int, impassable: tuple[str, ...]) -> HexMap:
    return HexMap(columns, rows, frozenset(parse_hex(h) for h in impassable))


@model
class Unit(Model):
    """H1: a unit and its standing.  ``casualties`` is in percent and may pass 100 (the
    sum of the hits, 6.2.1); a unit at 100% or more is destroyed (H9) and off the map."""

    name: Annotated[str, MinLen(1)]
    side: Annotated[str, MinLen(1)]
    counter: Counter
    hex: str
    size: Annotated[float, Range(gt=0)] = 1.0
    """H1: in battalions: a battalion or squadron is 1, a company 0.5."""
    size_name: str | None = None
    """H1: the size's word as typed when it is not the usual word for that size
    (``squadron``, ``fist``), so that reports say it back; it changes no rule."""
    men: Annotated[int, Range(ge=1)] = 500
    """H1, H12: head count of a battalion of this unit, only for the report."""
    casualties: Annotated[int, Range(ge=0)] = 0
    destroyed_turn: int | None = None
    destroyed_by: tuple[str, ...] = ()

    @property
    def destroyed(self) -> bool:
        """6.2.1, H9: 100% casualties or more: out of the fight.  This is the one answer to
        whether a unit is still in the fight (a unit that reaches 100% in a turn still
        attacked in it, as the casualties apply after the last engagement)."""
        return self.casualties >= 100

    @property
    def at(self) -> Hex:
        """The unit's hex."""
        return parse_hex(self.hex)


@model
class MoveOrder(Model):
    """H4: a move, typed as a destination or as the path of hexes entered."""

    unit: str
    to: str | None = None
    path: tuple[str, ...] | None = None


@model
class AttackOrder(Model):
    """H7: one engagement: a defender, the attackers that join, and a typed d100 if any (H8)."""

    defender: str
    attackers: Annotated[tuple[str, ...], MinLen(1)]
    roll: Annotated[int | None, Range(ge=1, le=100)] = None


@model
class TurnOrders(Model):
    """H3: the turn's initiative, moves and attacks as typed."""

    initiative: str | None = None
    initiative_rolls: dict[str, int] = field(default_factory=dict)
    """H3 (``initiative = "contest"``): a typed 3d6 total per side."""
    moves: tuple[MoveOrder, ...] = ()
    attacks: tuple[AttackOrder, ...] = ()


@model
class UnitBefore(Model):
    """What undoing a turn needs of one unit it changed: its standing before the turn."""

    name: str
    hex: str
    casualties: int
    destroyed_turn: int | None = None
    destroyed_by: tuple[str, ...] = ()


@model
class UndoRecord(Model):
    """What undoing one turn needs, and no more: the turn's orders, the units it changed
    as they were, and who held initiative before.  Its size does not grow with the number
    of turns behind it."""

    turn: int
    orders: TurnOrders
    units: tuple[UnitBefore, ...] = ()
    initiative_holder: str | None = None


@model
class Battle(Model):
    """The whole truth of a hex battle between two turns."""

    system: Literal["hexwar"] = "hexwar"
    seed: int | str | None = None
    house_rules: HouseRules = HouseRules()
    map: MapSpec
    units: tuple[Unit, ...]
    turn: Annotated[int, Range(ge=1)] = 1
    orders: TurnOrders = TurnOrders()
    generals: dict[str, int] = field(default_factory=dict)
    """H3 (``initiative = "contest"``): each side's general's Military Science value."""
    initiative_holder: str | None = None
    """H3: who held initiative last turn (a tied contest keeps it)."""
    history: tuple[UndoRecord, ...] = ()

    @property
    def sides(self) -> tuple[str, ...]:
        """The sides, in the order their first unit is listed."""
        return tuple(dict.fromkeys(u.side for u in self.units))

    def unit(self, name: str) -> Unit:
        """The unit called ``name``."""
        for u in self.units:
            if u.name == name:
                return u
        raise KeyError(name)

    def live_sides(self) -> tuple[str, ...]:
        """H12: the sides that still have a unit that is not destroyed."""
        return tuple(dict.fromkeys(u.side for u in self.units if not u.destroyed))

    def fight_over(self) -> bool:
        """H12, H9: the fight is over when fewer than two sides have a unit in it (both
        sides may lose their last units in one turn).  ``resolve``, the Battle sheet, the
        report and the forecast all ask this; a battle typed with a single side is never
        over this way."""
        return len(self.sides) > 1 and len(self.live_sides()) < 2
