"""X43 (issue 22): becoming engaged is a rout event for both units, the one that closes and
the one it closes on, each at its own modifiers (X35), perfect Morale skipping it (X10) and
a solo unit making none (X52).  Worked out by hand on the packaged example.

Cathak Talon: Magnitude 2, Drill 4, Close, Might 1, Morale min(avg Valor 3, Cathak Reyen's
3) = 3, so its rout pool is 3 − (2 − 4) = 5 (Drill above Magnitude adds dice, X35).
Bandit Mob: Magnitude 3, Drill 1 (three relays: no communication failure, X11), Relaxed,
Might 0, Morale 3, so its pool is 3 − (3 − 1) = 1.

Every attack below types its dice: the attack ``0s`` and the damage ``0s``, so no level is
marked and no Magnitude is lost; the only rout event is the engagement."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from sheetsync.core.layout import CodecError
from sheetsync.systems.exalted.files.loader import battle_to_file, load_battle
from sheetsync.systems.exalted.rules.battle import TickResult, resolve, rout_checks
from sheetsync.systems.exalted.rules.state import Battle
from sheetsync.systems.exalted.system import SYSTEM
from sheetsync.systems.exalted.tracker.cells import event_outcome
from sheetsync.systems.exalted.tracker.layout import ROUT_DICE, RoutPair


def _battle(order: dict[str, Any], **units: dict[str, Any]) -> Battle:
    """The example begun at long tick 0, both units acting on it, with ``order`` its only
    order and the Units fields given per unit name changed."""
    data = yaml.safe_load(SYSTEM.example_data())
    data["orders"] = [order]
    for u in data["units"]:
        u.update(units.get(u["name"], {}))
    battle = load_battle(data)
    state = tuple(s.model_copy(update={"next_tick": 0}) for s in battle.state)
    return battle.model_copy(update={"started": True, "tick": 0, "state": state})


def _attack(result: TickResult) -> dict[str, Any]:
    return next(e for e in result.events if e["kind"] == "Attack")


TALON_CLOSES = {"tick": 0, "unit": "Cathak Talon", "action": "Attack", "target": "Bandit Mob", "option": "Close",
                "dice": "0s", "damage_dice": "0s"}
MOB_CLOSES = {"tick": 0, "unit": "Bandit Mob", "action": "Attack", "target": "Cathak Talon", "option": "Close",
              "dice": "0s", "damage_dice": "0s"}


def test_x43_both_units_check_when_the_talon_closes_on_the_mob() -> None:
    """X43, X35.  The talon closes on the mob: both become engaged, both check.
    The mob (closed on): the talon has Might 1, so +2 (overwhelming); difficulty 1 + 2 +
    Relaxed 0 = 3 on 1 die: ``8,`` is 1 success, a failure losing max(1, 3 − 1) = 2 dots
    (X36): Magnitude 1, hesitating.  The talon (closing): the mob has the higher Magnitude
    (3 against 2, Might 0), so +1 (superior); difficulty 1 + 1 + Close −2 = 0 on 5 dice:
    ``7 1 1 1 1`` is 1 success, no botch: it holds."""
    order = {**TALON_CLOSES, "rout_dice": "8,", "own_rout_dice": "7 1 1 1 1"}
    result = resolve(_battle(order))
    attack = _attack(result)
    mob, talon = attack["rout"], attack["attacker_rout"]
    assert (mob["unit"], talon["unit"]) == ("Bandit Mob", "Cathak Talon")
    assert mob["triggers"] == ["Engaged by an overwhelming or supernatural unit"]
    assert (mob["pool"]["value"], mob["difficulty"]["value"], mob["successes"]) == (1, 3, 1)
    assert (mob["passed"], mob["magnitude_lost"], mob["magnitude"]) == (False, 2, 1)
    assert talon["triggers"] == ["Engaged by a superior or supernatural-led unit"]
    assert (talon["pool"]["value"], talon["difficulty"]["value"], talon["successes"]) == (5, 0, 1)
    assert (talon["passed"], talon["magnitude_lost"]) == (True, 0)
    assert rout_checks(attack) == [mob, talon]
    assert mob["hesitating"] and not talon["hesitating"]
    assert (result.battle.state_of("Bandit Mob").magnitude, result.battle.state_of("Cathak Talon").magnitude) == (1, 2)


def test_x43_the_closing_units_check_uses_its_own_modifiers() -> None:
    """X43, X35, X14.  The mob closes on the talon; each checks at its own modifiers.
    The mob (closing): the talon has Might 1, +2; Relaxed 0: difficulty 3, pool 1.
    The talon (closed on): the mob's Magnitude 3 is higher than its 2, +1; Close −2:
    difficulty 0, pool 5.  Had the closing unit used the target's modifiers it would check
    at difficulty 0; had the target used the closer's, at 1 + 2 − 2 = 1."""
    order = {**MOB_CLOSES, "rout_dice": "7 7 2 2 2", "own_rout_dice": "9,"}
    attack = _attack(resolve(_battle(order)))
    mob, talon = attack["attacker_rout"], attack["rout"]
    assert mob["unit"] == "Bandit Mob" and talon["unit"] == "Cathak Talon"
    assert mob["triggers"] == ["Engaged by an overwhelming or supernatural unit"]
    assert (mob["pool"]["value"], mob["difficulty"]["value"]) == (1, 3)
    assert talon["triggers"] == ["Engaged by a superior or supernatural-led unit"]
    assert (talon["pool"]["value"], talon["difficulty"]["value"], talon["passed"]) == (5, 0, True)


