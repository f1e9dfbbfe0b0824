"""``sheetsync status`` and the terminal tables, at 80 columns: nothing cut to ``Nig…``."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.workbook_cli import new_workbook, run_workbook
from sheetsync.core.dice import RandomRoller
from sheetsync.sheets.disk import example_path, read_data_file
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import aftermath, resolve_phase
from sheetsync.systems.bbn.views import (
    health_bar,
    print_aftermath,
    print_phase,
    print_pools,
    print_standing,
    print_status,
)

runner = CliRunner()
BATTLE = load_battle(read_data_file(example_path()))
NAMES = [c.name for c in BATTLE.cohorts]
MEMBERS = [m.name for c in BATTLE.cohorts for m in c.members]


def _console(width: int = 80) -> Console:
    return Console(width=width, record=True, color_system=None)


def _lines_with_whole_names(text: str, names: list[str]) -> None:
    assert "…" not in text
    for name in names:
        assert any(name in line for line in text.splitlines()), name


def test_status_shows_phase_health_bars_states_temper_and_actions_at_80_columns() -> None:
    """Actions 4, R11, Tasks 5.12: the battle at a glance, whole names at 80 columns."""
    result = resolve_phase(BATTLE)
    con = _console()
    print_status(con, result.battle, status="Phase 1 resolved: type the orders of phase 2")
    text = con.export_text()
    assert text.splitlines()[0].startswith("Phase 2 to resolve")
    _lines_with_whole_names(text, NAMES + MEMBERS)
    assert max(len(line) for line in text.splitlines()) <= 80
    night = result.battle.state["Night Watch"]
    max_h = result.battle.pools["Night Watch"].pools["health"]
    assert f"{night.health}/{max_h} Health" in text
    assert f"Temper {night.temper}" in text
    assert "Actions left 4" in text  # four Active members (Actions 4)
    assert "Active 4: Marcus, Isabel, Theo, Wren" in text


def test_health_bar_is_full_empty_and_in_between() -> None:
    assert health_bar(10, 10, width=10).plain == "█" * 10
    assert health_bar(-3, 10, width=10).plain == "░" * 10
    assert health_bar(5, 10, width=10).plain == "█" * 5 + "░" * 5


@pytest.mark.parametrize("width", [80, 100])
def test_pools_phase_standing_and_aftermath_tables_never_cut_names(width: int) -> None:
    """Today's tables truncated cohort names to ``Nig… Wat…`` at 80 columns."""
    result = resolve_phase(BATTLE)
    con = _console(width)
    print_pools(con, BATTLE.pools.values(), breakdown=False)
    print_phase(con, result)
    print_standing(con, result.battle)
    print_aftermath(con, aftermath(result.battle, RandomRoller("status-test")))
    text = con.export_text()
    _lines_with_whole_names(text, NAMES + MEMBERS)
    assert "Lanterns" in text and "support" in text  # the Support cohort says so (no markup eaten)
    assert "Melee Attack" in text and "Kill 'Em All" in text


def test_cli_status_on_a_workbook_writes_nothing(tmp_path: Path) -> None:
    wb = tmp_path / "battle.xlsx"
    new_workbook(wb, example_path())
    run_workbook("resolve", wb)
    before = wb.read_bytes()
    res = runner.invoke(app, ["status", str(wb)])
    assert res.exit_code == 0, res.output
    assert "Phase 2 to resolve" in res.output
    assert "Phase 1 resolved" in res.output  # the Battle sheet's status line
    assert "Ghoul Pack" in res.output
    assert wb.read_bytes() == before


def test_cli_status_on_a_battle_file() -> None:
    res = runner.invoke(app, ["status", str(example_path())])
    assert res.exit_code == 0, res.output
    assert "Phase 1 to resolve" in res.output and "none resolved yet" in res.output
