"""E1-E3: d10 success pools, difficulty, threshold, botch and penalties, and the exact
odds of a pool before anyone rolls.

A die is typed (the faces, such as ``"7 3 10 2 1"``, or a number of successes) or rolled
from a passed-in :class:`~sheetsync.dice.Roller`; the :class:`PoolRoll` says which.

Readings where the rulings leave room (written down here, listed in the issue note):

- A typed die cell with one whole number (``3``) is a number of successes.  Two or more
  numbers, or any separator (``"7,"``), are the faces; a one-die pool types its face as
  ``"7,"`` or a one-item list.
- A typed number of successes may not exceed what the pool could roll: twice its dice when
  10s count twice, else its dice.
- A typed number of successes cannot show a botch (the faces are unknown), so it never
  botches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from sheetsync.dice import Roller
from sheetsync.errors import InputError, Problem
from sheetsync.rules import StrEnum

__all__ = [
    "DiceSource",
    "Outcome",
    "PoolRoll",
    "at_least",
    "botch_chance",
    "count_successes",
    "expected_successes",
    "face_successes",
    "judge",
    "parse_dice",
    "roll_pool",
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


def count_successes(faces: Sequence[int], *, damage: bool = False, double_tens: bool = True) -> int:
    """E1: the successes of a set of faces."""
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


def parse_dice(value: TypedDice, dice: int, where: str, *, damage: bool = False,
               double_tens: bool = True) -> tuple[tuple[int, ...] | None, int | None]:
    """E1: read a typed die cell for a pool of ``dice`` dice: ``(faces, None)`` for faces,
    ``(None, successes)`` for a success count, ``(None, None)`` for blank (roll it).

    Faces must be 1-10 and exactly one per die; a success count must be a whole number from
    0 to what the pool could roll.  Anything else raises :class:`InputError` naming
    ``where``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if isinstance(value, bool):
        raise InputError([Problem(where, f"{value!r} is neither dice faces nor a number of successes (E1)")])
    if isinstance(value, int):
        return None, _check_count(value, dice, where, damage, double_tens)
    if isinstance(value, str):
        text = value.strip()
        parts = [p for p in re.split(r"[\s,;]+", text) if p]
        if not all(re.fullmatch(r"-?\d+", p) for p in parts):
            raise InputError([Problem(where, f"{value!r} is neither dice faces (such as \"7 3 10 2 1\") "
                                             "nor a number of successes (E1)")])
        numbers = [int(p) for p in parts]
        if len(numbers) == 1 and not re.search(r"[\s,;]", text):
            return None, _check_count(numbers[0], dice, where, damage, double_tens)
        return _check_faces(numbers, dice, where), None
    faces = list(value)
    if not all(isinstance(f, int) and not isinstance(f, bool) for f in faces):
        raise InputError([Problem(where, f"{value!r} is not a list of d10 faces (E1)")])
    return _check_faces(faces, dice, where), None


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
    faces, count = parse_dice(typed, dice, where, damage=damage, double_tens=double_tens)
    if dice <= 0:
        return PoolRoll(0, 0, (), DiceSource.NO_DICE, damage)
    if count is not None:
        return PoolRoll(dice, count, (), DiceSource.SUCCESSES, damage)
    source = DiceSource.FACES
    if faces is None:
        faces = tuple(roller.roll(10) for _ in range(dice))
        source = DiceSource.ROLLED
    return PoolRoll(dice, count_successes(faces, damage=damage, double_tens=double_tens), faces, source, damage)


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
    if damage or not double_tens:
        return (Fraction(6, 10), Fraction(4, 10))
    return (Fraction(6, 10), Fraction(3, 10), Fraction(1, 10))


@lru_cache(maxsize=512)
def success_distribution(dice: int, *, damage: bool = False, double_tens: bool = True) -> tuple[Fraction, ...]:
    """E1: the exact chance of each number of successes (index = successes) of a pool.

    Each die gives 0, 1 or 2 successes with chances 6/10, 3/10, 1/10 (0 or 1 with 6/10,
    4/10 on damage); the pool's chances are the die's convolved ``dice`` times.  A pool of 0
    or fewer dice has 0 successes for certain."""
    dist: tuple[Fraction, ...] = (Fraction(1),)
    die = _die(damage, double_tens)
    for _ in range(max(dice, 0)):
        out = [Fraction(0)] * (len(dist) + len(die) - 1)
        for i, p in enumerate(dist):
            for j, q in enumerate(die):
                out[i + j] += p * q
        dist = tuple(out)
    return dist


def at_least(dice: int, k: int, *, damage: bool = False, double_tens: bool = True) -> Fraction:
    """E1, E2: the exact chance that a pool rolls ``k`` or more successes."""
    if k <= 0:
        return Fraction(1)
    dist = success_distribution(dice, damage=damage, double_tens=double_tens)
    return sum(dist[k:], Fraction(0))


def expected_successes(dice: int, *, damage: bool = False, double_tens: bool = True) -> Fraction:
    """E1: the mean successes of a pool (a die averages 1/2, or 2/5 on damage)."""
    return sum((Fraction(i) * p for i, p in enumerate(_die(damage, double_tens))), Fraction(0)) * max(dice, 0)


def botch_chance(dice: int) -> Fraction:
    """E2: the chance of no success and a 1 (no die 7+, not every die 2-6): 0.6^n − 0.5^n."""
    if dice <= 0:
        return Fraction(0)
    return Fraction(6, 10) ** dice - Fraction(5, 10) ** dice
