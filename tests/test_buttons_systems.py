"""Every surface's buttons come from the rule system's steps (DESIGN "Several rule systems on
one seam": one vocabulary of steps drives the VBA and Apps Script subs, the button labels and
the watcher's checkboxes), and every surface finds the system from the tracker's mark.

Parametrized over every registered system, so a system added to the registry gets its subs,
buttons, menu and checkboxes checked without a new test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import warnings
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from sheetsync.app import buttons
from sheetsync.app.watch import BUTTON_ACTIONS, WatchState, button_actions, poll_once, watch
from sheetsync.backends.vba import (
    MACROS_DIR,
    STEP_MODULES,
    buttons_for,
    make_xlsm,
    step_module_source,
    write_step_module,
    xlwings_vba_modules,
)
from sheetsync.core.registry import find_system, format_mark, tracker_system_ids
from sheetsync.core.system import ACTIONS, Step
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import MemoryBackend, RangeUpdate

with warnings.catch_warnings():  # oletools 0.60 calls pyparsing APIs deprecated in 3.3
    warnings.simplefilter("ignore", DeprecationWarning)
    from oletools.olevba import VBA_Parser

SYSTEMS = tracker_system_ids()


@pytest.fixture(params=SYSTEMS)
def system(request: pytest.FixtureRequest) -> Any:
    return find_system(str(request.param))


def lower_first(sub: str) -> str:
    return sub[0].lower() + sub[1:]


# -- the VBA step modules -----------------------------------------------------------------


def test_desktop_module_has_one_public_sub_per_step_running_its_action(system: Any) -> None:
    source = step_module_source(system)
    assert re.search(r"^Private Sub RunStep\(code As String\)$", source, re.M)
    subs = re.findall(r'^Public Sub (\w+)\(\)\n    RunStep "import sheetsync\.app\.buttons as b; b\.(\w+)\(\)"\nEnd Sub$',
                      source, re.M)
    assert subs == [(s.sub, s.action) for s in system.steps]
    assert len(re.findall(r"^Public Sub ", source, re.M)) == len(system.steps)
    for _sub, action in subs:  # the entry point each sub runs exists
        assert callable(getattr(buttons, action))


def test_remote_module_has_one_public_sub_per_step_posting_its_route(system: Any) -> None:
    source = step_module_source(system, remote=True)
    subs = re.findall(r'^Public Sub (\w+)\(\)\n    CallEndpoint "(\w+)"\nEnd Sub$', source, re.M)
    assert subs == [(s.sub, s.action) for s in system.steps]
    assert {a for _s, a in subs} <= set(ACTIONS)  # the endpoint's four routes
    assert "RunRemotePython baseUrl & \"/\" & action" in source


@pytest.mark.parametrize("remote", [False, True])
def test_the_battalion_module_is_the_macro_file_byte_for_byte(remote: bool) -> None:
    expected = (MACROS_DIR / STEP_MODULES[remote]).read_bytes()
    assert step_module_source(find_system("bbn"), remote=remote).encode("utf-8") == expected


def test_the_hex_module_names_its_own_subs() -> None:
    source = step_module_source(find_system("hexwar"))
    assert "Public Sub ResolveTurn()" in source and "Public Sub ResolvePhase()" not in source


@dataclass
class FakeSystem:
    id: str
    steps: tuple[Step, ...]


@pytest.mark.parametrize(("step", "why"), [
    (Step("resolve", "Resolve", "Step"), "not a usable VBA sub name"),  # a keyword (For ... Step)
    (Step("resolve", "Resolve", "RunStep"), "not a usable VBA sub name"),  # the module's own helper
    (Step("resolve", "Resolve", "Resolve Turn"), "not a usable VBA sub name"),
    (Step("advance", "Advance", "Advance"), "none of build, resolve, undo, end"),
])
def test_a_step_the_module_cannot_hold_is_refused(step: Step, why: str) -> None:
    fake = FakeSystem("fake", (step,))
    with pytest.raises(ValueError, match=why):
        step_module_source(fake)
    with pytest.raises(ValueError, match=why):
        buttons_for(fake)


# -- the buttons --------------------------------------------------------------------------


def test_buttons_are_captioned_as_the_steps_and_run_their_subs(system: Any) -> None:
    made = buttons_for(system)
    assert [(b[1], b[2]) for b in made] == [(s.sub, s.caption) for s in system.steps]
    assert {b[0] for b in made} == {"Battle"}
    assert len({b[3] for b in made}) == len(made)  # no two on one cell


def test_battalion_buttons_are_todays() -> None:
    assert buttons_for(find_system("bbn")) == (
        ("Battle", "BuildCohorts", "Build Cohorts", "H2"), ("Battle", "ResolvePhase", "Resolve Phase", "H5"),
        ("Battle", "UndoPhase", "Undo Phase", "K2"), ("Battle", "EndBattle", "End Battle", "K5"))


def _vml_buttons(path: Path) -> list[tuple[str, str]]:
    """(macro, caption) of every form button in the workbook's drawings."""
    out = []
    with zipfile.ZipFile(path) as z:
        for name in sorted(n for n in z.namelist() if n.endswith(".vml")):
            vml = z.read(name).decode("utf-8")
            for shape in re.findall(r"<v:shape\b.*?</v:shape>", vml, re.S):
                macro = re.search(r"<x:FmlaMacro>\[0\]!(\w+)</x:FmlaMacro>", shape)
                caption = re.search(r'<font [^>]*>([^<]*)</font>', shape)
                if macro and caption:
                    out.append((macro.group(1), caption.group(1)))
    return out


