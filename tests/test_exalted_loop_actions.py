"""The Exalted battle loop plays every action (issue 10): Split Unit and Expel Special
Character (X23), Merge Units (X24), Initiate Duel and its typed outcome (X27), spreading out
under fire (X20) and the departures of special characters beyond the limit (X11).

Every expected number below is worked out by hand from RULINGS-exalted.md (the comment or
docstring of each test shows the sums), not read back from the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.core.errors import BattleStateError, InputError
from sheetsync.systems.exalted.files.loader import battle_to_file, load_battle
from sheetsync.systems.exalted.rules.battle import departures_at_end, resolve, undo, units_json
from sheetsync.systems.exalted.rules.breakdowns import aftermath_json
from sheetsync.systems.exalted.rules.state import Battle
from sheetsync.systems.exalted.system import SYSTEM

runner = CliRunner()

RESERVE_CHARS = [
    {"name": "Cathak Dano", "role": "commander", "charisma": 3, "wits": 2, "abilities": {"War": 3}},
    {"name": "Nellens Ivo", "role": "hero", "charisma": 2, "abilities": {"War": 1}},
    {"name": "Mnemon Sula", "role": "hero", "charisma": 2, "abilities": {"War": 2}},
    {"name": "Wandering Blade", "role": "hero", "dexterity": 4, "wits": 3, "abilities": {"Melee": 4, "Awareness": 2}},
]
RESERVE = {"name": "Talon Reserve", "side": "Realm", "commander": "Cathak Dano", "members": [{"kind": "Extra",
                                                                                                "count": 9}],
           "drill": 2, "special_characters": {"heroes": ["Nellens Ivo", "Mnemon Sula"]}, "join_war": 0}
"""Headcount 1 + 9 = 10: Magnitude 1 (X2); Join War 2 + 3 − 1 = 4 dice typed 0 successes:
it acts on long tick min(6, 4 − 0) = 4 (E4)."""
BLADE = {"name": "Blade Alone", "side": "Realm", "commander": "Wandering Blade", "solo": True, "join_war": 0}


def _data(*, reserve: bool = False, blade: bool = False) -> dict[str, Any]:
    data = yaml.safe_load(SYSTEM.example_data())
    assert isinstance(data, dict)
    data["units"][1]["join_war"] = 0  # the mob: 1 die, 0 successes typed: it acts on long tick 4 (E4)
    if reserve or blade:
        data["characters"] += RESERVE_CHARS
    if reserve:
        data["units"].append(dict(RESERVE))
    if blade:
        data["units"].append(dict(BLADE))
    data["orders"] = []
    return data


def _battle(orders: list[dict[str, Any]], **kw: bool) -> Battle:
    data = _data(**kw)
    data["orders"] = orders
    return load_battle(data)


def _with_orders(battle: Battle, orders: list[dict[str, Any]]) -> Battle:
    """The battle as it stands with ``orders`` typed (the file written, orders added, read)."""
    return load_battle({**battle_to_file(battle), "orders": orders})


def _event(result: Any, kind: str) -> dict[str, Any]:
    return next(e for e in result.events if e["kind"] == kind)


def _refused(result: Any) -> list[dict[str, Any]]:
    return [e for e in result.events if e["kind"] == "refused"]


SPLIT = {"tick": 0, "unit": "Cathak Talon", "action": "Split Unit",
         "option": "Talon Left; hero: Peleps Ama; headcount: 10; follow: Talon Sergeant",
         "dice": "7 7 1 1 1 1 1 1", "target_dice": "1 1 2 3 4 5"}


# --- X23 Split Unit, Expel Special Character ----------------------------------------------

def test_x23_split_unit_magnitudes_followers_and_both_command_rolls() -> None:
    """By hand.  The talon's headcount is 25 (Magnitude 2).  The new unit takes 10: row
    2-10, Magnitude 1.  15 are left, row 2, but the parent drops at least one dot: Magnitude
    min(2, 2 − 1) = 1, its headcount 25 − 10 = 15 (X50).  Talon Sergeant follows (the
    limit 2 × 1 = 2 holds him).  Parent's roll: Cathak Reyen's Charisma 4 + War 4 = 8 dice
    (no relay left), difficulty max(1, 1 − Drill 4) = 1; 7 7 is 2 successes: it holds.  The
    new unit's roll†: Peleps Ama's 2 + 2 = 4 against Talon Sergeant's 3 + 3 = 6: 6 dice, 1 1 2
    3 4 5 no success: Talon Left hesitates and is Unordered.  Split is 3/−1: both act next on
    long tick 3.  Endurance stays 7 (Drill 4 + Stamina 3)."""
    result = resolve(_battle([SPLIT]))
    ev = _event(result, "Split Unit")
    assert ev["rule_ref"] == "X23" and ev["new_unit"] == "Talon Left" and ev["followers"] == ["Talon Sergeant"]
    assert ev["magnitude"] == {"parent": 1, "new": 1} and ev["headcount"] == {"parent": 15, "new": 10}
    assert ev["commands"]["parent"]["pool"]["value"] == 8 and ev["commands"]["parent"]["difficulty"]["value"] == 1
    assert ev["commands"]["parent"]["success"] is True
    assert ev["commands"]["new"]["pool"]["value"] == 6 and ev["commands"]["new"]["success"] is False
    assert ev["hesitating"] == ["Talon Left"] and ev["formation"] == {"parent": "Close", "new": "Unordered"}
    assert ev["timing"]["speed"] == 3 and ev["timing"]["dv_penalty"] == 1
    units = {u["name"]: u for u in units_json(result.battle)}
    left, talon = units["Talon Left"], units["Cathak Talon"]
    assert (left["commander"], left["magnitude"], left["headcount"], left["next_tick"], left["endurance"]) == \
        ("Peleps Ama", 1, 10, 3, 7)
    assert left["special_characters"] == {"heroes": [], "sorcerers": [], "relays": ["Talon Sergeant"]}
    assert left["hesitating"] and left["formation"] == "Unordered" and left["side"] == "Realm"
    assert (talon["magnitude"], talon["headcount"], talon["next_tick"], talon["formation"]) == (1, 15, 3, "Close")
    assert talon["special_characters"] == {"heroes": [], "sorcerers": [], "relays": []}
    assert result.battle.state_of("Cathak Talon").starting_magnitude == 1  # X41: the split is no wound


def test_x23_a_split_battle_is_written_read_and_undone_exactly() -> None:
    start = _battle([SPLIT])
    after = resolve(start).battle
    again = load_battle(battle_to_file(after))
    assert again.units == after.units and again.state == after.state
    assert again.unit("Talon Left") is not None and again.unit("Talon Left").split_from == "Cathak Talon"
    assert undo(again) == start
    data = battle_to_file(after)
    del data["state"], data["history"], data["started"], data["tick"]
    with pytest.raises(InputError, match=r"units\[2\]\.split_from: 'Talon Left' split off 'Cathak Talon'"):
        load_battle(data)


@pytest.mark.parametrize(("option", "reason"), [
    ("Talon Left; hero: Talon Sergeant; headcount: 10", "is not a hero of Cathak Talon"),
    ("Talon Left; hero: Peleps Ama; headcount: 25", "between 2 and 24"),
    ("Talon Left; hero: Peleps Ama", "needs the headcount"),
    ("Talon Left; hero: Peleps Ama; headcount: 24", "would fall to Magnitude 0"),
    ("Bandit Mob; hero: Peleps Ama; headcount: 10", "is already a unit"),
    ("Talon Left; headcount: 10; follow: Ledaal Kes", "is not another special character"),
])
def test_x23_a_bad_split_is_refused_before_any_roll_and_costs_nothing(option: str, reason: str) -> None:
    """24 taken from 25 leaves 1: Magnitude 0, which the parent can't keep (X23, X34).  With
    its only order refused, the talon Guards (X47): Speed 3, as with no order."""
    plain = resolve(_battle([]))
    result = resolve(_battle([dict(SPLIT, option=option)]))
    (refused,) = _refused(result)
    assert reason in refused["reason"] and "X23" in refused["rule_ref"]
    assert result.battle.units == plain.battle.units
    talon = result.battle.state_of("Cathak Talon")
    assert (talon.magnitude, talon.heroes, talon.next_tick) == (2, ("Peleps Ama",), 3)


def test_x23_the_tracker_refuses_a_split_it_has_no_row_for() -> None:
    result = resolve(_battle([SPLIT]), new_units=False)
    (refused,) = _refused(result)
    assert "no Units row" in refused["reason"] and refused["rule_ref"] == "X23"
    assert len(result.battle.units) == 2


def test_x23_expel_special_character_is_reflexive_and_she_leaves_alive() -> None:
    """Expel is 0/−0: the talon's tick 0 still comes, with no order it Guards (3/−0)."""
    expel = {"tick": 0, "unit": "Cathak Talon", "action": "Expel Special Character", "option": "Talon Sergeant"}
    result = resolve(_battle([expel]))
    ev = _event(result, "Expel Special Character")
    assert ev["expelled"] == "Talon Sergeant" and ev["timing"]["speed"] == 0 and ev["rule_ref"] == "X23"
    assert _event(result, "Guard (no order)")["unit"] == "Cathak Talon"
    talon = result.battle.state_of("Cathak Talon")
    assert talon.relays == () and talon.departed == ("Talon Sergeant",) and talon.fallen == ()
    assert talon.next_tick == 3
    for option, why in (("Cathak Reyen", "cannot be expelled"), ("Ledaal Kes", "is not a special character")):
        (refused,) = _refused(resolve(_battle([dict(expel, option=option)])))
        assert why in refused["reason"] and refused["rule_ref"] == "X23"


