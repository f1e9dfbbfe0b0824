"""Issue 22, part 2: imports (several Grapevine files into one tracker, adding without
``--replace``, cohorts picked by coterie, sect or clan, a CSV of another system, a file with
no coteries), ``sheetsync map`` on a tracker, and the hex report's unit sizes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import openpyxl
import pytest

from sheetsync.app.cli import main
from sheetsync.app.workbook_cli import write_template
from sheetsync.core.errors import InputError
from sheetsync.importers import import_gex
from sheetsync.systems.bbn.files.loader import load_battle

DATA = Path(__file__).parent / "data"
LANTERNS = DATA / "grapevine" / "lanterns.gex"
"""The players' file: the five vampires of the coterie Lanterns (Camarilla)."""


def run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["sheetsync", *args])
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _gex(path: Path, characters: list[dict[str, str]]) -> Path:
    """A Grapevine exchange file of ``characters`` (their attributes), each with Brawl 2
    and Fortitude 1 so that every cohort has pools to work out."""
    parts = ['<?xml version="1.0"?>', '<grapevine version="3">']
    for attrs in characters:
        typed = " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
        parts += [f"  <vampire {typed}>",
                  '    <traitlist name="Abilities"><trait name="Brawl" val="2"/></traitlist>',
                  '    <traitlist name="Disciplines"><trait name="Fortitude: Endurance" val="3"/></traitlist>',
                  "  </vampire>"]
    parts.append("</grapevine>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path


NIGHT_WATCH = [{"name": n, "clan": "Lasombra", "sect": "Sabbat", "coterie": "Night Watch", "blood": "10",
                "willpower": "4"} for n in ("Ravel", "Sidonie", "Matthias")]
"""The Storyteller's file: a pack of three Sabbat."""

CLANS = ("Tremere", "Gangrel", "Brujah", "Nosferatu", "Toreador")


def _court(count: int = 50) -> list[dict[str, str]]:
    """An NPC file with no coteries: ``count`` vampires, clans in turn, every third Sabbat."""
    return [{"name": f"Npc {i:02d}", "clan": CLANS[i % len(CLANS)], "sect": "Sabbat" if i % 3 == 0 else "Camarilla",
             "blood": "10", "willpower": "3"} for i in range(count)]


def _rows(path: Path, sheet: str) -> list[tuple[Any, ...]]:
    """The rows of ``sheet``'s first table, from row 3 to the first blank row."""
    ws = openpyxl.load_workbook(path)[sheet]
    out = []
    for row in ws.iter_rows(min_row=3, values_only=True):
        if all(v in (None, "") for v in row):
            break
        out.append(row)
    return out


@pytest.fixture(scope="module")
def _blank_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_template(tmp_path_factory.mktemp("blank") / "battle.xlsx")


@pytest.fixture(scope="module")
def _lanterns_once(tmp_path_factory: pytest.TempPathFactory, _blank_once: Path) -> Path:
    """A blank tracker with the players' file imported (the coterie Lanterns)."""
    from sheetsync.importers.into import import_into

    path = tmp_path_factory.mktemp("lanterns") / "battle.xlsx"
    shutil.copyfile(_blank_once, path)
    import_into(LANTERNS, path)
    return path


@pytest.fixture()
def blank(tmp_path: Path, _blank_once: Path) -> Path:
    """A blank battalion tracker of this test's own."""
    return Path(shutil.copyfile(_blank_once, tmp_path / "battle.xlsx"))


@pytest.fixture()
def lanterns(tmp_path: Path, _lanterns_once: Path) -> Path:
    """A battalion tracker holding the five Lanterns, with its .bak, of this test's own."""
    shutil.copyfile(_lanterns_once.with_name("battle.xlsx.bak"), tmp_path / "battle.xlsx.bak")
    return Path(shutil.copyfile(_lanterns_once, tmp_path / "battle.xlsx"))


# -- several Grapevine files into one tracker ------------------------------------------------

def test_issue22_two_grapevine_files_into_one_tracker(
        blank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    npcs = _gex(tmp_path / "npcs.gex", NIGHT_WATCH)
    code, out, err = run_main(monkeypatch, capsys, "import", str(LANTERNS), str(npcs), "--into", str(blank))
    assert code == 0, err
    assert "8 characters in 2 cohorts written" in " ".join(out.split())
    assert [(r[0], r[1]) for r in _rows(blank, "Characters")] == [
        *(("Lanterns", n) for n in ("Marguerite", "Tobias", "Ines", "Caspar", "Delphine")),
        *(("Night Watch", c["name"]) for c in NIGHT_WATCH)]
    assert [(r[0], r[1]) for r in _rows(blank, "Cohorts")] == [("Lanterns", "Camarilla"), ("Night Watch", "Sabbat")]


def test_issue22_two_grapevine_files_into_one_battle_file(tmp_path: Path) -> None:
    npcs = _gex(tmp_path / "npcs.gex", NIGHT_WATCH)
    result = import_gex([LANTERNS, npcs])
    battle = load_battle(result.battle)
    assert [(c.name, c.side, len(c.members)) for c in battle.cohorts] == [("Lanterns", "Camarilla", 5),
                                                                          ("Night Watch", "Sabbat", 3)]
    assert result.files == "lanterns.gex, npcs.gex"


def test_issue22_new_takes_from_twice_for_the_players_and_the_storytellers_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    npcs = _gex(tmp_path / "npcs.gex", NIGHT_WATCH)
    out_path = tmp_path / "both.yaml"
    code, out, err = run_main(monkeypatch, capsys, "new", str(out_path), "--from", str(LANTERNS), "--from", str(npcs))
    assert code == 0, err
    assert "2 cohorts from lanterns.gex, npcs.gex: Lanterns (5), Night Watch (3)" in " ".join(out.split())
    assert out_path.exists()


def test_issue22_one_name_in_two_grapevine_files_is_refused_naming_both_lines(tmp_path: Path) -> None:
    twin = _gex(tmp_path / "npcs.gex", [*NIGHT_WATCH, {"name": "Tobias", "clan": "Brujah", "coterie": "Night Watch"}])
    with pytest.raises(InputError) as err:
        import_gex([LANTERNS, twin])
    assert [str(p) for p in err.value.problems] == [
        "npcs.gex:15: Tobias is also at lanterns.gex:26: two characters of one name can't both fight; rename one in "
        "Grapevine, or leave one out with --only or --cohort"]


def test_issue22_adding_without_replace_keeps_the_trackers_characters(
        lanterns: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blank = lanterns
    before = _rows(blank, "Characters")
    npcs = _gex(tmp_path / "npcs.gex", NIGHT_WATCH)
    code, out, err = run_main(monkeypatch, capsys, "import", str(npcs), "--into", str(blank))
    assert code == 0, err
    assert "3 characters in 1 cohort added below the 5 already on the Characters sheet (from Characters!A8)" in (
        " ".join(out.split()))
    after = _rows(blank, "Characters")
    assert after[:5] == before  # every cell of the characters kept, as it was
    assert [(r[0], r[1]) for r in after[5:]] == [("Night Watch", c["name"]) for c in NIGHT_WATCH]
    assert [(r[0], r[1]) for r in _rows(blank, "Cohorts")] == [("Lanterns", "Camarilla"), ("Night Watch", "Sabbat")]
    code, out, err = run_main(monkeypatch, capsys, "pools", str(blank), "--json")
    assert code == 0, err
    assert '"Night Watch"' in out and '"Lanterns"' in out


def test_issue22_adding_refuses_a_name_clash_and_writes_nothing(
        lanterns: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blank = lanterns
    held, bak = blank.read_bytes(), blank.with_name("battle.xlsx.bak").read_bytes()
    clash = _gex(tmp_path / "npcs.gex", [*NIGHT_WATCH[:2], {"name": "tobias", "clan": "Lasombra", "sect": "Sabbat",
                                                            "coterie": "Night Watch"}])
    code, out, err = run_main(monkeypatch, capsys, "import", str(clash), "--into", str(blank))
    text = " ".join(err.split())
    assert code == 1 and "Traceback" not in err + out
    assert "the Characters sheet already holds 5 characters (from Characters!B3); nothing was written" in text
    assert "Characters!B4: tobias is on the sheet already and in npcs.gex" in text
    assert "--replace" in text
    assert blank.read_bytes() == held and blank.with_name("battle.xlsx.bak").read_bytes() == bak


def test_issue22_adding_refuses_more_members_for_a_cohort_on_the_sheet(
        lanterns: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blank = lanterns
    held = blank.read_bytes()
    more = _gex(tmp_path / "more.gex", [{**c, "coterie": "Lanterns"} for c in NIGHT_WATCH])
    code, _out, err = run_main(monkeypatch, capsys, "import", str(more), "--into", str(blank))
    text = " ".join(err.split())
    assert code == 1
    assert "Characters!A3: the cohort 'Lanterns' is on the sheet already, and more.gex would add 3 more members" in text
    assert blank.read_bytes() == held
    # picked under another name, the same characters are added
    code, out, err = run_main(monkeypatch, capsys, "import", str(more), "--into", str(blank),
                              "--cohort", "Lantern Bearers=coterie:Lanterns")
    assert code == 0, err
    assert [r[0] for r in _rows(blank, "Characters")][5:] == ["Lantern Bearers"] * 3


def test_issue22_csv_into_a_tracker_holding_characters_is_still_refused(
        lanterns: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blank = lanterns
    held = blank.read_bytes()
    code, _out, err = run_main(monkeypatch, capsys, "import", str(DATA / "csv" / "lanterns.csv"), "--into", str(blank))
    assert code == 1 and "already holds 5 characters" in err and "--replace" in err
    assert blank.read_bytes() == held


# -- cohorts picked by coterie, sect or clan -------------------------------------------------

def test_issue22_cohort_picked_by_clan_without_listing_names(tmp_path: Path) -> None:
    court = _gex(tmp_path / "court.gex", _court(20))
    result = import_gex(court, cohorts=["Warlocks=clan:Tremere", "clan:gangrel"])
    cohorts = {c["name"]: [m["name"] for m in c["members"]] for c in result.battle["cohorts"]}
    assert cohorts == {"Warlocks": ["Npc 00", "Npc 05", "Npc 10", "Npc 15"],
                       "gangrel": ["Npc 01", "Npc 06", "Npc 11", "Npc 16"]}
    assert "12 other vampires in court.gex not picked by --cohort, so not imported" in result.notes


def test_issue22_cohort_picked_by_sect_and_by_coterie(tmp_path: Path) -> None:
    npcs = _gex(tmp_path / "npcs.gex", [*NIGHT_WATCH, *_court(8)])
    result = import_gex(npcs, cohorts=["Pack=coterie:Night Watch", "Court=sect:camarilla"])
    cohorts = {c["name"]: (c["side"], [m["name"] for m in c["members"]]) for c in result.battle["cohorts"]}
    assert cohorts == {"Pack": ("Sabbat", ["Ravel", "Sidonie", "Matthias"]),
                       "Court": ("Camarilla", ["Npc 01", "Npc 02", "Npc 04", "Npc 05", "Npc 07"])}


def test_issue22_cohort_picks_that_overlap_or_miss_are_refused_all_at_once(tmp_path: Path) -> None:
    npcs = _gex(tmp_path / "npcs.gex", [*NIGHT_WATCH, *_court(8)])
    with pytest.raises(InputError) as err:
        import_gex(npcs, cohorts=["Pack=coterie:Night Watch", "All=sect:Sabbat", "Mages=clan:Tremer",
                                  "Few=Ravel,Nobody"])
    problems = [str(p) for p in err.value.problems]
    assert "--cohort: Ravel is picked by 'Pack=coterie:Night Watch' and by 'All=sect:Sabbat': a character fights " \
           "in one cohort" in problems
    assert any(p.startswith("--cohort: 'Mages=clan:Tremer': no vampire has clan 'Tremer' (did you mean 'Tremere'?)")
               for p in problems)
    assert "--cohort: 'Few=Ravel,Nobody': 'Nobody' is not a vampire in npcs.gex" in problems


def test_issue22_cohort_pick_without_a_name_or_members_is_refused() -> None:
    with pytest.raises(InputError) as err:
        import_gex(LANTERNS, cohorts=["Lanterns"])
    assert "is not a cohort pick: write NAME=coterie:VALUE" in str(err.value)


def test_issue22_cohort_option_on_the_command_line_into_a_battle_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    court = _gex(tmp_path / "court.gex", _court(50))
    out_path = tmp_path / "picked.yaml"
    code, out, err = run_main(monkeypatch, capsys, "import", str(court), "--into", str(out_path),
                              "--cohort", "Warlocks=clan:Tremere", "--cohort", "Beasts=Npc 01,Npc 06,Npc 11")
    assert code == 1  # 10 Tremere: R1 says 3 to 5, and the message counts rather than lists them all
    text = " ".join(err.split())
    assert "cohort 'Warlocks' has 10 characters, and a cohort has 3 to 5 (R1)" in text and "and 2 more" in text
    assert not out_path.exists()
    small = _gex(tmp_path / "small.gex", _court(20))
    code, out, err = run_main(monkeypatch, capsys, "import", str(small), "--into", str(out_path),
                              "--cohort", "Warlocks=clan:Tremere", "--cohort", "Beasts=Npc 01,Npc 06,Npc 11")
    assert code == 0, err
    battle = load_battle(__import__("yaml").safe_load(out_path.read_text(encoding="utf-8")))
    assert [(c.name, len(c.members)) for c in battle.cohorts] == [("Warlocks", 4), ("Beasts", 3)]


def test_issue22_cohort_option_is_in_the_help(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run_main(monkeypatch, capsys, "import", "--help")
    assert code == 0
    text = " ".join(out.replace("│", " ").split())
    assert "--cohort" in text and "clan:Tremere" in text


# -- a Grapevine file with no coteries -------------------------------------------------------

def test_issue22_no_coteries_gives_a_count_and_a_hint_not_every_name(tmp_path: Path) -> None:
    court = _gex(tmp_path / "court.gex", _court(50))
    with pytest.raises(InputError) as err:
        import_gex(court)
    (problem,) = [str(p) for p in err.value.problems]
    assert problem.startswith("court.gex: has 50 vampires and no coteries: pick the cohorts with --cohort NAME=")
    assert "--cohort-by sect" in problem
    assert "Npc" not in problem  # a count, not a wall of 50 names


def test_issue22_no_coteries_on_the_command_line(
        blank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    court = _gex(tmp_path / "court.gex", _court(50))
    held = blank.read_bytes()
    code, out, err = run_main(monkeypatch, capsys, "import", str(court), "--into", str(blank))
    assert code == 1 and "Traceback" not in out + err
    assert "has 50 vampires and no coteries" in " ".join(err.split())
    assert len(err.splitlines()) <= 6
    assert blank.read_bytes() == held


# -- a CSV whose headers belong to another system ----------------------------------------------

HEX_CSV = "Unit,Side,Counter,Start hex,Size,Men\n1st Foot,Red,4-4-4,0101,battalion,500\n"


def test_issue22_a_hexwar_csv_into_a_battle_file_says_add_system_hexwar(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    units = tmp_path / "units.csv"
    units.write_text(HEX_CSV, encoding="utf-8")
    code, out, err = run_main(monkeypatch, capsys, "import", str(units), "--into", str(tmp_path / "b.yaml"))
    assert code == 1 and "Traceback" not in out + err
    assert " ".join(err.split()) == "error: units.csv:1: these columns are a hexwar units CSV: add --system hexwar"
    assert not (tmp_path / "b.yaml").exists()


def test_issue22_a_battalion_csv_with_another_system_says_which(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    chars = DATA / "csv" / "lanterns.csv"
    code, _out, err = run_main(monkeypatch, capsys, "import", str(chars), "--into", str(tmp_path / "b.yaml"),
                               "--system", "exalted")
    assert code == 1
    assert "lanterns.csv:1: these columns are a bbn characters CSV: use --system bbn" in " ".join(err.split())


def test_issue22_an_exalted_units_csv_into_a_battalion_tracker_names_its_system(
        blank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from sheetsync.importers.csv_import import csv_headers

    units = tmp_path / "units.csv"
    units.write_text(",".join(csv_headers("exalted", "units")) + "\nThe Guard,Realm,Talon\n", encoding="utf-8")
    held = blank.read_bytes()
    code, _out, err = run_main(monkeypatch, capsys, "import", str(units), "--into", str(blank))
    assert code == 1
    text = " ".join(err.split())
    assert ("units.csv:1: these columns are an exalted units CSV: battle.xlsx is a battalion combat tracker, so "
            "import it into an exalted 2e mass combat tracker") in text
    assert "--system exalted" in text
    assert blank.read_bytes() == held


def test_issue22_a_csv_of_its_own_system_with_a_bad_header_is_not_called_another_system(tmp_path: Path) -> None:
    from sheetsync.importers.csv_import import other_system, read_csv

    units = tmp_path / "units.csv"
    units.write_text(HEX_CSV.replace("Counter", "Countr"), encoding="utf-8")
    assert other_system(read_csv(units), "hexwar") is None
    assert other_system(read_csv(units), "bbn") == ("hexwar", None)
    assert other_system(read_csv(DATA / "csv" / "lanterns.csv"), "bbn") is None


# -- map --png on a tracker --------------------------------------------------------------------

@pytest.fixture(scope="module")
def hex_tracker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hex tracker made from the hex example battle (H1, H2), built and ready for turn 1."""
    from sheetsync.systems.hexwar.rules import example_battle_data

    folder = tmp_path_factory.mktemp("hex")
    battle_file = folder / "hex.yaml"
    battle_file.write_text(example_battle_data(), encoding="utf-8")
    tracker = folder / "hex.xlsx"
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(sys, "argv", ["sheetsync", "new", str(tracker), "--from", str(battle_file)])
    with pytest.raises(SystemExit) as info:
        main()
    monkeypatch.undo()
    assert info.value.code in (0, None)
    return tracker


def test_issue22_map_png_takes_a_hex_tracker_workbook(
        hex_tracker: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml
    from PIL import Image

    from sheetsync.systems.hexwar.files.loader import load_battle as load_hex
    from sheetsync.systems.hexwar.picture import render_map
    from sheetsync.systems.hexwar.rules import example_battle_data

    held = hex_tracker.read_bytes()
    png = tmp_path / "map.png"
    code, out, err = run_main(monkeypatch, capsys, "map", str(hex_tracker), "--png", str(png), "--hex-size", "30")
    assert code == 0, err
    assert " ".join(out.split()) == f"Map of turn 1 written to {png} (12x10 hexes, 10 units on the map)."
    with Image.open(png) as image:
        image.load()
        assert image.format == "PNG"
        from_file = load_hex(yaml.safe_load(example_battle_data()), "example")
        assert image.tobytes() == render_map(from_file, hex_size=30).tobytes()  # the battle the tracker holds
    assert hex_tracker.read_bytes() == held  # only read


def test_issue22_map_png_refuses_a_battalion_tracker_and_writes_nothing(
        blank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "map.png"
    held = blank.read_bytes()
    code, out, err = run_main(monkeypatch, capsys, "map", str(blank), "--png", str(png))
    assert code == 1 and out == "" and "Traceback" not in err
    assert " ".join(err.split()) == (f"error: {blank}: this is a battalion combat tracker, and sheetsync map draws hex "
                                     "wargame battles only (a hex tracker, or a battle file with system: hexwar); "
                                     "nothing was written")
    assert not png.exists() and blank.read_bytes() == held


def test_issue22_map_png_of_a_hex_tracker_not_built_yet_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    tracker = tmp_path / "blank_hex.xlsx"
    assert run_main(monkeypatch, capsys, "template", str(tracker), "--system", "hexwar")[0] == 0
    png = tmp_path / "map.png"
    code, _out, err = run_main(monkeypatch, capsys, "map", str(tracker), "--png", str(png))
    assert code == 1
    assert f"{tracker}: this tracker has no units yet" in " ".join(err.split())
    assert not png.exists()


# -- the hex report's unit sizes ---------------------------------------------------------------

def _hex_sized(tmp_path: Path) -> Path:
    """The hex example with Caliph's Horses typed a squadron, the Human Footmen a company of
    a 600-man battalion and the Human Irregular Footmen two battalions (H1)."""
    import yaml

    from sheetsync.systems.hexwar.rules import example_battle_data

    data = yaml.safe_load(example_battle_data())
    for u in data["units"]:
        if u["name"] == "Caliph's Horses":
            u["size"] = "Squadron"
        elif u["name"] == "Human Footmen":
            u["size"], u["men"] = "company", 600
        elif u["name"] == "Human Irregular Footmen":
            u["size"] = 2
    first = tmp_path / "sized.yaml"
    first.write_text(yaml.safe_dump(data), encoding="utf-8")
    return first


def test_issue22_h1_hex_report_states_each_units_size_as_typed(tmp_path: Path) -> None:
    from sheetsync.app.report import build_account

    acc = build_account(str(_hex_sized(tmp_path)))
    said = {g.name: g.members[0].split(", counter")[0] for g in acc.groups}
    assert said["Caliph's Horses"] == "a squadron of 500 men"
    assert said["Church Knights"] == "a battalion of 500 men"
    assert said["Human Footmen"] == "a company of 300 men"  # half of a 600-man battalion
    assert said["First Archer Company"] == "a company of 250 men"
    assert said["Human Irregular Footmen"] == "2 battalions of 1000 men"
    assert said["1st Fist"] == "a battalion of 670 men"


def test_issue22_h12_hex_report_men_are_the_men_aftermath_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from sheetsync.app.report import build_account

    first = _hex_sized(tmp_path)
    after = tmp_path / "after.yaml"
    assert run_main(monkeypatch, capsys, "resolve", str(first), "--out", str(after))[0] == 0
    acc = build_account(str(after))
    code, out, err = run_main(monkeypatch, capsys, "aftermath", str(after), "--json")
    assert code == 0, err
    sides = {s["side"]: s["men"] for s in json.loads(out)["sides"]}
    told: dict[str, int] = {}
    for g in acc.groups:
        men = int(g.members[0].split(" men")[0].split(" of ")[-1])
        told[g.side] = told.get(g.side, 0) + men
    assert told == sides
    assert {g.name for g in acc.groups if g.members[0].startswith("a squadron")} == {"Caliph's Horses"}


def test_issue22_h1_hex_report_of_a_tracker_says_the_size_typed_on_its_units_sheet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from sheetsync.app.report import build_account

    tracker = tmp_path / "sized.xlsx"
    assert run_main(monkeypatch, capsys, "new", str(tracker), "--from", str(_hex_sized(tmp_path)))[0] == 0
    wb = openpyxl.load_workbook(tracker)
    ws = wb["Units"]
    header = [c.value for c in ws[2]]
    name_col, size_col = header.index("Unit") + 1, header.index("Size") + 1
    sizes = {ws.cell(r, name_col).value: ws.cell(r, size_col).value for r in range(3, 13)}
    assert (sizes["Caliph's Horses"], sizes["Human Footmen"]) == ("squadron", "company")  # the file's words
    for row in range(3, 13):
        if ws.cell(row, name_col).value == "Church Knights":
            ws.cell(row, size_col).value = "squadron"  # as the Storyteller picks it in the dropdown
    wb.save(tracker)
    code, _out, err = run_main(monkeypatch, capsys, "build", str(tracker))
    assert code == 0, err
    said = {g.name: g.members[0].split(", counter")[0] for g in build_account(str(tracker)).groups}
    assert said["Caliph's Horses"] == "a squadron of 500 men"
    assert said["Church Knights"] == "a squadron of 500 men"
    assert said["Human Footmen"] == "a company of 300 men"
    assert said["Sun Knights"] == "a battalion of 500 men"


def test_issue22_h1_a_typed_squadron_survives_resolve_out_and_reads_back_as_size_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from sheetsync.systems.hexwar.files.loader import battle_to_file
    from sheetsync.systems.hexwar.files.loader import load_battle as load_hex

    first = _hex_sized(tmp_path)
    after = tmp_path / "after.yaml"
    assert run_main(monkeypatch, capsys, "resolve", str(first), "--out", str(after))[0] == 0
    written = yaml.safe_load(after.read_text(encoding="utf-8"))
    horses = next(u for u in written["units"] if u["name"] == "Caliph's Horses")
    assert horses["size"] == "squadron"
    battle = load_hex(written, "after.yaml")
    unit = battle.unit("Caliph's Horses")
    assert (unit.size, unit.size_name) == (1.0, "squadron")
    assert load_hex(battle_to_file(battle), "again") == battle  # the file round-trips exactly
    plain = load_hex(yaml.safe_load(first.read_text(encoding="utf-8")) | {"units": [
        {**u, "size": "battalion"} if u["name"] == "Caliph's Horses" else u
        for u in yaml.safe_load(first.read_text(encoding="utf-8"))["units"]]})
    assert plain.unit("Caliph's Horses").size_name is None  # the usual word adds nothing to the file
    assert "size" not in next(u for u in battle_to_file(plain)["units"] if u["name"] == "Caliph's Horses")


def test_issue22_new_picks_cohorts_by_clan_from_a_file_with_no_coteries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    court = _gex(tmp_path / "court.gex", _court(20))
    out_path = tmp_path / "court.yaml"
    code, out, err = run_main(monkeypatch, capsys, "new", str(out_path), "--from", str(court),
                              "--cohort", "Warlocks=clan:Tremere", "--cohort", "Court=sect:Sabbat")
    assert code == 1  # 7 Sabbat: R1, and nothing written
    assert "cohort 'Court' has 7 characters" in " ".join(err.split()) and not out_path.exists()
    code, out, err = run_main(monkeypatch, capsys, "new", str(out_path), "--from", str(court),
                              "--cohort", "Warlocks=clan:Tremere")
    assert code == 0, err
    assert "1 cohort from court.gex: Warlocks (4)" in " ".join(out.split())


def test_issue22_a_large_group_without_a_coterie_is_counted_not_listed_whole(tmp_path: Path) -> None:
    npcs = _gex(tmp_path / "npcs.gex", [*NIGHT_WATCH, *_court(30)])
    with pytest.raises(InputError) as err:
        import_gex(npcs)
    (problem,) = [str(p) for p in err.value.problems]
    assert problem.startswith("npcs.gex: coterie 'No coterie' has 30 characters, and a cohort has 3 to 5 (R1): "
                              "Npc 00 (line 15), ")
    assert "Npc 07 (line 43) and 22 more; pick 3 to 5 with --only or --cohort" in problem
    assert "Npc 08" not in problem


def test_issue22_cohort_picks_a_csv_does_not_take(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_main(monkeypatch, capsys, "import", str(DATA / "csv" / "lanterns.csv"), "--into",
                               str(tmp_path / "b.yaml"), "--cohort", "X=clan:Tremere")
    assert code == 1
    assert "--cohort: picks characters of a Grapevine file; a CSV is imported whole" in " ".join(err.split())


def test_issue22_grapevine_and_csv_in_one_import_are_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_main(monkeypatch, capsys, "import", str(LANTERNS), str(DATA / "csv" / "lanterns.csv"),
                               "--into", str(tmp_path / "b.yaml"))
    assert code == 1
    assert "lanterns.csv: Grapevine files and CSV files are imported apart" in " ".join(err.split())
