"""Dice are passed in (R25).

Every random step takes a :class:`Roller`.  A die typed into the sheet or the battle file
(a physical roll) always wins over the roller, and the log records which it was.  Nothing
in sheetsync calls the module-level :mod:`random`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Protocol

__all__ = ["RandomRoller", "Roller", "ScriptedRoller", "ScriptExhaustedError"]


class Roller(Protocol):
    """Something that rolls one die with ``sides`` faces and returns 1..sides."""

    def roll(self, sides: int) -> int: ...


class RandomRoller:
    """A seedable roller: the same seed gives the same dice, on every machine."""

    def __init__(self, seed: int | str | None = None) -> None:
        self.seed = seed
        self._rng = random.Random(seed)
        # ``randint(1, sides)`` is ``1 + _randbelow(sides)`` on every CPython since 3.2: the
        # same dice from the same seed, without randint's and randrange's checks on each of
        # the tens of thousands of dice a forecast rolls.  ``randint`` where that is missing.
        below = getattr(self._rng, "_randbelow", None)
        self._below = below if callable(below) else None

    def roll(self, sides: int) -> int:
        if self._below is not None and sides > 0:
            return 1 + int(self._below(sides))
        return self._rng.randint(1, sides)


class ScriptExhaustedError(RuntimeError):
    """A :class:`ScriptedRoller` was asked for more dice than it was given."""


class ScriptedRoller:
    """Hands out the given results in order; for tests and replays."""

    def __init__(self, rolls: Iterable[int]) -> None:
        self._rolls = list(rolls)
        self.used = 0

    def roll(self, sides: int) -> int:
        if self.used >= len(self._rolls):
            raise ScriptExhaustedError(f"no scripted roll left for a d{sides}")
        value = self._rolls[self.used]
        self.used += 1
        if not 1 <= value <= sides:
            raise ValueError(f"scripted roll {value} is not a d{sides} result")
        return value
