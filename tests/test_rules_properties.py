"""Invariants of the battalion rules on random battles (DESIGN convention 9).

Random cohorts (random traits, hand-set pools now and then), random standings, random bands
(Blinded and missing included), random orders of every task with typed or rolled dice; after
every phase: Health within its maximum, no more actions than members able to give them,
exactly one valid state per member, no negative Temper or Control, one event per order,
a log that accounts for every change, exact undo, determinism and serialization round trips.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sheetsync.core.dice import RandomRoller
from sheetsync.systems.bbn.files.loader import battle_to_file, load_battle
from sheetsync.systems.bbn.rules import (
    Band,
    Battle,
    Benefit,
    Effect,
    Moment,
    PhaseResult,
    PoolName,
    State,
    Task,
    aftermath,
    resolve_phase,
    undo,
)
from sheetsync.systems.bbn.rules.phase import RANGE_NEEDED
from sheetsync.systems.bbn.rules.pools import actions_available

SETTINGS = settings(max_examples=150, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ABILITIES = ["Brawl", "Melee", "Dodge", "Firearms", "Occult", "Alertness", "Tactics", "Survival", "Knitting"]
DISCIPLINES = ["Fortitude", "Potence", "Celerity", "Protean", "Vicissitude", "Temporis", "Presence",
               "Obfuscate", "Auspex", "Melpominee", "Path of Mars", "Chimerstry"]
MERITS = ["Rugged", "Huge Size", "Iron Will", "Natural Leader", "Enchanting Voice", "Lucky"]
PATHS = ["Lure of Flames", "Path of Blood", "Weather Control", "Path of Transmutation"]
ACTION_TASKS = {Task.MOVE, Task.MELEE, Task.RANGED, Task.MYSTICAL, Task.INSPIRE, Task.INTIMIDATE,
                Task.RESCUE, Task.ANALYZE, Task.HEAL}
ABLE = {State.ACTIVE, State.SCARED}


# every trait a random member may carry: (where on the sheet, name, level)
TRAITS: list[tuple[str, str, int]] = (
    [("abilities", a, lv) for a in ABILITIES for lv in (2, 3, 5)]
    + [("disciplines", d, lv) for d in DISCIPLINES for lv in (1, 3, 5)]
    + [("merits", m, 0) for m in MERITS]
    + [("blood_magic_paths", p, lv) for p in PATHS for lv in (2, 5)]
    + [("combination_disciplines", d, 0) for d in DISCIPLINES[:4]]
    + [("ranged_attack", "", 0), ("blood_magic_in_clan", "", 0)]
)


@st.composite
def members(draw: Any, cohort: str) -> list[dict[str, Any]]:
    out = []
    for j in range(draw(st.integers(3, 5))):
        m: dict[str, Any] = {"name": f"{cohort}{j + 1}", "temper": draw(st.integers(0, 60)),
                             "willpower_spent": draw(st.integers(0, 6))}
        for where, name, level in draw(st.lists(st.sampled_from(TRAITS), max_size=4)):
            if where in ("ranged_attack", "blood_magic_in_clan"):
                m[where] = True
            elif where == "merits":
                m.setdefault("merits", []).append(name)
            elif where == "combination_disciplines":
                m.setdefault(where, []).append({"name": f"Combo {name}", "includes": [name, "Animalism"]})
            else:
                m.setdefault(where, {})[name] = level
        out.append(m)
    return out


def mostly(draw: Any, likely: list[Any], anything: list[Any]) -> Any:
    """Usually one of ``likely`` (when there is one), now and then anything at all."""
    if likely and draw(st.integers(0, 9)) < 8:
        return draw(st.sampled_from(likely))
    return draw(st.sampled_from(anything))


@st.composite
def orders(draw: Any, cohorts: list[dict[str, Any]], ranges: list[list[str]]) -> list[dict[str, Any]]:
    names = [c["name"] for c in cohorts]
    by = {c["name"]: c for c in cohorts}
    people = {c["name"]: [m["name"] for m in c["members"]] for c in cohorts}
    bands = {frozenset((a, b)): Band(band) for a, b, band in ranges}

    def in_state(cohort: str, wanted: set[str]) -> list[str]:
        return [m for m, s in by[cohort]["states"].items() if s in wanted]

    out = []
    for _ in range(draw(st.integers(0, 10))):
        c = draw(st.sampled_from(names))
        foes = [n for n in names if by[n]["side"] != by[c]["side"]]
        friends = [n for n in names if by[n]["side"] == by[c]["side"]]
        task = draw(st.sampled_from(list(Task)))
        target = None
        if task in RANGE_NEEDED and task not in (Task.RESCUE, Task.HEAL) and foes and draw(st.integers(0, 9)) < 7:
            # usually a task the band to the chosen enemy allows
            target = draw(st.sampled_from(foes))
            band = bands.get(frozenset((c, target)))
            allowed = [t for t, need in RANGE_NEEDED.items() if band in need and t not in (Task.RESCUE, Task.HEAL)]
            task = draw(st.sampled_from(allowed)) if allowed else task
        o: dict[str, Any] = {"cohort": c, "task": task.value}
        if draw(st.booleans()):
            o["roll"] = draw(st.integers(1, 10))
        if draw(st.integers(0, 3)) == 0:
            o["reroll"] = draw(st.integers(1, 10))
        o["picks"] = draw(st.lists(st.integers(1, 6), max_size=3))
        if task in (Task.MELEE, Task.RANGED, Task.MYSTICAL, Task.INTIMIDATE, Task.ANALYZE, Task.INSPIRE):
            o["target"] = target or mostly(draw, foes, names)
        if task is Task.INSPIRE:
            o["benefit"] = draw(st.sampled_from(list(Benefit))).value
        if task in (Task.INSPIRE, Task.ANALYZE) and draw(st.booleans()):
            o["ally"] = mostly(draw, friends, names)
        if task in (Task.RESCUE, Task.HEAL, Task.MOVE) and draw(st.booleans()):
            o["target"] = mostly(draw, friends, names)
        if task is Task.RESCUE:
            home = o.get("target", c)
            o["member"] = mostly(draw, in_state(home, {"Knocked Out", "Stabilized"}), people[home])
        if task is Task.HEAL and draw(st.booleans()):
            o["temper"] = draw(st.integers(1, 10))
        if task is Task.TACTICAL:
            o["text"] = "the Storyteller rules"
        if task is Task.HERO_MOMENT:
            moment = draw(st.sampled_from(list(Moment)))
            o.update(member=mostly(draw, in_state(c, {"Active", "Scared"}), people[c]), moment=moment.value)
            if moment is Moment.BOOST_A_POOL:
                o["pool"] = draw(st.sampled_from(list(PoolName))).value
            if moment is Moment.SAVE_AN_ALLY:
                o["ally"] = mostly(draw, in_state(c, {"Dead"}), people[c])
            if moment is Moment.SPLIT_THE_PARTY:
                o["target"] = other = mostly(draw, friends, names)
                if draw(st.booleans()):
                    o["ally"] = mostly(draw, in_state(other, {"Knocked Out", "Stabilized"}), people[other])
                    o["free_task"] = "Rescue"
                elif draw(st.booleans()):
                    o["temper"] = draw(st.integers(1, 10))
        out.append(o)
    return out


STATES = ["Active"] * 6 + ["Scared", "Knocked Out", "Stabilized", "Dead"]
BANDS = ["Personal"] * 3 + ["Distanced", "In-Sight", "Blinded", None]


@st.composite
def battles(draw: Any) -> tuple[Battle, list[dict[str, Any]], int]:
    """A random battle with its first phase's orders, the orders of a second phase, and a seed."""
    rules: dict[str, Any] = {}
    if draw(st.booleans()):
        rules = {"ability_bonus": draw(st.sampled_from(["pooled", "per_ability"])),
                 "scared_loses_action": draw(st.booleans()),
                 "damage_basis": draw(st.sampled_from(["able_members", "members", "attack_power"])),
                 "combo_bonus": draw(st.integers(0, 4)),
                 "torpor_after_aegis": draw(st.booleans()),
                 "heal_spends_declared": draw(st.booleans()),
                 "casualty_count": draw(st.sampled_from(["health", "damage"]))}
    phase = draw(st.integers(1, 3))
    cohorts = []
    for i in range(draw(st.integers(2, 4))):
        name = f"C{i}"
        side = ["players", "enemy"][i] if i < 2 else draw(st.sampled_from(["players", "enemy"]))
        c: dict[str, Any] = {"name": name, "side": side, "support": i != 1 and draw(st.integers(0, 5)) == 0,
                             "members": draw(members(name))}
        if draw(st.booleans()):
            c["sergeant"] = draw(st.sampled_from(c["members"]))["name"]
        if draw(st.booleans()):  # a Storyteller's cohort with hand-set pools (R1)
            c["pools"] = {"melee": draw(st.integers(0, 30)), "ranged": draw(st.integers(0, 30)),
                          "mystical": draw(st.integers(0, 30)), "resolve": draw(st.integers(0, 30)),
                          "defense": draw(st.integers(5, 25)), "movement": draw(st.integers(0, 6))}
        cohorts.append(c)
    ranges = []
    for i, a in enumerate(cohorts):
        for b in cohorts[i + 1:]:
            band = draw(st.sampled_from(BANDS))
            if band:
                ranges.append([a["name"], b["name"], band])
    fresh = load_battle({"house_rules": rules, "cohorts": cohorts})
    for c in cohorts:
        top = fresh.pools[c["name"]].pools["health"]
        names = [m["name"] for m in c["members"]]
        c["health"] = min(top, draw(st.integers(-25, 12)))
        c["temper"] = draw(st.integers(0, 30))
        c["control"] = draw(st.integers(0, 3))
        c["states"] = {m: draw(st.sampled_from(STATES)) for m in names}
        c["died_in_phase"] = {m: draw(st.integers(1, phase)) for m, s in c["states"].items() if s == "Dead"}
        c["hero_used"] = draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
        c["reroll_tokens"] = draw(st.integers(0, 1))
    data = {"house_rules": rules, "phase": phase, "cohorts": cohorts, "ranges": ranges,
            "orders": draw(orders(cohorts, ranges))}
    later = draw(orders(cohorts, ranges))  # the second phase's orders (standings have moved on by then)
    return load_battle(data), later, draw(st.integers(0, 10**6))


