"""Exalted 2e mass combat on the RuleSystem seam: its id, aliases and steps, its battle-file
commands, and no tracker workbook yet (said plainly, never a traceback)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sheetsync.core.errors import BackendError, BattleStateError, SheetFormatError
from sheetsync.core.registry import find_system, system_ids, tracker_system_ids
from sheetsync.core.system import ACTIONS, RuleSystem
from sheetsync.sheets.backend import MemoryBackend


def test_exalted_is_a_registered_rule_system_with_the_four_steps() -> None:
    system = find_system("exalted")
    assert isinstance(system, RuleSystem) and system.version >= 1
    assert tuple(s.action for s in system.steps) == ACTIONS
    assert [s.caption for s in system.steps] == ["Build Units", "Next Tick", "Undo Tick", "End Battle"]
    assert all(s.sub.isidentifier() for s in system.steps)
    for alias in ("exalted2e", "EX2E", "mass-combat"):
        assert find_system(alias) is system


def test_exalted_has_a_tracker_and_its_steps_run_on_one() -> None:
    """Issue 10: the tracker workbook is the system's; a step on a sheet that is not a
    drawn Exalted tracker is refused with a clear error, not a traceback."""
    system = find_system("exalted")
    assert system.has_tracker is True  # type: ignore[attr-defined]
    assert "exalted" in system_ids() and "exalted" in tracker_system_ids()
    assert system.layout().system == "exalted"
    with pytest.raises((BattleStateError, BackendError, SheetFormatError)):
        system.run_step("build", MemoryBackend())


def test_the_registry_imports_exalted_only_when_asked() -> None:
    code = ("import sys, json; import sheetsync.core.registry as r; r.tracker_system_ids(); r.find_system('hexwar'); "
            "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not any(m.startswith("sheetsync.systems.exalted.rules") for m in json.loads(out.stdout))


def test_exalted_example_is_the_embedded_battle_file() -> None:
    import yaml

    system = find_system("exalted")
    data = yaml.safe_load(system.example_data())
    battle = system.load(data, "example")
    assert data["system"] == "exalted"
    assert [u.name for u in battle.units] == ["Cathak Talon", "Bandit Mob"]
    assert system.dump(battle)["system"] == "exalted"
