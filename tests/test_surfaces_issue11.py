"""Issue 11, "done means": forecast, report and CSV import work on a battle file, a tracker
workbook and a Google Sheet (the real gspread client against the fake Sheets API), for
every rule system (battalion R13-R37, hex wargame H1-H12, Exalted E1-E11 and X1-X41).

Each test runs the same battle through every surface and checks they agree: the forecast
of a workbook or a Google Sheet is the battle file's for the same seed (only the place of
each order differs: a cell instead of a file path); the report tells the same steps; the
imported cells read back the same in a workbook and a Google Sheet.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from fake_sheets_api import FakeSheetsServer, service_account_info
from typer.testing import CliRunner

from sheetsync.app.cli import app
from sheetsync.core.errors import BattleStateError, InputError
from sheetsync.core.registry import find_system
from sheetsync.sheets.disk import example_path

runner = CliRunner()
SYSTEMS = ("bbn", "hexwar", "exalted")
STEP_WORD = {"bbn": "phase", "hexwar": "turn", "exalted": "long tick"}


@pytest.fixture
def server() -> Any:
    with FakeSheetsServer() as srv:
        yield srv


@pytest.fixture
def sa(server: FakeSheetsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The --service-account option of a key signed in at the fake's token endpoint."""
    info, _ = service_account_info(server.url)
    path = tmp_path / "key.json"
    path.write_text(json.dumps(info))
    monkeypatch.setenv("SHEETSYNC_SHEETS_API_ROOT", f"{server.url}/v4/spreadsheets")
    return ["--service-account", str(path)]


def _ok(args: list[str]) -> Any:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, (res.output, res.exception)
    return res


def _json(args: list[str]) -> Any:
    return json.loads(_ok(args).stdout)


def _example(system: str, tmp_path: Path) -> Path:
    if system == "bbn":
        return example_path()
    path = tmp_path / f"{system}.yaml"
    path.write_text(find_system(system).example_data(), encoding="utf-8")
    return path


def _workbook(tmp_path: Path, src: Path, name: str = "battle.xlsx") -> Path:
    wb = tmp_path / name
    _ok(["new", str(wb), "--from", str(src)])
    return wb


def _upload(server: FakeSheetsServer, sa: list[str], wb: Path) -> str:
    key = server.create_spreadsheet("Battle night")
    _ok(["upload", str(wb), key, *sa])  # laid out at the workbook's capacity, then copied
    return key


def _places(data: dict[str, Any]) -> list[str]:
    return [o.pop("where") for o in data["next_step"]["orders"]]


# -- forecast ----------------------------------------------------------------------------------

@pytest.mark.parametrize("system", SYSTEMS)
def test_issue11_forecast_is_the_battle_files_on_a_workbook_and_a_google_sheet(
        system: str, server: FakeSheetsServer, sa: list[str], tmp_path: Path) -> None:
    """R13, H4, E5: the same battle and seed give the same forecast on every surface; a
    tracker names each order by its cell, and the forecast only reads."""
    src = _example(system, tmp_path)
    wb = _workbook(tmp_path, src)
    key = _upload(server, sa, wb)
    args = ["--runs", "60", "--workers", "1", "--seed", "5", "--json"]
    from_file = _json(["forecast", str(src), *args])
    before = wb.read_bytes()
    from_book = _json(["forecast", str(wb), *args])
    assert wb.read_bytes() == before
    server.clear_requests()
    from_sheet = _json(["gsheet", "forecast", key, *sa, *args])
    assert {r.method for r in server.api_requests()} == {"GET"}
    also = _json(["forecast", key, *sa, *args])  # the top-level command reads a Google Sheet too
    file_places, book_places, sheet_places = _places(from_file), _places(from_book), _places(from_sheet)
    _places(also)
    assert from_file["system"] == system and from_file["next_step"]["orders"]
    assert from_file == from_book == from_sheet == also
    assert book_places == sheet_places
    sheets = {"bbn": ("Orders!",), "hexwar": ("Moves!", "Attacks!"), "exalted": ("Orders!",)}[system]
    assert all(p.startswith(sheets) for p in book_places), book_places
    assert not any(p.startswith(sheets) for p in file_places)
    assert sum(s["win"]["p"] for s in from_file["to_the_end"]["sides"]) == pytest.approx(1.0, abs=1e-3)


