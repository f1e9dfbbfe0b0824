"""Issue 22: golden tests where the Exalted engine departed from the mass-combat text or
from a ruling of RULINGS-exalted.md (X2-X52), each worked out by hand in its docstring.

The battle is the packaged example (exalted/example.yaml): Cathak Talon (Cathak Reyen,
Charisma 4, War 4; 25 people, Magnitude 2, Drill 4, Close; hero Peleps Ama, relay Talon
Sergeant) against Bandit Mob (Red Harrow, Charisma 3, War 2; 120 people, Magnitude 3,
Drill 1, Relaxed; relays One-Eyed Pell, Gravel Jon, Sister Wren; named member Mara the
Thatcher).  Each test sets the state it needs and types every die it reads."""

from __future__ import annotations

from typing import Any

import yaml

from sheetsync.core.errors import InputError
from sheetsync.systems.exalted.files.loader import battle_to_file, load_battle
from sheetsync.systems.exalted.rules.battle import TickResult, current_unit, resolve, units_json
from sheetsync.systems.exalted.rules.breakdowns import aftermath_json
from sheetsync.systems.exalted.rules.state import Battle
from sheetsync.systems.exalted.system import SYSTEM


def _data(orders: list[dict[str, Any]]) -> dict[str, Any]:
    data = yaml.safe_load(SYSTEM.example_data())
    assert isinstance(data, dict)
    data["orders"] = orders
    return data


def _started(data: dict[str, Any], tick: int = 0, **states: dict[str, Any]) -> Battle:
    """The battle begun (Join War done) at ``tick``, every unit acting on it, with the
    state changes given per unit name."""
    battle = load_battle(data)
    new = []
    for st in battle.state:
        changes = {"next_tick": tick, **states.get(st.name, {})}
        new.append(st.model_copy(update=changes))
    return battle.model_copy(update={"started": True, "tick": tick, "state": tuple(new)})


def _event(result: TickResult, kind: str, unit: str | None = None) -> dict[str, Any]:
    return next(e for e in result.events if e["kind"] == kind and (unit is None or e["unit"] == unit))


def _unit(result: TickResult, name: str) -> dict[str, Any]:
    return next(u for u in units_json(result.battle) if u["name"] == name)


MOB_AT_2 = {"magnitude": 2, "dots_lost": 1, "largest_loss": 1, "relays": ("One-Eyed Pell",)}
"""Bandit Mob after a loss: Magnitude 2 (typed 3), one relay left."""


def test_x11_x3_communication_failure_is_judged_on_the_current_magnitude() -> None:
    """X11, X3 (issue 22 item 1).  The mob began at Magnitude 3 and has fallen to 2 with one
    relay.  Communication failure needs Magnitude 3+, so there is none now: effective
    Drill = typed 1 (not max(0, 1 − 2) = 0).  A Second Wind rally (X26): Red Harrow's
    Charisma 3 + max(War 2, Performance 0) = 5 dice at max(1, Magnitude 2 − Drill 1) = 1.
    Faces 7 2 2 2 2 = 1 success: the rally holds (against the departure's difficulty 2 it
    would fail).  Endurance 1 + max(1, Drill 1) = 2, capped at min(Magnitude 2, start 3) = 2."""
    order = {"tick": 0, "unit": "Bandit Mob", "action": "Rally", "option": "Second Wind", "dice": "7 2 2 2 2"}
    battle = _started(_data([order]), **{"Bandit Mob": {**MOB_AT_2, "endurance": 1}})
    result = resolve(battle)
    rally = _event(result, "Rally")
    assert rally["command"]["difficulty"]["value"] == 1
    assert (rally["command"]["pool"]["value"], rally["command"]["success"]) == (5, True)
    assert _unit(result, "Bandit Mob")["endurance"] == 2


def test_x11_x13_a_shrunken_unit_without_enough_relays_for_its_old_magnitude_may_hold_skirmish() -> None:
    """X11, X13 (item 1).  At Magnitude 2 the mob's one relay is enough (communication
    failure starts at Magnitude 3), so its effective Drill 1 can hold Skirmish (needs 1).
    Change Formation: 5 dice at max(1, 2 − 1) = 1, none of the +1/+2 (not attacked, not
    engaged); faces 8 1 1 1 1 = 1 success: Skirmish."""
    order = {"tick": 0, "unit": "Bandit Mob", "action": "Change Formation", "option": "Skirmish",
             "dice": "8 1 1 1 1"}
    result = resolve(_started(_data([order]), **{"Bandit Mob": MOB_AT_2}))
    change = _event(result, "Change Formation")
    assert change["command"]["difficulty"]["value"] == 1 and change["formation"] == "Skirmish"
    assert _unit(result, "Bandit Mob")["formation"] == "Skirmish"