def resolve(battle: Battle, seed: int) -> PhaseResult:
    return resolve_phase(battle, RandomRoller(seed))


def two_phases(case: tuple[Battle, list[dict[str, Any]], int]) -> list[tuple[Battle, PhaseResult]]:
    """Resolve the first phase, then the second from its battle file; ``[(before, result)]``."""
    battle, later, seed = case
    first = resolve(battle, seed)
    data = battle_to_file(first.battle)
    data["orders"] = later
    second_battle = load_battle(data)
    return [(battle, first), (second_battle, resolve(second_battle, seed + 1))]


def check_standing(battle: Battle) -> None:
    for spec in battle.cohorts:
        st_ = battle.state[spec.name]
        assert st_.health <= battle.pools[spec.name].pools["health"], spec.name
        assert st_.temper >= 0 and st_.control >= 0, spec.name
        assert list(st_.states) == [m.name for m in spec.members], spec.name
        assert all(isinstance(s, State) for s in st_.states.values())
        assert set(st_.hero_used) <= set(st_.states) and len(set(st_.hero_used)) == len(st_.hero_used)


def follow_effects(effects: Sequence[Effect], now: dict[str, dict[str, State]], lost: set[State],
                   rose: Counter[str], health: dict[str, int], temper: dict[str, int],
                   control: dict[str, int]) -> None:
    """An event's effects applied to the running account: each change of state starts from
    the state the account holds (a rise from a lost state counted), heals and absorbed
    damage add Health, and a bonus of 10 adds Temper or Control."""
    for f in effects:
        if f.to_state is not None and f.member:
            assert now[f.cohort][f.member] is f.from_state, f
            if f.from_state in lost and f.to_state not in lost:
                rose[f.cohort] += 1
            now[f.cohort][f.member] = f.to_state
        if f.kind == "heal":
            health[f.cohort] += f.amount or 0
        if f.kind == "boost absorbs":
            health[f.cohort] += f.amount or 0
        if f.kind == "bonus" and f.amount == 10 and "temper" in f.text:
            temper[f.cohort] += 10
        if f.kind == "bonus" and f.amount == 10 and "control" in f.text:
            control[f.cohort] += 10


