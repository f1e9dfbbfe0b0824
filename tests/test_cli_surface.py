"""The command line's surface (issue 8, items 11, 13, 14 and 28): pools and aftermath on a
workbook, unsupported names refused in one line, --out and --seed on a workbook, the real
name printed, --version, -h, flags shown as flags, and errors that lead with the problem."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from sheetsync.app.cli import app, main
from sheetsync.app.workbook_cli import new_workbook, run_workbook
from sheetsync.sheets.disk import example_path

runner = CliRunner()
_MADE: dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def _made(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("made")
    fresh, resolved = folder / "fresh.xlsx", folder / "resolved.xlsx"
    new_workbook(fresh, example_path())
    shutil.copy(fresh, resolved)
    run_workbook("resolve", resolved)
    _MADE.update(fresh=fresh, resolved=resolved)


def _copy(kind: str, dst: Path) -> Path:
    shutil.copy(_MADE[kind], dst)
    return dst


def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sheetsync", *args])
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _all_commands() -> list[list[str]]:
    root: Any = typer.main.get_command(app)
    paths: list[list[str]] = []
    for name, cmd in root.commands.items():
        paths.append([name])
        paths += [[name, sub] for sub in getattr(cmd, "commands", {})]
    return paths


# -- item 28: --version, -h, flags, the error line -----------------------------------------


def test_issue8_28_version_prints_the_package_version() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0
    assert res.stdout == f"sheetsync {version('sheetsync')}\n"


def test_issue8_28_minus_h_is_help_on_every_command_and_flags_take_no_value() -> None:
    commands = _all_commands()
    assert {"pools", "resolve", "template", "gsheet"} <= {c[0] for c in commands}
    assert len(commands) > 15
    for command in [[], *commands]:
        short = runner.invoke(app, [*command, "-h"])
        assert short.exit_code == 0, (command, short.output)
        assert short.stdout == runner.invoke(app, [*command, "--help"]).stdout
        assert "<bool>" not in short.stdout, command
    pools = runner.invoke(app, ["pools", "-h"]).stdout
    assert "  --json      Print JSON instead of tables." in pools
    assert "-h, --help" in pools


@pytest.mark.parametrize(("command", "kind"), [("resolve", "fresh"), ("pools", "fresh"), ("end", "resolved")])
def test_issue8_28_json_is_a_flag(tmp_path: Path, command: str, kind: str) -> None:
    """--json takes no value: the word after it is the file, not a boolean."""
    wb = _copy(kind, tmp_path / "b.xlsx")
    res = runner.invoke(app, [command, "--json", str(wb)])
    assert res.exit_code == 0, res.output
    assert isinstance(json.loads(res.stdout), dict)


def test_issue8_28_the_error_line_leads_with_the_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    wb = _copy("fresh", tmp_path / "b.xlsx")
    code, out, err = run_main(monkeypatch, capsys, "undo", str(wb))
    assert code == 1 and out == ""
    assert err == "error: there is no resolved phase to undo\n"


def test_issue8_28_a_real_process_shows_no_class_name_and_no_traceback(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "sheetsync", "build", str(tmp_path / "nope.xlsx")],
                         capture_output=True, text=True)
    assert res.returncode == 1
    assert res.stderr == f"error: {tmp_path / 'nope.xlsx'}: no such workbook\n"


# -- item 11: pools and aftermath on a workbook, unsupported names, missing folders ---------


def test_issue8_11_pools_on_a_workbook_matches_the_battle_file(tmp_path: Path) -> None:
    wb = _copy("fresh", tmp_path / "b.xlsx")
    before = wb.read_bytes()
    res = runner.invoke(app, ["pools", str(wb), "--json"])
    assert res.exit_code == 0, res.output
    from_file = json.loads(runner.invoke(app, ["pools", str(example_path()), "--json"]).stdout)

    def pools(data: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(c["name"], c["actions"], c["pools"]) for c in data["cohorts"]]

    assert pools(json.loads(res.stdout)) == pools(from_file)
    table = runner.invoke(app, ["pools", str(wb)])
    assert table.exit_code == 0 and "Night Watch" in table.stdout and "Cohort pools" in table.stdout
    assert wb.read_bytes() == before


def test_issue8_11_aftermath_on_a_workbook_previews_end_and_writes_nothing(tmp_path: Path) -> None:
    """Battle Aftermath (R26-R30) previewed: the same characters and numbers `end` then
    writes, and the workbook is not touched."""
    wb = _copy("resolved", tmp_path / "b.xlsx")
    before = wb.read_bytes()
    preview = runner.invoke(app, ["aftermath", str(wb), "--json"])
    assert preview.exit_code == 0, preview.output
    assert wb.read_bytes() == before and not wb.with_name("b.xlsx.bak").exists()
    table = runner.invoke(app, ["aftermath", str(wb)])
    assert table.exit_code == 0 and "Battle aftermath" in table.stdout
    ended = runner.invoke(app, ["end", str(wb), "--json"])
    assert ended.exit_code == 0, ended.output
    characters = json.loads(preview.stdout)["characters"]
    assert len(characters) > 5
    assert characters == json.loads(ended.stdout)["characters"]


@pytest.mark.parametrize("suffix", [".ods", ".csv", ".xls"])
@pytest.mark.parametrize("command", [["pools"], ["aftermath"], ["resolve"], ["undo"], ["build"], ["end"],
                                     ["export"], ["template"], ["new", "--from", str(example_path())]])
def test_issue8_11_an_unsupported_file_gets_one_line_saying_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: list[str], suffix: str) -> None:
    path = tmp_path / f"battle{suffix}"
    if command[0] not in ("template", "new"):
        path.write_bytes(b"PK\x03\x04\x00\xff\xfe binary")
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run_main(monkeypatch, capsys, command[0], str(path), *command[1:])
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: sheetsync can't use a {suffix} file here")
    assert "save it as .xlsx from LibreOffice" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_issue8_11_a_battle_file_that_is_not_text_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "battle.yaml"
    path.write_bytes(_MADE["fresh"].read_bytes())
    code, _, err = run_main(monkeypatch, capsys, "pools", str(path))
    assert code == 1
    assert err.startswith(f"error: {path} is not a text battle file (YAML or JSON)")


@pytest.mark.parametrize("command", [
    ["template", "{missing}/b.xlsx"],
    ["template", "{missing}/b.xlsx", "--macros"],
    ["new", "{missing}/b.xlsx", "--from", str(example_path())],
    ["resolve", str(example_path()), "--out", "{missing}/next.yaml"],
    ["resolve", "{workbook}", "--out", "{missing}/next.xlsx"],
    ["undo", "{workbook}", "--out", "{missing}/undone.xlsx"],
])
def test_issue8_11_a_missing_folder_is_named_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str],
                                                           command: list[str]) -> None:
    wb = _copy("resolved", tmp_path / "b.xlsx")
    missing = tmp_path / "no" / "such"
    args = [a.format(missing=missing, workbook=wb) for a in command]
    before = wb.read_bytes()
    code, _, err = run_main(monkeypatch, capsys, *args)
    assert code == 1, err
    assert err.startswith("error: ") and f"the folder {missing} does not exist" in err
    assert "Traceback" not in err and "FileNotFoundError" not in err
    assert wb.read_bytes() == before and not (tmp_path / "no").exists()


# -- item 13: --out and --seed on a workbook -----------------------------------------------


def test_issue8_13_resolve_out_writes_the_copy_and_leaves_the_workbook_alone(tmp_path: Path) -> None:
    from sheetsync.app.usecases import export
    from sheetsync.app.workbook_cli import excel_backend

    wb = _copy("fresh", tmp_path / "b.xlsx")
    before = wb.read_bytes()
    out = tmp_path / "next.xlsx"
    res = runner.invoke(app, ["resolve", str(wb), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert wb.read_bytes() == before and not wb.with_name("b.xlsx.bak").exists()
    assert export(excel_backend(out))["next_phase"] == 2
    assert json.loads(res.stdout)["events"] == export(excel_backend(out))["events"]
    # the same as resolving in place (R25: same seed and phase, same dice)
    run_workbook("resolve", wb)
    assert export(excel_backend(wb))["battle"] == export(excel_backend(out))["battle"]


def test_issue8_13_undo_out_leaves_the_workbook_alone(tmp_path: Path) -> None:
    from sheetsync.app.usecases import export
    from sheetsync.app.workbook_cli import excel_backend

    wb = _copy("resolved", tmp_path / "b.xlsx")
    before = wb.read_bytes()
    out = tmp_path / "undone.xlsx"
    res = runner.invoke(app, ["undo", str(wb), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert f"{out}: Phase 1 undone" in " ".join(res.stdout.split())
    assert wb.read_bytes() == before
    assert export(excel_backend(out))["next_phase"] == 1
    assert export(excel_backend(wb))["next_phase"] == 2


def test_issue8_13_out_of_another_kind_is_refused(tmp_path: Path) -> None:
    wb = _copy("fresh", tmp_path / "b.xlsx")
    before = wb.read_bytes()
    res = runner.invoke(app, ["resolve", str(wb), "--out", str(tmp_path / "next.yaml")])
    assert res.exit_code == 1
    assert "must be a workbook of the same kind" in str(res.exception)
    assert wb.read_bytes() == before and not (tmp_path / "next.yaml").exists()


def test_issue8_13_r25_seed_on_a_workbook_is_refused_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    wb = _copy("fresh", tmp_path / "b.xlsx")
    before = wb.read_bytes()
    code, _, err = run_main(monkeypatch, capsys, "resolve", str(wb), "--seed", "7")
    assert code == 1
    assert err.startswith(f"error: {wb}: --seed can't be used on a workbook; nothing was written")
    assert "same dice (R25)" in err
    assert wb.read_bytes() == before


# -- item 14: the real name, and no xlsx under another name --------------------------------


def test_issue8_14_template_macros_prints_the_name_it_wrote(tmp_path: Path) -> None:
    res = runner.invoke(app, ["template", str(tmp_path / "keep.xlsx"), "--macros"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert f"Blank tracker written to {tmp_path / 'keep.xlsm'}." in text
    assert "keep.xlsx" not in text
    assert (tmp_path / "keep.xlsm").exists() and not (tmp_path / "keep.xlsx").exists()


def test_issue8_14_download_into_a_new_xlsm_makes_a_macro_workbook(tmp_path: Path) -> None:
    """A template written under a .xlsm name holds the VBA project, never plain xlsx bytes."""
    import zipfile

    from sheetsync.app.workbook_cli import write_template

    out = write_template(tmp_path / "t.xlsm", force=False)
    assert "xl/vbaProject.bin" in zipfile.ZipFile(out).namelist()
