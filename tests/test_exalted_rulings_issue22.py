"""Issue 22: golden tests where the Exalted engine departed from the mass-combat text or
from a ruling of RULINGS-exalted.md (X2-X52), each worked out by hand in its docstring.

The battle is the packaged example (exalted/example.yaml): Cathak Talon (Cathak Reyen,
Charisma 4, War 4; 25 people, Magnitude 2, Drill 4, Close; hero Peleps Ama, relay Talon
Sergeant) against Bandit Mob (Red Harrow, Charisma 3, War 2; 120 people, Magnitude 3,
Drill 1, Relaxed; relays One-Eyed Pell, Gravel Jon, Sister Wren; named member Mara the
Thatcher).  Each test sets the state it needs and types every die it reads."""

from __future__ import annotations

from typing import Any

import yaml

from sheetsync.rules.exalted.battle import TickResult, resolve, units_json
from sheetsync.rules.exalted.loader import load_battle
from sheetsync.rules.exalted.state import Battle
from sheetsync.rules.exalted.system import SYSTEM


def _data(orders: list[dict[str, Any]]) -> dict[str, Any]:
    data = yaml.safe_load(SYSTEM.example_data())
    assert isinstance(data, dict)
    data["orders"] = orders
    return data


def _started(data: dict[str, Any], tick: int = 0, **states: dict[str, Any]) -> Battle:
    """The battle begun (Join War done) at ``tick``, every unit acting on it, with the
    state changes given per unit name."""
    battle = load_battle(data)
    new = []
    for st in battle.state:
        changes = {"next_tick": tick, **states.get(st.name, {})}
        new.append(st.model_copy(update=changes))
    return battle.model_copy(update={"started": True, "tick": tick, "state": tuple(new)})


def _event(result: TickResult, kind: str, unit: str | None = None) -> dict[str, Any]:
    return next(e for e in result.events if e["kind"] == kind and (unit is None or e["unit"] == unit))


def _unit(result: TickResult, name: str) -> dict[str, Any]:
    return next(u for u in units_json(result.battle) if u["name"] == name)


MOB_AT_2 = {"magnitude": 2, "dots_lost": 1, "largest_loss": 1, "relays": ("One-Eyed Pell",)}
"""Bandit Mob after a loss: Magnitude 2 (typed 3), one relay left."""


def test_x11_x3_communication_failure_is_judged_on_the_current_magnitude() -> None:
    """X11, X3 (issue 22 item 1).  The mob began at Magnitude 3 and has fallen to 2 with one
    relay.  Communication failure needs Magnitude 3+, so there is none now: effective
    Drill = typed 1 (not max(0, 1 − 2) = 0).  A Second Wind rally (X26): Red Harrow's
    Charisma 3 + max(War 2, Performance 0) = 5 dice at max(1, Magnitude 2 − Drill 1) = 1.
    Faces 7 2 2 2 2 = 1 success: the rally holds (against the departure's difficulty 2 it
    would fail).  Endurance 1 + max(1, Drill 1) = 2, capped at min(Magnitude 2, start 3) = 2."""
    order = {"tick": 0, "unit": "Bandit Mob", "action": "Rally", "option": "Second Wind", "dice": "7 2 2 2 2"}
    battle = _started(_data([order]), **{"Bandit Mob": {**MOB_AT_2, "endurance": 1}})
    result = resolve(battle)
    rally = _event(result, "Rally")
    assert rally["command"]["difficulty"]["value"] == 1
    assert (rally["command"]["pool"]["value"], rally["command"]["success"]) == (5, True)
    assert _unit(result, "Bandit Mob")["endurance"] == 2


def test_x11_x13_a_shrunken_unit_without_enough_relays_for_its_old_magnitude_may_hold_skirmish() -> None:
    """X11, X13 (item 1).  At Magnitude 2 the mob's one relay is enough (communication
    failure starts at Magnitude 3), so its effective Drill 1 can hold Skirmish (needs 1).
    Change Formation: 5 dice at max(1, 2 − 1) = 1, none of the +1/+2 (not attacked, not
    engaged); faces 8 1 1 1 1 = 1 success: Skirmish."""
    order = {"tick": 0, "unit": "Bandit Mob", "action": "Change Formation", "option": "Skirmish",
             "dice": "8 1 1 1 1"}
    result = resolve(_started(_data([order]), **{"Bandit Mob": MOB_AT_2}))
    change = _event(result, "Change Formation")
    assert change["command"]["difficulty"]["value"] == 1 and change["formation"] == "Skirmish"
    assert _unit(result, "Bandit Mob")["formation"] == "Skirmish"


def test_x2_x26_rally_for_numbers_gives_the_rows_minimum_headcount_not_the_typed_one() -> None:
    """X2, X26 (item 2).  The mob (typed 120, Magnitude 3) lost a dot (Magnitude 2, so it
    has a dot in its rally pool).  Rally for Numbers: 5 dice at max(1, 2 − Drill 1) = 1 with
    all three relays (no communication failure); 7 7 2 2 2 = 2 successes: Magnitude 3 at the
    row's minimum, 76 people, not the 120 it began with."""
    order = {"tick": 0, "unit": "Bandit Mob", "action": "Rally", "option": "Numbers", "dice": "7 7 2 2 2"}
    state = {**MOB_AT_2, "relays": ("One-Eyed Pell", "Gravel Jon", "Sister Wren")}
    result = resolve(_started(_data([order]), **{"Bandit Mob": state}))
    assert _event(result, "Rally")["command"]["success"]
    mob = _unit(result, "Bandit Mob")
    assert (mob["magnitude"], mob["headcount"]) == (3, 76)
