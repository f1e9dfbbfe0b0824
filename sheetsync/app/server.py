"""``sheetsync serve``: the four buttons over HTTP, for Google Sheets (Apps Script
``runPython`` from xlwings.js) and for Excel without a local Python (VBA
``RunRemotePython``).

Each route takes the JSON an xlwings remote client sends, runs the step on it and answers
with the actions the client applies.  By default the step reads the grids straight from
the payload (:class:`~sheetsync.backends.payload.PayloadBackend`, issue 12), which answers
the same actions as xlwings' own ``xw.Book(json=payload)`` under the
:class:`XlwingsBackend` the desktop buttons use; ``create_app(engine="xlwings")`` keeps
that path, which is several times slower (xlwings copies a sheet into tuples for every
range it touches).

The routes are the four actions (``/api/build``, ``/resolve``, ``/undo``, ``/end``) of every
rule system: the step finds the tracker's system from the mark in its hidden State sheet
(``State!B1``, which the clients send with the other sheets; :func:`sheetsync.sheets.marks.run`),
so one endpoint serves a battalion tracker's Resolve Phase and a hex tracker's Resolve
Turn.  Nothing of a
request is kept after its answer (on the xlwings path the book is closed and xlwings'
range cache emptied), so the server's memory stays flat however many clicks it serves.

A step that went through answers its writes with the State sheet's last, the State blob
(the step's commit) at the very end, then one short information ``alert``, the step's
message, as the desktop buttons show it (issue 22.3,
:func:`sheetsync.backends.xlwings_remote.step_answer`): a client that stops half-way
leaves the State as it was.  A failed step answers 200 with one ``alert`` action and nothing else, so the Tracker sees
the problem in the sheet and nothing is written.  The alert shows the user's problem (the
cell and what is wrong with it); the technical detail of a wrapped foreign error goes to
the server log (the ``sheetsync.server`` logger), never to the sheet.  A bug, any
exception that is not a :class:`SheetSyncError`, answers with the alert
``sheetsync failed: see the server log`` and its traceback is logged: the endpoint never
answers 500 and never shows a traceback.

A step has a time budget (issue 26): ``create_app(step_budget=...)``, else
``SHEETSYNC_STEP_BUDGET`` (seconds), else :data:`DEFAULT_STEP_BUDGET`.  A step still running
when its budget is spent is stopped (:func:`run_within`) and answers one alert saying so, with
nothing written, and its tracker's lock is released.  Steps queue per tracker (the book's
name in the payload): a double click on one tracker waits for the first click's answer, and
a step on another tracker never waits for it.  ``/health`` lists a step that runs past its
budget (one the stop could not reach, such as one inside a long call into C).

Security: every request needs the API key from ``SHEETSYNC_API_KEY`` in its
``Authorization`` header (compared in constant time); bodies over ``max_bytes`` get 413,
malformed ones 422, a client whose xlwings version differs from the server's gets 400 with
a message saying which versions.  The OpenAPI schema and the /docs and /redoc pages are
not served: the only routes are the steps, ``/health`` and the web page.

The web page (issue 25) is served at ``/``, with no key: it runs the workbook path in the
browser under Pyodide, so no workbook ever reaches the server.  Its files come from a site
``sheetsync web`` wrote (``create_app(site=...)``, ``sheetsync serve --site DIR``), or are
written on the first request for them into a temporary folder; only the page's own names
(:data:`sheetsync.web.site.PAGE_FILES`, ``config.json`` and ``wheels/*.whl``) are served.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import functools
import gc
import hmac
import itertools
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response

from sheetsync.backends.xlwings_remote import step_answer
from sheetsync.core.errors import SheetSyncError
from sheetsync.core.system import ACTIONS, StepRefused
from sheetsync.sheets import marks as steps
from sheetsync.sheets.disk import whole_or_text
from sheetsync.sheets.json_bytes import dumps

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_STEP_BUDGET", "ENGINES", "FAILED", "STEP_BUDGET_ENV", "STUCK_GRACE",
           "StepOverBudget", "TrackerLocks", "WebPage", "alert_answer", "create_app", "over_budget_message",
           "require_remote_engine", "run_within", "step_budget_from_env", "user_message"]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
REQUIRED_KEYS = ("client", "version", "book", "sheets")
ENGINES = ("payload", "xlwings")
"""How a step reads the payload: straight from its JSON (the default) or through
``xw.Book(json=...)``; both answer the same actions."""
TIMINGS_KEPT = 10_000
"""How many (action, seconds) pairs ``app.state.timings`` keeps (the most recent)."""

DEFAULT_STEP_BUDGET = 10.0
"""Issue 26: the seconds a step may run on the server before it is stopped (a Resolve of a
large tracker takes well under one)."""
STEP_BUDGET_ENV = "SHEETSYNC_STEP_BUDGET"
"""The environment variable that sets the step budget, in seconds, when ``create_app`` is
not given one."""
STUCK_GRACE = 1.0
"""Issue 26: seconds past its budget after which a step still running is reported stuck by
``/health`` (a step is stopped at its budget; one still running this much later could not be)."""

FAILED = "sheetsync failed: see the server log"
"""The alert for a bug: the detail is logged, never shown in the sheet."""

log = logging.getLogger("sheetsync.server")


class _Answer(JSONResponse):
    """A step's answer, encoded by :func:`sheetsync.sheets.json_bytes.dumps`: the very bytes of
    :class:`JSONResponse` (compact, UTF-8) for the plain data an answer holds, in a
    fraction of the standard encoder's time (issue 12: an answer lists a thousand cells).
    A cell that is not a finite number is refused by the backend before it gets here."""

    def render(self, content: Any) -> bytes:
        return dumps(content)


def _error(status: int, message: str) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"detail": message}, status_code=status, headers=headers)


def user_message(exc: SheetSyncError) -> str:
    """What a Tracker is shown for ``exc``: its message, without the text of the foreign
    exception it wraps (that is internal detail, for the server log)."""
    text = str(exc)
    cause = exc.__cause__
    if cause is not None and not isinstance(cause, SheetSyncError):
        detail = str(cause)
        if detail and text.endswith(f": {detail}"):
            text = text[: -len(detail) - 2] + " (the details are in the server log)"
    return text


def alert_answer(message: str, title: str = "sheetsync") -> dict[str, Any]:
    """An answer made of one critical ``alert`` action, as xlwings' ``App.alert`` queues
    it: the client shows ``message`` and changes nothing else."""
    return {"actions": [{
        "func": "alert",
        "args": [message, title, "ok", "critical", ""],
        "values": None,
        "sheet_position": None,
        "start_row": None,
        "start_column": None,
        "row_count": None,
        "column_count": None,
    }]}


def _shape_problem(payload: dict[str, Any]) -> str | None:
    """What is wrong with the shape of a payload that has every required key, or ``None``.

    Only the structure xlwings relies on is checked (one pass over sheets and rows, not
    cells): a wrong shape is a malformed request, not a step that failed in the sheet."""
    if not isinstance(payload["book"], dict) or not isinstance(payload["book"].get("name"), str):
        return "'book' must be an object with the workbook's 'name'"
    if "names" in payload and not isinstance(payload["names"], list):
        return "'names' must be a list"
    for i, sheet in enumerate(payload["sheets"]):
        if not isinstance(sheet, dict) or not isinstance(sheet.get("name"), str):
            return f"sheets[{i}] must be an object with a 'name'"
        values = sheet.get("values")
        if not isinstance(values, list) or not all(isinstance(row, list) for row in values):
            return f"sheets[{i}] ({sheet['name']!r}): 'values' must be a list of rows"
    return None


def _parsed(body: bytes) -> dict[str, Any] | JSONResponse:
    """The workbook payload a request's body holds, or the error answer for a malformed one
    (422, or 400 for a client of another xlwings version)."""
    try:
        payload = json.loads(body, parse_int=whole_or_text)  # 4,301+ digits: the reader's cell error
    except (ValueError, UnicodeDecodeError) as exc:
        return _error(422, f"the request body is not JSON ({exc})")
    except RecursionError:
        return _error(422, "the request body is not a workbook payload (JSON nested too deeply)")
    if not isinstance(payload, dict):
        return _error(422, "the request body must be a JSON object (an xlwings workbook payload)")
    missing = [k for k in REQUIRED_KEYS if k not in payload]
    if missing or not isinstance(payload.get("sheets"), list):
        return _error(422, "not an xlwings workbook payload: missing " + ", ".join(missing or ["sheets list"]))
    problem = _shape_problem(payload)
    if problem is not None:
        return _error(422, f"not an xlwings workbook payload: {problem}")
    import xlwings

    if str(payload["version"]) != xlwings.__version__:
        return _error(400, f"the spreadsheet's xlwings client is version {payload['version']} and this server "
                           f"runs xlwings {xlwings.__version__}; they must match. Update the client code "
                           f"(xlwings copy gs / the VBA module) or install xlwings=={payload['version']} here.")
    return payload


def _refused(action: str, exc: SheetSyncError, writes: Any = None) -> JSONResponse:
    # The user's problem: shown in the sheet, and nothing is written.  A StepRefused is the
    # one refusal that writes (its repair, sheetsync.core.system.StepRefused): ``writes``, the
    # step's writes with the commit last, go before the alert.
    log.info("%s refused: %s", action, exc, exc_info=exc.__cause__ is not None)
    answer = alert_answer(user_message(exc))
    if isinstance(exc, StepRefused) and writes is not None:
        answer = {"actions": [*step_answer({"sheets": writes[0]}, writes[1])["actions"], *answer["actions"]]}
    return JSONResponse(answer)


def _confirmed(report: Any) -> str | None:
    """Issue 22.3: the short confirmation of a step that went through (its report's
    message, as the desktop buttons show it); ``None`` for the no-op route."""
    return None if report is None else str(getattr(report, "message", "") or "") or None


def _step(action: str, payload: dict[str, Any], engine: str = "payload") -> JSONResponse:
    """Run ``action`` on the payload and answer with its actions: read straight from the
    payload (``engine="payload"``) or through ``xw.Book(json=payload)`` (``"xlwings"``,
    whose book is closed whatever happens)."""
    if engine == "payload":
        from sheetsync.backends.payload import PayloadBackend

        backend = PayloadBackend(payload)
        try:
            report = steps.run(action, backend) if action != "noop" else None
            return _Answer(step_answer(payload, backend.actions, _confirmed(report)))
        except SheetSyncError as exc:
            return _refused(action, exc, (payload.get("sheets"), backend.actions))
    from sheetsync.backends.xlwings_backend import XlwingsBackend
    from sheetsync.backends.xlwings_remote import close_book, remote_book

    try:
        book = remote_book(payload)
    except SheetSyncError as exc:
        log.warning("%s: the payload could not be opened: %s", action, exc, exc_info=exc.__cause__ is not None)
        return _error(422, user_message(exc))
    try:
        report = steps.run(action, XlwingsBackend(book)) if action != "noop" else None
        return _Answer(step_answer(payload, book.json()["actions"], _confirmed(report)))
    except SheetSyncError as exc:
        return _refused(action, exc, (payload.get("sheets"), book.json()["actions"]))
    finally:
        close_book(book)


class StepOverBudget(BaseException):  # noqa: N818 (a signal, like KeyboardInterrupt, not an error)
    """Issue 26: raised inside a step's thread when its time budget is spent.  A
    :class:`BaseException`, so no ``except Exception`` in a step can swallow it."""


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Have ``exc`` raised in thread ``thread_id`` at its next Python instruction, or clear
    a pending one (``None``)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exc) if exc is not None else None)


_T = TypeVar("_T")


class _Watchdog:
    """Issue 26: one thread that raises :class:`StepOverBudget` in each step's thread whose
    budget is spent (one thread for every step: starting a timer thread per step cost 0.14 ms
    a click).

    The step's thread never takes the watchdog's lock once its budget may be spent: Python
    can deliver the exception at any bytecode, including the one just after a lock is
    acquired and before the ``with`` that would release it, and a lock leaked there stops
    every later step's watchdog.  So the step and the watchdog settle who owns a step with
    one ``dict.pop`` each, which the interpreter runs atomically: whoever pops the entry
    decides.  Only the watchdog fires, and only at an entry it popped."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._due: dict[int, tuple[float, int, list[bool]]] = {}  # key -> (deadline, thread id, [fired])
        self._keys = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, budget: float, thread_id: int) -> tuple[int, list[bool]]:
        """Watch the step of thread ``thread_id`` for ``budget`` seconds.  Until this returns
        the watchdog cannot fire at it (it fires holding the lock held here)."""
        fired = [False]
        with self._cond:
            key = next(self._keys)
            self._due[key] = (time.monotonic() + budget, thread_id, fired)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._watch, name="sheetsync step watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()
        return key, fired

    def disarm(self, key: int, fired: list[bool]) -> None:
        """Forget step ``key``, from its own thread, and leave nothing pending on that thread.

        Takes no lock.  If the pop finds the entry, the watchdog never fired and never will.
        If not, the watchdog took it: wait until it has raised, then take back the exception
        if it was not delivered yet.  If it is delivered while waiting, it is caught here."""
        if self._due.pop(key, None) is not None:
            return
        try:
            while not fired[0]:
                time.sleep(0.0002)
            _raise_in(threading.get_ident(), None)
        except StepOverBudget:
            pass  # delivered here, after the step: it stops nothing

    def _watch(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for key, (deadline, thread_id, fired) in list(self._due.items()):
                    if deadline <= now and self._due.pop(key, None) is not None:
                        _raise_in(thread_id, StepOverBudget)
                        fired[0] = True
                nearest = min((deadline for deadline, _, _ in self._due.values()), default=None)
                self._cond.wait(None if nearest is None else max(0.0, nearest - time.monotonic()))


_WATCHDOG = _Watchdog()


def run_within(budget: float, fn: Callable[[], _T]) -> _T:
    """Issue 26: ``fn()`` on this thread, stopped by :class:`StepOverBudget` if it still runs
    after ``budget`` seconds.

    A watchdog raises the exception in this thread (``PyThreadState_SetAsyncExc``); Python
    delivers it at the thread's next bytecode, so a pure-Python step stops at once, and one
    inside a single long call into C stops when that call returns.  Once ``fn`` has
    returned, the exception stops nothing: one raised too late to land inside ``fn`` is
    taken back or caught (see :meth:`_Watchdog.disarm`), so the thread (a worker of a pool)
    goes on to its next task untouched.  ``StepOverBudget`` propagates to the caller,
    through every ``with`` and ``finally`` of the step (locks are released, books closed)."""
    key, fired = _WATCHDOG.arm(budget, threading.get_ident())
    try:
        return fn()
    finally:
        try:
            _WATCHDOG.disarm(key, fired)
        except StepOverBudget:
            pass  # delivered as disarm began: after the step, so it stops nothing


def over_budget_message(action: str, budget: float) -> str:
    """Issue 26: the alert of a step stopped at its budget."""
    return (f"{action} was stopped: it ran longer than this server's {budget:g} s budget for a step, and "
            "nothing was written. Check the numbers typed in the tracker (a very large one can make a step "
            "run that long), then try again; the server's log has the details.")


def step_budget_from_env() -> float:
    """The step budget set by :data:`STEP_BUDGET_ENV`, or :data:`DEFAULT_STEP_BUDGET`."""
    from sheetsync.core.errors import BackendError

    text = os.environ.get(STEP_BUDGET_ENV, "").strip()
    if not text:
        return DEFAULT_STEP_BUDGET
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise BackendError(f"{STEP_BUDGET_ENV}={text!r}: a step's budget is a number of seconds above 0 and "
                           "at most 3600")
    return value


class TrackerLocks:
    """Issue 26: one lock per tracker, made when a step needs it and dropped when no step
    holds or awaits it (the server keeps nothing of trackers it no longer serves)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, list[int]]] = {}

    def __len__(self) -> int:
        with self._guard:
            return len(self._locks)

    @contextlib.contextmanager
    def held(self, key: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        try:
            with lock:
                yield
        finally:
            with self._guard:
                users[0] -= 1
                if users[0] == 0:
                    del self._locks[key]


@dataclass(frozen=True)
class _Running:
    action: str
    tracker: str
    started: float


def _tracker_of(payload: dict[str, Any]) -> str:
    """The tracker a payload is from: its workbook's name (Google Sheets sends the
    spreadsheet's title, Excel the file's name).  Two trackers of one name share a queue,
    which costs a wait, never a race."""
    return str(payload["book"]["name"])


_PAUSE_LOCK = threading.Lock()
_pauses = 0
_resume = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic collector off while a request is parsed and its step runs (issue 12).

    A click's data is trees (a parsed payload, grids, cells, the answer), freed by reference
    counting the moment the step is done; the collector, left on, ran about six times a
    Resolve, walked the payload's thousands of rows each time and found nothing to free (a
    measured 0.9 ms a click at 12 cohorts, 13% of it).  While paused, the objects a step
    allocates and frees cancel out in the collector's count, so nothing is put off either:
    the next collection comes when as many objects are alive as before.  Anything cyclic a
    step leaves behind is still found by the first collection after it.  Pauses nest across
    threads (two requests on two worker threads, one parsed while the other's step runs):
    the collector runs again when the last one ends, and only if it was on before the first."""
    global _pauses, _resume
    with _PAUSE_LOCK:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