def test_x34_exalted_workbook_forecast_after_a_long_tick_is_the_resolved_files(tmp_path: Path) -> None:
    """E1, E5: after Next Tick, the workbook's forecast starts from the same long tick and
    dice as the battle file resolved once (its undo record seeds the next tick)."""
    src = _example("exalted", tmp_path)
    wb = _workbook(tmp_path, src)
    _ok(["resolve", str(wb)])
    once = tmp_path / "t1.yaml"
    _ok(["resolve", str(src), "--out", str(once)])
    args = ["--runs", "80", "--workers", "1", "--json"]
    book, file = _json(["forecast", str(wb), *args]), _json(["forecast", str(once), *args])
    _places(book), _places(file)
    assert book == file and book["step"] > 0


def test_x34_exalted_workbook_forecast_sheet_counts_magnitude_lost(tmp_path: Path) -> None:
    wb = _workbook(tmp_path, _example("exalted", tmp_path))
    _ok(["forecast", str(wb), "--runs", "30", "--workers", "1", "--write"])
    ws = openpyxl.load_workbook(wb)["Forecast"]
    column = [ws.cell(row=r, column=1).value for r in range(1, ws.max_row + 1)]
    assert column[0].startswith("Forecast of battle.xlsx, long tick 0")
    assert "Expected losses (Magnitude lost)" in column
    assert column[5:9] == ["Realm wins", "Bandits wins", "Draw", "Undecided"]


def test_exalted_workbook_forecast_names_a_bad_order_cell(tmp_path: Path) -> None:
    """E1: a die typed wrong is named by its Orders cell, and nothing runs."""
    wb = _workbook(tmp_path, _example("exalted", tmp_path))
    book = openpyxl.load_workbook(wb)
    book["Orders"]["G3"] = "11 4"
    book.save(wb)
    res = runner.invoke(app, ["forecast", str(wb), "--runs", "10", "--workers", "1"])
    assert isinstance(res.exception, InputError)
    assert "Orders!G3" in str(res.exception) and "11 is not a d10 face" in str(res.exception)


def test_x40_an_ended_exalted_tracker_has_nothing_to_forecast(tmp_path: Path) -> None:
    wb = _workbook(tmp_path, _example("exalted", tmp_path))
    _ok(["end", str(wb)])
    res = runner.invoke(app, ["forecast", str(wb), "--runs", "10", "--workers", "1"])
    assert isinstance(res.exception, BattleStateError)
    assert "the battle has ended (End Battle wrote the Aftermath); Undo Tick reopens it" in str(res.exception)


@pytest.mark.parametrize("system", SYSTEMS)
def test_issue11_gsheet_forecast_write_adds_a_forecast_sheet_with_a_column_chart(
        system: str, server: FakeSheetsServer, sa: list[str], tmp_path: Path) -> None:
    """R37, H12, X34: --write on a Google Sheet adds the Forecast sheet and its chart in one
    batchUpdate; a second --write replaces them; the tracker still steps."""
    key = _upload(server, sa, _workbook(tmp_path, _example(system, tmp_path)))
    args = ["--runs", "40", "--workers", "1", "--seed", "3"]
    data = _json(["gsheet", "forecast", key, *sa, *args, "--json"])
    for _ in range(2):
        server.clear_requests()
        _ok(["gsheet", "forecast", key, *sa, *args, "--write"])
        assert [r.method for r in server.api_requests()].count("POST") == 1
    titles = [s.title for s in server.spreadsheet(key).sheets]
    assert titles.count("Forecast") == 1
    sheet = server.spreadsheet(key).sheet("Forecast")
    sides = data["to_the_end"]["sides"]
    cells = server.entered(key, f"Forecast!A1:B{5 + len(sides)}")
    assert cells[0][0]["stringValue"].startswith(f"Forecast of {key}, {STEP_WORD[system]} {data['step']}")
    assert [c[0]["stringValue"] for c in cells[4:]] == ["Outcome", *(
        {"(draw)": "Draw", "(undecided)": "Undecided"}.get(s["side"], f"{s['side']} wins") for s in sides)]
    assert [(c[1] or {}).get("numberValue", 0) for c in cells[5:]] == [s["win"]["p"] for s in sides]
    assert server.cell(key, "Forecast!B6")["userEnteredFormat"]["numberFormat"]["type"] == "PERCENT"
    (chart,) = sheet.charts
    spec = chart["spec"]["basicChart"]
    assert spec["chartType"] == "COLUMN" and spec["headerCount"] == 1
    sid, last = sheet.sheet_id, 5 + len(sides)
    assert spec["domains"][0]["domain"]["sourceRange"]["sources"] == [
        {"sheetId": sid, "startRowIndex": 4, "endRowIndex": last, "startColumnIndex": 0, "endColumnIndex": 1}]
    assert spec["series"][0]["series"]["sourceRange"]["sources"] == [
        {"sheetId": sid, "startRowIndex": 4, "endRowIndex": last, "startColumnIndex": 1, "endColumnIndex": 2}]
    assert chart["position"]["overlayPosition"]["anchorCell"]["sheetId"] == sid
    out = _ok(["gsheet", "resolve", key, *sa]).output  # the step after the forecast: its long tick as tables
    assert {"bbn": "Phase 1", "hexwar": "Turn 1", "exalted": "Long tick"}[system] in out and "(2 requests)" in out


