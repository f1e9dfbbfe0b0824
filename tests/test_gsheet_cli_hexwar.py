"""The Google Sheets commands on a hex wargame tracker, end to end through the CLI: init
with --system, a workbook uploaded, a turn resolved and undone in the Google Sheet, and the
battle downloaded back into a workbook that resolves the same turn (H1-H12)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from fake_sheets_api import FakeSheetsServer
from test_gsheet_cli import key_file, server  # noqa: F401  (fixtures)
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.workbook_cli import excel_backend, system_tracker_from
from sheetsync.core.registry import find_system
from sheetsync.sheets import marks as steps

runner = CliRunner()


def test_h8_gsheet_commands_on_a_hex_tracker(server: FakeSheetsServer, key_file: Path, tmp_path: Path) -> None:  # noqa: F811
    hexwar = find_system("hexwar")
    key = server.create_spreadsheet("Hex night")
    sa = ["--service-account", str(key_file)]
    res = runner.invoke(app, ["gsheet", "init", key, "--system", "hexwar", *sa])
    assert res.exit_code == 0 and "Hex wargame tracker laid out" in res.output, res.output
    wb = tmp_path / "hex.xlsx"
    system_tracker_from(wb, hexwar, hexwar.load(yaml.safe_load(hexwar.example_data())))
    res = runner.invoke(app, ["upload", str(wb), key, *sa, "--no-init"])
    assert res.exit_code == 0, res.output
    server.clear_requests()
    res = runner.invoke(app, ["gsheet", "resolve", key, *sa, "--json"])
    assert res.exit_code == 0, res.output
    turn = json.loads(res.stdout)
    assert turn["system"] == "hexwar" and turn["turn"] == 1 and len(turn["events"]) == 6
    assert len(server.api_requests()) == 2  # the mark and the step's read in one GET, one write
    res = runner.invoke(app, ["gsheet", "undo", key, *sa])
    assert res.exit_code == 0 and "Undo Turn 1" in res.output, res.output
    back = tmp_path / "back.xlsx"
    res = runner.invoke(app, ["download", key, str(back), *sa])
    assert res.exit_code == 0, res.output
    tracker = steps.detect(excel_backend(back))
    assert tracker.system.id == "hexwar"
    # the downloaded tracker resolves turn 1 exactly as the Google Sheet did
    again = steps.run("resolve", excel_backend(back)).to_json()
    assert again["events"] == turn["events"] and again["units"] == turn["units"]