def test_x2_x26_rally_for_numbers_gives_the_rows_minimum_headcount_not_the_typed_one() -> None:
    """X2, X26 (item 2).  The mob (typed 120, Magnitude 3) lost a dot (Magnitude 2, so it
    has a dot in its rally pool).  Rally for Numbers: 5 dice at max(1, 2 − Drill 1) = 1 with
    all three relays (no communication failure); 7 7 2 2 2 = 2 successes: Magnitude 3 at the
    row's minimum, 76 people, not the 120 it began with."""
    order = {"tick": 0, "unit": "Bandit Mob", "action": "Rally", "option": "Numbers", "dice": "7 7 2 2 2"}
    state = {**MOB_AT_2, "relays": ("One-Eyed Pell", "Gravel Jon", "Sister Wren")}
    result = resolve(_started(_data([order]), **{"Bandit Mob": state}))
    assert _event(result, "Rally")["command"]["success"]
    mob = _unit(result, "Bandit Mob")
    assert (mob["magnitude"], mob["headcount"]) == (3, 76)


def test_x18_dash_the_commanders_player_rolls_and_no_relays_pool_is_used() -> None:
    """X18 (item 3).  Sister Wren is made a better speaker than Red Harrow (Charisma 3 +
    War 4 = 7 against his 3 + 2 = 5), but a Dash is the commander's roll: 5 dice at
    max(1, Magnitude 3 − Drill 1) = 2 (three relays: no communication failure).  Faces
    7 7 1 1 1 = 2 successes: the mob dashes.  (Five faces for a seven-die pool would be
    refused, so the relay's pool cannot have been used.)"""
    data = _data([{"tick": 0, "unit": "Bandit Mob", "action": "Dash", "dice": "7 7 1 1 1"}])
    wren = next(c for c in data["characters"] if c["name"] == "Sister Wren")
    wren["abilities"]["War"] = 4
    result = resolve(_started(data))
    dash = _event(result, "Dash")
    pool = dash["command"]["pool"]
    assert pool["value"] == 5 and all("Red Harrow" in row["source"] for row in pool["breakdown"])
    assert (dash["command"]["difficulty"]["value"], dash["dashed"]) == (2, True)


def _dash_then(order: dict[str, Any]) -> TickResult:
    """Long tick 0: the mob dashes (5 dice at 2, faces 9 8 1 1 1 = 2 successes: a charge)
    and the talon guards; both act next on long tick 3 (Dash and Guard are Speed 3)."""
    dash = {"tick": 0, "unit": "Bandit Mob", "action": "Dash", "dice": "9 8 1 1 1"}
    first = resolve(_started(_data([dash])))
    assert _event(first, "Dash")["dashed"]
    data = _data([order])
    later = load_battle(data).orders
    return resolve(first.battle.model_copy(update={"orders": later}))


def test_x37_a_unit_that_dashed_is_charged_as_its_last_action_when_attacked() -> None:
    """X37, X18 (item 4).  The talon attacks the mob in close combat on long tick 3; the
    mob's last action was its Dash, which is a charge.  The mob's exhaustion difficulty:
    ⌊avg fatigue 0⌋ = 0, Morale 3 → −1, engaged by this attack +2, charged +1 = 2 (the
    departure left out the charge: 1)."""
    result = _dash_then({"tick": 3, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob",
                         "option": "Close"})
    attack = _event(result, "Attack")
    mob = next(x for x in attack["exhaustion"] if x["unit"] == "Bandit Mob")
    assert mob["difficulty"]["value"] == 2
    assert any(row["source"] == "charged as its last action" for row in mob["difficulty"]["breakdown"])
    talon = next(x for x in attack["exhaustion"] if x["unit"] == "Cathak Talon")
    assert not any(row["source"] == "charged as its last action" for row in talon["difficulty"]["breakdown"])