def test_gsheet_forecast_write_is_refused_when_a_step_ran_meanwhile(
        server: FakeSheetsServer, sa: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sheetsync.app import forecast_io

    key = _upload(server, sa, _workbook(tmp_path, _example("exalted", tmp_path)))
    real = forecast_io.run_forecast

    def meanwhile(*args: Any, **kwargs: Any) -> dict[str, Any]:
        out = real(*args, **kwargs)
        server.set_values(key, "Orders!E10", [["Close"]])  # someone types while it runs
        return out

    monkeypatch.setattr(forecast_io, "run_forecast", meanwhile)
    server.clear_requests()
    res = runner.invoke(app, ["gsheet", "forecast", key, *sa, "--runs", "10", "--workers", "1", "--write"])
    assert isinstance(res.exception, BattleStateError) and "changed while the forecast ran" in str(res.exception)
    assert "POST" not in [r.method for r in server.api_requests()]
    assert "Forecast" not in [s.title for s in server.spreadsheet(key).sheets]


def test_top_level_forecast_write_on_a_google_sheet_points_to_gsheet_forecast(
        server: FakeSheetsServer, sa: list[str], tmp_path: Path) -> None:
    key = _upload(server, sa, _workbook(tmp_path, _example("hexwar", tmp_path)))
    res = runner.invoke(app, ["forecast", key, *sa, "--runs", "10", "--write"])
    assert isinstance(res.exception, BattleStateError)
    assert f"sheetsync gsheet forecast {key} --write" in str(res.exception)


# -- report ------------------------------------------------------------------------------------

def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end >= 0 else None]


@pytest.mark.parametrize("system", SYSTEMS)
def test_issue11_report_tells_the_same_steps_from_a_file_a_workbook_and_a_google_sheet(
        system: str, server: FakeSheetsServer, sa: list[str], tmp_path: Path) -> None:
    """R25, H8, E1: one step resolved in a battle file and in a workbook (and the workbook
    uploaded): the three reports tell the same step, line for line, and name every unit."""
    src = _example(system, tmp_path)
    once = tmp_path / "once.yaml"
    _ok(["resolve", str(src), "--out", str(once)])
    wb = _workbook(tmp_path, src)
    _ok(["resolve", str(wb)])
    key = _upload(server, sa, wb)
    texts = []
    for args, name in ((["report", str(once)], "file.md"), (["report", str(wb)], "book.md"),
                       (["gsheet", "report", key, *sa], "sheet.md")):
        server.clear_requests()
        _ok([*args, "--md", str(tmp_path / name)])
        assert "POST" not in [r.method for r in server.api_requests()]
        texts.append((tmp_path / name).read_text(encoding="utf-8"))
    told = [_section(t, "## What happened") for t in texts]
    assert told[0] == told[1] == told[2]
    first = {"bbn": "### Phase 1", "hexwar": "### Turn 1", "exalted": "### Long tick 0"}[system]
    assert first in told[0] and len(told[0].splitlines()) > 3
    battle = yaml.safe_load(src.read_text(encoding="utf-8"))
    names = [c["name"] for c in battle["cohorts" if system == "bbn" else "units"]]
    for text in texts:
        sides = _section(text, "## Sides")
        assert all(n in sides for n in names), (names, sides)


