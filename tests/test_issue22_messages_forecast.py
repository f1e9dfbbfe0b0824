"""Issue 22, part 2: refusals say what is needed, not only what is wrong; the forecast
reads true; the Exalted demo keeps its odds columns at 80 columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from battles import make_battle
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.rules.bbn import Battle, PhaseResult, load_battle, resolve_phase
from sheetsync.rules.exalted.formations import formation_refusal
from sheetsync.rules.exalted.models import Formation

runner = CliRunner()


def cohort(name: str, size: int = 3, **extra: Any) -> dict[str, Any]:
    members = [f"{name}{i}" for i in range(1, size + 1)]
    return {"name": name, "sergeant": members[0], "members": members, **extra}


def enemy(name: str, size: int = 3, **extra: Any) -> dict[str, Any]:
    return cohort(name, size, side="enemy", **extra)


def battle(*cohorts: dict[str, Any], ranges: list[list[str]], orders: list[dict[str, Any]]) -> Battle:
    return load_battle({"cohorts": list(cohorts), "ranges": ranges, "orders": orders})


def reasons(result: PhaseResult) -> list[str | None]:
    return [e.reason for e in result.events]


# -- say what is needed -------------------------------------------------------------------


def test_issue22_x11_communication_failure_names_relays_needed_and_present() -> None:
    why = formation_refusal(Formation.CLOSE, 2, communication_failure=True, relays=2, magnitude=4)
    assert why == ("Close is refused: the unit is in communication failure (too few relays: Magnitude 4 needs 4 "
                   "relays, it has 2), so it can only be Unordered (X11)")
    # without the counts the rule itself is said
    why = formation_refusal(Formation.RELAXED, 2, communication_failure=True)
    assert why is not None and "one per dot of Magnitude" in why


def test_issue22_x11_battle_file_communication_failure_names_relays_needed_and_present() -> None:
    from sheetsync.errors import InputError
    from sheetsync.rules.exalted.loader import load_battle as load_exalted
    from sheetsync.rules.exalted.system import SYSTEM

    data = yaml.safe_load(SYSTEM.example_data())
    data["units"][1]["special_characters"] = {"relays": ["One-Eyed Pell"]}  # Magnitude 3, one relay
    with pytest.raises(InputError) as info:
        load_exalted(data, "battle.yaml")
    assert [str(p) for p in info.value.problems] == [
        "units[1].formation: Bandit Mob: Relaxed is refused: the unit is in communication failure (too few relays: "
        "Magnitude 3 needs 3 relays, it has 1), so it can only be Unordered (X11)"]


def test_issue22_r22_support_cohort_that_cannot_attack_says_what_it_can_do() -> None:
    b = battle(cohort("S", support=True, pools={"temper": 9}), enemy("E"), ranges=[["S", "E", "Personal"]],
               orders=[{"cohort": "S", "task": "Melee Attack", "target": "E"},
                       {"cohort": "S", "task": "Intimidate", "target": "E"}])
    attack, intimidate = reasons(resolve_phase(b))
    for why in (attack, intimidate):
        assert why is not None
        assert "Support cohort and can't" in why and "(Support Cohort 2, R22)" in why
        for task in ("Heal", "Rescue", "Analyze", "Inspire", "Move", "Tactical Task", "Hero Moment that aids others"):
            assert task in why, (task, why)


@pytest.mark.parametrize(("band", "said"), [
    ("Distanced", "Heal needs Personal range and F is Distanced (R24)"),
    ("Blinded", "F is Blinded to S: no task can be taken against it; Heal needs Personal range (Ranges, R24)"),
    (None, "no range is set between S and F; the Storyteller sets it: Heal needs Personal range (R24)"),
])
def test_issue22_heal_refusal_names_the_range_it_needs(band: str | None, said: str) -> None:
    b = battle(cohort("S", support=True, pools={"temper": 9}), cohort("F"), enemy("E"),
               ranges=[["S", "F", band]] if band else [],
               orders=[{"cohort": "S", "task": "Heal", "target": "F", "temper": 1}])
    assert reasons(resolve_phase(b)) == [said]


def test_issue22_inspire_points_to_the_ally_column() -> None:
    b = battle(cohort("S", pools={"temper": 9}), cohort("F"), enemy("E"),
               ranges=[["S", "E", "Personal"], ["S", "F", "Personal"]],
               orders=[{"cohort": "S", "task": "Inspire", "target": "F", "benefit": "+5 Resolve"},
                       {"cohort": "S", "task": "Inspire", "target": "E", "ally": "F", "benefit": "+5 Resolve"},
                       {"cohort": "S", "task": "Inspire", "target": "E", "ally": "E", "benefit": "+5 Resolve"}])
    friend_as_target, ally_too_near, enemy_as_ally = reasons(resolve_phase(b))
    assert friend_as_target is not None and friend_as_target.startswith("F is on S's side; Inspire targets an enemy")
    assert "the friendly cohort to inspire goes in the Ally column" in friend_as_target
    assert ally_too_near is not None and "needs Distanced range and F is Personal" in ally_too_near
    assert "the Ally column names the friendly cohort" in ally_too_near
    assert enemy_as_ally is not None and enemy_as_ally.startswith("E is an enemy of S")
    assert "Ally column" in enemy_as_ally


def _out_of_actions() -> Battle:
    # A (3 members, 3 actions): Kill 'Em All (no action), then three orders use the three actions
    return battle(cohort("A", pools={"melee": 10, "temper": 9}), enemy("E", 5), ranges=[["A", "E", "Personal"]],
                  orders=[{"cohort": "A", "task": "Hero Moment", "member": "A1", "moment": "Kill 'Em All"},
                          {"cohort": "A", "task": "Melee Attack", "target": "E"},
                          {"cohort": "A", "task": "Move"},
                          {"cohort": "A", "task": "Move"},
                          {"cohort": "A", "task": "Move"}])


def test_issue22_no_action_left_names_the_orders_that_used_it_up() -> None:
    *taken, last = resolve_phase(_out_of_actions()).events
    assert [e.outcome for e in taken] == ["done", "hit", "done", "done"]
    assert last.outcome == "refused"
    assert last.reason == (
        "A has no action left (3 actions used by orders[1] (Melee Attack on E, with Kill 'Em All), orders[2] (Move) "
        "and orders[3] (Move); Knocked Out, Stabilized, Dead and Scared members give none) (Actions 4, R11, R13)")


def test_issue22_no_action_left_names_the_cells_of_the_orders_on_a_tracker(tmp_path: Path) -> None:
    data = make_battle(2, orders_per_cohort=4)  # Cohort 0: 3 members, 4 Melee orders (rows B4, B6, B8, B10)
    src = tmp_path / "battle.yaml"
    src.write_text(yaml.safe_dump(data))
    wb = tmp_path / "battle.xlsx"
    res = runner.invoke(app, ["new", str(wb), "--from", str(src)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["check", str(wb), "--json"])
    refusals = json.loads(res.output)["refusals"]
    out = [r for r in refusals if "no action left" in r["reason"]]
    assert out, refusals
    for r in out:
        assert "orders[" not in r["reason"], r
        assert "used by Orders!B4 (Melee Attack on Cohort 1)" in r["reason"], r
