"""Issue 8, items 8, 9, 12 and 28: bad input is a cell error with its address, never a crash;
and the messages about it read well (plurals, "did you mean", cohort names in any case).
"""

from __future__ import annotations

from typing import Any

import pytest
from input_trackers import orders, put, put_seed, snapshot, two_cohorts

from sheetsync.app import usecases
from sheetsync.core.errors import InputError, SheetFormatError, did_you_mean
from sheetsync.sheets.backend import Formula, MemoryBackend
from sheetsync.systems.bbn.files.loader import load_battle

HUGE = "1" * 5000
"""More digits than Python's int() takes from text (4,300)."""


def _problems(backend: MemoryBackend, action: str) -> list[str]:
    before = snapshot(backend)
    with pytest.raises(SheetFormatError) as info:
        usecases.run(action, backend)
    assert snapshot(backend) == before, "nothing is written when a cell is refused"
    return [str(p) for p in info.value.problems]


def _built() -> MemoryBackend:
    backend = two_cohorts()
    usecases.run("build", backend)
    return backend


# -- item 8: numbers too long for int(), and floats that are not numbers ---------------------


@pytest.mark.parametrize(("block", "key", "value", "message"), [
    ("Characters_Table", "temper", HUGE, "temper '1111111111111111111…1111' (5000 characters) is too large to be a temper"),
    ("Characters_Table", "ability:Brawl", "-" + HUGE, "brawl '-111111111111111111…1111' (5001 characters) is too large"),
    ("Characters_Table", "offensive_paths", f"Lure of Flames {HUGE}", "the level of 'Lure of Flames' is too large"),
    ("Characters_Table", "other_traits", f"Obtenebration {HUGE}", "the level of 'Obtenebration' is too large"),
    ("Cohorts_Setup", "set:defense", HUGE, "set defense '1111111111111111111…1111' (5000 characters) is too large"),
    ("Characters_Table", "temper", float("inf"), "temper inf is not a whole number"),
    ("Characters_Table", "health_levels", float("nan"), "health levels nan is not a whole number"),
    ("Characters_Table", "willpower_spent", 1e300, "willpower spent 1e+300 is too large"),
])
def test_issue8_item8_a_huge_or_infinite_number_at_build_is_a_cell_error(block: str, key: str, value: Any,
                                                                          message: str) -> None:
    backend = two_cohorts()
    addr = put(backend, block, 0, key, value)
    got = _problems(backend, "build")
    assert any(p.startswith(f"{addr}: {message}") for p in got), got


@pytest.mark.parametrize(("key", "value", "message"), [
    ("roll", HUGE, "roll '1111111111111111111…1111' (5000 characters) is too large to be a roll"),
    ("temper", "9" * 4301, "temper '9999999999999999999…9999' (4301 characters) is too large"),
    ("picks", f"2 {HUGE}", "picks '2 11111111111111111…1111' (5002 characters) are not dice (e.g. 2 3)"),
    ("reroll", HUGE, "reroll '1111111111111111111…1111' (5000 characters) is too large"),
])
def test_issue8_item8_a_huge_number_in_an_order_is_a_cell_error(key: str, value: str, message: str) -> None:
    backend = _built()
    orders(backend, [{"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghouls", key: value}])
    addr = put(backend, "Orders_Table", 0, key, value)
    got = _problems(backend, "resolve")
    assert any(p.startswith(f"{addr}: {message}") for p in got), got


@pytest.mark.parametrize(("seed", "message"), [
    (float("inf"), "dice seed inf is not a whole number or text"),
    (float("nan"), "dice seed nan is not a whole number or text"),
    (10**20, "dice seed 100000000000000000000 is too large; use at most 15 digits"),
])
def test_issue8_item8_r25_a_seed_that_is_not_a_number_is_refused_at_its_cell(seed: float, message: str) -> None:
    backend = two_cohorts()
    put_seed(backend, seed)
    assert _problems(backend, "build") == [f"Battle!B6: {message}"]


def test_issue8_item8_a_huge_number_in_a_battle_file_is_a_path_error() -> None:
    data = {"cohorts": [{"name": "A", "members": [{"name": "A1", "temper": HUGE}, "A2", "A3"]},
                        {"name": "B", "side": "enemy", "members": ["B1", "B2", "B3"]}],
            "orders": [{"cohort": "A", "task": "Move", "roll": HUGE}]}
    with pytest.raises(InputError) as info:
        load_battle(data)
    got = [str(p) for p in info.value.problems]
    assert "cohorts[0].members[0].temper: '1111111111111111111…1111' (5000 characters) has too many digits to be a " \
           "whole number here" in got


# -- item 9: duplicate names ---------------------------------------------------------------------


def test_issue8_item9_a_duplicate_cohort_name_names_both_cells() -> None:
    backend = two_cohorts()
    put(backend, "Cohorts_Setup", 2, "name", "Ghouls")
    assert _problems(backend, "build") == [
        "Cohorts!A5: cohort 'Ghouls' is named twice (also Cohorts!A4); give each cohort its own name"]