# --- X24 Merge Units -------------------------------------------------------------------------

MERGE = {"tick": 0, "unit": "Cathak Talon", "action": "Merge Units", "target": "Talon Reserve",
         "dice": "7 7 1 1 1 1 1 1", "target_dice": "7 1 1 1 1 1"}


def test_x24_merge_units_headcounts_add_the_larger_leads_and_the_last_added_leaves() -> None:
    """By hand.  Cathak Reyen: Charisma 4 + War 4 = 8 dice at max(1, 2 − 4) = 1: 7 7, two
    successes.  Cathak Dano: 3 + 3 = 6 dice at max(1, 1 − 2) = 1: one success.  Headcounts
    25 + 10 = 35: Magnitude 2 (11-75), limit 4.  The talon is larger (2 > 1): Cathak Reyen
    leads.  Special characters in the order they joined: Peleps Ama, Talon Sergeant, Nellens
    Ivo, Mnemon Sula, then Cathak Dano (the commander who does not lead, added last): 5, so
    Cathak Dano leaves (X11).  Endurance: the lower of 7 and the reserve's Drill 2 + Stamina
    2 = 4.  Merge is 3/−1: next on long tick 3."""
    result = resolve(_battle([MERGE], reserve=True))
    ev = _event(result, "Merge Units")
    assert ev["merged"] is True and "X24" in ev["rule_ref"]
    assert ev["commands"]["unit"]["pool"]["value"] == 8 and ev["commands"]["target"]["pool"]["value"] == 6
    assert (ev["headcount"], ev["magnitude"], ev["commander"], ev["leaving"]) == (35, 2, "Cathak Reyen",
                                                                                  ["Cathak Dano"])
    units = {u["name"]: u for u in units_json(result.battle)}
    talon, reserve = units["Cathak Talon"], units["Talon Reserve"]
    assert talon["special_characters"] == {"heroes": ["Peleps Ama", "Nellens Ivo", "Mnemon Sula"], "sorcerers": [],
                                           "relays": ["Talon Sergeant"]}
    assert (talon["magnitude"], talon["headcount"], talon["endurance"], talon["next_tick"]) == (2, 35, 4, 3)
    assert talon["departed"] == ["Cathak Dano"]
    assert reserve["disbanded"] and reserve["merged_into"] == "Cathak Talon"
    assert undo(result.battle) == _battle([MERGE], reserve=True)


