"""Golden scenarios of Exalted 2e mass combat: every ``tests/scenarios_exalted/*.yaml`` is named
after the ruling it exercises (``x34_...``) and holds cases whose expectations were worked
out by hand (the arithmetic is in each file's ``note`` and comments).

Scenario keys: ``title``, ``rules`` (rulings exercised), ``note``, ``house_rules``,
``cases``.  Each case has a ``check`` and its inputs and ``expect``:

- ``roll``: ``dice``, ``typed``, ``difficulty``, ``automatic``, ``external``, ``damage``;
  expect ``successes``, ``net``, ``success``, ``threshold``, ``botch``, or ``error``.
- ``magnitude``: ``headcount``; expect ``magnitude``.
- ``traits``: ``unit``; expect ``{trait: value}`` (and ``breakdown``: the amounts).
- ``pool``: ``commander``, ``kind``, ``solo``; expect ``pool``.
- ``bonus``: ``rating``, ``war``, ``might``, ``doubled``; expect ``bonus``.
- ``difference``: ``attacker``, ``defender`` (Magnitudes), ``kind``, formations; expect ``value``.
- ``called_shot``: ``drill``, ``magnitude``, ``unordered``, ``sorcerer``; expect ``penalty``.
- ``loss``: ``marked``, ``levels``, ``health_levels``, ``magnitude``; expect the Loss fields.
- ``attack``: ``attacker``, ``defender`` (units), ``kind``, ``attack_dice``, ``damage_dice``,
  ``marked``, plan options; expect event fields, ``plan`` fields and ``odds``.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from sheetsync.dice import ScriptedRoller
from sheetsync.errors import InputError
from sheetsync.rules.exalted import (
    AttackKind,
    Character,
    Formation,
    HouseRules,
    UnitSpec,
    apply_levels,
    attack_odds,
    attack_pool,
    bonus_successes,
    called_shot_penalty,
    derive_traits,
    judge,
    magnitude_difference,
    magnitude_for_headcount,
    plan_attack,
    resolve_attack,
    roll_pool,
)

SCENARIOS = Path(__file__).parent / "scenarios_exalted"
FILES = sorted(SCENARIOS.glob("*.yaml"))
TOP_KEYS = {"title", "rules", "note", "house_rules", "cases"}

COVERED = ["E1", "E2", "E3", "E7", "E9", "X1", "X2", "X3", "X4", "X6", "X7", "X8", "X10", "X11", "X14", "X28",
           "X30", "X32", "X33", "X34"]
"""The rulings with a golden scenario so far (the rest of E1-E11 and X1-X41 are to come)."""


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    assert not set(data) - TOP_KEYS, f"{path.name}: unknown keys {set(data) - TOP_KEYS}"
    return data


def _unit(data: dict[str, Any]) -> UnitSpec:
    return UnitSpec.model_validate(data)


def _frac(value: Any) -> Fraction:
    return Fraction(str(value))


def _case(case: dict[str, Any], rules: HouseRules, where: str) -> None:
    check, want = case["check"], case["expect"]
    if check == "roll":
        try:
            roll = roll_pool(case["dice"], ScriptedRoller(case.get("rolled", [])), case.get("typed"),
                             where=case.get("where", "Orders!L2"), damage=case.get("damage", False),
                             double_tens=case.get("double_tens", True))
        except InputError as exc:
            assert "error" in want, f"{where}: unexpected {exc}"
            for part in [want["error"]] if isinstance(want["error"], str) else want["error"]:
                assert part in str(exc), f"{where}: {exc} lacks {part!r}"
            return
        assert "error" not in want, f"{where}: no error raised"
        out = judge(roll, case.get("difficulty", 1), automatic=case.get("automatic", 0),
                    external=case.get("external", 0))
        for key, value in want.items():
            got = getattr(out, key) if key != "source" else roll.source.value
            assert got == value, f"{where}.{key}: {got!r} != {value!r}"
    elif check == "magnitude":
        assert magnitude_for_headcount(case["headcount"]) == want["magnitude"], where
    elif check == "traits":
        t = derive_traits(_unit(case["unit"]), rules)
        for key, value in want.items():
            if key == "breakdown":
                for trait, amounts in value.items():
                    got = [e.amount for e in getattr(t, trait).breakdown]
                    assert got == amounts, f"{where}.breakdown.{trait}: {got}"
            else:
                got = getattr(t, key)
                got = got.value if hasattr(got, "value") and not isinstance(got, bool) else got
                assert got == value, f"{where}.{key}: {got!r} != {value!r}"
    elif check == "pool":
        c = Character.model_validate(case["commander"])
        weapon = c.ranged_weapon if case.get("kind") == "Ranged" and c.ranged_weapon else c.close_weapon
        assert attack_pool(c, weapon, solo=case.get("solo", False)).value == want["pool"], where
    elif check == "bonus":
        got = bonus_successes(case["rating"], case["war"], case.get("might", 0), doubled=case.get("doubled", False))
        assert got.value == want["bonus"], f"{where}: {got}"
    elif check == "difference":
        got = magnitude_difference(case["attacker"], case["defender"], AttackKind(case.get("kind", "Close")),
                                   Formation(case.get("attacker_formation", "Relaxed")),
                                   Formation(case.get("defender_formation", "Relaxed")))
        assert got.value == want["value"], f"{where}: {got}"
    elif check == "called_shot":
        got = called_shot_penalty(case["drill"], case["magnitude"], unordered=case.get("unordered", False),
                                  sorcerer=case.get("sorcerer", False))
        assert got.value == want["penalty"], f"{where}: {got}"
    elif check == "loss":
        loss = apply_levels(case["marked"], case["levels"], case["health_levels"], case["magnitude"])
        for key, value in want.items():
            assert getattr(loss, key) == value, f"{where}.{key}: {getattr(loss, key)!r} != {value!r}"
    elif check == "attack":
        opts = {k: case[k] for k in ("cover", "defender_action_dv", "onslaught", "extra_external",
                                     "attacker_endurance", "attacker_magnitude", "defender_magnitude") if k in case}
        plan = plan_attack(_unit(case["attacker"]), _unit(case["defender"]), AttackKind(case.get("kind", "Close")),
                           rules=rules, **opts)
        for key, value in (want.get("plan") or {}).items():
            got = getattr(plan, key)
            got = got.value if hasattr(got, "value") else got
            assert got == value, f"{where}.plan.{key}: {got!r} != {value!r}"
        odds = attack_odds(plan)
        for key, value in (want.get("odds") or {}).items():
            assert getattr(odds, key) == _frac(value), f"{where}.odds.{key}: {getattr(odds, key)} != {value}"
        ev = resolve_attack(plan, ScriptedRoller(case.get("rolled", [])), marked=case.get("marked", 0),
                            attack_dice=case.get("attack_dice"), damage_dice_typed=case.get("damage_dice"))
        for key, value in want.items():
            if key in ("plan", "odds"):
                continue
            got = getattr(ev.loss, key) if key in ("marked", "magnitude", "rout_check") else getattr(ev, key)
            assert got == value, f"{where}.{key}: {got!r} != {value!r}"
    else:
        raise AssertionError(f"{where}: unknown check {check!r}")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_exalted_scenario(path: Path) -> None:
    data = _load(path)
    rules = HouseRules.model_validate(data.get("house_rules") or {})
    assert data["cases"], path.name
    for i, case in enumerate(data["cases"]):
        _case(case, rules, f"{path.stem}.cases[{i}]")


def test_exalted_scenarios_are_named_after_a_ruling_they_exercise() -> None:
    for path in FILES:
        head = path.stem.split("_", 1)[0].upper()
        assert re.fullmatch(r"[EX]\d+", head), path.name
        assert head in _load(path)["rules"], f"{path.name}: rules do not list {head}"


def test_exalted_rulings_covered_by_scenarios_so_far() -> None:
    covered = {r for p in FILES for r in _load(p)["rules"] if re.fullmatch(r"[EX]\d+", r)}
    assert sorted(covered, key=lambda r: (r[0], int(r[1:]))) == COVERED
