"""E1-E3: d10 success pools, difficulty, threshold, botch and penalties, and the exact
odds of a pool before anyone rolls.

A die is typed (the faces, such as ``"7 3 10 2 1"``, or a number of successes) or rolled
from a passed-in :class:`~sheetsync.core.dice.Roller`; the :class:`PoolRoll` says which.

Readings where the rulings leave room (written down here, listed in the issue note):

- A typed die cell says what it holds (issue 22): faces are two or more numbers
  (``"7 3 10 1"``, ``"7,3,10,1"``), or one with a comma (``"7,"``) or after ``faces:``
  (``"faces: 7"``); successes are a number with ``s`` (``"3s"``, ``"3 successes"``,
  ``"successes: 3"``).  A bare single number (``1``) could be either, so it is refused
  with both spellings, except ``0``, which no die shows (0 successes).
- A typed number of successes may not exceed what the pool could roll: twice its dice when
  10s count twice, else its dice.
- A typed number of successes cannot show a botch (the faces are unknown), so it never
  botches.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from sheetsync.core.dice import RandomRoller, Roller
from sheetsync.core.enums import StrEnum
from sheetsync.core.errors import InputError, Problem

__all__ = [
    "DIE_CELL_HELP",
    "DiceSource",
    "Outcome",
    "PoolRoll",
    "at_least",
    "botch_chance",
    "count_successes",
    "read_die_cell",
    "expected_successes",
    "face_successes",
    "judge",
    "parse_dice",
    "roll_pool",
    "success_counts",
    "success_distribution",
]

TypedDice = str | int | Sequence[int] | None


class DiceSource(StrEnum):
    """E1: where a roll's dice came from (the log's words)."""

    ROLLED = "rolled"
    FACES = "typed faces"
    SUCCESSES = "typed successes"
    NO_DICE = "no dice"


def face_successes(face: int, *, damage: bool = False, double_tens: bool = True) -> int:
    """E1: successes of one d10: 7-9 one, 10 two, except on a damage roll (or when 10s
    don't count twice, ``extras_double_tens``), where a 10 is one."""
    if face == 10:
        return 1 if damage or not double_tens else 2
    return 1 if face >= 7 else 0


_FACE_SUCCESSES = {(d, t): {f: face_successes(f, damage=d, double_tens=t) for f in range(1, 11)}
              for d in (False, True) for t in (False, True)}
"""E1: each face's successes, by (damage, double tens): looked up, not worked out per die."""


def count_successes(faces: Sequence[int], *, damage: bool = False, double_tens: bool = True) -> int:
    """E1: the successes of a set of faces."""
    try:
        return sum(map(_FACE_SUCCESSES[damage, double_tens].__getitem__, faces))
    except KeyError:  # a face outside 1-10 (a typed face is refused before it is counted)
        return sum(face_successes(f, damage=damage, double_tens=double_tens) for f in faces)


def _max_successes(dice: int, damage: bool, double_tens: bool) -> int:
    return dice * (1 if damage or not double_tens else 2)


@dataclass(frozen=True, slots=True)
class PoolRoll:
    """E1: one rolled (or typed) pool: its dice after internal penalties, the faces if known,
    and the successes on the dice."""

    dice: int
    successes: int
    faces: tuple[int, ...] = ()
    source: DiceSource = DiceSource.ROLLED
    damage: bool = False

    @property
    def botched_dice(self) -> bool:
        """E2: the dice show no success and at least one 1 (known only from faces)."""
        return self.successes == 0 and 1 in self.faces


MAX_DIGITS = 4
"""E1: the longest number a die cell holds (a face is 1-10; no pool rolls 10,000
successes), so a huge number is a cell error, never Python's int-conversion limit."""

_SUCCESSES = re.compile(r"(?:(\d+)\s*(?:s|succ|success|successes)|(?:successes|success|succ|s)\s*:\s*(\d+))",
                        re.IGNORECASE)
_FACES = re.compile(r"(?:faces?|f)\s*:\s*(.*)", re.IGNORECASE | re.DOTALL)

DIE_CELL_HELP = ('faces as "7 3 10 1" (one die: "7," or "faces: 7"), successes as "3s" (or "3 successes"); '
                 "blank: rolled")
"""E1: how a die cell is typed (the messages and the tracker's notes say it)."""


def _number(text: str, where: str, value: object) -> int:
    if not re.fullmatch(r"-?\d+", text):
        raise InputError([Problem(where, f"{value!r} is neither dice faces nor a number of successes: type "
                                         f"{DIE_CELL_HELP} (E1)")])
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise InputError([Problem(where, f"{text[:8]}... ({len(text)} digits) is far too large for a die cell: "
                                         f"type {DIE_CELL_HELP} (E1)")])
    return int(text)


def read_die_cell(value: object, where: str) -> tuple[tuple[int, ...] | None, int | None]:
    """E1: what a typed die cell holds, before its pool is known: ``(faces, None)``,
    ``(None, successes)`` or ``(None, None)`` for blank.  Faces are checked to be 1-10;
    a bare single number other than 0 is refused as ambiguous, the message showing both
    ways to type it.  Anything else raises :class:`InputError` naming ``where``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if isinstance(value, bool):
        raise InputError([Problem(where, f"{value!r} is neither dice faces nor a number of successes (E1)")])
    if isinstance(value, float) and value.is_integer() and abs(value) < 10 ** MAX_DIGITS:
        value = int(value)
    if isinstance(value, int):
        if value == 0:
            return None, 0
        if value < 0:
            raise InputError([Problem(where, "a die cell holds no negative number: type "
                                             f"{DIE_CELL_HELP} (E1)")])
        if value >= 10 ** MAX_DIGITS:
            raise InputError([Problem(where, f"a number of more than {MAX_DIGITS} digits is far too large for a "
                                             f"die cell: type {DIE_CELL_HELP} (E1)")])
        return _ambiguous(str(value), where)
    if isinstance(value, str):
        text = value.strip()
        m = _SUCCESSES.fullmatch(text)
        if m is not None:
            count = _number(m.group(1) or m.group(2), where, value)
            return None, count
        f = _FACES.fullmatch(text)
        body = f.group(1) if f is not None else text
        parts = [p for p in re.split(r"[\s,;]+", body.strip()) if p]
        numbers = [_number(p, where, value) for p in parts]
        if not numbers:
            raise InputError([Problem(where, f"{value!r} holds no faces: type {DIE_CELL_HELP} (E1)")])
        if f is None and len(numbers) == 1 and not re.search(r"[\s,;]", text):
            if numbers[0] == 0:
                return None, 0
            return _ambiguous(text, where)
        return _faces_only(numbers, where), None
    if isinstance(value, (list, tuple)):
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
            raise InputError([Problem(where, f"{value!r} is not a list of d10 faces (E1)")])
        return _faces_only(list(value), where), None
    raise InputError([Problem(where, f"{value!r} is neither dice faces nor a number of successes: type "
                                     f"{DIE_CELL_HELP} (E1)")])


def _ambiguous(text: str, where: str) -> tuple[tuple[int, ...] | None, int | None]:
    """E1, issue 22: a bare number says neither faces nor successes."""
    if int(text) > 10:  # no die shows it, but it may be faces typed without their spaces
        raise InputError([Problem(where, f"\"{text}\" is a bare number: type the successes as \"{text}s\" (faces "
                                         f"go with spaces between them, such as \"7 3 10 1\"; E1)")])
    raise InputError([Problem(where, f"\"{text}\" could be one die's face or {text} success"
                                     f"{'' if text == '1' else 'es'}: type the face as \"{text},\" (or \"faces: "
                                     f"{text}\") or the successes as \"{text}s\" (E1)")])


def _faces_only(faces: Sequence[int], where: str) -> tuple[int, ...]:
    problems = [Problem(where, f"die {i + 1}: {f} is not a d10 face (1 to 10, E1)")
                for i, f in enumerate(faces) if not 1 <= f <= 10]
    if problems:
        raise InputError(problems)
    return tuple(faces)


def parse_dice(value: TypedDice, dice: int, where: str, *, damage: bool = False,
               double_tens: bool = True) -> tuple[tuple[int, ...] | None, int | None]:
    """E1: read a typed die cell for a pool of ``dice`` dice: ``(faces, None)`` for faces,
    ``(None, successes)`` for a success count, ``(None, None)`` for blank (roll it).

    Faces must be 1-10 and exactly one per die; a success count must be a whole number from
    0 to what the pool could roll (the cell's syntax: :func:`read_die_cell`).  Anything
    else raises :class:`InputError` naming ``where``."""
    faces, count = read_die_cell(value, where)
    if count is not None:
        return None, _check_count(count, dice, where, damage, double_tens)
    if faces is not None:
        return _check_faces(faces, dice, where), None
    return None, None


def _check_count(count: int, dice: int, where: str, damage: bool, double_tens: bool) -> int:
    most = _max_successes(max(dice, 0), damage, double_tens)
    if count < 0 or count > most:
        raise InputError([Problem(where, f"{count} successes is more than a {max(dice, 0)}-die pool can roll "
                                         f"(0 to {most}, E1)" if count > most else
                                         f"{count} successes is below 0 (E1)")])
    return count


def _check_faces(faces: Sequence[int], dice: int, where: str) -> tuple[int, ...]:
    problems = [Problem(where, f"die {i + 1}: {f} is not a d10 face (1 to 10, E1)")
                for i, f in enumerate(faces) if not 1 <= f <= 10]
    if len(faces) != max(dice, 0):
        problems.append(Problem(where, f"{len(faces)} faces typed for a {max(dice, 0)}-die pool (E1)"))
    if problems:
        raise InputError(problems)
    return tuple(faces)


def roll_pool(dice: int, roller: Roller, typed: TypedDice = None, *, where: str = "",
              damage: bool = False, double_tens: bool = True) -> PoolRoll:
    """E1: roll a pool of ``dice`` d10s, or take the typed faces or successes instead.

    A pool of 0 or fewer dice rolls nothing and has no success and no botch (E1)."""
    if typed is None:  # blank: rolled (issue 23: the commonest cell, nothing to read)
        if dice <= 0:
            return PoolRoll(0, 0, (), DiceSource.NO_DICE, damage)
        faces = _d10s(roller, dice)
        return PoolRoll(dice, count_successes(faces, damage=damage, double_tens=double_tens), faces,
                        DiceSource.ROLLED, damage)
    faces_typed, count = parse_dice(typed, dice, where, damage=damage, double_tens=double_tens)
    if dice <= 0:
        return PoolRoll(0, 0, (), DiceSource.NO_DICE, damage)
    if count is not None:
        return PoolRoll(dice, count, (), DiceSource.SUCCESSES, damage)
    source = DiceSource.FACES
    if faces_typed is None:
        faces = _d10s(roller, dice)
        source = DiceSource.ROLLED
    else:
        faces = faces_typed
    return PoolRoll(dice, count_successes(faces, damage=damage, double_tens=double_tens), faces, source, damage)


_D10_BITS = (10).bit_length()
_GETRANDBITS_BELOW = getattr(random.Random, "_randbelow", None) is getattr(random.Random,
                                                                          "_randbelow_with_getrandbits", 0)
"""Whether ``random.Random`` draws a number below n as ``getrandbits(n.bit_length())``
until it is below n (CPython's ``_randbelow_with_getrandbits``, the one it uses)."""


def _d10s(roller: Roller, n: int) -> tuple[int, ...]:
    """E1: ``n`` d10s from ``roller``, the faces ``roller.roll(10)`` gives ``n`` times.  From a
    :class:`RandomRoller` (whose die is ``1 + random.Random._randbelow(10)``), the same draws
    made here without a call per die (issue 23: a forecast rolls some 60 dice a long tick)."""
    rng = getattr(roller, "_rng", None) if type(roller) is RandomRoller else None
    if rng is None or type(rng) is not random.Random or not _GETRANDBITS_BELOW:
        roll = roller.roll
        return tuple([roll(10) for _ in range(n)])
    bits, k = rng.getrandbits, _D10_BITS
    out = []
    for _ in range(n):
        r = bits(k)
        while r >= 10:
            r = bits(k)
        out.append(r + 1)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Outcome:
    """E2, E3: a roll judged: the net successes (dice + automatic − external, never below
    0), whether it met the difficulty, the threshold, and whether it botched."""

    successes: int
    net: int
    difficulty: int
    success: bool
    threshold: int
    botch: bool
    rule_ref: str = "E2"


def judge(roll: PoolRoll, difficulty: int, *, automatic: int = 0, external: int = 0) -> Outcome:
    """E2, E3: successes on the dice plus automatic successes, minus external penalties
    (never below 0), against ``difficulty``; the threshold is the excess.

    A botch is no success on the dice and a 1, judged on the dice before external penalties;
    automatic successes prevent it (RULINGS fine print, E2 and X28).  At difficulty 0 only a
    botch fails."""
    net = max(0, roll.successes + automatic - external)
    botch = roll.botched_dice and automatic <= 0
    success = not botch and net >= max(difficulty, 0)
    threshold = net - max(difficulty, 0) if success else 0
    return Outcome(roll.successes, net, difficulty, success, threshold, botch, "E2, E3")


# --- exact odds -------------------------------------------------------------------------

def _die(damage: bool, double_tens: bool) -> tuple[Fraction, ...]:
    """E1: one die's chance of 0, 1 (and 2) successes."""
    return tuple(Fraction(w, 10) for w in _faces(damage, double_tens))


def _faces(damage: bool, double_tens: bool) -> tuple[int, ...]:
    """E1: of a d10's ten faces, how many give 0, 1 (and 2) successes."""
    if damage or not double_tens:
        return (6, 4)
    return (6, 3, 1)


@lru_cache(maxsize=512)
def success_counts(dice: int, *, damage: bool = False, double_tens: bool = True) -> tuple[int, ...]:
    """E1: of the 10^dice equally likely rolls of a pool, how many show each number of
    successes (index = successes): the exact chances in whole numbers (issue 23), each
    chance being its count over ``10 ** max(dice, 0)``."""
    counts: tuple[int, ...] = (1,)
    faces = _faces(damage, double_tens)
    for _ in range(max(dice, 0)):
        out = [0] * (len(counts) + len(faces) - 1)
        for i, c in enumerate(counts):
            for j, w in enumerate(faces):
                out[i + j] += c * w
        counts = tuple(out)
    return counts


@lru_cache(maxsize=512)
def success_distribution(dice: int, *, damage: bool = False, double_tens: bool = True) -> tuple[Fraction, ...]:
    """E1: the exact chance of each number of successes (index = successes) of a pool.

    Each die gives 0, 1 or 2 successes with chances 6/10, 3/10, 1/10 (0 or 1 with 6/10,
    4/10 on damage); the pool's chances are the die's convolved ``dice`` times
    (:func:`success_counts`, over 10^dice).  A pool of 0 or fewer dice has 0 successes for
    certain."""
    rolls = 10 ** max(dice, 0)
    return tuple(Fraction(c, rolls) for c in success_counts(dice, damage=damage, double_tens=double_tens))


def at_least(dice: int, k: int, *, damage: bool = False, double_tens: bool = True) -> Fraction:
    """E1, E2: the exact chance that a pool rolls ``k`` or more successes."""
    if k <= 0:
        return Fraction(1)
    return Fraction(sum(success_counts(dice, damage=damage, double_tens=double_tens)[k:]), 10 ** max(dice, 0))


def expected_successes(dice: int, *, damage: bool = False, double_tens: bool = True) -> Fraction:
    """E1: the mean successes of a pool (a die averages 1/2, or 2/5 on damage)."""
    return Fraction(sum(i * w for i, w in enumerate(_faces(damage, double_tens))) * max(dice, 0), 10)


def botch_chance(dice: int) -> Fraction:
    """E2: the chance of no success and a 1 (no die 7+, not every die 2-6): 0.6^n − 0.5^n."""
    if dice <= 0:
        return Fraction(0)
    return Fraction(6, 10) ** dice - Fraction(5, 10) ** dice