def test_x24_x11_the_option_picks_who_leaves_and_who_leads() -> None:
    """``leader: Cathak Dano`` (both agreeing): Cathak Reyen is the one added last; the
    option names Nellens Ivo to leave instead."""
    order = dict(MERGE, option="leader: Cathak Dano; leaving: Nellens Ivo")
    ev = _event(resolve(_battle([order], reserve=True)), "Merge Units")
    assert ev["commander"] == "Cathak Dano" and ev["leaving"] == ["Nellens Ivo"]
    bad = dict(MERGE, option="leaving: Nellens Ivo, Mnemon Sula")
    (refused,) = _refused(resolve(_battle([bad], reserve=True)))
    assert "1 special character(s) beyond its limit of 4" in refused["reason"] and refused["rule_ref"] == "X11"


def test_x24_a_failed_commander_roll_means_no_merge_and_that_unit_hesitates() -> None:
    """Cathak Reyen's 8 dice all 1s: no success against difficulty 1, so no merge; Cathak
    Dano's succeeds, so only the talon hesitates."""
    result = resolve(_battle([dict(MERGE, dice="1 1 1 1 1 1 1 1")], reserve=True))
    ev = _event(result, "Merge Units")
    assert ev["merged"] is False and ev["hesitating"] == ["Cathak Talon"]
    talon, reserve = result.battle.state_of("Cathak Talon"), result.battle.state_of("Talon Reserve")
    assert talon.hesitating and not reserve.hesitating and not reserve.disbanded
    assert (talon.magnitude, reserve.magnitude) == (2, 1)


