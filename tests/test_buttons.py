"""The desktop buttons' entry points (``RunPython "import sheetsync.app.buttons as b; ..."``).

There is no Excel here.  The xlwings ``Book`` API is the same for the calling desktop
workbook and for the JSON a remote client posts, so the entry points run on
``xw.Book(json=payload)`` of a generated tracker; what they write and the message box they
show come back as actions, which are applied to the openpyxl workbook the payload came
from.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlwings as xw

from sheetsync.app import buttons, usecases
from sheetsync.app.workbook_cli import excel_backend, new_workbook, write_template
from sheetsync.backends.xlwings_remote import (
    CLIENTS,
    apply_actions,
    payload_from_openpyxl,
    remote_book,
)
from sheetsync.sheets.disk import example_path
from sheetsync.systems.bbn.tracker.layout import layout

LAY = layout()


@pytest.fixture(scope="module", autouse=True)
def noncommercial_license() -> Iterator[None]:
    # xw.Book(json=...) is xlwings' remote engine (xlwings PRO, free for noncommercial use);
    # the desktop buttons themselves need only open-source xlwings.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLWINGS_LICENSE_KEY", "noncommercial")
        yield


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def tracker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tracker") / "tracker.xlsx"
    new_workbook(path, example_path())
    return path


@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_template(tmp_path_factory.mktemp("blank") / "blank.xlsx")


def values(wb: openpyxl.Workbook) -> dict[str, dict[str, Any]]:
    return {ws.title: {c.coordinate: c.value for row in ws.iter_rows() for c in row if c.value is not None}
            for ws in wb.worksheets}


def book_of(path: Path, client: str) -> tuple[openpyxl.Workbook, xw.Book]:
    wb = openpyxl.load_workbook(path)
    return wb, remote_book(payload_from_openpyxl(wb, client))


def test_resolve_writes_the_results_and_shows_an_info_box(client: str, tracker: Path, tmp_path: Path) -> None:
    wb, book = book_of(tracker, client)
    message = buttons.run_button("resolve", book)
    assert message.startswith("Phase 1 resolved: 10 orders, 3 hits")
    actions = book.json()["actions"]
    assert {a["func"] for a in actions} == {"setValues", "alert"}
    written = {wb.worksheets[a["sheet_position"]].title for a in actions if a["func"] == "setValues"}
    assert {"State", "Orders", "Log", "Battle"} <= written
    assert actions[-1]["func"] == "alert"
    assert actions[-1]["args"][:4] == [message, "sheetsync", "ok", "info"]
    alerts: list[dict[str, Any]] = []
    apply_actions(wb, actions, client=client, alerts=alerts)
    assert [a["mode"] for a in alerts] == ["info"]
    assert wb["Battle"][LAY.cells["Battle_Phase"].ref.split("!")[1]].value == 2
    # the same cells as the openpyxl path
    b = tmp_path / "b.xlsx"
    shutil.copy(tracker, b)
    assert usecases.run("resolve", excel_backend(b)).message == message
    assert values(wb) == values(openpyxl.load_workbook(b))


@pytest.mark.parametrize(("action", "error"), [
    ("resolve", "this tracker has no cohorts yet"),
    ("undo", "this tracker has no cohorts yet"),
    ("end", "this tracker has no cohorts yet"),
    ("dance", "unknown action 'dance'"),
])
def test_a_failure_shows_a_critical_box_with_the_error_and_writes_nothing(
    client: str, blank: Path, action: str, error: str
) -> None:
    wb, book = book_of(blank, client)
    before = values(wb)
    message = buttons.run_button(action, book)
    assert message.startswith(error)
    assert book.json()["actions"] == [{
        "func": "alert", "args": [message, "sheetsync", "ok", "critical", ""], "values": None,
        "sheet_position": None, "start_row": None, "start_column": None, "row_count": None,
        "column_count": None,
    }]
    apply_actions(wb, book.json(), client=client)
    assert values(wb) == before


def test_a_refused_step_names_the_problem(client: str, tracker: Path) -> None:
    _, book = book_of(tracker, client)
    message = buttons.run_button("undo", book)
    assert message == "there is no resolved phase to undo"
    assert [a["args"][3] for a in book.json()["actions"]] == ["critical"]


@pytest.mark.parametrize(("entry", "first_words"), [
    (buttons.build, "Built 4 cohorts"),
    (buttons.resolve, "Phase 1 resolved"),
    (buttons.undo, "there is no resolved phase to undo"),
    (buttons.end, "no phase has been resolved yet"),
])
def test_each_button_runs_on_the_calling_workbook(
    monkeypatch: pytest.MonkeyPatch, tracker: Path, entry: Callable[[], None], first_words: str
) -> None:
    _, book = book_of(tracker, "VBA")
    monkeypatch.setattr(xw.Book, "caller", lambda: book)  # what RunPython's caller() returns
    entry()
    (box,) = [a for a in book.json()["actions"] if a["func"] == "alert"]
    assert box["args"][0].startswith(first_words)


def test_importing_the_entry_point_stays_light(tmp_path: Path) -> None:
    # Every click starts a fresh Python and imports this module first.
    heavy = ["openpyxl", "gspread", "fastapi", "pydantic", "starlette", "uvicorn", "httpx", "yaml"]
    code = (
        "import json, sys\n"
        "import sheetsync.app.buttons\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})))\n"
    )
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_what_a_click_loads_stays_off_the_file_and_server_stacks(tmp_path: Path) -> None:
    # The click itself: xlwings, the entry point, the use cases and the xlwings backend.
    code = (
        "import json, sys\n"
        "import xlwings, sheetsync.app.buttons, sheetsync.app.usecases, sheetsync.backends.xlwings_backend\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert loaded.isdisjoint({"openpyxl", "gspread", "fastapi", "starlette", "uvicorn", "httpx", "yaml"}), loaded
