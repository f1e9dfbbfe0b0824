"""Issue 8, item 16: the Google Sheets backend's time bounds, against the fake API.

Each try is bounded (connect, each read, and the whole request on the wall clock, for an
answer that trickles in a byte at a time) and so is the call (``max_tries`` within
``max_total_seconds``).  The waits between tries are injected; the clock is real time plus
the injected waits, so a hanging answer costs the test its small timeout only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import gspread
import pytest
import requests
from fake_sheets_api import FakeSheetsServer, fake_client

from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.core.errors import BackendError
from sheetsync.sheets.backend import RangeUpdate


class SteppingClock:
    """Real elapsed time plus every injected wait; the waits themselves take no time."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.slept = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return time.monotonic() - self.start + self.slept

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.slept += seconds


@pytest.fixture
def server() -> Iterator[FakeSheetsServer]:
    with FakeSheetsServer() as fake:
        yield fake
    assert fake.errors == []


@pytest.fixture
def client(server: FakeSheetsServer) -> Iterator[gspread.Client]:
    gc = fake_client(server.url)
    yield gc
    gc.http_client.session.close()


@pytest.fixture
def key(server: FakeSheetsServer) -> str:
    return server.create_spreadsheet("Retries", ["Orders", "Log"])


@pytest.fixture
def clock() -> SteppingClock:
    return SteppingClock()


def backend_with(client: gspread.Client, key: str, clock: SteppingClock, lines: list[str], **kw: float) -> GSheetsBackend:
    return GSheetsBackend(client, key, sleep=clock.sleep, clock=clock, progress=lines.append, **kw)  # type: ignore[arg-type]


def test_issue8_16_four_503s_then_no_answer_give_up_within_the_total_budget(
    server: FakeSheetsServer, client: gspread.Client, key: str, clock: SteppingClock
) -> None:
    """The reported case (76.7 s for a 60 s cap), scaled down: 4 quick 503s, then an answer
    that never comes.  The last try only gets what is left of the budget."""
    lines: list[str] = []
    backend = backend_with(client, key, clock, lines, first_delay=0.1, max_total_seconds=2.0,
                           read_timeout=30.0, timeout=30.0)
    server.fail_next(4, 503)
    server.hang_next(1, 30.0)
    t = time.monotonic()
    with pytest.raises(BackendError) as caught:
        backend.read_ranges(["Orders!A1:B2"])
    assert time.monotonic() - t < 5  # not the 30 s the hanging answer would take
    assert clock() <= 2.0 + 0.5
    assert clock.sleeps == [0.1, 0.2, 0.4, 0.8]
    message = str(caught.value)
    assert message.startswith("Google Sheets failed 5 times over 2 s")
    assert "503 (server error)" in message and "no answer within" in message
    assert message.endswith("nothing was read. Try again in a few minutes.")
    assert lines == [
        f"Google Sheets answered 503 (server error); retrying in {d:g} s (try {n} of 5)…"
        for n, d in ((2, 0.1), (3, 0.2), (4, 0.4), (5, 0.8))
    ]


def test_issue8_16_each_request_is_bounded_by_its_own_timeout(
    server: FakeSheetsServer, client: gspread.Client, key: str, clock: SteppingClock
) -> None:
    lines: list[str] = []
    backend = backend_with(client, key, clock, lines, timeout=0.4, read_timeout=30.0, max_tries=3)
    server.hang_next(2, 30.0)
    server.set_values(key, "Orders!A1", [["Ada"]])
    t = time.monotonic()
    assert backend.read_ranges(["Orders!A1:B1"]) == [[["Ada", None]]]  # the third try answers
    assert time.monotonic() - t < 5
    assert clock.sleeps == [1.0, 2.0]
    assert lines == [
        "Google Sheets gave no answer within 0.4 s; retrying in 1 s (try 2 of 3)…",
        "Google Sheets gave no answer within 0.4 s; retrying in 2 s (try 3 of 3)…",
    ]


