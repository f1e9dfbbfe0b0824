"""Issue 22: whether a hex unit is still in the fight is one fact (``Unit.destroyed``, 6.2.1,
H9) and whether the fight is over another (``Battle.fight_over``, H12): ``resolve``, the
Battle sheet's status, the report and the forecast agree.

Where they disagreed: the last units of both sides destroyed in the same turn (H9: the
casualties apply after the last engagement, so each still attacked).  ``resolve`` refused
the next turn ("no side has units left") while the Battle sheet asked for the turn's
orders and the report said both sides still had units on the map."""

from __future__ import annotations

import pytest

from sheetsync.core.errors import BattleStateError
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.forecast import HexForecast
from sheetsync.systems.hexwar.rules import Battle, aftermath, resolve_turn
from sheetsync.systems.hexwar.tracker.cells import side_rows, status


def _face_off(**turn: object) -> Battle:
    """A knight against a fist, side by side, each attacking the other."""
    return load_battle({
        "seed": "face-off",
        "map": {"columns": 6, "rows": 6},
        "units": [
            {"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0303", "casualties": 90},
            {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 1", "hex": "0304", "casualties": 90},
        ],
        "turn": turn,
    })


def test_h9_h12_both_sides_destroyed_in_one_turn_is_over_everywhere() -> None:
    """H9, H12.  Each unit at 90% attacks the other with a typed d100 of 1: the knights'
    chance against the fist is at least 11%, the fist's against the knights too, so each
    takes 10% or more: both reach 100% after the last engagement, both having attacked.
    Then resolve refuses, the Battle sheet says the battle is over, the report is over with
    no survivor, and the forecast has nothing to run."""
    battle = _face_off(attacks=[{"defender": "1st Fist", "attackers": ["Sun Knights"], "roll": 1},
                                {"defender": "Sun Knights", "attackers": ["1st Fist"], "roll": 1}])
    result = resolve_turn(battle)
    hits = [e for e in result.events if getattr(e, "outcome", None) == "hit"]
    assert len(hits) == 2  # H9: both attacked
    after = result.battle
    assert all(u.destroyed for u in after.units) and after.fight_over()
    with pytest.raises(BattleStateError, match="no side has units left"):
        resolve_turn(after)
    assert status(after).startswith("Battle over: no side has units left")
    rep = aftermath(after)
    assert rep.over and rep.survivor is None
    assert [r["destroyed"] for r in side_rows(after)] == [1, 1]
    with pytest.raises(BattleStateError, match="the battle is over"):
        HexForecast().prepare(after)


def test_h9_a_unit_below_100_percent_is_in_the_fight_everywhere() -> None:
    """H9, H10.  At 99% a unit is still in the fight: resolve runs its attack, the Battle
    sheet asks for the turn's orders, the report is not over and the forecast finds two
    sides."""
    battle = _face_off(attacks=[{"defender": "1st Fist", "attackers": ["Sun Knights"]}])
    units = tuple(u.model_copy(update={"casualties": 99}) for u in battle.units)
    battle = battle.model_copy(update={"units": units})
    assert not battle.fight_over()
    assert status(battle).startswith("Turn 1: type the turn's moves and attacks")
    assert not aftermath(battle).over
    assert HexForecast().sides_in(HexForecast().prepare(battle)) == ["Party", "Enemy"]
    result = resolve_turn(battle)
    assert any(getattr(e, "attackers", None) == ("Sun Knights",) and e.outcome != "refused" for e in result.events)
