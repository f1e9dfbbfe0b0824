"""Issue 26, item 1: one request must never freeze the server.

A step that runs past its time budget is stopped and answers one alert, with nothing
written, and its tracker's lock is released so that the next click on that tracker is
answered; steps queue per tracker, so a slow step on one tracker never holds up another's;
``/health`` reports a step that runs past its budget.  The steps here are stand-ins put in
with ``monkeypatch``: a pure-Python loop that never ends, and a step that waits on an event.
They wait on events, not on the clock, except where a budget must pass (then each wait has
a deadline far past it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openpyxl
import pytest
from test_server import KEY, serving

from sheetsync.app import server
from sheetsync.app.server import (
    DEFAULT_STEP_BUDGET,
    STEP_BUDGET_ENV,
    StepOverBudget,
    create_app,
    run_within,
)
from sheetsync.app.workbook_cli import new_workbook
from sheetsync.backends.xlwings_remote import payload_from_openpyxl
from sheetsync.core.errors import BackendError
from sheetsync.sheets.backend import RangeUpdate
from sheetsync.sheets.disk import example_path

BUDGET = 0.3
"""The budget of the test servers' steps, in seconds."""
DEADLINE = 60.0
"""How long a test waits for what must happen long before (a hung server fails, not hangs)."""


@pytest.fixture(scope="module")
def payload(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("budget") / "tracker.xlsx"
    new_workbook(path, example_path())
    return payload_from_openpyxl(openpyxl.load_workbook(path), "Google Apps Script")


def named(payload: dict[str, Any], name: str) -> dict[str, Any]:
    """The payload as tracker ``name`` sends it."""
    return {**payload, "book": {**payload["book"], "name": name}}


@pytest.fixture(scope="module")
def app() -> Any:
    return create_app(api_key=KEY, step_budget=BUDGET)


@pytest.fixture(scope="module")
def url(app: Any) -> Iterator[str]:
    with serving(app) as base:
        yield base


def post(url: str, action: str, payload: dict[str, Any]) -> httpx.Response:
    with httpx.Client(base_url=url, headers={"Authorization": KEY}, timeout=DEADLINE) as http:
        return http.post(f"/api/{action}", json=payload)


def alert_of(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    actions = response.json()["actions"]
    assert [a["func"] for a in actions] == ["alert"], actions  # nothing is written
    return str(actions[0]["args"][0])


def wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


# -- the budget ----------------------------------------------------------------------------------


def test_issue26_a_slow_step_is_stopped_after_its_budget_and_the_lock_is_released(
        app: Any, url: str, payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A pure-Python step that never ends (it has queued a write first) is stopped at the
    budget: the answer is the alert alone, and the same tracker's next click is answered."""
    from sheetsync.sheets import marks as steps

    real_run = steps.run
    calls: list[str] = []
    stop = threading.Event()

    def endless(action: str, backend: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(action)
        if len(calls) > 1:
            return real_run(action, backend, *args, **kwargs)
        backend.write_ranges([RangeUpdate("Battle!B2", [["half done"]])])
        deadline = time.monotonic() + DEADLINE
        n = 0
        while not stop.is_set() and time.monotonic() < deadline:  # pure Python: stopped at a bytecode
            n += 1
        raise AssertionError("the step was not stopped")

    monkeypatch.setattr(steps, "run", endless)
    try:
        prompt = alert_of(post(url, "resolve", payload))
    finally:
        stop.set()
    assert "resolve was stopped" in prompt and f"{BUDGET:g} s budget" in prompt
    assert "nothing was written" in prompt
    # the lock is released and nothing of the step is left running
    assert len(app.state.tracker_locks) == 0 and app.state.running == {}
    answer = post(url, "resolve", payload)
    assert answer.status_code == 200
    assert "setValues" in [a["func"] for a in answer.json()["actions"]]
    assert calls == ["resolve", "resolve"]


def test_issue26_a_slow_step_on_tracker_a_does_not_block_a_step_on_tracker_b(
        url: str, payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    real_step = server._step
    started, release = threading.Event(), threading.Event()

    def step(action: str, body: dict[str, Any], engine: str = "payload") -> Any:
        if body["book"]["name"] == "A.xlsx":
            started.set()
            release.wait(DEADLINE)  # waits in C: the budget's stop lands when it returns
        return real_step(action, body, engine)

    monkeypatch.setattr(server, "_step", step)
    answers: dict[str, httpx.Response] = {}
    a = threading.Thread(target=lambda: answers.update(a=post(url, "noop", named(payload, "A.xlsx"))))
    a.start()
    try:
        assert started.wait(DEADLINE)
        b = post(url, "noop", named(payload, "B.xlsx"))  # answered while A's step still runs
        assert not release.is_set() and a.is_alive()
        assert b.status_code == 200 and [x["func"] for x in b.json()["actions"]] != ["alert"]
    finally:
        release.set()
        a.join(DEADLINE)
    assert answers["a"].status_code == 200  # A is answered too once its step ends


def test_issue26_two_steps_on_one_tracker_still_queue(
        app: Any, url: str, payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A double click: the second step on the same tracker starts only when the first is done."""
    real_step = server._step
    entered: list[int] = []
    release = threading.Event()

    def step(action: str, body: dict[str, Any], engine: str = "payload") -> Any:
        entered.append(len(entered))
        if len(entered) == 1:
            release.wait(DEADLINE)
        return real_step(action, body, engine)

    monkeypatch.setattr(server, "_step", step)
    locks = app.state.tracker_locks
    clicks = [threading.Thread(target=post, args=(url, "noop", named(payload, "Same.xlsx"))) for _ in range(2)]
    clicks[0].start()
    wait_for(lambda: entered == [0], "the first click's step")
    clicks[1].start()
    wait_for(lambda: locks._locks.get("Same.xlsx", (None, [0]))[1][0] == 2, "the second click to queue")
    assert entered == [0]  # the second waits for the lock
    release.set()
    for t in clicks:
        t.join(DEADLINE)
    assert entered == [0, 1] and len(locks) == 0


# -- /health -------------------------------------------------------------------------------------


def test_issue26_health_reports_a_stuck_step(url: str, payload: dict[str, Any],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A step the stop can't reach (it waits inside C) makes /health answer 503 "stuck",
    naming the step and its tracker; once it ends, it is refused and /health is ok again."""
    real_step = server._step
    started, release = threading.Event(), threading.Event()

    def stuck(action: str, body: dict[str, Any], engine: str = "payload") -> Any:
        started.set()
        release.wait(DEADLINE)
        return real_step(action, body, engine)

    monkeypatch.setattr(server, "_step", stuck)
    assert httpx.get(f"{url}/health").json() == {"status": "ok"}
    answers: list[httpx.Response] = []
    click = threading.Thread(target=lambda: answers.append(post(url, "build", named(payload, "Stuck.xlsx"))))
    click.start()
    try:
        assert started.wait(DEADLINE)
        wait_for(lambda: httpx.get(f"{url}/health").status_code == 503, "/health to report the stuck step")
        health = httpx.get(f"{url}/health")
        body = health.json()
        assert health.status_code == 503 and body["status"] == "stuck"
        (entry,) = body["stuck"]
        assert entry["action"] == "build" and entry["tracker"] == "Stuck.xlsx"
        assert entry["seconds"] >= BUDGET + server.STUCK_GRACE  # reported to 0.1 s: the threshold itself may show
    finally:
        release.set()
        click.join(DEADLINE)
    assert "build was stopped" in alert_of(answers[0])
    health = httpx.get(f"{url}/health")
    assert health.status_code == 200 and health.json() == {"status": "ok"}


# -- the watchdog and the settings ---------------------------------------------------------------


def test_issue26_run_within_never_stops_what_runs_after_the_step() -> None:
    """The race of a step ending as its budget is spent: whichever wins, the stop lands in
    the step or nowhere, never in the code that runs next on the thread."""
    for _ in range(300):
        try:
            run_within(0.0002, lambda: sum(range(2000)))
        except StepOverBudget:
            pass  # it landed in the step: that is allowed
        total = 0
        for i in range(20000):  # where a stray stop would land
            total += i
        assert total == sum(range(20000))
    # and the race left the watchdog working for every thread: a stop landing just after a
    # lock was taken once leaked the watchdog's lock, and every later step ran unwatched
    outcome: list[str] = []

    def endless() -> None:
        deadline = time.monotonic() + DEADLINE
        try:
            run_within(0.05, lambda: [None for _ in iter(lambda: time.monotonic() < deadline, False)])
            outcome.append("ended")
        except StepOverBudget:
            outcome.append("stopped")

    other = threading.Thread(target=endless, daemon=True)
    other.start()
    other.join(DEADLINE)
    assert outcome == ["stopped"]


def test_issue26_run_within_stops_steps_on_several_threads_each_at_its_budget() -> None:
    stop = threading.Event()
    outcome: dict[int, str] = {}

    def spin() -> None:
        deadline = time.monotonic() + DEADLINE
        while not stop.is_set() and time.monotonic() < deadline:
            pass

    def endless(i: int) -> None:
        try:
            run_within(0.1 * (i + 1), spin)
            outcome[i] = "ended"
        except StepOverBudget:
            outcome[i] = "stopped"

    threads = [threading.Thread(target=endless, args=(i,), daemon=True) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    stop.set()
    assert outcome == {0: "stopped", 1: "stopped", 2: "stopped"}


def test_issue26_run_within_returns_a_quick_steps_value() -> None:
    assert run_within(5.0, lambda: 42) == 42
    with pytest.raises(ZeroDivisionError):
        run_within(5.0, lambda: 1 // 0)


def test_issue26_the_budget_is_set_by_argument_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STEP_BUDGET_ENV, raising=False)
    assert create_app(api_key=KEY).state.step_budget == DEFAULT_STEP_BUDGET == 10.0
    monkeypatch.setenv(STEP_BUDGET_ENV, "2.5")
    assert create_app(api_key=KEY).state.step_budget == 2.5
    assert create_app(api_key=KEY, step_budget=4).state.step_budget == 4
    for bad in ("soon", "0", "-1", "nan", "1e9"):
        monkeypatch.setenv(STEP_BUDGET_ENV, bad)
        with pytest.raises(BackendError, match=STEP_BUDGET_ENV):
            create_app(api_key=KEY)
    with pytest.raises(ValueError, match="budget"):
        create_app(api_key=KEY, step_budget=0)


def test_issue26_tracker_locks_keep_nothing_of_past_trackers(payload: dict[str, Any]) -> None:
    locks = server.TrackerLocks()
    for i in range(50):
        with locks.held(f"tracker {i}"):
            assert len(locks) == 1
    assert len(locks) == 0
