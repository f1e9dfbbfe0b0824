"""Issue 23: the Exalted engine's fast paths give exactly what the plain paths give."""

from __future__ import annotations

from typing import Any

import pytest

from sheetsync.core.dice import RandomRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules.dice import _d10s, roll_pool
from sheetsync.systems.exalted.rules.models import Formation
from sheetsync.systems.exalted.rules.timeline import Action, Clock, Timeline, act, act_clock


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


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except InputError as exc:
        return [p.message for p in exc.problems]


@pytest.mark.parametrize("action", list(Action))
@pytest.mark.parametrize("clock", [Clock("A", 3), Clock("A", 3, 2, None, 4, Action.ATTACK, 3),
                                   Clock("A", 5, 1, 2, 1, Action.INACTIVE, None)])
@pytest.mark.parametrize("tick", [2, 3, 4])
def test_act_clock_is_act_on_the_one_clock(action: Action, clock: Clock, tick: int) -> None:
    tl = Timeline(3, (Clock("B", 4), clock))
    whole = _outcome(lambda: act(tl, "A", tick, action, weapon_speed=4, where="orders[2].tick"))
    one = _outcome(lambda: act_clock(clock, 3, tick, action, weapon_speed=4, where="orders[2].tick"))
    if isinstance(whole, list):
        assert one == whole and whole
    else:
        assert whole[0].clocks == (Clock("B", 4), one[0])
        assert whole[1] == one[1]


def test_copy_state_is_model_copy() -> None:
    import dataclasses

    from sheetsync.systems.exalted.rules.state import UnitState, copy_state

    st = UnitState(name="Talon 1", magnitude=3, endurance=4, starting_endurance=5, starting_magnitude=3,
                   formation=Formation.CLOSE, commander="Ana", engaged=("Mob 1",), wounds={"Ana": 1})
    for changes in ({}, {"endurance": 3}, {"magnitude": 2, "marked": 0, "dots_lost": 1, "largest_loss": 1},
                    {"engaged": (), "engaged_since": {"Mob 2": 4}, "aim_target": None, "last_action": Action.ATTACK}):
        got, want = copy_state(st, changes), st.model_copy(update=changes)
        assert got == want and type(got) is UnitState and got is not st
        assert [getattr(got, f.name) for f in dataclasses.fields(UnitState)] == \
            [getattr(want, f.name) for f in dataclasses.fields(UnitState)]
    assert st.endurance == 4  # the original is untouched
    with pytest.raises(TypeError, match="no field 'hp'"):
        copy_state(st, {"hp": 1})