def test_x24_a_solo_unit_joins_as_a_special_character_with_no_roll() -> None:
    join = {"tick": 0, "unit": "Cathak Talon", "action": "Merge Units", "target": "Blade Alone"}
    result = resolve(_battle([join], blade=True))
    ev = _event(result, "Merge Units")
    assert ev["joined"] == "Wandering Blade" and ev["commands"] is None
    talon = result.battle.state_of("Cathak Talon")
    assert talon.heroes == ("Peleps Ama", "Wandering Blade") and talon.added == ("Wandering Blade",)
    assert result.battle.state_of("Blade Alone").merged_into == "Cathak Talon"
    enemy = dict(join, target="Bandit Mob")
    (refused,) = _refused(resolve(_battle([enemy], blade=True)))
    assert "only allies merge" in refused["reason"]


# --- X27 Initiate Duel --------------------------------------------------------------------

DUEL = {"tick": 0, "unit": "Cathak Talon", "action": "Initiate Duel", "target": "Bandit Mob", "option": "ranged",
        "dice": "10 10 8 7 1 1 1 1"}


def test_x27_an_unwilling_foe_must_first_be_hit_by_a_called_shot_without_unit_bonuses() -> None:
    """By hand.  Cathak Reyen's own pool: Dex 4 + Archery 3 + bow Accuracy 1 = 8 (no War cap,
    no Rating, no Might, no Magnitude difference).  10 10 8 7 = 6 successes.  The called
    shot: −⌈X/2⌉, X the higher of Drill 1 and Magnitude 3 (Relaxed): −2.  Red Harrow's own
    DV: Parry (3 + Melee 3 + 0)/2 = 3 at Essence 1, against Dodge (3 + 1 + 1)/2 = 2: 3.
    6 − 2 − 3 = 1: a hit, no damage.  The duel begins; it counts as an attack (the bow's
    Speed 5, DV −1: next tick 5; the mob has suffered one attack)."""
    result = resolve(_battle([DUEL]))
    ev = _event(result, "Initiate Duel")
    shot = ev["called_shot"]
    assert (shot["pool"]["value"], shot["successes"], shot["external_penalty"]["value"], shot["dv"]["value"]) == \
        (8, 6, 2, 3)
    assert shot["hit"] is True and shot["damage"] == 0 and ev["duel"] is True and ev["rule_ref"] == "X27"
    assert (ev["challenger"], ev["foe"]) == ("Cathak Reyen", "Red Harrow")
    battle = result.battle
    assert battle.duel is not None and battle.duel.foe_unit == "Bandit Mob"
    assert battle.state_of("Cathak Talon").next_tick == 5 and battle.state_of("Bandit Mob").attacks_suffered == 1
    assert battle.state_of("Bandit Mob").marked == 0
    assert result.to_json()["duel"]["challenger"] == "Cathak Reyen"
    with pytest.raises(BattleStateError, match="stops the long ticks until its outcome is typed"):
        resolve(battle)


