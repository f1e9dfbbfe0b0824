"""The README's Tracker steps, followed literally on a fresh tracker, resolve a phase with
no refused order (R24: the Ranges step is the one a new Tracker used to miss).

The test reads the commands and numbered steps from the README's "For Trackers: the
workbook" block, runs each ``sheetsync`` line through the CLI in order, and does each
"fill in" / "type" step the way a Tracker would, by typing into the cells it names.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pytest
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.systems.bbn.tracker.layout import layout

ROOT = Path(__file__).resolve().parent.parent
LAY = layout()
runner = CliRunner()

COHORTS = [("Night Watch", "players", "Marcus"), ("Iron Hand", "players", "Dmitri"), ("Ghouls", "Sabbat", "G1")]
CHARACTERS = [
    ("Night Watch", "Marcus", {"temper": 12, "willpower_spent": 3, "ability:Brawl": 4, "discipline:Potence": 2}),
    ("Night Watch", "Ana", {"temper": 10, "ability:Melee": 3}),
    ("Night Watch", "Ben", {"temper": 10}),
    ("Iron Hand", "Dmitri", {"temper": 10, "ranged_attack": "Yes", "ability:Firearms": 3}),
    ("Iron Hand", "Lena", {"temper": 10, "ranged_attack": "Yes"}),
    ("Iron Hand", "Oskar", {"temper": 10, "ranged_attack": "Yes"}),
    ("Ghouls", "G1", {"temper": 8}), ("Ghouls", "G2", {"temper": 8}), ("Ghouls", "G3", {"temper": 8}),
]
BANDS = {frozenset({"Night Watch", "Ghouls"}): "Personal", frozenset({"Iron Hand", "Ghouls"}): "Distanced",
         frozenset({"Night Watch", "Iron Hand"}): "Distanced"}
"""What the README's Ranges step says: Personal for melee, Distanced for ranged."""
ORDERS = [
    {"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghouls"},
    {"cohort": "Iron Hand", "task": "Ranged Attack", "target": "Ghouls"},
    {"cohort": "Ghouls", "task": "Melee Attack", "target": "Night Watch", "roll": 6},
]


def tracker_steps() -> list[str]:
    """The lines of the README's Tracker block: commands, and the numbered steps."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## For Trackers: the workbook", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, "the Tracker section has a bash block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def _edit(path: Path, fill: Callable[[openpyxl.Workbook], None]) -> None:
    wb = openpyxl.load_workbook(path)
    fill(wb)
    wb.save(path)


def fill_cohorts_and_characters(wb: openpyxl.Workbook) -> None:
    setup, chars = LAY.block("Cohorts_Setup"), LAY.block("Characters_Table")
    for i, (name, side, sergeant) in enumerate(COHORTS):
        for key, value in (("name", name), ("side", side), ("support", "No"), ("sergeant", sergeant)):
            wb["Cohorts"][f"{setup.letter(key)}{setup.first_row + i}"] = value
    for i, (cohort, name, traits) in enumerate(CHARACTERS):
        for key, value in {"cohort": cohort, "name": name, **traits}.items():
            wb["Characters"][f"{chars.letter(key)}{chars.first_row + i}"] = value


def fill_ranges(wb: openpyxl.Workbook) -> None:
    block = LAY.block("Ranges_Table")
    for i, (pair, band) in enumerate(BANDS.items()):
        a, b = sorted(pair)
        for key, value in (("a", a), ("b", b), ("band", band)):
            wb["Ranges"][f"{block.letter(key)}{block.first_row + i}"] = value


def type_orders(wb: openpyxl.Workbook) -> None:
    block = LAY.block("Orders_Table")
    for i, order in enumerate(ORDERS):
        for key, value in order.items():
            wb["Orders"][f"{block.letter(key)}{block.first_row + i}"] = value


def _outcomes(path: Path) -> list[object]:
    block = LAY.block("Orders_Table")
    ws = openpyxl.load_workbook(path)["Orders"]
    return [ws[f"{block.letter('outcome')}{block.first_row + i}"].value for i in range(len(ORDERS))]


def test_r24_readme_tracker_steps_resolve_a_phase_with_no_refused_order(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    steps = tracker_steps()
    done: list[str] = []
    resolved = False
    for line in steps:
        if line.startswith("#"):
            words = line.lower()
            if "fill in cohorts" in words and "characters" in words:
                _edit(tmp_path / "battle.xlsx", fill_cohorts_and_characters)
                done.append("cohorts")
            if "fill in ranges" in words:
                _edit(tmp_path / "battle.xlsx", fill_ranges)
                done.append("ranges")
            if "orders" in words and "type" in words:
                _edit(tmp_path / "battle.xlsx", type_orders)
                done.append("orders")
            continue
        command = shlex.split(line, comments=True)
        assert command[0] == "sheetsync", line
        res = runner.invoke(app, command[1:])
        assert res.exit_code == 0, f"{line}\n{res.output}"
        if command[1] == "resolve":
            outcomes = _outcomes(tmp_path / "battle.xlsx")
            assert "refused" not in outcomes, outcomes
            assert all(o in ("hit", "miss") for o in outcomes), outcomes
            resolved = True
    assert done == ["cohorts", "ranges", "orders"], "the README names each step, Ranges before Build"
    assert resolved


def test_r24_without_the_ranges_step_the_orders_are_refused(tmp_path: Path) -> None:
    """The regression the README step prevents: skip Ranges and every order is refused."""
    wb = tmp_path / "battle.xlsx"
    assert runner.invoke(app, ["template", str(wb)]).exit_code == 0
    _edit(wb, fill_cohorts_and_characters)
    assert runner.invoke(app, ["build", str(wb)]).exit_code == 0
    _edit(wb, type_orders)
    assert runner.invoke(app, ["resolve", str(wb)]).exit_code == 0
    assert _outcomes(wb) == ["refused"] * len(ORDERS)
