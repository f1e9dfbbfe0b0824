"""The Exalted battle loop (E4-E6, X17-X39): Join War, who acts when, every order verified
before it is rolled, attacks with their rout and exhaustion rolls, undo, and the seed."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sheetsync.core.errors import BattleStateError, InputError
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.rules.battle import odds_json, resolve, undo, units_json
from sheetsync.systems.exalted.rules.state import Battle
from sheetsync.systems.exalted.system import SYSTEM


def _data(**changes: Any) -> dict[str, Any]:
    data = yaml.safe_load(SYSTEM.example_data())
    assert isinstance(data, dict)
    data.update(changes)
    return data


def _battle(orders: list[dict[str, Any]] | None = None, **changes: Any) -> Battle:
    data = _data(**changes)
    if orders is not None:
        data["orders"] = orders
    return load_battle(data)


def _unit(units: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(u for u in units if u["name"] == name)


VOLLEY = {"tick": 0, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Ranged",
          "dice": "10 10 8 7 1 1 2 3", "damage_dice": "7 7 7 7 7 7 7", "rout_dice": "1 2",
          "exhaustion_dice": "1 1 1 1 1 1 1 1", "target_exhaustion_dice": "7 7 7 7 7"}


def test_e4_join_war_typed_and_rolled_then_long_tick_0() -> None:
    """E4: the talon types 9 7 10 2 4 (4 successes) for Wits 3 + War 4 − Magnitude 2 = 5
    dice; the mob rolls Wits 2 + War 2 − 3 = 1 die.  The best acts on tick 0, the other on
    min(6, best − own)."""
    result = resolve(_battle([]))
    join = result.events[0]
    assert join["kind"] == "Join War" and join["rule_ref"] == "E4"
    talon, mob = join["rolls"]
    assert (talon["pool"]["value"], talon["roll"]["source"], talon["successes"], talon["tick"]) == \
        (5, "typed faces", 4, 0)
    assert mob["pool"]["value"] == 1 and mob["roll"]["source"] == "rolled"
    assert mob["tick"] == min(6, 4 - mob["successes"])
    assert result.tick == 0 and result.battle.started


def test_x28_x34_x35_x36_x37_a_typed_volley_through_the_loop() -> None:
    """Worked by hand.  Pool: Dex 4 + min(Archery 3, War 4) + bow Accuracy 1 = 8 dice; faces
    10 10 8 7 1 1 2 3 = 6 successes.  Added: min(Ranged Rating 3, War 4) + Might 1 = 4.
    External: Magnitude 2 − 3 = −1.  DV: Red Harrow's Parry (3 + 3)/2 = 3 + ⌊Close Rating
    2/2⌋ = 4.  6 + 4 − 1 − 4 = threshold 5.  Raw: bow 3 + Ranged Damage 1 + 5 = 9 (no
    Strength for Archery); soak: ⌊3/2⌋ + Armor 1 = 2, so 7 dice, 7 7 7 7 7 7 7 = 7 levels:
    the 7-level track fills once, −1 dot (3 → 2), 0 marked (X34).  Rout (Magnitude loss and
    first ranged attack, both +0, Relaxed): difficulty 1; pool Morale 3 − (2 − Drill 1) = 2,
    typed 1 2: failed, max(1, 1 − 0) = 1 more dot (2 → 1), hesitating; the limit 2 × 1
    keeps 2 of its 3 relays (X36, X11).  Exhaustion (X37): the talon's 8 dice (Charisma 4 +
    War 4) all 1s against fatigue 1 − 1 (Morale 3), minimum 1: −1 Endurance (7 → 6); the
    mob's 5 dice (Charisma 3 + War 2) 7 7 7 7 7 hold.  Odds before rolling: 2 successes
    needed of 8 dice, 1 − 0.6⁸ − 8 · 0.3 · 0.6⁷."""
    battle = _battle([VOLLEY])
    odds = odds_json(battle)[0]["odds"]
    assert (odds["pool"], odds["successes_added"], odds["external_penalty"], odds["dv"], odds["successes_needed"]) \
        == (8, 4, 1, 4, 2)
    assert Fraction(odds["p_hit"]) == 1 - Fraction(3, 5) ** 8 - 8 * Fraction(3, 10) * Fraction(3, 5) ** 7
    result = resolve(battle)
    attack = next(e for e in result.events if e["kind"] == "Attack")
    got = {k: attack[k]["value"] for k in ("pool", "successes", "bonus_successes", "external_penalty", "dv",
                                          "threshold", "raw_damage", "soak", "damage_dice", "levels",
                                          "magnitude_lost")}
    assert got == {"pool": 8, "successes": 6, "bonus_successes": 4, "external_penalty": 1, "dv": 4, "threshold": 5,
                   "raw_damage": 9, "soak": 2, "damage_dice": 7, "levels": 7, "magnitude_lost": 1}
    assert attack["successes"]["roll"]["source"] == "typed faces"
    assert attack["rule_ref"] == "E7, X28, X30, X33, X34"
    rout = attack["rout"]
    assert rout["triggers"] == ["Magnitude loss from damage", "First ranged attack since its last action"]
    assert (rout["pool"]["value"], rout["difficulty"]["value"], rout["passed"], rout["magnitude_lost"]) == \
        (2, 1, False, 1)
    assert [(x["unit"], x["endurance_before"], x["endurance"]) for x in attack["exhaustion"]] == \
        [("Cathak Talon", 7, 6), ("Bandit Mob", 3, 3)]
    mob = _unit(units_json(result.battle), "Bandit Mob")
    assert (mob["magnitude"], mob["levels_marked"], mob["hesitating"]) == (1, 0, True)
    assert mob["special_characters"]["relays"] == ["One-Eyed Pell", "Gravel Jon"]
    talon = _unit(units_json(result.battle), "Cathak Talon")
    assert (talon["endurance"], talon["next_tick"]) == (6, 5)  # the bow's Speed 5 (E5)
    assert result.battle.state_of("Cathak Talon").ammunition == 9  # X31: 12 − 3


def test_e5_a_unit_acts_only_on_its_tick_and_the_refusal_costs_nothing() -> None:
    early = {"tick": 0, "unit": "Bandit Mob", "action": "Change Formation", "option": "Unordered"}
    plain = resolve(_battle([VOLLEY]))
    with_refused = resolve(_battle([VOLLEY, early]))
    refused = [e for e in with_refused.events if e["kind"] == "refused"]
    assert len(refused) == 1 and refused[0]["order"] == 1 and refused[0]["rule_ref"] == "E5"
    assert "acts only on its tick" in refused[0]["reason"]
    assert units_json(with_refused.battle) == units_json(plain.battle)
    assert [e for e in with_refused.events if e["kind"] != "refused"] == list(plain.events)


def test_x17_move_while_engaged_is_refused_and_costs_nothing() -> None:
    battle = resolve(_battle([VOLLEY])).battle
    mob_tick = battle.state_of("Bandit Mob").next_tick
    charge = {"tick": mob_tick, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon"}
    battle = resolve(battle.model_copy(update={"orders": (load_battle(_data(orders=[charge])).orders)})).battle
    assert battle.state_of("Cathak Talon").engaged == ("Bandit Mob",)
    nxt = battle.state_of("Cathak Talon").next_tick
    move = {"tick": nxt, "unit": "Cathak Talon", "action": "Move"}
    before = battle.state_of("Cathak Talon")
    after = resolve(battle.model_copy(update={"orders": load_battle(_data(orders=[move])).orders}))
    refused = [e for e in after.events if e["kind"] == "refused"]
    assert refused and "must Disengage before it moves" in refused[0]["reason"]
    guard = next(e for e in after.events if e["kind"] == "Guard (no order)")
    assert guard["unit"] == "Cathak Talon"  # the refused Move took nothing; its tick is Guarded
    assert after.battle.state_of("Cathak Talon").magnitude == before.magnitude


def test_e6_simultaneous_orders_roll_against_the_start_of_the_tick() -> None:
    """E6: both units start on tick 0 (2 successes each).  The mob's close attack is planned
    against the start-of-tick state: its Magnitude 3 against 2 adds 1 success (X30) and the
    talon's DV is 8 (Parry 5 + ⌊3/2⌋ + shield 1 × 2 in Close).  With ``sheet_order`` the
    volley applies first: the mob is at Magnitude 1 (1 − 2: an external penalty of 1) and
    the talon's DV carries its attack's −1 (7)."""
    data = _data()
    data["units"][0]["join_war"] = "9 7 1 2 4"
    data["units"][1]["join_war"] = "2s"
    charge = {"tick": 0, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon", "option": "Close",
              "dice": "1 1 1 1 1"}
    data["orders"] = [VOLLEY, charge]
    same = resolve(load_battle(data))
    attack = [e for e in same.events if e["kind"] == "Attack"][1]
    assert (attack["bonus_successes"]["value"], attack["external_penalty"]["value"], attack["dv"]["value"]) == \
        (3, 0, 8)
    data["house_rules"] = {"same_tick": "sheet_order"}
    ordered = resolve(load_battle(data))
    attack = [e for e in ordered.events if e["kind"] == "Attack"][1]
    assert (attack["bonus_successes"]["value"], attack["external_penalty"]["value"], attack["dv"]["value"]) == \
        (2, 1, 7)


def test_e1_physical_dice_typed_successes_and_an_impossible_count_is_an_input_error() -> None:
    order = dict(VOLLEY, dice="5s", damage_dice=None, rout_dice=None)
    attack = next(e for e in resolve(_battle([order])).events if e["kind"] == "Attack")
    assert attack["successes"]["roll"]["source"] == "typed successes" and attack["successes"]["value"] == 5
    battle = _battle([dict(VOLLEY, dice="17s")])
    with pytest.raises(InputError) as info:
        resolve(battle)
    assert str(info.value) == "orders[0].dice: 17 successes is more than a 8-die pool can roll (0 to 16, E1)"
    assert not battle.started and battle.history == ()  # nothing changed


def test_undo_restores_the_battle_exactly() -> None:
    start = _battle()
    one = resolve(start).battle
    two = resolve(one).battle
    assert undo(two) == one and undo(undo(two)) == start
    with pytest.raises(BattleStateError, match="nothing to undo"):
        undo(start)


def test_the_same_seed_gives_the_same_tick_and_undo_then_resolve_repeats_it() -> None:
    start = _battle()
    first = resolve(start)
    assert resolve(start).to_json() == first.to_json()
    again = resolve(undo(first.battle))
    assert again.to_json() == first.to_json()
    other = resolve(_battle(seed=7))
    assert other.to_json() != first.to_json()


def test_resolving_a_given_tick_past_the_next_is_refused() -> None:
    battle = resolve(_battle([VOLLEY])).battle
    due = min(s.next_tick for s in battle.state)
    with pytest.raises(InputError, match=f"comes after long tick {due}, when .* acts: resolve long tick {due} first"):
        resolve(battle, due + 1)
    later = resolve(battle).battle
    with pytest.raises(InputError, match=f"long tick 0 has passed: the battle is at long tick {later.tick}"):
        resolve(later, 0)


def test_x31_a_unit_out_of_arrows_cannot_shoot() -> None:
    data = _data(orders=[dict(VOLLEY)])
    data["units"][0]["ammunition"] = 2
    result = resolve(load_battle(data))
    (refused,) = [e for e in result.events if e["kind"] == "refused"]
    assert "2 arrows left" in refused["reason"] and refused["rule_ref"] == "X31"


def test_x32_called_shot_at_a_commander_needs_a_ranged_attack_or_an_earlier_engagement() -> None:
    close = dict(VOLLEY, option="Close, called shot: commander", damage_dice=None, rout_dice=None)
    (refused,) = [e for e in resolve(_battle([close])).events if e["kind"] == "refused"]
    assert "must be ranged" in refused["reason"] and refused["rule_ref"] == "X32"
    ranged = dict(VOLLEY, option="Ranged, called shot: commander", damage_dice=None, rout_dice=None)
    attack = next(e for e in resolve(_battle([ranged])).events if e["kind"] == "Attack")
    # X32: −⌈X/2⌉, X the higher of Drill 1 and Magnitude 3 (Relaxed): −2, beside X30's −1.
    assert attack["external_penalty"]["value"] == 3 and attack["called_shot"] == "Red Harrow"


ACTIONS = [("Attack", "Close"), ("Attack", "Ranged"), ("Guard", None), ("Move", None), ("Dash", None),
           ("Change Formation", "Unordered"), ("Change Formation", "Close"), ("Disengage", None),
           ("Rally", "Numbers"), ("Rally", "Second Wind"), ("Aim", None), ("Turn", None)]


@settings(max_examples=25, deadline=None, database=None)
@given(st.integers(0, 10**6), st.lists(st.tuples(st.integers(0, len(ACTIONS) - 1), st.integers(0, len(ACTIONS) - 1)),
                                       min_size=1, max_size=6))
def test_x2_x26_magnitude_never_rises_but_by_rally_and_endurance_stays_in_bounds(
        seed: int, plan: list[tuple[int, int]]) -> None:
    """X34, X36, X39: damage, rout and Mob Rule never raise Magnitude; only a rally for
    Numbers does (X26).  Endurance stays between 0 and its start (X26, X37).  A unit acts
    only on its tick (E5): its next tick never falls behind the battle's."""
    battle = _battle([], seed=seed)
    for a, b in plan:
        tl = {s.name: s.next_tick for s in battle.state if not s.disbanded}
        if not battle.started:
            tick = 0
        else:
            tick = min(tl.values())
        names = [n for n, t in tl.items() if t == tick] if battle.started else list(tl)
        orders = []
        for i, name in enumerate(names):
            action, option = ACTIONS[(a, b)[i % 2]]
            other = next(n for n in tl if n != name) if len(tl) > 1 else name
            orders.append({"tick": tick, "unit": name, "action": action, "target": other, "option": option})
        before = {s.name: s for s in battle.state}
        try:
            result = resolve(battle.model_copy(update={"orders": load_battle(_data(orders=orders)).orders}))
        except BattleStateError:
            return
        rallied = {e["unit"] for e in result.events if e.get("rally") == "Numbers" and e["command"]["success"]}
        for e in result.events:  # E5: a unit's own (non-reflexive) action falls on its tick
            if e.get("timing", {}).get("speed", 0) > 0 and battle.started:
                assert before[e["unit"]].next_tick == e["tick"] == result.tick, e
        for s in result.battle.state:
            if s.name not in rallied:
                assert s.magnitude <= before[s.name].magnitude, (s.name, result.events)
            assert 0 <= s.endurance <= s.starting_endurance
            if not s.disbanded:
                assert s.next_tick >= result.tick
        battle = result.battle


