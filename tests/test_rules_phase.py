"""The Battle 4-5, Hero Moments and rulings R11-R25: resolving a phase."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sheetsync.core.dice import RandomRoller, ScriptedRoller
from sheetsync.core.errors import BattleStateError
from sheetsync.systems.bbn.files.loader import battle_to_file, load_battle
from sheetsync.systems.bbn.rules import (
    Battle,
    Order,
    PhaseResult,
    State,
    Task,
    hit_chance,
    phase_roller,
    resolve_phase,
    undo,
)


def cohort(name: str, size: int = 3, **extra: Any) -> dict[str, Any]:
    members = [f"{name}{i}" for i in range(1, size + 1)]
    return {"name": name, "sergeant": members[0], "members": members, **extra}


def enemy(name: str, size: int = 3, **extra: Any) -> dict[str, Any]:
    return cohort(name, size, side="enemy", **extra)


def battle(*cohorts: dict[str, Any], ranges: list[list[str]] | None = None,
           orders: list[dict[str, Any]] | None = None, **extra: Any) -> Battle:
    return load_battle({"cohorts": list(cohorts), "ranges": ranges or [], "orders": orders or [], **extra})


def run(b: Battle, *dice: int) -> PhaseResult:
    roller = ScriptedRoller(dice)
    result = resolve_phase(b, roller)
    assert roller.used == len(dice), "every scripted die is used"
    return result


def states(result: PhaseResult, name: str) -> dict[str, str]:
    return {m: s.value for m, s in result.battle.state[name].states.items()}


def next_phase(result: PhaseResult, orders: list[dict[str, Any]]) -> Battle:
    data = battle_to_file(result.battle)
    data["orders"] = orders
    return load_battle(data)


FIGHT = [cohort("A", 4, pools={"melee": 10, "temper": 9, "resolve": 10, "mystical": 10, "ranged": 10}),
         enemy("E", 5, pools={"defense": 10, "health": 30})]


def fight(orders: list[dict[str, Any]], band: str = "Personal", **extra: Any) -> Battle:
    return battle(*FIGHT, ranges=[["A", "E", band]], orders=orders, **extra)


# -- R14 hits ------------------------------------------------------------------------


@pytest.mark.parametrize(("pool", "defense", "chance"), [(10, 15, 0.6), (0, 20, 0.0), (20, 5, 1.0), (5, 15, 0.1), (0, 10, 0.1), (0, 11, 0.0)])
def test_r14_hit_chance(pool: int, defense: int, chance: float) -> None:
    assert hit_chance(pool, defense) == pytest.approx(chance)


def test_r14_hit_chance_counts_the_d10_faces_that_tie_or_beat_defense() -> None:
    for pool in range(0, 25):
        for defense in range(0, 30):
            wins = sum(1 for d in range(1, 11) if d + pool >= defense)
            assert hit_chance(pool, defense) == pytest.approx(wins / 10)


# -- Tasks 5.2-5.4, 5.11, R15 --------------------------------------------------------


@pytest.mark.parametrize(("task", "band", "damage", "temper"), [
    ("Melee Attack", "Personal", 4 * 2 + 5, 1),
    ("Ranged Attack", "Distanced", 4 * 2, 1),
    ("Mystical Attack", "In-Sight", 4 * 2 + 2, 3),
    ("Mystical Attack", "Personal", 4 * 2 + 2, 3),
])
def test_tasks_5_11_1_damage_and_cost_of_each_attack(task: str, band: str, damage: int, temper: int) -> None:
    r = run(fight([{"cohort": "A", "task": task, "target": "E", "roll": 1}], band))
    (ev,) = r.events
    assert (ev.outcome, ev.damage, ev.temper_spent) == ("hit", damage, temper)
    assert r.battle.state["E"].health == 30 - damage
    assert r.battle.state["A"].temper == 9 - temper


def test_tasks_5_11_1_four_members_deal_13_melee_damage() -> None:
    r = run(fight([{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 5}]))
    assert r.events[0].damage == 13


@pytest.mark.parametrize(("task", "wrong_band"), [
    ("Melee Attack", "Distanced"), ("Ranged Attack", "Personal"), ("Ranged Attack", "In-Sight"),
    ("Intimidate", "Distanced"), ("Analyze", "Personal"), ("Mystical Attack", "Blinded"),
])
def test_r24_each_task_needs_its_band(task: str, wrong_band: str) -> None:
    order = {"cohort": "A", "task": task, "target": "E", "roll": 10}
    r = run(fight([order], wrong_band))
    assert r.events[0].outcome == "refused"
    assert r.battle.state == fight([order], wrong_band).state


def test_r24_the_band_is_the_same_both_ways() -> None:
    b = battle(*FIGHT, ranges=[["E", "A", "Personal"]], orders=[{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10}])
    assert run(b).events[0].outcome == "hit"


def test_r15_attack_power_decides_the_hit_not_the_damage() -> None:
    strong = battle(cohort("S", 3, pools={"melee": 40, "temper": 1}), enemy("E", 3, pools={"defense": 10}),
                    ranges=[["S", "E", "Personal"]], orders=[{"cohort": "S", "task": "Melee Attack", "target": "E", "roll": 1}])
    assert run(strong).events[0].damage == 3 * 2 + 5


def test_r13_an_enemy_target_is_needed_for_an_attack() -> None:
    b = battle(cohort("A", pools={"melee": 10, "temper": 1}), cohort("B"), ranges=[["A", "B", "Personal"]],
               orders=[{"cohort": "A", "task": "Melee Attack", "target": "B", "roll": 10}])
    ev = run(b).events[0]
    assert ev.outcome == "refused" and "enemy" in (ev.reason or "")


# -- R13 order, refusals ---------------------------------------------------------------


def test_r13_one_event_per_order_in_the_order_given() -> None:
    orders = [{"cohort": "A", "task": "Move"}, {"cohort": "E", "task": "Move"},
              {"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 3},
              {"cohort": "A", "task": "Tactical Task"}]
    r = run(fight(orders))
    assert [(e.order, e.cohort, e.task.value) for e in r.events] == [
        (0, "A", "Move"), (1, "E", "Move"), (2, "A", "Melee Attack"), (3, "A", "Tactical Task")]
    assert r.phase == 1 and r.battle.phase == 2 and r.battle.orders == ()


def test_r13_a_refused_order_costs_nothing_and_says_why() -> None:
    b = fight([{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10}], "Distanced")
    r = run(b)
    ev = r.events[0]
    assert ev.outcome == "refused" and ev.reason and "R24" in ev.reason
    assert (ev.rolls, ev.effects, ev.temper_spent, ev.damage) == ((), (), 0, 0)
    assert r.battle.state == b.state


def test_r13_actions_run_out() -> None:
    r = run(fight([{"cohort": "A", "task": "Move"}] * 5))
    assert [e.outcome for e in r.events] == ["done"] * 4 + ["refused"]
    assert [e.actions_left for e in r.events] == [3, 2, 1, 0, 0]


def test_r13_knocked_out_mid_phase_takes_an_unused_action() -> None:
    # E (3 members, health 1): one 13-damage hit takes it to -12, one casualty step
    b = battle(cohort("A", 4, pools={"melee": 10, "temper": 1}), enemy("E", 3, health=1),
               ranges=[["A", "E", "Personal"]],
               orders=[{"cohort": "E", "task": "Move"}, {"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10, "picks": [1]},
                       {"cohort": "E", "task": "Move"}, {"cohort": "E", "task": "Move"}])
    r = run(b)
    assert [e.outcome for e in r.events] == ["done", "hit", "done", "refused"]
    assert states(r, "E")["E2"] == "Knocked Out"


# -- R16 casualty steps -------------------------------------------------------------------


def hit_e(health: int, e_states: dict[str, str] | None = None, size: int = 4, attacks: int = 1,
          picks: list[int] | None = None, **extra: Any) -> PhaseResult:
    """A cohort of 4 (13 damage a hit) attacks E (Sergeant E1) ``attacks`` times."""
    b = battle(cohort("A", 4, pools={"melee": 10, "temper": 9}),
               enemy("E", size, pools={"defense": 10}, health=health, states=e_states or {}, **extra),
               ranges=[["A", "E", "Personal"]],
               orders=[{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10, "picks": picks or []}] * attacks)
    return run(b)


def test_tasks_5_11_2_health_goes_below_zero_and_only_every_full_10_is_a_step() -> None:
    r = hit_e(12)  # 12 - 13 = -1: no step
    assert r.battle.state["E"].health == -1
    assert all(s == "Active" for s in states(r, "E").values())
    r = hit_e(4, picks=[2])  # 4 - 13 = -9: no step
    assert all(s == "Active" for s in states(r, "E").values())
    r = hit_e(3, picks=[2])  # 3 - 13 = -10: one step
    assert list(states(r, "E").values()).count("Knocked Out") == 1


def test_r16_knocked_out_first() -> None:
    r = hit_e(0, {"E3": "Knocked Out"})
    assert states(r, "E") == {"E1": "Active", "E2": "Active", "E3": "Dead", "E4": "Active"}
    assert r.battle.state["E"].died_in_phase == {"E3": 1}


def test_r16_sergeant_last() -> None:
    r = hit_e(0, {"E2": "Dead", "E3": "Dead"}, picks=[])
    assert states(r, "E")["E4"] == "Knocked Out"
    assert states(r, "E")["E1"] == "Active"
    r = hit_e(0, {"E2": "Dead", "E3": "Dead", "E4": "Dead"})
    assert states(r, "E")["E1"] == "Knocked Out"
    assert "Sergeant" in r.events[0].effects[0].text


def test_r16_sergeant_last_among_the_knocked_out_too() -> None:
    r = hit_e(0, {"E1": "Knocked Out", "E2": "Knocked Out", "E3": "Dead", "E4": "Dead"})
    assert states(r, "E") == {"E1": "Knocked Out", "E2": "Dead", "E3": "Dead", "E4": "Dead"}


def test_r16_a_knocked_out_sergeant_outlives_an_active_member() -> None:
    r = hit_e(0, {"E1": "Knocked Out", "E2": "Dead", "E3": "Dead"})
    assert states(r, "E") == {"E1": "Knocked Out", "E2": "Dead", "E3": "Dead", "E4": "Knocked Out"}


def test_r16_stabilized_skipped_while_anyone_else_stands() -> None:
    r = hit_e(0, {"E2": "Stabilized", "E3": "Dead", "E4": "Dead"})
    assert states(r, "E") == {"E1": "Knocked Out", "E2": "Stabilized", "E3": "Dead", "E4": "Dead"}
    r = hit_e(0, {"E1": "Dead", "E2": "Stabilized", "E3": "Dead", "E4": "Dead"})
    assert states(r, "E")["E2"] == "Knocked Out"


def test_r16_same_attack_does_not_step_a_member_twice_while_others_are_eligible() -> None:
    # 13 damage from -7 is -20: two steps; E2 is knocked out by the first, so the Sergeant takes the second
    r = hit_e(-7, {"E3": "Dead", "E4": "Dead"})
    assert states(r, "E") == {"E1": "Knocked Out", "E2": "Knocked Out", "E3": "Dead", "E4": "Dead"}


def test_r16_r37_steps_with_no_one_left_are_logged() -> None:
    # R37: a cohort already all Dead can't be attacked any more, so the case is one attack
    # whose steps outrun the members: 35 damage (attack power 30 + 5) from -5 is -40, four
    # steps for E1 alone: Knocked Out, Dead, then nobody twice.
    b = battle(cohort("A", 4, pools={"melee": 30, "temper": 1}),
               enemy("E", 4, pools={"defense": 10}, health=-5, states={"E2": "Dead", "E3": "Dead", "E4": "Dead"}),
               ranges=[["A", "E", "Personal"]], house_rules={"damage_basis": "attack_power"},
               orders=[{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10}])
    r = run(b)
    assert [(f.member, f.to_state) for f in r.events[0].effects] == [
        ("E1", State.KNOCKED_OUT), ("E1", State.DEAD), (None, None), (None, None)]
    assert [f.text for f in r.events[0].effects][2:] == ["no member left to take the step"] * 2


def test_r16_the_casualty_pick_is_logged_with_its_die() -> None:
    r = hit_e(0, picks=[3])
    (eff,) = r.events[0].effects
    assert (eff.member, eff.to_state, eff.roll.value, eff.roll.sides, eff.roll.source) == ("E4", State.KNOCKED_OUT, 3, 3, "entered")
    assert eff.roll in r.events[0].rolls


# -- R17 Heal, R18 Rescue --------------------------------------------------------------


def test_r17_heal_without_an_amount_spends_what_the_missing_health_needs() -> None:
    b = battle(cohort("A", pools={"temper": 20}, health=8), orders=[{"cohort": "A", "task": "Heal"}])
    ev = run(b).events[0]
    # 7 missing: ceil(7 / 3) = 3 temper, 7 healed
    assert (ev.temper_spent, ev.effects[0].amount) == (3, 7)


def test_r17_heal_refused_without_the_temper() -> None:
    b = battle(cohort("A", pools={"temper": 2}, health=5), orders=[{"cohort": "A", "task": "Heal", "temper": 3}])
    assert "costs 3 temper" in (run(b).events[0].reason or "")


def test_tasks_5_7_rescue_twice_per_phase() -> None:
    b = battle(cohort("A", 5, pools={"temper": 10}, states={"A2": "Knocked Out", "A3": "Knocked Out"}),
               orders=[{"cohort": "A", "task": "Rescue", "member": "A2"}] * 2 + [{"cohort": "A", "task": "Rescue", "member": "A3"}])
    r = run(b)
    assert [e.outcome for e in r.events] == ["done", "done", "refused"]
    assert states(r, "A")["A2"] == "Active"
    assert r.end_of_phase == ()


def test_r18_flag_names_the_sergeant_and_the_knocked_out() -> None:
    # the cohort has the 2 temper a Rescue costs, so its Sergeant could have rescued (R34)
    r = run(battle(cohort("A", pools={"temper": 2}, states={"A2": "Knocked Out", "A3": "Knocked Out"})))
    (flag,) = r.end_of_phase
    assert flag.member == "A1" and "A2, A3" in flag.text and flag.rule_ref.startswith("Tasks 5.7")


# -- R19 Intimidate, R20 Inspire -----------------------------------------------------------


def test_r19_intimidate_scared_wears_off_at_the_end_of_the_phase_only_for_this_phases_scared() -> None:
    b = battle(FIGHT[0], enemy("E", 5, pools={"defense": 10}, states={"E5": "Scared"}), ranges=[["A", "E", "Personal"]],
               orders=[{"cohort": "A", "task": "Intimidate", "target": "E", "roll": 10, "picks": [1, 1]}])
    r = run(b)
    # 10 + 10 = 20: margin 10, two of the Active members
    assert [f.member for f in r.events[0].effects] == ["E1", "E2"]
    assert states(r, "E") == {"E1": "Active", "E2": "Active", "E3": "Active", "E4": "Active", "E5": "Scared"}


def test_r19_intimidate_stops_when_no_active_member_is_left() -> None:
    b = battle(cohort("A", pools={"resolve": 30, "temper": 1}), enemy("E", 3, pools={"defense": 0}),
               ranges=[["A", "E", "Personal"]], orders=[{"cohort": "A", "task": "Intimidate", "target": "E", "roll": 10, "picks": [1, 1]}])
    r = run(b)
    assert sorted(f.member for f in r.events[0].effects) == ["E1", "E2", "E3"]


def test_r20_inspire_miss_gives_nothing() -> None:
    # resolve 10 + 1 = 11 against 30
    b = battle(FIGHT[0], enemy("E", 5, pools={"defense": 30}), ranges=[["A", "E", "Personal"]],
               orders=[{"cohort": "A", "task": "Inspire", "target": "E", "benefit": "Reroll", "roll": 1}])
    r = run(b)
    assert r.events[0].outcome == "miss" and r.events[0].effects == ()
    assert r.battle.state["A"].reroll_tokens == 0 and r.battle.state["A"].temper == 9 - 2


def test_r20_r25_an_unused_reroll_token_lapses_after_the_next_phase() -> None:
    r = run(fight([{"cohort": "A", "task": "Inspire", "target": "E", "benefit": "Reroll", "roll": 5}]))
    assert r.battle.state["A"].reroll_tokens == 1
    r2 = run(next_phase(r, []))
    assert r2.battle.state["A"].reroll_tokens == 0


def test_r20_plus_5_resolve_lasts_for_the_rest_of_the_phase_only() -> None:
    inspire = {"cohort": "A", "task": "Inspire", "target": "E", "benefit": "+5 Resolve", "roll": 10}
    b = battle(FIGHT[0], enemy("E", 5, pools={"defense": 20}), ranges=[["A", "E", "Personal"]],
               orders=[inspire, {"cohort": "A", "task": "Intimidate", "target": "E", "roll": 5}])
    r = run(b)
    assert r.events[1].total == 10 + 5 + 5
    r2 = run(next_phase(r, [{"cohort": "A", "task": "Intimidate", "target": "E", "roll": 5}]))
    assert r2.events[0].total == 10 + 5


# -- R21 Hero Moments ------------------------------------------------------------------


def test_tasks_5_10_hero_moment_uses_no_action() -> None:
    b = battle(cohort("A", pools={"movement": 2}), orders=[
        {"cohort": "A", "task": "Hero Moment", "member": "A1", "moment": "Custom"},
        {"cohort": "A", "task": "Move"}, {"cohort": "A", "task": "Move"}, {"cohort": "A", "task": "Move"}])
    r = run(b)
    assert [e.outcome for e in r.events] == ["done"] * 4
    assert r.battle.state["A"].units_moved == 6


def test_r21_one_hero_moment_per_character_per_battle() -> None:
    r = run(battle(cohort("A"), orders=[{"cohort": "A", "task": "Hero Moment", "member": "A1", "moment": "Push Forward"}]))
    r2 = run(next_phase(r, [{"cohort": "A", "task": "Hero Moment", "member": "A1", "moment": "Push Forward"},
                            {"cohort": "A", "task": "Hero Moment", "member": "A2", "moment": "Push Forward"}]))
    assert [e.outcome for e in r2.events] == ["refused", "done"]
    assert r2.battle.state["A"].units_moved == 10


def test_r21_save_an_ally_reaches_only_this_phase_or_the_last() -> None:
    dead = {"states": {"A3": "Dead"}, "died_in_phase": {"A3": 1}}
    order = [{"cohort": "A", "task": "Hero Moment", "member": "A1", "moment": "Save an Ally", "ally": "A3"}]
    for phase, outcome in ((1, "done"), (2, "done"), (3, "refused")):
        r = run(battle(cohort("A", **dead), orders=order, phase=phase))
        assert r.events[0].outcome == outcome, phase


def test_r21_boost_a_pool_health_is_a_shield_and_health_never_passes_its_maximum() -> None:
    b = battle(cohort("A", 4, pools={"defense": 0}), enemy("E", 5, pools={"melee": 10, "temper": 2}),
               ranges=[["A", "E", "Personal"]],
               orders=[{"cohort": "A", "task": "Hero Moment", "member": "A1", "moment": "Boost a Pool", "pool": "health"},
                       {"cohort": "E", "task": "Melee Attack", "target": "A", "roll": 1},
                       {"cohort": "E", "task": "Melee Attack", "target": "A", "roll": 1}])
    r = run(b)
    # 15 damage each: the first loses 10 to the shield
    assert r.battle.state["A"].health == 20 - 5 - 15
    assert [f.amount for f in r.events[1].effects] == [10]


def test_r21_boost_a_pool_control_gives_one_tactical_task_and_the_rest_lapses() -> None:
    b = battle(cohort("A"), orders=[
        {"cohort": "A", "task": "Hero Moment", "member": "A1", "moment": "Boost a Pool", "pool": "control"},
        {"cohort": "A", "task": "Tactical Task"}])
    r = run(b)
    assert [e.outcome for e in r.events] == ["done", "done"]
    assert r.battle.state["A"].control == 0
    assert [(f.kind, f.amount) for f in r.end_of_phase] == [("bonus ends", 9)]


def test_r21_split_the_party_is_for_support_members_only() -> None:
    b = battle(cohort("A"), cohort("B", health=5), ranges=[["A", "B", "Personal"]], orders=[
        {"cohort": "A", "task": "Hero Moment", "member": "A1", "moment": "Split the Party", "target": "B"}])
    ev = run(b).events[0]
    assert ev.outcome == "refused" and "not a Support cohort" in (ev.reason or "")


# -- R22 Support, R23 Tactical -----------------------------------------------------------


def test_r22_support_cohort_aids_the_same_cohort_more_than_once() -> None:
    b = battle(cohort("S", support=True, pools={"temper": 10}), cohort("B", health=3, states={"B2": "Knocked Out"}),
               ranges=[["S", "B", "Personal"]], orders=[
                   {"cohort": "S", "task": "Heal", "target": "B", "temper": 1},
                   {"cohort": "S", "task": "Rescue", "target": "B", "member": "B2"},
                   {"cohort": "S", "task": "Heal", "target": "B", "temper": 1}])
    r = run(b)
    assert [e.outcome for e in r.events] == ["done"] * 3
    assert r.battle.state["B"].health == 9


def test_r22_support_heal_needs_personal_range() -> None:
    b = battle(cohort("S", support=True, pools={"temper": 10}), cohort("B", health=3),
               ranges=[["S", "B", "Distanced"]], orders=[{"cohort": "S", "task": "Heal", "target": "B", "temper": 1}])
    assert "needs Personal" in (run(b).events[0].reason or "")


def test_r23_tactical_task_uses_no_action_and_logs_the_storytellers_text() -> None:
    b = battle(cohort("A", pools={"control": 3}), orders=[{"cohort": "A", "task": "Tactical Task", "text": "Flood the tunnel"}])
    ev = run(b).events[0]
    assert ev.actions_left == 3 and "Flood the tunnel" in ev.effects[0].text


# -- R25 dice, undo, JSON --------------------------------------------------------------


def test_r25_the_default_roller_is_seeded_by_battle_and_phase() -> None:
    orders = [{"cohort": "A", "task": "Melee Attack", "target": "E"}] * 3
    b = fight(orders, seed=42)
    assert resolve_phase(b) == resolve_phase(b)
    assert resolve_phase(b).events[0].rolls[0].value == RandomRoller("42:1").roll(10)
    assert isinstance(phase_roller(b), RandomRoller)
    assert all(r.source == "rolled" for e in resolve_phase(b).events for r in e.rolls)


def test_undo_restores_the_battle_exactly_and_refuses_with_nothing_to_undo() -> None:
    b = fight([{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10}])
    r = run(b)
    r2 = run(next_phase(r, [{"cohort": "A", "task": "Move"}]))
    assert undo(r2.battle) == next_phase(r, [{"cohort": "A", "task": "Move"}])
    assert undo(undo(r2.battle)) == b
    assert len(r2.battle.log) == 2 and len(undo(r2.battle).log) == 1
    with pytest.raises(BattleStateError):
        undo(b)


def test_phase_result_to_json_shape() -> None:
    r = run(fight([{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10},
                   {"cohort": "A", "task": "Ranged Attack", "target": "E", "roll": 10}]))
    data = json.loads(json.dumps(r.to_json()))
    assert set(data) == {"phase", "events", "end_of_phase", "cohorts"}
    assert [e["outcome"] for e in data["events"]] == ["hit", "refused"]
    assert data["events"][1]["reason"]
    assert data["events"][0]["rule_ref"].startswith("Tasks 5.2")
    a = next(c for c in data["cohorts"] if c["name"] == "A")
    assert {"name", "health", "temper", "control", "actions_left", "members"} <= set(a)
    assert a["actions_left"] == 3
    assert [m["state"] for m in a["members"]] == ["Active"] * 4


# -- R31-R37: places the text leaves open ---------------------------------------------------


def _r31_battle(casualty_count: str) -> Battle:
    """E (4 members, Health 5 of 20, 10 temper) takes a hit to -8, heals 9 to +1, and takes
    another hit to -12 (13 damage a hit)."""
    return battle(cohort("A", 4, pools={"melee": 10, "temper": 9}),
                  enemy("E", 4, pools={"defense": 10, "temper": 10}, health=5),
                  ranges=[["A", "E", "Personal"]], house_rules={"casualty_count": casualty_count},
                  orders=[{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10},
                          {"cohort": "E", "task": "Heal", "temper": 3},
                          {"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10, "picks": [1, 1]}])


def test_r31_health_count_steps_only_for_multiples_crossed() -> None:
    # 5 -> -8: none crossed; healed to +1; 1 -> -12: -10 crossed once, one step
    r = run(_r31_battle("health"))
    assert r.battle.state["E"].health == -12
    assert [s for s in states(r, "E").values()].count("Knocked Out") == 1
    assert r.battle.state["E"].below_zero_damage == 0


def test_r31_damage_count_adds_up_damage_below_zero_and_healing_gives_none_back() -> None:
    # 8 below zero, then 12 more after the Heal: 20 in all, two full 10s, two steps
    r = run(_r31_battle("damage"))
    assert r.battle.state["E"].below_zero_damage == 20
    assert states(r, "E") == {"E1": "Active", "E2": "Knocked Out", "E3": "Knocked Out", "E4": "Active"}
    below = [(f.amount, f.rule_ref) for e in r.events for f in e.effects if f.kind == "below zero"]
    assert below == [(8, "Tasks 5.11.2, R31"), (12, "Tasks 5.11.2, R31")]


def test_r31_damage_count_carries_over_to_the_next_phase_and_undo() -> None:
    first = run(_r31_battle("damage")).battle
    stored = Battle.from_data(json.loads(json.dumps(first.to_data())))  # the State sheet's round trip
    assert stored == first
    # 20 counted; a 13 hit from -12 is 13 more: 33, one more full 10, one more step
    order = Order(cohort="A", task=Task.MELEE, target="E", roll=10, picks=(1,))
    nxt = stored.model_copy(update={"orders": (order,)})
    nxt = Battle.from_data(nxt.to_data())
    r = run(nxt)
    assert r.battle.state["E"].below_zero_damage == 33
    assert [e.member for e in r.events[0].effects if e.kind == "casualty"] == ["E2"]  # Knocked Out dies first
    assert undo(r.battle).state["E"].below_zero_damage == 20


def test_r31_damage_count_survives_the_battle_file_round_trip() -> None:
    """``--out`` files and every workbook resolve go through the battle file: the R31
    counter must come back from it."""
    first = run(_r31_battle("damage")).battle
    assert load_battle(battle_to_file(first)) == first


def test_r31_the_counter_is_left_out_of_files_while_unused() -> None:
    r = run(_r31_battle("health"))
    assert all("below_zero_damage" not in c for c in battle_to_file(r.battle)["cohorts"])
    assert "below_zero_damage" not in r.battle.to_data()["state"]["E"]


def test_r34_no_flag_when_the_sergeant_is_down_or_there_was_no_temper_for_a_rescue() -> None:
    b = battle(cohort("A", pools={"temper": 2}, states={"A2": "Knocked Out"}),
               cohort("B", pools={"temper": 1}, states={"B2": "Knocked Out"}),
               cohort("C", pools={"temper": 9}, states={"C1": "Knocked Out"}),
               cohort("D", pools={"temper": 9}, states={"D1": "Dead", "D2": "Knocked Out"}))
    assert [(f.cohort, f.member, f.rule_ref) for f in run(b).end_of_phase] == [("A", "A1", "Tasks 5.7, R18, R34")]


def test_r34_temper_is_judged_at_the_start_of_the_phase() -> None:
    # A spends its 2 temper on Intimidate: it could have rescued instead, so it is flagged
    b = battle(cohort("A", pools={"temper": 2, "resolve": 10}, states={"A3": "Knocked Out"}), enemy("E"),
               ranges=[["A", "E", "Personal"]],
               orders=[{"cohort": "A", "task": "Intimidate", "target": "E", "roll": 1}])
    r = run(b)
    assert r.battle.state["A"].temper == 1
    assert [f.kind for f in r.end_of_phase] == ["flag"]


def test_r36_split_the_party_free_heal_spends_only_what_it_needs_too() -> None:
    b = battle(cohort("S", support=True, pools={"temper": 10}), cohort("B", health=13), cohort("C", health=14),
               ranges=[["S", "B", "Personal"], ["S", "C", "Personal"]],
               orders=[{"cohort": "S", "task": "Heal", "target": "B", "temper": 1},
                       {"cohort": "S", "task": "Hero Moment", "member": "S1", "moment": "Split the Party",
                        "target": "C", "free_task": "Heal", "temper": 5}])
    r = run(b)
    # C misses 1 of 15: ceil(1 / 3) = 1 spent of the 5 declared
    assert [e.temper_spent for e in r.events] == [1, 1]
    assert r.battle.state["S"].temper == 8 and r.battle.state["C"].health == 15
    assert "1 temper spent of 5 declared" in r.events[1].effects[0].text


def test_r36_the_declared_temper_need_not_be_there_only_what_is_spent() -> None:
    # 2 missing, 10 declared, 1 needed: a cohort with 3 temper heals
    b = battle(cohort("A", pools={"temper": 3}, health=13), orders=[{"cohort": "A", "task": "Heal", "temper": 10}])
    r = run(b)
    assert (r.events[0].outcome, r.events[0].temper_spent, r.battle.state["A"].temper) == ("done", 1, 2)


def test_r37_a_cohort_with_no_one_up_takes_no_hero_moment_or_tactical_task() -> None:
    b = battle(cohort("A", 3, pools={"control": 2}, states={"A1": "Knocked Out", "A2": "Stabilized", "A3": "Dead"}),
               orders=[{"cohort": "A", "task": "Tactical Task"},
                       {"cohort": "A", "task": "Hero Moment", "member": "A2", "moment": "Custom"}])
    r = run(b)
    assert [e.outcome for e in r.events] == ["refused", "refused"]
    assert all("no member Active or Scared" in (e.reason or "") for e in r.events)
    assert r.battle.state["A"].control == 2 and r.battle.state["A"].hero_used == ()


def test_r37_an_all_scared_cohort_is_still_in_the_fight() -> None:
    b = battle(cohort("A", 3, pools={"control": 1}, states={"A1": "Scared", "A2": "Scared", "A3": "Scared"}),
               orders=[{"cohort": "A", "task": "Tactical Task"}])
    assert run(b).events[0].outcome == "done"


def test_r37_a_gone_cohort_can_be_neither_healed_nor_rescued() -> None:
    b = battle(cohort("S", support=True, pools={"temper": 10}),
               cohort("B", health=-30, states={"B1": "Dead", "B2": "Dead", "B3": "Dead"}),
               ranges=[["S", "B", "Personal"]],
               orders=[{"cohort": "S", "task": "Heal", "target": "B", "temper": 2},
                       {"cohort": "S", "task": "Rescue", "target": "B", "member": "B2"}])
    r = run(b)
    assert [e.outcome for e in r.events] == ["refused", "refused"]
    assert all("B is gone" in (e.reason or "") for e in r.events)
    assert r.battle.state["S"].temper == 10


def test_r37_side_out_of_the_fight() -> None:
    from sheetsync.systems.bbn.rules import side_out_of_fight

    b = battle(cohort("A", states={"A1": "Knocked Out", "A2": "Stabilized", "A3": "Dead"}),
               cohort("B", states={"B1": "Dead", "B2": "Dead", "B3": "Dead"}),
               enemy("E", states={"E1": "Knocked Out", "E2": "Knocked Out", "E3": "Scared"}))
    assert side_out_of_fight(b, "players") is True
    assert side_out_of_fight(b, "enemy") is False  # a Scared member still fights
    assert side_out_of_fight(b, "nobody") is True  # no cohort, nothing to fight with
    # after a hit that knocks out the Scared E3, the enemy side is out too
    hit = battle(cohort("A", 4, pools={"melee": 10, "temper": 1}),
                 enemy("E", health=0, states={"E1": "Stabilized", "E2": "Dead"}),
                 ranges=[["A", "E", "Personal"]],
                 orders=[{"cohort": "A", "task": "Melee Attack", "target": "E", "roll": 10}])
    assert side_out_of_fight(hit, "enemy") is False
    assert side_out_of_fight(run(hit).battle, "enemy") is True


def test_r16_r32_a_member_knocked_out_and_killed_in_one_attack_cites_r32_only_if_they_were_stabilized() -> None:
    # 13 damage from -9 is -22: two steps on E1 alone (the others Dead)
    r = hit_e(-9, {"E2": "Dead", "E3": "Dead", "E4": "Dead"})
    assert [(f.to_state, f.rule_ref) for f in r.events[0].effects] == [
        (State.KNOCKED_OUT, "Tasks 5.11.2, 5.12, R16"), (State.DEAD, "Tasks 5.11.2, 5.12, R16")]
    r = hit_e(-9, {"E1": "Stabilized", "E2": "Dead", "E3": "Dead", "E4": "Dead"})
    assert [(f.from_state, f.to_state, f.rule_ref) for f in r.events[0].effects] == [
        (State.STABILIZED, State.KNOCKED_OUT, "Tasks 5.11.2, 5.12, R16, R32"),
        (State.KNOCKED_OUT, State.DEAD, "Tasks 5.11.2, 5.12, R16, R32")]
