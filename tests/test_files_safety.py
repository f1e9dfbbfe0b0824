"""Files on disk never lose the battle (issue 8, items 1, 4, 5 and 7): refusing to write a
blank tracker over a battle, an atomic ``.bak``, no temporary files left behind, symbolic
links written through, read-only workbooks refused, damaged sheets refused."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.workbook_cli import new_workbook, run_workbook
from sheetsync.core.errors import BackendError, BattleStateError
from sheetsync.sheets import disk as files
from sheetsync.sheets.disk import atomic_write_bytes, clear_stale_temps, example_path

runner = CliRunner()


_MADE: dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def _made(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Make each kind of resolved tracker once per module; tests work on copies."""
    folder = tmp_path_factory.mktemp("made")
    for suffix in (".xlsx", ".xlsm"):
        wb = folder / f"made{suffix}"
        new_workbook(wb, example_path())
        run_workbook("resolve", wb)
        _MADE[suffix] = wb


def _resolved(tmp_path: Path, name: str = "battle.xlsx") -> Path:
    """A tracker with phase 1 resolved (a battle in progress), and its .bak."""
    made = _MADE[Path(name).suffix]
    wb = tmp_path / name
    shutil.copy(made, wb)
    shutil.copy(made.with_name(made.name + ".bak"), wb.with_name(name + ".bak"))
    return wb


def _phase(wb: Path) -> int:
    from sheetsync.app.usecases import export
    from sheetsync.app.workbook_cli import excel_backend

    return int(export(excel_backend(wb))["next_phase"])


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- item 1: template and new never overwrite a battle ------------------------------------


@pytest.mark.parametrize("command", [["template"], ["template", "--macros"], ["new", "--from", str(example_path())]])
def test_issue8_1_template_and_new_refuse_an_existing_workbook(tmp_path: Path, command: list[str]) -> None:
    wb = _resolved(tmp_path, "battle.xlsm" if "--macros" in command else "battle.xlsx")
    wb.with_name(wb.name + ".bak").unlink()
    before = wb.read_bytes()
    res = runner.invoke(app, [command[0], str(wb), *command[1:]])
    assert res.exit_code == 1
    assert f"{wb} already exists" in " ".join(str(res.exception).split())
    assert "nothing was written" in str(res.exception) and "--force" in str(res.exception)
    assert wb.read_bytes() == before
    assert not wb.with_name(wb.name + ".bak").exists()


def test_issue8_1_template_force_replaces_and_keeps_the_battle_as_bak(tmp_path: Path) -> None:
    wb = _resolved(tmp_path)
    before = wb.read_bytes()
    res = runner.invoke(app, ["template", str(wb), "--force"])
    assert res.exit_code == 0, res.output
    assert wb.with_name("battle.xlsx.bak").read_bytes() == before
    with pytest.raises(BattleStateError, match="no cohorts yet"):  # a blank tracker now
        _phase(wb)
    shutil.copy(wb.with_name("battle.xlsx.bak"), tmp_path / "restored.xlsx")
    assert _phase(tmp_path / "restored.xlsx") == 2  # the battle is all there in the backup


def test_issue8_1_new_force_replaces_in_one_write_and_keeps_the_old_file(tmp_path: Path) -> None:
    wb = _resolved(tmp_path)
    before = wb.read_bytes()
    res = runner.invoke(app, ["new", str(wb), "--from", str(example_path()), "--force"])
    assert res.exit_code == 0, res.output
    assert wb.with_name("battle.xlsx.bak").read_bytes() == before  # not the blank template
    assert _phase(wb) == 1
    assert _temps(tmp_path) == []


# -- item 4: the .bak is atomic, temporary files never stay ---------------------------------


def test_issue8_4_a_crash_while_writing_the_bak_keeps_the_good_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    wb = _resolved(tmp_path)
    bak = wb.with_name("battle.xlsx.bak")
    good_bak, good = bak.read_bytes(), wb.read_bytes()

    real_copy = shutil.copyfileobj

    def torn_copy(src: Any, dst: Any, *args: Any) -> None:
        if getattr(src, "name", None) != str(wb):  # only the copy of the workbook into its .bak
            return real_copy(src, dst, *args)
        dst.write(b"PK\x03\x04 half a backup")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.shutil, "copyfileobj", torn_copy)
    with pytest.raises(BackendError, match="No space left on device"):
        run_workbook("undo", wb)
    assert bak.read_bytes() == good_bak
    assert wb.read_bytes() == good
    assert _temps(tmp_path) == []