def settle() -> None:
    """Ready the server for its first click, and keep the cyclic collector off what it holds
    for good (issue 12).  Every tracker system's step code is imported and laid out now,
    then everything alive is moved out of the collector's reach (``gc.freeze``): the
    collector still runs between clicks (the event loop's own objects), and each full
    collection would walk the server's hundred thousand long-lived objects (its libraries,
    sheetsync's modules and layouts) again; during a click it is paused
    (:func:`collector_paused`).
    Nothing frozen is kept alive by it: an object no longer referenced is freed as ever."""
    from sheetsync.core import registry

    for system_id in registry.tracker_system_ids():
        registry.find_system(system_id).tracker_steps()
    import sheetsync.backends.payload  # noqa: F401  (the default engine's backend)

    gc.collect()
    gc.freeze()


@contextlib.asynccontextmanager
async def _lifespan(_app: FastAPI) -> AsyncIterator[None]:
    settle()  # once the server starts, before its first request
    yield


def require_remote_engine() -> None:
    """Refuse to serve without xlwings' remote engine (``xw.Book(json=...)``, xlwings PRO):
    without its licence key every click would fail, so ``serve`` checks before it starts."""
    from sheetsync.backends.xlwings_remote import ensure_remote_engine
    from sheetsync.core.errors import BackendError

    try:
        ensure_remote_engine()
    except BackendError as exc:
        raise BackendError(f"can't serve: {exc}. Set it, then start sheetsync serve again.") from exc


