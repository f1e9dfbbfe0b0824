"""Issue 22: whether an Exalted unit is still in the fight is one fact
(:func:`~sheetsync.systems.exalted.rules.state.in_fight`, X34, X48, X32, X39, X24): ``status``,
the Battle sheet (status line, Sides, Ticks board), ``resolve`` and the forecast agree.

The situation where they disagreed: Bandit Mob brought to Magnitude 0 (by rout, X48), its
commander Red Harrow alone, with an attack typed for its tick.  The engine ran that attack,
while the forecast said the battle was over and the Battle sheet counted the unit out."""

from __future__ import annotations

import io

import pytest
import yaml
from rich.console import Console

from sheetsync.app.forecast import forecast
from sheetsync.core.errors import BattleStateError
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.forecast import ExaltedForecast
from sheetsync.systems.exalted.rules.battle import resolve, units_json
from sheetsync.systems.exalted.rules.state import Battle, in_fight, sides_in_fight
from sheetsync.systems.exalted.system import SYSTEM
from sheetsync.systems.exalted.tracker.cells import side_rows, status, tick_board
from sheetsync.systems.exalted.views import print_units

HARROW_ATTACKS = {"tick": 0, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon", "option": "Close"}


def _mob_alone(**mob: object) -> Battle:
    """The example begun at long tick 0, the mob at Magnitude 0 after a rout (X48): Red
    Harrow alone on his own track, the relays fled."""
    data = yaml.safe_load(SYSTEM.example_data())
    data["orders"] = [HARROW_ATTACKS]
    battle = load_battle(data)
    state = []
    for st in battle.state:
        changes: dict[str, object] = {"next_tick": 0}
        if st.name == "Bandit Mob":
            changes.update(magnitude=0, solo=True, relays=(), departed=st.relays, marked=0, dots_lost=3,
                           largest_loss=3, **mob)
        state.append(st.model_copy(update=changes))
    return battle.model_copy(update={"started": True, "tick": 0, "state": tuple(state)})


def _status_text(battle: Battle) -> str:
    out = io.StringIO()
    print_units(Console(file=out, width=160), units_json(battle))
    return out.getvalue()


def test_x34_x48_a_unit_at_magnitude_0_is_in_the_fight_everywhere() -> None:
    """X34, X48: the mob at Magnitude 0 fights on as Red Harrow alone.  resolve runs his
    attack; the forecast finds two sides and forecasts; the Battle sheet counts 2 of 2
    units and the mob's side still fighting; ``status`` does not say it left."""
    battle = _mob_alone()
    mob = battle.state_of("Bandit Mob")
    assert in_fight(mob) and sides_in_fight(battle) == ["Realm", "Bandits"]
    result = resolve(battle)
    attack = next(e for e in result.events if e["kind"] == "Attack")
    assert attack["unit"] == "Bandit Mob"  # the engine runs it
    assert ExaltedForecast().sides_in(ExaltedForecast().prepare(battle)) == ["Realm", "Bandits"]
    data = forecast(battle, "exalted", runs=5, phases=1, seed=3, workers=1)
    assert data["next_step"]["orders"][0]["actor"] == "Bandit Mob"
    after = result.battle
    assert status(after).endswith("2 of 2 units still fighting")
    bandits = next(r for r in side_rows(after) if r["side"] == "Bandits")
    assert bandits["standing"] == 1
    assert next(u for u in units_json(after) if u["name"] == "Bandit Mob")["in_fight"] is True
    assert "left the battle" not in _status_text(after)


def test_x32_x34_a_lone_commander_slain_is_out_of_the_fight_everywhere() -> None:
    """X32, X34: Red Harrow slain while alone: the mob has left the battle.  resolve runs
    nothing of his; the forecast says the battle is over; the Battle sheet counts 1 of 2
    units, the Bandits none standing; the Ticks board says disbanded; ``status`` says it
    left the battle."""
    battle = _mob_alone(disbanded=True, fallen=("Red Harrow",))
    assert not in_fight(battle.state_of("Bandit Mob")) and sides_in_fight(battle) == ["Realm"]
    result = resolve(battle)
    assert not any(e.get("unit") == "Bandit Mob" and e["kind"] == "Attack" for e in result.events)
    with pytest.raises(BattleStateError, match=r"the battle is over \(only Realm has a unit left in the fight"):
        ExaltedForecast().prepare(battle)
    assert status(battle).endswith("1 of 2 units still fighting")
    bandits = next(r for r in side_rows(battle) if r["side"] == "Bandits")
    assert (bandits["standing"], bandits["magnitude"]) == (0, 0)
    board = tick_board(battle, [], rows=3, cols=3)
    assert board[1][2] == "disbanded"
    assert "left the battle" in _status_text(battle)


def test_x1_a_unit_solo_from_the_start_is_in_the_fight_on_the_battle_sheet() -> None:
    """X1, X34: a solo unit (Magnitude 0 from the start) is in the fight: the Battle sheet's
    status counted it out (Magnitude 0 and solo) while the engine ran its orders."""
    battle = _mob_alone()
    state = tuple(s.model_copy(update={"starting_magnitude": 0}) if s.name == "Bandit Mob" else s
                  for s in battle.state)
    battle = battle.model_copy(update={"state": state})
    assert status(battle).endswith("2 of 2 units still fighting")