def test_x43_a_rout_of_the_closing_unit() -> None:
    """X43, X36, X11.  The mob closes on the talon and fails its own check: 1 die against
    difficulty 3, ``10,`` is 2 successes, short by 1: it loses max(1, 3 − 2) = 1 dot
    (Magnitude 2), its track empties and it hesitates.  Its three relays fit the new limit
    (2 × 2 = 4), so none fades.  It stays engaged with the talon.  The tracker's Result says
    the mob's check with X43, and the Outcome is ``routed``."""
    order = {**MOB_CLOSES, "rout_dice": "7 7 2 2 2", "own_rout_dice": "10,"}
    result = resolve(_battle(order))
    mob = _attack(result)["attacker_rout"]
    assert (mob["successes"], mob["passed"], mob["magnitude_lost"], mob["magnitude"]) == (2, False, 1, 2)
    st = result.battle.state_of("Bandit Mob")
    assert (st.magnitude, st.marked, st.hesitating, st.engaged) == (2, 0, True, ("Cathak Talon",))
    assert len(st.relays) == 3
    outcome, text = event_outcome(_attack(result))
    assert outcome == "routed"
    assert "rout check of Bandit Mob (X43): 10 (typed faces): 2 - failed, Magnitude 2" in text


def test_x43_perfect_morale_skips_the_closing_units_check() -> None:
    """X43, X10.  With perfect Morale the talon closing on the mob makes no check of its
    own (the event is logged, not rolled); the mob still checks (pool 1, difficulty 3)."""
    order = {**TALON_CLOSES, "rout_dice": "10,"}
    attack = _attack(resolve(_battle(order, **{"Cathak Talon": {"perfect_morale": True}})))
    talon = attack["attacker_rout"]
    assert (talon["checked"], talon["passed"], talon["roll"]) == (False, True, None)
    assert "perfect Morale" in talon["rule_ref"]
    assert attack["rout"]["checked"] and attack["rout"]["difficulty"]["value"] == 3


def test_x43_x52_a_solo_unit_that_closes_makes_no_check() -> None:
    """X43, X52.  A solo unit (Magnitude 0) has no rout pool: closing on the mob it makes no
    check (``attacker_rout`` is empty), while the mob, engaged, checks (+0: Magnitude 0 is
    not higher, Might 0; Relaxed: difficulty 1)."""
    data = yaml.safe_load(SYSTEM.example_data())
    data["characters"].append({"name": "Wandering Blade", "role": "commander", "dexterity": 4, "stamina": 2,
                               "wits": 3, "abilities": {"Melee": 4, "Awareness": 2, "Dodge": 2}})
    data["units"].append({"name": "Blade Alone", "side": "Realm", "commander": "Wandering Blade", "solo": True})
    data["orders"] = [{"tick": 0, "unit": "Blade Alone", "action": "Attack", "target": "Bandit Mob",
                       "option": "Close", "damage_dice": "0s"}]
    battle = load_battle(data)
    battle = battle.model_copy(update={"started": True, "state": tuple(s.model_copy(update={"next_tick": 0})
                                                                       for s in battle.state)})
    attack = _attack(resolve(battle))
    assert attack["attacker_rout"] is None
    assert attack["rout"]["triggers"] == ["Becoming engaged"] and attack["rout"]["difficulty"]["value"] == 1