_PAGE_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
               ".css": "text/css; charset=utf-8", ".json": "application/json", ".whl": "application/zip"}
_WHEEL_NAME = re.compile(r"[A-Za-z0-9_.+-]+\.whl")


class WebPage:
    """The web page's files (issue 25): those of ``site``, a folder ``sheetsync web`` wrote,
    or, without one, a site written on first use into a temporary folder (with Pyodide from
    the public CDN).  A failed write is tried again on the next request."""

    def __init__(self, site: Path | None = None) -> None:
        self._site = site
        self._lock = threading.Lock()
        self._temporary: tempfile.TemporaryDirectory[str] | None = None

    def root(self) -> Path:
        with self._lock:
            if self._site is None:
                from sheetsync.web.site import build_site

                temporary = tempfile.TemporaryDirectory(prefix="sheetsync-web-")
                try:
                    build_site(Path(temporary.name))
                except BaseException:
                    temporary.cleanup()
                    raise
                self._temporary = temporary
                self._site = Path(temporary.name)
            return self._site

    @staticmethod
    def serves(name: str) -> bool:
        """Whether ``name`` (a path below the site) is one of the page's files."""
        from sheetsync.web.site import PAGE_FILES

        if name in PAGE_FILES or name == "config.json":
            return True
        folder, _, wheel = name.partition("/")
        return folder == "wheels" and _WHEEL_NAME.fullmatch(wheel) is not None

    def response(self, name: str) -> Response:
        """The file ``name`` of the page, or 404; 503 with the reason when the site could not
        be written (no wheel to be had, say)."""
        if not self.serves(name):
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        try:
            path = self.root() / name
        except SheetSyncError as exc:
            log.warning("the web page could not be written: %s", exc)
            return PlainTextResponse(f"the web page could not be written: {exc}", status_code=503)
        if not path.is_file():
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return FileResponse(path, media_type=_PAGE_TYPES.get(path.suffix, "application/octet-stream"),
                            headers={"Cache-Control": "no-cache"})


