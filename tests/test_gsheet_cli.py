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
from sheetsync.app.files import example_path
from sheetsync.app.workbook_cli import excel_backend, new_workbook
from sheetsync.errors import BackendError, BattleStateError
from sheetsync.sheets.layout import layout

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
    ranges = [lay.block(n).range() for n in ("Characters_Table", "Cohorts_Setup", "Orders_Table", "State_Blob")]
    assert excel_backend(back).read_ranges(ranges) == excel_backend(wb).read_ranges(ranges)


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
