"""Issue 22: before the first resolve the Exalted tracker shows which long tick each unit
acts on and what decides it (Join War, E4), and ``status``, ``pools``, ``check`` and the
tracker agree with what that resolve then does; an order typed for a tick on which its
unit does not act is refused naming the tick to type (E5).

The battle is test_exalted_tracker's: Cathak Talon's Join War is typed (9 7 10 2 4: 4
successes of Wits 3 + War 4 − Magnitude 2 = 5 dice), Bandit Mob's one die (Wits 2 + War 2 −
Magnitude 3) is rolled from seed 6 and shows 1: 0 successes, so the talon acts on long
tick 0 and the mob on min(6, 4 − 0) = 4."""

from __future__ import annotations

import copy
from typing import Any

from test_exalted_tracker import FILE, LAY, ORDERS, SUBJECT, blank, cell, type_battle, typed_rows

from sheetsync.app.usecases import check_steps, run_steps
from sheetsync.systems.exalted.files.loader import load_battle
from sheetsync.systems.exalted.rules.battle import acting_ticks, odds_json, resolve, units_json
from sheetsync.systems.exalted.rules.breakdowns import pools_json
from sheetsync.systems.exalted.system import SYSTEM

WANT = {"Cathak Talon": 0, "Bandit Mob": 4}


def _ticks_board(backend: Any) -> list[list[Any]]:
    area = LAY.areas["Ticks_Board"]
    return [[cell(backend, f"Ticks!{chr(64 + area.first_col + c)}{area.first_row + r}") for c in range(3)]
            for r in range(6)]


def test_e4_e5_before_the_first_resolve_every_view_shows_the_tick_join_war_gives() -> None:
    """E4, E5: after Build Units the Units sheet's Next tick is 0 and 4 and its Status says
    the Join War roll (typed, or from the seed); the Ticks board marks each unit's tick;
    the Battle sheet's status names them.  ``pools``, ``status`` (units_json) and the engine
    say the same, and the first resolve's Join War gives exactly those ticks."""
    backend = blank()
    type_battle(backend)
    run_steps(SUBJECT, "build", backend)
    units = LAY.block("Units_Table")
    assert [cell(backend, units.cell(i, "next_tick")) for i in range(2)] == [0, 4]
    talon, mob = (cell(backend, units.cell(i, "status")) for i in range(2))
    assert talon == "ready: Join War 4 of 5 dice (typed): acts on long tick 0 (E4)"
    assert mob == "ready: Join War 0 of 1 dice (from the seed): acts on long tick 4 (E4)"
    board = _ticks_board(backend)
    assert board[0] == ["Tick", "Cathak Talon", "Bandit Mob"]
    assert board[1] == [0, "acts (Join War): Attack", None]
    assert board[5] == [4, None, "acts (Join War): Attack"]
    status = cell(backend, "Battle!B4")
    assert "Cathak Talon acts on long tick 0, Bandit Mob acts on long tick 4" in status

    battle = load_battle(copy.deepcopy(FILE))
    assert acting_ticks(battle)[0] == WANT
    assert pools_json(battle)["acting"]["ticks"] == WANT
    assert {u["name"]: u["next_tick"] for u in units_json(battle)} == WANT
    assert all("odds" in row for row in odds_json(battle))  # the mob's tick-4 attack is priced, not refused
    run_steps(SUBJECT, "resolve", backend)
    join = next(e for e in resolve(battle).events if e["kind"] == "Join War")
    assert {r["unit"]: r["tick"] for r in join["rolls"]} == WANT
    assert [cell(backend, units.cell(i, "next_tick")) for i in range(2)][1] == 4


def test_e4_the_join_war_preview_follows_the_seed() -> None:
    """E1, E4: with another seed the mob's rolled die changes, and so may its tick: the
    preview is the resolve's own roll, whatever the seed."""
    for seed in (1, 2, 3, 11, "x"):
        battle = load_battle({**copy.deepcopy(FILE), "seed": seed})
        join = next(e for e in resolve(battle).events if e["kind"] == "Join War")
        assert acting_ticks(battle)[0] == {r["unit"]: r["tick"] for r in join["rolls"]}


def test_e5_an_order_for_a_tick_its_unit_does_not_act_on_is_refused_with_the_tick_to_type() -> None:
    """E4, E5: the mob's attack typed for long tick 2 (it acts on 4).  ``check`` refuses it
    at its Unit cell, naming the Tick cell and the tick to type; the first resolve refuses
    it the same way (it could never run: a unit's next tick never comes sooner) and stamps
    the row; ``pools`` refuses its odds with the file's path; the battle file's ``check``
    names ``orders[1].tick``."""
    backend = blank()
    type_battle(backend)
    orders = LAY.block("Orders_Table")
    backend.write_ranges([typed_rows("Orders_Table", [{**ORDERS[1], "tick": 2}], offset=1)])
    run_steps(SUBJECT, "build", backend)
    tick_cell = orders.cell(1, "tick")
    want = f"Bandit Mob acts on long tick 4, not 2: a unit acts only on its tick; type 4 in {tick_cell}"
    report = check_steps(SUBJECT, backend)
    assert [r.where for r in report.refusals] == [orders.cell(1, "unit")]
    assert report.refusals[0].reason == f"{want} (E4, E5)"
    run_steps(SUBJECT, "resolve", backend)
    assert cell(backend, orders.cell(1, "outcome")) == "refused"
    assert cell(backend, orders.cell(1, "result")) == f"refused: {want} (E4, E5)"
    assert cell(backend, orders.cell(1, "resolved")) == 0
    assert cell(backend, orders.cell(2, "resolved")) is None  # the talon's tick-5 order waits

    data = copy.deepcopy(FILE)
    data["orders"][1]["tick"] = 2
    battle = load_battle(data)
    count, refused = SYSTEM.check_file(battle)
    assert count == 2 and refused == [("orders[1]", "Bandit Mob", "Attack",
                                       "Bandit Mob acts on long tick 4, not 2: a unit acts only on its tick; type 4 "
                                       "in orders[1].tick (E4, E5)")]
    odds = next(r for r in odds_json(battle) if r["order"] == 1)
    assert odds["refused"] == ("Bandit Mob acts on long tick 4, not 2: a unit acts only on its tick; type 4 in "
                               "orders[1].tick")


def test_e5_an_order_for_the_tick_being_resolved_names_the_tick_to_type() -> None:
    """E5: the mob's attack typed for long tick 0, which the talon alone acts on: refused at
    its Unit cell, naming the Tick cell and 4."""
    backend = blank()
    type_battle(backend)
    orders = LAY.block("Orders_Table")
    backend.write_ranges([typed_rows("Orders_Table", [{**ORDERS[1], "tick": 0}], offset=1)])
    run_steps(SUBJECT, "build", backend)
    report = check_steps(SUBJECT, backend)
    assert [r.where for r in report.refusals] == [orders.cell(1, "unit")]
    assert report.refusals[0].reason == (f"Bandit Mob acts on long tick 4, not 0: a unit acts only on its tick; type "
                                         f"4 in {orders.cell(1, 'tick')} (E5)")
