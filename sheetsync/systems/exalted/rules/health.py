"""E10, X31, X38 and X5's use against magic: small rulings the battle loop needs beside the
attack itself.

- E10: a character's health track, and the wound penalty of the worst level marked.
- X31: a ranged attack is a volley that spends three arrows; a unit carries four volleys
  when mobile and seven from a prepared, fortified position.
- X38: a special character acting on her own is a solo unit: her own traits, no unit bonus.
- X5: a unit's Might adds to its commander's Essence against magic.

Readings where the rulings leave room:

- E10: the wound penalty is a number of dice taken off (positive); with nothing marked it
  is 0, and a track filled to Incapacitated is flagged, the penalty staying the last level's.
- X31: the supply is counted in arrows (shots × 3), so a typed supply that is not a whole
  number of volleys keeps its remainder, which buys no volley.
"""

from __future__ import annotations

from dataclasses import dataclass

from sheetsync.core.errors import InputError, Problem
from sheetsync.systems.exalted.rules.models import Character, UnitSpec
from sheetsync.systems.exalted.rules.traits import Entry, Trait, might

__all__ = [
    "FORTIFIED_VOLLEYS",
    "MOBILE_VOLLEYS",
    "VOLLEY_ARROWS",
    "Health",
    "alone",
    "essence_against_magic",
    "health",
    "spend_volley",
    "starting_ammunition",
]

VOLLEY_ARROWS = 3
"""X31: arrows one volley spends."""
MOBILE_VOLLEYS = 4
"""X31: volleys a mobile unit carries."""
FORTIFIED_VOLLEYS = 7
"""X31: volleys a unit carries from a prepared, fortified position."""


@dataclass(frozen=True, slots=True)
class Health:
    """E10: a track with ``marked`` levels: its size, the wound penalty (dice off, internal)
    and whether it reached Incapacitated."""

    health_levels: int
    marked: int
    wound_penalty: int
    incapacitated: bool
    rule_ref: str = "E10"


def health(c: Character, marked: int) -> Health:
    """E10: the default track −0, −1, −1, −2, −2, −4, Incapacitated (an extra's −1, −3,
    Incapacitated, or a typed one); the wound penalty is the worst marked level's."""
    track = c.track
    levels = len(track) + 1
    shown = max(0, min(marked, levels))
    penalty = -track[min(shown, len(track)) - 1] if shown else 0
    return Health(levels, shown, penalty, shown >= levels)


def starting_ammunition(*, fortified: bool = False) -> Trait:
    """X31: four volleys of three arrows when mobile, seven when fortified."""
    volleys = FORTIFIED_VOLLEYS if fortified else MOBILE_VOLLEYS
    why = "fortified position" if fortified else "mobile"
    return Trait("Ammunition", volleys * VOLLEY_ARROWS,
                 (Entry(f"{volleys} volleys ({why})", volleys, "X31"), Entry("arrows a volley", VOLLEY_ARROWS, "X31")))


def spend_volley(unit: str, ammunition: int, *, where: str = "") -> int:
    """X31: the ammunition left after one volley; a unit with fewer than three arrows left
    cannot shoot (the refusal names ``where`` and changes nothing)."""
    if ammunition < VOLLEY_ARROWS:
        raise InputError([Problem(where, f"{unit} has {ammunition} arrows left, less than the {VOLLEY_ARROWS} a "
                                         "volley spends, so it cannot make a ranged attack (X31)")])
    return ammunition - VOLLEY_ARROWS


def alone(c: Character, side: str = "") -> UnitSpec:
    """X38: a special character acting outside her unit is a solo unit of her own (X1): her
    own traits, Magnitude 0, no unit bonus; she joins the timeline by Wits + Awareness (E4)."""
    return UnitSpec(name=c.name, side=side, commander=c, solo=True)


def essence_against_magic(unit: UnitSpec) -> Trait:
    """X5: against magic the commander's Essence counts with the unit's Might added."""
    m = might(unit)
    c = unit.commander
    return Trait("Essence against magic", c.essence + m.value,
                 (Entry(f"commander {c.name}'s Essence", c.essence, "X5"), Entry("unit Might", m.value, "X5")))
