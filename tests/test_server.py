"""``sheetsync serve``: the endpoint the xlwings remote clients post to, running for real.

The app runs under uvicorn on a free loopback port, in a thread.  Each button press here is
what the Apps Script client (``runPython`` in ``xlwings.js``) or the VBA client
(``RunRemotePython``) does: post the workbook's content as JSON, then apply the returned
actions to the workbook.  The workbook is an openpyxl copy of a generated tracker, its
payload built from its real sheets, values and names (:func:`payload_from_openpyxl`), and
the actions are applied the way each client applies them (:func:`apply_actions`).

The golden scenario (the embedded example battle: Build, Resolve, Undo, Resolve, End) then
has to leave the workbook cell for cell as the openpyxl path leaves a second copy of it:
backend parity.  The phase dice come from the battle's seed and the phase number, so both
paths roll the same dice.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import pytest
import uvicorn
import xlwings
import yaml
from battles import make_battle

from sheetsync.app import usecases
from sheetsync.app.server import create_app
from sheetsync.app.workbook_cli import excel_backend, new_workbook, write_template
from sheetsync.backends.xlwings_remote import CLIENTS, apply_actions, payload_from_openpyxl
from sheetsync.sheets.disk import example_path
from sheetsync.systems.bbn.tracker.layout import layout

KEY = "s3cret-battle-key"
LAY = layout()
GOLDEN_STEPS = ("build", "resolve", "undo", "resolve", "end")

Snapshot = dict[str, Any]


# -- the running endpoint -----------------------------------------------------------------


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Run ``app`` under uvicorn on a free 127.0.0.1 port until the block ends; yields its URL.

    The listening socket is bound here and handed to uvicorn, so no other process can take
    the port between choosing it and serving on it."""
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it every answer waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
    assert not thread.is_alive(), "uvicorn did not stop"


@pytest.fixture(scope="module", autouse=True)
def noncommercial_license() -> Iterator[None]:
    # xlwings' remote engine (xw.Book(json=...)) is part of xlwings PRO, free for
    # noncommercial use with this key.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLWINGS_LICENSE_KEY", "noncommercial")
        yield


@pytest.fixture(scope="module")
def app() -> Any:
    return create_app(api_key=KEY)


@pytest.fixture(scope="module")
def url(app: Any) -> Iterator[str]:
    with serving(app) as base:
        yield base


@pytest.fixture
def http(url: str) -> Iterator[httpx.Client]:
    # The xlwings clients send the key as is in Authorization (no scheme).
    with httpx.Client(base_url=url, headers={"Authorization": KEY}, timeout=120) as client:
        yield client


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- workbooks ------------------------------------------------------------------------------


def load(path: Path) -> openpyxl.Workbook:
    return openpyxl.load_workbook(path)


def cells(wb: openpyxl.Workbook) -> Snapshot:
    """Every non-empty cell of every sheet, in sheet order: ``{sheet: {A1: (kind, value)}}``.

    ``kind`` is ``"formula"`` for a formula (compared as its text) and otherwise the
    value's type, so ``7`` and ``"7"`` or ``True`` and ``1`` are told apart."""
    out: Snapshot = {}
    for ws in wb.worksheets:
        sheet: dict[str, tuple[str, Any]] = {}
        for row in ws.iter_rows():
            for cell in row:
                if cell.value is None:
                    continue
                kind = "formula" if cell.data_type == "f" else type(cell.value).__name__
                sheet[cell.coordinate] = (kind, cell.value)
        out[ws.title] = sheet
    return out


def reloaded(wb: openpyxl.Workbook) -> openpyxl.Workbook:
    buf = io.BytesIO()
    wb.save(buf)
    buf.seek(0)
    return openpyxl.load_workbook(buf)


def differences(a: Snapshot, b: Snapshot) -> list[tuple[str, str, Any, Any]]:
    assert list(a) == list(b), "the sheets differ"
    out = []
    for sheet in a:
        for ref in sorted(set(a[sheet]) | set(b[sheet])):
            x, y = a[sheet].get(ref), b[sheet].get(ref)
            if x != y:
                out.append((sheet, ref, x, y))
    return out


