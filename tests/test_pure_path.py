"""Issue 25 §1: the workbook path runs with nothing installed but openpyxl.

In a fresh interpreter where pydantic, orjson, PyYAML, rich, typer, Pillow, filelock,
``multiprocessing`` and the other optional libraries can't be imported, each system's
embedded example goes through a tracker by :mod:`sheetsync.app.browser` (template, the
example typed in, build, check, forecast --write, resolve, undo, resolve, report, end), and
every visible cell after every step, the step's JSON, the report and the ``export`` JSON
equal what the CLI writes and prints on this interpreter, with everything installed, for
the same battle.  This is the main guard of the Pyodide path (``tests/test_pyodide.py``
runs the same program under Pyodide itself)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.core.registry import find_system
from sheetsync.sheets.disk import example_path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "pyodide" / "steps.py"
SYSTEMS = ("bbn", "hexwar", "exalted")
REFUSED = ("pydantic", "pydantic_core", "orjson", "yaml", "rich", "typer", "PIL", "filelock", "multiprocessing",
           "numpy", "xlwings", "gspread", "fastapi", "uvicorn", "httpx")
STEPS = ("build", "check", "forecast", "resolve", "undo", "resolve", "report", "end")
SEED, BATTLES, PHASES = 5, 40, 3

BLOCKER = """
import runpy, sys
REFUSED = set(sys.argv[1].split(","))

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in REFUSED:
            raise ModuleNotFoundError(f"No module named {name!r} (refused: the workbook path runs without it)",
                                      name=name)
        return None

sys.meta_path.insert(0, Refuse())
for name in list(sys.modules):
    if name.split(".")[0] in REFUSED:
        del sys.modules[name]
runpy.run_path(sys.argv[2], run_name="__main__")
"""

runner = CliRunner()


def example_data(system_id: str) -> dict[str, Any]:
    """The embedded example battle's data, as a battle file (JSON) gives it."""
    if system_id == "bbn":
        data: dict[str, Any] = yaml.safe_load(example_path().read_text(encoding="utf-8"))
    else:
        data = yaml.safe_load(find_system(system_id).example_data())
    return data


def program_input(steps: tuple[str, ...] = STEPS) -> dict[str, Any]:
    return {"systems": {s: example_data(s) for s in SYSTEMS}, "steps": list(steps), "seed": SEED,
            "battles": BATTLES, "phases": PHASES}