def test_x27_a_missed_called_shot_starts_no_duel_and_a_willing_foe_needs_no_roll() -> None:
    """10 8 7 7 = 5 successes: 5 − 2 − 3 = 0, a miss (E7: equal to the DV misses)."""
    missed = resolve(_battle([dict(DUEL, dice="10 8 7 7 1 1 1 1")]))
    assert _event(missed, "Initiate Duel")["duel"] is False and missed.battle.duel is None
    willing = resolve(_battle([dict(DUEL, option="willing", dice=None)]))
    ev = _event(willing, "Initiate Duel")
    assert ev["called_shot"] is None and ev["duel"] is True and willing.battle.duel is not None
    close = resolve(_battle([dict(DUEL, option="")]))
    (refused,) = _refused(close)
    assert "must be ranged" in refused["reason"] and refused["rule_ref"] == "X27, X32"


def test_x27_the_typed_outcome_resolves_alone_and_undo_brings_the_duel_back() -> None:
    """Red Harrow slain in the duel: the mob has no hero, so Mob Rule (X39): Unordered, its
    relays fade.  Only the outcome resolves: the battle stays at long tick 0."""
    pending = resolve(_battle([DUEL])).battle
    outcome = {"tick": 0, "unit": "Cathak Talon", "action": "Initiate Duel",
               "option": "result: Cathak Reyen; slain: Red Harrow; wounds: Cathak Reyen 2"}
    typed = _with_orders(pending, [outcome])
    result = resolve(typed)
    ev = _event(result, "Duel outcome")
    assert ev["winner"] == "Cathak Reyen" and ev["slain"] == ["Red Harrow"] and ev["rule_ref"] == "X27"
    mob = result.battle.state_of("Bandit Mob")
    assert mob.mob_rule and mob.formation.value == "Unordered" and mob.relays == ()
    assert result.battle.state_of("Cathak Talon").wounds == {"Cathak Reyen": 2}
    assert result.battle.duel is None and result.tick == 0 and result.battle.orders == ()
    assert undo(result.battle) == typed
    bad = _with_orders(pending, [dict(outcome, option="result: Peleps Ama")])
    with pytest.raises(InputError, match=r"orders\[0\]\.option: result 'Peleps Ama' is neither"):
        resolve(bad)


# --- X20 spreading out under fire -------------------------------------------------------

MISS = {"tick": 0, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Ranged",
        "dice": "1 1 1 1 1 1 1 1", "rout_dice": "1s", "exhaustion_dice": "7 7 7 7 7 7 7 7",
        "target_exhaustion_dice": "7 7 7 7 7"}
SPREAD = {"tick": 0, "unit": "Bandit Mob", "action": "Change Formation", "option": "Spread out",
          "dice": "7 7 10 1 1", "rout_dice": "2s"}


