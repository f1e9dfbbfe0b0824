"""Two steps on one workbook at once (issue 8, item 3): an OS-level lock taken before the
read and released after the save, so the second step waits and then sees the first one's
result.  Both steps are real processes here."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from sheetsync.app import usecases
from sheetsync.app.workbook_cli import excel_backend, new_workbook, run_workbook
from sheetsync.backends.excel import lock_files
from sheetsync.core.errors import BackendError
from sheetsync.sheets.disk import example_path, lock_path
from sheetsync.systems.bbn.tracker.layout import layout

LAY = layout()
PHASE_2 = [
    {"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghoul Pack", "roll": 8},
    {"cohort": "Ghoul Pack", "task": "Melee Attack", "target": "Night Watch", "roll": 2},
    {"cohort": "Iron Hand", "task": "Melee Attack", "target": "Ghoul Pack", "roll": 5},
]


@pytest.fixture(scope="module")
def in_progress(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Phase 1 resolved, phase 2's orders typed below it: both undo and resolve can run."""
    wb = tmp_path_factory.mktemp("made") / "made.xlsx"
    new_workbook(wb, example_path())
    run_workbook("resolve", wb)
    book = openpyxl.load_workbook(wb)
    block = LAY.block("Orders_Table")
    start = block.first_row + len(yaml_orders())
    for i, order in enumerate(PHASE_2):
        for key, value in order.items():
            book["Orders"][f"{block.letter(key)}{start + i}"] = value
    book.save(wb)
    return wb


def yaml_orders() -> list[Any]:
    import yaml

    return list(yaml.safe_load(example_path().read_text(encoding="utf-8"))["orders"])


def _copy(src: Path, dst: Path) -> Path:
    shutil.copy(src, dst)
    return dst


def _log(wb: Path) -> list[tuple[Any, Any]]:
    """(phase, action) of every Log row."""
    ws = openpyxl.load_workbook(wb)["Log"]
    block = LAY.block("Log_Table")
    rows = []
    for r in range(block.first_row, ws.max_row + 1):
        phase, action = ws.cell(row=r, column=1).value, ws.cell(row=r, column=4).value
        if action is not None:
            rows.append((phase, action))
    return rows


def _state(wb: Path) -> dict[str, Any]:
    return dict(usecases.export(excel_backend(wb))["battle"])


def _aftermath(wb: Path) -> list[list[Any]]:
    ws = openpyxl.load_workbook(wb)["Aftermath"]
    return [[c.value for c in row] for row in ws.iter_rows()]


def _both_at_once(wb: Path, first: str, second: str) -> None:
    """Start two real ``sheetsync`` processes on ``wb`` at the same moment; both must succeed."""
    procs = [subprocess.Popen([sys.executable, "-m", "sheetsync", action, str(wb)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for action in (first, second)]
    for action, proc in zip((first, second), procs, strict=True):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (action, out, err)


@pytest.mark.parametrize("attempt", range(3))
def test_issue8_3_resolve_and_undo_at_once_both_stand_as_if_one_after_the_other(
        in_progress: Path, tmp_path: Path, attempt: int) -> None:
    wb = _copy(in_progress, tmp_path / "battle.xlsx")
    before = _log(wb)
    _both_at_once(wb, "resolve", "undo")
    added = _log(wb)[len(before):]
    undos = [phase for phase, action in added if action == "Undo Phase"]
    assert len(undos) == 1, added
    # which ran first: an undo of phase 2 means the resolve had landed (then undone);
    # an undo of phase 1 means the resolve then took phase 1's rows again, and phase 2's
    order = ["resolve", "undo"] if undos[0] == 2 else ["undo", "resolve"]
    assert undos[0] in (1, 2)
    assert any(action == "Melee Attack" for _, action in added)  # the resolve's events are there too
    expected = _copy(in_progress, tmp_path / "sequential.xlsx")
    for action in order:
        run_workbook(action, expected)
    assert _state(wb) == _state(expected)
    assert _log(wb) == _log(expected)
    assert _state(wb)["phase"] == 2


@pytest.mark.parametrize("attempt", range(3))
def test_issue8_3_resolve_and_end_at_once_both_stand_as_if_one_after_the_other(
        in_progress: Path, tmp_path: Path, attempt: int) -> None:
    wb = _copy(in_progress, tmp_path / "battle.xlsx")
    before = _log(wb)
    _both_at_once(wb, "resolve", "end")
    added = _log(wb)[len(before):]
    actions = [action for _, action in added]
    assert actions.count("End Battle") == 1 and "Melee Attack" in actions, added
    order = ["resolve", "end"] if actions.index("Melee Attack") < actions.index("End Battle") else ["end", "resolve"]
    expected = _copy(in_progress, tmp_path / "sequential.xlsx")
    for action in order:
        run_workbook(action, expected)
    assert _state(wb) == _state(expected)
    assert _state(wb)["phase"] == 3  # the resolve stood
    assert _log(wb) == _log(expected)
    assert _aftermath(wb) == _aftermath(expected)  # and so did the end


def _hold_lock(wb: Path) -> subprocess.Popen[str]:
    """Another process holding the step lock of ``wb`` until it is killed."""
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from sheetsync.sheets.disk import file_lock
        with file_lock(Path({str(wb)!r})):
            print("held", flush=True)
            time.sleep(300)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_issue8_3_a_step_that_waits_too_long_gives_up_with_a_clear_error(in_progress: Path, tmp_path: Path) -> None:
    wb = _copy(in_progress, tmp_path / "battle.xlsx")
    before = wb.read_bytes()
    holder = _hold_lock(wb)
    try:
        backend = excel_backend(wb)
        backend.lock_timeout = 0.5
        start = time.monotonic()
        with pytest.raises(BackendError) as err, backend.locked():
            usecases.run("undo", backend)
        assert time.monotonic() - start < 30
        text = str(err.value)
        assert text.startswith(f"{wb}: another sheetsync step has been working on this workbook for over 0.5 s")
        assert "nothing was read or written" in text
        assert wb.read_bytes() == before
        # sheetsync's own lock file is not taken for LibreOffice's or Excel's
        assert lock_path(wb).exists() and lock_files(wb) == []
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    # the lock went with the killed process: the next step runs at once
    start = time.monotonic()
    assert run_workbook("undo", wb).phase == 1
    assert time.monotonic() - start < 30


def test_issue8_3_the_lock_is_held_from_before_the_read_until_after_the_save(in_progress: Path, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A second step started while the first is between its read and its save waits: it is
    not let in until the first one's file is in place."""
    from sheetsync.backends import excel

    wb = _copy(in_progress, tmp_path / "battle.xlsx")
    seen: list[str] = []
    real_save = excel.ExcelBackend.save

    def save_while_another_tries(self: Any) -> None:
        if not seen:
            seen.append("first saving")
            probe = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
                from pathlib import Path
                from sheetsync.sheets.disk import file_lock
                from sheetsync.core.errors import BackendError
                try:
                    with file_lock(Path({str(wb)!r}), 0.3):
                        print("got in")
                except BackendError:
                    print("waited")
            """)], capture_output=True, text=True, timeout=120)
            seen.append(probe.stdout.strip())
        real_save(self)

    monkeypatch.setattr(excel.ExcelBackend, "save", save_while_another_tries)
    run_workbook("undo", wb)
    assert seen == ["first saving", "waited"]