def cell(snapshot: Snapshot, ref: str) -> Any:
    sheet, _, address = ref.rpartition("!")
    found = snapshot[sheet.strip("'")].get(address)
    return None if found is None else found[1]


def stamps(snapshot: Snapshot) -> list[Any]:
    """The Phase stamps of the Orders rows, top to bottom (``None`` for pending rows)."""
    block = LAY.block("Orders_Table")
    col = openpyxl.utils.get_column_letter(block.first_col + block.index("phase"))
    orders = snapshot["Orders"]
    rows = range(block.first_row, block.first_row + 400)
    cohort_col = openpyxl.utils.get_column_letter(block.first_col + block.index("cohort"))
    return [orders.get(f"{col}{r}", (None, None))[1] for r in rows if f"{cohort_col}{r}" in orders]


def log_rows(snapshot: Snapshot) -> list[tuple[Any, ...]]:
    """The Log's rows below its header, as (phase, order, cohort, task, outcome)."""
    log = snapshot["Log"]
    last = max(int(ref[1:]) for ref in log if ref[0] == "A")
    return [tuple(log.get(f"{c}{r}", (None, None))[1] for c in "ABCDF") for r in range(2, last + 1)]


# -- pressing a button over HTTP ----------------------------------------------------------


def post(http: httpx.Client, action: str, payload: Any) -> dict[str, Any]:
    response = http.post(f"/api/{action}", json=payload)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def apply(wb: openpyxl.Workbook, answer: dict[str, Any], client: str) -> list[dict[str, Any]]:
    alerts: list[dict[str, Any]] = []
    apply_actions(wb, answer, client=client, alerts=alerts)
    return alerts


def press(http: httpx.Client, wb: openpyxl.Workbook, action: str, client: str) -> list[dict[str, Any]]:
    """One click of ``action`` in the spreadsheet ``wb``: returns the alerts shown."""
    answer = post(http, action, payload_from_openpyxl(wb, client))
    return apply(wb, answer, client)


def modes(alerts: list[dict[str, Any]]) -> list[str]:
    """The kinds of the alerts shown: a step that went through shows one ``info`` alert,
    its confirmation (issue 22.3); a refusal one ``critical``."""
    return [str(a["mode"]) for a in alerts]


def run_openpyxl_path(path: Path, steps: tuple[str, ...]) -> list[str]:
    return [usecases.run(step, excel_backend(path)).message for step in steps]


# -- the golden scenario, both ways -------------------------------------------------------


@pytest.fixture(scope="module")
def example_tracker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("example") / "tracker.xlsx"
    new_workbook(path, example_path())
    return path


@pytest.fixture(scope="module")
def golden_openpyxl(example_tracker: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, list[str]]:
    """Copy B: the golden scenario through the openpyxl path (``ExcelBackend`` on the file)."""
    b = tmp_path_factory.mktemp("golden") / "b.xlsx"
    shutil.copy(example_tracker, b)
    messages = run_openpyxl_path(b, GOLDEN_STEPS)
    return cells(load(b)), messages


def test_golden_scenario_over_http_matches_the_openpyxl_path_cell_for_cell(
    http: httpx.Client, client: str, example_tracker: Path, tmp_path: Path,
    golden_openpyxl: tuple[Snapshot, list[str]],
) -> None:
    expected, messages = golden_openpyxl
    a = tmp_path / "a.xlsx"
    shutil.copy(example_tracker, a)
    for step, message in zip(GOLDEN_STEPS, messages, strict=True):
        wb = load(a)
        alerts = press(http, wb, step, client)
        # every step succeeded, and says so (issue 22.3) as the desktop buttons do
        assert [(x["mode"], x["prompt"]) for x in alerts] == [("info", message)], (step, alerts)
        wb.save(a)  # the spreadsheet keeps the change; the next click sends it again
    got = cells(load(a))
    # Remote payloads carry formula cells as values only (Orders!P, the Odds column), but
    # no step writes over a formula, so nothing needs leaving out: every cell is compared.
    assert differences(got, expected) == []
    # The scenario did what it says (parity of two empty results would prove nothing).
    assert messages[1] == messages[3] and messages[1].startswith("Phase 1 resolved: 10 orders")
    assert messages[4].startswith("Battle ended after phase 1")
    assert cell(got, LAY.cells["Battle_Phase"].ref) == 2
    assert cell(got, LAY.cells["Battle_LastAction"].ref) == messages[4]
    assert set(stamps(got)) == {1}
    assert len(got["Aftermath"]) > 20
    tasks = [row[3] for row in log_rows(got)]
    assert tasks[0] == "Build Cohorts" and tasks[16] == "Undo Phase" and tasks[-1] == "End Battle"
    assert len(tasks) == 1 + 15 + 1 + 15 + 1  # each resolve: 10 orders and 5 end-of-phase lines


