"""Issue 23, a lean step process: ``sheetsync STEP TRACKER.xlsx`` (``sheetsync.app.entry``)
runs without typer, pydantic or the libraries it does not use, and prints exactly what the
typer command line prints, with the same exit code; the help comes from a copy of typer's.
No timings here: benchmarks/bench_cli.py measures them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
import yaml

from sheetsync.app import entry, help_text
from sheetsync.app.workbook_cli import new_workbook, system_tracker_from
from sheetsync.core.registry import find_system
from sheetsync.sheets.disk import WORKBOOK_SUFFIXES, example_path

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ("bbn", "hexwar", "exalted")
NEVER = {"typer", "pydantic", "pydantic_core", "yaml", "gspread", "xlwings", "fastapi", "uvicorn", "starlette",
         "PIL", "openpyxl", "click"}
"""What a step on a .xlsx tracker never imports (rich only when it prints rich's tables)."""

TYPER = "import sys\nsys.argv[0] = 'sheetsync'\nfrom sheetsync.app.cli import main\nmain()\n"
LEAN = "import sys\nsys.argv[0] = 'sheetsync'\nfrom sheetsync.app.entry import main\nmain()\n"
MODULES = ("import json, sys\nsys.argv[0] = 'sheetsync'\nfrom sheetsync.app.entry import run\n"
           "code = run(sys.argv[1:])\nsys.stdout.flush()\n"
           "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}), file=sys.stderr)\n")


def _env(columns: int = 80) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")}
    return {**env, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)}


def _sheetsync(code: str, args: list[str], cwd: Path, columns: int = 80) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd,
                          env=_env(columns), timeout=300, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def trackers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A built tracker of each system, its first step's orders typed in."""
    folder = tmp_path_factory.mktemp("trackers")
    new_workbook(folder / "bbn.xlsx", example_path())
    out = {"bbn": folder / "bbn.xlsx"}
    for system_id in ("hexwar", "exalted"):
        system = find_system(system_id)
        system_tracker_from(folder / f"{system_id}.xlsx", system, system.load(yaml.safe_load(system.example_data())))
        out[system_id] = folder / f"{system_id}.xlsx"
    return out


def _both(tmp_path: Path, tracker: Path, steps: list[list[str]], name: str = "tracker.xlsx",
          columns: int = 80) -> list[tuple[int, str, str]]:
    """Each of ``steps`` (arguments, ``TRACKER`` for the tracker's name) run in turn by the
    typer command line on one copy of ``tracker`` and by the lean entry on another; asserts
    that every step printed the same and ended with the same code, and returns them."""
    runs = []
    for code in (TYPER, LEAN):
        work = tmp_path / ("typer" if code is TYPER else "lean")
        work.mkdir()
        shutil.copy(tracker, work / name)
        runs.append([_sheetsync(code, [name if a == "TRACKER" else a for a in step], work, columns)
                     for step in steps])
    for step, typer_run, lean_run in zip(steps, *runs, strict=True):
        assert lean_run == typer_run, step
    return runs[1]


def _modules(tmp_path: Path, tracker: Path, args: list[str]) -> set[str]:
    work = tmp_path / "modules"
    work.mkdir(exist_ok=True)
    shutil.copy(tracker, work / "tracker.xlsx")
    code, _, err = _sheetsync(MODULES, args, work)
    assert code == 0, err
    got = json.loads(err.strip().splitlines()[-1])
    assert got["code"] == 0, err
    return set(got["modules"])


