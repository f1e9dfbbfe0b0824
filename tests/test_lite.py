"""Issue 25, §3: the xlwings Lite scripts (``sheetsync.lite``) and ``template --lite``.

xlwings Lite hands a script the workbook as an ``xw.Book``; here that book is
``xw.Book(json=payload)`` made from a real tracker of each system (the embedded example),
and the actions the script queues are applied back to the file as a client would.  After
every step the tracker holds the same cells as the same step run by the CLI on a copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from typer.testing import CliRunner

from sheetsync import lite
from sheetsync.app.cli import app
from sheetsync.app.lite_template import HOW_TO_RUN, HOW_TO_RUN_SHEET
from sheetsync.app.workbook_cli import system_tracker_from
from sheetsync.backends.lite_code import lite_code
from sheetsync.backends.sheet_buttons import shape_buttons
from sheetsync.backends.vba import BUTTON_ANCHORS
from sheetsync.backends.xlwings_remote import (
    apply_actions,
    close_book,
    payload_from_openpyxl,
    remote_book,
)
from sheetsync.core.registry import find_system, tracker_system_ids

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = tracker_system_ids()
RUNS = 200
NAME = "battle.xlsx"


@pytest.fixture(scope="module", autouse=True)
def noncommercial_license() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:  # xlwings' remote engine: free for noncommercial use
        mp.setenv("XLWINGS_LICENSE_KEY", "noncommercial")
        yield


def _tracker(system_id: str, path: Path) -> None:
    system = find_system(system_id)
    battle = system.load(yaml.safe_load(system.example_data()), f"the embedded {system_id} example")
    system_tracker_from(path, system, battle)


def _click(wb: Any, name: str, script: Callable[..., Any], **kwargs: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """One click on the workbook ``wb`` (openpyxl, in memory): the book as xlwings Lite hands
    it, the script, and its actions applied to ``wb`` as a client applies them."""
    book = remote_book(payload_from_openpyxl(wb, "VBA", name=name))
    try:
        script(book, **kwargs)
        answer = book.json()
    finally:
        close_book(book)
    alerts: list[dict[str, Any]] = []
    apply_actions(wb, answer, alerts=alerts)
    return alerts, [a["func"] for a in answer["actions"]]


def _run_script(path: Path, script: Callable[..., Any], **kwargs: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """One click on the tracker at ``path``, saved after."""
    wb = openpyxl.load_workbook(path)
    out = _click(wb, path.name, script, **kwargs)
    wb.save(path)
    return out


def _cells(source: Path | Any) -> dict[str, dict[str, Any]]:
    wb = openpyxl.load_workbook(source) if isinstance(source, Path) else source
    return {ws.title: {c.coordinate: c.value for row in ws.iter_rows() for c in row if c.value is not None}
            for ws in wb.worksheets}


def _words(text: str) -> str:
    return " ".join(text.split())


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def _markdown_without_images(text: str) -> list[str]:
    """The CLI's Markdown report less its embedded images (a picture's section with them):
    what the report reads as with charts as tables only."""
    lines = text.rstrip("\n").split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("## ") and i + 2 < len(lines) and lines[i + 2].startswith("![") \
                and (i + 4 >= len(lines) or not lines[i + 4].startswith("|")):
            i += 4  # a picture: its heading, a blank, the image, a blank
            continue
        if lines[i].startswith("!["):
            i += 2  # a chart's image and the blank after it; its table stays
            continue
        out.append(lines[i])
        i += 1
    while out and out[-1] == "":
        out.pop()
    return out


STEPS = ("build", "check", "forecast", "resolve", "undo", "resolve", "report", "end")
SCRIPTS = {"build": lite.build, "check": lite.check, "forecast": lite.forecast, "resolve": lite.resolve,
           "undo": lite.undo, "report": lite.report, "end": lite.end_battle}


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_every_script_leaves_the_cells_the_cli_leaves(system_id: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cli").mkdir()
    (tmp_path / "lite").mkdir()
    _tracker(system_id, tmp_path / "cli" / NAME)
    shutil.copy(tmp_path / "cli" / NAME, tmp_path / "lite" / NAME)
    on_lite = openpyxl.load_workbook(tmp_path / "lite" / NAME)  # the book Excel holds, changed by each click
    monkeypatch.chdir(tmp_path / "cli")  # the CLI names the workbook as the book is named: battle.xlsx
    for step in STEPS:
        kwargs = {"runs": RUNS} if step == "forecast" else {}
        alerts, funcs = _click(on_lite, NAME, SCRIPTS[step], **kwargs)
        assert len(alerts) == 1 and alerts[0]["title"] == "sheetsync", (step, alerts)
        shown = alerts[0]["prompt"]
        if step == "check":
            out = _cli("check", NAME, "--json")
            found = json.loads(out.stdout)
            assert funcs == ["alert"], "the check writes nothing"
            assert (alerts[0]["mode"] == "info") == (not found["refusals"]) == (out.exit_code == 0)
            assert f" {found['phase']} " in shown and all(r["where"] in shown for r in found["refusals"])
        elif step == "forecast":
            out = _cli("forecast", NAME, "--write", "--runs", str(RUNS), "--workers", "1")
            assert out.exit_code == 0, out.output
            assert alerts[0]["mode"] == "info" and "Forecast sheet written" in shown
        elif step == "report":
            out = _cli("report", NAME, "--md", "report.md")
            assert out.exit_code == 0, out.output
            got = [c.value or "" for (c,) in on_lite[lite.REPORT_SHEET].iter_rows(max_col=1)]
            want = _markdown_without_images(Path("report.md").read_text(encoding="utf-8"))
            assert got == want
            assert "## What happened" in got and any(line.startswith("### ") for line in got)
        else:
            out = _cli(step, NAME)
            assert out.exit_code == 0, out.output
            assert alerts[0]["mode"] == "info", (step, shown)
            assert _words(shown) in _words(out.output), (step, shown, out.output)
        got = _cells(on_lite)
        got.pop(lite.REPORT_SHEET, None)  # the CLI's report is a file; the Report script's a sheet
        assert got == _cells(tmp_path / "cli" / NAME), step
    percent = [c.number_format for row in on_lite["Forecast"].iter_rows() for c in row if isinstance(c.value, float)]
    assert percent and "0.0%" in percent


@pytest.mark.parametrize("script", ["build", "resolve", "undo", "end_battle", "check", "forecast", "report"])
def test_issue25_a_script_that_fails_says_why_and_writes_nothing(script: str, tmp_path: Path) -> None:
    """A blank tracker: nothing to build, resolve, undo, end, check, forecast or report.  The
    script shows the error (with its cell) and queues no write at all."""
    path = tmp_path / NAME
    path.write_bytes(_lite_template("hexwar"))
    before = _cells(path)
    alerts, funcs = _run_script(path, getattr(lite, script))
    assert funcs == ["alert"], funcs
    assert alerts[0]["mode"] == "critical" and alerts[0]["prompt"], alerts
    assert "Traceback" not in alerts[0]["prompt"]
    assert _cells(path) == before


def test_issue25_a_book_that_is_no_tracker_is_refused_in_words(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.active["A1"] = "not a tracker"
    path = tmp_path / "other.xlsx"
    wb.save(path)
    alerts, funcs = _run_script(path, lite.resolve)
    assert funcs == ["alert"] and alerts[0]["mode"] == "critical"
    assert "State" in alerts[0]["prompt"]


# -- the template ----------------------------------------------------------------------------


def _lite_template(system_id: str) -> bytes:
    from sheetsync.app.lite_template import lite_bytes

    return lite_bytes(find_system(system_id))


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_template_lite_has_how_to_run_first_and_a_button_per_script(
        system_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = _cli("template", NAME, "--lite", "--system", system_id)
    assert out.exit_code == 0, out.output
    wb = openpyxl.load_workbook(tmp_path / NAME)
    assert wb.sheetnames[0] == HOW_TO_RUN_SHEET and wb.active.title == HOW_TO_RUN_SHEET
    lines = [c.value for (c,) in wb[HOW_TO_RUN_SHEET].iter_rows(max_col=1)]
    assert lines == list(HOW_TO_RUN) and len(lines) == 3
    text = " ".join(lines)
    assert "add-in store" in text and "xlwings Lite pane" in text and "requirements.txt" in text
    assert "sheetsync" in lines[2]
    system = find_system(system_id)
    captions = {s.action: s.caption for s in system.steps}
    shapes = shape_buttons((tmp_path / NAME).read_bytes(), lite.BUTTON_SHEET)
    assert [s["name"] for s in shapes] == [shape for shape, _cell, _cap in lite.BUTTONS.values()]
    for s, (script, (shape, cell, caption)) in zip(shapes, lite.BUTTONS.items(), strict=True):
        assert s["link"] == f"#{lite.BUTTON_SHEET}!{cell}"  # linked to the cell it covers
        assert lite.button(script) == f"[{shape}]{lite.BUTTON_SHEET}!{cell}"  # what the script's decorator names
        action = lite.STEP_ACTIONS.get(script)
        assert s["caption"] == (captions[action] if action else caption)
    # the tracker is the system's own: the same sheets after How to run, and steps run on it
    assert wb.sheetnames[1:] == list(system.layout(None).sheets)


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_template_lite_carries_the_panes_requirements_and_main_py(
        system_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workbook holds the xlwings Lite pane's files, as the add-in stores them (its web
    extension's properties): requirements.txt lists xlwings and sheetsync, main.py imports the
    scripts, and the pane opens with the workbook."""
    import zipfile

    from sheetsync.backends.lite_code import ADDIN_ID, MAIN_PY, TASKPANES_PART, WEBEXTENSION_PART
    from sheetsync.web import XLWINGS_VERSION

    monkeypatch.chdir(tmp_path)
    assert _cli("template", NAME, "--lite", "--system", system_id).exit_code == 0
    data = (tmp_path / NAME).read_bytes()
    files = lite_code(data)
    assert files == {"main.py": MAIN_PY, "requirements.txt": f"xlwings>={XLWINGS_VERSION}\nsheetsync\n"}
    with zipfile.ZipFile(tmp_path / NAME) as z:
        types = z.read("[Content_Types].xml").decode()
        root_rels = z.read("_rels/.rels").decode()
        panes = z.read(TASKPANES_PART).decode()
        ext = z.read(WEBEXTENSION_PART).decode()
    assert f'PartName="/{WEBEXTENSION_PART}"' in types and f'PartName="/{TASKPANES_PART}"' in types
    assert f'Target="{TASKPANES_PART}"' in root_rels and 'visibility="1"' in panes
    assert f'id="{ADDIN_ID}"' in ext and 'storeType="OMEX"' in ext
    # the scripts main.py imports are the module's every script
    imported = re.search(r"from sheetsync\.lite import ([\w, ]+)", MAIN_PY)
    assert imported is not None and sorted(imported.group(1).replace(" ", "").split(",")) == sorted(lite.__all__)