def _settings(api_key: str | None, engine: str, step_budget: float | None) -> tuple[str, float]:
    """The endpoint's key and a step's budget, each from the argument or the environment;
    an unknown engine, a budget not above 0 or no key refuses the endpoint."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    budget = step_budget if step_budget is not None else step_budget_from_env()
    if not budget > 0:
        raise ValueError(f"a step's budget is a number of seconds above 0, not {budget!r}")
    key = api_key if api_key is not None else os.environ.get("SHEETSYNC_API_KEY", "")
    if not key:
        from sheetsync.core.errors import BackendError

        raise BackendError("set SHEETSYNC_API_KEY to the key your spreadsheet's buttons send")
    return key, budget


def _authorized(request: Request, key: str) -> bool:
    """Whether the request's Authorization header (``Bearer`` optional) carries ``key``."""
    given = request.headers.get("authorization", "")
    if given.lower().startswith("bearer "):
        given = given[7:]
    return hmac.compare_digest(given.encode(), key.encode())


async def _body_of(request: Request, key: str, max_bytes: int) -> bytes | JSONResponse:
    """The request's body, or the refusal to send back: no key (401), or a body over
    ``max_bytes`` (413), by its Content-Length or, chunked, as soon as it passes."""
    if not _authorized(request, key):
        return _error(401, "missing or wrong API key in the Authorization header")
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_bytes:
        return _error(413, f"the workbook sent is {int(length)} bytes; the limit is {max_bytes}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():  # no Content-Length (chunked): stop at the limit
        size += len(chunk)
        if size > max_bytes:
            return _error(413, f"the workbook sent is over {max_bytes} bytes, the limit")
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(
    api_key: str | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timer: Callable[[], float] = time.perf_counter,
    engine: str = "payload",
    step_budget: float | None = None,
    site: Path | None = None,
) -> FastAPI:
    """The endpoint.  ``api_key`` defaults to ``SHEETSYNC_API_KEY``; without one the app
    refuses to be built (an open endpoint would let anyone resolve your battle).  ``engine``
    is one of :data:`ENGINES`.  ``app.state.timings`` keeps the last :data:`TIMINGS_KEPT`
    (action, seconds) pairs of the server's own time per step.

    ``step_budget`` (seconds; default ``SHEETSYNC_STEP_BUDGET``, else
    :data:`DEFAULT_STEP_BUDGET`) is how long a step may run before it is stopped and
    refused (issue 26).  ``app.state.running`` holds the steps running now, and
    ``app.state.tracker_locks`` the per-tracker queues.

    ``site`` is the folder of the web page served at ``/`` (written by ``sheetsync web``);
    without one the page is written on its first request (:class:`WebPage`)."""
    key, budget = _settings(api_key, engine, step_budget)
    # No schema and no docs pages: they would describe the endpoint to anyone, key or not.
    app = FastAPI(title="sheetsync", version="1", openapi_url=None, docs_url=None, redoc_url=None,
                  lifespan=_lifespan)
    locks = TrackerLocks()  # one step at a time per tracker: a double click queues, it doesn't race
    app.state.tracker_locks = locks
    app.state.step_budget = budget
    app.state.timings = collections.deque(maxlen=TIMINGS_KEPT)
    running: dict[int, _Running] = {}
    app.state.running = running
    tickets = itertools.count()

    def run_step(action: str, body: bytes) -> JSONResponse:
        """Parse the payload and run the step on it, both on a worker thread (a large
        payload's parsing doesn't hold up the event loop) and with the collector paused
        (:func:`collector_paused`); the payload is dropped before the pause ends."""
        with collector_paused():
            payload = _parsed(body)
            if isinstance(payload, JSONResponse):
                return payload
            start = timer()
            tracker = _tracker_of(payload)
            with locks.held(tracker):
                cpu = time.thread_time()
                ticket = next(tickets)
                running[ticket] = _Running(action, tracker, time.monotonic())
                try:
                    answer = run_within(budget, functools.partial(_step, action, payload, engine))
                except StepOverBudget:
                    log.warning("%s on %r was stopped after its %g s budget", action, tracker, budget)
                    answer = JSONResponse(alert_answer(over_budget_message(action, budget)))
                finally:
                    running.pop(ticket, None)
                cpu = time.thread_time() - cpu
            took = timer() - start
            del payload
        app.state.timings.append((action, took))
        # the server's own time, answer encoded, and the CPU time the step took on its
        # thread (W3C Server-Timing: a browser's network panel shows both; the endpoint
        # benchmark reads them from a server in its own process: on a shared machine the
        # CPU time leaves out the moments another tenant had the core)
        answer.headers["Server-Timing"] = f"step;dur={took * 1000:.3f}, cpu;dur={cpu * 1000:.3f}"
        return answer

    def route(action: str) -> Callable[[Request], Any]:
        async def handler(request: Request) -> JSONResponse:
            try:
                body = await _body_of(request, key, max_bytes)
                if isinstance(body, JSONResponse):
                    return body
                import anyio.to_thread

                return await anyio.to_thread.run_sync(run_step, action, body)
            except Exception:  # a bug: log it whole, show the Tracker one plain line
                log.exception("/api/%s failed", action)
                return JSONResponse(alert_answer(FAILED))

        handler.__name__ = f"api_{action}"
        return handler

    for action in (*ACTIONS, "noop"):
        app.post(f"/api/{action}", summary=f"{action} (xlwings remote payload in, actions out)")(route(action))

    @app.get("/health")
    async def health() -> JSONResponse:
        """``{"status": "ok"}`` with 200 while every step runs within its budget.  A step
        still running :data:`STUCK_GRACE` seconds past its budget (the stop could not reach
        it: a long call into C) makes it ``{"status": "stuck", "stuck": [{"action", "tracker",
        "seconds"}, ...]}`` with **503**: the server still answers other trackers, but a
        supervisor polling ``/health`` (systemd, a load balancer) learns from the status
        code alone that it needs a restart, and a person reading it sees which step and for
        how long."""
        now = time.monotonic()
        stuck = [{"action": r.action, "tracker": r.tracker, "seconds": round(now - r.started, 1)}
                 for r in list(running.values()) if now - r.started > budget + STUCK_GRACE]
        if stuck:
            return JSONResponse({"status": "stuck", "stuck": stuck}, status_code=503)
        return JSONResponse({"status": "ok"})

    web_page = WebPage(site)
    app.state.web_page = web_page

    async def page_file(name: str) -> Response:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(web_page.response, name)

    @app.get("/", include_in_schema=False)
    async def page_index() -> Response:
        """The web page (issue 25); no key: the workbook never leaves the browser."""
        return await page_file("index.html")

    @app.get("/wheels/{name}", include_in_schema=False)
    async def page_wheel(name: str) -> Response:
        return await page_file(f"wheels/{name}")

    @app.get("/{name}", include_in_schema=False)
    async def page_asset(name: str) -> Response:
        return await page_file(name)

    return app