def follow_end_of_phase(effects: Sequence[Effect], now: dict[str, dict[str, State]], temper: dict[str, int],
                        control: dict[str, int]) -> None:
    """The end of the phase applied to the running account: its changes of state, and the
    bonuses that end taking their Temper or Control back."""
    for f in effects:
        if f.to_state is not None and f.member:
            assert now[f.cohort][f.member] is f.from_state
            now[f.cohort][f.member] = f.to_state
        if f.kind == "bonus ends" and "temper" in f.text:
            temper[f.cohort] -= f.amount or 0
        if f.kind == "bonus ends" and "control" in f.text:
            control[f.cohort] -= f.amount or 0


def check_log(before: Battle, result: PhaseResult) -> None:
    """The events account for every change of state, action, Temper, Control and Health."""
    rules = before.house_rules
    now = {name: dict(s.states) for name, s in before.state.items()}
    start_actions = {name: actions_available(s.states.values(), rules) for name, s in before.state.items()}
    used: Counter[str] = Counter()
    rose: Counter[str] = Counter()
    temper = {name: s.temper for name, s in before.state.items()}
    control = {name: s.control for name, s in before.state.items()}
    health = {name: s.health for name, s in before.state.items()}
    lost = {State.KNOCKED_OUT, State.STABILIZED, State.DEAD} | ({State.SCARED} if rules.scared_loses_action else set())
    for order, event in zip(before.orders, result.events, strict=True):
        assert (event.cohort, event.task, event.target) == (order.cohort, order.task, order.target)
        if event.outcome == "refused":
            assert event.reason and not event.effects and event.temper_spent == 0 and event.damage == 0
            continue
        assert event.reason is None
        # R37: only a cohort with someone Active or Scared acts, and never on a cohort all Dead
        assert any(s in ABLE for s in now[event.cohort].values()), event
        if event.target in now:
            assert any(s is not State.DEAD for s in now[event.target].values()), event
        if event.task is Task.HEAL and not rules.heal_spends_declared:
            # R36: a Heal spends no more than the missing Health needs
            healed = event.target or event.cohort
            missing = before.pools[healed].pools["health"] - health[healed]
            assert event.temper_spent <= max(1, -(-missing // 3)), event
        if event.task in ACTION_TASKS:
            used[event.cohort] += 1
            # R11, R13: no action without a member able to give it at that moment
            assert used[event.cohort] <= actions_available(now[event.cohort].values(), rules)
        temper[event.cohort] -= event.temper_spent
        if event.task is Task.TACTICAL:
            control[event.cohort] -= 1
        if event.target and event.outcome == "hit":
            health[event.target] -= event.damage
        follow_effects(event.effects, now, lost, rose, health, temper, control)
    follow_end_of_phase(result.end_of_phase, now, temper, control)
    after = result.battle.state
    for name in before.state:
        assert now[name] == after[name].states, name
        assert temper[name] == after[name].temper, name
        assert control[name] == after[name].control, name
        assert health[name] == after[name].health, name
        if not rose[name]:
            # with no one rising to an able state, actions used never exceed those at the start
            assert used[name] <= start_actions[name]


@SETTINGS
@given(battles())
def test_invariants_hold_after_every_phase(case: tuple[Battle, list[dict[str, Any]], int]) -> None:
    for before, result in two_phases(case):
        check_standing(before)
        check_standing(result.battle)
        assert len(result.events) == len(before.orders)
        assert [e.order for e in result.events] == list(range(len(before.orders)))
        assert result.phase == before.phase and result.battle.phase == before.phase + 1
        check_log(before, result)


@settings(SETTINGS, max_examples=100)
@given(battles())
def test_undo_round_trips_exactly(case: tuple[Battle, list[dict[str, Any]], int]) -> None:
    (b1, r1), (b2, r2) = two_phases(case)
    assert undo(r1.battle) == b1
    assert undo(r2.battle) == b2
    assert undo(undo(r2.battle)).model_dump() == b1.model_dump()


@settings(SETTINGS, max_examples=100)
@given(battles())
def test_resolving_the_same_battle_twice_gives_identical_results(case: tuple[Battle, list[dict[str, Any]], int]) -> None:
    battle, _, seed = case
    assert resolve(battle, seed) == resolve(battle, seed)
    assert resolve_phase(battle).to_json() == resolve_phase(battle).to_json()


@settings(SETTINGS, max_examples=100)
@given(battles())
def test_serialization_round_trips(case: tuple[Battle, list[dict[str, Any]], int]) -> None:
    for before, result in two_phases(case):
        assert load_battle(battle_to_file(before)) == before
        assert load_battle(json.loads(json.dumps(battle_to_file(result.battle)))) == result.battle
        data = result.to_json()
        assert json.loads(json.dumps(data)) == data
        assert len(data["events"]) == len(before.orders)


@settings(SETTINGS, max_examples=100)
@given(battles(), st.integers(0, 3))
def test_aftermath_shares_every_point_of_damage_and_never_kills(case: tuple[Battle, list[dict[str, Any]], int], burns: int) -> None:
    battle, _, seed = case
    aegis = {c.name: {m.name: burns for m in c.members} for c in battle.cohorts}
    entries = aftermath(battle, RandomRoller(seed), aegis=aegis)
    for spec in battle.cohorts:
        st_ = battle.state[spec.name]
        mine = [e for e in entries if e.cohort == spec.name]
        assert [e.name for e in mine] == [m.name for m in spec.members]
        living = [e for e in mine if not e.dead]
        assert [e.name for e in mine if e.dead] == [m for m, s in st_.states.items() if s is State.DEAD]
        taken = battle.pools[spec.name].pools["health"] - st_.health
        if living:
            assert sum(e.damage for e in living) >= taken
            assert sum(e.damage for e in living) < max(taken, 0) + len(living)
            assert sum(e.temper_returned for e in living) <= st_.temper
        for e in living:
            base_agg, base_lethal = e.damage // 3, e.damage % 3
            assert e.aggravated <= base_agg and e.lethal <= base_lethal
            assert (e.aggravated > 0) == (base_agg > 0) and (e.lethal > 0) == (base_lethal > 0)
            assert (e.lasting_effect is not None) == (e.damage >= 25)
