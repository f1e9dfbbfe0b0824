"""X40, X41 (and X26's Second Wind): the casualty rolls of each named member after a
battle, the days a unit takes to heal, and Endurance restored by a rally.

Readings where the rulings leave room (written down here, listed in the issue note):

- X40: only named rank-and-file members roll (not the commander or special characters),
  and only in a unit that lost dots.  A botch on the first roll (maimed) lives, so she rolls
  the second too.  The second roll's failure (a botch included) rolls 1d10 unsoakable
  lethal levels; levels that fill her track (its length or more) are flagged
  ``incapacitated``, and the Storyteller rules on death (dying levels are outside E10).
  Every mortal survivor is flagged for an infection check.
- X41: healing starts from the Magnitude the unit ends the battle with; a unit at its
  starting Magnitude needs no days.
- X26, X41: Second Wind never raises Endurance above the unit's Magnitude, nor above its
  starting Endurance (Endurance starts battles full, so that is its most), and never lowers
  it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sheetsync.core.dice import Roller
from sheetsync.core.enums import StrEnum
from sheetsync.core.errors import InputError, Problem
from sheetsync.systems.exalted.rules.dice import (
    Outcome,
    PoolRoll,
    TypedDice,
    judge,
    parse_dice,
    roll_pool,
)
from sheetsync.systems.exalted.rules.models import Character, HouseRules
from sheetsync.systems.exalted.rules.traits import Entry, Trait

__all__ = [
    "Casualty",
    "Fate",
    "casualties",
    "healing_days",
    "second_wind",
]


class Fate(StrEnum):
    """X40: what became of a named member (the Aftermath sheet's words)."""

    UNHURT = "Unhurt"
    WOUNDED = "Wounded"
    MAIMED = "Maimed"
    DEAD = "Dead"


@dataclass(frozen=True, slots=True)
class Casualty:
    """X40: one named member's casualty rolls and fate."""

    character: str
    unit: str
    pool: int
    first_roll: PoolRoll
    first: Outcome
    second_roll: PoolRoll | None
    second: Outcome | None
    wound_roll: PoolRoll | None
    levels: int
    fate: Fate
    maimed: bool
    incapacitated: bool
    infection_check: bool
    rule_ref: str = "X40"


def casualties(unit: str, members: Sequence[Character], *, largest_loss: int, total_loss: int, roller: Roller,
               typed: Mapping[str, Sequence[TypedDice]] | None = None,
               where: Mapping[str, Sequence[str]] | None = None,
               rules: HouseRules | None = None) -> tuple[Casualty, ...]:
    """X40: each named rank-and-file member of a unit that lost dots rolls Wits + Willpower
    against the largest loss in one event: failure dead, a botch maimed (she lives).
    Survivors roll again against the total lost; failure: 1d10 unsoakable lethal levels.
    Mortal survivors are flagged for infection.

    ``typed`` holds, per character, up to three die cells (first roll, second roll, the
    d10); ``where`` their addresses.  Every bad cell is reported at once.  An extra's 10
    counts once with ``extras_double_tens`` off (E1; the wound d10 is a face, not successes)."""
    if total_loss <= 0:
        return ()
    out: list[Casualty] = []
    problems: list[Problem] = []
    for c in members:
        cells = list((typed or {}).get(c.name, ()))
        cells += [None] * (3 - len(cells))
        places = list((where or {}).get(c.name, ()))
        places += [f"aftermath.{c.name}[{i}]" for i in range(len(places), 3)]
        for cell, place, dice in zip(cells[:2], places[:2], (c.wits + c.willpower,) * 2, strict=True):
            try:
                parse_dice(cell, dice, place, double_tens=rules is None or rules.double_tens(c))
            except InputError as exc:
                problems.extend(exc.problems)
        try:
            parse_dice(_face_cell(cells[2]), 1, places[2])
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    for c in members:
        cells = list((typed or {}).get(c.name, ()))
        cells += [None] * (3 - len(cells))
        places = list((where or {}).get(c.name, ()))
        places += [f"aftermath.{c.name}[{i}]" for i in range(len(places), 3)]
        out.append(_one(unit, c, largest_loss, total_loss, roller, cells, places,
                        rules is None or rules.double_tens(c)))
    return tuple(out)


def _one(unit: str, c: Character, largest: int, total: int, roller: Roller, cells: list[TypedDice],
         places: list[str], double_tens: bool = True) -> Casualty:
    pool = c.wits + c.willpower
    first_roll = roll_pool(pool, roller, cells[0], where=places[0], double_tens=double_tens)
    first = judge(first_roll, largest)
    if not first.success and not first.botch:
        return Casualty(c.name, unit, pool, first_roll, first, None, None, None, 0, Fate.DEAD, False, False, False)
    maimed = first.botch
    second_roll = roll_pool(pool, roller, cells[1], where=places[1], double_tens=double_tens)
    second = judge(second_roll, total)
    levels = 0
    wound: PoolRoll | None = None
    if not second.success:
        wound = _d10(roller, cells[2], places[2])
        levels = wound.faces[0] if wound.faces else wound.successes
    fate = Fate.MAIMED if maimed else Fate.WOUNDED if levels else Fate.UNHURT
    return Casualty(c.name, unit, pool, first_roll, first, second_roll, second, wound, levels, fate, maimed,
                    levels >= c.health_levels, c.mortal)


def _face_cell(cell: TypedDice) -> TypedDice:
    """X40: the wound die's cell holds its face (``6``), never a number of successes."""
    if isinstance(cell, int) and not isinstance(cell, bool):
        return [cell]
    if isinstance(cell, str) and cell.strip() and "," not in cell and " " not in cell.strip():
        return cell.strip() + ","
    return cell


def _d10(roller: Roller, cell: TypedDice, where: str) -> PoolRoll:
    """X40: the one d10 of unsoakable lethal levels: a typed face 1-10 or rolled."""
    return roll_pool(1, roller, _face_cell(cell), where=where)


def healing_days(current: int, starting: int) -> Trait:
    """X41: each dot takes (current Magnitude + 1) days, one dot after another, up to the
    starting Magnitude; the first dot healed also clears the track."""
    rows: list[Entry] = []
    for m in range(max(current, 0), starting):
        rows.append(Entry(f"Magnitude {m} → {m + 1}" + (" (clears the track)" if not rows else ""), m + 1, "X41"))
    return Trait("Healing days", sum(int(e.amount) for e in rows), tuple(rows))


def second_wind(endurance: int, drill: int, magnitude: int, starting_endurance: int) -> Trait:
    """X26: a Second Wind rally restores max(1, Drill) Endurance, never above the unit's
    Magnitude (nor its starting Endurance, X41), and never lowers it."""
    gain = max(1, drill)
    cap = min(magnitude, starting_endurance)
    value = max(endurance, min(endurance + gain, cap))
    rows = [Entry("Endurance", endurance, "X26"), Entry(f"max(1, Drill {drill})", gain, "X26")]
    if value != endurance + gain:
        rows.append(Entry(f"capped at the lower of Magnitude {magnitude} and starting Endurance "
                          f"{starting_endurance}, never lowered", value - endurance - gain, "X26"))
    return Trait("Endurance", value, tuple(rows))
