"""The end of a battle and its report (H12), and each unit's values now (6.2.2, H10):
what ``sheetsync aftermath`` and ``sheetsync pools`` show for a hex battle."""

from __future__ import annotations

import math
from typing import Any

from sheetsync.core.model import Model, model
from sheetsync.systems.hexwar.rules.counter import Charge, RangeKind, reduce_charge, reduce_value
from sheetsync.systems.hexwar.rules.models import Battle
from sheetsync.systems.hexwar.rules.turn import reach

__all__ = ["Report", "SideReport", "UnitReport", "UnitValues", "aftermath", "battle_over", "effective_values"]


@model
class UnitValues(Model):
    """6.2.2, H10, H6: a unit's values at its casualties, and how far it reaches."""

    name: str
    side: str
    counter: str
    casualties: int
    attack: int
    charge: Charge
    defense: int
    movement: int
    range: int
    range_kind: RangeKind
    reduced_attack: int | None
    reach: int
    destroyed: bool


def effective_values(battle: Battle) -> tuple[UnitValues, ...]:
    """6.2.2, H10: each unit's attack, charge mark, defense and reduced-range value after
    its casualties (movement and range do not fall), and its reach (H6)."""
    rules = battle.house_rules
    prop = rules.proportional_reduction
    out = []
    for u in battle.units:
        c, k = u.casualties, u.counter
        out.append(UnitValues(
            name=u.name, side=u.side, counter=str(k), casualties=c, attack=reduce_value(k.attack, c, prop),
            charge=reduce_charge(k.charge, c, prop), defense=reduce_value(k.defense, c, prop), movement=k.movement,
            range=k.range, range_kind=k.range_kind,
            reduced_attack=None if k.reduced_attack is None else reduce_value(k.reduced_attack, c, prop),
            reach=reach(u, rules), destroyed=u.destroyed))
    return tuple(out)


@model
class UnitReport(Model):
    """H12: one unit's casualties, its losses in men, and what destroyed it."""

    name: str
    side: str
    counter: str
    size: float
    men: int
    casualties: int
    """In percent, at most 100."""
    losses: int
    """Men lost: size × men × casualties, rounded to the nearest man."""
    destroyed: bool
    destroyed_turn: int | None
    destroyed_by: tuple[str, ...]


@model
class SideReport(Model):
    """H12: a side's totals."""

    side: str
    units: int
    destroyed: int
    men: int
    losses: int


@model
class Report(Model):
    """H12: the battle's report."""

    turns: int
    over: bool
    survivor: str | None
    """The one side with units left, when the battle is over that way."""
    units: tuple[UnitReport, ...]
    sides: tuple[SideReport, ...]

    def to_json(self) -> dict[str, Any]:
        """The report as ``sheetsync aftermath --json`` prints it."""
        return self.model_dump(mode="json")


def battle_over(battle: Battle) -> str | None:
    """H12: the side left when every other side has no units left, else None (also when
    no side has any left: :meth:`Battle.fight_over` says whether the fight is over)."""
    live = battle.live_sides()
    return live[0] if battle.fight_over() and len(live) == 1 else None


def aftermath(battle: Battle) -> Report:
    """H12: each unit's casualties, its losses in men (size × men × casualties, 6.2.1 and
    2.0 for the head counts) and what destroyed it, and each side's totals.  The battle
    is over when one side has no units left (or when the Storyteller ends it)."""
    units = []
    for u in battle.units:
        c = min(u.casualties, 100)
        head = u.size * u.men
        units.append(UnitReport(
            name=u.name, side=u.side, counter=str(u.counter), size=u.size, men=u.men, casualties=c,
            losses=math.floor(head * c / 100 + 0.5), destroyed=u.destroyed, destroyed_turn=u.destroyed_turn,
            destroyed_by=u.destroyed_by))
    sides = []
    for side in battle.sides:
        mine = [r for r in units if r.side == side]
        sides.append(SideReport(side=side, units=len(mine), destroyed=sum(r.destroyed for r in mine),
                                men=math.floor(sum(r.size * r.men for r in mine) + 0.5),
                                losses=sum(r.losses for r in mine)))
    survivor = battle_over(battle)
    return Report(turns=battle.turn - 1, over=battle.fight_over(), survivor=survivor, units=tuple(units),
                  sides=tuple(sides))
