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
(``State!B1``, which the clients send with the other sheets; :func:`sheetsync.app.steps.run`),
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

Security: every request needs the API key from ``SHEETSYNC_API_KEY`` in its
``Authorization`` header (compared in constant time); bodies over ``max_bytes`` get 413,
malformed ones 422, a client whose xlwings version differs from the server's gets 400 with
a message saying which versions.  The OpenAPI schema and the /docs and /redoc pages are
not served: the only routes are the steps and ``/health``.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import hmac
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from sheetsync.app import steps
from sheetsync.app.files import whole_or_text
from sheetsync.app.json_bytes import dumps
from sheetsync.backends.xlwings_remote import step_answer
from sheetsync.core.system import ACTIONS, StepRefused
from sheetsync.errors import SheetSyncError

__all__ = ["DEFAULT_MAX_BYTES", "ENGINES", "FAILED", "alert_answer", "create_app", "require_remote_engine",
           "user_message"]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
REQUIRED_KEYS = ("client", "version", "book", "sheets")
ENGINES = ("payload", "xlwings")
"""How a step reads the payload: straight from its JSON (the default) or through
``xw.Book(json=...)``; both answer the same actions."""
TIMINGS_KEPT = 10_000
"""How many (action, seconds) pairs ``app.state.timings`` keeps (the most recent)."""

FAILED = "sheetsync failed: see the server log"
"""The alert for a bug: the detail is logged, never shown in the sheet."""

log = logging.getLogger("sheetsync.server")


class _Answer(JSONResponse):
    """A step's answer, encoded by :func:`sheetsync.app.json_bytes.dumps`: the very bytes of
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
    from sheetsync.errors import BackendError

    try:
        ensure_remote_engine()
    except BackendError as exc:
        raise BackendError(f"can't serve: {exc}. Set it, then start sheetsync serve again.") from exc


def create_app(
    api_key: str | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timer: Callable[[], float] = time.perf_counter,
    engine: str = "payload",
) -> FastAPI:
    """The endpoint.  ``api_key`` defaults to ``SHEETSYNC_API_KEY``; without one the app
    refuses to be built (an open endpoint would let anyone resolve your battle).  ``engine``
    is one of :data:`ENGINES`.  ``app.state.timings`` keeps the last :data:`TIMINGS_KEPT`
    (action, seconds) pairs of the server's own time per step."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    key = api_key if api_key is not None else os.environ.get("SHEETSYNC_API_KEY", "")
    if not key:
        from sheetsync.errors import BackendError

        raise BackendError("set SHEETSYNC_API_KEY to the key your spreadsheet's buttons send")
    # No schema and no docs pages: they would describe the endpoint to anyone, key or not.
    app = FastAPI(title="sheetsync", version="1", openapi_url=None, docs_url=None, redoc_url=None,
                  lifespan=_lifespan)
    lock = threading.Lock()  # one step at a time: a double click queues, it doesn't race
    app.state.timings = collections.deque(maxlen=TIMINGS_KEPT)

    def authorized(request: Request) -> bool:
        given = request.headers.get("authorization", "")
        if given.lower().startswith("bearer "):
            given = given[7:]
        return hmac.compare_digest(given.encode(), key.encode())

    async def body_of(request: Request) -> bytes | JSONResponse:
        if not authorized(request):
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

    def run_step(action: str, body: bytes) -> JSONResponse:
        """Parse the payload and run the step on it, both on a worker thread (a large
        payload's parsing doesn't hold up the event loop) and with the collector paused
        (:func:`collector_paused`); the payload is dropped before the pause ends."""
        with collector_paused():
            payload = _parsed(body)
            if isinstance(payload, JSONResponse):
                return payload
            start = timer()
            with lock:
                cpu = time.thread_time()
                answer = _step(action, payload, engine)
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
                body = await body_of(request)
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
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
