"""``sheetsync import chars.gex --into battle.xlsx``: characters from Grapevine into an
existing battalion tracker (Cohort Sheet 1.1-1.7, R1-R12), its input cells only, with
``--replace`` to replace what it holds; Grapevine's binary .gv3 refused with how to export XML.
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

from sheetsync.app.cli import main
from sheetsync.app.workbook_cli import new_workbook, run_workbook, write_template
from sheetsync.sheets.disk import example_path

GEX = Path(__file__).parent / "data" / "grapevine" / "lanterns.gex"

LANTERNS_BY_HAND = {"health": 29, "melee": 18, "ranged": 3, "mystical": 5, "defense": 33, "temper": 110,
                    "movement": 1, "resolve": 6, "control": 1}
"""The five vampires of the coterie Lanterns in lanterns.gex, worked out by hand term by
term in test_import_grapevine.py (Cohort Sheet 1.1-1.7: e.g. Health 5 x 5 + Rugged 1 +
Huge Size 1 + Fortitude 2 = 29; Temper 40 + 30 (35 capped, R8) + 12 + 10 + 11 + Celerity
3 + 1 + Path of Blood 3 = 110)."""


def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sheetsync", *args])
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _values(path: Path) -> dict[str, list[list[Any]]]:
    wb = openpyxl.load_workbook(path)
    return {ws.title: [[c.value for c in row] for row in ws.iter_rows()] for ws in wb.worksheets}


def _rows(path: Path, sheet: str, first: int = 3) -> list[dict[str, Any]]:
    ws = openpyxl.load_workbook(path)[sheet]
    header = [c.value for c in ws[first - 1]]
    out = []
    for row in ws.iter_rows(min_row=first, values_only=True):
        if any(v not in (None, "") for v in row):
            out.append({h: v for h, v in zip(header, row, strict=False) if h is not None and v not in (None, "")})
    return out


def _pools(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    code, out, err = run_main(monkeypatch, capsys, "pools", str(path), "--json")
    assert code == 0, err
    return {c["name"]: c["pools"] for c in json.loads(out)["cohorts"]}


@pytest.fixture()
def blank(tmp_path: Path) -> Path:
    return write_template(tmp_path / "battle.xlsx")


def test_cohort_sheet_1_1_to_1_7_gex_into_a_tracker_gives_the_pools_worked_by_hand(
        blank: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    before = _values(blank)
    code, out, err = run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(blank))
    assert code == 0, err
    assert "Lanterns" in out and "Marguerite, Tobias, Ines" in out and "5 characters in 1 cohort" in out
    assert "Candle Reading (Hedge Magic, line 100" in err  # the unmapped-traits note (R12)

    chars = _rows(blank, "Characters")
    assert [(r["Cohort"], r["Character"]) for r in chars] == [
        ("Lanterns", n) for n in ("Marguerite", "Tobias", "Ines", "Caspar", "Delphine")]
    marguerite, tobias = chars[0], chars[1]
    assert (marguerite["Temper"], marguerite["Blood Magic In-Clan"], marguerite["Auspex"]) == (40, "Yes", 2)  # R8, R4
    assert marguerite["Offensive Paths"] == "Path of Blood 3; Lure of Flames 2"  # R6
    assert (tobias["Brawl"], tobias["Celerity"], tobias["Natural Leader"]) == (4, 3, "Yes")  # R2, R4, R3
    assert [(r["Cohort"], r["Side"]) for r in _rows(blank, "Cohorts")[:1]] == [("Lanterns", "Camarilla")]

    after = _values(blank)
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"Characters", "Cohorts"}  # input cells only: no build, no log, no state
    assert blank.with_name("battle.xlsx.bak").exists()  # saved like every step
    assert _pools(monkeypatch, capsys, blank) == {"Lanterns": LANTERNS_BY_HAND}


def test_import_refuses_a_tracker_that_holds_characters_and_writes_nothing(
        blank: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(blank))[0] == 0
    held = blank.read_bytes()
    code, out, err = run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(blank))
    assert code == 1
    assert "the Characters sheet already holds 5 characters (from Characters!B3); nothing was written" in err
    assert "--replace" in err and "Traceback" not in err + out
    assert blank.read_bytes() == held


def test_replace_puts_the_import_in_place_of_every_character_and_cohort_row(
        blank: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(blank))[0] == 0
    code, _out, err = run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(blank), "--replace",
                               "--only", "Tobias,Ines", "--only", "Caspar", "--cohort-by", "sect")
    assert code == 0, err
    assert [(r["Cohort"], r["Character"]) for r in _rows(blank, "Characters")] == [
        ("Camarilla", "Tobias"), ("Camarilla", "Ines"), ("Camarilla", "Caspar")]  # the two old rows below: cleared
    cohorts = openpyxl.load_workbook(blank)["Cohorts"]
    assert (cohorts["A3"].value, cohorts["A4"].value, cohorts["B3"].value) == ("Camarilla", None, "Camarilla")
    assert set(_pools(monkeypatch, capsys, blank)) == {"Camarilla"}


def test_a_cohort_typed_on_the_cohorts_sheet_keeps_its_row(
        blank: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    wb = openpyxl.load_workbook(blank)
    ws = wb["Cohorts"]
    ws["A3"], ws["B3"], ws["D3"] = "lanterns", "Sabbat", "Tobias"  # the cohort's name in another case
    wb.save(blank)
    code, _out, err = run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(blank))
    assert code == 0, err
    row = _rows(blank, "Cohorts")[0]
    assert (row["Cohort"], row["Side"], row["Sergeant"]) == ("lanterns", "Sabbat", "Tobias")
    assert _pools(monkeypatch, capsys, blank) == {"lanterns": LANTERNS_BY_HAND}


def test_issue_9_an_import_past_the_trackers_room_is_refused_naming_the_limit(
        blank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["Cohort,Character,Brawl"] + [f"Band {i // 5},M{i},1" for i in range(125)]  # 25 cohorts of 5
    big = tmp_path / "big.csv"
    big.write_text("\n".join(lines) + "\n", encoding="utf-8")
    held = blank.read_bytes()
    code, _out, err = run_main(monkeypatch, capsys, "import", str(big), "--into", str(blank))
    assert code == 1
    assert "big.csv: holds 125 characters, and battle.xlsx holds at most 120 characters" in err
    assert "big.csv: holds 25 cohorts, and battle.xlsx holds at most 24 cohorts" in err
    assert blank.read_bytes() == held


def test_a_tracker_with_a_phase_resolved_keeps_its_characters(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "battle.xlsx"
    new_workbook(path, example_path())
    run_workbook("resolve", path)
    held = path.read_bytes()
    code, _out, err = run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(path), "--replace")
    assert code == 1
    assert "a phase of this battle is resolved already" in err and "nothing was written" in err
    assert path.read_bytes() == held


def test_grapevine_binary_gv3_is_refused_with_how_to_export_xml(
        blank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    gv3 = tmp_path / "chronicle.gv3"
    gv3.write_bytes(b"GVBF\x03\x00\x00binary game")
    held = blank.read_bytes()
    code, out, err = run_main(monkeypatch, capsys, "import", str(gv3), "--into", str(blank))
    assert code == 1
    assert err.startswith("error: chronicle.gv3: is in Grapevine's older binary format (.gv3)")
    assert 'File > Export, pick "Grapevine exchange format" (XML)' in err
    assert "Traceback" not in out + err
    assert blank.read_bytes() == held


def test_a_grapevine_file_into_a_hex_tracker_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    hexes = tmp_path / "hex.xlsx"
    assert run_main(monkeypatch, capsys, "template", str(hexes), "--system", "hexwar")[0] == 0
    held = hexes.read_bytes()
    code, _out, err = run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(hexes))
    assert code == 1
    assert "hex.xlsx: is a hex wargame tracker; a Grapevine file holds battalion characters" in err.replace("\n", " ")
    assert hexes.read_bytes() == held


def test_a_workbook_that_does_not_exist_says_how_to_make_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(tmp_path / "none.xlsx"))
    assert code == 1
    assert "none.xlsx: no such workbook; make a blank tracker first (sheetsync template" in err
    assert not (tmp_path / "none.xlsx").exists()


def test_gex_into_a_battle_file_writes_it_and_refuses_to_overwrite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "lanterns.yaml"
    assert run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(out_file))[0] == 0
    assert _pools(monkeypatch, capsys, out_file) == {"Lanterns": LANTERNS_BY_HAND}
    held = out_file.read_bytes()
    code, _out, err = run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(out_file))
    assert code == 1 and "already exists" in err and out_file.read_bytes() == held
    assert run_main(monkeypatch, capsys, "import", str(GEX), "--into", str(out_file), "--force")[0] == 0
    assert out_file.with_name("lanterns.yaml.bak").read_bytes() == held


def test_no_traceback_reaches_the_user_from_a_real_process(blank: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.gex"
    shutil.copy(Path(__file__).parent / "data" / "grapevine" / "broken.gex", broken)
    for args in (["import", str(broken), "--into", str(blank)],
                 ["import", str(tmp_path / "x.gv3"), "--into", str(blank)],
                 ["import", str(GEX), "--into", str(tmp_path / "x.ods")]):
        res = subprocess.run([sys.executable, "-m", "sheetsync", *args], capture_output=True, text=True, timeout=120)
        assert res.returncode == 1, res.stderr
        assert res.stderr.startswith("error: ") and "Traceback" not in res.stderr + res.stdout
