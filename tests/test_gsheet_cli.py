"""The Google Sheets commands end to end: a service-account key file, the real gspread
sign-in against the fake's token endpoint, and the fake Sheets API (set through
SHEETSYNC_SHEETS_API_ROOT, as for any emulator)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_sheets_api import FakeSheetsServer, service_account_info
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.workbook_cli import excel_backend, new_workbook
from sheetsync.core.errors import BackendError, BattleStateError
from sheetsync.sheets.disk import example_path
from sheetsync.systems.bbn.tracker.journal import parse_state
from sheetsync.systems.bbn.tracker.layout import layout

runner = CliRunner()


@pytest.fixture
def server() -> FakeSheetsServer:
    with FakeSheetsServer() as srv:
        yield srv  # type: ignore[misc]


@pytest.fixture
def key_file(server: FakeSheetsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    info, _ = service_account_info(server.url)
    path = tmp_path / "key.json"
    path.write_text(json.dumps(info))
    monkeypatch.setenv("SHEETSYNC_SHEETS_API_ROOT", f"{server.url}/v4/spreadsheets")
    return path


def test_gsheet_commands_end_to_end(server: FakeSheetsServer, key_file: Path, tmp_path: Path) -> None:
    key = server.create_spreadsheet("Battle night")
    url = f"https://docs.google.com/spreadsheets/d/{key}/edit#gid=0"
    sa = ["--service-account", str(key_file)]
    res = runner.invoke(app, ["gsheet", "init", url, *sa])
    assert res.exit_code == 0, res.output
    wb = tmp_path / "battle.xlsx"
    new_workbook(wb, example_path())
    res = runner.invoke(app, ["upload", str(wb), key, *sa])
    assert res.exit_code == 0, res.output
    server.clear_requests()
    res = runner.invoke(app, ["gsheet", "resolve", key, *sa, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["phase"] == 1 and len(out["events"]) == 10
    assert len(server.api_requests()) == 2  # one read, one write
    assert server.count("/token") >= 1  # signed in through the service-account flow
    res = runner.invoke(app, ["gsheet", "resolve", key, *sa])
    assert isinstance(res.exception, BattleStateError) and "already resolved" in str(res.exception)
    res = runner.invoke(app, ["gsheet", "undo", key, *sa])
    assert res.exit_code == 0, res.output
    back = tmp_path / "back.xlsx"
    res = runner.invoke(app, ["download", key, str(back), *sa])
    assert res.exit_code == 0, res.output
    lay = layout()
    ranges = [lay.block(n).range() for n in ("Characters_Table", "Cohorts_Setup", "Orders_Table")]
    assert excel_backend(back).read_ranges(ranges) == excel_backend(wb).read_ranges(ranges)
    # the battle is exactly as loaded; the State's step journal has moved on (rev 1 -> 3)
    state = [parse_state(excel_backend(p).read_ranges([lay.block("State_Blob").range()])[0]) for p in (back, wb)]
    assert state[0].battle == state[1].battle and (state[0].rev, state[1].rev) == (3, 1)


def test_gsheet_without_credentials_says_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHEETSYNC_SERVICE_ACCOUNT", raising=False)
    res = runner.invoke(app, ["gsheet", "resolve", "abc"])
    assert isinstance(res.exception, BackendError)
    assert "no Google credentials" in str(res.exception) and "--service-account" in str(res.exception)


def test_gsheet_init_refuses_a_spreadsheet_that_has_a_tracker(server: FakeSheetsServer, key_file: Path) -> None:
    key = server.create_spreadsheet("Twice")
    sa = ["--service-account", str(key_file)]
    assert runner.invoke(app, ["gsheet", "init", key, *sa]).exit_code == 0
    res = runner.invoke(app, ["gsheet", "init", key, *sa])
    assert isinstance(res.exception, BattleStateError) and "already has tracker sheets" in str(res.exception)


# -- issue 8, item 17: a key file that can't be used says which file and what is wrong -------------


def bad_key(tmp_path: Path, content: bytes | str, name: str = "key.json") -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def refusal(path: Path, server: FakeSheetsServer) -> str:
    key = server.create_spreadsheet("Keys")
    server.clear_requests()
    res = runner.invoke(app, ["gsheet", "resolve", key, "--service-account", str(path)])
    assert isinstance(res.exception, BackendError), res.output
    assert server.requests == []  # refused before any request, the token's included
    message = str(res.exception)
    assert message.startswith(f"{path}: ")
    assert "Expecting value" not in message
    return message


def test_issue8_17_a_key_that_is_not_json_is_named_and_explained(server: FakeSheetsServer, tmp_path: Path) -> None:
    message = refusal(bad_key(tmp_path, "-----BEGIN PRIVATE KEY-----\nMIIE\n"), server)
    assert "this is not a service-account key: it is not JSON (it goes wrong at line 1, column 1)" in message
    assert "Download a JSON key" in message
    assert "the file is empty" in refusal(bad_key(tmp_path, "", "empty.json"), server)
    assert "not text" in refusal(bad_key(tmp_path, b"\x89PNG\r\n\x1a\n\xff\xfe", "key.png"), server)


def test_issue8_17_json_that_is_not_a_service_account_key_names_what_is_missing(
    server: FakeSheetsServer, tmp_path: Path
) -> None:
    info, _ = service_account_info(server.url)
    partial = {k: v for k, v in info.items() if k not in ("client_email", "token_uri")}
    message = refusal(bad_key(tmp_path, json.dumps(partial)), server)
    assert "this is JSON but not a whole service-account key: client_email, token_uri are missing" in message
    message = refusal(bad_key(tmp_path, json.dumps({**info, "private_key": ""}), "k2.json"), server)
    assert "private_key is missing" in message
    assert "one JSON object" in refusal(bad_key(tmp_path, "[1, 2]", "list.json"), server)


def test_issue8_17_an_oauth_client_file_is_told_apart_from_a_key(server: FakeSheetsServer, tmp_path: Path) -> None:
    client_id = {"installed": {"client_id": "x.apps.googleusercontent.com", "client_secret": "s",
                               "auth_uri": "https://accounts.google.com/o/oauth2/auth"}}
    message = refusal(bad_key(tmp_path, json.dumps(client_id)), server)
    assert "an OAuth client or user file, not a service-account key" in message and "--oauth" in message


def test_issue8_17_an_unreadable_private_key_is_named(server: FakeSheetsServer, tmp_path: Path) -> None:
    info, _ = service_account_info(server.url)
    cut = {**info, "private_key": info["private_key"][:300]}  # cut short in an editor
    message = refusal(bad_key(tmp_path, json.dumps(cut)), server)
    assert "the private_key of this service-account key can't be read" in message
    assert "https://" not in message


def test_issue8_17_a_missing_or_unreadable_key_file(server: FakeSheetsServer, tmp_path: Path) -> None:
    assert "no such service-account key file" in refusal(tmp_path / "nope.json", server)
    assert "can't read the service-account key file" in refusal(tmp_path, server)  # a directory


# -- issue 11: forecast, report and import on a Google Sheet ---------------------------------------


def test_issue11_gsheet_has_forecast_report_and_import() -> None:
    res = runner.invoke(app, ["gsheet", "--help"])
    assert res.exit_code == 0
    for command in ("forecast", "report", "import"):
        assert command in res.stdout


def test_issue11_gsheet_import_of_a_grapevine_file_is_refused_before_any_request(
        server: FakeSheetsServer, key_file: Path, tmp_path: Path) -> None:
    from sheetsync.core.errors import InputError

    key = server.create_spreadsheet("Import")
    gex = Path(__file__).parent / "data" / "grapevine" / "lanterns.gex"
    server.clear_requests()
    res = runner.invoke(app, ["gsheet", "import", str(gex), "--into", key, "--service-account", str(key_file)])
    assert isinstance(res.exception, InputError) and "import a Grapevine file into a workbook" in str(res.exception)
    assert server.api_requests() == []


def test_issue11_gsheet_import_into_a_started_battle_is_refused_and_writes_nothing(
        server: FakeSheetsServer, key_file: Path, tmp_path: Path) -> None:
    """Cohort Sheet 1.1-1.7: a tracker with a phase resolved keeps its characters."""
    key = server.create_spreadsheet("Started")
    sa = ["--service-account", str(key_file)]
    wb = tmp_path / "battle.xlsx"
    new_workbook(wb, example_path())
    assert runner.invoke(app, ["upload", str(wb), key, *sa]).exit_code == 0
    assert runner.invoke(app, ["gsheet", "resolve", key, *sa, "--json"]).exit_code == 0
    server.clear_requests()
    lanterns = Path(__file__).parent / "data" / "csv" / "lanterns.csv"
    res = runner.invoke(app, ["gsheet", "import", str(lanterns), "--into", key, *sa, "--replace"])
    assert isinstance(res.exception, BattleStateError) and "is resolved already" in str(res.exception)
    assert res.exception.args[0].startswith(f"{key}: ")
    assert "POST" not in [r.method for r in server.api_requests()]