def test_x20_spreading_out_after_a_ranged_attack_then_the_rout_check_with_skirmish() -> None:
    """By hand.  The volley misses (0 + 4 − 1 − DV 4 < 1); its first-ranged rout check: 3 −
    (3 − 1) = 1 die at 1 + 0: 1 success typed holds.  The spread roll†: Red Harrow's Charisma 3 + War 2 = 5
    dice (no relay is better), difficulty max(1, 3 − 1) = 2 + 1 (attacked since its last
    action) = 3; 7 7 10 is 4 successes: Skirmish.  Then the rout check: 1 die against 1 + 0
    + Skirmish 2 = 3; 2 successes typed: failed, max(1, 3 − 2) = 1 dot lost (3 → 2), it
    hesitates.  The spread is reflexive: the mob still acts on long tick 4."""
    result = resolve(_battle([MISS, SPREAD]))
    attack = _event(result, "Attack")
    assert attack["hit"] is False and attack["rout"]["passed"] is True
    ev = _event(result, "Change Formation")
    assert ev["spread"] is True and ev["rule_ref"] == "X20" and ev["formation"] == "Skirmish"
    assert (ev["command"]["pool"]["value"], ev["command"]["difficulty"]["value"], ev["command"]["successes"]) == \
        (5, 3, 4)
    rout = ev["rout"]
    assert (rout["pool"]["value"], rout["difficulty"]["value"], rout["passed"], rout["magnitude"]) == (1, 3, False, 2)
    mob = result.battle.state_of("Bandit Mob")
    assert (mob.formation.value, mob.magnitude, mob.hesitating, mob.next_tick) == ("Skirmish", 2, True, 4)


def test_x20_no_spreading_out_without_a_ranged_attack_and_a_failed_roll_keeps_the_formation() -> None:
    (refused,) = _refused(resolve(_battle([SPREAD])))
    assert "no ranged attack on Bandit Mob resolved" in refused["reason"] and refused["rule_ref"] == "X20"
    failed = resolve(_battle([MISS, dict(SPREAD, dice="7 7 1 1 1")]))  # 2 successes < 3
    ev = _event(failed, "Change Formation")
    assert ev["formation"] == "Relaxed" and "rout" not in ev
    assert failed.battle.state_of("Bandit Mob").magnitude == 3


# --- X11 departures -------------------------------------------------------------------------

def _over_limit(battle: Battle, **changes: Any) -> Battle:
    """The talon at Magnitude 1 (one dot lost) with three heroes and two relays, the second
    relay added during the battle."""
    state = tuple(s.model_copy(update={"magnitude": 1, "dots_lost": 1, "heroes": ("Peleps Ama", "Nellens Ivo",
                                                                                    "Mnemon Sula"),
                                       "relays": ("Talon Sergeant", "Cathak Talon relay 2"),
                                       "added": ("Cathak Talon relay 2",), **changes})
                  if s.name == "Cathak Talon" else s for s in battle.state)
    return battle.model_copy(update={"state": state})


def test_x11_x26_when_a_rally_raises_magnitude_the_last_added_beyond_the_limit_leaves() -> None:
    """Rally for Numbers: Charisma 4 + War 4 = 8 dice at max(1, 1 − 4) = 1; 3 successes
    typed: Magnitude 1 → 2, limit 4; five special characters, so the last added (the
    unnamed relay) leaves, or the one the option names."""
    rally = {"tick": 0, "unit": "Cathak Talon", "action": "Rally", "option": "Numbers", "dice": "3s"}
    data = _data(reserve=True)
    data["units"] = data["units"][:2]
    data["units"][0]["join_war"] = "4s"  # 4 successes of its 6 dice at Magnitude 1 (E4)
    battle = _over_limit(load_battle({**data, "orders": [rally]}))
    ev = _event(resolve(battle), "Rally")
    assert ev["magnitude"] == 2 and ev["leaving"] == ["Cathak Talon relay 2"] and "X11" in ev["rule_ref"]
    picked = _over_limit(load_battle({**data, "orders": [dict(rally, option="Numbers; leaving: Nellens Ivo")]}))
    after = resolve(picked).battle.state_of("Cathak Talon")
    assert after.heroes == ("Peleps Ama", "Mnemon Sula") and after.departed == ("Nellens Ivo",)


