"""The workbook commands on a hex tracker: each finds the system from the tracker's mark
and shows the hex wargame's view (H6, H10, H12), and nothing is written by the read-only
ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.workbook_cli import excel_backend, system_tracker_from
from sheetsync.core.registry import find_system

runner = CliRunner()


@pytest.fixture
def hex_book(tmp_path: Path) -> Path:
    hexwar = find_system("hexwar")
    book = tmp_path / "hex.xlsx"
    data = yaml.safe_load(hexwar.example_data())
    data["turn"]["moves"].append({"unit": "Sun Knights", "to": "0601"})  # impassable: refused (H4)
    system_tracker_from(book, hexwar, hexwar.load(data))
    return book


def _json(args: list[str]) -> dict:
    out = runner.invoke(app, args)
    assert out.exit_code == 0, (out.output, out.exception)
    return json.loads(out.stdout)


def test_h10_pools_aftermath_export_and_status_read_a_hex_tracker_and_write_nothing(hex_book: Path) -> None:
    before = hex_book.read_bytes()
    values = _json(["pools", str(hex_book), "--json"])
    assert values["system"] == "hexwar" and len(values["units"]) == 10
    report = _json(["aftermath", str(hex_book), "--json"])
    assert report["system"] == "hexwar" and report["turns"] == 0
    exported = _json(["export", str(hex_book)])
    assert exported["system"] == "hexwar" and exported["turn"] == 1
    out = runner.invoke(app, ["status", str(hex_book)])
    assert out.exit_code == 0 and "turn 1 to resolve" in " ".join(out.output.split()) and "Church Knights" in out.output
    assert hex_book.read_bytes() == before


def test_h4_check_names_the_refused_moves_cell_and_resolve_refuses_it(hex_book: Path) -> None:
    out = runner.invoke(app, ["check", str(hex_book), "--json"])
    assert out.exit_code == 1
    report = json.loads(out.stdout)
    (refusal,) = report["refusals"]
    assert refusal["where"] == "Moves!C7" and refusal["cohort"] == "Sun Knights" and "impassable" in refusal["reason"]
    out = runner.invoke(app, ["resolve", str(hex_book)])
    assert out.exit_code == 0 and "Engagements" in out.output and "impassable" in out.output
    grid = excel_backend(hex_book).read_ranges(["Moves!A7:H7"])[0]
    assert grid[0][0] == 1 and grid[0][7] == "refused"
