"""Invariants of the hex engine over random battles (hypothesis): casualties never fall,
no unit attacks twice in a turn, no hex exceeds the stacking limit after moves, destroyed
units are gone next turn, undo round-trips, the same seed gives the same turn."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sheetsync.systems.hexwar.files.loader import battle_to_file, load_battle
from sheetsync.systems.hexwar.rules import (
    AttackEvent,
    Battle,
    MoveEvent,
    parse_hex,
    resolve_turn,
    undo,
)

SETTINGS = settings(max_examples=120, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
COUNTERS = ["3+ - 2 - 4 - 1", "4++ - 4 - 3 - 1", "4 - 3 - 1 - 2(3)", "3 - 3 - 1 - 1", "3+ - 2 - 2 - 1",
            "4 - 4 - 1 - 2(2)", "5 - 4 - 1 - 2(2)", "4 - 3 - 1 - 2(--)", "9 - 1 - 2 - 3"]
COLS, ROWS = 6, 6
ALL_HEXES = [f"{c:02d}{r:02d}" for c in range(1, COLS + 1) for r in range(1, ROWS + 1)]


@st.composite
def battles(draw: st.DrawFn) -> dict[str, Any]:
    impassable = draw(st.lists(st.sampled_from(ALL_HEXES), max_size=4, unique=True))
    open_hexes = [h for h in ALL_HEXES if h not in impassable]
    n = draw(st.integers(2, 8))
    spots = draw(st.lists(st.sampled_from(open_hexes), min_size=n, max_size=n, unique=True))
    sides = ["Party", "Enemy"] + [draw(st.sampled_from(["Party", "Enemy"])) for _ in range(n - 2)]
    units = []
    for i in range(n):
        unit: dict[str, Any] = {"name": f"U{i}", "side": sides[i], "counter": draw(st.sampled_from(COUNTERS)),
                                "hex": spots[i], "casualties": draw(st.sampled_from([0, 0, 10, 40, 70, 95, 99]))}
        if draw(st.booleans()):
            unit["size"] = draw(st.sampled_from([0.5, 1, 1.5]))
        units.append(unit)
    names = [u["name"] for u in units]
    moves = []
    for _ in range(draw(st.integers(0, 8))):
        who = draw(st.sampled_from(names))
        if draw(st.booleans()):
            moves.append({"unit": who, "to": draw(st.sampled_from(ALL_HEXES))})
        else:
            moves.append({"unit": who, "path": draw(st.lists(st.sampled_from(ALL_HEXES), min_size=1, max_size=4))})
    attacks = []
    for _ in range(draw(st.integers(0, 6))):
        attack: dict[str, Any] = {"defender": draw(st.sampled_from(names)),
                                  "attackers": draw(st.lists(st.sampled_from(names), min_size=1, max_size=3,
                                                             unique=True))}
        if draw(st.booleans()):
            attack["roll"] = draw(st.integers(1, 100))
        attacks.append(attack)
    return {
        "seed": draw(st.integers(0, 10**6)),
        "house_rules": {"proportional_reduction": draw(st.booleans()),
                        "charge_by": draw(st.sampled_from(["distance", "path"]))},
        "map": {"columns": COLS, "rows": ROWS, "impassable": impassable},
        "units": units,
        "turn": {"initiative": draw(st.sampled_from(["Party", "Enemy"])), "moves": moves, "attacks": attacks},
    }


def _attack_events(events: tuple[MoveEvent | AttackEvent, ...]) -> list[AttackEvent]:
    return [e for e in events if isinstance(e, AttackEvent) and e.outcome != "refused"]


@SETTINGS
@given(battles())
def test_hexwar_casualties_never_fall(data: dict[str, Any]) -> None:
    battle = load_battle(data)
    after = resolve_turn(battle).battle
    for before, now in zip(battle.units, after.units, strict=True):
        assert now.casualties >= before.casualties


@SETTINGS
@given(battles())
def test_h7_no_unit_attacks_twice_and_no_defender_faces_two_engagements(data: dict[str, Any]) -> None:
    battle = load_battle(data)
    accepted = _attack_events(resolve_turn(battle).events)
    attackers = [a for e in accepted for a in e.attackers]
    assert len(attackers) == len(set(attackers))
    defenders = [e.defender for e in accepted]
    assert len(defenders) == len(set(defenders))
    sides = {u.name: u.side for u in battle.units}
    assert all(sides[a] != sides[e.defender] for e in accepted for a in e.attackers)
    assert all(0 <= e.casualties < 100 and e.chance is not None and 0 < e.chance < 100 for e in accepted)


@SETTINGS
@given(battles())
def test_h4_no_hex_exceeds_the_stacking_limit_or_mixes_sides_after_moves(data: dict[str, Any]) -> None:
    battle = load_battle(data)
    result = resolve_turn(battle)
    stacks: dict[tuple[str, str], float] = {}
    held: dict[str, set[str]] = {}
    for u in result.battle.units:
        if battle.unit(u.name).destroyed:
            continue
        stacks[(u.hex, u.side)] = stacks.get((u.hex, u.side), 0) + u.size
        held.setdefault(u.hex, set()).add(u.side)
    assert all(v <= battle.house_rules.stack_limit for v in stacks.values())
    assert all(len(s) == 1 for s in held.values())
    impassable = set(battle.map.impassable)
    for e in result.events:
        if isinstance(e, MoveEvent) and e.outcome == "moved":
            unit = battle.unit(e.unit)
            assert len(e.path) <= unit.counter.movement
            assert not impassable & set(e.path)
            assert all(parse_hex(h) for h in e.path)


@SETTINGS
@given(battles())
def test_h9_destroyed_units_are_gone_next_turn(data: dict[str, Any]) -> None:
    after = resolve_turn(load_battle(data)).battle
    dead = [u.name for u in after.units if u.destroyed]
    if not dead or len(after.live_sides()) < 2:
        return
    live = [u.name for u in after.units if not u.destroyed]
    file = battle_to_file(after)
    file["turn"] = {"number": after.turn, "initiative": "Party",
                    "moves": [{"unit": d, "to": after.unit(d).hex} for d in dead],
                    "attacks": [{"defender": d, "attackers": [live[0]], "roll": 1} for d in dead]
                    + [{"defender": live[0], "attackers": [d], "roll": 1} for d in dead]}
    nxt = resolve_turn(load_battle(file))
    naming = [e for e in nxt.events if (e.unit if isinstance(e, MoveEvent) else e.defender) in dead
              or (isinstance(e, AttackEvent) and set(e.attackers) & set(dead))]
    assert naming and all(e.outcome == "refused" and "destroyed" in (e.reason or "") for e in naming)


@SETTINGS
@given(battles())
def test_hexwar_undo_round_trips_and_the_same_seed_gives_the_same_turn(data: dict[str, Any]) -> None:
    battle: Battle = load_battle(data)
    result = resolve_turn(battle)
    assert undo(result.battle) == battle
    assert resolve_turn(battle) == result
    assert resolve_turn(load_battle(battle_to_file(battle))) == result
    assert load_battle(battle_to_file(result.battle)) == result.battle