# -- CSV import --------------------------------------------------------------------------------

def _write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    headers = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=headers)
        w.writeheader()
        w.writerows(rows)
    return path


LANTERNS = Path(__file__).parent / "data" / "csv" / "lanterns.csv"

HEX_UNITS = [
    {"Unit": "Caliph's Horses", "Side": "Party", "Counter": "3+ - 2 - 4 - 1", "Start hex": "0304"},
    {"Unit": "First Archer Company", "Side": "Party", "Counter": "4 - 3 - 1 - 2(--)", "Start hex": "0405",
     "Size": "company"},
    {"Unit": "1st Fist", "Side": "Enemy", "Counter": "4 - 4 - 1 - 2(2)", "Start hex": "0805", "Men": "670"},
]

EX_CHARS = [
    {"Character": "Tepet Arada", "Role": "commander", "Dex": "4", "Sta": "3", "Cha": "4", "Wits": "3", "Ess": "2",
     "Valor": "3", "Will": "7", "Abilities": "Melee 4, War 4, Dodge 3", "Mortal": "No",
     "Close weapon": "Straight sword", "Acc": "1", "Dmg": "3", "Type": "Lethal", "Def": "1", "Spd": "4",
     "Armour soak": "5"},
    {"Character": "Sesus Oro", "Role": "hero", "Dex": "4", "Ess": "2", "Abilities": "Melee 4, War 2",
     "Mortal": "No", "Close weapon": "Spear", "Acc": "1", "Dmg": "4", "Type": "Lethal"},
    {"Character": "Old Bram", "Role": "commander", "Cha": "3", "Wits": "2", "Valor": "3",
     "Abilities": "Melee 3, War 2", "Close weapon": "Axe", "Dmg": "4", "Type": "Lethal"},
    {"Character": "Wren", "Role": "relay", "Cha": "3", "Abilities": "War 1"},
]
EX_UNITS = [
    {"Unit": "Tepet Fang", "Side": "Realm", "Commander": "Tepet Arada", "Extras": "24", "Formation": "Close",
     "Drill": "4", "Might": "1", "Heroes": "Sesus Oro", "Join War dice": "9 7 10 2 4"},
    {"Unit": "Hill Mob", "Side": "Bandits", "Commander": "Old Bram", "Extras": "20", "Formation": "Relaxed",
     "Drill": "1", "Relays": "Wren"},
]


def _csvs(system: str, tmp_path: Path) -> list[Path]:
    if system == "bbn":
        return [LANTERNS]
    if system == "hexwar":
        return [_write_csv(tmp_path / "units.csv", HEX_UNITS)]
    return [_write_csv(tmp_path / "chars.csv", EX_CHARS), _write_csv(tmp_path / "units.csv", EX_UNITS)]


def _blocks(system: str) -> list[str]:
    return {"bbn": ["Characters_Table", "Cohorts_Setup"], "hexwar": ["Units_Table"],
            "exalted": ["Characters_Table", "Units_Table"]}[system]


