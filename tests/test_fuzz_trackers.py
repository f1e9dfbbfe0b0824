"""Issue 26: a small fuzzer over every system's tracker, on every CI run.

For each system a fixed, seeded sample of damaged trackers (``benchmarks/fuzz_trackers.py``:
flipped bits in compressed parts, broken XML, odd values in cells, merged ranges, formulas,
a hand-edited State) each runs one command, the commands taken in turn so that every one
runs at least twice per system.  Each run must succeed or be a clean refusal (one of our
errors, or exit code 1 or 2 without a traceback), and a refusal leaves the workbook and its
``.bak`` byte for byte as they were.  The script runs the same cases by the thousand."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES_PER_SYSTEM = 18


def _fuzz_module() -> Any:
    spec = importlib.util.spec_from_file_location("fuzz_trackers", ROOT / "benchmarks" / "fuzz_trackers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fuzz_trackers", module)
    spec.loader.exec_module(module)
    return module


fz = _fuzz_module()


def test_issue26_fuzz_sample_runs_every_command() -> None:
    assert CASES_PER_SYSTEM >= len(fz.COMMANDS)
    commands = {fz.COMMANDS[case % len(fz.COMMANDS)][0] for case in range(CASES_PER_SYSTEM)}
    assert commands == {"check", "build", "resolve", "undo", "end", "status", "export", "forecast", "report"}


@pytest.mark.parametrize("system_id", fz.SYSTEMS)
def test_issue26_fuzzed_trackers_are_refused_cleanly_or_run(system_id: str, tmp_path: Path) -> None:
    outcomes = [fz.run_case(system_id, case, 26, tmp_path) for case in range(CASES_PER_SYSTEM)]
    crashes = [f"case {o.case} [{o.command}] {o.damage}: {o.detail}" for o in outcomes if o.kind == "crash"]
    assert not crashes, "\n".join(crashes)
    assert {o.kind for o in outcomes} <= {"ok", "refused"}
    assert any(o.kind == "refused" for o in outcomes)  # the damage does reach the readers


def test_issue26_fuzz_judges_a_traceback_and_a_changed_file_as_crashes(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge itself: a foreign exception is a crash, and so is a refusal after the
    file was changed."""
    from sheetsync.app import workbook_cli
    from sheetsync.core.errors import BattleStateError

    build_case = next(c for c in range(len(fz.COMMANDS)) if fz.COMMANDS[c][0] == "build")

    def bug(action: str, path: Path, **_: Any) -> Any:
        raise KeyError("a bug")

    monkeypatch.setattr(workbook_cli, "run_workbook", bug)
    outcome = fz.run_case("hexwar", build_case, 26, tmp_path)
    assert outcome.kind == "crash" and outcome.detail.startswith("KeyError"), outcome

    def scribble_then_refuse(action: str, path: Path, **_: Any) -> Any:
        path.write_bytes(b"half written")
        raise BattleStateError("refused")

    monkeypatch.setattr(workbook_cli, "run_workbook", scribble_then_refuse)
    outcome = fz.run_case("hexwar", build_case, 26, tmp_path)
    assert outcome.kind == "crash" and "changed" in outcome.detail, outcome
