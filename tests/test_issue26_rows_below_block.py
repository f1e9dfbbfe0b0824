"""Issue 26, item 3: a row typed below a block a Tracker types into is refused in every
system, naming the block's limit and its last row, and what to do; ``check`` lists it
(exit 1), and the steps that read the block refuse with nothing written (the workbook
and its ``.bak`` byte for byte as they were).

The hex wargame's Units, Moves, Attacks and House Rules, and Exalted's Characters, Units,
Orders and House Rules, through the workbook CLI; one Exalted case on the fake Google
Sheets API (one read, no write); the battalion tracker's refusal (issue 8, item 6) through
the CLI too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from fake_sheets_api import FakeSheetsServer, fake_client
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.app.gsheet_cli import init_spreadsheet
from sheetsync.app.workbook_cli import system_tracker_from
from sheetsync.backends.gsheets import GSheetsBackend
from sheetsync.core.errors import InputError, SheetSyncError
from sheetsync.core.registry import find_system
from sheetsync.sheets import marks as steps
from sheetsync.sheets.backend import RangeUpdate
from sheetsync.systems.bbn.tracker.layout import MAX_CHARACTERS
from sheetsync.systems.exalted.tracker import steps as exalted_tracker
from sheetsync.systems.hexwar.tracker import steps as hexwar_tracker

runner = CliRunner()

LIMIT = "; nothing below them is read. "
MOVE_UP = "Move this row into an empty row above, or put the battle in a battle file: `sheetsync new OUT --from " \
          "battle.yaml` makes a tracker sized to it"
HOUSE_RULES = "Each house rule has its own row above: type its value in that row's Value column"


@pytest.fixture(scope="module")
def trackers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each system's example battle in a tracker workbook, made once (copied per test)."""
    out = {}
    for name in ("hexwar", "exalted"):
        system = find_system(name)
        book = tmp_path_factory.mktemp(name) / "battle.xlsx"
        system_tracker_from(book, system, system.load(yaml.safe_load(system.example_data())))
        out[name] = book
    return out


def _copy(trackers: dict[str, Path], system: str, tmp_path: Path) -> Path:
    book = tmp_path / "battle.xlsx"
    shutil.copy(trackers[system], book)
    return book


def _type(book: Path, cells: dict[str, Any]) -> None:
    """Type values into cells, as a Tracker does in Excel (the workbook saved, no step run)."""
    wb = openpyxl.load_workbook(book)
    for ref, value in cells.items():
        sheet, cell = ref.rsplit("!", 1)
        wb[sheet.strip("'")][cell] = value
    wb.save(book)
    book.with_name(book.name + ".bak").write_bytes(b"the previous copy")  # must stay as it is too


