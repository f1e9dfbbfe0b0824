"""Golden scenarios (DESIGN convention 9): every ``tests/scenarios/*.yaml`` is one battle with
its expected pools, events, standings and aftermath, worked out by hand from the rules and
RULINGS-bbn.md.  The test id is the file name, so it carries the section it exercises.

Scenario keys
-------------
``title``, ``rules`` (sections and rulings exercised), optional ``note``;
``battle``: a battle file; ``dice``: d10s (and pick dice) for anything not typed in, all of
which must be used; ``expect``: what phase 1 (the battle's orders) must give; ``next``: further
phases, each ``{orders, dice, expect}`` resolved from the previous result's battle file;
``aftermath``: ``{dice, aegis, lasting_rolls}`` to run the aftermath on the final battle.

``expect`` keys: ``error`` (substrings of the InputError; ``problems`` its count), ``pools``,
``actions``, ``not_counted``, ``breakdown``, ``events`` (one per order), ``cohorts``,
``end_of_phase``, ``aftermath``.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.bbn.files.loader import battle_to_file, load_battle
from sheetsync.systems.bbn.rules import Battle, Effect, Event, aftermath, resolve_phase, undo

SCENARIOS = Path(__file__).parent / "scenarios"
FILES = sorted(SCENARIOS.glob("*.yaml"))
TOP_KEYS = {"title", "rules", "note", "battle", "dice", "expect", "next", "aftermath"}
EVENT_KEYS = {"outcome", "damage", "reason", "total", "defense", "temper_spent", "actions_left",
              "rule_ref", "rolls", "roll_sources", "effects", "task", "cohort"}


Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(path: Path) -> dict[str, Any]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
    assert isinstance(data, dict), path
    unknown = set(data) - TOP_KEYS
    assert not unknown, f"{path.name}: unknown scenario keys {unknown}"
    return data


def _match_effect(actual: Effect, want: dict[str, Any], where: str) -> None:
    for key, value in want.items():
        if key == "text":
            assert value in actual.text, f"{where}: {value!r} not in {actual.text!r}"
        elif key in ("to_state", "from_state"):
            got = getattr(actual, key)
            assert (got.value if got else None) == value, f"{where}.{key}: {got} != {value}"
        else:
            assert getattr(actual, key) == value, f"{where}.{key}: {getattr(actual, key)!r} != {value!r}"


def _match_effects(actual: tuple[Effect, ...], want: list[dict[str, Any]], where: str) -> None:
    assert len(actual) == len(want), f"{where}: {len(actual)} effects {[(e.kind, e.member, e.to_state) for e in actual]}, expected {want}"
    for i, (a, w) in enumerate(zip(actual, want, strict=True)):
        _match_effect(a, w, f"{where}[{i}]")


def _check_event(event: Event, want: dict[str, Any], where: str) -> None:
    unknown = set(want) - EVENT_KEYS
    assert not unknown, f"{where}: unknown event keys {unknown}"
    for key, value in want.items():
        if key == "reason":
            assert event.reason is not None and value in event.reason, f"{where}: reason {event.reason!r} lacks {value!r}"
        elif key == "rule_ref":
            assert value in event.rule_ref, f"{where}: rule_ref {event.rule_ref!r} lacks {value!r}"
        elif key == "rolls":
            assert [r.value for r in event.rolls] == value, f"{where}: rolls {event.rolls}"
        elif key == "roll_sources":
            assert [r.source for r in event.rolls] == value, f"{where}: rolls {event.rolls}"
        elif key == "effects":
            _match_effects(event.effects, value, f"{where}.effects")
        elif key == "task":
            assert event.task.value == value
        else:
            assert getattr(event, key) == value, f"{where}.{key}: {getattr(event, key)!r} != {value!r}"
    if "reason" not in want:
        assert event.outcome != "refused", f"{where}: unexpectedly refused: {event.reason}"


def _check_cohorts(battle: Battle, want: dict[str, dict[str, Any]], where: str) -> None:
    for name, expected in want.items():
        st = battle.state[name]
        for key, value in expected.items():
            if key == "states":
                got = {m: s.value for m, s in st.states.items()}
                for member, state in value.items():
                    assert got[member] == state, f"{where}.{name}.states.{member}: {got[member]} != {state}"
            elif key == "hero_used":
                assert sorted(st.hero_used) == sorted(value), f"{where}.{name}.hero_used"
            else:
                assert getattr(st, key) == value, f"{where}.{name}.{key}: {getattr(st, key)!r} != {value!r}"


def _check_pools(battle: Battle, expect: dict[str, Any]) -> None:
    for name, pools in (expect.get("pools") or {}).items():
        got = battle.pools[name].pools
        for pool, value in pools.items():
            assert got[pool] == value, f"pools.{name}.{pool}: {got[pool]} != {value}"
    for name, value in (expect.get("actions") or {}).items():
        assert battle.pools[name].actions == value
    for name, traits in (expect.get("not_counted") or {}).items():
        got = sorted(n.trait for n in battle.pools[name].not_counted)
        assert got == sorted(traits), f"not_counted.{name}: {got}"
    for name, lines in (expect.get("breakdown") or {}).items():
        for pool, member, trait, amount in lines:
            found = [c for c in battle.pools[name].breakdown[pool]
                     if c.member == member and trait in c.trait and c.amount == amount]
            assert found, f"breakdown.{name}.{pool}: no line {member} {trait} {amount}: {battle.pools[name].breakdown[pool]}"


def _run_phase(battle: Battle, dice: list[int], expect: dict[str, Any], where: str) -> Battle:
    roller = ScriptedRoller(dice)
    result = resolve_phase(battle, roller)
    assert roller.used == len(dice), f"{where}: {roller.used} of {len(dice)} scripted dice used"
    assert [e.order for e in result.events] == list(range(len(battle.orders)))
    if "events" in expect:
        assert len(expect["events"]) == len(result.events), f"{where}: one expected event per order"
        for i, (event, want) in enumerate(zip(result.events, expect["events"], strict=True)):
            _check_event(event, want, f"{where}.events[{i}]")
    if "end_of_phase" in expect:
        _match_effects(result.end_of_phase, expect["end_of_phase"], f"{where}.end_of_phase")
    _check_cohorts(result.battle, expect.get("cohorts") or {}, where)
    # every golden phase also undoes exactly and survives the file round trip
    assert undo(result.battle) == battle
    assert load_battle(battle_to_file(result.battle)) == result.battle
    json.dumps(result.to_json())
    return result.battle


def _check_aftermath(battle: Battle, spec: dict[str, Any], want: list[dict[str, Any]]) -> None:
    roller = ScriptedRoller(spec.get("dice") or [])
    entries = aftermath(battle, roller, aegis=spec.get("aegis"), lasting_rolls=spec.get("lasting_rolls"))
    assert roller.used == len(spec.get("dice") or [])
    by_name = {(e.cohort, e.name): e for e in entries}
    assert len(by_name) == len(entries) == sum(len(c.members) for c in battle.cohorts)
    for w in want:
        entry = by_name[(w["cohort"], w["name"])]
        for key, value in w.items():
            if key == "lasting_effect":
                got = entry.lasting_effect
                if value is None:
                    assert got is None, f"{entry.name}: unexpected lasting effect {got}"
                    continue
                assert got is not None, f"{entry.name}: no lasting effect"
                assert (got.band, got.roll, got.source) == (value["band"], value["roll"], value["source"])
                assert value["result"] in got.result, f"{entry.name}: {got.result!r}"
            else:
                assert getattr(entry, key) == value, f"aftermath {entry.name}.{key}: {getattr(entry, key)!r} != {value!r}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario(path: Path) -> None:
    scn = _load(path)
    expect = scn.get("expect") or {}
    if "error" in expect:
        with pytest.raises(InputError) as info:
            load_battle(scn["battle"])
        text = str(info.value)
        for piece in expect["error"]:
            assert piece in text, f"{piece!r} not in:\n{text}"
        if "problems" in expect:
            assert len(info.value.problems) == expect["problems"], text
        return
    battle = load_battle(scn["battle"])
    _check_pools(battle, expect)
    if battle.orders or "events" in expect:
        battle = _run_phase(battle, scn.get("dice") or [], expect, "phase 1")
    else:
        _check_cohorts(battle, expect.get("cohorts") or {}, "loaded")
    for n, step in enumerate(scn.get("next") or [], start=2):
        data = battle_to_file(battle)
        data["orders"] = step.get("orders") or []
        battle = _run_phase(load_battle(data), step.get("dice") or [], step.get("expect") or {}, f"phase {n}")
    if "aftermath" in expect:
        _check_aftermath(battle, scn.get("aftermath") or {}, expect["aftermath"])


def test_scenarios_are_well_formed_and_named_after_a_section() -> None:
    """DESIGN convention 9: each scenario names what it exercises and what it expects."""
    assert len(FILES) >= 40
    for path in FILES:
        scn = _load(path)
        assert isinstance(scn.get("title"), str) and scn["title"].strip(), path.name
        assert isinstance(scn.get("rules"), list) and scn["rules"], path.name
        assert scn.get("expect"), path.name


@functools.lru_cache(maxsize=1)
def _rules_lists() -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(_load(p)["rules"]) for p in FILES)


def _covered() -> str:
    return " | ".join(" ".join(rules) for rules in _rules_lists())


@pytest.mark.parametrize("ruling", [f"R{n}" for n in range(1, 38)])
def test_every_ruling_has_a_golden_scenario(ruling: str) -> None:
    assert re.search(rf"\b{ruling}\b", _covered()), f"no scenario lists {ruling}"


@pytest.mark.parametrize("section", [
    "Tasks 5.1", "Tasks 5.2", "Tasks 5.3", "Tasks 5.4", "Tasks 5.5", "Tasks 5.6", "Tasks 5.7",
    "Tasks 5.8", "Tasks 5.9", "Tasks 5.10", "Tasks 5.11.1", "Tasks 5.11.2", "Tasks 5.12", "Tasks 5.13",
    "Hero Moments 1.1", "Hero Moments 1.2", "Hero Moments 1.3", "Hero Moments 1.4", "Hero Moments 1.5",
    "Support Cohort 2", "Ranges", "Modifiers", "Cohort Sheet 1.4.3", "Cohort Sheet 1.5.1", "Aftermath",
])
def test_every_task_and_section_has_a_golden_scenario(section: str) -> None:
    assert any(section in rules for rules in _rules_lists()), f"no scenario lists {section}"