def _modules(path: Path) -> dict[str, str]:
    parser = VBA_Parser(str(path))
    try:
        return {name.rsplit(".", 1)[0]: code for (_f, _s, name, code) in parser.extract_macros()}
    finally:
        parser.close()


def test_a_macro_workbook_holds_the_systems_module_and_buttons(system: Any, tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.active.title = "Battle"
    module = write_step_module(system, tmp_path)
    out = make_xlsm(wb, tmp_path / "t.xlsm", [module, MACROS_DIR / "SheetsyncGuard.bas", *xlwings_vba_modules()],
                    buttons_for(system))
    assert _vml_buttons(out) == [(s.sub, s.caption) for s in system.steps]
    code = _modules(out)["Sheetsync"]
    assert re.findall(r"^Public Sub (\w+)\(\)", code.replace("\r\n", "\n"), re.M) == [s.sub for s in system.steps]


def test_saving_a_hex_tracker_as_xlsm_gives_it_the_hex_buttons(tmp_path: Path) -> None:
    """workbook_cli puts the macros and buttons back on every save of a .xlsm: those of the
    system the workbook's mark names."""
    from sheetsync.app.workbook_cli import _xlsm_bytes

    hexwar = find_system("hexwar")
    wb = openpyxl.Workbook()
    wb.active.title = "Battle"
    wb.create_sheet("State")["B1"] = format_mark(hexwar)
    out = tmp_path / "hex.xlsm"
    out.write_bytes(_xlsm_bytes(wb))
    assert _vml_buttons(out) == [(s.sub, s.caption) for s in hexwar.steps]
    assert "Public Sub ResolveTurn()" in _modules(out)["Sheetsync"]
    unmarked = openpyxl.Workbook()
    unmarked.active.title = "Battle"
    out2 = tmp_path / "old.xlsm"
    out2.write_bytes(_xlsm_bytes(unmarked))  # no State sheet, no mark: the battalion system
    assert [m for m, _c in _vml_buttons(out2)] == ["BuildCohorts", "ResolvePhase", "UndoPhase", "EndBattle"]


# -- the Apps Script menu (Node.js) ---------------------------------------------------------

MENU_HARNESS = r"""
const vm = require("vm");
const fs = require("fs");
const [path, mark] = process.argv.slice(2);
const log = [];
const items = [];
const sheets = mark === "<no State>" ? {} : { State: { getRange: (a1) => ({ getValue: () => (a1 === "B1" ? mark : "") }) } };
const ctx = {
  PropertiesService: { getScriptProperties: () => ({
    getProperty: (k) => ({ SHEETSYNC_URL: "https://battle.example.org/api", SHEETSYNC_API_KEY: "k" })[k] || null,
  }) },
  LockService: { getDocumentLock: () => ({ waitLock: () => {}, releaseLock: () => {} }) },
  SpreadsheetApp: {
    flush: () => {},
    getActiveSpreadsheet: () => ({ getSheetByName: (name) => sheets[name] || null }),
    getUi: () => ({
      alert: (title, text) => log.push(["alert", title, text]),
      ButtonSet: { OK: "OK" },
      createMenu: (title) => {
        const menu = {
          addItem: (caption, fn) => { items.push([title, caption, fn]); return menu; },
          addToUi: () => log.push(["menu", title]),
        };
        return menu;
      },
    }),
  },
  runPython: (url, options) => log.push(["runPython", url]),
};
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(path, "utf8"), ctx);
ctx.onOpen();
const posted = items.map(([, , fn]) => {
  log.length = 0;
  ctx[fn]();
  return log.filter((x) => x[0] === "runPython").map((x) => x[1]);
});
console.log(JSON.stringify({ items, posted }));
"""


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node") or shutil.which("nodejs")
    if found is None:  # .ci/install-system-deps.sh installs it: on CI its absence is a failure
        if os.environ.get("CI"):
            pytest.fail("Node.js is not installed (Debian package nodejs); .ci/install-system-deps.sh installs it")
        pytest.skip("Node.js is not installed (Debian package nodejs)")
    return found


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gs") / "menu.js"
    path.write_text(MENU_HARNESS)
    return path


def open_menu(node: str, harness: Path, mark: str) -> dict[str, Any]:
    out = subprocess.run([node, str(harness), str(MACROS_DIR / "sheetsync.gs"), mark],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def expected_menu(system: Any) -> dict[str, Any]:
    return {
        "items": [["Sheetsync", s.caption, lower_first(s.sub)] for s in system.steps],
        "posted": [[f"https://battle.example.org/api/{s.action}"] for s in system.steps],
    }


def test_apps_script_menu_shows_the_systems_captions_from_its_mark(node: str, harness: Path, system: Any) -> None:
    """A tracker marked ``hexwar@1`` gets Build Units, Resolve Turn, Undo Turn, End Battle;
    each item runs a function of the script that posts to the step's route."""
    assert open_menu(node, harness, format_mark(system)) == expected_menu(system)


@pytest.mark.parametrize("mark", ["", "<no State>"])
def test_apps_script_menu_of_a_tracker_without_a_mark_is_the_battalion_one(node: str, harness: Path,
                                                                           mark: str) -> None:
    assert open_menu(node, harness, mark) == expected_menu(find_system("bbn"))


def test_apps_script_menu_for_a_mark_it_does_not_know_still_posts_the_four_routes(node: str, harness: Path) -> None:
    got = open_menu(node, harness, "chess@1")
    assert [i[1] for i in got["items"]] == ["Build", "Resolve", "Undo", "End Battle"]
    assert got["posted"] == [[f"https://battle.example.org/api/{a}"] for a in ACTIONS]


def test_apps_script_defines_a_function_per_sub_of_every_system() -> None:
    gs = (MACROS_DIR / "sheetsync.gs").read_text()
    defined = set(re.findall(r"^function (\w+)\(\)", gs, re.M))
    for sid in SYSTEMS:
        for s in find_system(sid).steps:
            assert lower_first(s.sub) in defined, (sid, s.sub)


# -- the watcher's checkboxes ---------------------------------------------------------------


def test_watch_labels_are_each_systems_step_captions(system: Any) -> None:
    assert BUTTON_ACTIONS[system.id] == {s.caption: s.action for s in system.steps}
    assert button_actions(system) == BUTTON_ACTIONS[system.id]
    assert list(BUTTON_ACTIONS[system.id].values()) == list(ACTIONS)


def marked_tracker(system: Any) -> tuple[MemoryBackend, Any]:
    lay = system.layout(None)
    backend = MemoryBackend({name: {} for name in lay.sheets})
    backend.write_ranges(steps.mark_updates(system, getattr(lay, "capacity", None) or None))
    return backend, lay


def test_watch_finds_the_system_with_the_first_read_and_runs_its_step(system: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The mark is read in the same request as the checkboxes, once; a tick runs the
    system's own step with the tracker's capacity, and the step's write clears the box."""
    backend, lay = marked_tracker(system)
    ran: list[tuple[str, Any, list[RangeUpdate]]] = []

    @dataclass
    class Report:
        phase: int
        message: str

    def run_step(action: str, backend: Any, *, extra: Any = (), capacity: Any = None) -> Report:
        ran.append((action, capacity, list(extra)))
        backend.write_ranges(list(extra))
        return Report(7, f"{action} done")

    monkeypatch.setattr(system, "run_step", run_step)
    block = lay.block("Battle_Buttons")
    tick = (block.first_row + 1, block.first_col + block.index("tick"))  # the resolve box
    backend.sheets[block.sheet][tick] = True
    reads = backend.reads
    state = WatchState()
    assert poll_once(backend, state) == "resolve"
    assert backend.reads == reads + 1, "the mark came with the checkboxes"
    assert state.tracker is not None and state.tracker.system is system
    assert [(a, c) for a, c, _e in ran] == [("resolve", state.tracker.capacity)]
    assert backend.sheets[block.sheet][tick] is False
    assert state.phase == 7 and state.last == "resolve done"
    assert poll_once(backend, state) is None and backend.reads == reads + 2  # no second look at the mark


def test_watch_on_a_hex_tracker_says_which_step_failed_in_its_own_cell() -> None:
    """Undo Turn on a tracker where nothing was resolved: refused, the box cleared, the
    reason in the hex Battle sheet's last-action cell (B6, not the battalion B5)."""
    pytest.importorskip("sheetsync.systems.hexwar.tracker.steps")  # helper B's steps
    hexwar = find_system("hexwar")
    backend, lay = marked_tracker(hexwar)
    block = lay.block("Battle_Buttons")
    tick = (block.first_row + 2, block.first_col + block.index("tick"))  # Undo Turn
    backend.sheets[block.sheet][tick] = True
    state = watch(backend, sleep=lambda s: None, max_polls=1)
    assert state.steps == 1 and state.last.startswith("Undo Turn failed: ")
    assert backend.sheets["Battle"][tick] is False
    assert lay.cells["Battle_LastAction"].ref.endswith("B6")
    assert backend.sheets["Battle"][(6, 2)] == state.last


# -- a hex tracker through the desktop entry point and the endpoint -------------------------


@pytest.fixture(scope="module", autouse=True)
def noncommercial_license() -> Iterator[None]:
    # xw.Book(json=...) is xlwings' remote engine (xlwings PRO, free for noncommercial use).
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLWINGS_LICENSE_KEY", "noncommercial")
        yield


@pytest.fixture(scope="module")
def hex_tracker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded hex example, loaded into a workbook holding the hex layout's sheets
    (needs helper B's ``sheetsync.systems.hexwar.tracker.steps``)."""
    ht = pytest.importorskip("sheetsync.systems.hexwar.tracker.steps")
    import yaml

    from sheetsync.backends.excel import ExcelBackend
    from sheetsync.systems.hexwar.files.loader import load_battle
    from sheetsync.systems.hexwar.rules import example_battle_data

    hexwar = find_system("hexwar")
    lay = hexwar.layout(None)
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name in lay.sheets:
        wb.create_sheet(name)
    path = tmp_path_factory.mktemp("hex") / "hex.xlsx"
    wb.save(path)
    backend = ExcelBackend(path)
    backend.write_ranges(steps.mark_updates(hexwar, lay.capacity))
    ht.load_into(backend, load_battle(yaml.safe_load(example_battle_data())))
    return path


def test_hex_tracker_resolves_a_turn_through_the_desktop_entry_point(hex_tracker: Path) -> None:
    """``b.resolve()`` (the ResolveTurn sub) on a hex tracker runs the hex wargame's turn;
    ``b.undo()`` on a fresh one is refused in a critical box, as on a battalion tracker."""
    from sheetsync.backends.xlwings_remote import apply_actions, payload_from_openpyxl, remote_book

    turn = find_system("hexwar").layout(None).cells["Battle_Turn"]
    fresh = remote_book(payload_from_openpyxl(openpyxl.load_workbook(hex_tracker), "VBA"))
    refused = buttons.run_button("undo", fresh)
    ((*_, level, _),) = [a["args"] for a in fresh.json()["actions"] if a["func"] == "alert"]
    assert level == "critical" and "nothing to undo" in refused
    wb = openpyxl.load_workbook(hex_tracker)
    book = remote_book(payload_from_openpyxl(wb, "VBA"))
    message = buttons.run_button("resolve", book)
    answer = book.json()
    ((shown, _title, _buttons, level, _),) = [a["args"] for a in answer["actions"] if a["func"] == "alert"]
    assert shown == message and level == "info" and "Turn 1" in message
    apply_actions(wb, answer, client="VBA", alerts=[])
    assert wb[turn.sheet][turn.address].value == 2


@pytest.mark.parametrize("client", ["VBA", "Google Apps Script"])
def test_hex_tracker_payload_posted_to_the_endpoint_resolves_a_turn(hex_tracker: Path, client: str) -> None:
    """The same /api/resolve route as a battalion tracker's Resolve Phase: the endpoint reads
    the mark from the payload's hidden State sheet and runs the hex wargame's turn."""
    import httpx
    from test_server import serving  # uvicorn on a free loopback port, for real

    from sheetsync.app.server import create_app
    from sheetsync.backends.xlwings_remote import apply_actions, payload_from_openpyxl

    hexwar = find_system("hexwar")
    lay = hexwar.layout(None)
    turn = lay.cells["Battle_Turn"]
    wb = openpyxl.load_workbook(hex_tracker)
    assert wb[turn.sheet][turn.address].value == 1
    with serving(create_app(api_key="k")) as url, httpx.Client(base_url=url, timeout=120) as http:
        answer = http.post("/api/resolve", json=payload_from_openpyxl(wb, client), headers={"Authorization": "k"})
    assert answer.status_code == 200, answer.text
    alerts: list[dict[str, Any]] = []
    apply_actions(wb, answer.json(), client=client, alerts=alerts)
    assert [a["mode"] for a in alerts] == ["info"] and "Turn 1" in alerts[0]["prompt"], alerts  # issue 22.3
    assert wb[turn.sheet][turn.address].value == 2  # turn 1 resolved
    moves = lay.block("Moves_Table")
    stamp = wb[moves.sheet].cell(moves.first_row, moves.first_col + moves.index("turn")).value
    assert stamp == 1


# -- the generated modules compile and run in LibreOffice ------------------------------------


@pytest.mark.libreoffice
@pytest.mark.parametrize("remote", [False, True], ids=["desktop", "remote"])
def test_libreoffice_runs_the_generated_resolve_sub_of_each_system(system: Any, remote: bool, tmp_path: Path) -> None:
    """Calc compiles the generated module and its resolve sub (ResolvePhase, ResolveTurn)
    runs the resolve entry point (desktop) or posts to /resolve (remote), with the sheets'
    protection lifted for the step."""
    import libreoffice as lo
    from test_vba_libreoffice import _build, _script

    lo.require_libreoffice()
    module = write_step_module(system, tmp_path, remote=remote)
    book = _build(tmp_path, "book.xlsm", [module, MACROS_DIR / "SheetsyncGuard.bas"])
    sub = next(s.sub for s in system.steps if s.action == "resolve")
    result = lo.run_macros(book, [_script(module.stem, sub)], ["Battle!C1:D1"])
    assert [run["ok"] for run in result["runs"]] == [True], result["runs"]
    command, protected = result["values"]["Battle!C1:D1"][0]
    if remote:
        assert command == "http://127.0.0.1:8000/api/resolve "
    else:
        assert command == "import sheetsync.app.buttons as b; b.resolve()"
    assert not protected
