"""Issue 22, part 2: refusals say what is needed, not only what is wrong; the forecast
reads true; the Exalted demo keeps its odds columns at 80 columns."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from battles import make_battle
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import Battle, PhaseResult, resolve_phase
from sheetsync.systems.exalted.rules.formations import formation_refusal
from sheetsync.systems.exalted.rules.models import Formation

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
    from sheetsync.core.errors import InputError
    from sheetsync.systems.exalted.files.loader import load_battle as load_exalted
    from sheetsync.systems.exalted.system import SYSTEM

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


# -- the forecast reads true --------------------------------------------------------------

def _stalling() -> Battle:
    """A's one order is on E1; once E1 is all Dead no order is left, with E2 still in the
    fight (Blinded to A): every battle stops undecided after the same phase."""
    return load_battle({
        "seed": 5,
        "cohorts": [cohort("A", 5, pools={"melee": 30, "health": 200, "temper": 100}),
                    enemy("E1", pools={"health": 10, "defense": 1}), enemy("E2")],
        "ranges": [["A", "E1", "Personal"], ["A", "E2", "Blinded"]],
        "orders": [{"cohort": "A", "task": "Melee Attack", "target": "E1"}]})


def _text(data: dict[str, Any], width: int) -> str:
    from rich.console import Console

    from sheetsync.app.forecast_io import print_forecast

    console = Console(width=width, file=io.StringIO(), color_system=None)
    print_forecast(console, data, "battle.yaml")
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def test_issue22_forecast_undecided_and_phases_fought_agree() -> None:
    from sheetsync.app.forecast_io import run_forecast

    data = run_forecast(_stalling(), "bbn", None, runs=40, phases=12, seed=3, workers=1, console=None)
    end = data["to_the_end"]
    undecided = next(s for s in end["sides"] if s["side"] == "(undecided)")
    assert undecided["win"]["count"] == 40  # still an undecided outcome in the JSON, as before
    assert end["undecided"]["at_last_step"]["count"] == 0
    assert end["undecided"]["no_order_left"]["count"] == 40
    fought = end["steps"]["mean"]
    assert 1 <= fought < 12 and end["undecided"]["no_order_left_steps"]["mean"] == fought
    assert end["steps"]["counts"] == "every battle, decided or not" and end["steps"]["decided"] is None
    text = _text(data, 100)
    assert "still fighting after 12 phases" not in text and "Undecided after 12" not in text
    assert f"Undecided: no order left, after {fought:.1f} phases on average" in " ".join(text.split())
    assert "Phases fought, over every battle (decided or not)" in text


def test_issue22_forecast_battles_still_fighting_fought_every_phase() -> None:
    from sheetsync.app.forecast_io import run_forecast

    data = run_forecast(load_battle(make_battle(2, orders_per_cohort=1)), "bbn", None, runs=30, phases=2, seed=1,
                        workers=1, console=None)
    end = data["to_the_end"]
    at_last = end["undecided"]["at_last_step"]["count"]
    fought_all = dict(end["steps"]["distribution"]).get(2, 0.0)
    assert at_last / 30 <= fought_all + 1e-9  # every battle still fighting fought both phases
    if at_last:
        assert "Undecided: still fighting after 2 phases" in _text(data, 120)


def test_issue22_mean_interval_never_leaves_what_the_figure_can_take() -> None:
    from sheetsync.app.forecast import mean_interval, wilson

    values = [0] * 99 + [3]
    total, squares = sum(values), sum(v * v for v in values)
    _, low, _ = mean_interval(total, squares, len(values))
    assert low < 0  # the plain normal interval reaches below zero ...
    mean, low, high = mean_interval(total, squares, len(values), floor=0)
    assert mean == pytest.approx(0.03) and low == 0.0 and high > mean  # ... the clipped one does not
    assert mean_interval(12 * 10, 144 * 10, 10, floor=1, ceiling=12) == (12.0, 12.0, 12.0)
    low, high = wilson(0, 300)
    assert low == 0.0 and 0 < high < 0.02  # a chance: Wilson's interval, inside 0-1


def test_issue22_forecast_losses_and_phases_fought_have_no_interval_below_what_they_can_be() -> None:
    from sheetsync.app.forecast import forecast

    battle = load_battle(yaml.safe_load(Path("sheetsync/examples/battle.yaml").read_text()))
    data = forecast(battle, "bbn", runs=120, phases=12, seed=2026, workers=1)
    end = data["to_the_end"]
    assert end["steps"]["low"] >= 1 and end["steps"]["high"] <= 12
    for e, row in zip(data["next_step"]["entities"], end["entities"], strict=True):
        top = battle.pools[e["name"]].pools["health"]
        assert e["after"]["high"] <= top  # Health never passes its maximum (R17)
        assert row["loss"]["low"] >= e["now"] - top, row  # no more can be regained than is missing
    at_full = [row for e, row in zip(data["next_step"]["entities"], end["entities"], strict=True)
               if e["now"] == battle.pools[e["name"]].pools["health"]]
    assert at_full and all(row["loss"]["low"] >= 0 for row in at_full)


def test_issue22_hexwar_casualties_added_never_have_an_interval_below_zero() -> None:
    from sheetsync.app.forecast import forecast
    from sheetsync.systems.hexwar.system import SYSTEM as HEX

    battle = HEX.load(yaml.safe_load(HEX.example_data()), "example.yaml")
    data = forecast(battle, "hexwar", runs=40, phases=2, seed=1, workers=1)
    assert all(row["loss"]["low"] >= 0 for row in data["to_the_end"]["entities"])
    assert all(e["after"]["low"] >= e["now"] for e in data["next_step"]["entities"])


def test_issue22_forecast_json_gives_exact_chances_unrounded() -> None:
    from fractions import Fraction

    from sheetsync.app.forecast import forecast
    from sheetsync.systems.exalted.rules.battle import resolve
    from sheetsync.systems.exalted.system import SYSTEM

    after_tick_0 = resolve(SYSTEM.load(yaml.safe_load(SYSTEM.example_data()), "example.yaml")).battle
    data = forecast(after_tick_0, "exalted", runs=20, phases=1, seed=11, workers=1)
    (order,) = data["next_step"]["orders"]
    exact = order["exact"]
    assert exact["p"] == float(Fraction(exact["fraction"]))  # as computed, not cut to 4 places
    assert exact["p"] != round(exact["p"], 4)
    # the battalion's exact chances carry their fraction too
    bbn = forecast(load_battle(make_battle(2, orders_per_cohort=1)), "bbn", runs=10, phases=1, seed=1, workers=1)
    for o in bbn["next_step"]["orders"]:
        if o["exact"] is not None and "fraction" in o["exact"]:
            assert float(Fraction(o["exact"]["fraction"])) == o["exact"]["p"]


def test_issue22_forecast_order_column_shows_the_order_at_80_columns() -> None:
    from sheetsync.app.forecast_io import run_forecast

    battle = load_battle(make_battle(2, orders_per_cohort=2))
    places = ["Orders!B4", "Orders!B5", "Orders!B6", "Orders!B7"]
    data = run_forecast(battle, "bbn", places, runs=10, phases=1, seed=1, workers=1, console=None)
    narrow = _text(data, 80)
    table = narrow.split("After the phase")[0]
    assert "Orders!B" not in table
    lines = table.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("│ B4 "))
    assert "│ Cohort 0:" in lines[row] and "│ Melee Attack → Cohort 1" in lines[row + 1]
    assert all(len(line) <= 80 for line in narrow.splitlines())
    assert "Simulated" in table and "Exact" in table
    wide = _text(data, 140)
    assert "Orders!B4" in wide  # a wide terminal keeps the full address


# -- the Exalted demo at 80 columns -------------------------------------------------------

def test_issue22_exalted_demo_keeps_its_odds_columns_at_80_columns(tmp_path: Path) -> None:
    res = runner.invoke(app, ["demo", "--system", "exalted", "--out-dir", str(tmp_path)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    odds = res.output.split("Odds before rolling")[1].split("Long tick 0")[0]
    header = next(line for line in odds.splitlines() if "Unit" in line)
    for col in ("Tick", "Target", "Pool", "Added", "DV", "Hit", "Levels"):
        assert col in header, header
    assert "91.6%" in odds and "1.94" in odds and "Bandit Mob" in odds and "Bandi…" not in odds
    # E4, E5: the mob's attack is typed for long tick 4, the tick Join War gives it: priced, as
    # resolve will run it (it was refused when the odds took every unit to act on long tick 0)
    assert "Bandit Mob 4 Cathak Talon 5 +3 −0" in " ".join(odds.split()) and "refused" not in odds
    assert all(len(line) <= 80 for line in res.output.splitlines())


def test_issue22_no_action_left_in_the_tracker_log_names_the_cells(tmp_path: Path) -> None:
    import openpyxl

    data = make_battle(2, orders_per_cohort=4)
    src = tmp_path / "battle.yaml"
    src.write_text(yaml.safe_dump(data))
    wb = tmp_path / "battle.xlsx"
    assert runner.invoke(app, ["new", str(wb), "--from", str(src)]).exit_code == 0
    res = runner.invoke(app, ["resolve", str(wb)])
    assert res.exit_code == 0, res.output
    book = openpyxl.load_workbook(wb)
    said = [str(c.value) for name in ("Orders", "Log") for row in book[name].iter_rows() for c in row
            if isinstance(c.value, str) and "no action left" in c.value]
    assert said and all("used by Orders!B4 (Melee Attack on Cohort 1)" in s and "orders[" not in s for s in said), said
