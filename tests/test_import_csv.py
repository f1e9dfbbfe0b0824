"""``sheetsync import chars.csv --into FILE`` and ``sheetsync template --csv``: one row per
character (battalion, Cohort Sheet 1.1-1.7) or unit (hex wargame, H1, H2), with the
columns of the system's Characters or Units sheet, headers matched as trait names are
(R12); every bad cell reported at its CSV address, all at once, and nothing written.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from sheetsync.app.cli import main
from sheetsync.app.workbook_cli import write_template

DATA = Path(__file__).parent / "data" / "csv"

LANTERNS_BY_HAND = {"health": 29, "melee": 18, "ranged": 3, "mystical": 5, "defense": 33, "temper": 110,
                    "movement": 1, "resolve": 6, "control": 1}
"""tests/data/csv/lanterns.csv holds the five Lanterns of tests/data/grapevine/lanterns.gex,
trait for trait; their pools are worked out by hand in test_import_grapevine.py
(Cohort Sheet 1.1-1.7, R2-R10)."""

LANTERNS = [
    {"Cohort": "Lanterns", "Character": "Marguerite", "Temper": "40", "Blood Magic In-Clan": "Yes", "Occult": "3",
     "Dodge": "2", "Alertness": "1", "Iron Will": "Yes", "Auspex": "2",
     "Offensive Paths": "Path of Blood 3; Lure of Flames 2", "Other Traits": "Academics 2"},
    {"Cohort": "Lanterns", "Character": "Tobias", "Temper": "35", "Brawl": "4", "Melee": "2", "Firearms": "3",
     "Dodge": "3", "Natural Leader": "Yes", "Enchanting Voice": "Yes", "Potence": "2", "Celerity": "3",
     "Presence": "1"},
    {"Cohort": "Lanterns", "Character": "Ines", "Temper": "12", "Brawl": "3", "Dodge": "1", "Survival": "2",
     "Rugged": "Yes", "Fortitude": "2", "Protean": "3", "Other Traits": "Animalism 1"},
    {"Cohort": "Lanterns", "Character": "Caspar", "Temper": "10", "Brawl": "2", "Tactics": "5", "Huge Size": "Yes",
     "Potence": "1", "Obfuscate": "2", "Other Traits": "Stealth 3; Animalism 1"},
    {"Cohort": "Lanterns", "Character": "Delphine", "Temper": "11", "Melee": "3", "Dodge": "2", "Awareness": "2",
     "Auspex": "1", "Celerity": "1", "Presence": "3", "Other Traits": "Eat Food"},
]

UNITS = [
    {"Unit": "Caliph's Horses", "Side": "Party", "Counter": "3+ - 2 - 4 - 1", "Start hex": "0304"},
    {"Unit": "Church Knights", "Side": "Party", "Counter": "4++ - 4 - 3 - 1", "Start hex": "0305"},
    {"Unit": "First Archer Company", "Side": "Party", "Counter": "4 - 3 - 1 - 2(--)", "Start hex": "0405",
     "Size": "company"},
    {"Unit": "1st Fist", "Side": "Enemy", "Counter": "4 - 4 - 1 - 2(2)", "Start hex": "0805", "Men": "670"},
    {"Unit": "Drow Infantry", "Side": "Enemy", "Counter": "4 - 3 - 1 - 2(3)", "Start hex": "0905"},
]


def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sheetsync", *args])
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def ok(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run_main(monkeypatch, capsys, *args)
    assert code == 0, err
    assert "Traceback" not in out + err
    return out


def _fill(template: Path, rows: list[dict[str, str]]) -> None:
    """What a Storyteller does with the template: one row per character under its headers."""
    with template.open(newline="", encoding="utf-8") as f:
        headers = next(csv.reader(f))
    with template.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=headers, lineterminator="\r\n")
        writer.writerows(rows)


def _json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    return json.loads(ok(monkeypatch, capsys, *args, "--json"))


def _problems(err: str) -> list[str]:
    return [line.strip() for line in err.splitlines()[1:]]


# -- template --csv ------------------------------------------------------------------------

def test_template_csv_has_the_characters_sheets_headers_in_its_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "chars.csv"
    ok(monkeypatch, capsys, "template", "--csv", str(out))
    headers = out.read_text(encoding="utf-8").splitlines()
    tracker = openpyxl.load_workbook(write_template(tmp_path / "blank.xlsx"))["Characters"]
    assert headers == [",".join(str(c.value) for c in tracker[2] if c.value is not None)]
    assert headers[0].startswith("Cohort,Character,Temper,Willpower Spent,")


def test_template_csv_for_the_hex_wargame_is_the_units_typed_columns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "units.csv"
    ok(monkeypatch, capsys, "template", "--csv", str(out), "--system", "hexwar")
    assert out.read_bytes() == b"Unit,Side,Counter,Start hex,Size,Men\r\n"


def test_template_csv_refuses_an_existing_file_unless_force(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "chars.csv"
    out.write_text("mine\n", encoding="utf-8")
    code, _o, err = run_main(monkeypatch, capsys, "template", "--csv", str(out))
    assert code == 1 and "already exists" in err and out.read_text(encoding="utf-8") == "mine\n"
    ok(monkeypatch, capsys, "template", "--csv", str(out), "--force")
    assert out.read_text(encoding="utf-8").startswith("Cohort,Character")
    assert out.with_name("chars.csv.bak").read_text(encoding="utf-8") == "mine\n"


def test_template_csv_for_exalted_writes_characters_then_units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """E7-E10, X1-X11: an Exalted battle takes a CSV per sheet; the name (or --sheet) picks it."""
    out = ok(monkeypatch, capsys, "template", "--csv", str(tmp_path / "x.csv"), "--system", "exalted")
    assert "--sheet units" in out
    assert (tmp_path / "x.csv").read_text(encoding="utf-8").startswith("Character,Role,Dex,Str,Sta,")
    ok(monkeypatch, capsys, "template", "--csv", str(tmp_path / "my units.csv"), "--system", "exalted")
    assert (tmp_path / "my units.csv").read_text(encoding="utf-8").startswith("Unit,Side,Commander,Solo,Extras,")
    code, _o, err = run_main(monkeypatch, capsys, "template", "--csv", str(tmp_path / "y.csv"), "--system",
                             "exalted", "--sheet", "orders")
    assert code == 1 and "'orders' is not a sheet of an Exalted CSV" in err and not (tmp_path / "y.csv").exists()


def test_template_without_a_workbook_or_csv_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, _o, err = run_main(monkeypatch, capsys, "template")
    assert code == 1 and err.startswith("error: OUT: name the tracker workbook to write")


# -- battalion: round trip ------------------------------------------------------------------

def test_cohort_sheet_1_1_to_1_7_csv_round_trip_template_fill_import_pools(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    chars = tmp_path / "chars.csv"
    ok(monkeypatch, capsys, "template", "--csv", str(chars))
    _fill(chars, LANTERNS)
    tracker = write_template(tmp_path / "battle.xlsx")
    out = ok(monkeypatch, capsys, "import", str(chars), "--into", str(tracker))
    assert "5 characters in 1 cohort" in out
    pools = _json(monkeypatch, capsys, "pools", str(tracker))
    assert {c["name"]: c["pools"] for c in pools["cohorts"]} == {"Lanterns": LANTERNS_BY_HAND}

    battle_file = tmp_path / "battle.yaml"
    ok(monkeypatch, capsys, "import", str(chars), "--into", str(battle_file))
    pools = _json(monkeypatch, capsys, "pools", str(battle_file))
    assert {c["name"]: c["pools"] for c in pools["cohorts"]} == {"Lanterns": LANTERNS_BY_HAND}


def test_r12_csv_headers_match_as_trait_names_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """lanterns.csv spells its headers "character", "blood-magic in clan", "BRAWL",
    "iron_will" and leaves out the columns nobody uses."""
    tracker = write_template(tmp_path / "battle.xlsx")
    code, out, err = run_main(monkeypatch, capsys, "import", str(DATA / "lanterns.csv"), "--into", str(tracker))
    assert code == 0, err
    # the summary and its notes: the Other Traits no pool uses, by character
    assert "Note: Caspar: not counted (R12): Stealth: feeds no pool" in err
    assert "Traits not counted" in out and "Caspar 2" in out
    pools = _json(monkeypatch, capsys, "pools", str(tracker))
    assert {c["name"]: c["pools"] for c in pools["cohorts"]} == {"Lanterns": LANTERNS_BY_HAND}


def test_a_semicolon_csv_with_a_byte_order_mark_reads_as_excel_saves_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with (DATA / "lanterns.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    semi = tmp_path / "semi.csv"
    with semi.open("w", newline="", encoding="utf-8-sig") as f:
        csv.writer(f, delimiter=";").writerows(rows)
    out_file = tmp_path / "semi.yaml"
    ok(monkeypatch, capsys, "import", str(semi), "--into", str(out_file))
    pools = _json(monkeypatch, capsys, "pools", str(out_file))
    assert pools["cohorts"][0]["pools"] == LANTERNS_BY_HAND


# -- battalion: bad cells ------------------------------------------------------------------

BAD = """Cohort,Character,Temper,Brawl,Rugged,Fortitude,Bogus
Night,Ann,lots,3,Yes,2,
Night,Bob,5,-2,maybe,1,
Night,,5,1,,,
Night,Cid,5,x,,,
"""


def test_bad_cells_are_all_reported_at_their_csv_address_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "chars.csv"
    bad.write_text(BAD, encoding="utf-8")
    tracker = write_template(tmp_path / "battle.xlsx")
    held = tracker.read_bytes()
    code, out, err = run_main(monkeypatch, capsys, "import", str(bad), "--into", str(tracker))
    assert code == 1 and "Traceback" not in out + err
    assert err.startswith("error: 6 problems in chars.csv:")
    assert _problems(err) == [
        "chars.csv:G1: 'Bogus' is not a column of the sheet (sheetsync template --csv writes the headers)",
        "chars.csv:C2: temper 'lots' is not a whole number",
        "chars.csv:D3: brawl -2 is not 0 to 10",
        "chars.csv:E3: rugged 'maybe' is not Yes or No",
        "chars.csv:B4: a character needs a name",
        "chars.csv:D5: brawl 'x' is not a whole number",
    ]
    assert tracker.read_bytes() == held
    assert not tracker.with_name("battle.xlsx.bak").exists()

    battle_file = tmp_path / "battle.yaml"
    code, _out, err2 = run_main(monkeypatch, capsys, "import", str(bad), "--into", str(battle_file))
    assert code == 1 and _problems(err2) == _problems(err)
    assert not battle_file.exists()


def test_r1_a_cohort_of_the_wrong_size_is_named_at_its_first_csv_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    two = tmp_path / "two.csv"
    two.write_text("Cohort,Character,Brawl\nNight,Ann,1\nDay,Bea,1\nNight,Bob,1\n", encoding="utf-8")
    code, _out, err = run_main(monkeypatch, capsys, "import", str(two), "--into", str(tmp_path / "b.yaml"))
    assert code == 1
    assert _problems(err) == [
        "two.csv:A2: Night has 2 members; a cohort has 3 to 5 (R1; house rule allow_any_size lifts this)",
        "two.csv:A3: Day has 1 members; a cohort has 3 to 5 (R1; house rule allow_any_size lifts this)"]


def test_a_csv_without_the_name_columns_or_rows_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    no_name = tmp_path / "no_name.csv"
    no_name.write_text("Cohort,Brawl\nNight,1\n", encoding="utf-8")
    code, _out, err = run_main(monkeypatch, capsys, "import", str(no_name), "--into", str(tmp_path / "b.yaml"))
    assert code == 1 and "no_name.csv:1: there is no 'Character' column, and every row needs one" in err
    empty = tmp_path / "empty.csv"
    empty.write_text("Cohort,Character\n", encoding="utf-8")
    code, _out, err = run_main(monkeypatch, capsys, "import", str(empty), "--into", str(tmp_path / "b.yaml"))
    assert code == 1 and "empty.csv:2: holds no rows below its header row" in err
    latin = tmp_path / "latin.csv"
    latin.write_bytes("Cohort,Character\nNight,Zo\xe9\n".encode("latin-1"))
    code, _out, err = run_main(monkeypatch, capsys, "import", str(latin), "--into", str(tmp_path / "b.yaml"))
    assert code == 1 and 'latin.csv: is not UTF-8 text: save it again as "CSV UTF-8"' in err
    assert not (tmp_path / "b.yaml").exists()


def test_replace_a_trackers_characters_with_a_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    tracker = write_template(tmp_path / "battle.xlsx")
    ok(monkeypatch, capsys, "import", str(DATA / "lanterns.csv"), "--into", str(tracker))
    three = tmp_path / "three.csv"
    three.write_text("Cohort,Character,Brawl\nWatch,Ann,5\nWatch,Bob,5\nWatch,Cid,5\n", encoding="utf-8")
    code, _out, err = run_main(monkeypatch, capsys, "import", str(three), "--into", str(tracker))
    assert code == 1 and "already holds 5 characters" in err
    ok(monkeypatch, capsys, "import", str(three), "--into", str(tracker), "--replace")
    pools = _json(monkeypatch, capsys, "pools", str(tracker))
    assert [c["name"] for c in pools["cohorts"]] == ["Watch"]
    # Melee, R7 + R2: 2 per member, Brawl 5 + 5 + 5 = 15 dots -> +3
    assert pools["cohorts"][0]["pools"]["melee"] == 2 * 3 + 15 // 5


def test_only_is_for_grapevine_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_main(monkeypatch, capsys, "import", str(DATA / "lanterns.csv"), "--into",
                               str(tmp_path / "b.yaml"), "--only", "Ines")
    assert code == 1 and err.startswith("error: --only: picks characters of a Grapevine file")


# -- hex wargame -----------------------------------------------------------------------------

def _hex_tracker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    tracker = tmp_path / "hex.xlsx"
    ok(monkeypatch, capsys, "template", str(tracker), "--system", "hexwar")
    wb = openpyxl.load_workbook(tracker)
    wb["Battle"]["B9"], wb["Battle"]["B10"] = 12, 10  # the map, as the Storyteller types it (H2)
    wb.save(tracker)
    return tracker


def test_h1_h2_hex_csv_round_trip_template_fill_import_build_pools(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    units = tmp_path / "units.csv"
    ok(monkeypatch, capsys, "template", "--csv", str(units), "--system", "hexwar")
    _fill(units, UNITS)
    tracker = _hex_tracker(tmp_path, monkeypatch, capsys)
    out = ok(monkeypatch, capsys, "import", str(units), "--into", str(tracker))
    assert "5 units written to the Units sheet" in out
    sheet = openpyxl.load_workbook(tracker)["Units"]
    assert [[c.value for c in row][:6] for row in sheet.iter_rows(min_row=3, max_row=5)] == [
        ["Caliph's Horses", "Party", "3+ - 2 - 4 - 1", "0304", None, None],
        ["Church Knights", "Party", "4++ - 4 - 3 - 1", "0305", None, None],
        ["First Archer Company", "Party", "4 - 3 - 1 - 2(--)", "0405", "company", None]]
    ok(monkeypatch, capsys, "build", str(tracker))
    got = {u["name"]: (u["side"], u["attack"], u["charge"], u["defense"], u["movement"], u["range"])
           for u in _json(monkeypatch, capsys, "pools", str(tracker))["units"]}
    # H1: each counter read as printed, A - D - M - R
    assert got == {"Caliph's Horses": ("Party", 3, "+", 2, 4, 1), "Church Knights": ("Party", 4, "++", 4, 3, 1),
                   "First Archer Company": ("Party", 4, "", 3, 1, 2), "1st Fist": ("Enemy", 4, "", 4, 1, 2),
                   "Drow Infantry": ("Enemy", 4, "", 3, 1, 2)}


def test_h1_h2_hex_csv_into_a_battle_file_needs_the_map(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    units = tmp_path / "units.csv"
    ok(monkeypatch, capsys, "template", "--csv", str(units), "--system", "hexwar")
    _fill(units, UNITS)
    out_file = tmp_path / "pass.yaml"
    code, _out, err = run_main(monkeypatch, capsys, "import", str(units), "--into", str(out_file), "--system", "hexwar")
    assert code == 1 and "--map: a hex battle file needs its map's size (H2)" in err and not out_file.exists()
    ok(monkeypatch, capsys, "import", str(units), "--into", str(out_file), "--system", "hexwar", "--map", "12x10")
    data = _json(monkeypatch, capsys, "pools", str(out_file))
    assert [u["name"] for u in data["units"]] == [u["Unit"] for u in UNITS]
    assert ok(monkeypatch, capsys, "check", str(out_file))  # the file loads as a hex battle


HEX_BAD = """Unit,Side,Counter,Start hex,Size,Men
A,Party,3+ - 2 - x,0304,,
B,Party,4 - 4 - 1 - 1,9999,huge,0
,Enemy,4 - 4 - 1 - 1,0101,,
"""


def test_h1_h2_bad_unit_cells_are_all_reported_at_their_csv_address(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "units.csv"
    bad.write_text(HEX_BAD, encoding="utf-8")
    tracker = _hex_tracker(tmp_path, monkeypatch, capsys)
    held = tracker.read_bytes()
    code, out, err = run_main(monkeypatch, capsys, "import", str(bad), "--into", str(tracker))
    assert code == 1 and "Traceback" not in out + err
    problems = _problems(err)
    assert problems[0].startswith("units.csv:C2: '3+ - 2 - x' is not a counter")
    assert problems[1:] == [
        "units.csv:E3: Size should be one of battalion, squadron, company, not 'huge'",
        "units.csv:F3: Men should be a whole number from 1 to 100000, not 0",
        "units.csv:A4: Unit: every unit needs one (H1)",
        "units.csv:D3: '9999' is not a hex on this 12x10 map (H2)",  # the loader's, on the tracker's map
    ]
    assert tracker.read_bytes() == held


def test_a_hex_tracker_holding_units_is_refused_unless_replace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    units = tmp_path / "units.csv"
    ok(monkeypatch, capsys, "template", "--csv", str(units), "--system", "hexwar")
    _fill(units, UNITS)
    tracker = _hex_tracker(tmp_path, monkeypatch, capsys)
    ok(monkeypatch, capsys, "import", str(units), "--into", str(tracker))
    held = tracker.read_bytes()
    code, _out, err = run_main(monkeypatch, capsys, "import", str(units), "--into", str(tracker))
    assert code == 1 and "the Units sheet already holds 5 units (from Units!A3)" in err
    assert tracker.read_bytes() == held
    fewer = tmp_path / "fewer.csv"
    fewer.write_text("Unit,Side,Counter,Start hex\nA,Party,3 - 3 - 1 - 1,0101\nB,Enemy,3 - 3 - 1 - 1,0909\n",
                     encoding="utf-8")
    ok(monkeypatch, capsys, "import", str(fewer), "--into", str(tracker), "--replace")
    sheet = openpyxl.load_workbook(tracker)["Units"]
    assert [sheet[f"A{r}"].value for r in range(3, 6)] == ["A", "B", None]  # the three old rows below: cleared


def test_x3_an_exalted_battle_file_needs_a_characters_and_a_units_csv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    chars = tmp_path / "chars.csv"
    chars.write_text("Character,Role,Cha\nTepet Arada,commander,3\n", encoding="utf-8")
    code, _out, err = run_main(monkeypatch, capsys, "import", str(chars), "--into", str(tmp_path / "x.yaml"),
                               "--system", "exalted")
    assert code == 1 and "an Exalted battle needs its characters and its units" in err and "no units CSV" in err
    assert not (tmp_path / "x.yaml").exists()
    units = tmp_path / "units.csv"
    units.write_text("unit,SIDE,commander,extras,drill\nFang,Realm,Tepet Arada,20,2\n",  # R12 headers
                     encoding="utf-8")
    ok(monkeypatch, capsys, "import", str(chars), str(units), "--into", str(tmp_path / "x.yaml"), "--system",
       "exalted")
    data = _json(monkeypatch, capsys, "pools", str(tmp_path / "x.yaml"))
    assert [u["name"] for u in data["units"]] == ["Fang"]
    code, _out, err = run_main(monkeypatch, capsys, "import", str(DATA / "lanterns.csv"), str(units), "--into",
                               str(tmp_path / "y.yaml"))
    assert code == 1 and "a bbn import reads one CSV file" in err and not (tmp_path / "y.yaml").exists()


def _many_units(path: Path, count: int) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Unit", "Side", "Counter", "Start hex"])
        for i in range(count):
            writer.writerow([f"U{i}", "A" if i % 2 else "B", "3 - 3 - 1 - 1", f"{i % 12 + 1:02d}{i // 12 + 1:02d}"])
    return path


def test_h1_more_units_than_a_blank_tracker_holds_all_reach_the_battle_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    many = _many_units(tmp_path / "many.csv", 45)  # a blank hex tracker holds 40
    out_file = tmp_path / "many.yaml"
    ok(monkeypatch, capsys, "import", str(many), "--into", str(out_file), "--system", "hexwar", "--map", "12x10")
    assert [u["name"] for u in _json(monkeypatch, capsys, "pools", str(out_file))["units"]] == [
        f"U{i}" for i in range(45)]


def test_issue_9_more_units_than_the_hex_tracker_holds_is_refused_naming_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    many = _many_units(tmp_path / "many.csv", 45)
    tracker = _hex_tracker(tmp_path, monkeypatch, capsys)
    held = tracker.read_bytes()
    code, _out, err = run_main(monkeypatch, capsys, "import", str(many), "--into", str(tracker))
    assert code == 1 and "many.csv: holds 45 units, and hex.xlsx holds at most 40 units; nothing was written" in err
    assert tracker.read_bytes() == held


def test_r12_csv_headers_are_compared_as_the_battalion_catalog_compares_trait_names() -> None:
    """The generic CSV reading (sheets/csv_rows.py) matches headers by the same comparison
    as the battalion catalog's, which it may not import."""
    from sheetsync.sheets.csv_rows import normalize as header_key
    from sheetsync.systems.bbn.rules.catalog import normalize as trait_key

    for name in ("Willpower Spent", "willpower_spent", "Thaumaturgy: Path of Blood", "O'Neill (Jr.)", "  Dex-Tri  "):
        assert header_key(name) == trait_key(name)