def test_x11_at_battle_end_the_special_characters_beyond_the_limit_leave() -> None:
    """Magnitude 1: limit 2 of five, so three leave, the last added first: the unnamed relay,
    then (typed order) Talon Sergeant and Mnemon Sula."""
    battle = _over_limit(_battle([]))
    assert departures_at_end(battle) == {"Cathak Talon": ["Mnemon Sula", "Talon Sergeant", "Cathak Talon relay 2"]}
    talon = next(u for u in aftermath_json(battle)["units"] if u["name"] == "Cathak Talon")
    assert talon["leaving"] == ["Mnemon Sula", "Talon Sergeant", "Cathak Talon relay 2"]
    assert departures_at_end(_battle([])) == {}


def test_x11_sheetsync_aftermath_says_who_leaves(tmp_path: Path) -> None:
    file = tmp_path / "ended.yaml"
    started = resolve(_battle([])).battle
    file.write_text(yaml.safe_dump(battle_to_file(_over_limit(started)), sort_keys=False), encoding="utf-8")
    got = runner.invoke(app, ["aftermath", str(file)], terminal_width=200)
    assert got.exit_code == 0, got.output
    assert "Cathak Talon: Mnemon Sula, Talon Sergeant, Cathak Talon relay 2 leave (X11" in got.output


# --- properties -----------------------------------------------------------------------------

PLAYS: list[tuple[str, str | None, str | None]] = [
    ("Split Unit", None, "Talon Left; headcount: 12"), ("Merge Units", "Talon Reserve", None),
    ("Merge Units", "Cathak Talon", None), ("Attack", "Bandit Mob", "Close"), ("Attack", "Cathak Talon", "Close"),
    ("Rally", None, "Numbers"), ("Guard", None, None), ("Expel Special Character", None, "Nellens Ivo"),
    ("Initiate Duel", "Bandit Mob", "willing"), ("Change Formation", None, "spread out"),
    ("Attack", "Bandit Mob", "Ranged"),
]


@settings(max_examples=30, deadline=None, database=None)
@given(st.integers(0, 10**6), st.lists(st.integers(0, len(PLAYS) - 1), min_size=1, max_size=5))
def test_x2_x23_x24_magnitude_rises_only_by_rally_or_merge_and_undo_round_trips(seed: int, plan: list[int]) -> None:
    """With splits, merges and duels in the mix: a unit's Magnitude never rises but by a
    successful rally for Numbers or a merge into it (X2, X23, X24, X26); every resolved step
    undoes to exactly the battle before it, also through the file."""
    data = _data(reserve=True)
    data["seed"] = seed
    battle = load_battle(data)
    for i in plan:
        action, target, option = PLAYS[i]
        states = {s.name: s for s in battle.state if not s.disbanded}
        orders: list[dict[str, Any]] = []
        if battle.duel is not None:
            orders.append({"tick": battle.duel.tick, "unit": battle.duel.challenger_unit, "action": "Initiate Duel",
                           "option": f"result: {battle.duel.challenger}"})
        else:
            tick = min(s.next_tick for s in states.values()) if battle.started else 0
            for name, s in states.items():
                if battle.started and s.next_tick != tick:
                    continue
                if target == name or (target is not None and target not in states):
                    continue
                orders.append({"tick": tick, "unit": name, "action": action, "target": target, "option": option})
        typed = _with_orders(battle, orders)
        try:
            result = resolve(typed)
        except BattleStateError:
            return
        raised = {e["unit"] for e in result.events if e.get("rally") == "Numbers" and e["command"]["success"]}
        # X24: the larger unit absorbs the smaller, whichever gave the order
        raised |= {e.get("absorbed_into", e["unit"]) for e in result.events if e.get("merged") is True}
        before = {s.name: s for s in typed.state}
        for s in result.battle.state:
            if s.name in before and s.name not in raised:
                assert s.magnitude <= before[s.name].magnitude, (s.name, result.events)
        assert undo(result.battle) == typed
        assert undo(load_battle(battle_to_file(result.battle))) == typed
        battle = result.battle


# --- the command line -----------------------------------------------------------------------

