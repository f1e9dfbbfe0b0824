"""Issue 25, §3 under Pyodide: the xlwings Lite scripts import and run where xlwings Lite
runs them, Python in the browser runtime, and queue exactly the actions they queue on
CPython.

Pyodide in Node (``tests/pyodide/run.mjs``, offline) with xlwings' own pure wheel (as the
add-in provides it; ``.ci/install-pyodide.sh`` caches it), openpyxl, et_xmlfile and
sheetsync's wheel.  For each rule system, the embedded example's tracker goes through Build,
Check, Resolve, Undo, Resolve, Report and End Battle: on CPython each script runs on
``xw.Book(json=payload)`` and its actions are applied to the workbook, as Excel applies
them, giving the next step's payload.  Pyodide runs every script on the same payloads, once,
and must queue the same actions (``book.json()``); xlwings sees the same seven scripts with
their sheet buttons (``custom_scripts_meta``), and the same seven through the ``main.py`` a
``--lite`` tracker carries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from test_lite import SYSTEMS, _lite_template, _tracker
from test_lite import (
    noncommercial_license as noncommercial_license,  # autouse: xlwings' license for the module
)
from test_pyodide import CACHE, ROOT, run_pyodide, wheels

from sheetsync import lite
from sheetsync.backends.lite_code import lite_code
from sheetsync.backends.xlwings_remote import (
    apply_actions,
    close_book,
    payload_from_openpyxl,
    remote_book,
)

PROGRAM = ROOT / "tests" / "pyodide" / "lite.py"
STEPS = ("build", "check", "resolve", "undo", "resolve", "report", "end")
SCRIPTS = {"build": lite.build, "check": lite.check, "resolve": lite.resolve, "undo": lite.undo,
           "end": lite.end_battle, "report": lite.report}
NAME = "battle.xlsx"


def _cpython(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every (system, step)'s payload and the actions the script queues for it on CPython."""
    payloads: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    for system_id in SYSTEMS:
        path = tmp_path / system_id / NAME
        path.parent.mkdir()
        _tracker(system_id, path)
        wb = openpyxl.load_workbook(path)
        for i, step in enumerate(STEPS):
            key = f"{system_id}/{step}/{i}"
            payload = payload_from_openpyxl(wb, "VBA", name=NAME)
            payloads[key] = json.loads(json.dumps(payload, default=str))  # before the book changes it
            book = remote_book(payload)
            try:
                SCRIPTS[step](book)
                answer = book.json()
            finally:
                close_book(book)
            alerts: list[dict[str, Any]] = []
            apply_actions(wb, answer, alerts=alerts)
            assert alerts and alerts[-1]["mode"] == "info", (key, alerts)  # every step went ahead
            answers[key] = json.loads(json.dumps(answer, default=str))
    return payloads, answers


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    lite_wheels = sorted((CACHE / "lite-wheels").glob("xlwings-*-py3-none-any.whl"))
    if shutil.which("node") is None or not lite_wheels:
        pytest.fail("Pyodide or xlwings' pure wheel is missing: run bash .ci/install-pyodide.sh (scripts/test.sh does)")
    payloads, answers = _cpython(tmp_path_factory.mktemp("cpython"))
    host = tmp_path_factory.mktemp("lite")
    (host / "in.json").write_text(json.dumps(payloads), encoding="utf-8")
    (host / "main.py").write_text(lite_code(_lite_template("bbn"))["main.py"], encoding="utf-8")
    result, _timings = run_pyodide(PROGRAM, host, [*wheels(tmp_path_factory.mktemp("wheels")), *lite_wheels])
    return {"cpython": answers, "pyodide": result}


def test_issue25_the_scripts_import_under_pyodide_with_their_buttons(runs: dict[str, Any]) -> None:
    assert runs["pyodide"]["platform"] == "emscripten"
    meta = {m["function_name"]: m for m in runs["pyodide"]["scripts"]}
    assert set(meta) == set(lite.__all__) == set(lite.BUTTONS)
    assert all(m["button"] == lite.button(name) for name, m in meta.items())


def test_issue25_the_main_py_of_a_lite_tracker_registers_every_script_under_pyodide(runs: dict[str, Any]) -> None:
    """The pane registers the ``@script`` functions of the workbook's ``main.py``: the one a
    ``--lite`` tracker carries only imports sheetsync's, and they are all there, buttons and all."""
    assert runs["pyodide"]["main_scripts"] == runs["pyodide"]["scripts"]
    assert len(runs["pyodide"]["main_scripts"]) == len(lite.BUTTONS)


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_issue25_each_script_queues_under_pyodide_what_it_queues_on_cpython(runs: dict[str, Any],
                                                                            system_id: str) -> None:
    mine = {k: v for k, v in runs["pyodide"]["answers"].items() if k.startswith(f"{system_id}/")}
    theirs = {k: v for k, v in runs["cpython"].items() if k.startswith(f"{system_id}/")}
    assert list(mine) == list(theirs) and len(mine) == len(STEPS)
    for key, answer in theirs.items():
        assert answer["actions"], key  # each step writes, or says, something
        assert mine[key] == answer, key
