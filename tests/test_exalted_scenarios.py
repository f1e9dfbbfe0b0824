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
- ``formation``: ``unit``, ``where``; expect ``error`` (parts of the message) or ``ok``, and
  ``after_drill_change`` (the formation it is left in).
- ``formation_effects``: ``formation``; expect the :class:`FormationEffects` fields.
- ``move``: ``unit``, ``formation``, ``terrain``, ``wound_penalty``, ``wheeled``, ``dash``;
  expect ``yards``.
- ``cover``: ``percents``; expect ``dv``.
- ``timing``: ``action``, ``weapon_speed``; expect ``speed``, ``dv_penalty``, ``fixed_dv``.
- ``join_war``: ``units`` (``unit``, ``magnitude``, ``dice``); expect ``successes``, ``ticks``.
- ``timeline``: ``tick``, ``clocks`` ({unit: next tick}), ``steps`` (``unit``, ``tick``,
  ``action``, ``suffer``, ``error``); expect ``next_ticks``, ``dv_penalty``, ``acting``.
- ``batches``: ``orders`` ([tick, id]), ``same_tick``; expect ``batches`` (ids).
- ``rout``: ``triggers``, ``morale``, ``magnitude``, ``drill``, ``formation``, ``dice`` and
  the rest of :func:`rout_check`'s options; expect event fields, ``pool``, ``difficulty``.
- ``exhaustion``: ``fatigue``, ``morale``, conditions, ``charisma``, ``war``, ``endurance``,
  ``dice``; expect ``difficulty``, ``endurance``.
- ``mob_rule``: :func:`mob_rule_check`'s options and ``dice``, or ``leaderless``; expect fields.
- ``casualties``: ``members``, ``largest_loss``, ``total_loss``, ``dice``; expect ``fates``
  ([name, fate, levels]).
- ``healing``: ``current``, ``starting``; expect ``days``, ``per_dot``.
- ``second_wind``: ``endurance``, ``drill``, ``magnitude``, ``starting``; expect ``endurance``.
- ``change_formation``: ``commander``, ``relays``, ``current``, ``wanted``, ``magnitude``,
  ``drill``, ``attacked_since``, ``engaged``, ``under_fire``, ``dice``; expect ``difficulty``,
  ``pool``, ``formation``, ``rout_trigger`` or ``error``.
- ``disengage``: ``commander``, ``drill``, ``magnitude``, ``enemy_drill``, ``enveloped``,
  ``enveloping``, ``dice``; expect event fields.
- ``small``: ``what`` = ``turn`` (``commander``, ``magnitude``, ``drill``, ``dice``), ``signal``
  (``targets``, ``relays``), ``aim`` (``long_ticks``), ``duel`` (``willing``).
- ``split``, ``merge``, ``rally``: the options of :func:`split_unit`, :func:`merge_units`,
  :func:`rally` (characters as mappings); expect event fields or ``error``.
- ``dv``: ``character``, ``dv_round``; expect ``parry``, ``dodge``.
- ``health``: ``character``, ``marked``; expect the :class:`Health` fields.
- ``magic``: ``unit``; expect ``essence`` (Essence against magic, X5).
- ``volley``: ``fortified``, ``ammunition`` (arrows, default the start), ``volleys`` shot;
  expect ``starting``, ``left`` or ``error``.
- ``alone``: ``character``; expect ``join_war``, ``pool``, ``unit_pool``, ``bonus``, ``magnitude``.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from sheetsync.core.dice import ScriptedRoller
from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.rules import (
    Action,
    AttackKind,
    Character,
    Formation,
    HouseRules,
    RallyKind,
    RoutTrigger,
    Terrain,
    UnitSpec,
    Weather,
    act,
    acting_on,
    aim_bonus,
    alone,
    apply_levels,
    attack_odds,
    attack_pool,
    best_cover,
    bonus_successes,
    called_shot_penalty,
    casualties,
    change_formation,
    check_formation,
    command_pool,
    dash_yards,
    defence_penalty,
    derive_traits,
    disengage,
    dodge_dv,
    duel_needs_called_shot,
    effects,
    essence_against_magic,
    exhaustion_check,
    exhaustion_difficulty,
    formation_after_drill_change,
    healing_days,
    health,
    join_war,
    judge,
    leaderless,
    magnitude_difference,
    magnitude_for_headcount,
    merge_units,
    mob_rule_check,
    move_yards,
    parry_dv,
    plan_attack,
    rally,
    resolve_attack,
    roll_pool,
    rout_check,
    same_tick_batches,
    second_wind,
    signal_units,
    spend_volley,
    split_unit,
    spread_under_fire,
    starting_ammunition,
    suffer_attack,
    timing,
    turn,
)
from sheetsync.systems.exalted.rules.timeline import Clock, Timeline