@pytest.mark.parametrize("system", SYSTEMS)
def test_r12_csv_import_reads_back_the_same_in_a_battle_file_a_workbook_and_a_google_sheet(
        system: str, server: FakeSheetsServer, sa: list[str], tmp_path: Path) -> None:
    """R12, H1, X2-X11: the CSV into a new battle file, a blank workbook and a blank Google
    Sheet: the workbook's and the Google Sheet's input cells are the same, both build, and
    the built battle is the battle file's."""
    from fake_sheets_api import fake_client

    from sheetsync.app.workbook_cli import excel_backend
    from sheetsync.backends.gsheets import GSheetsBackend
    from sheetsync.sheets.marks import detect

    files = [str(p) for p in _csvs(system, tmp_path)]
    out = tmp_path / "imported.yaml"
    extra = ["--map", "12x8"] if system == "hexwar" else []
    _ok(["import", *files, "--into", str(out), "--system", system, *extra])
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    wb = tmp_path / "blank.xlsx"
    _ok(["template", str(wb), "--system", system])
    _ok(["import", *files, "--into", str(wb)])
    key = server.create_spreadsheet("Import")
    _ok(["gsheet", "init", key, *sa, "--system", system])
    server.clear_requests()
    res = _ok(["gsheet", "import", *files, "--into", key, *sa])
    assert "gsheet build" in res.stdout
    assert [r.method for r in server.api_requests()].count("POST") == 1  # one write
    lay = detect(excel_backend(wb)).system.layout(None)
    ranges = [lay.block(b).range() for b in _blocks(system)]
    book = excel_backend(wb).read_ranges(ranges)
    sheet = GSheetsBackend(fake_client(server.url), key, sleep=lambda s: None).read_ranges(ranges)
    assert book == sheet
    names = {"bbn": ["Marguerite", "Tobias", "Ines", "Caspar", "Delphine"],  # lanterns.csv, row by row
             "hexwar": [u["Unit"] for u in HEX_UNITS], "exalted": [c["Character"] for c in EX_CHARS]}[system]
    assert [row[lay.block(_blocks(system)[0]).index("name")] for row in book[0][:len(names)]] == names
    if system == "exalted":
        units = book[1]
        col = lay.block("Units_Table")
        assert [(r[col.index("name")], r[col.index("extras")], r[col.index("join_war")]) for r in units[:2]] == [
            ("Tepet Fang", 24, "9 7 10 2 4"), ("Hill Mob", 20, None)]
        assert [u["name"] for u in data["units"]] == ["Tepet Fang", "Hill Mob"]
        assert data["characters"][0]["abilities"] == {"Melee": 4, "War": 4, "Dodge": 3}
    if system == "hexwar":  # H2: the map's size is typed on the Battle sheet
        book_file = openpyxl.load_workbook(wb)
        book_file["Battle"]["B9"], book_file["Battle"]["B10"] = 12, 8
        book_file.save(wb)
        server.set_values(key, "Battle!B9:B10", [[12], [8]])
    _ok(["build", str(wb)])
    _ok(["gsheet", "build", key, *sa, "--json"])
    built = _json(["export", str(wb)])["battle"]
    kinds = {"bbn": ["cohorts"], "hexwar": ["units"], "exalted": ["characters", "units"]}[system]
    if system == "bbn":  # a CSV cohort is on side 'players', the tracker's default too
        assert [c["name"] for c in built["cohorts"]] == [c["name"] for c in data["cohorts"]] == ["Lanterns"]
        assert [m["name"] for m in built["cohorts"][0]["members"]] == names
    else:  # the built battle is the battle file's, unit for unit
        assert all(built[k] == data[k] for k in kinds)


def test_x2_x11_exalted_csv_bad_cells_are_all_named_by_their_csv_address_and_nothing_is_written(
        server: FakeSheetsServer, sa: list[str], tmp_path: Path) -> None:
    chars = [dict(c) for c in EX_CHARS]
    chars[0]["Dex"] = "four"  # C2 (columns: Character, Role, Dex ...)
    chars[1]["Role"] = "general"  # B3
    units = [dict(u) for u in EX_UNITS]
    units[0]["Drill"] = "9"  # F2 (Unit, Side, Commander, Extras, Formation, Drill ...): 0 to 5, X4
    units[1]["Commander"] = "Old Bran"  # C3: not a character (X3)
    files = [str(_write_csv(tmp_path / "chars.csv", chars)), str(_write_csv(tmp_path / "units.csv", units))]
    wb = tmp_path / "blank.xlsx"
    _ok(["template", str(wb), "--system", "exalted"])
    before = wb.read_bytes()
    res = runner.invoke(app, ["import", *files, "--into", str(wb)])
    assert isinstance(res.exception, InputError), res.output
    said = {p.where: p.message for p in res.exception.problems}
    assert {"chars.csv:C2", "chars.csv:B3", "units.csv:F2", "units.csv:C3"} <= set(said), said
    assert "'Old Bran' is not a character" in said["units.csv:C3"] and "Old Bram" in said["units.csv:C3"]
    assert wb.read_bytes() == before
    out = tmp_path / "x.yaml"
    res = runner.invoke(app, ["import", *files, "--into", str(out), "--system", "exalted"])
    assert isinstance(res.exception, InputError)
    assert {p.where for p in res.exception.problems} == set(said)
    assert not out.exists()
    key = server.create_spreadsheet("Import")
    _ok(["gsheet", "init", key, *sa, "--system", "exalted"])
    server.clear_requests()
    res = runner.invoke(app, ["gsheet", "import", *files, "--into", key, *sa])
    assert isinstance(res.exception, InputError)
    assert {p.where for p in res.exception.problems} == set(said)
    assert "POST" not in [r.method for r in server.api_requests()]