def test_issue8_item9_r12_a_duplicate_cohort_name_in_another_case_is_a_duplicate_too() -> None:
    backend = two_cohorts()
    put(backend, "Cohorts_Setup", 2, "name", "night watch")
    assert _problems(backend, "build") == [
        "Cohorts!A5: cohort 'night watch' is named twice (also Cohorts!A3); give each cohort its own name"]


def test_issue8_item9_a_character_named_twice_in_one_cohort_names_both_cells() -> None:
    backend = two_cohorts()
    put(backend, "Characters_Table", 6, "cohort", "Ghouls")
    put(backend, "Characters_Table", 6, "name", "G2")
    assert _problems(backend, "build") == [
        "Characters!B9: 'G2' is in Ghouls twice (also Characters!B7); give each character its own name"]


# -- item 12: formulas in input cells ------------------------------------------------------------


def test_issue8_item12_r25_a_formula_in_the_dice_seed_is_refused() -> None:
    backend = two_cohorts()
    put_seed(backend, Formula("=RAND()"))
    assert _problems(backend, "build") == [
        "Battle!B6: dice seed: a formula (=RAND()) is not allowed here; type a whole number or text"]


@pytest.mark.parametrize(("block", "key", "want"), [
    ("Characters_Table", "merit:Rugged", "Yes or No"),
    ("Characters_Table", "temper", "a whole number"),
    ("Characters_Table", "combinations", "the text"),
    ("Cohorts_Setup", "tracker", "the text"),
    ("Cohorts_Setup", "support", "Yes or No"),
])
def test_issue8_item12_a_formula_in_any_input_cell_is_refused_at_build(block: str, key: str, want: str) -> None:
    backend = two_cohorts()
    addr = put(backend, block, 1, key, Formula("=1+1"))
    got = _problems(backend, "build")
    assert any(p.startswith(f"{addr}: ") and p.endswith(f"a formula (=1+1) is not allowed here; type {want}")
               for p in got), got
    assert len([p for p in got if p.startswith(f"{addr}:")]) == 1, "each cell is reported once"


@pytest.mark.parametrize(("block", "key"), [("Orders_Table", "ally"), ("Orders_Table", "text"),
                                            ("Orders_Table", "free_task"), ("Ranges_Table", "band")])
def test_issue8_item12_a_formula_in_an_order_or_range_cell_is_refused_at_resolve(block: str, key: str) -> None:
    backend = _built()
    orders(backend, [{"cohort": "Night Watch", "task": "Move"}])
    addr = put(backend, block, 0, key, Formula("=NOW()"))
    got = _problems(backend, "resolve")
    assert any(p.startswith(f"{addr}: ") and "a formula (=NOW()) is not allowed here" in p for p in got), got


def test_issue8_item12_the_odds_formulas_of_a_blank_tracker_are_not_input() -> None:
    backend = _built()  # the template's Odds column holds formulas: they are not refused
    orders(backend, [{"cohort": "Night Watch", "task": "Move"}])
    assert usecases.run("resolve", backend).phase == 1


# -- item 28: messages ---------------------------------------------------------------------------


def test_issue8_item28_a_missing_target_reads_as_one_sentence() -> None:
    backend = _built()
    orders(backend, [{"cohort": "Night Watch", "task": "Melee Attack"}])
    assert _problems(backend, "resolve") == ["Orders!D4: Melee Attack needs a target cohort"]


def test_issue8_item28_a_missing_value_still_names_its_field() -> None:
    backend = two_cohorts()
    put(backend, "Characters_Table", 0, "name", None)
    got = _problems(backend, "build")
    assert "Characters!B3: a character needs a name" in got


def test_issue8_item28_one_hit_is_singular() -> None:
    backend = _built()
    orders(backend, [{"cohort": "Night Watch", "task": "Melee Attack", "target": "Ghouls", "roll": 10}])
    report = usecases.run("resolve", backend)
    assert report.message.startswith("Phase 1 resolved: 1 order, 1 hit, 0 refused"), report.message
    assert usecases.run("undo", backend).message.startswith("Phase 1 undone: 1 order is pending again")


def test_issue8_item28_one_cohort_is_singular_when_built() -> None:
    backend = two_cohorts(cohorts=[("Loners", "players", ["A", "B", "C"])])
    assert usecases.run("build", backend).message.startswith("Built 1 cohort: Loners")