SCENARIOS = Path(__file__).parent / "scenarios_exalted"
FILES = sorted(SCENARIOS.glob("*.yaml"))
TOP_KEYS = {"title", "rules", "note", "house_rules", "cases"}

COVERED = [f"E{i}" for i in range(1, 12)] + [f"X{i}" for i in range(1, 42)]
"""Every ruling, E1-E11 and X1-X41, has a golden scenario."""


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    assert not set(data) - TOP_KEYS, f"{path.name}: unknown keys {set(data) - TOP_KEYS}"
    return data


def _unit(data: dict[str, Any]) -> UnitSpec:
    return UnitSpec.model_validate(data)


def _frac(value: Any) -> Fraction:
    return Fraction(str(value))


def _check_roll(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """A pool rolled (or typed) and judged against a difficulty, or the error it raises."""
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


def _check_magnitude(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """The magnitude of a headcount."""
    assert magnitude_for_headcount(case["headcount"]) == want["magnitude"], where


def _check_traits(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """A unit's derived traits, and the breakdown of each that is asked for."""
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


def _check_pool(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """A commander's attack pool with the close weapon, or the ranged one for a ranged attack."""
    c = Character.model_validate(case["commander"])
    weapon = c.ranged_weapon if case.get("kind") == "Ranged" and c.ranged_weapon else c.close_weapon
    assert attack_pool(c, weapon, solo=case.get("solo", False)).value == want["pool"], where


def _check_bonus(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """The bonus successes of a rating, War and might."""
    got = bonus_successes(case["rating"], case["war"], case.get("might", 0), doubled=case.get("doubled", False))
    assert got.value == want["bonus"], f"{where}: {got}"


def _check_difference(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """The magnitude difference of an attack between two formations."""
    got = magnitude_difference(case["attacker"], case["defender"], AttackKind(case.get("kind", "Close")),
                               Formation(case.get("attacker_formation", "Relaxed")),
                               Formation(case.get("defender_formation", "Relaxed")))
    assert got.value == want["value"], f"{where}: {got}"


def _check_called_shot(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """The penalty of a called shot."""
    got = called_shot_penalty(case["drill"], case["magnitude"], unordered=case.get("unordered", False),
                              sorcerer=case.get("sorcerer", False))
    assert got.value == want["penalty"], f"{where}: {got}"


def _check_loss(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """Health levels lost, applied to the marked levels."""
    loss = apply_levels(case["marked"], case["levels"], case["health_levels"], case["magnitude"])
    for key, value in want.items():
        assert getattr(loss, key) == value, f"{where}.{key}: {getattr(loss, key)!r} != {value!r}"


def _check_attack(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """An attack planned, its odds, and its resolution with scripted dice."""
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


_BASIC = {"roll": _check_roll, "magnitude": _check_magnitude, "traits": _check_traits, "pool": _check_pool,
          "bonus": _check_bonus, "difference": _check_difference, "called_shot": _check_called_shot,
          "loss": _check_loss, "attack": _check_attack}


def _case(case: dict[str, Any], rules: HouseRules, where: str) -> None:
    """One case of a scenario file, checked by its ``check`` kind (the basic ones, then the
    rest in ``_MORE``); an unknown kind fails."""
    check, want = case["check"], case["expect"]
    run = _BASIC.get(check) or _MORE.get(check)
    if run is None:
        raise AssertionError(f"{where}: unknown check {check!r}")
    run(case, want, rules, where)


def _fields(obj: Any, want: dict[str, Any], where: str) -> None:
    for key, value in want.items():
        got = getattr(obj, key)
        got = got.value if hasattr(got, "value") and not isinstance(got, (bool, int, str)) else got
        assert got == value, f"{where}.{key}: {got!r} != {value!r}"


def _errors(want: dict[str, Any], exc: InputError, where: str) -> None:
    for part in [want["error"]] if isinstance(want["error"], str) else want["error"]:
        assert part in str(exc), f"{where}: {exc} lacks {part!r}"


def _formation(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    unit = _unit(case["unit"])
    t = derive_traits(unit, rules)
    refused = False
    try:
        check_formation(unit, t.drill.value, communication_failure=t.communication_failure, where=case["where"])
    except InputError as exc:
        refused = True
        assert "error" in want, f"{where}: unexpected {exc}"
        _errors(want, exc, where)
    else:
        assert "error" not in want, f"{where}: not refused"
    if "ok" in want:
        assert want["ok"] is not refused, f"{where}: ok is {not refused}"
    if "after_drill_change" in want:
        got = formation_after_drill_change(unit.formation, t.drill.value,
                                           communication_failure=t.communication_failure, rules=rules)
        assert got.value == want["after_drill_change"], f"{where}: left {got}"


def _formation_effects(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    _fields(effects(Formation(case["formation"])), want, where)


def _move(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    unit = _unit(case["unit"])
    form = Formation(case["formation"]) if "formation" in case else None
    terrain = Terrain(case.get("terrain", "Open"))
    if case.get("dash"):
        got = dash_yards(unit, formation=form, terrain=terrain, rules=rules)
    else:
        got = move_yards(unit, formation=form, terrain=terrain, wound_penalty=case.get("wound_penalty", 0),
                         wheeled=case.get("wheeled", False), rules=rules)
    assert got.value == want["yards"], f"{where}: {got}"


def _cover(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    assert best_cover(case["percents"]) == want["dv"], where


def _timing(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    _fields(timing(Action(case["action"]), weapon_speed=case.get("weapon_speed", 5), rules=rules), want, where)


def _join_war(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    entries = [(_unit(u["unit"]), u["magnitude"]) for u in case["units"]]
    joined = join_war(entries, ScriptedRoller(case.get("rolled", [])), [u.get("dice") for u in case["units"]])
    if "successes" in want:
        assert [r.roll.successes for r in joined.rolls] == want["successes"], where
    assert [r.tick for r in joined.rolls] == want["ticks"], where


def _timeline(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    tl = Timeline(case.get("tick", 0), tuple(Clock(u, t) for u, t in case["clocks"].items()))
    for i, step in enumerate(case["steps"]):
        if step.get("suffer"):
            tl = suffer_attack(tl, step["unit"])
            continue
        try:
            tl, _ = act(tl, step["unit"], step["tick"], Action(step["action"]), rules=rules,
                        weapon_speed=step.get("weapon_speed", 5), where=f"Orders!C{i + 2}")
        except InputError as exc:
            assert "error" in step, f"{where}.steps[{i}]: unexpected {exc}"
            assert step["error"] in str(exc), f"{where}.steps[{i}]: {exc}"
        else:
            assert "error" not in step, f"{where}.steps[{i}]: not refused"
    if "next_ticks" in want:
        assert {c.unit: c.next_tick for c in tl.clocks} == want["next_ticks"], where
    for unit, value in (want.get("dv_penalty") or {}).items():
        assert defence_penalty(tl, unit, rules).value == value, f"{where}: {unit} DV penalty"
    for tick, units in (want.get("acting") or {}).items():
        assert list(acting_on(tl, int(tick))) == units, f"{where}: acting on {tick}"


def _batches(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    got = same_tick_batches([tuple(o) for o in case["orders"]], lambda o: int(o[0]), rules)
    assert [[o[1] for o in b] for b in got] == want["batches"], where


_ROUT_KEYS = ("morale", "magnitude", "drill", "perfect_morale", "circle", "marked", "relays", "heroes", "sorcerers",
              "endurance")


def _rout(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    opts = {k: case[k] for k in _ROUT_KEYS if k in case}
    ev = rout_check(case.get("unit", "Unit"), [RoutTrigger(t) for t in case.get("triggers", [])],
                    formation=Formation(case.get("formation", "Relaxed")), roller=ScriptedRoller(case.get("rolled", [])),
                    typed=case.get("dice"), rules=rules, **opts)
    _fields(ev, want, where)


def _exhaustion(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    diff = exhaustion_difficulty(case.get("fatigue", 0), morale=case.get("morale", 1),
                                 perfect_morale=case.get("perfect_morale", False), engaged=case.get("engaged", False),
                                 charged_last=case.get("charged_last", False),
                                 weather=[Weather(w) for w in case.get("weather", [])])
    assert diff.value == want["difficulty"], f"{where}: {diff}"
    if "endurance" in want:
        pool = command_pool(Character(name="C", charisma=case["charisma"], abilities={"War": case["war"]}))
        ev = exhaustion_check("Unit", pool, diff, case["endurance"], ScriptedRoller([]), typed=case["dice"])
        assert ev.endurance == want["endurance"], f"{where}: {ev}"


def _mob_rule(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    if case.get("leaderless"):
        _fields(leaderless("Unit", member_health_levels=case.get("member_health_levels", 3), rules=rules), want,
                where)
        return
    ev = mob_rule_check("Unit", morale=case["morale"], magnitude=case["magnitude"], drill=case["drill"],
                        earlier_checks=case["earlier_checks"], roller=ScriptedRoller([]),
                        perfect_morale=case.get("perfect_morale", False), typed=case.get("dice"), rules=rules)
    _fields(ev, want, where)


def _casualties(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    members = [Character.model_validate(m) for m in case["members"]]
    out = casualties("Unit", members, largest_loss=case["largest_loss"], total_loss=case["total_loss"],
                     roller=ScriptedRoller([]), typed=case.get("dice"))
    assert [[c.character, c.fate.value, c.levels] for c in out] == want["fates"], where
    if "infection" in want:
        assert [c.character for c in out if c.infection_check] == want["infection"], where


def _healing(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    days = healing_days(case["current"], case["starting"])
    assert days.value == want["days"], where
    if "per_dot" in want:
        assert [e.amount for e in days.breakdown] == want["per_dot"], where


def _second_wind(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    got = second_wind(case["endurance"], case["drill"], case["magnitude"], case["starting"])
    assert got.value == want["endurance"], f"{where}: {got}"


def _char(data: dict[str, Any]) -> Character:
    return Character.model_validate(data)


def _refused(call: Any, want: dict[str, Any], where: str) -> Any:
    try:
        out = call()
    except InputError as exc:
        assert "error" in want, f"{where}: unexpected {exc}"
        _errors(want, exc, where)
        return None
    assert "error" not in want, f"{where}: not refused"
    return out


def _change_formation(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    fn = spread_under_fire if case.get("under_fire") else change_formation
    args: dict[str, Any] = {"commander": _char(case["commander"]), "relays": [_char(r) for r in case.get("relays", [])],
                            "magnitude": case["magnitude"], "drill": case["drill"], "engaged": case.get("engaged", False),
                            "roller": ScriptedRoller([]), "typed": case.get("dice"), "where": case.get("where", "")}
    if fn is change_formation:
        args["attacked_since"] = case.get("attacked_since", False)
        ev = _refused(lambda: change_formation("Unit", Formation(case["current"]), Formation(case["wanted"]), **args),
                      want, where)
    else:
        ev = _refused(lambda: spread_under_fire("Unit", Formation(case["current"]), **args), want, where)
    if ev is None:
        return
    for key, value in want.items():
        got = {"difficulty": ev.roll.difficulty.value, "pool": ev.roll.pool.value, "success": ev.roll.success,
               "formation": ev.formation, "rout_trigger": ev.rout_trigger}[key]
        assert got == value, f"{where}.{key}: {got!r} != {value!r}"


def _disengage(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    ev = disengage("Unit", _char(case["commander"]), drill=case["drill"], magnitude=case["magnitude"],
                   enemy_drill=case["enemy_drill"], enveloped=case.get("enveloped", False),
                   enveloping=case.get("enveloping", False), roller=ScriptedRoller([]), typed=case.get("dice"))
    _fields(ev, want, where)


def _split(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    hero = _char(case["hero"]) if case.get("hero") else None
    ev = _refused(lambda: split_unit(
        "Parent", "Breakaway", parent_commander=_char(case["commander"]), hero=hero,
        parent_headcount=case["parent_headcount"], split_headcount=case["split_headcount"],
        parent_magnitude=case["parent_magnitude"], parent_drill=case["parent_drill"], new_drill=case["new_drill"],
        parent_formation=Formation(case.get("parent_formation", "Relaxed")), followers=case.get("followers", []),
        new_relays=case.get("new_relays", 0), engaged=case.get("engaged", False), roller=ScriptedRoller([]),
        typed=case.get("dice", [None, None]), where=case.get("where", "")), want, where)
    if ev is not None:
        _fields(ev, {k: tuple(v) if isinstance(v, list) else v for k, v in want.items()}, where)


def _merge(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    a, b = (_char(c) for c in case["commanders"])
    ev = merge_units("Absorbing", "Absorbed", commanders=(a, b), headcounts=tuple(case["headcounts"]),
                     magnitudes=tuple(case["magnitudes"]), drills=tuple(case["drills"]),
                     special_characters=case.get("special_characters", []), leader=case.get("leader"),
                     solo_joining=case.get("solo_joining", False), roller=ScriptedRoller([]),
                     typed=case.get("dice", [None, None]))
    _fields(ev, {k: tuple(v) if isinstance(v, list) else v for k, v in want.items()}, where)


def _rally(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    ev = _refused(lambda: rally(
        "Unit", RallyKind(case["kind"]), _char(case["speaker"]), magnitude=case["magnitude"], drill=case["drill"],
        relays=case.get("relays", 0), special_characters=case.get("special_characters", 0),
        endurance=case.get("endurance", 3), starting_endurance=case.get("starting_endurance", 3),
        formation=Formation(case.get("formation", "Relaxed")), pool_left=case.get("pool_left", 0),
        vetoed=case.get("vetoed", False), roller=ScriptedRoller([]), typed=case.get("dice"),
        where=case.get("where", ""), rules=rules), want, where)
    if ev is None:
        return
    for key, value in want.items():
        got = ev.roll.pool.value if key == "pool" else ev.roll.difficulty.value if key == "difficulty" \
            else getattr(ev, key)
        assert got == value, f"{where}.{key}: {got!r} != {value!r}"


def _small(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """``turn`` (command roll), ``signal`` (targets, relays), ``aim`` (long ticks), ``duel`` (willing)."""
    what = case["what"]
    if what == "turn":
        ev = turn(_char(case["commander"]), [_char(r) for r in case.get("relays", [])], magnitude=case["magnitude"],
                  drill=case["drill"], roller=ScriptedRoller([]), typed=case.get("dice"))
        got: Any = {"difficulty": ev.difficulty.value, "pool": ev.pool.value, "success": ev.success}
    elif what == "signal":
        out = _refused(lambda: signal_units("Unit", case["targets"], case["relays"], where=case.get("where", "")),
                       want, where)
        got = {} if out is None else {"reached": list(out)}
    elif what == "aim":
        got = {"dice": aim_bonus(case["long_ticks"])}
    else:
        got = {"called_shot": duel_needs_called_shot(case["willing"])}
    for key, value in want.items():
        if key != "error":
            assert got[key] == value, f"{where}.{key}: {got[key]!r} != {value!r}"


def _dv(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    """E8: Parry and Dodge DV of one character."""
    c = _char(case["character"])
    r = rules.model_copy(update={"dv_round": case["dv_round"]}) if "dv_round" in case else rules
    got = {"parry": parry_dv(c, r), "dodge": dodge_dv(c, r)}
    for key, value in want.items():
        assert got[key] == value, f"{where}.{key}: {got[key]!r} != {value!r}"


def _health(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    _fields(health(_char(case["character"]), case["marked"]), want, where)


def _magic(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    got = essence_against_magic(_unit(case["unit"]))
    assert got.value == want["essence"], f"{where}: {got}"


def _volley(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    start = starting_ammunition(fortified=case.get("fortified", False)).value
    if "starting" in want:
        assert start == want["starting"], f"{where}: starting {start}"
    left = case.get("ammunition", start)
    try:
        for _ in range(case.get("volleys", 0)):
            left = spend_volley("Archers", left, where="orders[0]")
    except InputError as exc:
        assert "error" in want, f"{where}: unexpected {exc}"
        _errors(want, exc, where)
        return
    assert "error" not in want, f"{where}: not refused"
    if "left" in want:
        assert left == want["left"], f"{where}: left {left}"


def _alone(case: dict[str, Any], want: dict[str, Any], rules: HouseRules, where: str) -> None:
    from sheetsync.systems.exalted.rules.timeline import join_war_pool

    c = _char(case["character"])
    unit = alone(c)
    target = UnitSpec(name="Foe", commander=Character(name="Foe"))
    got = {"join_war": join_war_pool(unit, 0).value, "pool": attack_pool(c, c.close_weapon, solo=True).value,
           "unit_pool": attack_pool(c, c.close_weapon).value,
           "bonus": plan_attack(unit, target, AttackKind.CLOSE, rules=rules).bonus.value,
           "magnitude": derive_traits(unit, rules).magnitude.value}
    for key, value in want.items():
        assert got[key] == value, f"{where}.{key}: {got[key]!r} != {value!r}"


_MORE = {"small": _small, "dv": _dv, "health": _health, "magic": _magic, "volley": _volley, "alone": _alone, "change_formation": _change_formation, "disengage": _disengage, "split": _split, "merge": _merge,
         "rally": _rally,
         "formation": _formation, "formation_effects": _formation_effects, "move": _move, "cover": _cover,
         "timing": _timing, "join_war": _join_war, "timeline": _timeline, "batches": _batches, "rout": _rout,
         "exhaustion": _exhaustion, "mob_rule": _mob_rule, "casualties": _casualties, "healing": _healing,
         "second_wind": _second_wind}


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


def test_exalted_every_ruling_e1_e11_x1_x41_has_a_scenario() -> None:
    covered = {r for p in FILES for r in _load(p)["rules"] if re.fullmatch(r"[EX]\d+", r)}
    assert sorted(covered, key=lambda r: (r[0], int(r[1:]))) == COVERED