def _program() -> Any:
    spec = importlib.util.spec_from_file_location("sheetsync_test_steps", PROGRAM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def visible_cells(path: Path) -> dict[str, dict[str, Any]]:
    """The program's own reading of a workbook's visible cells."""
    cells: dict[str, dict[str, Any]] = _program().visible_cells(path.read_bytes())
    return cells


def _cli(*args: str) -> str:
    out = runner.invoke(app, list(args))
    assert out.exit_code == 0, out.output
    return str(out.stdout)


def cli_run(system_id: str, folder: Path, steps: tuple[str, ...] = STEPS) -> dict[str, Any]:
    """The same steps through the CLI, on this interpreter: cells after each, and the JSON
    each prints (``--json``), the report (``--md``) and ``export``."""
    folder.mkdir(parents=True, exist_ok=True)
    blank, tracker, battle = folder / "blank.xlsx", folder / "tracker.xlsx", folder / "battle.json"
    _cli("template", str(blank), "--system", system_id)
    battle.write_text(json.dumps(example_data(system_id)), encoding="utf-8")
    _cli("new", str(tracker), "--from", str(battle))
    record: dict[str, Any] = {"template": visible_cells(blank), "new": visible_cells(tracker), "steps": []}
    for step in steps:
        data: Any = None
        report = None
        if step == "check":
            data = json.loads(_cli("check", str(tracker), "--json"))
        elif step == "forecast":
            data = json.loads(_cli("forecast", str(tracker), "--write", "--json", "--seed", str(SEED), "--runs",
                                   str(BATTLES), "--phases", str(PHASES)))
        elif step == "report":
            md = folder / "report.md"
            _cli("report", str(tracker), "--md", str(md))
            report = md.read_text(encoding="utf-8")
        elif step in ("resolve", "end"):
            data = json.loads(_cli(step, str(tracker), "--json"))
        else:
            _cli(step, str(tracker))
        writes = step not in ("check", "report")
        record["steps"].append({"step": step, "json": data, "report": report,
                                "cells": visible_cells(tracker) if writes else None})
    record["export"] = json.loads(_cli("export", str(tracker)))
    return record


def _unplaced(markdown: str) -> str:
    """The report without the folder of its tracker (the CLI's is the test's, the browser's a
    temporary one): the same file name, tracker.xlsx; and without the hex map's pictures,
    which Pillow draws and the pure path has not."""
    markdown = markdown.split("\n## The map before")[0]
    lines = [ln for ln in markdown.splitlines() if "](data:image/png;" not in ln]
    return re.sub(r"[^\s*]*tracker\.xlsx", "tracker.xlsx", "\n".join(lines)).strip()


def compare(pure: dict[str, Any], cli: dict[str, Any], *, step_json: bool = True) -> None:
    """Every visible cell after every step, the steps' JSON and the export are the same."""
    assert pure["template"] == cli["template"]
    assert pure["new"] == cli["new"]
    assert [s["step"] for s in pure["steps"]] == [s["step"] for s in cli["steps"]]
    for mine, theirs in zip(pure["steps"], cli["steps"], strict=True):
        assert mine["ok"], (mine["step"], mine["message"], mine["problems"])
        assert mine["cells"] == theirs["cells"], f"the cells after {mine['step']} differ"
        if step_json and theirs["json"] is not None:
            assert mine["json"] == theirs["json"], f"the JSON of {mine['step']} differs"
        if theirs["report"] is not None:
            assert _unplaced(mine["report"]) == _unplaced(theirs["report"])
    assert pure["export"] == cli["export"]


@pytest.fixture(scope="module")
def pure_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The program in a child where the optional libraries are refused (started first, so
    that it runs while the CLI runs here)."""
    host = tmp_path_factory.mktemp("pure")
    (host / "in.json").write_text(json.dumps(program_input()), encoding="utf-8")
    env = {**os.environ, "SHEETSYNC_TEST_HOST": str(host), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", BLOCKER, ",".join(REFUSED), str(PROGRAM)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    clis = {s: cli_run(s, tmp_path_factory.mktemp(f"cli-{s}")) for s in SYSTEMS}
    out, err = child.communicate(timeout=600)
    assert child.returncode == 0, err[-3000:]
    summary = json.loads(out.strip().splitlines()[-1])
    pure = {s: json.loads((host / f"out-{s}.json").read_text(encoding="utf-8")) for s in SYSTEMS}
    return {"summary": summary, "pure": pure, "cli": clis}


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_every_step_without_the_optional_libraries_writes_what_the_cli_writes(
        pure_run: dict[str, Any], system_id: str) -> None:
    assert pure_run["summary"]["systems"][system_id]["steps"] == [f"{s}:ok" for s in STEPS]
    compare(pure_run["pure"][system_id], pure_run["cli"][system_id])


def test_issue25_the_forecast_without_processes_tells_its_progress(pure_run: dict[str, Any]) -> None:
    for system_id in SYSTEMS:
        forecast = next(s for s in pure_run["pure"][system_id]["steps"] if s["step"] == "forecast")
        assert forecast["progress"] == [BATTLES]


def test_issue25_the_child_refuses_what_it_should(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import importlib, json, sys\nout = {}\nfor name in sys.argv[1:]:\n"
                     "    try:\n        importlib.import_module(name)\n        out[name] = 'imported'\n"
                     "    except ImportError:\n        out[name] = 'refused'\nprint(json.dumps(out))\n",
                     encoding="utf-8")
    code = BLOCKER.replace("runpy.run_path(sys.argv[2], run_name=\"__main__\")",
                           "sys.argv = sys.argv[2:]\nrunpy.run_path(sys.argv[0], run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code, ",".join(REFUSED), str(probe), *REFUSED, "openpyxl"],
                         capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    got = json.loads(out.stdout)
    assert got.pop("openpyxl") == "imported"
    assert set(got.values()) == {"refused"}


def test_issue25_importing_the_browser_api_imports_no_third_party_module() -> None:
    code = ("import sys\nbefore = set(sys.modules)\nfrom sheetsync.app import browser\n"
            "import sysconfig\nstd = sys.stdlib_module_names\n"
            "print(sorted({m.split('.')[0] for m in set(sys.modules) - before} - std - {'sheetsync'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert set(json.loads(out.stdout.strip().replace("'", '"'))) <= {"openpyxl", "et_xmlfile"}


def test_issue25_the_forecast_in_one_process_gives_the_parallel_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    from sheetsync.app import forecast as fc

    battle = find_system("bbn").load(example_data("bbn"), "example")
    parallel = fc.forecast(battle, "bbn", runs=600, phases=2, seed=3, workers=2)
    monkeypatch.setattr(fc, "processes_available", lambda: False)
    done: list[int] = []
    single = fc.forecast(battle, "bbn", runs=600, phases=2, seed=3, workers=2, progress=done.append)
    assert single == parallel
    assert done == [250, 250, 100]


def _bad(system_id: str) -> list[dict[str, Any]]:
    """The example with bad values at several depths."""
    data = example_data(system_id)
    out = []
    if system_id == "bbn":
        c = data["cohorts"][0]
        out.append({**data, "cohorts": [{**c, "name": 5, "colour": "x"}, *data["cohorts"][1:]]})
        out.append({**data, "house_rules": {"nope": 1, **(data.get("house_rules") or {})}})
        out.append({**data, "orders": [{**o, "task": "Melee Atack", "bonus": "2.5"} for o in data["orders"]]})
    elif system_id == "hexwar":
        u = data["units"][0]
        out.append({**data, "units": [{**u, "side": None}, {**u, "name": ""}, *data["units"][1:]]})
        out.append({**data, "house_rules": {"stack_limit": "many", "initiative": "first"}})
        out.append({**data, "map": {**data["map"], "columns": "12.5"}})
    else:
        u = data["units"][0]
        out.append({**data, "units": [{**u, "magnitude": "3", "drill": True, "extra": 1}, *data["units"][1:]]})
        out.append({**data, "house_rules": {"mob_rule": "sometimes"}})
        out.append({**data, "characters": [{**ch, "essence": 2.5} for ch in data.get("characters", [])]})
    return out


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_without_pydantic_a_battle_s_problems_read_the_same(system_id: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from sheetsync.core.errors import InputError
    from sheetsync.sheets import validation

    system = find_system(system_id)

    def problems() -> list[list[tuple[str, str]]]:
        out = []
        for data in _bad(system_id):
            try:
                system.load(json.loads(json.dumps(data)), "bad")
                out.append([])
            except InputError as exc:
                out.append([(p.where, p.message) for p in exc.problems])
        return out

    with_pydantic = problems()
    assert all(with_pydantic)
    monkeypatch.setattr(validation, "_PYDANTIC", [None])
    assert problems() == with_pydantic


def test_issue25_browser_messages_name_the_trackers_file_not_the_folder_a_step_ran_in() -> None:
    """The page shows a message as browser.py words it: a step runs on a copy in a temporary
    folder, and the Tracker must read her own file's name, never that folder."""
    import tempfile

    from sheetsync.app import browser

    for answer in (browser.run_step(b"not a workbook", "battle.xlsx", "resolve"),
                   browser.describe(b"not a workbook", "battle.xlsx")):
        assert answer["ok"] is False
        assert "battle.xlsx" in answer["message"]
        assert tempfile.gettempdir() not in answer["message"], answer["message"]
