"""Issue 23: the Exalted engine's fast paths give exactly what the plain paths give."""

from __future__ import annotations

import pytest

from sheetsync.core.dice import RandomRoller
from sheetsync.systems.exalted.rules.dice import _d10s, roll_pool


class _Plain:
    """A roller that is not a :class:`RandomRoller`: its dice take the plain path, one
    ``roll(10)`` a die."""

    def __init__(self, seed: int | str) -> None:
        self.inner = RandomRoller(seed)

    def roll(self, sides: int) -> int:
        return self.inner.roll(sides)


@pytest.mark.parametrize("seed", [0, 1, 7, "x:forecast:3"])
def test_d10s_from_a_random_roller_are_its_own_rolls(seed: int | str) -> None:
    fast, plain = RandomRoller(seed), RandomRoller(seed)
    got = [f for n in (1, 5, 12, 0, 30) for f in _d10s(fast, n)]
    assert got == [plain.roll(10) for _ in range(48)]
    assert all(1 <= f <= 10 for f in got) and 10 in got and 1 in got
    assert fast.roll(10) == plain.roll(10)  # the stream goes on in step


@pytest.mark.parametrize("damage", [False, True])
def test_roll_pool_blank_is_the_plain_roll(damage: bool) -> None:
    fast, plain = RandomRoller(5), _Plain(5)
    for dice in (0, 1, 3, 9, -2, 14):
        assert roll_pool(dice, fast, damage=damage) == roll_pool(dice, plain, "", damage=damage)