def _files(folder: Path) -> dict[str, bytes]:
    """The workbook and its ``.bak``, byte for byte (the lock file beside them aside)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.endswith(".lock")}


def _refused(book: Path, command: str) -> str:
    """``command`` on ``book`` exits 1 with one of our errors (the entry point prints it,
    see the last test) and writes nothing; the error, problem by problem."""
    before = _files(book.parent)
    out = runner.invoke(app, [command, str(book)])
    assert out.exit_code == 1, (command, out.output, out.exception)
    assert isinstance(out.exception, SheetSyncError), out.exception
    assert _files(book.parent) == before, f"{command} wrote something"
    return str(out.exception)


def _checked(book: Path) -> dict[str, str]:
    """``check --json`` on ``book``: exit 1, nothing written; each bad cell and its reason."""
    before = _files(book.parent)
    out = runner.invoke(app, ["check", str(book), "--json"])
    assert out.exit_code == 1, (out.output, out.exception)
    assert _files(book.parent) == before
    report = json.loads(out.stdout)
    return {r["where"]: r["reason"] for r in report["refusals"]}


# -- the hex wargame -------------------------------------------------------------------------


def test_issue26_item3_hexwar_moves_typed_below_the_moves_block_are_listed_by_check_and_refused_by_resolve(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "hexwar", tmp_path)
    _type(book, {"Moves!B83": "Sun Knights", "Moves!C83": "0502", "Moves!C90": "0503"})
    want = f"this tracker holds at most 80 moves (rows 3-82){LIMIT}{MOVE_UP} (up to 800 moves)"
    assert _checked(book) == {"Moves!B83": want, "Moves!C90": want}  # every row below, at once
    said = _refused(book, "resolve")
    assert f"Moves!B83: {want}" in said and f"Moves!C90: {want}" in said


def test_issue26_item3_hexwar_an_attack_typed_below_the_attacks_block_is_refused(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "hexwar", tmp_path)
    _type(book, {"Attacks!C43": "Sun Knights"})
    want = f"Attacks!C43: this tracker holds at most 40 attacks (rows 3-42){LIMIT}{MOVE_UP} (up to 400 attacks)"
    assert [f"{k}: {v}" for k, v in _checked(book).items()] == [want]
    assert want in _refused(book, "resolve")


def test_issue26_item3_hexwar_a_unit_typed_below_the_units_block_is_refused_by_build_and_resolve(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "hexwar", tmp_path)
    _type(book, {"Units!A43": "Reserve Pikes", "Units!B43": "Church"})
    want = f"Units!A43: this tracker holds at most 40 units (rows 3-42){LIMIT}{MOVE_UP} (up to 400 units)"
    assert want in _refused(book, "build")
    assert want in _refused(book, "resolve")
    assert f"{want.split(': ', 1)[1]}" == _checked(book)["Units!A43"]


def test_issue26_item3_hexwar_a_house_rule_typed_below_the_house_rules_is_refused(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "hexwar", tmp_path)
    _type(book, {"'House Rules'!A8": "charge_bonus", "'House Rules'!B8": 2})
    want = f"House Rules!A8: this tracker holds at most 5 house rules (rows 3-7){LIMIT}{HOUSE_RULES}"
    assert want in _refused(book, "resolve")
    assert want in _refused(book, "build")


# -- Exalted mass combat ---------------------------------------------------------------------


def test_issue26_item3_exalted_a_character_typed_below_the_characters_block_is_refused_by_build(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "exalted", tmp_path)
    _type(book, {"Characters!C63": 3})
    want = (f"Characters!C63: this tracker holds at most 60 characters (rows 3-62){LIMIT}{MOVE_UP} "
            "(up to 600 characters)")
    assert want in _refused(book, "build")


def test_issue26_item3_exalted_a_unit_typed_below_the_units_block_is_refused_by_build_and_resolve(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "exalted", tmp_path)
    _type(book, {"Units!A23": "Reserve Spears"})
    want = f"Units!A23: this tracker holds at most 20 units (rows 3-22){LIMIT}{MOVE_UP} (up to 200 units)"
    assert want in _refused(book, "build")
    assert want in _refused(book, "resolve")
    assert _checked(book) == {"Units!A23": want.split(": ", 1)[1]}


def test_issue26_item3_exalted_orders_typed_below_the_orders_block_are_listed_by_check_and_refused_by_resolve(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "exalted", tmp_path)
    _type(book, {"Orders!A203": 0, "Orders!B203": "Cathak Talon", "Orders!C203": "Attack", "Orders!B250": "x"})
    want = f"this tracker holds at most 200 orders (rows 3-202){LIMIT}{MOVE_UP} (up to 2000 orders)"
    assert _checked(book) == {"Orders!A203": want, "Orders!B250": want}
    said = _refused(book, "resolve")
    assert f"Orders!A203: {want}" in said and f"Orders!B250: {want}" in said


def test_issue26_item3_exalted_a_house_rule_typed_below_the_house_rules_is_refused(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "exalted", tmp_path)
    rows = exalted_tracker.layout().block("HouseRules_Table").rows
    _type(book, {f"'House Rules'!B{3 + rows}": "Yes"})
    want = (f"House Rules!B{3 + rows}: this tracker holds at most {rows} house rules (rows 3-{2 + rows}){LIMIT}"
            f"{HOUSE_RULES}")
    assert want in _refused(book, "resolve")
    assert _checked(book) == {f"House Rules!B{3 + rows}": want.split(": ", 1)[1]}


def test_issue26_item3_exalted_rows_below_on_google_are_one_read_and_no_write() -> None:
    """On Google Sheets the read past each block is the same one read (no extra request),
    and the refusal writes nothing."""
    system = find_system("exalted")
    battle = system.load(yaml.safe_load(system.example_data()))
    capacity = exalted_tracker.capacity_for(battle)
    with FakeSheetsServer() as server:
        key = server.create_spreadsheet("Exalted battle")

        def fresh() -> GSheetsBackend:
            return GSheetsBackend(fake_client(server.url), key, sleep=lambda s: None)

        init_spreadsheet(fresh(), system="exalted", capacity=capacity)
        exalted_tracker.load_into(fresh(), battle, capacity)
        last = system.layout(capacity).block("Orders_Table").last_row
        fresh().write_ranges([RangeUpdate(f"Orders!B{last + 1}", [["Cathak Talon"]])])
        before = server.snapshot(key)
        server.clear_requests()
        with pytest.raises(InputError) as info:
            steps.run("resolve", fresh())
        assert [r.method for r in server.api_requests()] == ["GET"]
        assert server.snapshot(key) == before
        (problem,) = info.value.problems
        assert problem.where == f"Orders!B{last + 1}"
        assert problem.message.startswith(f"this tracker holds at most {last - 2} orders (rows 3-{last})")


# -- the battalion tracker (issue 8, item 6), through the same helper ------------------------


def test_issue26_item3_bbn_a_character_typed_below_the_characters_block_is_still_refused(tmp_path: Path) -> None:
    book = tmp_path / "battle.xlsx"
    assert runner.invoke(app, ["template", str(book)]).exit_code == 0
    row = 3 + MAX_CHARACTERS
    _type(book, {f"Characters!A{row}": "Ghouls", f"Characters!B{row}": "G4"})
    said = _refused(book, "build")
    assert (f"Characters!A{row}: this tracker holds at most {MAX_CHARACTERS} characters (rows 3-{row - 1}){LIMIT}"
            f"{MOVE_UP} (up to 600 characters)") in said


# -- the read plans --------------------------------------------------------------------------


@pytest.mark.parametrize("module", [hexwar_tracker, exalted_tracker])
def test_issue26_item3_every_typed_block_is_read_to_the_end_of_its_sheet_in_the_same_ranges(module: Any) -> None:
    """The read past each block is the block's own range made open-ended (not a range more:
    one read a step on Google Sheets, see the test above)."""
    lay = module.layout()
    plan = module._plan(lay)
    for name in module.TYPED:
        block = lay.block(name)
        own = block.range()
        assert own not in plan
        assert own.rstrip("0123456789") in plan, name


def test_issue26_item3_blank_cells_below_a_block_are_not_refused() -> None:
    """Only a value is refused: the read past the block gives blank cells (and blank text)
    below every tracker's blocks."""
    from sheetsync.sheets import table

    block = hexwar_tracker.layout().block("Moves_Table")
    own, below = table.split_below(block, [[None]] * 80 + [[None, "  ", None], [], [None, None, "0502"]])
    assert len(own) == 80
    problems = table.below_block(block, below, "moves")
    assert [p.where for p in problems] == ["Moves!C85"]


def test_issue26_item3_the_cli_prints_the_refusal_as_an_error_not_a_traceback(
        trackers: dict[str, Path], tmp_path: Path) -> None:
    book = _copy(trackers, "hexwar", tmp_path)
    _type(book, {"Moves!B83": "Sun Knights"})
    before = _files(tmp_path)
    run = subprocess.run([sys.executable, "-m", "sheetsync", "resolve", str(book)], capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert " ".join(run.stderr.split()).startswith("error: Moves!B83: this tracker holds at most 80 moves (rows 3-82)")
    assert _files(tmp_path) == before
