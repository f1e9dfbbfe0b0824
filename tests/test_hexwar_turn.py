"""Resolving a hex turn: dice from the seed and the turn, refusals that cost nothing, undo
from a small record, the JSON shape (H3, H4, H7, H8, H9)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from sheetsync.core.dice import RandomRoller, ScriptedRoller
from sheetsync.core.errors import BattleStateError
from sheetsync.systems.hexwar.files.loader import load_battle
from sheetsync.systems.hexwar.rules import (
    AttackEvent,
    Battle,
    MoveEvent,
    chance,
    example_battle_data,
    expected_casualties,
    resolve_turn,
    turn_roller,
    undo,
)


def example() -> Battle:
    return load_battle(yaml.safe_load(example_battle_data()), "example.yaml")


def duel(**turn: Any) -> Battle:
    """Sun Knights at 0405 between two Fists; the Footmen far off."""
    return load_battle({
        "seed": "duel",
        "map": {"columns": 10, "rows": 10, "impassable": ["0505"]},
        "units": [
            {"name": "Sun Knights", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0405"},
            {"name": "Footmen", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0101"},
            {"name": "1st Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0404"},
            {"name": "2nd Fist", "side": "Enemy", "counter": "4 - 4 - 1 - 2(2)", "hex": "0406"},
        ],
        "turn": turn,
    })


def test_h8_the_same_seed_and_turn_give_the_same_dice() -> None:
    battle = example()
    first, again = resolve_turn(battle), resolve_turn(battle)
    assert first == again
    # the battalion convention: the turn's roller is seeded with "seed:turn"
    assert resolve_turn(battle, RandomRoller(f"{battle.seed}:{battle.turn}")) == first
    rolls = [e.roll for e in first.events if isinstance(e, AttackEvent)]
    assert all(e.roll_source == "rolled" for e in first.events if isinstance(e, AttackEvent))
    other = battle.model_copy(update={"seed": 8})
    assert [e.roll for e in resolve_turn(other).events if isinstance(e, AttackEvent)] != rolls
    assert isinstance(turn_roller(battle), RandomRoller) and turn_roller(battle).seed == "7:1"


def test_h8_the_next_turn_rolls_other_dice() -> None:
    a = duel(attacks=[{"defender": "Sun Knights", "attackers": ["1st Fist"]}])
    one = resolve_turn(a)
    assert turn_roller(one.battle).seed == "duel:2"


def test_h7_a_refused_attack_rolls_no_die_and_commits_nobody() -> None:
    battle = duel(attacks=[
        {"defender": "Footmen", "attackers": ["1st Fist", "2nd Fist"]},  # the Footmen are far: refused
        {"defender": "Sun Knights", "attackers": ["1st Fist", "2nd Fist"], "roll": 37},
    ])
    roller = ScriptedRoller([])
    result = resolve_turn(battle, roller)
    refused, hit = (e for e in result.events if isinstance(e, AttackEvent))
    assert refused.outcome == "refused" and refused.roll is None and "reaches 2" in (refused.reason or "")
    assert roller.used == 0
    assert (hit.outcome, hit.chance, hit.casualties) == ("hit", 72, 35)


def test_h4_a_refused_move_leaves_the_unit_free_to_move() -> None:
    battle = duel(initiative="Party", moves=[{"unit": "Footmen", "to": "0103"}, {"unit": "Footmen", "to": "0102"}])
    first, second = resolve_turn(battle).events
    assert isinstance(first, MoveEvent) and first.outcome == "refused" and first.from_ == "0101"
    assert isinstance(second, MoveEvent) and second.outcome == "moved" and second.to == "0102"


def test_h4_a_move_into_an_impassable_hex_on_a_path_is_refused() -> None:
    battle = duel(initiative="Party", moves=[{"unit": "Sun Knights", "path": ["0505"]}])
    (ev,) = resolve_turn(battle).events
    assert isinstance(ev, MoveEvent) and ev.outcome == "refused" and ev.reason == "0505 is impassable"
    assert ev.rule_ref == "5.1, H4"


def test_h4_a_destination_with_no_way_round_is_refused() -> None:
    battle = load_battle({
        "map": {"columns": 3, "rows": 1},
        "units": [{"name": "A", "side": "Party", "counter": "3 - 3 - 4 - 1", "hex": "0101"},
                  {"name": "B", "side": "Enemy", "counter": "3 - 3 - 1 - 1", "hex": "0201"}],
        "turn": {"initiative": "Party", "moves": [{"unit": "A", "to": "0301"}]},
    })
    (ev,) = resolve_turn(battle).events
    assert isinstance(ev, MoveEvent) and ev.reason == "no way from 0101 to 0301 avoids impassable and enemy hexes"


def test_undo_restores_the_turn_and_its_orders() -> None:
    battle = example()
    after = resolve_turn(battle).battle
    assert after.turn == 2 and after.orders.moves == ()
    assert undo(after) == battle
    with pytest.raises(BattleStateError, match="nothing to undo"):
        undo(battle)


def test_undo_stores_per_turn_only_what_it_needs_at_constant_cost() -> None:
    """The later seam keeps history at constant cost: a turn's record holds its orders and
    the units it changed, so record 20 is no bigger than record 1 for the same orders."""
    battle = duel(attacks=[{"defender": "Sun Knights", "attackers": ["1st Fist"], "roll": 56}])
    start = battle
    for _ in range(20):
        orders = battle.orders if battle.turn == 1 else start.orders
        battle = resolve_turn(battle.model_copy(update={"orders": orders})).battle
    sizes = [len(json.dumps(r.model_dump(mode="json"))) for r in battle.history]
    assert max(sizes) - min(sizes) <= 8 and max(sizes) < 400  # only the digits of the numbers grow
    assert [u.name for u in battle.history[0].units] == ["Sun Knights"]
    assert battle.unit("Sun Knights").casualties == 20  # 57 - 56 = 1 a turn
    for _ in range(20):
        battle = undo(battle)
    assert battle == start


def test_h9_resolve_json_has_the_issues_keys() -> None:
    out = resolve_turn(example()).to_json()
    assert out["system"] == "hexwar" and out["turn"] == 1 and out["initiative"] == "Party"
    kinds = {e["kind"] for e in out["events"]}
    assert kinds == {"move", "attack"}
    move = next(e for e in out["events"] if e["kind"] == "move")
    assert "from" in move and "from_" not in move
    json.dumps(out)


def test_h12_a_battle_with_one_side_left_is_not_resolved() -> None:
    battle = load_battle({
        "map": {"columns": 3, "rows": 3},
        "units": [{"name": "A", "side": "Party", "counter": "3 - 3 - 1 - 1", "hex": "0101", "casualties": 100},
                  {"name": "B", "side": "Enemy", "counter": "3 - 3 - 1 - 1", "hex": "0201"}],
    })
    with pytest.raises(BattleStateError, match="only Enemy has units left"):
        resolve_turn(battle)


@pytest.mark.parametrize("c", range(0, 100))
def test_h11_expected_casualties_is_the_mean_over_every_d100_roll(c: int) -> None:
    mean = sum(max(0, c - roll) for roll in range(1, 101)) / 100
    assert expected_casualties(c) == pytest.approx(mean)


def test_h7_6_2_chance_floors_the_percentage() -> None:
    assert (chance(4, 3), chance(8, 3), chance(3, 4), chance(1, 1), chance(0, 3)) == (57, 72, 42, 50, 0)


def test_h4_a_move_built_without_destination_or_path_is_refused_not_a_crash() -> None:
    from sheetsync.systems.hexwar.rules import MoveOrder, TurnOrders

    battle = duel().model_copy(update={"orders": TurnOrders(initiative="Party", moves=(MoveOrder(unit="Footmen"),))})
    (ev,) = resolve_turn(battle).events
    assert isinstance(ev, MoveEvent) and ev.outcome == "refused" and "names no destination" in (ev.reason or "")