@pytest.mark.parametrize(("order", "message"), [
    ({"task": "Mele Attack", "target": "Ghouls"}, "Orders!C4: task 'Mele Attack' is not a task (did you mean 'Melee Attack'?)"),
    ({"task": "Melee Attack", "target": "Ghouls", "cohort": "Nigth Watch"},
     "Orders!B4: cohort 'Nigth Watch' is not a cohort (did you mean 'Night Watch'?)"),
    ({"task": "Melee Attack", "target": "Goules"}, "Orders!D4: target 'Goules' is not a cohort (did you mean 'Ghouls'?)"),
    ({"task": "Rescue", "member": "Marcos"}, "Orders!E4: member 'Marcos' is not a member of Night Watch "
                                             "(did you mean 'Marcus'?)"),
])
def test_issue8_item28_a_mistyped_name_gets_did_you_mean(order: dict[str, Any], message: str) -> None:
    backend = _built()
    orders(backend, [{"cohort": "Night Watch", **order}])
    assert _problems(backend, "resolve") == [message]


def test_issue8_item28_a_cohort_not_on_the_cohorts_sheet_gets_did_you_mean() -> None:
    backend = two_cohorts()
    put(backend, "Characters_Table", 3, "cohort", "Ghools")
    got = _problems(backend, "build")
    assert "Characters!A6: 'Ghools' is not a cohort on the Cohorts sheet (did you mean 'Ghouls'?)" in got


def test_issue8_item28_r12_cohort_names_match_in_any_case_and_keep_their_spelling() -> None:
    backend = two_cohorts()
    for row in range(3, 6):
        put(backend, "Characters_Table", row, "cohort", "GHOULS")
    put(backend, "Ranges_Table", 0, "a", "night watch")
    put(backend, "Ranges_Table", 0, "b", "ghouls")
    usecases.run("build", backend)
    orders(backend, [{"cohort": "night watch", "task": "Melee Attack", "target": "gHOULS", "roll": 10}])
    report = usecases.run("resolve", backend)
    assert report.result is not None
    (event,) = report.result.events
    assert (event.cohort, event.target, event.outcome) == ("Night Watch", "Ghouls", "hit")


def test_issue8_item28_r12_a_battle_file_names_cohorts_in_any_case() -> None:
    battle = load_battle({
        "cohorts": [{"name": "Night Watch", "members": ["A", "B", "C"]},
                    {"name": "Ghouls", "side": "enemy", "members": ["G1", "G2", "G3"]}],
        "ranges": [["NIGHT WATCH", "ghouls", "Personal"]],
        "orders": [{"cohort": "night watch", "task": "Melee Attack", "target": "ghouls"}],
    })
    assert battle.orders[0].cohort == "Night Watch" and battle.orders[0].target == "Ghouls"
    assert battle.band("Night Watch", "Ghouls") is not None


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["cohorts"][0]["members"].append({"name": "D", "willpower": 2}),
     "cohorts[0].members[3].willpower: is not a key sheetsync knows (did you mean 'willpower_spent'?)"),
    (lambda d: d.update(order=[]), "order: is not a key sheetsync knows (did you mean 'orders'?)"),
    (lambda d: d["orders"][0].update(targett="B"), "orders[0].targett: is not a key sheetsync knows (did you mean 'target'?)"),
    (lambda d: d.update(house_rules={"allow_any_sise": True}),
     "house_rules.allow_any_sise: is not a key sheetsync knows (did you mean 'allow_any_size'?)"),
])
def test_issue8_item28_an_unknown_battle_file_key_gets_did_you_mean(change: Any, message: str) -> None:
    data: dict[str, Any] = {"cohorts": [{"name": "A", "members": ["A1", "A2", "A3"]},
                                        {"name": "B", "side": "enemy", "members": ["B1", "B2", "B3"]}],
                            "orders": [{"cohort": "A", "task": "Move"}]}
    change(data)
    with pytest.raises(InputError) as info:
        load_battle(data)
    assert message in [str(p) for p in info.value.problems]


def test_issue8_item28_did_you_mean_is_silent_when_nothing_is_close() -> None:
    assert did_you_mean("Zzyzx", ["Night Watch", "Ghouls"]) == ""
    assert did_you_mean("ghouls", ["Ghouls"]) == " (did you mean 'Ghouls'?)"
    assert did_you_mean("Ghouls", ["Ghouls"]) == ""


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_issue8_item8_a_battle_file_with_a_5000_digit_number_is_a_path_error_not_a_traceback(
        tmp_path: Any, suffix: str) -> None:
    """Python refuses to turn more than 4,300 digits into an int; the file reader keeps
    such a number as text, so the loader reports it at its path."""
    import json
    import subprocess
    import sys

    from sheetsync.sheets.disk import example_path, read_data_file

    data = read_data_file(example_path())
    data["cohorts"][0]["temper"] = "HUGE"
    text = json.dumps(data) if suffix == ".json" else __import__("yaml").safe_dump(data)
    path = tmp_path / f"huge{suffix}"
    path.write_text(text.replace('"HUGE"', "7" * 5000).replace("HUGE", "7" * 5000))
    assert read_data_file(path)["cohorts"][0]["temper"] == "7" * 5000
    run = subprocess.run([sys.executable, "-m", "sheetsync", "pools", str(path)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "cohorts[0].temper" in run.stderr
