"""Golden scenarios of the hex wargame: every ``tests/scenarios_hexwar/*.yaml`` is one battle
with its expected events, standings, values and report, each worked out by hand from the
rules text and RULINGS-hexwar.md (the arithmetic is written in the file).  The test id is
the file name, which starts with the ruling it exercises (``h7_...``), then the section.

Scenario keys
-------------
``title``, ``rules`` (sections and rulings exercised), optional ``note``;
``distances`` (``[a, b, d]`` hex distances) and ``neighbours`` (``{hex: [ids]}``), H2;
``battle``: a battle file; ``dice``: the dice for anything not typed in, all of which must
be used; ``expect``: what the battle's typed turn must give; ``next``: further turns, each
``{turn, dice, expect}`` typed into the previous result's battle file.

``expect`` keys: ``error`` (substrings of the InputError; ``problems`` its count),
``values`` (effective values before the turn), ``preview`` (H11, before rolling),
``battle_over`` (substring of the refusal to resolve), ``initiative``,
``initiative_rolls``, ``events`` (one per typed move, then one per typed attack),
``units``, ``report``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import BattleStateError, InputError
from sheetsync.systems.hexwar.files.loader import battle_to_file, load_battle
from sheetsync.systems.hexwar.rules import (
    AttackEvent,
    Battle,
    MoveEvent,
    aftermath,
    effective_values,
    hex_distance,
    neighbours,
    parse_hex,
    preview_attacks,
    resolve_turn,
    undo,
)

SCENARIOS = Path(__file__).parent / "scenarios_hexwar"
FILES = sorted(SCENARIOS.glob("*.yaml"))
TOP_KEYS = {"title", "rules", "note", "distances", "neighbours", "battle", "dice", "expect", "next"}
EXPECT_KEYS = {"error", "problems", "values", "preview", "battle_over", "initiative", "initiative_rolls", "events",
               "units", "report"}


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    unknown = set(data) - TOP_KEYS
    assert not unknown, f"{path.name}: unknown scenario keys {unknown}"
    return data


def _check_event(event: MoveEvent | AttackEvent, want: dict[str, Any], where: str) -> None:
    for key, value in want.items():
        if key == "reason":
            assert event.reason is not None and value in event.reason, f"{where}: reason {event.reason!r} lacks {value!r}"
        elif key == "rule_ref":
            assert value in event.rule_ref, f"{where}: rule_ref {event.rule_ref!r} lacks {value!r}"
        elif key == "from":
            assert isinstance(event, MoveEvent) and event.from_ == value, f"{where}.from: {event}"
        elif key == "contributions":
            assert isinstance(event, AttackEvent)
            got = [[c.unit, c.distance, c.value] for c in event.contributions]
            assert got == value, f"{where}.contributions: {got} != {value}"
        elif key in ("path", "attackers"):
            assert list(getattr(event, key)) == value, f"{where}.{key}: {getattr(event, key)} != {value}"
        else:
            assert getattr(event, key) == value, f"{where}.{key}: {getattr(event, key)!r} != {value!r}"
    if "reason" not in want:
        assert event.outcome != "refused", f"{where}: unexpectedly refused: {event.reason}"


def _check_values(battle: Battle, want: dict[str, dict[str, Any]], where: str) -> None:
    got = {v.name: v for v in effective_values(battle)}
    for name, fields in want.items():
        for key, value in fields.items():
            actual = getattr(got[name], key)
            actual = actual.value if hasattr(actual, "value") else actual
            assert actual == value, f"{where}.values.{name}.{key}: {actual!r} != {value!r}"


def _check_report(battle: Battle, want: dict[str, Any], where: str) -> None:
    report = aftermath(battle)
    for key in ("over", "survivor", "turns"):
        if key in want:
            assert getattr(report, key) == want[key], f"{where}.report.{key}: {getattr(report, key)!r}"
    units = {u.name: u for u in report.units}
    for name, fields in (want.get("units") or {}).items():
        for key, value in fields.items():
            actual = getattr(units[name], key)
            actual = list(actual) if isinstance(actual, tuple) else actual
            assert actual == value, f"{where}.report.units.{name}.{key}: {actual!r} != {value!r}"
    sides = {s.side: s for s in report.sides}
    for side, fields in (want.get("sides") or {}).items():
        for key, value in fields.items():
            assert getattr(sides[side], key) == value, f"{where}.report.sides.{side}.{key}"


def _turn(battle: Battle, dice: list[int], expect: dict[str, Any], where: str) -> Battle:
    unknown = set(expect) - EXPECT_KEYS
    assert not unknown, f"{where}: unknown expect keys {unknown}"
    if "values" in expect:
        _check_values(battle, expect["values"], where)
    if "preview" in expect:
        shown = preview_attacks(battle)
        assert len(shown) == len(expect["preview"]), f"{where}.preview: {shown}"
        for i, (ev, want) in enumerate(zip(shown, expect["preview"], strict=True)):
            for key, value in want.items():
                assert getattr(ev, key) == value, f"{where}.preview[{i}].{key}: {getattr(ev, key)!r} != {value!r}"
    if "battle_over" in expect:
        with pytest.raises(BattleStateError, match=re.escape(expect["battle_over"])):
            resolve_turn(battle, ScriptedRoller(dice))
        return battle
    roller = ScriptedRoller(dice)
    result = resolve_turn(battle, roller)
    assert roller.used == len(dice), f"{where}: {roller.used} of {len(dice)} dice used"
    if "initiative" in expect:
        assert result.initiative == expect["initiative"], f"{where}.initiative: {result.initiative}"
    if "initiative_rolls" in expect:
        got = [[r.side, r.roll, r.margin, r.source] for r in result.initiative_rolls]
        assert got == expect["initiative_rolls"], f"{where}.initiative_rolls: {got}"
    if "events" in expect:
        assert len(result.events) == len(expect["events"]), f"{where}: events {result.events}"
        for i, (ev, want) in enumerate(zip(result.events, expect["events"], strict=True)):
            _check_event(ev, want, f"{where}.events[{i}]")
    nxt = result.battle
    for name, fields in (expect.get("units") or {}).items():
        unit = nxt.unit(name)
        for key, value in fields.items():
            actual = getattr(unit, key)
            actual = list(actual) if isinstance(actual, tuple) else actual
            assert actual == value, f"{where}.units.{name}.{key}: {actual!r} != {value!r}"
    if "report" in expect:
        _check_report(nxt, expect["report"], where)
    assert undo(nxt) == battle, f"{where}: undo does not give back the battle before the turn"
    assert load_battle(battle_to_file(nxt)) == nxt, f"{where}: the next battle file does not round-trip"
    return nxt


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_hexwar_scenario(path: Path) -> None:
    data = _load(path)
    for a, b, d in data.get("distances") or []:
        assert hex_distance(parse_hex(a), parse_hex(b)) == d, f"distance {a}-{b}"
        assert hex_distance(parse_hex(b), parse_hex(a)) == d, f"distance {b}-{a}"
    for h, ids in (data.get("neighbours") or {}).items():
        assert sorted(n.id for n in neighbours(parse_hex(h))) == sorted(ids), f"neighbours of {h}"
    expect = data.get("expect") or {}
    if "error" in expect:
        with pytest.raises(InputError) as exc:
            load_battle(data["battle"], path.name)
        for text in expect["error"]:
            assert text in str(exc.value), f"{text!r} not in {exc.value}"
        if "problems" in expect:
            assert len(exc.value.problems) == expect["problems"], exc.value.problems
        return
    if "battle" not in data:
        return
    battle = _turn(load_battle(data["battle"], path.name), data.get("dice") or [], expect, "expect")
    for i, step in enumerate(data.get("next") or []):
        assert set(step) <= {"turn", "dice", "expect"}, f"next[{i}]: unknown keys"
        file = battle_to_file(battle)
        file["turn"] = {**(step.get("turn") or {}), "number": battle.turn}
        battle = _turn(load_battle(file, path.name), step.get("dice") or [], step.get("expect") or {}, f"next[{i}]")


def test_hexwar_every_ruling_h1_to_h12_has_a_golden_scenario() -> None:
    """RULINGS-hexwar.md: each ruling has a scenario named after it, listing it in ``rules``."""
    for n in range(1, 13):
        named = [p for p in FILES if p.stem.startswith(f"h{n}_")]
        assert named, f"no scenario named h{n}_..."
        assert any(f"H{n}" in _load(p).get("rules", []) for p in named), f"h{n}_ scenarios don't list H{n}"


def test_hexwar_every_worked_example_of_the_text_has_a_scenario() -> None:
    """6.2, 6.2.1, 6.2.2, 6.3.1, 6.3.2, 6.3.3: each worked example is a scenario."""
    listed = {r for p in FILES for r in _load(p).get("rules", [])}
    assert {"6.2", "6.2.1", "6.2.2", "6.3.1", "6.3.2", "6.3.3"} <= listed
