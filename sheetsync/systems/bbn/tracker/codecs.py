"""The battalion tracker's cell codecs: how each input cell turns into a battle-file value
and back, with the messages a Tracker reads.

Each codec knows its column's label (the header in lower case), so its message reads
``temper 'abc' is not a whole number`` at the cell the generic reader names
(:func:`sheetsync.sheets.table.decode`).  A formula in an input cell is refused with
:meth:`_Refuses.formula_message` (issue 8, item 12).  Compared with the generic codecs of
:mod:`sheetsync.core.layout`, these keep the battalion tracker's own reading:

- a whole number has at most :data:`MAX_DIGITS` digits (issue 8, item 8) and a column's
  bounds read ``is not 1 to 5``;
- a flag takes ``Yes``/``No``, ``TRUE``/``FALSE``, ``x``, ``✓`` and 1/0;
- a trait cell (R5, R6, R12) holds several ``Name level`` parts; each bad part is its own
  problem (:class:`CellProblems`) and the good parts are still read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from sheetsync.core.layout import CodecError, Int, Kind

__all__ = ["MAX_DIGITS", "CellProblems", "Combinations", "OtherTraits", "Paths", "Picks", "Reroll", "Seed", "Text",
           "Whole", "YesNo", "for_annotation", "short", "whole"]

MAX_DIGITS = 15
"""A whole number in a cell has at most this many digits (a spreadsheet keeps 15 exactly)."""


class CellProblems(CodecError):
    """A cell with several bad parts: every message is reported at the cell, and what
    could be read (``partial``) is kept, so the rest of the battle is checked as before."""

    def __init__(self, messages: list[str], partial: Any) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages
        self.partial = partial


def short(value: object) -> str:
    """A cell's value for a message, cut short when it is long."""
    if isinstance(value, int) and abs(value) >= 10**40:
        return f"(a number of about {int(abs(value).bit_length() * 0.30103) + 1} digits)"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…{text[-5:]} ({len(str(value))} characters)"


def whole(text: str) -> int | None:
    """The whole number a cell's text spells, or ``None`` when it has more digits than a
    sheet can hold (Python's ``int()`` refuses 4,301 digits or more: issue 8, item 8)."""
    text = text.strip()
    sign = "-" if text.startswith("-") else ""
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > MAX_DIGITS:
        return None
    return int(sign + digits)


class _Refuses:
    """A codec that names its column (``label``) in its messages."""

    label: str
    want: ClassVar[str] = "the text"
    """What to type instead of a formula."""

    def formula_message(self, text: str) -> str:
        """Issue 8, item 12: an input cell holds what the Tracker typed, never a formula
        (``=RAND()`` in the Dice seed would change on every recalculation)."""
        return f"{self.label}: a formula ({text}) is not allowed here; type {self.want}"


@dataclass(frozen=True)
class Text(_Refuses):
    """Text, trimmed; a flag reads as Yes/No and a whole float as its digits.  Written as
    it is (a House Rules value or default may be a number)."""

    encodes_as_is: ClassVar[bool] = True

    label: str
    kind: Kind = "text"

    def decode(self, value: Any) -> Any:
        if isinstance(value, bool):
            return "Yes" if value else "No"
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return str(value).strip() or None

    def encode(self, value: Any) -> Any:
        return value


@dataclass(frozen=True)
class Whole(Int, _Refuses):
    """A whole number of at most :data:`MAX_DIGITS` digits, between ``low`` and ``high``
    when they are set (the column's bounds, e.g. Temper 1 to 10 on an order, R8).  An
    :class:`~sheetsync.core.layout.Int`, so the templates draw its bounds as a check."""

    encodes_as_is: ClassVar[bool] = True

    label: str = ""
    want: ClassVar[str] = "a whole number"

    def decode(self, value: Any) -> Any:
        label = self.label
        number: int | None = None
        if isinstance(value, bool):
            number = None
        elif isinstance(value, int):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        elif isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
            number = whole(value)
            if number is None:
                raise CodecError(f"{label} {short(value)} is too large to be a {label}")
        if number is not None and abs(number) >= 10**MAX_DIGITS:
            raise CodecError(f"{label} {short(value)} is too large to be a {label}")
        if number is None:
            raise CodecError(f"{label} {short(value)} is not a whole number")
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            raise CodecError(f"{label} {number} is not {self.low} to {self.high}")
        return number

    def encode(self, value: Any) -> Any:
        return value