def test_x3_exalted_units_csv_alone_needs_the_trackers_characters(tmp_path: Path) -> None:
    """X3: a unit's commander is a Characters row: a units CSV imports into a tracker whose
    Characters sheet names them, and is refused (at the CSV cell) into one that doesn't."""
    chars, units = _csvs("exalted", tmp_path)
    wb = tmp_path / "blank.xlsx"
    _ok(["template", str(wb), "--system", "exalted"])
    res = runner.invoke(app, ["import", str(units), "--into", str(wb)])
    assert isinstance(res.exception, InputError)
    assert "units.csv:C2" in {p.where for p in res.exception.problems}
    _ok(["import", str(chars), "--into", str(wb)])
    res = runner.invoke(app, ["import", str(chars), "--into", str(wb)])
    assert isinstance(res.exception, BattleStateError) and "already holds 4 characters" in str(res.exception)
    _ok(["import", str(units), "--into", str(wb)])
    _ok(["build", str(wb)])
    res = runner.invoke(app, ["import", str(chars), str(chars), "--into", str(wb), "--replace"])
    assert isinstance(res.exception, InputError) and "holds characters again" in str(res.exception)


def test_exalted_template_csv_writes_the_characters_or_units_headers(tmp_path: Path) -> None:
    from sheetsync.systems.exalted.tracker.layout import layout

    lay = layout(None)
    for name, sheet, block in (("chars.csv", [], "Characters_Table"), ("units.csv", [], "Units_Table"),
                               ("mine.csv", ["--sheet", "units"], "Units_Table")):
        _ok(["template", "--csv", str(tmp_path / name), "--system", "exalted", *sheet])
        head = (tmp_path / name).read_text(encoding="utf-8").splitlines()[0].split(",")
        assert head == [c.header for c in lay.block(block).columns if c.is_input]
    res = runner.invoke(app, ["template", "--csv", str(tmp_path / "h.csv"), "--sheet", "units"])
    assert isinstance(res.exception, InputError) and "--sheet" in str(res.exception)


@pytest.mark.libreoffice
def test_x2_x11_an_exalted_tracker_from_csv_with_its_forecast_opens_in_libreoffice(tmp_path: Path) -> None:
    """The imported, built Exalted tracker with its Forecast sheet, recalculated by real
    LibreOffice: no error value anywhere, and the imported names read back."""
    from libreoffice import cell_values, error_cells, require_libreoffice

    require_libreoffice()
    chars, units = _csvs("exalted", tmp_path)
    wb = tmp_path / "blank.xlsx"
    _ok(["template", str(wb), "--system", "exalted"])
    _ok(["import", str(chars), str(units), "--into", str(wb)])
    _ok(["build", str(wb)])
    book = openpyxl.load_workbook(wb)
    orders = book["Orders"]  # the first long tick's order (E5), typed in its first row
    orders["A3"], orders["B3"], orders["C3"], orders["D3"], orders["E3"] = 0, "Tepet Fang", "Attack", "Hill Mob", "Close"
    book.save(wb)
    _ok(["forecast", str(wb), "--runs", "30", "--workers", "1", "--write"])
    assert error_cells(wb) == []
    got = cell_values(wb, ["Units!A3:A4", "Characters!A3:A6", "Forecast!A6:A9"])
    assert [r[0] for r in got["Units!A3:A4"]] == ["Tepet Fang", "Hill Mob"]
    assert [r[0] for r in got["Characters!A3:A6"]] == [c["Character"] for c in EX_CHARS]
    assert [r[0] for r in got["Forecast!A6:A9"]] == ["Realm wins", "Bandits wins", "Draw", "Undecided"]
