"""Issue 22, part 3: buttons that explain themselves.

The Google Sheets buttons (``macros/sheetsync.gs``) run under Node.js together with the
real ``xlwings.js`` that ships in the installed xlwings (its ``runPython`` posts the sheet,
throws on an answer that is not 200 and applies the answer's actions), against stand-ins of
Google's services; the answers fed to ``UrlFetchApp`` are those of sheetsync's own endpoint
(:func:`sheetsync.app.server.create_app`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import xlwings

MACROS_DIR = Path(__file__).resolve().parent.parent / "macros"
XLWINGS_JS = Path(xlwings.__file__).resolve().parent / "js" / "xlwings.js"
KEY = "test-key-22"
URL = "https://battle.example.org/api"

# -- the Apps Script client (Node.js) ------------------------------------------------------------

GS_HARNESS = r"""
const vm = require("vm");
const fs = require("fs");
const [xlwingsJs, gs, configPath] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(configPath, "utf8"));
const log = [];
const sheets = (config.sheets || ["Battle", "State"]).map((name, i) => ({
  getName: () => name,
  getIndex: () => i + 1,
  getLastRow: () => 1,
  getLastColumn: () => 1,
  getImages: () => [],
  getRange: (r, c, nr, nc) => {
    if (typeof r === "string") return { getValue: () => (config.mark || "") };
    return {
      getValues: () => [[""]],
      setValues: (v) => {
        if (config.columns && config.columns[name] !== undefined && c + nc - 1 > config.columns[name]) {
          throw new Error("Exception: The coordinates of the range are outside the dimensions of the sheet.");
        }
        log.push(["setValues", name, r, c, nr, nc]);
      },
    };
  },
}));
const ui = {
  alert: (title, text) => log.push(["alert", title, text]),
  ButtonSet: { OK: "OK", OK_CANCEL: "OK_CANCEL", YES_NO: "YES_NO", YES_NO_CANCEL: "YES_NO_CANCEL" },
  Button: { OK: "OK" },
};
const book = {
  getSheets: () => sheets,
  getName: () => "tracker",
  getActiveSheet: () => sheets[0],
  getActiveRange: () => ({ getA1Notation: () => "A1" }),
  getNamedRanges: () => [],
  getSheetByName: (n) => sheets.find((s) => s.getName() === n) || null,
  getSpreadsheetTimeZone: () => "UTC",
};
const ctx = {
  console,
  Session: { getActiveUser: () => ({ getEmail: () => "" }) },
  PropertiesService: { getScriptProperties: () => ({ getProperty: (k) => (config.props || {})[k] ?? null }) },
  LockService: { getDocumentLock: () => ({
    waitLock: () => { log.push(["waitLock"]); if (config.busy) throw new Error("Lock timeout"); },
    releaseLock: () => log.push(["releaseLock"]),
  }) },
  SpreadsheetApp: { flush: () => log.push(["flush"]), getActive: () => book,
                    getActiveSpreadsheet: () => book, getUi: () => ui },
  UrlFetchApp: { fetch: (url, options) => {
    log.push(["fetch", url, options.headers.Authorization || ""]);
    const f = config.fetch;
    if (f.error) { const e = new Error(f.error); throw e; }
    return { getResponseCode: () => f.code, getContentText: () => f.body };
  } },
};
vm.createContext(ctx);
if (!config.noXlwings) vm.runInContext(fs.readFileSync(xlwingsJs, "utf8"), ctx);
vm.runInContext(fs.readFileSync(gs, "utf8"), ctx);
try { ctx[config.call || "resolvePhase"](); } catch (e) { log.push(["threw", String(e)]); }
console.log(JSON.stringify(log));
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
    path = tmp_path_factory.mktemp("gs22") / "harness.js"
    path.write_text(GS_HARNESS)
    return path