def test_issue8_4_a_failed_rename_of_the_bak_leaves_no_temporary_file(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    wb = _resolved(tmp_path)
    bak = wb.with_name("battle.xlsx.bak")
    good_bak, good = bak.read_bytes(), wb.read_bytes()
    real_replace = os.replace

    def failing(src: str, dst: str) -> None:
        if str(dst).endswith(".bak"):
            raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(BackendError, match="can't save"):
        run_workbook("undo", wb)
    assert (bak.read_bytes(), wb.read_bytes()) == (good_bak, good)
    assert _temps(tmp_path) == []


def test_issue8_4_stale_temporary_files_of_dead_runs_are_cleared_and_only_those(tmp_path: Path) -> None:
    wb = _resolved(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".battle.xlsx.{dead_pid}-abc123_x.tmp"
    live = tmp_path / f".battle.xlsx.{os.getppid()}-zzz999.tmp"  # a live process (pytest's parent)
    legacy_old = tmp_path / ".battle.xlsx.k2j3h4.tmp"  # an older sheetsync's name, no process id
    legacy_new = tmp_path / ".battle.xlsx.q9w8e7.tmp"
    others = [tmp_path / ".other.xlsx.1-abc.tmp", tmp_path / "battle.xlsx.tmp", tmp_path / ".battle.xlsx.1-a.tmp.keep"]
    for p in [stale, live, legacy_old, legacy_new, *others]:
        p.write_bytes(b"junk")
    old = time.time() - 3600
    os.utime(legacy_old, (old, old))
    run_workbook("undo", wb)
    assert not stale.exists() and not legacy_old.exists()
    assert live.exists() and legacy_new.exists() and all(p.exists() for p in others)
    assert clear_stale_temps(wb) == []  # nothing more to clear


def test_issue8_4_a_real_kill_during_a_save_leaves_the_workbook_whole_and_the_next_run_cleans_up(
        tmp_path: Path) -> None:
    """A step killed with SIGKILL between writing its temporary file and renaming it: the
    workbook is as before, its .bak is a whole copy of it, and the next step removes the
    orphan (issue 8, item 4)."""
    wb = _resolved(tmp_path)
    bak = wb.with_name("battle.xlsx.bak")
    good = wb.read_bytes()
    ready = tmp_path / "ready"
    script = textwrap.dedent(f"""
        import os, sys, time
        from pathlib import Path
        real = os.replace
        def stall(src, dst):
            if str(dst) == {str(wb)!r}:
                Path({str(ready)!r}).write_text(str(src))
                time.sleep(60)
            real(src, dst)
        os.replace = stall
        sys.argv = ["sheetsync", "undo", {str(wb)!r}]
        from sheetsync.app.cli import main
        main()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert ready.exists(), "the step never reached its save"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    orphan = Path(ready.read_text())
    assert orphan.exists() and orphan.name.startswith(f".battle.xlsx.{proc.pid}-")
    assert wb.read_bytes() == good
    assert bak.read_bytes() == good  # the new .bak landed whole: a copy of the workbook as it was
    run_workbook("undo", wb)  # the lock died with the process: no wait, and the orphan goes
    assert not orphan.exists() and _temps(tmp_path) == []
    assert _phase(wb) == 1


# -- item 5: symbolic links and read-only workbooks -----------------------------------------


def test_issue8_5_a_symlinked_workbook_is_written_through_to_its_target(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    synced.mkdir()
    target = _resolved(synced, "real.xlsx")
    target.with_name("real.xlsx.bak").unlink()
    link = tmp_path / "battle.xlsx"
    link.symlink_to(Path("synced") / "real.xlsx")  # a relative link, as a synced folder would hold
    res = runner.invoke(app, ["undo", str(link)])
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == str(Path("synced") / "real.xlsx")
    assert _phase(target) == 1
    assert (synced / "real.xlsx.bak").exists()  # the .bak sits beside the target
    assert not (tmp_path / "battle.xlsx.bak").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["battle.xlsx", "synced"]


def test_issue8_5_a_read_only_workbook_is_refused_not_replaced(tmp_path: Path) -> None:
    wb = _resolved(tmp_path)
    wb.with_name("battle.xlsx.bak").unlink()
    wb.chmod(0o444)
    before = wb.read_bytes()
    with pytest.raises(BackendError) as err:
        run_workbook("undo", wb)
    assert str(err.value).startswith(f"{wb} is read-only")
    assert "nothing was written" in str(err.value)
    assert wb.read_bytes() == before and stat.S_IMODE(wb.stat().st_mode) == 0o444
    assert not wb.with_name("battle.xlsx.bak").exists() and _temps(tmp_path) == []


def test_issue8_5_a_read_only_battle_file_is_refused_too(tmp_path: Path) -> None:
    out = tmp_path / "next.yaml"
    out.write_text("seed: 1\n", encoding="utf-8")
    out.chmod(0o444)
    with pytest.raises(BackendError, match="is read-only"):
        atomic_write_bytes(out, b"seed: 2\n")
    assert out.read_text(encoding="utf-8") == "seed: 1\n"


def test_issue8_11_a_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(BackendError) as err:
        atomic_write_bytes(tmp_path / "nope" / "b.yaml", b"x")
    assert f"the folder {tmp_path / 'nope'} does not exist" in str(err.value)


# -- item 7: a damaged sheet is an error, not an empty sheet -------------------------------


def _sheet_part(wb: Path, title: str) -> str:
    book = openpyxl.load_workbook(wb)
    return f"xl/worksheets/sheet{book.sheetnames.index(title) + 1}.xml"


def _replace_part(wb: Path, member: str, data: bytes | None) -> None:
    src = wb.with_name("src.zip")
    shutil.copy(wb, src)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(wb, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename == member:
                if data is not None:
                    zout.writestr(info, data)
            else:
                zout.writestr(info, zin.read(info.filename))
    src.unlink()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "not a worksheet", "no cells", "missing"])
@pytest.mark.parametrize("sheet", ["Log", "House Rules", "State"])
def test_issue8_7_a_damaged_sheet_is_refused_and_nothing_is_written(tmp_path: Path, sheet: str, damage: str) -> None:
    wb = _resolved(tmp_path)
    member = _sheet_part(wb, sheet)
    with zipfile.ZipFile(wb) as z:
        xml = z.read(member)
    data = {"garbage": b"\x00garbage\xff", "truncated": xml[: len(xml) // 2],
            "not a worksheet": b"<html><body>oops</body></html>",
            "no cells": xml[: xml.index(b"<sheetData")] + b"</worksheet>", "missing": None}[damage]
    _replace_part(wb, member, data)
    before = wb.read_bytes()
    for action in ("resolve", "undo", "end"):
        with pytest.raises(BackendError) as err:
            run_workbook(action, wb)
        text = str(err.value)
        assert text.startswith(f"{wb}: the sheet {sheet!r} is damaged"), text
        assert member in text and "nothing was written" in text
    assert wb.read_bytes() == before


def test_issue8_7_damaged_styles_are_refused(tmp_path: Path) -> None:
    wb = _resolved(tmp_path)
    with zipfile.ZipFile(wb) as z:
        xml = z.read("xl/styles.xml")
    _replace_part(wb, "xl/styles.xml", xml[:-40])
    before = wb.read_bytes()
    with pytest.raises(BackendError, match="the style table is damaged"):
        run_workbook("undo", wb)
    assert wb.read_bytes() == before


def test_issue8_7_workbooks_sheetsync_writes_pass_the_check(tmp_path: Path) -> None:
    from sheetsync.backends.excel import check_workbook_parts

    for wb in (_resolved(tmp_path), _resolved(tmp_path, "m.xlsm")):
        check_workbook_parts(wb)  # no error: every part is whole