_YES = ("yes", "y", "true", "x", "1", "✓")
_NO = ("no", "n", "false", "0", "")


@dataclass(frozen=True)
class YesNo(_Refuses):
    """A flag: Yes/No from the dropdown, TRUE/FALSE, a ticked box, ``x``, ``✓``, 1 or 0.
    Written as Yes or No."""

    label: str
    kind: Kind = "bool"
    want: ClassVar[str] = "Yes or No"

    def decode(self, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        text = str(value).strip().lower()
        if text in _YES:
            return True
        if text in _NO:
            return False
        raise CodecError(f"{self.label} {short(value)} is not Yes or No")

    def encode(self, value: Any) -> Any:
        return None if value is None else ("Yes" if value else "No")


@dataclass(frozen=True)
class Reroll(_Refuses):
    """The Orders Reroll cell (R25): ``Yes`` spends an Inspire reroll token and lets
    sheetsync roll it (decoded ``True``), a d10 from 1 to 10 is the die rerolled at the
    table (decoded as the number), ``No`` or 0 is no reroll (``None``)."""

    label: str
    kind: Kind = "text"

    def decode(self, value: Any) -> Any:
        if value is True or (isinstance(value, str) and value.strip().lower() in ("yes", "y", "true", "x")):
            return True
        if value is False or (isinstance(value, (int, float)) and value == 0):
            return None
        if isinstance(value, str) and value.strip().lower() in ("no", "n"):
            return None
        die = Whole(label=self.label).decode(value)
        if not 1 <= die <= 10:
            raise CodecError(f"{self.label} {die} is not a d10 (1 to 10) or Yes")
        return die

    def encode(self, value: Any) -> Any:
        if value is True:
            return "Yes"
        return None if value is None or value is False else value


@dataclass(frozen=True)
class Picks(_Refuses):
    """Typed dice for an order's random picks (R25): ``2 3`` or ``2, 3``."""

    label: str
    kind: Kind = "text"

    def decode(self, value: Any) -> Any:
        text = Text(self.label).decode(value)
        if not text:
            return None
        dice = [whole(x) for x in re.split(r"[\s,]+", text) if x] if re.fullmatch(r"[\d\s,]+", text) else [None]
        if None in dice:
            raise CodecError(f"{self.label} {short(text)} are not dice (e.g. 2 3)")
        return dice

    def encode(self, value: Any) -> Any:
        return " ".join(str(p) for p in value or ()) or None


_TRAIT = re.compile(r"^\s*(.+?)\s*[:=]?\s*(\d+)\s*$")


def _parts(value: Any, label: str) -> list[str]:
    """A trait cell's parts, separated by semicolons or line breaks (R12)."""
    text = Text(label).decode(value) or ""
    return [p.strip() for p in re.split(r"[;\n]", text) if p.strip()]


def _joined(parts: Iterable[str]) -> str | None:
    return "; ".join(parts) or None


@dataclass(frozen=True)
class Paths(_Refuses):
    """Offensive blood-magic paths, ``Lure of Flames 3; Hands of Destruction 2`` (R6):
    decoded as ``[(path, level), ...]`` in the cell's order."""

    label: str
    kind: Kind = "text"

    def decode(self, value: Any) -> Any:
        out: list[tuple[str, int]] = []
        problems: list[str] = []
        for part in _parts(value, self.label):
            trait = _named_level(part, problems)
            if trait is None:
                if not _TRAIT.match(part):
                    problems.append(f"{short(part)} is not 'Path name level' (e.g. Lure of Flames 3)")
                continue
            out.append(trait)
        if problems:
            raise CellProblems(problems, out)
        return out

    def encode(self, value: Any) -> Any:
        items = value.items() if isinstance(value, Mapping) else value or ()
        return _joined(f"{name} {level}" for name, level in items)


def _named_level(part: str, problems: list[str]) -> tuple[str, int] | None:
    """``Lure of Flames 3`` as ``("Lure of Flames", 3)`` (R6, R12); ``None`` for a part that is
    not a name and a level, or whose level is too large (that problem is added)."""
    mt = _TRAIT.match(part)
    if not mt:
        return None
    level = whole(mt.group(2))
    if level is None:
        problems.append(f"the level of {mt.group(1)!r} is too large")
        return None
    return mt.group(1), level


@dataclass(frozen=True)
class Combinations(_Refuses):
    """Combination Disciplines, ``Armor of Caine's Fury: Fortitude + Potence`` (R5):
    decoded as ``[(name, (discipline, ...)), ...]``."""

    label: str
    kind: Kind = "text"

    def decode(self, value: Any) -> Any:
        out: list[tuple[str, tuple[str, ...]]] = []
        problems: list[str] = []
        for part in _parts(value, self.label):
            name, sep, inside = part.partition(":")
            if not sep:
                problems.append(f"{part!r} is not 'Name: Discipline + Discipline'")
                continue
            out.append((name.strip(), tuple(d.strip() for d in re.split(r"[+,/&]", inside) if d.strip())))
        if problems:
            raise CellProblems(problems, out)
        return out

    def encode(self, value: Any) -> Any:
        return _joined(f"{name}: {' + '.join(includes)}" for name, includes in value or ())


@dataclass(frozen=True)
class OtherTraits(_Refuses):
    """Other Traits (R12): ``Name 3`` parts are traits with a level (read as Disciplines,
    listed as not counted when no pool uses them), bare names are Merits.  Decoded as the
    parts in order, ``(name, level)`` or ``name``."""

    label: str
    kind: Kind = "text"

    def decode(self, value: Any) -> Any:
        out: list[tuple[str, int] | str] = []
        problems: list[str] = []
        for part in _parts(value, self.label):
            trait = _named_level(part, problems)
            if trait is not None:
                out.append(trait)
            elif not _TRAIT.match(part):
                out.append(part)
        if problems:
            raise CellProblems(problems, out)
        return out

    def encode(self, value: Any) -> Any:
        return _joined(item if isinstance(item, str) else f"{item[0]} {item[1]}" for item in value or ())


@dataclass(frozen=True)
class Seed(_Refuses):
    """The Dice seed (R25): a whole number of at most :data:`MAX_DIGITS` digits, or text;
    never a float that is not a whole number (``inf``, ``nan``: issue 8, item 8)."""

    encodes_as_is: ClassVar[bool] = True

    label: str
    kind: Kind = "text"
    want: ClassVar[str] = "a whole number or text"

    def decode(self, value: Any) -> Any:
        if isinstance(value, bool):
            return str(value)
        if isinstance(value, float):
            if not value.is_integer():
                raise CodecError(f"{self.label} {value!r} is not a whole number or text")
            value = int(value)
        if isinstance(value, int):
            if abs(value) >= 10**MAX_DIGITS:
                raise CodecError(f"{self.label} {short(value)} is too large; use at most {MAX_DIGITS} digits")
            return value
        return str(value).strip()

    def encode(self, value: Any) -> Any:
        return value


def for_annotation(annotation: Any, label: str) -> Text | Whole | YesNo:
    """The codec of a House Rules value (R11, RULINGS-bbn.md), by the rule's type: a switch
    reads Yes/No, a number a whole number, anything else text."""
    if annotation is bool:
        return YesNo(label)
    if annotation is int:
        return Whole(label=label)
    return Text(label)