def test_twelve_cohorts_resolve_over_http_matches_the_openpyxl_path(
    http: httpx.Client, tmp_path: Path
) -> None:
    battle_file = tmp_path / "battle12.yaml"
    battle_file.write_text(yaml.safe_dump(make_battle(12), sort_keys=False), encoding="utf-8")
    base = tmp_path / "base.xlsx"
    new_workbook(base, battle_file)
    b = tmp_path / "b.xlsx"
    shutil.copy(base, b)
    (message,) = run_openpyxl_path(b, ("resolve",))
    assert message.startswith("Phase 1 resolved: 24 orders")
    expected = cells(load(b))
    for client in CLIENTS:
        wb = load(base)
        assert modes(press(http, wb, "resolve", client)) == ["info"]  # the confirmation alone
        got = cells(reloaded(wb))
        assert differences(got, expected) == [], client
        assert cell(got, LAY.cells["Battle_Phase"].ref) == 2
        assert stamps(got) == [1] * 24


@pytest.fixture(scope="module")
def calculated_example(example_tracker: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example tracker recalculated by LibreOffice: its formulas' values are cached."""
    import libreoffice as lo

    lo.require_libreoffice()
    return lo.recalc_and_convert(example_tracker, tmp_path_factory.mktemp("calc"))


@pytest.mark.libreoffice
@pytest.mark.filterwarnings("ignore:.*extension is not supported:UserWarning")
def test_resolve_with_computed_formula_values_in_the_payload(
    http: httpx.Client, client: str, example_tracker: Path, calculated_example: Path, tmp_path: Path
) -> None:
    """Real clients send what formulas compute: the Odds column arrives as numbers."""
    calculated = openpyxl.load_workbook(calculated_example, data_only=True)
    wb = load(example_tracker)
    payload = payload_from_openpyxl(wb, client, cached_values=calculated)
    orders = next(s for s in payload["sheets"] if s["name"] == "Orders")
    block = LAY.block("Orders_Table")
    odds = [row[block.first_col - 1 + block.index("odds")] for row in orders["values"][block.first_row - 1:]]
    assert any(isinstance(v, float) and 0 < v < 1 for v in odds)  # the payload is realistic
    assert modes(apply(wb, post(http, "resolve", payload), client)) == ["info"]  # the confirmation alone
    b = tmp_path / "b.xlsx"
    shutil.copy(example_tracker, b)
    run_openpyxl_path(b, ("resolve",))
    assert differences(cells(reloaded(wb)), cells(load(b))) == []


# -- a failed step ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blank_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_template(tmp_path_factory.mktemp("blank") / "blank.xlsx")


def test_a_failed_step_answers_200_with_an_alert_naming_the_problem(
    http: httpx.Client, client: str, blank_template: Path
) -> None:
    wb = load(blank_template)
    before = cells(wb)
    answer = post(http, "resolve", payload_from_openpyxl(wb, client))
    assert [a["func"] for a in answer["actions"]] == ["alert"]  # nothing written
    alerts = apply(wb, answer, client)
    assert alerts == [{
        "prompt": "this tracker has no cohorts yet: fill in Cohorts and Characters, then Build Cohorts",
        "title": "sheetsync", "buttons": "ok", "mode": "critical", "callback": "",
    }]
    assert cells(wb) == before


# -- a double click -----------------------------------------------------------------------


def test_double_click_sequential_and_concurrent_resolve_apply_once(
    url: str, client: str, example_tracker: Path
) -> None:
    base = load(example_tracker)
    before = cells(base)
    payload = payload_from_openpyxl(base, client)

    with httpx.Client(base_url=url, headers={"Authorization": KEY}, timeout=120) as http:
        once = post(http, "resolve", payload)
        reference = load(example_tracker)
        assert modes(apply(reference, once, client)) == ["info"]  # the confirmation alone
        expected = cells(reference)

        # sequential: the second click sends the same workbook (the first answer isn't back yet)
        first, second = post(http, "resolve", payload), post(http, "resolve", payload)

    # concurrent: two clicks in flight at the same moment, each on its own connection
    barrier = threading.Barrier(2)
    answers: list[Any] = [None, None]

    def click(i: int) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": KEY}, timeout=120) as http:
            barrier.wait()
            answers[i] = post(http, "resolve", payload)

    threads = [threading.Thread(target=click, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(a is not None for a in answers)

    for pair in ((first, second), tuple(answers)):
        assert pair[0] == pair[1] == once  # the same dice, the same cells
        wb = load(example_tracker)
        for answer in pair:
            assert modes(apply(wb, answer, client)) == ["info"]  # the confirmation alone
        got = cells(wb)
        assert differences(got, expected) == []
    # ... and applying once really resolved one phase
    assert cell(before, LAY.cells["Battle_Phase"].ref) == 1
    assert cell(expected, LAY.cells["Battle_Phase"].ref) == 2
    assert set(stamps(before)) == {None} and stamps(expected) == [1] * len(stamps(before))
    assert log_rows(before) == []
    logged = log_rows(expected)
    assert [row[1] for row in logged if row[1] is not None] == list(range(1, 11))  # each order once
    assert len(logged) == 15 and {row[0] for row in logged} == {1}


def test_resolve_after_the_answer_was_applied_is_refused_and_changes_nothing(
    http: httpx.Client, client: str, example_tracker: Path
) -> None:
    wb = load(example_tracker)
    assert modes(press(http, wb, "resolve", client)) == ["info"]  # the confirmation alone
    wb = reloaded(wb)
    after_first = cells(wb)
    answer = post(http, "resolve", payload_from_openpyxl(wb, client))
    assert [a["func"] for a in answer["actions"]] == ["alert"]
    (shown,) = apply(wb, answer, client)
    assert shown["mode"] == "critical"
    assert "no pending orders for phase 2" in shown["prompt"]
    assert "phase 1 is already resolved" in shown["prompt"]
    assert cells(wb) == after_first


# -- what the endpoint refuses ------------------------------------------------------------


@pytest.fixture(scope="module")
def example_payload(example_tracker: Path) -> dict[str, Any]:
    return payload_from_openpyxl(load(example_tracker), "VBA")


def assert_refused(response: httpx.Response, status: int, *words: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    detail = response.json()["detail"]
    assert isinstance(detail, str)
    for word in words:
        assert word in detail, detail
    assert "Traceback" not in response.text and 'File "' not in response.text
    return detail


def test_401_without_the_key_or_with_a_wrong_one(url: str, example_payload: dict[str, Any]) -> None:
    with httpx.Client(base_url=url, timeout=120) as http:
        for headers in ({}, {"Authorization": "nope"}, {"Authorization": f"Bearer {KEY}x"},
                        {"Authorization": KEY[:-1]}, {"Authorization": ""}):
            response = http.post("/api/resolve", json=example_payload, headers=headers)
            assert_refused(response, 401, "API key")
            assert response.headers["www-authenticate"] == "Bearer"
        # unauthenticated junk learns nothing else: 401 before any size or shape check
        assert_refused(http.post("/api/resolve", content=b"not json"), 401)
        for headers in ({"Authorization": KEY}, {"Authorization": f"Bearer {KEY}"},
                        {"Authorization": f"bearer {KEY}"}):
            response = http.post("/api/noop", json=example_payload, headers=headers)
            assert response.status_code == 200, response.text
            assert response.json() == {"actions": []}
        assert http.get("/health").json() == {"status": "ok"}


def test_413_for_a_body_over_the_limit(example_payload: dict[str, Any]) -> None:
    limit = 4096
    body = json.dumps(example_payload).encode()
    assert len(body) > limit
    with serving(create_app(api_key=KEY, max_bytes=limit)) as base, \
            httpx.Client(base_url=base, headers={"Authorization": KEY}, timeout=120) as http:
        assert_refused(http.post("/api/resolve", content=body), 413, str(limit))
        # without a Content-Length (chunked upload) the server stops reading at the limit
        chunked = http.post("/api/resolve", content=iter([body[i:i + 1000] for i in range(0, 8000, 1000)]))
        assert_refused(chunked, 413, str(limit))
        # under the limit the request goes on to the next check
        assert_refused(http.post("/api/resolve", content=b"[]"), 422)


MALFORMED = {
    "not JSON": b"sheets: [Battle]",
    "not UTF-8": b"\xff\xfe{}",
    "empty": b"",
    "a JSON list": b"[1, 2, 3]",
    "a JSON string": b'"Battle"',
    "nested too deeply": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_422_for_a_body_that_is_not_a_payload(http: httpx.Client, body: bytes) -> None:
    assert_refused(http.post("/api/resolve", content=body), 422)


def test_422_for_payloads_missing_or_misshaping_what_xlwings_needs(
    http: httpx.Client, example_payload: dict[str, Any]
) -> None:
    def without(key: str) -> dict[str, Any]:
        return {k: v for k, v in example_payload.items() if k != key}

    assert_refused(http.post("/api/resolve", json=without("sheets")), 422, "sheets")
    assert_refused(http.post("/api/resolve", json=without("book")), 422, "book")
    assert_refused(http.post("/api/resolve", json={**example_payload, "sheets": {"Battle": []}}), 422, "sheets")
    assert_refused(http.post("/api/resolve", json={**example_payload, "sheets": [1, 2]}), 422, "sheets[0]")
    assert_refused(http.post("/api/resolve", json={**example_payload, "book": 5}), 422, "book")
    assert_refused(http.post("/api/resolve", json={**example_payload, "book": {}}), 422, "name")
    sheets = [dict(s) for s in example_payload["sheets"]]
    sheets[2]["values"] = "A1:B2"
    assert_refused(http.post("/api/resolve", json={**example_payload, "sheets": sheets}), 422,
                   f"sheets[2] ({sheets[2]['name']!r})", "values")


def test_400_when_the_client_and_server_xlwings_versions_differ(
    http: httpx.Client, example_payload: dict[str, Any]
) -> None:
    payload = {**example_payload, "version": "0.30.0"}
    detail = assert_refused(http.post("/api/resolve", json=payload), 400, "0.30.0", xlwings.__version__)
    assert "must match" in detail


def test_timings_are_kept_per_action(app: Any, http: httpx.Client, example_payload: dict[str, Any]) -> None:
    count = len(app.state.timings)
    post(http, "noop", example_payload)
    post(http, "undo", example_payload)  # fails (nothing to undo), still timed
    new = list(app.state.timings)[count:]
    assert [name for name, _ in new] == ["noop", "undo"]
    assert all(0 < seconds < 60 for _, seconds in new)


def test_issue12_each_answer_carries_its_server_timing_and_the_json_bytes_of_jsonresponse(
        app: Any, http: httpx.Client, example_payload: dict[str, Any]) -> None:
    """Every step's answer says the server's own time in a W3C ``Server-Timing`` header (the
    figure kept in ``app.state.timings``) and the CPU time of its step, and its body is byte for byte what starlette's
    JSONResponse encodes for the same actions."""
    from starlette.responses import JSONResponse

    for action in ("resolve", "noop", "undo"):
        response = http.post(f"/api/{action}", json=example_payload)
        assert response.status_code == 200
        metrics = dict(m.strip().split(";dur=") for m in response.headers["server-timing"].split(","))
        assert list(metrics) == ["step", "cpu"]
        step, cpu = float(metrics["step"]), float(metrics["cpu"])
        assert 0 < step < 60_000 and 0 < cpu < 60_000
        assert abs(step / 1000 - app.state.timings[-1][1]) < 1e-5
        assert response.content == JSONResponse(response.json()).body
    assert any(a["func"] == "setValues" for a in http.post("/api/resolve", json=example_payload).json()["actions"])


def test_issue12_an_unknown_engine_is_refused_and_the_timings_are_bounded() -> None:
    from sheetsync.app.server import ENGINES

    assert ENGINES == ("payload", "xlwings")
    assert create_app(api_key=KEY).state.timings.maxlen == 10_000  # bounded, however many clicks
    with pytest.raises(ValueError, match="unknown engine 'excel'; known: payload, xlwings"):
        create_app(api_key=KEY, engine="excel")


def test_issue12_a_started_server_has_every_system_loaded_and_its_objects_frozen() -> None:
    """Issue 12: once the server starts (uvicorn's lifespan), every tracker system's step
    code is loaded and everything alive then is out of the cyclic collector's reach, so a
    full collection during a click walks only what came after."""
    import gc

    from sheetsync.core import registry

    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    with serving(create_app(api_key=KEY)) as url:
        assert httpx.get(f"{url}/health").json() == {"status": "ok"}
        frozen = gc.get_freeze_count()
    assert frozen > 10_000
    assert "sheetsync.backends.payload" in sys.modules
    for system_id in registry.tracker_system_ids():
        steps_module = type(registry.find_system(system_id).tracker_steps()).__module__
        assert steps_module in sys.modules


def test_issue12_the_collector_is_paused_while_a_payload_is_parsed_and_its_step_runs(
        http: httpx.Client, example_payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12: a click's data is freed by reference counting, so the cyclic collector is
    kept off while the payload is parsed and the step runs (it walked the payload's rows
    some six times a Resolve and freed nothing), and it is on again once the answer is made."""
    import gc

    from sheetsync.app import server

    seen: list[tuple[str, bool]] = []
    real_parsed, real_step = server._parsed, server._step

    def parsed(body: bytes) -> Any:
        seen.append(("parse", gc.isenabled()))
        return real_parsed(body)

    def step(action: str, payload: dict[str, Any], engine: str = "payload") -> Any:
        seen.append((action, gc.isenabled()))
        return real_step(action, payload, engine)

    monkeypatch.setattr(server, "_parsed", parsed)
    monkeypatch.setattr(server, "_step", step)
    assert gc.isenabled()
    answer = post(http, "resolve", example_payload)
    assert any(a["func"] == "setValues" for a in answer["actions"])
    assert http.post("/api/resolve", content=b"{not json").status_code == 422  # refused inside the pause too
    assert seen == [("parse", False), ("resolve", False), ("parse", False)]
    assert gc.isenabled()


def test_issue12_pauses_of_the_collector_nest_across_threads_and_keep_it_off_if_it_was() -> None:
    """The collector runs again when the last of overlapping pauses ends (one request
    parsed while another's step runs), and a collector that was off before the first stays
    off."""
    import gc

    from sheetsync.app.server import collector_paused

    inside = threading.Event()
    release = threading.Event()
    states: list[bool] = []

    def worker() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)
        states.append(gc.isenabled())

    assert gc.isenabled()
    thread = threading.Thread(target=worker)
    thread.start()
    assert inside.wait(10)
    with collector_paused():
        assert not gc.isenabled()
    states.append(gc.isenabled())  # the worker's pause still holds
    release.set()
    thread.join(10)
    assert states == [False, True]
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_issue12_cyclic_garbage_made_during_a_pause_is_still_collected_after_it() -> None:
    """Nothing is lost to the pause: a cycle a step leaves behind is freed by the first
    collection after it."""
    import gc
    import weakref

    from sheetsync.app.server import collector_paused

    class Node:
        other: Any = None

    frozen = gc.get_freeze_count()
    with collector_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b
        assert ref() is not None  # a cycle: reference counting alone can't free it
    # nothing was frozen by the pause (the count only drops, as another test's frozen objects are freed)
    assert gc.get_freeze_count() <= frozen and gc.isenabled()
    gc.collect()
    assert ref() is None  # and the cycle is collected: it was not moved out of the collector's reach