def click(node: str, harness: Path, **config: Any) -> list[list[Any]]:
    """One click on the Google Sheet's button (``resolvePhase`` unless ``call`` says), with
    the script properties ``props`` (the URL and key by default) and ``fetch`` the answer
    (``{"code", "body"}``) or ``{"error": message}`` for a request that fails; returns the log."""
    config.setdefault("props", {"SHEETSYNC_URL": URL, "SHEETSYNC_API_KEY": KEY})
    path = harness.with_name(f"config-{os.getpid()}.json")  # an answer is too long for a command line
    path.write_text(json.dumps(config), encoding="utf-8")
    out = subprocess.run([node, str(harness), str(XLWINGS_JS), str(MACROS_DIR / "sheetsync.gs"), str(path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    log: list[list[Any]] = json.loads(out.stdout)
    return log


def alerts(log: list[list[Any]]) -> list[str]:
    assert not [x for x in log if x[0] == "threw"], log  # Google's raw error notice: never
    return [str(x[2]) for x in log if x[0] == "alert"]


@pytest.fixture(scope="module")
def server_answers() -> dict[str, tuple[int, str]]:
    """What sheetsync's endpoint answers a wrong key and a client of another xlwings version."""
    import httpx
    from test_server import serving

    from sheetsync.app.server import create_app

    body = {"client": "Google Apps Script", "version": "0.0.1", "book": {"name": "t"}, "sheets": []}
    with serving(create_app(api_key=KEY)) as base, httpx.Client(base_url=base, timeout=60) as client:
        wrong_key = client.post("/api/resolve", json=body, headers={"Authorization": "not-the-key"})
        old = client.post("/api/resolve", json=body, headers={"Authorization": KEY})
    assert (wrong_key.status_code, old.status_code) == (401, 400)
    return {"key": (wrong_key.status_code, wrong_key.text), "version": (old.status_code, old.text)}


def test_issue22_3_wrong_api_key_is_told_in_sheetsyncs_words(node: str, harness: Path,
                                                             server_answers: dict[str, tuple[int, str]]) -> None:
    code, body = server_answers["key"]
    log = click(node, harness, fetch={"code": code, "body": body})
    (shown,) = alerts(log)
    assert shown.startswith("The server refused the API key: check SHEETSYNC_API_KEY in the script properties")
    assert '{"detail"' not in shown and "Nothing was changed" in shown
    assert log.index(["releaseLock"]) < [x[0] for x in log].index("alert")  # the alert holds no lock
    assert not [x for x in log if x[0] == "setValues"]


def test_issue22_3_xlwings_version_mismatch_is_told_as_such(node: str, harness: Path,
                                                           server_answers: dict[str, tuple[int, str]]) -> None:
    code, body = server_answers["version"]
    (shown,) = alerts(click(node, harness, fetch={"code": code, "body": body}))
    assert "not the same version" in shown and "xlwings.js" in shown
    assert f"runs xlwings {xlwings.__version__}" in shown  # the server's words on which versions
    assert '{"detail"' not in shown


def test_issue22_3_another_refusal_names_the_server_and_its_reason(node: str, harness: Path) -> None:
    body = json.dumps({"detail": "the workbook sent is 30000000 bytes; the limit is 20971520"})
    (shown,) = alerts(click(node, harness, fetch={"code": 413, "body": body}))
    assert shown.startswith(f"The server at {URL}/resolve refused the step: the workbook sent is 30000000 bytes")
    (page,) = alerts(click(node, harness, fetch={"code": 502, "body": "<html>Bad Gateway</html>"}))
    assert "refused the step: <html>Bad Gateway</html>" in page


@pytest.mark.parametrize("error", [f"Address unavailable: {URL}/resolve", f"DNS error: {URL}/resolve",
                                   f"Exception: Timeout: {URL}/resolve"])
def test_issue22_3_unreachable_server_names_the_url_and_sheetsync_url(node: str, harness: Path, error: str) -> None:
    log = click(node, harness, fetch={"error": error})
    (shown,) = alerts(log)
    assert f"The server at {URL}/resolve couldn't be reached" in shown
    assert "SHEETSYNC_URL" in shown and "sheetsync serve" in shown
    assert ["releaseLock"] in log


@pytest.mark.parametrize("props", [{}, {"SHEETSYNC_URL": "  "}, {"SHEETSYNC_URL": "http://127.0.0.1:8000/api"},
                                   {"SHEETSYNC_URL": "http://localhost:8000/api"}, {"SHEETSYNC_URL": "battle.org"}])
def test_issue22_3_no_usable_sheetsync_url_says_what_to_set(node: str, harness: Path, props: dict[str, str]) -> None:
    log = click(node, harness, props={**props, "SHEETSYNC_API_KEY": KEY}, fetch={"code": 200, "body": "{}"})
    (shown,) = alerts(log)
    assert "set SHEETSYNC_URL to the public https address of a server running `sheetsync serve`" in shown
    assert [x[0] for x in log] == ["alert"]  # no request at all, to 127.0.0.1 or anywhere
    if not props.get("SHEETSYNC_URL", "").strip():
        assert "SHEETSYNC_URL is not set" in shown


def test_issue22_3_apps_script_has_no_loopback_fallback() -> None:
    gs = (MACROS_DIR / "sheetsync.gs").read_text()
    assert "SHEETSYNC_DEFAULT_URL" not in gs and '"http://127.0.0.1' not in gs


def test_issue22_3_missing_xlwings_js_is_told(node: str, harness: Path) -> None:
    (shown,) = alerts(click(node, harness, noXlwings=True, fetch={"code": 200, "body": "{}"}))
    assert "xlwings.js is missing" in shown and "xlwings copy gs" in shown


def test_issue22_3_an_answer_that_is_not_json_is_not_sheetsyncs(node: str, harness: Path) -> None:
    (shown,) = alerts(click(node, harness, fetch={"code": 200, "body": "<html>login</html>"}))
    assert "did not answer as sheetsync does" in shown and "SHEETSYNC_URL" in shown


# -- Excel without Python: a remote module for every system's buttons ---------------------------

@pytest.fixture(params=["bbn", "hexwar", "exalted"])
def system(request: pytest.FixtureRequest) -> Any:
    from sheetsync.core.registry import find_system

    return find_system(str(request.param))


def public_subs(source: str) -> list[str]:
    import re

    return re.findall(r"^Public Sub (\w+)\(\)", source.replace("\r\n", "\n"), re.M)


def test_issue22_3_every_system_ships_its_remote_module(system: Any) -> None:
    from sheetsync.backends.vba import shipped_remote_module, step_module_source

    path = shipped_remote_module(system)
    assert path.read_text(encoding="utf-8") == step_module_source(system, remote=True), (
        f"{path.name} is out of date: run python -c 'from sheetsync.backends.vba import "
        "write_shipped_remote_modules as w; w()'")
    assert "Attribute VB_Name = \"SheetsyncRemote\"" in path.read_text(encoding="utf-8")


def test_issue22_3_every_button_of_every_systems_xlsm_has_its_remote_macro(system: Any, tmp_path: Path) -> None:
    """The buttons sheetsync puts on a system's .xlsm (its marked tracker saved as .xlsm) each
    run a macro the system's shipped remote module defines; a workbook made with that module
    holds the module and the buttons together."""
    import openpyxl
    from test_buttons_systems import _modules, _vml_buttons

    from sheetsync.app.workbook_cli import _xlsm_bytes
    from sheetsync.backends.vba import (
        buttons_for,
        make_xlsm,
        shipped_remote_module,
        xlwings_vba_modules,
    )
    from sheetsync.core.registry import format_mark

    wb = openpyxl.Workbook()
    wb.active.title = "Battle"
    wb.create_sheet("State")["B1"] = format_mark(system)
    tracker = tmp_path / "tracker.xlsm"
    tracker.write_bytes(_xlsm_bytes(wb))
    macros = [m for m, _caption in _vml_buttons(tracker)]
    assert len(macros) == len(system.steps)
    subs = public_subs(shipped_remote_module(system).read_text(encoding="utf-8"))
    missing = [m for m in macros if m not in subs]
    assert not missing, f"{system.id}: buttons without a remote macro: {missing}"

    remote = make_xlsm(wb, tmp_path / "remote.xlsm",
                       [shipped_remote_module(system), MACROS_DIR / "SheetsyncGuard.bas",
                        *xlwings_vba_modules(remote=True)], buttons_for(system))
    embedded = public_subs(_modules(remote)["SheetsyncRemote"])
    assert [m for m, _c in _vml_buttons(remote)] == macros
    assert set(macros) <= set(embedded)


def test_issue22_3_battalion_remote_module_alone_lacks_the_hex_subs() -> None:
    """The failure the shipped modules fix: the battalion module has no ResolveTurn."""
    from sheetsync.backends.vba import STEP_MODULES, shipped_remote_module
    from sheetsync.core.registry import find_system

    battalion = public_subs((MACROS_DIR / STEP_MODULES[True]).read_text(encoding="utf-8"))
    assert "ResolveTurn" not in battalion
    assert "ResolveTurn" in public_subs(shipped_remote_module(find_system("hexwar")).read_text(encoding="utf-8"))


# -- a step never stands half-applied; a step that went through says so ----------------------------

@pytest.fixture(scope="module")
def trackers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A loaded tracker of every system (.xlsx), ready to resolve."""
    import yaml

    from sheetsync.app.workbook_cli import new_workbook, system_tracker_from
    from sheetsync.core.registry import find_system
    from sheetsync.sheets.disk import example_path

    tmp = tmp_path_factory.mktemp("trackers22")
    out = {"bbn": tmp / "bbn.xlsx"}
    new_workbook(out["bbn"], example_path())
    for sid in ("hexwar", "exalted"):
        system = find_system(sid)
        out[sid] = tmp / f"{sid}.xlsx"
        system_tracker_from(out[sid], system, system.load(yaml.safe_load(system.example_data())))
    return out


@pytest.fixture(scope="module")
def endpoint() -> Any:
    import httpx
    from test_server import serving

    from sheetsync.app.server import create_app

    with serving(create_app(api_key=KEY)) as base, \
            httpx.Client(base_url=base, headers={"Authorization": KEY}, timeout=120) as http:
        yield http


def resolved(endpoint: Any, tracker: Path, client: str = "Google Apps Script") -> tuple[dict[str, Any], list[str]]:
    """The endpoint's answer to Resolve on ``tracker``, and the payload's sheet names."""
    import openpyxl

    from sheetsync.backends.xlwings_remote import payload_from_openpyxl

    payload = payload_from_openpyxl(openpyxl.load_workbook(tracker), client)
    response = endpoint.post("/api/resolve", json=payload)
    assert response.status_code == 200, response.text
    return response.json(), [s["name"] for s in payload["sheets"]]


@pytest.mark.parametrize("sid", ["bbn", "hexwar", "exalted"])
def test_issue22_3_the_state_commit_is_the_last_write_of_every_answer(
        endpoint: Any, trackers: dict[str, Path], sid: str) -> None:
    answer, names = resolved(endpoint, trackers[sid])
    writes = [a for a in answer["actions"] if a["func"] != "alert"]
    state = names.index("State")
    on_state = [i for i, a in enumerate(writes) if a["sheet_position"] == state]
    assert on_state and len(on_state) < len(writes)  # a resolve writes both, so the order matters
    assert on_state == list(range(len(writes) - len(on_state), len(writes)))  # the State sheet's writes last
    last = writes[-1]
    assert (last["sheet_position"], last["start_column"]) == (state, 0)  # the blob, the very last
    assert [a["func"] for a in answer["actions"]][-1] == "alert"  # then only the confirmation


def test_issue22_3_commit_last_keeps_each_groups_order() -> None:
    from sheetsync.backends.xlwings_remote import commit_last

    acts = [{"n": 0, "sheet_position": 3, "start_column": 0}, {"n": 1, "sheet_position": 0, "start_column": 4},
            {"n": 2, "sheet_position": 3, "start_column": 2}, {"n": 3, "sheet_position": 1, "start_column": 0},
            {"n": 4, "sheet_position": 3, "start_column": 1}]
    assert [a["n"] for a in commit_last(acts, 3)] == [1, 3, 2, 4, 0]
    assert [a["n"] for a in commit_last(acts, None)] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("sid", ["bbn", "hexwar", "exalted"])
def test_issue22_3_a_click_that_went_through_says_so(node: str, harness: Path, endpoint: Any,
                                                    trackers: dict[str, Path], sid: str) -> None:
    """The server's answer ends with a short confirmation (the step's message, in an
    information box as on the desktop buttons); the Apps Script client shows it after every
    change is applied, and nothing else."""
    answer, names = resolved(endpoint, trackers[sid])
    last = answer["actions"][-1]
    assert last["func"] == "alert" and last["args"][3] == "info"
    message = last["args"][0]
    assert message and len(message) < 300 and ("resolve" in message.lower() or "tick" in message.lower())
    log = click(node, harness, sheets=names, fetch={"code": 200, "body": json.dumps(answer)})
    assert alerts(log) == [message]
    kinds = [x[0] for x in log]
    assert kinds.index("alert") > max(i for i, k in enumerate(kinds) if k == "setValues")
    assert "flush" in kinds and ["releaseLock"] in log


def test_issue22_3_state_too_narrow_leaves_the_commit_unwritten_and_says_so(
        node: str, harness: Path, endpoint: Any, trackers: dict[str, Path]) -> None:
    """A hex tracker's State sheet two columns wide (as a narrow upload): the client applies
    the visible sheets, fails on the undo record, and never writes the State blob; the
    alert says the step was not all applied and that the next step checks for it."""
    answer, names = resolved(endpoint, trackers["hexwar"])
    log = click(node, harness, sheets=names, columns={"State": 2}, fetch={"code": 200, "body": json.dumps(answer)})
    written = [x for x in log if x[0] == "setValues"]
    assert written and all(x[1] != "State" for x in written)  # the blob (State!A) never written
    (shown,) = alerts(log)
    assert "could not all be applied" in shown and "outside the dimensions" in shown
    assert "next step" in shown


def record_columns(sid: str) -> int:
    """The last column a system's undo records are written to."""
    from sheetsync.core.registry import find_system
    from sheetsync.sheets.backend import parse_range
    from sheetsync.sheets.session import RECORDS_RANGE

    if sid == "bbn":
        from sheetsync.systems.bbn.tracker.journal import HISTORY_BLOCK

        return int(find_system(sid).layout(None).block(HISTORY_BLOCK).last_col)
    rng = parse_range(RECORDS_RANGE)
    return int(rng.col2 if rng.col2 is not None else rng.col1)


@pytest.mark.parametrize("sid", ["bbn", "hexwar", "exalted"])
def test_issue22_3_every_trackers_state_sheet_spans_its_undo_records(
        node: str, harness: Path, endpoint: Any, trackers: dict[str, Path], sid: str) -> None:
    """The .xlsx's State sheet is as wide as the columns its undo records go to, so a Google
    Sheet made from it (as wide as its used range, what Apps Script sends) takes a Resolve's
    whole answer: every write applied, the commit included, and no alert but the confirmation."""
    import openpyxl

    from sheetsync.backends.xlwings_remote import payload_from_openpyxl

    wb = openpyxl.load_workbook(trackers[sid])
    assert wb["State"].max_column >= record_columns(sid) >= 6
    payload = payload_from_openpyxl(wb, "Google Apps Script")
    width = max(len(r) for r in next(s for s in payload["sheets"] if s["name"] == "State")["values"])
    assert width >= record_columns(sid)
    answer, names = resolved(endpoint, trackers[sid])
    log = click(node, harness, sheets=names, columns={"State": width}, fetch={"code": 200, "body": json.dumps(answer)})
    assert len(alerts(log)) == 1 and alerts(log)[0] == answer["actions"][-1]["args"][0]
    state_writes = [x for x in log if x[0] == "setValues" and x[1] == "State"]
    assert any(x[3] == 1 for x in state_writes) and any(x[3] >= 3 for x in state_writes)  # blob and record


def test_issue22_3_the_records_header_is_no_record() -> None:
    from sheetsync.core.registry import find_system
    from sheetsync.sheets.session import RECORDS_HEADER, parse

    for sid in ("hexwar", "exalted"):
        block = find_system(sid).layout(None).block("State_Records")
        assert tuple(c.header for c in block.columns) == RECORDS_HEADER
        assert (block.sheet, block.first_col, block.header_row) == ("State", 3, 1)
    record = [4, "4:abc:resolve:2", json.dumps({"turn": 2})]
    session = parse([], [list(RECORDS_HEADER), record])
    assert [(r.row, r.rev) for r in session.records] == [(2, 4)]


# -- the next step finds a step cut short, and puts it right ------------------------------------

GOOGLE = "Google Apps Script"


def press(endpoint: Any, wb: Any, action: str, *, cut_short: bool = False) -> list[dict[str, Any]]:
    """One click through the endpoint on the openpyxl workbook ``wb``; with ``cut_short`` the
    client stops at the first write to the State sheet (as when that write falls outside a
    too-narrow State): everything before it is applied, nothing after.  Returns the alerts."""
    from sheetsync.backends.xlwings_remote import apply_actions, payload_from_openpyxl

    payload = payload_from_openpyxl(wb, GOOGLE)
    response = endpoint.post(f"/api/{action}", json=payload)
    assert response.status_code == 200, response.text
    actions = response.json()["actions"]
    if cut_short:
        state = [s["name"] for s in payload["sheets"]].index("State")
        first = next(i for i, a in enumerate(actions) if a.get("sheet_position") == state)
        actions = actions[:first]
    shown: list[dict[str, Any]] = []
    apply_actions(wb, actions, client=GOOGLE, alerts=shown)
    return shown


def prompts(shown: list[dict[str, Any]], mode: str) -> list[str]:
    assert all(a["mode"] == mode for a in shown), shown
    return [str(a["prompt"]) for a in shown]


@pytest.mark.parametrize("sid", ["bbn", "hexwar", "exalted"])
def test_issue22_3_a_resolve_cut_short_is_found_and_put_back(endpoint: Any, trackers: dict[str, Path],
                                                             sid: str) -> None:
    """Resolve's visible writes land, its State write doesn't.  The next click (Undo) does
    not say "nothing to undo" over a sheet that shows the next turn: it says the resolve was
    cut short and puts the sheets back, so that Resolve then gives what it would have."""
    import openpyxl

    wb = openpyxl.load_workbook(trackers[sid])
    clean = openpyxl.load_workbook(trackers[sid])
    (built,) = prompts(press(endpoint, wb, "build"), "info")
    prompts(press(endpoint, clean, "build"), "info")
    (expected,) = prompts(press(endpoint, clean, "resolve"), "info")

    assert press(endpoint, wb, "resolve", cut_short=True) == []  # the client failed before the alert
    (told,) = prompts(press(endpoint, wb, "undo"), "critical")
    assert "was cut short" in told and "nothing to undo" not in told
    assert "run it again" in told or "Click" in told
    (again,) = prompts(press(endpoint, wb, "resolve"), "info")
    assert again == expected  # the same dice, the same outcome as a resolve never cut short
    (undone,) = prompts(press(endpoint, wb, "undo"), "info")
    assert "undone" in undone.lower() or "undo" in undone.lower()


@pytest.mark.parametrize("sid", ["bbn", "hexwar", "exalted"])
def test_issue22_3_an_undo_cut_short_is_found_and_put_right(endpoint: Any, trackers: dict[str, Path],
                                                           sid: str) -> None:
    """Undo's visible writes land, its State write doesn't.  The next click says so and
    puts it right: the battalion tracker puts the sheets back to the resolved phase (run
    Undo again), the hex and Exalted trackers complete the undo.  Either way the sheets and
    the State agree again, and the turn resolves as before."""
    import openpyxl

    wb = openpyxl.load_workbook(trackers[sid])
    prompts(press(endpoint, wb, "build"), "info")
    (first,) = prompts(press(endpoint, wb, "resolve"), "info")
    assert press(endpoint, wb, "undo", cut_short=True) == []
    (told,) = prompts(press(endpoint, wb, "resolve"), "critical")
    assert "was cut short" in told
    if sid == "bbn":
        assert "run it again" in told
        (undone,) = prompts(press(endpoint, wb, "undo"), "info")
        assert "undone" in undone
    else:
        assert "It is completed now" in told
    (again,) = prompts(press(endpoint, wb, "resolve"), "info")
    assert again == first  # the undo stands (its orders pending again), the turn resolves as before


# -- download: every cell of the downloaded workbook is the local tracker's ----------------------

def every_cell(path: Path) -> dict[str, dict[str, Any]]:
    import openpyxl

    wb = openpyxl.load_workbook(path)
    return {ws.title: {c.coordinate: c.value for row in ws.iter_rows() for c in row if c.value is not None}
            for ws in wb.worksheets}


@pytest.mark.parametrize("sid", ["bbn", "hexwar", "exalted"])
def test_issue22_3_download_gives_back_every_cell_of_the_local_tracker(
        sid: str, trackers: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tracker built locally, uploaded to a Google Sheet (the fake Sheets API)
    and downloaded into a new workbook: every cell of every sheet is the local tracker's,
    the cohort names over the Battle sheet's Health-by-phase table included."""
    import shutil

    from fake_sheets_api import FakeSheetsServer, service_account_info
    from typer.testing import CliRunner

    from sheetsync.app.cli import app
    from sheetsync.app.workbook_cli import excel_backend
    from sheetsync.sheets import marks as steps

    local = tmp_path / f"local-{sid}.xlsx"
    shutil.copy(trackers[sid], local)
    steps.run("build", excel_backend(local))  # Build names the cohorts over Health by phase
    runner = CliRunner()
    with FakeSheetsServer() as server:
        info, _ = service_account_info(server.url)
        key_path = tmp_path / "key.json"
        key_path.write_text(json.dumps(info))
        monkeypatch.setenv("SHEETSYNC_SHEETS_API_ROOT", f"{server.url}/v4/spreadsheets")
        sa = ["--service-account", str(key_path)]
        key = server.create_spreadsheet("Battle night")
        res = runner.invoke(app, ["upload", str(local), key, *sa])
        assert res.exit_code == 0, res.output
        back = tmp_path / f"back-{sid}.xlsx"
        res = runner.invoke(app, ["download", key, str(back), *sa])
        assert res.exit_code == 0, res.output
    want, got = every_cell(local), every_cell(back)
    assert sorted(got) == sorted(want)
    diffs = [(sheet, ref, want[sheet].get(ref), got[sheet].get(ref)) for sheet in want
             for ref in sorted(set(want[sheet]) | set(got[sheet])) if want[sheet].get(ref) != got[sheet].get(ref)]
    assert diffs == []
    if sid == "bbn":
        from sheetsync.core.registry import find_system

        block = find_system("bbn").layout(None).block("Battle_HealthByPhase")
        header = [got["Battle"].get(f"{chr(64 + block.first_col + i)}{block.header_row}") for i in range(1, 3)]
        assert all(isinstance(h, str) and not h.startswith("Cohort ") for h in header), header