def test_issue8_16_an_answer_trickling_in_is_cut_off_at_the_request_deadline(
    server: FakeSheetsServer, client: gspread.Client, key: str, clock: SteppingClock
) -> None:
    """A byte every 0.1 s never trips a 30 s read timeout (it is per piece); the wall-clock
    deadline of each request does."""
    lines: list[str] = []
    backend = backend_with(client, key, clock, lines, timeout=0.5, read_timeout=30.0, max_tries=2)
    server.trickle_next(2, 0.1)
    t = time.monotonic()
    with pytest.raises(BackendError, match=r"gave no answer within 0.5 s 2 times over \d s; nothing was read"):
        backend.read_ranges(["Orders!A1:B2"])
    assert time.monotonic() - t < 5
    assert [r.status for r in server.api_requests()] == [200, 200]  # answered, too slowly
    assert lines == ["Google Sheets gave no answer within 0.5 s; retrying in 1 s (try 2 of 2)…"]


def test_issue8_16_a_write_that_gets_no_answer_says_it_was_not_confirmed(
    server: FakeSheetsServer, client: gspread.Client, key: str, clock: SteppingClock
) -> None:
    backend = backend_with(client, key, clock, [], timeout=0.3, max_tries=2)
    backend.read_ranges(["Orders!A1:A1"])  # the sheet ids
    server.hang_next(5, 30.0, path_contains=":batchUpdate")
    with pytest.raises(BackendError) as caught:
        backend.write_ranges([RangeUpdate("Orders!A1", [["x"]])])
    assert "gave no answer within 0.3 s 2 times" in str(caught.value)
    assert "the write was not confirmed" in str(caught.value)


def test_issue8_16_a_slow_but_steady_answer_within_the_deadline_is_read_whole(
    server: FakeSheetsServer, client: gspread.Client, key: str, clock: SteppingClock
) -> None:
    backend = backend_with(client, key, clock, [], timeout=20.0, read_timeout=5.0)
    server.set_values(key, "Orders!A1", [["Ada"]])
    server.trickle_next(1, 0.001, path_contains="/v4/")
    assert backend.read_ranges(["Orders!A1:B1"]) == [[["Ada", None]]]
    assert clock.sleeps == []


def test_issue8_16_no_network_says_so_plainly(key: str, clock: SteppingClock) -> None:
    """Nothing listens on the port (the connection is refused) or the name doesn't resolve."""
    with FakeSheetsServer() as gone:
        url = gone.url
    cases = ((fake_client(url), {}),  # refused: nothing listens on the fake's old port
             (gspread.Client(auth=None, session=requests.Session()), {"api_root": "http://sheets.invalid/v4/spreadsheets"}))  # type: ignore[arg-type]
    for gc, where in cases:
        lines: list[str] = []
        try:
            backend = GSheetsBackend(gc, key, sleep=clock.sleep, clock=clock, max_tries=3,
                                     progress=lines.append, connect_timeout=2.0, **where)
            with pytest.raises(BackendError) as caught:
                backend.read_ranges(["Orders!A1:B2"])
        finally:
            gc.http_client.session.close()
        assert str(caught.value).startswith("can't reach Google Sheets: no network connection? (tried 3 times")
        assert str(caught.value).endswith("nothing was read. Check the connection, then try again.")
        assert lines == [
            "can't reach Google Sheets (no network connection?); retrying in 1 s (try 2 of 3)…",
            "can't reach Google Sheets (no network connection?); retrying in 2 s (try 3 of 3)…",
        ]


def test_issue8_16_cli_prints_the_retry_progress_to_stderr(
    server: FakeSheetsServer, key: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    from pathlib import Path

    from fake_sheets_api import service_account_info
    from typer.testing import CliRunner

    from sheetsync.app import cli

    info, _ = service_account_info(server.url)
    key_file = Path(str(tmp_path)) / "key.json"
    key_file.write_text(json.dumps(info))
    monkeypatch.setenv("SHEETSYNC_SHEETS_API_ROOT", f"{server.url}/v4/spreadsheets")
    from sheetsync.app import gsheet_cli

    waits: list[float] = []
    real = gsheet_cli.gsheet_backend
    monkeypatch.setattr(gsheet_cli, "gsheet_backend",
                        lambda sheet, gc, **kw: real(sheet, gc, sleep=waits.append, **kw))
    server.fail_next(2, 503, path_contains="/v4/")
    result = CliRunner().invoke(cli.app, ["gsheet", "resolve", key, "--service-account", str(key_file)])
    assert waits[:2] == [1.0, 2.0]
    assert "Google Sheets answered 503 (server error); retrying in 1 s (try 2 of 5)…" in result.stderr
    assert "Google Sheets answered 503 (server error); retrying in 2 s (try 3 of 5)…" in result.stderr
    assert "retrying" not in result.stdout
