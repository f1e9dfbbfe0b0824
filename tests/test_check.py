"""Issue 8, item 21: Ranges are the first trap.

Build Cohorts warns about every pair of enemy cohorts with no range (R24), and
``sheetsync check FILE`` lists what the next resolve would refuse (R13), and why, while
changing nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from battles import make_battle
from input_trackers import LAY, orders, put, snapshot, two_cohorts
from rich.console import Console
from typer.testing import CliRunner

from sheetsync.app import usecases
from sheetsync.app.check_view import print_check
from sheetsync.app.cli import app
from sheetsync.core.errors import BattleStateError

runner = CliRunner()
NO_RANGE = ("no range is set between Cohort 0 and Cohort 1; the Storyteller sets it: Melee Attack needs Personal range "
            "(R24)")


def _battle_file(tmp_path: Path, *, ranges: bool) -> Path:
    data: dict[str, Any] = make_battle(2, orders_per_cohort=1)
    if not ranges:
        data["ranges"] = []
    src = tmp_path / "battle.yaml"
    src.write_text(yaml.safe_dump(data))
    return src


def _workbook(tmp_path: Path, *, ranges: bool) -> Path:
    wb = tmp_path / "battle.xlsx"
    res = runner.invoke(app, ["new", str(wb), "--from", str(_battle_file(tmp_path, ranges=ranges))])
    assert res.exit_code == 0, res.output
    return wb


# -- Build warns ---------------------------------------------------------------------------------


def test_issue8_item21_r24_build_warns_about_every_enemy_pair_with_no_range() -> None:
    cohorts = [("Night Watch", "players", ["A", "B", "C"]), ("Ghouls", "Sabbat", ["G1", "G2", "G3"]),
               ("Hounds", "Sabbat", ["H1", "H2", "H3"]), ("Scouts", "players", ["S1", "S2", "S3"])]
    backend = two_cohorts(ranges=False, cohorts=cohorts)
    put(backend, "Ranges_Table", 0, "a", "ghouls")  # in any case (R12)
    put(backend, "Ranges_Table", 0, "b", "Night Watch")
    put(backend, "Ranges_Table", 0, "band", "Near")
    report = usecases.run("build", backend)
    assert report.warnings == [
        f"no range is set between {a} and {b}: set one on the Ranges sheet, or every task between them is refused (R24)"
        for a, b in (("Night Watch", "Hounds"), ("Ghouls", "Scouts"), ("Hounds", "Scouts"))]
    assert report.message.endswith(". Warning: 3 enemy pairs with no range yet; set them on the Ranges sheet (R24)")
    assert "Warning: 3 enemy pairs" in str(backend.sheets["Battle"][(5, 2)]), "the Battle sheet says so too"


def test_issue8_item21_build_with_every_range_set_warns_nothing() -> None:
    report = usecases.run("build", two_cohorts())
    assert report.warnings == [] and "Warning" not in report.message


def test_issue8_item21_the_build_command_prints_the_warnings(tmp_path: Path) -> None:
    wb = tmp_path / "b.xlsx"
    assert runner.invoke(app, ["template", str(wb)]).exit_code == 0
    book = openpyxl.load_workbook(wb)
    setup, chars = LAY.block("Cohorts_Setup"), LAY.block("Characters_Table")
    for i, (name, side) in enumerate((("Night Watch", "players"), ("Ghouls", "Sabbat"))):
        book["Cohorts"][setup.cell(i, "name").split("!")[1]] = name
        book["Cohorts"][setup.cell(i, "side").split("!")[1]] = side
        for j in range(3):
            book["Characters"][chars.cell(3 * i + j, "cohort").split("!")[1]] = name
            book["Characters"][chars.cell(3 * i + j, "name").split("!")[1]] = f"{name[0]}{j}"
    book.save(wb)
    res = runner.invoke(app, ["build", str(wb)])
    assert res.exit_code == 0, res.output
    assert "Warning: no range is set between Night Watch and Ghouls" in res.output


# -- check ---------------------------------------------------------------------------------------


def test_issue8_item21_r13_check_lists_each_refused_order_and_changes_nothing(tmp_path: Path) -> None:
    wb = _workbook(tmp_path, ranges=False)
    before, stamp = wb.read_bytes(), os.stat(wb).st_mtime_ns
    res = runner.invoke(app, ["check", str(wb)], terminal_width=80)
    assert res.exit_code == 1, res.output
    assert "Phase 1: 2 of 2 orders would be refused" in res.output
    for cell, cohort in (("Orders!B4", "Cohort 0"), ("Orders!B5", "Cohort 1")):
        line = next(line for line in res.output.splitlines() if cell in line)
        assert cohort in line and "Melee Attack" in line
    assert "no range is set between" in res.output and "Nothing was written" in res.output
    assert wb.read_bytes() == before and os.stat(wb).st_mtime_ns == stamp
    assert not wb.with_name(wb.name + ".bak").exists()


def test_issue8_item21_check_json_gives_cell_cohort_task_and_reason(tmp_path: Path) -> None:
    import json

    res = runner.invoke(app, ["check", str(_workbook(tmp_path, ranges=False)), "--json"])
    assert res.exit_code == 1
    data = json.loads(res.output)
    assert data["phase"] == 1 and data["orders"] == 2 and not data["bad_cells"]
    assert data["refusals"][0] == {"where": "Orders!B4", "cohort": "Cohort 0", "task": "Melee Attack",
                                   "reason": NO_RANGE}


def test_issue8_item21_check_exits_0_when_nothing_would_be_refused(tmp_path: Path) -> None:
    res = runner.invoke(app, ["check", str(_workbook(tmp_path, ranges=True))])
    assert res.exit_code == 0, res.output
    assert "would resolve every order (2); none is refused" in res.output


def test_issue8_item21_check_agrees_with_the_resolve_that_follows() -> None:
    backend = two_cohorts()
    usecases.run("build", backend)
    orders(backend, [{"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghouls", "roll": 10},
                     {"cohort": "Ghouls", "task": "Inspire", "target": "Night Watch", "benefit": "Reroll"},
                     {"cohort": "Ghouls", "task": "Rescue", "member": "G1"}])
    before = snapshot(backend)
    writes = backend.writes
    report = usecases.check(backend)
    assert snapshot(backend) == before and backend.writes == writes
    resolved = usecases.run("resolve", backend)
    assert resolved.result is not None
    refused = [(f"Orders!B{4 + i}", e.cohort, e.task.value, e.reason)
               for i, e in enumerate(resolved.result.events) if e.outcome == "refused"]
    assert refused and [(r.where, r.cohort, r.task, r.reason) for r in report.refusals] == refused


def test_issue8_item21_check_lists_bad_cells_as_a_resolve_would_refuse_them() -> None:
    backend = two_cohorts()
    usecases.run("build", backend)
    orders(backend, [{"cohort": "Night Watch", "task": "Mele Attack", "target": "Ghouls"}])
    report = usecases.check(backend)
    assert report.bad_cells
    assert [(r.where, r.reason) for r in report.refusals] == [
        ("Orders!C4", "task 'Mele Attack' is not a task (did you mean 'Melee Attack'?)")]


def test_issue8_item21_check_with_no_pending_orders_says_so() -> None:
    backend = two_cohorts()
    usecases.run("build", backend)
    with pytest.raises(BattleStateError, match="no pending orders for phase 1"):
        usecases.check(backend)


def test_issue8_item21_check_a_battle_file(tmp_path: Path) -> None:
    src = _battle_file(tmp_path, ranges=False)
    before = src.read_bytes()
    res = runner.invoke(app, ["check", str(src)], terminal_width=80)
    assert res.exit_code == 1
    assert "orders[0]" in res.output and "orders[1]" in res.output
    assert src.read_bytes() == before


def test_issue8_item21_the_check_table_reads_at_80_columns() -> None:
    console = Console(record=True, width=80, force_terminal=False)
    report = usecases.CheckReport(1, 3, [usecases.Refusal("Orders!B4", "Night Watch", "Melee Attack", NO_RANGE)])
    print_check(console, report, "battle.xlsx")
    text = console.export_text()
    assert "Night Watch" in text and "Melee Attack" in text and "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    words = set(text.replace("│", " ").split())
    assert set(NO_RANGE.split()) <= words, "the reason wraps, whole"
