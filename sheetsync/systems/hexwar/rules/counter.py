"""Counters (3.0, 7.0, H1): attack with its charge mark, defense, movement and range with
its special value, in the text's notation (``3+ - 2 - 4 - 1``, ``4 - 4 - 1 - 2(2)``,
``4 - 3 - 1 - 2(--)``), and their values after casualties (6.2.2, H10)."""

from __future__ import annotations

import re
from typing import Annotated

from sheetsync.core.enums import StrEnum
from sheetsync.core.model import Model, Range, model

__all__ = [
    "COUNTER_HELP",
    "Charge",
    "Counter",
    "RangeKind",
    "parse_counter",
    "reduce_charge",
    "reduce_value",
]


class Charge(StrEnum):
    """6.3.1, H1: the charge mark after the attack value."""

    NONE = ""
    ONE = "+"
    TWO = "++"

    @property
    def bonus(self) -> int:
        """6.3.1, H5: what a charge adds to the attack (``+`` one point, ``++`` two)."""
        return len(self.value)


class RangeKind(StrEnum):
    """6.1, 6.3, H6: a plain range, a reduced-strength range ``R(n)``, an extended ``R(--)``."""

    PLAIN = "plain"
    REDUCED = "reduced"
    EXTENDED = "extended"


COUNTER_HELP = ("attack - defense - movement - range, such as 3+ - 2 - 4 - 1, 4 - 4 - 1 - 2(2) "
                "or 4 - 3 - 1 - 2(--)")

_DASH = "[-\u2013\u2014]"
_COUNTER = re.compile(
    rf"^\s*(\d+)\s*(\+{{0,2}})\s*{_DASH}\s*(\d+)\s*{_DASH}\s*(\d+)\s*{_DASH}\s*(\d+)\s*"
    rf"(?:\(\s*(\d+|{_DASH}{_DASH})\s*\))?\s*$"
)


@model
class Counter(Model):
    """H1: a counter's four values.  ``str(counter)`` prints it in the text's notation."""

    attack: Annotated[int, Range(ge=0)]
    charge: Charge = Charge.NONE
    defense: Annotated[int, Range(ge=1)]
    movement: Annotated[int, Range(ge=0)]
    range: Annotated[int, Range(ge=1)]
    range_kind: RangeKind = RangeKind.PLAIN
    reduced_attack: Annotated[int | None, Range(ge=1)] = None
    """6.3.2: the value n of ``R(n)``, used at distances 2 to R."""

    def __str__(self) -> str:
        special = {RangeKind.PLAIN: "", RangeKind.EXTENDED: "(--)"}.get(self.range_kind, f"({self.reduced_attack})")
        return f"{self.attack}{self.charge.value} - {self.defense} - {self.movement} - {self.range}{special}"


COUNTER_TOP = 99
"""Issue 26, H1: the largest value a counter holds (the text's counters are single digits)."""


def _too_big(name: str, digits: str | None) -> str | None:
    """Issue 26, H1: ``name`` and its value when ``digits`` is over :data:`COUNTER_TOP`."""
    if digits is None or not digits.isdigit() or len(digits) <= 15 and int(digits) <= COUNTER_TOP:
        return None
    return f"{name} {digits if len(digits) <= 15 else f'a {len(digits)}-digit number'}"


def _short(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37] + "...")


def parse_counter(text: object) -> Counter:
    """H1: read a counter as written in 3.0 and 7.0.  Raises :class:`ValueError` whose
    message says what a counter looks like."""
    m = _COUNTER.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"{text!r} is not a counter (expected {COUNTER_HELP}) (H1)")
    attack, charge, defense, movement, rng, special = m.groups()
    big = [out for name, v in (("attack", attack), ("defense", defense), ("movement", movement), ("range", rng),
                               ("reduced attack", special)) if (out := _too_big(name, v)) is not None]
    if big:  # issue 26: a typo such as 999999999 would reduce its value one step at a time (H10)
        raise ValueError(f"{_short(str(text))} has {', '.join(big)}: out of range 0–{COUNTER_TOP}, a counter's values "
                         "have one or two digits (H1)")
    if special is None:
        kind, reduced = RangeKind.PLAIN, None
    elif special.isdigit():
        kind, reduced = RangeKind.REDUCED, int(special)
    else:
        kind, reduced = RangeKind.EXTENDED, None
    if int(defense) < 1:
        raise ValueError(f"{text!r} has defense 0; a defense is 1 or more (H1)")
    if int(rng) < 1:
        raise ValueError(f"{text!r} has range 0; a range is 1 or more (H1)")
    if reduced is not None and reduced < 1:
        raise ValueError(f"{text!r} has a reduced range value of 0; it is 1 or more (6.3.2, H1)")
    return Counter(attack=int(attack), charge=Charge(charge), defense=int(defense), movement=int(movement),
                   range=int(rng), range_kind=kind, reduced_attack=reduced)


def reduce_value(value: int, casualties: int, proportional: bool = True) -> int:
    """6.2.2, H10: a value ``v`` at ``c``% casualties counts as ``v - k``, where ``k`` is the
    number of steps ``j = 1 .. v-1`` with ``c >= floor(100 j / v)`` (4 is 3 at 25%, 2 at 50%,
    1 at 75%; 3 is 2 at 33% and 1 at 66%).  Without ``proportional_reduction`` it stays."""
    if not proportional:
        return value
    return value - sum(1 for j in range(1, value) if casualties >= (100 * j) // value)


def reduce_charge(charge: Charge, casualties: int, proportional: bool = True) -> Charge:
    """6.2.2, H10: at 50% casualties ``+`` is lost and ``++`` becomes ``+``."""
    if not proportional or casualties < 50:
        return charge
    return {Charge.TWO: Charge.ONE}.get(charge, Charge.NONE)