def test_x37_a_unit_that_charged_and_then_attacks_adds_the_charge() -> None:
    """X37, X18 (item 4).  The mob dashed on long tick 0 and attacks the talon on long tick
    3 (no ``charge`` typed in the option): its exhaustion difficulty is 0 − 1 (Morale 3)
    + 2 (engaged) + 1 (the charge) = 2."""
    result = _dash_then({"tick": 3, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon",
                         "option": "Close"})
    mob = next(x for x in _event(result, "Attack")["exhaustion"] if x["unit"] == "Bandit Mob")
    assert mob["difficulty"]["value"] == 2


RESERVE_CHARS = [
    {"name": "Cathak Dano", "role": "commander", "charisma": 3, "wits": 2, "abilities": {"War": 3}},
    {"name": "Nellens Ivo", "role": "hero", "charisma": 2, "abilities": {"War": 1}},
    {"name": "Mnemon Sula", "role": "hero", "charisma": 2, "abilities": {"War": 2}},
]
RESERVE = {"name": "Talon Reserve", "side": "Realm", "commander": "Cathak Dano",
           "members": [{"kind": "Extra", "count": 9}], "drill": 2,
           "special_characters": {"heroes": ["Nellens Ivo", "Mnemon Sula"]}}
"""Headcount 1 + 9 = 10: Magnitude 1 (X2), Drill 2, two heroes."""


def _with_reserve(orders: list[dict[str, Any]]) -> dict[str, Any]:
    data = _data(orders)
    data["characters"] += RESERVE_CHARS
    data["units"].append(dict(RESERVE))
    return data


def test_x24_merge_the_larger_unit_absorbs_the_smaller_whichever_gave_the_order() -> None:
    """X24 (item 5).  The reserve (Magnitude 1) gives the order to merge with the talon
    (Magnitude 2).  Rolls: Cathak Dano 3 + 3 = 6 dice at max(1, 1 − 2) = 1, faces
    7 1 1 1 1 1 = 1 success; Cathak Reyen 4 + 4 = 8 dice at max(1, 2 − 4) = 1, faces
    7 1 1 1 1 1 1 1 = 1.  Both succeed: the larger talon absorbs the reserve, which ceases to
    exist.  Headcount 25 + 10 = 35, Magnitude 2 (11-75); the talon's commander leads; the
    merged unit is the talon, with its Drill 4 (not the reserve's 2)."""
    order = {"tick": 0, "unit": "Talon Reserve", "action": "Merge Units", "target": "Cathak Talon",
             "dice": "7 1 1 1 1 1", "target_dice": "7 1 1 1 1 1 1 1"}
    result = resolve(_started(_with_reserve([order])))
    merge = _event(result, "Merge Units")
    assert merge["merged"] and merge["commands"]["unit"]["pool"]["value"] == 6
    talon, reserve = _unit(result, "Cathak Talon"), _unit(result, "Talon Reserve")
    assert (talon["merged_into"], talon["disbanded"], talon["magnitude"], talon["headcount"]) == \
        (None, False, 2, 35)
    assert (reserve["merged_into"], reserve["disbanded"]) == ("Cathak Talon", True)
    assert talon["commander"] == "Cathak Reyen"
    assert current_unit(result.battle, "Cathak Talon")[1].drill.value == 4


def test_x23_an_expelled_special_character_becomes_a_solo_unit_on_the_field() -> None:
    """X23, X1 (item 6).  The talon expels its hero Peleps Ama (0/−0, reflexive); with no
    other order it Guards (Speed 3): it acts next on long tick 3.  She fights on as a solo
    unit of the Realm: Magnitude 0, Drill 0, Endurance Stamina 3 + Resistance 0 = 3, her
    own 7-level track, acting when her old unit next does (long tick 3).  The battle file
    written and read again keeps her, and on long tick 3 she acts (Guards, untold)."""
    order = {"tick": 0, "unit": "Cathak Talon", "action": "Expel Special Character", "option": "Peleps Ama"}
    result = resolve(_started(_data([order]), **{"Bandit Mob": {"next_tick": 5}}))
    ama = _unit(result, "Peleps Ama")
    assert (ama["side"], ama["solo"], ama["magnitude"], ama["commander"]) == ("Realm", True, 0, "Peleps Ama")
    assert (ama["endurance"], ama["health_levels"], ama["next_tick"]) == (3, 7, 3)
    assert "Peleps Ama" not in _unit(result, "Cathak Talon")["special_characters"]["heroes"]
    again = load_battle(battle_to_file(result.battle))
    later = resolve(again)
    assert later.tick == 3 and _event(later, "Guard (no order)", "Peleps Ama")