def test_x23_x24_x27_x20_resolve_json_carries_the_new_actions_with_their_rules(tmp_path: Path) -> None:
    """``sheetsync resolve FILE --json``: the split, expel, duel and spread events, each with
    its ``rule_ref``; ``--out`` writes the split unit and the duel into the next file, and
    a second resolve stops at the duel (X27)."""
    data = _data(reserve=True)
    data["orders"] = [MISS, SPREAD, dict(DUEL, unit="Cathak Talon"), SPLIT,
                      {"tick": 0, "unit": "Cathak Talon", "action": "Expel Special Character",
                       "option": "Ledaal Kes"}]
    file, out = tmp_path / "battle.yaml", tmp_path / "next.yaml"
    file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    got = runner.invoke(app, ["resolve", str(file), "--json", "--out", str(out)])
    assert got.exit_code == 0, got.output
    events = json.loads(got.output)["events"]
    rules = {e["kind"]: e["rule_ref"] for e in events if e["kind"] != "refused"}
    assert rules["Split Unit"] == "X23" and rules["Initiate Duel"] == "X27" and rules["Change Formation"] == "X20"
    (refused,) = [e for e in events if e["kind"] == "refused"]
    assert refused["action"] == "Expel Special Character" and refused["rule_ref"] == "X23"
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert written["duel"]["foe"] == "Red Harrow"
    assert any(u["name"] == "Talon Left" and u["split_from"] == "Cathak Talon" for u in written["units"])
    again = runner.invoke(app, ["resolve", str(out), "--json"])
    assert isinstance(again.exception, BattleStateError) and "stops the long ticks" in str(again.exception)


# --- the tracker ------------------------------------------------------------------------------

def test_x24_x23_on_the_tracker_a_merge_plays_and_a_split_without_a_hero_is_refused() -> None:
    """On the tracker Merge Units plays (the absorbed unit's row stays, out of the fight);
    a Split Unit of a unit with no hero is refused with its reason, costing nothing, and
    Undo Tick brings the reserve back.  (A split that plays takes a free Units row:
    test_exalted_tracker_columns.py.)"""
    from test_exalted_tracker import CHARACTERS, LAY, SEED, SUBJECT, UNITS, blank, cell, typed_rows

    from sheetsync.app.usecases import run_steps
    from sheetsync.sheets.backend import RangeUpdate

    backend = blank()
    chars = [*CHARACTERS, {"name": "Cathak Dano", "role": "commander", "charisma": 3, "wits": 2, "abilities": "War 3"}]
    units = [*UNITS, {"name": "Talon Reserve", "side": "Realm", "commander": "Cathak Dano", "extras": 9, "drill": 2,
                      "join_war": 0}]
    orders = [{"tick": 0, "unit": "Cathak Talon", "action": "Merge Units", "target": "Talon Reserve",
               "dice": "7 7 1 1 1 1 1 1"},
              {"tick": 0, "unit": "Cathak Talon", "action": "Split Unit", "option": "Talon Left; headcount: 10"}]
    backend.write_ranges([typed_rows("Characters_Table", chars), typed_rows("Units_Table", units),
                          typed_rows("Orders_Table", orders), RangeUpdate("Battle!B6", [[SEED]])])
    run_steps(SUBJECT, "build", backend)
    run_steps(SUBJECT, "resolve", backend)
    ob, ub = LAY.block("Orders_Table"), LAY.block("Units_Table")
    assert cell(backend, ob.cell(1, "outcome")) == "refused"
    assert "has no hero" in cell(backend, ob.cell(1, "result")) and "(X23)" in cell(backend, ob.cell(1, "result"))
    # the reserve's Target dice left blank: rolled from the seed, it succeeds (6 dice at difficulty 1)
    assert "merges into Cathak Talon: headcount 35, Magnitude 2" in cell(backend, ob.cell(0, "result"))
    assert cell(backend, ub.cell(2, "status")) == "merged into Cathak Talon"  # X24, not "disbanded"
    assert cell(backend, ub.cell(0, "magnitude_now")) == 2
    run_steps(SUBJECT, "undo", backend)
    assert "merged" not in cell(backend, ub.cell(2, "status")) and cell(backend, ob.cell(0, "outcome")) is None
