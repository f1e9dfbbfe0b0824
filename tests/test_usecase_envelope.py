"""The use cases written once over any rule system (issue 9, "Generic middle").

The envelope in :mod:`sheetsync.app.usecases` reads a system's read plan in one
``read_ranges``, hands the grids to the system's pure step, and writes the step's updates
(with any extra ones) in one ``write_ranges``; a refusal writes nothing.  First over a tiny
stub system, then over every real system with a tracker.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from sheetsync.app import usecases
from sheetsync.app.gsheet_cli import copy_tracker
from sheetsync.app.workbook_cli import excel_backend, system_tracker_from, tracker_from
from sheetsync.core import registry
from sheetsync.core.errors import BattleStateError, Problem, SheetFormatError
from sheetsync.core.system import StepRefused, TrackerSteps
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import Grid, MemoryBackend, RangeUpdate, parse_range
from sheetsync.sheets.step_report import StepReport

PLAN = ["Fake!A1:B2", "Fake!D1:D1"]


class Recording(MemoryBackend):
    """A memory backend that keeps the ranges of every read and the updates of every write."""

    def __init__(self, sheets: dict[str, dict[tuple[int, int], Any]]) -> None:
        super().__init__(sheets)
        self.read_calls: list[list[str]] = []
        self.write_calls: list[list[RangeUpdate]] = []

    def read_ranges(self, ranges: Sequence[str]) -> list[Grid]:
        self.read_calls.append(list(ranges))
        return super().read_ranges(ranges)

    def write_ranges(self, updates: Sequence[RangeUpdate]) -> None:
        self.write_calls.append(list(updates))
        super().write_ranges(updates)


class StubSteps:
    """The smallest :class:`TrackerSteps`: each step writes its name into ``Fake!C1`` and
    counts the grids it was given; ``fail`` makes every step raise it instead."""

    def __init__(self, fail: Exception | None = None, capacity: Any = None) -> None:
        self.fail = fail
        self.capacity = capacity
        self.seen: list[Sequence[Grid]] = []

    def _go(self, grids: Sequence[Grid]) -> None:
        self.seen.append(grids)
        if self.fail is not None:
            raise self.fail

    def read_plan(self, action: str | None = None) -> list[str]:
        return list(PLAN)

    def step(self, action: str, grids: Sequence[Grid]) -> tuple[StepReport, list[RangeUpdate]]:
        self._go(grids)
        return StepReport(action, 3, f"{action} done"), [RangeUpdate("Fake!C1", [[action]])]

    def check(self, grids: Sequence[Grid]) -> Any:
        self._go(grids)
        return usecases.CheckReport(3, len(grids))

    def export(self, grids: Sequence[Grid]) -> dict[str, Any]:
        self._go(grids)
        return {"top_left": grids[0][0][0]}

    def load_plan(self) -> list[str]:
        return []

    def load(self, battle: Any, grids: Sequence[Grid]) -> tuple[StepReport, list[RangeUpdate]]:
        self._go(grids)
        return StepReport("new", 1, "loaded"), [RangeUpdate("Fake!A1", [[battle]])]


class StubSystem:
    """A registered system whose tracker steps are :class:`StubSteps` (``fake@1``)."""

    id = "fake"
    version = 1
    last: StubSteps | None = None

    def tracker_steps(self, capacity: Any = None) -> StubSteps:
        StubSystem.last = StubSteps(capacity=capacity)
        return StubSystem.last


STUB_SYSTEM = StubSystem()


def _fake() -> Recording:
    return Recording({"Fake": {(1, 1): "typed"}, "State": {}})


def test_issue9_envelope_stub_is_tracker_steps() -> None:
    assert isinstance(StubSteps(), TrackerSteps)


def test_issue9_envelope_one_read_one_write_and_the_extra_updates_ride_along() -> None:
    backend, stub = _fake(), StubSteps()
    extra = RangeUpdate("Fake!E1", [["box cleared"]])
    report = usecases.run_steps(stub, "resolve", backend, extra=[extra])
    assert backend.read_calls == [PLAN] and len(backend.write_calls) == 1
    assert len(stub.seen) == 1 and len(stub.seen[0]) == len(PLAN) and stub.seen[0][0][0][0] == "typed"
    assert backend.sheets["Fake"][(1, 3)] == "resolve" and backend.sheets["Fake"][(1, 5)] == "box cleared"
    assert report.message == "resolve done" and [u.range for u in report.updates] == ["Fake!C1", "Fake!E1"]


@pytest.mark.parametrize("error", [SheetFormatError([Problem("Fake!A1", "holds 'x', not a number")]),
                                   BattleStateError("nothing to undo")], ids=["bad cell", "bad state"])
def test_issue9_envelope_a_refused_step_writes_nothing(error: Exception) -> None:
    backend = _fake()
    before = {s: dict(c) for s, c in backend.sheets.items()}
    with pytest.raises(type(error)):
        usecases.run_steps(StubSteps(fail=error), "undo", backend, extra=[RangeUpdate("Fake!E1", [["x"]])])
    assert backend.read_calls == [PLAN] and backend.write_calls == []
    assert backend.sheets == before


def test_issue9_envelope_a_step_lost_to_a_collision_writes_only_its_repair() -> None:
    """A :class:`StepRefused` is a refusal whose repair is the step's one write; the extra
    updates are not written (the caller reports the refusal itself)."""
    backend = _fake()
    repair = RangeUpdate("Fake!C2", [["repaired"]])
    with pytest.raises(BattleStateError, match="ran at the same moment"):
        usecases.run_steps(StubSteps(fail=StepRefused("Resolve Phase 2 and Undo Phase 1 ran at the same moment",
                                                      [repair])),
                           "resolve", backend, extra=[RangeUpdate("Fake!E1", [["x"]])])
    assert backend.read_calls == [PLAN] and backend.write_calls == [[repair]]
    assert (1, 5) not in backend.sheets["Fake"]


def test_issue9_envelope_check_and_export_read_once_and_write_nothing() -> None:
    backend = _fake()
    assert usecases.check_steps(StubSteps(), backend).orders == len(PLAN)
    assert usecases.export_steps(StubSteps(), backend) == {"top_left": "typed"}
    assert backend.read_calls == [PLAN, PLAN] and backend.write_calls == []


def test_issue9_envelope_load_with_an_empty_plan_reads_nothing_and_writes_once() -> None:
    backend = _fake()
    report = usecases.load_steps(StubSteps(), backend, "the battle")
    assert backend.read_calls == [] and len(backend.write_calls) == 1
    assert backend.sheets["Fake"][(1, 1)] == "the battle" and report.message == "loaded"


def test_issue9_envelope_run_finds_the_system_from_the_mark_with_its_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.SYSTEMS, "fake", f"{__name__}:STUB_SYSTEM")
    monkeypatch.setattr(registry, "_loaded", {})
    backend = _fake()
    backend.write_ranges(steps.mark_updates(STUB_SYSTEM, {"rows": 7}))
    backend.read_calls.clear()
    backend.write_calls.clear()
    report = usecases.run("build", backend, extra=[RangeUpdate("Fake!E1", [["ok"]])])
    assert report.message == "build done"
    assert StubSystem.last is not None and StubSystem.last.capacity == {"rows": 7}
    assert backend.read_calls == [[steps.HEAD_RANGE], PLAN], "the mark, then the system's plan in one read"
    assert len(backend.write_calls) == 1 and backend.sheets["Fake"][(1, 5)] == "ok"


def test_issue9_envelope_an_unknown_action_is_refused_before_any_read() -> None:
    backend = _fake()
    with pytest.raises(BattleStateError, match=r"unknown action 'melee' \(expected one of build, resolve, undo, end\)"):
        usecases.run("melee", backend, StubSteps())
    assert backend.read_calls == [] and backend.write_calls == []


# -- the real systems ------------------------------------------------------------------------

def _memory_tracker(system_id: str, tmp_path: Path) -> tuple[Any, Recording]:
    system = registry.find_system(system_id)
    battle = system.load(yaml.safe_load(system.example_data()))
    origin = tmp_path / "origin.xlsx"
    if system.id == "bbn":
        tracker_from(origin, battle)
    else:
        system_tracker_from(origin, system, battle)
    tracker = steps.detect(excel_backend(origin))
    lay = system.layout(tracker.capacity or None)
    memory = Recording({name: {} for name in lay.sheets})
    copy_tracker(excel_backend(origin), memory, lay)
    memory.read_calls.clear()
    memory.write_calls.clear()
    return system.tracker_steps(tracker.capacity or None), memory


def _columns(text: str) -> tuple[str, int, int]:
    """A range's sheet and columns: a Resolve reads the same ranges as the whole plan, some
    from a later row (issue 23)."""
    rng = parse_range(text)
    return rng.sheet, rng.col1, rng.col2


@pytest.mark.parametrize("system_id", registry.tracker_system_ids())
def test_issue9_envelope_every_system_step_is_one_read_of_its_plan_and_one_write(system_id: str,
                                                                                  tmp_path: Path) -> None:
    """Build, resolve, undo, resolve, end on a memory tracker of each real system: each
    step reads the mark (a memory backend has no ``read_mark``; on Google Sheets it comes
    with the step's read) and then the system's plan for that step in ONE read (the whole
    plan but what the step never reads: issue 12), and writes ONCE."""
    tracker_steps, memory = _memory_tracker(system_id, tmp_path)
    plan = tracker_steps.read_plan()
    assert steps.MARK_RANGE in plan
    for action in ("build", "resolve", "undo", "resolve", "end"):
        tracker_steps.read_from = steps.detect(memory).read_from  # issue 23: where a Resolve starts reading
        own = tracker_steps.read_plan(action)
        memory.read_calls.clear()
        memory.write_calls.clear()
        report = usecases.run(action, memory)
        assert steps.MARK_RANGE in own and {_columns(r) for r in own} <= {_columns(r) for r in plan}, action
        assert memory.read_calls == [[steps.HEAD_RANGE], own], action
        assert len(memory.write_calls) == 1, action
        assert report.updates == memory.write_calls[0], action
    memory.read_calls.clear()
    assert usecases.export_steps(tracker_steps, memory)["battle"]
    assert memory.read_calls == [plan] and len(memory.write_calls) == 1


@pytest.mark.parametrize("system_id", registry.tracker_system_ids())
def test_issue9_envelope_every_system_loads_a_battle_file_in_one_write(system_id: str, tmp_path: Path) -> None:
    """Loading a battle file into a drawn tracker: the mark, the system's load plan (if it
    has one) in one read, one write; the tracker then resolves."""
    tracker_steps, memory = _memory_tracker(system_id, tmp_path)
    system = registry.find_system(system_id)
    report = usecases.load(memory, system.load(yaml.safe_load(system.example_data())))
    plan = tracker_steps.load_plan()
    assert memory.read_calls == [[steps.HEAD_RANGE], *([plan] if plan else [])]
    assert len(memory.write_calls) == 1 and report.action == "new"
    usecases.run("build", memory)
    first = 0 if system_id == "exalted" else 1  # E4: the long ticks count from 0, after Join War
    assert usecases.run("resolve", memory).phase == first


@pytest.mark.parametrize("system_id", registry.tracker_system_ids())
def test_issue9_envelope_every_system_refusal_writes_nothing(system_id: str, tmp_path: Path) -> None:
    """Undo before anything was resolved is refused, on every system, with nothing written."""
    _steps, memory = _memory_tracker(system_id, tmp_path)
    usecases.run("build", memory)
    before = {s: dict(c) for s, c in memory.sheets.items()}
    memory.write_calls.clear()
    with pytest.raises(BattleStateError):
        usecases.run("undo", memory)
    assert memory.write_calls == [] and memory.sheets == before


def test_issue9_envelope_the_battalion_wrappers_read_once_with_their_layout(tmp_path: Path) -> None:
    """``usecases.resolve(backend, lay)`` and the other battalion names are the envelope
    with the battalion steps: one read (the mark is in the plan), one write."""
    tracker_steps, memory = _memory_tracker("bbn", tmp_path)
    lay = tracker_steps.lay  # type: ignore[attr-defined]
    for name, action in (("build_cohorts", "build"), ("resolve", "resolve"), ("undo", "undo"),
                         ("resolve", "resolve"), ("end_battle", "end")):
        memory.read_calls.clear()
        memory.write_calls.clear()
        getattr(usecases, name)(memory, lay)
        assert memory.read_calls == [tracker_steps.read_plan(action)] and len(memory.write_calls) == 1, name


def test_issue9_envelope_usecases_imports_no_rule_system() -> None:
    """The envelope is system-neutral: importing it loads no rule system and no system's
    tracker code, and none is imported at the module's top level."""
    code = "import sys, json; import sheetsync.app.usecases; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    assert [m for m in loaded if m.startswith(("sheetsync.systems", "sheetsync.systems.bbn.tracker", "sheetsync.systems.hexwar"))] == []
    path = Path(__file__).resolve().parent.parent / "sheetsync" / "app" / "usecases.py"
    top = [n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.ImportFrom | ast.Import)]
    names = [(n.module or "") if isinstance(n, ast.ImportFrom) else a.name for n in top for a in n.names]
    assert not [n for n in names if n.startswith(("sheetsync.systems", "sheetsync.systems.bbn.tracker", "sheetsync.systems.hexwar"))]