VOLLEY_AT_MOB = {"tick": 0, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Ranged"}
MOB_AT_1 = {"magnitude": 1, "dots_lost": 2, "largest_loss": 1}


def test_x34_a_unit_destroyed_by_damage_leaves_no_named_member_alive() -> None:
    """X34, X40 (item 7).  The mob is at Magnitude 1 with 6 of Red Harrow's 7 levels
    marked.  The talon's volley: Dex 4 + min(Archery 3, War 4) + Accuracy 1 = 8 dice, faces
    10 10 8 7 1 1 2 3 = 6; + min(Ranged Rating 3, War 4) + Might 1 = 4, + X30 min(2 − 1, 3)
    = 1; against DV 4 (Parry (3 + 3)/2 + ⌊Close Rating 2/2⌋): threshold 7.  Raw 3 + Damage
    Rating 1 + 7 = 11 − soak 2 = 9 dice, faces 7 1 1 1 1 1 1 1 1 = 1 level: 6 + 1 = 7 fills
    the track: Magnitude 0 by damage.  Everyone is dead save Red Harrow: the named member Mara
    the Thatcher is Dead with no casualty roll, never Wounded; the relays are among the
    fallen."""
    order = {**VOLLEY_AT_MOB, "dice": "10 10 8 7 1 1 2 3", "damage_dice": "7 1 1 1 1 1 1 1 1"}
    result = resolve(_started(_data([order]), **{"Bandit Mob": {**MOB_AT_1, "marked": 6}}))
    attack = _event(result, "Attack")
    assert (attack["threshold"]["value"], attack["damage_dice"]["value"], attack["levels"]["value"]) == (7, 9, 1)
    mob = _unit(result, "Bandit Mob")
    assert (mob["magnitude"], mob["solo"], mob["commander"]) == (0, True, "Red Harrow")
    after = next(u for u in aftermath_json(result.battle)["units"] if u["name"] == "Bandit Mob")
    assert after["casualties"] == [{"character": "Mara the Thatcher", "fate": "Dead", "levels": 0, "first_roll": None,
                                    "second_roll": None, "wound_roll": None, "infection_check": False,
                                    "rule_ref": "X34"}]
    assert {"One-Eyed Pell", "Gravel Jon", "Sister Wren"} <= set(after["fallen"])


def test_x48_magnitude_0_by_rout_members_flee_and_roll_their_casualties() -> None:
    """X48, X35, X36.  The mob at Magnitude 1 suffers the talon's first volley: faces all 1s
    = 0 + 5 added = 5 against DV 4: threshold 1; raw 3 + 1 + 1 = 5 − soak 2 = 3 dice, faces
    1 1 1: no level.  The first ranged attack calls a rout check: Morale 3 − (1 − 1) = 3
    dice at 1 + 0 (Relaxed) = 1; faces 1 2 3 = 0: it loses max(1, 1 − 0) = 1 dot, to
    Magnitude 0 by rout.  Red Harrow fights on alone; the relays and Mara flee alive (not
    fallen), and Mara rolls her casualty dice against the dots lost (X40)."""
    order = {**VOLLEY_AT_MOB, "dice": "1 1 1 1 1 1 1 1", "damage_dice": "1 1 1", "rout_dice": "1 2 3"}
    result = resolve(_started(_data([order]), **{"Bandit Mob": MOB_AT_1}))
    rout = _event(result, "Attack")["rout"]
    assert (rout["pool"]["value"], rout["difficulty"]["value"], rout["magnitude_lost"]) == (3, 1, 1)
    mob = _unit(result, "Bandit Mob")
    assert (mob["magnitude"], mob["solo"]) == (0, True)
    assert mob["departed"] == ["One-Eyed Pell", "Gravel Jon", "Sister Wren"]
    after = next(u for u in aftermath_json(result.battle)["units"] if u["name"] == "Bandit Mob")
    assert after["fallen"] == []
    (mara,) = after["casualties"]
    assert mara["character"] == "Mara the Thatcher" and mara["rule_ref"] == "X40"
    assert mara["first_roll"] is not None and mara["first_roll"]["dice"] == 3 + 4


def test_x4_endurance_0_takes_2_dice_off_join_war_and_the_exhaustion_roll() -> None:
    """X4, E4, X37 (item 8).  The talon starts the battle at Endurance 0.  Join War: Wits 3 +
    War 4 − Magnitude 2 = 5, −2 at Endurance 0 = 3 dice; faces 9 7 10 = 4 successes (five
    faces would be refused).  The mob's Join War is typed 0 successes: it acts on long tick
    min(6, 4 − 0) = 4, the talon on 0.  The talon's volley on long tick 0 is rolled; after
    it, the talon's exhaustion roll is Cathak Reyen's Charisma 4 + War 4 = 8, −2 = 6 dice:
    faces 7 7 7 7 7 7 = 6 successes against ⌊fatigue 1⌋ − 1 (Morale 3) = 0, minimum 1:
    held, Endurance stays 0."""
    data = _data([{**VOLLEY_AT_MOB, "exhaustion_dice": "7 7 7 7 7 7"}])
    data["units"][0]["join_war"] = "9 7 10"
    data["units"][1]["join_war"] = 0
    battle = load_battle(data)
    battle = battle.model_copy(update={"state": tuple(
        s.model_copy(update={"endurance": 0}) if s.name == "Cathak Talon" else s for s in battle.state)})
    result = resolve(battle)
    talon_join = next(r for r in _event(result, "Join War")["rolls"] if r["unit"] == "Cathak Talon")
    assert (talon_join["pool"]["value"], talon_join["successes"], talon_join["tick"]) == (3, 4, 0)
    assert talon_join["pool"]["breakdown"][-1] == {"source": "Endurance 0", "amount": -2, "rule": "X4"}
    exhaustion = next(x for x in _event(result, "Attack")["exhaustion"] if x["unit"] == "Cathak Talon")
    assert (exhaustion["pool"]["value"], exhaustion["roll"]["dice"], exhaustion["successes"]) == (6, 6, 6)
    assert exhaustion["endurance"] == 0


# --- issue 22: dice typed in, and the order syntax -----------------------------------------

def test_issue22_a_bare_die_number_is_refused_showing_both_spellings_and_the_marked_forms_are_read() -> None:
    """E1, issue 22.  In the battle file ``dice: 1`` (one die that showed a 1, or one
    success?) is refused at ``orders[0].dice`` with both spellings, as is ``"5"``; nothing is
    resolved.  ``"6s"`` is six successes, ``"faces: 10 10 8 7 1 1 2 3"`` the faces."""
    for typed, text in ((1, '"1,"'), ("5", '"5s"')):
        try:
            load_battle(_data([{**VOLLEY_AT_MOB, "dice": typed}]))
        except InputError as exc:
            (problem,) = exc.problems
            assert problem.where == "orders[0].dice" and "could be one die's face" in problem.message
            assert text in problem.message
        else:
            raise AssertionError(f"{typed!r} was read")
    counted = resolve(load_battle(_data([{**VOLLEY_AT_MOB, "dice": "6s"}])))
    faces = resolve(load_battle(_data([{**VOLLEY_AT_MOB, "dice": "faces: 10 10 8 7 1 1 2 3"}])))
    a, b = _event(counted, "Attack")["successes"], _event(faces, "Attack")["successes"]
    assert (a["value"], a["roll"]["source"]) == (6, "typed successes")
    assert (b["value"], b["roll"]["source"], b["roll"]["faces"]) == (6, "typed faces", [10, 10, 8, 7, 1, 1, 2, 3])


def test_issue22_called_shot_without_its_colon_is_refused_at_its_cell_with_the_syntax() -> None:
    """X32, issue 22.  ``called shot Sister Wren`` once aimed silently at the commander; it
    is refused at ``orders[0].option`` showing ``called shot: Sister Wren``.  A word the
    attack syntax does not define (``flank``) is refused too, and both are listed at once."""
    orders = [{**VOLLEY_AT_MOB, "option": "Ranged, called shot Sister Wren"},
              {**VOLLEY_AT_MOB, "tick": 4, "option": "Close flank"}]
    try:
        load_battle(_data(orders))
    except InputError as exc:
        got = {p.where: p.message for p in exc.problems}
    else:
        raise AssertionError("the options were read")
    assert set(got) == {"orders[0].option", "orders[1].option"}
    assert 'needs a colon before the name: type "called shot: Sister Wren"' in got["orders[0].option"]
    assert "'flank' is not part of an attack's option" in got["orders[1].option"]


def test_issue22_called_shot_with_its_colon_aims_at_the_named_special_character() -> None:
    """X32.  ``Ranged, called shot: Sister Wren`` is a called shot at the relay: the event
    names her as the victim, and the penalty is −⌈X/2⌉ with X the higher of Drill 1 and
    Magnitude 3 (Relaxed): 2, beside X30's 1 (Magnitude 2 against 3): external 3."""
    order = {**VOLLEY_AT_MOB, "option": "Ranged, called shot: Sister Wren"}
    attack = _event(resolve(load_battle(_data([order]))), "Attack")
    assert attack["called_shot"] == "Sister Wren"
    assert attack["external_penalty"]["value"] == 3


# --- X42-X52 -------------------------------------------------------------------------------

def test_x47_a_unit_whose_only_order_is_refused_guards_and_acts_again_three_ticks_on() -> None:
    """X47, X13.  On long tick 0 the mob's only order is Change Formation to Close, which
    needs Drill 2 (its Drill is 1): refused with the reason.  The mob then Guards (Speed 3,
    −0 DV) and acts next on long tick 3, not on long tick 0 again."""
    order = {"tick": 0, "unit": "Bandit Mob", "action": "Change Formation", "option": "Close"}
    result = resolve(_started(_data([order])))
    (refused,) = [e for e in result.events if e["kind"] == "refused"]
    assert refused["unit"] == "Bandit Mob" and "Drill" in refused["reason"]
    guard = _event(result, "Guard (order refused)")
    assert guard["unit"] == "Bandit Mob" and guard["timing"]["speed"] == 3 and guard["rule_ref"] == "X47, X19"
    assert _unit(result, "Bandit Mob")["next_tick"] == 3


def test_x42_the_rout_check_after_a_loss_uses_the_new_magnitude() -> None:
    """X42, X11, X34.  The mob (Magnitude 3) has two relays left: communication failure, so
    its effective Drill is max(0, 1 − 2) = 0.  The volley (faces 10 10 8 7 1 1 2 3 = 6, + 4
    added, − X30's 1 (2 against 3), − DV 4: threshold 5; raw 3 + 1 + 5 = 9 − soak 2 = 7
    dice, all 7s: 7 levels) fills the 7-level track: −1 dot, Magnitude 2.  The rout check it
    calls is made as the unit now stands: Magnitude 2 needs no relays, Drill 1, so the pool
    is Morale 3 − (2 − 1) = 2 (on the old Magnitude it would be 3 − (3 − 0) = 0).
    Difficulty 1 (loss and first volley, both +0; Relaxed); faces 7 7 = 2: it holds."""
    order = {**VOLLEY_AT_MOB, "dice": "10 10 8 7 1 1 2 3", "damage_dice": "7 7 7 7 7 7 7", "rout_dice": "7 7"}
    result = resolve(_started(_data([order]), **{"Bandit Mob": {"relays": ("One-Eyed Pell", "Gravel Jon")}}))
    attack = _event(result, "Attack")
    assert (attack["levels"]["value"], attack["magnitude_lost"]["value"]) == (7, 1)
    rout = attack["rout"]
    assert (rout["pool"]["value"], rout["difficulty"]["value"], rout["passed"]) == (2, 1, True)
    assert rout["triggers"] == ["Magnitude loss from damage", "First ranged attack since its last action"]  # X44


BLADE_CHAR = {"name": "Wandering Blade", "role": "commander", "dexterity": 4, "stamina": 2, "wits": 3,
              "abilities": {"Melee": 4, "Awareness": 2, "Dodge": 2}}
BLADE = {"name": "Blade Alone", "side": "Bandits", "commander": "Wandering Blade", "solo": True}


def test_x52_a_solo_unit_makes_no_rout_check() -> None:
    """X52, X1.  The talon's first volley at a solo unit (Magnitude 0) would call a rout
    check (+0) of a unit; a solo unit makes none: the attack's rout is empty.  The volley's
    dice are rolled from the seed; only the missing check is asserted."""
    data = _data([{**VOLLEY_AT_MOB, "target": "Blade Alone"}])
    data["characters"].append(BLADE_CHAR)
    data["units"].append(BLADE)
    attack = _event(resolve(_started(data)), "Attack")
    assert attack["target"] == "Blade Alone" and attack["rout"] is None


def test_x49_being_engaged_clears_aim() -> None:
    """X49, E11.  The talon Aims at the mob on long tick 0 (1 die banked; it acts next on
    long tick 3).  On long tick 1 the mob closes on the talon: engaged, the talon's Aim is
    cleared (0), though the talon took no other action."""
    aim = {"tick": 0, "unit": "Cathak Talon", "action": "Aim", "target": "Bandit Mob"}
    first = resolve(_started(_data([aim]), **{"Bandit Mob": {"next_tick": 1}}))
    assert first.battle.state_of("Cathak Talon").aim_ticks == 1
    charge = {"tick": 1, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon", "option": "Close"}
    second = resolve(first.battle.model_copy(update={"orders": load_battle(_data([charge])).orders}))
    talon = second.battle.state_of("Cathak Talon")
    assert talon.engaged == ("Bandit Mob",) and (talon.aim_target, talon.aim_ticks) == (None, 0)


def _wren_shot(**mob: Any) -> TickResult:
    """X32: the talon's called shot at Sister Wren, who has 6 of her 7 levels marked.  Pool 8
    dice, faces 10 10 8 7 1 1 2 3 = 6, + 4 added; external: X30 (2 against the mob's 3) 1
    and the called shot −⌈3/2⌉ = 2 (X the higher of Drill 1 and Magnitude 3): 3.  Her own DV:
    Parry (Dex 2 + 0)/2 = 1, Dodge (2 + 0 + Essence 1)/2 = 1 (rounded down at Essence 1): 1.
    Threshold 6 + 4 − 3 − 1 = 6; raw 3 + 1 + 6 = 10 − her soak ⌊2/2⌋ = 1: 9 dice, typed as
    1 success: 1 level, 7 of 7: Incapacitated."""
    order = {**VOLLEY_AT_MOB, "option": "Ranged, called shot: Sister Wren", "dice": "10 10 8 7 1 1 2 3",
             "damage_dice": "1s"}
    return resolve(_started(_data([order]), **{"Bandit Mob": {"wounds": {"Sister Wren": 6}, **mob}}))


def test_x51_an_incapacitated_special_character_outside_an_engagement_is_out_of_the_battle_not_dead() -> None:
    """X51 (see :func:`_wren_shot`): the mob is engaged with no one, so Sister Wren leaves
    the battle alive: she is no longer one of its relays and is not among the fallen."""
    result = _wren_shot()
    attack = _event(result, "Attack")
    assert (attack["threshold"]["value"], attack["damage_dice"]["value"], attack["levels"]["value"]) == (6, 9, 1)
    mob = result.battle.state_of("Bandit Mob")
    assert "Sister Wren" not in mob.relays and "Sister Wren" in mob.departed and "Sister Wren" not in mob.fallen


def test_x51_an_incapacitated_special_character_of_an_engaged_unit_is_slain() -> None:
    """X51, X32: the same shot while the mob is engaged (with the talon): the coup de grâce;
    Sister Wren is among the fallen."""
    result = _wren_shot(engaged=("Cathak Talon",), engaged_since={"Cathak Talon": 0})
    mob = result.battle.state_of("Bandit Mob")
    assert "Sister Wren" in mob.fallen and "Sister Wren" not in mob.departed


def test_x50_merge_the_other_commander_without_room_becomes_a_solo_unit() -> None:
    """X50, X24, X11.  The merge of the reserve into the talon (as in the X24 test):
    Magnitude 2 allows 2 × 2 = 4 special characters.  The talon's Peleps Ama and Talon
    Sergeant and the reserve's Nellens Ivo and Mnemon Sula fill them; Cathak Dano, the
    commander who does not lead, has no room, so he becomes a solo unit of the Realm (not a
    departure into nowhere)."""
    order = {"tick": 0, "unit": "Talon Reserve", "action": "Merge Units", "target": "Cathak Talon",
             "dice": "7 1 1 1 1 1", "target_dice": "7 1 1 1 1 1 1 1"}
    result = resolve(_started(_with_reserve([order])))
    talon = _unit(result, "Cathak Talon")
    assert talon["special_characters"]["heroes"] == ["Peleps Ama", "Nellens Ivo", "Mnemon Sula"]
    dano = _unit(result, "Cathak Dano")
    assert (dano["solo"], dano["side"], dano["magnitude"], dano["commander"]) == (True, "Realm", 0, "Cathak Dano")


def test_x50_split_the_parent_keeps_its_old_headcount_less_the_new_units() -> None:
    """X50, X23, X2.  The talon (25) splits 10 away under Peleps Ama.  The parent's headcount
    is 25 − 10 = 15 (row 2, 11-75), but it drops at least one dot: Magnitude 1.  The new
    unit (10: Magnitude 1) takes the parent's Drill 4 and acts when the parent next acts
    (Split Unit is Speed 3: long tick 3).  Rolls: the talon's 8 dice at max(1, 1 − 4) = 1,
    7 1 1 1 1 1 1 1 = 1; Peleps Ama's Charisma 2 + War 2 = 4 dice at 1, 7 1 1 1 = 1."""
    order = {"tick": 0, "unit": "Cathak Talon", "action": "Split Unit",
             "option": "Talon Left; hero: Peleps Ama; headcount: 10", "dice": "7 1 1 1 1 1 1 1",
             "target_dice": "7 1 1 1"}
    data = _data([order])
    ama = next(c for c in data["characters"] if c["name"] == "Peleps Ama")
    ama["charisma"] = 2
    result = resolve(_started(data))
    split = _event(result, "Split Unit")
    assert split["headcount"] == {"parent": 15, "new": 10} and split["magnitude"] == {"parent": 1, "new": 1}
    talon, left = _unit(result, "Cathak Talon"), _unit(result, "Talon Left")
    assert (talon["headcount"], talon["magnitude"], left["next_tick"], talon["next_tick"]) == (15, 1, 3, 3)
    assert current_unit(result.battle, "Talon Left")[1].drill.value == 4
    assert current_unit(result.battle, "Cathak Talon")[1].magnitude.value == 1


def test_x45_second_wind_never_rises_above_the_endurance_the_unit_began_with() -> None:
    """X45, X26.  The mob (typed Drill 3 here, Magnitude 3 with three relays) began the
    battle at Endurance 2 and is at 1.  Second Wind: 5 dice at max(1, 3 − 3) = 1, faces
    7 1 1 1 1 = 1: success.  1 + max(1, Drill 3) = 4, but never above the lower of its
    Magnitude 3 and the Endurance it began with, 2: Endurance 2."""
    order = {"tick": 0, "unit": "Bandit Mob", "action": "Rally", "option": "Second Wind", "dice": "7 1 1 1 1"}
    data = _data([order])
    data["units"][1]["drill"] = 3
    result = resolve(_started(data, **{"Bandit Mob": {"endurance": 1, "starting_endurance": 2}}))
    rally = _event(result, "Rally")
    assert (rally["command"]["difficulty"]["value"], rally["command"]["success"]) == (1, True)
    assert _unit(result, "Bandit Mob")["endurance"] == 2


def test_x46_the_duel_challenges_called_shot_is_the_challengers_own_pool() -> None:
    """X46, X27, X32.  Peleps Ama (Dex 4, Melee 4, War 2; spear Accuracy 1) challenges Sister
    Wren, unwilling.  Her own pool, no War cap: 4 + 4 + 1 = 9 dice (capped it would be 7);
    no unit bonus and no X30 comparison.  External: the called shot's −⌈max(Drill 1,
    Magnitude 3)/2⌉ = 2.  Wren's own DV 1 (Parry and Dodge 1).  Faces 7 7 7 7 1 1 1 1 1 = 4:
    4 − 2 = 2 against DV 1: hit, the duel begins."""
    order = {"tick": 0, "unit": "Cathak Talon", "action": "Initiate Duel", "target": "Bandit Mob",
             "option": "challenger: Peleps Ama; foe: Sister Wren", "dice": "7 7 7 7 1 1 1 1 1"}
    result = resolve(_started(_data([order])))
    duel = _event(result, "Initiate Duel")
    shot = duel["called_shot"]
    assert (shot["pool"]["value"], shot["external_penalty"]["value"], shot["dv"]["value"]) == (9, 2, 1)
    assert shot["hit"] and duel["duel"] and result.battle.duel is not None


def test_x4_endurance_0_takes_2_dice_off_the_duel_challenges_called_shot() -> None:
    """X4, X46 (item 8).  As in the X46 test, but the talon is at Endurance 0: Peleps Ama's
    9 dice lose 2, so 7 faces are typed: 7 7 7 7 1 1 1 = 4, − 2 external = 2 against DV 1:
    hit.  (Nine faces would be refused.)"""
    order = {"tick": 0, "unit": "Cathak Talon", "action": "Initiate Duel", "target": "Bandit Mob",
             "option": "challenger: Peleps Ama; foe: Sister Wren", "dice": "7 7 7 7 1 1 1"}
    result = resolve(_started(_data([order]), **{"Cathak Talon": {"endurance": 0}}))
    shot = _event(result, "Initiate Duel")["called_shot"]
    assert (shot["pool"]["value"], shot["roll"]["dice"], shot["hit"]) == (7, 7, True)
