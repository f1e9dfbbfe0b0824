"""X28, X32, X37, X16: the syntax of an order's option for the actions whose option the
engine reads word by word (Attack, Move, Dash).  Anything the syntax does not define is
refused with the syntax shown (issue 22: ``called shot NAME`` without its colon silently
aimed at the commander).

Attack: parts between commas (or words between spaces) ``Close`` or ``Ranged``,
``envelop`` (X32), ``charge`` (X37), and ``called shot`` (at the commander) or ``called
shot: NAME`` (a special character, or ``commander``), the name running to the next comma.
Move and Dash: blank, or the terrain ``Open``, ``Difficult`` or ``Extreme`` (X16)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["ATTACK_OPTION_HELP", "AttackOption", "MOVE_OPTION_HELP", "move_option", "parse_attack_option"]

ATTACK_OPTION_HELP = ('Close or Ranged, envelop, charge, and "called shot" (the commander) or "called shot: NAME", '
                      'parts between commas, such as "Ranged, called shot: Sister Wren"')
MOVE_OPTION_HELP = "blank, or the terrain: Open, Difficult or Extreme (X16)"
_WORDS = {"close", "ranged", "envelop", "charge"}
_TERRAIN = ("Open", "Difficult", "Extreme")


@dataclass(frozen=True, slots=True)
class AttackOption:
    """An Attack order's option read: the kind typed (None: the unit's weapons decide),
    envelop, charge, and the called shot's victim (``"commander"`` or a name; None: none)."""

    kind: str | None = None
    envelop: bool = False
    charge: bool = False
    victim: str | None = None


@lru_cache(maxsize=1024)
def parse_attack_option(text: str | None) -> AttackOption:
    """X28, X32, X37: read an Attack option; raises ``ValueError`` with the syntax for
    anything it does not define.  (Read once per text: an order's option is read by
    several checks of its attack, issue 23.)"""
    kind: str | None = None
    envelop = charge = False
    victim: str | None = None
    for part in re.split(r"[,;]", text or ""):
        part = part.strip()
        if not part:
            continue
        words = part
        m = re.search(r"\bcalled\s+shot\b", part, re.IGNORECASE)
        if m is not None:
            if victim is not None:
                raise ValueError(f"{text!r} calls two shots: one attack makes at most one called shot "
                                 f"(type {ATTACK_OPTION_HELP}; X32)")
            words, rest = part[:m.start()], part[m.end():].strip()
            if not rest:
                victim = "commander"
            elif rest.startswith(":") and rest[1:].strip():
                victim = rest[1:].strip()
            elif rest.startswith(":"):
                raise ValueError(f'{part!r} names no one after its colon: type "called shot: NAME", or "called '
                                 'shot" alone for the commander (X32)')
            else:
                raise ValueError(f'{part!r} needs a colon before the name: type "called shot: {rest}" ("called '
                                 f'shot" alone aims at the commander; X32)')
        for word in words.split():
            low = word.casefold()
            if low not in _WORDS:
                raise ValueError(f"{word!r} is not part of an attack's option: type {ATTACK_OPTION_HELP} "
                                 "(X28, X32, X37)")
            if low in ("close", "ranged"):
                if kind is not None and kind != low:
                    raise ValueError(f"{text!r} says both Close and Ranged: an attack is one or the other (X28)")
                kind = low
            elif low == "envelop":
                envelop = True
            else:
                charge = True
    return AttackOption(kind, envelop, charge, victim)


def move_option(text: str | None) -> str | None:
    """X16: a Move or Dash option: blank or a terrain (its canonical spelling); raises
    ``ValueError`` otherwise."""
    t = (text or "").strip()
    if not t:
        return None
    for name in _TERRAIN:
        if t.casefold() == name.casefold():
            return name
    raise ValueError(f"{t!r} is not a Move or Dash option: type {MOVE_OPTION_HELP}")