def test_issue25_a_workbook_with_other_add_in_settings_is_not_overwritten() -> None:
    from sheetsync.backends.lite_code import with_lite_code

    data = _lite_template("hexwar")
    with pytest.raises(ValueError, match="add-in"):
        with_lite_code(data, {"main.py": "x = 1\n"})
    assert lite_code(data)["requirements.txt"].endswith("sheetsync\n")


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_steps_on_a_lite_tracker_keep_its_pane_files_and_buttons(
        system_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Build and Resolve run by the CLI on a tracker carrying the pane's files and the
    buttons (the example's tracker, given them as ``template --lite`` gives them) keep both
    byte for byte, and LibreOffice still opens the workbook."""
    import zipfile

    from libreoffice import recalc_and_convert, require_libreoffice

    from sheetsync.app.lite_template import lite_buttons
    from sheetsync.backends.lite_code import MAIN_PY, requirements_txt, with_lite_code
    from sheetsync.backends.sheet_buttons import add_shape_buttons

    monkeypatch.chdir(tmp_path)
    _tracker(system_id, tmp_path / NAME)
    data = add_shape_buttons((tmp_path / NAME).read_bytes(), lite.BUTTON_SHEET, lite_buttons(find_system(system_id)))
    data = with_lite_code(data, {"main.py": MAIN_PY, "requirements.txt": requirements_txt("0.37.8")})
    (tmp_path / NAME).write_bytes(data)
    before = (lite_code(data), shape_buttons(data, lite.BUTTON_SHEET))
    assert len(before[0]) == 2 and len(before[1]) == len(lite.BUTTONS)
    for action in ("build", "resolve"):
        out = _cli(action, NAME)
        assert out.exit_code == 0, out.output
        after = (tmp_path / NAME).read_bytes()
        assert after != data  # the step wrote
        assert (lite_code(after), shape_buttons(after, lite.BUTTON_SHEET)) == before, action
        data = after
    require_libreoffice()
    converted = recalc_and_convert(tmp_path / NAME, tmp_path / "lo")
    with zipfile.ZipFile(converted) as z:
        assert 'name="Battle"' in z.read("xl/workbook.xml").decode()


def test_issue25_the_four_step_buttons_sit_where_the_macro_buttons_do() -> None:
    cells = [lite.BUTTONS[name][1] for name in ("build", "resolve", "undo", "end_battle")]
    assert tuple(cells) == BUTTON_ANCHORS
    assert len({cell for _shape, cell, _cap in lite.BUTTONS.values()}) == len(lite.BUTTONS)


def test_issue25_template_lite_refuses_a_macro_workbook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sheetsync.core.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"\.xlsx workbook"):
        _cli("template", "battle.xlsm", "--lite")
    with pytest.raises(InputError, match="needs no macros"):
        _cli("template", NAME, "--lite", "--macros")
    assert list(tmp_path.iterdir()) == []


def test_issue25_xlwings_registers_each_script_with_its_sheet_button(tmp_path: Path) -> None:
    """What xlwings Lite and xlwings Server read off the module (``custom_scripts_meta``):
    one script per step, each with its display name and sheet button."""
    code = ("import json, sheetsync.lite as m\nfrom xlwings.server import custom_scripts_meta\n"
            "print(json.dumps(custom_scripts_meta(m)))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XLWINGS_ON_SERVER": "true", "XLWINGS_LICENSE_KEY": "noncommercial"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    meta = {m["function_name"]: m for m in json.loads(run.stdout)}
    assert set(meta) == set(lite.__all__) == set(lite.BUTTONS)
    for name, m in meta.items():
        assert m["button"] == lite.button(name) and m["show_taskpane"] is True
    assert [meta[n]["name"] for n in ("build", "resolve", "undo", "end_battle")] == ["Build", "Resolve", "Undo",
                                                                                     "End Battle"]


# -- Pyodide: the module imports with what xlwings Lite has ---------------------------------

BLOCKED = ("pydantic", "orjson", "yaml", "rich", "typer", "PIL", "filelock", "numpy", "gspread", "fastapi",
           "uvicorn", "httpx")
CHILD = r"""
import json, sys
BLOCKED = set(sys.argv[1].split(","))

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not in xlwings Lite")
        return None

sys.meta_path.insert(0, Refuse())
import sheetsync.lite as m
print(json.dumps({"scripts": sorted(n for n in m.__all__ if callable(getattr(m, n))),
                  "loaded": sorted(n for n in sys.modules if n.split(".")[0] in BLOCKED)}))
"""


def test_issue25_the_scripts_module_imports_without_what_pyodide_lacks(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", CHILD, ",".join(BLOCKED)], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got == {"scripts": sorted(lite.__all__), "loaded": []}


def test_issue25_the_blocker_is_real(tmp_path: Path) -> None:
    code = CHILD.replace("import sheetsync.lite as m", "import sheetsync.app.cli as m")
    run = subprocess.run([sys.executable, "-c", code, ",".join(BLOCKED)], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert run.returncode != 0 and re.search(r"(typer|rich) is not in xlwings Lite", run.stderr)
