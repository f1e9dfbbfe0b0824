"""Issue 23: a server's step remembers the battles of the States it loaded (by their JSON),
so a click that reads back the State the last one wrote loads nothing again.  That must
change no answer: a warm server answers exactly as a cold one, a changed State is never
served from memory, and a State that can't be read is refused every time."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import openpyxl
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from exalted_battles import make_exalted_battle  # noqa: E402
from hex_battles import make_hex_battle  # noqa: E402

from sheetsync.app.server import _step
from sheetsync.app.workbook_cli import run_workbook, system_tracker_from
from sheetsync.backends.xlwings_remote import apply_actions, payload_from_openpyxl
from sheetsync.core.errors import InputError
from sheetsync.core.registry import find_system
from sheetsync.sheets import session as ss

MAKE = {"hexwar": lambda: make_hex_battle(12), "exalted": lambda: make_exalted_battle(6)}


def _payload(system_id: str, tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    system = find_system(system_id)
    path = tmp_path / "t.xlsx"
    system_tracker_from(path, system, system.load(MAKE[system_id](), "test"))
    run_workbook("build", path)
    wb = openpyxl.load_workbook(path)
    return wb, payload_from_openpyxl(wb, "VBA")


def _answer(action: str, payload: dict[str, Any]) -> dict[str, Any]:
    got: dict[str, Any] = json.loads(_step(action, json.loads(json.dumps(payload, default=str))).body)
    return got


@pytest.mark.parametrize("system_id", ["hexwar", "exalted"])
def test_issue23_a_warm_server_answers_each_step_as_a_cold_one(system_id: str, tmp_path: Path) -> None:
    wb, payload = _payload(system_id, tmp_path)
    ss._STORED.clear()
    cold = _answer("resolve", payload)
    assert any(a["func"] == "setValues" for a in cold["actions"])
    assert ss._STORED  # the State's battle is remembered
    warm = _answer("resolve", payload)
    assert warm == cold
    # the next click reads back the State the last one wrote: warm and cold alike
    apply_actions(wb, cold, alerts=[])
    after = payload_from_openpyxl(wb, "VBA")
    warm_undo = _answer("undo", after)
    ss._STORED.clear()
    assert _answer("undo", after) == warm_undo


def test_issue23_a_changed_state_is_not_served_from_memory() -> None:
    loads: list[dict[str, Any]] = []

    def load(data: dict[str, Any]) -> tuple[str, ...]:
        loads.append(data)
        return tuple(sorted(data))

    a = ss.Session(mark="exalted/1", battle={"units": [1], "tick": 0})
    assert ss.stored_battle(a, load) == ("tick", "units") and len(loads) == 1
    again = ss.Session(mark="exalted/1", battle={"tick": 0, "units": [1]})  # the same JSON, keys in any order
    assert ss.stored_battle(again, load) == ("tick", "units") and len(loads) == 1
    changed = ss.Session(mark="exalted/1", battle={"units": [1], "tick": 1})
    ss.stored_battle(changed, load)
    assert len(loads) == 2
    other = ss.Session(mark="hexwar/1", battle={"units": [1], "tick": 0})  # another system's: its own loader
    ss.stored_battle(other, load)
    assert len(loads) == 3


def test_issue23_a_state_that_cannot_be_loaded_is_refused_every_time() -> None:
    calls = []

    def load(data: dict[str, Any]) -> Any:
        calls.append(1)
        raise InputError([])

    bad = ss.Session(mark="hexwar/1", battle={"units": "x"})
    for _ in range(2):
        with pytest.raises(InputError):
            ss.stored_battle(bad, load)
    assert len(calls) == 2
