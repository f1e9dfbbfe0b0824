"""Grapevine exchange files (.gex) into battle files (Cohort Sheet 1.1-1.7, R1-R12).

The .gex files under tests/data/grapevine/ were written for these tests from the format's
description: a <vampire> per character with <traitlist>s of <trait name= val=/>.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sheetsync.core.errors import InputError
from sheetsync.importers import GrapevineMap, default_map, import_gex, load_map
from sheetsync.systems.bbn.files.loader import load_battle
from sheetsync.systems.bbn.rules import compute_pools
from sheetsync.systems.bbn.rules.models import CohortSpec

DATA = Path(__file__).parent / "data" / "grapevine"


def _member(result_battle: dict, name: str) -> dict:
    return next(m for c in result_battle["cohorts"] for m in c["members"] if m["name"] == name)


def _problems(err: pytest.ExceptionInfo[InputError]) -> list[str]:
    return [str(p) for p in err.value.problems]


# -- the mapping rules, one by one ---------------------------------------------------

def test_r2_ability_dots_are_val_or_one_when_val_is_absent() -> None:
    aurel = _member(import_gex(DATA / "rules.gex").battle, "Aurel")
    assert aurel["abilities"]["Brawl"] == 4          # val="4"
    assert aurel["abilities"]["Alertness"] == 1      # no val
    assert aurel["abilities"]["Dodge"] == 3          # val="2" and a second Dodge without val


def test_r4_discipline_level_is_the_number_of_powers_listed() -> None:
    battle = import_gex(DATA / "rules.gex").battle
    assert _member(battle, "Aurel")["disciplines"] == {"Fortitude": 2}  # Endurance, Mettle; val is the cost
    assert _member(battle, "Bruno")["disciplines"] == {"Fortitude": 1}  # one power listed twice


def test_r4_r6_thaumaturgy_path_level_is_the_number_of_its_powers() -> None:
    battle = import_gex(DATA / "rules.gex").battle
    aurel = _member(battle, "Aurel")
    assert aurel["blood_magic_paths"] == {"Path of Blood": 2, "Path of Technomancy": 1}
    assert "Thaumaturgy" not in aurel["disciplines"]
    assert _member(battle, "Cleo")["blood_magic_paths"] == {"Ash Path": 1}  # Necromancy is a path discipline too


def test_r3_merits_count_once_whatever_their_val() -> None:
    result = import_gex(DATA / "rules.gex")
    aurel = _member(result.battle, "Aurel")
    assert aurel["merits"] == ["Iron Will", "Huge Size"]   # Iron Will listed twice, Huge Size val="2-3"
    battle = load_battle(result.battle)
    resolve = battle.pools["Test Bench"].breakdown["resolve"]
    assert [(c.member, c.trait, c.amount) for c in resolve if c.kind == "merit"] == [("Aurel", "Iron Will", 1)]


def test_r8_blood_is_temper_offered_capped_by_blood_magic_in_clan() -> None:
    result = import_gex(DATA / "rules.gex")
    aurel, bruno, cleo = (_member(result.battle, n) for n in ("Aurel", "Bruno", "Cleo"))
    assert (aurel["temper"], aurel["blood_magic_in_clan"]) == (45, True)    # Tremere
    assert (bruno["temper"], bruno["blood_magic_in_clan"]) == (45, False)   # Brujah
    assert cleo["blood_magic_in_clan"] is True                              # Giovanni
    pools = load_battle(result.battle).pools["Test Bench"]
    given = {c.member: c.amount for c in pools.breakdown["temper"] if c.kind == "temper"}
    assert given == {"Aurel": 45, "Bruno": 30, "Cleo": 20}  # cap 50 in-clan, else 30


def test_r8_blood_magic_clans_come_from_the_map_and_a_chronicle_extends_them(tmp_path: Path) -> None:
    extra = tmp_path / "chronicle_map.json"
    extra.write_text(json.dumps({"blood_magic_clans": ["Brujah"]}), encoding="utf-8")
    gmap = load_map(extra)
    assert "Tremere" in gmap.blood_magic_clans
    bruno = _member(import_gex(DATA / "rules.gex", mapping=gmap).battle, "Bruno")
    assert bruno["blood_magic_in_clan"] is True
    assert _member(import_gex(DATA / "rules.gex").battle, "Bruno")["blood_magic_in_clan"] is False


def test_r9_willpower_is_available_and_spent_is_left_for_the_tracker() -> None:
    result = import_gex(DATA / "rules.gex")
    assert result.willpower_available == {"Aurel": 7, "Bruno": 4, "Cleo": 0}
    assert {m["willpower_spent"] for c in result.battle["cohorts"] for m in c["members"]} == {0}
    assert "Aurel: 7 willpower available; type what they spend in willpower_spent (R9)" in result.notes
    assert "Cleo: no willpower in the file, so none available (R9)" in result.notes


def test_r12_unmapped_traits_are_listed_by_character_with_their_line() -> None:
    result = import_gex(DATA / "lanterns.gex")
    listed = {who: [(u.trait, u.list_name, u.line) for u in items] for who, items in result.unmapped.items()}
    assert listed == {
        "Marguerite": [("Academics", "Abilities", 8)],
        "Tobias": [],
        "Ines": [("Animalism", "Disciplines", 53)],
        "Caspar": [("Stealth", "Abilities", 70), ("Animalism", "Disciplines", 74)],
        "Delphine": [("Candle Reading", "Hedge Magic", 100), ("Eat Food", "Merits", 97)],
    }
    note = next(n for n in result.notes if n.startswith("Caspar: not counted"))
    assert "Stealth (Abilities, line 70" in note and "Animalism (Disciplines, line 74" in note
    # lists the map ignores on purpose (Physical, Flaws) are not reported
    assert not any("Quick" in n or "Dark Fate" in n for n in result.notes)


def test_r12_a_path_that_feeds_no_pool_is_listed() -> None:
    aurel = import_gex(DATA / "rules.gex").unmapped["Aurel"]
    assert [(u.trait, u.line) for u in aurel] == [("Path of Technomancy", 15)]


# -- the hand-worked cohort -----------------------------------------------------------

def test_cohort_sheet_1_1_to_1_7_five_vampires_of_one_coterie_give_hand_worked_pools() -> None:
    """Five vampires of the coterie Lanterns, no ranged attack set, no willpower spent yet,
    default house rules (abilities pooled, R2)."""
    result = import_gex(DATA / "lanterns.gex")
    cohorts = result.battle["cohorts"]
    assert [(c["name"], c["side"], [m["name"] for m in c["members"]]) for c in cohorts] == [
        ("Lanterns", "Camarilla", ["Marguerite", "Tobias", "Ines", "Caspar", "Delphine"])]

    n = 5
    # Health, R7 + R3 + R4: 5 per member; Rugged (Ines) +1, Huge Size (Caspar) +1; Fortitude 2 (Ines).
    health = 5 * n + 1 + 1 + 2                              # 29
    # Melee, R7 + R2 + R4: 2 per member; Brawl 4+3+2 and Melee 2+3 = 14 dots -> +2;
    # Potence 2 (Tobias) + 1 (Caspar); Protean 3 (Ines, the only shape-changer).
    melee = 2 * n + 14 // 5 + (2 + 1) + 3                   # 18
    # Ranged, R7 + R2 + R4: nobody has ranged_attack yet -> base 0; Firearms 3 -> +0;
    # Auspex 2 (Marguerite) + 1 (Delphine).
    ranged = 0 + 3 // 5 + (2 + 1)                           # 3
    # Mystical, R6: Occult 3 -> +0; offensive paths Path of Blood 3 + Lure of Flames 2.
    mystical = 3 // 5 + 3 + 2                               # 5
    # Defense, R7 + R2 + R4: 5 per member; Dodge 2+3+1+2 and Survival 2 = 10 -> +2;
    # Celerity 3 (Tobias) + 1 (Delphine); Obfuscate 2 (Caspar).
    defense = 5 * n + 10 // 5 + (3 + 1) + 2                 # 33
    # Temper, R8: blood 40 (Tremere, cap 50) + 35 capped at 30 + 12 + 10 + 11;
    # Celerity 3 + 1; Path of Blood 3.
    temper = (40 + 30 + 12 + 10 + 11) + (3 + 1) + 3         # 110
    # Movement, R10: 1 + the slowest member's movement discipline (Marguerite has none).
    movement = 1 + 0                                        # 1
    # Resolve, R9 + R2 + R3 + R4: 0 willpower spent; Alertness 1 + Awareness 2 = 3 -> +0;
    # Iron Will (Marguerite) +1; Natural Leader / Enchanting Voice (Tobias) +1 together;
    # Presence 1 (Tobias) + 3 (Delphine).
    resolve = 0 // 3 + 3 // 5 + 1 + 1 + (1 + 3)             # 6
    # Control, R2: Tactics 5 (Caspar) -> +1.
    control = 5 // 5                                        # 1
    by_hand = {"health": health, "melee": melee, "ranged": ranged, "mystical": mystical, "defense": defense,
               "temper": temper, "movement": movement, "resolve": resolve, "control": control}
    assert by_hand == {"health": 29, "melee": 18, "ranged": 3, "mystical": 5, "defense": 33, "temper": 110,
                       "movement": 1, "resolve": 6, "control": 1}

    battle = load_battle(result.battle, "lanterns.gex")
    assert battle.pools["Lanterns"].pools == by_hand
    spec = CohortSpec.model_validate({**cohorts[0], "members": [
        {**m, "blood_magic_paths": {k: {"level": v} for k, v in m["blood_magic_paths"].items()}}
        for m in cohorts[0]["members"]]})
    assert compute_pools(spec).pools == by_hand


def test_the_battle_file_is_plain_data_that_round_trips_through_json() -> None:
    battle = import_gex(DATA / "lanterns.gex").battle
    again = json.loads(json.dumps(battle))
    assert load_battle(again).pools["Lanterns"].pools == load_battle(battle).pools["Lanterns"].pools


# -- selection and cohorts ---------------------------------------------------------------

def test_r1_only_selects_characters_and_cohort_by_groups_them() -> None:
    result = import_gex(DATA / "lanterns.gex", only=["marguerite", "Tobias", "Ines"])
    assert [[m["name"] for m in c["members"]] for c in result.battle["cohorts"]] == [["Marguerite", "Tobias", "Ines"]]
    by_sect = import_gex(DATA / "lanterns.gex", cohort_by="sect")
    assert [c["name"] for c in by_sect.battle["cohorts"]] == ["Camarilla"]


def test_r1_a_cohort_of_the_wrong_size_is_refused_naming_its_characters() -> None:
    with pytest.raises(InputError) as err:
        import_gex(DATA / "lanterns.gex", only=["Marguerite", "Tobias"])
    (problem,) = _problems(err)
    assert problem.startswith("lanterns.gex: coterie 'Lanterns' has 2 characters, and a cohort has 3 to 5 (R1)")
    assert "Marguerite (line 3)" in problem and "--only" in problem
    with pytest.raises(InputError) as err:
        import_gex(DATA / "lanterns.gex", cohort_by="clan")  # five clans of one each
    assert len(err.value.problems) == 5


def test_only_names_a_character_not_in_the_file() -> None:
    with pytest.raises(InputError) as err:
        import_gex(DATA / "lanterns.gex", only=["Marguerite", "Tobais", "Ines"])
    assert _problems(err) == ["--only: 'Tobais' is not a vampire in lanterns.gex (did you mean 'Tobias'?)"]


def test_cohort_by_an_unknown_attribute_is_refused() -> None:
    with pytest.raises(InputError) as err:
        import_gex(DATA / "lanterns.gex", cohort_by="coteri")
    assert _problems(err)[0].startswith("--cohort-by: 'coteri' is not a way to form cohorts")
    assert "did you mean 'coterie'?" in _problems(err)[0]


# -- clear errors with their line -------------------------------------------------------

def test_an_unreadable_file_names_its_line() -> None:
    with pytest.raises(InputError) as err:
        import_gex(DATA / "broken.gex")
    assert _problems(err) == ["broken.gex:7: is not readable XML: mismatched tag (column 5)"]


def test_a_character_without_a_name_names_its_line() -> None:
    with pytest.raises(InputError) as err:
        import_gex(DATA / "nameless.gex")
    assert _problems(err) == ['nameless.gex:5: a vampire has no name (Grapevine\'s name="…")',
                              'nameless.gex:8: a vampire has no name (Grapevine\'s name="…")']


def test_values_that_are_not_numbers_are_all_listed_with_their_lines() -> None:
    with pytest.raises(InputError) as err:
        import_gex(DATA / "badvals.gex")
    assert _problems(err) == [
        "badvals.gex:3: Odd Numbers: blood 'lots' is not a whole number",
        "badvals.gex:5: Odd Numbers: Brawl val '2-3' is not a whole number of dots",
        "badvals.gex:6: Odd Numbers: a trait in Abilities has no name",
    ]


def test_a_dtd_or_entity_in_the_untrusted_file_is_refused() -> None:
    with pytest.raises(InputError) as err:
        import_gex(DATA / "entities.gex")
    (problem,) = _problems(err)
    assert problem.startswith("entities.gex:2: is refused: the file declares a DTD")


def test_grapevine_binary_format_is_refused_with_how_to_export_xml(tmp_path: Path) -> None:
    gv3 = tmp_path / "chronicle.gv3"
    gv3.write_bytes(b"\x03\x00GVBG" + bytes(18) + b"\x05\x00\x01\x00\x04\x00Adam")
    with pytest.raises(InputError) as err:
        import_gex(gv3)
    (problem,) = _problems(err)
    assert problem.startswith(f"{gv3}: is not XML: it looks like Grapevine's older binary format")
    assert "File → Export (Data Exchange)" in problem and "XML exchange format" in problem


def test_a_missing_empty_or_folder_path_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.gex"
    empty.write_text("  \n", encoding="utf-8")
    for path, message in ((tmp_path / "nope.gex", "can't be read"), (empty, "is empty"),
                          (tmp_path, "is a folder")):
        with pytest.raises(InputError) as err:
            import_gex(path)
        assert message in _problems(err)[0]


def test_a_file_of_other_creatures_only_holds_no_vampire(tmp_path: Path) -> None:
    gex = tmp_path / "fera.gex"
    gex.write_text('<?xml version="1.0"?>\n<grapevine version="3">\n  <werewolf name="Runs-Far">\n'
                   '    <traitlist name="Abilities"/>\n  </werewolf>\n</grapevine>\n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        import_gex(gex)
    assert _problems(err) == ["fera.gex: holds no vampire to import"]


def test_a_utf16_exchange_file_reads_like_utf8(tmp_path: Path) -> None:
    text = (DATA / "lanterns.gex").read_text(encoding="utf-8").replace('version="1.0"', 'version="1.0" encoding="UTF-16"')
    gex = tmp_path / "lanterns16.gex"
    gex.write_bytes(text.encode("utf-16"))
    assert import_gex(gex).battle == import_gex(DATA / "lanterns.gex").battle


# -- the map is data -----------------------------------------------------------------------

def test_the_map_reads_lists_it_is_given_and_refuses_unknown_keys(tmp_path: Path) -> None:
    gmap = default_map().extend({"lists": {"abilities": ["Hedge Magic"]}})
    assert isinstance(gmap, GrapevineMap)
    delphine = _member(import_gex(DATA / "lanterns.gex", mapping=gmap).battle, "Delphine")
    assert delphine["abilities"]["Candle Reading"] == 1
    bad = tmp_path / "bad_map.json"
    bad.write_text(json.dumps({"blood_magic_clan": ["Brujah"], "lists": {"skills": ["Abilities"]}}), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_map(bad)
    assert _problems(err) == [
        "blood_magic_clan: is not a key of the Grapevine map (did you mean 'blood_magic_clans'?)",
        "lists.skills: is not abilities, disciplines or merits",
    ]
    broken = tmp_path / "broken_map.json"
    broken.write_text("{\n  \"lists\": ,\n}", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_map(broken)
    assert _problems(err)[0].startswith(f"{broken}:2: is not valid JSON")


def test_a_windows_1252_file_without_a_declaration_is_read_as_grapevine_writes_it(tmp_path: Path) -> None:
    text = (DATA / "lanterns.gex").read_text(encoding="utf-8").replace("Tobias", "Tobïas")
    gex = tmp_path / "lanterns1252.gex"
    gex.write_bytes(text.encode("cp1252"))
    names = [m["name"] for c in import_gex(gex).battle["cohorts"] for m in c["members"]]
    assert names[1] == "Tobïas"


@pytest.mark.parametrize(("body", "expected"), [
    ('<?xml version="1.0" encoding="klingon"?>\n<grapevine/>', "x.gex:1: is not readable XML: unknown encoding"),
    ('<grapevine>\n<vampire name="A" blood="' + "9" * 5000 + '"/>\n</grapevine>',
     "x.gex:2: A: blood 999999999999… (5000 digits) is too large for a whole number"),
    ('<grapevine>\n<vampire name="A" willpower="' + "x" * 500 + '"/>\n</grapevine>',
     "x.gex:2: A: willpower 'xxxxxxxxxxxxxxxxxxxx…' is not a whole number"),
    ('<grapevine>\n<vampire name="A" blood="²"/>\n</grapevine>', "x.gex:2: A: blood '²' is not a whole number"),
    ('<grapevine>\n<vampire name="&ext;"/>\n</grapevine>', "x.gex:2: is not readable XML: undefined entity"),
    ('<?xml version="1.0"?>\n<!DOCTYPE g SYSTEM "http://example.invalid/g.dtd">\n<grapevine/>',
     "x.gex:2: is refused: the file declares a DTD"),
])
def test_hostile_or_odd_files_give_input_errors_never_foreign_exceptions(tmp_path: Path, body: str,
                                                                         expected: str) -> None:
    gex = tmp_path / "x.gex"
    gex.write_text(body, encoding="utf-8")
    with pytest.raises(InputError) as err:
        import_gex(gex)
    assert _problems(err)[0].startswith(expected)


def test_other_creatures_are_skipped_and_said_so(tmp_path: Path) -> None:
    text = (DATA / "lanterns.gex").read_text(encoding="utf-8").replace(
        "</grapevine>", '  <werewolf name="Runs-Far">\n    <traitlist name="Abilities"/>\n  </werewolf>\n</grapevine>')
    gex = tmp_path / "mixed.gex"
    gex.write_text(text, encoding="utf-8")
    result = import_gex(gex)
    assert "1 werewolf character(s) skipped: only vampire characters are imported" in result.notes
    assert [m["name"] for m in result.battle["cohorts"][0]["members"]][-1] == "Delphine"


def test_cli_new_from_a_gex_writes_a_battle_file_or_a_tracker_and_refuses_an_existing_one(tmp_path: Path) -> None:
    """`sheetsync new OUT --from chars.gex`: a battle file whose pools are the hand-worked
    ones, or a tracker holding the cohort; an existing OUT is refused before any work."""
    from typer.testing import CliRunner

    from sheetsync.app.cli import app
    from sheetsync.sheets.disk import read_data_file
    from sheetsync.systems.bbn.files.loader import load_battle

    gex = DATA / "lanterns.gex"
    runner = CliRunner()
    out = tmp_path / "battle.yaml"
    run = runner.invoke(app, ["new", str(out), "--from", str(gex)])
    assert run.exit_code == 0, run.output
    battle = load_battle(read_data_file(out))
    assert battle.pools["Lanterns"].pools["health"] == 29
    before = out.read_bytes()
    again = runner.invoke(app, ["new", str(out), "--from", str(gex)])
    assert again.exit_code == 1 and "already exists" in str(again.exception)
    assert out.read_bytes() == before
    tracker = tmp_path / "battle.xlsx"
    made = runner.invoke(app, ["new", str(tracker), "--from", str(gex)])
    assert made.exit_code == 0, made.output
    assert "Tracker holds 1 cohort" in made.output
