"""Issue 8, item 6: nothing past the tracker's fixed blocks is silently dropped.

A value typed below a block (the 121st character, the 401st order ...) is refused with the
block's limit named, and a battle larger than the blocks is refused before anything is
written, until the layout grows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from battles import make_battle
from input_trackers import LAY, blank, orders, put, snapshot, two_cohorts
from typer.testing import CliRunner

from sheetsync.app import usecases
from sheetsync.app.cli import app
from sheetsync.core.errors import BattleStateError, InputError, SheetFormatError
from sheetsync.systems.bbn.files.loader import battle_to_file, load_battle
from sheetsync.systems.bbn.tracker.layout import (
    HISTORY_PHASES,
    MAX_CHARACTERS,
    MAX_COHORTS,
    ORDER_ROWS,
    RANGE_ROWS,
)

runner = CliRunner()


def _refused(backend: Any, action: str) -> list[str]:
    before = snapshot(backend)
    with pytest.raises(SheetFormatError) as info:
        usecases.run(action, backend)
    assert snapshot(backend) == before, "nothing is written when a cell is refused"
    return [str(p) for p in info.value.problems]


def test_issue8_item6_a_character_below_the_characters_block_is_refused_with_the_limit() -> None:
    backend = two_cohorts()
    put(backend, "Characters_Table", MAX_CHARACTERS, "cohort", "Ghouls")
    put(backend, "Characters_Table", MAX_CHARACTERS, "name", "G4")
    got = _refused(backend, "build")
    assert got == [f"Characters!A{3 + MAX_CHARACTERS}: this tracker holds at most {MAX_CHARACTERS} characters "
                   f"(rows 3-{2 + MAX_CHARACTERS}); nothing below them is read. Move this row into an empty row above, "
                   "or put the battle in a battle file: `sheetsync new OUT --from battle.yaml` makes a tracker sized "
                   "to it (up to 600 characters)"]  # issue 9: the limit, and how to get a bigger tracker


def test_issue8_item6_a_value_in_any_column_below_the_block_is_seen() -> None:
    backend = two_cohorts()
    addr = put(backend, "Characters_Table", MAX_CHARACTERS + 30, "discipline:Potence", 3)
    got = _refused(backend, "build")
    assert len(got) == 1 and got[0].startswith(f"{addr}: this tracker holds at most {MAX_CHARACTERS} characters")


def test_issue8_item6_a_25th_cohort_is_refused_on_the_row_under_the_setup_block() -> None:
    backend = two_cohorts()
    addr = put(backend, "Cohorts_Setup", MAX_COHORTS, "name", "Reserves")
    assert addr == f"Cohorts!A{3 + MAX_COHORTS}"
    got = _refused(backend, "build")
    assert got == [f"{addr}: this tracker holds at most {MAX_COHORTS} cohorts (rows 3-{2 + MAX_COHORTS}); nothing "
                   "below them is read. Move this row into an empty row above, or put the battle in a battle file: "
                   "`sheetsync new OUT --from battle.yaml` makes a tracker sized to it (up to 120 cohorts)"]


def test_issue8_item6_the_cohorts_pools_block_below_the_setup_is_not_taken_for_cohorts() -> None:
    backend = two_cohorts()
    usecases.run("build", backend)  # writes the Pools block under the setup
    report = usecases.run("build", backend)
    assert report.message.startswith("Built 2 cohorts")


def test_issue8_item6_an_order_below_the_orders_block_is_refused_with_the_limit() -> None:
    backend = two_cohorts()
    usecases.run("build", backend)
    orders(backend, [{"cohort": "Night Watch", "task": "Move"}])
    orders(backend, [{"cohort": "Ghouls", "task": "Move"}], start=ORDER_ROWS)
    got = _refused(backend, "resolve")
    assert got == [f"Orders!B{4 + ORDER_ROWS}: this tracker holds at most {ORDER_ROWS} orders (rows 4-{3 + ORDER_ROWS}); "
                   "nothing below them is read. Move this row into an empty row above"]


def test_issue8_item6_a_range_below_the_ranges_block_is_refused_with_the_limit() -> None:
    backend = two_cohorts()
    usecases.run("build", backend)
    orders(backend, [{"cohort": "Night Watch", "task": "Move"}])
    put(backend, "Ranges_Table", RANGE_ROWS + 2, "band", "Far")
    got = _refused(backend, "resolve")
    assert got == [f"Ranges!C{3 + RANGE_ROWS + 2}: this tracker holds at most {RANGE_ROWS} ranges "
                   f"(rows 3-{2 + RANGE_ROWS}); nothing below them is read. Move this row into an empty row above"]


@pytest.mark.parametrize(("cohorts", "ranges", "orders_per_cohort", "message"), [
    (MAX_COHORTS + 1, None, 1, f"cohorts: the battle has {MAX_COHORTS + 1} cohorts; a tracker holds at most {MAX_COHORTS}"),
    (24, None, 17, f"orders: the battle has 408 pending orders; a tracker holds at most {ORDER_ROWS}"),
    (24, RANGE_ROWS + 1, 1, f"ranges: the battle has {RANGE_ROWS + 1} ranges; a tracker holds at most {RANGE_ROWS}"),
])
def test_issue8_item6_load_battle_into_refuses_a_battle_larger_than_the_tracker(
        cohorts: int, ranges: int | None, orders_per_cohort: int, message: str) -> None:
    data = make_battle(cohorts, orders_per_cohort=orders_per_cohort)
    if ranges is not None:
        data["ranges"] = (data["ranges"] * 3)[:ranges]
    battle = load_battle(data)
    backend = blank()
    before = snapshot(backend)
    with pytest.raises(InputError) as info:
        usecases.load_battle_into(backend, battle)
    assert message + " (`sheetsync new OUT --from battle.yaml` makes a tracker sized to the battle, up to " in \
        [str(p).rsplit(" ", 1)[0] + " " for p in info.value.problems]  # issue 9: and how to get a bigger one
    assert snapshot(backend) == before and backend.writes == 0


def test_issue8_item6_more_characters_than_the_characters_block_is_refused() -> None:
    data = make_battle(24)  # 24 cohorts of 3, 4 or 5 members: 96 characters
    for c in data["cohorts"]:
        while len(c["members"]) < 6:
            c["members"].append({"name": f"{c['name']} extra {len(c['members'])}"})
    data["house_rules"] = {"allow_any_size": True}
    with pytest.raises(InputError) as info:
        usecases.load_battle_into(blank(), load_battle(data))
    assert [str(p) for p in info.value.problems] == [
        f"cohorts: the battle has 144 characters; a tracker holds at most {MAX_CHARACTERS} (`sheetsync new OUT "
        "--from battle.yaml` makes a tracker sized to the battle, up to 600)"]


def test_issue8_item6_new_from_a_200_cohort_file_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "big.yaml"
    src.write_text(yaml.safe_dump(make_battle(200, orders_per_cohort=1)))
    out = tmp_path / "big.xlsx"
    res = runner.invoke(app, ["new", str(out), "--from", str(src)])
    assert res.exit_code == 1
    assert "the battle has 200 cohorts; a tracker holds at most 120" in str(res.exception) + res.output  # issue 9
    assert not out.exists()


def test_issue8_item6_a_battle_past_the_health_by_phase_rows_is_refused_not_dropped() -> None:
    data = battle_to_file(load_battle(make_battle(2)))
    data["phase"] = HISTORY_PHASES + 1
    backend = blank()
    usecases.load_battle_into(backend, load_battle(data))  # phase 41: 40 resolved, the last chart row
    orders(backend, [{"cohort": "Cohort 0", "task": "Move"}], start=4)
    before = snapshot(backend)
    with pytest.raises(BattleStateError, match=f"this tracker holds {HISTORY_PHASES} phases"):
        usecases.run("resolve", backend)
    assert snapshot(backend) == before
    data["phase"] = HISTORY_PHASES + 2
    with pytest.raises(InputError, match=f"the battle has {HISTORY_PHASES + 1} resolved phases; a tracker holds at "
                                         f"most {HISTORY_PHASES}"):
        usecases.load_battle_into(blank(), load_battle(data))


def test_issue8_item6_the_read_plan_reads_past_each_fixed_block() -> None:
    from sheetsync.systems.bbn.tracker.reader import read_plan

    plan = read_plan(LAY)
    assert "Characters!A3:" in plan[1] and not plan[1][-1].isdigit()
    assert plan[2].endswith(str(3 + MAX_COHORTS))  # one row more than the setup block, not into the Pools block
    assert not plan[3][-1].isdigit() and not plan[4][-1].isdigit()