def _packages(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue23_a_resolve_imports_only_what_it_uses(system_id: str, trackers: dict[str, Path],
                                                      tmp_path: Path) -> None:
    as_json = _modules(tmp_path, trackers[system_id], ["resolve", "tracker.xlsx", "--json"])
    assert not _packages(as_json) & (NEVER | {"rich"}), sorted(_packages(as_json) & (NEVER | {"rich"}))
    assert "sheetsync.app.cli" not in as_json
    tables = _modules(tmp_path, trackers[system_id], ["resolve", "tracker.xlsx"])
    assert not _packages(tables) & NEVER, sorted(_packages(tables) & NEVER)
    assert "rich" in _packages(tables)  # the tables are rich's output, printed by the same views
    assert "sheetsync.app.cli" not in tables


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue23_every_workbook_step_prints_what_typer_prints(system_id: str, trackers: dict[str, Path],
                                                               tmp_path: Path) -> None:
    steps = [["check", "TRACKER"], ["check", "TRACKER", "--json"], ["resolve", "TRACKER"],
             ["undo", "TRACKER", "--out", "undone.xlsx"], ["undo", "TRACKER"], ["resolve", "--json", "TRACKER"],
             ["resolve", "TRACKER", "--out=copy.xlsx"], ["undo", "copy.xlsx"], ["build", "TRACKER", "--paper", "Letter"],
             ["end", "TRACKER", "--json"], ["end", "TRACKER"]]
    runs = _both(tmp_path, trackers[system_id], steps)
    assert runs[2][0] == 0 and runs[2][1]  # the resolve ran, and printed its tables


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue23_a_refused_step_says_the_same_with_its_cell(system_id: str, trackers: dict[str, Path],
                                                            tmp_path: Path) -> None:
    broken = tmp_path / "broken.xlsx"
    wb = openpyxl.load_workbook(trackers[system_id])
    wb["State"]["B2"] = "lots"
    wb.save(broken)
    runs = _both(tmp_path, broken, [["resolve", "TRACKER"], ["check", "TRACKER", "--json"], ["build", "TRACKER"]])
    for code, out, err in runs:
        assert code == 1 and not out and err.startswith("error: State!B2"), err


def test_issue23_a_check_that_would_refuse_exits_1_on_both(trackers: dict[str, Path], tmp_path: Path) -> None:
    book = tmp_path / "orders.xlsx"
    wb = openpyxl.load_workbook(trackers["bbn"])
    wb["Orders"]["C8"] = "Melee Atack"  # a task that is no task, in the first order's row
    wb.save(book)
    runs = _both(tmp_path, book, [["check", "TRACKER"], ["check", "TRACKER", "--json"], ["resolve", "TRACKER"]])
    assert [code for code, _, _ in runs] == [1, 1, 1], runs


@pytest.mark.parametrize("args", [
    ["resolve", "missing.xlsx"],  # no such file: the same error line
    ["resolve", "TRACKER", "--frobnicate"],  # an unknown option: typer's usage error
    ["resolve", "TRACKER", "--seed", "3"],  # refused on a workbook, by typer's command
    ["resolve", "TRACKER", "--json", "--json"],
    ["build", "TRACKER", "--paper", "a5"],
    ["undo", "TRACKER", "--out"],
    ["resolve"],
    ["resolve", "--help"],
    ["end", "TRACKER", "--out", "x.xlsx"],
    ["resolve", "battle.ods"],
])
def test_issue23_what_the_lean_entry_does_not_know_ends_as_typer_ends_it(args: list[str], trackers: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    _both(tmp_path, trackers["bbn"], [args])


@pytest.mark.parametrize("columns", [80, 120, 60])
@pytest.mark.parametrize("args", [["--help"], ["-h"], []])
def test_issue23_the_help_is_typer_s(args: list[str], columns: int, tmp_path: Path) -> None:
    typer_run = _sheetsync(TYPER, args, tmp_path, columns)
    assert _sheetsync(LEAN, args, tmp_path, columns) == typer_run
    assert typer_run[0] == (0 if args else 2)


def test_issue23_the_help_imports_no_typer_and_no_rule_system(tmp_path: Path) -> None:
    code, _, err = _sheetsync(MODULES, ["--help"], tmp_path)
    got = json.loads(err.strip().splitlines()[-1])
    assert code == 0 and got["code"] == 0
    modules = set(got["modules"])
    assert not _packages(modules) & (NEVER | {"rich", "filelock", "orjson"})
    assert not {m for m in modules if m.startswith("sheetsync.") and m not in
                ("sheetsync.app", "sheetsync.app.entry", "sheetsync.app.help_text")}, sorted(modules)


def test_issue23_the_stored_help_is_typer_s_current_help() -> None:
    assert help_text.BODY == help_text.generated_body(), "run: python -m sheetsync.app.help_text --write"


def test_issue23_python_m_sheetsync_names_itself_as_typer_does(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "sheetsync", "--help"], capture_output=True, text=True,
                          cwd=tmp_path, env=_env(), timeout=120, check=True)
    assert done.stdout == f"Usage: python -m sheetsync {help_text.USAGE_ARGS}\n{help_text.BODY}"


def test_issue23_the_lean_entry_knows_the_commands_options_as_typer_has_them() -> None:
    import typer.main

    from sheetsync.app.cli import Paper, app

    assert entry._WORKBOOK_SUFFIXES == WORKBOOK_SUFFIXES
    group = typer.main.get_command(app)
    for name, (flags, valued) in entry._OPTIONS.items():
        params = group.commands[name].params  # type: ignore[attr-defined]
        options = {p.opts[0]: p for p in params if p.param_type_name == "option"}
        assert set(options) - {"--seed", "--help", "-h"} == flags | valued, name
        assert {o for o, p in options.items() if p.is_flag} - {"--help", "-h"} == flags, name
        assert [p.name for p in params if p.param_type_name == "argument"] in (["file"], ["workbook"]), name
    assert tuple(p.value for p in Paper) == entry._PAPERS


@pytest.mark.parametrize(("args", "want"), [
    (["resolve", "a.xlsx"], ("resolve", "a.xlsx", False, None, None)),
    (["resolve", "--json", "A.XLSM", "--out", "b.xlsm"], ("resolve", "A.XLSM", True, "b.xlsm", None)),
    (["undo", "a.xlsx", "--out=b.xlsx"], ("undo", "a.xlsx", False, "b.xlsx", None)),
    (["build", "a.xlsx", "--paper=LETTER"], ("build", "a.xlsx", False, None, "letter")),
    (["check", "a.xlsx", "--json"], ("check", "a.xlsx", True, None, None)),
])
def test_issue23_the_lean_entry_reads_a_step(args: list[str], want: tuple[object, ...]) -> None:
    got = entry.parse(args)
    assert got is not None
    assert (got.command, str(got.file), got.as_json, got.out and str(got.out), got.paper) == want


@pytest.mark.parametrize("args", [
    [], ["resolve"], ["resolve", "a.yaml"], ["resolve", "a.xlsx", "b.xlsx"], ["resolve", "a.xlsx", "--seed", "1"],
    ["resolve", "a.xlsx", "--out"], ["resolve", "a.xlsx", "--out", "--json"], ["undo", "a.xlsx", "--json"],
    ["build", "a.xlsx", "--paper", "a3"], ["end", "a.xlsx", "--out", "b.xlsx"], ["check", "a.xlsx", "-h"],
    ["resolve", "a.xlsx", "--"], ["resolve", "-", "a.xlsx"], ["resolve", ".xlsx"], ["resolve", "a.xlsx", "--json=1"],
    ["pools", "a.xlsx"], ["--version"], ["resolve", "a.xlsx", "--out", "b.xlsx", "--out", "c.xlsx"],
])
def test_issue23_the_lean_entry_leaves_the_rest_to_typer(args: list[str]) -> None:
    assert entry.parse(args) is None


CLICK = """
import json, os, sys
import openpyxl, xlwings as xw
from sheetsync.backends.xlwings_remote import payload_from_openpyxl, remote_book
book = remote_book(payload_from_openpyxl(openpyxl.load_workbook(sys.argv[1]), "VBA"))
xw.Book.caller = staticmethod(lambda: book)
before = set(sys.modules)
import sheetsync.app.buttons as b
b.resolve()
(box,) = [a for a in book.json()["actions"] if a["func"] == "alert"]
print(json.dumps({"message": box["args"][0], "loaded": sorted(set(sys.modules) - before)}))
"""


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue23_a_button_click_loads_no_pydantic_and_no_command_line(system_id: str, trackers: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    env = {**_env(), "XLWINGS_LICENSE_KEY": "noncommercial"}  # xlwings' remote engine stands in for Excel
    done = subprocess.run([sys.executable, "-c", CLICK, str(trackers[system_id])], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in got["message"].lower()[:20], got["message"]
    loaded = _packages(set(got["loaded"]))
    assert not loaded & {"typer", "pydantic", "pydantic_core", "yaml", "rich", "click", "fastapi", "gspread"}, \
        sorted(loaded)