def test_x43_a_unit_already_engaged_makes_no_new_check() -> None:
    """X43, X35.  Becoming engaged is the event: the talon attacking the mob it is already
    engaged with raises none, for either unit."""
    battle = _battle(TALON_CLOSES)
    state = tuple(s.model_copy(update={"engaged": ("Bandit Mob" if s.name == "Cathak Talon" else "Cathak Talon",),
                                       "engaged_since": {}}) for s in battle.state)
    attack = _attack(resolve(battle.model_copy(update={"state": state})))
    assert attack["rout"] is None and attack["attacker_rout"] is None


def test_x43_the_rout_dice_cell_types_both_checks_after_own() -> None:
    """X43: the Orders sheet's Rout dice cell holds the target's check, then ``own:`` and
    the closing unit's; either part may be left to the seed, and a file's
    ``own_rout_dice`` is written back into the cell the same way."""
    assert ROUT_DICE.decode("8, ; own: 7 1 1 1 1") == RoutPair("8,", "7 1 1 1 1")
    assert ROUT_DICE.decode("own: 2s") == RoutPair(None, "2s")
    assert ROUT_DICE.decode("7 7 2") == "7 7 2"
    assert ROUT_DICE.encode(RoutPair("8,", "7 1 1 1 1")) == "8,; own: 7 1 1 1 1"
    assert ROUT_DICE.encode(RoutPair(None, "2s")) == "own: 2s"
    with pytest.raises(CodecError, match="own rout dice"):
        ROUT_DICE.decode("7,; own: 11")
    with pytest.raises(CodecError, match="twice"):
        ROUT_DICE.decode("own: 7, own: 8,")
    order = {**TALON_CLOSES, "own_rout_dice": "7 1 1 1 1"}
    assert battle_to_file(load_battle({**yaml.safe_load(SYSTEM.example_data()), "orders": [order]}))["orders"][0][
        "own_rout_dice"] == "7 1 1 1 1"


def test_x43_the_tracker_reads_both_checks_from_the_rout_dice_cell() -> None:
    """X43 on the tracker (test_exalted_tracker's battle: the mob Unordered, with no relays,
    so in communication failure, effective Drill 0, X11): the talon closes on the mob on
    long tick 0 with Rout dice ``own: 7 1 1 1 1`` (the mob's part left blank).  The mob's
    check: Morale 3 − (3 − 0) = 0 dice against 1 + 2 (Might 1) + 2 (Unordered) = 5: no
    success, it fails.  The talon's own: 5 dice against 1 + 1 (the mob's higher Magnitude)
    − 2 (Close) = 0, ``7 1 1 1 1`` is 1 success: it holds.  The Result cell says both."""
    from test_exalted_tracker import LAY, ORDERS, SUBJECT, blank, cell, type_battle, typed_rows

    from sheetsync.app.usecases import run_steps

    backend = blank()
    type_battle(backend)
    row = {**ORDERS[0], "option": "Close", "dice": "0s", "damage_dice": "0s", "rout_dice": "own: 7 1 1 1 1"}
    backend.write_ranges([typed_rows("Orders_Table", [row])])
    run_steps(SUBJECT, "build", backend)
    report = run_steps(SUBJECT, "resolve", backend)
    attack = next(e for e in report.result.to_json()["events"] if e["kind"] == "Attack")
    mob = attack["rout"]
    assert (mob["pool"]["value"], mob["difficulty"]["value"], mob["passed"]) == (0, 5, False)
    own = attack["attacker_rout"]
    assert (own["unit"], own["difficulty"]["value"], own["successes"], own["passed"]) == ("Cathak Talon", 0, 1, True)
    result = cell(backend, LAY.block("Orders_Table").cell(0, "result"))
    assert "rout check of Bandit Mob (X35): no dice: 0 - failed" in result
    assert "rout check of Cathak Talon (X43): 7 1 1 1 1 (typed faces): 1 - held" in result