def _fought(ticks: int = 4) -> list[Battle]:
    """A 6-unit battle through ``ticks`` long ticks, each unit repeating its order (X28-X37)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from exalted_battles import make_exalted_battle

    from sheetsync.systems.exalted.forecast import ExaltedForecast, Sim

    adapter = ExaltedForecast()
    declared = adapter.prepare(SYSTEM.load(make_exalted_battle(6, seed=3), "b.yaml"))
    out: list[Battle] = []
    now: Sim | None = declared
    while now is not None and len(out) < ticks:
        out.append(now.battle)  # each battle as resolved: its orders typed, its history
        b = resolve(now.battle).battle
        nxt = adapter.standing(declared, Sim(b.model_copy(update={"history": ()})))
        now = Sim(b) if nxt is None else Sim(nxt.battle.model_copy(update={"history": b.history}))
        if nxt is None:
            break
    assert now is not None
    out.append(now.battle)
    return out


def test_e5_issue23_a_compact_undo_record_round_trips_and_undoes_exactly() -> None:
    """Issue 23: a record keeps only the fields a tick changed, under short keys; dumped to
    JSON and read back (as a tracker's State holds it) it is the same record, and undoing
    with it gives every earlier battle exactly."""
    import json

    from sheetsync.systems.exalted.rules.state import SHORT_KEYS, UndoRecord

    battles = _fought()
    last = battles[-1]
    assert len(last.history) == len(battles) - 1
    for rec in last.history:
        assert rec.changed is not None and rec.states == ()
        keys = {k for was in rec.changed.values() for k in was}
        assert keys and keys <= set(SHORT_KEYS.values())
        back = UndoRecord.read(json.loads(json.dumps(rec.model_dump(mode="json")))).check()
        assert back == rec
    now = last
    for before in reversed(battles[:-1]):
        now = undo(now)
        assert now == before


def test_e5_issue23_an_old_form_record_still_undoes() -> None:
    """Issue 23: records written before it (every unit state whole, ``states``) and those
    that named the changed fields in full are still read, and undo as they always did."""
    from sheetsync.systems.exalted.rules.state import SHORT_KEYS, UndoRecord

    battles = _fought(2)
    last = battles[-1]
    rec = last.history[-1]
    assert rec.changed
    whole = UndoRecord.read(rec.whole(last.state).model_dump(mode="json")).check()
    assert whole.changed is None and len(whole.states) == len(last.state)
    long_names = {v: k for k, v in SHORT_KEYS.items()}
    spelled = UndoRecord.read({**rec.model_dump(mode="json"), "changed": {
        u: {long_names[k]: v for k, v in was.items()} for u, was in rec.changed.items()}}).check()
    assert "magnitude" in str(spelled.changed) or "next_tick" in str(spelled.changed)
    for old in (whole, spelled):
        gone = undo(last.model_copy(update={"history": (*last.history[:-1], old)}))
        assert gone == battles[-2].model_copy(update={"history": gone.history})
        assert gone.state == battles[-2].state
    with pytest.raises(ValueError):
        UndoRecord.read({**rec.model_dump(mode="json"),
                                   "changed": {"Talon 1": {"zz": 1}}}).check()
